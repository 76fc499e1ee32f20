// ACKs: owing, piggy-backing, standalone (delayed or at once) with selective
// ACKs, processing, and fast retransmit of the holes SACKs show.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "engine/engine.h"

namespace rttcc {

// Owes an ACK for an arrival.  The ACK echoes the latest arrival, unless a
// timed one (the sender has its kernel/NIC transmit stamp) is waiting, or
// this one is a duplicate and the ACK already names a fresh one: a copy
// named would tell the sender its resend (or probe) delivered what the
// original did.
void Engine::owe_ack(Peer &p, const PacketHeader &h, const Arrival &a, AckWhen when, bool duplicate) {
    const bool timed = h.flags & kFlagTimed;
    const bool names_fresh = duplicate && p.ack_owed;
    if (!names_fresh && (timed || !p.echo_timed)) {
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
    if (p.unacked_arrivals >= cfg_.ack_every) {
        send_ack(p, a.now);
    } else if (when == AckWhen::kThisBurst && !p.ack_in_burst) {
        p.ack_in_burst = true;
        acks_burst_.push_back(&p);
    } else if (when == AckWhen::kThisPass && !p.ack_soon_link.linked()) {
        acks_soon_.push_back(p);
    }
}

void Engine::ask_for_ack(Peer &p, nanos now) {
    if (p.tx.in_flight() == 0) return;  // nothing in flight yet: its segments will ask (asks_for_ack)
    PacketHeader &h = send_ack(p, now);
    h.flags |= kFlagAckNow;
    h.seq = p.tx.next() - 1;
    flush_all();
}

// The ACK goes now if every segment through the one named arrived, else
// when the receive window gets there (accept_segment).
void Engine::take_ack_request(Peer &p, const PacketHeader &h, nanos now) {
    if (seq_lt(h.seq, p.rx.next())) {
        send_ack(p, now);
        return;
    }
    p.ack_asked = true;
    p.ack_asked_seq = h.seq;
}

// An ACK the wire refused (alone or on a segment) is due again at once.
void Engine::owe_ack_again(Peer &p) {
    if (p.ack_owed) return;
    p.ack_owed = true;
    p.ack_owed_since = 0;
    acks_.push_front(p);
}

// Writes our cumulative ACK for p into an outgoing header; settles any ACK
// owed, but for a SACK: while there is a gap, a segment's piggy-backed ACK
// (which has no room for one) leaves the ACK owed (a reply sent from the
// callback of the arrival after a hole took the burst's ACK, and the hole
// waited for the probe).
void Engine::put_ack(Peer &p, PacketHeader &h, nanos now) {
    h.flags |= kFlagAckValid;
    h.ack = p.rx.next();
    h.echo_tx_id = p.echo_tx_id;
    h.ack_delay_ns = static_cast<uint32_t>(std::min<nanos>(now - p.echo_arrival, UINT32_MAX));
    if (!p.ack_owed || (h.type != static_cast<uint8_t>(PacketType::ACK) && p.rx.has_gap())) return;
    p.ack_owed = false;
    p.ack_in_burst = false;  // its acks_burst_ entry is skipped
    p.echo_timed = false;
    p.unacked_arrivals = 0;
    if (p.ack_link.linked()) acks_.remove(p);
    if (p.ack_soon_link.linked()) acks_soon_.remove(p);
    if (h.type != static_cast<uint8_t>(PacketType::ACK)) count(p, &rttcc_stats_t::acks_piggy);
}

PacketHeader &Engine::send_ack(Peer &p, nanos now) {
    PacketHeader &h = stage(kCmd, p, Staged::kAck, nullptr);
    h.type = static_cast<uint8_t>(PacketType::ACK);
    h.tx_stamp_ns = domain_time(now);
    h.seq = p.echo_seq;  // an ACK has no sequence number of its own: it names what triggered it
    put_ack(p, h, now);
    attach_sack(p, h);
    count(p, &rttcc_stats_t::acks_tx);
    return h;
}

// While segments after a gap have arrived, the standalone ACK names them
// (wire_format.h): the sender then resends only the holes, all in one round
// trip, instead of one hole per round trip.
void Engine::attach_sack(Peer &p, PacketHeader &h) {
    TxBatch &b = batch_[kCmd];
    const size_t i = b.count - 1;  // h's datagram: the one just staged
    const uint32_t words = p.rx.sack(b.sacks[i].data(), sack_words_);
    if (!words) return;
    h.payload_len = static_cast<uint16_t>(words * 8);
    TxDatagram &d = b.dgrams[i];
    d.iov[1] = {b.sacks[i].data(), words * 8u};
    d.iovcnt = 2;
}

// The ACKs a receive burst owes at once, one per peer however many of its
// datagrams asked: under loss every arrival after a hole asks, and one
// datagram per arrival (a system call each) held the burst's reader, and so
// the hole's own resend queued behind it, for milliseconds.  Under state_mu_.
void Engine::send_burst_acks() {
    if (acks_burst_.empty()) return;
    const nanos now = clock_.now();
    for (Peer *p : acks_burst_)
        if (p->ack_in_burst) send_ack(*p, now);  // put_ack clears it (so does a death)
    acks_burst_.clear();
    flush_all();
}

// Standalone ACKs for peers whose ACK has waited ack_delay without a ride,
// or that a waiting sender asked for and no data of this pass carried.
void Engine::send_due_acks(nanos now) {
    while (Peer *p = acks_soon_.front()) send_ack(*p, now);  // put_ack unlinks it
    const nanos delay = usec(cfg_.ack_delay_us);
    while (Peer *p = acks_.front()) {
        if (p->ack_owed_since + delay > now) break;  // FIFO: the rest are younger
        send_ack(*p, now);
    }
}

void Engine::process_ack(Peer &p, const PacketHeader &h, const uint8_t *payload, const Arrival &a) {
    const nanos now = a.now;
    const nanos rtt = sample_rtt(p, h, a);
    const bool repeats_una = h.ack == p.tx.una() && p.tx.in_flight();
    uint32_t freed = 0;  // data segments that left the network: their credits come back
    const uint32_t acked = p.tx.ack(h.ack, [&](TxSegment *seg) {
        freed += !seg->cmd_channel && !seg->sacked;
        if (!seg->sacked) rack_delivered(p, *seg, h.echo_tx_id, now);
        release_segment(*seg, RTTCC_OK);
    });
    const uint32_t sack_words = h.type == static_cast<uint8_t>(PacketType::ACK) ? h.payload_len / 8u : 0;
    const uint32_t data_before = p.data_in_flight;
    const uint32_t sacked = sack_words ? take_sack(p, h, payload, sack_words, now) : 0;
    freed += data_before - p.data_in_flight;
    if (acked || freed || rtt) on_acked(p, freed, rtt, now);
    if (acked) {
        p.last_advance = now;
        for (int ch = 0; ch < kChannels; ++ch) {  // keeps both near una, across any wrap
            if (seq_lt(p.sacked_high[ch], p.tx.una())) p.sacked_high[ch] = p.tx.una() - 1;
            if (seq_lt(p.loss_scan[ch], p.tx.una())) p.loss_scan[ch] = p.tx.una();
        }
        if (p.recovering) resend_partial(p);
        count(p, &rttcc_stats_t::acks_rx);
    } else if (repeats_una && h.type == static_cast<uint8_t>(PacketType::ACK)) {
        count(p, &rttcc_stats_t::dup_acks);
    }
    if (sack_words && cfg_.fast_retrans_dupacks) detect_losses(p);
    if (cfg_.rack && (acked || sacked)) rack_detect(p, now);  // news of either channel
    if (h.flags & kFlagResume) resend_turned_away(p);
    if ((acked || freed) && p.has_pending() && !p.sends_link.linked()) sends_.push_back(p);
}

// Marks what a SACK names as arrived: out of the hotel (no timer, never
// resent) and, for data segments, off the credits.  Returns how many
// segments it newly marked, of either channel.  Bits naming segments not
// in flight (ACKed since, or bogus) are ignored.  A new mark shows that the
// channel's datagrams reach the peer (engine_loss.cc: dead peers).
uint32_t Engine::take_sack(Peer &p, const PacketHeader &h, const uint8_t *payload, uint32_t words, nanos now) {
    const seq_t ack = h.ack;
    uint32_t marked = 0;
    for (uint32_t w = 0; w < words; ++w) {
        uint64_t bits;
        std::memcpy(&bits, payload + 8 * w, sizeof bits);
        for (; bits; bits &= bits - 1) {
            const seq_t s = ack + 1 + 64 * w + static_cast<seq_t>(__builtin_ctzll(bits));
            TxSegment *seg = p.tx.at(s);
            if (!seg || seg->sacked) continue;
            seg->sacked = true;
            p.last_sacked[seg->channel()] = now;
            unschedule(*seg);
            rack_delivered(p, *seg, h.echo_tx_id, now);
            seq_t &high = p.sacked_high[seg->channel()];
            if (seq_gt(s, high)) high = s;
            if (!seg->cmd_channel) --p.data_in_flight;
            ++marked;
        }
    }
    return marked;
}

// Fast retransmit from SACKs: a segment is lost once a segment of its own
// channel sent fast_retrans_dupacks sequence numbers or more after it has
// arrived (each channel is FIFO, so only a loss lets later ones overtake it;
// the other channel overtaking it is just the two racing).  Every hole is
// resent at once, once: a resend lost again is RACK's (engine_rack.cc), or
// waits for the timer.  The scan
// resumes where the last one stopped, so each ACK costs only what it newly
// condemns.
//
//   una                          scan          high - thresh      high
//    |  x  s  s  x  s  s  s  s  s  |  s  x  s  s  |  s  s  s  s  s  |
//    |<-- resent earlier --------->|<-- lost now ->|<-- may still come
void Engine::detect_losses(Peer &p) {
    const seq_t una = p.tx.una();
    for (int ch = 0; ch < kChannels; ++ch) {
        if (seq_lt(p.sacked_high[ch], una)) continue;  // nothing of this channel SACKed
        const seq_t last = p.sacked_high[ch] - cfg_.fast_retrans_dupacks;
        seq_t s = p.loss_scan[ch];  // >= una: process_ack keeps it there
        for (; seq_le(s, last); ++s) {
            TxSegment *seg = p.tx.at(s);
            if (!seg || seg->sacked || seg->cmd_channel != (ch == kCmd) || !seg->in_hotel) continue;
            queue_resend(*seg, Resend::kFast);  // served this pass (serve_resends)
        }
        p.loss_scan[ch] = s;
    }
}

}  // namespace rttcc
