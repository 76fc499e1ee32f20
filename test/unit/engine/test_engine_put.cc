// One-sided puts through the engine over the in-memory wire: bytes land in
// place exactly once, whatever the wire drops, duplicates or reorders; the
// receiver hears of each put once, whole; puts outside what was granted to
// their sender (another peer's grant, a revoked one, past its end) are
// dropped and counted, never written, never acknowledged.
#include <algorithm>
#include <cstring>

#include "cmocka_cxx.h"
#include "engine_harness.h"

using namespace rttcc;
using namespace rttcc_test;

// Puts `blocks` blocks of `block` bytes from node 0 into one region of node 1
// and checks every byte and every completion.
static void put_blocks(std::vector<std::unique_ptr<Node>> &nodes, size_t block, uint32_t blocks) {
    nodes[1]->puts.clear();
    nodes[0]->completed.clear();
    std::vector<uint8_t> dst(block * blocks + 16, 0xee);
    const uint32_t key = nodes[1]->engine->grant(0, dst.data(), block * blocks);
    assert_int_not_equal(key, 0);
    std::vector<std::vector<uint8_t>> src;
    for (uint32_t b = 0; b < blocks; ++b) src.push_back(make_message(b, block));
    size_t zero_copy = 0;
    for (uint32_t b = 0; b < blocks; ++b) {
        iovec iov{src[b].data(), block};
        const int rc = nodes[0]->engine->put(1, key, b * block, static_cast<uint8_t>(b), &iov, 1, &src[b]);
        assert_true(rc == RTTCC_OK || rc == RTTCC_DONE);
        zero_copy += rc == RTTCC_OK;
    }
    assert_true(run_until(nodes, [&] {
        return nodes[1]->puts.size() >= blocks && nodes[0]->completed.size() == zero_copy;
    }, 30));
    assert_int_equal(nodes[1]->puts.size(), blocks);
    std::vector<bool> seen(blocks, false);
    for (const auto &p : nodes[1]->puts) {
        assert_int_equal(p.peer, 0);
        assert_int_equal(p.key, key);
        assert_int_equal(p.len, block);
        assert_int_equal(p.offset % block, 0);
        const uint32_t b = static_cast<uint32_t>(p.offset / block);
        assert_int_equal(p.tag, static_cast<uint8_t>(b));
        assert_false(seen[b]);  // once each
        seen[b] = true;
        assert_memory_equal(dst.data() + p.offset, src[b].data(), block);
    }
    for (size_t i = block * blocks; i < dst.size(); ++i) assert_int_equal(dst[i], 0xee);  // nothing past the region
    assert_true(nodes[0]->received.empty() && nodes[1]->received.empty());  // puts are not messages
    assert_true(nodes[1]->engine->revoke(key));
}

static void test_puts_land_in_place(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2);
    put_blocks(nodes, 1, 10);        // copied, one datagram each
    put_blocks(nodes, 3000, 20);     // several segments each
    put_blocks(nodes, 262144, 4);    // the seed's segment size
}

static void test_puts_survive_a_faulty_wire(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, FaultRates{30000, 30000, 30000, 0}, [](rttcc_config_t &c) {
        c.retrans_timeout_us = c.min_rto_us = 100000;
        c.max_rto_us = 200000;
    });
    put_blocks(nodes, 70000, 12);
    assert_true(nodes[0]->faults->injected > 0);
    assert_int_equal(nodes[1]->engine->stats().drop_bad_put, 0);
}

// A put outside granted memory is never written and never acknowledged:
// puts after it still land (puts land on arrival), but the sender keeps
// resending it and in the end reports the peer lost, never a put that
// succeeded while its bytes were dropped.
static void test_puts_outside_granted_memory_are_dropped(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) { c.peer_timeout_ms = 300; });
    std::vector<uint8_t> dst(100, 0);
    const uint32_t key = nodes[1]->engine->grant(0, dst.data(), dst.size());
    std::vector<uint8_t> bytes(64, 0x42);
    iovec iov{bytes.data(), bytes.size()};
    assert_int_equal(nodes[0]->engine->put(1, key, 50, 0, &iov, 1, nullptr), RTTCC_DONE);       // overruns by 14
    assert_int_equal(nodes[0]->engine->put(1, key ^ 1, 0, 0, &iov, 1, nullptr), RTTCC_DONE);    // no such region
    assert_true(run_until(nodes, [&] { return nodes[1]->engine->stats().drop_undeliverable >= 2; }, 5));
    assert_true(std::all_of(dst.begin(), dst.end(), [](uint8_t b) { return b == 0; }));  // nothing written
    assert_true(nodes[1]->puts.empty());
    assert_int_equal(nodes[1]->engine->stats().segs_rx, 0);  // not accepted
    assert_int_equal(nodes[0]->engine->peer(1)->tx.in_flight(), 2);  // nor acknowledged
    // A good put after them lands.
    assert_int_equal(nodes[0]->engine->put(1, key, 36, 9, &iov, 1, nullptr), RTTCC_DONE);
    assert_true(run_until(nodes, [&] { return nodes[1]->puts.size() == 1; }, 5));
    assert_int_equal(dst[36], 0x42);
    assert_int_equal(dst[99], 0x42);
    assert_true(run_until(nodes, [&] { return !nodes[0]->dead.empty(); }, 5));
}

// A put with the right key from the wrong peer: node 2 grants a buffer to
// node 0; node 1 puts into it with that key (leaked, or guessed).  Nothing
// is written, node 1's put is never acknowledged, node 0's lands.
static void test_a_put_from_another_peer_is_refused(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 3, {}, [](rttcc_config_t &c) {
        c.peer_timeout_ms = 300;
        c.inline_max = 1024;  // the large puts go zero-copy: their completion says whether they were ACKed
    });
    std::vector<uint8_t> dst(5000, 0);
    const uint32_t key = nodes[2]->engine->grant(0, dst.data(), dst.size());
    const std::vector<uint8_t> bad(5000, 0x66), good = make_message(3, 5000);
    iovec small{const_cast<uint8_t *>(bad.data()), 64}, big{const_cast<uint8_t *>(bad.data()), bad.size()};
    assert_int_equal(nodes[1]->engine->put(2, key, 0, 0, &small, 1, nullptr), RTTCC_DONE);  // one datagram
    assert_int_equal(nodes[1]->engine->put(2, key, 0, 0, &big, 1, &big), RTTCC_OK);         // several
    assert_true(run_until(nodes, [&] { return nodes[2]->engine->stats().drop_bad_put >= 3; }, 5));
    assert_true(std::all_of(dst.begin(), dst.end(), [](uint8_t b) { return b == 0; }));
    assert_true(nodes[2]->puts.empty());
    rttcc_stats_t from1;
    assert_true(nodes[2]->engine->peer_stats(1, &from1));
    assert_int_equal(from1.segs_rx, 0);  // not accepted
    iovec ok{const_cast<uint8_t *>(good.data()), good.size()};
    assert_int_equal(nodes[0]->engine->put(2, key, 0, 4, &ok, 1, &ok), RTTCC_OK);
    assert_true(run_until(nodes, [&] { return nodes[2]->puts.size() == 1; }, 5));
    assert_int_equal(nodes[2]->puts[0].peer, 0);
    assert_memory_equal(dst.data(), good.data(), good.size());
    assert_true(run_until(nodes, [&] { return !nodes[1]->dead.empty(); }, 5));  // never acknowledged
    assert_true(nodes[1]->completed.empty());
    assert_int_equal(nodes[1]->failed.size(), 1);
    assert_int_equal(nodes[0]->completed.size(), 1);
    assert_true(nodes[0]->dead.empty());
}

// A put with the key of a finished call: node 1 granted node 0 a buffer for
// one call, the put landed, the grant was revoked; a late put with that key
// (a retransmission, a confused sender) lands neither there nor in the
// next call's grant to the same peer, and is never acknowledged.
static void test_a_put_with_a_finished_calls_key_is_refused(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) {
        c.peer_timeout_ms = 300;
        c.inline_max = 1024;
    });
    std::vector<uint8_t> first(3000, 0), second(3000, 0);
    const std::vector<uint8_t> bytes = make_message(1, 3000);
    iovec iov{const_cast<uint8_t *>(bytes.data()), bytes.size()};
    const uint32_t old_key = nodes[1]->engine->grant(0, first.data(), first.size());
    assert_int_equal(nodes[0]->engine->put(1, old_key, 0, 0, &iov, 1, &first), RTTCC_OK);
    assert_true(run_until(nodes, [&] { return nodes[1]->puts.size() == 1 && nodes[0]->completed.size() == 1; }, 5));
    assert_true(nodes[1]->engine->revoke(old_key));  // the call is over
    std::fill(first.begin(), first.end(), 0);
    const uint32_t new_key = nodes[1]->engine->grant(0, second.data(), second.size());  // the next call
    assert_int_not_equal(new_key, old_key);
    assert_int_equal(nodes[0]->engine->put(1, old_key, 0, 0, &iov, 1, &second), RTTCC_OK);
    assert_true(run_until(nodes, [&] { return nodes[1]->engine->stats().drop_bad_put >= 2; }, 5));
    assert_true(std::all_of(first.begin(), first.end(), [](uint8_t b) { return b == 0; }));
    assert_true(std::all_of(second.begin(), second.end(), [](uint8_t b) { return b == 0; }));
    assert_int_equal(nodes[1]->puts.size(), 1);
    assert_true(run_until(nodes, [&] { return !nodes[0]->dead.empty(); }, 5));  // never acknowledged
    assert_int_equal(nodes[0]->completed.size(), 1);
    assert_int_equal(nodes[0]->failed.size(), 1);
}

// A peer that begins more puts than its window lets it have partly landed
// (a broken peer, or one whose key leaked): each of its first `window` puts
// brings one chunk of two, the next one is refused unacknowledged, and the
// peer is declared dead, saying why (protocol_errors).  Nothing of it lands.
static void test_more_puts_partly_landed_than_the_window_end_the_peer(void **) {
    constexpr uint32_t kWindow = 64;
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) { c.window = kWindow; });
    std::vector<uint8_t> dst((kWindow + 1) * 200, 0);
    const uint32_t key = nodes[1]->engine->grant(0, dst.data(), dst.size());
    const std::vector<uint8_t> half(100, 0x5a);
    iovec payload{const_cast<uint8_t *>(half.data()), half.size()};
    for (uint32_t i = 0; i <= kWindow; ++i) {
        PacketHeader h = forged_header(PacketType::PUT, 100);
        h.tag = 1;
        h.seq = nodes[1]->engine->peer(0)->rx.next();  // in order: every one is taken, so the window moves on
        h.tx_id = transmission_id(h.seq, 0);
        h.msg_id = 1000 + i;
        h.msg_len = 200;
        h.put_addr = put_addr(key, i * 200);
        h.mac = datagram_mac(RTTCC_AUTH_HEADER, published_key(*nodes[1]), h, &payload, 1);
        inject(net, 0, 1, kData, h, half);
        nodes[1]->engine->progress();
    }
    const rttcc_stats_t s = nodes[1]->engine->stats();
    assert_int_equal(s.segs_rx, kWindow);
    assert_int_equal(s.drop_bad_put, 1);
    assert_int_equal(s.protocol_errors, 1);
    assert_int_equal(nodes[1]->dead.size(), 1);
    assert_true(nodes[1]->dead_why[0].find("more than its window") != std::string::npos);
    assert_int_equal(nodes[1]->engine->peer(0)->puts.active(), 0);  // forgotten with the peer
    assert_true(nodes[1]->puts.empty());
    for (uint32_t b = 0; b < 100; ++b) assert_int_equal(dst[kWindow * 200 + b], 0);  // the refused one
}

// Data for a tag nobody listens to (detached) is not acknowledged either.
static void test_data_for_a_detached_tag_is_not_acknowledged(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) { c.peer_timeout_ms = 300; });
    rttcc_callbacks_t cb{nodes[1].get(), Node::on_recv, Node::on_done, Node::on_dead, nullptr, Node::on_put};
    assert_int_equal(nodes[1]->engine->attach(5, cb), RTTCC_OK);
    assert_int_equal(nodes[1]->engine->detach(5), RTTCC_OK);
    std::vector<uint8_t> big = make_message(1, 20000);
    iovec iov{big.data(), big.size()};
    assert_int_equal(nodes[0]->engine->send(1, 5, &iov, 1, &big), RTTCC_OK);
    assert_true(run_until(nodes, [&] { return !nodes[0]->dead.empty(); }, 5));
    assert_int_equal(nodes[0]->completed.size(), 0);
    assert_int_equal(nodes[0]->failed.size(), 1);
    assert_true(nodes[1]->engine->stats().drop_undeliverable > 0);
    assert_true(nodes[1]->received.empty());
}

static void test_bad_put_arguments(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2);
    uint8_t b = 1;
    iovec iov{&b, 1}, none{&b, 0};
    Engine &e = *nodes[0]->engine;
    assert_int_equal(e.put(1, 0, 0, 0, &iov, 1, nullptr), RTTCC_ERR_ARG);                 // key 0
    assert_int_equal(e.put(1, 1u << 24, 0, 0, &iov, 1, nullptr), RTTCC_ERR_ARG);          // key past 24 bits
    assert_int_equal(e.put(1, 5, kPutOffsetMask + 1, 0, &iov, 1, nullptr), RTTCC_ERR_ARG);  // offset past 40 bits
    assert_int_equal(e.put(1, 5, 0, 0, &none, 1, nullptr), RTTCC_ERR_ARG);                // empty
    assert_int_equal(e.put(7, 5, 0, 0, &iov, 1, nullptr), RTTCC_ERR_UNREACH);             // no such peer
    assert_int_equal(e.grant(1, nullptr, 10), 0);
    assert_int_equal(e.grant(1, &b, 0), 0);
}

// Node 0's client has news owed (peer 1 failed with a send in flight): no
// put, grant or revoke tells it; the next progress pass does.
static void test_a_put_calls_nobody_back(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 3);
    Node &n0 = *nodes[0];
    std::vector<uint8_t> dst(30000);
    const uint32_t key = nodes[2]->engine->grant(0, dst.data(), dst.size());
    std::vector<uint8_t> lost = make_message(1, 20000);
    send_big(nodes, lost);
    n0.engine->fail_peer(1, "the test says so");
    std::vector<uint8_t> big = make_message(2, 20000);
    iovec whole{big.data(), big.size()}, small{big.data(), 8};
    assert_int_equal(n0.engine->put(2, key, 0, 1, &whole, 1, &big), RTTCC_OK);      // zero-copy
    assert_int_equal(n0.engine->put(2, key, 20000, 1, &small, 1, nullptr), RTTCC_DONE);  // copied
    uint8_t own[8];
    assert_true(n0.engine->revoke(n0.engine->grant(2, own, sizeof own)));
    assert_true(n0.dead.empty() && n0.failed.empty() && n0.completed.empty());
    n0.engine->progress();
    assert_int_equal(n0.dead.size(), 1);
    assert_int_equal(n0.failed.size(), 1);
    assert_ptr_equal(n0.failed[0], &lost);
    assert_true(run_until(nodes, [&] { return n0.completed.size() == 1 && nodes[2]->puts.size() == 2; }));
}

// An exposure (a silent grant, an RMA window's): puts land in place and
// complete at their sender, the target's client hears of none (it may have
// no on_put at all), and the usual checks hold (peer, bounds).
static void test_puts_into_an_exposure_land_silently(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 3);
    std::vector<uint8_t> window(200000, 0xee);
    const uint32_t key = nodes[1]->engine->grant(0, window.data(), 150000, /*notify=*/false);
    assert_int_not_equal(key, 0);
    std::vector<uint8_t> small = make_message(1, 100), big = make_message(2, 120000);
    iovec a{small.data(), small.size()}, b{big.data(), big.size()};
    assert_int_equal(nodes[0]->engine->put(1, key, 7, 9, &a, 1, nullptr), RTTCC_DONE);
    assert_int_equal(nodes[0]->engine->put(1, key, 20000, 9, &b, 1, &big), RTTCC_OK);
    assert_true(run_until(nodes, [&] { return nodes[0]->completed.size() == 1; }));
    assert_memory_equal(window.data() + 7, small.data(), small.size());
    assert_memory_equal(window.data() + 20000, big.data(), big.size());
    assert_int_equal(window[6], 0xee);
    assert_int_equal(window[7 + small.size()], 0xee);
    assert_int_equal(window[20000 + big.size()], 0xee);
    assert_true(nodes[1]->puts.empty());  // silent
    assert_int_equal(nodes[1]->engine->stats().msgs_rx, 2);

    // Only node 0 holds it, and only inside it.
    std::vector<uint8_t> more = make_message(3, 64);
    iovec c{more.data(), more.size()};
    const uint64_t dropped = nodes[1]->engine->stats().drop_bad_put;
    nodes[2]->engine->put(1, key, 0, 9, &c, 1, nullptr);
    nodes[0]->engine->put(1, key, 150000 - 10, 9, &c, 1, nullptr);
    (void) run_until(nodes, [] { return false; }, 0.05);
    assert_true(nodes[1]->engine->stats().drop_bad_put >= dropped + 2);
    assert_int_equal(window[0], 0xee);
    assert_int_equal(window[150000 - 10], 0xee);
    assert_true(nodes[1]->engine->revoke(key));
}

// A flush completes once everything sent before it was acknowledged, copied
// puts included, and not later: the bytes are in place when it does.
static void test_a_flush_waits_for_what_went_before(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2);
    Node &n0 = *nodes[0];
    int f0, f1, f2;
    assert_int_equal(n0.engine->flush(1, 9, &f0), RTTCC_DONE);  // nothing unacknowledged
    assert_int_equal(n0.engine->flush(7, 9, &f0), RTTCC_ERR_UNREACH);

    std::vector<uint8_t> window(600000, 0xee);
    const uint32_t key = nodes[1]->engine->grant(0, window.data(), window.size(), /*notify=*/false);
    std::vector<uint8_t> small = make_message(1, 100), a = make_message(2, 200000), b = make_message(3, 300000);
    iovec s{small.data(), small.size()}, ia{a.data(), a.size()}, ib{b.data(), b.size()};
    assert_int_equal(n0.engine->put(1, key, 0, 9, &s, 1, nullptr), RTTCC_DONE);  // copied: done here, not there
    assert_int_equal(n0.engine->flush(1, 9, &f1), RTTCC_OK);
    assert_true(run_until(nodes, [&] { return position(n0.completed, &f1) < n0.completed.size(); }));
    assert_memory_equal(window.data(), small.data(), small.size());

    assert_int_equal(n0.engine->put(1, key, 1000, 9, &ia, 1, &a), RTTCC_OK);
    assert_int_equal(n0.engine->flush(1, 9, &f2), RTTCC_OK);
    assert_int_equal(n0.engine->put(1, key, 300000, 9, &ib, 1, &b), RTTCC_OK);  // after: not waited for
    assert_true(run_until(nodes, [&] { return position(n0.completed, &f2) < n0.completed.size(); }));
    assert_true(position(n0.completed, &a) < position(n0.completed, &f2));
    assert_memory_equal(window.data() + 1000, a.data(), a.size());
    assert_true(run_until(nodes, [&] { return position(n0.completed, &b) < n0.completed.size(); }));
    assert_memory_equal(window.data() + 300000, b.data(), b.size());
    assert_true(n0.failed.empty());
}

// A put its sender asked to copy (rttcc_engine_put_copied) is done at once
// up to send_copy_max: the caller's bytes are free (overwritten here) and
// nobody is told again; the copy is what lands, also through a wire that
// drops, duplicates and reorders, and a flush still waits for its ACK.
// Beyond send_copy_max it goes zero-copy, done on its ACK.
static void test_a_copied_put_is_done_at_once(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, FaultRates{30000, 30000, 30000, 0}, [](rttcc_config_t &c) {
        c.retrans_timeout_us = c.min_rto_us = 100000;
        c.max_rto_us = 200000;
        c.send_copy_max = 65536;
    });
    Node &n0 = *nodes[0];
    const size_t copied = 40000, big = n0.engine->config().send_copy_max + 1;
    assert_true(copied > n0.engine->config().inline_max);
    std::vector<uint8_t> window(copied + big, 0xee);
    const uint32_t key = nodes[1]->engine->grant(0, window.data(), window.size());
    const std::vector<uint8_t> want = make_message(5, copied);
    std::vector<uint8_t> src = want, large = make_message(6, big);
    iovec ic{src.data(), copied}, il{large.data(), big};
    int f;
    assert_int_equal(n0.engine->put(1, key, 0, 3, &ic, 1, &src, /*copy=*/true), RTTCC_DONE);
    std::fill(src.begin(), src.end(), 0x5a);  // the caller's bytes are its own again
    assert_int_equal(n0.engine->put(1, key, copied, 4, &il, 1, &large, /*copy=*/true), RTTCC_OK);
    assert_int_equal(n0.engine->flush(1, 9, &f), RTTCC_OK);
    assert_true(run_until(nodes, [&] { return position(n0.completed, &f) < n0.completed.size(); }, 30));
    assert_true(position(n0.completed, &large) < position(n0.completed, &f));
    assert_int_equal(position(n0.completed, &src), n0.completed.size());  // the copy's caller is not told
    assert_memory_equal(window.data(), want.data(), copied);
    assert_memory_equal(window.data() + copied, large.data(), big);
    assert_int_equal(nodes[1]->puts.size(), 2);
    assert_int_equal(n0.engine->stats().puts_copied, 1);
    assert_true(n0.faults->injected > 0);
    assert_true(n0.failed.empty());
}

// A flush does not wait for the peer's delayed ACK: it asks for the ACK
// at once (the engine's clock stands still here, so a delayed ACK would
// never come).
static void test_a_flush_asks_for_its_ack(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) {
        c.ack_delay_us = 1000000;
        c.agent = false;
    });
    Node &n0 = *nodes[0];
    std::vector<uint8_t> window(1000, 0);
    const uint32_t key = nodes[1]->engine->grant(0, window.data(), window.size(), /*notify=*/false);
    std::vector<uint8_t> small = make_message(5, 8);
    iovec s{small.data(), small.size()};
    int f;
    assert_int_equal(n0.engine->put(1, key, 8, 9, &s, 1, nullptr), RTTCC_DONE);
    assert_int_equal(n0.engine->flush(1, 9, &f), RTTCC_OK);
    for (int i = 0; i < 20 && position(n0.completed, &f) == n0.completed.size(); ++i) {
        nodes[1]->engine->progress();
        n0.engine->progress();
    }
    assert_true(position(n0.completed, &f) < n0.completed.size());
    assert_memory_equal(window.data() + 8, small.data(), small.size());
}

// A put's last segment asks for its ACK itself, copied or zero-copy (its
// origin flushes next): the flush after it sends no bare ACK request, so
// the origin sends nothing but the put, and the flush still completes with
// the peer's delayed ACK a second away.
static void test_a_put_asks_for_its_ack_so_its_flush_sends_nothing(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) {
        c.ack_delay_us = 1000000;
        c.agent = false;
    });
    Node &n0 = *nodes[0];
    std::vector<uint8_t> window(100000, 0);
    const uint32_t key = nodes[1]->engine->grant(0, window.data(), window.size(), /*notify=*/false);
    int flushes[2];
    for (int k = 0; k < 2; ++k) {
        const size_t len = k == 0 ? 8 : 90000;
        std::vector<uint8_t> bytes = make_message(k + 2, len);
        iovec v{bytes.data(), bytes.size()};
        const int rc = n0.engine->put(1, key, 0, 9, &v, 1, &bytes);
        assert_true(rc == (len <= n0.engine->config().inline_max ? RTTCC_DONE : RTTCC_OK));
        const uint64_t acks = n0.engine->stats().acks_tx;
        int *f = &flushes[k];
        assert_int_equal(n0.engine->flush(1, 9, f), RTTCC_OK);
        for (int i = 0; i < 20 && position(n0.completed, f) == n0.completed.size(); ++i) {
            nodes[1]->engine->progress();
            n0.engine->progress();
        }
        assert_true(position(n0.completed, f) < n0.completed.size());
        assert_memory_equal(window.data(), bytes.data(), len);
        assert_int_equal(n0.engine->stats().acks_tx, acks);  // no ACK request of its own
    }
}

// A copied put asks for no ACK (its caller waits for none: MPI_Win_complete
// is done, and the target's next message carries the ACK); a flush after
// it still asks and gets it.
static void test_a_copied_put_asks_for_no_ack(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) {
        c.ack_delay_us = 1000000;
        c.agent = false;
        c.send_copy_max = 65536;
    });
    Node &n0 = *nodes[0], &n1 = *nodes[1];
    std::vector<uint8_t> window(40000, 0);
    const uint32_t key = n1.engine->grant(0, window.data(), window.size(), /*notify=*/false);
    for (const size_t len : {size_t{8}, window.size()}) {  // inline, laid out
        const std::vector<uint8_t> bytes = make_message(static_cast<int>(len), len);
        iovec v{const_cast<uint8_t *>(bytes.data()), len};
        const uint64_t acks = n1.engine->stats().acks_tx;
        assert_int_equal(n0.engine->put(1, key, 0, 9, &v, 1, nullptr, /*copy=*/true), RTTCC_DONE);
        for (int i = 0; i < 20; ++i) {
            n1.engine->progress();
            n0.engine->progress();
        }
        assert_memory_equal(window.data(), bytes.data(), len);
        assert_int_equal(n1.engine->stats().acks_tx, acks);  // landed, not acknowledged yet
        int f;
        assert_int_equal(n0.engine->flush(1, 9, &f), RTTCC_OK);
        assert_true(run_until(nodes, [&] { return position(n0.completed, &f) < n0.completed.size(); }));
    }
}

// A copy the engine has no memory for (send_copy_mb 0) is refused: the put
// goes zero-copy and completes on its ACK, which it asks for at once as
// any put does (the engine's clock stands still: a delayed ACK never comes).
static void test_a_refused_copy_goes_zero_copy(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) {
        c.ack_delay_us = 1000000;
        c.agent = false;
        c.send_copy_max = 65536;
        c.send_copy_mb = 0;
    });
    Node &n0 = *nodes[0];
    std::vector<uint8_t> window(40000, 0);
    const uint32_t key = nodes[1]->engine->grant(0, window.data(), window.size(), /*notify=*/false);
    const std::vector<uint8_t> bytes = make_message(7, window.size());
    iovec v{const_cast<uint8_t *>(bytes.data()), bytes.size()};
    assert_int_equal(n0.engine->put(1, key, 0, 9, &v, 1, &v, /*copy=*/true), RTTCC_OK);
    assert_true(run_until(nodes, [&] { return position(n0.completed, &v) < n0.completed.size(); }));
    assert_memory_equal(window.data(), bytes.data(), bytes.size());
    assert_int_equal(n0.engine->stats().puts_copied, 0);
}

// Puts issued back to back while an earlier one to the same peer is
// unacknowledged wait, while the queue fits one send call (tx_batch), for
// the put that does not fit, a flush or the next pass, and then leave
// together: in full GSO groups, with one ACK request for them all where
// each asked before.
static void test_back_to_back_puts_leave_together(void **) {
    MemNetwork net(1500);
    auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) {
        c.ack_delay_us = 1000000;
        c.tx_batch = 45;
    });
    Node &n0 = *nodes[0];
    constexpr size_t kBlock = 20000;  // 15 datagrams: three puts fit a send call, four do not
    std::vector<uint8_t> window(8 * kBlock, 0xee);
    const uint32_t key = nodes[1]->engine->grant(0, window.data(), window.size(), /*notify=*/false);
    std::vector<std::vector<uint8_t>> src;
    for (uint32_t b = 0; b < 7; ++b) src.push_back(make_message(b + 1, kBlock));
    MemNetwork::Queue &data = net.queue(1, kData);  // node 1 reads nothing until run_until
    auto put = [&](uint32_t b) {
        iovec v{src[b].data(), kBlock};
        assert_int_equal(n0.engine->put(1, key, b * kBlock, 9, &v, 1, &src[b]), RTTCC_OK);
        return data.size();
    };

    const size_t one = put(0);  // nothing outstanding: it goes at once
    assert_int_equal(one, 15);
    assert_int_equal(asking_ack(data, 0), 1);
    assert_int_equal(put(1), one);  // 20000 bytes wait
    assert_int_equal(put(2), one);
    assert_int_equal(put(3), one);      // 45 datagrams wait
    assert_int_equal(put(4), 5 * one);  // 60 do not fit a send call: all four go
    assert_int_equal(n0.engine->stats().sends_waited, 3);
    assert_int_equal(asking_ack(data, one), 1);
    assert_int_equal(asking_ack(data, data.size() - 1), 1);  // the last datagram asks

    const uint64_t acks = n0.engine->stats().acks_tx;
    int f;
    assert_int_equal(put(5), 5 * one);
    assert_int_equal(n0.engine->flush(1, 9, &f), RTTCC_OK);  // sends what waits
    assert_int_equal(data.size(), 6 * one);
    assert_int_equal(n0.engine->stats().acks_tx, acks);  // and no ACK request of its own

    assert_int_equal(put(6), 6 * one);
    n0.engine->progress();  // so does the next pass
    assert_int_equal(data.size(), 7 * one);

    assert_true(run_until(nodes, [&] { return n0.completed.size() == 8; }));  // seven puts and the flush
    for (uint32_t b = 0; b < 7; ++b) assert_memory_equal(window.data() + b * kBlock, src[b].data(), kBlock);
    assert_true(position(n0.completed, &src[5]) < position(n0.completed, &f));
    assert_true(n0.failed.empty());
}

// What waits for company leaves with the next send that is not a put,
// send_now's included (which would otherwise hear BUSY behind it); the
// first put after another kind of message goes at once; and the wait ends
// at one pump's bytes (kPassBytes) where datagrams are large (one host).
static void test_puts_wait_only_behind_puts_and_within_a_pump(void **) {
    for (const size_t datagram : {size_t{1500}, size_t{65536}}) {
        MemNetwork net(datagram);
        auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) { c.ack_delay_us = 1000000; });
        Node &n0 = *nodes[0];
        const size_t block = datagram == 1500 ? 20000 : 200000;  // 15 datagrams, or 4 of 64 KiB
        std::vector<uint8_t> window(24 * block, 0xee);
        const uint32_t key = nodes[1]->engine->grant(0, window.data(), window.size(), /*notify=*/false);
        std::vector<std::vector<uint8_t>> src;
        for (uint32_t b = 0; b < 24; ++b) src.push_back(make_message(b + 1, block));
        MemNetwork::Queue &data = net.queue(1, kData);
        uint32_t next = 0;
        auto put = [&] {
            const uint32_t b = next++;
            iovec v{src[b].data(), block};
            assert_int_equal(n0.engine->put(1, key, b * block, 9, &v, 1, &src[b]), RTTCC_OK);
            return data.size();
        };
        std::vector<uint8_t> msg = make_message(99, 4000);  // above the command channel's payload
        iovec m{msg.data(), msg.size()};

        assert_int_equal(n0.engine->send(1, 9, &m, 1, nullptr), RTTCC_DONE);  // copied, not ACKed yet
        const size_t sent = data.size();
        const size_t one = put() - sent;  // behind a message that is not a put: at once
        assert_true(one > 0);
        assert_int_equal(put(), sent + one);  // behind a put: it waits
        const auto fill = [](void *, void *dst, size_t n) { std::memset(dst, 7, n); };
        assert_int_equal(n0.engine->send_now(1, 9, msg.size(), fill, nullptr), RTTCC_DONE);
        assert_int_equal(data.size(), sent + 2 * one + sent);  // the put went first, then the message

        if (datagram == 65536) {  // 4 datagrams a put; one pump sends at most 16 of them
            put();
            const size_t before = data.size();
            assert_int_equal(put(), before);
            assert_int_equal(put(), before);
            assert_int_equal(put(), before);
            assert_int_equal(put(), before);  // 16 wait
            assert_int_equal(put(), before + 4 * one);  // 20 would not leave in one pump: a pump's worth goes
        }
        assert_true(run_until(nodes, [&] { return n0.completed.size() == next; }));
        for (uint32_t b = 0; b < next; ++b) assert_memory_equal(window.data() + b * block, src[b].data(), block);
        assert_true(n0.failed.empty());
    }
}

// A flush towards a peer that dies first fails, as what it waited for.
static void test_a_flush_to_a_dead_peer_fails(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) {
        c.peer_timeout_ms = 300;
        c.agent = false;
    });
    std::vector<uint8_t> window(100000, 0);
    const uint32_t key = nodes[1]->engine->grant(0, window.data(), window.size(), /*notify=*/false);
    std::vector<uint8_t> a = make_message(4, 90000);
    iovec ia{a.data(), a.size()};
    int f;
    assert_int_equal(nodes[0]->engine->put(1, key, 0, 9, &ia, 1, &a), RTTCC_OK);
    assert_int_equal(nodes[0]->engine->flush(1, 9, &f), RTTCC_OK);
    only_node0(nodes, 3000, [&] { return nodes[0]->failed.size() == 2; });
    assert_int_equal(nodes[0]->failed.size(), 2);
    assert_true(position(nodes[0]->failed, &a) < position(nodes[0]->failed, &f));
    assert_true(nodes[0]->completed.empty());
    assert_int_equal(nodes[0]->engine->flush(1, 9, &f), RTTCC_ERR_UNREACH);
}

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_puts_into_an_exposure_land_silently),
        cmocka_unit_test(test_a_flush_waits_for_what_went_before),
        cmocka_unit_test(test_a_flush_asks_for_its_ack),
        cmocka_unit_test(test_a_put_asks_for_its_ack_so_its_flush_sends_nothing),
        cmocka_unit_test(test_back_to_back_puts_leave_together),
        cmocka_unit_test(test_puts_wait_only_behind_puts_and_within_a_pump),
        cmocka_unit_test(test_a_flush_to_a_dead_peer_fails),
        cmocka_unit_test(test_puts_land_in_place),
        cmocka_unit_test(test_a_copied_put_is_done_at_once),
        cmocka_unit_test(test_a_copied_put_asks_for_no_ack),
        cmocka_unit_test(test_a_refused_copy_goes_zero_copy),
        cmocka_unit_test(test_puts_survive_a_faulty_wire),
        cmocka_unit_test(test_puts_outside_granted_memory_are_dropped),
        cmocka_unit_test(test_a_put_from_another_peer_is_refused),
        cmocka_unit_test(test_a_put_with_a_finished_calls_key_is_refused),
        cmocka_unit_test(test_more_puts_partly_landed_than_the_window_end_the_peer),
        cmocka_unit_test(test_data_for_a_detached_tag_is_not_acknowledged),
        cmocka_unit_test(test_bad_put_arguments),
        cmocka_unit_test(test_a_put_calls_nobody_back),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
