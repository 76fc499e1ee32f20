// An exchange out of memory: this program replaces operator new, which
// fails on demand (after a number of allocations).  A begin that runs out
// leaves no call behind (the next begin works, the early RTR still waits)
// and a send that runs out ends the call: no exception leaves begin() or
// progress(), whose C faces coll_rttcc calls.
#include <cstdlib>
#include <new>

#include "cmocka_cxx.h"
#include "engine_harness.h"
#include "exchange/exchange.h"

using namespace rttcc;
using namespace rttcc_test;

namespace {
long g_allocations_left = -1;  // allocations that succeed before they fail; -1: all do
}

void *operator new(std::size_t n) {
    if (g_allocations_left == 0) throw std::bad_alloc();
    if (g_allocations_left > 0) --g_allocations_left;
    if (void *p = std::malloc(n ? n : 1)) return p;
    throw std::bad_alloc();
}
// Not inlined: GCC would see free() of what new returned (-Wmismatched-new-delete).
__attribute__((noinline)) void operator delete(void *p) noexcept { std::free(p); }
__attribute__((noinline)) void operator delete(void *p, std::size_t) noexcept { std::free(p); }

namespace {

constexpr uint8_t kTag = 0x3c;

struct Memory {  // while it lives, `left` allocations succeed, then none
    explicit Memory(long left) { g_allocations_left = left; }
    ~Memory() { g_allocations_left = -1; }
};

// Node i sends node j blocks of 3000 + 1000 * (i + 2 * j) bytes, by put.
struct Side {
    std::vector<std::vector<uint8_t>> blocks;
    std::vector<uint8_t> land;
    std::vector<rttcc_xpeer_t> peers;
    int rc = RTTCC_OK;
};

uint64_t len(uint32_t from, uint32_t to) { return from == to ? 0 : 3000 + 1000 * (from + 2 * to); }

std::vector<Side> make_sides(uint32_t n) {
    std::vector<Side> sides(n);
    for (uint32_t i = 0; i < n; ++i) {
        Side &s = sides[i];
        s.peers.resize(n);
        s.blocks.resize(n);
        uint64_t at = 0;
        for (uint32_t k = 0; k < n; ++k) {
            s.peers[k].engine_peer = k;
            s.peers[k].recv_offset = at;
            s.peers[k].recv_len = len(k, i);
            at += len(k, i);
            s.blocks[k].assign(len(i, k), static_cast<uint8_t>(i * 16 + k));
            s.peers[k].send = s.blocks[k].data();
            s.peers[k].send_len = len(i, k);
        }
        s.land.assign(at, 0);
    }
    return sides;
}

void check_landed(const std::vector<Side> &sides) {
    for (uint32_t i = 0; i < sides.size(); ++i)
        for (uint32_t k = 0; k < sides.size(); ++k)
            for (uint64_t b = 0; b < len(k, i); ++b)
                assert_int_equal(sides[i].land[sides[i].peers[k].recv_offset + b], k * 16 + i);
}

struct Cluster {
    std::vector<std::unique_ptr<Node>> nodes;
    std::vector<std::unique_ptr<ExchangeHub>> hubs;
    std::vector<std::unique_ptr<Exchange>> xs;
    explicit Cluster(MemNetwork &net) {
        nodes = make_nodes(net, 2);
        rttcc_exchange_params_t p;
        rttcc_exchange_params_defaults(&p);
        p.eager_limit = 0;  // puts: the scheduler's part of progress runs
        for (auto &node : nodes) {
            int rc;
            hubs.push_back(std::make_unique<ExchangeHub>(node->engine, kTag, &rc));
            assert_int_equal(rc, RTTCC_OK);
            xs.push_back(std::make_unique<Exchange>(*hubs.back(), p));
        }
    }
    int begin(uint32_t i, Side &s) {
        try {
            return xs[i]->begin(9, 0, i, 2, s.peers.data(), s.land.data(), s.land.size());
        } catch (const std::bad_alloc &) {
            fail_msg("begin threw bad_alloc");
        }
        return RTTCC_ERR;
    }
    int progress(uint32_t i) {
        try {
            return xs[i]->progress();
        } catch (const std::bad_alloc &) {
            fail_msg("progress threw bad_alloc");
        }
        return RTTCC_ERR;
    }
    size_t early_held() {
        std::lock_guard<std::mutex> g(hubs[0]->mutex());
        return hubs[0]->early_held();
    }
};

}  // namespace

// Node 1 began the call; its RTR waits at node 0.  Node 0's begin runs out
// of memory after 0, 1, 2, ... allocations: each time it returns RTTCC_ERR
// and leaves nothing begun (before, from the allocation after the hub
// registered the call, bad_alloc left a half-begun call: every later begin
// said RTTCC_ERR_BUSY).  With memory, the call completes.
static void test_a_begin_without_memory_leaves_no_call(void **) {
    MemNetwork net(4000);
    Cluster c(net);
    auto sides = make_sides(2);
    assert_int_equal(c.begin(1, sides[1]), RTTCC_OK);
    assert_true(run_until(c.nodes, [&] {
        if (sides[1].rc == RTTCC_OK) sides[1].rc = c.progress(1);
        return c.early_held() == 1;
    }));
    long failures = 0;
    for (long left = 0;; ++left) {
        int rc;
        {
            Memory m(left);
            rc = c.begin(0, sides[0]);
        }
        if (rc == RTTCC_OK) break;
        assert_int_equal(rc, RTTCC_ERR);
        assert_int_equal(c.early_held(), 1);  // not taken: it waits for the call
        ++failures;
    }
    assert_true(failures > 3);
    assert_true(run_until(c.nodes, [&] {
        for (uint32_t i = 0; i < 2; ++i)
            if (sides[i].rc == RTTCC_OK) sides[i].rc = c.progress(i);
        return sides[0].rc != RTTCC_OK && sides[1].rc != RTTCC_OK;
    }));
    for (const Side &s : sides) assert_int_equal(s.rc, RTTCC_DONE);
    check_landed(sides);
}

// The engines' first sends need memory for their messages: with none, the
// call ends with RTTCC_ERR instead of throwing bad_alloc from progress
// (which left the call begun: coll_rttcc would not have seen it end), and
// the exchanges begin the next call, which completes.
static void test_a_send_without_memory_ends_the_call(void **) {
    MemNetwork net(4000);
    Cluster c(net);
    auto sides = make_sides(2);
    for (uint32_t i = 0; i < 2; ++i) assert_int_equal(c.begin(i, sides[i]), RTTCC_OK);
    assert_true(run_until(c.nodes, [&] {
        Memory none(0);  // while the exchanges progress: the engines have theirs
        for (uint32_t i = 0; i < 2; ++i)
            if (sides[i].rc == RTTCC_OK) sides[i].rc = c.progress(i);
        return sides[0].rc != RTTCC_OK && sides[1].rc != RTTCC_OK;
    }));
    for (const Side &s : sides) assert_int_equal(s.rc, RTTCC_ERR);
    auto next = make_sides(2);
    for (uint32_t i = 0; i < 2; ++i)
        assert_int_equal(c.xs[i]->begin(9, 1, i, 2, next[i].peers.data(), next[i].land.data(), next[i].land.size()),
                         RTTCC_OK);
    assert_true(run_until(c.nodes, [&] {
        for (uint32_t i = 0; i < 2; ++i)
            if (next[i].rc == RTTCC_OK) next[i].rc = c.progress(i);
        return next[0].rc != RTTCC_OK && next[1].rc != RTTCC_OK;
    }));
    for (const Side &s : next) assert_int_equal(s.rc, RTTCC_DONE);
    check_landed(next);
}

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_begin_without_memory_leaves_no_call),
        cmocka_unit_test(test_a_send_without_memory_ends_the_call),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
