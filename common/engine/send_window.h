// The sender's side of one peer's sequence space.
//
//          ACKed           in flight (not yet ACKed)       may be sent      closed
//   ...----------|SSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSS|................|-------...
//                ^una                                      ^next            ^una + limit
//
// slot(seq) = seq & mask.  A segment sits in its slot from its first
// transmission until `una` moves past it, so at most `limit` slots are used.
// The ring starts small and doubles (up to `limit`) when the span in flight
// outgrows it, so an idle peer costs a few dozen bytes.  All comparisons are
// modulo 2^32 (seq.h); una and next may wrap.
#pragma once
#include <cassert>
#include <cstdint>
#include <memory>

#include "engine/segment.h"
#include "util/seq.h"

namespace rttcc {

class SendWindow {
public:
    explicit SendWindow(uint32_t limit, seq_t first = 0) : limit_(limit), una_(first), next_(first) {
        assert(limit && (limit & (limit - 1)) == 0);
    }

    seq_t una() const { return una_; }
    seq_t next() const { return next_; }
    uint32_t in_flight() const { return next_ - una_; }
    bool full() const { return in_flight() >= limit_; }
    size_t memory() const { return capacity_ * sizeof(TxSegment *); }

    // Assigns the next sequence number to `seg` and stores it.  The window
    // must not be full.
    seq_t push(TxSegment *seg) {
        assert(!full());
        make_room();
        const seq_t s = next_++;
        slots_[s & (capacity_ - 1)] = seg;
        seg->seq = s;
        return s;
    }

    // Room for one more push (grows the ring; may throw std::bad_alloc).
    void make_room() {
        if (in_flight() == capacity_) grow();
    }

    // The segment with sequence number s, or nullptr if s is not in flight.
    TxSegment *at(seq_t s) const {
        if (seq_lt(s, una_) || seq_ge(s, next_)) return nullptr;
        return slots_[s & (capacity_ - 1)];
    }

    // Cumulative ACK: every segment before `ack` arrived.  Calls release(seg)
    // for each newly ACKed segment, oldest first.  Returns how many; an ACK
    // outside (una, next] releases nothing (old, duplicate or bogus).
    template <typename F>
    uint32_t ack(seq_t ack, F &&release) {
        if (seq_le(ack, una_) || seq_gt(ack, next_)) return 0;
        uint32_t n = 0;
        for (; una_ != ack; ++una_, ++n) {
            TxSegment *&slot = slots_[una_ & (capacity_ - 1)];
            TxSegment *seg = slot;
            slot = nullptr;
            release(seg);
        }
        return n;
    }

    // Drops every segment in flight (peer gone), oldest first.
    template <typename F>
    void clear(F &&release) {
        ack(next_, release);
    }

private:
    void grow() {
        const uint32_t cap = capacity_ ? capacity_ * 2 : kInitialCapacity;
        auto bigger = std::make_unique<TxSegment *[]>(cap);
        for (seq_t s = una_; s != next_; ++s) bigger[s & (cap - 1)] = slots_[s & (capacity_ - 1)];
        slots_ = std::move(bigger);
        capacity_ = cap;
    }

    static constexpr uint32_t kInitialCapacity = 16;
    uint32_t limit_;                       // most segments in flight (power of two)
    uint32_t capacity_ = 0;                // ring size (power of two, <= limit_)
    std::unique_ptr<TxSegment *[]> slots_; // ring of segments in flight
    seq_t una_;                            // oldest segment not yet ACKed
    seq_t next_;                           // sequence number of the next new segment
};

}  // namespace rttcc
