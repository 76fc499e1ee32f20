// MPI matching for mtl_rttcc over the caller's items (include/rttcc/matcher.h
// says what it does; api/matcher.cc is its C face).  Queues are kept per
// communicator (by context id, which Open MPI keeps small and dense) and per
// sending peer; a match scans its queue in order, as MPI's ordering rules
// need when wildcards are posted.  The queues are intrusive lists through the
// items' links: nothing is allocated per message, only a communicator's or a
// peer's queues on first use.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "rttcc/matcher.h"
#include "util/intrusive_list.h"

namespace rttcc {

class Matcher {
public:
    using Item = rttcc_match_item_t;
    // The values are the C API's (rttcc_matcher_in_order, _hold, _add_*, _take_arrival).
    enum class Turn : int { kNow = 1, kAhead = 0, kBehind = -1, kNoRoom = -2 };
    enum class Added : int { kQueued = 0, kNoRoom = -1 };  // no room: a context id out of range, or no memory
    enum class Hold : int { kHeld = 0, kOverBound = -1, kDuplicate = -2 };
    enum class Where : int { kUnexpected = 1, kMatched = 0, kNotHandedOn = -1 };

    Matcher(size_t max_held_per_peer, size_t max_held)
        : max_held_per_peer_(max_held_per_peer), max_held_(max_held) {}
    Matcher(const Matcher &) = delete;
    Matcher &operator=(const Matcher &) = delete;

    // Arrival ordering, per sending peer (kNow consumes seq).
    Turn in_order(uint32_t peer, uint32_t seq);
    Hold hold(Item &arrival);  // after in_order said kAhead
    Item *release(uint32_t peer);

    // Matching.
    Item *take_posted(const Item &arrival);
    Added add_unexpected(Item &arrival);
    Item *take_unexpected(const Item &recv);
    Added add_posted(Item &recv);
    Item *find_unexpected(const Item &recv) const;
    bool cancel(Item &recv);
    Where take_arrival(uint32_t cid, uint32_t peer, uint32_t seq, Item **out);

    // Items queued.  posted() and unexpected() walk the queues (off the hot path).
    size_t posted() const;
    size_t unexpected() const;
    size_t held() const { return held_; }
    Item *pop_arrival();
    Item *pop_unexpected(uint32_t cid);

private:
    using Queue = BasicList<Item, rttcc_match_link_t, &Item::link>;
    struct CommQueues {
        Queue posted, unexpected;
    };
    struct PeerOrder {
        uint32_t expected = 0;  // next sequence number to hand on
        size_t held = 0;        // in `ahead`
        Queue ahead;            // arrivals ahead of it, ascending seq
    };

    // Looking up never allocates; making may, and says no with nullptr (no
    // exception leaves the C interface).
    const CommQueues *find_comm(uint32_t cid) const { return cid < comms_.size() ? &comms_[cid] : nullptr; }
    CommQueues *find_comm(uint32_t cid) { return cid < comms_.size() ? &comms_[cid] : nullptr; }
    const PeerOrder *find_peer(uint32_t peer) const { return peer < peers_.size() ? &peers_[peer] : nullptr; }
    PeerOrder *find_peer(uint32_t peer) { return peer < peers_.size() ? &peers_[peer] : nullptr; }
    CommQueues *comm(uint32_t cid) {
        CommQueues *c = find_comm(cid);
        return c ? c : grown(comms_, cid);
    }
    PeerOrder *peer(uint32_t peer) {
        PeerOrder *o = find_peer(peer);
        return o ? o : grown(peers_, peer);
    }
    template <typename T>
    static T *grown(std::vector<T> &v, uint32_t i);  // v[i], v grown to hold it
    // The first item of q for which pred holds, dequeued; or nullptr.
    template <typename P>
    static Item *take_first(Queue &q, P &&pred);

    std::vector<CommQueues> comms_;  // by context id, grown on first use
    std::vector<PeerOrder> peers_;   // by engine index, grown on first use
    size_t held_ = 0;                // arrivals held, all peers
    const size_t max_held_per_peer_, max_held_;
};

}  // namespace rttcc
