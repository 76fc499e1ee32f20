// The matcher (rttcc/matcher.h): MPI matching rules (wildcards, negative tags, order of
// posting and of arrival), per-peer ordering with wrap, cancel, probe.
#include <vector>

#include "cmocka_cxx.h"
#include "rttcc/matcher.h"

namespace {

rttcc_match_item_t item(uint32_t cid, int32_t src, int32_t tag, uint32_t peer = 0, uint32_t seq = 0) {
    rttcc_match_item_t i{};
    i.cid = cid;
    i.src = src;
    i.tag = tag;
    i.peer = peer;
    i.seq = seq;
    return i;
}

struct Matcher {
    explicit Matcher(size_t per_peer = 1000, size_t all = 10000) : m(rttcc_matcher_create(per_peer, all)) {}
    ~Matcher() { rttcc_matcher_destroy(m); }
    rttcc_matcher_t *m;
};

}  // namespace

static void test_wildcards_and_internal_tags(void **) {
    Matcher t;
    rttcc_match_item_t any = item(3, RTTCC_MATCH_ANY, RTTCC_MATCH_ANY);
    rttcc_matcher_add_posted(t.m, &any);
    rttcc_match_item_t internal = item(3, 1, -17);  // a collective's tag
    assert_null(rttcc_matcher_take_posted(t.m, &internal));
    rttcc_match_item_t other_comm = item(4, 1, 5);
    assert_null(rttcc_matcher_take_posted(t.m, &other_comm));
    rttcc_match_item_t user = item(3, 1, 5);
    assert_ptr_equal(rttcc_matcher_take_posted(t.m, &user), &any);
    // the internal tag is matched only by itself
    rttcc_match_item_t exact = item(3, 1, -17);
    rttcc_matcher_add_posted(t.m, &exact);
    assert_ptr_equal(rttcc_matcher_take_posted(t.m, &internal), &exact);
}

static void test_oldest_posted_receive_wins(void **) {
    Matcher t;
    rttcc_match_item_t from2 = item(0, 2, 7), any_src = item(0, RTTCC_MATCH_ANY, 7), from1 = item(0, 1, 7);
    rttcc_matcher_add_posted(t.m, &from2);
    rttcc_matcher_add_posted(t.m, &any_src);
    rttcc_matcher_add_posted(t.m, &from1);
    rttcc_match_item_t a1 = item(0, 1, 7);
    assert_ptr_equal(rttcc_matcher_take_posted(t.m, &a1), &any_src);  // posted before from1
    assert_ptr_equal(rttcc_matcher_take_posted(t.m, &a1), &from1);
    assert_null(rttcc_matcher_take_posted(t.m, &a1));
    rttcc_match_item_t a2 = item(0, 2, 7);
    assert_ptr_equal(rttcc_matcher_take_posted(t.m, &a2), &from2);
}

static void test_oldest_arrival_wins_and_probe_leaves_it(void **) {
    Matcher t;
    rttcc_match_item_t x = item(1, 0, 9), y = item(1, 0, 8), z = item(1, 0, 9);
    rttcc_matcher_add_unexpected(t.m, &x);
    rttcc_matcher_add_unexpected(t.m, &y);
    rttcc_matcher_add_unexpected(t.m, &z);
    rttcc_match_item_t r8 = item(1, 0, 8), rany = item(1, 0, RTTCC_MATCH_ANY);
    assert_ptr_equal(rttcc_matcher_find_unexpected(t.m, &r8), &y);
    assert_ptr_equal(rttcc_matcher_find_unexpected(t.m, &r8), &y);
    assert_ptr_equal(rttcc_matcher_take_unexpected(t.m, &r8), &y);
    assert_ptr_equal(rttcc_matcher_take_unexpected(t.m, &rany), &x);
    assert_ptr_equal(rttcc_matcher_take_unexpected(t.m, &rany), &z);
    assert_null(rttcc_matcher_take_unexpected(t.m, &rany));
    size_t p, u, h;
    rttcc_matcher_counts(t.m, &p, &u, &h);
    assert_int_equal(p + u + h, 0);
}

static void test_arrivals_are_handed_on_in_sequence(void **) {
    Matcher t;
    std::vector<rttcc_match_item_t> a;
    for (uint32_t s = 0; s < 5; ++s) a.push_back(item(0, 0, 0, 6, s));
    assert_int_equal(rttcc_matcher_in_order(t.m, 6, 0), 1);
    assert_int_equal(rttcc_matcher_in_order(t.m, 6, 3), 0);
    assert_int_equal(rttcc_matcher_hold(t.m, &a[3]), 0);
    assert_int_equal(rttcc_matcher_in_order(t.m, 6, 2), 0);
    assert_int_equal(rttcc_matcher_hold(t.m, &a[2]), 0);
    assert_int_equal(rttcc_matcher_in_order(t.m, 6, 4), 0);
    assert_int_equal(rttcc_matcher_hold(t.m, &a[4]), 0);
    assert_null(rttcc_matcher_release(t.m, 6));  // 1 is missing
    assert_int_equal(rttcc_matcher_in_order(t.m, 6, 0), -1);  // a duplicate
    assert_int_equal(rttcc_matcher_in_order(t.m, 6, 1), 1);
    assert_ptr_equal(rttcc_matcher_release(t.m, 6), &a[2]);
    assert_ptr_equal(rttcc_matcher_release(t.m, 6), &a[3]);
    assert_ptr_equal(rttcc_matcher_release(t.m, 6), &a[4]);
    assert_null(rttcc_matcher_release(t.m, 6));
    assert_int_equal(rttcc_matcher_in_order(t.m, 6, 5), 1);
    assert_null(rttcc_matcher_release(t.m, 99));  // a peer never heard of
}

static void test_sequence_numbers_wrap(void **) {
    Matcher t;
    // every comparison is modulo 2^32: from a peer at 0, 0x7fffffff is ahead
    // and 0x80000001 (that is, -0x7fffffff) is behind
    assert_int_equal(rttcc_matcher_in_order(t.m, 1, 0x7fffffffu), 0);
    assert_int_equal(rttcc_matcher_in_order(t.m, 1, 0x80000001u), -1);
}

static void test_indices_out_of_range_are_refused(void **) {
    Matcher t;
    rttcc_match_item_t far = item(RTTCC_MATCH_MAX_INDEX, 0, 0);
    assert_int_equal(rttcc_matcher_add_posted(t.m, &far), -1);
    assert_int_equal(rttcc_matcher_add_unexpected(t.m, &far), -1);
    assert_null(rttcc_matcher_take_posted(t.m, &far));
    assert_null(rttcc_matcher_take_unexpected(t.m, &far));
    assert_null(rttcc_matcher_find_unexpected(t.m, &far));
    assert_int_equal(rttcc_matcher_cancel(t.m, &far), 0);
    assert_int_equal(rttcc_matcher_in_order(t.m, RTTCC_MATCH_MAX_INDEX, 0), -2);
    size_t p, u, h;
    rttcc_matcher_counts(t.m, &p, &u, &h);
    assert_int_equal(p + u + h, 0);
}

static void test_cancel_only_a_posted_receive(void **) {
    Matcher t;
    rttcc_match_item_t r = item(2, 1, 1), s = item(2, 1, 1);
    rttcc_matcher_add_posted(t.m, &r);
    rttcc_matcher_add_posted(t.m, &s);
    assert_int_equal(rttcc_matcher_cancel(t.m, &r), 1);
    assert_int_equal(rttcc_matcher_cancel(t.m, &r), 0);
    rttcc_match_item_t a = item(2, 1, 1);
    assert_ptr_equal(rttcc_matcher_take_posted(t.m, &a), &s);
    assert_int_equal(rttcc_matcher_cancel(t.m, &s), 0);
}

// A send's cancel finds its arrival unexpected (taken out), matched
// already, or not handed on yet (held, or never seen).
static void test_take_arrival_by_sender_and_sequence(void **) {
    Matcher t;
    rttcc_match_item_t a0 = item(1, 2, 0, 5, 0), a1 = item(1, 2, 0, 5, 1), a3 = item(1, 2, 0, 5, 3);
    rttcc_match_item_t *out;
    assert_int_equal(rttcc_matcher_take_arrival(t.m, 1, 5, 0, &out), -1);  // nothing from peer 5 yet
    assert_int_equal(rttcc_matcher_in_order(t.m, 5, 0), 1);
    assert_int_equal(rttcc_matcher_add_unexpected(t.m, &a0), 0);
    assert_int_equal(rttcc_matcher_in_order(t.m, 5, 1), 1);
    assert_int_equal(rttcc_matcher_add_unexpected(t.m, &a1), 0);
    assert_int_equal(rttcc_matcher_in_order(t.m, 5, 3), 0);
    rttcc_matcher_hold(t.m, &a3);
    assert_int_equal(rttcc_matcher_take_arrival(t.m, 1, 5, 1, &out), 1);  // the second of two alike
    assert_ptr_equal(out, &a1);
    rttcc_match_item_t recv = item(1, 2, 0);
    assert_ptr_equal(rttcc_matcher_take_unexpected(t.m, &recv), &a0);
    assert_int_equal(rttcc_matcher_take_arrival(t.m, 1, 5, 0, &out), 0);   // matched
    assert_int_equal(rttcc_matcher_take_arrival(t.m, 1, 5, 1, &out), 0);   // taken before
    assert_int_equal(rttcc_matcher_take_arrival(t.m, 1, 5, 2, &out), -1);  // on its way
    assert_int_equal(rttcc_matcher_take_arrival(t.m, 1, 5, 3, &out), -1);  // held
    assert_null(out);
    assert_null(rttcc_matcher_release(t.m, 5));  // 3 stays held behind 2
}

static void test_shutdown_drains_every_arrival(void **) {
    Matcher t;
    rttcc_match_item_t u1 = item(0, 0, 1), u2 = item(7, 0, 1), h = item(0, 0, 0, 3, 4);
    rttcc_matcher_add_unexpected(t.m, &u1);
    rttcc_matcher_add_unexpected(t.m, &u2);
    assert_int_equal(rttcc_matcher_in_order(t.m, 3, 4), 0);
    assert_int_equal(rttcc_matcher_hold(t.m, &h), 0);
    size_t p, u, held;
    rttcc_matcher_counts(t.m, &p, &u, &held);
    assert_int_equal(u, 2);
    assert_int_equal(held, 1);
    int n = 0;
    while (rttcc_matcher_pop_arrival(t.m)) ++n;
    assert_int_equal(n, 3);
    rttcc_matcher_counts(t.m, &p, &u, &held);
    assert_int_equal(u + held, 0);
}

// A freed communicator's arrivals come out oldest first; another
// communicator's, the receives posted and the arrivals held stay.
static void test_a_freed_communicator_gives_up_its_arrivals(void **) {
    Matcher t;
    rttcc_match_item_t a1 = item(3, 0, 1), other = item(4, 0, 1), a2 = item(3, 1, -5), r = item(3, 0, 9),
                       h = item(3, 0, 0, 2, 6);
    rttcc_matcher_add_unexpected(t.m, &a1);
    rttcc_matcher_add_unexpected(t.m, &other);
    rttcc_matcher_add_unexpected(t.m, &a2);
    rttcc_matcher_add_posted(t.m, &r);
    assert_int_equal(rttcc_matcher_in_order(t.m, 2, 6), 0);
    assert_int_equal(rttcc_matcher_hold(t.m, &h), 0);
    assert_ptr_equal(rttcc_matcher_pop_unexpected(t.m, 3), &a1);
    assert_ptr_equal(rttcc_matcher_pop_unexpected(t.m, 3), &a2);
    assert_null(rttcc_matcher_pop_unexpected(t.m, 3));
    assert_null(rttcc_matcher_pop_unexpected(t.m, 99));  // a context id never used
    rttcc_match_item_t any = item(4, RTTCC_MATCH_ANY, RTTCC_MATCH_ANY);
    assert_ptr_equal(rttcc_matcher_take_unexpected(t.m, &any), &other);
    size_t p, u, held;
    rttcc_matcher_counts(t.m, &p, &u, &held);
    assert_int_equal(p, 1);
    assert_int_equal(u, 0);
    assert_int_equal(held, 1);
}

// A sender running ahead of a message it never delivers is held up to the
// bounds, per peer and in all, and refused beyond them; what was held is
// handed on in order once the missing message comes.
static void test_held_arrivals_are_bounded(void **) {
    Matcher t(100, 150);
    std::vector<rttcc_match_item_t> a, b;
    for (uint32_t s = 1; s <= 200; ++s) a.push_back(item(0, 0, 0, 1, s));
    for (uint32_t s = 1; s <= 200; ++s) b.push_back(item(0, 1, 0, 2, s));
    int held = 0;
    for (auto &i : a) {
        assert_int_equal(rttcc_matcher_in_order(t.m, 1, i.seq), 0);  // 0 never comes
        held += rttcc_matcher_hold(t.m, &i) == 0;
    }
    assert_int_equal(held, 100);  // per peer
    assert_int_equal(rttcc_matcher_hold(t.m, &a[150]), -1);
    for (auto &i : b) {
        rttcc_matcher_in_order(t.m, 2, i.seq);
        held += rttcc_matcher_hold(t.m, &i) == 0;
    }
    assert_int_equal(held, 150);  // in all
    size_t p, u, h;
    rttcc_matcher_counts(t.m, &p, &u, &h);
    assert_int_equal(h, 150);
    assert_int_equal(rttcc_matcher_in_order(t.m, 1, 0), 1);
    for (uint32_t s = 1; s <= 100; ++s) assert_ptr_equal(rttcc_matcher_release(t.m, 1), &a[s - 1]);
    assert_null(rttcc_matcher_release(t.m, 1));  // 101 was refused: the caller ended the job
}

// The same sequence number twice is refused (the engine never delivers a
// message twice), so it cannot sit behind its twin for ever; arrivals in
// any order still come out in order.
static void test_a_held_duplicate_is_refused(void **) {
    Matcher t;
    rttcc_match_item_t x = item(0, 0, 0, 4, 7), twin = item(0, 0, 0, 4, 7), y = item(0, 0, 0, 4, 5),
                       z = item(0, 0, 0, 4, 9);
    assert_int_equal(rttcc_matcher_in_order(t.m, 4, 7), 0);
    assert_int_equal(rttcc_matcher_hold(t.m, &x), 0);
    assert_int_equal(rttcc_matcher_hold(t.m, &twin), -2);
    assert_int_equal(rttcc_matcher_hold(t.m, &z), 0);
    assert_int_equal(rttcc_matcher_hold(t.m, &y), 0);
    for (uint32_t s = 0; s < 5; ++s) assert_int_equal(rttcc_matcher_in_order(t.m, 4, s), 1);
    assert_ptr_equal(rttcc_matcher_release(t.m, 4), &y);
    assert_int_equal(rttcc_matcher_in_order(t.m, 4, 6), 1);
    assert_ptr_equal(rttcc_matcher_release(t.m, 4), &x);
    assert_int_equal(rttcc_matcher_in_order(t.m, 4, 8), 1);
    assert_ptr_equal(rttcc_matcher_release(t.m, 4), &z);
    size_t p, u, h;
    rttcc_matcher_counts(t.m, &p, &u, &h);
    assert_int_equal(h, 0);
}

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wildcards_and_internal_tags),
        cmocka_unit_test(test_oldest_posted_receive_wins),
        cmocka_unit_test(test_oldest_arrival_wins_and_probe_leaves_it),
        cmocka_unit_test(test_arrivals_are_handed_on_in_sequence),
        cmocka_unit_test(test_sequence_numbers_wrap),
        cmocka_unit_test(test_indices_out_of_range_are_refused),
        cmocka_unit_test(test_cancel_only_a_posted_receive),
        cmocka_unit_test(test_take_arrival_by_sender_and_sequence),
        cmocka_unit_test(test_shutdown_drains_every_arrival),
        cmocka_unit_test(test_a_freed_communicator_gives_up_its_arrivals),
        cmocka_unit_test(test_held_arrivals_are_bounded),
        cmocka_unit_test(test_a_held_duplicate_is_refused),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
