// Zeroed bytes that start on a cache line, cut into slots that do too.
// A large copy (the kernel's into a receive slot, glibc's memcpy) runs with
// rep movsb, and on this x86 a destination 1 to 31 bytes past its source
// within their pages runs it up to 15 times slower (4K aliasing: the loads
// wait on stores they only seem to depend on).  Sources mostly start on a
// page (the kernel's buffers, OSU's) or 16 bytes into one (malloc's large
// blocks), so a line-aligned destination is never just past them.
// Measured: glibc memcpy of 64 KiB, 1.3 us, or 24-30 us at 8-24 bytes past;
// the kernel's copy of a 64 KiB GRO buffer into a malloc'd ring 24 us, into
// this 11 us (tools/engine_cost).
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

    // At least `n` bytes on a line, not zeroed, for std::free; nullptr if
    // there is no memory.
    static uint8_t *allocate(size_t n) {
        return static_cast<uint8_t *>(std::aligned_alloc(kLine, stride(n ? n : 1)));  // a multiple of the alignment
    }

    AlignedBytes() = default;
    // `n` zeroed bytes, or throws std::bad_alloc as a vector would.
    explicit AlignedBytes(size_t n) : bytes_(allocate(n)), size_(n) {
        if (!bytes_) throw std::bad_alloc();
        std::memset(bytes_.get(), 0, n);
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
