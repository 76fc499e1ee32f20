// RMA (rttcc/rma.h): windows and their locks, the requests an origin
// makes, and the target's engine serving them.
//
//   origin                                target
//   request(): header + payload     ->    handle_datagram: an RMA-tag message,
//   on RTTCC_TAG_RMA, numbered rseq       whole (DATA, or reassembled):
//                                         take_request: in rseq order, held
//                                           until its turn (request_order.h)
//                                         serve: checks, then reads or updates
//                                           the exposure under state_mu_
//   on_put(reply_key)  <-----------------  reply: a put of an engine-owned copy
//
// All of it runs under state_mu_ and calls nobody, so the liveness agent's
// quiet passes serve requests while the application computes (passive
// target), and every update of an exposure (a peer's, or this process's
// own through apply_local) is atomic with the others.  Replies are copies,
// but a large plain get's, sent from the exposure itself until revoke
// copies it (copy_replies_from): revoking while replies fly is safe.
#include <cstring>
#include <mutex>
#include <string>

#include "engine/engine.h"
#include "util/iovec_range.h"

namespace rttcc {

uint32_t Engine::open_window() {
    std::lock_guard<MaybeMutex> g(state_mu_);
    while (next_window_ == 0 || windows_.count(next_window_)) ++next_window_;
    windows_.emplace(next_window_, LockTable{});
    return next_window_++;
}

bool Engine::close_window(uint32_t window) {
    std::lock_guard<MaybeMutex> g(state_mu_);
    return windows_.erase(window) == 1;
}

uint32_t Engine::expose(uint32_t window, uint32_t peer, void *base, size_t len) {
    std::lock_guard<MaybeMutex> g(state_mu_);
    return base && len && windows_.count(window) ? grants_.expose(window, peer, base, len) : 0;
}

uint32_t Engine::expose_window(uint32_t window, uint32_t peer) {
    std::lock_guard<MaybeMutex> g(state_mu_);
    return windows_.count(window) ? grants_.expose_window(window, peer) : 0;
}

int Engine::request(uint32_t index, RmaRequest r, const iovec *iov, int iovcnt, void *cookie) {
    if (iovcnt < 0 || iovcnt > 2 || r.reply_tag == RTTCC_TAG_RMA || batch_kind(r)) return RTTCC_ERR_ARG;
    size_t payload = 0;
    for (int i = 0; i < iovcnt; ++i) payload += iov[i].iov_len;
    if (!well_formed(r, payload, cfg_.max_message)) return RTTCC_ERR_ARG;
    const nanos now = clock_.now();
    std::lock_guard<MaybeMutex> g(state_mu_);
    Peer *p = live_peer(index);
    if (!p) return RTTCC_ERR_UNREACH;
    const int rc = close_batch(*p, false, now, /*queue_only=*/true);  // what was posted goes first, in one send call
    if (rc != RTTCC_OK) return rc;
    const int sent = send_request(*p, r, iov, iovcnt, cookie, false, now);
    if (sent != RTTCC_OK && sent != RTTCC_DONE) send_queued(*p, now);  // the batch still goes
    return sent;
}

// The target serves it once everything sent before it has arrived: puts
// landed, earlier requests served (Engine::hold).  MPI_Win_unlock's release
// so rides behind the epoch's operations, in their send call.
int Engine::request_ordered(uint32_t index, RmaRequest r, void *flush_cookie) {
    if (r.reply_tag == RTTCC_TAG_RMA || batch_kind(r) || !well_formed(r, 0, cfg_.max_message)) return RTTCC_ERR_ARG;
    const nanos now = clock_.now();
    std::lock_guard<MaybeMutex> g(state_mu_);
    Peer *p = live_peer(index);
    if (!p) return RTTCC_ERR_UNREACH;
    return queue_ordered(*p, r.reply_tag, nullptr, sizeof r, &r, flush_cookie, now);
}

// Numbers r and queues it with its payload (well formed): copied
// (RTTCC_DONE) up to inline_max and for all but accumulates, else zero-copy.
int Engine::send_request(Peer &p, RmaRequest &r, const iovec *iov, int iovcnt, void *cookie, bool ack_now,
                         nanos now, bool queue_only) {
    size_t len = sizeof r;
    for (int i = 0; i < iovcnt; ++i) len += iov[i].iov_len;
    const bool copy = len <= cfg_.inline_max || static_cast<RmaKind>(r.kind) != RmaKind::kAcc;
    // Everything that may fail (throw) before r takes its number: a number
    // taken and not sent would stall every later request at the target.
    TxMessage *slot = messages_.get();
    uint8_t *buf = nullptr;
    try {
        buf = copy ? take_copy(len) : nullptr;
    } catch (...) {
        messages_.put(slot);
        throw;
    }
    if (copy && !buf) {
        messages_.put(slot);
        return RTTCC_ERR;
    }
    r.rseq = p.next_request++;
    TxMessage proto;
    proto.tag = RTTCC_TAG_RMA;
    proto.client_tag = r.reply_tag;
    proto.len = static_cast<uint32_t>(len);
    proto.ack_now = ack_now;
    TxMessage &m = new_message(p, proto, slot);
    if (copy) {
        std::memcpy(buf, &r, sizeof r);
        gather(buf + sizeof r, iov, iovcnt);
        m.inline_buf = buf;
        m.iov[m.iovcnt++] = {buf, len};
    } else {
        static_assert(sizeof r <= TxMessage::kPrefixMax, "a request's header is the message's prefix");
        std::memcpy(m.prefix, &r, sizeof r);
        m.iov[m.iovcnt++] = {m.prefix, sizeof r};
        for (int i = 0; i < iovcnt; ++i)
            if (iov[i].iov_len) m.iov[m.iovcnt++] = iov[i];
        m.cookie = cookie;
    }
    enqueue(p, m);
    if (queue_only) return copy ? RTTCC_DONE : RTTCC_OK;
    if (!copy && waits_for_company(p, m)) return RTTCC_OK;
    send_queued(p, now);
    return copy ? RTTCC_DONE : RTTCC_OK;
}

// A batch's payload bound: kBatchBytes in all (or the largest message).
// Across hosts that is a GSO group, sent in one call when the batch closes.
size_t Engine::batch_cap() const {
    const size_t all = std::min<size_t>(kBatchBytes, cfg_.max_message);
    return all > sizeof(RmaRequest) ? all - sizeof(RmaRequest) : 0;
}

int Engine::post(uint32_t index, const RmaBatchEntry &e, const void *bytes) {
    if (!well_formed(e) || e.len > cfg_.max_message) return RTTCC_ERR_ARG;
    std::lock_guard<MaybeMutex> g(state_mu_);
    Peer *p = live_peer(index);
    if (!p) return RTTCC_ERR_UNREACH;
    const size_t cap = batch_cap();
    if (!p->batch) p->batch = std::make_unique<RmaBatch>();
    RmaBatch &b = *p->batch;
    // How large a piece is worth copying is the caller's to say (a copy is
    // done at once, a piece sent alone on its ACK); a batch takes any that fits.
    if (!RmaBatch::fits_alone(e, cap)) return RTTCC_ERR_BUSY;  // the caller sends it alone
    if (!b.fits(e, cap)) {  // the clock is read only here: a post is a copy
        if (b.held) return RTTCC_ERR_BUSY;  // a lazy lock's batch is full: the caller takes the lock first
        const int rc = close_batch(*p, false, clock_.now());
        if (rc != RTTCC_OK) return rc;
    }
    if (!b.listed) batching_.reserve(peers_.size());  // before anything changes (it may throw)
    b.add(e, bytes, cap);
    if (!b.listed) {
        b.listed = true;
        batching_.push_back(p->id);
    }
    count(*p, &rttcc_stats_t::rma_posted);
    return RTTCC_DONE;
}

// Sends p's batch, if it has one, as one request.  Out of memory for its
// copy, it stays (nothing posted is lost) and the caller hears RTTCC_ERR.
int Engine::close_batch(Peer &p, bool ack_now, nanos now, bool queue_only) {
    if (!p.batch || p.batch->empty() || p.batch->held) return RTTCC_OK;
    RmaRequest r{};
    r.kind = static_cast<uint8_t>(RmaKind::kBatch);
    return send_batch(p, r, ack_now, now, queue_only);
}

// Sends p's batch (not empty) as request r, a BATCH or a LOCKED_BATCH.
int Engine::send_batch(Peer &p, RmaRequest &r, bool ack_now, nanos now, bool queue_only) {
    RmaBatch &b = *p.batch;
    r.offset = b.entries();
    r.len = b.size();
    const iovec iov = {const_cast<uint8_t *>(b.data()), b.size()};
    const int rc = send_request(p, r, &iov, 1, nullptr, ack_now, now, queue_only);
    if (rc != RTTCC_DONE) return rc;
    count(p, &rttcc_stats_t::rma_batches);
    b.clear();
    b.held = false;
    return RTTCC_OK;
}

// A progress pass sends every batch: the posts of one burst share one.
void Engine::close_batches(nanos now) {
    size_t kept = 0;
    for (const uint32_t id : batching_) {
        Peer &p = *peers_[id];
        if (close_batch(p, false, now) == RTTCC_OK || p.dead)
            p.batch->listed = false;
        else
            batching_[kept++] = id;  // out of memory for its copy: the next pass tries again
    }
    batching_.resize(kept);
}

// A lazy lock (MPI_Win_lock that asks for nothing yet): what is posted to
// the peer stays in its batch, which no pass, flush or full batch sends
// (a post that does not fit says RTTCC_ERR_BUSY), until lock_batch sends
// it with the lock, or the hold ends (the lock was taken the usual way).
int Engine::hold_batch(uint32_t index, BatchHold hold) {
    const nanos now = clock_.now();
    std::lock_guard<MaybeMutex> g(state_mu_);
    Peer *p = live_peer(index);
    if (!p) return RTTCC_ERR_UNREACH;
    if (!p->batch) p->batch = std::make_unique<RmaBatch>();
    RmaBatch &b = *p->batch;
    switch (hold) {
        case BatchHold::kHold: {  // what other epochs posted goes first: it is not the lock's
            const int rc = close_batch(*p, false, now);
            if (rc != RTTCC_OK) return rc;
            b.held = true;
            return RTTCC_OK;
        }
        case BatchHold::kDiscard:  // the lock could not be taken: its epoch's operations fail
            b.clear();
            b.held = false;
            return RTTCC_OK;
        case BatchHold::kRelease:
            break;
    }
    b.held = false;
    if (!b.empty() && !b.listed) {  // the next pass sends it
        batching_.push_back(p->id);
        b.listed = true;
    }
    return RTTCC_OK;
}

// Sends the held batch as one LOCKED_BATCH (rma_request.h): the target
// takes the lock, applies it, lets the lock go and answers one byte into
// reply_key.  RTTCC_DONE: the batch was empty, nothing goes, no answer.
int Engine::lock_batch(uint32_t index, uint32_t window, bool exclusive, uint32_t reply_key, uint8_t tag) {
    if (tag == RTTCC_TAG_RMA || reply_key == 0 || reply_key > kPutKeyMask) return RTTCC_ERR_ARG;
    const nanos now = clock_.now();
    std::lock_guard<MaybeMutex> g(state_mu_);
    Peer *p = live_peer(index);
    if (!p) return RTTCC_ERR_UNREACH;
    if (!p->batch || p->batch->empty()) {
        if (p->batch) p->batch->held = false;
        return RTTCC_DONE;
    }
    RmaRequest r{};
    r.kind = static_cast<uint8_t>(RmaKind::kLockedBatch);
    r.op = exclusive ? 1 : 0;
    r.key = window;
    r.reply_key = reply_key;
    r.reply_tag = tag;
    return send_batch(*p, r, false, now, /*queue_only=*/false);  // out of memory for its copy: still held
}

int Engine::apply_local(int op, int type, void *dst, const void *src, size_t count, void *old) {
    std::lock_guard<MaybeMutex> g(state_mu_);
    return rma_apply(op, type, dst, src, count, old);
}

int Engine::compare_and_swap_local(int type, void *dst, const void *compare, const void *swap, void *old) {
    const size_t n = rma_type_size(type);
    uint8_t was[64];  // the old element (old may overlap compare or swap)
    if (n == 0 || n > sizeof was) return RTTCC_ERR_ARG;
    std::lock_guard<MaybeMutex> g(state_mu_);
    std::memcpy(was, dst, n);
    if (std::memcmp(was, compare, n) == 0) std::memcpy(dst, swap, n);
    std::memcpy(old, was, n);
    return RTTCC_OK;
}

int Engine::lock_local(uint32_t window, bool exclusive) {
    std::lock_guard<MaybeMutex> g(state_mu_);
    LockTable *locks = window_locks(window);
    if (!locks) return RTTCC_ERR_ARG;
    return locks->try_acquire(LockTable::kSelf, exclusive) ? RTTCC_DONE : RTTCC_ERR_BUSY;
}

int Engine::unlock_local(uint32_t window) {
    const nanos now = clock_.now();
    std::lock_guard<MaybeMutex> g(state_mu_);
    LockTable *locks = window_locks(window);
    if (!locks || !locks->release(LockTable::kSelf, &lock_grants_)) return RTTCC_ERR_ARG;
    answer_lock_grants();
    serve_sends(now);  // the waiters' replies go now
    flush_all();
    return RTTCC_OK;
}

// ---- the target's side (under state_mu_) ------------------------------

LockTable *Engine::window_locks(uint32_t window) {
    const auto it = windows_.find(window);
    return it == windows_.end() ? nullptr : &it->second;
}

// A whole request from p (the message's bytes, valid during the call):
// served when its turn comes.  Its number out of order beyond what a
// legal origin sends breaks the protocol.
void Engine::take_request(Peer &p, const uint8_t *msg, size_t len) {
    RmaRequest r;
    if (len < sizeof r) {
        broke_protocol(p, "it sent an RMA request of " + std::to_string(len) +
                              " bytes, shorter than a request's header: it does not follow the rttcc protocol");
        return;
    }
    std::memcpy(&r, msg, sizeof r);
    switch (p.requests.turn(r.rseq)) {
        case RequestOrder::Turn::kBad:
            broke_protocol(p, "it sent RMA request " + std::to_string(r.rseq) + " while " +
                                  std::to_string(p.requests.next()) + " was due and " +
                                  std::to_string(p.requests.held()) +
                                  " were held: a number served already, or further ahead than its window lets "
                                  "it send; it does not follow the rttcc protocol");
            return;
        case RequestOrder::Turn::kLater:
            p.requests.hold(r.rseq, msg, len);
            return;
        case RequestOrder::Turn::kNow:
            break;
    }
    serve_request(p, msg, len);
    p.requests.served();
    while (!p.dead && p.requests.take_due(&due_request_)) {
        serve_request(p, due_request_.data(), due_request_.size());
        p.requests.served();
    }
}

// A request that fails its checks is dropped whole, counted in drop_bad_put.
void Engine::serve_request(Peer &p, const uint8_t *msg, size_t len) {
    RmaRequest r;
    std::memcpy(&r, msg, sizeof r);
    if (!serve(p, r, msg + sizeof r, len - sizeof r)) drop(&rttcc_stats_t::drop_bad_put);
}

// Checks the request, then does it; false (nothing done) if it fails a
// check: its shape; for data, an exposure of an open window that p holds
// and its bytes inside that exposure; for locks and lookups, an open
// window (a dynamic one may have nothing attached).
bool Engine::serve(Peer &p, const RmaRequest &r, const uint8_t *payload, size_t n) {
    if (!well_formed(r, n, cfg_.max_message)) return false;
    if (r.kind == static_cast<uint8_t>(RmaKind::kBatch)) return serve_batch(p, r, payload, n);  // exposures of its own
    if (r.kind == static_cast<uint8_t>(RmaKind::kLockedBatch)) return serve_locked_batch(p, r, payload, n);
    const bool names_window = r.kind == static_cast<uint8_t>(RmaKind::kLock) ||
                              r.kind == static_cast<uint8_t>(RmaKind::kUnlock) ||
                              r.kind == static_cast<uint8_t>(RmaKind::kLookup);
    const GrantTable::Place place = names_window ? GrantTable::Place{} : grants_.place(p.id, r.key, r.offset, r.len);
    LockTable *locks = window_locks(names_window ? r.key : place.grant ? place.grant->window : 0);
    if (!locks) return false;
    switch (static_cast<RmaKind>(r.kind)) {
        case RmaKind::kGet: {
            const uint8_t *from = place.at;
            if (r.op == 0 && r.len > cfg_.inline_max) {
                reply(p, r.reply_key, r.reply_tag, from, r.len, place.grant->key);
            } else if (uint8_t *buf = reply_buffer(p, r.len)) {
                std::memcpy(buf, from, r.len);
                reply(p, r.reply_key, r.reply_tag, buf, r.len);
            }
            return true;
        }
        case RmaKind::kAcc: {
            uint8_t *at = place.at;
            uint8_t *old = nullptr;
            if (r.reply_key && !(old = reply_buffer(p, r.len))) return true;
            rma_apply(r.op, r.type, at, payload, r.len / rma_type_size(r.type), old);
            if (old) reply(p, r.reply_key, r.reply_tag, old, r.len);
            return true;
        }
        case RmaKind::kCas: {
            uint8_t *at = place.at;
            if (uint8_t *old = reply_buffer(p, r.len)) {
                std::memcpy(old, at, r.len);
                if (std::memcmp(at, payload, r.len) == 0) std::memcpy(at, payload + r.len, r.len);
                reply(p, r.reply_key, r.reply_tag, old, r.len);
            }
            return true;
        }
        case RmaKind::kLock:
            if (locks->acquire({p.id, r.op != 0, r.reply_key, r.reply_tag})) {
                lock_grants_.push_back({p.id, r.op != 0, r.reply_key, r.reply_tag});
                answer_lock_grants();
            }
            return true;
        case RmaKind::kUnlock:
            settle_window(r.key);  // an ordered UNLOCK may come before a large get's reply left
            if (!locks->release(p.id, &lock_grants_)) return false;
            answer_lock_grants();
            return true;
        case RmaKind::kBatch:
        case RmaKind::kLockedBatch:
            break;  // served above
        case RmaKind::kLookup: {
            const GrantTable::Grant *holder = grants_.exposure_holding(r.key, p.id, r.offset, r.len);
            rttcc_rma_region_t region{};
            if (holder) region = {reinterpret_cast<uintptr_t>(holder->base), holder->len, holder->key, 0};
            if (uint8_t *buf = reply_buffer(p, sizeof region)) {
                std::memcpy(buf, &region, sizeof region);
                reply(p, r.reply_key, r.reply_tag, buf, sizeof region);
            }
            return true;
        }
    }
    return false;
}

// Every entry is checked (an exposure of an open window that p holds, its
// bytes inside it and no more than a message, the copied replies within
// kBatchReplies) before the first is applied.  An entry with a reply puts
// the bytes as they were into the origin's grant, then applies; a large
// plain get's reply is sent from the exposure itself.
bool Engine::serve_batch(Peer &p, const RmaRequest &r, const uint8_t *payload, size_t n) {
    if (!batch_fits(p, payload, n, static_cast<uint32_t>(r.offset), 0)) return false;
    apply_batch(p, payload, n, static_cast<uint32_t>(r.offset), /*copy_replies=*/false);
    return true;
}

// Are a batch's entries all fine (serve_batch), and, with `window` (not 0),
// all into that window?
bool Engine::batch_fits(const Peer &p, const uint8_t *payload, size_t n, uint32_t entries, uint32_t window) const {
    size_t replies = 0;
    uint32_t open = 0;  // the window last found open: a batch's entries mostly share one
    return for_each_entry(payload, n, entries, [&](const RmaBatchEntry &e, const uint8_t *) {
        const GrantTable::Grant *exposure = grants_.place(p.id, e.key, e.offset, e.len).grant;
        replies += reply_bytes(e, /*all_copied=*/window != 0);  // a locked batch copies every reply
        const uint32_t in = exposure ? exposure->window : 0;
        if (in && in != open && windows_.count(in)) open = in;
        return in && (window == 0 || in == window) && in == open && e.len <= cfg_.max_message &&
               replies <= kBatchReplies;
    });
}

// Applies a batch batch_fits accepted.  copy_replies: a large plain get's
// reply is copied too (a locked batch's: the window may change once the
// lock goes).
void Engine::apply_batch(Peer &p, const uint8_t *payload, size_t n, uint32_t entries, bool copy_replies) {
    for_each_entry(payload, n, entries, [&](const RmaBatchEntry &e, const uint8_t *operand) {
        const GrantTable::Place place = grants_.place(p.id, e.key, e.offset, e.len);
        uint8_t *at = place.at;
        if ((e.flags & kPlainGet) && e.len > cfg_.inline_max && !copy_replies) {  // no copy, as a large kGet's
            reply(p, e.reply_key, e.reply_tag, at, e.len, place.grant->key);
            return true;
        }
        uint8_t *old = nullptr;
        if (e.reply_key && !(old = reply_buffer(p, e.len))) return false;  // p is dead
        rma_apply(e.op, e.type, at, operand, e.len / rma_type_size(e.type), old);  // NO_OP reads no operand
        if (old) reply(p, e.reply_key, e.reply_tag, old, e.len);
        return true;
    });
}

// A lazy lock with its batch: applied now if the lock is free, else it
// waits in the lock's queue with a copy of its entries (answer_lock_grants
// applies it when its turn comes).  Its entries must all be into the window
// it locks.
bool Engine::serve_locked_batch(Peer &p, const RmaRequest &r, const uint8_t *payload, size_t n) {
    LockTable *locks = window_locks(r.key);
    const auto entries = static_cast<uint32_t>(r.offset);
    if (!locks || !batch_fits(p, payload, n, entries, r.key)) {
        answer_locked_batch(p, r.reply_key, r.reply_tag, false);  // its origin waits for an answer
        return false;
    }
    LockTable::Request q{p.id, r.op != 0, r.reply_key, r.reply_tag, r.key, entries};
    if (locks->free_for(q.exclusive)) {
        locks->acquire(std::move(q));
        finish_locked_batch(p, r.key, r.reply_key, r.reply_tag, payload, n, entries);
        return true;
    }
    try {
        q.batch.assign(payload, payload + n);
    } catch (const std::bad_alloc &) {
        declare_dead(p, "this process is out of memory to keep a batch waiting for its lock");
        return true;
    }
    count(p, &rttcc_stats_t::locked_batches_waited);
    locks->acquire(std::move(q));
    return true;
}

// The locked batch holds its lock: apply it (checked again: an exposure may
// have gone while it waited; then nothing is applied), let the lock go,
// answer.
void Engine::finish_locked_batch(Peer &p, uint32_t window, uint32_t reply_key, uint8_t reply_tag,
                                 const uint8_t *payload, size_t n, uint32_t entries) {
    const bool fits = batch_fits(p, payload, n, entries, window);
    if (fits)
        apply_batch(p, payload, n, entries, /*copy_replies=*/true);
    else
        drop(&rttcc_stats_t::drop_bad_put);
    if (LockTable *locks = window_locks(window)) locks->release(p.id, &lock_grants_);
    answer_locked_batch(p, reply_key, reply_tag, fits);
}

// A locked batch's answer: 1 applied, 0 refused (nothing of it applied).
// Its request was well_formed: the reply key and tag are an answer's.
void Engine::answer_locked_batch(Peer &p, uint32_t reply_key, uint8_t reply_tag, bool applied) {
    if (p.dead) return;
    if (uint8_t *buf = reply_buffer(p, 1)) {
        *buf = applied ? 1 : 0;
        reply(p, reply_key, reply_tag, buf, 1);
    }
}

// Engine memory for a reply of `len` bytes to p.  Without any (the system
// is out of memory), p is declared dead: its request cannot be answered.
uint8_t *Engine::reply_buffer(Peer &p, size_t len) {
    uint8_t *buf = take_copy(len);
    if (!buf)
        declare_dead(p, "this process is out of memory for a reply of " + std::to_string(len) +
                            " bytes to its RMA request");
    return buf;
}

// Queues the put of `len` bytes into the asker's grant reply_key, on its
// client tag reply_tag; the next
// serve_sends sends it.  The bytes are a reply_buffer (handed over), or,
// with `exposure`, that exposure's own memory (a large get: no copy; until
// it is acknowledged, revoking the exposure copies them first).
void Engine::reply(Peer &p, uint32_t reply_key, uint8_t reply_tag, const uint8_t *bytes, size_t len,
                   uint32_t exposure) {
    TxMessage proto;
    proto.tag = proto.client_tag = reply_tag;
    proto.len = static_cast<uint32_t>(len);
    proto.put_addr = put_addr(reply_key, 0);
    proto.iov[0] = {const_cast<uint8_t *>(bytes), len};
    proto.iovcnt = 1;
    proto.exposure = exposure;
    proto.reply = true;
    if (!exposure) proto.inline_buf = const_cast<uint8_t *>(bytes);
    TxMessage &m = new_message(p, proto);
    if (exposure) exposure_replies_.push_back(m);
    enqueue(p, m);
    if (!p.sends_link.linked()) sends_.push_back(p);
}

// Exposure `key` is being revoked: the replies still sent from it become
// engine-owned copies (its memory may go once revoke returns).  Without
// memory for a copy, its peer is declared dead: its reply cannot be kept.
void Engine::copy_replies_from(uint32_t key) {
    const GrantTable::Grant *g = grants_.find(key);
    Peer *p = g && g->window ? live_peer(g->peer) : nullptr;
    if (!p) return;
    flush_all();  // no staged datagram points into it either
    TxMessage *m = p->outstanding.front();
    while (m) {
        TxMessage *next = p->outstanding.next(*m);
        if (m->exposure == key && !copy_reply(*p, *m)) return;
        m = next;
    }
}

// The window's memory is about to change (its epoch at the target ended):
// what is still sent from its exposures is copied as it is now, so that
// segments cut or resent later carry the epoch's bytes.  A get's origin
// waits for its reply before its epoch ends (a flush), but the target's
// may end first: MPI_Win_wait returns once the origin's COMPLETE came, a
// two-rank fence once its FENCE did, both behind the get's request.
int Engine::settle(uint32_t window) {
    std::lock_guard<MaybeMutex> g(state_mu_);
    settle_window(window);
    return RTTCC_OK;
}

// settle's work, under state_mu_: also when a lock of the window goes (its
// next holder may change what a large get's reply is still sent from).
void Engine::settle_window(uint32_t window) {
    if (exposure_replies_.empty()) return;
    flush_all();  // no staged datagram points into it either
    for (TxMessage *m = exposure_replies_.front(); m;) {
        TxMessage *next = exposure_replies_.next(*m);
        const GrantTable::Grant *grant = grants_.find(m->exposure);
        Peer *p = grant && grant->window == window ? live_peer(grant->peer) : nullptr;
        if (p && !copy_reply(*p, *m)) return;  // p was declared dead: its messages went with it
        m = next;
    }
}

// Makes reply m, sent from an exposure, an engine-owned copy.  Without
// memory for it, p is declared dead (false): its reply cannot be kept.
bool Engine::copy_reply(Peer &p, TxMessage &m) {
    uint8_t *buf = take_copy(m.len);
    if (!buf) {
        declare_dead(p, "this process is out of memory for a copy of an RMA reply while its window changes");
        return false;
    }
    std::memcpy(buf, m.iov[0].iov_base, m.len);
    m.iov[0] = {buf, m.len};
    m.inline_buf = buf;
    m.exposure = 0;
    m.exposure_link.unlink();
    return true;
}

// Tells the requests in lock_grants_ that they hold their lock: a byte
// into each one's reply grant.  (A reply may declare its peer dead, which
// may grant more: the loop takes those too.)
void Engine::answer_lock_grants() {
    while (!lock_grants_.empty()) {
        const LockTable::Request r = std::move(lock_grants_.back());
        lock_grants_.pop_back();
        Peer *p = r.who == LockTable::kSelf ? nullptr : live_peer(r.who);
        if (!p) continue;  // dead: forget_requests took its holds
        if (!r.batch.empty()) {  // a lazy lock's batch: applied, and the lock goes again
            finish_locked_batch(*p, r.window, r.reply_key, r.reply_tag, r.batch.data(), r.batch.size(), r.entries);
            continue;
        }
        if (uint8_t *buf = reply_buffer(*p, 1)) {
            *buf = 1;
            reply(*p, r.reply_key, r.reply_tag, buf, 1);
        }
    }
}

// p is dead: its held requests go, and so do its locks (their waiters get them).
void Engine::forget_requests(Peer &p) {
    p.requests.clear();
    for (auto &w : windows_) w.second.forget(p.id, &lock_grants_);
    answer_lock_grants();
}

}  // namespace rttcc
