// The engine's Wire in rttcc_sim: each datagram an engine sends becomes a
// Packet on the fabric (its bytes kept in the SimNetwork's buffers), and
// what arrives for a host waits in its channel's queue until the engine's
// next progress call, which the arrival schedules (SimHost).
#pragma once
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "fabric.h"
#include "wire/wire.h"

namespace rttcc::sim {

// What a datagram costs on an Ethernet link besides its UDP payload: IPv4
// and UDP headers (28), Ethernet header and FCS (18), preamble and
// inter-frame gap (20).
constexpr uint32_t kFrameOverhead = 28 + 18 + 20;
// A full frame on the wire for an IP packet of `mtu` bytes (the IP and
// UDP headers are inside the MTU).
constexpr uint32_t frame_bytes(uint32_t mtu) { return mtu + kFrameOverhead - 28; }

class SimNetwork final : public Sink {
public:
    explicit SimNetwork(Fabric &fabric, uint32_t mtu = 1500) : fabric_(fabric), mtu_(mtu) {
        fabric_.set_drop_sink(this);
    }
    ~SimNetwork() { fabric_.set_drop_sink(nullptr); }
    SimNetwork(const SimNetwork &) = delete;
    SimNetwork &operator=(const SimNetwork &) = delete;
    Fabric &fabric() { return fabric_; }
    size_t datagram() const { return mtu_ - 28; }  // the largest UDP payload a frame carries

    // Copies a datagram's pieces into a buffer of the network's; returns its index.
    uint32_t store(const TxDatagram &d);
    const std::vector<uint8_t> &buffer(uint32_t i) const { return buffers_[i]; }
    void release(uint32_t i) { free_.push_back(i); }
    size_t buffers_in_use() const { return buffers_.size() - free_.size(); }
    // The fabric dropped a datagram: its buffer is free again.
    void deliver(nanos, const Packet &p) override {
        if (p.payload != kNoPayload) release(static_cast<uint32_t>(p.payload >> 1));
    }

private:
    Fabric &fabric_;
    uint32_t mtu_;
    std::vector<std::vector<uint8_t>> buffers_;
    std::vector<uint32_t> free_;
};

class SimWire final : public Wire, public Sink {
public:
    // `wake` is told (fire(now, wake_arg), scheduled at the arrival's time) when a datagram arrives.
    SimWire(SimNetwork &net, uint32_t host, EventTarget *wake, uint64_t wake_arg)
        : net_(net), host_(host), wake_(wake), wake_arg_(wake_arg) {}
    ~SimWire() override;

    const char *name() const override { return "sim"; }
    size_t local_address(Channel ch, void *buf, size_t cap) const override { return address_of(host_, ch, buf, cap); }
    // The ECMP key of what host `from` sends host `to` on channel ch: one
    // flow per socket pair, as a switch hashes UDP's 5-tuple.
    static uint64_t flow_of(uint32_t from, uint32_t to, Channel ch) {
        return (static_cast<uint64_t>(from) << 32 | to) << 1 | static_cast<unsigned>(ch);
    }
    // What the SimWire of `host` publishes for channel ch (0 if cap is too small).
    static size_t address_of(uint32_t host, Channel ch, void *buf, size_t cap);
    bool resolve(Channel ch, const void *addr, size_t len, WireHandle *out, std::string *err) override;
    size_t path_datagram(const void *, size_t) const override { return net_.datagram(); }
    int tx_burst(Channel ch, TxDatagram *d, int n) noexcept override;
    int rx_burst(Channel ch, RxDatagram *d, int n) override;
    unsigned ready() override { return (rx_[kCmd].empty() ? 0u : 1u << kCmd) | (rx_[kData].empty() ? 0u : 1u << kData); }

    void deliver(nanos now, const Packet &p) override;
    uint64_t refused() const { return refused_; }  // sends the NIC's full queue turned back ("try later")
    uint64_t sent() const { return sent_; }        // datagrams taken
    uint64_t ignored() const { return ignored_; }  // arrivals that carried nothing (background traffic)

private:
    struct Arrived {
        uint32_t buffer;
        uint32_t src;  // sender's host node
    };
    SimNetwork &net_;
    uint32_t host_;
    EventTarget *wake_;
    uint64_t wake_arg_;
    std::deque<Arrived> rx_[kChannels];
    std::vector<uint32_t> lent_[kChannels];  // buffers rx_burst handed out, valid until its next call
    uint64_t refused_ = 0, sent_ = 0, ignored_ = 0;
};

}  // namespace rttcc::sim
