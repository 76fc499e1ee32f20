// Memory this process exposes to one-sided puts (coll_rttcc's receive
// buffers).  A key names a region; a put names its key and an offset, and
// lands only inside the region it names.
//
//   key: 24 random bits, never 0, not reused while its region is exposed
//   put_addr on the wire = key << 40 | offset   (offset < 2^40)
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace rttcc {

constexpr unsigned kPutOffsetBits = 40;
constexpr uint64_t kPutOffsetMask = (uint64_t{1} << kPutOffsetBits) - 1;
constexpr uint32_t kPutKeyMask = 0xffffffu;

inline uint64_t put_addr(uint32_t key, uint64_t offset) { return (uint64_t{key} << kPutOffsetBits) | offset; }
inline uint32_t put_key(uint64_t addr) { return static_cast<uint32_t>(addr >> kPutOffsetBits); }
inline uint64_t put_offset(uint64_t addr) { return addr & kPutOffsetMask; }

class RegionTable {
public:
    // Exposes [base, base + len); returns its key, 0 when len is too large.
    // Keys are drawn by `draw` (the engine's CSPRNG: a put cannot guess one).
    template <typename Draw>
    uint32_t expose(void *base, size_t len, Draw &&draw) {
        if (len > kPutOffsetMask) return 0;
        uint32_t key;
        do key = draw() & kPutKeyMask;
        while (key == 0 || find(key));
        regions_.push_back(Region{key, static_cast<uint8_t *>(base), len});
        return key;
    }

    bool unexpose(uint32_t key) {
        for (auto &r : regions_)
            if (r.key == key) {
                r = regions_.back();
                regions_.pop_back();
                return true;
            }
        return false;
    }

    // Where `len` bytes at `offset` of region `key` go; nullptr if the key is
    // unknown or the bytes do not fit inside the region.
    uint8_t *target(uint32_t key, uint64_t offset, uint64_t len) const {
        const Region *r = find(key);
        if (!r || offset > r->len || len > r->len - offset) return nullptr;
        return r->base + offset;
    }

    size_t exposed() const { return regions_.size(); }

private:
    struct Region {
        uint32_t key;   // its name on the wire
        uint8_t *base;  // first byte
        size_t len;     // bytes
    };
    const Region *find(uint32_t key) const {
        for (const auto &r : regions_)
            if (r.key == key) return &r;
        return nullptr;
    }

    std::vector<Region> regions_;  // exposed now (a handful: one per collective in flight)
};

// The puts of one peer still arriving, by the sender's put id.  Every chunk
// was already found new by the receive window, so none counts twice.
class PutArrivals {
public:
    enum class Step { kBad, kPartial, kComplete };
    struct Put {
        uint32_t msg_id;  // the sender's id of the put
        uint32_t len;     // its length
        uint32_t filled;  // bytes landed so far
        uint64_t addr;    // its put_addr (key and offset of its first byte)
        uint8_t tag;      // the sender's tag
    };

    // Would add() take a chunk of this put?  (It agrees with its chunks so far.)
    bool fits(uint32_t msg_id, uint32_t len, uint64_t addr, uint8_t tag) const {
        for (const auto &p : active_)
            if (p.msg_id == msg_id) return p.len == len && p.addr == addr && p.tag == tag;
        return true;
    }

    // Counts `n` bytes of put `msg_id`; kBad if they contradict its earlier
    // chunks.  On kComplete, *done is the finished put (already forgotten).
    Step add(uint32_t msg_id, uint32_t len, uint64_t addr, uint8_t tag, uint32_t n, Put *done) {
        Put *p = find(msg_id);
        if (!p) {
            active_.push_back(Put{msg_id, len, 0, addr, tag});
            p = &active_.back();
        } else if (p->len != len || p->addr != addr || p->tag != tag) {
            return Step::kBad;
        }
        p->filled += n;
        if (p->filled < p->len) return Step::kPartial;
        *done = *p;
        *p = active_.back();
        active_.pop_back();
        return Step::kComplete;
    }

    size_t active() const { return active_.size(); }
    void clear() { active_.clear(); }

private:
    Put *find(uint32_t msg_id) {
        for (auto &p : active_)
            if (p.msg_id == msg_id) return &p;
        return nullptr;
    }
    std::vector<Put> active_;  // puts partly landed (a few at a time)
};

}  // namespace rttcc
