// rtt_estimator.h against RFC 6298's rules, the RTO clamp and the initial RTO;
// transmission ids (Karn) are unique per transmission.
#include "cmocka_cxx.h"
#include "cc/rtt_estimator.h"
#include "engine/segment.h"

using namespace rttcc;

static RttParams params() {
    RttParams p;
    p.initial_rto = msec(10);
    p.min_rto = usec(100);
    p.max_rto = msec(500);
    p.granularity = usec(16);
    return p;
}

static void test_initial_rto_before_samples(void **) {
    RttEstimator e(params());
    assert_int_equal(e.rto(), msec(10));
    assert_int_equal(e.samples(), 0);
}

static void test_rfc6298_sequence(void **) {
    RttEstimator e(params());
    e.on_sample(msec(100));  // first: SRTT = R, RTTVAR = R/2
    assert_int_equal(e.srtt(), msec(100));
    assert_int_equal(e.rttvar(), msec(50));
    assert_int_equal(e.rto(), msec(300));  // 100 + 4 * 50
    e.on_sample(msec(200));  // RTTVAR = 3/4 * 50 + 1/4 * |100 - 200| = 62.5; SRTT = 7/8 * 100 + 1/8 * 200 = 112.5
    assert_int_equal(e.rttvar(), usec(62500));
    assert_int_equal(e.srtt(), usec(112500));
    assert_int_equal(e.rto(), usec(362500));
    assert_int_equal(e.min(), msec(100));
    assert_int_equal(e.max(), msec(200));
    assert_int_equal(e.latest(), msec(200));
    assert_int_equal(e.samples(), 2);
}

static void test_rto_is_clamped(void **) {
    RttEstimator low(params()), high(params());
    for (int i = 0; i < 50; ++i) low.on_sample(usec(5));  // steady 5 us: RTTVAR decays toward 0
    assert_int_equal(low.rto(), usec(100));               // floor, not 5 us + G
    high.on_sample(msec(400));
    assert_int_equal(high.rto(), msec(500));              // ceiling
}

static void test_backoff_doubles_and_is_capped(void **) {
    assert_int_equal(backed_off_rto(msec(1), 0, msec(1000)), msec(1));
    assert_int_equal(backed_off_rto(msec(1), 1, msec(1000)), msec(2));
    assert_int_equal(backed_off_rto(msec(1), 9, msec(1000)), msec(512));
    assert_int_equal(backed_off_rto(msec(1), 10, msec(1000)), msec(1000));  // capped
    // A segment resent thousands of times: no shift overflow wraps it small.
    assert_int_equal(backed_off_rto(msec(1), 40, msec(1000)), msec(1000));
    assert_int_equal(backed_off_rto(msec(1), 65535, msec(1000)), msec(1000));
    assert_int_equal(backed_off_rto(usec(20), 3, msec(1000)), usec(160));
}

static void test_granularity_when_variance_vanishes(void **) {
    RttParams p = params();
    p.min_rto = 1;
    RttEstimator e(p);
    for (int i = 0; i < 200; ++i) e.on_sample(usec(500));
    assert_true(e.rto() >= usec(500) + usec(16));  // SRTT + G at least
    assert_true(e.rto() < usec(520));
}

static void test_transmission_ids_are_unique_per_attempt(void **) {
    assert_true(transmission_id(7, 0) != transmission_id(7, 1));  // a resend is a new transmission
    assert_true(transmission_id(7, 0) != transmission_id(8, 0));
    assert_true(transmission_id(0, 0) != 0);                      // 0 means "none"
    assert_int_equal(transmission_id(0x12345, 2) >> 16, 0x2345);  // the sequence bits locate the segment
}

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_initial_rto_before_samples),
        cmocka_unit_test(test_rfc6298_sequence),
        cmocka_unit_test(test_rto_is_clamped),
        cmocka_unit_test(test_backoff_doubles_and_is_capped),
        cmocka_unit_test(test_granularity_when_variance_vanishes),
        cmocka_unit_test(test_transmission_ids_are_unique_per_attempt),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
