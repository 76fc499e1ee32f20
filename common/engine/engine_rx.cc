// Receiving: validation, the sequence check, delivery and reassembly.
#include <algorithm>
#include <cstring>
#include <mutex>

#include "engine/engine.h"
#include "util/copy_bytes.h"

namespace rttcc {

namespace {
Reassembly::Chunk chunk_of(const PacketHeader &h, const uint8_t *payload) {
    return {h.seq, h.msg_id, h.msg_len, h.tag, h.chunk_offset, h.payload_len, payload};
}
}  // namespace

// One burst from a channel; returns how many messages it delivered, sets
// *got to the datagrams it read and adds their bytes to *read.  The clock
// is read once the burst is in: that is the arrival time of its datagrams
// on the engine's own clock.  The burst is handled in one hold of
// state_mu_, let go only around callbacks: a lock per datagram was 3.6% of
// both ranks' CPU in a 4 MiB stream across testbed hosts.
int Engine::receive(Channel ch, int *got, size_t *read) {
    const int n = wire_->rx_burst(ch, rx_.data(), static_cast<int>(rx_.size()));
    *got = n;
    if (n <= 0) return 0;
    const nanos now = clock_.now();
    int delivered = 0;
    std::unique_lock<MaybeMutex> lock(state_mu_);
    for (int i = 0; i < n; ++i) {
        if (!lock.owns_lock()) lock.lock();
        *read += rx_[i].len;
        delivered += handle_datagram(ch, rx_[i], now, lock);
    }
    if (!lock.owns_lock()) lock.lock();
    send_burst_acks();
    return delivered;
}

// The validated header and known sender of a datagram, or nullptr (counted
// as a drop).  Its MAC is checked first, with our own key: a datagram no
// process of the job signed touches nothing, and cannot make us look up a
// sender we do not know (a runtime lookup on the progress path).  One
// that is signed asks once per sender, found or not.
Peer *Engine::sender_of(Channel ch, const RxDatagram &d, const PacketHeader **h) {
    switch (check_header(d.buf, d.len, cfg_.job_key, h)) {
        case Verdict::kOk:
            break;
        case Verdict::kMalformed:
            drop(&rttcc_stats_t::drop_malformed);
            return nullptr;
        case Verdict::kForeign:
            drop(&rttcc_stats_t::drop_foreign);
            return nullptr;
    }
    if (!mac_ok(cfg_.auth, key_, d.buf)) {
        drop(&rttcc_stats_t::drop_auth);
        return nullptr;
    }
    const uint32_t src = (*h)->src;
    Peer *p = src < peers_.size() ? peers_[src].get() : nullptr;
    if (!p && src != cfg_.self && src < kMaxPeers) {  // of this job, not added yet: ask once
        if (src >= asked_.size()) asked_.resize(src + 1);
        if (!asked_[src]) {
            asked_[src] = true;
            unknown_.push_back(src);
        }
    }
    if (!p || p->dead || (verify_source_ && p->addr[ch] != d.src)) {
        drop(&rttcc_stats_t::drop_unknown_peer);
        return nullptr;
    }
    return p;
}

// Returns 1 if it delivered a message.  Called with `lock` held; it is let
// go to call a client back, and then left so.
bool Engine::handle_datagram(Channel ch, const RxDatagram &d, nanos now, std::unique_lock<MaybeMutex> &lock) {
    const PacketHeader *h;
    Peer *p = sender_of(ch, d, &h);
    if (!p) return false;
    p->last_heard = now;
    p->keepalives = 0;
    const Arrival a{now, d.rx_stamp, d.rx_source};
    note_one_way(*p, *h, a);
    switch (static_cast<PacketType>(h->type)) {
        case PacketType::PROBE:
            answer_probe(*p, *h, a);
            flush_all();
            return false;
        case PacketType::PROBE_REPLY:
            take_probe_reply(*p, *h, a);
            return false;
        case PacketType::BUSY:
            take_busy(*p, *h, d.buf + kHeaderSize, a);
            flush_all();
            return false;
        default:
            break;
    }
    if (h->flags & kFlagAckValid) process_ack(*p, *h, d.buf + kHeaderSize, a);
    if (h->type == static_cast<uint8_t>(PacketType::ACK) && (h->flags & kFlagAckNow)) {
        take_ack_request(*p, *h, now);
        flush_all();
        return false;
    }
    bool fresh = false;
    if (h->type != static_cast<uint8_t>(PacketType::ACK)) {
        if (quiet_ && !lands_silently(*p, *h) && !room_to_land(*h))
            keep_or_turn_away(*p, *h, d, a);  // the liveness agent delivers no message
        else
            fresh = accept_segment(*p, *h, a);
    }
    flush_all();  // nothing staged may outlive the lock (an ACK could free its segment)
    return fresh && deliver_segment(*p, *h, d.buf + kHeaderSize, lock);
}

// Delivers an accepted data segment: a put lands, a request is served, a
// message (or the chunk that makes one whole) goes to its client.  Returns
// 1 if it delivered a message; `lock` as handle_datagram's.
bool Engine::deliver_segment(Peer &p, const PacketHeader &h, const uint8_t *payload,
                             std::unique_lock<MaybeMutex> &lock) {
    const uint32_t peer = p.id;
    if (h.type == static_cast<uint8_t>(PacketType::PUT)) return land_put(p, h, payload, lock);
    const bool request = h.tag == RTTCC_TAG_RMA;  // served here, under the lock, calling nobody
    if (h.type == static_cast<uint8_t>(PacketType::DATA)) {
        count(p, &rttcc_stats_t::msgs_rx);
        if ((h.flags & kFlagOrdered) && (!seq_lt(h.seq, p.rx.next()) || holds_from(p.id))) {
            if (h.payload_len > cmd_payload_) {  // what a hold may keep: send_ordered's largest
                broke_protocol(p, "it sent an ordered message of " + std::to_string(h.payload_len) +
                                      " bytes, more than " + std::to_string(cmd_payload_) +
                                      ": it does not follow the rttcc protocol");
                return false;
            }
            hold(p, h, payload);
            return false;
        }
        if (request) {
            take_request(p, payload, h.payload_len);
            return false;
        }
        lock.unlock();
        const rttcc_callbacks_t &cb = clients_.of(h.tag);
        if (cb.on_recv) cb.on_recv(cb.user, peer, h.tag, payload, h.payload_len);
        return true;
    }
    uint32_t abandoned;
    bool no_memory;
    Reassembly::Message *m =
        p.reassembly.add(reassembly_buffers_, chunk_of(h, payload), p.rx.next(), &abandoned, &no_memory);
    count(p, &rttcc_stats_t::reassembly_abandoned, abandoned);
    if (no_memory) {  // the chunk is acknowledged and lost: its message can never be delivered
        declare_dead(p, "this process is out of memory to reassemble a message of " + std::to_string(h.msg_len) +
                            " bytes from it");
        return false;
    }
    if (!m) return false;
    count(p, &rttcc_stats_t::msgs_rx);
    // Ours from here: a peer declared dead meanwhile (by the request it
    // carries, by the client it is for, or by another thread) frees its
    // partial messages, not this one.
    const Reassembly::Whole w = p.reassembly.take(m);
    if (request) {
        take_request(p, w.buf, w.len);
        reassembly_buffers_.put(w.buf, w.len);
        return false;
    }
    lock.unlock();
    const rttcc_callbacks_t &cb = clients_.of(w.tag);
    if (cb.on_recv) cb.on_recv(cb.user, peer, w.tag, w.buf, w.len);
    lock.lock();
    reassembly_buffers_.put(w.buf, w.len);
    return true;
}

// Writes a new put chunk in place; when its put is whole, tells the caller
// (with the lock released).  Returns 1 if it completed a put.
bool Engine::land_put(Peer &p, const PacketHeader &h, const uint8_t *payload, std::unique_lock<MaybeMutex> &lock) {
    const uint64_t first = put_offset(h.put_addr);
    const GrantTable::Place place = grants_.place_put(p.id, put_key(h.put_addr), first + h.chunk_offset, h.payload_len);
    uint8_t *to = place.at;
    PutArrivals::Put done;
    const auto step = to ? p.puts.add(h.msg_id, h.msg_len, h.put_addr, h.tag, h.chunk_offset, h.payload_len, &done)
                         : PutArrivals::Step::kBad;
    if (step == PutArrivals::Step::kBad) {
        drop(&rttcc_stats_t::drop_bad_put);
        return false;
    }
    copy_bytes(to, payload, h.payload_len);
    if (step != PutArrivals::Step::kComplete) return false;
    count(p, &rttcc_stats_t::msgs_rx);
    if (!place.grant->notify) return true;  // an exposure: nobody to tell
    const uint32_t peer = p.id;
    if (quiet_) {  // the owner hears of it on its application's next pass (room_to_land made room)
        landed_.push_back({peer, put_key(done.addr), first, done.len, done.tag});
        return false;
    }
    lock.unlock();
    const rttcc_callbacks_t &cb = clients_.of(done.tag);
    if (cb.on_put) cb.on_put(cb.user, peer, put_key(done.addr), first, done.len, done.tag);
    return true;
}

// An ordered message came before a segment sent ahead of it: it waits
// until everything before it has arrived (and so has landed, or been
// served: puts land and requests are served on arrival).  The window
// bounds how many one peer can have held, and cmd_payload_ their size.
void Engine::hold(Peer &p, const PacketHeader &h, const uint8_t *payload) {
    try {
        held_.push_back({p.id, h.seq, h.tag, std::vector<uint8_t>(payload, payload + h.payload_len)});
    } catch (const std::bad_alloc &) {  // it was acknowledged: it cannot be dropped
        declare_dead(p, "this process is out of memory to hold an ordered message");
        return;
    }
    count(p, &rttcc_stats_t::ordered_held);
}

// Is a message of peer `id` held?  Then a later one waits behind it, even
// if everything before that one is in: ordered messages keep their order.
bool Engine::holds_from(uint32_t id) const {
    return std::any_of(held_.begin(), held_.end(), [&](const HeldMessage &m) { return m.peer == id; });
}

// Delivers the held ordered messages whose turn has come, each peer's in
// sequence order; those of dead peers go.  A held RMA request is served
// (under the lock, calling nobody: also on the liveness agent's quiet
// passes, so a held unlock releases its lock while the target computes);
// a client's message waits for the application's next pass on a quiet one,
// and a request held after it may then go first (requests and client
// messages only keep their order among themselves: what an ordered message
// promises, that everything sent before it arrived, still holds).  Only
// the receive turn's holder touches held_.
int Engine::deliver_held() {
    int delivered = 0;
    std::unique_lock<MaybeMutex> lock(state_mu_);
    for (;;) {
        size_t next = held_.size();  // the due one of least sequence number of its peer
        for (size_t i = 0; i < held_.size(); ++i) {
            const Peer &p = *peers_[held_[i].peer];
            if (p.dead || !seq_lt(held_[i].seq, p.rx.next())) continue;
            if (quiet_ && held_[i].tag != RTTCC_TAG_RMA) continue;
            if (next == held_.size() || (held_[i].peer == held_[next].peer && seq_lt(held_[i].seq, held_[next].seq)))
                next = i;
        }
        if (next == held_.size()) break;
        HeldMessage m = std::move(held_[next]);
        held_.erase(held_.begin() + static_cast<std::ptrdiff_t>(next));
        if (m.tag == RTTCC_TAG_RMA) {
            take_request(*peers_[m.peer], m.bytes.data(), m.bytes.size());
            continue;
        }
        lock.unlock();
        const rttcc_callbacks_t &cb = clients_.of(m.tag);
        if (cb.on_recv) cb.on_recv(cb.user, m.peer, m.tag, m.bytes.data(), m.bytes.size());
        ++delivered;
        lock.lock();
    }
    held_.erase(std::remove_if(held_.begin(), held_.end(), [&](const HeldMessage &m) { return peers_[m.peer]->dead; }),
                held_.end());
    return delivered;
}

// A new segment is accepted, and so acknowledged, only if it can be
// delivered: a client listens to its tag (the engine to RTTCC_TAG_RMA's,
// RMA requests), a chunk fits its message
// (reassembly.h: agrees with its other chunks, overlaps none, and opening
// one, a buffer is free under reassembly_max_mb), a put lands inside a
// grant its sender holds.  Otherwise the
// sender never hears it arrived: it resends, and in the end reports the
// peer lost instead of a send that succeeded while its bytes were dropped.
bool Engine::deliverable(const Peer &p, const PacketHeader &h) const {
    const rttcc_callbacks_t &cb = clients_.of(h.tag);
    const bool heard = cb.on_recv != nullptr || h.tag == RTTCC_TAG_RMA;
    switch (static_cast<PacketType>(h.type)) {
        case PacketType::DATA:
            return heard;
        case PacketType::CHUNK:
            return heard &&
                   p.reassembly.fit(reassembly_buffers_, chunk_of(h, nullptr), p.rx.next()) == Reassembly::Fit::kYes;
        case PacketType::PUT: {
            const GrantTable::Place place =
                grants_.place_put(p.id, put_key(h.put_addr), put_offset(h.put_addr) + h.chunk_offset, h.payload_len);
            return place.at && (cb.on_put != nullptr || !place.grant->notify) &&
                   p.puts.fits(h.msg_id, h.msg_len, h.put_addr, h.tag, h.chunk_offset, h.payload_len);
        }
        default:
            return false;
    }
}

// Records a data segment's arrival; true if it is new and must be delivered.
bool Engine::accept_segment(Peer &p, const PacketHeader &h, const Arrival &a) {
    if (p.rx.classify(h.seq) == RecvWindow::Arrival::kNew && !deliverable(p, h)) {
        drop(&rttcc_stats_t::drop_undeliverable);
        if (h.type == static_cast<uint8_t>(PacketType::PUT)) {
            ++stats_.drop_bad_put;
            if (p.puts.beyond_cap(h.msg_id))
                broke_protocol(p, "it began a put while " + std::to_string(cfg_.window) +
                                      " of its puts were partly landed here, more than its window lets it "
                                      "send: it does not follow the rttcc protocol");
        }
        if (h.type == static_cast<uint8_t>(PacketType::CHUNK) &&
            p.reassembly.fit(reassembly_buffers_, chunk_of(h, nullptr), p.rx.next()) == Reassembly::Fit::kOverlap) {
            count(p, &rttcc_stats_t::dup_chunks);
        }
        return false;
    }
    const bool gap_before = p.rx.has_gap();
    const bool in_order = h.seq == p.rx.next();
    switch (p.rx.arrive(h.seq)) {
        case RecvWindow::Arrival::kBeyond:
            drop(&rttcc_stats_t::drop_beyond_window);
            return false;
        case RecvWindow::Arrival::kDuplicate:
            count(p, &rttcc_stats_t::dup_segs);
            owe_ack(p, h, a, AckWhen::kThisBurst, /*duplicate=*/true);  // our earlier ACK was probably lost
            return false;
        case RecvWindow::Arrival::kNew:
            break;
    }
    count(p, &rttcc_stats_t::segs_rx);
    if (!in_order) count(p, &rttcc_stats_t::segs_ooo);
    count(p, &rttcc_stats_t::bytes_rx, h.payload_len);
    // A gap opening or closing is news for the sender's fast retransmit: ACK
    // by the end of this burst (with the SACK while the gap lasts).  So is a segment the
    // sender is waiting on (kFlagAckNow), unless we have data queued for it
    // or it is part of an RMA request (served in this pass once whole: its
    // reply, if it has one, is queued for it): then data sent in this
    // progress pass carries the ACK (two peers sending to each other), or it
    // goes alone at the pass's end.
    const bool asked = p.ack_asked && seq_lt(p.ack_asked_seq, p.rx.next());  // a flush waits for this much
    if (asked) p.ack_asked = false;
    const bool waits = (h.flags & kFlagAckNow) || asked;
    const bool request = h.tag == RTTCC_TAG_RMA;  // no client sends or puts on it
    const AckWhen when = gap_before || p.rx.has_gap() || asked || (waits && !p.has_pending() && !request) ? AckWhen::kThisBurst
                         : waits ? AckWhen::kThisPass
                                 : AckWhen::kDelayed;
    owe_ack(p, h, a, when);
    return true;
}

}  // namespace rttcc
