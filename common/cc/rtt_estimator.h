// Round-trip time estimation (RFC 6298) and the retransmission timeout
// derived from it.  Pure: no clock, no transport; samples come in already
// corrected for the receiver's ACK delay (RFC 9002) and free of Karn's
// ambiguity (every transmission has its own id).
#pragma once
#include <algorithm>
#include <cstdint>

#include "clock/clock.h"
#include "rttcc/config.h"

namespace rttcc {

struct RttParams {
    double alpha = 0.125;          // SRTT gain (RFC 6298)
    double beta = 0.25;            // RTTVAR gain (RFC 6298)
    nanos initial_rto = msec(10);  // before the first sample
    nanos min_rto = msec(1);       // floor of the computed RTO
    nanos max_rto = msec(1000);    // ceiling
    nanos granularity = usec(16);  // G: the hotel's tick
};

// The estimator's gains and RTO bounds of a config (microseconds to nanoseconds).
inline RttParams rtt_params_from(const rttcc_config_t &cfg) {
    RttParams p;
    p.alpha = cfg.rtt_alpha;
    p.beta = cfg.rtt_beta;
    p.initial_rto = usec(cfg.retrans_timeout_us);
    p.min_rto = usec(cfg.min_rto_us);
    p.max_rto = usec(cfg.max_rto_us);
    return p;
}

// The timeout of a segment's next transmission after `retries` resends:
// the base RTO doubled per retry (the shift clamped, so it cannot overflow
// however often a segment is resent), capped at max_rto.
inline nanos backed_off_rto(nanos base, unsigned retries, nanos max_rto) {
    constexpr unsigned kMaxShift = 20;  // 2^20 x any sane base is far past every max_rto
    return std::min<nanos>(base << std::min(retries, kMaxShift), max_rto);
}

class RttEstimator {
public:
    using Params = RttParams;

    explicit RttEstimator(const Params &p = Params{}) : p_(p) {}

    void on_sample(nanos rtt) {
        const double r = static_cast<double>(rtt);
        if (samples_ == 0) {
            srtt_ = r;
            rttvar_ = r / 2;
            min_ = max_ = rtt;
        } else {
            rttvar_ = (1 - p_.beta) * rttvar_ + p_.beta * (srtt_ > r ? srtt_ - r : r - srtt_);
            srtt_ = (1 - p_.alpha) * srtt_ + p_.alpha * r;
            min_ = std::min(min_, rtt);
            max_ = std::max(max_, rtt);
        }
        latest_ = rtt;
        ++samples_;
    }

    // RTO = SRTT + max(G, 4 * RTTVAR), clamped; the initial RTO until a sample.
    nanos rto() const {
        if (samples_ == 0) return p_.initial_rto;
        const double r = srtt_ + std::max(static_cast<double>(p_.granularity), 4 * rttvar_);
        return std::clamp(static_cast<nanos>(r), p_.min_rto, p_.max_rto);
    }

    nanos srtt() const { return static_cast<nanos>(srtt_); }
    nanos rttvar() const { return static_cast<nanos>(rttvar_); }
    nanos min() const { return min_; }
    nanos max() const { return max_; }
    nanos latest() const { return latest_; }
    uint64_t samples() const { return samples_; }

private:
    Params p_;            // gains and bounds
    double srtt_ = 0;     // smoothed RTT, ns
    double rttvar_ = 0;   // RTT variation, ns
    nanos min_ = 0;       // smallest sample
    nanos max_ = 0;       // largest sample
    nanos latest_ = 0;    // most recent sample
    uint64_t samples_ = 0;
};

}  // namespace rttcc
