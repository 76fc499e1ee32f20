// One channel of rttcc_sim's flow level: `flows` alike flows on one path
// (FlowChannelPath), one controller and one RTT estimator standing for each.
// Each flow keeps at most its window in flight, as the engine does:
//
//   offer     an awake flow sends what its window has room for into its
//             NIC's queue (a full one says "later"); the NIC sends its line's
//             worth a step, shared by the channels in its queue
//   deliver   what left the NIC and survived the switches' queues is
//             acknowledged one round trip later
//             (one ACK for a few steps, as the engine's delayed ACKs); the
//             lost part is found then and sent again
//   take_acks the due ACKs free the window and drive the controller: a loss
//             is a fast retransmit, except for the share of flows that lost
//             their whole window (p^window for a drop share p), which no
//             SACK tells: they sleep out a backed-off RTO (and when that
//             share is most of them, the controller restarts from one segment)
//
// A background channel (FlowRun's) holds flows that joined at different
// times: they share its window (processor sharing), and each cohort leaves
// when the channel's acknowledged bytes pass what it had left.
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
        : p_(p), cls_(cls), group_(group), base_(base), to_send_(bytes), left_(bytes),
          cc_(make_congestion_control(c.cc)), est_(c.rtt) {}

    const FlowChannelPath &path() const { return p_; }
    double flows() const { return p_.flows; }
    uint32_t cls() const { return cls_; }
    uint32_t group() const { return group_; }
    nanos base() const { return base_; }
    nanos rtt() const { return rtt_; }
    // Payload bytes per flow not yet acknowledged (background: the first cohort's).
    double left() const { return left_; }
    bool done() const { return left_ <= 0; }
    nanos done_at() const { return done_at_; }  // the ACK that made it done
    nanos srtt() const { return est_.samples() ? est_.srtt() : 0; }  // 0: no sample yet

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
            inflight_ = std::max(0.0, inflight_ - a.sent * c.segment);
            const double lost = (a.sent - a.segments) * c.segment;
            to_send_ += lost;
            acked(a.segments * c.segment, a.due);
            const double whole_window = lost > 0 && a.sent > 0 ? std::pow(1 - a.segments / a.sent, window(c)) : 0;
            if (whole_window > 0) timed_out += sleep(whole_window * awake_, a.due, c);
            if (!cc_) continue;
            if (whole_window >= 0.5) cc_->on_timeout(a.due);
            else if (lost > 0) cc_->on_fast_retransmit(a.due);
            est_.on_sample(a.rtt);
            acked_carry_ += a.segments;
            const auto whole = static_cast<uint32_t>(acked_carry_);
            acked_carry_ -= whole;
            cc_->on_ack({a.due, whole, a.rtt, est_.srtt(), est_.rttvar(), est_.min(), 0});
        }
        return timed_out;
    }

    // What the awake flows' windows have room for this step, per flow (payload bytes).
    double offer(const FlowChannelConfig &c) {
        send_ = std::clamp(awake_ * window(c) * c.segment - inflight_, 0.0, to_send_);
        return send_;
    }
    // `share` of the offer goes into the NIC's queue (a full one took less); returns it.
    double enqueue(double share) {
        send_ *= share;
        to_send_ = std::max(0.0, to_send_ - send_);
        inflight_ += send_;
        nic_q_ += send_;
        return send_;
    }
    // The NIC sends `share` of this channel's queue; returns it, per flow.
    double leave_nic(double share) {
        out_ = nic_q_ * share;
        nic_q_ -= out_;
        return out_;
    }
    double out() const { return out_; }  // this step's, out of the NIC, per flow

    // `survive` of what left the NIC this step arrived; the step ends at
    // `next`, its ACK comes `ahead` later, and it waited `waited` in the
    // NIC (the RTT sample is both).  Returns the payload bytes per flow lost.
    double deliver(double survive, nanos next, nanos ahead, nanos waited, const FlowChannelConfig &c) {
        rtt_ = ahead + waited;
        if (out_ <= 0) return 0;
        const double delivered = out_ * survive;
        const Ack a{next + ahead, delivered / c.segment, out_ / c.segment, rtt_};
        if (!acks_.empty() && a.due < acks_.back().due + c.ack_span) {
            Ack &b = acks_.back();
            b.due = std::max(b.due, a.due);
            b.segments += a.segments;
            b.sent += a.sent;
            b.rtt = a.rtt;
        } else {
            acks_.push_back(a);
        }
        return out_ - delivered;
    }

    // Becomes a background channel (of no group): its flows are the first cohort.
    void to_background() {
        group_ = kNoGroup;
        cohorts_.push({progress_ + left_, p_.flows});
    }
    // Background: the flows of `o` join, with what they have to send, in
    // flight and to be acknowledged; per-flow amounts become the mean.
    void join(const FlowChannel &o) {
        const double f = o.p_.flows, all = p_.flows + f, mine = p_.flows / all, theirs = f / all;
        to_send_ = mine * to_send_ + theirs * o.to_send_;
        inflight_ = mine * inflight_ + theirs * o.inflight_;
        nic_q_ = mine * nic_q_ + theirs * o.nic_q_;
        awake_ = mine * awake_ + theirs * o.awake_;
        std::deque<Ack> merged;
        auto a = acks_.cbegin();
        auto b = o.acks_.cbegin();
        while (a != acks_.cend() || b != o.acks_.cend()) {
            const bool take_mine = b == o.acks_.cend() || (a != acks_.cend() && a->due <= b->due);
            Ack x = take_mine ? *a++ : *b++;
            const double w = take_mine ? mine : theirs;
            x.segments *= w;
            x.sent *= w;
            merged.push_back(x);
        }
        acks_.swap(merged);
        // progress_ is what each flow has had acknowledged since the channel
        // began (all share alike from here): the new flows need their own left.
        cohorts_.push({progress_ + o.left_, f});
        p_.flows = all;
        left_ = cohorts_.top().mark - progress_;
    }
    // Background: the flows whose bytes are all acknowledged leave; returns
    // how many.  What is still to send or in flight is the others' alone:
    // per flow, it grows by as much as they are fewer.
    double leave() {
        const bool nothing_left = to_send_ <= 1e-6 && inflight_ <= 1e-6;  // rounding: the last cohorts end here
        double gone = 0;
        while (!cohorts_.empty() && (nothing_left || cohorts_.top().mark <= progress_ + 1e-6)) {
            gone += cohorts_.top().flows;
            cohorts_.pop();
        }
        if (gone > 0 && !cohorts_.empty()) {
            const double grow = p_.flows / (p_.flows - gone);
            to_send_ *= grow;
            inflight_ *= grow;
            nic_q_ *= grow;
            for (Ack &a : acks_) {
                a.segments *= grow;
                a.sent *= grow;
            }
        }
        p_.flows -= gone;
        left_ = cohorts_.empty() ? 0 : cohorts_.top().mark - progress_;
        return gone;
    }

private:
    struct Ack {
        nanos due;
        double segments;  // delivered
        double sent;      // sent, delivered or not
        nanos rtt;        // the sample
    };
    struct Cohort {
        double mark;  // done once progress_ reaches it
        double flows;
        bool operator>(const Cohort &o) const { return mark > o.mark; }
    };

    using Cohorts = std::priority_queue<Cohort, std::vector<Cohort>, std::greater<>>;

    // `bytes` per flow acknowledged at `at`.
    void acked(double bytes, nanos at) {
        progress_ += bytes;
        if (left_ > 0 && (left_ -= bytes) <= 1e-6) {
            left_ = 0;
            done_at_ = at;
        }
    }

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
    double to_send_;       // payload bytes per flow not yet sent (or lost, to send again)
    double inflight_ = 0;  // sent, not yet acknowledged or found lost (the NIC's queue included)
    double nic_q_ = 0;     // in the NIC's queue
    double out_ = 0;       // this step's, out of the NIC
    double left_;          // not yet acknowledged (background: the first cohort's)
    nanos done_at_ = 0;
    double send_ = 0;      // this step's, per flow
    nanos rtt_ = 0;        // this step's
    double progress_ = 0;  // bytes acknowledged per flow so far
    std::unique_ptr<CongestionControl> cc_;  // null: cc none
    RttEstimator est_;
    std::deque<Ack> acks_;
    double acked_carry_ = 0;  // a fraction of a segment, for the next ACK
    double awake_ = 1;        // the share of flows not sleeping out a timeout
    unsigned backoff_ = 0;    // consecutive timeouts
    nanos last_timeout_ = 0, last_sleep_ = 0;
    std::priority_queue<std::pair<nanos, double>, std::vector<std::pair<nanos, double>>, std::greater<>> sleeping_;
    Cohorts cohorts_;
};

}  // namespace rttcc::sim
