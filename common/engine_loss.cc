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

void Engine::expire_timers(nanos now) {
    hotel_.expire(now, [&](TxSegment &seg) { resends_.push_back(seg); });
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
            if (seg->seq == p.tx.una()) on_loss(p, /*timeout=*/true, now);  // once per RTO, not per segment
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
    while (TxMessage *m = p.pending.pop_front()) finish_message(*m, RTTCC_ERR_UNREACH);
    if (p.sends_link.linked()) sends_.remove(p);
    if (p.ack_link.linked()) acks_.remove(p);
    p.ack_owed = false;
    p.reassembly.clear(reassembly_buffers_);
}

}  // namespace rttcc
