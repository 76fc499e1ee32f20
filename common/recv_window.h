// The receiver's side of one peer's sequence space.
//
//      all arrived           some arrived (bitmap)           dropped
//   ...-----------|o o x o x x . . . . . . . . . . . . .|-------------...
//                 ^next (the cumulative ACK we send)    ^next + limit
//
// bit(seq) = seq & (limit - 1).  Bits of sequence numbers before `next` are
// always clear, so a bit set means "arrived, waiting for the gap before it".
// Segments are delivered on arrival (the caller does not need order); the
// bitmap only suppresses duplicates and computes the cumulative ACK.
#pragma once
#include <cassert>
#include <cstdint>
#include <memory>

#include "seq.h"

namespace rttcc {

class RecvWindow {
public:
    enum class Arrival { kNew, kDuplicate, kBeyond };

    explicit RecvWindow(uint32_t limit, seq_t first = 0) : limit_(limit), next_(first) {
        assert(limit >= 64 && (limit & (limit - 1)) == 0);
    }

    seq_t next() const { return next_; }
    size_t memory() const { return bits_ ? limit_ / 8 : 0; }

    // Records the arrival of s.  kNew: first time, deliver it.  kDuplicate:
    // seen before (or before next), drop it and ACK at once.  kBeyond: too
    // far ahead, drop it (the sender cannot have sent it legitimately).
    Arrival arrive(seq_t s) {
        const int32_t d = seq_diff(s, next_);
        if (d < 0) return Arrival::kDuplicate;
        if (static_cast<uint32_t>(d) >= limit_) return Arrival::kBeyond;
        if (d == 0 && !bits_) {  // in order with nothing buffered: no bitmap needed
            ++next_;
            return Arrival::kNew;
        }
        if (!bits_) bits_ = std::make_unique<uint64_t[]>(limit_ / 64);
        if (test(s)) return Arrival::kDuplicate;
        set(s);
        while (test(next_)) clear(next_++);
        return Arrival::kNew;
    }

    // True if some segment after `next` has arrived (there is a gap).
    bool has_gap() const { return gaps_ > 0; }

private:
    bool test(seq_t s) const { return bits_[word(s)] & bit(s); }
    void set(seq_t s) {
        bits_[word(s)] |= bit(s);
        ++gaps_;
    }
    void clear(seq_t s) {
        bits_[word(s)] &= ~bit(s);
        --gaps_;
    }
    uint32_t word(seq_t s) const { return (s & (limit_ - 1)) >> 6; }
    static uint64_t bit(seq_t s) { return 1ull << (s & 63); }

    uint32_t limit_;                    // window size in segments (power of two)
    seq_t next_;                        // first sequence number not yet arrived
    uint32_t gaps_ = 0;                 // bits set (segments arrived after a gap)
    std::unique_ptr<uint64_t[]> bits_;  // arrivals at or after next_, allocated on the first gap
};

}  // namespace rttcc
