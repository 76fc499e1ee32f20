// NACKs and REMAPs (engine_nack.cc) over the in-memory wire.  Node 1's
// dynamic window detaches and attaches its region more often than it
// remembers revoked exposures (GrantTable::kRevokedKept), so the key node 0
// looked up is forgotten: every put and request naming it is refused, none
// of it applied, and node 0 hears the key (on_nack).  Once node 0 looked
// the region up again (served at once, though refused requests hold the
// others back) and remapped the key, what was refused lands exactly once
// and in order; a sink takes it and drops it, its replies zeros; forged
// NACKs and REMAPs change nothing.
#include <algorithm>
#include <cstring>
#include <vector>

#include "api/engine_handle.h"
#include "cmocka_cxx.h"
#include "engine_harness.h"
#include "rttcc/rma.h"

using namespace rttcc;
using namespace rttcc_test;

namespace {

constexpr uint8_t kTag = 9;

rttcc_stats_t stats(const Node &n) { return n.engine->stats(); }

// Node 1's dynamic window, exposing `mem` to node 0.
struct Dynamic {
    rttcc_engine h0, h1;
    uint32_t window = 0, key = 0;
    uint8_t *mem;
    size_t len;
    Dynamic(std::vector<std::unique_ptr<Node>> &nodes, void *m, size_t n)
        : h0{nodes[0]->engine, ""}, h1{nodes[1]->engine, ""}, mem(static_cast<uint8_t *>(m)), len(n) {
        assert_int_equal(rttcc_rma_window_open(&h1, &window), RTTCC_OK);
        assert_int_equal(rttcc_rma_window_remap_revoked(&h1, window), RTTCC_OK);
        assert_int_equal(rttcc_rma_expose(&h1, window, 0, mem, len, &key), RTTCC_OK);
    }
    // Detaches the region and attaches it again, `times` times; returns the
    // key node 0 looked up before (forgotten past kRevokedKept).
    uint32_t churn(size_t times) {
        const uint32_t before = key;
        for (size_t i = 0; i < times; ++i) {
            assert_int_equal(rttcc_engine_revoke(&h1, key), RTTCC_OK);
            assert_int_equal(rttcc_rma_expose(&h1, window, 0, mem, len, &key), RTTCC_OK);
        }
        return before;
    }
    uint64_t base() const { return reinterpret_cast<uintptr_t>(mem); }
};

// Node 0, as its client does on a NACK: looks [addr, addr + len) up again
// (the refused requests hold node 1's other ones back, not the lookup),
// then remaps `stale` to `base`, or to a sink if nothing holds it now.
// Returns what the lookup found.
rttcc_rma_region_t look_up_and_remap(std::vector<std::unique_ptr<Node>> &nodes, Dynamic &d, uint32_t stale,
                                     uint64_t base, uint64_t addr, uint64_t len) {
    rttcc_rma_region_t region{};
    const uint32_t reply = nodes[0]->engine->grant(1, &region, sizeof region);
    const size_t heard = nodes[0]->puts.size();
    assert_int_equal(rttcc_rma_lookup(&d.h0, 1, d.window, addr, len, reply, kTag), RTTCC_DONE);
    assert_true(run_until(nodes, [&] { return nodes[0]->puts.size() == heard + 1; }));
    assert_int_equal(nodes[0]->puts.back().key, reply);
    assert_true(nodes[0]->engine->revoke(reply));
    assert_int_equal(rttcc_rma_remap(&d.h0, 1, d.window, stale, base, region.key == 0), RTTCC_DONE);
    return region;
}

// Until node 0 has heard a NACK for `key`.
void until_nacked(std::vector<std::unique_ptr<Node>> &nodes, uint32_t key) {
    assert_true(run_until(nodes, [&] {
        return std::any_of(nodes[0]->nacks.begin(), nodes[0]->nacks.end(),
                           [&](const Node::Nacked &n) { return n.peer == 1 && n.key == key; });
    }));
}

// Runs every node for a while (what should happen has had time to).
void settle(std::vector<std::unique_ptr<Node>> &nodes) { (void)run_until(nodes, [] { return false; }, 0.05); }

// Node 0 asks for a flush of node 1; returns whether it is pending.
bool flush_pending(std::vector<std::unique_ptr<Node>> &nodes, void *cookie) {
    const int rc = nodes[0]->engine->flush(1, kTag, cookie);
    assert_true(rc == RTTCC_OK || rc == RTTCC_DONE);
    return rc == RTTCC_OK;
}

bool completed(const Node &n, const void *cookie) { return position(n.completed, cookie) < n.completed.size(); }

// Few data credits: the refused put holds them all, and the lookup and the
// remap (command channel) still go.
void few_credits(rttcc_config_t &c) {
    c.send_credits = 4;
    c.agent = false;
}

// The quiet liveness agent of MPI_THREAD_SINGLE, on real time (net.real_time).
void with_agent(rttcc_config_t &c) {
    c.agent = true;
    c.thread_safe = false;
    c.agent_idle_ms = 10;
    c.peer_timeout_ms = 200;
}

}  // namespace

// A put of many segments names the forgotten key: refused (nothing lands,
// its cookie and a flush wait), NACKed with its offset and length; after
// the lookup (the current key, same base) and the remap it lands whole,
// and the flush completes.
static void test_a_put_through_a_forgotten_key_lands_once_remapped(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, {}, few_credits);
    std::vector<uint8_t> mem(200000, 0);
    Dynamic d(nodes, mem.data(), mem.size());
    const uint32_t stale = d.churn(GrantTable::kRevokedKept + 1);
    std::vector<uint8_t> bytes = make_message(3, 150000);
    iovec iov{bytes.data(), bytes.size()};
    assert_int_equal(rttcc_engine_put(&d.h0, 1, stale, 1000, kTag, &iov, 1, &bytes), RTTCC_OK);
    int flushed;
    assert_true(flush_pending(nodes, &flushed));
    until_nacked(nodes, stale);
    settle(nodes);
    const Node::Nacked &n = nodes[0]->nacks.front();
    assert_int_equal(n.offset, 1000);
    assert_int_equal(n.len, bytes.size());
    assert_true(std::all_of(mem.begin(), mem.end(), [](uint8_t b) { return b == 0; }));
    assert_false(completed(*nodes[0], &bytes));
    assert_false(completed(*nodes[0], &flushed));
    assert_true(stats(*nodes[1]).nacks_tx >= 1);
    assert_true(stats(*nodes[1]).nacks_tx <= stats(*nodes[1]).drop_undeliverable);
    assert_true(stats(*nodes[0]).nacks_rx >= 1);

    const rttcc_rma_region_t now = look_up_and_remap(nodes, d, stale, d.base(), d.base() + 1000, bytes.size());
    assert_int_equal(now.key, d.key);
    assert_int_equal(now.base, d.base());
    assert_true(run_until(nodes, [&] { return completed(*nodes[0], &bytes) && completed(*nodes[0], &flushed); }));
    assert_memory_equal(mem.data() + 1000, bytes.data(), bytes.size());
    assert_int_equal(stats(*nodes[1]).remaps, 1);
    assert_true(nodes[0]->dead.empty() && nodes[1]->dead.empty() && nodes[0]->failed.empty());
}

// Accumulates (one of many chunks, then some of one segment), a posted batch,
// a get and a compare-and-swap through the forgotten key, then a get
// through the current key: the first are refused, the last waits behind
// them (requests keep their order), nothing is applied or answered.  Once
// remapped each is applied once, in order: the last get sees them all.
static void test_refused_requests_are_applied_once_in_order(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2);
    constexpr size_t kN = 16384;  // int64 elements: a large accumulate's 128 KiB go in chunks
    std::vector<int64_t> mem(kN, 0);
    Dynamic d(nodes, mem.data(), mem.size() * 8);
    const uint32_t stale = d.churn(GrantTable::kRevokedKept + 3);
    const int64_t one = 1;
    const iovec iov1{const_cast<int64_t *>(&one), 8};
    std::vector<int64_t> ones(kN, 1), before(4, -1), after(kN, -1);
    const iovec all{ones.data(), ones.size() * 8};
    int64_t cas_old = -1;
    const int64_t compare = 3, swap = 100;
    const uint32_t r_get = nodes[0]->engine->grant(1, before.data(), before.size() * 8);
    const uint32_t r_cas = nodes[0]->engine->grant(1, &cas_old, 8);
    const uint32_t r_after = nodes[0]->engine->grant(1, after.data(), after.size() * 8);
    assert_int_equal(rttcc_rma_accumulate(&d.h0, 1, stale, 0, RTTCC_RMA_SUM, RTTCC_RMA_INT64, &all, 1, 0, kTag, &ones),
                     RTTCC_OK);  // zero-copy, in chunks, the first due: refused at its last chunk
    for (int i = 0; i < 3; ++i)
        assert_int_equal(rttcc_rma_accumulate(&d.h0, 1, stale, 0, RTTCC_RMA_SUM, RTTCC_RMA_INT64, &iov1, 1, 0, kTag,
                                              nullptr),
                         RTTCC_DONE);
    assert_int_equal(rttcc_rma_post(&d.h0, 1, stale, 8, RTTCC_RMA_SUM, RTTCC_RMA_INT64, &one, 8), RTTCC_DONE);
    assert_int_equal(rttcc_rma_get(&d.h0, 1, stale, 0, before.size() * 8, r_get, kTag), RTTCC_DONE);
    assert_int_equal(rttcc_rma_compare_and_swap(&d.h0, 1, stale, 0, RTTCC_RMA_INT64, &compare, &swap, r_cas, kTag),
                     RTTCC_DONE);
    assert_int_equal(rttcc_rma_get(&d.h0, 1, d.key, 0, after.size() * 8, r_after, kTag), RTTCC_DONE);
    int flushed;
    assert_true(flush_pending(nodes, &flushed));
    until_nacked(nodes, stale);
    settle(nodes);
    assert_true(std::all_of(mem.begin(), mem.end(), [](int64_t v) { return v == 0; }));
    assert_true(nodes[0]->puts.empty());  // no reply: the last get waits behind the refused ones
    assert_false(completed(*nodes[0], &ones));
    assert_false(completed(*nodes[0], &flushed));
    assert_int_equal(stats(*nodes[1]).drop_bad_put, 0);

    look_up_and_remap(nodes, d, stale, d.base(), d.base(), 8);
    assert_true(run_until(nodes, [&] { return nodes[0]->puts.size() == 1 + 3 && completed(*nodes[0], &flushed); }));
    assert_true(completed(*nodes[0], &ones));
    // 1 + 3 on element 0, then the get reads 4, the CAS compares 3 (no swap); 1 + 1 on element 1
    assert_int_equal(before[0], 4);
    assert_int_equal(before[1], 2);
    assert_int_equal(cas_old, 4);
    assert_int_equal(mem[0], 4);
    assert_int_equal(mem[1], 2);
    for (size_t i = 2; i < kN; ++i) assert_int_equal(mem[i], 1);
    assert_true(after == mem);  // made after them all, served after them all
    settle(nodes);
    assert_int_equal(nodes[0]->puts.size(), 1 + 3);  // the lookup's, and each reply once
    assert_int_equal(stats(*nodes[1]).drop_bad_put, 0);
    assert_true(nodes[0]->dead.empty() && nodes[1]->dead.empty());
}

// Nothing holds the address any more: node 0 makes the key a sink.  What
// named it is taken and dropped (the put's cookie completes, nothing is
// written), a get and a fetching accumulate are answered with zeros, and
// the window's other memory is untouched.
static void test_a_sink_takes_what_names_its_key_and_drops_it(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2);
    std::vector<uint8_t> mem(100000, 0x5a), elsewhere(64, 0x33);
    Dynamic d(nodes, mem.data(), mem.size());
    const uint32_t stale = d.churn(GrantTable::kRevokedKept + 1);
    assert_int_equal(rttcc_engine_revoke(&d.h1, d.key), RTTCC_OK);  // detached for good
    uint32_t other = 0;
    assert_int_equal(rttcc_rma_expose(&d.h1, d.window, 0, elsewhere.data(), elsewhere.size(), &other), RTTCC_OK);
    std::vector<uint8_t> bytes = make_message(4, 20000), got(32, 0xee), fetched(8, 0xee);
    iovec iov{bytes.data(), bytes.size()};
    const int64_t add = 7;
    const iovec acc{const_cast<int64_t *>(&add), 8};
    const uint32_t r_get = nodes[0]->engine->grant(1, got.data(), got.size());
    const uint32_t r_acc = nodes[0]->engine->grant(1, fetched.data(), fetched.size());
    assert_int_equal(rttcc_engine_put(&d.h0, 1, stale, 0, kTag, &iov, 1, &bytes), RTTCC_OK);
    assert_int_equal(rttcc_rma_get(&d.h0, 1, stale, 100, got.size(), r_get, kTag), RTTCC_DONE);
    assert_int_equal(rttcc_rma_accumulate(&d.h0, 1, stale, 200, RTTCC_RMA_SUM, RTTCC_RMA_INT64, &acc, 1, r_acc, kTag,
                                          nullptr),
                     RTTCC_DONE);
    until_nacked(nodes, stale);
    const rttcc_rma_region_t now = look_up_and_remap(nodes, d, stale, d.base(), d.base(), bytes.size());
    assert_int_equal(now.key, 0);  // nothing there: a sink
    int flushed;
    if (flush_pending(nodes, &flushed)) assert_true(run_until(nodes, [&] { return completed(*nodes[0], &flushed); }));
    assert_true(run_until(nodes, [&] { return nodes[0]->puts.size() == 2 + 1; }));  // the lookup's, and two zeros
    assert_true(completed(*nodes[0], &bytes));
    assert_true(std::all_of(got.begin(), got.end(), [](uint8_t b) { return b == 0; }));
    assert_true(std::all_of(fetched.begin(), fetched.end(), [](uint8_t b) { return b == 0; }));
    assert_true(std::all_of(mem.begin(), mem.end(), [](uint8_t b) { return b == 0x5a; }));
    assert_true(std::all_of(elsewhere.begin(), elsewhere.end(), [](uint8_t b) { return b == 0x33; }));
    assert_true(stats(*nodes[1]).drop_bad_put >= 3);
    assert_true(nodes[0]->dead.empty() && nodes[1]->dead.empty() && nodes[0]->failed.empty());
}

// Node 0's application computes while node 1 refuses its put: only node
// 0's quiet agent runs, which tells its client nothing, and the NACKs it
// hears keep it from declaring node 1 dead for three peer timeouts.  Back
// in its application, node 0 hears the key, remaps it, and the put lands.
static void test_an_origin_away_keeps_its_refused_put(void **) {
    MemNetwork net(4000);
    net.real_time = true;
    auto nodes = make_nodes(net, 2, {}, with_agent);
    std::vector<uint8_t> mem(50000, 0);
    Dynamic d(nodes, mem.data(), mem.size());
    const uint32_t stale = d.churn(GrantTable::kRevokedKept + 1);
    std::vector<uint8_t> bytes = make_message(5, 30000);
    iovec iov{bytes.data(), bytes.size()};
    assert_int_equal(rttcc_engine_put(&d.h0, 1, stale, 0, kTag, &iov, 1, &bytes), RTTCC_OK);
    const nanos end = now_of(nodes) + msec(600);
    while (now_of(nodes) < end) nodes[1]->engine->progress();
    assert_true(nodes[0]->dead.empty() && nodes[0]->failed.empty());
    assert_true(nodes[0]->nacks.empty());  // the agent calls nobody
    assert_true(stats(*nodes[1]).nacks_tx > 2);
    assert_true(std::all_of(mem.begin(), mem.end(), [](uint8_t b) { return b == 0; }));

    until_nacked(nodes, stale);
    look_up_and_remap(nodes, d, stale, d.base(), d.base(), bytes.size());
    assert_true(run_until(nodes, [&] { return completed(*nodes[0], &bytes); }));
    assert_memory_equal(mem.data(), bytes.data(), bytes.size());
    assert_true(nodes[0]->dead.empty() && nodes[1]->dead.empty());
}

// NACKs node 0 never earned: malformed ones are dropped, a well-formed
// one is only told (a client that knows no such key ignores it); REMAPs
// node 1 must not take (a live key, another peer's remembered key, a
// closed window, a window that does not remap) are dropped and change
// nothing: the live key still reaches its memory.
static void test_forged_nacks_and_remaps_change_nothing(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 3);
    std::vector<uint8_t> mem(1000, 0), theirs(100, 0), plain(100, 0);
    Dynamic d(nodes, mem.data(), mem.size());
    auto nack = [&](uint16_t payload, uint8_t flags, uint32_t key) {
        PacketHeader h = forged_header(PacketType::NACK, payload);
        h.flags = flags;
        h.src = 1;
        h.ack = nodes[0]->engine->peer(1)->tx.una();
        std::vector<uint8_t> bytes(payload, 0);
        const NackPayload n{key, 0, 5, 6};
        std::memcpy(bytes.data(), &n, std::min<size_t>(payload, sizeof n));
        iovec iov{bytes.data(), bytes.size()};
        h.mac = datagram_mac(RTTCC_AUTH_HEADER, published_key(*nodes[0]), h, &iov, 1);
        inject(net, 1, 0, kCmd, h, bytes);
        nodes[0]->engine->progress();
    };
    nack(sizeof(NackPayload) - 1, kFlagAckValid, 77);  // short
    nack(sizeof(NackPayload), 0, 77);                  // no ACK fields
    nack(sizeof(NackPayload), kFlagAckValid, 0);       // no key
    assert_int_equal(stats(*nodes[0]).drop_malformed, 3);
    assert_true(nodes[0]->nacks.empty());
    nack(sizeof(NackPayload), kFlagAckValid, 77);
    assert_int_equal(nodes[0]->nacks.size(), 1);
    assert_int_equal(nodes[0]->nacks[0].key, 77);
    assert_int_equal(nodes[0]->nacks[0].offset, 5);
    assert_int_equal(nodes[0]->nacks[0].len, 6);

    rttcc_engine h2{nodes[2]->engine, ""};
    uint32_t for2 = 0, closed = 0, plain_window = 0, plain_key = 0;
    assert_int_equal(rttcc_rma_expose(&d.h1, d.window, 2, theirs.data(), theirs.size(), &for2), RTTCC_OK);
    assert_int_equal(rttcc_engine_revoke(&d.h1, for2), RTTCC_OK);  // node 2's, remembered
    assert_int_equal(rttcc_rma_window_open(&d.h1, &closed), RTTCC_OK);
    assert_int_equal(rttcc_rma_window_remap_revoked(&d.h1, closed), RTTCC_OK);
    assert_int_equal(rttcc_rma_window_close(&d.h1, closed), RTTCC_OK);
    assert_int_equal(rttcc_rma_window_open(&d.h1, &plain_window), RTTCC_OK);
    assert_int_equal(rttcc_rma_expose(&d.h1, plain_window, 0, plain.data(), plain.size(), &plain_key), RTTCC_OK);
    assert_int_equal(rttcc_engine_revoke(&d.h1, plain_key), RTTCC_OK);
    const uint64_t other = reinterpret_cast<uintptr_t>(theirs.data());
    assert_int_equal(rttcc_rma_remap(&d.h0, 1, d.window, d.key, other, 0), RTTCC_DONE);     // live
    assert_int_equal(rttcc_rma_remap(&d.h0, 1, d.window, for2, d.base(), 0), RTTCC_DONE);   // node 2's
    assert_int_equal(rttcc_rma_remap(&d.h0, 1, closed, 4242, d.base(), 0), RTTCC_DONE);    // closed
    assert_int_equal(rttcc_rma_remap(&d.h0, 1, plain_window, plain_key, d.base(), 0), RTTCC_DONE);  // no remapping
    assert_int_equal(rttcc_rma_remap(&d.h0, 1, d.window, 0, d.base(), 0), RTTCC_ERR_ARG);  // no key
    assert_int_equal(rttcc_rma_remap(&d.h0, 1, d.window, kPutKeyMask + 1, d.base(), 0), RTTCC_ERR_ARG);
    assert_true(run_until(nodes, [&] { return stats(*nodes[1]).drop_bad_put == 4; }));
    settle(nodes);
    assert_int_equal(stats(*nodes[1]).drop_bad_put, 4);
    assert_int_equal(stats(*nodes[1]).remaps, 0);

    const uint8_t b = 0x42;
    const iovec iov{const_cast<uint8_t *>(&b), 1};
    assert_int_equal(rttcc_engine_put(&d.h0, 1, d.key, 10, kTag, &iov, 1, nullptr), RTTCC_DONE);
    assert_int_equal(rttcc_engine_put(&h2, 1, for2, 0, kTag, &iov, 1, nullptr), RTTCC_DONE);  // node 2's own: gone
    assert_true(run_until(nodes, [&] { return mem[10] == 0x42; }));
    settle(nodes);
    assert_true(std::all_of(theirs.begin(), theirs.end(), [](uint8_t v) { return v == 0; }));
    assert_true(std::all_of(plain.begin(), plain.end(), [](uint8_t v) { return v == 0; }));
    assert_int_equal(std::count(mem.begin(), mem.end(), 0x42), 1);
    assert_true(nodes[0]->dead.empty() && nodes[1]->dead.empty());
}

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_put_through_a_forgotten_key_lands_once_remapped),
        cmocka_unit_test(test_refused_requests_are_applied_once_in_order),
        cmocka_unit_test(test_a_sink_takes_what_names_its_key_and_drops_it),
        cmocka_unit_test(test_an_origin_away_keeps_its_refused_put),
        cmocka_unit_test(test_forged_nacks_and_remaps_change_nothing),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
