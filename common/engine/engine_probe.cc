// RTT probes on the command channel: unsequenced PROBE / PROBE_REPLY
// pairs that keep every peer's row fresh while no data flows to it.
//
//   us:   t1 post PROBE(id) ............................ t4 arrival of REPLY
//   peer:           t2 arrival ... t3 post REPLY(id, hold = t3 - t2)
//   RTT sample = (t4 - t1) - hold
//
// One probe per peer is outstanding; a probe still unanswered when the next
// one to that peer leaves is counted lost.  A reply to anything but the
// outstanding probe is late and ignored.
#include <algorithm>
#include <cstdio>
#include <limits>

#include "engine/engine.h"

namespace rttcc {

// Sends the round of probes that is due, if one is.
void Engine::serve_probes(nanos now) {
    if (now < next_probe_round_) return;
    next_probe_round_ = now + usec(cfg_.probe_interval_us);
    probe_round(now);
}

void Engine::probe_round(nanos now) {
    if (cfg_.probe_strategy == RTTCC_PROBE_ALL_PAIRS) {
        for (auto &p : peers_)
            if (p && probe_allowed(*p, now)) send_probe(*p, now);
        return;
    }
    if (Peer *p = next_probe_target(now)) send_probe(*p, now);
}

bool Engine::probe_allowed(const Peer &p, nanos now) const { return !p.dead && now >= p.probe.next_allowed; }

// How much a peer needs a probe (adaptive): peers never sampled first, then
// by the age of their latest sample in probe intervals, weighted up by their
// RTT variation relative to SRTT.
static double probe_need(const Peer &p, nanos now, nanos interval) {
    if (p.rtt.samples() == 0) return std::numeric_limits<double>::infinity();
    const double age = static_cast<double>(now - p.path.last_sample) / static_cast<double>(interval);
    const double srtt = static_cast<double>(p.rtt.srtt());
    const double variation = srtt > 0 ? static_cast<double>(p.rtt.rttvar()) / srtt : 0;
    return age * (1 + 4 * variation);
}

// The one peer a round_robin, random or adaptive round probes, if any may be.
Peer *Engine::next_probe_target(nanos now) {
    const size_t n = peers_.size();
    if (n == 0) return nullptr;
    size_t start = probe_cursor_;
    if (cfg_.probe_strategy == RTTCC_PROBE_RANDOM) {
        probe_rng_ ^= probe_rng_ << 13;
        probe_rng_ ^= probe_rng_ >> 7;
        probe_rng_ ^= probe_rng_ << 17;
        start = probe_rng_ % n;
    }
    Peer *best = nullptr;
    double best_need = -1;
    for (size_t i = 1; i <= n; ++i) {
        const size_t index = (start + i) % n;
        Peer *p = peers_[index].get();
        if (!p || !probe_allowed(*p, now)) continue;
        if (cfg_.probe_strategy != RTTCC_PROBE_ADAPTIVE) {
            probe_cursor_ = static_cast<uint32_t>(index);
            return p;
        }
        const double need = probe_need(*p, now, usec(cfg_.probe_interval_us));
        if (need > best_need) {
            best = p;
            best_need = need;
        }
    }
    return best;
}

void Engine::send_probe(Peer &p, nanos now) {
    ProbeState &pr = p.probe;
    if (pr.outstanding) {  // the previous one never came back
        count(p, &rttcc_stats_t::probes_lost);
        publish(p, now);
    }
    pr.outstanding = pr.next_id++;
    if (pr.next_id == 0) pr.next_id = 1;
    pr.sent = now;
    pr.stamp = 0;
    pr.stamp_source = TsSource::kNone;
    pr.next_allowed = now + 1000000000ull / cfg_.probe_max_rate;
    count(p, &rttcc_stats_t::probes_tx);
    PacketHeader &h = stage(kCmd, p, Staged::kProbe, nullptr);
    h.type = static_cast<uint8_t>(PacketType::PROBE);
    h.seq = pr.outstanding;
    h.payload_len = static_cast<uint16_t>(probe_pad_.size());
    h.tx_stamp_ns = domain_time(now);
    TxDatagram &d = batch_[kCmd].dgrams[batch_[kCmd].count - 1];
    if (!probe_pad_.empty()) d.iov[d.iovcnt++] = {probe_pad_.data(), probe_pad_.size()};
    if (stamp_source_ != TsSource::kNone) {
        d.stamp_cookie = probe_cookie(p.id, pr.outstanding);
        h.flags |= kFlagTimed;
    }
}

// Liveness probes.  A peer we owe nothing can be gone too (its host cut
// off: its own report of us cannot reach mpirun), and no resend would
// tell.  One we have heard from, but not for a quarter of peer_timeout,
// gets a probe per scan (its liveness agent answers while its application
// computes); silent for all of peer_timeout and through four probes (the
// first at least 3/8 of peer_timeout ago), it is dead.  A peer with
// segments in flight is left to the resend rule (serve_resends).
void Engine::serve_keepalives(nanos now) {
    constexpr uint32_t kUnanswered = 4;
    if (now < next_keepalive_scan_) return;
    const nanos give_up = msec(cfg_.peer_timeout_ms);
    next_keepalive_scan_ = now + give_up / 8;
    for (auto &slot : peers_) {
        Peer *p = slot.get();
        if (!p || p->dead || !p->last_heard || p->tx.in_flight()) continue;
        const nanos silent = now - p->last_heard;
        if (silent >= give_up && p->keepalives >= kUnanswered) {
            char why[160];
            std::snprintf(why, sizeof why, "nothing heard from it for %.1f s despite %u liveness probes",
                          seconds(silent), unsigned{p->keepalives});
            declare_dead(*p, why);
        } else if (silent >= give_up / 4 && probe_allowed(*p, now)) {
            send_probe(*p, now);
            ++p->keepalives;
        }
    }
}

// Answers at once; the hold time runs from the probe's arrival (its kernel
// stamp when there is one) to the reply's post.
void Engine::answer_probe(Peer &p, const PacketHeader &h, const Arrival &a) {
    const nanos post = clock_.now();
    PacketHeader &r = stage(kCmd, p, Staged::kProbe, nullptr);
    r.type = static_cast<uint8_t>(PacketType::PROBE_REPLY);
    r.seq = h.seq;
    r.ack_delay_ns = static_cast<uint32_t>(std::min<nanos>(post > a.best() ? post - a.best() : 0, UINT32_MAX));
    r.tx_stamp_ns = domain_time(post);
    count(p, &rttcc_stats_t::probes_answered);
}

void Engine::take_probe_reply(Peer &p, const PacketHeader &h, const Arrival &a) {
    ProbeState &pr = p.probe;
    if (!pr.outstanding || h.seq != pr.outstanding) return;  // late: already counted lost
    pr.outstanding = 0;
    count(p, &rttcc_stats_t::probe_replies);
    take_exchange(p, pr.sent, pr.stamp, pr.stamp_source, h, a, /*probe=*/true);
    publish(p, a.now);
}

}  // namespace rttcc
