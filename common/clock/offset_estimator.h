// NTP-style estimate of a peer's clock offset from timestamp exchanges
// (RFC 5905's on-wire calculation and clock filter).  One exchange: t1 my
// send, t2 the peer's receive, t3 the peer's send, t4 my receive; t1 and t4
// on my clock, t2 and t3 on the peer's, all nanoseconds.
//   offset = ((t2 - t1) + (t3 - t4)) / 2   the peer's clock minus mine
//   delay  = (t4 - t1) - (t3 - t2)         the round trip less the peer's hold
//   bound  = delay / 2                     |true offset - offset| <= bound
// The estimate is the sample with the smallest delay (the least queueing,
// hence the least asymmetry) among the last N samples that are also younger
// than a horizon.  Pure arithmetic: no clocks, no allocation.
#pragma once
#include <array>
#include <cstdint>

namespace rttcc {

struct OffsetSample {
    int64_t offset;  // the peer's clock minus mine
    int64_t delay;   // round trip less the peer's holding time
    int64_t at;      // t4: when it was taken, my clock
};

class OffsetEstimator {
public:
    static constexpr unsigned kMaxWindow = 16;  // largest N (the ring lives in every peer)

    // window: the last N samples compete (1..kMaxWindow); horizon_ns: samples
    // taken longer than this before the newest do not (0 = no age limit).
    explicit OffsetEstimator(unsigned window = 8, int64_t horizon_ns = 0)
        : window_(window == 0 ? 1 : (window > kMaxWindow ? kMaxWindow : window)), horizon_(horizon_ns) {}

    // The on-wire calculation; false when the times are inconsistent (a
    // negative round trip, holding time or delay).
    static bool measure(int64_t t1, int64_t t2, int64_t t3, int64_t t4, OffsetSample *out) {
        if (t4 < t1 || t3 < t2) return false;
        const int64_t delay = (t4 - t1) - (t3 - t2);
        if (delay < 0) return false;
        const int64_t a = t2 - t1, b = t3 - t4;
        *out = OffsetSample{a / 2 + b / 2 + (a % 2 + b % 2) / 2, delay, t4};  // (a + b) / 2 without overflow
        return true;
    }

    // Adds an exchange; false (and ignored) when its times are inconsistent.
    bool add(int64_t t1, int64_t t2, int64_t t3, int64_t t4) {
        OffsetSample s;
        if (!measure(t1, t2, t3, t4, &s)) return false;
        const unsigned slot = head_;
        ring_[slot] = s;
        head_ = head_ + 1 == window_ ? 0 : head_ + 1;
        if (filled_ < window_) ++filled_;
        ++count_;
        choose(s, slot);
        return true;
    }

    bool valid() const { return count_ > 0; }
    const OffsetSample &best() const { return best_; }
    int64_t offset() const { return best_.offset; }
    int64_t delay() const { return best_.delay; }
    int64_t bound() const { return best_.delay / 2; }
    uint64_t samples() const { return count_; }  // accepted so far

    // One-way delays of an exchange once the offset (peer minus mine) is known.
    static int64_t forward_delay(int64_t t1, int64_t t2, int64_t offset) { return (t2 - offset) - t1; }
    static int64_t reverse_delay(int64_t t3, int64_t t4, int64_t offset) { return t4 - (t3 - offset); }

private:
    // The smallest delay among the competing samples; ties go to the later
    // time, and exact ties to the later arrival.
    // While samples come in time order, the competitors only lose members
    // and gain the newest: the newest wins if it is no worse than the best,
    // and else the best stands while it still competes (not overwritten by
    // the newest, not past the horizon).  Only then, or out of time order,
    // are they all read again (every time, before: 2.5% of the engine's
    // instructions for an 8-byte message).
    static bool no_worse(const OffsetSample &a, const OffsetSample &b) {
        return a.delay < b.delay || (a.delay == b.delay && a.at >= b.at);
    }
    void choose(const OffsetSample &newest, unsigned slot) {
        const bool in_order = count_ > 1 && newest.at >= last_at_;
        last_at_ = newest.at;
        if (in_order) {
            if (no_worse(newest, best_)) {
                best_ = newest;
                best_slot_ = slot;
                return;
            }
            if (best_slot_ != slot && !(horizon_ > 0 && newest.at - best_.at > horizon_)) return;
        }
        const unsigned oldest = filled_ < window_ ? 0 : head_;
        bool found = false;
        for (unsigned k = 0, i = oldest; k < filled_; ++k, i = i + 1 == window_ ? 0 : i + 1) {  // in arrival order
            const OffsetSample &s = ring_[i];
            if (horizon_ > 0 && newest.at - s.at > horizon_) continue;
            if (!found || no_worse(s, best_)) {
                best_ = s;
                best_slot_ = i;
                found = true;
            }
        }
    }

    std::array<OffsetSample, kMaxWindow> ring_{};  // the last `window_` samples
    unsigned window_;                              // N
    int64_t horizon_;                              // age limit, ns (0 = none)
    unsigned head_ = 0;                            // next ring slot
    unsigned filled_ = 0;                          // ring slots in use
    uint64_t count_ = 0;                           // samples accepted
    OffsetSample best_{};                          // the estimate
    unsigned best_slot_ = 0;                       // its ring slot
    int64_t last_at_ = 0;                          // the newest sample's time
};

}  // namespace rttcc
