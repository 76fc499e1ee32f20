// recv_window.h: in order, out of order, duplicates, beyond the window, wrap.
#include "cmocka_cxx.h"
#include "recv_window.h"

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

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_in_order_advances_without_bitmap),
        cmocka_unit_test(test_out_of_order_fills_gap),
        cmocka_unit_test(test_beyond_window_is_refused),
        cmocka_unit_test(test_reverse_arrival_across_wrap),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
