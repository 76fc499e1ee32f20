// Two (or more) engines in one process over a MemNetwork, with optional
// fault injection, recording what each delivers and completes.
#pragma once
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cmocka_cxx.h"
#include "engine/engine.h"
#include "wire/faulty_wire.h"
#include "wire/mem_wire.h"

namespace rttcc_test {

// A wire that timestamps like the kernel does, on the engines' clock:
// arrivals are stamped a little before the engine reads them (rx_lead) and
// stamped sends are reported with their transmit time a little after the
// post (tx_lag).
class StampingWire final : public rttcc::Wire {
public:
    StampingWire(std::unique_ptr<rttcc::Wire> inner, const rttcc::Clock &clock, rttcc::nanos rx_lead,
                 rttcc::nanos tx_lag)
        : inner_(std::move(inner)), clock_(clock), rx_lead_(rx_lead), tx_lag_(tx_lag) {}
    const char *name() const override { return "stamping"; }
    size_t local_address(rttcc::Channel ch, void *b, size_t c) const override { return inner_->local_address(ch, b, c); }
    bool resolve(rttcc::Channel ch, const void *a, size_t l, rttcc::WireHandle *o, std::string *e) override {
        return inner_->resolve(ch, a, l, o, e);
    }
    size_t path_datagram(const void *a, size_t l) const override { return inner_->path_datagram(a, l); }
    rttcc::TsSource stamp_source() const override { return rttcc::TsSource::kKernel; }
    int tx_burst(rttcc::Channel ch, rttcc::TxDatagram *d, int n) noexcept override {
        const int sent = inner_->tx_burst(ch, d, n);
        for (int i = 0; i < sent; ++i)
            if (d[i].stamp_cookie) {
                stamps_.push_back({d[i].stamp_cookie, clock_.now() + tx_lag_, rttcc::TsSource::kKernel});
                ++stamped;
            }
        return sent;
    }
    int rx_burst(rttcc::Channel ch, rttcc::RxDatagram *d, int n) override {
        const int got = inner_->rx_burst(ch, d, n);
        const rttcc::nanos now = clock_.now();
        for (int i = 0; i < got; ++i) {
            d[i].rx_stamp = now - rx_lead_;
            d[i].rx_source = rttcc::TsSource::kKernel;
        }
        return got;
    }
    int tx_stamps(rttcc::TxStamp *out, int n) override {
        int k = 0;
        for (; k < n && !stamps_.empty(); ++k) {
            out[k] = stamps_.front();
            stamps_.erase(stamps_.begin());
        }
        return k;
    }
    uint64_t stamped = 0;  // datagrams sent with a stamp cookie

private:
    std::unique_ptr<rttcc::Wire> inner_;
    const rttcc::Clock &clock_;
    rttcc::nanos rx_lead_, tx_lag_;
    std::vector<rttcc::TxStamp> stamps_;  // reported by the next tx_stamps
};

struct Node {
    struct Received {
        uint32_t peer;
        uint8_t tag;
        std::vector<uint8_t> bytes;
    };
    std::vector<Received> received;     // every delivery, in order
    std::vector<void *> completed;      // cookies reported done OK
    std::vector<void *> failed;         // cookies reported failed
    std::vector<uint32_t> dead;         // peers declared dead
    std::vector<std::string> dead_why;  // and why, as the engine said it
    std::vector<uint32_t> unknown;      // unknown senders reported
    struct Landed {
        uint32_t peer, key;
        uint64_t offset;
        size_t len;
        uint8_t tag;
    };
    std::vector<Landed> puts;           // puts that landed whole
    std::function<void(uint32_t)> add_unknown;  // how to add one, if set
    std::function<void(uint32_t)> on_delivery;  // called with the sender of each delivery, if set
    std::vector<uint8_t> address;       // what this node publishes
    std::shared_ptr<rttcc::Engine> engine;  // shared as the C handle's (an exchange hub watches it)
    const rttcc::Clock *clock = &rttcc::monotonic_clock();  // the engine's (its network's time)
    rttcc::ManualClock *manual = nullptr;  // that clock, when the test moves it
    rttcc::FaultyWire *faults = nullptr;  // fault injection (rates, drop_if)
    StampingWire *stamps = nullptr;       // set when kernel-like stamps were asked for

    static void on_recv(void *u, uint32_t peer, uint8_t tag, const void *d, size_t n) {
        auto *self = static_cast<Node *>(u);
        const auto *b = static_cast<const uint8_t *>(d);
        self->received.push_back({peer, tag, std::vector<uint8_t>(b, b + n)});
        if (self->on_delivery) self->on_delivery(peer);
    }
    static void on_done(void *u, void *cookie, int status) {
        auto *self = static_cast<Node *>(u);
        (status == RTTCC_OK ? self->completed : self->failed).push_back(cookie);
    }
    static void on_dead(void *u, uint32_t peer, const char *why) {
        static_cast<Node *>(u)->dead.push_back(peer);
        static_cast<Node *>(u)->dead_why.push_back(why);
    }
    static void on_put(void *u, uint32_t peer, uint32_t key, uint64_t offset, size_t len, uint8_t tag) {
        static_cast<Node *>(u)->puts.push_back({peer, key, offset, len, tag});
    }
    static void on_unknown(void *u, uint32_t peer) {
        auto *self = static_cast<Node *>(u);
        self->unknown.push_back(peer);
        if (self->add_unknown) self->add_unknown(peer);
    }
};

inline rttcc_config_t test_config(uint32_t self) {
    rttcc_config_t c;
    rttcc_config_defaults(&c);
    c.cc = RTTCC_CC_NONE;  // these tests pin the reliability machinery; congestion control has its own
    c.self = self;
    c.job_key = 0x1234;
    c.retrans_timeout_us = 20000;  // first touches of big buffers can stall a node for ms,
    c.min_rto_us = 20000;          // longer than the microsecond RTTs of the in-memory wire
    c.max_rto_us = 80000;
    c.rto_jitter_pct = 0;  // exact timeouts; test_engine_rack tests the jitter
    c.max_message = 1 << 20;
    c.send_copy_max = 0;  // messages above inline_max go zero-copy, as the sizes here assume (test_engine_copy)
    c.agent = false;  // the test drives every engine; tests of the liveness agent turn it on
    c.thread_safe = std::getenv("RTTCC_TEST_THREAD_SAFE") != nullptr;  // test/tsan: the locked engine
    return c;
}

// How a test puts its own wire around node i's (nullptr: none), and gives
// node i a clock domain (nullptr, or none returned: the engine has none).
using WrapWire = std::function<std::unique_ptr<rttcc::Wire>(int i, std::unique_ptr<rttcc::Wire>)>;
using MakeClock = std::function<std::unique_ptr<rttcc::ClockDomain>(int i)>;

// Builds n nodes, all peers of each other.
inline std::vector<std::unique_ptr<Node>> make_nodes(rttcc::MemNetwork &net, int n,
                                                     rttcc::FaultRates faults = {},
                                                     void (*tune)(rttcc_config_t &) = nullptr,
                                                     bool (*connect)(int from, int to) = nullptr,
                                                     bool kernel_stamps = false, const WrapWire &wrap = nullptr,
                                                     const MakeClock &clock = nullptr) {
    std::vector<std::unique_ptr<Node>> nodes;
    std::vector<std::vector<uint8_t>> addrs;
    for (int i = 0; i < n; ++i) {
        auto node = std::make_unique<Node>();
        rttcc_config_t cfg = test_config(static_cast<uint32_t>(i));
        if (tune) tune(cfg);
        std::unique_ptr<rttcc::Wire> wire = std::make_unique<rttcc::MemWire>(net);
        auto fw = std::make_unique<rttcc::FaultyWire>(std::move(wire), faults, 1000 + i, cfg.tx_batch);
        node->faults = fw.get();  // with no rates and no drop_if it only passes datagrams on
        wire = std::move(fw);
        if (kernel_stamps) {
            auto sw = std::make_unique<StampingWire>(std::move(wire), net.time(), rttcc::usec(3), rttcc::usec(2));
            node->stamps = sw.get();
            wire = std::move(sw);
        }
        if (wrap) wire = wrap(i, std::move(wire));
        rttcc_callbacks_t cb{node.get(), Node::on_recv, Node::on_done, Node::on_dead, Node::on_unknown, Node::on_put};
        node->engine = std::make_unique<rttcc::Engine>(cfg, cb, std::move(wire), clock ? clock(i) : nullptr, net.time());
        node->clock = &net.time();
        if (!net.real_time) node->manual = &net.clock;
        std::vector<uint8_t> a(256);
        a.resize(node->engine->local_address(a.data(), a.size()));
        addrs.push_back(a);
        node->address = a;
        nodes.push_back(std::move(node));
    }
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
            if (i == j || (connect && !connect(i, j))) continue;
            std::string err;
            if (!nodes[i]->engine->add_peer(static_cast<uint32_t>(j), addrs[j].data(), addrs[j].size(), &err))
                throw std::runtime_error(err);
        }
    return nodes;
}

// Where x is in v (a node's completed or failed cookies); v.size() if absent.
inline size_t position(const std::vector<void *> &v, const void *x) {
    return static_cast<size_t>(std::find(v.begin(), v.end(), x) - v.begin());
}

// Node n's secret, read from the address it publishes (what the modex
// carries): what datagrams to n are signed with (mac.h).
inline rttcc::SecretKey published_key(const Node &n) {
    rttcc::SecretKey k;
    std::memcpy(k.data(), n.address.data() + n.address.size() - 8 - k.size(), k.size());  // before the two 4-byte mem addresses
    return k;
}

// Pattern byte of message `msg` at offset `i`.
inline uint8_t pattern(uint32_t msg, size_t i) { return static_cast<uint8_t>(msg * 131 + i * 7 + (i >> 8)); }

inline std::vector<uint8_t> make_message(uint32_t msg, size_t len) {
    std::vector<uint8_t> b(len);
    for (size_t i = 0; i < len; ++i) b[i] = pattern(msg, i);
    return b;
}

// A header as a process of the test job (test_config) writes it: the
// caller fills in the rest and signs it.
inline rttcc::PacketHeader forged_header(rttcc::PacketType t, uint16_t payload) {
    rttcc::PacketHeader h{};
    h.magic = rttcc::kMagic;
    h.version = rttcc::kVersion;
    h.type = static_cast<uint8_t>(t);
    h.job_key = 0x1234;
    h.payload_len = payload;
    return h;
}

// Queues a datagram for node `to` as if node `from` had sent it on `ch`.
inline void inject(rttcc::MemNetwork &net, uint32_t from, uint32_t to, rttcc::Channel ch, const rttcc::PacketHeader &h,
                   const std::vector<uint8_t> &payload) {
    std::vector<uint8_t> d(4 + sizeof h + payload.size());
    std::memcpy(d.data(), &from, 4);
    std::memcpy(d.data() + 4, &h, sizeof h);
    std::copy(payload.begin(), payload.end(), d.begin() + 4 + sizeof h);
    std::lock_guard<std::mutex> g(net.mutex());
    net.queue(to, ch).push_back(d);
}

// Queues `bytes` for node `to` as node `from`'s next data segment on the
// engine's RMA tag, signed as `from` signs: an RMA request no engine made.
inline void inject_request(rttcc::MemNetwork &net, std::vector<std::unique_ptr<Node>> &nodes, uint32_t from,
                           uint32_t to, const std::vector<uint8_t> &bytes) {
    rttcc::PacketHeader h = forged_header(rttcc::PacketType::DATA, static_cast<uint16_t>(bytes.size()));
    h.tag = RTTCC_TAG_RMA;
    h.seq = nodes[to]->engine->peer(from)->rx.next();
    h.tx_id = rttcc::transmission_id(h.seq, 0);
    iovec payload{const_cast<uint8_t *>(bytes.data()), bytes.size()};
    h.mac = rttcc::datagram_mac(RTTCC_AUTH_HEADER, published_key(*nodes[to]), h, &payload, 1);
    inject(net, from, to, rttcc::kData, h, bytes);
}

// How many of a queue's datagrams from `first` on ask for their ACK at
// once (kFlagAckNow).
inline size_t asking_ack(const rttcc::MemNetwork::Queue &q, size_t first) {
    size_t asks = 0;
    for (size_t i = first; i < q.size(); ++i) {
        rttcc::PacketHeader h;
        std::memcpy(&h, q[i].data() + sizeof(uint32_t), sizeof h);  // after the sender's index
        asks += (h.flags & rttcc::kFlagAckNow) != 0;
    }
    return asks;
}

// The nodes' time: their engines' clock.
inline rttcc::nanos now_of(const std::vector<std::unique_ptr<Node>> &nodes) { return nodes[0]->clock->now(); }

// A round of the tests' loops: kRound of the network's time passes (real
// time passes by itself), then the nodes progress in turn.  A datagram
// arrives in the round it was sent or the next, an answer to it in the
// next (a round trip takes one round); a timer fires in the first round
// at or after its deadline: exactly on it, for deadlines in whole rounds.
constexpr rttcc::nanos kRound = rttcc::usec(10);
inline void next_round(std::vector<std::unique_ptr<Node>> &nodes) {
    if (nodes[0]->manual) nodes[0]->manual->advance(kRound);
}

// Progresses every node, round by round, until pred() or `seconds` of the
// nodes' time pass.
template <typename P>
bool run_until(std::vector<std::unique_ptr<Node>> &nodes, P &&pred, double seconds = 10) {
    const rttcc::nanos end = now_of(nodes) + static_cast<rttcc::nanos>(seconds * 1e9);
    while (!pred()) {
        if (now_of(nodes) > end) return false;
        next_round(nodes);
        for (auto &n : nodes) n->engine->progress();
    }
    return true;
}

// Progresses node 0 alone (node 1's application is "computing", or node 1
// is gone) for `ms` of the nodes' time, or until stop() holds.
template <typename F>
void only_node0(std::vector<std::unique_ptr<Node>> &nodes, unsigned ms, F &&stop) {
    const rttcc::nanos end = now_of(nodes) + rttcc::msec(ms);
    while (!stop() && now_of(nodes) < end) {
        next_round(nodes);
        nodes[0]->engine->progress();
    }
}
inline void only_node0(std::vector<std::unique_ptr<Node>> &nodes, unsigned ms) {
    only_node0(nodes, ms, [] { return false; });
}

// Sends `msg` (zero-copy) from node 0 to node 1.
inline void send_big(std::vector<std::unique_ptr<Node>> &nodes, std::vector<uint8_t> &msg) {
    iovec b{msg.data(), msg.size()};
    assert_int_equal(nodes[0]->engine->send(1, 1, &b, 1, &msg), RTTCC_OK);
}

// Sends node 1 a message from node 0, then progresses node 0 alone until
// it declares node 1 dead (or `ms` pass); returns how long after the send.
inline rttcc::nanos send_until_dead(std::vector<std::unique_ptr<Node>> &nodes, std::vector<uint8_t> &msg, unsigned ms) {
    const rttcc::nanos start = now_of(nodes);
    send_big(nodes, msg);
    only_node0(nodes, ms, [&] { return !nodes[0]->dead.empty(); });
    assert_int_equal(nodes[0]->dead.size(), 1);
    return now_of(nodes) - start;
}

// Sends `count` messages of sizes cycling through `sizes` from node 0 to
// node 1 and checks that exactly those bytes arrive, once each.
inline void exchange(std::vector<std::unique_ptr<Node>> &nodes, const std::vector<size_t> &sizes,
                     uint32_t count) {
    std::vector<std::vector<uint8_t>> sent;
    for (uint32_t m = 0; m < count; ++m) sent.push_back(make_message(m, sizes[m % sizes.size()]));
    uint32_t next = 0;
    size_t zero_copy = 0;
    // Submit as the engine accepts them; zero-copy buffers stay alive in `sent`.
    auto all_done = [&] {
        while (next < count) {
            iovec iov{sent[next].data(), sent[next].size()};
            const int rc = nodes[0]->engine->send(1, static_cast<uint8_t>(next % 200), &iov, 1, &sent[next]);
            assert_true(rc == RTTCC_OK || rc == RTTCC_DONE);
            zero_copy += rc == RTTCC_OK;
            ++next;
        }
        return nodes[1]->received.size() >= count && nodes[0]->completed.size() == zero_copy;
    };
    assert_true(run_until(nodes, all_done, 30));
    assert_int_equal(nodes[1]->received.size(), count);
    // Delivered on arrival: order may differ, so match by tag and content.
    std::vector<bool> seen(count, false);
    for (const auto &r : nodes[1]->received) {
        bool matched = false;
        for (uint32_t m = r.tag; m < count; m += 200) {
            if (!seen[m] && r.bytes == sent[m]) {
                seen[m] = matched = true;
                break;
            }
        }
        assert_true(matched);
    }
    assert_int_equal(nodes[0]->failed.size(), 0);
}

}  // namespace rttcc_test
