// The exchange hub's C face (api/exchange.cc) and its engine's lifetime: a
// hub detaches from the engine it was made on, whichever engine that is,
// and leaves alone an engine destroyed before it.
#include <initializer_list>

#include "cmocka_cxx.h"
#include "rttcc/engine.h"
#include "rttcc/exchange.h"

namespace {

constexpr uint8_t kTag = 0x3c;

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

}  // namespace

// Two engines (a BTL's and an MTL's): a hub made on either detaches from
// it at its end, so a hub can be made on it again.
static void test_a_hub_detaches_from_its_engine(void **) {
    rttcc_engine_t *first = open_engine(), *second = open_engine();
    for (rttcc_engine_t *e : {second, first}) {
        rttcc_exchange_hub_t *hub = nullptr, *again = nullptr;
        assert_int_equal(rttcc_exchange_hub_create(e, kTag, &hub), RTTCC_OK);
        assert_int_equal(rttcc_exchange_hub_create(e, kTag, &again), RTTCC_ERR_BUSY);  // the tag is taken
        rttcc_exchange_hub_destroy(hub);
        assert_int_equal(rttcc_engine_detach(e, kTag), RTTCC_ERR_ARG);  // detached already
    }
    rttcc_engine_destroy(second);
    rttcc_engine_destroy(first);
}

// Finalize closes the BTL (its engine) before the coll framework (the hub):
// the hub's end then touches no engine, not even one made since.
static void test_a_hub_outlives_its_engine(void **) {
    rttcc_engine_t *e = open_engine();
    rttcc_exchange_hub_t *hub = nullptr;
    assert_int_equal(rttcc_exchange_hub_create(e, kTag, &hub), RTTCC_OK);
    rttcc_engine_destroy(e);
    rttcc_engine_t *next = open_engine();  // perhaps where the first one was
    const rttcc_callbacks_t cbs{};
    assert_int_equal(rttcc_engine_attach(next, kTag, &cbs), RTTCC_OK);
    rttcc_exchange_hub_destroy(hub);
    assert_int_equal(rttcc_engine_detach(next, kTag), RTTCC_OK);  // still attached: the hub left it alone
    rttcc_engine_destroy(next);
}

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_hub_detaches_from_its_engine),
        cmocka_unit_test(test_a_hub_outlives_its_engine),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
