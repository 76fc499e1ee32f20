/*
 * rttcc RMA: one-sided operations on exposures (osc_rttcc's data path).
 *
 * A target exposes window memory to each origin (rttcc_engine_expose, one
 * key per origin and region).  Puts land there silently (rttcc_engine_put);
 * everything else here is a request served by the target's engine, also
 * while its application computes outside MPI (the liveness agent serves
 * it), so passive target needs nothing of the target's application:
 *
 *   origin                                   target engine
 *   grant(reply buffer) -> reply_key
 *   rttcc_rma_get(key, off, len, reply_key) ->  checks key: granted to origin,
 *                                               [off, off+len) inside it
 *   on_put(reply_key) <----------------------  puts the bytes into reply_key
 *
 * Replies are puts into a grant (rttcc_engine_grant) the origin made to
 * the target, on the origin's client tag: its on_put says a reply landed
 * whole.  Small replies are copies; a large get's is sent from the exposure
 * itself, and revoking the exposure copies what is still in flight first:
 * revoking an exposure while replies from it are in flight is safe.
 *
 * Accumulates (and fetching ones, and compare-and-swap) are applied by the
 * target's engine under its state lock: every update of an exposure goes
 * through that lock, so each element is updated atomically.  Requests from
 * one origin to one target are applied in the order they were made (MPI's
 * accumulate_ordering rar,raw,war,waw); puts are not ordered with them,
 * except posted ones (rttcc_rma_post), which travel as requests.
 * A request the target cannot check (bad key, out of bounds, an op the type
 * does not take) is dropped and counted in drop_bad_put: the origin checks
 * bounds and types first, so only a broken or hostile origin sends one.
 */
#ifndef RTTCC_RMA_H
#define RTTCC_RMA_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "rttcc/engine.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

/* Element types an accumulate applies to: MPI's predefined C types by
 * representation (a component maps every predefined type, C or Fortran,
 * onto one of these by size and kind).  BOOL is C's _Bool (1 byte), the
 * complex ones C's _Complex, the pair types (MAXLOC, MINLOC) the structs
 * below: C's layout, value then int, padded. */
#define RTTCC_RMA_TYPES(T)                                                        \
    T(INT8) T(UINT8) T(INT16) T(UINT16) T(INT32) T(UINT32) T(INT64) T(UINT64)     \
    T(FLOAT) T(DOUBLE) T(LONG_DOUBLE)                                             \
    T(C_FLOAT_COMPLEX) T(C_DOUBLE_COMPLEX) T(C_LONG_DOUBLE_COMPLEX)               \
    T(BOOL) T(BYTE)                                                               \
    T(FLOAT_INT) T(DOUBLE_INT) T(LONG_INT) T(2INT) T(SHORT_INT) T(LONG_DOUBLE_INT)

typedef struct { float v; int i; } rttcc_float_int_t;
typedef struct { double v; int i; } rttcc_double_int_t;
typedef struct { long v; int i; } rttcc_long_int_t;
typedef struct { int v; int i; } rttcc_2int_t;
typedef struct { short v; int i; } rttcc_short_int_t;
typedef struct { long double v; int i; } rttcc_long_double_int_t;

typedef enum {
#define RTTCC_RMA_TYPE_ENUM(name) RTTCC_RMA_##name,
    RTTCC_RMA_TYPES(RTTCC_RMA_TYPE_ENUM)
#undef RTTCC_RMA_TYPE_ENUM
    RTTCC_RMA_TYPE_COUNT
} rttcc_rma_type_t;

/* MPI's predefined reduction ops, MPI_REPLACE and MPI_NO_OP. */
typedef enum {
    RTTCC_RMA_REPLACE, RTTCC_RMA_NO_OP, RTTCC_RMA_SUM, RTTCC_RMA_PROD,
    RTTCC_RMA_MAX, RTTCC_RMA_MIN, RTTCC_RMA_LAND, RTTCC_RMA_LOR,
    RTTCC_RMA_LXOR, RTTCC_RMA_BAND, RTTCC_RMA_BOR, RTTCC_RMA_BXOR,
    RTTCC_RMA_MAXLOC, RTTCC_RMA_MINLOC,
    RTTCC_RMA_OP_COUNT
} rttcc_rma_op_t;

/* Bytes of one element (0 for a code out of range). */
size_t rttcc_rma_type_size(int type);
/* Does MPI allow `op` on `type`?  (REPLACE and NO_OP: every type; MAXLOC
 * and MINLOC: the pair types; arithmetic: integers, floats, complex (but
 * MAX/MIN on complex); logical: integers and bool; bitwise: integers and
 * byte.) */
int rttcc_rma_op_valid(int op, int type);
/* Names for messages ("MPI_SUM", "int32"). */
const char *rttcc_rma_op_name(int op);
const char *rttcc_rma_type_name(int type);

/* dst[i] = dst[i] op src[i] for `count` elements (REPLACE: src; NO_OP:
 * unchanged), with the old dst copied to `old` first when old != NULL.
 * The buffers need not be aligned.  RTTCC_ERR_ARG for an invalid pair. */
int rttcc_rma_apply(int op, int type, void *dst, const void *src, size_t count, void *old);

/* ---- windows and locks ---------------------------------------------- */

/* A window's lock table, for passive target: its number names it in
 * rttcc_rma_expose and in the local lock calls.  Close revokes nothing
 * (revoke the exposures first); requests for it afterwards are dropped. */
int rttcc_rma_window_open(rttcc_engine_t *engine, uint32_t *window);
int rttcc_rma_window_close(rttcc_engine_t *engine, uint32_t window);

/* The application is about to change `window`'s memory (the target's
 * epoch ended: MPI_Win_wait, a fence): replies still being sent from its
 * exposures (large gets, sent zero-copy, resent from there if lost) become
 * engine copies of the bytes as they are now.  Free when none is in
 * flight. */
int rttcc_rma_settle(rttcc_engine_t *engine, uint32_t window);

/* rttcc_engine_expose for `window`: requests naming the key may also read
 * (get), update (accumulate), lock the window and look up its regions. */
int rttcc_rma_expose(rttcc_engine_t *engine, uint32_t window, uint32_t peer, void *base, size_t len,
                     uint32_t *key);

/* A dynamic window's memory is attached and detached while origins use
 * it: `peer` names it by address, through this key to the whole window.
 * A request naming it at `offset` an address of this process (and `len`
 * bytes there) reaches the exposure of `window` to `peer` (rttcc_rma_expose)
 * that holds them when the request is served, whatever was detached and
 * attached since; none: it is dropped (drop_bad_put).  Exposures of one
 * window to one peer must not overlap (rttcc_rma_expose refuses it).
 * rttcc_engine_put takes offsets below 2^40 only: a dynamic window's puts
 * are requests (rttcc_rma_accumulate, RTTCC_RMA_REPLACE on RTTCC_RMA_BYTE). */
int rttcc_rma_expose_window(rttcc_engine_t *engine, uint32_t window, uint32_t peer, uint32_t *key);

/* ---- requests (origin side) ------------------------------------------
 * Each is a message to `peer` that its engine serves; `reply_key` is a
 * grant of this process to `peer` where the reply lands (on_put of the
 * client of `tag`, at offset 0).  Copied (RTTCC_DONE) when the request is
 * at most inline_max bytes, else zero-copy with on_send_done(cookie).
 * RTTCC_ERR_UNREACH for an unknown or dead peer. */

/* Reads [offset, offset + len) of exposure `key` into reply_key.  A reply
 * above inline_max is sent from the exposure itself, so it shows the bytes
 * as they are when its datagrams go (MPI_Get: no one may change them during
 * the epoch); rttcc_rma_get_atomic's shows them as they were when the target
 * served it, atomic with every accumulate (MPI_Get_accumulate with
 * MPI_NO_OP), at the price of a copy. */
int rttcc_rma_get(rttcc_engine_t *engine, uint32_t peer, uint32_t key, uint64_t offset, size_t len,
                  uint32_t reply_key, uint8_t tag);
int rttcc_rma_get_atomic(rttcc_engine_t *engine, uint32_t peer, uint32_t key, uint64_t offset, size_t len,
                         uint32_t reply_key, uint8_t tag);

/* A request travels as one engine message: an accumulate's elements may
 * take rttcc_engine_max_message() less this many bytes. */
#define RTTCC_RMA_REQUEST_HEADER 64

/* Applies `op` with the elements of iov (len a multiple of the type's
 * size) to the elements at `offset` of exposure `key`.  reply_key != 0: the
 * old contents are put there first (MPI_Get_accumulate, MPI_Fetch_and_op). */
int rttcc_rma_accumulate(rttcc_engine_t *engine, uint32_t peer, uint32_t key, uint64_t offset, int op,
                         int type, const struct iovec *iov, int iovcnt, uint32_t reply_key, uint8_t tag,
                         void *cookie);

/* A small put (op RTTCC_RMA_REPLACE on RTTCC_RMA_BYTE) or accumulate
 * without reply, gathered with the others made to `peer` until this
 * process's next progress pass, flush of `peer` or other request to it, into
 * one request of up to 64 KiB (a burst of them costs one request and one
 * send call, not one each).  Copied: RTTCC_DONE, and rttcc_engine_flush
 * completes it remotely.  RTTCC_ERR_BUSY if it does not fit a batch alone
 * (64 KiB, or the largest message if less, with a 32-byte request header
 * and a 24-byte entry header), or a held batch is full: send it with
 * rttcc_engine_put or rttcc_rma_accumulate (a held batch: take the lock
 * first).  How large a piece is worth a copy is the caller's
 * choice (a copy is done at once; alone, a piece is sent zero-copy and done
 * on the target's ACK).  Applied at the target in order with the requests,
 * each entry checked as an accumulate is (a batch with one bad entry is
 * dropped whole). */
int rttcc_rma_post(rttcc_engine_t *engine, uint32_t peer, uint32_t key, uint64_t offset, int op, int type,
                   const void *data, size_t len);

/* The same with a reply: the `len` bytes at `offset` as they were before
 * `op` is applied are put into reply_key on `tag` (a fetching accumulate).
 * A small get is op RTTCC_RMA_NO_OP on RTTCC_RMA_BYTE with data NULL.  A
 * batch's replies bring back at most 64 KiB (one begins a new batch when
 * they would not fit). */
int rttcc_rma_post_fetch(rttcc_engine_t *engine, uint32_t peer, uint32_t key, uint64_t offset, int op, int type,
                         const void *data, size_t len, uint32_t reply_key, uint8_t tag);

/* MPI_Get gathered into the batch: [offset, offset + len) of exposure `key`
 * into reply_key on `tag`, as rttcc_rma_get (a reply above the target's
 * inline_max is sent from the exposure itself and counts nothing in the
 * batch's 64 KiB of replies), so a burst of gets costs one request. */
int rttcc_rma_post_get(rttcc_engine_t *engine, uint32_t peer, uint32_t key, uint64_t offset, size_t len,
                       uint32_t reply_key, uint8_t tag);

/* MPI_Compare_and_swap of one element: the old value is put into reply_key. */
int rttcc_rma_compare_and_swap(rttcc_engine_t *engine, uint32_t peer, uint32_t key, uint64_t offset,
                               int type, const void *compare, const void *swap, uint32_t reply_key,
                               uint8_t tag);

/* Asks for the lock of the target's window number `window` (its
 * rttcc_rma_window_open, which the origin learned when the window was
 * made), shared or exclusive; one byte lands in reply_key when it is held
 * (requests wait in order of arrival).  Unlock releases it; it needs no
 * reply (it is applied after every earlier request of this origin, and
 * puts are flushed first).  A request naming a window that is not open is
 * dropped (drop_bad_put). */
int rttcc_rma_lock(rttcc_engine_t *engine, uint32_t peer, uint32_t window, int exclusive, uint32_t reply_key,
                   uint8_t tag);
int rttcc_rma_unlock(rttcc_engine_t *engine, uint32_t peer, uint32_t window, uint8_t tag);

/* Unlock as an ordered message (rttcc_engine_send_ordered): the target
 * releases the lock only once everything sent to it before has arrived
 * (zero-copy puts landed too), so no flush need come first.  With
 * flush_cookie, what went before is flushed (on_flush of the client of
 * `tag`; RTTCC_OK: pending, RTTCC_DONE: nothing to wait for), in the same
 * send call as the epoch's batch. */
int rttcc_rma_unlock_ordered(rttcc_engine_t *engine, uint32_t peer, uint32_t window, uint8_t tag,
                             void *flush_cookie);

/* A lazy lock, as MPI_Win_lock may be (MPI 3.1, 11.5.3): nothing is asked
 * yet.  rttcc_rma_hold_batch(.., 1) sends what the batch to `peer` holds
 * (other epochs' posts), then keeps what is posted next in it: no progress
 * pass, flush or request sends it, and a post that would not fit says
 * RTTCC_ERR_BUSY.  rttcc_rma_lock_batch then sends the lock and the batch
 * as one request: the target takes the lock (waiting in its queue as
 * rttcc_rma_lock would), applies the batch (its replies copied), lets the
 * lock go, and one byte lands in reply_key: 1, or 0 if the target refused
 * the batch (an entry outside the window's exposures to us: nothing of it
 * was applied, its gets get no reply).  RTTCC_OK: sent, RTTCC_DONE: nothing
 * was posted, nothing goes.  Or the caller takes the lock with
 * rttcc_rma_lock and ends the hold (.., 0): the batch goes as usual; or it
 * could not take the lock and drops the batch (.., -1).  While it holds,
 * the lock's epoch sends `peer` no request, flush or put of its own (they
 * would pass the lock); others' go, without the held batch. */
int rttcc_rma_hold_batch(rttcc_engine_t *engine, uint32_t peer, int hold);
int rttcc_rma_lock_batch(rttcc_engine_t *engine, uint32_t peer, uint32_t window, int exclusive, uint32_t reply_key,
                         uint8_t tag);

/* Dynamic windows: finds the region of the target's window `window` that
 * `peer` exposed to us (rttcc_rma_expose) and that holds [addr, addr + len);
 * its rttcc_rma_region_t lands in reply_key (key 0: none holds it). */
typedef struct rttcc_rma_region {
    uint64_t base; /* address of its first byte at the target */
    uint64_t len;  /* bytes */
    uint32_t key;  /* exposure to put into, 0 if none */
    uint32_t pad;
} rttcc_rma_region_t;
int rttcc_rma_lookup(rttcc_engine_t *engine, uint32_t peer, uint32_t window, uint64_t addr, size_t len,
                     uint32_t reply_key, uint8_t tag);

/* ---- this process's own window (origin == target) --------------------
 * The same updates, under the same lock as the engine's, so they are
 * atomic with the requests peers make. */
int rttcc_rma_apply_local(rttcc_engine_t *engine, int op, int type, void *dst, const void *src, size_t count,
                          void *old);
int rttcc_rma_compare_and_swap_local(rttcc_engine_t *engine, int type, void *dst, const void *compare,
                                     const void *swap, void *old);
/* Takes the window's lock if it is free now (RTTCC_DONE), else
 * RTTCC_ERR_BUSY (try again after progress). */
int rttcc_rma_lock_local(rttcc_engine_t *engine, uint32_t window, int exclusive);
int rttcc_rma_unlock_local(rttcc_engine_t *engine, uint32_t window);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
