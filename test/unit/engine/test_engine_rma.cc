// RMA through the engine (rttcc/rma.h) over the in-memory wire: the
// target's engine serves gets, accumulates, compare-and-swaps, locks and
// lookups with no callback to its client, in the order each origin made
// them whatever the wire does, only on exposures of open windows that the
// origin holds and inside them; the replies are copies put into the
// origin's grants.  The liveness agent serves them while the target's
// application computes.
#include <algorithm>
#include <cstring>
#include <utility>

#include "api/engine_handle.h"
#include "cmocka_cxx.h"
#include "engine_harness.h"
#include "rttcc/rma.h"

using namespace rttcc;
using namespace rttcc_test;

namespace {

constexpr uint8_t kTag = 9;  // the origins' client tag: replies come on it

// The C handles of the nodes' engines.
struct Handles {
    explicit Handles(const std::vector<std::unique_ptr<Node>> &nodes) {
        for (const auto &n : nodes) all.push_back(rttcc_engine{n->engine, ""});
    }
    rttcc_engine_t *operator[](size_t i) { return &all[i]; }
    std::vector<rttcc_engine> all;
};

// Node `target` exposes `mem` to `origin` as part of `window`.
uint32_t expose(Handles &h, int target, uint32_t window, int origin, void *mem, size_t len) {
    uint32_t key = 0;
    assert_int_equal(rttcc_rma_expose(h[target], window, origin, mem, len, &key), RTTCC_OK);
    return key;
}

uint32_t open_window(Handles &h, int node) {
    uint32_t w = 0;
    assert_int_equal(rttcc_rma_window_open(h[node], &w), RTTCC_OK);
    assert_int_not_equal(w, 0);
    return w;
}

// How many replies (puts) node n has heard into grant `key`.
size_t replies(const Node &n, uint32_t key) {
    return static_cast<size_t>(std::count_if(n.puts.begin(), n.puts.end(), [&](const Node::Landed &l) { return l.key == key; }));
}

uint64_t bad_requests(const Node &n) { return n.engine->stats().drop_bad_put; }

// Runs every node for a while (what should happen has had time to).
void settle(std::vector<std::unique_ptr<Node>> &nodes) { (void)run_until(nodes, [] { return false; }, 0.05); }

// A large reply leaves two segments at a time (send credits), one pass after
// another: what a test does between passes reaches its later segments.
void two_segments_a_pass(rttcc_config_t &c) {
    c.send_credits = 2;
    c.agent = false;
}

void with_agent(rttcc_config_t &c) {
    c.agent = true;
    c.thread_safe = false;
    c.agent_idle_ms = 10;
    c.peer_timeout_ms = 200;
}

}  // namespace

// A get lands in the reply grant byte for byte, at offset 0, on the
// origin's tag, heard once; the target's client hears nothing.  Small
// (copied into an inline buffer) and large (many segments, a pooled copy).
static void test_a_get_lands_in_the_reply_grant(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2);
    Handles h(nodes);
    const uint32_t w = open_window(h, 1);
    std::vector<uint8_t> window = make_message(1, 300000);
    const uint32_t key = expose(h, 1, w, 0, window.data(), window.size());
    for (size_t len : {size_t{100}, size_t{150000}}) {
        std::vector<uint8_t> got(len + 16, 0xee);
        const uint32_t reply = nodes[0]->engine->grant(1, got.data(), got.size());
        assert_int_equal(rttcc_rma_get(h[0], 1, key, 777, len, reply, kTag), RTTCC_DONE);
        assert_true(run_until(nodes, [&] { return replies(*nodes[0], reply) == 1; }));
        const Node::Landed &l = nodes[0]->puts.back();
        assert_int_equal(l.peer, 1);
        assert_int_equal(l.offset, 0);
        assert_int_equal(l.len, len);
        assert_int_equal(l.tag, kTag);
        assert_memory_equal(got.data(), window.data() + 777, len);
        for (size_t i = len; i < got.size(); ++i) assert_int_equal(got[i], 0xee);
        settle(nodes);
        assert_int_equal(replies(*nodes[0], reply), 1);
        assert_true(nodes[0]->engine->revoke(reply));
    }
    assert_true(nodes[1]->received.empty() && nodes[1]->puts.empty());  // the engine served them
    assert_true(nodes[0]->received.empty());
    assert_int_equal(bad_requests(*nodes[1]), 0);
    assert_true(window == make_message(1, 300000));  // read, not written
}

// A reply never asks for its ACK at once: the asker completes its get
// without a send call of its own first, and its ACK goes delayed (here a
// second away, on a clock that stands still: not at all) or on its next
// request.  Small (copied) and large (from the window) replies alike.
static void test_a_reply_does_not_ask_for_its_ack(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) {
        c.ack_delay_us = 1000000;
        c.agent = false;
    });
    Handles h(nodes);
    const uint32_t w = open_window(h, 1);
    std::vector<uint8_t> window = make_message(3, 200000);
    const uint32_t key = expose(h, 1, w, 0, window.data(), window.size());
    for (size_t len : {size_t{100}, size_t{150000}}) {
        std::vector<uint8_t> got(len);
        const uint32_t reply = nodes[0]->engine->grant(1, got.data(), got.size());
        const uint64_t acks = nodes[0]->engine->stats().acks_tx;
        assert_int_equal(rttcc_rma_get(h[0], 1, key, 0, len, reply, kTag), RTTCC_DONE);
        for (int i = 0; i < 20 && replies(*nodes[0], reply) == 0; ++i) {
            nodes[1]->engine->progress();
            nodes[0]->engine->progress();
        }
        assert_int_equal(replies(*nodes[0], reply), 1);
        assert_memory_equal(got.data(), window.data(), len);
        assert_int_equal(nodes[0]->engine->stats().acks_tx, acks);
        assert_true(nodes[0]->engine->revoke(reply));
    }
}

// A large get's reply goes from the window itself, not a copy: bytes the
// target changes before the reply's datagrams go show (MPI_Get: no one may
// change them in the epoch).  Revoking the exposure (MPI_Win_free) copies
// what is still to go first, so freed memory never travels.  The atomic get
// (MPI_Get_accumulate with MPI_NO_OP) shows the bytes as they were when
// served.  A posted plain get (rttcc_rma_post_get, in a batch) replies as
// the lone one.  The target's credits let two segments go per round trip.
static void test_a_large_get_replies_from_the_window_until_revoked(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, {}, two_segments_a_pass);
    Handles h(nodes);
    const uint32_t w = open_window(h, 1);
    const size_t len = 150000;
    std::vector<uint8_t> window = make_message(1, 2 * len), before = window;
    const uint32_t key = expose(h, 1, w, 0, window.data(), window.size());
    std::vector<uint8_t> plain(len), atomic(len);
    const uint32_t rp = nodes[0]->engine->grant(1, plain.data(), len), ra = nodes[0]->engine->grant(1, atomic.data(), len);
    assert_int_equal(rttcc_rma_get(h[0], 1, key, 0, len, rp, kTag), RTTCC_DONE);
    assert_int_equal(rttcc_rma_get_atomic(h[0], 1, key, 0, len, ra, kTag), RTTCC_DONE);
    nodes[1]->engine->progress();  // serves both; two segments go
    std::fill(window.begin() + 100000, window.begin() + len, 0x5a);  // changed after serving
    const std::vector<uint8_t> changed = window;
    assert_true(nodes[1]->engine->revoke(key));
    std::fill(window.begin(), window.end(), 0xdd);  // freed
    assert_true(run_until(nodes, [&] { return replies(*nodes[0], rp) == 1 && replies(*nodes[0], ra) == 1; }));
    assert_memory_equal(plain.data(), changed.data(), len);
    assert_memory_equal(atomic.data(), before.data(), len);

    window = before;
    const uint32_t again = expose(h, 1, w, 0, window.data(), window.size());
    std::vector<uint8_t> posted(len);
    const uint32_t rq = nodes[0]->engine->grant(1, posted.data(), len);
    assert_int_equal(rttcc_rma_post_get(h[0], 1, again, 0, len, rq, kTag), RTTCC_DONE);
    nodes[0]->engine->progress();  // the batch goes
    nodes[1]->engine->progress();  // serves it; two segments go
    std::fill(window.begin() + 100000, window.begin() + len, 0x5a);
    assert_true(run_until(nodes, [&] { return replies(*nodes[0], rq) == 1; }));
    assert_memory_equal(posted.data(), window.data(), len);
    assert_int_equal(bad_requests(*nodes[1]), 0);
}

// The target's epoch ends while a large get's reply is still leaving from
// its window (two segments per round trip): rttcc_rma_settle copies what
// is left, so the bytes the application writes next never travel, and the
// reply is the window as it was.  Settling another window copies nothing;
// with no reply in flight it is free.
static void test_settle_keeps_a_large_reply_as_it_was(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, {}, two_segments_a_pass);
    Handles h(nodes);
    const uint32_t w = open_window(h, 1), other = open_window(h, 1);
    const size_t len = 150000;
    std::vector<uint8_t> window = make_message(2, len);
    const std::vector<uint8_t> before = window;
    const uint32_t key = expose(h, 1, w, 0, window.data(), window.size());
    std::vector<uint8_t> got(len);
    const uint32_t rp = nodes[0]->engine->grant(1, got.data(), len);
    assert_int_equal(rttcc_rma_get(h[0], 1, key, 0, len, rp, kTag), RTTCC_DONE);
    nodes[1]->engine->progress();  // serves it; two segments go
    const size_t unsent = 2 * nodes[1]->engine->peer(0)->seg_payload + 100;
    assert_true(unsent + 1000 <= len);
    assert_int_equal(rttcc_rma_settle(h[1], other), RTTCC_OK);  // not this window's business:
    std::fill(window.begin() + unsent, window.begin() + unsent + 1000, 0x11);  // this still travels
    std::fill(window.begin(), window.begin() + 1000, 0x22);  // gone already
    assert_int_equal(rttcc_rma_settle(h[1], w), RTTCC_OK);
    std::fill(window.begin(), window.end(), 0x5a);  // the next epoch's
    assert_true(run_until(nodes, [&] { return replies(*nodes[0], rp) == 1; }));
    std::vector<uint8_t> want = before;
    std::fill(want.begin() + unsent, want.begin() + unsent + 1000, 0x11);
    assert_memory_equal(got.data(), want.data(), len);
    assert_int_equal(rttcc_rma_settle(h[1], w), RTTCC_OK);  // nothing in flight
}

// A request and a reply go about 1 MiB at once (Engine::kPassBytes), as
// any send: the whole window of 64 KiB datagrams at once kept a process
// from reading for milliseconds.  An accumulate of 4 MiB leaves its call
// with 1 MiB; a get of it, served in one pass, leaves with as much.  Both
// land whole.
static void test_requests_and_replies_go_about_a_mebibyte_at_once(void **) {
    MemNetwork net(65536);
    auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) { c.max_message = (4 << 20) + 4096; });  // and a header
    Handles h(nodes);
    const uint32_t w = open_window(h, 1);
    const size_t n = 1 << 20;  // int32s: 4 MiB
    std::vector<int32_t> window(n, 1), add(n);
    for (size_t i = 0; i < n; ++i) add[i] = static_cast<int32_t>(i);
    const uint32_t key = expose(h, 1, w, 0, window.data(), n * 4);
    const auto queued = [&](uint32_t to) {
        size_t bytes = 0;
        for (const auto &d : net.queue(to, kData)) bytes += d.size();
        return bytes;
    };
    const iovec ia{add.data(), n * 4};
    int done;
    assert_int_equal(rttcc_rma_accumulate(h[0], 1, key, 0, RTTCC_RMA_SUM, RTTCC_RMA_INT32, &ia, 1, 0, kTag, &done),
                     RTTCC_OK);
    assert_in_range(queued(1), 1 << 20, (1 << 20) + 65536);
    assert_true(run_until(nodes, [&] { return position(nodes[0]->completed, &done) == 0; }, 200));  // the buffer is free
    assert_true(run_until(nodes, [&] { return window.back() == static_cast<int32_t>(n); }, 200));  // and it is applied
    for (size_t i = 0; i < n; ++i) assert_int_equal(window[i], static_cast<int32_t>(i) + 1);

    std::vector<int32_t> got(n);
    const uint32_t grant = nodes[0]->engine->grant(1, got.data(), n * 4);
    assert_int_equal(rttcc_rma_get(h[0], 1, key, 0, n * 4, grant, kTag), RTTCC_DONE);
    nodes[1]->engine->progress();  // serves it
    assert_in_range(queued(0), 1 << 20, (1 << 20) + 2 * 65536);  // and the segment that crossed the budget
    assert_true(run_until(nodes, [&] { return replies(*nodes[0], grant) == 1; }, 200));
    assert_true(got == window);
}

// A zero-copy accumulate behind another that is not ACKed yet waits, as a
// put does (test_engine_put), for the one that does not fit a send call, a
// flush or the next pass; each is applied once.
static void test_back_to_back_accumulates_leave_together(void **) {
    MemNetwork net(1500);
    auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) { c.tx_batch = 45; });
    Handles h(nodes);
    const uint32_t w = open_window(h, 1);
    const size_t n = 5000;  // int32s: with the request's header, 15 datagrams
    std::vector<int32_t> window(n, 1), add(n);
    for (size_t i = 0; i < n; ++i) add[i] = static_cast<int32_t>(i);
    const uint32_t key = expose(h, 1, w, 0, window.data(), n * 4);
    MemNetwork::Queue &data = net.queue(1, kData);  // node 1 reads nothing until run_until
    const iovec ia{add.data(), n * 4};
    int done[6];
    auto acc = [&](int k) {
        assert_int_equal(rttcc_rma_accumulate(h[0], 1, key, 0, RTTCC_RMA_SUM, RTTCC_RMA_INT32, &ia, 1, 0, kTag, &done[k]),
                         RTTCC_OK);
        return data.size();
    };
    const size_t one = acc(0);  // nothing outstanding: it goes at once
    assert_int_equal(one, 15);
    assert_int_equal(acc(1), one);
    assert_int_equal(acc(2), one);
    assert_int_equal(acc(3), one);      // 45 datagrams wait
    assert_int_equal(acc(4), 5 * one);  // 60 do not fit a send call
    assert_int_equal(asking_ack(data, one), 1);  // one ACK request for the four
    assert_int_equal(nodes[0]->engine->stats().sends_waited, 3);
    assert_int_equal(acc(5), 5 * one);
    int f;
    assert_int_equal(nodes[0]->engine->flush(1, kTag, &f), RTTCC_OK);  // sends what waits
    assert_int_equal(data.size(), 6 * one);
    assert_true(run_until(nodes, [&] { return position(nodes[0]->completed, &f) < nodes[0]->completed.size(); }));
    for (int k = 0; k < 6; ++k) assert_true(position(nodes[0]->completed, &done[k]) < nodes[0]->completed.size());
    for (size_t i = 0; i < n; ++i) assert_int_equal(window[i], 1 + 6 * static_cast<int32_t>(i));
}

// Requests the target cannot check are dropped whole (drop_bad_put) and
// nothing is read or written: past the exposure's end, a key exposed to
// another peer, a grant that notifies, a silent grant of no window, a
// window closed since.  The origin's later requests are still served.
static void test_requests_outside_an_exposure_are_dropped(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 3);
    Handles h(nodes);
    const uint32_t w = open_window(h, 1), closing = open_window(h, 1);
    std::vector<uint8_t> window(1000, 0x11), other(1000, 0x22), plain(1000, 0x33), silent(1000, 0x44),
        closed(1000, 0x55);
    const uint32_t key = expose(h, 1, w, 0, window.data(), window.size());
    const uint32_t for2 = expose(h, 1, w, 2, other.data(), other.size());
    const uint32_t notifying = nodes[1]->engine->grant(0, plain.data(), plain.size());
    uint32_t no_window = 0;
    assert_int_equal(rttcc_engine_expose(h[1], 0, silent.data(), silent.size(), &no_window), RTTCC_OK);
    const uint32_t gone = expose(h, 1, closing, 0, closed.data(), closed.size());
    assert_int_equal(rttcc_rma_window_close(h[1], closing), RTTCC_OK);

    std::vector<uint8_t> got(2000, 0xee);
    const uint32_t reply = nodes[0]->engine->grant(1, got.data(), got.size());
    const int32_t ones[4] = {1, 1, 1, 1};
    const iovec acc{const_cast<int32_t *>(ones), sizeof ones};
    auto add = [&](uint32_t k, uint64_t offset) {
        return rttcc_rma_accumulate(h[0], 1, k, offset, RTTCC_RMA_SUM, RTTCC_RMA_INT32, &acc, 1, 0, kTag, nullptr);
    };
    assert_int_equal(rttcc_rma_get(h[0], 1, key, 990, 11, reply, kTag), RTTCC_DONE);  // one byte past the end
    assert_int_equal(add(key, 990), RTTCC_DONE);
    assert_int_equal(rttcc_rma_get(h[0], 1, for2, 0, 10, reply, kTag), RTTCC_DONE);  // node 2's
    assert_int_equal(add(for2, 0), RTTCC_DONE);
    assert_int_equal(rttcc_rma_get(h[0], 1, notifying, 0, 10, reply, kTag), RTTCC_DONE);
    assert_int_equal(add(notifying, 0), RTTCC_DONE);
    assert_int_equal(rttcc_rma_get(h[0], 1, no_window, 0, 10, reply, kTag), RTTCC_DONE);
    assert_int_equal(add(no_window, 0), RTTCC_DONE);
    assert_int_equal(rttcc_rma_get(h[0], 1, gone, 0, 10, reply, kTag), RTTCC_DONE);
    assert_int_equal(add(gone, 0), RTTCC_DONE);
    assert_int_equal(rttcc_rma_lock(h[0], 1, closing, 1, reply, kTag), RTTCC_DONE);  // a closed window
    assert_true(run_until(nodes, [&] { return bad_requests(*nodes[1]) == 11; }));
    settle(nodes);
    assert_int_equal(bad_requests(*nodes[1]), 11);
    assert_int_equal(nodes[1]->engine->stats().drops, 11);
    assert_true(nodes[0]->puts.empty());  // no reply
    assert_true(std::all_of(got.begin(), got.end(), [](uint8_t b) { return b == 0xee; }));
    assert_true(std::all_of(window.begin(), window.end(), [](uint8_t b) { return b == 0x11; }));
    assert_true(std::all_of(other.begin(), other.end(), [](uint8_t b) { return b == 0x22; }));
    assert_true(std::all_of(plain.begin(), plain.end(), [](uint8_t b) { return b == 0x33; }));
    assert_true(std::all_of(silent.begin(), silent.end(), [](uint8_t b) { return b == 0x44; }));
    assert_true(std::all_of(closed.begin(), closed.end(), [](uint8_t b) { return b == 0x55; }));
    assert_true(nodes[1]->puts.empty() && nodes[1]->received.empty());

    assert_int_equal(add(key, 984), RTTCC_DONE);  // the last four ints: inside
    assert_true(run_until(nodes, [&] { return window[984] == 0x12; }));
    assert_int_equal(bad_requests(*nodes[1]), 11);
    assert_true(nodes[0]->dead.empty() && nodes[1]->dead.empty());
}

// MPI_Accumulate SUM on int32 and double; MPI_Get_accumulate (reply_key)
// returns the old elements, then applies; a large one (many segments, sent
// zero-copy) completes with its cookie, and no request call calls back.
static void test_accumulates_sum_and_fetch_the_old_values(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2);
    Handles h(nodes);
    const uint32_t w = open_window(h, 1);
    std::vector<int32_t> ints(10000);
    std::vector<double> doubles(8);
    for (size_t i = 0; i < ints.size(); ++i) ints[i] = static_cast<int32_t>(i);
    for (size_t i = 0; i < doubles.size(); ++i) doubles[i] = 0.5 * static_cast<double>(i);
    const uint32_t ki = expose(h, 1, w, 0, ints.data(), ints.size() * 4);
    const uint32_t kd = expose(h, 1, w, 0, doubles.data(), doubles.size() * 8);

    const int32_t add[3] = {100, -5, 7};
    const double dadd[2] = {1.25, -0.5};
    const iovec ia{const_cast<int32_t *>(add), sizeof add}, da{const_cast<double *>(dadd), sizeof dadd};
    assert_int_equal(rttcc_rma_accumulate(h[0], 1, ki, 8, RTTCC_RMA_SUM, RTTCC_RMA_INT32, &ia, 1, 0, kTag, nullptr),
                     RTTCC_DONE);
    assert_int_equal(rttcc_rma_accumulate(h[0], 1, kd, 16, RTTCC_RMA_SUM, RTTCC_RMA_DOUBLE, &da, 1, 0, kTag, nullptr),
                     RTTCC_DONE);
    std::vector<int32_t> big(8000, 3);  // 32000 bytes: above inline_max, several segments
    const iovec halves[2] = {{big.data(), 16000}, {big.data() + 4000, 16000}};
    std::vector<int32_t> old(8000, -1);
    const uint32_t reply = nodes[0]->engine->grant(1, old.data(), old.size() * 4);
    assert_int_equal(rttcc_rma_accumulate(h[0], 1, ki, 4000, RTTCC_RMA_SUM, RTTCC_RMA_INT32, halves, 2, reply, kTag, &big),
                     RTTCC_OK);
    assert_true(nodes[0]->completed.empty());  // told in a pass, not here
    assert_true(run_until(nodes, [&] { return replies(*nodes[0], reply) == 1 && nodes[0]->completed.size() == 1; }));
    assert_ptr_equal(nodes[0]->completed[0], &big);

    assert_int_equal(ints[2], 102);
    assert_int_equal(ints[3], -2);
    assert_int_equal(ints[4], 11);
    assert_true(doubles[2] == 2.25 && doubles[3] == 1.0 && doubles[4] == 2.0);
    for (size_t i = 0; i < 8000; ++i) {
        assert_int_equal(old[i], static_cast<int32_t>(1000 + i));  // before: its index
        assert_int_equal(ints[1000 + i], static_cast<int32_t>(1003 + i));
    }
    assert_int_equal(ints[999], 999);
    assert_int_equal(ints[9000], 9000);
    assert_int_equal(bad_requests(*nodes[1]), 0);
}

// MPI_Compare_and_swap: the old element comes back either way; the swap
// happens only when it equalled the compare value.
static void test_compare_and_swap_swaps_only_on_equality(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2);
    Handles h(nodes);
    const uint32_t w = open_window(h, 1);
    int64_t cells[2] = {42, 7};
    const uint32_t key = expose(h, 1, w, 0, cells, sizeof cells);
    int64_t old = 0;
    const uint32_t reply = nodes[0]->engine->grant(1, &old, sizeof old);
    const int64_t wrong = 41, right = 42, swap = -9;
    assert_int_equal(rttcc_rma_compare_and_swap(h[0], 1, key, 0, RTTCC_RMA_INT64, &wrong, &swap, reply, kTag), RTTCC_DONE);
    assert_true(run_until(nodes, [&] { return replies(*nodes[0], reply) == 1; }));
    assert_int_equal(old, 42);
    assert_int_equal(cells[0], 42);
    assert_int_equal(rttcc_rma_compare_and_swap(h[0], 1, key, 0, RTTCC_RMA_INT64, &right, &swap, reply, kTag), RTTCC_DONE);
    assert_true(run_until(nodes, [&] { return replies(*nodes[0], reply) == 2; }));
    assert_int_equal(old, 42);
    assert_int_equal(cells[0], -9);
    assert_int_equal(cells[1], 7);
}

// This process's own window: the same updates, by the same rules.
static void test_local_updates(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 1);
    Handles h(nodes);
    int32_t cells[2] = {5, 6}, add[2] = {10, 20}, old[2] = {};
    assert_int_equal(rttcc_rma_apply_local(h[0], RTTCC_RMA_SUM, RTTCC_RMA_INT32, cells, add, 2, old), RTTCC_OK);
    assert_true(cells[0] == 15 && cells[1] == 26 && old[0] == 5 && old[1] == 6);
    assert_int_equal(rttcc_rma_apply_local(h[0], RTTCC_RMA_BAND, RTTCC_RMA_DOUBLE, cells, add, 1, nullptr), RTTCC_ERR_ARG);
    int32_t compare = 14, swap = 1, was = 0;
    assert_int_equal(rttcc_rma_compare_and_swap_local(h[0], RTTCC_RMA_INT32, cells, &compare, &swap, &was), RTTCC_OK);
    assert_true(cells[0] == 15 && was == 15);
    compare = 15;
    assert_int_equal(rttcc_rma_compare_and_swap_local(h[0], RTTCC_RMA_INT32, cells, &compare, &swap, &compare), RTTCC_OK);
    assert_true(cells[0] == 1 && compare == 15);  // the old value may go over the compare value
}

// Each origin's requests are applied in the order it made them, whatever
// the wire drops, duplicates and reorders: request i replaces the first
// n_i ints with i and fetches what they were, which is what a model
// applying them in order says.  Some are large (chunked, zero-copy).
static void test_requests_are_applied_in_order_over_a_faulty_wire(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, FaultRates{30000, 30000, 100000, 0}, [](rttcc_config_t &c) {
        c.retrans_timeout_us = c.min_rto_us = 100000;
        c.max_rto_us = 200000;
    });
    Handles h(nodes);
    const uint32_t w = open_window(h, 1);
    constexpr int kRequests = 400, kLarge = 3000;
    std::vector<int32_t> window(kLarge, -1), model(kLarge, -1);
    const uint32_t key = expose(h, 1, w, 0, window.data(), window.size() * 4);
    std::vector<std::vector<int32_t>> values(kRequests), old(kRequests), expected(kRequests);
    std::vector<uint32_t> keys(kRequests);
    for (int i = 0; i < kRequests; ++i) {
        const size_t n = i % 7 == 3 ? kLarge : 1 + i % 3;
        values[i].assign(n, i);
        old[i].assign(n, -2);
        expected[i].assign(model.begin(), model.begin() + static_cast<std::ptrdiff_t>(n));
        std::fill(model.begin(), model.begin() + static_cast<std::ptrdiff_t>(n), i);
        keys[i] = nodes[0]->engine->grant(1, old[i].data(), n * 4);
        const iovec v{values[i].data(), n * 4};
        const int rc = rttcc_rma_accumulate(h[0], 1, key, 0, RTTCC_RMA_REPLACE, RTTCC_RMA_INT32, &v, 1, keys[i], kTag,
                                            &values[i]);
        assert_true(rc == (n == kLarge ? RTTCC_OK : RTTCC_DONE));
    }
    assert_true(run_until(nodes, [&] { return nodes[0]->puts.size() == kRequests; }, 60));
    for (int i = 0; i < kRequests; ++i) assert_true(old[i] == expected[i]);
    assert_true(window == model);
    assert_true(nodes[0]->faults->injected > 0 && nodes[1]->faults->injected > 0);
    assert_int_equal(bad_requests(*nodes[1]), 0);
    assert_int_equal(nodes[1]->engine->peer(0)->requests.held(), 0);
    assert_int_equal(nodes[1]->engine->peer(0)->requests.next(), kRequests);
}

// A request numbered further ahead than the window lets a legal origin
// get (or one served already, or a message too short to be a request)
// ends the peer, saying why.
static void test_requests_out_of_any_legal_order_end_the_peer(void **) {
    constexpr uint32_t kWindow = 64;
    for (uint32_t rseq : {kWindow, ~0u}) {
        MemNetwork net(4000);
        auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) { c.window = kWindow; });
        RmaRequest r{};
        r.kind = static_cast<uint8_t>(RmaKind::kUnlock);
        r.rseq = rseq;
        std::vector<uint8_t> bytes(sizeof r);
        std::memcpy(bytes.data(), &r, sizeof r);
        inject_request(net, nodes, 0, 1, bytes);
        nodes[1]->engine->progress();
        assert_int_equal(nodes[1]->engine->stats().protocol_errors, 1);
        assert_int_equal(nodes[1]->dead.size(), 1);
        assert_true(nodes[1]->dead_why[0].find("RMA request") != std::string::npos);
    }
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2);
    inject_request(net, nodes, 0, 1, std::vector<uint8_t>(31, 0));
    nodes[1]->engine->progress();
    assert_int_equal(nodes[1]->dead.size(), 1);
    assert_true(nodes[1]->dead_why[0].find("shorter than a request's header") != std::string::npos);
    assert_true(nodes[1]->received.empty());
}

// Locks across the network: an exclusive holder excludes the others (the
// target's own process too), shared holders share, waiters are let in in
// order of arrival, and unlock lets the waiter in.
static void test_window_locks(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 3);
    Handles h(nodes);
    const uint32_t w = open_window(h, 1);
    std::vector<uint8_t> mem(64);
    expose(h, 1, w, 0, mem.data(), mem.size());
    expose(h, 1, w, 2, mem.data(), mem.size());
    uint8_t held0 = 0, held2 = 0;
    const uint32_t r0 = nodes[0]->engine->grant(1, &held0, 1), r2 = nodes[2]->engine->grant(1, &held2, 1);

    assert_int_equal(rttcc_rma_lock(h[0], 1, w, 1, r0, kTag), RTTCC_DONE);
    assert_true(run_until(nodes, [&] { return replies(*nodes[0], r0) == 1; }));
    assert_int_equal(held0, 1);
    assert_int_equal(rttcc_rma_lock(h[2], 1, w, 0, r2, kTag), RTTCC_DONE);
    settle(nodes);
    assert_int_equal(replies(*nodes[2], r2), 0);  // excluded
    assert_int_equal(rttcc_rma_lock_local(h[1], w, 0), RTTCC_ERR_BUSY);
    assert_int_equal(rttcc_rma_unlock(h[0], 1, w, kTag), RTTCC_DONE);
    assert_true(run_until(nodes, [&] { return replies(*nodes[2], r2) == 1; }));  // let in

    // Shared with node 2: node 0 and this process share it too.
    assert_int_equal(rttcc_rma_lock(h[0], 1, w, 0, r0, kTag), RTTCC_DONE);
    assert_true(run_until(nodes, [&] { return replies(*nodes[0], r0) == 2; }));
    assert_int_equal(rttcc_rma_lock_local(h[1], w, 0), RTTCC_DONE);
    assert_int_equal(rttcc_rma_lock_local(h[1], w, 1), RTTCC_ERR_BUSY);
    assert_int_equal(rttcc_rma_unlock_local(h[1], w), RTTCC_OK);
    // Node 0 asks for it exclusive and waits behind node 2; this process's
    // shared request, compatible with node 2's hold, is refused: node 0
    // came first (and this process never waits).
    assert_int_equal(rttcc_rma_unlock(h[0], 1, w, kTag), RTTCC_DONE);
    assert_int_equal(rttcc_rma_lock(h[0], 1, w, 1, r0, kTag), RTTCC_DONE);
    settle(nodes);
    assert_int_equal(replies(*nodes[0], r0), 2);
    assert_int_equal(rttcc_rma_lock_local(h[1], w, 0), RTTCC_ERR_BUSY);
    assert_int_equal(rttcc_rma_unlock(h[2], 1, w, kTag), RTTCC_DONE);
    assert_true(run_until(nodes, [&] { return replies(*nodes[0], r0) == 3; }));
    assert_int_equal(rttcc_rma_lock(h[2], 1, w, 0, r2, kTag), RTTCC_DONE);
    settle(nodes);
    assert_int_equal(replies(*nodes[2], r2), 1);
    assert_int_equal(rttcc_rma_unlock(h[0], 1, w, kTag), RTTCC_DONE);
    assert_true(run_until(nodes, [&] { return replies(*nodes[2], r2) == 2; }));
    // Unlocking what one does not hold is a bad request.
    assert_int_equal(rttcc_rma_unlock(h[0], 1, w, kTag), RTTCC_DONE);
    assert_true(run_until(nodes, [&] { return bad_requests(*nodes[1]) == 1; }));
    assert_int_equal(rttcc_rma_unlock_local(h[1], w), RTTCC_ERR_ARG);
}

// An ordered unlock (MPI_Win_unlock's) releases the lock only once the
// holder's zero-copy put has landed, also when the put's first datagram
// was lost and resent after the unlock arrived: the next holder, let in by
// it, finds every byte.  With a plain unlock it would find a hole.
static void test_an_ordered_unlock_waits_for_a_lost_put(void **) {
    for (bool lose : {true, false}) {
        MemNetwork net(4000);
        auto nodes = make_nodes(net, 3);
        Handles h(nodes);
        const uint32_t w = open_window(h, 1);
        std::vector<uint8_t> src = make_message(3, 4 * nodes[0]->engine->peer(1)->seg_payload);
        std::vector<uint8_t> mem(src.size(), 0);
        const uint32_t key = expose(h, 1, w, 0, mem.data(), mem.size());
        expose(h, 1, w, 2, mem.data(), mem.size());
        uint8_t held0 = 0, held2 = 0;
        const uint32_t r0 = nodes[0]->engine->grant(1, &held0, 1), r2 = nodes[2]->engine->grant(1, &held2, 1);
        assert_int_equal(rttcc_rma_lock(h[0], 1, w, 1, r0, kTag), RTTCC_DONE);
        assert_true(run_until(nodes, [&] { return replies(*nodes[0], r0) == 1; }));
        assert_int_equal(rttcc_rma_lock(h[2], 1, w, 1, r2, kTag), RTTCC_DONE);
        settle(nodes);
        assert_int_equal(replies(*nodes[2], r2), 0);

        bool drop = lose;
        nodes[0]->faults->drop_if = [&](Channel ch, const TxDatagram &d) {
            const auto &hd = *static_cast<const PacketHeader *>(d.iov[0].iov_base);
            return ch == kData && hd.type == static_cast<uint8_t>(PacketType::PUT) && std::exchange(drop, false);
        };
        iovec iov{src.data(), src.size()};
        const int rc = nodes[0]->engine->put(1, key, 0, kTag, &iov, 1, &src);
        assert_true(rc == RTTCC_OK || rc == RTTCC_DONE);
        assert_int_equal(rttcc_rma_unlock_ordered(h[0], 1, w, kTag, nullptr), RTTCC_DONE);
        bool whole_when_granted = false;
        assert_true(run_until(nodes, [&] {
            if (replies(*nodes[2], r2) == 0) return false;
            whole_when_granted = mem == src;
            return true;
        }));
        assert_true(whole_when_granted);
        assert_false(drop);
        assert_int_equal(nodes[1]->engine->stats().ordered_held, lose ? 1 : 0);
        assert_int_equal(bad_requests(*nodes[1]), 0);
    }
}

// An ordered unlock comes in the burst of the large get before it, whose
// reply is sent from the window two segments at a time (send credits): the
// lock then goes, and its next holder may change the window at once.  The
// unlock copies what is still to be sent first, so the get brings back the
// bytes of its epoch.
static void test_an_unlock_keeps_a_large_reply_as_it_was(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, {}, two_segments_a_pass);
    Handles h(nodes);
    const uint32_t w = open_window(h, 1);
    const size_t len = 150000;
    std::vector<uint8_t> window = make_message(4, len);
    const std::vector<uint8_t> before = window;
    const uint32_t key = expose(h, 1, w, 0, window.data(), window.size());
    uint8_t held = 0;
    const uint32_t r0 = nodes[0]->engine->grant(1, &held, 1);
    assert_int_equal(rttcc_rma_lock(h[0], 1, w, 1, r0, kTag), RTTCC_DONE);
    assert_true(run_until(nodes, [&] { return replies(*nodes[0], r0) == 1; }));
    std::vector<uint8_t> got(len);
    const uint32_t rp = nodes[0]->engine->grant(1, got.data(), len);
    assert_int_equal(rttcc_rma_get(h[0], 1, key, 0, len, rp, kTag), RTTCC_DONE);
    assert_int_equal(rttcc_rma_unlock_ordered(h[0], 1, w, kTag, nullptr), RTTCC_DONE);
    nodes[1]->engine->progress();  // serves both; two segments of the reply go
    assert_int_equal(rttcc_rma_lock_local(h[1], w, 1), RTTCC_DONE);  // the next holder
    std::fill(window.begin(), window.end(), 0x5a);  // writes its epoch
    assert_true(run_until(nodes, [&] { return replies(*nodes[0], rp) == 1; }));
    assert_memory_equal(got.data(), before.data(), len);
    assert_int_equal(rttcc_rma_unlock_local(h[1], w), RTTCC_OK);
}

// A lazy lock's batch (rttcc_rma_hold_batch, rttcc_rma_lock_batch): held,
// posted puts wait at the origin through progress passes and a full batch
// (RTTCC_ERR_BUSY); lock_batch sends them with the lock as one request,
// applied at once when the lock is free, after the holder's unlock when it
// is not; the lock is free again after it, and one byte answers it.
static void test_a_lazy_lock_applies_its_batch_under_the_lock(void **) {
    for (bool contended : {false, true}) {
        MemNetwork net(4000);
        auto nodes = make_nodes(net, 3);
        Handles h(nodes);
        const uint32_t w = open_window(h, 1);
        std::vector<uint8_t> mem(64, 0);
        const uint32_t key = expose(h, 1, w, 0, mem.data(), mem.size());
        expose(h, 1, w, 2, mem.data(), mem.size());
        uint8_t held2 = 0, done0 = 0;
        const uint32_t r2 = nodes[2]->engine->grant(1, &held2, 1), d0 = nodes[0]->engine->grant(1, &done0, 1);
        if (contended) {
            assert_int_equal(rttcc_rma_lock(h[2], 1, w, 1, r2, kTag), RTTCC_DONE);
            assert_true(run_until(nodes, [&] { return replies(*nodes[2], r2) == 1; }));
        }
        assert_int_equal(rttcc_rma_hold_batch(h[0], 1, 1), RTTCC_OK);
        const uint8_t a[8] = {1, 2, 3, 4, 5, 6, 7, 8}, b[8] = {9, 9, 9, 9, 9, 9, 9, 9};
        assert_int_equal(rttcc_rma_post(h[0], 1, key, 0, RTTCC_RMA_REPLACE, RTTCC_RMA_BYTE, a, 8), RTTCC_DONE);
        assert_int_equal(rttcc_rma_post(h[0], 1, key, 8, RTTCC_RMA_REPLACE, RTTCC_RMA_BYTE, b, 8), RTTCC_DONE);
        settle(nodes);  // progress passes send nothing
        assert_true(std::all_of(mem.begin(), mem.end(), [](uint8_t v) { return v == 0; }));
        assert_int_equal(rttcc_rma_lock_batch(h[0], 1, w, 1, d0, kTag), RTTCC_OK);
        settle(nodes);
        if (contended) {  // it waits for the lock
            assert_int_equal(replies(*nodes[0], d0), 0);
            assert_int_equal(mem[0], 0);
            assert_int_equal(nodes[1]->engine->stats().locked_batches_waited, 1);
            assert_int_equal(rttcc_rma_unlock(h[2], 1, w, kTag), RTTCC_DONE);
        }
        assert_true(run_until(nodes, [&] { return replies(*nodes[0], d0) == 1; }));
        assert_int_equal(done0, 1);
        assert_memory_equal(mem.data(), a, 8);
        assert_memory_equal(mem.data() + 8, b, 8);
        // The lock is free again: node 2 gets it.
        assert_int_equal(rttcc_rma_lock(h[2], 1, w, 1, r2, kTag), RTTCC_DONE);
        assert_true(run_until(nodes, [&] { return replies(*nodes[2], r2) == (contended ? 2u : 1u); }));
        assert_int_equal(bad_requests(*nodes[1]), 0);
    }
}

// An entry larger than a copied request (inline_max) is still copied into
// the batch, which is done at once (MPI_Win_complete waits for nothing
// more), whether the batch is held or not.
static void test_a_batch_takes_a_large_entry(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2);
    Handles h(nodes);
    const uint32_t w = open_window(h, 1);
    std::vector<uint8_t> mem(65536, 0);
    const uint32_t key = expose(h, 1, w, 0, mem.data(), mem.size());
    std::vector<uint8_t> big = make_message(5, 20000);
    assert_true(big.size() > nodes[0]->engine->config().inline_max);
    assert_int_equal(rttcc_rma_post(h[0], 1, key, 30000, RTTCC_RMA_REPLACE, RTTCC_RMA_BYTE, big.data(), big.size()),
                     RTTCC_DONE);
    const std::vector<uint8_t> sent = big;
    std::fill(big.begin(), big.end(), 0);  // a copy went: the origin's bytes are free at once
    assert_true(run_until(nodes, [&] { return std::memcmp(mem.data() + 30000, sent.data(), sent.size()) == 0; }));
    big = sent;
    assert_int_equal(rttcc_rma_hold_batch(h[0], 1, 1), RTTCC_OK);
    assert_int_equal(rttcc_rma_post(h[0], 1, key, 100, RTTCC_RMA_REPLACE, RTTCC_RMA_BYTE, big.data(), big.size()),
                     RTTCC_DONE);
    uint8_t done = 0;
    const uint32_t d = nodes[0]->engine->grant(1, &done, 1);
    assert_int_equal(rttcc_rma_lock_batch(h[0], 1, w, 0, d, kTag), RTTCC_OK);
    assert_true(run_until(nodes, [&] { return replies(*nodes[0], d) == 1; }));
    assert_int_equal(done, 1);
    assert_memory_equal(mem.data() + 100, big.data(), big.size());
}

// A held batch that is full refuses the next post (RTTCC_ERR_BUSY) instead
// of sending; an empty one sends nothing (RTTCC_DONE); what was posted
// before the hold goes when it begins; after the hold ends the batch goes
// as usual.
static void test_a_held_batch_never_leaves_by_itself(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2);
    Handles h(nodes);
    const uint32_t w = open_window(h, 1);
    std::vector<uint8_t> mem(1 << 20, 0);
    const uint32_t key = expose(h, 1, w, 0, mem.data(), mem.size());
    uint8_t done = 0;
    const uint32_t d = nodes[0]->engine->grant(1, &done, 1);
    assert_int_equal(rttcc_rma_hold_batch(h[0], 1, 1), RTTCC_OK);
    assert_int_equal(rttcc_rma_lock_batch(h[0], 1, w, 1, d, kTag), RTTCC_DONE);  // nothing posted
    // Posted before the hold (another epoch's): it goes when the hold begins.
    const uint8_t early = 3;
    const size_t last = mem.size() - 1;
    assert_int_equal(rttcc_rma_post(h[0], 1, key, last, RTTCC_RMA_REPLACE, RTTCC_RMA_BYTE, &early, 1), RTTCC_DONE);
    assert_int_equal(rttcc_rma_hold_batch(h[0], 1, 1), RTTCC_OK);
    assert_true(run_until(nodes, [&] { return mem[last] == early; }));
    const std::vector<uint8_t> bytes(1000, 7);
    int posted = 0, rc;
    while ((rc = rttcc_rma_post(h[0], 1, key, 1000u * posted, RTTCC_RMA_REPLACE, RTTCC_RMA_BYTE, bytes.data(),
                                bytes.size())) == RTTCC_DONE)
        ++posted;
    assert_int_equal(rc, RTTCC_ERR_BUSY);
    assert_true(posted > 1);
    settle(nodes);
    assert_int_equal(mem[0], 0);
    assert_int_equal(nodes[0]->engine->stats().rma_batches, 1);  // the early one's
    assert_int_equal(rttcc_rma_hold_batch(h[0], 1, 0), RTTCC_OK);
    assert_true(run_until(nodes, [&] { return mem[1000u * posted - 1] == 7; }));
    assert_int_equal(replies(*nodes[0], d), 0);
}

// Waiters behind this process's own exclusive lock are let in by its
// unlock; a waiter behind a peer that dies is let in when it is declared
// dead, and the dead peer's held requests are dropped.
static void test_unlock_local_and_a_dead_holder_let_waiters_in(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 3);
    Handles h(nodes);
    const uint32_t w = open_window(h, 1);
    std::vector<uint8_t> mem(64);
    const uint32_t k0 = expose(h, 1, w, 0, mem.data(), mem.size());
    expose(h, 1, w, 2, mem.data(), mem.size());
    uint8_t held0 = 0, held2 = 0;
    const uint32_t r0 = nodes[0]->engine->grant(1, &held0, 1), r2 = nodes[2]->engine->grant(1, &held2, 1);

    assert_int_equal(rttcc_rma_lock_local(h[1], w, 1), RTTCC_DONE);
    assert_int_equal(rttcc_rma_lock(h[0], 1, w, 1, r0, kTag), RTTCC_DONE);
    settle(nodes);
    assert_int_equal(replies(*nodes[0], r0), 0);
    assert_int_equal(rttcc_rma_unlock_local(h[1], w), RTTCC_OK);
    assert_true(run_until(nodes, [&] { return replies(*nodes[0], r0) == 1; }));

    assert_int_equal(rttcc_rma_lock(h[2], 1, w, 1, r2, kTag), RTTCC_DONE);
    settle(nodes);
    assert_int_equal(replies(*nodes[2], r2), 0);
    // Node 0's next request is lost, the one after it held.
    bool lose = true;
    nodes[0]->faults->drop_if = [&](Channel ch, const TxDatagram &) { return ch == kData && std::exchange(lose, false); };
    const uint8_t ones[2] = {1, 1};
    const iovec acc{const_cast<uint8_t *>(ones), 1};
    for (int i = 0; i < 2; ++i)
        assert_int_equal(rttcc_rma_accumulate(h[0], 1, k0, 0, RTTCC_RMA_SUM, RTTCC_RMA_UINT8, &acc, 1, 0, kTag, nullptr),
                         RTTCC_DONE);
    nodes[1]->engine->progress();
    assert_int_equal(nodes[1]->engine->peer(0)->requests.held(), 1);
    nodes[1]->engine->fail_peer(0, "the test says so");  // node 0 dies holding the lock
    assert_int_equal(nodes[1]->engine->peer(0)->requests.held(), 0);
    assert_true(run_until(nodes, [&] { return replies(*nodes[2], r2) == 1; }));
    assert_int_equal(held2, 1);
    assert_int_equal(mem[0], 0);  // neither applied
}

// A dynamic window's lookup: the region of the window exposed to the
// asker that holds an address range, or key 0.
static void test_lookup_finds_the_region_holding_an_address(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 3);
    Handles h(nodes);
    const uint32_t w = open_window(h, 1), other = open_window(h, 1);
    std::vector<uint8_t> a(100), b(5000), c(100);
    expose(h, 1, w, 0, a.data(), a.size());
    const uint32_t kb = expose(h, 1, w, 0, b.data(), b.size());
    expose(h, 1, w, 2, c.data(), c.size());
    expose(h, 1, other, 0, c.data(), c.size());
    rttcc_rma_region_t region{};
    const uint32_t reply = nodes[0]->engine->grant(1, &region, sizeof region);
    const uint64_t in_b = reinterpret_cast<uintptr_t>(b.data()) + 1000;
    assert_int_equal(rttcc_rma_lookup(h[0], 1, w, in_b, 4000, reply, kTag), RTTCC_DONE);
    assert_true(run_until(nodes, [&] { return replies(*nodes[0], reply) == 1; }));
    assert_int_equal(region.key, kb);
    assert_int_equal(region.base, reinterpret_cast<uintptr_t>(b.data()));
    assert_int_equal(region.len, b.size());
    const uint64_t in_c = reinterpret_cast<uintptr_t>(c.data());  // node 2's, and another window's
    assert_int_equal(rttcc_rma_lookup(h[0], 1, w, in_c, 1, reply, kTag), RTTCC_DONE);
    assert_true(run_until(nodes, [&] { return replies(*nodes[0], reply) == 2; }));
    assert_int_equal(region.key, 0);
    assert_int_equal(rttcc_rma_lookup(h[0], 1, w, in_b, 4001, reply, kTag), RTTCC_DONE);  // past b's end
    assert_true(run_until(nodes, [&] { return replies(*nodes[0], reply) == 3; }));
    assert_int_equal(region.key, 0);
}

// A dynamic window named by address (rttcc_rma_expose_window): after the
// region is detached and attached again far more often than any table of
// revoked keys would keep, and then moved, an origin's puts (REPLACE
// requests, large and chunked), posted puts and gets, gets (large: sent
// from the exposure), accumulates and compare-and-swap through its window
// key reach what is attached now, each once, in order, over a wire that
// drops, duplicates and reorders.  Another origin naming that key, and an
// address nothing holds, are dropped (counted) and change nothing.
static void test_a_window_key_reaches_what_is_attached_now(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 3, FaultRates{30000, 30000, 100000, 0}, [](rttcc_config_t &c) {
        c.retrans_timeout_us = c.min_rto_us = 100000;
        c.max_rto_us = 200000;
    });
    Handles h(nodes);
    const uint32_t w = open_window(h, 1);
    uint32_t wk = 0;
    assert_int_equal(rttcc_rma_expose_window(h[1], w + 1, 0, &wk), RTTCC_ERR_ARG);  // not open
    assert_int_equal(rttcc_rma_expose_window(h[1], w, 0, &wk), RTTCC_OK);
    std::vector<uint8_t> mem(300000, 0);
    const auto addr = [&](size_t i) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(mem.data() + i)); };
    uint32_t region = expose(h, 1, w, 0, mem.data(), 100000);
    for (int i = 0; i < 1000; ++i) {  // detached and attached again
        assert_true(nodes[1]->engine->revoke(region));
        region = expose(h, 1, w, 0, mem.data(), 100000);
    }
    assert_true(nodes[1]->engine->revoke(region));
    region = expose(h, 1, w, 0, mem.data() + 100000, 200000);  // moved: [100000, 300000)
    const std::vector<uint8_t> big = make_message(5, 150000), small = make_message(6, 100);
    const iovec v{const_cast<uint8_t *>(big.data()), big.size()};
    assert_int_equal(rttcc_rma_accumulate(h[0], 1, wk, addr(120000), RTTCC_RMA_REPLACE, RTTCC_RMA_BYTE, &v, 1, 0,
                                          kTag, nullptr),
                     RTTCC_OK);
    assert_int_equal(rttcc_rma_post(h[0], 1, wk, addr(280000), RTTCC_RMA_REPLACE, RTTCC_RMA_BYTE, small.data(),
                                    small.size()),
                     RTTCC_DONE);
    std::vector<uint8_t> got_small(100), got_big(150000);
    const uint32_t r_small = nodes[0]->engine->grant(1, got_small.data(), got_small.size());
    const uint32_t r_big = nodes[0]->engine->grant(1, got_big.data(), got_big.size());
    assert_int_equal(rttcc_rma_post_get(h[0], 1, wk, addr(280000), 100, r_small, kTag), RTTCC_DONE);
    assert_int_equal(rttcc_rma_get(h[0], 1, wk, addr(120000), 150000, r_big, kTag), RTTCC_DONE);
    const int64_t one = 1, compare = 0, swap = 42;
    int64_t was = -1;
    const iovec ov{const_cast<int64_t *>(&one), sizeof one};
    const uint32_t r_cas = nodes[0]->engine->grant(1, &was, sizeof was);
    assert_int_equal(rttcc_rma_accumulate(h[0], 1, wk, addr(100000), RTTCC_RMA_SUM, RTTCC_RMA_INT64, &ov, 1, 0, kTag,
                                          nullptr),
                     RTTCC_DONE);
    assert_int_equal(rttcc_rma_compare_and_swap(h[0], 1, wk, addr(100008), RTTCC_RMA_INT64, &compare, &swap, r_cas,
                                                kTag),
                     RTTCC_DONE);
    assert_true(run_until(nodes, [&] { return nodes[0]->puts.size() == 3; }, 60));
    assert_memory_equal(got_big.data(), big.data(), big.size());  // in order: after the put
    assert_memory_equal(got_small.data(), small.data(), small.size());
    assert_memory_equal(mem.data() + 120000, big.data(), big.size());
    assert_memory_equal(mem.data() + 280000, small.data(), small.size());
    int64_t counter = 0, swapped = 0;
    std::memcpy(&counter, mem.data() + 100000, 8);
    std::memcpy(&swapped, mem.data() + 100008, 8);
    assert_true(counter == 1 && swapped == 42 && was == 0);  // each applied once
    assert_int_equal(bad_requests(*nodes[1]), 0);
    assert_true(nodes[0]->faults->injected > 0 && nodes[1]->faults->injected > 0);
    const std::vector<uint8_t> before = mem;
    assert_int_equal(rttcc_rma_accumulate(h[2], 1, wk, addr(100000), RTTCC_RMA_SUM, RTTCC_RMA_INT64, &ov, 1, 0, kTag,
                                          nullptr),
                     RTTCC_DONE);  // node 0's key
    assert_int_equal(rttcc_rma_accumulate(h[0], 1, wk, addr(99992), RTTCC_RMA_SUM, RTTCC_RMA_INT64, &ov, 1, 0, kTag,
                                          nullptr),
                     RTTCC_DONE);  // just before the region: nothing holds it
    assert_true(run_until(nodes, [&] { return bad_requests(*nodes[1]) == 2; }, 60));
    assert_true(mem == before);
}

// Node 1 computes (its application never progresses): its quiet liveness
// agent serves node 0's get and lock, whose replies land at node 0.
static void test_the_agent_serves_requests(void **) {
    MemNetwork net(4000);
    net.real_time = true;
    auto nodes = make_nodes(net, 2, {}, with_agent);
    Handles h(nodes);
    const uint32_t w = open_window(h, 1);
    std::vector<uint8_t> window = make_message(2, 100000), got(60000, 0);
    const uint32_t key = expose(h, 1, w, 0, window.data(), window.size());
    uint8_t held = 0;
    const uint32_t reply = nodes[0]->engine->grant(1, got.data(), got.size());
    const uint32_t locked = nodes[0]->engine->grant(1, &held, 1);
    assert_int_equal(rttcc_rma_get(h[0], 1, key, 5000, got.size(), reply, kTag), RTTCC_DONE);
    assert_int_equal(rttcc_rma_lock(h[0], 1, w, 1, locked, kTag), RTTCC_DONE);
    only_node0(nodes, 2000, [&] { return replies(*nodes[0], reply) == 1 && replies(*nodes[0], locked) == 1; });
    assert_int_equal(replies(*nodes[0], reply), 1);
    assert_int_equal(replies(*nodes[0], locked), 1);
    assert_memory_equal(got.data(), window.data() + 5000, got.size());
    assert_int_equal(held, 1);
    const rttcc_stats_t s = nodes[1]->engine->stats();
    assert_true(s.agent_passes > 0);
    assert_int_equal(s.turned_away, 0);
    assert_int_equal(s.drop_bad_put, 0);
    assert_int_equal(nodes[0]->dead.size(), 0);
}

// The target revokes its exposure and overwrites and frees the window
// while its reply to a large get is in flight (some of it lost, so resent
// after): the reply is its own copy, so the origin gets the bytes as they
// were when the get was served, and nothing reads the freed window.
static void test_revoking_with_a_reply_in_flight_is_safe(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2);
    Handles h(nodes);
    const uint32_t w = open_window(h, 1);
    const std::vector<uint8_t> was = make_message(3, 400000);
    auto window = std::make_unique<std::vector<uint8_t>>(was);
    const uint32_t key = expose(h, 1, w, 0, window->data(), window->size());
    std::vector<uint8_t> got(400000, 0);
    const uint32_t reply = nodes[0]->engine->grant(1, got.data(), got.size());
    int lost = 0;
    nodes[1]->faults->drop_if = [&](Channel ch, const TxDatagram &) { return ch == kData && lost++ < 10; };
    assert_int_equal(rttcc_rma_get(h[0], 1, key, 0, got.size(), reply, kTag), RTTCC_DONE);
    nodes[1]->engine->progress();  // serves it: the reply goes, its first datagrams lost
    assert_int_equal(nodes[1]->engine->stats().msgs_rx, 1);
    assert_true(nodes[1]->engine->revoke(key));
    std::fill(window->begin(), window->end(), 0);
    window.reset();
    assert_true(run_until(nodes, [&] { return replies(*nodes[0], reply) == 1; }));
    assert_true(got == was);
    assert_true(nodes[1]->engine->stats().retx > 0);
    assert_int_equal(rttcc_rma_window_close(h[1], w), RTTCC_OK);
}

// What an origin may not ask is refused before anything is sent, and the
// engine's tag is nobody's.
static void test_bad_requests_are_refused_at_the_origin(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2);
    Handles h(nodes);
    uint8_t b[64] = {};
    const iovec one{b, 8}, odd{b, 6}, none{b, 0};
    const rttcc_callbacks_t cb{};
    Engine &e = *nodes[0]->engine;
    assert_int_equal(rttcc_rma_get(h[0], 1, 5, 0, 8, 6, RTTCC_TAG_RMA), RTTCC_ERR_ARG);  // the engine's tag
    assert_int_equal(rttcc_rma_get(h[0], 1, 5, 0, 0, 6, kTag), RTTCC_ERR_ARG);            // nothing to get
    assert_int_equal(rttcc_rma_get(h[0], 1, 5, 0, (1u << 20) + 1, 6, kTag), RTTCC_ERR_ARG);  // over max_message
    assert_int_equal(rttcc_rma_get(h[0], 1, 5, 0, 8, 0, kTag), RTTCC_ERR_ARG);            // no reply grant
    assert_int_equal(rttcc_rma_get(h[0], 7, 5, 0, 8, 6, kTag), RTTCC_ERR_UNREACH);        // no such peer
    assert_int_equal(rttcc_rma_accumulate(h[0], 1, 5, 0, RTTCC_RMA_BAND, RTTCC_RMA_DOUBLE, &one, 1, 0, kTag, nullptr),
                     RTTCC_ERR_ARG);  // an op the type does not take
    assert_int_equal(rttcc_rma_accumulate(h[0], 1, 5, 0, RTTCC_RMA_SUM, RTTCC_RMA_INT32, &odd, 1, 0, kTag, nullptr),
                     RTTCC_ERR_ARG);  // not whole elements
    assert_int_equal(rttcc_rma_accumulate(h[0], 1, 5, 0, RTTCC_RMA_SUM, RTTCC_RMA_INT32, &none, 1, 0, kTag, nullptr),
                     RTTCC_ERR_ARG);
    assert_int_equal(rttcc_rma_accumulate(h[0], 1, 5, 0, RTTCC_RMA_SUM, RTTCC_RMA_TYPE_COUNT, &one, 1, 0, kTag, nullptr),
                     RTTCC_ERR_ARG);
    assert_int_equal(rttcc_rma_compare_and_swap(h[0], 1, 5, 0, RTTCC_RMA_TYPE_COUNT, b, b, 6, kTag), RTTCC_ERR_ARG);
    assert_int_equal(rttcc_rma_lock(h[0], 1, 5, 1, 0, kTag), RTTCC_ERR_ARG);
    assert_int_equal(e.stats().msgs_tx, 0);
    assert_int_equal(e.peer(1)->next_request, 0);  // no number used

    assert_int_equal(e.attach(RTTCC_TAG_RMA, cb), RTTCC_ERR_ARG);
    assert_int_equal(e.send(1, RTTCC_TAG_RMA, &one, 1, nullptr), RTTCC_ERR_ARG);
    assert_int_equal(e.put(1, 5, 0, RTTCC_TAG_RMA, &one, 1, nullptr), RTTCC_ERR_ARG);
    assert_int_equal(e.flush(1, RTTCC_TAG_RMA, nullptr), RTTCC_ERR_ARG);

    const uint32_t w = open_window(h, 0);
    uint32_t key = 0;
    assert_int_equal(rttcc_rma_expose(h[0], w + 1, 1, b, sizeof b, &key), RTTCC_ERR_ARG);  // not open
    assert_int_equal(rttcc_rma_expose(h[0], w, 1, b, 0, &key), RTTCC_ERR_ARG);
    assert_int_equal(rttcc_rma_lock_local(h[0], w + 1, 1), RTTCC_ERR_ARG);
    assert_int_equal(rttcc_rma_window_close(h[0], w), RTTCC_OK);
    assert_int_equal(rttcc_rma_window_close(h[0], w), RTTCC_ERR_ARG);
    assert_int_equal(rttcc_rma_expose(h[0], w, 1, b, sizeof b, &key), RTTCC_ERR_ARG);
    assert_int_not_equal(open_window(h, 0), w);  // numbers are not reused
}

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_get_lands_in_the_reply_grant),
        cmocka_unit_test(test_a_reply_does_not_ask_for_its_ack),
        cmocka_unit_test(test_a_large_get_replies_from_the_window_until_revoked),
        cmocka_unit_test(test_settle_keeps_a_large_reply_as_it_was),
        cmocka_unit_test(test_requests_and_replies_go_about_a_mebibyte_at_once),
        cmocka_unit_test(test_back_to_back_accumulates_leave_together),
        cmocka_unit_test(test_requests_outside_an_exposure_are_dropped),
        cmocka_unit_test(test_accumulates_sum_and_fetch_the_old_values),
        cmocka_unit_test(test_compare_and_swap_swaps_only_on_equality),
        cmocka_unit_test(test_local_updates),
        cmocka_unit_test(test_requests_are_applied_in_order_over_a_faulty_wire),
        cmocka_unit_test(test_requests_out_of_any_legal_order_end_the_peer),
        cmocka_unit_test(test_window_locks),
        cmocka_unit_test(test_an_ordered_unlock_waits_for_a_lost_put),
        cmocka_unit_test(test_an_unlock_keeps_a_large_reply_as_it_was),
        cmocka_unit_test(test_a_lazy_lock_applies_its_batch_under_the_lock),
        cmocka_unit_test(test_a_held_batch_never_leaves_by_itself),
        cmocka_unit_test(test_a_batch_takes_a_large_entry),
        cmocka_unit_test(test_unlock_local_and_a_dead_holder_let_waiters_in),
        cmocka_unit_test(test_lookup_finds_the_region_holding_an_address),
        cmocka_unit_test(test_a_window_key_reaches_what_is_attached_now),
        cmocka_unit_test(test_the_agent_serves_requests),
        cmocka_unit_test(test_revoking_with_a_reply_in_flight_is_safe),
        cmocka_unit_test(test_bad_requests_are_refused_at_the_origin),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
