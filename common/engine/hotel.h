// The retransmission hotel: one timer wheel per engine holding every
// segment in flight.  check_in starts a segment's timer, check_out stops it
// (ACKed, or taken out for a resend), expire() hands over those whose
// deadline passed.  O(1) check-in and check-out, no allocation.
//
//   room = (deadline >> tick_shift) & (rooms - 1)
//
//   cursor ----> rooms are visited in order as time passes; a segment whose
//   deadline lies more than one turn ahead simply stays in its room until a
//   later turn finds it due.
#pragma once
#include <cassert>
#include <cstdint>
#include <memory>

#include "clock/clock.h"
#include "util/intrusive_list.h"
#include "engine/segment.h"

namespace rttcc {

class Hotel {
public:
    using Rooms = List<TxSegment, &TxSegment::link>;

    // rooms: power of two; tick: 2^tick_shift ns per room.
    explicit Hotel(uint32_t rooms = 4096, unsigned tick_shift = 14 /* 16.4 us */)
        : rooms_(std::make_unique<Rooms[]>(rooms)), mask_(rooms - 1), shift_(tick_shift) {
        assert(rooms && (rooms & (rooms - 1)) == 0);
    }

    void start(nanos now) { cursor_ = now >> shift_; }
    size_t guests() const { return guests_; }

    void check_in(TxSegment &seg, nanos deadline) {
        seg.deadline = deadline;
        seg.in_hotel = true;
        uint64_t tick = deadline >> shift_;
        if (tick < cursor_) tick = cursor_;  // already due: the next expire() finds it
        rooms_[tick & mask_].push_back(seg);
        ++guests_;
    }

    void check_out(TxSegment &seg) {
        assert(seg.in_hotel && seg.link.linked());
        Rooms::remove(seg);
        seg.in_hotel = false;
        --guests_;
    }

    // Checks out every segment due at `now` and passes it to fn(seg).
    template <typename F>
    void expire(nanos now, F &&fn) {
        const uint64_t until = now >> shift_;
        if (guests_ == 0) {
            cursor_ = until;
            return;
        }
        // Visit at most one full turn of rooms; later turns are caught next time.
        uint64_t last = until;
        if (last - cursor_ > mask_) last = cursor_ + mask_;
        for (uint64_t t = cursor_; t <= last; ++t) {
            rooms_[t & mask_].for_each([&](TxSegment &seg) {
                if (seg.deadline <= now) {
                    check_out(seg);
                    fn(seg);
                }
            });
        }
        cursor_ = until;
    }

private:
    std::unique_ptr<Rooms[]> rooms_;  // the wheel
    uint64_t mask_;                   // rooms - 1
    unsigned shift_;                  // log2 of nanoseconds per room
    uint64_t cursor_ = 0;             // first tick not yet fully visited
    size_t guests_ = 0;               // segments checked in
};

}  // namespace rttcc
