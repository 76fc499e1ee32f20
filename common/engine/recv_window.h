// The receiver's side of one peer's sequence space.
//
//      all arrived           some arrived (bitmap)           dropped
//   ...-----------|o o x o x x . . . . . . . . . . . . .|-------------...
//                 ^next (the cumulative ACK we send)    ^next + limit
//
// bit(seq) = seq & (limit - 1).  Bits of sequence numbers before `next` are
// always clear, so a bit set means "arrived, waiting for the gap before it".
// Segments are delivered on arrival (the caller does not need order); the
// bitmap suppresses duplicates, computes the cumulative ACK and, while
// there is a gap, gives the selective ACK (sack()): the arrivals in
// (next, high), where high is one past the newest arrival.
#pragma once
#include <cassert>
#include <algorithm>
#include <cstdint>
#include <memory>

#include "util/seq.h"

namespace rttcc {

class RecvWindow {
public:
    enum class Arrival { kNew, kDuplicate, kBeyond };

    explicit RecvWindow(uint32_t limit, seq_t first = 0) : limit_(limit), next_(first) {
        assert(limit >= 64 && (limit & (limit - 1)) == 0);
    }

    seq_t next() const { return next_; }
    size_t memory() const { return bits_ ? limit_ / 8 : 0; }

    // What arrive(s) would say, without recording anything.
    Arrival classify(seq_t s) const {
        const int32_t d = seq_diff(s, next_);
        if (d < 0) return Arrival::kDuplicate;
        if (static_cast<uint32_t>(d) >= limit_) return Arrival::kBeyond;
        return bits_ && test(s) ? Arrival::kDuplicate : Arrival::kNew;
    }

    // Records the arrival of s.  kNew: first time, deliver it.  kDuplicate:
    // seen before (or before next), drop it and ACK at once.  kBeyond: too
    // far ahead, drop it (the sender cannot have sent it legitimately).
    Arrival arrive(seq_t s) {
        const int32_t d = seq_diff(s, next_);
        if (d < 0) return Arrival::kDuplicate;
        if (static_cast<uint32_t>(d) >= limit_) return Arrival::kBeyond;
        if (d == 0 && !bits_) {  // in order with nothing buffered: no bitmap needed
            high_ = ++next_;
            return Arrival::kNew;
        }
        if (!bits_) bits_ = std::make_unique<uint64_t[]>(limit_ / 64);
        if (test(s)) return Arrival::kDuplicate;
        set(s);
        if (seq_ge(s, high_)) high_ = s + 1;
        while (test(next_)) clear(next_++);  // stops at or before high_: nothing after it is set
        return Arrival::kNew;
    }

    // True if some segment after `next` has arrived (there is a gap).
    bool has_gap() const { return gaps_ > 0; }

    // The selective ACK: bit i of words[i / 64] set if segment next + 1 + i
    // has arrived (next itself never has), up to the newest arrival or
    // max_words words.  Returns the words written (0 without a gap).
    uint32_t sack(uint64_t *words, uint32_t max_words) const {
        if (!gaps_) return 0;
        const uint32_t span = high_ - next_ - 1;  // bits after next up to the newest arrival (the rest are clear)
        const uint32_t n = std::min(max_words, (span + 63) / 64);
        for (uint32_t w = 0; w < n; ++w) words[w] = bits64(next_ + 1 + 64 * w);
        return n;
    }

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
    // The 64 bits of s .. s + 63, s anywhere in the ring.
    uint64_t bits64(seq_t s) const {
        const uint32_t shift = s & 63, w = word(s);
        const uint64_t lo = bits_[w] >> shift;
        return shift ? lo | bits_[(w + 1) & (limit_ / 64 - 1)] << (64 - shift) : lo;
    }
    static uint64_t bit(seq_t s) { return 1ull << (s & 63); }

    uint32_t limit_;                    // window size in segments (power of two)
    seq_t next_;                        // first sequence number not yet arrived
    seq_t high_ = next_;                // one past the newest arrival (>= next_)
    uint32_t gaps_ = 0;                 // bits set (segments arrived after a gap)
    std::unique_ptr<uint64_t[]> bits_;  // arrivals at or after next_, allocated on the first gap
};

}  // namespace rttcc
