// Sending: cutting messages into segments, transmission, batching.
#include <algorithm>
#include <cstring>

#include "engine/engine.h"
#include "util/copy_bytes.h"
#include "util/iovec_range.h"

namespace rttcc {

// Queues a message (a stack template: `proto`) to a peer and sends what
// may go now, unless it waits for company (waits_for_company).  Where
// worth_copying says so and memory is left for it, the bytes are copied
// into engine memory and the send completes at once (RTTCC_DONE); else
// they are sent zero-copy from proto's iov.
// Calls nobody back: news waits for the next pass (engine.h).
int Engine::submit(uint32_t index, TxMessage &proto, bool only_if_open, const MessageBytes &bytes) {
    const nanos now = clock_.now();
    std::lock_guard<MaybeMutex> g(state_mu_);
    Peer *p = live_peer(index);
    if (!p) return RTTCC_ERR_UNREACH;
    if (only_if_open) {
        List<TxMessage, &TxMessage::link> &queue = p->pending[channel_for(proto)];
        // Messages that wait for company go first, in the same send call.
        // Out of memory for them, this one is BUSY (the queue stays), and
        // no window stall is counted: the window had room.
        bool had_memory = true;
        if (!queue.empty() && has_room(*p, *queue.front()))
            had_memory = pump_or_defer(*p, now, segments_within(*p, kPassBytes));
        if (!queue.empty() || !has_room(*p, proto)) {
            flush_all();  // what the pump staged
            if (had_memory) count(*p, &rttcc_stats_t::window_stalls);
            return RTTCC_ERR_BUSY;
        }
    }
    const bool copy = (bytes.iov || bytes.fill) && worth_copying(*p, proto);
    // All or nothing: a send the caller hears refused (an exception: no
    // memory) must leave nothing behind (mtl_rttcc then owes a SKIP for it),
    // and one queued is sent, sooner or later.
    TxMessage &m = new_message(*p, proto);
    bool copied = false;
    try {
        copied = copy && copy_message(*p, m, bytes);
    } catch (...) {  // the copy pool's memory: nothing was queued
        List<TxMessage, &TxMessage::outstanding_link>::remove(m);
        messages_.put(&m);
        throw;
    }
    if (m.copy && copied) count(*p, &rttcc_stats_t::puts_copied);
    m.copy = m.copy && copied;  // refused (no memory, too long): a zero-copy put as any other
    enqueue(*p, m);
    if (!copied && waits_for_company(*p, m)) return RTTCC_OK;
    send_queued(*p, now);
    return copied ? RTTCC_DONE : RTTCC_OK;
}

// Sends what is queued to p now, as far as it goes.  A message queued is
// taken: out of memory here, a later pass sends it (its caller must not
// hear a refusal).  What was cut before goes now (flush cannot throw:
// Wire::tx_burst is noexcept).
void Engine::send_queued(Peer &p, nanos now) {
    (void)pump_or_defer(p, now, segments_within(p, kPassBytes));
    flush_all();
}

// Pumps up to `segments` of p's (staging, not flushing), adding the payload
// bytes cut to *cut.  Out of memory for a segment (cut_segment takes it
// before anything changes), p stays in the sends queue for a later pass,
// and the answer is false.
bool Engine::pump_or_defer(Peer &p, nanos now, uint32_t segments, uint64_t *cut) {
    try {
        const uint64_t bytes = pump(p, now, segments);
        if (cut) *cut += bytes;
        return true;
    } catch (const std::bad_alloc &) {
        if (!p.sends_link.linked()) sends_.push_back(p);
        return false;
    }
}

namespace {
// A put or an RMA request: its origin flushes next (MPI's remote completion).
bool one_sided(const TxMessage &m) { return m.put_addr || m.tag == RTTCC_TAG_RMA; }
}  // namespace

// A zero-copy put or RMA request (queued) behind another one to p that is
// not ACKed yet (a stream: MPI_Put after MPI_Put) waits in p's queue while
// the queue fits one send call (tx_batch datagrams, and kPassBytes: one
// pump) for the message that does not fit, a flush, a send to p that is
// not a put (send_now too) or the next pass (serve_sends; the liveness
// agent's too while the application computes).  Then they leave in one
// send call, in full GSO groups, with one ACK request where each asked
// for its own (asks_for_ack).  On veth a send call costs about as much for
// 12 datagrams as for 44 (it runs the receiver's stack): a window of 32
// puts of 16 KiB took 7.2 us a put sent one by one, 4.6 so.  The first
// one-sided message after anything else (an epoch's first put after a
// fence's message) goes at once.  True if m waits: counted (sends_waited),
// and p is in the sends queue.
bool Engine::waits_for_company(Peer &p, const TxMessage &m) {
    const TxMessage *before = p.outstanding.prev(m);
    if (!one_sided(m) || !before || !one_sided(*before)) return false;
    const uint64_t cap = std::min<uint64_t>(cfg_.tx_batch, segments_within(p, kPassBytes));
    uint64_t segments = 0;  // of the data channel's queue, m included
    for (const TxMessage *q = p.pending[kData].front(); q && segments <= cap; q = p.pending[kData].next(*q))
        segments += (q->len - q->cut + p.seg_payload - 1) / p.seg_payload;
    if (segments > cap) return false;
    count(p, &rttcc_stats_t::sends_waited);
    if (!p.sends_link.linked()) sends_.push_back(p);  // the next pass sends it, if nothing before
    return true;
}

// Copies m's bytes into engine memory (false: none is left, m goes
// zero-copy).  A copy of the caller's pieces that goes in several data
// segments is laid out as the datagrams that carry it, each segment's
// payload after room for its header, which flush fills in: a datagram, and
// a GSO group of them, then leaves as one piece instead of a header and a
// payload apiece.  At MTU 1500 the kernel's send of a 64 KiB GSO group took
// 3.5 us (40%) longer from 88 pieces than from one (loopback, sys time).
//
//   inline_buf  | header 0 | payload 0 | header 1 | payload 1 | ... | header n-1 | payload n-1 |
//               0          H           stride      stride + H        (n-1) stride   (at most P)
//   H = kHeaderSize, P = the peer's seg_payload, stride = H + P
bool Engine::copy_message(const Peer &p, TxMessage &m, const MessageBytes &bytes) {
    if (bytes.iov && lays_out(m)) m.stride = kHeaderSize + p.seg_payload;
    m.inline_buf = m.stride ? message_copies_.get(copy_size(m)) : take_copy(m.len);
    if (!m.inline_buf) {
        m.stride = 0;
        return false;
    }
    if (m.stride) {
        for (uint32_t at = 0; at < m.len; at += p.seg_payload) {
            uint8_t *to = m.inline_buf + at / p.seg_payload * m.stride + kHeaderSize;
            for_each_piece(bytes.iov, bytes.iovcnt, at, std::min(p.seg_payload, m.len - at),
                           [&to](const uint8_t *from, size_t n) {
                               copy_bytes(to, from, n);
                               to += n;
                           });
        }
        m.iovcnt = 0;  // fill_payload finds each segment's place by the stride
    } else {
        if (bytes.iov)
            gather(m.inline_buf, bytes.iov, bytes.iovcnt);
        else
            bytes.fill(bytes.ctx, m.inline_buf, m.len);
        m.iov[0] = {m.inline_buf, m.len};
        m.iovcnt = 1;
    }
    m.cookie = nullptr;  // complete now: nobody is told again
    return true;
}

// Laid out as datagrams (given the caller's pieces): a copy of a message
// for the data channel beyond inline_max (the inline pool's buffers are
// inline_max long), from message_copies_ (up to send_copy_mb).
bool Engine::lays_out(const TxMessage &m) const {
    return m.len > cfg_.inline_max && channel_for(m) == kData;
}

// Bytes of m's copy: its own, and a header's room per segment if laid out.
size_t Engine::copy_size(const TxMessage &m) const {
    if (!m.stride) return m.len;
    const size_t payload = m.stride - kHeaderSize;
    return m.len + (m.len + payload - 1) / payload * kHeaderSize;
}

// Up to inline_max, always.  Up to send_copy_max: a put whose sender asked
// for a copy (it completes without waiting for the ACK: MPI_Win_complete's
// local completion), and a message (not a put: its flush waits for the ACK
// anyway) while nothing else to its peer is outstanding: its send would
// wait for its ACK alone (a ping-pong's); in a stream, ACKs for the rest
// come anyway and copies cost the bandwidth.
bool Engine::worth_copying(const Peer &p, const TxMessage &m) const {
    if (m.len <= cfg_.inline_max) return true;
    if (m.len > cfg_.send_copy_max) return false;
    return m.copy || (!m.put_addr && p.outstanding.empty());
}

Peer *Engine::live_peer(uint32_t index) {
    Peer *p = index < peers_.size() ? peers_[index].get() : nullptr;
    return p && !p->dead ? p : nullptr;
}

// Under state_mu_, as the helpers below: a message to p, a copy of
// `proto`, numbered and outstanding (flushes wait for it); enqueue() it
// once filled in.
TxMessage &Engine::new_message(Peer &p, const TxMessage &proto, TxMessage *slot) {
    TxMessage &m = slot ? *slot : *messages_.get();
    m = proto;
    m.no = p.next_message_no++;
    p.outstanding.push_back(m);
    return m;
}

// Queues m for cutting: the next pump of p sends it (the caller's, or
// serve_sends' once p is in sends_).
void Engine::enqueue(Peer &p, TxMessage &m) {
    count(p, &rttcc_stats_t::msgs_tx);
    p.pending[channel_for(m)].push_back(m);
}

// Engine memory for a copy of `len` bytes: the inline pool's up to
// inline_max, else copy_buffers_' (nullptr if the system has none left).
uint8_t *Engine::take_copy(size_t len) {
    return len <= cfg_.inline_max ? inline_buffers_.get(len) : copy_buffers_.get(len);
}

// Returns m's copy, if it has one, to where it came from.
void Engine::release_copy(TxMessage &m) {
    if (!m.inline_buf) return;
    if (m.stride)
        message_copies_.put(m.inline_buf, copy_size(m));
    else if (m.len <= cfg_.inline_max)
        inline_buffers_.put(m.inline_buf, m.len);
    else
        copy_buffers_.put(m.inline_buf, m.len);
    m.inline_buf = nullptr;
}

// RMA requests all go on the data channel: cut in the order they are made,
// the target holds few of them (request_order.h).  So do ordered messages
// (send_ordered): behind every data message queued before them.
Channel Engine::channel_for(const TxMessage &m) const {
    return m.len <= cmd_payload_ && m.tag != RTTCC_TAG_RMA && !m.ordered ? kCmd : kData;
}

// Data-channel segments a peer may have in flight: the send credits and,
// with congestion control, the congestion window.
uint32_t Engine::data_cap(const Peer &p) const {
    return p.cc ? std::min(cfg_.send_credits, p.cc->window()) : cfg_.send_credits;
}

// The window bounds every segment; data-channel segments are further held
// to data_cap.
bool Engine::has_room(const Peer &p, const TxMessage &m) const {
    if (p.tx.full()) return false;
    return channel_for(m) == kCmd || p.data_in_flight < data_cap(p);
}

// True when this segment asks for its ACK at once (kFlagAckNow): the
// sender waits for it.  It ends a message a flush waits for (ack_now); it
// ends the last queued put or RMA request (its origin flushes next, MPI's
// remote completion: without the ask the flush sent a bare ACK request,
// one more send call); or, on the data channel, it fills the window or the
// credits, is a resend, or ends the last queued message, which completes on
// its ACK (zero-copy; a copied one completed when it was queued).  An RMA
// reply never asks: nobody waits for its ACK, and an ACK at once would cost
// the asker a send call before its get completes.  Its receiver then ACKs
// within the same progress pass (on data going back, if any): with a window
// of a few segments (congestion control on a slow or short path), a
// delayed ACK would idle the link for ack_delay_us every round trip.
//
// A data segment that brings the credits (or congestion window) in use to
// half or more asks too, unless the last one that did is not ACKed yet
// (Peer::half_ask_out, cleared by release_segment): the ACK comes back
// while the second half goes out, so a stream never idles on its cap, with
// about two ACKs per window (the receiver's own ack_every is only the
// fallback).  Each standalone ACK is a send call for the receiver and a
// receive for us: with an ACK every 64 segments a 256 KiB message at MTU
// 1500 cost both engines 183 us of CPU, with these asks (and ack_every
// 256) 141 (engine_cost, medians of 8).
bool Engine::asks_for_ack(Peer &p, TxSegment &seg) {
    const TxMessage &m = *seg.msg;
    if (m.ack_now && seg.offset + seg.len == m.len) return true;
    // Ends what is queued, and someone waits for it (not a reply, nor a
    // put copied for a caller that waits for no ACK: a flush asks itself).
    const bool ends_queue = m.all_cut && !m.reply && p.pending[seg.channel()].is_back(m);
    const bool flush_follows = one_sided(m) && !m.copy;
    if (seg.cmd_channel) return flush_follows && ends_queue;
    const uint32_t cap = data_cap(p);
    if (p.data_in_flight >= cap || p.tx.full() || seg.retries) return true;
    if (ends_queue && (flush_follows || !m.inline_buf)) return true;
    if (p.half_ask_out || 2 * p.data_in_flight < cap) return false;
    p.half_ask_out = seg.half_ask = true;
    return true;
}

// Cuts and sends the peer's queued messages, command channel first, while
// its window, its credits, the wire and `budget` (segments) allow; keeps
// the peer in the sends queue while it could go on.  Returns the payload
// bytes it sent.
uint64_t Engine::pump(Peer &p, nanos now, uint32_t budget) {
    uint64_t sent = 0;
    for (auto &queue : p.pending) {
        while (TxMessage *m = queue.front()) {
            if (!budget || wire_full_) {  // more to send: serve_sends comes back to it
                if (!p.sends_link.linked()) sends_.push_back(p);
                return sent;
            }
            if (!has_room(p, *m)) {
                count(p, &rttcc_stats_t::window_stalls);
                return sent;  // an ACK re-queues the peer
            }
            sent += cut_segment(p, *m, now);
            if (m->all_cut) queue.remove(*m);
            --budget;
        }
    }
    return sent;
}

// Round robin over peers with sends, a burst each, so no peer starves the
// others.  A burst of 32 lets one peer fill the default window (256) in one
// pass: replies queued by the target (gets) went at 128 a pass before, 15%
// slower than the same bytes put.  At most kPassBytes in all.  Out of
// memory for a segment, the peer stays queued for the next pass.
void Engine::serve_sends(nanos now) {
    constexpr uint32_t kBurst = 32;
    uint64_t left = kPassBytes;
    const size_t rounds = sends_.empty() ? 0 : peers_.size() * 4;  // bounded work per progress
    for (size_t i = 0; i < rounds && !wire_full_ && left; ++i) {
        Peer *p = sends_.pop_front();
        if (!p) break;
        uint64_t cut = 0;
        const bool had_memory = pump_or_defer(*p, now, std::min(kBurst, segments_within(*p, left)), &cut);
        left -= std::min(left, cut);
        if (!had_memory) return;
    }
}

// The data segments to p that `bytes` allows, at least one.
uint32_t Engine::segments_within(const Peer &p, uint64_t bytes) const {
    return static_cast<uint32_t>(std::clamp<uint64_t>(bytes / p.seg_payload, 1, UINT32_MAX));
}

// Returns the segment's payload bytes.  What may throw (no memory: its
// room in the send ring, its descriptor) comes before anything changes,
// so a pump that throws leaves the message as it was (send_queued).
uint32_t Engine::cut_segment(Peer &p, TxMessage &m, nanos now) {
    p.tx.make_room();
    TxSegment &seg = *segments_.get();
    now = tx_time(now);
    const Channel ch = channel_for(m);
    seg.peer = &p;
    seg.msg = &m;
    seg.cmd_channel = ch == kCmd;
    seg.offset = m.cut;
    seg.len = std::min(m.len - m.cut, ch == kCmd ? cmd_payload_ : p.seg_payload);
    m.cut += seg.len;
    m.all_cut = m.cut == m.len;
    if (seg.offset == 0 && (!m.all_cut || m.put_addr)) m.msg_id = p.next_msg_id++;
    if (!seg.cmd_channel) ++p.data_in_flight;
    ++m.in_flight;
    p.tx.push(&seg);
    seg.first_tx = now;
    count(p, &rttcc_stats_t::segs_tx);
    count(p, &rttcc_stats_t::bytes_tx, seg.len);
    transmit(seg, now);
    return seg.len;
}

// `now`: a transmission time (tx_time), which the callers take once.
void Engine::transmit(TxSegment &seg, nanos now) {
    const Channel ch = seg.channel();
    const TxMessage &m = *seg.msg;
    PacketHeader &h = stage(ch, *seg.peer, Staged::kSegment, &seg);
    const bool whole = seg.offset == 0 && seg.len == m.len && !m.put_addr;
    h.type = static_cast<uint8_t>(m.put_addr ? PacketType::PUT : whole ? PacketType::DATA : PacketType::CHUNK);
    h.tag = m.tag;
    h.seq = seg.seq;
    seg.tx_id = transmission_id(seg.seq, seg.retries);
    h.tx_id = seg.tx_id;
    h.payload_len = static_cast<uint16_t>(seg.len);
    if (!whole) {
        h.msg_id = m.msg_id;
        h.msg_len = m.len;
        h.chunk_offset = seg.offset;
        h.put_addr = m.put_addr;
    }
    seg.asked_ack = asks_for_ack(*seg.peer, seg);
    if (seg.asked_ack) h.flags |= kFlagAckNow;
    if (m.ordered) h.flags |= kFlagOrdered;
    h.tx_stamp_ns = domain_time(now);
    put_ack(*seg.peer, h, now);
    TxDatagram &d = batch_[ch].dgrams[batch_[ch].count - 1];
    fill_payload(d, m, seg.offset, seg.len);
    seg.last_tx = now;
    seg.stamp = 0;
    seg.stamp_source = TsSource::kNone;
    if (stamp_source_ != TsSource::kNone)
        stamp_transmission(*seg.peer, d, h, segment_cookie(seg.peer->id, seg.tx_id), now);
    arm_timer(seg, now);
}

// Adds a datagram to a channel's batch (flushing a full batch first) and
// returns its zeroed header.
PacketHeader &Engine::stage(Channel ch, Peer &p, Staged kind, TxSegment *seg) {
    TxBatch &b = batch_[ch];
    if (b.count == b.dgrams.size()) flush(ch);
    const size_t i = b.count++;
    PacketHeader &h = b.headers[i];
    h = PacketHeader{};
    h.magic = kMagic;
    h.job_key = cfg_.job_key;
    h.version = kVersion;
    h.src = cfg_.self;
    TxDatagram &d = b.dgrams[i];
    d.dest = p.addr[ch];
    d.iov[0] = {&h, kHeaderSize};
    d.iovcnt = 1;
    d.stamp_cookie = 0;
    b.segs[i] = seg;
    b.peers[i] = &p;
    b.kinds[i] = kind;
    return h;
}

// Points the datagram's payload iovecs at [offset, offset + len) of the
// message.  A laid-out copy's segment (copy_message): its payload at its
// place, and iov[0] at the room before it, where flush puts the header
// (join_header; until then the header is the batch's, as any other's).
void Engine::fill_payload(TxDatagram &d, const TxMessage &m, uint32_t offset, uint32_t len) const {
    if (m.stride) {
        const uint32_t payload = m.stride - static_cast<uint32_t>(kHeaderSize);
        uint8_t *room = m.inline_buf + offset / payload * m.stride;
        d.iov[0].iov_base = room;
        d.iov[d.iovcnt++] = {room + kHeaderSize, len};
        return;
    }
    for_each_piece(m.iov, m.iovcnt, offset, len, [&d](uint8_t *from, size_t n) { d.iov[d.iovcnt++] = {from, n}; });
}

// A laid-out segment's datagram: its header (signed) goes into the room
// iov[0] names, before its payload, and the datagram is one piece.
void Engine::join_header(TxDatagram &d, const PacketHeader &h) const {
    std::memcpy(d.iov[0].iov_base, &h, kHeaderSize);
    d.iov[0].iov_len += d.iov[1].iov_len;
    d.iovcnt = 1;
}

// Signs the batch, each datagram with its receiver's key (mac.h), puts
// laid-out segments' headers before their payloads (join_header), and
// hands it to the wire.  What the wire refuses (socket buffer full) is not
// lost: segments go to the front of the resend list, ACKs are owed again
// (a resume too); a refused probe counts as lost when its reply never comes.
void Engine::flush(Channel ch) {
    TxBatch &b = batch_[ch];
    if (!b.count) return;
    for (size_t i = 0; i < b.count; ++i) {
        if (cfg_.auth != RTTCC_AUTH_NONE)
            b.headers[i].mac = datagram_mac(cfg_.auth, b.peers[i]->key, b.headers[i], &b.dgrams[i].iov[1],
                                            b.dgrams[i].iovcnt - 1);
        if (b.dgrams[i].iov[0].iov_base != &b.headers[i]) join_header(b.dgrams[i], b.headers[i]);
    }
    const int sent = wire_->tx_burst(ch, b.dgrams.data(), static_cast<int>(b.count));
    for (size_t i = std::max(sent, 0); i < b.count; ++i) {
        wire_full_ = true;
        ++stats_.wire_stalls;
        Peer &p = *b.peers[i];
        switch (b.kinds[i]) {
            case Staged::kSegment: {
                TxSegment *seg = b.segs[i];
                queue_resend(*seg, Resend::kRefused);
                owe_ack_again(p);  // it carried our ACK
                break;
            }
            case Staged::kAck:
                owe_ack_again(p);
                if ((b.headers[i].flags & kFlagResume) && !p.away_link.linked())
                    turned_away_.push_back(p);  // the resume goes again (send_resumes)
                break;
            case Staged::kProbe:
                break;
        }
    }
    b.count = 0;
}

void Engine::flush_all() {
    flush(kCmd);
    flush(kData);
}

void Engine::finish_message(Peer &p, TxMessage &m, int status) {
    if (m.cookie) completions_.push_back({m.cookie, status, m.client_tag});
    release_copy(m);
    const bool oldest = p.outstanding.front() == &m;
    m.outstanding_link.unlink();
    m.exposure_link.unlink();
    messages_.put(&m);
    if (!p.flushes.empty() && (oldest || status != RTTCC_OK)) complete_flushes(p, status);
}

void Engine::complete_flushes(Peer &p, int status) {
    size_t done = 0;
    const TxMessage *oldest = p.outstanding.front();
    while (done < p.flushes.size() && (status != RTTCC_OK || !oldest || oldest->no > p.flushes[done].upto)) {
        completions_.push_back({p.flushes[done].cookie, status, p.flushes[done].tag});
        ++done;
    }
    p.flushes.erase(p.flushes.begin(), p.flushes.begin() + static_cast<std::ptrdiff_t>(done));
}

// Stops whatever would send the segment again: its timer, or its place on
// the resend list.
void Engine::unschedule(TxSegment &seg) {
    if (seg.in_hotel)
        hotel_.check_out(seg);
    else if (seg.link.linked())
        resends_.remove(seg);
    TxSegment *&tail = seg.peer->tail[seg.channel()];
    if (&seg == tail) tail = nullptr;
}

void Engine::release_segment(TxSegment &seg, int status) {
    unschedule(seg);
    if (!seg.cmd_channel && !seg.sacked) --seg.peer->data_in_flight;  // a SACK gave it back already
    if (seg.half_ask) seg.peer->half_ask_out = false;
    TxMessage &m = *seg.msg;
    --m.in_flight;
    if (m.complete()) finish_message(*seg.peer, m, status);
    segments_.put(&seg);
}

}  // namespace rttcc
