// Loss: retransmission timeouts with backoff, resends, dead peers.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "engine/engine.h"
#include "util/splitmix.h"

namespace rttcc {

// The peer's RTO before any backoff: RTT-derived, or the fixed one.
nanos Engine::base_rto(const Peer &p) const {
    return cfg_.rto_mode == RTTCC_RTO_RTT ? p.response.rto() : usec(cfg_.retrans_timeout_us);
}

// The peer's RTO (base_rto) doubled per timeout
// (shift clamped so it cannot overflow), capped at max_rto, then
// lengthened by up to rto_jitter_pct of itself.  The draw is a hash of who
// sends to whom, when the segment was first sent and how often it timed
// out (not its sequence number: that starts at random): the same for every call
// about one timeout, different between the senders of an incast, whose
// first flights were lost at once and whose timeouts would otherwise
// collide again at every doubling (1000 senders into one host: 3.3 s
// without it, 0.1 s with 50%, in rttcc_sim).
nanos Engine::rto(const TxSegment &seg) const {
    const nanos r = backed_off_rto(base_rto(*seg.peer), seg.backoff, usec(cfg_.max_rto_us));
    if (cfg_.rto_jitter_pct == 0) return r;
    const uint64_t draw =
        splitmix64(splitmix64(seg.first_tx ^ uint64_t{seg.backoff} << 56) ^ uint64_t{cfg_.self} << 32 ^ seg.peer->id) &
        1023;
    return r + r / 100 * cfg_.rto_jitter_pct * draw / 1024;
}

// Timeouts as TCP (RFC 6298 5.3, RFC 6582): the timer restarts whenever an
// ACK moves the window, so a burst deeper than RTO x bottleneck rate drains
// in order instead of timing out behind its own queue; and a timeout resends
// only the oldest segment: the holes after it follow one per partial ACK
// (process_ack), the segments that did arrive are never sent twice.  (Every
// segment of a 128-segment burst into a 100 Mbit/s link timed out before.)
//
// Probe and reorder timers are engine_rack.cc's.
void Engine::expire_timers(nanos now) {
    hotel_.expire(now, [&](TxSegment &seg) {
        Peer &p = *seg.peer;
        switch (seg.timer) {
            case Timer::kProbe:
                probe_due(seg, now);
                return;
            case Timer::kReorder:
                queue_resend(seg, Resend::kReorder);
                return;
            case Timer::kRto:
                break;
        }
        const nanos restart = p.last_advance + rto(seg);
        if (restart > now)
            hotel_.check_in(seg, restart);  // ACKs still move the window
        else if (seg.seq != p.tx.una())
            hotel_.check_in(seg, now + rto(seg));  // waits for its turn as the oldest
        else
            queue_resend(seg, Resend::kTimeout);
    });
}

// A partial ACK while recovering from a timeout: the new oldest segment was
// sent before the timeout and is presumed lost too (unless SACKs had it
// resent since).
void Engine::resend_partial(Peer &p) {
    if (!seq_lt(p.tx.una(), p.recover)) {
        p.recovering = false;
        return;
    }
    TxSegment *seg = p.tx.at(p.tx.una());
    if (!seg || !seg->in_hotel || seg->last_tx >= p.recovery_start) return;
    queue_resend(*seg, Resend::kTimeout);
}

// Resends come before new data: they hold back the cumulative ACK.
void Engine::serve_resends(nanos now) {
    now = tx_time(now);  // the time of their transmissions
    const nanos give_up = msec(cfg_.peer_timeout_ms);
    while (!wire_full_) {
        TxSegment *seg = resends_.front();
        if (!seg) break;
        Peer &p = *seg->peer;
        // Dead: the oldest segment unACKed for peer_timeout despite resends,
        // and nothing in that time that shows the peer gets our datagrams of
        // its channel: no ACK moved the window, no SACK marked a later one
        // (a flood into a short queue can lose one segment many times
        // running), no BUSY said its application is away.  Other traffic
        // from it does not count: a path that carries only the command
        // channel, or only small datagrams, is as good as dead.
        const nanos proof = std::max({seg->first_tx, p.last_advance, p.busy_heard,
                                      p.last_sacked[seg->channel()]});
        if (seg->resend == Resend::kTimeout && seg->retries >= 2 && now - proof >= give_up) {
            declare_dead(p, why_unanswered(p, now, *seg));
            continue;
        }
        resends_.remove(*seg);
        const Resend why = seg->resend;
        seg->resend = Resend::kNone;
        if (why != Resend::kRefused) {  // a refused one never left: not a retransmission
            seg->prev_tx = seg->last_tx;
            if (seg->retries < UINT16_MAX) ++seg->retries;  // saturates: a wrap would read as a first send
            count(p, &rttcc_stats_t::retx);
        }
        switch (why) {
            case Resend::kNone:
            case Resend::kRefused:
            case Resend::kResumed:
                break;
            case Resend::kProbe:
                count(p, &rttcc_stats_t::retx_probe);  // not known lost: no backoff, no cut
                break;
            case Resend::kFast:
            case Resend::kReorder:
                count(p, why == Resend::kFast ? &rttcc_stats_t::retx_fast : &rttcc_stats_t::retx_rack);
                // Congestion control cuts once per round trip; not while the
                // peer says it is away: its agent turned the data away (and
                // took the silent puts after it, hence the SACKs).
                if (!peer_away(p)) on_loss(p, /*timeout=*/false, now);
                break;
            case Resend::kTimeout:
                ++seg->backoff;
                count(p, &rttcc_stats_t::retx_timeout);
                if (seg->seq == p.tx.una()) {
                    // Once per RTO, not per segment; and not at all while the
                    // peer says it is away: that timeout is not congestion.
                    if (!p.recovering && !peer_away(p)) on_loss(p, /*timeout=*/true, now);
                    p.recovering = true;
                    p.recover = p.tx.next();
                    p.recovery_start = now;
                }
                break;
        }
        transmit(*seg, now);
    }
}

// Why the peer is taken for dead when `oldest` went unACKed for
// peer_timeout: how long, and what was heard from it meanwhile.
std::string Engine::why_unanswered(const Peer &p, nanos now, const TxSegment &oldest) const {
    char why[320];
    int n = std::snprintf(why, sizeof why, "no acknowledgement for %.1f s despite %u retransmissions of the oldest segment, ",
                          seconds(now - oldest.first_tx), unsigned{oldest.retries});
    const nanos give_up = msec(cfg_.peer_timeout_ms);
    if (!p.last_heard)
        std::snprintf(why + n, sizeof why - n, "and nothing ever heard from it");
    else if (now - p.last_heard >= give_up / 2)
        std::snprintf(why + n, sizeof why - n, "and nothing heard from it for %.1f s", seconds(now - p.last_heard));
    else
        std::snprintf(why + n, sizeof why - n,
                      "though it still sends (last heard %.1f s ago): our %s datagrams of up to %u bytes do "
                      "not reach it (a firewall, or a path MTU below that size?)",
                      seconds(now - p.last_heard), oldest.cmd_channel ? "command-channel" : "data-channel",
                      unsigned(kHeaderSize + (oldest.cmd_channel ? cmd_payload_ : p.seg_payload)));
    return why;
}

// Datagrams that could not reach a peer (Wire::failures).  A closed port
// (ICMP port unreachable) means the process that owned it is gone; a send
// the wire refuses for good (EMSGSIZE, ENETUNREACH, EPERM, a libfabric
// provider's error, ...) will be refused again.  Three of them with nothing in between that shows the
// peer gets our datagrams (heard from it for a closed port, an ACK that
// moved the window for a refused send), while we owe it data, make it dead
// at once instead of after peer_timeout, with the reason.  Closed ports
// are no error while draining at finalize: a peer that finished first has
// closed its sockets.
void Engine::take_failures(nanos now) {
    WireFailure failed[16];
    const int n = wire_->failures(failed, 16);
    for (int i = 0; i < n; ++i)
        for (auto &slot : peers_) {
            Peer *p = slot.get();
            if (p && !p->dead && (p->addr[kCmd] == failed[i].dest || p->addr[kData] == failed[i].dest))
                take_failure(*p, failed[i], now);
        }
}

void Engine::take_failure(Peer &p, const WireFailure &failure, nanos now) {
    const int error = failure.error;
    const bool closed = error == ECONNREFUSED;
    count(p, closed ? &rttcc_stats_t::port_unreachable : &rttcc_stats_t::send_errors);
    const nanos proof = closed ? p.last_heard : p.last_advance;
    if (!p.failures || proof > p.first_failure || error != p.failure_errno) {
        p.failures = 0;
        p.first_failure = now;
        p.failure_errno = error;
    }
    ++p.failures;
    if (p.failures < 3 || (closed && draining_) || !(p.tx.in_flight() || p.has_pending())) return;
    char why[300];
    if (closed)
        std::snprintf(why, sizeof why,
                      "its port is closed: the kernel answered %u of our datagrams with ICMP port unreachable "
                      "within %.3f s, the process is gone",
                      p.failures, seconds(now - p.first_failure));
    else
        std::snprintf(why, sizeof why, "%s refused %u of our datagrams to it within %.3f s: %s%s", wire_->refuser(),
                      p.failures, seconds(now - p.first_failure), wire_->error_text(error).c_str(),
                      error == EMSGSIZE ? (failure.channel == kCmd ? " (larger than the path takes: lower rttcc_cmd_mtu)"
                                                                   : " (larger than the path takes: lower rttcc_data_mtu)")
                      : error == EPERM  ? " (a firewall rule on this host?)"
                                        : "");
    declare_dead(p, why);
}

// Fails everything sent to the peer and reports it lost.
void Engine::declare_dead(Peer &p, std::string why) {
    p.dead = true;
    dead_.push_back({p.id, why});
    flush_all();  // what is staged for p points into its segments' memory, freed below
    p.tx.clear([&](TxSegment *seg) { release_segment(*seg, RTTCC_ERR_UNREACH); });
    for (auto &queue : p.pending)
        while (TxMessage *m = queue.pop_front()) finish_message(p, *m, RTTCC_ERR_UNREACH);
    complete_flushes(p, RTTCC_ERR_UNREACH);
    if (p.sends_link.linked()) sends_.remove(p);
    if (p.batch) p.batch->clear();
    if (p.ack_link.linked()) acks_.remove(p);
    if (p.ack_soon_link.linked()) acks_soon_.remove(p);
    p.ack_owed = false;
    p.ack_in_burst = false;
    p.reassembly.clear(reassembly_buffers_);
    p.puts.clear();
    forget_requests(p);
}

}  // namespace rttcc
