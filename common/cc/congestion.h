// Congestion control per peer: a window of data segments in flight, driven
// by ACKs, loss signals and RTT samples.  Pure: no clock, no transport; the
// caller passes the time of every event and the RTT estimator's state.
//
// Every controller lowers its window at most once per round trip (one
// congestion event per RTT); DecreaseGate below is that rule.
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>

#include "clock/clock.h"
#include "rttcc/config.h"

namespace rttcc {

// What one ACK tells a congestion controller.  The delay it acts on is the
// engine's choice (cc_delay): each RTT sample, or the forward delay (the
// sample less the queueing its ACK met on the way back).
struct AckEvent {
    nanos now;        // arrival time of the ACK
    uint32_t acked;   // data segments it newly acknowledged (may be 0)
    nanos rtt;        // delay sample it gave, 0 = none (ACK delay already subtracted)
    nanos srtt;       // delay estimator state after that sample (0 before any)
    nanos rttvar;     // delay estimator state after that sample
    nanos min_rtt;    // smallest delay sample so far (0 before any)
    nanos round_trip; // smoothed round trip, how long a window change takes to show (0 = srtt)
};

enum class CcKind { kNone, kAimd, kTimely, kSwift };

// The congestion-control tunables of rttcc_config_t in engine units
// (nanoseconds instead of microseconds), made by cc_params_from: their
// defaults are the config's (RTTCC_PARAMS).  rttcc_config_check guarantees
// 1 <= initial_cwnd <= max_cwnd, timely_tlow < timely_thigh, the gains in
// (0, 1) and 0 < swift_fs_min_cwnd < swift_fs_max_cwnd.
struct CcParams {
    CcKind kind;              // which controller, none = no window
    uint32_t initial_cwnd;    // window at start, segments
    uint32_t max_cwnd;        // window ceiling, segments
    nanos aimd_queue_floor;   // AIMD: least queueing that signals congestion
    nanos timely_tlow;        // TIMELY: below this RTT, always increase
    nanos timely_thigh;       // TIMELY: above this RTT, always decrease
    double timely_add_step;   // TIMELY: additive increase, segments per RTT
    double timely_beta;       // TIMELY: multiplicative decrease factor
    double timely_ewma;       // TIMELY: EWMA gain of the RTT difference
    uint32_t timely_hai_count;  // TIMELY: calm samples in a row before HAI, 0 = never
    nanos swift_target;       // Swift: base target delay
    nanos swift_fs_range;     // Swift: flow-scaling range added to the target
    double swift_fs_min_cwnd; // Swift: window where flow scaling adds its whole range
    double swift_fs_max_cwnd; // Swift: window where flow scaling adds nothing
    double swift_ai;          // Swift: additive increase, segments per RTT
    double swift_beta;        // Swift: multiplicative decrease gain
    double swift_max_mdf;     // Swift: largest decrease per RTT (fraction)
};

// Maps the C config to CcParams (microseconds to nanoseconds).
CcParams cc_params_from(const rttcc_config_t &cfg);

class CongestionControl {
public:
    virtual ~CongestionControl() = default;
    // An ACK arrived.
    virtual void on_ack(const AckEvent &e) = 0;
    // A loss signalled by selective ACKs (fast retransmit).
    virtual void on_fast_retransmit(nanos now) = 0;
    // A retransmission timeout fired.
    virtual void on_timeout(nanos now) = 0;
    // The congestion window, segments; may be fractional.
    virtual double cwnd() const = 0;
    // "aimd", "timely" or "swift".
    virtual const char *name() const = 0;
    // Data segments that may be in flight: floor(cwnd) clamped to [1, max_cwnd]
    // (a NaN gives 1).  Asked for every segment sent: no libm floor, inline.
    uint32_t window() const {
        const double c = cwnd();
        return c >= max_cwnd_ ? max_cwnd_ : c >= 1.0 ? static_cast<uint32_t>(c) : 1u;
    }

protected:
    explicit CongestionControl(uint32_t max_cwnd) : max_cwnd_(std::max(max_cwnd, 1u)) {}
    // `c` within [1, max_cwnd]: the engine always sends at least one segment.
    double clamp_cwnd(double c) const { return std::clamp(c, 1.0, static_cast<double>(max_cwnd_)); }

private:
    uint32_t max_cwnd_;  // window ceiling, segments; >= 1
};

// Allows a window decrease at most once per round trip: after a decrease at
// time t, the next one waits until t + SRTT.
class DecreaseGate {
public:
    // Learns the round trip from an ACK (none before the first sample).
    void observe(const AckEvent &e) {
        const nanos rt = e.round_trip ? e.round_trip : e.srtt;
        if (rt != 0) rtt_ = rt;
    }
    // True when no decrease happened during the round trip before `now`.
    bool open(nanos now) const { return !last_ || now >= *last_ + rtt_; }
    // Records a decrease at `now`.
    void close(nanos now) { last_ = now; }
    // The latest round trip; 0 before any sample.
    nanos round_trip() const { return rtt_; }

private:
    nanos rtt_ = 0;              // latest round trip; 0 before any sample (nothing is held back)
    std::optional<nanos> last_;  // time of the latest decrease; empty before the first
};

// The fast retransmits of one round trip.  A lone loss on a path with no
// queue is noise (a bit error, a NIC or switch drop): cutting for it held a
// 0.1%-lossy path at Reno's ~1.2 / sqrt(p) = 38 segments, a third of a fast
// path's pipe.  More than max(1, cwnd / 8) in one round trip are a short
// queue overflowing (it drops runs).  Each controller adds what its delay
// says of the queue.
class LossRun {
public:
    // Counts a loss at `now`; true when this round trip's are a run.
    bool add(nanos now, nanos round_trip, double cwnd) {
        if (now >= start_ + round_trip) {
            start_ = now;
            losses_ = 0;
        }
        return ++losses_ > std::max(1.0, cwnd / 8);
    }

private:
    nanos start_ = 0;      // when the round trip of losses_ began
    uint32_t losses_ = 0;  // fast retransmits in it
};

// The controller `p.kind` names; nullptr for CcKind::kNone.
std::unique_ptr<CongestionControl> make_congestion_control(const CcParams &p);

}  // namespace rttcc
