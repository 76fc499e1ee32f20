// The order of one origin's RMA requests at the target: each is applied
// when its number (rseq) is the next one due; one that arrives whole
// earlier (the wire reordered, or an earlier one lost a segment) is copied
// and held until its turn.
//
// A legal origin cannot have more than the receive window W held: it sends
// every request on the data channel, so requests are cut into segments in
// the order they are numbered.  The request due is not whole: one of its
// segments is missing, at or after the receive window's `next`; every held
// request was cut after that segment and arrived, so its segments lie in
// (next, next + W) and each takes one at least:
//
//   seq:  next                                        next + W
//         | x(due) held held x . held . x . . held  . |
//
// An ordered request (an UNLOCK: Engine::hold) may be whole and due while
// the engine holds it for a segment sent before it: that segment is then
// missing, and the same bound holds; the engine serves the held request in
// the burst whose arrivals close the gap (Engine::pass).
//
// So a request more than W - 1 numbers ahead of the one due, or one more
// held request than that, or a number already served or held, breaks the
// protocol (turn() says kBad).
#pragma once
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "util/seq.h"

namespace rttcc {

class RequestOrder {
public:
    enum class Turn { kNow, kLater, kBad };

    explicit RequestOrder(uint32_t window) : cap_(window) {}

    // What to do with request `rseq`, arrived whole: apply it now (then
    // served()), hold it (hold()), or refuse it.
    Turn turn(uint32_t rseq) const {
        if (rseq == next_) return Turn::kNow;
        if (!seq_gt(rseq, next_) || rseq - next_ >= cap_ || active_ + 1 >= cap_ || find(rseq) != active_)
            return Turn::kBad;
        return Turn::kLater;
    }

    // Copies request `rseq` (turn() said kLater) until its turn.
    void hold(uint32_t rseq, const uint8_t *bytes, size_t len) {
        if (active_ == slots_.size()) slots_.emplace_back();  // slots are kept: no allocation once warm
        Slot &s = slots_[active_++];
        s.rseq = rseq;
        s.bytes.assign(bytes, bytes + len);
    }

    // The request due was applied: the next one is due.
    void served() { ++next_; }

    // Moves the held request that is due now into *out (its old contents
    // take its slot); false if it has not arrived.
    bool take_due(std::vector<uint8_t> *out) {
        const size_t i = find(next_);
        if (i == active_) return false;
        out->swap(slots_[i].bytes);
        if (slots_[i].bytes.capacity() > kKeepBytes) std::vector<uint8_t>().swap(slots_[i].bytes);
        std::swap(slots_[i], slots_[--active_]);
        return true;
    }

    size_t held() const { return active_; }
    uint32_t next() const { return next_; }
    // Forgets every held request (the origin is dead).
    void clear() { active_ = 0; }

private:
    static constexpr size_t kKeepBytes = 64 * 1024;  // a slot keeps its buffer up to this (small requests)
    struct Slot {
        uint32_t rseq = 0;
        std::vector<uint8_t> bytes;  // a copy of the whole request
    };
    size_t find(uint32_t rseq) const {
        for (size_t i = 0; i < active_; ++i)
            if (slots_[i].rseq == rseq) return i;
        return active_;
    }

    uint32_t cap_;              // the receive window W
    uint32_t next_ = 0;         // the number of the request due
    std::vector<Slot> slots_;   // [0, active_) hold requests; the rest keep their storage
    size_t active_ = 0;
};

}  // namespace rttcc
