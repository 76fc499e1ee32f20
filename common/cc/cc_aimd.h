// AIMD on RTT: TCP-style slow start and congestion avoidance, with a delay
// spike instead of a loss as the congestion signal.
//
//   congestion:  sample > SRTT + 4 * RTTVAR of the estimator *before* that
//                sample (the RTO bound).  The event carries the state after
//                the sample, which has already absorbed the spike (it moves
//                the bound by 1.125x the spike), so the controller keeps the
//                previous event's state and compares against that.
//                Or a standing queue: SRTT > max(2 * base, base + 3 * RTTVAR),
//                base = the smallest sample of an ACK that released data
//                segments over the last 10 to 20 s (the path with an empty
//                queue; a path whose delay rose for good, a route change, a
//                host that became oversubscribed, gets a new base instead
//                of a window cut to 2 for the rest of the job).  A queue that grows
//                by a segment per RTT never makes a spike, so without this
//                rule AIMD fills the bottleneck's buffer as loss-based Reno
//                does.  The allowance scales with the samples' own spread
//                (on a slow link a window's segments queue behind each other:
//                RTTVAR is then several serialisation times) and is at least
//                one base RTT, so jitter on a fast, idle path is no signal.
//   floor:       both need queueing of at least aimd_queue_floor_us (100):
//                a fast path's base RTT comes from single-segment exchanges,
//                and a bulk transfer's round trips then carry the receiving
//                core's own backlog (tens of us), which is no network queue.
//   reaction:    ssthresh = max(cwnd / 2, 2), cwnd = min(cwnd, ssthresh),
//                at most once per RTT; the ACK does not grow the window.
//   otherwise:   slow start (cwnd += acked) up to ssthresh, then congestion
//                avoidance (cwnd += acked / cwnd, about one segment per RTT).
//   fast retransmit: as congestion when SRTT sits more than the floor
//                above base, or the loss is one of a run (LossRun); a lone
//                loss on an unqueued path is noise.  Timeout:
//                ssthresh = max(cwnd / 2, 2), cwnd = 1.
#pragma once
#include <algorithm>

#include "cc/congestion.h"
#include "cc/windowed_min.h"

namespace rttcc {

class AimdCc final : public CongestionControl {
public:
    explicit AimdCc(const CcParams &p)
        : CongestionControl(p.max_cwnd),
          floor_(p.aimd_queue_floor),
          cwnd_(clamp_cwnd(p.initial_cwnd)),
          ssthresh_(clamp_cwnd(p.max_cwnd)) {}

    void on_ack(const AckEvent &e) override {
        gate_.observe(e);
        if (e.rtt != 0 && e.acked != 0) {
            base_window_.add(static_cast<int64_t>(e.rtt), static_cast<int64_t>(e.now));
            base_ = static_cast<nanos>(base_window_.min());
        }
        const bool congested = is_spike(e) || is_standing_queue(e);
        if (e.rtt != 0) {
            prev_srtt_ = e.srtt;
            prev_rttvar_ = e.rttvar;
        }
        if (congested) {
            halve(e.now);
        } else {
            grow(e.acked);
        }
    }

    void on_fast_retransmit(nanos now) override {
        const bool queued = base_ == 0 || prev_srtt_ == 0 || prev_srtt_ > base_ + floor_;
        if (run_.add(now, gate_.round_trip(), cwnd_) || queued) halve(now);
    }

    void on_timeout(nanos now) override {
        ssthresh_ = std::max(cwnd_ / 2, 2.0);
        cwnd_ = 1;
        gate_.close(now);
    }

    double cwnd() const override { return cwnd_; }
    const char *name() const override { return "aimd"; }
    // Slow-start threshold, segments.
    double ssthresh() const { return ssthresh_; }

private:
    // True when the sample exceeds SRTT + 4 * RTTVAR of the state before it;
    // never before the estimator had a sample.
    bool is_spike(const AckEvent &e) const {
        return e.rtt != 0 && prev_srtt_ != 0 && e.rtt > prev_srtt_ + std::max(4 * prev_rttvar_, floor_);
    }

    // RTTVARs of queueing above the base delay that make a standing queue:
    // 3 holds the queue on the testbed's 150 Mbit/s link at about a
    // millisecond (4 let it grow to two, 2 cost a third of the throughput of
    // an unshaped path).
    static constexpr int kQueueRttvars = 3;

    // True when the smoothed RTT sits well above the path's base delay: more
    // than one base RTT and more than kQueueRttvars RTTVARs of queueing.
    bool is_standing_queue(const AckEvent &e) const {
        return e.rtt != 0 && base_ != 0 && e.srtt > base_ + std::max({base_, kQueueRttvars * e.rttvar, floor_});
    }

    // Multiplicative decrease, once per round trip.
    void halve(nanos now) {
        if (!gate_.open(now)) return;
        ssthresh_ = std::max(cwnd_ / 2, 2.0);
        cwnd_ = std::min(cwnd_, ssthresh_);
        gate_.close(now);
    }

    // Slow start for the part of `acked` below ssthresh, congestion avoidance
    // for the rest.
    void grow(uint32_t acked) {
        double left = acked;
        if (cwnd_ < ssthresh_) {
            const double slow = std::min(left, ssthresh_ - cwnd_);
            cwnd_ += slow;
            left -= slow;
        }
        cwnd_ = clamp_cwnd(cwnd_ + left / cwnd_);
    }

    nanos floor_;             // least queueing that is a signal (aimd_queue_floor_us)
    double cwnd_;             // congestion window, segments; in [1, max_cwnd]
    double ssthresh_;         // slow start below this, congestion avoidance above; >= 1
    nanos prev_srtt_ = 0;     // SRTT after the previous sample; 0 before any
    nanos prev_rttvar_ = 0;   // RTTVAR after the previous sample
    static constexpr int64_t kBaseSpan = int64_t{10} * 1000 * 1000 * 1000;  // ns: base_ forgets in 10-20 s
    WindowedMin base_window_{kBaseSpan};
    nanos base_ = 0;          // smallest sample of an ACK that released data lately; 0 before any
    DecreaseGate gate_;       // one decrease per round trip
    LossRun run_;             // this round trip's fast retransmits
};

}  // namespace rttcc
