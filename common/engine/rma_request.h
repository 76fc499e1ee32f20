// RMA requests (rttcc/rma.h): what an origin's engine asks a target's
// engine to do.  A request is an ordinary message (DATA, or CHUNKs when
// larger than a segment) on the engine's own tag RTTCC_TAG_RMA, which no
// client can attach, send or put on: a fixed header, then its payload.
//
//   0      1      2      3      4        8        12          16         24         32
//   +------+------+------+------+--------+--------+-----------+----------+----------+---------
//   | kind | op   | type | rtag | rseq   | key    | reply_key | offset   | len      | payload
//   +------+------+------+------+--------+--------+-----------+----------+----------+---------
//
//   kind      GET      ACC                CAS            LOCK        UNLOCK  LOOKUP         BATCH
//   op        atomic   rttcc_rma_op_t     -              exclusive   -       -              -
//   type      -        rttcc_rma_type_t   the element's  -           -       -              -
//   key       the exposure ..........................    the target's window number         -
//   offset    into exposure `key` ..................     -           -       an address     its entries
//   len       bytes    payload bytes      one element    -           -       bytes there    payload bytes
//   payload   -        the elements       compare, swap  -           -       -              entries (rma_batch.h)
//   reply     bytes    old elements       old element    one byte    -       rttcc_rma_     -
//                      (if reply_key)                    (when held)         region_t
//
// LOCKED_BATCH (a lazy lock: rttcc_rma_lock_batch) is a LOCK, a BATCH of
// entries into that window and an UNLOCK in one: op exclusive, key the
// window, offset and len as a BATCH's; once the lock is held (it waits in
// the lock's queue meanwhile, with a copy of its entries) the entries are
// applied with copied replies, the lock is released, and one byte lands
// in reply_key.
//
// Replies are puts into the origin's grant reply_key at offset 0, on its
// client tag rtag.  A GET's reply larger than inline_max is sent from the
// exposure itself unless it is atomic (op 1: the bytes as they are when it
// is served, as MPI_Get_accumulate with MPI_NO_OP reads them), which
// copies.  rseq numbers one origin's requests to one target from 0: the
// target applies them in that order (request_order.h).
#pragma once
#include <cstddef>
#include <cstdint>

#include "engine/regions.h"
#include "engine/rma_batch.h"
#include "rma/ops.h"
#include "rttcc/rma.h"
#include "rttcc/tags.h"

namespace rttcc {

enum class RmaKind : uint8_t { kGet = 1, kAcc, kCas, kLock, kUnlock, kLookup, kBatch, kLockedBatch };

#pragma pack(push, 1)
struct RmaRequest {
    uint8_t kind;        // RmaKind
    uint8_t op;          // ACC: rttcc_rma_op_t; LOCK: 1 exclusive, 0 shared; GET: 1 atomic
    uint8_t type;        // ACC, CAS: rttcc_rma_type_t
    uint8_t reply_tag;   // the origin's client tag: its replies' tag
    uint32_t rseq;       // its number among its origin's requests to this target
    uint32_t key;        // the exposure it names; LOCK, UNLOCK, LOOKUP: the target's window number
    uint32_t reply_key;  // the origin's grant its reply lands in (ACC: 0 for none)
    uint64_t offset;     // into the exposure; LOOKUP: an address of the target; BATCH: its entries
    uint64_t len;        // see the table above
};
#pragma pack(pop)
static_assert(sizeof(RmaRequest) == 32, "an RMA request's header is 32 bytes on the wire");

// Is this a request an engine sends: a known kind, fields that agree with
// each other and with the payload's `payload` bytes, a reply that fits in
// one put, the whole request in one message?  (Checked by the origin
// before sending and by the target before serving; whether the exposure
// holds the bytes only the target knows.)
inline bool well_formed(const RmaRequest &r, size_t payload, size_t max_message) {
    if (payload > max_message || sizeof r > max_message - payload) return false;
    const bool replies = r.reply_key != 0 && r.reply_key <= kPutKeyMask && r.reply_tag != RTTCC_TAG_RMA;
    const size_t element = rma_type_size(r.type);
    switch (static_cast<RmaKind>(r.kind)) {
        case RmaKind::kGet:
            return replies && r.op <= 1 && payload == 0 && r.len != 0 && r.len <= max_message;
        case RmaKind::kAcc:
            return (replies || r.reply_key == 0) && rma_op_valid(r.op, r.type) && element != 0 && r.len == payload &&
                   payload != 0 && payload % element == 0;
        case RmaKind::kCas:
            return replies && element != 0 && r.len == element && payload == 2 * element;
        case RmaKind::kLock:
            return replies && r.op <= 1 && payload == 0;
        case RmaKind::kUnlock:
            return payload == 0;
        case RmaKind::kLookup:
            return replies && payload == 0;
        case RmaKind::kBatch:  // its entries: for_each_entry
            return r.reply_key == 0 && r.len == payload && r.offset != 0 &&
                   r.offset <= payload / sizeof(RmaBatchEntry);
        case RmaKind::kLockedBatch:
            return replies && r.op <= 1 && r.len == payload && r.offset != 0 &&
                   r.offset <= payload / sizeof(RmaBatchEntry);
    }
    return false;
}

}  // namespace rttcc
