// A batch (RmaKind::kBatch): the small puts, gets and accumulates that one
// origin makes to one target between two of its progress passes, gathered
// into one request, so that a burst of them costs one request and one send
// call instead of one of each per operation (rttcc_rma_post,
// rttcc_rma_post_fetch).  An operation joins if it fits a batch alone
// (which ones are worth a copy is the caller's choice); a batch grows to
// kBatchBytes, or the largest message if that is less.  The request
// header says how many entries follow (offset) and their bytes (len); each
// entry is
//
//   0        8      12     16   17     18     19      20          24
//   +--------+------+------+----+------+------+-------+-----------+-----------
//   | offset | key  | len  | op | type | rtag | flags | reply_key | len bytes
//   +--------+------+------+----+------+------+-------+-----------+-----------
//
// applied like an accumulate of `len` bytes at `offset` of exposure `key`
// (a put is REPLACE on BYTE).  With a reply_key, the `len` bytes there as
// they were before are put into that grant of the origin first, on its
// client tag rtag (a fetching accumulate); op NO_OP carries no bytes (a
// get).  A batch's copied replies bring back at most kBatchReplies bytes.
// Flag kPlainGet (NO_OP on BYTE, with a reply) is an MPI_Get: above the
// target's inline_max its reply is sent from the exposure itself, as
// rttcc_rma_get's, and it counts nothing in kBatchReplies.  The target
// checks every entry before it applies any, and applies them in order,
// under its state lock.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "engine/regions.h"
#include "rma/ops.h"
#include "rttcc/rma.h"
#include "rttcc/tags.h"

namespace rttcc {

#pragma pack(push, 1)
struct RmaBatchEntry {
    uint64_t offset;         // into exposure `key`
    uint32_t key;            // an exposure the target made to the origin
    uint32_t len;            // bytes at offset: whole elements of `type`
    uint8_t op;              // rttcc_rma_op_t
    uint8_t type;            // rttcc_rma_type_t
    uint8_t reply_tag = 0;   // the origin's client tag for that reply (0 without one)
    uint8_t flags = 0;       // kPlainGet or 0
    uint32_t reply_key = 0;  // the origin's grant for the old bytes; 0: no reply
};
#pragma pack(pop)
static_assert(sizeof(RmaBatchEntry) == 24, "a batch entry's header is 24 bytes on the wire");

// The bytes that follow an entry: its operand, none for NO_OP (a get).
inline size_t operand_bytes(const RmaBatchEntry &e) { return e.op == RTTCC_RMA_NO_OP ? 0 : e.len; }

// RmaBatchEntry::flags: an MPI_Get (rttcc_rma_post_get).
constexpr uint8_t kPlainGet = 1;

// The bytes its reply brings back in a copy the batch accounts for (a plain
// get's is either sent from the exposure or at most the target's inline_max).
inline size_t reply_bytes(const RmaBatchEntry &e) { return e.reply_key && !(e.flags & kPlainGet) ? e.len : 0; }
// ... and what it costs where every reply is copied (a LOCKED_BATCH's).
inline size_t reply_bytes(const RmaBatchEntry &e, bool all_copied) {
    return all_copied && (e.flags & kPlainGet) ? e.len : reply_bytes(e);
}

// The most bytes one batch's replies bring back: the target's copies for
// one request, as many as a window of TCP's carries.
constexpr size_t kBatchReplies = 64 * 1024;

// The most bytes one batch's request carries: a GSO group's worth, one send
// call.  Capped at inline_max (8 KiB), a burst of 1 KiB puts across testbed
// hosts went as a request of 6 datagrams, a send call, every 7 puts.
constexpr size_t kBatchBytes = 64 * 1024;

// Is this an entry an engine makes?  (Whether the exposure holds its bytes
// only the target knows.)
inline bool well_formed(const RmaBatchEntry &e) {
    const size_t element = rma_type_size(e.type);
    const bool reply_ok = e.reply_key == 0 ? e.reply_tag == 0
                                           : e.reply_key <= kPutKeyMask && e.reply_tag != RTTCC_TAG_RMA;
    const bool flags_ok = e.flags == 0 || (e.flags == kPlainGet && e.op == RTTCC_RMA_NO_OP &&
                                           e.type == RTTCC_RMA_BYTE && e.reply_key != 0);
    return e.key != 0 && e.key <= kPutKeyMask && e.len != 0 && element != 0 && e.len % element == 0 &&
           rma_op_valid(e.op, e.type) && reply_ok && flags_ok;
}

// Calls f(entry, bytes) for each of the `count` entries in the `n` bytes at
// `at`, in order, while f returns true.  False if f said no, or if the
// bytes are not exactly `count` well-formed entries.
template <typename F>
bool for_each_entry(const uint8_t *at, size_t n, uint64_t count, F &&f) {
    for (; count > 0; --count) {
        RmaBatchEntry e;
        if (n < sizeof e) return false;
        std::memcpy(&e, at, sizeof e);
        const size_t operand = operand_bytes(e);
        if (!well_formed(e) || n - sizeof e < operand || !f(e, at + sizeof e)) return false;
        at += sizeof e + operand;
        n -= sizeof e + operand;
    }
    return n == 0;
}

// The batch an origin is filling for one target: the payload of its
// request.  Its buffer is kept between batches (no allocation once warm).
class RmaBatch {
public:
    bool empty() const { return entries_ == 0; }
    uint32_t entries() const { return entries_; }
    const uint8_t *data() const { return bytes_.get(); }
    size_t size() const { return size_; }
    size_t capacity() const { return capacity_; }  // the memory it holds

    // Would entry e fit with the others: its header and operand in the
    // request's `cap` bytes, its reply in kBatchReplies?
    bool fits(const RmaBatchEntry &e, size_t cap) const {  // size() <= cap and replies_ <= kBatchReplies
        return sizeof e + operand_bytes(e) <= cap - size() && reply_bytes(e, held) <= kBatchReplies - replies_;
    }
    static bool fits_alone(const RmaBatchEntry &e, size_t cap) {
        return sizeof e + operand_bytes(e) <= cap && reply_bytes(e) <= kBatchReplies;
    }

    // Appends an entry and its operand_bytes(e) at `bytes` (fits() said
    // yes).  May throw std::bad_alloc before changing anything.  The buffer
    // doubles up to `cap` as batches need it: a peer sent only a few small
    // operations holds little.
    void add(const RmaBatchEntry &e, const void *bytes, size_t cap) {
        const size_t need = size_ + sizeof e + operand_bytes(e);
        if (capacity_ < need) grow(std::max(need, std::min(cap, 2 * capacity_)));
        std::memcpy(bytes_.get() + size_, &e, sizeof e);
        if (operand_bytes(e)) std::memcpy(bytes_.get() + size_ + sizeof e, bytes, operand_bytes(e));
        size_ = need;
        replies_ += reply_bytes(e, held);
        ++entries_;
    }

    void clear() {
        size_ = 0;
        replies_ = 0;
        entries_ = 0;
    }

    bool listed = false;  // in the engine's list of batches a progress pass sends
    bool held = false;    // a lazy lock's: leaves only as its LOCKED_BATCH (rttcc_rma_lock_batch)

private:
    // (Not a vector: resize() would zero each entry's bytes before the copy.)
    void grow(size_t capacity) {
        auto bigger = std::make_unique<uint8_t[]>(capacity);
        if (size_) std::memcpy(bigger.get(), bytes_.get(), size_);
        bytes_ = std::move(bigger);
        capacity_ = capacity;
    }

    std::unique_ptr<uint8_t[]> bytes_;
    size_t size_ = 0, capacity_ = 0;
    size_t replies_ = 0;  // the bytes its entries' replies bring back
    uint32_t entries_ = 0;
};

}  // namespace rttcc
