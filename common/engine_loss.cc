// Loss: retransmission timeouts with backoff, resends, dead peers.
#include <algorithm>
#include <cstdio>

#include "engine.h"

namespace rttcc {

// The peer's RTO (RTT-derived, or the fixed one) doubled per retry (shift
// clamped so it cannot overflow), capped at max_rto.
nanos Engine::rto(const TxSegment &seg) const {
    const nanos base = cfg_.rto_mode == RTTCC_RTO_RTT ? seg.peer->response.rto() : usec(cfg_.retrans_timeout_us);
    return backed_off_rto(base, seg.retries, usec(cfg_.max_rto_us));
}

// Timeouts as TCP (RFC 6298 5.3, RFC 6582): the timer restarts whenever an
// ACK moves the window, so a burst deeper than RTO x bottleneck rate drains
// in order instead of timing out behind its own queue; and a timeout resends
// only the oldest segment: the holes after it follow one per partial ACK
// (process_ack), the segments that did arrive are never sent twice.  (Every
// segment of a 128-segment burst into a 100 Mbit/s link timed out before.)
void Engine::expire_timers(nanos now) {
    hotel_.expire(now, [&](TxSegment &seg) {
        Peer &p = *seg.peer;
        const nanos restart = p.last_advance + rto(seg);
        if (restart > now)
            hotel_.check_in(seg, restart);  // ACKs still move the window
        else if (seg.seq != p.tx.una())
            hotel_.check_in(seg, now + rto(seg));  // waits for its turn as the oldest
        else
            resends_.push_back(seg);
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
    hotel_.check_out(*seg);
    resends_.push_back(*seg);
}

// Resends come before new data: they hold back the cumulative ACK.
void Engine::serve_resends(nanos now) {
    const nanos give_up = msec(cfg_.peer_timeout_ms);
    while (!wire_full_) {
        TxSegment *seg = resends_.front();
        if (!seg) break;
        Peer &p = *seg->peer;
        // Dead: the oldest segment unACKed for peer_timeout despite resends,
        // and nothing at all heard from the peer for half that.  A peer that
        // still talks is alive behind a congested path: keep resending.
        if (!seg->refused && seg->retries >= 2 && now - seg->first_tx >= give_up &&
            now - p.last_heard >= give_up / 2) {
            declare_dead(p, now, *seg);
            continue;
        }
        resends_.remove(*seg);
        if (seg->refused) {
            seg->refused = false;
        } else {
            ++seg->retries;
            ++p.stats.retx;
            ++stats_.retx;
            ++p.stats.retx_timeout;
            ++stats_.retx_timeout;
            if (seg->seq == p.tx.una()) {
                if (!p.recovering) on_loss(p, /*timeout=*/true, now);  // once per RTO, not per segment
                p.recovering = true;
                p.recover = p.tx.next();
                p.recovery_start = now;
            }
        }
        transmit(*seg, now);
    }
}

// The peer has not ACKed `oldest` for peer_timeout: fail everything sent to it.
void Engine::declare_dead(Peer &p, nanos now, const TxSegment &oldest) {
    char why[160];
    std::snprintf(why, sizeof why,
                  "no acknowledgement for %.1f s despite %u retransmissions of the oldest segment, "
                  "nothing heard for %.1f s",
                  static_cast<double>(now - oldest.first_tx) / 1e9, unsigned{oldest.retries},
                  static_cast<double>(now - p.last_heard) / 1e9);
    p.dead = true;
    dead_.push_back({p.id, why});
    p.tx.clear([&](TxSegment *seg) { release_segment(*seg, RTTCC_ERR_UNREACH); });
    for (auto &queue : p.pending)
        while (TxMessage *m = queue.pop_front()) finish_message(*m, RTTCC_ERR_UNREACH);
    if (p.sends_link.linked()) sends_.remove(p);
    if (p.ack_link.linked()) acks_.remove(p);
    if (p.ack_soon_link.linked()) acks_soon_.remove(p);
    p.ack_owed = false;
    p.reassembly.clear(reassembly_buffers_);
}

}  // namespace rttcc
