// The smallest value seen over the last one to two spans of time: two
// buckets, the current one and the one before; a new span retires the
// older.  Used for the floor of a one-way delay, which must follow a slow
// drift between two clocks (the window forgets an old minimum) and outlast
// a queue that stands for a while (it remembers a span back).
#pragma once
#include <algorithm>
#include <cstdint>

namespace rttcc {

class WindowedMin {
public:
    explicit WindowedMin(int64_t span) : span_(span) {}

    void add(int64_t value, int64_t now) {
        if (!any_ || now - started_ >= span_) {
            older_ = any_ && now - started_ < 2 * span_ ? current_ : value;
            current_ = value;
            started_ = now;
            any_ = true;
        } else {
            current_ = std::min(current_, value);
        }
    }
    int64_t min() const { return std::min(current_, older_); }

private:
    int64_t span_;
    int64_t started_ = 0;  // when the current bucket began
    int64_t current_ = 0, older_ = 0;
    bool any_ = false;
};

}  // namespace rttcc
