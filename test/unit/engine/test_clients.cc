// clients.h: a tag's deliveries go to the client attached to it, else to
// the creator; a detached tag goes deaf; dead-peer news reaches every live
// client, the attached ones newest first and the creator last (the creator
// may end the job on it).
#include <vector>

#include "cmocka_cxx.h"
#include "engine/clients.h"

using namespace rttcc;

namespace {
// Callbacks whose `user` names the client.
rttcc_callbacks_t named(intptr_t name) {
    rttcc_callbacks_t cb{};
    cb.user = reinterpret_cast<void *>(name);
    return cb;
}
intptr_t name_of(const rttcc_callbacks_t &cb) { return reinterpret_cast<intptr_t>(cb.user); }

std::vector<intptr_t> dead_news_order(const ClientTable &t) {
    std::vector<intptr_t> order;
    t.for_each_live([&](const rttcc_callbacks_t &cb) { order.push_back(name_of(cb)); });
    return order;
}
}  // namespace

static void test_tags_go_to_their_client(void **) {
    ClientTable t(named(1));
    assert_int_equal(t.attach(7, named(2)), RTTCC_OK);
    assert_int_equal(t.attach(7, named(3)), RTTCC_ERR_BUSY);  // taken
    assert_int_equal(name_of(t.of(7)), 2);
    assert_int_equal(name_of(t.of(8)), 1);  // the creator's
    assert_int_equal(t.detach(7), RTTCC_OK);
    assert_null(t.of(7).user);               // deaf
    assert_int_equal(t.detach(7), RTTCC_ERR_ARG);
    assert_int_equal(t.detach(8), RTTCC_ERR_ARG);
}

static void test_dead_peer_news_reaches_the_creator_last(void **) {
    ClientTable t(named(1));
    assert_true(dead_news_order(t) == std::vector<intptr_t>({1}));
    assert_int_equal(t.attach(10, named(2)), RTTCC_OK);
    assert_int_equal(t.attach(11, named(3)), RTTCC_OK);
    assert_int_equal(t.attach(12, named(4)), RTTCC_OK);
    assert_true(dead_news_order(t) == std::vector<intptr_t>({4, 3, 2, 1}));
    assert_int_equal(t.detach(11), RTTCC_OK);
    assert_true(dead_news_order(t) == std::vector<intptr_t>({4, 2, 1}));
}

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tags_go_to_their_client),
        cmocka_unit_test(test_dead_peer_news_reaches_the_creator_last),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
