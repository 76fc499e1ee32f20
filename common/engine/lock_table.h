// A window's lock for passive-target RMA (MPI_Win_lock): held shared by
// any number of processes or exclusively by one.  A request that cannot
// be granted at once waits, and waiters are granted in arrival order, so a
// waiting exclusive request holds back the shared ones behind it (writers
// do not starve):
//
//   held: {a shared} {b shared}     waiting: [c exclusive] [d shared] [e shared]
//   release(a), release(b)       -> c granted
//   release(c)                   -> d and e granted together
//
// Who holds or waits is a number: a peer's index, or kSelf for this
// process (which never waits: try_acquire).  A granted waiter comes back
// whole, so its owner can answer it (the engine puts a byte into its
// reply key).
#pragma once
#include <algorithm>
#include <cstdint>
#include <deque>
#include <vector>

namespace rttcc {

class LockTable {
public:
    static constexpr uint32_t kSelf = UINT32_MAX;  // this process (peers are < 2^24)

    struct Request {
        uint32_t who;        // peer index, or kSelf
        bool exclusive;
        uint32_t reply_key;  // where its grant is told (the engine's business)
        uint8_t reply_tag;
    };

    // Takes the lock for r, or queues r behind the waiters; true if granted now.
    bool acquire(const Request &r) {
        if (!waiting_.empty() || !compatible(r.exclusive)) {
            waiting_.push_back(r);
            return false;
        }
        holders_.push_back(r);
        return true;
    }

    // Takes the lock only if it is free for `exclusive` now and nobody waits.
    bool try_acquire(uint32_t who, bool exclusive) {
        if (!waiting_.empty() || !compatible(exclusive)) return false;
        holders_.push_back(Request{who, exclusive, 0, 0});
        return true;
    }

    // Gives back one hold of `who` (false if it holds none); the waiters
    // this lets in are appended to *granted, in order.
    bool release(uint32_t who, std::vector<Request> *granted) {
        for (size_t i = 0; i < holders_.size(); ++i)
            if (holders_[i].who == who) {
                holders_.erase(holders_.begin() + static_cast<std::ptrdiff_t>(i));
                grant_waiters(granted);
                return true;
            }
        return false;
    }

    // Forgets `who` (a dead peer): its holds and its waiting requests; the
    // waiters this lets in are appended to *granted.
    void forget(uint32_t who, std::vector<Request> *granted) {
        auto gone = [who](const Request &r) { return r.who == who; };
        holders_.erase(std::remove_if(holders_.begin(), holders_.end(), gone), holders_.end());
        waiting_.erase(std::remove_if(waiting_.begin(), waiting_.end(), gone), waiting_.end());
        grant_waiters(granted);
    }

    size_t holders() const { return holders_.size(); }
    size_t waiting() const { return waiting_.size(); }

private:
    bool compatible(bool exclusive) const {
        if (holders_.empty()) return true;
        return !exclusive && !holders_.front().exclusive;  // an exclusive holder is alone
    }
    void grant_waiters(std::vector<Request> *granted) {
        while (!waiting_.empty() && compatible(waiting_.front().exclusive)) {
            holders_.push_back(waiting_.front());
            granted->push_back(waiting_.front());
            waiting_.pop_front();
        }
    }

    std::vector<Request> holders_;  // hold it now
    std::deque<Request> waiting_;   // in arrival order
};

}  // namespace rttcc
