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
// reply key, or applies the batch a lazy lock brought: rttcc_rma_lock_batch).
#pragma once
#include <algorithm>
#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

namespace rttcc {

class LockTable {
public:
    static constexpr uint32_t kSelf = UINT32_MAX;  // this process (peers are < 2^24)

    struct Request {
        Request(uint32_t who_, bool exclusive_, uint32_t reply_key_, uint8_t reply_tag_, uint32_t window_ = 0,
                uint32_t entries_ = 0)
            : who(who_), exclusive(exclusive_), reply_key(reply_key_), reply_tag(reply_tag_), window(window_),
              entries(entries_) {}
        uint32_t who;        // peer index, or kSelf
        bool exclusive;
        uint32_t reply_key;  // where its grant is told (the engine's business)
        uint8_t reply_tag;
        uint32_t window;             // the engine's: the window this table locks
        uint32_t entries;            // a lazy lock's batch (rma_batch.h), applied once granted
        std::vector<uint8_t> batch;  //   (empty for a plain lock request)
    };

    // Would a request for `exclusive` be granted now?
    bool free_for(bool exclusive) const { return waiting_.empty() && compatible(exclusive); }

    // Takes the lock for r, or queues r behind the waiters; true if granted now.
    bool acquire(Request r) {
        if (!free_for(r.exclusive)) {
            waiting_.push_back(std::move(r));
            return false;
        }
        holders_.push_back(holder(r));
        return true;
    }

    // Takes the lock only if it is free for `exclusive` now and nobody waits.
    bool try_acquire(uint32_t who, bool exclusive) {
        if (!free_for(exclusive)) return false;
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
    // A holder keeps who it is, not the batch it brought (the grant takes that).
    static Request holder(const Request &r) { return Request{r.who, r.exclusive, r.reply_key, r.reply_tag, r.window}; }
    void grant_waiters(std::vector<Request> *granted) {
        while (!waiting_.empty() && compatible(waiting_.front().exclusive)) {
            holders_.push_back(holder(waiting_.front()));
            granted->push_back(std::move(waiting_.front()));
            waiting_.pop_front();
        }
    }

    std::vector<Request> holders_;  // hold it now
    std::deque<Request> waiting_;   // in arrival order
};

}  // namespace rttcc
