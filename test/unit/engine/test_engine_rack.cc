// RACK-TLP (engine_rack.cc) over the in-memory wire, where a round trip is
// one round (10 us) and the retransmission timeout is made 200 ms: a lost tail
// and a lost resend are repaired in round trips, and with rack off the same
// losses wait for the timeout (so each test shows what it measures).  A
// peer that is merely away costs one probe and no window cut.
#include <algorithm>
#include <cstring>

#include "cmocka_cxx.h"
#include "engine_harness.h"

using namespace rttcc;
using namespace rttcc_test;

static bool g_rack = true;
constexpr nanos kSlowRto = msec(200);  // far from any round trip, near enough to keep the controls quick

static void slow_timeout(rttcc_config_t &c) {
    c.retrans_timeout_us = c.min_rto_us = static_cast<unsigned>(kSlowRto / 1000);
    c.max_rto_us = static_cast<unsigned>(2 * kSlowRto / 1000);
    c.rack = g_rack;
}

// Node 0 sends node 1 8-byte messages, one a round trip, until it has
// three RTT samples (no probe goes before the first); returns how many.
static size_t warm_up(std::vector<std::unique_ptr<Node>> &nodes) {
    std::vector<uint8_t> byte{1};
    while (nodes[0]->engine->peer(1)->rtt.samples() < 3) {
        iovec iov{byte.data(), byte.size()};
        assert_int_equal(nodes[0]->engine->send(1, 1, &iov, 1, nullptr), RTTCC_DONE);
        const size_t before = nodes[0]->engine->peer(1)->rtt.samples();
        assert_true(run_until(nodes, [&] { return nodes[0]->engine->peer(1)->rtt.samples() > before; }, 1));
    }
    return nodes[1]->received.size();
}

static const PacketHeader &header_of(const TxDatagram &d) {
    return *static_cast<const PacketHeader *>(d.iov[0].iov_base);
}

// Runs body(rack, nodes, warm) with rack on, then (the control) off, each
// time on two fresh nodes warmed up to an RTT.
template <typename F>
static void with_rack_and_without(F &&body) {
    for (bool rack : {true, false}) {
        g_rack = rack;
        MemNetwork net(4000);
        auto nodes = make_nodes(net, 2, {}, slow_timeout);
        const size_t warm = warm_up(nodes);
        body(rack, nodes, warm);
    }
    g_rack = true;
}

// The first transmission of an 8-byte message is lost, and nothing follows
// it: with rack, the probe resends it after two SRTT and the ACK delay.
static void test_a_lost_tail_is_probed(void **) {
    with_rack_and_without([](bool rack, std::vector<std::unique_ptr<Node>> &nodes, size_t warm) {
        int lost = 0;
        nodes[0]->faults->drop_if = [&](Channel, const TxDatagram &d) {
            return header_of(d).type == static_cast<uint8_t>(PacketType::DATA) && !lost++;
        };
        const uint8_t byte = 42;
        iovec iov{const_cast<uint8_t *>(&byte), 1};
        const nanos start = now_of(nodes);
        assert_int_equal(nodes[0]->engine->send(1, 9, &iov, 1, nullptr), RTTCC_DONE);
        assert_true(run_until(nodes, [&] { return nodes[1]->received.size() == warm + 1; }, 10));
        const nanos took = now_of(nodes) - start;
        const rttcc_stats_t s = nodes[0]->engine->stats();
        print_message("rack %d: the lost tail arrived after %.0f us\n", rack, took / 1e3);
        assert_int_equal(lost, 2);  // dropped one; asked about the next
        assert_true(nodes[1]->received[warm].bytes == std::vector<uint8_t>{42});
        if (rack) {
            const Peer &p = *nodes[0]->engine->peer(1);  // the probe timeout (engine_rack.cc)
            const nanos pto = std::max(2 * p.rtt.srtt() + usec(50), p.response.srtt() + 4 * p.response.rttvar());
            assert_true(took <= pto + 3 * kRound);
            assert_true(took <= usec(200));
            assert_int_equal(s.retx_probe, 1);
            assert_int_equal(s.retx_timeout, 0);
        } else {
            assert_true(took >= kSlowRto);
            assert_int_equal(s.retx_probe, 0);
            assert_int_equal(s.retx_timeout, 1);
        }
        assert_int_equal(nodes[1]->engine->stats().dup_segs, 0);
    });
}

// A command-channel message (8 bytes) is lost, and a data-channel message
// sent right after it arrives: RACK cannot tell from data-channel news
// (each channel is its own FIFO), so the command channel's own tail carries
// a probe.  Before, only the newest transmission overall did: the lost
// command (an RMA request, a FIN) waited for the RTO while the data went on
// (most of the 5 ms stalls at 0.1% drop on one host).
static void test_a_lost_command_before_data_is_probed(void **) {
    with_rack_and_without([](bool rack, std::vector<std::unique_ptr<Node>> &nodes, size_t warm) {
        int lost = 0;
        nodes[0]->faults->drop_if = [&](Channel ch, const TxDatagram &d) {
            return ch == kCmd && header_of(d).type == static_cast<uint8_t>(PacketType::DATA) && !lost++;
        };
        const uint8_t byte = 42;
        iovec iov{const_cast<uint8_t *>(&byte), 1};
        std::vector<uint8_t> data = make_message(6, 3000);  // one data-channel segment
        iovec data_iov{data.data(), data.size()};
        const nanos start = now_of(nodes);
        assert_int_equal(nodes[0]->engine->send(1, 9, &iov, 1, nullptr), RTTCC_DONE);
        assert_int_equal(nodes[0]->engine->send(1, 10, &data_iov, 1, nullptr), RTTCC_DONE);
        assert_true(run_until(nodes, [&] { return nodes[1]->received.size() == warm + 2; }, 10));
        const nanos took = now_of(nodes) - start;
        const rttcc_stats_t s = nodes[0]->engine->stats();
        print_message("rack %d: the lost command arrived after %.0f us\n", rack, took / 1e3);
        assert_true(lost >= 2);
        bool got_byte = false, got_data = false;
        for (size_t i = warm; i < nodes[1]->received.size(); ++i) {
            got_byte |= nodes[1]->received[i].bytes == std::vector<uint8_t>{42};
            got_data |= nodes[1]->received[i].bytes == data;
        }
        assert_true(got_byte && got_data);
        if (rack) {
            const Peer &p = *nodes[0]->engine->peer(1);  // the probe timeout (engine_rack.cc)
            const nanos pto = std::max(2 * p.rtt.srtt() + usec(50), p.response.srtt() + 4 * p.response.rttvar());
            assert_true(took <= pto + 3 * kRound);
            assert_int_equal(s.retx_probe, 1);
            assert_int_equal(s.retx_timeout, 0);
        } else {
            assert_true(took >= kSlowRto);
        }
        assert_int_equal(nodes[1]->engine->stats().dup_segs, 0);
    });
}

// Two commands go in one pass and the first is lost: the second's SACK is
// news of the command channel alone (no data segment freed, nothing ACKed
// cumulatively), and RACK must act on it.  Before, only an ACK or a freed
// data segment ran the RACK scan, so the first waited for the RTO: the
// stream of FINs and RMA requests of a bandwidth run at 0.1% drop on one
// host timed out this way.  Meanwhile node 1 sends node 0 data whose
// segments carry ACKs (without SACKs) too: a stream, or a reply to each
// message it is handed, sent from inside the callback (its segment took
// the ACK the burst owed, and the hole waited for the probe).
enum class Back { kNothing, kStream, kReplies };
static void sack_of_a_command(Back back) {
    with_rack_and_without([back](bool rack, std::vector<std::unique_ptr<Node>> &nodes, size_t warm) {
        std::vector<uint8_t> stream = make_message(7, 20000), reply = make_message(5, 600);
        size_t streamed = 0;
        const size_t back_before = nodes[0]->received.size();
        auto pump = [&] {  // node 1 keeps 4 messages in flight to node 0
            iovec is{stream.data(), stream.size()};
            if (back == Back::kStream && nodes[0]->received.size() + 4 > back_before + streamed &&
                nodes[1]->engine->send(0, 11, &is, 1, nullptr) >= 0)
                ++streamed;
        };
        assert_true(run_until(
            nodes, [&] { pump(); return back != Back::kStream || nodes[0]->received.size() > back_before + 4; }, 1));
        if (back == Back::kReplies)
            nodes[1]->on_delivery = [&](uint32_t peer) {
                iovec ir{reply.data(), reply.size()};
                assert_true(nodes[1]->engine->send(peer, 11, &ir, 1, nullptr) >= 0);
            };
        int lost = 0;
        nodes[0]->faults->drop_if = [&](Channel ch, const TxDatagram &d) {
            return ch == kCmd && header_of(d).type == static_cast<uint8_t>(PacketType::DATA) && !lost++;
        };
        const uint8_t a = 1, b = 2;
        iovec ia{const_cast<uint8_t *>(&a), 1}, ib{const_cast<uint8_t *>(&b), 1};
        const nanos start = now_of(nodes);
        assert_int_equal(nodes[0]->engine->send(1, 9, &ia, 1, nullptr), RTTCC_DONE);
        assert_int_equal(nodes[0]->engine->send(1, 9, &ib, 1, nullptr), RTTCC_DONE);
        const size_t streamed_before = streamed;
        assert_true(run_until(nodes, [&] { pump(); return nodes[1]->received.size() == warm + 2; }, 10));
        const nanos took = now_of(nodes) - start;
        const rttcc_stats_t s = nodes[0]->engine->stats();
        print_message("rack %d, back %d: the lost command arrived after %.0f us\n", rack, static_cast<int>(back),
                      took / 1e3);
        if (rack) {
            assert_true(took <= 10 * kRound);
            assert_int_equal(s.retx_rack, 1);
            assert_int_equal(s.retx_timeout, 0);
        } else {
            assert_true(took >= kSlowRto);
        }
        assert_int_equal(nodes[1]->engine->stats().dup_segs, 0);
        if (back == Back::kStream) assert_true(streamed > streamed_before);  // data went back meanwhile
        nodes[1]->on_delivery = nullptr;
    });
}
static void test_a_sack_of_a_command_is_news(void **) { sack_of_a_command(Back::kNothing); }
static void test_a_sack_of_a_command_is_news_with_data_back(void **) { sack_of_a_command(Back::kStream); }
static void test_a_reply_from_the_callback_leaves_the_sack_owed(void **) { sack_of_a_command(Back::kReplies); }

// Two segments of a ~100-segment message are lost, and the first one's
// resend is lost again.  SACKs resend both holes in one pass; the second
// resend's arrival shows the first was lost (same pass, lower sequence
// number), and its reorder timer resends it a round trip later.
static void test_a_lost_resend_is_found_by_time(void **) {
    with_rack_and_without([](bool rack, std::vector<std::unique_ptr<Node>> &nodes, size_t warm) {
        const seq_t first = nodes[0]->engine->peer(1)->tx.next();
        nodes[0]->faults->drop_if = [&](Channel ch, const TxDatagram &d) {
            const PacketHeader &h = header_of(d);
            const uint32_t nth = h.seq - first, transmission = h.tx_id & 0xffffu;
            return ch == kData && h.type != static_cast<uint8_t>(PacketType::ACK) &&
                   ((nth == 20 && transmission <= 2) || (nth == 60 && transmission == 1));
        };
        std::vector<uint8_t> msg = make_message(3, 400000);
        const nanos start = now_of(nodes);
        send_big(nodes, msg);
        assert_true(run_until(nodes, [&] { return nodes[0]->completed.size() == 1; }, 10));
        const nanos took = now_of(nodes) - start;
        print_message("rack %d: the message with a lost resend took %.0f us\n", rack, took / 1e3);
        assert_int_equal(nodes[1]->received.size(), warm + 1);
        assert_true(nodes[1]->received[warm].bytes == msg);
        const rttcc_stats_t s = nodes[0]->engine->stats();
        assert_int_equal(s.retx_fast, 2);
        if (rack) {
            assert_true(took <= 8 * kRound);
            assert_int_equal(s.retx_rack, 1);
            assert_int_equal(s.retx_timeout, 0);
        } else {
            assert_true(took >= kSlowRto);
            assert_int_equal(s.retx_rack, 0);
            assert_int_equal(s.retx_timeout, 1);
        }
        assert_int_equal(nodes[1]->engine->stats().dup_segs, 0);  // nothing that arrived was sent again
    });
}

// Resends found by SACKs or by RACK are no timeouts: they leave the
// segment's RTO as it was (RFC 6298 backs off on timeouts alone).  The same
// segment's first, fast, RACK and probe transmissions are all lost; its
// retransmission timeout then comes one RTO (200 ms) after the probe, where a
// backoff for each of the two losses found would have made it the 400 ms cap.
// (In rttcc_sim, a 100-sender incast took 161 ms with that backoff, 16 ms
// without.)
static void test_resends_found_lost_do_not_back_off_the_timeout(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, {}, slow_timeout);
    const size_t warm = warm_up(nodes);
    const seq_t first = nodes[0]->engine->peer(1)->tx.next();
    nanos probe_sent = 0;
    nodes[0]->faults->drop_if = [&](Channel ch, const TxDatagram &d) {
        const PacketHeader &h = header_of(d);
        const uint32_t nth = h.seq - first, transmission = h.tx_id & 0xffffu;
        if (ch != kData || h.type == static_cast<uint8_t>(PacketType::ACK)) return false;
        if (nth == 20 && transmission == 4) probe_sent = now_of(nodes);
        return (nth == 20 && transmission <= 4) || (nth == 60 && transmission == 1);
    };
    std::vector<uint8_t> msg = make_message(4, 400000);
    send_big(nodes, msg);
    assert_true(run_until(nodes, [&] { return nodes[0]->completed.size() == 1; }, 10));
    const rttcc_stats_t s = nodes[0]->engine->stats();
    print_message("the timeout came %.3f s after the probe\n", (now_of(nodes) - probe_sent) / 1e9);
    assert_int_equal(s.retx_fast, 2);
    assert_int_equal(s.retx_rack, 1);
    assert_int_equal(s.retx_probe, 1);
    assert_int_equal(s.retx_timeout, 1);
    assert_true(probe_sent != 0);
    assert_true(now_of(nodes) - probe_sent <= kSlowRto + 3 * kRound);
    assert_true(nodes[1]->received.size() == warm + 1 && nodes[1]->received[warm].bytes == msg);
}

// rto_jitter_pct: four senders whose first transmissions to one host are
// all lost time out 20 ms later plus each its own draw of up to 50%, so
// they do not resend together; with 0, all four resend at 20 ms exactly.
static void test_timeouts_of_senders_lost_together_are_spread(void **) {
    for (unsigned pct : {50u, 0u}) {
        static unsigned g_pct;
        g_pct = pct;
        MemNetwork net(4000);
        auto nodes = make_nodes(net, 5, {}, [](rttcc_config_t &c) {
            c.rto_mode = RTTCC_RTO_FIXED;
            c.retrans_timeout_us = 20000;
            c.rack = false;
            c.rto_jitter_pct = g_pct;
        });
        std::vector<nanos> resent(5, 0);
        const nanos start = now_of(nodes);
        const uint8_t byte = 7;
        iovec iov{const_cast<uint8_t *>(&byte), 1};
        for (int i = 1; i < 5; ++i) {
            nodes[i]->faults->drop_if = [&, i](Channel, const TxDatagram &d) {
                const PacketHeader &h = header_of(d);
                if (h.type != static_cast<uint8_t>(PacketType::DATA)) return false;
                if ((h.tx_id & 0xffffu) == 1) return true;  // every first transmission
                if (!resent[i]) resent[i] = now_of(nodes) - start;
                return false;
            };
            assert_int_equal(nodes[i]->engine->send(0, 1, &iov, 1, nullptr), RTTCC_DONE);
        }
        assert_true(run_until(nodes, [&] { return nodes[0]->received.size() == 4; }, 1));
        const auto [lo, hi] = std::minmax_element(resent.begin() + 1, resent.end());
        print_message("rto_jitter_pct %u: resends after %.3f to %.3f ms\n", pct, *lo / 1e6, *hi / 1e6);
        assert_true(*lo >= msec(20) && *hi <= msec(30) + kRound);
        if (pct)
            assert_true(*hi - *lo >= msec(2));  // four draws of 0-10 ms: 6.6 ms apart here
        else
            assert_true(*hi - *lo <= kRound);
    }
}

static void aimd_slow_timeout(rttcc_config_t &c) {
    slow_timeout(c);
    c.cc = RTTCC_CC_AIMD;
}

// Node 1 stops progressing for 3 ms (descheduled, or computing with no
// agent) while node 0's message is in flight: one probe, no timeout, no
// cut of the congestion window; once node 1 is back, the message arrives
// once, the probe shows as one duplicate, and node 0 knows it was spurious.
static void test_a_peer_away_costs_one_probe(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, {}, aimd_slow_timeout);
    const size_t warm = warm_up(nodes);
    const double cwnd = nodes[0]->engine->peer(1)->cc->cwnd();
    std::vector<uint8_t> msg = make_message(5, 20000);
    send_big(nodes, msg);
    only_node0(nodes, 3);
    rttcc_stats_t s = nodes[0]->engine->stats();
    assert_int_equal(s.retx_probe, 1);
    assert_int_equal(s.retx, 1);
    assert_true(nodes[0]->engine->peer(1)->cc->cwnd() >= cwnd);
    assert_true(run_until(nodes, [&] { return nodes[0]->completed.size() == 1; }, 1));
    assert_int_equal(nodes[1]->received.size(), warm + 1);
    assert_true(nodes[1]->received[warm].bytes == msg);
    s = nodes[0]->engine->stats();
    assert_int_equal(s.retx_timeout, 0);
    assert_int_equal(s.retx, 1);
    assert_int_equal(nodes[1]->engine->stats().dup_segs, 1);
    // the ACK echoed the original: the probe is known spurious, the next waits twice as long
    assert_int_equal(nodes[0]->engine->peer(1)->probe_shift, 1);
}

// Absences (node 1 away for 15 ms, ten times: each costs a spurious probe)
// lengthen the probe timeout, by its doubling and by the slower answers,
// but never past 7/8 of the RTO (at least 20 ms here): a real tail loss
// after them is still probed, before the timeout.  Before, the probe
// timeout grew past the RTO, which then came first: probes stopped, and
// every lost tail waited for the RTO.
static void test_probes_stay_ahead_of_the_timeout(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) {
        c.min_rto_us = 20000;
        c.max_rto_us = 1000000;
    });
    warm_up(nodes);
    for (uint32_t i = 0; i < 10; ++i) {
        std::vector<uint8_t> msg = make_message(10 + i, 20000);
        send_big(nodes, msg);
        only_node0(nodes, 15);
        assert_true(run_until(nodes, [&] { return nodes[0]->completed.size() == i + 1; }, 1));
    }
    const Peer &p = *nodes[0]->engine->peer(1);
    print_message("after 10 absences: probe shift %u\n", unsigned{p.probe_shift});
    assert_true(p.probe_shift >= 1);  // the absences were seen
    const nanos cap = std::max(p.response.rto(), msec(20)) / 8 * 7;
    const rttcc_stats_t before = nodes[0]->engine->stats();
    int lost = 0;
    nodes[0]->faults->drop_if = [&](Channel, const TxDatagram &d) {
        return header_of(d).type == static_cast<uint8_t>(PacketType::DATA) && !lost++;
    };
    const uint8_t byte = 42;
    iovec iov{const_cast<uint8_t *>(&byte), 1};
    const size_t received = nodes[1]->received.size();
    const nanos start = now_of(nodes);
    assert_int_equal(nodes[0]->engine->send(1, 9, &iov, 1, nullptr), RTTCC_DONE);
    assert_true(run_until(nodes, [&] { return nodes[1]->received.size() == received + 1; }, 1));
    const nanos took = now_of(nodes) - start;
    const rttcc_stats_t after = nodes[0]->engine->stats();
    print_message("the lost tail arrived after %.2f ms (7/8 of the RTO: %.2f ms)\n", took / 1e6, cap / 1e6);
    assert_true(nodes[1]->received.back().bytes == std::vector<uint8_t>{42});
    assert_true(took <= cap + 3 * kRound);
    assert_int_equal(after.retx_timeout, before.retx_timeout);
    assert_int_equal(after.retx_probe, before.retx_probe + 1);
}

// A peer whose answers are now and then late by more than half the RTO
// (here 12 ms, with the RTO at its 20 ms floor: between them, 8-byte
// round trips of 10 us keep the estimators low; a tail behind a host's own
// deep queue, or a peer descheduled that long) costs probes only until
// the doubling has passed that delay: the probe timeout may grow to 7/8 of
// the RTO.  Capped at half the RTO (before), every late answer cost a
// spurious probe, for good: on the testbed, h2's 100 Mbit/s link made
// 97% of coll_rttcc's retransmissions such probes.
static void test_answers_late_by_half_the_timeout_stop_costing_probes(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) {
        c.min_rto_us = c.retrans_timeout_us = 20000;
        c.max_rto_us = 1000000;
    });
    warm_up(nodes);
    uint64_t probes_at[13] = {};
    for (uint32_t i = 0; i < 12; ++i) {
        probes_at[i] = nodes[0]->engine->stats().retx_probe;
        std::vector<uint8_t> msg = make_message(30 + i, 20000);
        send_big(nodes, msg);
        only_node0(nodes, 12);
        assert_true(run_until(nodes, [&] { return nodes[0]->completed.size() == i + 1; }, 1));
        assert_true(nodes[1]->received.back().bytes == msg);
        for (int k = 0; k < 60; ++k) {  // quick answers: the RTO back at its floor
            const size_t got = nodes[1]->received.size();
            std::vector<uint8_t> byte{7};
            iovec iov{byte.data(), byte.size()};
            assert_int_equal(nodes[0]->engine->send(1, 1, &iov, 1, nullptr), RTTCC_DONE);
            assert_true(run_until(nodes, [&] { return nodes[1]->received.size() == got + 1; }, 1));
        }
    }
    probes_at[12] = nodes[0]->engine->stats().retx_probe;
    const Peer &p = *nodes[0]->engine->peer(1);
    print_message("probes %llu, shift %u, RTO %.1f ms\n", static_cast<unsigned long long>(probes_at[12]),
                  unsigned{p.probe_shift}, static_cast<double>(std::max(p.response.rto(), msec(20))) / 1e6);
    assert_true(p.response.rto() <= msec(20));     // the floor rules
    assert_true(probes_at[12] >= 1);              // the first absences were probed
    assert_int_equal(probes_at[12], probes_at[8]);  // the last four were not
    assert_int_equal(nodes[0]->engine->stats().retx_timeout, 0);
}

// Random loss both ways, every size, with rack: everything arrives once,
// and no segment waits for the 200 ms timeout.
static void test_random_loss_never_waits_for_the_timeout(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, FaultRates{10000, 0, 0, 0}, slow_timeout);
    const nanos start = now_of(nodes);
    exchange(nodes, {0, 1, 8, 1000, 3936, 3937, 65536, 300001}, 60);  // tags 0-59 (62 is the engine's)
    const rttcc_stats_t s = nodes[0]->engine->stats();
    print_message("60 messages at 1%% loss: %.1f ms, retx %llu (rack %llu, probe %llu, fast %llu, timeout %llu)\n",
                  (now_of(nodes) - start) / 1e6, (unsigned long long)s.retx, (unsigned long long)s.retx_rack,
                  (unsigned long long)s.retx_probe, (unsigned long long)s.retx_fast,
                  (unsigned long long)s.retx_timeout);
    assert_true(nodes[0]->faults->injected + nodes[1]->faults->injected > 0);
    assert_true(s.retx > 0);
    assert_true(now_of(nodes) - start < kSlowRto);
}

// Every segment a pass first sends to a peer gets the timeouts worked out
// for the first (Engine::timeouts), but only while what they come from
// stands.  With rack, a segment's timer is its probe timeout: a sample of
// the peer's answers or round trips, or a doubled probe timeout, between
// two sends at one clock reading changes the later one's deadline.
// Without, it is the RTO, with its jitter drawn from the first send's time:
// a later clock reading draws again, and a sample above the RTO's floor
// lengthens it.
static void jittered_timeout(rttcc_config_t &c) {
    c.rack = g_rack;
    c.rto_jitter_pct = 50;
}

static void test_a_pass_works_timeouts_out_again_when_the_estimators_move(void **) {
    for (bool rack : {true, false}) {
        g_rack = rack;
        MemNetwork net(4000);
        auto nodes = make_nodes(net, 2, {}, jittered_timeout);
        warm_up(nodes);
        Peer &p = const_cast<Peer &>(*nodes[0]->engine->peer(1));  // samples between two sends
        const uint8_t byte = 7;
        iovec iov{const_cast<uint8_t *>(&byte), 1};
        auto ahead = [&] {  // how far ahead the timer of a message sent now is
            assert_int_equal(nodes[0]->engine->send(1, 9, &iov, 1, nullptr), RTTCC_DONE);
            const TxSegment &seg = *p.tx.at(p.tx.next() - 1);
            assert_true(seg.in_hotel && seg.first_tx == now_of(nodes));
            return seg.deadline - now_of(nodes);
        };
        const nanos first = ahead();
        assert_true(ahead() == first);
        if (rack) {
            p.response.on_sample(msec(3));  // answers came late: a longer probe timeout
            const nanos later = ahead();
            print_message("probe timeouts %.0f, then %.0f us\n", first / 1e3, later / 1e3);
            assert_true(later > first);
            assert_true(ahead() == later);
            p.rtt.on_sample(msec(20));  // a long round trip: two SRTT lead the probe timeout
            const nanos longer = ahead();
            assert_true(longer > later);
            ++p.probe_shift;  // a probe found spurious
            assert_true(ahead() > longer);
        } else {
            net.clock.advance(1);  // the next pass: the jitter is drawn again
            const nanos redrawn = ahead();
            print_message("timeouts %.0f, then %.0f us\n", first / 1e3, redrawn / 1e3);
            assert_true(redrawn != first);
            assert_true(ahead() == redrawn);
            p.response.on_sample(msec(60));  // far above the RTO's floor (20 ms)
            assert_true(ahead() > redrawn + msec(20));
        }
    }
    g_rack = true;
}

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_lost_tail_is_probed),
        cmocka_unit_test(test_a_lost_command_before_data_is_probed),
        cmocka_unit_test(test_a_sack_of_a_command_is_news),
        cmocka_unit_test(test_a_sack_of_a_command_is_news_with_data_back),
        cmocka_unit_test(test_a_reply_from_the_callback_leaves_the_sack_owed),
        cmocka_unit_test(test_a_lost_resend_is_found_by_time),
        cmocka_unit_test(test_resends_found_lost_do_not_back_off_the_timeout),
        cmocka_unit_test(test_timeouts_of_senders_lost_together_are_spread),
        cmocka_unit_test(test_a_peer_away_costs_one_probe),
        cmocka_unit_test(test_probes_stay_ahead_of_the_timeout),
        cmocka_unit_test(test_answers_late_by_half_the_timeout_stop_costing_probes),
        cmocka_unit_test(test_random_loss_never_waits_for_the_timeout),
        cmocka_unit_test(test_a_pass_works_timeouts_out_again_when_the_estimators_move),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
