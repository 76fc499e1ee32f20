// The C face of matcher/matcher.h (include/rttcc/matcher.h): what mtl_rttcc calls.
#include <memory>
#include <new>

#include "matcher/matcher.h"
#include "rttcc/matcher.h"

struct rttcc_matcher {
    rttcc_matcher(size_t max_held_per_peer, size_t max_held) : impl(max_held_per_peer, max_held) {}
    rttcc::Matcher impl;
};

extern "C" {

rttcc_matcher_t *rttcc_matcher_create(size_t max_held_per_peer, size_t max_held) {
    return new (std::nothrow) rttcc_matcher(max_held_per_peer, max_held);
}

void rttcc_matcher_destroy(rttcc_matcher_t *m) { std::unique_ptr<rttcc_matcher> owned(m); }

int rttcc_matcher_in_order(rttcc_matcher_t *m, uint32_t peer, uint32_t seq) {
    return static_cast<int>(m->impl.in_order(peer, seq));
}

int rttcc_matcher_hold(rttcc_matcher_t *m, rttcc_match_item_t *arrival) {
    return static_cast<int>(m->impl.hold(*arrival));
}

rttcc_match_item_t *rttcc_matcher_release(rttcc_matcher_t *m, uint32_t peer) { return m->impl.release(peer); }

rttcc_match_item_t *rttcc_matcher_take_posted(rttcc_matcher_t *m, const rttcc_match_item_t *arrival) {
    return m->impl.take_posted(*arrival);
}

int rttcc_matcher_add_unexpected(rttcc_matcher_t *m, rttcc_match_item_t *arrival) {
    return static_cast<int>(m->impl.add_unexpected(*arrival));
}

rttcc_match_item_t *rttcc_matcher_take_unexpected(rttcc_matcher_t *m, const rttcc_match_item_t *recv) {
    return m->impl.take_unexpected(*recv);
}

int rttcc_matcher_add_posted(rttcc_matcher_t *m, rttcc_match_item_t *recv) {
    return static_cast<int>(m->impl.add_posted(*recv));
}

rttcc_match_item_t *rttcc_matcher_find_unexpected(rttcc_matcher_t *m, const rttcc_match_item_t *recv) {
    return m->impl.find_unexpected(*recv);
}

int rttcc_matcher_cancel(rttcc_matcher_t *m, rttcc_match_item_t *recv) { return m->impl.cancel(*recv) ? 1 : 0; }

int rttcc_matcher_take_arrival(rttcc_matcher_t *m, uint32_t cid, uint32_t peer, uint32_t seq,
                               rttcc_match_item_t **out) {
    return static_cast<int>(m->impl.take_arrival(cid, peer, seq, out));
}

void rttcc_matcher_counts(const rttcc_matcher_t *m, size_t *posted, size_t *unexpected, size_t *held) {
    *posted = m->impl.posted();
    *unexpected = m->impl.unexpected();
    *held = m->impl.held();
}

rttcc_match_item_t *rttcc_matcher_pop_arrival(rttcc_matcher_t *m) { return m->impl.pop_arrival(); }

rttcc_match_item_t *rttcc_matcher_pop_unexpected(rttcc_matcher_t *m, uint32_t cid) {
    return m->impl.pop_unexpected(cid);
}

}  // extern "C"
