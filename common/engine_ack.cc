// ACKs: owing, piggy-backing, standalone (delayed or at once), processing,
// and fast retransmit on duplicate ACKs.
#include <algorithm>
#include <cstdint>

#include "engine.h"

namespace rttcc {

// Owes an ACK for an arrival.  The ACK echoes the latest arrival, unless a
// timed one (the sender has its kernel/NIC transmit stamp) is waiting.
void Engine::owe_ack(Peer &p, const PacketHeader &h, const Arrival &a, bool at_once) {
    const bool timed = h.flags & kFlagTimed;
    if (timed || !p.echo_timed) {
        p.echo_tx_id = h.tx_id;
        p.echo_arrival = a.best();
        p.echo_timed = timed;
    }
    p.echo_seq = h.seq;
    ++p.unacked_arrivals;
    if (!p.ack_owed) {
        p.ack_owed = true;
        p.ack_owed_since = a.now;
        acks_.push_back(p);
    }
    if (at_once || p.unacked_arrivals >= cfg_.ack_every) send_ack(p, a.now);
}

// Writes our cumulative ACK for p into an outgoing header; settles any ACK owed.
void Engine::put_ack(Peer &p, PacketHeader &h, nanos now) {
    h.flags |= kFlagAckValid;
    h.ack = p.rx.next();
    h.echo_tx_id = p.echo_tx_id;
    h.ack_delay_ns = static_cast<uint32_t>(std::min<nanos>(now - p.echo_arrival, UINT32_MAX));
    if (!p.ack_owed) return;
    p.ack_owed = false;
    p.echo_timed = false;
    p.unacked_arrivals = 0;
    if (p.ack_link.linked()) acks_.remove(p);
    if (h.type != static_cast<uint8_t>(PacketType::ACK)) {
        ++p.stats.acks_piggy;
        ++stats_.acks_piggy;
    }
}

void Engine::send_ack(Peer &p, nanos now) {
    PacketHeader &h = stage(kCmd, p, Staged::kAck, nullptr);
    h.type = static_cast<uint8_t>(PacketType::ACK);
    h.tx_stamp_ns = domain_time(now);
    h.seq = p.echo_seq;  // an ACK has no sequence number of its own: it names what triggered it
    put_ack(p, h, now);
    ++p.stats.acks_tx;
    ++stats_.acks_tx;
}

// Standalone ACKs for peers whose ACK has waited ack_delay without a ride.
void Engine::send_due_acks(nanos now) {
    const nanos delay = usec(cfg_.ack_delay_us);
    while (Peer *p = acks_.front()) {
        if (p->ack_owed_since + delay > now) break;  // FIFO: the rest are younger
        send_ack(*p, now);
    }
}

void Engine::process_ack(Peer &p, const PacketHeader &h, const Arrival &a) {
    const nanos now = a.now;
    const nanos rtt = sample_rtt(p, h, a);
    uint32_t acked_data = 0;
    const uint32_t acked = p.tx.ack(h.ack, [&](TxSegment *seg) {
        acked_data += !seg->cmd_channel;
        release_segment(*seg, RTTCC_OK);
    });
    if (acked || rtt) on_acked(p, acked_data, rtt, now);
    if (acked) {
        p.last_advance = now;
        if (p.recovering) resend_partial(p);
        p.dup_acks = 0;
        ++p.stats.acks_rx;
        ++stats_.acks_rx;
        if (!p.pending.empty() && !p.sends_link.linked()) sends_.push_back(p);
        return;
    }
    // A duplicate ACK: a standalone ACK that repeats `una`, triggered by a
    // later segment of the same channel.  Each channel is FIFO, so that later
    // segment overtook `una` only if `una` was lost; a segment of the other
    // channel overtaking it is just the two channels racing.
    if (h.type != static_cast<uint8_t>(PacketType::ACK) || h.ack != p.tx.una()) return;
    const TxSegment *una = p.tx.at(p.tx.una());
    const TxSegment *trigger = p.tx.at(h.seq);
    if (!una || !trigger || trigger == una || trigger->cmd_channel != una->cmd_channel) return;
    ++p.dup_acks;
    ++p.stats.dup_acks;
    ++stats_.dup_acks;
    if (cfg_.fast_retrans_dupacks && p.dup_acks == cfg_.fast_retrans_dupacks) fast_retransmit(p, now);
}

void Engine::fast_retransmit(Peer &p, nanos now) {
    TxSegment *seg = p.tx.at(p.tx.una());
    if (!seg || !seg->in_hotel) return;  // already queued for a resend
    hotel_.check_out(*seg);
    ++seg->retries;
    ++p.stats.retx;
    ++stats_.retx;
    ++p.stats.retx_fast;
    ++stats_.retx_fast;
    on_loss(p, /*timeout=*/false, now);
    transmit(*seg, now);
}

}  // namespace rttcc
