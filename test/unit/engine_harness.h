// Two (or more) engines in one process over a MemNetwork, with optional
// fault injection, recording what each delivers and completes.
#pragma once
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine.h"
#include "faulty_wire.h"
#include "mem_wire.h"

namespace rttcc_test {

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
    std::vector<uint32_t> unknown;      // unknown senders reported
    std::function<void(uint32_t)> add_unknown;  // how to add one, if set
    std::vector<uint8_t> address;       // what this node publishes
    std::unique_ptr<rttcc::Engine> engine;
    rttcc::FaultyWire *faults = nullptr;  // set when faults were asked for

    static void on_recv(void *u, uint32_t peer, uint8_t tag, const void *d, size_t n) {
        auto *self = static_cast<Node *>(u);
        const auto *b = static_cast<const uint8_t *>(d);
        self->received.push_back({peer, tag, std::vector<uint8_t>(b, b + n)});
    }
    static void on_done(void *u, void *cookie, int status) {
        auto *self = static_cast<Node *>(u);
        (status == RTTCC_OK ? self->completed : self->failed).push_back(cookie);
    }
    static void on_dead(void *u, uint32_t peer, const char *) { static_cast<Node *>(u)->dead.push_back(peer); }
    static void on_unknown(void *u, uint32_t peer) {
        auto *self = static_cast<Node *>(u);
        self->unknown.push_back(peer);
        if (self->add_unknown) self->add_unknown(peer);
    }
};

inline rttcc_config_t test_config(uint32_t self) {
    rttcc_config_t c;
    rttcc_config_defaults(&c);
    c.self = self;
    c.job_key = 0x1234;
    c.retrans_timeout_us = 20000;  // first touches of big buffers can stall a node for ms,
    c.min_rto_us = 20000;          // longer than the microsecond RTTs of the in-memory wire
    c.max_rto_us = 80000;
    c.max_message = 1 << 20;
    return c;
}

// Builds n nodes, all peers of each other.
inline std::vector<std::unique_ptr<Node>> make_nodes(rttcc::MemNetwork &net, int n,
                                                     rttcc::FaultRates faults = {},
                                                     void (*tune)(rttcc_config_t &) = nullptr,
                                                     bool (*connect)(int from, int to) = nullptr) {
    std::vector<std::unique_ptr<Node>> nodes;
    std::vector<std::vector<uint8_t>> addrs;
    for (int i = 0; i < n; ++i) {
        auto node = std::make_unique<Node>();
        rttcc_config_t cfg = test_config(static_cast<uint32_t>(i));
        if (tune) tune(cfg);
        std::unique_ptr<rttcc::Wire> wire = std::make_unique<rttcc::MemWire>(net);
        if (faults.any()) {
            auto fw = std::make_unique<rttcc::FaultyWire>(std::move(wire), faults, 1000 + i);
            node->faults = fw.get();
            wire = std::move(fw);
        }
        rttcc_callbacks_t cb{node.get(), Node::on_recv, Node::on_done, Node::on_dead, Node::on_unknown};
        node->engine = std::make_unique<rttcc::Engine>(cfg, cb, std::move(wire));
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

// Pattern byte of message `msg` at offset `i`.
inline uint8_t pattern(uint32_t msg, size_t i) { return static_cast<uint8_t>(msg * 131 + i * 7 + (i >> 8)); }

inline std::vector<uint8_t> make_message(uint32_t msg, size_t len) {
    std::vector<uint8_t> b(len);
    for (size_t i = 0; i < len; ++i) b[i] = pattern(msg, i);
    return b;
}

// Progresses every node until pred() or the deadline (seconds of wall time).
template <typename P>
bool run_until(std::vector<std::unique_ptr<Node>> &nodes, P &&pred, double seconds = 10) {
    const rttcc::nanos end = rttcc::monotonic_now() + static_cast<rttcc::nanos>(seconds * 1e9);
    while (!pred()) {
        if (rttcc::monotonic_now() > end) return false;
        for (auto &n : nodes) n->engine->progress();
    }
    return true;
}

}  // namespace rttcc_test
