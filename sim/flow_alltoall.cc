#include "flow_alltoall.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <queue>
#include <stdexcept>
#include <string>

#include "engine/wire_format.h"
#include "exchange/exchange.h"
#include "exchange/peer_scheduler.h"
#include "flow_channel.h"
#include "sim_wire.h"

namespace rttcc::sim {

namespace {

// The steps whose deliveries one ACK reports (as the engine's delayed,
// cumulative ACKs do; fewer ACKs make the fluid faster).
constexpr nanos kAckSpan = 4;

// Where a background channel is filed: its class, destination and path.
std::vector<uint32_t> background_key(const FlowChannel &ch) {
    std::vector<uint32_t> key{ch.cls(), ch.path().dest};
    key.insert(key.end(), ch.path().path, ch.path().path + ch.path().hops);
    return key;
}

struct Group {
    uint32_t cls = 0;
    uint32_t peer = 0;     // rttcc: the peer the class's first rank started
    uint32_t left = 0;     // channels not yet all acknowledged
    double flows = 0;      // over its channels
    double flows_done = 0; // of channels all acknowledged
    bool released = false; // the median rank of the class is done with it
    bool closed = false;   // released and folded: its end no longer counts
    nanos end = 0;         // when the last one's last byte is acknowledged
};

struct TypeState {
    double q = 0;            // bytes queued per link (a NIC: its channels' backlog)
    double arrive = 0;       // bytes per link this step
    double cap = 0;          // bytes per link per step
    double delay = 0;        // q at the link's rate, ns
    double factor = 1;       // NIC: the share of what was offered that it took
    double drain = 0;        // NIC: the share of its queue it sent this step
    double drop = 0;         // the share of arrivals it dropped this step
};

class FlowRun {
public:
    FlowRun(const FlowFabric &f, const FlowAlltoallConfig &c);
    FlowAlltoallResult run();

private:
    void start_group(uint32_t cls, uint32_t peer, std::vector<FlowChannelPath> &paths);
    void start_rttcc();
    void fill(uint32_t cls);     // rttcc: start what the class's scheduler lets start
    void start_step(uint32_t s); // pairwise
    void step();
    void switch_arrivals(bool first);  // step's: what reaches each switch hop
    void switch_queues();              // step's: the switches' drops and queues
    void group_released(uint32_t g);
    void group_ended(uint32_t g);
    void class_may_end(uint32_t cls, nanos at);
    void fold(FlowChannel &&ch);
    void settle();  // channels whose last ACK came, cohorts done
    void drained(const FlowChannel &ch, nanos end);  // its last byte was acknowledged at `end`
    bool has_slot(uint32_t cls) const;
    template <typename F>
    void each_channel(F f) {
        for (FlowChannel &ch : active_) f(ch);
        for (FlowChannel &ch : background_) f(ch);
    }
    nanos rtt_now(const FlowChannelPath &p, nanos base) const;

    const FlowFabric &f_;
    FlowAlltoallConfig c_;
    const uint32_t P_;
    std::vector<TypeState> types_;
    std::vector<FlowChannel> active_;      // of groups
    std::vector<FlowChannel> background_;  // folded, per class and path
    std::map<std::vector<uint32_t>, size_t> background_at_;  // (class, dest, path) -> index
    std::vector<Group> groups_;
    // A group's release (the class's median rank is done with its peer) or end.
    struct Due {
        nanos at;
        uint32_t group;
        bool end;  // releases first at one time
        bool operator>(const Due &o) const {
            return at != o.at ? at > o.at : end != o.end ? end : group > o.group;
        }
    };
    std::priority_queue<Due, std::vector<Due>, std::greater<>> due_;
    std::vector<std::unique_ptr<PeerScheduler>> sched_;  // rttcc: per class
    std::vector<uint32_t> open_;                         // groups not ended (nor folded), per class
    std::vector<uint32_t> folded_;                       // background channels sending, per class
    std::vector<double> folded_flows_;                   // their flows, per class
    std::vector<nanos> last_;                            // the latest end of a class's flows so far
    std::vector<bool> eager_;                            // per class: every block went at once
    std::vector<FlowChannelPath> scratch_;
    std::vector<uint32_t> freed_;  // classes whose background flows ended this step
    FlowChannelConfig cc_;
    double wire_ = 0;  // wire bytes per payload byte
    uint32_t frame_ = 0;
    nanos now_ = 0, dt_ = 0, start_ = 0;
    uint32_t pair_step_ = 0, step_left_ = 0;  // pairwise
    size_t ended_ = 0;                        // classes with an end
    FlowAlltoallResult r_;
};

FlowRun::FlowRun(const FlowFabric &f, const FlowAlltoallConfig &c) : f_(f), c_(c), P_(f.ranks()) {
    if (c.algo == AlltoallAlgo::kBruck) throw std::invalid_argument("flow level: rttcc, pairwise or linear (Bruck's is packet level only)");
    if (c.block == 0) throw std::invalid_argument("flow level: a block of at least one byte");
    now_ = start_ = c.start;
    frame_ = frame_bytes(c.mtu);
    cc_.segment = static_cast<double>(c.mtu - 28 - kHeaderSize);
    wire_ = frame_ / cc_.segment;
    cc_.cc = cc_params_from(c.engine);
    cc_.rtt = rtt_params_from(c.engine);
    cc_.rto_jitter = c.engine.rto_jitter_pct / 100.0;
    cc_.credits = std::max(1u, c.engine.send_credits);
    types_.resize(f.types().size());
    const nanos most = flow_max_dt(f, c.mtu);
    if (c.dt > most)
        throw std::invalid_argument("flow level: a step of at most " + std::to_string(most) +
                                    " ns here (a quarter of the shortest round trip)");
    dt_ = c.dt ? c.dt : std::max<nanos>(1, most / 2);
    cc_.ack_span = kAckSpan * dt_;
    for (uint32_t t = 0; t < types_.size(); ++t)
        types_[t].cap = f.types()[t].bits_per_s * static_cast<double>(dt_) / 8e9;
    r_.class_end.assign(f.classes().size(), 0);
    open_.assign(f.classes().size(), 0);
    folded_.assign(f.classes().size(), 0);
    folded_flows_.assign(f.classes().size(), 0);
    last_.assign(f.classes().size(), 0);
    eager_.assign(f.classes().size(), false);
    r_.dt = dt_;
}

nanos FlowRun::rtt_now(const FlowChannelPath &p, nanos base) const {
    double t = static_cast<double>(base);
    for (uint32_t h = 0; h < p.hops; ++h) t += types_[p.path[h]].delay;
    return static_cast<nanos>(t + types_[p.back[0]].delay + types_[p.back[1]].delay);
}

void FlowRun::start_group(uint32_t cls, uint32_t peer, std::vector<FlowChannelPath> &paths) {
    const auto g = static_cast<uint32_t>(groups_.size());
    Group gr;
    gr.cls = cls;
    gr.peer = peer;
    gr.end = now_;
    groups_.push_back(gr);
    ++open_[cls];
    for (FlowChannelPath &p : paths) {
        if (p.flows <= 0) continue;
        active_.emplace_back(p, cls, g, f_.base_rtt(p, frame_), static_cast<double>(c_.block), cc_);
        ++groups_[g].left;
        groups_[g].flows += p.flows;
        ++r_.channels;
    }
    if (groups_[g].left == 0) {
        due_.push({now_, g, false});
        due_.push({now_, g, true});
    }
}

// Every peer under the eager cut goes with the RTR, at the call's start,
// at once; the others, once every RTR is in, in the order the class's
// PeerScheduler picks from the round trips the fabric has now (a warm RTT
// table).  Either way the call's time counts from its start.
void FlowRun::start_rttcc() {
    const uint64_t cut = std::min<uint64_t>(c_.xp.eager_limit, c_.xp.eager_total / (P_ - 1));
    const SchedParams sp = sched_params_of(c_.xp);
    nanos grants = 0;  // every RTR is in: the largest one-way delay
    sched_.resize(f_.classes().size());
    for (uint32_t cls = 0; cls < f_.classes().size(); ++cls) {
        const uint32_t rep = f_.classes()[cls].first;
        // The round trip from rep to each class, within its leaf and not (mean over spines).
        std::vector<nanos> rtt(2 * f_.classes().size(), 0);
        for (uint32_t d = 0; d < f_.classes().size(); ++d)
            for (const uint32_t same : {0u, 1u}) {
                scratch_.clear();
                f_.paths(cls, d, same != 0, &scratch_);
                double sum = 0;
                for (const FlowChannelPath &p : scratch_) sum += static_cast<double>(f_.base_rtt(p, frame_));
                const nanos base = scratch_.empty() ? 0 : static_cast<nanos>(sum / static_cast<double>(scratch_.size()));
                const nanos learned = c_.table ? c_.table->srtt(cls, d, same != 0) : 0;
                rtt[2 * d + same] = learned ? learned : base;
                grants = std::max(grants, base / 2);
            }
        if (c_.block <= cut) {
            eager_[cls] = true;
            continue;
        }
        auto s = std::make_unique<PeerScheduler>(sched_policy_of(c_.xp.policy), sp);
        if (!s->reset(rep, P_)) throw std::invalid_argument("flow level: the scheduler refused the call");
        for (uint32_t d = 0; d < P_; ++d) {
            if (d == rep) continue;
            PeerCost pc;
            pc.srtt = rtt[2 * f_.class_of(d) + (f_.leaf_of(d) == f_.leaf_of(rep))];
            pc.samples = 1;
            pc.bytes = c_.block;
            s->set_peer(d, pc);
        }
        sched_[cls] = std::move(s);
    }
    if (c_.block > cut) now_ = c_.start + grants;  // nothing of the call moves before
    for (uint32_t cls = 0; cls < f_.classes().size(); ++cls) {
        if (eager_[cls]) {
            for (uint32_t off = 1; off < P_; ++off) {
                scratch_.clear();
                f_.channels(cls, off, &scratch_);
                start_group(cls, (f_.classes()[cls].first + off) % P_, scratch_);
            }
        } else {
            fill(cls);
        }
    }
}

// The class's ranks hold slots for their background flows too: on average
// its background flows over its ranks, rounded (the median rank).
bool FlowRun::has_slot(uint32_t cls) const {
    const uint32_t most = c_.xp.max_concurrent;
    const double held = folded_flows_[cls] / f_.classes()[cls].size();
    return most == 0 || sched_[cls]->in_flight() + static_cast<uint32_t>(held + 0.5) < most;
}

void FlowRun::fill(uint32_t cls) {
    PeerScheduler &s = *sched_[cls];
    const uint32_t rep = f_.classes()[cls].first;
    uint32_t peer;
    while (has_slot(cls) && s.next(now_, &peer)) {
        scratch_.clear();
        f_.channels(cls, (peer + P_ - rep) % P_, &scratch_);
        start_group(cls, peer, scratch_);
    }
}

void FlowRun::start_step(uint32_t s) {
    pair_step_ = s;
    step_left_ = 0;
    for (uint32_t cls = 0; cls < f_.classes().size(); ++cls) {
        scratch_.clear();
        f_.channels(cls, s, &scratch_);
        start_group(cls, s, scratch_);
        ++step_left_;
    }
}

// The class's median rank is done with the group's peer: its scheduler
// starts the next.  The ranks whose flows are still going (such as those
// into a hotspot) keep them going without a slot, folded into the class's
// background channel of their path.
void FlowRun::group_released(uint32_t g) {
    const uint32_t cls = groups_[g].cls;
    if (c_.algo != AlltoallAlgo::kRttcc || eager_[cls]) return;
    groups_[g].closed = true;
    last_[cls] = std::max(last_[cls], groups_[g].end);
    for (size_t i = 0; i < active_.size();) {
        if (active_[i].group() != g) {
            ++i;
            continue;
        }
        fold(std::move(active_[i]));
        if (i + 1 != active_.size()) active_[i] = std::move(active_.back());
        active_.pop_back();
    }
    --open_[cls];
    sched_[cls]->finished(groups_[g].peer);
    fill(cls);
    class_may_end(cls, last_[cls]);
}

// Flows of one class and path, folded together: each joins as a cohort
// with its bytes to go; the controller is the first one's.
void FlowRun::fold(FlowChannel &&ch) {
    folded_flows_[ch.cls()] += ch.flows();
    const auto [it, fresh] = background_at_.emplace(background_key(ch), background_.size());
    if (fresh) {
        ch.to_background();
        ++folded_[ch.cls()];
        background_.push_back(std::move(ch));
        return;
    }
    background_[it->second].join(ch);
}

void FlowRun::settle() {
    for (size_t i = 0; i < active_.size();) {
        if (!active_[i].done()) {
            ++i;
            continue;
        }
        drained(active_[i], active_[i].done_at());
        if (i + 1 != active_.size()) active_[i] = std::move(active_.back());
        active_.pop_back();
    }
    for (size_t i = 0; i < background_.size();) {
        FlowChannel &bg = background_[i];
        if (const double gone = bg.leave(); gone > 0) {
            folded_flows_[bg.cls()] -= gone;
            last_[bg.cls()] = std::max(last_[bg.cls()], now_);
            freed_.push_back(bg.cls());
        }
        if (!bg.done()) {
            ++i;
            continue;
        }
        drained(bg, now_);
        background_at_.erase(background_key(bg));
        if (i + 1 != background_.size()) {
            background_[i] = std::move(background_.back());
            background_at_[background_key(background_[i])] = i;
        }
        background_.pop_back();
    }
}

void FlowRun::drained(const FlowChannel &ch, nanos end) {
    if (c_.table && ch.srtt()) c_.table->observe(ch.cls(), ch.path().dest, ch.path().hops == 2, ch.srtt());
    if (ch.group() == FlowChannel::kNoGroup) {
        last_[ch.cls()] = std::max(last_[ch.cls()], end);
        --folded_[ch.cls()];
        return;
    }
    Group &g = groups_[ch.group()];
    g.end = std::max(g.end, end);
    g.flows_done += ch.flows();
    if (!g.released && 2 * g.flows_done >= g.flows) {
        g.released = true;
        due_.push({end, ch.group(), false});
    }
    if (--g.left == 0) due_.push({g.end, ch.group(), true});
}

void FlowRun::group_ended(uint32_t g) {
    const Group &gr = groups_[g];
    if (gr.closed) return;
    --open_[gr.cls];
    last_[gr.cls] = std::max(last_[gr.cls], gr.end);
    if (c_.algo == AlltoallAlgo::kPairwise) {  // lockstep: the next step once every flow of this one is done
        if (--step_left_ == 0) {
            if (pair_step_ + 1 < P_) {
                start_step(pair_step_ + 1);
            } else {
                for (nanos &e : r_.class_end) e = gr.end - start_;
                ended_ = r_.class_end.size();
            }
        }
        return;
    }
    class_may_end(gr.cls, last_[gr.cls]);
}

void FlowRun::class_may_end(uint32_t cls, nanos at) {
    const bool scheduled = c_.algo == AlltoallAlgo::kRttcc && !eager_[cls];
    if (open_[cls] == 0 && folded_[cls] == 0 && (!scheduled || sched_[cls]->done()) && r_.class_end[cls] == 0) {
        r_.class_end[cls] = at - start_;
        ++ended_;
    }
}

void FlowRun::step() {
    const std::vector<FlowLinkType> &lt = f_.types();
    // ACKs (and losses found) that are due, and the channels and cohorts they complete.
    each_channel([&](FlowChannel &ch) { r_.timeouts += ch.take_acks(now_, cc_); });
    settle();
    for (TypeState &s : types_) s.arrive = 0;
    // What each flow's window has room for goes into its NIC's queue, as
    // far as the queue has room (the rest waits: "try later").
    each_channel([&](FlowChannel &ch) {
        const FlowChannelPath &p = ch.path();
        types_[p.path[0]].arrive += p.flows * ch.offer(cc_) * wire_ / lt[p.path[0]].count;
    });
    for (uint32_t t = 0; t < types_.size(); ++t) {
        TypeState &s = types_[t];
        s.factor = lt[t].nic && s.q + s.arrive > lt[t].queue_bytes ? std::max(0.0, lt[t].queue_bytes - s.q) / s.arrive : 1;
    }
    // A NIC sends its line's worth of its queue each step, shared by the
    // channels in proportion to what each has in it.
    for (TypeState &s : types_) s.arrive = 0;
    each_channel([&](FlowChannel &ch) {
        const FlowChannelPath &p = ch.path();
        types_[p.path[0]].arrive += p.flows * ch.enqueue(types_[p.path[0]].factor) * wire_ / lt[p.path[0]].count;
    });
    for (uint32_t t = 0; t < types_.size(); ++t) {
        if (!lt[t].nic) continue;
        TypeState &s = types_[t];
        const double backlog = s.q + s.arrive;
        s.drain = backlog > 0 ? std::min(1.0, s.cap / backlog) : 0;
        s.q = backlog * (1 - s.drain);
        s.arrive = 0;
    }
    switch_queues();
    for (uint32_t t = 0; t < types_.size(); ++t) types_[t].delay = types_[t].q * 8e9 / lt[t].bits_per_s;
    // What left the NICs is acknowledged once it has waited behind the
    // switches' queues as they are now, and its ACK behind the hosts'.
    const nanos next = now_ + dt_;
    each_channel([&](FlowChannel &ch) {
        const FlowChannelPath &p = ch.path();
        double survive = 1;
        for (uint32_t h = 1; h < p.hops; ++h) survive *= 1 - types_[p.path[h]].drop;
        const nanos ahead = rtt_now(p, ch.base()) - static_cast<nanos>(types_[p.path[0]].delay);
        r_.drop_bytes += p.flows * ch.deliver(survive, next, ahead, static_cast<nanos>(types_[p.path[0]].delay), cc_) * wire_;
    });
    now_ = next;
    ++r_.steps;
    // Slots the background gave back, and classes whose last flows ended.
    std::sort(freed_.begin(), freed_.end());
    freed_.erase(std::unique(freed_.begin(), freed_.end()), freed_.end());
    for (const uint32_t cls : freed_) {
        if (c_.algo == AlltoallAlgo::kRttcc && !eager_[cls]) fill(cls);
        class_may_end(cls, last_[cls]);
    }
    freed_.clear();
}

// What leaves the NICs (the first pass takes it from their queues) and
// the flood arrive at the switches' hops, each hop what the ones before it
// did not drop (their drop shares so far).
void FlowRun::switch_arrivals(bool first) {
    const std::vector<FlowLinkType> &lt = f_.types();
    for (uint32_t t = 0; t < types_.size(); ++t)
        if (!lt[t].nic) types_[t].arrive = 0;
    each_channel([&](FlowChannel &ch) {
        const FlowChannelPath &p = ch.path();
        double through = p.flows * (first ? ch.leave_nic(types_[p.path[0]].drain) : ch.out()) * wire_;
        for (uint32_t h = 1; h < p.hops; ++h) {
            types_[p.path[h]].arrive += through / lt[p.path[h]].count;
            through *= 1 - types_[p.path[h]].drop;
        }
    });
    const std::vector<uint32_t> &fp = f_.flood_path();
    double through = f_.flood_bits_per_s(now_) * static_cast<double>(dt_) / 8e9;
    for (size_t h = 1; h < fp.size(); ++h) {
        types_[fp[h]].arrive += through / lt[fp[h]].count;
        through *= 1 - types_[fp[h]].drop;
    }
}

// The switches' queues, drop-tail: each drops its share of what arrives,
// from every flow alike, and what it drops goes no further.  A hop's
// arrivals are what the hops before it let through, so they are counted
// again with the drops the last count gave until those settle: once if
// nothing drops, at most once per switch hop on a path.
void FlowRun::switch_queues() {
    const std::vector<FlowLinkType> &lt = f_.types();
    for (TypeState &s : types_) s.drop = 0;
    for (uint32_t pass = 0; pass < FlowChannelPath::kMaxHops - 1; ++pass) {
        switch_arrivals(pass == 0);
        bool settled = true;
        for (uint32_t t = 0; t < types_.size(); ++t) {
            if (lt[t].nic) continue;
            TypeState &s = types_[t];
            const double over = s.q + s.arrive - s.cap - lt[t].queue_bytes;
            const double drop = over > 0 ? over / s.arrive : 0;
            settled &= drop == s.drop;
            s.drop = drop;
        }
        if (settled) break;
    }
    for (uint32_t t = 0; t < types_.size(); ++t) {
        if (lt[t].nic) continue;
        TypeState &s = types_[t];
        s.q = std::clamp(s.q + s.arrive - s.cap, 0.0, static_cast<double>(lt[t].queue_bytes));
    }
    const std::vector<uint32_t> &fp = f_.flood_path();
    double through = f_.flood_bits_per_s(now_) * static_cast<double>(dt_) / 8e9;
    for (size_t h = 1; h < fp.size(); ++h) {
        r_.flood_drop_bytes += through * types_[fp[h]].drop;
        through *= 1 - types_[fp[h]].drop;
    }
}

FlowAlltoallResult FlowRun::run() {
    switch (c_.algo) {
    case AlltoallAlgo::kRttcc:
        start_rttcc();
        break;
    case AlltoallAlgo::kPairwise:
        start_step(1);
        break;
    default:
        for (uint32_t cls = 0; cls < f_.classes().size(); ++cls) {
            // One group of every offset's channels (the same paths, their flows added).
            std::map<std::vector<uint32_t>, FlowChannelPath> merged;
            for (uint32_t off = 1; off < P_; ++off) {
                scratch_.clear();
                f_.channels(cls, off, &scratch_);
                for (const FlowChannelPath &p : scratch_) {
                    std::vector<uint32_t> key(p.path, p.path + p.hops);
                    key.push_back(p.dest);
                    auto [it, fresh] = merged.emplace(key, p);
                    if (!fresh) it->second.flows += p.flows;
                }
            }
            std::vector<FlowChannelPath> all;
            for (auto &kv : merged) all.push_back(kv.second);
            start_group(cls, 0, all);
        }
    }
    const nanos limit = start_ + c_.limit;
    const size_t classes = f_.classes().size();
    auto ended = [&] { return ended_ == classes; };
    while (!ended() && now_ < limit) {
        while (!due_.empty() && due_.top().at <= now_) {
            const Due d = due_.top();
            due_.pop();
            if (d.end) group_ended(d.group);
            else group_released(d.group);
        }
        if (ended()) break;
        step();
    }
    r_.finished = ended();
    if (r_.finished) {
        std::vector<std::pair<nanos, uint32_t>> by_end;
        for (uint32_t cls = 0; cls < f_.classes().size(); ++cls) {
            r_.completion = std::max(r_.completion, r_.class_end[cls]);
            by_end.push_back({r_.class_end[cls], f_.classes()[cls].size()});
        }
        r_.ended_at = start_ + r_.completion;
        std::sort(by_end.begin(), by_end.end());
        uint64_t seen = 0;
        for (const auto &[end, n] : by_end)
            if ((seen += n) * 2 >= P_) {
                r_.median_end = end;
                break;
            }
    }
    return r_;
}

// The shortest round trip with empty queues of a class's flows to its own class.
nanos shortest_rtt(const FlowFabric &f, uint32_t frame) {
    nanos least = 0;
    std::vector<FlowChannelPath> paths;
    for (uint32_t cls = 0; cls < f.classes().size(); ++cls) {
        for (const uint32_t same : {1u, 0u}) {
            paths.clear();
            f.paths(cls, cls, same != 0, &paths);
            for (const FlowChannelPath &p : paths) {
                const nanos b = f.base_rtt(p, frame);
                least = least ? std::min(least, b) : b;
            }
        }
    }
    return least;
}

}  // namespace

nanos flow_max_dt(const FlowFabric &fabric, uint32_t mtu) {
    return std::max<nanos>(1, shortest_rtt(fabric, frame_bytes(mtu)) / 4);
}

FlowAlltoallResult run_flow_alltoall(const FlowFabric &fabric, const FlowAlltoallConfig &config) {
    FlowRun run(fabric, config);
    return run.run();
}

namespace {

// Every block's bits on each link type, per link of the type.
std::vector<double> type_load(const FlowFabric &f, uint64_t block) {
    std::vector<double> bits(f.types().size(), 0);
    std::vector<FlowChannelPath> paths;
    for (uint32_t cls = 0; cls < f.classes().size(); ++cls)
        for (uint32_t off = 1; off < f.ranks(); ++off) {
            paths.clear();
            f.channels(cls, off, &paths);
            for (const FlowChannelPath &p : paths)
                for (uint32_t h = 0; h < p.hops; ++h)
                    bits[p.path[h]] += p.flows * static_cast<double>(block) * 8 / f.types()[p.path[h]].count;
        }
    return bits;
}

// The busiest type's load at its rate less `taken` of it, in ns (infinite if nothing is left).
double busiest_ns(const FlowFabric &f, const std::vector<double> &bits, const std::vector<double> &taken) {
    double worst = 0;
    for (size_t t = 0; t < bits.size(); ++t) {
        if (bits[t] <= 0) continue;
        const double left = f.types()[t].bits_per_s - taken[t];
        worst = std::max(worst, left > 0 ? bits[t] / left : HUGE_VAL);
    }
    return worst * 1e9;
}

}  // namespace

double flow_line_bound_ns(const FlowFabric &f, uint64_t block) {
    return busiest_ns(f, type_load(f, block), std::vector<double>(f.types().size(), 0));
}

double flow_flood_estimate_ns(const FlowFabric &f, uint64_t block) {
    std::vector<double> taken(f.types().size(), 0);
    for (size_t h = 1; h < f.flood_path().size(); ++h) taken[f.flood_path()[h]] = f.flood_mean_bits_per_s();
    return busiest_ns(f, type_load(f, block), taken);
}

}  // namespace rttcc::sim
