// A process out of memory for a copy: the engine's copies above inline_max
// come from aligned_alloc (BufferPool), which this program wraps
// (-Wl,--wrap=aligned_alloc, and malloc alike) to fail on demand.  A message then goes zero-copy.
// It replaces operator new too (every form: plain, array, nothrow,
// aligned), to fail on demand (g_fail_new): a wire's send never allocates.
// A target without memory for an RMA reply declares the asker dead with
// the reason: nothing crashes, no freed byte travels, and the target's
// other peers are served as before.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include "api/engine_handle.h"
#include "cmocka_cxx.h"
#include "engine_harness.h"
#include "rttcc/rma.h"

using namespace rttcc;
using namespace rttcc_test;

namespace {
bool g_fail_large = false;  // allocations of at least a BufferPool block fail while set
bool g_fail_all = false;    // every allocation fails while set
bool g_fail_new = false;    // operator new fails while set
}

extern "C" void *__real_malloc(size_t n);
extern "C" void *__wrap_malloc(size_t n) {
    if (g_fail_all || (g_fail_large && n >= BufferPool::kSmallest)) return nullptr;
    return __real_malloc(n);
}
extern "C" void *__real_aligned_alloc(size_t alignment, size_t n);
extern "C" void *__wrap_aligned_alloc(size_t alignment, size_t n) {
    if (g_fail_all || (g_fail_large && n >= BufferPool::kSmallest)) return nullptr;
    return __real_aligned_alloc(alignment, n);
}

void *operator new(size_t n) {
    void *p = g_fail_new ? nullptr : __real_malloc(n ? n : 1);
    if (!p) throw std::bad_alloc();
    return p;
}
// Every other form fails with it: libstdc++'s own forward to the one above,
// but under ThreadSanitizer libtsan replaces each one separately (its
// operator new[] would not fail: the send ring's growth succeeded there).
void *operator new[](size_t n) { return ::operator new(n); }
void *operator new(size_t n, const std::nothrow_t &) noexcept {
    return g_fail_new ? nullptr : __real_malloc(n ? n : 1);
}
void *operator new[](size_t n, const std::nothrow_t &) noexcept { return ::operator new(n, std::nothrow); }
void *operator new(size_t n, std::align_val_t a, const std::nothrow_t &) noexcept {
    const size_t al = static_cast<size_t>(a);
    return g_fail_new ? nullptr : __real_aligned_alloc(al, n ? (n + al - 1) / al * al : al);
}
void *operator new(size_t n, std::align_val_t a) {
    void *p = ::operator new(n, a, std::nothrow);
    if (!p) throw std::bad_alloc();
    return p;
}
void *operator new[](size_t n, std::align_val_t a) { return ::operator new(n, a); }
void *operator new[](size_t n, std::align_val_t a, const std::nothrow_t &) noexcept {
    return ::operator new(n, a, std::nothrow);
}

namespace {

constexpr uint8_t kTag = 9;
constexpr size_t kLen = 150000;  // above inline_max: a BufferPool copy, or zero-copy

struct NoMemory {
    NoMemory() { g_fail_large = true; }
    ~NoMemory() { g_fail_large = false; }
};
struct NoNew {
    NoNew() { g_fail_new = true; }
    ~NoNew() { g_fail_new = false; }
};
struct NoMemoryAtAll {
    NoMemoryAtAll() { g_fail_all = true; }
    ~NoMemoryAtAll() { g_fail_all = false; }
};

size_t replies(const Node &n, uint32_t key) {
    return static_cast<size_t>(
        std::count_if(n.puts.begin(), n.puts.end(), [&](const Node::Landed &l) { return l.key == key; }));
}

bool said(const Node &n, uint32_t peer, const char *what) {
    for (size_t i = 0; i < n.dead.size(); ++i)
        if (n.dead[i] == peer && n.dead_why[i].find(what) != std::string::npos) return true;
    return false;
}

// (No assert_* inside these scopes: a failure longjmps past the
// destructor, and allocation would fail for every later test.)
void settle(std::vector<std::unique_ptr<Node>> &nodes) { (void)run_until(nodes, [] { return false; }, 0.05); }

struct Target {
    explicit Target(std::vector<std::unique_ptr<Node>> &nodes) : e{nodes[1]->engine, ""} {
        assert_int_equal(rttcc_rma_window_open(&e, &window), RTTCC_OK);
    }
    uint32_t expose(uint32_t origin, std::vector<uint8_t> &mem) {
        uint32_t key = 0;
        assert_int_equal(rttcc_rma_expose(&e, window, origin, mem.data(), mem.size(), &key), RTTCC_OK);
        return key;
    }
    rttcc_engine e;
    uint32_t window = 0;
};

// A wire under the fault injection whose sends allocate as they please
// (MemWire's do): only the fault injection's own sends meet NoNew.
class AllocatesFreely final : public Wire {
public:
    explicit AllocatesFreely(std::unique_ptr<Wire> inner) : inner_(std::move(inner)) {}
    const char *name() const override { return inner_->name(); }
    size_t local_address(Channel ch, void *b, size_t c) const override { return inner_->local_address(ch, b, c); }
    bool resolve(Channel ch, const void *a, size_t l, WireHandle *o, std::string *e) override {
        return inner_->resolve(ch, a, l, o, e);
    }
    size_t path_datagram(const void *a, size_t l) const override { return inner_->path_datagram(a, l); }
    int rx_burst(Channel ch, RxDatagram *d, int n) override { return inner_->rx_burst(ch, d, n); }
    int tx_burst(Channel ch, TxDatagram *d, int n) noexcept override {
        const bool was = g_fail_new;
        g_fail_new = false;
        const int sent = inner_->tx_burst(ch, d, n);
        g_fail_new = was;
        return sent;
    }

private:
    std::unique_ptr<Wire> inner_;
};

// Node 0's wire as the harness makes it, sending with memory (MemWire allocates).
std::unique_ptr<Wire> node0_allocates_freely(int i, std::unique_ptr<Wire> w) {
    return i == 0 ? std::make_unique<AllocatesFreely>(std::move(w)) : std::move(w);
}

uint64_t segments_sent(const Node &n) { return n.engine->stats().segs_tx; }

// Node 0 puts 15 segments into node 1 (in flight, unACKed: its send ring
// of 16 has room for one more) and 3 more behind them, which wait for
// company: nothing of them is sent yet.
void ring_room_for_one(std::vector<std::unique_ptr<Node>> &nodes, std::vector<uint8_t> &dst,
                       std::vector<uint8_t> &put1, std::vector<uint8_t> &put2) {
    const size_t payload = 4000 - kHeaderSize;
    dst.assign(18 * payload, 0);
    put1 = make_message(1, 15 * payload);
    put2 = make_message(2, 3 * payload);
    const uint32_t key = nodes[1]->engine->grant(0, dst.data(), dst.size());
    iovec p1{put1.data(), put1.size()}, p2{put2.data(), put2.size()};
    assert_int_equal(nodes[0]->engine->put(1, key, 0, 1, &p1, 1, &put1), RTTCC_OK);
    assert_int_equal(segments_sent(*nodes[0]), 15);
    assert_int_equal(nodes[0]->engine->put(1, key, put1.size(), 2, &p2, 1, &put2), RTTCC_OK);
    assert_int_equal(segments_sent(*nodes[0]), 15);
}

// Node 0 sends msg (zero-copy, through iovec v) while no operator new
// succeeds: the send is taken, and completes with every byte arrived.
void send_without_new(std::vector<std::unique_ptr<Node>> &nodes, iovec &v, std::vector<uint8_t> &msg) {
    int rc;
    {
        NoNew none;
        rc = nodes[0]->engine->send(1, kTag, &v, 1, &msg);
    }
    assert_int_equal(rc, RTTCC_OK);
    assert_true(run_until(nodes, [&] { return nodes[0]->completed.size() == 1; }, 3));
    assert_true(nodes[1]->received.back().bytes == msg);
}
}  // namespace

// A segment takes its memory (its descriptor, room in the send ring)
// before anything changes: a message cut while none is left goes on in a
// later pass.  The ring's growth past 16 segments threw after the segment
// was counted and its bytes cut off the message: they were never sent.
static void test_a_message_cut_without_memory_goes_on_later(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, {}, nullptr, nullptr, false, node0_allocates_freely);
    std::vector<uint8_t> first = make_message(1, 100), msg = make_message(2, 20 * 3900);  // the ring holds 16
    iovec f{first.data(), first.size()}, v{msg.data(), msg.size()};
    assert_int_equal(nodes[0]->engine->send(1, kTag, &f, 1, &first), RTTCC_DONE);  // the pools fill
    assert_true(run_until(nodes, [&] { return nodes[1]->received.size() == 1; }));
    send_without_new(nodes, v, msg);
}

// A send_now (only if the peer can take it now) sends what is queued
// first; out of memory there, the caller hears RTTCC_ERR_BUSY for its own
// message, what was cut before goes now, and the rest in a later pass
// (not a window stall: the window had room).  The bad_alloc escaped before: RTTCC_ERR, and the datagram cut before it
// stayed in the engine's batch until some later send.
static void test_send_now_without_memory_for_what_is_queued_is_busy(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, {}, nullptr, nullptr, false, node0_allocates_freely);
    std::vector<uint8_t> dst, put1, put2;
    ring_room_for_one(nodes, dst, put1, put2);
    const size_t queued = net.queue(1, kData).size();
    rttcc_engine o0{nodes[0]->engine, ""};
    std::vector<uint8_t> now = make_message(3, 2000);  // on the data channel, behind put2
    auto fill = [](void *ctx, void *dst_, size_t n) { std::memcpy(dst_, static_cast<uint8_t *>(ctx), n); };
    const uint64_t stalls = nodes[0]->engine->stats().window_stalls;
    int rc;
    {
        NoNew none;
        rc = rttcc_engine_send_now(&o0, 1, kTag, now.size(), fill, now.data());
    }
    assert_int_equal(rc, RTTCC_ERR_BUSY);
    assert_int_equal(nodes[0]->engine->stats().window_stalls, stalls);  // the window had room: no stall
    assert_int_equal(segments_sent(*nodes[0]), 16);                // put2's first segment was cut
    assert_int_equal(net.queue(1, kData).size(), queued + 1);     // and went
    assert_true(run_until(nodes, [&] { return nodes[0]->completed.size() == 2; }, 3));  // the rest later
    assert_true(std::equal(put2.begin(), put2.end(), dst.begin() + static_cast<std::ptrdiff_t>(put1.size())));
    assert_int_equal(rttcc_engine_send_now(&o0, 1, kTag, now.size(), fill, now.data()), RTTCC_DONE);
    assert_true(run_until(nodes, [&] { return nodes[1]->received.size() == 1; }));
    assert_true(nodes[1]->received[0].bytes == now);
}

// A progress pass out of memory for a segment of what waits in the sends
// queue returns as any other, and a later pass sends the rest.  The
// bad_alloc escaped before (RTTCC_ERR), skipping the pass's flush and
// ACKs, and the peer it was serving was out of the sends queue.
static void test_progress_without_memory_for_a_segment_goes_on_later(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, {}, nullptr, nullptr, false, node0_allocates_freely);
    std::vector<uint8_t> dst, put1, put2;
    ring_room_for_one(nodes, dst, put1, put2);
    rttcc_engine o0{nodes[0]->engine, ""};
    int rc;
    {
        NoNew none;
        rc = rttcc_engine_progress(&o0);
    }
    assert_true(rc >= 0);
    assert_int_equal(segments_sent(*nodes[0]), 16);
    assert_true(run_until(nodes, [&] { return nodes[0]->completed.size() == 2; }, 3));
    assert_true(std::equal(put2.begin(), put2.end(), dst.begin() + static_cast<std::ptrdiff_t>(put1.size())));
}

// Fault injection (every datagram duplicated, some held back) sends
// without memory: its bursts find their room made when it was.  It grew
// vectors in tx_burst before, and a send that threw there, after the
// engine had cut a segment whose datagram it was staging (a full batch
// flushed first), left that segment without a datagram or a timer: the
// message never arrived.
static void test_fault_injection_sends_without_memory(void **) {
    constexpr uint32_t kBatch = 4;
    MemNetwork net(4000);
    const WrapWire wrap = [](int i, std::unique_ptr<Wire> w) -> std::unique_ptr<Wire> {
        if (i != 0) return w;
        const FaultRates dup_and_hold{0, 1000000, 300000, 0};
        return std::make_unique<FaultyWire>(std::make_unique<AllocatesFreely>(std::move(w)), dup_and_hold, 7,
                                            size_t{kBatch});
    };
    auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) { c.tx_batch = kBatch; }, nullptr, false, wrap);
    std::vector<uint8_t> first = make_message(1, 100), msg = make_message(2, 12 * 3900);  // several batches
    iovec f{first.data(), first.size()}, v{msg.data(), msg.size()};
    assert_int_equal(nodes[0]->engine->send(1, kTag, &f, 1, &first), RTTCC_DONE);  // the engine's pools fill
    assert_true(run_until(nodes, [&] { return nodes[1]->received.size() == 1; }));
    send_without_new(nodes, v, msg);
}

// A message that would be copied (above inline_max, up to send_copy_max)
// goes zero-copy when no memory is left for its copy: the send is taken,
// completes on its ACK, and the bytes arrive.
static void test_a_message_without_memory_for_its_copy_goes_zero_copy(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) { c.send_copy_max = 32768 + 64; });
    std::vector<uint8_t> msg = make_message(4, 20000);
    iovec v{msg.data(), msg.size()};
    int rc;
    {
        NoMemory none;
        rc = nodes[0]->engine->send(1, 1, &v, 1, &msg);
    }
    assert_int_equal(rc, RTTCC_OK);
    assert_true(run_until(nodes, [&] { return nodes[0]->completed.size() == 1 && nodes[1]->received.size() == 1; }));
    assert_ptr_equal(nodes[0]->completed[0], &msg);
    assert_true(nodes[1]->received[0].bytes == msg);
    assert_int_equal(nodes[0]->engine->send(1, 1, &v, 1, &msg), RTTCC_DONE);  // with memory: copied
}

// A small message whose copy finds no memory (the inline pool grows) is
// refused whole: the send says RTTCC_ERR and leaves nothing behind, so a
// flush after it completes and nothing of it arrives (mtl_rttcc owes its
// receiver a SKIP for it, which must not meet the message itself).  Before,
// it stayed among the outstanding messages, and every later flush to that
// peer waited for it for ever.
static void test_a_small_message_without_memory_is_refused_whole(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2);
    std::vector<uint8_t> msg = make_message(4, 100), next = make_message(5, 100);
    iovec v{msg.data(), msg.size()}, w{next.data(), next.size()};
    rttcc_engine o0{nodes[0]->engine, ""};
    int rc;
    {
        NoMemoryAtAll none;
        rc = rttcc_engine_send(&o0, 1, 1, &v, 1, &msg);  // (the C face: the exception becomes RTTCC_ERR)
    }
    assert_int_equal(rc, RTTCC_ERR);
    int flushed = 0;
    const int frc = nodes[0]->engine->flush(1, 1, &flushed);
    assert_true(frc == RTTCC_DONE ||
                run_until(nodes, [&] { return std::count(nodes[0]->completed.begin(), nodes[0]->completed.end(),
                                                         static_cast<void *>(&flushed)) == 1; }));
    assert_int_equal(nodes[0]->engine->send(1, 1, &w, 1, &next), RTTCC_DONE);
    assert_true(run_until(nodes, [&] { return nodes[1]->received.size() == 1; }));
    settle(nodes);
    assert_int_equal(nodes[1]->received.size(), 1);
    assert_true(nodes[1]->received[0].bytes == next);
}

// An atomic get's reply is a copy: without memory for it, node 1 declares
// its asker (node 0) dead, and still answers node 2.
static void test_a_reply_without_memory_declares_its_asker_dead(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 3, {}, [](rttcc_config_t &c) { c.agent = false; });
    Target t(nodes);
    std::vector<uint8_t> window = make_message(1, kLen);
    const uint32_t k0 = t.expose(0, window), k2 = t.expose(2, window);
    std::vector<uint8_t> got0(kLen), got2(kLen);
    rttcc_engine o0{nodes[0]->engine, ""}, o2{nodes[2]->engine, ""};
    const uint32_t r0 = nodes[0]->engine->grant(1, got0.data(), kLen);
    assert_int_equal(rttcc_rma_get_atomic(&o0, 1, k0, 0, kLen, r0, kTag), RTTCC_DONE);
    bool died;
    {
        NoMemory none;
        died = run_until(nodes, [&] { return !nodes[1]->dead.empty(); });
    }
    assert_true(died);
    assert_true(said(*nodes[1], 0, "out of memory for a reply of 150000 bytes"));
    settle(nodes);
    assert_int_equal(replies(*nodes[0], r0), 0);

    const uint32_t r2 = nodes[2]->engine->grant(1, got2.data(), kLen);
    assert_int_equal(rttcc_rma_get_atomic(&o2, 1, k2, 0, kLen, r2, kTag), RTTCC_DONE);
    assert_true(run_until(nodes, [&] { return replies(*nodes[2], r2) == 1; }));
    assert_true(got2 == window);
    assert_int_equal(nodes[1]->dead.size(), 1);
}

// A chunked message needs a reassembly buffer; without memory for it the
// receiver declares the sender dead with the reason (its chunk is already
// accepted, the message can never be whole).  It wrote the chunk through
// a null buffer before.  Node 1 still hears node 2.
static void test_a_message_without_memory_to_reassemble_declares_its_sender_dead(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 3, {}, [](rttcc_config_t &c) { c.agent = false; });
    std::vector<uint8_t> msg = make_message(7, kLen);
    iovec v{msg.data(), msg.size()};
    int rc;
    bool died;
    {
        NoMemory none;
        rc = nodes[0]->engine->send(1, kTag, &v, 1, &msg);  // no copy: zero-copy
        died = rc == RTTCC_OK && run_until(nodes, [&] { return !nodes[1]->dead.empty(); });
    }
    assert_int_equal(rc, RTTCC_OK);
    assert_true(died);
    assert_true(said(*nodes[1], 0, "out of memory to reassemble a message of 150000 bytes"));
    assert_true(nodes[1]->received.empty());
    std::vector<uint8_t> other = make_message(8, kLen);
    iovec o{other.data(), other.size()};
    assert_int_equal(nodes[2]->engine->send(1, kTag, &o, 1, &other), RTTCC_OK);
    assert_true(run_until(nodes, [&] { return nodes[1]->received.size() == 1; }));
    assert_true(nodes[1]->received[0].bytes == other);
    assert_int_equal(nodes[1]->dead.size(), 1);
}

// A large plain get's reply is sent from the window itself; revoking the
// window copies what is still to go.  Without memory for that copy, the
// asker is declared dead and its reply dropped: the freed window is never
// read (it is overwritten here, and no reply lands).
static void test_revoking_without_memory_for_a_reply_copy_declares_its_asker_dead(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) {
        c.send_credits = 2;  // the reply goes two segments per round trip: it is in flight at the revoke
        c.agent = false;
    });
    Target t(nodes);
    std::vector<uint8_t> window = make_message(2, kLen);
    const std::vector<uint8_t> was = window;
    const uint32_t key = t.expose(0, window);
    std::vector<uint8_t> got(kLen, 0);
    rttcc_engine o{nodes[0]->engine, ""};
    const uint32_t reply = nodes[0]->engine->grant(1, got.data(), kLen);
    assert_int_equal(rttcc_rma_get(&o, 1, key, 0, kLen, reply, kTag), RTTCC_DONE);
    nodes[0]->engine->progress();  // the request goes
    nodes[1]->engine->progress();  // served: the reply's first two segments go
    assert_int_equal(nodes[1]->engine->stats().msgs_rx, 1);
    bool revoked;
    {
        NoMemory none;
        revoked = nodes[1]->engine->revoke(key);
    }
    assert_true(revoked);
    std::fill(window.begin(), window.end(), 0xdd);  // freed
    settle(nodes);
    assert_true(said(*nodes[1], 0, "out of memory for a copy of an RMA reply"));
    assert_int_equal(replies(*nodes[0], reply), 0);
    for (size_t i = 0; i < kLen; ++i)  // what landed before the revoke is the window as it was
        if (got[i] != 0 && got[i] != was[i]) fail_msg("byte %zu of the reply is %#x, not %#x", i, got[i], was[i]);
}

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_message_without_memory_for_its_copy_goes_zero_copy),
        cmocka_unit_test(test_a_small_message_without_memory_is_refused_whole),
        cmocka_unit_test(test_a_reply_without_memory_declares_its_asker_dead),
        cmocka_unit_test(test_a_message_without_memory_to_reassemble_declares_its_sender_dead),
        cmocka_unit_test(test_revoking_without_memory_for_a_reply_copy_declares_its_asker_dead),
        cmocka_unit_test(test_fault_injection_sends_without_memory),
        cmocka_unit_test(test_a_message_cut_without_memory_goes_on_later),
        cmocka_unit_test(test_send_now_without_memory_for_what_is_queued_is_busy),
        cmocka_unit_test(test_progress_without_memory_for_a_segment_goes_on_later),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
