// The C face of RMA (rttcc/rma.h): the element math (rma/ops.h), and
// requests, windows and local updates of the engine (engine_rma.cc).  No
// exception crosses it.
#include <new>

#include "api/engine_handle.h"
#include "engine/rma_request.h"
#include "rma/ops.h"
#include "rttcc/rma.h"

namespace {

template <typename F>
int guarded(F &&fn) {
    try {
        return fn();
    } catch (...) {  // out of memory, in practice
        return RTTCC_ERR;
    }
}

rttcc::RmaRequest request(rttcc::RmaKind kind, uint32_t key, uint64_t offset, uint64_t len, uint32_t reply_key,
                          uint8_t tag) {
    rttcc::RmaRequest r{};
    r.kind = static_cast<uint8_t>(kind);
    r.key = key;
    r.offset = offset;
    r.len = len;
    r.reply_key = reply_key;
    r.reply_tag = tag;
    return r;
}

int send(rttcc_engine_t *engine, uint32_t peer, const rttcc::RmaRequest &r, const iovec *iov = nullptr,
         int iovcnt = 0, void *cookie = nullptr) {
    return guarded([&] { return engine->impl->request(peer, r, iov, iovcnt, cookie); });
}

}  // namespace

extern "C" {

size_t rttcc_rma_type_size(int type) { return rttcc::rma_type_size(type); }
int rttcc_rma_op_valid(int op, int type) { return rttcc::rma_op_valid(op, type); }
const char *rttcc_rma_op_name(int op) { return rttcc::rma_op_name(op); }
const char *rttcc_rma_type_name(int type) { return rttcc::rma_type_name(type); }
int rttcc_rma_apply(int op, int type, void *dst, const void *src, size_t count, void *old) {
    return rttcc::rma_apply(op, type, dst, src, count, old);
}

int rttcc_rma_post_fetch(rttcc_engine_t *engine, uint32_t peer, uint32_t key, uint64_t offset, int op, int type,
                         const void *data, size_t len, uint32_t reply_key, uint8_t tag) {
    if (len > UINT32_MAX) return RTTCC_ERR_BUSY;
    if (op < 0 || op > UINT8_MAX || type < 0 || type > UINT8_MAX) return RTTCC_ERR_ARG;
    rttcc::RmaBatchEntry e{offset, key, static_cast<uint32_t>(len), static_cast<uint8_t>(op),
                           static_cast<uint8_t>(type)};
    e.reply_key = reply_key;
    e.reply_tag = reply_key ? tag : 0;
    return guarded([&] { return engine->impl->post(peer, e, data); });
}

int rttcc_rma_post_get(rttcc_engine_t *engine, uint32_t peer, uint32_t key, uint64_t offset, size_t len,
                       uint32_t reply_key, uint8_t tag) {
    if (len > UINT32_MAX) return RTTCC_ERR_BUSY;
    rttcc::RmaBatchEntry e{offset, key, static_cast<uint32_t>(len), RTTCC_RMA_NO_OP, RTTCC_RMA_BYTE};
    e.reply_key = reply_key;
    e.reply_tag = tag;
    e.flags = rttcc::kPlainGet;
    return guarded([&] { return engine->impl->post(peer, e, nullptr); });
}

int rttcc_rma_post(rttcc_engine_t *engine, uint32_t peer, uint32_t key, uint64_t offset, int op, int type,
                   const void *data, size_t len) {
    return rttcc_rma_post_fetch(engine, peer, key, offset, op, type, data, len, 0, 0);
}

int rttcc_rma_window_open(rttcc_engine_t *engine, uint32_t *window) {
    return guarded([&] {
        *window = engine->impl->open_window();
        return RTTCC_OK;
    });
}

int rttcc_rma_window_close(rttcc_engine_t *engine, uint32_t window) {
    return engine->impl->close_window(window) ? RTTCC_OK : RTTCC_ERR_ARG;
}

int rttcc_rma_settle(rttcc_engine_t *engine, uint32_t window) {
    return guarded([&] { return engine->impl->settle(window); });
}

int rttcc_rma_expose(rttcc_engine_t *engine, uint32_t window, uint32_t peer, void *base, size_t len,
                     uint32_t *key) {
    return guarded([&] {
        *key = engine->impl->expose(window, peer, base, len);
        return *key ? RTTCC_OK : RTTCC_ERR_ARG;
    });
}

int rttcc_rma_expose_window(rttcc_engine_t *engine, uint32_t window, uint32_t peer, uint32_t *key) {
    return guarded([&] {
        *key = engine->impl->expose_window(window, peer);
        return *key ? RTTCC_OK : RTTCC_ERR_ARG;
    });
}

int rttcc_rma_get(rttcc_engine_t *engine, uint32_t peer, uint32_t key, uint64_t offset, size_t len,
                  uint32_t reply_key, uint8_t tag) {
    return send(engine, peer, request(rttcc::RmaKind::kGet, key, offset, len, reply_key, tag));
}

int rttcc_rma_get_atomic(rttcc_engine_t *engine, uint32_t peer, uint32_t key, uint64_t offset, size_t len,
                         uint32_t reply_key, uint8_t tag) {
    rttcc::RmaRequest r = request(rttcc::RmaKind::kGet, key, offset, len, reply_key, tag);
    r.op = 1;
    return send(engine, peer, r);
}

int rttcc_rma_accumulate(rttcc_engine_t *engine, uint32_t peer, uint32_t key, uint64_t offset, int op,
                         int type, const struct iovec *iov, int iovcnt, uint32_t reply_key, uint8_t tag,
                         void *cookie) {
    if (iovcnt < 0 || iovcnt > 2 || op < 0 || op > UINT8_MAX || type < 0 || type > UINT8_MAX) return RTTCC_ERR_ARG;
    size_t len = 0;
    for (int i = 0; i < iovcnt; ++i) len += iov[i].iov_len;
    rttcc::RmaRequest r = request(rttcc::RmaKind::kAcc, key, offset, len, reply_key, tag);
    r.op = static_cast<uint8_t>(op);
    r.type = static_cast<uint8_t>(type);
    return send(engine, peer, r, iov, iovcnt, cookie);
}

int rttcc_rma_compare_and_swap(rttcc_engine_t *engine, uint32_t peer, uint32_t key, uint64_t offset,
                               int type, const void *compare, const void *swap, uint32_t reply_key,
                               uint8_t tag) {
    const size_t n = rttcc::rma_type_size(type);
    if (n == 0) return RTTCC_ERR_ARG;
    rttcc::RmaRequest r = request(rttcc::RmaKind::kCas, key, offset, n, reply_key, tag);
    r.type = static_cast<uint8_t>(type);
    const iovec iov[2] = {{const_cast<void *>(compare), n}, {const_cast<void *>(swap), n}};
    return send(engine, peer, r, iov, 2);
}

int rttcc_rma_lock(rttcc_engine_t *engine, uint32_t peer, uint32_t window, int exclusive, uint32_t reply_key,
                   uint8_t tag) {
    rttcc::RmaRequest r = request(rttcc::RmaKind::kLock, window, 0, 0, reply_key, tag);
    r.op = exclusive ? 1 : 0;
    return send(engine, peer, r);
}

int rttcc_rma_unlock(rttcc_engine_t *engine, uint32_t peer, uint32_t window, uint8_t tag) {
    return send(engine, peer, request(rttcc::RmaKind::kUnlock, window, 0, 0, 0, tag));
}

int rttcc_rma_unlock_ordered(rttcc_engine_t *engine, uint32_t peer, uint32_t window, uint8_t tag,
                             void *flush_cookie) {
    return guarded(
        [&] { return engine->impl->request_ordered(peer, request(rttcc::RmaKind::kUnlock, window, 0, 0, 0, tag),
                                                   flush_cookie); });
}

int rttcc_rma_hold_batch(rttcc_engine_t *engine, uint32_t peer, int hold) {
    using Hold = rttcc::Engine::BatchHold;
    if (hold < -1 || hold > 1) return RTTCC_ERR_ARG;
    return guarded([&] { return engine->impl->hold_batch(peer, hold > 0 ? Hold::kHold : hold < 0 ? Hold::kDiscard : Hold::kRelease); });
}

int rttcc_rma_lock_batch(rttcc_engine_t *engine, uint32_t peer, uint32_t window, int exclusive, uint32_t reply_key,
                         uint8_t tag) {
    return guarded([&] { return engine->impl->lock_batch(peer, window, exclusive != 0, reply_key, tag); });
}

int rttcc_rma_lookup(rttcc_engine_t *engine, uint32_t peer, uint32_t window, uint64_t addr, size_t len,
                     uint32_t reply_key, uint8_t tag) {
    return send(engine, peer, request(rttcc::RmaKind::kLookup, window, addr, len, reply_key, tag));
}

int rttcc_rma_apply_local(rttcc_engine_t *engine, int op, int type, void *dst, const void *src, size_t count,
                          void *old) {
    return engine->impl->apply_local(op, type, dst, src, count, old);
}

int rttcc_rma_compare_and_swap_local(rttcc_engine_t *engine, int type, void *dst, const void *compare,
                                     const void *swap, void *old) {
    return engine->impl->compare_and_swap_local(type, dst, compare, swap, old);
}

int rttcc_rma_lock_local(rttcc_engine_t *engine, uint32_t window, int exclusive) {
    return engine->impl->lock_local(window, exclusive != 0);
}

int rttcc_rma_unlock_local(rttcc_engine_t *engine, uint32_t window) {
    return guarded([&] { return engine->impl->unlock_local(window); });
}

}  // extern "C"
