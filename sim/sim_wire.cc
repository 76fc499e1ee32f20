#include "sim_wire.h"

#include <cstring>

namespace rttcc::sim {

namespace {

struct Address {  // what a SimWire publishes for a channel
    uint32_t node;
    uint32_t channel;
};

WireHandle handle(uint32_t node, Channel ch) { return static_cast<WireHandle>(node) << 1 | static_cast<unsigned>(ch); }

}  // namespace

uint32_t SimNetwork::store(const TxDatagram &d) {
    uint32_t i;
    if (!free_.empty()) {
        i = free_.back();
        free_.pop_back();
    } else {
        i = static_cast<uint32_t>(buffers_.size());
        buffers_.emplace_back();
    }
    std::vector<uint8_t> &b = buffers_[i];
    b.clear();
    for (int k = 0; k < d.iovcnt; ++k) {
        const auto *p = static_cast<const uint8_t *>(d.iov[k].iov_base);
        b.insert(b.end(), p, p + d.iov[k].iov_len);
    }
    return i;
}

SimWire::~SimWire() {
    for (auto &lent : lent_)
        for (const uint32_t b : lent) net_.release(b);
    for (auto &q : rx_)
        for (const Arrived &a : q) net_.release(a.buffer);
}

size_t SimWire::address_of(uint32_t host, Channel ch, void *buf, size_t cap) {
    const Address a{host, static_cast<uint32_t>(ch)};
    if (cap < sizeof a) return 0;
    std::memcpy(buf, &a, sizeof a);
    return sizeof a;
}

bool SimWire::resolve(Channel ch, const void *addr, size_t len, WireHandle *out, std::string *err) {
    Address a;
    if (len != sizeof a) return *err = "not a sim address", false;
    std::memcpy(&a, addr, sizeof a);
    if (a.channel != static_cast<uint32_t>(ch) || a.node >= net_.fabric().nodes() || !net_.fabric().is_host(a.node))
        return *err = "sim address of no host", false;
    *out = handle(a.node, ch);
    return true;
}

// A send the NIC's queue has no room for is "full now": the engine keeps
// it and tries again, as it does when a socket's buffer is full.  Out of
// memory for the packet ends the simulation (noexcept).
int SimWire::tx_burst(Channel ch, TxDatagram *d, int n) noexcept {
    Fabric &f = net_.fabric();
    Port &nic = f.nic(host_);
    for (int i = 0; i < n; ++i) {
        size_t len = 0;
        for (int k = 0; k < d[i].iovcnt; ++k) len += d[i].iov[k].iov_len;
        const auto bytes = static_cast<uint32_t>(len) + kFrameOverhead;
        if (!nic.idle() && nic.room() < bytes) {
            ++refused_;
            return i;
        }
        Packet p;
        p.src = host_;
        p.dst = static_cast<uint32_t>(d[i].dest >> 1);
        p.bytes = bytes;
        p.flow = flow_of(host_, p.dst, ch);
        p.payload = static_cast<uint64_t>(net_.store(d[i])) << 1 | static_cast<unsigned>(ch);
        f.send(p);  // a drop (no route) frees the buffer through SimNetwork
        ++sent_;
    }
    return n;
}

int SimWire::rx_burst(Channel ch, RxDatagram *d, int n) {
    for (const uint32_t b : lent_[ch]) net_.release(b);
    lent_[ch].clear();
    int k = 0;
    for (; k < n && !rx_[ch].empty(); ++k) {
        const Arrived a = rx_[ch].front();
        rx_[ch].pop_front();
        const std::vector<uint8_t> &b = net_.buffer(a.buffer);
        d[k] = {b.data(), b.size(), handle(a.src, ch), 0, TsSource::kNone};
        lent_[ch].push_back(a.buffer);
    }
    return k;
}

// The first arrival into empty queues wakes the host; the host's progress
// drains them (and wakes itself again if it left some).
void SimWire::deliver(nanos now, const Packet &p) {
    if (p.payload == kNoPayload) {  // as a port nobody listens on
        ++ignored_;
        return;
    }
    const auto ch = static_cast<Channel>(p.payload & 1);
    const bool was_empty = rx_[kCmd].empty() && rx_[kData].empty();
    rx_[ch].push_back({static_cast<uint32_t>(p.payload >> 1), p.src});
    if (was_empty) net_.fabric().events().at(now, wake_, wake_arg_);
}

}  // namespace rttcc::sim
