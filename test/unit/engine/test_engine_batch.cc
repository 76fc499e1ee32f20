// RMA batches (rttcc_rma_post, rttcc_rma_post_fetch, rttcc_rma_post_get,
// rma_batch.h) over the
// in-memory wire: the small puts, gets and accumulates an origin posts
// between two progress passes travel as one request, are applied at the
// target in order with the origin's other requests, are checked whole
// before any is applied, and a flush sends them with its ACK request on
// board; entries with a reply put the old bytes into their grant.
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

struct Target {
    rttcc_engine h0, h1;
    uint32_t window = 0, key = 0;
    Target(std::vector<std::unique_ptr<Node>> &nodes, void *mem, size_t len)
        : h0{nodes[0]->engine, ""}, h1{nodes[1]->engine, ""} {
        assert_int_equal(rttcc_rma_window_open(&h1, &window), RTTCC_OK);
        assert_int_equal(rttcc_rma_expose(&h1, window, 0, mem, len, &key), RTTCC_OK);
    }
};

int put8(rttcc_engine_t *e, uint32_t key, uint64_t offset, const void *bytes, size_t len) {
    return rttcc_rma_post(e, 1, key, offset, RTTCC_RMA_REPLACE, RTTCC_RMA_BYTE, bytes, len);
}

const rttcc_stats_t stats(const Node &n) { return n.engine->stats(); }

// A batch's payload bound, and so what one post may bring: kBatchBytes in all.
size_t batch_cap(const Node &n) {
    return std::min<size_t>(kBatchBytes, n.engine->config().max_message) - sizeof(RmaRequest);
}

// Node 0 flushes node 1 and both progress until the flush completes.
void flush(std::vector<std::unique_ptr<Node>> &nodes, void *cookie) {
    const int rc = nodes[0]->engine->flush(1, kTag, cookie);
    assert_true(rc == RTTCC_OK || rc == RTTCC_DONE);
    if (rc == RTTCC_OK)
        assert_true(run_until(nodes, [&] { return position(nodes[0]->completed, cookie) < nodes[0]->completed.size(); }));
}

// Node 0's next request to node 1, forged: a batch of these entries, none
// with operand bytes (gets and NO_OPs), as though node 0 had sent it.
void inject_batch(MemNetwork &net, std::vector<std::unique_ptr<Node>> &nodes, const std::vector<RmaBatchEntry> &entries) {
    RmaRequest r{};
    r.kind = static_cast<uint8_t>(RmaKind::kBatch);
    r.rseq = nodes[1]->engine->peer(0)->requests.next();
    r.offset = entries.size();
    r.len = static_cast<uint32_t>(entries.size() * sizeof(RmaBatchEntry));
    std::vector<uint8_t> msg(sizeof r + r.len);
    std::memcpy(msg.data(), &r, sizeof r);
    std::memcpy(msg.data() + sizeof r, entries.data(), r.len);
    inject_request(net, nodes, 0, 1, msg);
}

}  // namespace

// 200 posts of puts and accumulates (sums on int64) then a flush: they
// land as a model applying them in order says, in a handful of requests
// (each as full as a copied request can be), and a get made after some of them reads
// what they wrote (it goes after them).
static void test_posts_share_requests_and_keep_their_order(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2);
    std::vector<int64_t> mem(64, 0), model(64, 0);
    Target t(nodes, mem.data(), mem.size() * 8);
    const size_t cap = batch_cap(*nodes[0]);
    size_t posted_bytes = 0;
    std::vector<int64_t> got(4, -1);
    const uint32_t reply = nodes[0]->engine->grant(1, got.data(), got.size() * 8);
    for (int i = 0; i < 200; ++i) {
        const int64_t v = i + 1;
        const size_t at = static_cast<size_t>(i * 7 % 60);
        if (i % 3 == 0) {
            assert_int_equal(put8(&t.h0, t.key, at * 8, &v, 8), RTTCC_DONE);
            model[at] = v;
        } else {
            assert_int_equal(rttcc_rma_post(&t.h0, 1, t.key, at * 8, RTTCC_RMA_SUM, RTTCC_RMA_INT64, &v, 8), RTTCC_DONE);
            model[at] += v;
        }
        posted_bytes += sizeof(RmaBatchEntry) + 8;
        if (i == 99) {
            assert_int_equal(rttcc_rma_get(&t.h0, 1, t.key, 0, got.size() * 8, reply, kTag), RTTCC_DONE);
            std::vector<int64_t> seen(model.begin(), model.begin() + 4);
            assert_true(run_until(nodes, [&] { return !nodes[0]->puts.empty(); }));
            assert_true(got == seen);
        }
    }
    int f;
    flush(nodes, &f);
    assert_true(mem == model);
    assert_int_equal(stats(*nodes[0]).rma_posted, 200);
    const uint64_t batches = stats(*nodes[0]).rma_batches;
    const uint64_t fewest = (posted_bytes + cap - 1) / cap;
    assert_true(batches >= fewest && batches <= fewest + 2);  // the get closed one early
    assert_int_equal(stats(*nodes[1]).drop_bad_put, 0);
}

// Posted gets and fetching sums among posted puts: each reply shows the
// bytes as the entries before it left them (a model applies them in
// order), every reply lands whole in its own grant, and the 480 entries
// travel in as few requests as their bytes allow.
static void test_posted_gets_and_fetches_read_in_order(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2);
    std::vector<int64_t> mem(16, 0), model(16, 0);
    Target t(nodes, mem.data(), mem.size() * 8);
    const size_t cap = batch_cap(*nodes[0]);
    constexpr int kEntries = 480;
    std::vector<int64_t> got(kEntries, -1), want(kEntries, -2);
    std::vector<uint32_t> grants;
    size_t charged = 0;
    for (int i = 0; i < kEntries; ++i) {
        const size_t at = static_cast<size_t>(i * 5 % 16);
        const int64_t v = 100 + i;
        uint32_t reply = 0;
        if (i % 3 != 2) {
            reply = nodes[0]->engine->grant(1, &got[i], 8);
            assert_true(reply != 0);
            grants.push_back(reply);
        }
        switch (i % 3) {
            case 0:  // a get
                assert_int_equal(rttcc_rma_post_fetch(&t.h0, 1, t.key, at * 8, RTTCC_RMA_NO_OP, RTTCC_RMA_BYTE,
                                                      nullptr, 8, reply, kTag),
                                 RTTCC_DONE);
                want[i] = model[at];
                break;
            case 1:  // a fetching sum
                assert_int_equal(rttcc_rma_post_fetch(&t.h0, 1, t.key, at * 8, RTTCC_RMA_SUM, RTTCC_RMA_INT64, &v, 8,
                                                      reply, kTag),
                                 RTTCC_DONE);
                want[i] = model[at];
                model[at] += v;
                break;
            default:  // a put
                assert_int_equal(put8(&t.h0, t.key, at * 8, &v, 8), RTTCC_DONE);
                model[at] = v;
                got[i] = want[i];
                break;
        }
        charged += sizeof(RmaBatchEntry) + (i % 3 == 0 ? 0 : 8);  // a get sends no bytes
    }
    int f;
    flush(nodes, &f);
    assert_true(run_until(nodes, [&] { return nodes[0]->puts.size() == kEntries / 3 * 2; }));
    assert_true(mem == model);
    assert_true(got == want);
    for (const auto &landed : nodes[0]->puts) {
        assert_int_equal(landed.len, 8);
        assert_int_equal(landed.tag, kTag);
        assert_true(std::find(grants.begin(), grants.end(), landed.key) != grants.end());
    }
    const uint64_t batches = stats(*nodes[0]).rma_batches;
    assert_true(batches >= (charged + cap - 1) / cap && batches <= (charged + cap - 1) / cap + 1);
    assert_int_equal(stats(*nodes[1]).drop_bad_put, 0);
}

// A batch's replies bring back at most kBatchReplies: two gets of 40000
// bytes go in two batches, and both land whole.  A reply key a peer could
// not name is refused.  A forged batch whose replies would bring back more
// is dropped whole at the target, though each of its entries is in bounds.
static void test_posted_replies_have_a_bound(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2);
    constexpr size_t kGet = 40000;
    std::vector<uint8_t> mem(2 * kGet), got(2 * kGet, 0);
    for (size_t i = 0; i < mem.size(); ++i) mem[i] = static_cast<uint8_t>(i * 7 + 1);
    Target t(nodes, mem.data(), mem.size());
    const uint32_t reply[2] = {nodes[0]->engine->grant(1, got.data(), kGet),
                               nodes[0]->engine->grant(1, got.data() + kGet, kGet)};
    assert_int_equal(rttcc_rma_post_fetch(&t.h0, 1, t.key, 0, RTTCC_RMA_NO_OP, RTTCC_RMA_BYTE, nullptr, 8,
                                          kPutKeyMask + 1, kTag),
                     RTTCC_ERR_ARG);
    assert_int_equal(rttcc_rma_post_fetch(&t.h0, 1, t.key, 0, RTTCC_RMA_NO_OP, RTTCC_RMA_BYTE, nullptr, 8, reply[0],
                                          RTTCC_TAG_RMA),
                     RTTCC_ERR_ARG);
    for (int i = 0; i < 2; ++i)
        assert_int_equal(rttcc_rma_post_fetch(&t.h0, 1, t.key, i * kGet, RTTCC_RMA_NO_OP, RTTCC_RMA_BYTE, nullptr,
                                              kGet, reply[i], kTag),
                         RTTCC_DONE);
    assert_int_equal(stats(*nodes[0]).rma_batches, 1);  // the second get closed the first's batch
    int f;
    flush(nodes, &f);
    assert_true(run_until(nodes, [&] { return nodes[0]->puts.size() == 2; }));
    assert_true(got == mem);
    assert_int_equal(stats(*nodes[0]).rma_batches, 2);

    std::vector<RmaBatchEntry> forged;
    for (int i = 0; i < 2; ++i) {
        RmaBatchEntry e{i * kGet, t.key, static_cast<uint32_t>(kGet), RTTCC_RMA_NO_OP, RTTCC_RMA_BYTE};
        e.reply_key = reply[i];
        e.reply_tag = kTag;
        forged.push_back(e);
    }
    inject_batch(net, nodes, forged);
    for (int i = 0; i < 10; ++i) {
        nodes[1]->engine->progress();
        nodes[0]->engine->progress();
    }
    assert_int_equal(stats(*nodes[1]).drop_bad_put, 1);
    assert_int_equal(nodes[0]->puts.size(), 2);
    assert_true(nodes[1]->dead.empty());
}

// Plain gets (rttcc_rma_post_get) join one batch whatever their size: a
// large one's reply is sent from the exposure, not copied, so it counts
// nothing against the batch's bound on copied replies (which would have cut
// these four into four batches).  Small ones are copies, as a lone get's.
static void test_posted_plain_gets_share_one_batch(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2);
    constexpr size_t kGet = 40000, kGets = 4, kSmall = 8;
    static_assert(2 * kGet > kBatchReplies, "two copied replies of kGet would need two batches");
    std::vector<uint8_t> mem(kGets * kGet + kSmall), got(mem.size(), 0);
    for (size_t i = 0; i < mem.size(); ++i) mem[i] = static_cast<uint8_t>(i * 13 + 5);
    Target t(nodes, mem.data(), mem.size());
    for (size_t i = 0; i <= kGets; ++i) {
        const size_t len = i < kGets ? kGet : kSmall;
        const uint32_t reply = nodes[0]->engine->grant(1, got.data() + i * kGet, len);
        assert_int_equal(rttcc_rma_post_get(&t.h0, 1, t.key, i * kGet, len, reply, kTag), RTTCC_DONE);
    }
    assert_int_equal(rttcc_rma_post_get(&t.h0, 1, t.key, 0, 8, 0, kTag), RTTCC_ERR_ARG);  // no reply grant
    assert_int_equal(stats(*nodes[0]).rma_batches, 0);
    int f;
    flush(nodes, &f);
    assert_true(run_until(nodes, [&] { return nodes[0]->puts.size() == kGets + 1; }));
    assert_true(got == mem);
    assert_int_equal(stats(*nodes[0]).rma_batches, 1);
    assert_int_equal(stats(*nodes[1]).drop_bad_put, 0);
}

// A plain get is at most a message (max_message): the origin refuses a
// larger one, and a target drops a batch that names one (forged), though
// the exposure holds its bytes.
static void test_a_plain_get_is_at_most_a_message(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) { c.max_message = 65536; });
    std::vector<uint8_t> mem(200000, 3), got(mem.size(), 0);
    Target t(nodes, mem.data(), mem.size());
    const uint32_t reply = nodes[0]->engine->grant(1, got.data(), got.size());
    assert_int_equal(rttcc_rma_post_get(&t.h0, 1, t.key, 0, 65537, reply, kTag), RTTCC_ERR_ARG);
    assert_int_equal(rttcc_rma_post_get(&t.h0, 1, t.key, 0, 65536, reply, kTag), RTTCC_DONE);
    int f;
    flush(nodes, &f);
    assert_true(run_until(nodes, [&] { return nodes[0]->puts.size() == 1; }));

    RmaBatchEntry e{0, t.key, 100000, RTTCC_RMA_NO_OP, RTTCC_RMA_BYTE};
    e.reply_key = reply;
    e.reply_tag = kTag;
    e.flags = kPlainGet;
    inject_batch(net, nodes, {e});
    for (int i = 0; i < 10; ++i) {
        nodes[1]->engine->progress();
        nodes[0]->engine->progress();
    }
    assert_int_equal(stats(*nodes[1]).drop_bad_put, 1);
    assert_int_equal(nodes[0]->puts.size(), 1);
}

// Posts wait for the origin's next progress pass, then go without a flush.
static void test_a_progress_pass_sends_the_batch(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) { c.agent = false; });
    std::vector<uint8_t> mem(100, 0);
    Target t(nodes, mem.data(), mem.size());
    const uint8_t bytes[3] = {7, 8, 9};
    assert_int_equal(put8(&t.h0, t.key, 10, bytes, 3), RTTCC_DONE);
    const uint64_t segs = stats(*nodes[0]).segs_tx;
    nodes[1]->engine->progress();
    assert_int_equal(mem[10], 0);
    assert_int_equal(stats(*nodes[0]).segs_tx, segs);  // nothing sent yet
    assert_true(run_until(nodes, [&] { return mem[12] == 9; }));
    assert_memory_equal(mem.data() + 10, bytes, 3);
    assert_int_equal(stats(*nodes[0]).rma_batches, 1);
}

// The flush of a batch needs no bare ACK request: the batch's segment asks.
// With a one-second delayed ACK, the flush still completes in a few passes.
static void test_a_flushed_batch_asks_for_its_ack(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) {
        c.ack_delay_us = 1000000;
        c.agent = false;
    });
    std::vector<uint8_t> mem(100, 0);
    Target t(nodes, mem.data(), mem.size());
    const uint8_t bytes[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    assert_int_equal(put8(&t.h0, t.key, 0, bytes, 8), RTTCC_DONE);
    const uint64_t acks = stats(*nodes[0]).acks_tx;
    int f;
    assert_int_equal(nodes[0]->engine->flush(1, kTag, &f), RTTCC_OK);
    for (int i = 0; i < 20 && position(nodes[0]->completed, &f) == nodes[0]->completed.size(); ++i) {
        nodes[1]->engine->progress();
        nodes[0]->engine->progress();
    }
    assert_true(position(nodes[0]->completed, &f) < nodes[0]->completed.size());
    assert_memory_equal(mem.data(), bytes, 8);
    assert_int_equal(stats(*nodes[0]).acks_tx, acks);  // no ACK request of its own
}

// A batch with one entry outside the exposure is dropped whole: the entries
// before it are not applied either.  A batch whose count disagrees with its
// bytes (forged) is dropped too.  Later posts are served.
static void test_a_batch_with_a_bad_entry_is_dropped_whole(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2);
    std::vector<uint8_t> mem(64, 0);
    Target t(nodes, mem.data(), mem.size());
    const uint8_t one = 1;
    int f;
    assert_int_equal(put8(&t.h0, t.key, 0, &one, 1), RTTCC_DONE);
    assert_int_equal(put8(&t.h0, t.key, 64, &one, 1), RTTCC_DONE);  // one past the end: the target's to see
    flush(nodes, &f);
    assert_int_equal(mem[0], 0);
    assert_int_equal(stats(*nodes[1]).drop_bad_put, 1);

    RmaRequest r{};
    r.kind = static_cast<uint8_t>(RmaKind::kBatch);
    r.rseq = nodes[1]->engine->peer(0)->requests.next();
    const RmaBatchEntry e{5, t.key, 1, RTTCC_RMA_REPLACE, RTTCC_RMA_BYTE};
    std::vector<uint8_t> bytes(sizeof r + 2 * (sizeof e + 1), 1);
    r.offset = 3;  // says three, holds two
    r.len = bytes.size() - sizeof r;
    std::memcpy(bytes.data(), &r, sizeof r);
    std::memcpy(bytes.data() + sizeof r, &e, sizeof e);
    std::memcpy(bytes.data() + sizeof r + sizeof e + 1, &e, sizeof e);
    inject_request(net, nodes, 0, 1, bytes);
    nodes[1]->engine->progress();
    assert_int_equal(stats(*nodes[1]).drop_bad_put, 2);
    assert_int_equal(mem[5], 0);

    // Entries no engine makes: a reply on the engine's own tag, a reply
    // tag without a reply key, a flag that does not exist, a plain get
    // without a reply, a plain get of elements (an atomic read, which
    // would be a well-formed entry without the flag).
    uint64_t drops = 2;
    for (int forged = 0; forged < 5; ++forged) {
        RmaBatchEntry bad{8, t.key, 1, RTTCC_RMA_NO_OP, RTTCC_RMA_BYTE};
        if (forged == 0) bad.reply_key = 1, bad.reply_tag = RTTCC_TAG_RMA;
        if (forged == 1) bad.reply_tag = kTag;
        if (forged == 2) bad.reply_key = 1, bad.reply_tag = kTag, bad.flags = 2;
        if (forged == 3) bad.flags = kPlainGet;
        if (forged == 4) bad.reply_key = 1, bad.reply_tag = kTag, bad.flags = kPlainGet, bad.type = RTTCC_RMA_INT32, bad.len = 4;
        inject_batch(net, nodes, {bad});
        nodes[1]->engine->progress();
        assert_int_equal(stats(*nodes[1]).drop_bad_put, ++drops);
    }
    assert_true(nodes[1]->dead.empty());
}

// A burst of posts larger than a copied request travels in as few requests
// as kBatchBytes allows: 64 puts of 1000 bytes in 2 (8 when a batch was
// bounded by inline_max), and they land as made.  A batch's buffer grows with what
// it holds: one small post does not take kBatchBytes.
static void test_a_burst_of_posts_fills_a_gso_group(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2);
    std::vector<uint8_t> mem(64000, 0), model(64000, 0);
    Target t(nodes, mem.data(), mem.size());
    std::vector<uint8_t> bytes(1000);
    for (int i = 0; i < 64; ++i) {
        for (size_t j = 0; j < bytes.size(); ++j) bytes[j] = static_cast<uint8_t>(i * 7 + j);
        assert_int_equal(put8(&t.h0, t.key, i * 1000u, bytes.data(), bytes.size()), RTTCC_DONE);
        std::copy(bytes.begin(), bytes.end(), model.begin() + i * 1000);
    }
    int f;
    flush(nodes, &f);
    assert_true(mem == model);
    assert_int_equal(stats(*nodes[0]).rma_batches, 2);

    RmaBatch b;
    RmaBatchEntry e{0, 1, 8, RTTCC_RMA_REPLACE, RTTCC_RMA_BYTE};
    b.add(e, bytes.data(), kBatchBytes);
    assert_int_equal(b.size(), sizeof e + 8);
    assert_true(b.capacity() < kBatchBytes / 16);
}

// What post refuses: an entry too large for a batch (BUSY: send it alone),
// and entries no engine makes.  One that fills a batch alone is taken.
static void test_post_refusals(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2);
    std::vector<uint8_t> mem(70000, 0);
    Target t(nodes, mem.data(), mem.size());
    const size_t cap = batch_cap(*nodes[0]);
    assert_int_equal(put8(&t.h0, t.key, 0, mem.data(), cap - sizeof(RmaBatchEntry) + 1), RTTCC_ERR_BUSY);
    assert_int_equal(put8(&t.h0, t.key, 0, mem.data(), 66000), RTTCC_ERR_BUSY);
    const int32_t v = 1;
    assert_int_equal(rttcc_rma_post(&t.h0, 1, t.key, 0, RTTCC_RMA_OP_COUNT, RTTCC_RMA_INT32, &v, 4), RTTCC_ERR_ARG);
    assert_int_equal(rttcc_rma_post(&t.h0, 1, t.key, 0, RTTCC_RMA_SUM, RTTCC_RMA_INT32, &v, 3), RTTCC_ERR_ARG);
    assert_int_equal(rttcc_rma_post(&t.h0, 1, t.key, 0, RTTCC_RMA_MAXLOC, RTTCC_RMA_INT32, &v, 4), RTTCC_ERR_ARG);
    assert_int_equal(rttcc_rma_post(&t.h0, 1, 0, 0, RTTCC_RMA_SUM, RTTCC_RMA_INT32, &v, 4), RTTCC_ERR_ARG);
    assert_int_equal(rttcc_rma_post(&t.h0, 1, t.key, 0, RTTCC_RMA_SUM, RTTCC_RMA_INT32, &v, 0), RTTCC_ERR_ARG);
    assert_int_equal(rttcc_rma_post(&t.h0, 7, t.key, 0, RTTCC_RMA_SUM, RTTCC_RMA_INT32, &v, 4), RTTCC_ERR_UNREACH);
    assert_int_equal(stats(*nodes[0]).rma_posted, 0);
    assert_int_equal(put8(&t.h0, t.key, 0, mem.data(), cap - sizeof(RmaBatchEntry)), RTTCC_DONE);
    assert_int_equal(stats(*nodes[0]).rma_posted, 1);
}

// Over a wire that drops, duplicates and reorders, rounds of posts and
// flushes land exactly as the model says (nothing lost or applied twice).
static void test_posts_survive_a_faulty_wire(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, FaultRates{30000, 30000, 100000, 0}, [](rttcc_config_t &c) {
        c.retrans_timeout_us = c.min_rto_us = 100000;
        c.max_rto_us = 200000;
    });
    std::vector<int32_t> mem(512, 0), model(512, 0);
    Target t(nodes, mem.data(), mem.size() * 4);
    int flushes[40];
    for (int round = 0; round < 40; ++round) {
        for (int i = 0; i < 150; ++i) {
            const int32_t v = round * 1000 + i;
            const size_t at = static_cast<size_t>((round * 31 + i * 17) % 512);
            assert_int_equal(rttcc_rma_post(&t.h0, 1, t.key, at * 4, RTTCC_RMA_SUM, RTTCC_RMA_INT32, &v, 4), RTTCC_DONE);
            model[at] += v;
        }
        flush(nodes, &flushes[round]);
        assert_true(mem == model);
    }
    assert_true(nodes[0]->faults->injected > 0 && nodes[1]->faults->injected > 0);
    assert_int_equal(stats(*nodes[1]).drop_bad_put, 0);
}

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_posts_share_requests_and_keep_their_order),
        cmocka_unit_test(test_posted_gets_and_fetches_read_in_order),
        cmocka_unit_test(test_posted_replies_have_a_bound),
        cmocka_unit_test(test_posted_plain_gets_share_one_batch),
        cmocka_unit_test(test_a_plain_get_is_at_most_a_message),
        cmocka_unit_test(test_a_progress_pass_sends_the_batch),
        cmocka_unit_test(test_a_flushed_batch_asks_for_its_ack),
        cmocka_unit_test(test_a_batch_with_a_bad_entry_is_dropped_whole),
        cmocka_unit_test(test_a_burst_of_posts_fills_a_gso_group),
        cmocka_unit_test(test_post_refusals),
        cmocka_unit_test(test_posts_survive_a_faulty_wire),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
