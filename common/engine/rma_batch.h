// A batch (RmaKind::kBatch): the small puts and accumulates without reply
// that one origin makes to one target between two of its progress passes,
// gathered into one request (up to inline_max), so that a burst of them
// costs one request and one send call instead of one of each per operation
// (rttcc_rma_post).  The request header says how many
// entries follow (offset) and their bytes (len); each entry is
//
//   0        8      12     14   15     16
//   +--------+------+------+----+------+-------------
//   | offset | key  | len  | op | type | len bytes
//   +--------+------+------+----+------+-------------
//
// applied like an accumulate of `len` bytes at `offset` of exposure `key`
// (a put is REPLACE on BYTE).  The target checks every entry before it
// applies any, and applies them in order, under its state lock.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "engine/regions.h"
#include "rma/ops.h"

namespace rttcc {

#pragma pack(push, 1)
struct RmaBatchEntry {
    uint64_t offset;  // into exposure `key`
    uint32_t key;     // an exposure the target made to the origin
    uint16_t len;     // bytes that follow: whole elements of `type`
    uint8_t op;       // rttcc_rma_op_t
    uint8_t type;     // rttcc_rma_type_t
};
#pragma pack(pop)
static_assert(sizeof(RmaBatchEntry) == 16, "a batch entry's header is 16 bytes on the wire");

// Is this an entry an engine makes?  (Whether the exposure holds its bytes
// only the target knows.)
inline bool well_formed(const RmaBatchEntry &e) {
    const size_t element = rma_type_size(e.type);
    return e.key != 0 && e.key <= kPutKeyMask && e.len != 0 && element != 0 && e.len % element == 0 &&
           rma_op_valid(e.op, e.type);
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
        if (!well_formed(e) || n - sizeof e < e.len || !f(e, at + sizeof e)) return false;
        at += sizeof e + e.len;
        n -= sizeof e + e.len;
    }
    return n == 0;
}

// The batch an origin is filling for one target: the payload of its
// request.  Its buffer is kept between batches (no allocation once warm).
class RmaBatch {
public:
    bool empty() const { return entries_ == 0; }
    uint32_t entries() const { return entries_; }
    const uint8_t *data() const { return bytes_.data(); }
    size_t size() const { return bytes_.size(); }

    // Would an entry of `len` bytes fit with the others in `cap` bytes?
    bool fits(size_t len, size_t cap) const { return len <= cap && sizeof(RmaBatchEntry) + len <= cap - size(); }
    static bool fits_alone(size_t len, size_t cap) { return sizeof(RmaBatchEntry) + len <= cap; }

    // Appends an entry (fits() said yes).  May throw std::bad_alloc before
    // changing anything (the first entry reserves `cap`).
    void add(const RmaBatchEntry &e, const void *bytes, size_t cap) {
        if (bytes_.capacity() < cap) bytes_.reserve(cap);
        const auto *h = reinterpret_cast<const uint8_t *>(&e);
        bytes_.insert(bytes_.end(), h, h + sizeof e);
        const auto *b = static_cast<const uint8_t *>(bytes);
        bytes_.insert(bytes_.end(), b, b + e.len);
        ++entries_;
    }

    void clear() {
        bytes_.clear();
        entries_ = 0;
    }

    bool listed = false;  // in the engine's list of batches a progress pass sends

private:
    std::vector<uint8_t> bytes_;
    uint32_t entries_ = 0;
};

}  // namespace rttcc
