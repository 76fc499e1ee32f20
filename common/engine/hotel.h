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
#include <algorithm>
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
        if (deadline < earliest_) earliest_ = deadline;
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

    // Checks out every segment due at `now` and passes it to fn(seg).  fn
    // may check a segment in again, due already at most once a sweep (it is
    // then handed over again in this sweep or the next).
    template <typename F>
    void expire(nanos now, F &&fn) {
        const uint64_t until = now >> shift_;
        if (guests_ == 0 || now < earliest_) {  // nobody is due: no room to read
            cursor_ = until;
            return;
        }
        // Every guest left after this visit is due after `now` (one that fn
        // checks in sooner lowers it again): a pass before that reads no room.
        earliest_ = std::max(earliest_, now + 1);
        // Visit at most one full turn of rooms; later turns are caught next
        // time.  The cursor moves first: a guest fn checks in already due
        // goes to `until`'s room, which this visit or the next reads.
        const uint64_t first = cursor_;
        uint64_t last = until;
        if (last - first > mask_) last = first + mask_;
        cursor_ = until;
        for (uint64_t t = first; t <= last; ++t) {
            rooms_[t & mask_].for_each([&](TxSegment &seg) {
                if (seg.deadline <= now) {
                    check_out(seg);
                    fn(seg);
                }
            });
        }
    }

    // The earliest deadline of any guest (kNever when there is none).
    // earliest_ is at most that (check-outs only raise it; expire raises it
    // past the time it read up to), and a guest in
    // room t of the turn from cursor_ is due at t's tick or later (overdue
    // ones sit in cursor_'s room).  So the rooms are read in order from the
    // later of the two until the best deadline so far lies in a room
    // already read; the answer is kept as the next search's start.
    nanos next_deadline() {
        nanos best = kNever;
        if (guests_ == 0) return earliest_ = best;
        const uint64_t first = std::max<uint64_t>(cursor_, earliest_ >> shift_);
        for (uint64_t t = first; t <= first + mask_; ++t) {
            const Rooms &room = rooms_[t & mask_];
            for (const TxSegment *seg = room.front(); seg; seg = room.next(*seg))
                if (seg->deadline < best) best = seg->deadline;
            if ((best >> shift_) <= t) break;
        }
        return earliest_ = best;
    }

private:
    std::unique_ptr<Rooms[]> rooms_;  // the wheel
    uint64_t mask_;                   // rooms - 1
    unsigned shift_;                  // log2 of nanoseconds per room
    uint64_t cursor_ = 0;             // first tick not yet fully visited
    size_t guests_ = 0;               // segments checked in
    nanos earliest_ = kNever;         // no guest is due before this
};

}  // namespace rttcc
