// recv_window.h: in order, out of order, duplicates, beyond the window, wrap,
// and the selective ACK bitmap.
#include "cmocka_cxx.h"
#include "engine/recv_window.h"

using namespace rttcc;
using A = RecvWindow::Arrival;

static void test_in_order_advances_without_bitmap(void **) {
    RecvWindow w(64, 7);
    assert_int_equal(static_cast<int>(w.arrive(7)), static_cast<int>(A::kNew));
    assert_int_equal(static_cast<int>(w.arrive(8)), static_cast<int>(A::kNew));
    assert_int_equal(w.next(), 9);
    assert_int_equal(w.memory(), 0);
    assert_int_equal(static_cast<int>(w.arrive(8)), static_cast<int>(A::kDuplicate));
}

static void test_out_of_order_fills_gap(void **) {
    RecvWindow w(64, 0);
    assert_int_equal(static_cast<int>(w.arrive(2)), static_cast<int>(A::kNew));
    assert_true(w.has_gap());
    assert_int_equal(w.next(), 0);
    assert_int_equal(static_cast<int>(w.arrive(2)), static_cast<int>(A::kDuplicate));
    assert_int_equal(static_cast<int>(w.arrive(1)), static_cast<int>(A::kNew));
    assert_int_equal(w.next(), 0);
    assert_int_equal(static_cast<int>(w.arrive(0)), static_cast<int>(A::kNew));
    assert_int_equal(w.next(), 3);
    assert_false(w.has_gap());
}

static void test_beyond_window_is_refused(void **) {
    RecvWindow w(64, 0);
    assert_int_equal(static_cast<int>(w.arrive(64)), static_cast<int>(A::kBeyond));
    assert_int_equal(static_cast<int>(w.arrive(63)), static_cast<int>(A::kNew));
    assert_int_equal(w.next(), 0);
}

static void test_reverse_arrival_across_wrap(void **) {
    const seq_t first = 0xffffffc0u;
    RecvWindow w(128, first);
    for (int i = 127; i >= 0; --i)
        assert_int_equal(static_cast<int>(w.arrive(first + static_cast<seq_t>(i))), static_cast<int>(A::kNew));
    assert_int_equal(w.next(), first + 128);
    assert_false(w.has_gap());
    for (int i = 0; i < 128; ++i)
        assert_int_equal(static_cast<int>(w.arrive(first + static_cast<seq_t>(i))), static_cast<int>(A::kDuplicate));
}

// The SACK names exactly the arrivals after the gap, at any position of the
// ring and across the sequence wrap, and shrinks as the gap closes.
// classify() tells what arrive() would, and records nothing.
static void test_classify_agrees_with_arrive(void **) {
    RecvWindow w(64, 0u - 3u);
    const seq_t first = 0u - 3u;
    const seq_t order[] = {first + 2, first, first + 2, first - 1, first + 64, first + 1, first + 3};
    for (seq_t s : order) {
        const RecvWindow::Arrival said = w.classify(s);
        assert_true(w.classify(s) == said);  // asking twice changes nothing
        assert_true(w.arrive(s) == said);
    }
}

static void test_sack_names_the_arrivals_after_the_gap(void **) {
    for (const seq_t first : {seq_t{0}, seq_t{100}, seq_t{0xffffff00u}}) {
        RecvWindow w(256, first);
        uint64_t words[4] = {};
        assert_int_equal(w.sack(words, 4), 0);  // no gap, no SACK
        assert_int_equal(static_cast<int>(w.arrive(first)), static_cast<int>(A::kNew));
        // first + 1 is missing; these arrive: +2, +3, +65, +66, +200.
        const int after[] = {2, 3, 65, 66, 200};
        for (int d : after) w.arrive(first + static_cast<seq_t>(d));
        assert_int_equal(w.next(), first + 1);
        assert_int_equal(w.sack(words, 4), 4);  // bits for +2 .. +200: 199 bits
        uint64_t want[4] = {};
        for (int d : after) {
            const int bit = d - 2;  // bit i = next + 1 + i
            want[bit / 64] |= 1ull << (bit % 64);
        }
        for (int i = 0; i < 4; ++i) assert_true(words[i] == want[i]);
        assert_int_equal(w.sack(words, 1), 1);  // capped: the first word only
        assert_true(words[0] == want[0]);
        w.arrive(first + 1);  // closes the first gap: next = first + 4
        assert_int_equal(w.next(), first + 4);
        assert_int_equal(w.sack(words, 4), 4);  // +65, +66 and +200 after next + 1 = +5
        assert_true(words[0] == 3ull << 60 && words[1] == 0 && words[2] == 0 && words[3] == 1ull << 3);
        for (int d = 4; d < 200; ++d) w.arrive(first + static_cast<seq_t>(d));
        assert_int_equal(w.next(), first + 201);
        assert_false(w.has_gap());
        assert_int_equal(w.sack(words, 4), 0);
    }
}

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_in_order_advances_without_bitmap),
        cmocka_unit_test(test_out_of_order_fills_gap),
        cmocka_unit_test(test_beyond_window_is_refused),
        cmocka_unit_test(test_reverse_arrival_across_wrap),
        cmocka_unit_test(test_classify_agrees_with_arrive),
        cmocka_unit_test(test_sack_names_the_arrivals_after_the_gap),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
