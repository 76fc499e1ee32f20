// send_window.h: push, cumulative ACK (new, duplicate, old, bogus), full
// window, growth and wraparound.
#include <vector>

#include "cmocka_cxx.h"
#include "engine/send_window.h"

using namespace rttcc;

static void test_push_assigns_consecutive_seqs(void **) {
    SendWindow w(64, 100);
    TxSegment a, b;
    assert_int_equal(w.push(&a), 100);
    assert_int_equal(w.push(&b), 101);
    assert_int_equal(w.in_flight(), 2);
    assert_ptr_equal(w.at(101), &b);
    assert_null(w.at(102));
    assert_null(w.at(99));
}

static void test_cumulative_ack_releases_oldest_first(void **) {
    SendWindow w(64, 0);
    std::vector<TxSegment> segs(10);
    for (auto &s : segs) w.push(&s);
    std::vector<seq_t> released;
    assert_int_equal(w.ack(4, [&](TxSegment *s) { released.push_back(s->seq); }), 4);
    assert_int_equal(released.size(), 4);
    for (seq_t i = 0; i < 4; ++i) assert_int_equal(released[i], i);
    assert_int_equal(w.una(), 4);
    // duplicate, old and beyond-next ACKs release nothing
    assert_int_equal(w.ack(4, [](TxSegment *) { fail(); }), 0);
    assert_int_equal(w.ack(2, [](TxSegment *) { fail(); }), 0);
    assert_int_equal(w.ack(11, [](TxSegment *) { fail(); }), 0);
    assert_int_equal(w.in_flight(), 6);
}

static void test_window_closes_and_reopens(void **) {
    SendWindow w(64, 0);
    std::vector<TxSegment> segs(64);
    for (auto &s : segs) {
        assert_false(w.full());
        w.push(&s);
    }
    assert_true(w.full());
    w.ack(1, [](TxSegment *) {});
    assert_false(w.full());
}

static void test_growth_keeps_segments_across_wrap(void **) {
    const seq_t first = 0xfffffff0u;  // wraps after 16 pushes
    SendWindow w(4096, first);
    std::vector<TxSegment> segs(1000);
    for (auto &s : segs) w.push(&s);
    assert_int_equal(w.next(), first + 1000);
    for (size_t i = 0; i < segs.size(); ++i) assert_ptr_equal(w.at(first + static_cast<seq_t>(i)), &segs[i]);
    seq_t expect = first;
    assert_int_equal(w.ack(first + 1000, [&](TxSegment *s) { assert_int_equal(s->seq, expect++); }), 1000);
    assert_int_equal(w.in_flight(), 0);
    assert_true(w.memory() <= 1024 * sizeof(void *));  // grew to what was needed, not the limit
}

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_push_assigns_consecutive_seqs),
        cmocka_unit_test(test_cumulative_ack_releases_oldest_first),
        cmocka_unit_test(test_window_closes_and_reopens),
        cmocka_unit_test(test_growth_keeps_segments_across_wrap),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
