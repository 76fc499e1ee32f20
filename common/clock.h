// The engine's time source: CLOCK_MONOTONIC in nanoseconds.  Time is read
// once per progress or send call and passed down, never read deep inside.
#pragma once
#include <cstdint>
#include <ctime>

namespace rttcc {

using nanos = uint64_t;

inline nanos monotonic_now() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<nanos>(ts.tv_sec) * 1000000000ull + static_cast<nanos>(ts.tv_nsec);
}

constexpr nanos usec(uint64_t us) { return us * 1000ull; }
constexpr nanos msec(uint64_t ms) { return ms * 1000000ull; }
constexpr double seconds(nanos t) { return static_cast<double>(t) / 1e9; }

}  // namespace rttcc
