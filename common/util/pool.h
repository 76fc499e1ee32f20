// A free-list pool of T that grows in blocks and never shrinks: get() and
// put() are O(1) and allocate only when every object is in use.
#pragma once
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <vector>

#include "util/aligned_bytes.h"
#include "util/intrusive_list.h"

namespace rttcc {

// T must have a `Link link` member (used for the free list while free).
template <typename T>
class Pool {
public:
    explicit Pool(size_t block = 256) : block_(block) {}
    Pool(const Pool &) = delete;
    Pool &operator=(const Pool &) = delete;

    T *get() {
        if (free_.empty()) grow();
        T *t = free_.pop_front();
        ++in_use_;
        return t;
    }
    void put(T *t) {
        *t = T{};
        free_.push_front(*t);
        --in_use_;
    }
    size_t in_use() const { return in_use_; }

private:
    void grow() {
        blocks_.push_back(std::make_unique<T[]>(block_));
        T *b = blocks_.back().get();
        for (size_t i = 0; i < block_; ++i) free_.push_back(b[i]);
    }

    size_t block_;                           // objects per block
    std::vector<std::unique_ptr<T[]>> blocks_;  // storage, never freed before the pool
    List<T, &T::link> free_;                 // objects not in use
    size_t in_use_ = 0;                      // objects handed out
};

// Whole-message buffers for chunked receives: power-of-two size classes
// from 64 KiB up to the largest message, so a message holds about its own
// length, not the largest one's.  At most `cap` bytes are out at once (get()
// says no beyond it: the caller then leaves the message for later) and at
// most kKeep free buffers of a class are kept for reuse; the rest go back
// to the system.  Buffers are not zeroed: every byte is written before it
// is read.  They start on a cache line, as the copy buffers below: a copy
// whose destination lies 1 to 31 bytes past its source within their pages
// runs up to 15 times slower (util/aligned_bytes.h), and the sources are
// mostly user buffers on a page or 16 bytes into one (malloc).
class BufferPool {
public:
    static constexpr size_t kSmallest = 64 * 1024;
    static constexpr size_t kKeep = 4;

    BufferPool(size_t largest, size_t cap) : largest_(largest), cap_(cap) {}
    size_t in_use() const { return in_use_; }
    size_t held() const { return held_; }  // in use and kept free

    // Bytes a buffer for `len` takes (0 if none can hold it).
    size_t class_size(size_t len) const {
        if (len > largest_) return 0;
        size_t c = kSmallest;
        while (c < len) c <<= 1;
        return std::min(c, std::max(largest_, kSmallest));
    }
    bool can_get(size_t len) const {
        const size_t c = class_size(len);
        return c && in_use_ + c <= cap_;
    }
    // A buffer of at least `len` bytes, or nullptr (too large, or over the cap).
    uint8_t *get(size_t len) {
        if (!can_get(len)) return nullptr;
        const size_t c = class_size(len);
        std::vector<Block> &f = free_[index(c)];
        Block b;
        if (f.empty()) {
            b.reset(AlignedBytes::allocate(c));
            if (!b) return nullptr;
            held_ += c;
        } else {
            b = std::move(f.back());
            f.pop_back();
        }
        in_use_ += c;
        return b.release();
    }
    // Returns a buffer get(len) gave, with the same len.
    void put(uint8_t *buf, size_t len) {
        const size_t c = class_size(len);
        in_use_ -= c;
        std::vector<Block> &f = free_[index(c)];
        if (f.size() < kKeep) {
            f.emplace_back(buf);
        } else {
            std::free(buf);
            held_ -= c;
        }
    }

private:
    struct Free {
        void operator()(uint8_t *p) const { std::free(p); }
    };
    using Block = std::unique_ptr<uint8_t, Free>;
    static size_t index(size_t c) {
        size_t i = 0;
        for (size_t s = kSmallest; s < c; s <<= 1) ++i;
        return i;
    }

    size_t largest_;                 // largest message
    size_t cap_;                     // most bytes out at once
    size_t in_use_ = 0;              // bytes out now
    size_t held_ = 0;                // bytes allocated (out and kept)
    std::vector<Block> free_[32];    // kept free buffers per class
};

// Fixed-size buffers on cache lines, reused and never returned (copies of
// small messages: as many as the send windows hold).
class BlockPool {
public:
    explicit BlockPool(size_t size) : size_(size) {}
    size_t size() const { return size_; }
    uint8_t *get() {
        if (free_.empty()) {
            all_.emplace_back(size_);
            return all_.back().data();
        }
        uint8_t *b = free_.back();
        free_.pop_back();
        return b;
    }
    void put(uint8_t *b) { free_.push_back(b); }

private:
    size_t size_;                                  // bytes per buffer
    std::vector<AlignedBytes> all_;                // every buffer ever made
    std::vector<uint8_t *> free_;                  // buffers not in use
};

// Copies of small messages, in two sizes: a message of at most kSmall bytes
// takes a small buffer, so that a storm of tiny messages does not hold
// inline_max bytes each.
class InlinePool {
public:
    static constexpr size_t kSmall = 1024;
    explicit InlinePool(size_t inline_max) : small_(std::min(kSmall, inline_max)), large_(inline_max) {}
    uint8_t *get(size_t len) { return len <= small_.size() ? small_.get() : large_.get(); }
    void put(uint8_t *b, size_t len) { (len <= small_.size() ? small_ : large_).put(b); }

private:
    BlockPool small_, large_;
};

}  // namespace rttcc
