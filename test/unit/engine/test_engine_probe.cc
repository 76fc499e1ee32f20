// RTT probes (engine_probe.cc): each strategy visits the peers it should,
// replies give probe samples, unanswered probes count as lost, the rate
// limit holds.
#include "cmocka_cxx.h"
#include "engine_harness.h"

using namespace rttcc;
using namespace rttcc_test;

static int g_strategy = RTTCC_PROBE_ROUND_ROBIN;
static unsigned g_max_rate = 100000;

static void probing(rttcc_config_t &c) {
    c.probe_enable = true;
    c.probe_interval_us = 1000;  // 1 ms
    c.probe_startup_delay_ms = 0;
    c.probe_strategy = g_strategy;
    c.probe_max_rate = g_max_rate;
}

static rttcc_rtt_row_t row_of(Node &n, uint32_t peer) {
    rttcc_rtt_row_t r;
    assert_true(n.engine->rtt_row(peer, &r));
    return r;
}

// Runs the nodes (no data at all) for `ms` milliseconds.
static void idle(std::vector<std::unique_ptr<Node>> &nodes, int ms) {
    const nanos end = now_of(nodes) + msec(ms);
    run_until(nodes, [&] { return now_of(nodes) >= end; }, 5);
}

static void every_peer_gets_probe_samples(int strategy) {
    g_strategy = strategy;
    g_max_rate = 100000;
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 4, {}, probing);
    uint64_t replies = 0, held = 0;  // node 1's probe replies, and the holds they report
    nodes[1]->faults->drop_if = [&](Channel, const TxDatagram &d) {
        const auto *h = static_cast<const PacketHeader *>(d.iov[0].iov_base);
        if (h->type == static_cast<uint8_t>(PacketType::PROBE_REPLY)) {
            ++replies;
            held += h->ack_delay_ns;
        }
        return false;
    };
    idle(nodes, 80);
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) {
            if (i == j) continue;
            const rttcc_rtt_row_t r = row_of(*nodes[i], j);
            assert_true(r.probe_samples > 0);
            assert_int_equal(r.samples, 0);  // no data flowed
            assert_true(r.flags & RTTCC_ROW_LAST_PROBE);
            assert_true(r.min_ns > 0 && r.min_ns <= r.srtt_ns && r.srtt_ns <= r.max_ns);
        }
    const rttcc_stats_t s = nodes[0]->engine->stats();
    // A round every millisecond (all_pairs: to each of 3 peers), each
    // probe answered within a round trip.
    assert_int_equal(s.probes_tx, strategy == RTTCC_PROBE_ALL_PAIRS ? 3 * 80 : 80);
    assert_int_equal(s.probe_replies, s.probes_tx);
    assert_true(replies > 0);
    assert_int_equal(held, 0);  // every probe answered in the pass it arrived
    assert_true(nodes[1]->engine->stats().probes_answered > 0);
}

static void test_round_robin(void **) { every_peer_gets_probe_samples(RTTCC_PROBE_ROUND_ROBIN); }
static void test_random(void **) { every_peer_gets_probe_samples(RTTCC_PROBE_RANDOM); }
static void test_adaptive(void **) { every_peer_gets_probe_samples(RTTCC_PROBE_ADAPTIVE); }
static void test_all_pairs(void **) { every_peer_gets_probe_samples(RTTCC_PROBE_ALL_PAIRS); }

// round_robin and all_pairs differ in how many peers one round visits.
static void test_round_sizes(void **) {
    for (int strategy : {RTTCC_PROBE_ROUND_ROBIN, RTTCC_PROBE_ALL_PAIRS}) {
        g_strategy = strategy;
        g_max_rate = 100000;
        MemNetwork net(4000);
        auto nodes = make_nodes(net, 5, {}, [](rttcc_config_t &c) {
            probing(c);
            c.probe_interval_us = 1000000;  // one round in this test's lifetime
        });
        idle(nodes, 20);
        const uint64_t want = strategy == RTTCC_PROBE_ALL_PAIRS ? 4 : 1;
        for (auto &n : nodes) assert_int_equal(n->engine->stats().probes_tx, want);
    }
}

// Adaptive: a peer never sampled goes first, so the first rounds cover
// every peer once before any is probed twice.
static void test_adaptive_covers_unsampled_peers_first(void **) {
    g_strategy = RTTCC_PROBE_ADAPTIVE;
    g_max_rate = 100000;
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 5, {}, probing);
    const nanos end = now_of(nodes) + msec(200);
    run_until(nodes, [&] { return nodes[0]->engine->stats().probes_tx >= 4 || now_of(nodes) > end; }, 5);
    for (uint32_t j = 1; j < 5; ++j) {
        rttcc_stats_t s;
        assert_true(nodes[0]->engine->peer_stats(j, &s));
        assert_int_equal(s.probes_tx, 1);
    }
}

static void test_rate_limit_per_peer(void **) {
    g_strategy = RTTCC_PROBE_ALL_PAIRS;
    g_max_rate = 100;  // at most one probe per 10 ms to a peer, though rounds come every 1 ms
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, {}, probing);
    idle(nodes, 55);
    assert_int_equal(nodes[0]->engine->stats().probes_tx, 6);  // at 0, 10, 20, 30, 40 and 50 ms
}

static void test_unanswered_probes_are_lost(void **) {
    g_strategy = RTTCC_PROBE_ROUND_ROBIN;
    g_max_rate = 100000;
    MemNetwork net(4000);
    // Node 1 knows nobody: it drops node 0's probes as from an unknown peer.
    auto nodes = make_nodes(net, 2, {}, probing, [](int from, int) { return from == 0; });
    idle(nodes, 30);
    const rttcc_stats_t s = nodes[0]->engine->stats();
    assert_int_equal(s.probes_tx, 30);  // a round every millisecond
    assert_int_equal(s.probes_lost, s.probes_tx - 1);  // the last one may still come back
    const rttcc_rtt_row_t r = row_of(*nodes[0], 1);
    assert_int_equal(r.probes_lost, s.probes_lost);
    assert_true(r.losses >= s.probes_lost);
    assert_int_equal(r.probe_samples, 0);
}

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_robin),
        cmocka_unit_test(test_random),
        cmocka_unit_test(test_adaptive),
        cmocka_unit_test(test_all_pairs),
        cmocka_unit_test(test_round_sizes),
        cmocka_unit_test(test_adaptive_covers_unsampled_peers_first),
        cmocka_unit_test(test_rate_limit_per_peer),
        cmocka_unit_test(test_unanswered_probes_are_lost),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
