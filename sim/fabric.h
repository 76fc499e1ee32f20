// rttcc_sim's network: hosts and switches joined by full-duplex links.
// Each direction of a link is a Port: a drop-tail output queue (optional
// ECN marking) in front of a transmitter of a given rate, then a
// propagation delay.  Switches forward on shortest paths and spread flows
// over equal-cost next hops by a hash of the flow (ECMP).
//
//   host A --Port--> switch --Port--> host B        one Port per direction
//            queue | wire (bytes*8/rate) | delay -> next node
//
// A host's first Port is its NIC: its queue is the host's send queue.
#pragma once
#include <cstdint>
#include <deque>
#include <memory>
#include <utility>
#include <vector>

#include "event_queue.h"

namespace rttcc::sim {

// A packet's payload handle when it carries nothing anyone reads
// (background traffic): sinks drop it.
constexpr uint64_t kNoPayload = ~uint64_t{0};

struct Packet {
    uint64_t id = 0;       // fabric-wide, in order of injection
    uint64_t flow = 0;     // the ECMP key: one flow, one path, in order
    uint32_t src = 0;      // host node ids
    uint32_t dst = 0;
    uint32_t bytes = 0;    // size on the wire
    uint64_t payload = 0;  // the sender's handle for what the packet carries, or kNoPayload
    bool ect = false;      // ECN-capable
    bool ce = false;       // congestion experienced: marked by a queue
};

struct LinkConfig {
    uint64_t bits_per_s = 10'000'000'000ull;
    nanos delay = 1000;             // propagation
    uint32_t queue_bytes = 1 << 20; // waiting room, the packet being sent excluded
    uint32_t ecn_bytes = 0;         // mark ECT packets that find this much waiting; 0: never
};

struct PortStats {
    uint64_t packets = 0, bytes = 0;  // sent
    uint64_t drops = 0, drop_bytes = 0;
    uint64_t background_drops = 0;    // of them, packets carrying nothing (kNoPayload: a flood's)
    uint64_t marks = 0;
    uint32_t max_queue_bytes = 0;
    nanos busy = 0;                   // time spent sending
};

class Fabric;

class Port final : public EventTarget {
public:
    // Throws std::invalid_argument for a rate of 0 (here and at reconfigure).
    Port(Fabric &fabric, uint32_t from, uint32_t to, const LinkConfig &config);
    Port(const Port &) = delete;
    Port &operator=(const Port &) = delete;

    // Queues p (or starts sending it); false: the queue was full and p is dropped.
    bool offer(Packet p, nanos now);
    uint32_t from() const { return from_; }
    uint32_t to() const { return to_; }
    uint32_t queued_bytes() const { return queued_; }
    uint32_t room() const { return queued_ < config_.queue_bytes ? config_.queue_bytes - queued_ : 0; }
    bool idle() const { return !sending_; }
    const LinkConfig &config() const { return config_; }
    const PortStats &stats() const { return stats_; }
    // New rate, delay or queue (shaping); the packet on the wire keeps its pace.
    void reconfigure(const LinkConfig &config);

    void fire(nanos now, uint64_t what) override;

private:
    enum : uint64_t { kSent = 0, kArrived = 1 };
    static const LinkConfig &checked(const LinkConfig &config);
    void start(nanos now);

    Fabric &fabric_;
    uint32_t from_, to_;
    LinkConfig config_;
    std::deque<Packet> waiting_;
    Packet on_wire_;
    bool sending_ = false;
    std::deque<Packet> in_flight_;  // sent, propagating; constant delay keeps them in order
    uint32_t queued_ = 0;           // bytes waiting
    uint64_t carry_ = 0;            // sub-nanosecond remainder (bit-ns) between back-to-back packets
    nanos started_ = 0;
    PortStats stats_;
};

// Where a host's arriving packets go.
class Sink {
public:
    virtual void deliver(nanos now, const Packet &p) = 0;

protected:
    ~Sink() = default;
};

class Fabric {
public:
    explicit Fabric(EventQueue &events, uint64_t seed = 1) : events_(events), seed_(seed) {}
    Fabric(const Fabric &) = delete;
    Fabric &operator=(const Fabric &) = delete;

    uint32_t add_host();
    uint32_t add_switch();
    // A full-duplex link: one Port from a to b, one from b to a.
    void connect(uint32_t a, uint32_t b, const LinkConfig &a_to_b, const LinkConfig &b_to_a);
    void connect(uint32_t a, uint32_t b, const LinkConfig &both) { connect(a, b, both, both); }
    // After the last connect: every node's equal-cost next hops to every host.
    void build_routes();
    void set_sink(uint32_t host, Sink *sink) { nodes_.at(host).sink = sink; }
    // Told of every packet a queue drops or no route takes (its owner frees what it carries).
    void set_drop_sink(Sink *sink) { drop_sink_ = sink; }
    void dropped(nanos now, const Packet &p) {
        if (drop_sink_) drop_sink_->deliver(now, p);
    }

    // The Ports p would cross from its source host to its destination
    // (ECMP picks as for p itself); empty if no route.
    std::vector<Port *> path(const Packet &p);
    // Injects p at its source host's NIC (stamping its id); false: the NIC's queue dropped it.
    bool send(Packet p);

    EventQueue &events() { return events_; }
    size_t nodes() const { return nodes_.size(); }
    const std::vector<uint32_t> &hosts() const { return hosts_; }
    bool is_host(uint32_t node) const { return nodes_.at(node).host; }
    Port &nic(uint32_t host) { return *ports_.at(nodes_.at(host).ports.at(0)); }
    Port *port(uint32_t from, uint32_t to);  // the Port from one node to a neighbour, or null
    const std::vector<std::unique_ptr<Port>> &ports() const { return ports_; }
    uint64_t delivered() const { return delivered_; }
    uint64_t unroutable() const { return unroutable_; }

    // A Port's delivery to the node at its far end.
    void arrive(uint32_t node, const Packet &p, nanos now);

private:
    struct Node {
        bool host;
        std::vector<uint32_t> ports;   // out of this node
        Sink *sink = nullptr;
        // per destination host (by host index): (first, count) in route_ports_
        std::vector<std::pair<uint32_t, uint32_t>> routes;
    };
    Port *next_hop(uint32_t node, const Packet &p);

    EventQueue &events_;
    uint64_t seed_;
    std::vector<Node> nodes_;
    std::vector<std::unique_ptr<Port>> ports_;  // events point at them: stable addresses
    std::vector<uint32_t> hosts_;               // host index -> node id
    std::vector<uint32_t> host_index_;          // node id -> host index (hosts only)
    std::vector<uint32_t> route_ports_;
    Sink *drop_sink_ = nullptr;
    uint64_t next_id_ = 0, delivered_ = 0, unroutable_ = 0;
};

}  // namespace rttcc::sim
