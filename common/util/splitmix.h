// SplitMix64's finalizer: a fast, well-mixed 64-bit hash of a 64-bit key,
// for draws that must be random-looking yet the same for the same key.
#pragma once
#include <cstdint>

namespace rttcc {

inline uint64_t splitmix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

}  // namespace rttcc
