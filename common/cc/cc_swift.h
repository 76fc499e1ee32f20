// Swift (Kumar et al., SIGCOMM 2020): keep the delay at a target.  The delay
// is the engine's delay sample (AckEvent; ACK delay already removed); the target grows as the
// window shrinks (flow scaling), so many flows sharing a queue settle on a
// fair share instead of starving the small ones:
//
//   target = swift_target + clamp(alpha / sqrt(cwnd) + beta_fs, 0, fs_range)
//   alpha = fs_range / (1 / sqrt(fs_min_cwnd) - 1 / sqrt(fs_max_cwnd))
//   beta_fs = -alpha / sqrt(fs_max_cwnd)
//
//   delay < target      cwnd += ai * acked / cwnd (ai segments per RTT)
//   delay >= target     cwnd *= max(1 - beta * (delay - target) / delay, 1 - max_mdf),
//                       at most once per RTT
//
// Fast retransmit: cwnd *= 1 - max_mdf (once per RTT) when the latest delay
// is at the target or the loss is one of a run (LossRun); a lone loss below
// the target is noise.  Timeout: the same, unconditionally.  The window never goes below one segment: the engine does
// not pace, so the paper's fractional windows (one segment every few RTTs)
// cannot be enforced and its cwnd < 1 increase rule does not apply.  ACKs
// without an RTT sample change nothing.
#pragma once
#include <algorithm>
#include <cmath>

#include "cc/congestion.h"

namespace rttcc {

class SwiftCc final : public CongestionControl {
public:
    explicit SwiftCc(const CcParams &p)
        : CongestionControl(p.max_cwnd),
          p_(p),
          fs_alpha_(static_cast<double>(p.swift_fs_range) /
                    (1 / std::sqrt(p.swift_fs_min_cwnd) - 1 / std::sqrt(p.swift_fs_max_cwnd))),
          fs_beta_(-fs_alpha_ / std::sqrt(p.swift_fs_max_cwnd)),
          cwnd_(clamp_cwnd(p.initial_cwnd)) {}

    void on_ack(const AckEvent &e) override {
        gate_.observe(e);
        if (e.rtt == 0) return;
        last_delay_ = e.rtt;
        const nanos t = target();
        if (e.rtt < t) {
            cwnd_ = clamp_cwnd(cwnd_ + p_.swift_ai * e.acked / cwnd_);
        } else {
            const double excess = static_cast<double>(e.rtt - t) / static_cast<double>(e.rtt);
            cut(e.now, std::max(1 - p_.swift_beta * excess, 1 - p_.swift_max_mdf));
        }
    }

    void on_fast_retransmit(nanos now) override {
        const bool queued = last_delay_ == 0 || last_delay_ >= target();
        if (run_.add(now, gate_.round_trip(), cwnd_) || queued) cut(now, 1 - p_.swift_max_mdf);
    }

    void on_timeout(nanos now) override {
        cwnd_ = clamp_cwnd(cwnd_ * (1 - p_.swift_max_mdf));
        gate_.close(now);
    }

    double cwnd() const override { return cwnd_; }
    const char *name() const override { return "swift"; }

    // Target delay at the current window: the base target plus flow scaling.
    nanos target() const { return p_.swift_target + static_cast<nanos>(flow_scaling()); }

private:
    // Delay added to the target at the current window, ns, in [0, fs_range].
    double flow_scaling() const {
        const double fs = fs_alpha_ / std::sqrt(cwnd_) + fs_beta_;
        return std::clamp(fs, 0.0, static_cast<double>(p_.swift_fs_range));
    }

    // Multiplicative decrease by `factor`, once per round trip.
    void cut(nanos now, double factor) {
        if (!gate_.open(now)) return;
        cwnd_ = clamp_cwnd(cwnd_ * factor);
        gate_.close(now);
    }

    const CcParams p_;       // tunables (the swift_* fields)
    const double fs_alpha_;  // flow-scaling slope, ns * sqrt(segments); fs_range at fs_min_cwnd
    const double fs_beta_;   // flow-scaling offset, ns; makes scaling 0 at fs_max_cwnd
    double cwnd_;            // congestion window, segments; in [1, max_cwnd]
    DecreaseGate gate_;      // one decrease per round trip
    LossRun run_;            // this round trip's fast retransmits
    nanos last_delay_ = 0;   // the latest delay sample; 0 before any
};

}  // namespace rttcc
