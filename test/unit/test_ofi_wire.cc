// ofi_wire: two libfabric FI_EP_DGRAM wires in one process (the udp
// provider on loopback) exchange datagrams on both channels, then two
// engines run the whole protocol over them.
#include <cstdlib>

#include "cmocka_cxx.h"
#include "engine_harness.h"
#include "ofi_wire.h"

using namespace rttcc;
using namespace rttcc_test;

static rttcc_config_t ofi_config(uint32_t self) {
    rttcc_config_t c = test_config(self);
    c.wire = RTTCC_WIRE_OFI;
    c.if_include = const_cast<char *>("lo");
    return c;
}

static std::unique_ptr<OfiWire> open_wire(uint32_t self) {
    std::string err;
    rttcc_config_t c = ofi_config(self);
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

static void test_engines_over_ofi(void **) {
    std::vector<std::unique_ptr<Node>> nodes;
    std::vector<std::vector<uint8_t>> addrs;
    for (uint32_t i = 0; i < 2; ++i) {
        auto node = std::make_unique<Node>();
        auto wire = open_wire(i);
        assert_non_null(wire.get());
        rttcc_callbacks_t cb{node.get(), Node::on_recv, Node::on_done, Node::on_dead, Node::on_unknown, Node::on_put};
        node->engine = std::make_unique<Engine>(ofi_config(i), cb, std::move(wire));
        std::vector<uint8_t> a(512);
        a.resize(node->engine->local_address(a.data(), a.size()));
        addrs.push_back(a);
        nodes.push_back(std::move(node));
    }
    std::string err;
    assert_true(nodes[0]->engine->add_peer(1, addrs[1].data(), addrs[1].size(), &err));
    assert_true(nodes[1]->engine->add_peer(0, addrs[0].data(), addrs[0].size(), &err));
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
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
