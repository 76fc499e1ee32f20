// The scheduler's C face (api/schedule.cc, osc_rttcc's epochs): ranks
// come from next() in the policy's order, at most max_concurrent at once,
// never self, never a rank with nothing to send; the round is done when
// each started one finished.
#include <cstdlib>
#include <cstring>

#include "cmocka_cxx.h"
#include "rttcc/engine.h"
#include "rttcc/schedule.h"

namespace {

rttcc_engine_t *open_engine() {
    rttcc_config_t c;
    rttcc_config_defaults(&c);
    char lo[] = "lo";
    c.if_include = lo;
    c.agent = false;
    rttcc_callbacks_t cbs{};
    rttcc_engine_t *e = nullptr;
    char err[256];
    assert_int_equal(rttcc_engine_create(&c, &cbs, &e, err, sizeof err), RTTCC_OK);
    return e;
}

rttcc_schedule_params_t params(int policy, uint32_t max_concurrent) {
    rttcc_schedule_params_t p{};
    p.policy = policy;
    p.threshold_us = 100;
    p.variance_factor = 2;
    p.max_concurrent = max_concurrent;
    p.reorder_window = 10;
    p.backoff_ms = 0.1;
    return p;
}

}  // namespace

// Linear from self + 1, two at a time; a rank with no bytes is skipped.
static void test_a_round_follows_the_policy_and_its_slots(void **) {
    rttcc_engine_t *e = open_engine();
    rttcc_schedule_t *s = nullptr;
    const rttcc_schedule_params_t p = params(RTTCC_SCHED_LINEAR, 2);
    assert_int_equal(rttcc_schedule_create(e, &p, &s), RTTCC_OK);
    const uint32_t peers[5] = {0, 1, 2, 3, 4};
    const uint64_t bytes[5] = {100, 100, 0, 100, 100};  // self is 1; rank 2 sends nothing
    assert_int_equal(rttcc_schedule_begin(s, 1, 5, peers, bytes), RTTCC_OK);
    uint32_t r = 99, r2 = 99;
    assert_true(rttcc_schedule_next(s, &r));
    assert_int_equal(r, 3);
    assert_true(rttcc_schedule_next(s, &r2));
    assert_int_equal(r2, 4);
    assert_false(rttcc_schedule_next(s, &r));  // both slots taken
    rttcc_schedule_finished(s, 3);
    assert_true(rttcc_schedule_next(s, &r));
    assert_int_equal(r, 0);
    assert_false(rttcc_schedule_next(s, &r));  // nobody left to start
    assert_false(rttcc_schedule_done(s));
    rttcc_schedule_finished(s, 4);
    rttcc_schedule_finished(s, 0);
    assert_true(rttcc_schedule_done(s));
    char *text = rttcc_schedule_text(s);
    assert_non_null(text);
    assert_non_null(std::strstr(text, "start peer 3"));
    std::free(text);
    rttcc_schedule_destroy(s);
    rttcc_engine_destroy(e);
}

// A round with nothing to send is done at once; a bad self is refused.
static void test_an_empty_round_is_done(void **) {
    rttcc_engine_t *e = open_engine();
    rttcc_schedule_t *s = nullptr;
    const rttcc_schedule_params_t p = params(RTTCC_SCHED_ADAPTIVE, 8);
    assert_int_equal(rttcc_schedule_create(e, &p, &s), RTTCC_OK);
    const uint32_t peers[3] = {0, 1, 2};
    const uint64_t none[3] = {0, 0, 0};
    assert_int_equal(rttcc_schedule_begin(s, 3, 3, peers, none), RTTCC_ERR_ARG);
    assert_int_equal(rttcc_schedule_begin(s, 0, 3, peers, none), RTTCC_OK);
    uint32_t r;
    assert_false(rttcc_schedule_next(s, &r));
    assert_true(rttcc_schedule_done(s));
    rttcc_schedule_destroy(s);
    rttcc_engine_destroy(e);
}

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_round_follows_the_policy_and_its_slots),
        cmocka_unit_test(test_an_empty_round_is_done),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
