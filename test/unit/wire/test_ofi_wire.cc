// ofi_wire: two libfabric FI_EP_DGRAM wires in one process (the udp
// provider on loopback) exchange datagrams on both channels, then two
// engines run the whole protocol over them.  Sends that cannot go (over a
// size limit, refused by the provider, failed in the completion queue) are
// reported, and an engine gives such a peer up.
#include <netinet/in.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>

#include <cerrno>
#include <cstdlib>

#include "cmocka_cxx.h"
#include "engine_harness.h"
#include "wire/ofi_wire.h"

using namespace rttcc;
using namespace rttcc_test;

static rttcc_config_t ofi_config(uint32_t self) {
    rttcc_config_t c = test_config(self);
    c.wire = RTTCC_WIRE_OFI;
    c.if_include = const_cast<char *>("lo");
    return c;
}

static std::unique_ptr<OfiWire> open_wire(uint32_t self, uint32_t cmd_mtu = 0) {
    std::string err;
    rttcc_config_t c = ofi_config(self);
    if (cmd_mtu) c.cmd_mtu = cmd_mtu;
    auto w = OfiWire::open(c, &err);
    if (!w) print_error("OfiWire::open: %s\n", err.c_str());
    return w;
}

static int setup(void **) {
    setenv("RTTCC_OFI_PROVIDER", "udp", 1);
    return 0;
}

static WireHandle resolve_peer(OfiWire &self, OfiWire &peer, Channel ch) {
    uint8_t addr[256];
    const size_t n = peer.local_address(ch, addr, sizeof addr);
    assert_true(n > 0);
    WireHandle h;
    std::string err;
    assert_true(self.resolve(ch, addr, n, &h, &err));
    return h;
}

static void test_datagrams_both_channels(void **) {
    auto a = open_wire(0), b = open_wire(1);
    assert_non_null(a.get());
    assert_non_null(b.get());
    assert_string_equal(a->provider(), "udp");
    for (Channel ch : {kCmd, kData}) {
        const WireHandle to_b = resolve_peer(*a, *b, ch);
        const WireHandle to_a = resolve_peer(*b, *a, ch);
        uint8_t addr[256];
        const size_t alen = b->local_address(kData, addr, sizeof addr);
        const size_t max = ch == kCmd ? 1024 : a->path_datagram(addr, alen);
        for (size_t size : {size_t{1}, size_t{64}, max / 2, max}) {
            std::vector<uint8_t> head(16, 0xab), body = make_message(7, size - 16 > size ? 0 : size - 16);
            TxDatagram d{to_b, {{head.data(), head.size()}, {body.data(), body.size()}}, 2, 0};
            assert_int_equal(a->tx_burst(ch, &d, 1), 1);
            RxDatagram r[4];
            int got = 0;
            for (int spin = 0; spin < 1000000 && got == 0; ++spin) got = b->rx_burst(ch, r, 4);
            assert_int_equal(got, 1);
            assert_int_equal(r[0].len, head.size() + body.size());
            assert_memory_equal(r[0].buf, head.data(), head.size());
            assert_memory_equal(r[0].buf + head.size(), body.data(), body.size());
            if (b->verifies_source()) assert_true(r[0].src == to_a);
        }
    }
}

// Spins b's receive side until a datagram comes; returns its length (0: none).
static size_t receive_one(OfiWire &b, Channel ch, uint8_t *first_byte) {
    RxDatagram r[4];
    int got = 0;
    for (int spin = 0; spin < 1000000 && got == 0; ++spin) got = b.rx_burst(ch, r, 4);
    if (got == 0) return 0;
    *first_byte = r[0].buf[0];
    return r[0].len;
}

static void send_bytes(OfiWire &a, Channel ch, WireHandle to, size_t len, uint8_t fill) {
    std::vector<uint8_t> bytes(len, fill);
    TxDatagram d{to, {{bytes.data(), bytes.size()}}, 1, 0};
    assert_int_equal(a.tx_burst(ch, &d, 1), 1);  // taken: sent, or dropped for good
}

// A datagram over our provider's largest message, or over the largest the
// peer's channel takes (its cmd_mtu here), is dropped whole and reported as
// EMSGSIZE, not cut short; the next one arrives.
static void test_oversized_datagrams_are_refused(void **) {
    auto a = open_wire(0, 1024), b = open_wire(1, 512);
    assert_non_null(a.get());
    assert_non_null(b.get());
    uint8_t addr[256];
    const size_t alen = b->local_address(kData, addr, sizeof addr);
    const size_t data_max = a->path_datagram(addr, alen);
    for (Channel ch : {kData, kCmd}) {
        const WireHandle to_b = resolve_peer(*a, *b, ch);
        const size_t over = ch == kData ? data_max + 1 : 513, fits = ch == kData ? data_max : 512;
        send_bytes(*a, ch, to_b, over, 0xee);
        WireFailure f[4];
        assert_int_equal(a->failures(f, 4), 1);
        assert_true(f[0].dest == to_b);
        assert_int_equal(f[0].error, EMSGSIZE);
        assert_int_equal(a->failures(f, 4), 0);
        send_bytes(*a, ch, to_b, fits, 0x11);
        uint8_t first = 0;
        assert_int_equal(receive_one(*b, ch, &first), fits);
        assert_int_equal(first, 0x11);
    }
}

// b's data address with its IPv4 address made the broadcast address: the
// kernel refuses the udp provider's sends there (EACCES without
// SO_BROADCAST), and the provider returns that from fi_send.
static std::vector<uint8_t> broadcast_address(const uint8_t *addr, size_t len) {
    std::vector<uint8_t> a(addr, addr + len);
    constexpr size_t kHead = 2 * sizeof(uint32_t);  // max_datagram, name_len
    sockaddr_in sin;
    assert_int_equal(len, kHead + sizeof sin);
    std::memcpy(&sin, a.data() + kHead, sizeof sin);
    assert_int_equal(sin.sin_family, AF_INET);
    sin.sin_addr.s_addr = htonl(INADDR_BROADCAST);
    std::memcpy(a.data() + kHead, &sin, sizeof sin);
    return a;
}

static void test_provider_refusals_are_reported(void **) {
    auto a = open_wire(0), b = open_wire(1);
    assert_non_null(a.get());
    assert_non_null(b.get());
    uint8_t addr[256];
    const size_t alen = b->local_address(kData, addr, sizeof addr);
    const std::vector<uint8_t> bad = broadcast_address(addr, alen);
    WireHandle to_bad;
    std::string err;
    assert_true(a->resolve(kData, bad.data(), bad.size(), &to_bad, &err));
    for (int i = 0; i < 3; ++i) send_bytes(*a, kData, to_bad, 100, 0x22);
    WireFailure f[4];
    assert_int_equal(a->failures(f, 4), 3);
    for (int i = 0; i < 3; ++i) {
        assert_true(f[i].dest == to_bad);
        assert_int_equal(f[i].error, EACCES);
    }
    assert_string_equal(a->refuser(), "libfabric's udp provider");
    assert_string_equal(a->error_text(EACCES).c_str(), fi_strerror(EACCES));
    // The slots of refused sends are free again: a full queue's worth still goes.
    const WireHandle to_b = resolve_peer(*a, *b, kData);
    for (int i = 0; i < 2048; ++i) {
        send_bytes(*a, kData, to_b, 64, 0x33);
        RxDatagram r[8];
        b->rx_burst(kData, r, 8);
    }
}

// The udp provider reports every send error from fi_send itself, never as
// an error completion; this test stands in for providers that do (usnic,
// verbs, efa): its operations in front of the transmit queue's turn the next
// completion into an error entry (FI_EIO) for fi_cq_readerr.
namespace {
struct ErrorCompletions {
    fi_ops_cq ops;              // ours: the provider's but read/readerr
    fi_ops_cq *provider;        // the provider's own
    bool failing = false;       // an error entry waits for readerr
    void *failed = nullptr;     // its op_context
    int left = 0;               // completions still to turn into errors
};
ErrorCompletions injected;

ssize_t read_with_errors(fid_cq *cq, void *buf, size_t count) {
    if (injected.failing) return -FI_EAVAIL;
    if (injected.left == 0) return injected.provider->read(cq, buf, count);
    fi_cq_msg_entry e;
    const ssize_t n = injected.provider->read(cq, &e, 1);
    if (n != 1) return n;
    --injected.left;
    injected.failing = true;
    injected.failed = e.op_context;
    return -FI_EAVAIL;
}

ssize_t readfrom_with_errors(fid_cq *cq, void *buf, size_t count, fi_addr_t *from) {
    return injected.failing ? -FI_EAVAIL : injected.provider->readfrom(cq, buf, count, from);
}

ssize_t readerr_injected(fid_cq *cq, fi_cq_err_entry *buf, uint64_t flags) {
    if (!injected.failing) return injected.provider->readerr(cq, buf, flags);
    *buf = fi_cq_err_entry{};
    buf->op_context = injected.failed;
    buf->err = FI_EIO;
    injected.failing = false;
    return 1;
}
}  // namespace

static void test_error_completions_are_reported(void **) {
    auto a = open_wire(0), b = open_wire(1);
    assert_non_null(a.get());
    assert_non_null(b.get());
    const WireHandle to_b = resolve_peer(*a, *b, kData);
    fid_cq *cq = a->tx_queue(kData);
    injected.provider = cq->ops;
    injected.ops = *cq->ops;
    injected.ops.read = read_with_errors;
    injected.ops.readerr = readerr_injected;
    injected.left = 2;
    cq->ops = &injected.ops;
    for (int i = 0; i < 4; ++i) send_bytes(*a, kData, to_b, 64, 0x44);  // each send reaps the last one's completion
    WireFailure f[4];
    const int n = a->failures(f, 4);
    cq->ops = injected.provider;
    assert_int_equal(injected.left, 0);
    assert_int_equal(n, 2);
    for (int i = 0; i < n; ++i) {
        assert_true(f[i].dest == to_b);
        assert_int_equal(f[i].error, FI_EIO);
    }
}

// Receive posts that fail: operations in front of an endpoint's fi_recv
// fail it with FI_EIO while `failing`, and count the calls.
namespace {
struct FailingPosts {
    fi_ops_msg ops;          // ours: the provider's but recv
    fi_ops_msg *provider;    // the provider's own
    bool failing = false;
    int calls = 0;
};
FailingPosts posts;

ssize_t recv_or_fail(fid_ep *ep, void *buf, size_t len, void *desc, fi_addr_t src, void *context) {
    ++posts.calls;
    return posts.failing ? -FI_EIO : posts.provider->recv(ep, buf, len, desc, src, context);
}

void intercept_posts(OfiWire &w, Channel ch) {
    fid_ep *ep = w.endpoint(ch);
    posts = FailingPosts{};
    posts.provider = ep->msg;
    posts.ops = *ep->msg;
    posts.ops.recv = recv_or_fail;
    ep->msg = &posts.ops;
}

// Receives on b until one datagram comes or 200 ms pass; true if it came.
bool arrives(OfiWire &b, Channel ch) {
    RxDatagram r[4];
    const nanos deadline = monotonic_now() + msec(200);
    while (monotonic_now() < deadline)
        if (b.rx_burst(ch, r, 4) > 0) return true;
    return false;
}
}  // namespace

// A receive buffer whose post fails (not FI_EAGAIN) is posted again at the
// next burst, not lost: with every post failing, b receives until its
// buffers are all used up; once posts work again, the datagram that was
// waiting arrives.
static void test_a_failed_receive_post_is_retried(void **) {
    auto a = open_wire(0), b = open_wire(1);
    assert_non_null(a.get());
    assert_non_null(b.get());
    const WireHandle to_b = resolve_peer(*a, *b, kData);
    intercept_posts(*b, kData);
    posts.failing = true;
    int received = 0;
    for (; received < 4096; ++received) {
        send_bytes(*a, kData, to_b, 64, 0x55);
        if (!arrives(*b, kData)) break;
    }
    assert_true(received > 0 && received < 4096);  // the buffers ran out
    assert_true(posts.calls >= received);
    posts.failing = false;
    const bool late = arrives(*b, kData);
    b->endpoint(kData)->msg = posts.provider;
    assert_true(late);
    send_bytes(*a, kData, to_b, 64, 0x66);
    assert_true(arrives(*b, kData));
}

// An error entry of no operation (context null) on the receive queue is
// not taken for slot 0's: nothing is posted for it.
static void test_an_error_of_no_receive_posts_nothing(void **) {
    auto a = open_wire(0), b = open_wire(1);
    assert_non_null(a.get());
    assert_non_null(b.get());
    const WireHandle to_b = resolve_peer(*a, *b, kData);
    fid_cq *cq = b->rx_queue(kData);
    injected = ErrorCompletions{};
    injected.provider = cq->ops;
    injected.ops = *cq->ops;
    injected.ops.read = read_with_errors;
    injected.ops.readfrom = readfrom_with_errors;
    injected.ops.readerr = readerr_injected;
    injected.failing = true;  // an error entry of context null waits
    cq->ops = &injected.ops;
    intercept_posts(*b, kData);
    RxDatagram r[4];
    const int got = b->rx_burst(kData, r, 4);
    const int calls = posts.calls;
    b->endpoint(kData)->msg = posts.provider;
    cq->ops = injected.provider;
    assert_int_equal(got, 0);
    assert_false(injected.failing);  // read
    assert_int_equal(calls, 0);
    send_bytes(*a, kData, to_b, 64, 0x77);
    assert_true(arrives(*b, kData));
}

// A wire whose peers' data and command addresses are the broadcast address.
class RefusedWire final : public Wire {
public:
    explicit RefusedWire(std::unique_ptr<OfiWire> inner) : inner_(std::move(inner)) {}
    const char *name() const override { return inner_->name(); }
    size_t local_address(Channel ch, void *b, size_t c) const override { return inner_->local_address(ch, b, c); }
    bool resolve(Channel ch, const void *a, size_t l, WireHandle *o, std::string *e) override {
        const std::vector<uint8_t> bad = broadcast_address(static_cast<const uint8_t *>(a), l);
        return inner_->resolve(ch, bad.data(), bad.size(), o, e);
    }
    size_t path_datagram(const void *a, size_t l) const override { return inner_->path_datagram(a, l); }
    int tx_burst(Channel ch, TxDatagram *d, int n) noexcept override { return inner_->tx_burst(ch, d, n); }
    int rx_burst(Channel ch, RxDatagram *d, int n) override { return inner_->rx_burst(ch, d, n); }
    int failures(WireFailure *out, int n) override { return inner_->failures(out, n); }
    const char *refuser() const override { return inner_->refuser(); }
    std::string error_text(int error) const override { return inner_->error_text(error); }

private:
    std::unique_ptr<OfiWire> inner_;
};

// Two engines over ofi, each on the wire `wrap` makes of its own, each the
// other's peer; peer_timeout_ms 0: the default.
template <typename Wrap>
static std::vector<std::unique_ptr<Node>> ofi_nodes(unsigned peer_timeout_ms, Wrap &&wrap) {
    std::vector<std::unique_ptr<Node>> nodes;
    std::vector<std::vector<uint8_t>> addrs;
    for (uint32_t i = 0; i < 2; ++i) {
        auto node = std::make_unique<Node>();
        auto wire = open_wire(i);
        assert_non_null(wire.get());
        rttcc_callbacks_t cb{node.get(), Node::on_recv, Node::on_done, Node::on_dead, Node::on_unknown, Node::on_put};
        rttcc_config_t cfg = ofi_config(i);
        if (peer_timeout_ms) cfg.peer_timeout_ms = peer_timeout_ms;
        node->engine = std::make_unique<Engine>(cfg, cb, wrap(std::move(wire)));
        std::vector<uint8_t> a(512);
        a.resize(node->engine->local_address(a.data(), a.size()));
        addrs.push_back(a);
        nodes.push_back(std::move(node));
    }
    std::string err;
    for (uint32_t i = 0; i < 2; ++i)
        assert_true(nodes[i]->engine->add_peer(1 - i, addrs[1 - i].data(), addrs[1 - i].size(), &err));
    return nodes;
}

// An engine over ofi whose sends to a peer the provider refuses gives the
// peer up after three, with the provider's word for it, and fails the send
// instead of retransmitting it until the peer timeout.
static void test_engine_gives_up_a_refused_peer(void **) {
    // Without the refusals it would die of the peer timeout, with another reason.
    auto nodes = ofi_nodes(5000, [](std::unique_ptr<OfiWire> w) -> std::unique_ptr<Wire> {
        return std::make_unique<RefusedWire>(std::move(w));
    });
    std::vector<uint8_t> m = make_message(9, 20000);  // over inline_max: zero-copy, so its completion tells
    iovec iov{m.data(), m.size()};
    assert_int_equal(nodes[0]->engine->send(1, 3, &iov, 1, &m), RTTCC_OK);
    assert_true(run_until(nodes, [&] { return !nodes[0]->dead.empty(); }, 30));
    const std::string &why = nodes[0]->dead_why[0];
    assert_true(why.find("libfabric's udp provider refused") != std::string::npos);
    assert_true(why.find(fi_strerror(EACCES)) != std::string::npos);
    assert_true(nodes[0]->engine->stats().send_errors >= 3);
    assert_int_equal(nodes[0]->failed.size(), 1);
}

static void test_engines_over_ofi(void **) {
    auto nodes = ofi_nodes(0, [](std::unique_ptr<OfiWire> w) -> std::unique_ptr<Wire> { return w; });
    std::vector<std::vector<uint8_t>> sent;
    for (size_t size : {size_t{0}, size_t{8}, size_t{1400}, size_t{5000}, size_t{300000}}) sent.push_back(make_message(static_cast<uint32_t>(size), size));
    for (auto &m : sent) {
        iovec iov{m.data(), m.size()};
        const int rc = nodes[0]->engine->send(1, 3, &iov, 1, &m);
        assert_true(rc == RTTCC_OK || rc == RTTCC_DONE);
    }
    assert_true(run_until(nodes, [&] { return nodes[1]->received.size() == sent.size(); }, 20));
    for (auto &m : sent) {
        bool found = false;
        for (auto &r : nodes[1]->received) found |= r.bytes == m;
        assert_true(found);
    }
}

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_datagrams_both_channels, setup),
        cmocka_unit_test_setup(test_engines_over_ofi, setup),
        cmocka_unit_test_setup(test_oversized_datagrams_are_refused, setup),
        cmocka_unit_test_setup(test_provider_refusals_are_reported, setup),
        cmocka_unit_test_setup(test_error_completions_are_reported, setup),
        cmocka_unit_test_setup(test_a_failed_receive_post_is_retried, setup),
        cmocka_unit_test_setup(test_an_error_of_no_receive_posts_nothing, setup),
        cmocka_unit_test_setup(test_engine_gives_up_a_refused_peer, setup),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
