// rttcc_match.h: MPI matching over intrusive lists of the caller's items.
// Lists are per communicator (indexed by context id, which Open MPI keeps
// small and dense); a match scans its list in order, as MPI's ordering
// rules need when wildcards are posted.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <new>
#include <vector>

#include "rttcc/matcher.h"
#include "util/seq.h"

namespace {

using Item = rttcc_match_item_t;

class ItemList {
public:
    Item *front() const { return head_; }
    Item *back() const { return tail_; }
    size_t size() const { return size_; }
    void push_back(Item *i) { insert_before(nullptr, i); }
    // Inserts i before `at` (at the end when at is null).
    void insert_before(Item *at, Item *i) {
        i->next = at;
        i->prev = at ? at->prev : tail_;
        (i->prev ? i->prev->next : head_) = i;
        (at ? at->prev : tail_) = i;
        ++size_;
    }
    void erase(Item *i) {
        (i->prev ? i->prev->next : head_) = i->next;
        (i->next ? i->next->prev : tail_) = i->prev;
        i->prev = i->next = nullptr;
        --size_;
    }
    bool contains(const Item *i) const {
        for (const Item *p = head_; p; p = p->next)
            if (p == i) return true;
        return false;
    }
    template <typename Pred>
    Item *take_first(Pred pred) {
        for (Item *p = head_; p; p = p->next)
            if (pred(*p)) {
                erase(p);
                return p;
            }
        return nullptr;
    }

private:
    Item *head_ = nullptr, *tail_ = nullptr;
    size_t size_ = 0;
};

// Would a receive for (src, tag) take an arrival from (a_src, a_tag)?
inline bool matches(int32_t src, int32_t tag, int32_t a_src, int32_t a_tag) {
    return (src == RTTCC_MATCH_ANY || src == a_src) && (tag == a_tag || (tag == RTTCC_MATCH_ANY && a_tag >= 0));
}

struct CommQueues {
    ItemList posted, unexpected;
};

struct PeerOrder {
    uint32_t expected = 0;  // next sequence number to hand on
    ItemList held;          // arrivals ahead of it, ascending seq
};

}  // namespace

struct rttcc_matcher {
    rttcc_matcher(size_t per_peer, size_t all) : max_held_per_peer(per_peer), max_held(all) {}

    std::vector<CommQueues> comms;  // by context id, grown on first use
    std::vector<PeerOrder> peers;   // by engine index, grown on first use
    size_t held = 0;
    const size_t max_held_per_peer, max_held;

    // Looking up never allocates; adding may, and reports running out of
    // memory as nullptr (no exception leaves the C interface).
    CommQueues *find_comm(uint32_t cid) { return cid < comms.size() ? &comms[cid] : nullptr; }
    CommQueues *comm(uint32_t cid) { return grow(comms, cid); }
    PeerOrder *peer(uint32_t p) { return grow(peers, p); }

    template <typename T>
    static T *grow(std::vector<T> &v, uint32_t i) {
        if (i >= RTTCC_MATCH_MAX_INDEX) return nullptr;
        try {
            if (i >= v.size()) v.resize(std::max<size_t>(i + 1, v.size() * 2));
        } catch (...) {
            return nullptr;
        }
        return &v[i];
    }
};

extern "C" {

rttcc_matcher_t *rttcc_matcher_create(size_t max_held_per_peer, size_t max_held) {
    return new (std::nothrow) rttcc_matcher(max_held_per_peer, max_held);
}

void rttcc_matcher_destroy(rttcc_matcher_t *m) { std::unique_ptr<rttcc_matcher> owned(m); }

int rttcc_matcher_in_order(rttcc_matcher_t *m, uint32_t peer, uint32_t seq) {
    PeerOrder *o = m->peer(peer);
    if (!o) return -2;
    if (seq == o->expected) {
        ++o->expected;
        return 1;
    }
    return rttcc::seq_gt(seq, o->expected) ? 0 : -1;
}

int rttcc_matcher_hold(rttcc_matcher_t *m, rttcc_match_item_t *a) {
    PeerOrder &o = m->peers[a->peer];  // made by rttcc_matcher_in_order
    if (o.held.size() >= m->max_held_per_peer || m->held >= m->max_held) return -1;
    Item *before = o.held.back();  // arrivals come mostly in order: found at once
    while (before && rttcc::seq_gt(before->seq, a->seq)) before = before->prev;
    if (before && before->seq == a->seq) return -2;
    o.held.insert_before(before ? before->next : o.held.front(), a);
    ++m->held;
    return 0;
}

rttcc_match_item_t *rttcc_matcher_release(rttcc_matcher_t *m, uint32_t peer) {
    if (peer >= m->peers.size()) return nullptr;
    PeerOrder &o = m->peers[peer];
    Item *first = o.held.front();
    if (!first || first->seq != o.expected) return nullptr;
    o.held.erase(first);
    --m->held;
    ++o.expected;
    return first;
}

rttcc_match_item_t *rttcc_matcher_take_posted(rttcc_matcher_t *m, const rttcc_match_item_t *a) {
    CommQueues *c = m->find_comm(a->cid);
    return c ? c->posted.take_first([a](const Item &r) { return matches(r.src, r.tag, a->src, a->tag); }) : nullptr;
}

int rttcc_matcher_add_unexpected(rttcc_matcher_t *m, rttcc_match_item_t *a) {
    CommQueues *c = m->comm(a->cid);
    if (!c) return -1;
    c->unexpected.push_back(a);
    return 0;
}

rttcc_match_item_t *rttcc_matcher_take_unexpected(rttcc_matcher_t *m, const rttcc_match_item_t *r) {
    CommQueues *c = m->find_comm(r->cid);
    return c ? c->unexpected.take_first([r](const Item &a) { return matches(r->src, r->tag, a.src, a.tag); })
             : nullptr;
}

int rttcc_matcher_add_posted(rttcc_matcher_t *m, rttcc_match_item_t *r) {
    CommQueues *c = m->comm(r->cid);
    if (!c) return -1;
    c->posted.push_back(r);
    return 0;
}

rttcc_match_item_t *rttcc_matcher_find_unexpected(rttcc_matcher_t *m, const rttcc_match_item_t *r) {
    CommQueues *c = m->find_comm(r->cid);
    for (Item *a = c ? c->unexpected.front() : nullptr; a; a = a->next)
        if (matches(r->src, r->tag, a->src, a->tag)) return a;
    return nullptr;
}

int rttcc_matcher_cancel(rttcc_matcher_t *m, rttcc_match_item_t *r) {
    CommQueues *c = m->find_comm(r->cid);
    if (!c || !c->posted.contains(r)) return 0;
    c->posted.erase(r);
    return 1;
}

int rttcc_matcher_take_arrival(rttcc_matcher_t *m, uint32_t cid, uint32_t peer, uint32_t seq,
                               rttcc_match_item_t **out) {
    *out = nullptr;
    if (peer >= m->peers.size() || !rttcc::seq_lt(seq, m->peers[peer].expected)) return -1;
    CommQueues *c = m->find_comm(cid);
    if (c) *out = c->unexpected.take_first([=](const Item &a) { return a.peer == peer && a.seq == seq; });
    return *out ? 1 : 0;
}

void rttcc_matcher_counts(const rttcc_matcher_t *m, size_t *posted, size_t *unexpected, size_t *held) {
    *posted = *unexpected = 0;
    for (const CommQueues &c : m->comms) {
        *posted += c.posted.size();
        *unexpected += c.unexpected.size();
    }
    *held = m->held;
}

rttcc_match_item_t *rttcc_matcher_pop_arrival(rttcc_matcher_t *m) {
    for (CommQueues &c : m->comms)
        if (Item *a = c.unexpected.front()) {
            c.unexpected.erase(a);
            return a;
        }
    for (PeerOrder &o : m->peers)
        if (Item *a = o.held.front()) {
            o.held.erase(a);
            --m->held;
            return a;
        }
    return nullptr;
}

}  // extern "C"
