// TIMELY (Mittal et al., SIGCOMM 2015) on a window of segments instead of a
// rate.  On every RTT sample:
//
//   rtt_diff = (1 - ewma) * rtt_diff + ewma * (rtt - prev_rtt)
//   gradient = rtt_diff / min_rtt
//   rtt < tlow          increase by add_step
//   rtt > thigh         cwnd *= 1 - beta * (1 - thigh / rtt)
//   gradient <= 0       increase by add_step, by 5 * add_step (hyper-active
//                       increase) from the hai_count-th such sample in a row
//   gradient > 0        cwnd *= max(1 - beta * gradient, 0.5)
//
// An increase is spread over the ACKs: each adds step * acked / cwnd, so a
// window's worth of ACKs adds one step per RTT.  Decreases happen at most
// once per RTT.  Fast retransmit: cwnd *= 1 - beta / 2 (once per RTT) when
// the latest RTT is at tlow or above or the loss is one of a run (LossRun);
// a lone loss below tlow is noise.
// Timeout: cwnd /= 2.  ACKs without an RTT sample change nothing.
#pragma once
#include <algorithm>

#include "cc/congestion.h"

namespace rttcc {

class TimelyCc final : public CongestionControl {
public:
    explicit TimelyCc(const CcParams &p)
        : CongestionControl(p.max_cwnd), p_(p), cwnd_(clamp_cwnd(p.initial_cwnd)) {}

    void on_ack(const AckEvent &e) override {
        gate_.observe(e);
        if (e.rtt == 0) return;
        const double gradient = next_gradient(e);
        if (e.rtt < p_.timely_tlow) {
            calm_ = 0;
            grow(e.acked, 1);
        } else if (e.rtt > p_.timely_thigh) {
            const double ratio = static_cast<double>(p_.timely_thigh) / static_cast<double>(e.rtt);
            cut(e.now, 1 - p_.timely_beta * (1 - ratio));
        } else if (gradient <= 0) {
            calm_ = std::min(calm_ + 1, p_.timely_hai_count);
            grow(e.acked, hyperactive() ? kHaiSteps : 1);
        } else {
            cut(e.now, std::max(1 - p_.timely_beta * gradient, kMinGradientFactor));
        }
    }

    void on_fast_retransmit(nanos now) override {
        const bool queued = prev_rtt_ == 0 || prev_rtt_ >= p_.timely_tlow;
        if (run_.add(now, gate_.round_trip(), cwnd_) || queued) cut(now, 1 - p_.timely_beta / 2);
    }

    void on_timeout(nanos now) override {
        calm_ = 0;
        cwnd_ = clamp_cwnd(cwnd_ / 2);
        gate_.close(now);
    }

    double cwnd() const override { return cwnd_; }
    const char *name() const override { return "timely"; }

private:
    static constexpr double kHaiSteps = 5;             // hyper-active increase, in add_steps
    static constexpr double kMinGradientFactor = 0.5;  // smallest gradient decrease factor

    // Folds the sample into the smoothed RTT difference; returns the gradient.
    double next_gradient(const AckEvent &e) {
        const double rtt = static_cast<double>(e.rtt);
        const double diff = prev_rtt_ != 0 ? rtt - static_cast<double>(prev_rtt_) : 0;
        prev_rtt_ = e.rtt;
        rtt_diff_ = (1 - p_.timely_ewma) * rtt_diff_ + p_.timely_ewma * diff;
        return rtt_diff_ / static_cast<double>(e.min_rtt != 0 ? e.min_rtt : e.rtt);
    }

    // True once hai_count calm samples came in a row.
    bool hyperactive() const { return p_.timely_hai_count != 0 && calm_ >= p_.timely_hai_count; }

    // Additive increase of `steps` add_steps per window of ACKed segments.
    void grow(uint32_t acked, double steps) {
        cwnd_ = clamp_cwnd(cwnd_ + steps * p_.timely_add_step * acked / cwnd_);
    }

    // Multiplicative decrease by `factor`, once per round trip.
    void cut(nanos now, double factor) {
        calm_ = 0;
        if (!gate_.open(now)) return;
        cwnd_ = clamp_cwnd(cwnd_ * factor);
        gate_.close(now);
    }

    const CcParams p_;      // tunables (the timely_* fields)
    double cwnd_;           // congestion window, segments; in [1, max_cwnd]
    nanos prev_rtt_ = 0;    // previous RTT sample; 0 before the first
    double rtt_diff_ = 0;   // EWMA of successive sample differences, ns
    uint32_t calm_ = 0;     // in-band samples with gradient <= 0 in a row; <= hai_count
    DecreaseGate gate_;     // one decrease per round trip
    LossRun run_;           // this round trip's fast retransmits
};

}  // namespace rttcc
