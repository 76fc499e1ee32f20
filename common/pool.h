// A free-list pool of T that grows in blocks and never shrinks: get() and
// put() are O(1) and allocate only when every object is in use.
#pragma once
#include <algorithm>
#include <memory>
#include <vector>

#include "intrusive_list.h"

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

// Byte buffers of one size, reused (copies of small messages, reassembly).
class BufferPool {
public:
    explicit BufferPool(size_t size) : size_(size) {}
    size_t size() const { return size_; }
    uint8_t *get() {
        if (free_.empty()) {
            all_.push_back(std::make_unique<uint8_t[]>(size_));
            return all_.back().get();
        }
        uint8_t *b = free_.back();
        free_.pop_back();
        return b;
    }
    void put(uint8_t *b) { free_.push_back(b); }

private:
    size_t size_;                                // bytes per buffer
    std::vector<std::unique_ptr<uint8_t[]>> all_;  // every buffer ever made
    std::vector<uint8_t *> free_;                // buffers not in use
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
    BufferPool small_, large_;
};

}  // namespace rttcc
