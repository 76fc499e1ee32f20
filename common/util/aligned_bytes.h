// Zeroed bytes that start on a cache line, cut into slots that do too.
// The kernel copies a received datagram or GRO buffer out with rep movsb.
// When the destination lies a few bytes past the source within their pages
// (4K aliasing: the loads wait on stores they only seem to depend on), the
// copy runs at a third of its speed; the kernel's buffers start on a page,
// and malloc puts a large block 16 bytes into one.  A 64 KiB GRO buffer
// took the receiving kernel 24 us into a malloc'd ring and 11 us into this
// (tools/engine_cost); page offsets 8 and 16 were slow, 0 and 32 to 2048 not.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

namespace rttcc {

class AlignedBytes {
public:
    static constexpr size_t kLine = 64;

    // Bytes between the starts of slots that hold `bytes` each.
    static constexpr size_t stride(size_t bytes) { return (bytes + kLine - 1) / kLine * kLine; }

    AlignedBytes() = default;
    // `n` zeroed bytes, or throws std::bad_alloc as a vector would.
    explicit AlignedBytes(size_t n) : size_(n) {
        const size_t rounded = stride(n ? n : 1);  // aligned_alloc wants a multiple of the alignment
        bytes_.reset(static_cast<uint8_t *>(std::aligned_alloc(kLine, rounded)));
        if (!bytes_) throw std::bad_alloc();
        std::memset(bytes_.get(), 0, rounded);
    }
    uint8_t *data() { return bytes_.get(); }
    const uint8_t *data() const { return bytes_.get(); }
    size_t size() const { return size_; }

private:
    struct Free {
        void operator()(uint8_t *p) const { std::free(p); }
    };
    std::unique_ptr<uint8_t[], Free> bytes_;
    size_t size_ = 0;
};

}  // namespace rttcc
