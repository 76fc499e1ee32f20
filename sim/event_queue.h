// rttcc_sim's clock and agenda: a discrete-event queue in virtual time.
// Events at the same instant run in the order they were scheduled, so a
// run is a function of its inputs and seed alone.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "clock/clock.h"

namespace rttcc::sim {

// What an event wakes: arg says which of the target's events it is.
class EventTarget {
public:
    virtual void fire(nanos now, uint64_t arg) = 0;

protected:
    ~EventTarget() = default;
};

class EventQueue {
public:
    nanos now() const { return now_; }
    uint64_t executed() const { return executed_; }
    size_t pending() const { return heap_.size(); }

    // Schedules target->fire(at, arg); `at` in the past means now.
    void at(nanos when, EventTarget *target, uint64_t arg = 0) {
        heap_.push_back({std::max(when, now_), seq_++, target, arg});
        std::push_heap(heap_.begin(), heap_.end(), Later{});
    }
    void after(nanos delay, EventTarget *target, uint64_t arg = 0) { at(now_ + delay, target, arg); }

    // Runs the earliest event; false when there is none.
    bool step() {
        if (heap_.empty()) return false;
        std::pop_heap(heap_.begin(), heap_.end(), Later{});
        const Event e = heap_.back();
        heap_.pop_back();
        now_ = e.at;
        ++executed_;
        e.target->fire(now_, e.arg);
        return true;
    }
    // Runs every event up to `limit`, then stands at `limit`.
    void run_until(nanos limit) {
        while (!heap_.empty() && heap_.front().at <= limit) step();
        now_ = std::max(now_, limit);
    }

private:
    struct Event {
        nanos at;
        uint64_t seq;
        EventTarget *target;
        uint64_t arg;
    };
    struct Later {  // a max-heap of "later" is a min-heap of time, then of order
        bool operator()(const Event &a, const Event &b) const {
            return a.at != b.at ? a.at > b.at : a.seq > b.seq;
        }
    };
    std::vector<Event> heap_;
    nanos now_ = 0;
    uint64_t seq_ = 0, executed_ = 0;
};

}  // namespace rttcc::sim
