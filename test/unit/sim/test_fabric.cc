// rttcc_sim's fabric against cases with exact answers: a bottleneck runs at
// exactly its rate, a queue of known size drops exactly the excess of a
// burst and marks exactly the packets above its ECN threshold, ECMP keeps a
// flow on one path and spreads flows, the same seed gives the same run, and
// a background flood sends exactly its rate while on and nothing while off.
#include <algorithm>
#include <map>
#include <random>
#include <stdexcept>
#include <vector>

#include "cmocka_cxx.h"
#include "sim/background.h"
#include "sim/fabric.h"
#include "sim/sim_wire.h"
#include "sim/topology.h"

using namespace rttcc::sim;
using rttcc::nanos;

namespace {

struct Recorder final : Sink {
    struct Got {
        nanos at;
        Packet p;
    };
    std::vector<Got> got;
    void deliver(nanos now, const Packet &p) override { got.push_back({now, p}); }
};

LinkConfig link(uint64_t bits_per_s, nanos delay = 1000, uint32_t queue = 1 << 20) {
    LinkConfig c;
    c.bits_per_s = bits_per_s;
    c.delay = delay;
    c.queue_bytes = queue;
    return c;
}

Packet packet(uint32_t src, uint32_t dst, uint32_t bytes, uint64_t flow = 1) {
    Packet p;
    p.src = src;
    p.dst = dst;
    p.bytes = bytes;
    p.flow = flow;
    return p;
}

void run(EventQueue &q) {
    while (q.step()) {
    }
}

}  // namespace

// A at 8 Gbit/s into B's 3 Gbit/s link: 1000-byte packets take 2666.67 ns
// there, and 300 of them exactly 800 us, the carried remainder included.
static void test_bottleneck_runs_at_exactly_its_rate(void **) {
    EventQueue q;
    Fabric f(q);
    const Topology t = one_switch(f, 2, link(8'000'000'000ull));
    shape(f, t.hosts[1], 3'000'000'000ull, 1 << 20);
    Recorder b;
    f.set_sink(t.hosts[1], &b);
    for (int i = 0; i < 300; ++i) assert_true(f.send(packet(t.hosts[0], t.hosts[1], 1000)));
    run(q);
    assert_int_equal(b.got.size(), 300);
    // first byte at the switch: 1000 ns on A's wire + 1000 ns of delay; then 800 us; then the delay
    assert_int_equal(b.got.back().at, 2000 + 800000 + 1000);
    assert_int_equal(b.got.front().at, 2000 + 2666 + 1000);
    Port *neck = f.port(t.switches[0], t.hosts[1]);
    assert_int_equal(neck->stats().busy, 800000);
    assert_int_equal(neck->stats().drops, 0);
    for (size_t i = 0; i < b.got.size(); ++i) assert_int_equal(b.got[i].p.id, i);  // one path, in order
}

// 50 packets arrive 8 ns apart at a port that needs 8 us for each: one goes
// on the wire, 10 fill its 10000-byte queue, 39 are dropped.  With ECN at
// 5000 bytes, the packets that found 5 or more waiting are marked: 5.
static void test_burst_drops_exactly_the_excess(void **) {
    for (const bool ecn : {false, true}) {
        EventQueue q;
        Fabric f(q);
        const Topology t = one_switch(f, 2, link(1'000'000'000'000ull));
        shape(f, t.hosts[1], 1'000'000'000ull, 10000);
        Port *neck = f.port(t.switches[0], t.hosts[1]);
        LinkConfig c = neck->config();
        c.ecn_bytes = ecn ? 5000 : 0;
        neck->reconfigure(c);
        Recorder b;
        f.set_sink(t.hosts[1], &b);
        for (int i = 0; i < 50; ++i) {
            Packet p = packet(t.hosts[0], t.hosts[1], 1000);
            p.ect = true;
            assert_true(f.send(p));
        }
        run(q);
        assert_int_equal(b.got.size(), 11);
        assert_int_equal(neck->stats().drops, 39);
        assert_int_equal(neck->stats().drop_bytes, 39000);
        assert_int_equal(neck->stats().max_queue_bytes, 10000);
        int marked = 0;
        for (const auto &g : b.got) {
            marked += g.p.ce;
            if (g.p.ce) assert_true(g.p.id >= 6 && g.p.id <= 10);
        }
        assert_int_equal(marked, ecn ? 5 : 0);
        assert_int_equal(neck->stats().marks, ecn ? 5 : 0);
    }
}

// Rates below a byte a second: 3 packets of 1 byte through a 12 bit/s link
// take 8/12 s each, 2 s in all with the remainder carried (not 1 s each, at
// a whole 1 byte/s), through a 4 bit/s link 2 s each; a port refuses no rate
// at all, at its making and at reconfigure().
static void test_slow_rates_are_exact_and_zero_is_refused(void **) {
    for (const uint64_t rate : {12, 4}) {
        EventQueue q;
        Fabric f(q);
        const Topology t = one_switch(f, 2, link(10'000'000'000ull, 0));
        shape(f, t.hosts[1], rate, 1 << 20);
        Recorder b;
        f.set_sink(t.hosts[1], &b);
        for (int i = 0; i < 3; ++i) assert_true(f.send(packet(t.hosts[0], t.hosts[1], 1)));
        run(q);
        assert_int_equal(b.got.size(), 3);
        assert_int_equal(b.got.front().at, 8'000'000'000ull / rate);  // the NIC's 0.8 ns carried, no delay
        assert_int_equal(b.got.back().at, 24'000'000'000ull / rate);
    }
    EventQueue q;
    Fabric f(q);
    const Topology t = one_switch(f, 2, link(10'000'000'000ull));
    bool refused = false;
    try {
        f.connect(t.hosts[0], t.switches[0], link(0));
    } catch (const std::invalid_argument &) {
        refused = true;
    }
    assert_true(refused);
    refused = false;
    try {
        shape(f, t.hosts[1], 0, 1 << 20);
    } catch (const std::invalid_argument &) {
        refused = true;
    }
    assert_true(refused);
}

// A host's own NIC queue is its send queue: past it, send() says dropped.
static void test_nic_queue_is_the_send_queue(void **) {
    EventQueue q;
    Fabric f(q);
    const Topology t = one_switch(f, 2, link(1'000'000'000ull, 1000, 4000));
    int taken = 0;
    for (int i = 0; i < 10; ++i) taken += f.send(packet(t.hosts[0], t.hosts[1], 1000));
    assert_int_equal(taken, 5);  // one on the wire, four waiting
    assert_int_equal(f.nic(t.hosts[0]).stats().drops, 5);
    assert_int_equal(f.nic(t.hosts[0]).room(), 0);
    run(q);
    assert_int_equal(f.delivered(), 5);
}

// 4 hosts of one leaf into 4 of another through one spine at host rate: 4:1.
// The leaf's uplink is the bottleneck, busy without a gap: 800 packets of
// 1000 ns each; the last lands 3 hops later.
static void test_oversubscribed_uplink_is_the_bottleneck(void **) {
    EventQueue q;
    Fabric f(q);
    const Topology t = fat_tree(f, 2, 4, 1, link(8'000'000'000ull), link(8'000'000'000ull, 1000, 1 << 24));
    Recorder r[4];
    for (int i = 0; i < 4; ++i) f.set_sink(t.hosts[4 + i], &r[i]);
    for (int k = 0; k < 200; ++k)
        for (int s = 0; s < 4; ++s) assert_true(f.send(packet(t.hosts[s], t.hosts[4 + s], 1000, s)));
    run(q);
    const uint32_t leaf0 = t.switches[0], spine = t.switches[2];
    Port *up = f.port(leaf0, spine);
    assert_int_equal(up->stats().packets, 800);
    assert_int_equal(up->stats().busy, 800000);
    nanos last = 0;
    for (const auto &rec : r) {
        assert_int_equal(rec.got.size(), 200);
        last = std::max(last, rec.got.back().at);
    }
    // 1000 on the NIC + 1000 delay, 800 us on the uplink, then 2 x (1000 delay + 1000 sending) + 1000 delay
    assert_int_equal(last, 2000 + 800000 + 2000 + 2000 + 1000);
}

// Per-spine packet counts of 64 flows from leaf 0 to leaf 1 over 4 spines.
static std::vector<uint64_t> spread(uint64_t seed, bool *in_order) {
    EventQueue q;
    Fabric f(q, seed);
    const Topology t = fat_tree(f, 2, 2, 4, link(10'000'000'000ull), link(10'000'000'000ull));
    Recorder r;
    f.set_sink(t.hosts[2], &r);
    for (int k = 0; k < 10; ++k)
        for (uint64_t flow = 0; flow < 64; ++flow) f.send(packet(t.hosts[0], t.hosts[2], 1500, flow));
    run(q);
    std::map<uint64_t, uint64_t> last_id;
    *in_order = r.got.size() == 640;
    for (const auto &g : r.got) {
        if (last_id.count(g.p.flow) && last_id[g.p.flow] > g.p.id) *in_order = false;
        last_id[g.p.flow] = g.p.id;
    }
    std::vector<uint64_t> per_spine;
    for (size_t s = 0; s < 4; ++s) per_spine.push_back(f.port(t.switches[0], t.switches[2 + s])->stats().packets);
    return per_spine;
}

static void test_ecmp_keeps_flows_whole_and_spreads_them(void **) {
    bool in_order = false;
    const auto a = spread(1, &in_order);
    assert_true(in_order);
    for (const uint64_t n : a) {
        assert_true(n > 0);          // every spine carries some flows
        assert_int_equal(n % 10, 0);  // ... whole: all ten packets of each
    }
    assert_true(spread(1, &in_order) == a);  // same seed, same paths
    bool differs = false;
    for (uint64_t seed = 2; seed < 10 && !differs; ++seed) differs = spread(seed, &in_order) != a;
    assert_true(differs);
}

// Two groups joined by one link: only traffic between groups crosses it.
static void test_groups_share_one_link(void **) {
    EventQueue q;
    Fabric f(q);
    const Topology t = groups(f, 2, 2, link(10'000'000'000ull), link(1'000'000'000ull));
    f.send(packet(t.hosts[0], t.hosts[1], 1000));  // within group 0
    f.send(packet(t.hosts[0], t.hosts[2], 1000));  // across
    f.send(packet(t.hosts[3], t.hosts[1], 1000));  // across, the other way
    run(q);
    assert_int_equal(f.delivered(), 3);
    assert_int_equal(f.port(t.switches[0], t.switches[1])->stats().packets, 1);
    assert_int_equal(f.port(t.switches[1], t.switches[0])->stats().packets, 1);
    // more than two groups meet at a core switch
    EventQueue q3;
    Fabric f3(q3);
    const Topology t3 = groups(f3, 3, 1, link(10'000'000'000ull), link(1'000'000'000ull));
    assert_int_equal(t3.switches.size(), 4);
    assert_true(f3.send(packet(t3.hosts[0], t3.hosts[2], 1000)));
    run(q3);
    assert_int_equal(f3.delivered(), 1);
}

static void test_unroutable_is_counted_not_crashed(void **) {
    EventQueue q;
    Fabric f(q);
    const Topology t = one_switch(f, 2, link(10'000'000'000ull));
    assert_false(f.send(packet(t.hosts[0], t.switches[0], 100)));  // to a switch
    assert_false(f.send(packet(t.hosts[0], 99, 100)));             // to no node
    assert_int_equal(f.unroutable(), 2);
    assert_int_equal(q.pending(), 0);
}

// Random traffic over a fat tree: a digest of every delivery (time, id,
// mark) is the same for the same seeds, every time.
static uint64_t digest(uint64_t fabric_seed, uint64_t traffic_seed) {
    EventQueue q;
    Fabric f(q, fabric_seed);
    LinkConfig up = link(10'000'000'000ull, 500, 30000);
    up.ecn_bytes = 15000;
    const Topology t = fat_tree(f, 4, 4, 2, link(10'000'000'000ull, 500, 1 << 20), up);
    Recorder r;
    for (const uint32_t h : t.hosts) f.set_sink(h, &r);
    std::mt19937_64 rng(traffic_seed);
    for (int i = 0; i < 4000; ++i) {
        const uint32_t s = t.hosts[rng() % t.hosts.size()], d = t.hosts[rng() % t.hosts.size()];
        if (s == d) continue;
        Packet p = packet(s, d, 64 + rng() % 1437, rng() % 32);
        p.ect = true;
        f.send(p);
        q.run_until(q.now() + rng() % 200);
    }
    run(q);
    uint64_t h = 1469598103934665603ull;
    for (const auto &g : r.got) h = (h ^ (g.at * 31 + g.p.id * 2 + g.p.ce)) * 1099511628211ull;
    return h ^ r.got.size();
}

static void test_same_seed_same_run(void **) {
    const uint64_t a = digest(7, 11);
    assert_true(a == digest(7, 11));
    assert_true(a != digest(7, 12));
    assert_true(a != digest(8, 11));  // other ECMP paths, other queues
}

static void test_event_queue_orders_ties_by_scheduling(void **) {
    struct Log final : EventTarget {
        std::vector<uint64_t> seen;
        void fire(nanos, uint64_t arg) override { seen.push_back(arg); }
    } log;
    EventQueue q;
    q.at(50, &log, 3);
    q.at(10, &log, 1);
    q.at(50, &log, 4);
    q.at(10, &log, 2);
    q.run_until(40);
    assert_int_equal(q.now(), 40);
    assert_int_equal(log.seen.size(), 2);
    q.at(5, &log, 0);  // the past means now
    run(q);
    assert_true((log.seen == std::vector<uint64_t>{1, 2, 0, 3, 4}));
    assert_int_equal(q.executed(), 5);
}

// Fabric::path names exactly the ports a packet of that flow then crosses
// (ECMP picks included): 4 across leaves of a fat tree with 4 spines, 2
// within a leaf, none to an unknown host.
static void test_path_is_where_the_packet_goes(void **) {
    EventQueue q;
    Fabric f(q, 7);
    const Topology t = fat_tree(f, 2, 2, 4, link(10'000'000'000ull), link(10'000'000'000ull));
    for (uint64_t flow = 0; flow < 16; ++flow)
        for (const uint32_t to : {t.hosts[1], t.hosts[2], t.hosts[3]}) {
            const Packet p = packet(t.hosts[0], to, 1000, flow);
            const std::vector<Port *> path = f.path(p);
            assert_int_equal(path.size(), to == t.hosts[1] ? 2 : 4);
            std::vector<uint64_t> before;
            for (const auto &port : f.ports()) before.push_back(port->stats().packets);
            assert_true(f.send(p));
            run(q);
            for (size_t i = 0; i < f.ports().size(); ++i) {
                Port *port = f.ports()[i].get();
                const bool on_path = std::find(path.begin(), path.end(), port) != path.end();
                assert_int_equal(port->stats().packets - before[i], on_path ? 1 : 0);
            }
        }
    assert_true(f.path(packet(t.hosts[0], 999, 1000)).empty());
}

// 117.76 Mbit/s of 1472-byte payloads in bursts of 8 is a burst every
// 800 us: exactly 10 bursts in each 8 ms on period, none in the 8 ms off,
// every packet marked as carrying nothing.
static void test_flood_sends_its_rate_while_on(void **) {
    EventQueue ev;
    Fabric f(ev);
    const Topology t = one_switch(f, 2, link(10'000'000'000ull));
    Recorder r;
    f.set_sink(t.hosts[1], &r);
    FloodConfig c;
    c.from = t.hosts[0];
    c.to = t.hosts[1];
    c.payload_bits_per_s = 117'760'000;
    c.on = c.off = 8'000'000;
    Flood flood(f, c);
    ev.run_until(8'000'000 - 1);
    assert_int_equal(flood.sent(), 80);
    ev.run_until(16'000'000 - 1);
    assert_int_equal(flood.sent(), 80);  // off
    ev.run_until(24'000'000 - 1);
    assert_int_equal(flood.sent(), 160);
    flood.stop();
    ev.run_until(100'000'000);
    assert_int_equal(flood.sent(), 160);
    assert_int_equal(r.got.size(), 160);
    for (const auto &g : r.got) {
        assert_true(g.p.payload == kNoPayload);
        assert_int_equal(g.p.bytes, 1472 + kFrameOverhead);
    }
    assert_true(flood.mean_bits_per_s() == 58'880'000.0);
}

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bottleneck_runs_at_exactly_its_rate),
        cmocka_unit_test(test_burst_drops_exactly_the_excess),
        cmocka_unit_test(test_slow_rates_are_exact_and_zero_is_refused),
        cmocka_unit_test(test_nic_queue_is_the_send_queue),
        cmocka_unit_test(test_oversubscribed_uplink_is_the_bottleneck),
        cmocka_unit_test(test_ecmp_keeps_flows_whole_and_spreads_them),
        cmocka_unit_test(test_groups_share_one_link),
        cmocka_unit_test(test_unroutable_is_counted_not_crashed),
        cmocka_unit_test(test_same_seed_same_run),
        cmocka_unit_test(test_event_queue_orders_ties_by_scheduling),
        cmocka_unit_test(test_flood_sends_its_rate_while_on),
        cmocka_unit_test(test_path_is_where_the_packet_goes),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
