// The engine's time source: CLOCK_MONOTONIC in nanoseconds, unless the
// engine is given a Clock of its own (tests: a clock they move).  Time is
// read once per progress or send call and passed down, never read deep inside.
#pragma once
#include <cstdint>
#include <ctime>

namespace rttcc {

using nanos = uint64_t;
constexpr nanos kNever = ~nanos{0};  // a deadline that never comes

inline nanos monotonic_now() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<nanos>(ts.tv_sec) * 1000000000ull + static_cast<nanos>(ts.tv_nsec);
}

// Where an engine reads the time; any thread may read it.
class Clock {
public:
    virtual nanos now() const = 0;

protected:
    ~Clock() = default;
};

// CLOCK_MONOTONIC: every engine's clock unless it is given another.
inline const Clock &monotonic_clock() {
    static const struct Monotonic final : Clock {
        nanos now() const override { return monotonic_now(); }
    } clock;
    return clock;
}

constexpr nanos usec(uint64_t us) { return us * 1000ull; }
constexpr nanos msec(uint64_t ms) { return ms * 1000000ull; }
constexpr double seconds(nanos t) { return static_cast<double>(t) / 1e9; }

}  // namespace rttcc
