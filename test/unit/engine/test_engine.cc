// The engine end to end over the in-memory wire: every size arrives intact
// exactly once, with and without drops, duplicates, reordering and
// truncation; foreign datagrams are refused; a silent peer is declared dead.
#include <cstring>
#include <algorithm>
#include <cerrno>
#include <atomic>
#include <thread>

#include "cmocka_cxx.h"
#include "engine_harness.h"
#include "wire/udp_wire.h"

using namespace rttcc;
using namespace rttcc_test;

static const std::vector<size_t> kSizes = {0, 1, 8, 900, 1000, 3935, 3936, 3937, 65536, 300001};

static void test_every_size_arrives_intact(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2);
    exchange(nodes, kSizes, 60);
    const auto s = nodes[0]->engine->stats();
    assert_int_equal(s.retx, 0);
    assert_true(s.segs_tx > 60);  // large ones were cut
    assert_int_equal(nodes[1]->engine->stats().msgs_rx, 60);
}

static void test_drops_are_recovered(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, FaultRates{50000, 0, 0, 0});
    exchange(nodes, kSizes, 60);
    assert_true(nodes[0]->engine->stats().retx > 0);
    assert_true(nodes[0]->faults->injected > 0);
    // Karn: an echo of a resend is never timed from the lost first
    // transmission, so every sample is a single round trip: one round, two
    // for data sent between rounds (a resend goes a round trip after the
    // first transmission at the earliest).
    const RttEstimator &rtt = nodes[0]->engine->peer(1)->rtt;
    assert_true(rtt.samples() > 0);
    assert_int_equal(rtt.min(), kRound);
    assert_true(rtt.max() <= 2 * kRound);
    assert_true(rtt.min() <= rtt.srtt() && rtt.srtt() <= rtt.max());
}

// Recovery by timeout alone (no fast retransmit, no RACK-TLP): a timeout resends the
// oldest segment, the holes after it follow by partial ACKs, and segments
// that arrived are not sent again.  (Resending every segment whose own timer
// ran out, as before, sent most of each window twice.)
static void test_timeouts_resend_only_the_lost(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, FaultRates{20000, 0, 0, 0}, [](rttcc_config_t &c) {
        c.retrans_timeout_us = c.min_rto_us = 20000;
        c.max_rto_us = 80000;
        c.fast_retrans_dupacks = 0;
        c.rack = false;
    });
    exchange(nodes, {60000, 200000}, 40);
    const uint64_t lost = nodes[0]->faults->injected + nodes[1]->faults->injected;
    const rttcc_stats_t s = nodes[0]->engine->stats();
    assert_true(lost > 0);
    assert_true(s.retx_timeout > 0);
    assert_true(s.retx_timeout <= 2 * lost + 4);
    assert_true(nodes[1]->engine->stats().dup_segs <= 2 * lost + 4);
}

// Selective ACKs: a burst of 30 consecutive data segments lost in the middle
// of a message is resent whole within a round trip, each hole once, without
// waiting for the timer (2 s here; NewReno alone, one hole per round trip,
// needs the timer for all but the first).  Three rounds: the data arrives
// and is SACKed, the holes are resent and arrive, their ACK completes it.
static void test_sack_resends_a_lost_burst_at_once(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) {
        c.retrans_timeout_us = c.min_rto_us = 2000000;
        c.max_rto_us = 4000000;
    });
    const seq_t first = nodes[0]->engine->peer(1)->tx.una();
    nodes[0]->faults->drop_if = [&](Channel ch, const TxDatagram &d) {
        const auto *h = static_cast<const PacketHeader *>(d.iov[0].iov_base);
        const uint32_t nth = h->seq - first;
        return ch == kData && (h->tx_id & 0xffffu) == 1 && nth >= 20 && nth < 50;  // first transmissions only
    };
    const std::vector<uint8_t> msg = make_message(7, 400000);  // ~100 segments
    iovec iov{const_cast<uint8_t *>(msg.data()), msg.size()};
    const nanos start = now_of(nodes);
    int cookie;
    assert_int_equal(nodes[0]->engine->send(1, 3, &iov, 1, &cookie), RTTCC_OK);
    assert_true(run_until(nodes, [&] { return nodes[0]->completed.size() == 1; }, 10));
    assert_int_equal(now_of(nodes) - start, 3 * kRound);
    assert_int_equal(nodes[1]->received.size(), 1);
    assert_true(nodes[1]->received[0].bytes == msg);
    const rttcc_stats_t s = nodes[0]->engine->stats();
    assert_int_equal(s.retx_timeout, 0);
    assert_int_equal(s.retx_fast, 30);
    assert_int_equal(s.retx, 30);
    assert_int_equal(nodes[1]->engine->stats().dup_segs, 0);  // what arrived was never sent twice
    assert_int_equal(nodes[0]->engine->peer(1)->data_in_flight, 0);  // every credit came back
}

// A send, or a pass, sends at most about 1 MiB of new data, however large
// the path's datagrams: nothing is read while the wire copies, and 16 MiB at
// once (the window of 256 loopback segments of 64 KiB) held a peer's
// commands for longer than the RTO's floor.  The rest goes in later passes.
static void test_a_call_sends_about_a_mebibyte(void **) {
    MemNetwork net(65536);
    auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) { c.max_message = 4 << 20; });
    const auto queued = [&] {
        size_t n = 0;
        for (const auto &d : net.queue(1, kData)) n += d.size();
        return n;
    };
    const std::vector<uint8_t> msg = make_message(5, 4 << 20);
    iovec iov{const_cast<uint8_t *>(msg.data()), msg.size()};
    assert_int_equal(nodes[0]->engine->send(1, 3, &iov, 1, nullptr), RTTCC_OK);
    assert_in_range(queued(), 1 << 20, (1 << 20) + 65536);  // the budget, give or take a segment's headers
    nodes[0]->engine->progress();
    assert_in_range(queued(), 2 << 20, (2 << 20) + 2 * 65536);
    assert_true(run_until(nodes, [&] { return nodes[1]->received.size() == 1; }, 200));
    assert_true(nodes[1]->received[0].bytes == msg);
}

// And a pass reads about as much: a burst of 32 datagrams of 64 KiB (2 MiB)
// is over the budget, so a pass takes one burst where it took up to eight,
// copying 16 MiB in and out with nothing sent meanwhile.
static void test_a_pass_reads_about_a_mebibyte(void **) {
    MemNetwork net(65536);
    auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) { c.max_message = 4 << 20; });
    const std::vector<uint8_t> msg = make_message(6, 4 << 20);
    iovec iov{const_cast<uint8_t *>(msg.data()), msg.size()};
    assert_int_equal(nodes[0]->engine->send(1, 3, &iov, 1, nullptr), RTTCC_OK);
    while (nodes[0]->engine->peer(1)->has_pending()) nodes[0]->engine->progress();  // node 1 reads nothing yet
    const size_t sent = net.queue(1, kData).size();
    assert_true(sent > 64);  // more than two bursts
    nodes[1]->engine->progress();
    assert_int_equal(sent - net.queue(1, kData).size(), nodes[1]->engine->config().rx_batch);
    assert_true(run_until(nodes, [&] { return nodes[1]->received.size() == 1; }, 200));
    assert_true(nodes[1]->received[0].bytes == msg);
}

static void test_ack_delay_is_subtracted(void **) {
    MemNetwork net(4000);
    // The receiver holds standalone ACKs for 30 ms (well inside the RTO, so
    // no resend short-cuts it); the sample must not include that: it is the
    // two rounds the datagrams took, the send having come between rounds.
    auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) {
        c.ack_delay_us = 30000;
        c.ack_every = 1000;
        c.retrans_timeout_us = c.min_rto_us = 200000;
        c.max_rto_us = 400000;
    });
    std::vector<uint8_t> msg = make_message(1, 100);
    iovec iov{msg.data(), msg.size()};
    const nanos start = now_of(nodes);
    assert_int_equal(nodes[0]->engine->send(1, 1, &iov, 1, nullptr), RTTCC_DONE);
    const Peer &p = *nodes[0]->engine->peer(1);
    assert_true(run_until(nodes, [&] { return p.rtt.samples() == 1; }, 5));
    assert_int_equal(now_of(nodes) - start, msec(30) + 2 * kRound);  // the ACK really was held
    assert_int_equal(p.rtt.latest(), 2 * kRound);                     // and its hold time was taken out
    assert_int_equal(nodes[0]->engine->stats().retx, 0);
}

// Engine::next_due, which rttcc_sim schedules its passes on, is the first
// moment a pass has timed work: a pass a nanosecond before it does nothing,
// a pass at it does the work.  Here: a delayed ACK, then an unanswered
// segment's tail-loss probe and its retransmission timeout.
static void test_next_due_is_when_timed_work_happens(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) { c.ack_delay_us = 300; });
    Engine &a = *nodes[0]->engine, &b = *nodes[1]->engine;
    auto move_to = [&](nanos t) { nodes[0]->manual->advance(t - now_of(nodes)); };
    // Does `what` change when `e` is progressed just before, then at, its next_due?
    auto happens_at_due = [&](Engine &e, const std::function<uint64_t()> &what) {
        const nanos due = e.next_due();
        assert_true(due > now_of(nodes) && due != kNever);
        const uint64_t before = what();
        move_to(due - 1);
        e.progress();
        assert_int_equal(what(), before);
        assert_int_equal(e.next_due(), due);
        move_to(due);
        e.progress();
        assert_int_equal(what(), before + 1);
    };
    a.progress();
    b.progress();  // their first keepalive scans
    assert_true(a.next_due() == now_of(nodes) + msec(test_config(0).peer_timeout_ms) / 8);  // only the next one

    std::vector<uint8_t> msg = make_message(1, 100);
    iovec iov{msg.data(), msg.size()};
    assert_int_equal(a.send(1, 1, &iov, 1, nullptr), RTTCC_DONE);  // copied: its ACK is not awaited
    b.progress();
    assert_int_equal(b.next_due(), now_of(nodes) + usec(300));
    happens_at_due(b, [&] { return b.stats().acks_tx; });

    // Node 1 computes from now on: nothing node 0 sends is ACKed.
    a.progress();  // takes the ACK
    assert_int_equal(a.send(1, 1, &iov, 1, nullptr), RTTCC_DONE);
    happens_at_due(a, [&] { return a.stats().retx_probe; });
    happens_at_due(a, [&] { return a.stats().retx_timeout; });
}

// A data segment after which the sender can send nothing more (its credits
// are used up, or it is the last one queued) is ACKed at once, not after
// ack_delay_us (200 ms here): 100 segments through 8 credits go in 13
// windows, each ACKed at once, a round each (and one more: the first went
// out between rounds), where held ACKs would take over 2.6 s.
static void test_a_waiting_sender_is_acked_at_once(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) {
        c.ack_delay_us = 200000;
        c.ack_every = 1000;
        c.send_credits = 8;
        c.retrans_timeout_us = c.min_rto_us = 2000000;
        c.max_rto_us = 4000000;
    });
    const std::vector<uint8_t> msg = make_message(5, 100 * nodes[0]->engine->peer(1)->seg_payload);
    iovec iov{const_cast<uint8_t *>(msg.data()), msg.size()};
    const nanos start = now_of(nodes);
    int cookie;
    assert_int_equal(nodes[0]->engine->send(1, 2, &iov, 1, &cookie), RTTCC_OK);
    assert_true(run_until(nodes, [&] { return nodes[0]->completed.size() == 1; }, 10));
    assert_int_equal(now_of(nodes) - start, 14 * kRound);  // no ACK was held
    assert_true(nodes[1]->received.size() == 1 && nodes[1]->received[0].bytes == msg);
    assert_int_equal(nodes[0]->engine->stats().retx, 0);
}

// A stream asks for an ACK when half its credits are in flight, not only
// when they are used up, and once until that ACK comes: the ACK of the
// first half can come back while the second half goes out.  The receiver
// does not ACK on its own here (ack_every 1000, ACKs held 200 ms), so its
// standalone ACKs are the asks it answered: 640 segments through 64
// credits are 10 windows, and 20 ACKs (10 with asks only at the cap).
static void test_a_stream_asks_for_an_ack_at_half_its_credits(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) {
        c.ack_delay_us = 200000;
        c.ack_every = 1000;
        c.send_credits = 64;
        c.rx_batch = 32;
        c.max_message = 4 << 20;
        c.retrans_timeout_us = c.min_rto_us = 2000000;
        c.max_rto_us = 4000000;
    });
    const std::vector<uint8_t> msg = make_message(7, 640 * nodes[0]->engine->peer(1)->seg_payload);
    iovec iov{const_cast<uint8_t *>(msg.data()), msg.size()};
    int cookie;
    assert_int_equal(nodes[0]->engine->send(1, 2, &iov, 1, &cookie), RTTCC_OK);
    assert_true(run_until(nodes, [&] { return nodes[0]->completed.size() == 1; }, 20));
    assert_true(nodes[1]->received.size() == 1 && nodes[1]->received[0].bytes == msg);
    const uint64_t acks = nodes[1]->engine->stats().acks_tx;
    print_message("standalone ACKs: %llu\n", static_cast<unsigned long long>(acks));
    assert_true(acks >= 18 && acks <= 22);  // two per window
    assert_int_equal(nodes[0]->engine->stats().retx, 0);
}

// Two peers sending to each other through small send credits: nearly every
// segment fills the credits and asks for an ACK at once, and the receiver
// has data of its own going back that can carry it.  It does: the ACKs ride
// on data, and far fewer go alone than segments asked for them.
static void test_a_waiting_senders_ack_rides_on_data_going_back(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) {
        c.ack_delay_us = 200000;
        c.ack_every = 1000;
        c.send_credits = 4;
    });
    const std::vector<uint8_t> msg = make_message(6, 200 * nodes[0]->engine->peer(1)->seg_payload);
    iovec iov{const_cast<uint8_t *>(msg.data()), msg.size()};
    int cookie[2];
    for (int i = 0; i < 2; ++i) assert_int_equal(nodes[i]->engine->send(1 - i, 2, &iov, 1, &cookie[i]), RTTCC_OK);
    assert_true(run_until(nodes, [&] { return nodes[0]->completed.size() == 1 && nodes[1]->completed.size() == 1; }, 10));
    for (int i = 0; i < 2; ++i) {
        assert_true(nodes[i]->received.size() == 1 && nodes[i]->received[0].bytes == msg);
        const auto &st = nodes[i]->engine->stats();
        assert_true(st.acks_piggy >= 20);
        assert_true(st.acks_tx * 10 <= st.acks_piggy);  // alone, every one asked for: 50 and 0
    }
}

// A command-channel message does not wait behind a data message that is held
// by the credits: here every data segment is dropped for a while, so the data
// message sits at its credit limit, yet the small message arrives.  Then
// the data flows again and both arrive intact, once.
static void test_command_message_passes_a_blocked_data_message(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) {
        c.send_credits = 4;
        c.retrans_timeout_us = c.min_rto_us = 20000;
        c.max_rto_us = 40000;
    });
    bool block = true;
    nodes[0]->faults->drop_if = [&](Channel ch, const TxDatagram &) { return block && ch == kData; };
    const std::vector<uint8_t> big = make_message(1, 200000), small = make_message(2, 64);
    iovec iov{const_cast<uint8_t *>(big.data()), big.size()};
    int cookie;
    assert_int_equal(nodes[0]->engine->send(1, 1, &iov, 1, &cookie), RTTCC_OK);
    iov = {const_cast<uint8_t *>(small.data()), small.size()};
    assert_int_equal(nodes[0]->engine->send(1, 2, &iov, 1, nullptr), RTTCC_DONE);
    assert_true(run_until(nodes, [&] { return nodes[1]->received.size() == 1; }, 5));
    assert_int_equal(nodes[1]->received[0].tag, 2);
    assert_true(nodes[1]->received[0].bytes == small);
    assert_true(nodes[0]->engine->peer(1)->data_in_flight == 4);  // the data message is stuck at its credits
    block = false;
    assert_true(run_until(nodes, [&] { return nodes[0]->completed.size() == 1; }, 10));
    assert_int_equal(nodes[1]->received.size(), 2);
    assert_true(nodes[1]->received[1].bytes == big);
}

static void test_duplicates_are_delivered_once(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, FaultRates{0, 100000, 0, 0});
    exchange(nodes, kSizes, 60);
    assert_true(nodes[1]->engine->stats().dup_segs > 0);
}

static void test_reordering_and_truncation(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, FaultRates{0, 0, 100000, 30000});
    exchange(nodes, kSizes, 60);
    assert_true(nodes[1]->engine->stats().drop_malformed > 0);
    assert_true(nodes[1]->engine->stats().segs_ooo > 0);
}

static void test_small_window_with_wrapping_traffic(void **) {
    MemNetwork net(1500);
    auto nodes = make_nodes(net, 2, FaultRates{20000, 20000, 20000, 0}, [](rttcc_config_t &c) {
        c.window = 64;
        c.send_credits = 16;
    });
    exchange(nodes, {70000}, 40);  // ~1900 segments through a 64-slot window
    assert_true(nodes[0]->engine->stats().window_stalls > 0);
}

static void test_foreign_datagrams_are_dropped(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2);
    PacketHeader h{};
    h.magic = kMagic;
    h.version = kVersion;
    h.type = static_cast<uint8_t>(PacketType::DATA);
    h.job_key = 0x9999;  // another job
    std::vector<uint8_t> d(4 + sizeof h);
    const uint32_t from = 0;
    std::memcpy(d.data(), &from, 4);
    std::memcpy(d.data() + 4, &h, sizeof h);
    net.queue(1, kData).push_back(d);
    h.job_key = 0x1234;
    h.src = 7;  // right job, unknown sender
    std::memcpy(d.data() + 4, &h, sizeof h);
    net.queue(1, kData).push_back(d);  // unsigned: a forgery
    h.mac = datagram_mac(RTTCC_AUTH_HEADER, published_key(*nodes[1]), h, nullptr, 0);
    std::memcpy(d.data() + 4, &h, sizeof h);
    net.queue(1, kData).push_back(d);  // signed: a process of the job, not added
    net.queue(1, kCmd).push_back({0, 0, 0, 0, 1, 2, 3});  // garbage (after the sender prefix)
    nodes[1]->engine->progress();
    const auto s = nodes[1]->engine->stats();
    assert_int_equal(s.drop_foreign, 1);
    assert_int_equal(s.drop_auth, 1);
    assert_int_equal(s.drop_unknown_peer, 1);
    assert_int_equal(s.drop_malformed, 1);
    assert_int_equal(nodes[1]->received.size(), 0);
}

// A 20 ms RTO doubled up to 80 ms resends at 20, 60 and 140 ms: the first
// resend at least peer_timeout (100 ms) after the send, with two
// retransmissions behind it, declares the peer dead.
static void test_silent_peer_is_declared_dead(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) { c.peer_timeout_ms = 100; });
    std::vector<uint8_t> big = make_message(1, 20000);
    // Node 1 never progresses: it is "stopped" (and, with no liveness agent, silent).
    const nanos took = send_until_dead(nodes, big, 2000);
    assert_int_equal(nodes[0]->dead[0], 1);
    assert_int_equal(took, msec(140));
    assert_string_equal(nodes[0]->dead_why[0].c_str(),
                        "no acknowledgement for 0.1 s despite 2 retransmissions of the oldest segment, "
                        "and nothing ever heard from it");
    assert_int_equal(nodes[0]->failed.size(), 1);  // the send was failed, not lost silently
    iovec iov{big.data(), big.size()};
    assert_int_equal(nodes[0]->engine->send(1, 1, &iov, 1, &big), RTTCC_ERR_UNREACH);
}

// A peer we owe nothing, gone after an exchange (its host cut off), is
// found by liveness probes: silent for a quarter of peer_timeout, it is
// probed; silent for all of it despite two probes, it is dead.
static void test_an_idle_peer_gone_is_found_by_liveness_probes(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) { c.peer_timeout_ms = 80; });
    exchange(nodes, {100, 3000}, 4);  // both have heard from each other
    assert_true(run_until(nodes, [&] { return nodes[0]->engine->peer(1)->tx.in_flight() == 0; }));  // nothing owed
    const nanos start = now_of(nodes);
    only_node0(nodes, 1000, [&] { return !nodes[0]->dead.empty(); });
    assert_int_equal(nodes[0]->dead.size(), 1);
    assert_int_equal(nodes[0]->dead[0], 1);
    const nanos took = now_of(nodes) - start;
    assert_true(took >= msec(80) && took <= msec(80) + msec(80) / 8 + kRound);  // the scan after peer_timeout
    assert_true(nodes[0]->engine->stats().probes_tx >= 2);
    assert_non_null(std::strstr(nodes[0]->dead_why[0].c_str(), "nothing heard from it for 0.1 s despite "));
    assert_non_null(std::strstr(nodes[0]->dead_why[0].c_str(), " liveness probes"));
}

// An idle peer that is there answers the probes: never dead.
static void test_an_idle_peer_that_answers_is_alive(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) { c.peer_timeout_ms = 80; });
    exchange(nodes, {100, 3000}, 4);
    run_until(nodes, [&] { return !nodes[0]->dead.empty() || !nodes[1]->dead.empty(); }, 2.0);
    assert_true(nodes[0]->dead.empty() && nodes[1]->dead.empty());
    assert_true(nodes[0]->engine->stats().probe_replies > 10);  // 2 s of probes every 10 ms, answered
}

// Over real UDP sockets on loopback: a peer whose process is gone (its
// sockets closed) is dead as soon as the kernel has refused three of our
// datagrams, not after the peer timeout (15 s here).
static void test_a_closed_port_is_a_dead_peer(void **) {
    MemNetwork net(4000);
    auto udp = [](int, std::unique_ptr<Wire>) -> std::unique_ptr<Wire> {
        rttcc_config_t cfg = test_config(0);
        cfg.if_include = const_cast<char *>("lo");
        cfg.timestamp = RTTCC_TS_USER;
        std::string err;
        auto w = UdpWire::open(cfg, &err);
        if (!w) fail_msg("udp wire: %s", err.c_str());
        return w;
    };
    auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) { c.peer_timeout_ms = 15000; }, nullptr, false, udp);
    nodes[1]->engine.reset();  // the process is gone: its sockets are closed
    std::vector<uint8_t> big = make_message(1, 20000);
    const nanos took = send_until_dead(nodes, big, 5000);
    print_message("dead after %.3f s: %s\n", seconds(took), nodes[0]->dead_why[0].c_str());
    assert_true(nodes[0]->dead_why[0].find("its port is closed") != std::string::npos);
    assert_true(nodes[0]->engine->stats().port_unreachable >= 3);
    assert_int_equal(nodes[0]->failed.size(), 1);
}

// Sends the kernel refuses for good (here EMSGSIZE: datagrams larger than
// the path takes) end the peer with that reason after three, not after the
// peer timeout; counted as send_errors.  The advice names the parameter of
// the channel refused: a large message's data datagrams, or a small one's
// command datagram.
static void test_sends_refused_for_good_end_the_peer(void **) {
    for (const Channel refused : {kData, kCmd}) {
        MemNetwork net(4000);
        auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) { c.peer_timeout_ms = 15000; });
        nodes[0]->faults->drop_if = [refused](Channel ch, const TxDatagram &) { return ch == refused; };
        nodes[0]->faults->fail_errno = EMSGSIZE;
        std::vector<uint8_t> msg = make_message(1, refused == kData ? 20000 : 100);
        if (refused == kData) {
            send_until_dead(nodes, msg, 5000);
            assert_int_equal(nodes[0]->failed.size(), 1);
        } else {  // copied, done at once: nothing to fail
            iovec iov{msg.data(), msg.size()};
            assert_int_equal(nodes[0]->engine->send(1, 1, &iov, 1, &msg), RTTCC_DONE);
            only_node0(nodes, 5000, [&] { return !nodes[0]->dead.empty(); });
            assert_int_equal(nodes[0]->dead.size(), 1);
        }
        const std::string &why = nodes[0]->dead_why[0];
        assert_true(why.find("refused") != std::string::npos);
        assert_true(why.find(refused == kData ? "lower rttcc_data_mtu" : "lower rttcc_cmd_mtu") != std::string::npos);
        assert_true(nodes[0]->engine->stats().send_errors >= 3);
    }
}

// Reassembly holds at most reassembly_max_mb: with room for one 1 MiB
// buffer, the second of two large messages waits (its chunks are not
// acknowledged, so they are resent) until the first is whole (its first
// chunk is lost once, so it is not before the second begins); both arrive.
static void test_reassembly_memory_is_capped(void **) {
    MemNetwork net(9000);
    auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) { c.reassembly_max_mb = 1; });
    nodes[0]->faults->drop_if = [](Channel, const TxDatagram &d) {
        const auto *h = static_cast<const PacketHeader *>(d.iov[0].iov_base);
        return h->type == static_cast<uint8_t>(PacketType::CHUNK) && h->tag == 1 && h->chunk_offset == 0 &&
               (h->tx_id & 0xffffu) == 1;
    };
    std::vector<uint8_t> a = make_message(1, 600000), b = make_message(2, 600000);
    iovec va{a.data(), a.size()}, vb{b.data(), b.size()};
    assert_int_equal(nodes[0]->engine->send(1, 1, &va, 1, &a), RTTCC_OK);
    assert_int_equal(nodes[0]->engine->send(1, 2, &vb, 1, &b), RTTCC_OK);
    assert_true(run_until(nodes, [&] { return nodes[0]->completed.size() == 2; }, 20));
    assert_int_equal(nodes[1]->received.size(), 2);
    for (const auto &r : nodes[1]->received) assert_true(r.bytes == (r.tag == 1 ? a : b));
    assert_true(nodes[1]->engine->stats().drop_undeliverable > 0);  // the second one waited
}

// A thread that asks for peers' segment sizes (mtl_rttcc's send path) while
// another adds peers (the progress thread's unknown senders) reads nothing
// that add_peer moves (test/tsan runs this under ThreadSanitizer).
static void test_peer_lookups_race_nothing_with_add_peer(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) { c.thread_safe = true; });
    std::atomic<bool> done{false};
    size_t seen = 0;
    std::thread reader([&] {
        while (!done.load())
            for (uint32_t i = 0; i < 600; i += 7) seen += nodes[0]->engine->segment_size(i) != 0;
    });
    for (uint32_t i = 2; i < 600; ++i) {
        std::string err;
        assert_true(nodes[0]->engine->add_peer(i, nodes[1]->address.data(), nodes[1]->address.size(), &err));
    }
    done.store(true);
    reader.join();
    assert_int_not_equal(nodes[0]->engine->segment_size(599), 0);
    print_message("%zu lookups found a peer\n", seen);
}

static void test_unknown_sender_is_reported_and_added(void **) {
    MemNetwork net(4000);
    // Node 1 has not added node 0 (lazy add_procs); node 0 knows node 1.
    auto nodes = make_nodes(net, 2, {}, nullptr, [](int from, int to) { return !(from == 1 && to == 0); });
    Node &n1 = *nodes[1];
    n1.add_unknown = [&](uint32_t peer) {
        std::string err;
        assert_true(n1.engine->add_peer(peer, nodes[peer]->address.data(), nodes[peer]->address.size(), &err));
    };
    std::vector<uint8_t> msg = make_message(3, 20000);  // zero-copy: its completion proves the ACKs got back
    iovec iov{msg.data(), msg.size()};
    nodes[0]->engine->send(1, 9, &iov, 1, &msg);
    assert_true(run_until(nodes, [&] { return n1.received.size() == 1 && nodes[0]->completed.size() == 1; }, 10));
    assert_int_equal(n1.unknown.size(), 1);  // reported once, not per datagram
    assert_int_equal(n1.unknown[0], 0);
    assert_true(n1.received[0].bytes == msg);
    assert_true(n1.engine->stats().drop_unknown_peer >= 1);  // the first transmission was refused
    assert_true(nodes[0]->engine->stats().retx >= 1);        // and its retransmission got in
}

// Node 0's client has news owed (peer 1 failed with a send in flight): no
// send tells it, whatever the send; the next progress pass does.
static void test_a_send_calls_nobody_back(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 3);
    Node &n0 = *nodes[0];
    std::vector<uint8_t> lost = make_message(1, 20000);
    send_big(nodes, lost);
    n0.engine->fail_peer(1, "the test says so");
    std::vector<uint8_t> big = make_message(2, 20000);
    iovec whole{big.data(), big.size()}, small{big.data(), 8};
    assert_int_equal(n0.engine->send(2, 1, &whole, 1, &big), RTTCC_OK);      // zero-copy
    assert_int_equal(n0.engine->send(2, 1, &small, 1, nullptr), RTTCC_DONE);  // copied
    assert_int_equal(n0.engine->send_now(2, 1, 8, [](void *, void *dst, size_t n) { std::memset(dst, 7, n); }, nullptr),
                     RTTCC_DONE);
    assert_true(n0.dead.empty() && n0.failed.empty() && n0.completed.empty());
    n0.engine->progress();
    assert_int_equal(n0.dead.size(), 1);
    assert_int_equal(n0.dead[0], 1);
    assert_int_equal(n0.failed.size(), 1);
    assert_ptr_equal(n0.failed[0], &lost);
    assert_true(run_until(nodes, [&] { return n0.completed.size() == 1 && nodes[2]->received.size() == 3; }));
}

// A client may end the peer whose message it is being handed (the
// exchange hub does when the peer breaks its protocol).  The engine freed
// the peer's partial messages then, and took the delivered one's buffer
// back from a slot that was no longer there: a wild index, a crash.  Now
// the delivered message is the engine's own until the call returns, and
// the engine goes on: node 2's chunked messages still arrive whole.
static void test_a_client_may_end_the_peer_of_the_message_it_is_handed(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 3);
    Node &n1 = *nodes[1];
    n1.on_delivery = [&](uint32_t peer) {
        if (peer == 0) n1.engine->fail_peer(0, "its client says so");
    };
    const std::vector<uint8_t> msg = make_message(4, 20000), other = make_message(5, 30000);
    iovec iov{const_cast<uint8_t *>(msg.data()), msg.size()};
    assert_int_equal(nodes[0]->engine->send(1, 9, &iov, 1, &iov), RTTCC_OK);  // zero-copy (test_config)
    assert_true(run_until(nodes, [&] { return n1.received.size() == 1 && n1.dead.size() == 1; }, 10));
    assert_true(n1.received[0].bytes == msg);
    assert_int_equal(n1.dead[0], 0);
    for (int i = 0; i < 2; ++i) {
        iovec o{const_cast<uint8_t *>(other.data()), other.size()};
        assert_int_equal(nodes[2]->engine->send(1, 9, &o, 1, &o), RTTCC_OK);
    }
    assert_true(run_until(nodes, [&] { return n1.received.size() == 3; }, 10));
    assert_true(n1.received[1].bytes == other && n1.received[2].bytes == other);
}

// The harness sends every message above inline_max zero-copy
// (test_config); these tests copy as the engine ships.
static void copies_as_shipped(rttcc_config_t &c) {
    rttcc_config_t d;
    rttcc_config_defaults(&d);
    c.send_copy_max = d.send_copy_max;
}

// With the default send_copy_max, a message up to 256 KiB + 64 sent while
// nothing else to its peer is unacknowledged is copied: its send is done at
// once and the caller may reuse the buffer.  A larger one, one of the same
// size sent behind it (a stream), and a put go zero-copy and complete on
// the ACK.
static void test_messages_up_to_send_copy_max_are_copied_when_alone(void **) {
    MemNetwork net(4000);
    rttcc_config_t defaults;
    rttcc_config_defaults(&defaults);
    const size_t copied = defaults.send_copy_max, above = copied + 1;
    assert_int_equal(copied, 262144 + 64);  // an eager MPI message of 256 KiB and its header
    auto nodes = make_nodes(net, 2, {}, copies_as_shipped);
    Node &n0 = *nodes[0];
    std::vector<uint8_t> a = make_message(1, copied), b = make_message(2, above), c = make_message(4, copied);
    const std::vector<uint8_t> was_a = a;
    iovec ia{a.data(), a.size()}, ib{b.data(), b.size()}, ic{c.data(), c.size()};
    assert_int_equal(n0.engine->send(1, 1, &ia, 1, &a), RTTCC_DONE);
    std::fill(a.begin(), a.end(), 0xee);  // reused at once: the engine has its own copy
    assert_int_equal(n0.engine->send(1, 1, &ib, 1, &b), RTTCC_OK);
    assert_int_equal(n0.engine->send(1, 1, &ic, 1, &c), RTTCC_OK);  // behind b: a stream
    std::vector<uint8_t> target(copied);
    const uint32_t key = nodes[1]->engine->grant(0, target.data(), target.size());
    std::vector<uint8_t> put = make_message(3, copied);
    iovec ip{put.data(), put.size()};
    assert_int_equal(n0.engine->put(1, key, 0, 2, &ip, 1, &put), RTTCC_OK);  // its flush waits anyway
    assert_true(run_until(nodes, [&] { return n0.completed.size() == 3 && nodes[1]->received.size() == 3; }));
    assert_int_equal(position(n0.completed, &a), n0.completed.size());  // a copy is never reported
    for (const void *cookie : {(void *)&b, (void *)&c, (void *)&put}) assert_true(position(n0.completed, cookie) < 3);
    assert_true(nodes[1]->received[0].bytes == was_a);
    assert_true(nodes[1]->received[1].bytes == b);
    assert_true(nodes[1]->received[2].bytes == c);
    assert_true(target == put);
    assert_int_equal(n0.engine->send(1, 1, &ic, 1, &c), RTTCC_DONE);  // all ACKed: alone again
}

// A copy above inline_max is laid out as its datagrams (header room before
// each segment's payload): each datagram reaches the wire as one piece,
// also when resent, and arrives intact.  A zero-copy message's datagrams
// stay a header and a payload.
static void test_a_copy_goes_as_one_piece_per_datagram(void **) {
    MemNetwork net(1500);
    auto nodes = make_nodes(net, 2, {}, copies_as_shipped);
    Node &n0 = *nodes[0];
    std::vector<int> pieces;  // per data datagram sent, its iovecs
    bool dropped = false;
    n0.faults->drop_if = [&](Channel ch, const TxDatagram &d) {
        if (ch != kData) return false;
        pieces.push_back(d.iovcnt);
        if (pieces.size() == 3 && !dropped) return dropped = true;  // the third segment goes again
        return false;
    };
    const size_t len = 20000;  // above inline_max (8 KiB + 64): 15 segments at 1500
    std::vector<uint8_t> a = make_message(1, len);
    const std::vector<uint8_t> was_a = a;
    iovec half[2] = {{a.data(), 7001}, {a.data() + 7001, len - 7001}};  // pieces that do not meet segment bounds
    assert_int_equal(n0.engine->send(1, 1, half, 2, &a), RTTCC_DONE);
    std::fill(a.begin(), a.end(), 0xee);
    assert_true(run_until(nodes, [&] { return nodes[1]->received.size() == 1; }));
    assert_true(nodes[1]->received[0].bytes == was_a);
    assert_true(dropped);
    assert_true(pieces.size() >= 16);  // 15 segments and the resend
    for (int n : pieces) assert_int_equal(n, 1);
    assert_true(n0.engine->stats().retx >= 1);
    int flushed = 0;  // a is ACKed: the next message is alone again
    if (n0.engine->flush(1, 1, &flushed) == RTTCC_OK)
        assert_true(run_until(nodes, [&] { return position(n0.completed, &flushed) < n0.completed.size(); }));

    pieces.clear();
    std::vector<uint8_t> b = make_message(2, len), c = make_message(3, len);
    iovec ib{b.data(), b.size()}, ic{c.data(), c.size()};
    assert_int_equal(n0.engine->send(1, 1, &ib, 1, &b), RTTCC_DONE);
    assert_int_equal(n0.engine->send(1, 1, &ic, 1, &c), RTTCC_OK);  // behind b: zero-copy
    assert_true(run_until(nodes, [&] { return nodes[1]->received.size() == 3 && position(n0.completed, &c) < n0.completed.size(); }));
    assert_true(nodes[1]->received[1].bytes == b);
    assert_true(nodes[1]->received[2].bytes == c);
    assert_int_equal(pieces.size(), 30);
    assert_int_equal(std::count(pieces.begin(), pieces.end(), 1), 15);  // b's
    assert_int_equal(std::count(pieces.begin(), pieces.end(), 2), 15);  // c's: header and payload
}

// Copies of lone messages above inline_max hold at most send_copy_mb: a
// sender to many peers at once (an alltoall) copies that much, and sends
// the rest zero-copy.  Each copy of 200000 bytes (laid out, 51 segments of
// 3928) takes a 256 KiB buffer: 1 MiB holds four.
static void test_copies_hold_at_most_send_copy_mb(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 6, {}, [](rttcc_config_t &c) {
        copies_as_shipped(c);
        c.send_copy_mb = 1;
    });
    Node &n0 = *nodes[0];
    std::vector<std::vector<uint8_t>> msgs;
    for (uint32_t i = 1; i <= 5; ++i) msgs.push_back(make_message(i, 200000));
    std::vector<int> rc;
    for (uint32_t i = 1; i <= 5; ++i) {
        iovec v{msgs[i - 1].data(), msgs[i - 1].size()};
        rc.push_back(n0.engine->send(i, 1, &v, 1, &msgs[i - 1]));
    }
    assert_int_equal(std::count(rc.begin(), rc.end(), RTTCC_DONE), 4);
    assert_int_equal(rc[4], RTTCC_OK);  // no room left: zero-copy, done on its ACK
    assert_true(run_until(nodes, [&] {
        for (int i = 1; i <= 5; ++i)
            if (nodes[i]->received.size() != 1) return false;
        return position(n0.completed, &msgs[4]) < n0.completed.size();
    }));
    for (int i = 1; i <= 5; ++i) assert_true(nodes[i]->received[0].bytes == msgs[i - 1]);
    int flushed[5] = {};
    for (uint32_t i = 1; i <= 4; ++i)  // the copies are freed once ACKed
        if (n0.engine->flush(i, 1, &flushed[i]) == RTTCC_OK)
            assert_true(run_until(nodes, [&] { return position(n0.completed, &flushed[i]) < n0.completed.size(); }));
    iovec v{msgs[0].data(), msgs[0].size()};
    assert_int_equal(n0.engine->send(5, 1, &v, 1, nullptr), RTTCC_DONE);
}

static void test_idle_peer_memory_is_small(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2);
    const size_t idle = nodes[0]->engine->peer_memory(1);
    print_message("idle peer: %zu bytes\n", idle);
    assert_true(idle < 2184);  // with its RTT row, clock-offset filter, probe state and its counters (2048 bytes with ordered_held, 2176 with agent_kept)
}

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_size_arrives_intact),
        cmocka_unit_test(test_drops_are_recovered),
        cmocka_unit_test(test_sack_resends_a_lost_burst_at_once),
        cmocka_unit_test(test_a_call_sends_about_a_mebibyte),
        cmocka_unit_test(test_a_pass_reads_about_a_mebibyte),
        cmocka_unit_test(test_timeouts_resend_only_the_lost),
        cmocka_unit_test(test_ack_delay_is_subtracted),
        cmocka_unit_test(test_next_due_is_when_timed_work_happens),
        cmocka_unit_test(test_a_waiting_sender_is_acked_at_once),
        cmocka_unit_test(test_a_stream_asks_for_an_ack_at_half_its_credits),
        cmocka_unit_test(test_a_waiting_senders_ack_rides_on_data_going_back),
        cmocka_unit_test(test_command_message_passes_a_blocked_data_message),
        cmocka_unit_test(test_duplicates_are_delivered_once),
        cmocka_unit_test(test_reordering_and_truncation),
        cmocka_unit_test(test_small_window_with_wrapping_traffic),
        cmocka_unit_test(test_foreign_datagrams_are_dropped),
        cmocka_unit_test(test_silent_peer_is_declared_dead),
        cmocka_unit_test(test_an_idle_peer_gone_is_found_by_liveness_probes),
        cmocka_unit_test(test_an_idle_peer_that_answers_is_alive),
        cmocka_unit_test(test_a_closed_port_is_a_dead_peer),
        cmocka_unit_test(test_sends_refused_for_good_end_the_peer),
        cmocka_unit_test(test_reassembly_memory_is_capped),
        cmocka_unit_test(test_peer_lookups_race_nothing_with_add_peer),
        cmocka_unit_test(test_unknown_sender_is_reported_and_added),
        cmocka_unit_test(test_a_send_calls_nobody_back),
        cmocka_unit_test(test_a_client_may_end_the_peer_of_the_message_it_is_handed),
        cmocka_unit_test(test_messages_up_to_send_copy_max_are_copied_when_alone),
        cmocka_unit_test(test_a_copy_goes_as_one_piece_per_datagram),
        cmocka_unit_test(test_copies_hold_at_most_send_copy_mb),
        cmocka_unit_test(test_idle_peer_memory_is_small),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
