// NACKs: a put or RMA request that names a key this process no longer maps
// (regions.h: stale; a dynamic window's region detached and its key
// forgotten while its origin still names the region it looked up) is not
// accepted, so nothing of it is applied and its origin still holds it, and
// the origin hears which key:
//
//   origin                                   target
//   PUT / request naming key k      ->       stale: not accepted (no ACK)
//   on_nack(k, offset, len)         <-       NACK{k, offset, len} (at most one per key and ms)
//   LOOKUP{addr}  (unordered)       ->       the region holding addr now
//   REMAP{k = base | sink}          ->       k mapped by address again (or a sink)
//   REMAP ACKed: resend what is unacknowledged at once
//   the same PUT / request          ->       accepted, applied once
//
// A refused segment keeps its sequence number, so what was sent after it
// keeps its order (requests wait for it: request_order.h) and a flush
// waits for it.  A request in chunks is refused at the chunk that would
// make it whole.  The NACK is not sequenced: one lost is sent again when
// the segment comes again.
#include <algorithm>
#include <cstring>

#include "engine/engine.h"

namespace rttcc {

namespace {
constexpr nanos kNackInterval = 1000000;  // at most one NACK per peer and key per this (1 ms)
constexpr size_t kNacksQueued = 256;      // NACKs heard and not yet told (more: the resend tells again)
}  // namespace

// A put chunk place() found nothing for: its whole put's access, if its
// key is stale.
bool Engine::stale_put(const Peer &p, const PacketHeader &h, StaleAccess *stale) const {
    const uint32_t key = put_key(h.put_addr);
    if (!grants_.stale(p.id, key, put_offset(h.put_addr) + h.chunk_offset, h.payload_len)) return false;
    *stale = {key, put_offset(h.put_addr), h.msg_len};
    return true;
}

// The first access of request `msg` through a stale key: its exposure's
// (GET, ACC, CAS), or a batch entry's.  A request that is not well formed
// names none here: serving it drops it.
bool Engine::stale_request(const Peer &p, const SplitBytes &msg, StaleAccess *stale) const {
    RmaRequest r;
    if (!msg.read(0, &r, sizeof r) || !well_formed(r, msg.len - sizeof r, cfg_.max_message)) return false;
    switch (static_cast<RmaKind>(r.kind)) {
        case RmaKind::kGet:
        case RmaKind::kAcc:
        case RmaKind::kCas:
            if (!grants_.stale(p.id, r.key, r.offset, r.len)) return false;
            *stale = {r.key, r.offset, r.len};
            return true;
        case RmaKind::kBatch:
        case RmaKind::kLockedBatch:
            for_each_entry_header(msg, sizeof r, r.offset, [&](const RmaBatchEntry &e) {
                if (grants_.stale(p.id, e.key, e.offset, e.len)) *stale = {e.key, e.offset, e.len};
                return stale->key == 0;
            });
            return stale->key != 0;
        default:
            return false;
    }
}

// A chunk of a request that would make it whole: does the request name a
// stale key?  (Read from the reassembly buffer and the chunk.)
bool Engine::stale_chunk(const Peer &p, const PacketHeader &h, const uint8_t *payload, StaleAccess *stale) const {
    const Reassembly::Message *m = p.reassembly.find(h.msg_id);
    if (m ? !m->covered.completes(h.chunk_offset, h.payload_len, h.msg_len)
          : h.chunk_offset != 0 || h.payload_len != h.msg_len)
        return false;
    return stale_request(p, SplitBytes{m ? m->buf : payload, h.msg_len, h.chunk_offset, h.payload_len, payload}, stale);
}

// Tells p which stale access we refused: a NACK on the command channel,
// with our ACK, at most one per key and kNackInterval.
void Engine::send_nack(Peer &p, const StaleAccess &s, nanos now) {
    if (p.nack_key == s.key && p.nack_sent && now - p.nack_sent < kNackInterval) return;
    p.nack_key = s.key;
    p.nack_sent = now;
    PacketHeader &h = stage(kCmd, p, Staged::kAck, nullptr);
    h.type = static_cast<uint8_t>(PacketType::NACK);
    h.tx_stamp_ns = domain_time(now);
    put_ack(p, h, now);
    h.echo_tx_id = 0;  // no RTT sample: the segment was refused, not delivered
    TxBatch &b = batch_[kCmd];
    const size_t i = b.count - 1;  // h's datagram: its payload goes where an ACK's SACK would
    const NackPayload n{s.key, 0, s.offset, s.len};
    static_assert(sizeof n <= sizeof b.sacks[i], "a NACK's payload fits a staged SACK's room");
    std::memcpy(b.sacks[i].data(), &n, sizeof n);
    h.payload_len = sizeof n;
    b.dgrams[i].iov[1] = {b.sacks[i].data(), sizeof n};
    b.dgrams[i].iovcnt = 2;
    count(p, &rttcc_stats_t::nacks_tx);
}

// p refused a segment of ours: its ACK fields as any ACK's, and its key
// for our clients (the next pass that may call back tells them).  While
// our application is away it cannot answer: the NACK shows p alive, as a
// BUSY would (its refusals are not losses either).
void Engine::take_nack(Peer &p, const PacketHeader &h, const uint8_t *payload, const Arrival &a) {
    process_ack(p, h, payload, a);
    NackPayload n;
    std::memcpy(&n, payload, sizeof n);
    if (n.key == 0 || n.key > kPutKeyMask) {
        drop(&rttcc_stats_t::drop_malformed);
        return;
    }
    count(p, &rttcc_stats_t::nacks_rx);
    if (quiet_) p.busy_heard = a.now;
    const bool told = std::any_of(nacks_.begin(), nacks_.end(), [&](const Nack &q) {
        return q.peer == p.id && q.key == n.key && q.offset == n.offset && q.len == n.len;
    });
    if (!told && nacks_.size() < kNacksQueued) nacks_.push_back({p.id, n.key, n.offset, n.len});
}

}  // namespace rttcc
