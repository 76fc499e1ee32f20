// memcpy that steers clear of 4K aliasing (aligned_bytes.h): when the
// destination lies 1 to 31 bytes past the source within their pages, a
// large memcpy (rep movsb) runs up to 15 times slower, so such a copy goes
// in pieces small enough for memcpy's vector moves (64 KiB at 8-24 bytes
// past: 24-30 us in one call, 1.5-2 us in 1 KiB pieces).  For copies into
// memory the engine does not place: user buffers (puts, get replies) and
// whole-message buffers filled from datagrams.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace rttcc {

inline void copy_bytes(void *dst, const void *src, size_t n) {
    // glibc's rep movsb threshold is 2 KiB (SSE2) or 4 KiB (AVX): shorter
    // copies, as a segment's at MTU 1500, never meet the slow case.
    constexpr size_t kVectorOnly = 2047, kPiece = 1024;
    const uintptr_t past = (reinterpret_cast<uintptr_t>(dst) - reinterpret_cast<uintptr_t>(src)) & 4095;
    if (n <= kVectorOnly || past == 0 || past >= 32) {
        std::memcpy(dst, src, n);
        return;
    }
    auto *d = static_cast<uint8_t *>(dst);
    const auto *s = static_cast<const uint8_t *>(src);
    for (size_t at = 0; at < n; at += kPiece) std::memcpy(d + at, s + at, std::min(kPiece, n - at));
}

}  // namespace rttcc
