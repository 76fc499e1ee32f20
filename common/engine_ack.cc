// ACKs: owing, piggy-backing, standalone (delayed or at once), processing,
// and fast retransmit on duplicate ACKs.
#include <algorithm>
#include <cstdint>

#include "engine.h"

namespace rttcc {

void Engine::owe_ack(Peer &p, const PacketHeader &h, nanos now, bool at_once) {
    p.echo_tx_id = h.tx_id;
    p.echo_seq = h.seq;
    p.echo_arrival = now;
    ++p.unacked_arrivals;
    if (!p.ack_owed) {
        p.ack_owed = true;
        p.ack_owed_since = now;
        acks_.push_back(p);
    }
    if (at_once || p.unacked_arrivals >= cfg_.ack_every) send_ack(p, now);
}

// Writes our cumulative ACK for p into an outgoing header; settles any ACK owed.
void Engine::put_ack(Peer &p, PacketHeader &h, nanos now) {
    h.flags |= kFlagAckValid;
    h.ack = p.rx.next();
    h.echo_tx_id = p.echo_tx_id;
    h.ack_delay_ns = static_cast<uint32_t>(std::min<nanos>(now - p.echo_arrival, UINT32_MAX));
    if (!p.ack_owed) return;
    p.ack_owed = false;
    p.unacked_arrivals = 0;
    if (p.ack_link.linked()) acks_.remove(p);
    if (h.type != static_cast<uint8_t>(PacketType::ACK)) {
        ++p.stats.acks_piggy;
        ++stats_.acks_piggy;
    }
}

void Engine::send_ack(Peer &p, nanos now) {
    PacketHeader &h = stage(kCmd, p, nullptr);
    h.type = static_cast<uint8_t>(PacketType::ACK);
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

// An RTT sample from the transmission the ACK echoes: its age minus how long
// the receiver held the ACK.  Taken before the ACK releases that segment.
void Engine::sample_rtt(Peer &p, const PacketHeader &h, nanos now) {
    const uint32_t echo = h.echo_tx_id;
    if (echo == 0 || echo == p.last_echo) return;  // nothing echoed, or sampled already
    const seq_t una = p.tx.una();
    const seq_t seq = una + ((echo >> 16) - (una & 0xffffu)) % 0x10000u;
    const TxSegment *seg = p.tx.at(seq);
    if (!seg || seg->tx_id != echo) return;  // long ACKed, or an older transmission of it
    const nanos age = now - seg->last_tx;
    p.rtt.on_sample(age > h.ack_delay_ns ? age - h.ack_delay_ns : age);
    p.last_echo = echo;
}

void Engine::process_ack(Peer &p, const PacketHeader &h, nanos now) {
    sample_rtt(p, h, now);
    const uint32_t acked = p.tx.ack(h.ack, [&](TxSegment *seg) { release_segment(*seg, RTTCC_OK); });
    if (acked) {
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
    transmit(*seg, now);
}

}  // namespace rttcc
