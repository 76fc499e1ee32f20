// One channel of rttcc_sim's flow level: `flows` alike flows on one path
// (FlowChannelPath), one controller and one RTT estimator standing for each.
//
//   offer     each awake flow sends its window over its round trip, at most
//             what it has left
//   deliver   what survived the queues is acknowledged one round trip later
//             (one ACK for a few steps, as the engine's delayed ACKs);
//             the lost part is sent again
//   take_acks the due ACKs drive the controller: a loss is a fast
//             retransmit, except for the share of flows that lost their
//             whole window (p^window for a drop share p), which no SACK
//             tells: they sleep out a backed-off RTO (and when that share is
//             most of them, the controller restarts from one segment)
//
// A background channel (FlowRun's) holds flows that joined at different
// times: they share its rate (processor sharing), and each cohort leaves
// when the channel's progress passes what it had left.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <memory>
#include <queue>
#include <utility>
#include <vector>

#include "cc/congestion.h"
#include "cc/rtt_estimator.h"
#include "flow_fabric.h"

namespace rttcc::sim {

// What every channel of a run shares.
struct FlowChannelConfig {
    CcParams cc;
    RttParams rtt;
    double rto_jitter = 0.5;  // the engine's rto_jitter_pct, as a share
    uint32_t credits = 256;   // the window without a controller
    double segment = 1408;    // payload bytes per segment
    nanos ack_span = 0;       // deliveries within this of the last ACK join it
};

class FlowChannel {
public:
    static constexpr uint32_t kNoGroup = UINT32_MAX;  // a background channel's group

    FlowChannel(const FlowChannelPath &p, uint32_t cls, uint32_t group, nanos base, double bytes,
                const FlowChannelConfig &c)
        : p_(p), cls_(cls), group_(group), base_(base), unsent_(bytes), cc_(make_congestion_control(c.cc)),
          est_(c.rtt) {}

    const FlowChannelPath &path() const { return p_; }
    double flows() const { return p_.flows; }
    uint32_t cls() const { return cls_; }
    uint32_t group() const { return group_; }
    nanos base() const { return base_; }
    nanos rtt() const { return rtt_; }
    double send() const { return send_; }
    double unsent() const { return unsent_; }

    // The ACKs and wake-ups due by `now`; returns the flows that timed out.
    double take_acks(nanos now, const FlowChannelConfig &c) {
        while (!sleeping_.empty() && sleeping_.top().first <= now) {
            awake_ = std::min(1.0, awake_ + sleeping_.top().second);
            sleeping_.pop();
        }
        double timed_out = 0;
        while (!acks_.empty() && acks_.front().due <= now) {
            const Ack a = acks_.front();
            acks_.pop_front();
            const double whole_window = a.lost && a.sent > 0 ? std::pow(1 - a.segments / a.sent, window(c)) : 0;
            if (whole_window > 0) timed_out += sleep(whole_window * awake_, a.due, c);
            if (!cc_) continue;
            if (whole_window >= 0.5) cc_->on_timeout(a.due);
            else if (a.lost) cc_->on_fast_retransmit(a.due);
            est_.on_sample(a.rtt);
            acked_carry_ += a.segments;
            const auto whole = static_cast<uint32_t>(acked_carry_);
            acked_carry_ -= whole;
            cc_->on_ack({a.due, whole, a.rtt, est_.srtt(), est_.rttvar(), est_.min(), 0});
        }
        return timed_out;
    }

    // This step's send per flow (payload bytes), its round trip being `rtt`.
    double offer(nanos rtt, nanos dt, const FlowChannelConfig &c) {
        rtt_ = rtt;
        send_ = std::min(awake_ * window(c) * c.segment * static_cast<double>(dt) / static_cast<double>(rtt), unsent_);
        return send_;
    }
    // A full NIC took only `share` of what was offered.
    void throttle(double share) { send_ *= share; }

    // `survive` of this step's send arrived; the step ends at `next`.
    // Returns the payload bytes per flow lost.
    double deliver(double survive, nanos next, const FlowChannelConfig &c) {
        if (send_ <= 0) return 0;
        const double delivered = send_ * survive;
        unsent_ -= delivered;
        if (unsent_ < 1e-6) unsent_ = 0;
        progress_ += delivered;
        const Ack a{next + rtt_, delivered / c.segment, send_ / c.segment, rtt_, delivered < send_};
        if (!acks_.empty() && a.due < acks_.back().due + c.ack_span) {
            Ack &b = acks_.back();
            b.due = std::max(b.due, a.due);
            b.segments += a.segments;
            b.sent += a.sent;
            b.rtt = a.rtt;
            b.lost |= a.lost;
        } else {
            acks_.push_back(a);
        }
        return send_ - delivered;
    }

    // Becomes a background channel (of no group): its flows are the first cohort.
    void to_background() {
        group_ = kNoGroup;
        cohorts_.push({progress_ + unsent_, p_.flows});
    }
    // Background: `flows` more join with `bytes` each to go.
    void join(double flows, double bytes) {
        cohorts_.push({progress_ + bytes, flows});
        p_.flows += flows;
        unsent_ = cohorts_.top().mark - progress_;
    }
    // Background: the flows whose bytes are all delivered leave; returns how many.
    double leave() {
        double gone = 0;
        while (!cohorts_.empty() && cohorts_.top().mark <= progress_ + 1e-6) {
            gone += cohorts_.top().flows;
            cohorts_.pop();
        }
        p_.flows -= gone;
        unsent_ = cohorts_.empty() ? 0 : cohorts_.top().mark - progress_;
        return gone;
    }

private:
    struct Ack {
        nanos due;
        double segments;  // delivered
        double sent;      // sent, delivered or not
        nanos rtt;        // the sample
        bool lost;        // some of it was dropped
    };
    struct Cohort {
        double mark;  // done once progress_ reaches it
        double flows;
        bool operator>(const Cohort &o) const { return mark > o.mark; }
    };

    uint32_t window(const FlowChannelConfig &c) const { return cc_ ? std::min(cc_->window(), c.credits) : c.credits; }

    // `share` of the flows sleep out an RTO, doubled while timeouts follow
    // each other, lengthened as the engine's jitter spreads them: a
    // quarter each by 1/8, 3/8, 5/8 and 7/8 of rto_jitter.
    double sleep(double share, nanos at, const FlowChannelConfig &c) {
        if (share <= 0) return 0;
        backoff_ = last_sleep_ && at < last_timeout_ + 2 * last_sleep_ ? backoff_ + 1 : 0;
        last_sleep_ = backed_off_rto(est_.rto(), backoff_, c.rtt.max_rto);
        last_timeout_ = at;
        awake_ -= share;
        for (int i = 0; i < 4; ++i)
            sleeping_.push({at + static_cast<nanos>(static_cast<double>(last_sleep_) * (1 + c.rto_jitter * (2 * i + 1) / 8)),
                            share / 4});
        return share * p_.flows;
    }

    FlowChannelPath p_;
    uint32_t cls_, group_;
    nanos base_;
    double unsent_;        // payload bytes per flow not yet delivered (background: the first cohort's)
    double send_ = 0;      // this step's, per flow
    nanos rtt_ = 0;        // this step's
    double progress_ = 0;  // bytes delivered per flow so far
    std::unique_ptr<CongestionControl> cc_;  // null: cc none
    RttEstimator est_;
    std::deque<Ack> acks_;
    double acked_carry_ = 0;  // a fraction of a segment, for the next ACK
    double awake_ = 1;        // the share of flows not sleeping out a timeout
    unsigned backoff_ = 0;    // consecutive timeouts
    nanos last_timeout_ = 0, last_sleep_ = 0;
    std::priority_queue<std::pair<nanos, double>, std::vector<std::pair<nanos, double>>, std::greater<>> sleeping_;
    std::priority_queue<Cohort, std::vector<Cohort>, std::greater<>> cohorts_;
};

}  // namespace rttcc::sim
