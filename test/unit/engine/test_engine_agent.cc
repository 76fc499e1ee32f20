// The liveness agent (engine_agent.cc): a process whose application does not
// progress is answered for, never declared dead, and gets every byte once it
// is back; a peer that is really gone still is declared dead, with what was
// heard from it.
#include "engine_harness.h"

using namespace rttcc;
using namespace rttcc_test;

namespace {

// The quiet agent of MPI_THREAD_SINGLE (under MPI_THREAD_MULTIPLE its passes
// are full ones, which test/mpi's thread tests cover).  The agent is a
// thread that sleeps in real time: its engines run on CLOCK_MONOTONIC
// (net.real_time).
void with_agent(rttcc_config_t &c) {
    c.agent = true;
    c.thread_safe = false;
    c.agent_idle_ms = 10;
    c.peer_timeout_ms = 200;
}

bool has(const std::string &text, const char *part) { return text.find(part) != std::string::npos; }

// Node 0 sends node 1 a small (copied) and a big (zero-copy) message, then
// progresses alone for 600 ms (three of with_agent's peer timeouts): node 1
// is away, and must not be declared dead.
void send_to_node1_away(std::vector<std::unique_ptr<Node>> &nodes, std::vector<uint8_t> &small,
                        std::vector<uint8_t> &big) {
    iovec a{small.data(), small.size()}, b{big.data(), big.size()};
    assert_int_equal(nodes[0]->engine->send(1, 1, &a, 1, nullptr), RTTCC_DONE);
    assert_int_equal(nodes[0]->engine->send(1, 2, &b, 1, &big), RTTCC_OK);
    only_node0(nodes, 600);
    assert_int_equal(nodes[0]->dead.size(), 0);
}

}  // namespace

// Node 1 computes for three peer timeouts with a small and a zero-copy
// message in flight towards it: node 0 hears BUSY and declares nothing;
// node 1's agent keeps both, unacknowledged, and node 1's first pass when
// it is back delivers them (an application polling with MPI_Iprobe between
// long computations finds its message at once), without a resend.
static void test_a_busy_peer_is_not_declared_dead(void **) {
    MemNetwork net(4000);
    net.real_time = true;
    auto nodes = make_nodes(net, 2, {}, with_agent);
    std::vector<uint8_t> small = make_message(1, 64), big = make_message(2, 100000);
    send_to_node1_away(nodes, small, big);
    assert_int_equal(nodes[0]->failed.size(), 0);
    assert_int_equal(nodes[1]->received.size(), 0);  // the quiet agent delivers nothing
    assert_int_equal(nodes[0]->completed.size(), 0);  // nor acknowledges it
    const rttcc_stats_t away = nodes[1]->engine->stats(), sender = nodes[0]->engine->stats();
    assert_true(away.agent_passes > 0);
    assert_true(away.agent_kept > 0);
    assert_true(sender.retx > 0);                   // its timers resent (BUSY keeps them from cutting)
    assert_true(away.agent_kept <= sender.segs_tx);  // and the resends were not kept twice
    assert_int_equal(away.turned_away, 0);
    assert_true(away.busy_tx > 0);
    assert_true(sender.busy_rx > 0);

    // Node 1's first pass (node 0's application stays away) delivers them.
    assert_true(nodes[1]->engine->progress() > 0);
    const auto &r = nodes[1]->received;  // the two channels may deliver in either order
    assert_int_equal(r.size(), 2);
    assert_true((r[0].bytes == small && r[1].bytes == big) || (r[0].bytes == big && r[1].bytes == small));
    assert_int_equal(nodes[1]->engine->stats().resumes_tx, 0);  // nothing to resend
    assert_true(run_until(nodes, [&] { return nodes[0]->completed.size() == 1; }));
    assert_int_equal(nodes[1]->received.size(), 2);           // nothing delivered twice
    assert_int_equal(nodes[0]->engine->stats().msgs_rx, 0);  // nothing invented
}

// With no memory to keep it (agent_keep_mb 0), data that comes while the
// application is away is turned away: the application's next pass sends a
// resume ACK, and its sender resends at once.
static void test_data_turned_away_is_resent_on_resume(void **) {
    MemNetwork net(4000);
    net.real_time = true;
    auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) {
        with_agent(c);
        c.agent_keep_mb = 0;
    });
    std::vector<uint8_t> small = make_message(1, 64), big = make_message(2, 100000);
    send_to_node1_away(nodes, small, big);
    const rttcc_stats_t away = nodes[1]->engine->stats();
    assert_true(away.turned_away > 0);
    assert_int_equal(away.agent_kept, 0);
    assert_true(run_until(nodes, [&] { return nodes[1]->received.size() == 2 && nodes[0]->completed.size() == 1; }));
    const auto &r = nodes[1]->received;
    assert_true((r[0].bytes == small && r[1].bytes == big) || (r[0].bytes == big && r[1].bytes == small));
    assert_int_equal(nodes[1]->engine->stats().resumes_tx, 1);
    assert_true(nodes[0]->engine->stats().resumes_rx >= 1);
    assert_int_equal(nodes[0]->engine->stats().msgs_rx, 0);
}

// As above, but the socket buffer refuses node 1's first resume ACK: the
// resume goes again on the next pass (before, a plain ACK went in its
// place, and node 0 resent only on its timer, backed off while node 1 was
// away).
static void test_a_refused_resume_goes_again(void **) {
    MemNetwork net(4000);
    net.real_time = true;
    auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) {
        with_agent(c);
        c.agent_keep_mb = 0;  // turned away, not kept
    });
    std::vector<uint8_t> small = make_message(1, 64);
    iovec a{small.data(), small.size()};
    assert_int_equal(nodes[0]->engine->send(1, 1, &a, 1, nullptr), RTTCC_DONE);
    only_node0(nodes, 300);
    assert_true(nodes[1]->engine->stats().turned_away > 0);
    int refused = 0;
    nodes[1]->faults->refuse_if = [&](Channel, const TxDatagram &d) {
        const auto &h = *static_cast<const PacketHeader *>(d.iov[0].iov_base);
        return (h.flags & kFlagResume) && !refused++;
    };
    // (node 0's timer may bring the message in the pass of the refused
    // resume: the next pass must still send it)
    assert_true(run_until(
        nodes, [&] { return nodes[1]->received.size() == 1 && nodes[0]->engine->stats().resumes_rx >= 1; }, 2));
    assert_true(nodes[1]->received[0].bytes == small);
    assert_int_equal(refused, 2);  // refused one; the next went
    assert_int_equal(nodes[1]->engine->stats().resumes_tx, 2);
    assert_int_equal(nodes[0]->dead.size(), 0);
}

// The agent ACKs what was delivered before the application went away: the
// sender's message completes although node 1 never progresses again.
static void test_the_agent_sends_an_owed_ack(void **) {
    MemNetwork net(4000);
    net.real_time = true;
    auto nodes = make_nodes(net, 2, {}, with_agent);
    std::vector<uint8_t> big = make_message(3, 30000);
    send_big(nodes, big);
    assert_true(run_until(nodes, [&] { return nodes[1]->received.size() == 1; }));
    // Node 1 goes away now, possibly owing the ACK of the last segments.
    only_node0(nodes, 1000, [&] { return !nodes[0]->completed.empty(); });
    assert_int_equal(nodes[0]->completed.size(), 1);
    assert_int_equal(nodes[0]->dead.size(), 0);
}

// Node 1's own send completes while its application is away: the agent
// takes the ACK (the completion waits for the application's next pass).
static void test_the_agent_keeps_our_own_sends_going(void **) {
    MemNetwork net(4000);
    net.real_time = true;
    auto nodes = make_nodes(net, 2, {}, with_agent);
    std::vector<uint8_t> big = make_message(4, 50000);
    iovec b{big.data(), big.size()};
    assert_int_equal(nodes[1]->engine->send(0, 1, &b, 1, &big), RTTCC_OK);
    only_node0(nodes, 300);  // node 1's agent sends and resends; node 0 receives and ACKs
    assert_int_equal(nodes[0]->received.size(), 1);
    assert_true(nodes[0]->received[0].bytes == big);
    assert_int_equal(nodes[1]->completed.size(), 0);  // no callback from the agent
    // The application's next pass reports it.  A progress call made while
    // the agent holds the receive turn returns at once: call until one runs.
    for (int i = 0; i < 100000 && nodes[1]->completed.empty(); ++i) nodes[1]->engine->progress();
    assert_int_equal(nodes[1]->completed.size(), 1);
}

// A peer heard once and then silent: the reason gives how long ago, which
// is the time since it was heard (not the age of the machine).  A 20 ms
// RTO doubled up to 80 ms resends at 20, 60 and 140 ms: the first resend
// at least peer_timeout (100 ms) after the send, with two retransmissions
// behind it, declares it dead.
static void test_a_peer_gone_silent_is_dead_with_the_time_since_heard(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) { c.peer_timeout_ms = 100; });
    std::vector<uint8_t> hello = make_message(9, 100);
    iovec h{hello.data(), hello.size()};
    assert_int_equal(nodes[1]->engine->send(0, 1, &h, 1, nullptr), RTTCC_DONE);
    assert_true(run_until(nodes, [&] { return nodes[0]->received.size() == 1; }));
    const nanos heard = now_of(nodes);
    net.clock.advance(msec(300));  // node 1 is silent from now on
    std::vector<uint8_t> big = make_message(6, 20000);
    assert_int_equal(send_until_dead(nodes, big, 2000), msec(140));
    assert_int_equal(now_of(nodes) - heard, msec(440));
    assert_string_equal(nodes[0]->dead_why[0].c_str(),
                        "no acknowledgement for 0.1 s despite 2 retransmissions of the oldest segment, "
                        "and nothing heard from it for 0.4 s");
}

// The data channel is a black hole while node 1 keeps talking on the
// command channel (it sends node 0 a small message every 10 ms): node 1 is
// declared dead all the same, at the first resend (20, 60, 140, 220 ms)
// at least peer_timeout (150 ms) after the send, and the reason says its
// datagrams do not get through.
static void test_a_one_way_data_black_hole_is_dead(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) {
        c.peer_timeout_ms = 150;
        c.inline_max = 64;
    });
    nodes[0]->faults->drop_if = [](Channel ch, const TxDatagram &) { return ch == kData; };
    std::vector<uint8_t> big = make_message(7, 20000), small = make_message(8, 32);
    iovec s{small.data(), small.size()};
    const nanos start = now_of(nodes);
    send_big(nodes, big);
    nanos next_small = start;
    while (nodes[0]->dead.empty() && now_of(nodes) < start + msec(3000)) {
        if (now_of(nodes) >= next_small) {
            nodes[1]->engine->send(0, 2, &s, 1, nullptr);
            next_small += msec(10);
        }
        next_round(nodes);
        nodes[0]->engine->progress();
        nodes[1]->engine->progress();
    }
    assert_int_equal(nodes[0]->dead.size(), 1);
    assert_int_equal(now_of(nodes) - start, msec(220));
    assert_true(has(nodes[0]->dead_why[0], "though it still sends (last heard 0.0 s ago)"));
    assert_true(has(nodes[0]->dead_why[0], "data-channel"));
    assert_int_equal(nodes[0]->received.size(), 22);  // it did keep talking: every 10 ms until the end
}

// Passive-target RMA: node 1 exposes a window to node 0 and computes; node
// 0's puts into it land and complete although node 1's application never
// progresses (its agent lands them).  So do puts into an ordinary grant
// (a receive buffer: a rendezvous, a get's reply), but their owner hears
// of them (on_put) only when its application is back, at its first pass.
static void test_the_agent_lands_puts_into_an_exposure(void **) {
    MemNetwork net(4000);
    net.real_time = true;
    auto nodes = make_nodes(net, 2, {}, with_agent);
    std::vector<uint8_t> window(300000, 0xee), granted(120000, 0xee);
    const uint32_t exposed = nodes[1]->engine->grant(0, window.data(), window.size(), /*notify=*/false);
    const uint32_t told = nodes[1]->engine->grant(0, granted.data(), granted.size());
    std::vector<uint8_t> big = make_message(5, 250000), medium = make_message(6, 100000);
    iovec b{big.data(), big.size()}, m{medium.data(), medium.size()};
    assert_int_equal(nodes[0]->engine->put(1, exposed, 1000, 3, &b, 1, &big), RTTCC_OK);
    only_node0(nodes, 2000, [&] { return !nodes[0]->completed.empty(); });
    assert_int_equal(nodes[0]->completed.size(), 1);  // landed and ACKed by node 1's agent
    assert_memory_equal(window.data() + 1000, big.data(), big.size());
    assert_int_equal(nodes[1]->engine->stats().turned_away, 0);
    assert_true(nodes[1]->engine->stats().agent_passes > 0);

    assert_int_equal(nodes[0]->engine->put(1, told, 0, 3, &m, 1, &medium), RTTCC_OK);
    only_node0(nodes, 2000, [&] { return nodes[0]->completed.size() == 2; });
    assert_int_equal(nodes[0]->completed.size(), 2);  // landed and ACKed while node 1 computes
    assert_memory_equal(granted.data(), medium.data(), medium.size());
    assert_true(nodes[1]->puts.empty());  // its owner is away: the news waits
    assert_int_equal(nodes[1]->engine->stats().turned_away, 0);
    nodes[1]->engine->progress();  // its first pass tells it
    assert_int_equal(nodes[1]->puts.size(), 1);
    run_until(nodes, [] { return false; }, 0.05);
    assert_int_equal(nodes[1]->puts.size(), 1);  // once
    assert_int_equal(nodes[0]->dead.size(), 0);
}

// A put landed while its owner was away was acknowledged: its sender
// counts it done.  So the owner hears of it even if the sender is declared
// dead before its application is back (then of the death, after).
static void test_a_put_landed_is_told_though_its_sender_died(void **) {
    MemNetwork net(4000);
    net.real_time = true;
    auto nodes = make_nodes(net, 2, {}, with_agent);
    std::vector<uint8_t> granted(120000, 0xee), medium = make_message(6, 100000);
    const uint32_t told = nodes[1]->engine->grant(0, granted.data(), granted.size());
    iovec m{medium.data(), medium.size()};
    assert_int_equal(nodes[0]->engine->put(1, told, 0, 3, &m, 1, &medium), RTTCC_OK);
    only_node0(nodes, 2000, [&] { return nodes[0]->completed.size() == 1; });
    assert_int_equal(nodes[0]->completed.size(), 1);
    nodes[1]->engine->fail_peer(0, "the test declares it dead");
    nodes[1]->engine->progress();
    assert_int_equal(nodes[1]->puts.size(), 1);
    assert_int_equal(nodes[1]->dead.size(), 1);
    assert_memory_equal(granted.data(), medium.data(), medium.size());
}

// Puts that wait for company (Engine::waits_for_company) leave with the
// agent's quiet passes when their application computes right after
// issuing them: the target gets every byte although the origin never
// progresses again.
static void test_the_agent_sends_puts_that_wait(void **) {
    std::vector<uint8_t> window(60000, 0xee);  // before the nodes: their agents outlive nothing they write
    std::vector<uint8_t> a = make_message(7, 20000), b = make_message(8, 20000);
    MemNetwork net(4000);
    net.real_time = true;
    auto nodes = make_nodes(net, 2, {}, with_agent);
    const uint32_t key = nodes[1]->engine->grant(0, window.data(), window.size(), /*notify=*/false);
    iovec ia{a.data(), a.size()}, ib{b.data(), b.size()};
    for (auto &n : nodes) n->engine->progress();  // both applications are here: no agent is passing yet
    assert_int_equal(nodes[0]->engine->put(1, key, 0, 3, &ia, 1, &a), RTTCC_OK);
    assert_int_equal(nodes[0]->engine->put(1, key, 30000, 3, &ib, 1, &b), RTTCC_OK);
    assert_int_equal(nodes[0]->engine->stats().sends_waited, 1);  // the second waits behind the first
    const nanos end = monotonic_clock().now() + msec(2000);  // node 0 computes; node 1 progresses
    while (nodes[1]->engine->stats().msgs_rx < 2 && monotonic_clock().now() < end) nodes[1]->engine->progress();
    assert_int_equal(nodes[1]->engine->stats().msgs_rx, 2);  // node 0's agent sent it
    assert_true(nodes[0]->engine->stats().agent_passes > 0);
    assert_memory_equal(window.data(), a.data(), a.size());
    assert_memory_equal(window.data() + 30000, b.data(), b.size());
}

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_agent_lands_puts_into_an_exposure),
        cmocka_unit_test(test_the_agent_sends_puts_that_wait),
        cmocka_unit_test(test_a_put_landed_is_told_though_its_sender_died),
        cmocka_unit_test(test_a_busy_peer_is_not_declared_dead),
        cmocka_unit_test(test_data_turned_away_is_resent_on_resume),
        cmocka_unit_test(test_a_refused_resume_goes_again),
        cmocka_unit_test(test_the_agent_sends_an_owed_ack),
        cmocka_unit_test(test_the_agent_keeps_our_own_sends_going),
        cmocka_unit_test(test_a_peer_gone_silent_is_dead_with_the_time_since_heard),
        cmocka_unit_test(test_a_one_way_data_black_hole_is_dead),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
