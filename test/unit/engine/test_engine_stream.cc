// A stream's cut and the wire's GSO groups (Engine::defers_short_group):
// over an in-memory wire that says it joins 8 datagrams into a group, a
// zero-copy stream's send calls carry whole groups while an ACK is on its
// way, and every byte still arrives; what fits the room, a lone message or
// a stream's end, goes at once; a congestion window of less than four
// groups is never held back.
#include <memory>
#include <vector>

#include "cmocka_cxx.h"
#include "engine_harness.h"

using namespace rttcc;
using namespace rttcc_test;

namespace {

constexpr uint32_t kGroup = 8;

// Passes everything to the wire inside and says it groups kGroup datagrams
// (as UDP GSO does 44 at MTU 1500); records each data-channel send call's
// datagram count.
class GroupingWire final : public Wire {
public:
    GroupingWire(std::unique_ptr<Wire> inner, std::vector<int> *calls) : inner_(std::move(inner)), calls_(calls) {}
    const char *name() const override { return "grouping"; }
    size_t local_address(Channel ch, void *b, size_t c) const override { return inner_->local_address(ch, b, c); }
    bool resolve(Channel ch, const void *a, size_t l, WireHandle *o, std::string *e) override {
        return inner_->resolve(ch, a, l, o, e);
    }
    size_t path_datagram(const void *a, size_t l) const override { return inner_->path_datagram(a, l); }
    uint32_t group_datagrams(size_t) const override { return kGroup; }
    int tx_burst(Channel ch, TxDatagram *d, int n) override {
        if (ch == kData && calls_) calls_->push_back(n);
        return inner_->tx_burst(ch, d, n);
    }
    int rx_burst(Channel ch, RxDatagram *d, int n) override { return inner_->rx_burst(ch, d, n); }

private:
    std::unique_ptr<Wire> inner_;
    std::vector<int> *calls_;
};

struct Stream {
    MemNetwork net{1500};  // 1428-byte segments
    std::vector<int> calls;  // node 0's data send calls, datagrams each
    std::vector<std::unique_ptr<Node>> nodes;
    explicit Stream(void (*tune)(rttcc_config_t &)) {
        nodes = make_nodes(net, 2, {}, tune, nullptr, false, [this](int i, std::unique_ptr<Wire> w) {
            return std::unique_ptr<Wire>(std::make_unique<GroupingWire>(std::move(w), i == 0 ? &calls : nullptr));
        });
    }
    // Node 0 sends `count` messages of `len` bytes zero-copy to node 1 and
    // both progress until node 1 has them; each is checked byte for byte.
    void send(uint32_t count, size_t len) {
        const size_t received = nodes[1]->received.size(), completed = nodes[0]->completed.size();
        std::vector<std::vector<uint8_t>> msgs;
        for (uint32_t i = 0; i < count; ++i) msgs.push_back(make_message(i, len));
        for (auto &m : msgs) {
            iovec b{m.data(), m.size()};
            assert_int_equal(nodes[0]->engine->send(1, 1, &b, 1, &m), RTTCC_OK);
        }
        assert_true(run_until(nodes, [&] { return nodes[1]->received.size() == received + count; }));
        assert_true(run_until(nodes, [&] { return nodes[0]->completed.size() == completed + count; }));
        for (uint32_t i = 0; i < count; ++i) assert_true(nodes[1]->received[received + i].bytes == msgs[i]);
    }
    // Send calls before the last whose datagrams are not whole groups.
    size_t short_calls() const {
        size_t n = 0;
        for (size_t i = 0; i + 1 < calls.size(); ++i) n += calls[i] % kGroup != 0;
        return n;
    }
    uint64_t deferred() const { return nodes[0]->engine->stats().short_groups_deferred; }
};

// Node 1 reads 20 datagrams a burst and ACKs at a burst's end, so an ACK
// frees what arrived, rarely whole groups.
void stream_tune(rttcc_config_t &c) { c.rx_batch = 20; }

}  // namespace

// 40 messages of 48 segments (6 groups each), a stream of 1920 segments
// through 256 credits: its send calls are whole groups but the last (without
// the wait, every other one ended in a group of 4), the cut waited for the
// ACK on its way, and every byte arrived.
static void test_a_stream_sends_whole_groups(void **) {
    Stream s(stream_tune);
    s.send(40, 48 * 1428);
    assert_true(s.calls.size() > 10);
    assert_int_equal(s.short_calls(), 0);
    assert_true(s.deferred() > 0);
}

// What fits the room goes at once: one message of 20 segments, then one
// of 200 (under the 256 credits), each in one pass's send calls, nothing
// deferred.
static void test_what_fits_goes_at_once(void **) {
    Stream s(stream_tune);
    s.send(1, 20 * 1428);
    s.send(1, 200 * 1428);
    assert_int_equal(s.deferred(), 0);
}

// A congestion window of fewer than four groups is never held back:
// credits of 24 (3 groups) send what they may.
static void test_a_small_window_is_not_held_back(void **) {
    Stream s([](rttcc_config_t &c) {
        c.rx_batch = 20;
        c.send_credits = 3 * kGroup;
    });
    s.send(10, 65536);
    assert_int_equal(s.deferred(), 0);
}

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_stream_sends_whole_groups),
        cmocka_unit_test(test_what_fits_goes_at_once),
        cmocka_unit_test(test_a_small_window_is_not_held_back),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
