// MPI matching over intrusive lists of the caller's items (matcher.h).
#include "matcher/matcher.h"

#include <algorithm>
#include <new>

#include "util/seq.h"

namespace rttcc {

namespace {

// Would a receive for (src, tag) take an arrival from (a_src, a_tag)?
inline bool matches(int32_t src, int32_t tag, int32_t a_src, int32_t a_tag) {
    return (src == RTTCC_MATCH_ANY || src == a_src) && (tag == a_tag || (tag == RTTCC_MATCH_ANY && a_tag >= 0));
}

}  // namespace

template <typename T>
T *Matcher::grown(std::vector<T> &v, uint32_t i) {
    if (i >= RTTCC_MATCH_MAX_INDEX) return nullptr;
    try {
        v.resize(std::max<size_t>(i + 1, v.size() * 2));  // moves the queues: their lists relink
    } catch (const std::bad_alloc &) {
        return nullptr;
    }
    return &v[i];
}

template <typename P>
Matcher::Item *Matcher::take_first(Queue &q, P &&pred) {
    Item *i = q.find(pred);
    if (i) Queue::remove(*i);
    return i;
}

Matcher::Turn Matcher::in_order(uint32_t peer_index, uint32_t seq) {
    PeerOrder *o = peer(peer_index);
    if (!o) return Turn::kNoRoom;
    if (seq == o->expected) {
        ++o->expected;
        return Turn::kNow;
    }
    return seq_gt(seq, o->expected) ? Turn::kAhead : Turn::kBehind;
}

Matcher::Hold Matcher::hold(Item &a) {
    PeerOrder &o = peers_[a.peer];  // grown by in_order
    if (o.held >= max_held_per_peer_ || held_ >= max_held_) return Hold::kOverBound;
    Item *before = o.ahead.back();  // arrivals come mostly in order: found at once
    while (before && seq_gt(before->seq, a.seq)) before = o.ahead.prev(*before);
    if (before && before->seq == a.seq) return Hold::kDuplicate;
    o.ahead.insert_after(before, a);
    ++o.held;
    ++held_;
    return Hold::kHeld;
}

Matcher::Item *Matcher::release(uint32_t peer_index) {
    PeerOrder *o = find_peer(peer_index);
    Item *first = o ? o->ahead.front() : nullptr;
    if (!first || first->seq != o->expected) return nullptr;
    Queue::remove(*first);
    --o->held;
    --held_;
    ++o->expected;
    return first;
}

Matcher::Item *Matcher::take_posted(const Item &a) {
    CommQueues *c = find_comm(a.cid);
    return c ? take_first(c->posted, [&a](const Item &r) { return matches(r.src, r.tag, a.src, a.tag); })
             : nullptr;
}

Matcher::Added Matcher::add_unexpected(Item &a) {
    CommQueues *c = comm(a.cid);
    if (!c) return Added::kNoRoom;
    c->unexpected.push_back(a);
    return Added::kQueued;
}

Matcher::Item *Matcher::take_unexpected(const Item &r) {
    CommQueues *c = find_comm(r.cid);
    return c ? take_first(c->unexpected, [&r](const Item &a) { return matches(r.src, r.tag, a.src, a.tag); })
             : nullptr;
}

Matcher::Added Matcher::add_posted(Item &r) {
    CommQueues *c = comm(r.cid);
    if (!c) return Added::kNoRoom;
    c->posted.push_back(r);
    return Added::kQueued;
}

Matcher::Item *Matcher::find_unexpected(const Item &r) const {
    const CommQueues *c = find_comm(r.cid);
    return c ? c->unexpected.find([&r](const Item &a) { return matches(r.src, r.tag, a.src, a.tag); }) : nullptr;
}

// The receive's link says nothing unless it is queued, so the queue is searched.
bool Matcher::cancel(Item &r) {
    CommQueues *c = find_comm(r.cid);
    return c && take_first(c->posted, [&r](const Item &i) { return &i == &r; });
}

Matcher::Where Matcher::take_arrival(uint32_t cid, uint32_t peer_index, uint32_t seq, Item **out) {
    *out = nullptr;
    const PeerOrder *o = find_peer(peer_index);
    if (!o || !seq_lt(seq, o->expected)) return Where::kNotHandedOn;
    if (CommQueues *c = find_comm(cid))
        *out = take_first(c->unexpected, [=](const Item &a) { return a.peer == peer_index && a.seq == seq; });
    return *out ? Where::kUnexpected : Where::kMatched;
}

size_t Matcher::posted() const {
    size_t n = 0;
    for (const CommQueues &c : comms_) n += c.posted.size();
    return n;
}

size_t Matcher::unexpected() const {
    size_t n = 0;
    for (const CommQueues &c : comms_) n += c.unexpected.size();
    return n;
}

Matcher::Item *Matcher::pop_arrival() {
    for (CommQueues &c : comms_)
        if (Item *a = c.unexpected.pop_front()) return a;
    for (PeerOrder &o : peers_)
        if (Item *a = o.ahead.pop_front()) {
            --o.held;
            --held_;
            return a;
        }
    return nullptr;
}

Matcher::Item *Matcher::pop_unexpected(uint32_t cid) {
    CommQueues *c = find_comm(cid);
    return c ? c->unexpected.pop_front() : nullptr;
}

}  // namespace rttcc
