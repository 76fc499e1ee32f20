// Shared by the fuzz targets: the input read as a stream of little-endian
// fields (zeros once it runs out), and a property check that traps.
#pragma once
#include <cstddef>
#include <cstdint>

namespace rttcc_fuzz {

struct Reader {
    const uint8_t *p;
    size_t n;
    bool empty() const { return n == 0; }
    uint8_t u8() {
        if (!n) return 0;
        --n;
        return *p++;
    }
    uint16_t u16() {
        const uint8_t lo = u8();
        return static_cast<uint16_t>(lo | u8() << 8);
    }
    uint32_t u32() {
        const uint16_t lo = u16();
        return lo | uint32_t{u16()} << 16;
    }
};

// A broken property: libFuzzer keeps the input as a crash.
inline void check(bool ok) {
    if (!ok) __builtin_trap();
}

}  // namespace rttcc_fuzz
