// Memory this process grants to one peer's one-sided puts (coll_rttcc's
// landing blocks, the replies of gets (btl_rttcc's, mtl_rttcc's), an RMA window's
// exposure).  A grant names its peer and its bytes; a put names a key and
// an offset, and lands only if its sender holds the key's grant and its
// bytes fit inside it.  A grant either tells its owner of each put that
// landed whole (on_put), or is silent: then nobody needs to hear of a put,
// so it may land while the application is away from MPI (the liveness
// agent lands it), which is what passive-target RMA needs.  An RMA
// window's exposures are silent grants that name their window: its
// requests (get, accumulate, lock, lookup) name one of them.  A dynamic
// window's memory is attached and detached while origins use it, so they
// name it by address instead: through its window key (expose_window),
// whose offsets are addresses of this process, found in the exposures of
// that window to that peer as they are when the request is served.
//
//   put_addr on the wire = key << 40 | offset   (offset < 2^40)
//   key: 24 bits, never 0, the next value of a counter that starts at a
//        random value and skips keys still granted.  A key comes back only
//        once the counter went round its 2^24 values: a put of an earlier
//        call (a retransmission on its way) finds its grant revoked, never
//        the grant of a later call.
//   slots_[key & (size - 1)]: at most one live grant each (the counter
//        skips a key whose slot is taken); size, a power of two, stays at
//        least twice the live grants.
#pragma once
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <unordered_map>
#include <vector>

#include "util/coverage.h"

namespace rttcc {

constexpr unsigned kPutOffsetBits = 40;
constexpr uint64_t kPutOffsetMask = (uint64_t{1} << kPutOffsetBits) - 1;
constexpr uint32_t kPutKeyMask = 0xffffffu;

inline uint64_t put_addr(uint32_t key, uint64_t offset) { return (uint64_t{key} << kPutOffsetBits) | offset; }
inline uint32_t put_key(uint64_t addr) { return static_cast<uint32_t>(addr >> kPutOffsetBits); }
inline uint64_t put_offset(uint64_t addr) { return addr & kPutOffsetMask; }

class GrantTable {
public:
    static constexpr size_t kMaxGrants = size_t{1} << 22;  // live at once (a quarter of the keys)

    // `first_key`: where the counter starts (the engine's CSPRNG draws it).
    explicit GrantTable(uint32_t first_key) : next_(first_key) {}

    struct Grant {
        uint32_t key = 0;        // its name on the wire; 0: a free slot
        uint32_t peer = 0;       // the only sender whose puts may land in it
        uint8_t *base = nullptr; // first byte
        size_t len = 0;          // bytes
        bool notify = true;      // on_put for each put that lands whole; else silent
        bool by_address = false; // a window key: its offsets are addresses (expose_window)
        uint32_t window = 0;     // an exposure of this RMA window (silent), or its window key; 0: none
    };

    // Grants [base, base + len) to `peer`'s puts, told of (`notify`) or
    // silent; returns its key, 0 when len is too large to address or
    // kMaxGrants are live.
    uint32_t grant(uint32_t peer, void *base, size_t len, bool notify = true) {
        return add(Grant{0, peer, static_cast<uint8_t *>(base), len, notify, false, 0});
    }
    // A silent grant that exposes RMA window `window` (not 0) to `peer`; 0
    // also when it overlaps an exposure of that window to that peer.
    uint32_t expose(uint32_t window, uint32_t peer, void *base, size_t len) {
        const auto at = reinterpret_cast<uintptr_t>(base);
        if (len == 0 || len > kPutOffsetMask || at + len < at || overlaps(owner(window, peer), at, len)) return 0;
        std::map<uint64_t, uint32_t> &keys = exposures_[owner(window, peer)];  // an empty map left is harmless
        const auto entry = keys.emplace(at, 0).first;
        uint32_t key = 0;
        try {
            key = add(Grant{0, peer, static_cast<uint8_t *>(base), len, false, false, window});
        } catch (...) {  // no memory to grow the slots: nothing exposed
            keys.erase(entry);
            throw;
        }
        if (key) {
            entry->second = key;
        } else {
            keys.erase(entry);
            if (keys.empty()) exposures_.erase(owner(window, peer));
        }
        return key;
    }
    // `peer`'s key to window `window` (not 0) by address: a request naming
    // it at offset `addr` reaches the exposure of that window to `peer`
    // holding addr when it is served (place()), whatever was detached and
    // attached since.
    uint32_t expose_window(uint32_t window, uint32_t peer) {
        return add(Grant{0, peer, nullptr, 0, false, true, window});
    }

    bool revoke(uint32_t key) {
        if (key == 0 || slots_.empty() || slot(key).key != key) return false;
        Grant &g = slot(key);
        if (g.window && !g.by_address) {
            const auto it = exposures_.find(owner(g.window, g.peer));
            it->second.erase(reinterpret_cast<uintptr_t>(g.base));
            if (it->second.empty()) exposures_.erase(it);
        }
        g = Grant{};
        --live_;
        return true;
    }

    // Grant `key` (any peer's, exposure or not), or nullptr.
    const Grant *find(uint32_t key) const {
        if (key == 0 || key > kPutKeyMask || slots_.empty()) return nullptr;
        const Grant &g = slots_[key & (slots_.size() - 1)];
        return g.key == key ? &g : nullptr;
    }

    // The exposure of `window` to `peer` that holds the bytes [addr, addr +
    // len) of this process, or nullptr.  (Its exposures do not overlap: the
    // one holding addr is the last that starts at or before it.)
    const Grant *exposure_holding(uint32_t window, uint32_t peer, uint64_t addr, uint64_t len) const {
        const auto it = exposures_.find(owner(window, peer));
        if (it == exposures_.end()) return nullptr;
        auto after = it->second.upper_bound(addr);
        if (after == it->second.begin()) return nullptr;
        const Grant &g = slots_[std::prev(after)->second & (slots_.size() - 1)];
        const uint64_t base = reinterpret_cast<uintptr_t>(g.base);
        return addr - base <= g.len && len <= g.len - (addr - base) ? &g : nullptr;
    }

    // Where `len` bytes at `offset` of grant `key` go, and the grant they
    // are in, if `peer` holds `key`: inside it; for a window key (offset an
    // address), inside the exposure of its window to `peer` that holds them
    // now.  Else nothing.
    struct Place {
        const Grant *grant = nullptr;
        uint8_t *at = nullptr;
    };
    Place place(uint32_t peer, uint32_t key, uint64_t offset, uint64_t len) const {
        if (key == 0 || slots_.empty()) return {};
        const Grant &g = slots_[key & (slots_.size() - 1)];
        if (g.key != key || g.peer != peer) return {};
        if (g.by_address) {
            const Grant *now = exposure_holding(g.window, peer, offset, len);
            if (!now) return {};
            return {now, now->base + (offset - reinterpret_cast<uintptr_t>(now->base))};
        }
        if (offset > g.len || len > g.len - offset) return {};
        return {&g, g.base + offset};
    }
    // A PUT packet's place: a window key names addresses, which a put's
    // 40-bit offset cannot hold; only requests reach memory through one.
    Place place_put(uint32_t peer, uint32_t key, uint64_t offset, uint64_t len) const {
        if (key == 0 || slots_.empty() || slots_[key & (slots_.size() - 1)].by_address) return {};
        return place(peer, key, offset, len);
    }
    uint8_t *target(uint32_t peer, uint32_t key, uint64_t offset, uint64_t len) const {
        return place(peer, key, offset, len).at;
    }

    size_t live() const { return live_; }

private:
    bool overlaps(uint64_t owner_key, uint64_t at, uint64_t len) const {
        const auto it = exposures_.find(owner_key);
        if (it == exposures_.end()) return false;
        const auto after = it->second.upper_bound(at + len - 1);  // len > 0: the first starting past the new one
        if (after == it->second.begin()) return false;
        const Grant &g = slots_[std::prev(after)->second & (slots_.size() - 1)];
        return reinterpret_cast<uintptr_t>(g.base) + g.len > at;
    }
    Grant &slot(uint32_t key) { return slots_[key & (slots_.size() - 1)]; }
    static uint64_t owner(uint32_t window, uint32_t peer) { return uint64_t{window} << 32 | peer; }

    uint32_t add(Grant g) {
        if (g.len > kPutOffsetMask || live_ == kMaxGrants) return 0;
        if (2 * (live_ + 1) > slots_.size()) grow();
        for (;;) {  // ends within slots_.size() steps: at least half the slots are free
            const uint32_t key = next_++ & kPutKeyMask;
            Grant &s = slot(key);
            if (key == 0 || s.key != 0) continue;
            g.key = key;
            s = g;
            ++live_;
            return key;
        }
    }

    // Doubles the slots.  Live keys stay apart: keys that differ modulo n
    // differ modulo 2n.
    void grow() {
        std::vector<Grant> old(slots_.empty() ? 16 : 2 * slots_.size());
        old.swap(slots_);
        for (const Grant &g : old)
            if (g.key) slot(g.key) = g;
    }

    std::vector<Grant> slots_;  // by key modulo their number; grows, never shrinks
    uint32_t next_;             // the key counter
    size_t live_ = 0;           // grants in slots_
    std::unordered_map<uint64_t, std::map<uint64_t, uint32_t>> exposures_;  // by (window, peer): keys by base
};

// The puts of one peer still arriving, by the sender's put id.  Every chunk
// was already found new by the receive window; one over bytes of its put
// that already landed (a peer that does not follow the protocol: a legal
// one cuts each byte once) is refused, so a put is whole exactly when each
// of its bytes landed once (coverage.h).
//
// A peer has at most `window` puts partly landed: it cuts its puts of more
// than one segment one after the other into its sequence space, and every
// partly landed put spans a sequence number in [next, next + window) of our
// receive window (one of its segments is missing, so at or after next, and
// one was accepted, so before next + window).  A put beyond that breaks the
// protocol: fits() refuses it.  Their holes are bounded the same way (at
// most window + 1 spans in all, as reassembly.h says for messages).
class PutArrivals {
public:
    enum class Step { kBad, kPartial, kComplete };
    struct Put {
        uint32_t msg_id;  // the sender's id of the put
        uint32_t len;     // its length
        uint64_t addr;    // its put_addr (key and offset of its first byte)
        uint8_t tag;      // the sender's tag
    };

    explicit PutArrivals(uint32_t window) : cap_(window), max_spans_(size_t{window} + 1) {}

    // Would add() take the `n` bytes at `offset` of this put?  (They agree
    // with its chunks so far and overlap none, or it is a new put and fewer
    // than `window` are partly landed; and the holes stay within bounds.)
    bool fits(uint32_t msg_id, uint32_t len, uint64_t addr, uint8_t tag, uint32_t offset, uint32_t n) const {
        return takes(find(msg_id), len, addr, tag, offset, n);
    }
    // Put `msg_id` would be one more than the peer may have partly landed.
    bool beyond_cap(uint32_t msg_id) const { return !find(msg_id) && active_ >= cap_; }

    // Counts the `n` bytes at `offset` of put `msg_id` (fits() said yes);
    // kBad if they contradict its earlier chunks or overlap bytes already
    // landed (then they must not land).  On kComplete, *done is the
    // finished put (already forgotten).
    Step add(uint32_t msg_id, uint32_t len, uint64_t addr, uint8_t tag, uint32_t offset, uint32_t n, Put *done) {
        Slot *s = find(msg_id);
        if (!takes(s, len, addr, tag, offset, n)) return Step::kBad;
        if (!s) s = open(Put{msg_id, len, addr, tag});
        spans_ += s->covered.add(offset, n);
        if (!s->covered.whole(len)) return Step::kPartial;
        *done = s->put;
        drop(static_cast<size_t>(s - slots_.data()));
        return Step::kComplete;
    }

    size_t active() const { return active_; }
    void clear() {
        while (active_) drop(active_ - 1);
    }

private:
    struct Slot {
        Put put;
        Coverage covered;  // its bytes landed so far
    };
    static bool same(const Put &p, uint32_t len, uint64_t addr, uint8_t tag) {
        return p.len == len && p.addr == addr && p.tag == tag;
    }
    // fits() for put s (nullptr: a new one).
    bool takes(const Slot *s, uint32_t len, uint64_t addr, uint8_t tag, uint32_t offset, uint32_t n) const {
        if (s ? !same(s->put, len, addr, tag) || s->covered.overlaps(offset, n) : active_ >= cap_) return false;
        return spans_ < max_spans_ || (s && s->covered.added_spans(offset, n) <= 0);
    }
    const Slot *find(uint32_t msg_id) const {
        for (size_t i = 0; i < active_; ++i)
            if (slots_[i].put.msg_id == msg_id) return &slots_[i];
        return nullptr;
    }
    Slot *find(uint32_t msg_id) { return const_cast<Slot *>(static_cast<const PutArrivals *>(this)->find(msg_id)); }
    Slot *open(const Put &put) {
        if (active_ == slots_.size()) slots_.emplace_back();  // slots are kept: no allocation once warm
        Slot &s = slots_[active_++];
        s.put = put;
        return &s;
    }
    // Forgets slot i's put; the last active slot takes its place.
    void drop(size_t i) {
        Slot &s = slots_[i];
        spans_ -= s.covered.spans();
        s.covered.reset();
        if (i != --active_) std::swap(s, slots_[active_]);
    }

    size_t cap_;               // the receive window: the most a peer may have partly landed
    size_t max_spans_;         // their spans at most, in all (window + 1)
    std::vector<Slot> slots_;  // [0, active_) hold puts partly landed; the rest keep their storage
    size_t active_ = 0;
    size_t spans_ = 0;         // spans of the active puts
};

}  // namespace rttcc
