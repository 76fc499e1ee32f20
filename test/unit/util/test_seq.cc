// seq.h: serial-number comparisons, including across the 2^32 wrap.
#include "cmocka_cxx.h"
#include "util/seq.h"

using namespace rttcc;

static void test_plain_order(void **) {
    assert_true(seq_lt(1, 2));
    assert_false(seq_lt(2, 1));
    assert_true(seq_le(2, 2));
    assert_int_equal(seq_diff(10, 3), 7);
}

static void test_across_wrap(void **) {
    const seq_t before = 0xfffffffeu, after = 3;
    assert_true(seq_lt(before, after));
    assert_true(seq_gt(after, before));
    assert_int_equal(seq_diff(after, before), 5);
    assert_int_equal(seq_diff(before, after), -5);
}

static void test_half_range_is_the_limit(void **) {
    assert_true(seq_lt(0, 0x7fffffffu));
    assert_false(seq_lt(0, 0x80000001u));  // more than 2^31 apart reads as "behind"
}

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_order),
        cmocka_unit_test(test_across_wrap),
        cmocka_unit_test(test_half_range_is_the_limit),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
