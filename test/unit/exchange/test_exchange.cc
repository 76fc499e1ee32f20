// coll_rttcc's data path without MPI: every node of an in-memory network
// runs the same alltoallv through its exchange; every byte must land where
// its receiver asked, once, whatever the policy, the segment size, the
// order in which nodes begin, or a wire that drops, duplicates and
// reorders.  Size mismatches and dead peers end the call with an error,
// never a hang.
#include <atomic>
#include <random>
#include <string>
#include <thread>

#include "cmocka_cxx.h"
#include "engine_harness.h"
#include "exchange/exchange.h"

using namespace rttcc;
using namespace rttcc_test;

namespace {

constexpr uint8_t kTag = 0x3c;

rttcc_exchange_params_t params(int policy, uint64_t segment) {
    rttcc_exchange_params_t p{};
    p.policy = policy;
    p.threshold_us = 100;
    p.variance_factor = 2;
    p.max_concurrent = 2;
    p.reorder_window = 3;
    p.backoff_ms = 0.1;
    p.segment_size = segment;
    p.segments_ahead = 2;
    return p;
}

// One node's side of a call: its send blocks, its landing area, its peers.
struct Side {
    std::vector<std::vector<uint8_t>> blocks;  // by destination
    std::vector<uint8_t> land;                 // landing area (with gaps, filled 0xee)
    std::vector<rttcc_xpeer_t> peers;
    int rc = RTTCC_OK;                         // progress() result
};

uint8_t byte_of(uint32_t from, uint32_t to, uint64_t call, size_t i) {
    return static_cast<uint8_t>(from * 37 + to * 11 + call * 5 + i + (i >> 9));
}

// counts[i][j]: bytes i sends j.  Receivers land blocks in reverse rank
// order with a 7-byte gap after each.
std::vector<Side> make_sides(const std::vector<std::vector<uint64_t>> &counts, uint64_t call) {
    const uint32_t n = static_cast<uint32_t>(counts.size());
    std::vector<Side> sides(n);
    for (uint32_t i = 0; i < n; ++i) {
        Side &s = sides[i];
        s.peers.resize(n);
        uint64_t at = 0;
        for (uint32_t k = n; k-- > 0;) {
            s.peers[k].recv_offset = at;
            s.peers[k].recv_len = counts[k][i];
            at += counts[k][i] + 7;
        }
        s.land.assign(at, 0xee);
        s.blocks.resize(n);
        for (uint32_t j = 0; j < n; ++j) {
            s.blocks[j].resize(counts[i][j]);
            for (size_t b = 0; b < counts[i][j]; ++b) s.blocks[j][b] = byte_of(i, j, call, b);
            s.peers[j].engine_peer = j;
            s.peers[j].send = s.blocks[j].data();
            s.peers[j].send_len = counts[i][j];
        }
    }
    return sides;
}

void check_landed(const std::vector<Side> &sides, uint64_t call) {
    const uint32_t n = static_cast<uint32_t>(sides.size());
    for (uint32_t i = 0; i < n; ++i) {
        const Side &s = sides[i];
        std::vector<bool> ours(s.land.size(), false);
        for (uint32_t k = 0; k < n; ++k) {
            if (k == i) continue;
            for (size_t b = 0; b < s.peers[k].recv_len; ++b) {
                assert_int_equal(s.land[s.peers[k].recv_offset + b], byte_of(k, i, call, b));
                ours[s.peers[k].recv_offset + b] = true;
            }
        }
        for (size_t b = 0; b < s.land.size(); ++b)
            if (!ours[b]) assert_int_equal(s.land[b], 0xee);  // gaps and self's block untouched
    }
}

struct Cluster {
    std::vector<std::unique_ptr<Node>> nodes;
    std::vector<std::unique_ptr<ExchangeHub>> hubs;
    std::vector<std::unique_ptr<Exchange>> xs;

    static void big_messages(rttcc_config_t &c) { c.max_message = 1 << 22; }
    Cluster(MemNetwork &net, int n, const rttcc_exchange_params_t &p, FaultRates faults = {},
            void (*tune)(rttcc_config_t &) = big_messages) {
        nodes = make_nodes(net, n, faults, tune);
        for (auto &node : nodes) {
            int rc;
            hubs.push_back(std::make_unique<ExchangeHub>(node->engine, kTag, &rc));
            assert_int_equal(rc, RTTCC_OK);
            xs.push_back(std::make_unique<Exchange>(*hubs.back(), p));
        }
    }
    // Begins the call on the nodes in `order`, progressing everyone `lag`
    // rounds between two begins, then runs it to the end on every node.
    // Each node's call takes the engines' time from its begin to its end.
    bool run(std::vector<Side> &sides, uint64_t call, const std::vector<uint32_t> &order, int lag = 0) {
        const uint32_t n = static_cast<uint32_t>(nodes.size());
        std::vector<bool> begun(n, false), over(n, false);
        std::vector<nanos> began(n);
        auto step = [&] {
            next_round(nodes);
            for (auto &node : nodes) node->engine->progress();
            for (uint32_t i = 0; i < n; ++i)
                if (begun[i] && !over[i]) {
                    sides[i].rc = xs[i]->progress();
                    over[i] = sides[i].rc != RTTCC_OK;
                    if (over[i]) {
                        rttcc_exchange_summary_t sum;
                        xs[i]->summary(&sum);
                        assert_int_equal(sum.elapsed_ns, now_of(nodes) - began[i]);
                    }
                }
        };
        for (uint32_t i : order) {
            assert_int_equal(xs[i]->begin(9, call, i, n, sides[i].peers.data(), sides[i].land.data(),
                                          sides[i].land.size()),
                             RTTCC_OK);
            begun[i] = true;
            began[i] = now_of(nodes);
            for (int k = 0; k < lag; ++k) step();
        }
        const nanos end = now_of(nodes) + msec(30000);
        while (std::find(over.begin(), over.end(), false) != over.end()) {
            if (now_of(nodes) > end) return false;
            step();
        }
        return true;
    }
};

// Runs the calls a (on c.xs, call ca) and b (on `second`, call cb), begun
// on every node, to their end; both must land every byte.
void finish_both(Cluster &c, std::vector<std::unique_ptr<Exchange>> &second, std::vector<Side> &a, uint64_t ca,
                 std::vector<Side> &b, uint64_t cb) {
    const uint32_t n = static_cast<uint32_t>(a.size());
    int left = 0;
    for (uint32_t i = 0; i < n; ++i) left += (a[i].rc == RTTCC_OK) + (b[i].rc == RTTCC_OK);
    assert_true(run_until(c.nodes, [&] {
        for (uint32_t i = 0; i < n; ++i) {
            if (a[i].rc == RTTCC_OK && (a[i].rc = c.xs[i]->progress()) != RTTCC_OK) --left;
            if (b[i].rc == RTTCC_OK && (b[i].rc = second[i]->progress()) != RTTCC_OK) --left;
        }
        return left == 0;
    }, 30));
    for (uint32_t i = 0; i < n; ++i) {
        assert_int_equal(a[i].rc, RTTCC_DONE);
        assert_int_equal(b[i].rc, RTTCC_DONE);
    }
    check_landed(a, ca);
    check_landed(b, cb);
}

std::vector<uint32_t> in_order(uint32_t n) {
    std::vector<uint32_t> o(n);
    for (uint32_t i = 0; i < n; ++i) o[i] = i;
    return o;
}

std::vector<std::vector<uint64_t>> random_counts(uint32_t n, uint64_t most, unsigned seed) {
    std::mt19937 rng(seed);
    std::vector<std::vector<uint64_t>> c(n, std::vector<uint64_t>(n));
    for (auto &row : c)
        for (auto &v : row) v = rng() % 4 == 0 ? 0 : rng() % most;  // a quarter are empty
    return c;
}

}  // namespace

static void test_every_policy_lands_every_byte(void **) {
    for (int policy = RTTCC_SCHED_LINEAR; policy <= RTTCC_SCHED_ADAPTIVE; ++policy) {
        MemNetwork net(4000);
        Cluster c(net, 5, params(policy, 3000));
        for (uint64_t call = 0; call < 3; ++call) {
            auto sides = make_sides(random_counts(5, 20000, 7 + call + policy * 10), call);
            assert_true(c.run(sides, call, in_order(5)));
            for (const Side &s : sides) assert_int_equal(s.rc, RTTCC_DONE);
            check_landed(sides, call);
        }
        for (auto &node : c.nodes) assert_true(node->received.empty());  // the hub's tag never reached the creator
        rttcc_exchange_summary_t sum;
        c.xs[0]->summary(&sum);
        assert_true(sum.puts >= 1 && sum.bytes > 0);
    }
}

// Receivers that grant one or two senders at a time, senders that put to
// one peer at a time: nobody waits on a slot held for a peer that has not
// granted it (parking), so even the tightest setting cannot deadlock; nor
// does a small block that must wait for a grant slot to ride on its RTR.
static void test_paced_grants_never_deadlock(void **) {
    for (uint32_t grants : {1u, 2u}) {
        for (uint32_t concurrent : {1u, 3u}) {
            MemNetwork net(4000);
            auto p = params(RTTCC_SCHED_BALANCED, 4000);
            p.max_grants = grants;
            p.max_concurrent = concurrent;
            p.eager_limit = 10000;  // a third of the blocks go with the RTR
            p.eager_total = UINT64_MAX;
            Cluster c(net, 6, p);
            for (uint64_t call = 0; call < 2; ++call) {
                auto sides = make_sides(random_counts(6, 30000, 40 + call + grants * 3 + concurrent), call);
                assert_true(c.run(sides, call, {5, 2, 0, 4, 1, 3}, 2));
                for (const Side &s : sides) assert_int_equal(s.rc, RTTCC_DONE);
                check_landed(sides, call);
            }
        }
    }
}

static void test_late_beginners_and_large_blocks(void **) {
    MemNetwork net(4000);
    Cluster c(net, 4, params(RTTCC_SCHED_BALANCED, 262144));
    std::vector<std::vector<uint64_t>> counts(4, std::vector<uint64_t>(4, 700000));
    auto sides = make_sides(counts, 0);
    assert_true(c.run(sides, 0, {3, 1, 0, 2}, 50));  // RTRs of the others wait in the hubs
    for (const Side &s : sides) assert_int_equal(s.rc, RTTCC_DONE);
    check_landed(sides, 0);
    // One-byte and zero-byte calls right after.
    for (uint64_t bytes : {1, 0}) {
        std::vector<std::vector<uint64_t>> small(4, std::vector<uint64_t>(4, bytes));
        auto s2 = make_sides(small, 1 + bytes);
        assert_true(c.run(s2, 1 + bytes, {2, 0, 3, 1}, 3));
        for (const Side &s : s2) assert_int_equal(s.rc, RTTCC_DONE);
        check_landed(s2, 1 + bytes);
    }
}

static void test_faulty_wire(void **) {
    MemNetwork net(4000);
    Cluster c(net, 4, params(RTTCC_SCHED_ADAPTIVE, 5000), FaultRates{20000, 20000, 20000, 0});
    auto sides = make_sides(random_counts(4, 60000, 3), 0);
    assert_true(c.run(sides, 0, in_order(4)));
    for (const Side &s : sides) assert_int_equal(s.rc, RTTCC_DONE);
    check_landed(sides, 0);
    uint64_t injected = 0;
    for (auto &node : c.nodes) injected += node->faults->injected;
    assert_true(injected > 0);
}

static void test_size_mismatch_is_an_error_not_a_hang(void **) {
    MemNetwork net(4000);
    Cluster c(net, 3, params(RTTCC_SCHED_LINEAR, 4096));
    auto counts = random_counts(3, 10000, 5);
    counts[1][2] = 5000;
    auto sides = make_sides(counts, 0);
    sides[1].peers[2].send_len = 6000;  // node 1 sends 2 more than node 2 has room for
    sides[1].blocks[2].resize(6000);
    sides[1].peers[2].send = sides[1].blocks[2].data();
    assert_true(c.run(sides, 0, in_order(3)));
    assert_int_equal(sides[0].rc, RTTCC_DONE);
    assert_int_equal(sides[1].rc, RTTCC_ERR_TRUNCATE);
    assert_int_equal(sides[2].rc, RTTCC_ERR_TRUNCATE);
    // Everything else of the call landed, and the next call works.
    for (size_t b = 0; b < sides[2].peers[0].recv_len; ++b)
        assert_int_equal(sides[2].land[sides[2].peers[0].recv_offset + b], byte_of(0, 2, 0, b));
    auto next = make_sides(random_counts(3, 10000, 6), 1);
    assert_true(c.run(next, 1, in_order(3)));
    for (const Side &s : next) assert_int_equal(s.rc, RTTCC_DONE);
    check_landed(next, 1);
}

static void test_two_channels_interleaved(void **) {
    MemNetwork net(4000);
    Cluster c(net, 3, params(RTTCC_SCHED_GREEDY, 2000));
    std::vector<std::unique_ptr<Exchange>> second;
    for (auto &h : c.hubs) second.push_back(std::make_unique<Exchange>(*h, params(RTTCC_SCHED_THRESHOLD, 1500)));
    auto a = make_sides(random_counts(3, 9000, 11), 0);
    auto b = make_sides(random_counts(3, 9000, 12), 4);
    for (uint32_t i = 0; i < 3; ++i) {
        assert_int_equal(c.xs[i]->begin(1, 0, i, 3, a[i].peers.data(), a[i].land.data(), a[i].land.size()), RTTCC_OK);
        assert_int_equal(second[i]->begin(2, 0, i, 3, b[i].peers.data(), b[i].land.data(), b[i].land.size()),
                         RTTCC_OK);
    }
    // The same (channel, seq) twice is refused.
    assert_int_equal(second[0]->begin(2, 0, 0, 3, b[0].peers.data(), b[0].land.data(), b[0].land.size()),
                     RTTCC_ERR_BUSY);
    finish_both(c, second, a, 0, b, 4);
}

static void test_bad_arguments(void **) {
    MemNetwork net(4000);
    Cluster c(net, 2, params(RTTCC_SCHED_LINEAR, 4096));
    std::vector<uint8_t> land(10);
    rttcc_xpeer_t peers[2] = {};
    peers[1].engine_peer = 1;
    peers[1].recv_offset = 8;
    peers[1].recv_len = 3;  // past the area
    assert_int_equal(c.xs[0]->begin(0, 0, 0, 2, peers, land.data(), land.size()), RTTCC_ERR_ARG);
    peers[1].recv_len = 2;
    assert_int_equal(c.xs[0]->begin(0, 0, 2, 2, peers, land.data(), land.size()), RTTCC_ERR_ARG);  // self
    peers[1].send_len = 5;  // no send buffer
    assert_int_equal(c.xs[0]->begin(0, 0, 0, 2, peers, land.data(), land.size()), RTTCC_ERR_ARG);
    peers[1].send_len = 0;
    assert_int_equal(c.xs[0]->begin(0, 0, 0, 2, peers, land.data(), land.size()), RTTCC_OK);
    assert_int_equal(c.xs[0]->begin(0, 1, 0, 2, peers, land.data(), land.size()), RTTCC_ERR_BUSY);  // one at a time
    // A second hub on the same tag is refused.
    int rc;
    ExchangeHub again(c.nodes[0]->engine, kTag, &rc);
    assert_int_equal(rc, RTTCC_ERR_BUSY);
}

static void test_dead_peer_ends_the_call(void **) {
    MemNetwork net(4000);
    Cluster c(net, 3, params(RTTCC_SCHED_LINEAR, 4096), {}, [](rttcc_config_t &cfg) { cfg.peer_timeout_ms = 300; });
    auto sides = make_sides(random_counts(3, 9000, 21), 0);
    // Node 2 never begins and never progresses: node 0's puts to it go unanswered.
    for (uint32_t i = 0; i < 2; ++i)
        assert_int_equal(c.xs[i]->begin(9, 0, i, 3, sides[i].peers.data(), sides[i].land.data(), sides[i].land.size()),
                         RTTCC_OK);
    c.xs[2].reset();
    c.hubs[2].reset();
    c.nodes[2]->engine.reset();
    std::vector<std::unique_ptr<Node>> alive;
    alive.push_back(std::move(c.nodes[0]));
    alive.push_back(std::move(c.nodes[1]));
    int rc0 = RTTCC_OK;
    const bool ended = run_until(alive, [&] { return (rc0 = c.xs[0]->progress()) != RTTCC_OK; }, 60);
    c.nodes[0] = std::move(alive[0]);
    c.nodes[1] = std::move(alive[1]);
    assert_true(ended);
    assert_int_equal(rc0, RTTCC_ERR_UNREACH);
}

// Each peer may put into its own room of the landing area, during its call,
// and nowhere else: node 0's RTRs are read off the wire (the keys leak);
// node 2 puts with the key node 0 gave node 1, node 1 puts past its room
// (into the gap after it).  Neither is written nor acknowledged; the call
// then lands every byte.
static void test_a_peer_puts_only_into_its_own_room(void **) {
    MemNetwork net(4000);
    Cluster c(net, 3, params(RTTCC_SCHED_LINEAR, 4096));
    std::vector<uint32_t> key_for(3, 0);  // by destination: the key in node 0's RTR
    c.nodes[0]->faults->drop_if = [&](Channel, const TxDatagram &d) {
        std::vector<uint8_t> b;
        for (int k = 0; k < d.iovcnt; ++k) {
            const auto *p = static_cast<const uint8_t *>(d.iov[k].iov_base);
            b.insert(b.end(), p, p + d.iov[k].iov_len);
        }
        PacketHeader h;
        XControl x;
        if (b.size() != kHeaderSize + sizeof x) return false;
        std::memcpy(&h, b.data(), sizeof h);
        std::memcpy(&x, b.data() + kHeaderSize, sizeof x);
        if (h.tag == kTag && x.type == XControl::kRtr) key_for[d.dest] = x.key;
        return false;  // read, not dropped
    };
    auto sides = make_sides({{0, 3000, 3000}, {5000, 0, 3000}, {5000, 3000, 0}}, 0);
    assert_int_equal(c.xs[0]->begin(9, 0, 0, 3, sides[0].peers.data(), sides[0].land.data(), sides[0].land.size()),
                     RTTCC_OK);
    assert_true(run_until(c.nodes, [&] {
        c.xs[0]->progress();
        return key_for[1] && key_for[2];
    }));
    assert_int_not_equal(key_for[1], key_for[2]);
    std::vector<uint8_t> junk(64, 0x99);
    iovec iov{junk.data(), junk.size()};
    assert_int_equal(c.nodes[2]->engine->put(0, key_for[1], 0, kTag, &iov, 1, nullptr), RTTCC_DONE);  // not its key
    iovec three{junk.data(), 3};
    assert_int_equal(c.nodes[1]->engine->put(0, key_for[1], 4999, kTag, &three, 1, nullptr), RTTCC_DONE);  // past its room
    assert_true(run_until(c.nodes, [&] { return c.nodes[0]->engine->stats().drop_bad_put >= 2; }));
    assert_int_equal(c.nodes[0]->engine->stats().segs_rx, 0);  // neither taken (node 0 holds no messages yet)
    for (uint32_t i : {1u, 2u})
        assert_int_equal(c.xs[i]->begin(9, 0, i, 3, sides[i].peers.data(), sides[i].land.data(), sides[i].land.size()),
                         RTTCC_OK);
    assert_true(run_until(c.nodes, [&] {
        bool over = true;
        for (uint32_t i = 0; i < 3; ++i) {
            if (sides[i].rc == RTTCC_OK) sides[i].rc = c.xs[i]->progress();
            over = over && sides[i].rc != RTTCC_OK;
        }
        return over;
    }, 30));
    for (const Side &side : sides) assert_int_equal(side.rc, RTTCC_DONE);
    check_landed(sides, 0);
}

rttcc_exchange_params_t eager(rttcc_exchange_params_t p, uint64_t limit) {
    p.eager_limit = limit;
    p.eager_total = UINT64_MAX;
    return p;
}

// Node 1 sends node 0 a control message of a call node 0 has not begun
// (a forgery but for its content: the real engine of node 1 sends it);
// a message the engine does not copy is read from head and block later.
void send_control(Cluster &c, const XControl &head, const std::vector<uint8_t> &block = {}) {
    const iovec iov[2] = {{const_cast<XControl *>(&head), sizeof head},
                          {const_cast<uint8_t *>(block.data()), block.size()}};
    int rc;
    while ((rc = c.nodes[1]->engine->send(0, kTag, iov, block.empty() ? 1 : 2, nullptr)) == RTTCC_ERR_BUSY) {
        next_round(c.nodes);
        for (auto &node : c.nodes) node->engine->progress();
    }
    assert_true(rc == RTTCC_OK || rc == RTTCC_DONE);
}

bool said(const Node &n, uint32_t peer, const std::string &what) {
    for (size_t i = 0; i < n.dead.size(); ++i)
        if (n.dead[i] == peer && n.dead_why[i].find(what) != std::string::npos) return true;
    return false;
}

// A call with node 1 after node 0 declared it dead ends with an error.
void a_call_with_the_dead_peer_fails(Cluster &c, uint64_t channel) {
    auto sides = make_sides({{0, 5000}, {5000, 0}}, 0);
    assert_int_equal(c.xs[0]->begin(channel, 0, 0, 2, sides[0].peers.data(), sides[0].land.data(),
                                    sides[0].land.size()),
                     RTTCC_OK);
    int rc = RTTCC_OK;
    assert_true(run_until(c.nodes, [&] { return (rc = c.xs[0]->progress()) != RTTCC_OK; }));
    assert_int_equal(rc, RTTCC_ERR_UNREACH);
}

// Under MPI_THREAD_MULTIPLE, 100 threads of node 1 each begin an alltoall
// on a communicator of their own (blocks with the RTR and blocks by put)
// before node 0 began any: node 0 holds one early RTR per channel, keeps
// node 1 alive, and every call completes once it begins them.  (The hub
// once declared node 1 dead at the 65th.)
static void test_calls_on_many_channels_wait_for_a_late_peer(void **) {
    MemNetwork net(4000);
    constexpr uint32_t kCalls = 100;
    const rttcc_exchange_params_t p = eager(params(RTTCC_SCHED_LINEAR, 4096), 3000);
    Cluster c(net, 2, p);
    std::vector<std::unique_ptr<Exchange>> xs[2];  // by node, one per channel
    std::vector<std::vector<Side>> sides;
    for (uint32_t k = 0; k < kCalls; ++k) {
        const uint64_t len = k % 2 ? 9000 + k : 1000 + k;  // by put, or with the RTR
        sides.push_back(make_sides({{0, len + 7}, {len, 0}}, k));
        for (uint32_t i = 0; i < 2; ++i) xs[i].push_back(std::make_unique<Exchange>(*c.hubs[i], p));
    }
    auto begin = [&](uint32_t i) {
        for (uint32_t k = 0; k < kCalls; ++k) {
            Side &s = sides[k][i];
            assert_int_equal(xs[i][k]->begin(100 + k, 0, i, 2, s.peers.data(), s.land.data(), s.land.size()),
                             RTTCC_OK);
        }
    };
    auto progress = [&](uint32_t i) {
        bool over = true;
        for (uint32_t k = 0; k < kCalls; ++k) {
            Side &s = sides[k][i];
            if (s.rc == RTTCC_OK) s.rc = xs[i][k]->progress();
            over = over && s.rc != RTTCC_OK;
        }
        return over;
    };
    begin(1);
    assert_true(run_until(c.nodes, [&] {
        progress(1);
        std::lock_guard<std::mutex> g(c.hubs[0]->mutex());
        return c.hubs[0]->early_held() == kCalls;
    }));
    begin(0);
    assert_true(run_until(c.nodes, [&] { return progress(0) & progress(1); }, 30));
    assert_int_equal(c.nodes[0]->engine->stats().protocol_errors, 0);
    assert_true(c.nodes[0]->dead.empty());
    for (auto &call : sides) {
        for (const Side &s : call) assert_int_equal(s.rc, RTTCC_DONE);
        check_landed(call, &call - sides.data());
    }
}

// A receiver whose room is 0 may end its call before the sender's TRUNC
// comes; the sender, done, goes on to the channel's next call.  The late
// TRUNC (before or after that call's RTR) is dropped: the sender stays
// alive, and the next call completes.
static void test_a_late_trunc_is_dropped(void **) {
    MemNetwork net(4000);
    Cluster c(net, 2, params(RTTCC_SCHED_LINEAR, 4096));
    auto first = make_sides({{0, 0}, {0, 0}}, 0);
    assert_true(c.run(first, 0, in_order(2)));
    for (const Side &s : first) assert_int_equal(s.rc, RTTCC_DONE);
    const XControl trunc{XControl::kTrunc, 1, 9, 0, 0, 0, 5000};
    auto next = make_sides({{0, 6000}, {7000, 0}}, 1);
    auto node1_runs = [&] {
        int rounds = 0;
        assert_true(run_until(c.nodes, [&] {
            if (next[1].rc == RTTCC_OK) next[1].rc = c.xs[1]->progress();
            return ++rounds == 100;
        }));
    };
    send_control(c, trunc);  // call 0's, late: as if node 1's block had been 5000 bytes
    assert_int_equal(c.xs[1]->begin(9, 1, 1, 2, next[1].peers.data(), next[1].land.data(), next[1].land.size()),
                     RTTCC_OK);
    node1_runs();
    send_control(c, trunc);
    node1_runs();
    {
        std::lock_guard<std::mutex> g(c.hubs[0]->mutex());
        assert_int_equal(c.hubs[0]->early_held(), 1);  // call 1's RTR
    }
    assert_int_equal(c.xs[0]->begin(9, 1, 0, 2, next[0].peers.data(), next[0].land.data(), next[0].land.size()),
                     RTTCC_OK);
    assert_true(run_until(c.nodes, [&] {
        for (uint32_t i = 0; i < 2; ++i)
            if (next[i].rc == RTTCC_OK) next[i].rc = c.xs[i]->progress();
        return next[0].rc != RTTCC_OK && next[1].rc != RTTCC_OK;
    }));
    for (const Side &s : next) assert_int_equal(s.rc, RTTCC_DONE);
    check_landed(next, 1);
    assert_true(c.nodes[0]->dead.empty());
}

// A peer that breaks the protocol with messages of calls not begun here is
// declared dead with the reason, its messages go, and a call with it ends
// with an error instead of waiting: two RTRs on one channel (a peer
// finishes no call without this process's RTR of it, so it begins no later
// call of the channel before this process began that one) ...
static void test_two_early_rtrs_on_one_channel_end_the_peer(void **) {
    MemNetwork net(4000);
    Cluster c(net, 2, params(RTTCC_SCHED_LINEAR, 4096));
    send_control(c, XControl{XControl::kRtr, 1, 101, 0, 0, 0, 4096});  // another channel's: not its fault
    send_control(c, XControl{XControl::kRtr, 1, 100, 3, 0, 0, 4096});
    assert_true(run_until(c.nodes, [&] {
        std::lock_guard<std::mutex> g(c.hubs[0]->mutex());
        return c.hubs[0]->early_held() == 2;
    }));
    assert_int_equal(c.nodes[0]->engine->stats().protocol_errors, 0);
    send_control(c, XControl{XControl::kRtr, 1, 100, 4, 0, 0, 4096});
    assert_true(run_until(c.nodes, [&] { return !c.nodes[0]->dead.empty(); }));
    assert_int_equal(c.nodes[0]->engine->stats().protocol_errors, 1);
    assert_true(said(*c.nodes[0], 1, "alltoall calls 3 and 4 of channel 100 before this process began either"));
    {
        std::lock_guard<std::mutex> g(c.hubs[0]->mutex());
        assert_int_equal(c.hubs[0]->early_held(), 0);
    }
    a_call_with_the_dead_peer_fails(c, 100);
}

// ... messages of calls on more channels than a process has communicators
// in calls at once ...
static void test_early_messages_of_too_many_channels_end_the_peer(void **) {
    MemNetwork net(4000);
    Cluster c(net, 2, params(RTTCC_SCHED_LINEAR, 4096));
    const uint32_t cap = ExchangeHub::kEarlyCallsPerPeer;
    for (uint64_t ch = 0; ch < cap; ++ch) send_control(c, XControl{XControl::kRtr, 1, 100 + ch, 0, 0, 0, 4096});
    assert_true(run_until(c.nodes, [&] {
        std::lock_guard<std::mutex> g(c.hubs[0]->mutex());
        return c.hubs[0]->early_held() == cap;
    }));
    assert_int_equal(c.nodes[0]->engine->stats().protocol_errors, 0);
    send_control(c, XControl{XControl::kRtr, 1, 100 + cap, 0, 0, 0, 4096});
    assert_true(run_until(c.nodes, [&] { return !c.nodes[0]->dead.empty(); }));
    assert_int_equal(c.nodes[0]->engine->stats().protocol_errors, 1);
    assert_true(said(*c.nodes[0], 1, "more than " + std::to_string(cap) + " communicators"));
    {
        std::lock_guard<std::mutex> g(c.hubs[0]->mutex());
        assert_int_equal(c.hubs[0]->early_held(), 0);
    }
    a_call_with_the_dead_peer_fails(c, 100);
}

// ... or more bytes of early blocks than kEarlyBytesPerPeer.
static void test_too_many_bytes_of_early_blocks_end_the_peer(void **) {
    MemNetwork net(4000);
    Cluster c(net, 2, params(RTTCC_SCHED_LINEAR, 4096));
    const std::vector<uint8_t> block((1u << 22) - sizeof(XControl), 0x42);  // the engine's largest message
    const uint64_t fit = ExchangeHub::kEarlyBytesPerPeer / block.size();
    std::vector<XControl> heads(fit + 1);  // sent zero-copy: they must outlive the sends
    auto block_of_channel = [&](uint64_t ch) {
        heads[ch - 100] = {XControl::kRtrBlock, 1, ch, 0, 0, static_cast<uint32_t>(block.size()), 0};
        send_control(c, heads[ch - 100], block);
    };
    for (uint64_t ch = 0; ch < fit; ++ch) block_of_channel(100 + ch);
    assert_true(run_until(c.nodes, [&] {
        std::lock_guard<std::mutex> g(c.hubs[0]->mutex());
        return c.hubs[0]->early_held() == fit;
    }));
    assert_int_equal(c.nodes[0]->engine->stats().protocol_errors, 0);
    block_of_channel(100 + fit);
    assert_true(run_until(c.nodes, [&] { return !c.nodes[0]->dead.empty(); }));
    assert_int_equal(c.nodes[0]->engine->stats().protocol_errors, 1);
    assert_true(said(*c.nodes[0], 1, "bytes of blocks"));
    a_call_with_the_dead_peer_fails(c, 100);
}

// Blocks up to eager_limit go with the sender's RTR: no puts at all when
// every block is small, whatever the policy or the order in which nodes
// begin (a block that comes before its call waits in the hub).
static void test_small_blocks_ride_on_the_rtr(void **) {
    for (int policy = RTTCC_SCHED_LINEAR; policy <= RTTCC_SCHED_ADAPTIVE; ++policy) {
        MemNetwork net(4000);
        Cluster c(net, 5, eager(params(policy, 1000), 3000));
        for (uint64_t call = 0; call < 3; ++call) {
            auto sides = make_sides(random_counts(5, 3001, 70 + call + policy * 10), call);
            assert_true(c.run(sides, call, call == 1 ? std::vector<uint32_t>{4, 2, 0, 3, 1} : in_order(5), 4));
            for (uint32_t i = 0; i < 5; ++i) {
                assert_int_equal(sides[i].rc, RTTCC_DONE);
                rttcc_exchange_summary_t sum;
                c.xs[i]->summary(&sum);
                assert_int_equal(sum.puts, 0);
                assert_int_equal(sum.eager, 4);
                assert_int_equal(sum.rtr_waits, 0);
                assert_true(c.xs[i]->schedule_text().empty());  // served outside the schedule
            }
            check_landed(sides, call);
        }
    }
}

// Small and large blocks in one call, with paced grants and a wire that
// drops, duplicates and reorders.
static void test_eager_and_put_blocks_mixed(void **) {
    for (uint32_t grants : {1u, 0u}) {
        MemNetwork net(4000);
        auto p = eager(params(RTTCC_SCHED_BALANCED, 2500), 3000);
        p.max_grants = grants;
        Cluster c(net, 5, p, FaultRates{20000, 20000, 20000, 0});
        uint64_t eager_blocks = 0, puts = 0;
        for (uint64_t call = 0; call < 2; ++call) {
            auto sides = make_sides(random_counts(5, 9000, 90 + call + grants), call);
            assert_true(c.run(sides, call, {3, 0, 4, 1, 2}, 2));
            for (uint32_t i = 0; i < 5; ++i) {
                assert_int_equal(sides[i].rc, RTTCC_DONE);
                rttcc_exchange_summary_t sum;
                c.xs[i]->summary(&sum);
                eager_blocks += sum.eager;
                puts += sum.puts;
            }
            check_landed(sides, call);
        }
        assert_true(eager_blocks > 0 && puts > 0);
    }
}

// eager_total caps a call's eager bytes: with 4 peers and 4000 bytes, only
// blocks of at most 1000 bytes go with the RTR, the rest are put.
static void test_eager_total_shrinks_the_block_limit(void **) {
    MemNetwork net(4000);
    auto p = eager(params(RTTCC_SCHED_GREEDY, 1500), 3000);
    p.eager_total = 4000;
    Cluster c(net, 5, p);
    auto counts = random_counts(5, 3000, 31);
    auto sides = make_sides(counts, 0);
    assert_true(c.run(sides, 0, in_order(5)));
    for (uint32_t i = 0; i < 5; ++i) {
        assert_int_equal(sides[i].rc, RTTCC_DONE);
        uint64_t small = 0, puts = 0;
        for (uint32_t j = 0; j < 5; ++j)
            if (j != i) counts[i][j] <= 1000 ? ++small : puts += (counts[i][j] + 1499) / 1500;
        rttcc_exchange_summary_t sum;
        c.xs[i]->summary(&sum);
        assert_int_equal(sum.eager, small);
        assert_int_equal(sum.puts, puts);
    }
    check_landed(sides, 0);
}

// The receiver takes a block the way its sender chose to send it, so
// processes may run with different eager limits.
static void test_eager_limits_may_differ(void **) {
    MemNetwork net(4000);
    Cluster c(net, 3, params(RTTCC_SCHED_ADAPTIVE, 2000));  // node 0: only empty blocks go with the RTR
    c.xs[1] = std::make_unique<Exchange>(*c.hubs[1], eager(params(RTTCC_SCHED_ADAPTIVE, 2000), 4096));
    c.xs[2] = std::make_unique<Exchange>(*c.hubs[2], eager(params(RTTCC_SCHED_ADAPTIVE, 2000), 1 << 20));
    const std::vector<std::vector<uint64_t>> counts = {{0, 3000, 7000}, {2000, 0, 6000}, {5000, 100, 0}};
    const uint64_t eager_blocks[3] = {0, 1, 2}, puts[3] = {2 + 4, 3, 0};
    for (uint64_t call = 0; call < 3; ++call) {
        auto sides = make_sides(counts, call);
        assert_true(c.run(sides, call, call == 1 ? std::vector<uint32_t>{2, 1, 0} : in_order(3), 1));
        for (uint32_t i = 0; i < 3; ++i) {
            assert_int_equal(sides[i].rc, RTTCC_DONE);
            rttcc_exchange_summary_t sum;
            c.xs[i]->summary(&sum);
            assert_int_equal(sum.eager, eager_blocks[i]);
            assert_int_equal(sum.puts, puts[i]);
        }
        check_landed(sides, call);
    }
}

// A small block whose RTR must wait for a grant slot holds no send slot
// meanwhile: rank i sends 1000 bytes to i+1, 40000 to i+2 and 20000 to
// i+3, one grant and one send slot each.  Rank i's block to i+1 waits
// behind its grant to i+2; if i+1 (whose RTR is in) held rank i's only
// send slot, i+2's put to i would wait for ever, on every rank.
static void test_small_block_waiting_for_its_grant_holds_no_slot(void **) {
    MemNetwork net(4000);
    auto p = eager(params(RTTCC_SCHED_LINEAR, 4000), 2000);
    p.max_grants = 1;
    p.max_concurrent = 1;
    Cluster c(net, 4, p);
    std::vector<std::vector<uint64_t>> counts(4, std::vector<uint64_t>(4, 0));
    for (uint32_t i = 0; i < 4; ++i) {
        counts[i][(i + 1) % 4] = 1000;
        counts[i][(i + 2) % 4] = 40000;
        counts[i][(i + 3) % 4] = 20000;
    }
    auto sides = make_sides(counts, 0);
    assert_true(c.run(sides, 0, {3, 2, 1, 0}, 3));
    for (uint32_t i = 0; i < 4; ++i) {
        assert_int_equal(sides[i].rc, RTTCC_DONE);
        const std::string text = c.xs[i]->schedule_text();  // the puts' peers only
        assert_true(text.find("peer " + std::to_string((i + 1) % 4) + " ") == std::string::npos);
        assert_true(text.find("peer " + std::to_string((i + 2) % 4) + " ") != std::string::npos);
    }
    check_landed(sides, 0);
}

// max_concurrent holds from a call's start: every peer is picked (and
// parked) before any RTR is in, and the RTRs then let them go one free
// slot at a time, earliest picked first; not all at once as their RTRs
// come.  6 nodes, 2 slots, blocks put in segments (no eager ones).
static void test_max_concurrent_holds_when_the_rtrs_come(void **) {
    MemNetwork net(4000);
    for (const int policy : {RTTCC_SCHED_LINEAR, RTTCC_SCHED_ADAPTIVE}) {
        Cluster c(net, 6, params(policy, 20000));  // zero-copy puts: a peer stays active until ACKed
        std::vector<std::vector<uint64_t>> counts(6, std::vector<uint64_t>(6, 60000));
        for (uint32_t i = 0; i < 6; ++i) counts[i][i] = 0;
        auto sides = make_sides(counts, 0);
        assert_true(c.run(sides, 0, {0, 1, 2, 3, 4, 5}));
        uint64_t most = 0, waits = 0;
        for (uint32_t i = 0; i < 6; ++i) {
            assert_int_equal(sides[i].rc, RTTCC_DONE);
            rttcc_exchange_summary_t sum;
            c.xs[i]->summary(&sum);
            assert_true(sum.max_active >= 1 && sum.max_active <= 2);  // 5 before (checked)
            most = std::max(most, sum.max_active);
            waits += sum.rtr_waits;
        }
        assert_int_equal(most, 2);
        assert_true(waits >= 6);  // peers were picked before their RTR came
        check_landed(sides, 0);
    }
}

// Blocks of two channels' calls that came before this node began either
// wait in the hub side by side; each call takes its own, whatever order
// the node begins them in.
static void test_early_blocks_of_two_channels(void **) {
    MemNetwork net(4000);
    Cluster c(net, 3, eager(params(RTTCC_SCHED_GREEDY, 2000), 5000));
    std::vector<std::unique_ptr<Exchange>> second;
    for (auto &h : c.hubs) second.push_back(std::make_unique<Exchange>(*h, eager(params(RTTCC_SCHED_LINEAR, 1500), 5000)));
    auto a = make_sides(random_counts(3, 5000, 13), 0);
    auto b = make_sides(random_counts(3, 9000, 14), 3);
    for (uint32_t i : {1u, 2u}) {
        assert_int_equal(c.xs[i]->begin(1, 0, i, 3, a[i].peers.data(), a[i].land.data(), a[i].land.size()), RTTCC_OK);
        assert_int_equal(second[i]->begin(2, 0, i, 3, b[i].peers.data(), b[i].land.data(), b[i].land.size()),
                         RTTCC_OK);
    }
    int rounds = 0;
    assert_true(run_until(c.nodes, [&] {  // node 0 hears the others' RTRs before it begins
        for (uint32_t i : {1u, 2u}) {
            if (a[i].rc == RTTCC_OK) a[i].rc = c.xs[i]->progress();
            if (b[i].rc == RTTCC_OK) b[i].rc = second[i]->progress();
        }
        return ++rounds == 200;
    }, 30));
    assert_int_equal(second[0]->begin(2, 0, 0, 3, b[0].peers.data(), b[0].land.data(), b[0].land.size()), RTTCC_OK);
    assert_int_equal(c.xs[0]->begin(1, 0, 0, 3, a[0].peers.data(), a[0].land.data(), a[0].land.size()), RTTCC_OK);
    finish_both(c, second, a, 0, b, 3);
}

// An eager block of the wrong size is refused whole by its receiver; both
// ends say MPI_ERR_TRUNCATE, the rest of the call lands, the next call works.
static void test_eager_size_mismatch(void **) {
    MemNetwork net(4000);
    Cluster c(net, 3, eager(params(RTTCC_SCHED_LINEAR, 4096), 4096));
    std::vector<std::vector<uint64_t>> counts = {{0, 700, 900}, {800, 0, 1500}, {600, 9000, 0}};
    auto sides = make_sides(counts, 0);
    sides[1].blocks[2].resize(1000);  // node 1 sends 1000 where node 2 has room for 1500
    sides[1].peers[2].send_len = 1000;
    sides[0].blocks[1].resize(2000);  // node 0 sends 2000 where node 1 has room for 700
    sides[0].peers[1].send_len = 2000;
    for (uint32_t i : {0u, 1u}) sides[i].peers[i == 0 ? 1 : 2].send = sides[i].blocks[i == 0 ? 1 : 2].data();
    assert_true(c.run(sides, 0, in_order(3)));
    for (const Side &s : sides) assert_int_equal(s.rc, RTTCC_ERR_TRUNCATE);
    // The refused blocks wrote nothing; the others landed.
    for (auto [to, from] : {std::pair<uint32_t, uint32_t>{2, 1}, {1, 0}}) {
        const rttcc_xpeer_t &p = sides[to].peers[from];
        for (size_t b = 0; b < p.recv_len; ++b) assert_int_equal(sides[to].land[p.recv_offset + b], 0xee);
    }
    for (auto [to, from] : {std::pair<uint32_t, uint32_t>{0, 1}, {0, 2}, {2, 0}, {1, 2}}) {
        const rttcc_xpeer_t &p = sides[to].peers[from];
        for (size_t b = 0; b < p.recv_len; ++b)
            assert_int_equal(sides[to].land[p.recv_offset + b], byte_of(from, to, 0, b));
    }
    auto next = make_sides(random_counts(3, 6000, 8), 1);
    assert_true(c.run(next, 1, in_order(3)));
    for (const Side &s : next) assert_int_equal(s.rc, RTTCC_DONE);
    check_landed(next, 1);
}

// Under MPI_THREAD_MULTIPLE: a thread progresses the engines (the hubs'
// callbacks take the hub mutex there) while another drives the calls
// (holding it through the engine's sends and puts).  Neither waits on the
// other for good, and every byte lands.
static void test_calls_driven_beside_a_progress_thread(void **) {
    MemNetwork net(4000);
    net.real_time = true;  // the threads' own pace
    Cluster c(net, 3, params(RTTCC_SCHED_BALANCED, 20000), {}, [](rttcc_config_t &cfg) {
        cfg.max_message = 1 << 22;
        cfg.thread_safe = true;
    });  // puts of 20000 bytes: zero-copy, completed in the progress thread
    std::atomic<bool> stop{false};
    std::thread progress([&] {
        while (!stop.load())
            for (auto &node : c.nodes) node->engine->progress();
    });
    for (uint64_t call = 0; call < 20; ++call) {
        auto sides = make_sides(random_counts(3, 100000, 60 + call), call);
        for (uint32_t i = 0; i < 3; ++i)
            assert_int_equal(c.xs[i]->begin(9, call, i, 3, sides[i].peers.data(), sides[i].land.data(),
                                            sides[i].land.size()),
                             RTTCC_OK);
        for (int left = 3; left;)
            for (uint32_t i = 0; i < 3; ++i)
                if (sides[i].rc == RTTCC_OK && (sides[i].rc = c.xs[i]->progress()) != RTTCC_OK) --left;
        for (const Side &s : sides) assert_int_equal(s.rc, RTTCC_DONE);
        check_landed(sides, call);
    }
    stop.store(true);
    progress.join();
}

// max_grants auto: no limit when the engine runs congestion control,
// RTTCC_PACED_GRANTS without; an explicit value (0 = none) is kept.
static void test_grant_limit_follows_congestion_control(void **) {
    assert_int_equal(grant_limit(RTTCC_GRANTS_AUTO, RTTCC_CC_NONE), RTTCC_PACED_GRANTS);
    for (int cc : {RTTCC_CC_AIMD, RTTCC_CC_TIMELY, RTTCC_CC_SWIFT})
        assert_int_equal(grant_limit(RTTCC_GRANTS_AUTO, cc), 0);
    assert_int_equal(grant_limit(3, RTTCC_CC_AIMD), 3);
    assert_int_equal(grant_limit(0, RTTCC_CC_NONE), 0);
    assert_int_equal(grant_limit(1, RTTCC_CC_NONE), 1);
}

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_policy_lands_every_byte),
        cmocka_unit_test(test_paced_grants_never_deadlock),
        cmocka_unit_test(test_late_beginners_and_large_blocks),
        cmocka_unit_test(test_faulty_wire),
        cmocka_unit_test(test_size_mismatch_is_an_error_not_a_hang),
        cmocka_unit_test(test_two_channels_interleaved),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_dead_peer_ends_the_call),
        cmocka_unit_test(test_a_peer_puts_only_into_its_own_room),
        cmocka_unit_test(test_calls_on_many_channels_wait_for_a_late_peer),
        cmocka_unit_test(test_a_late_trunc_is_dropped),
        cmocka_unit_test(test_two_early_rtrs_on_one_channel_end_the_peer),
        cmocka_unit_test(test_early_messages_of_too_many_channels_end_the_peer),
        cmocka_unit_test(test_too_many_bytes_of_early_blocks_end_the_peer),
        cmocka_unit_test(test_grant_limit_follows_congestion_control),
        cmocka_unit_test(test_small_blocks_ride_on_the_rtr),
        cmocka_unit_test(test_eager_and_put_blocks_mixed),
        cmocka_unit_test(test_eager_total_shrinks_the_block_limit),
        cmocka_unit_test(test_eager_limits_may_differ),
        cmocka_unit_test(test_small_block_waiting_for_its_grant_holds_no_slot),
        cmocka_unit_test(test_max_concurrent_holds_when_the_rtrs_come),
        cmocka_unit_test(test_early_blocks_of_two_channels),
        cmocka_unit_test(test_eager_size_mismatch),
        cmocka_unit_test(test_calls_driven_beside_a_progress_thread),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
