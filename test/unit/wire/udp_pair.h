// Two UDP wires on loopback for the wire tests: open them, address
// datagrams from one to the other, receive what arrived.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "cmocka_cxx.h"
#include "clock/clock.h"
#include "wire/udp_wire.h"

namespace rttcc_test {
using namespace rttcc;

inline rttcc_config_t lo_config(int timestamp) {
    rttcc_config_t cfg;
    rttcc_config_defaults(&cfg);
    cfg.if_include = const_cast<char *>("lo");
    cfg.timestamp = timestamp;
    return cfg;
}

// Two wires on loopback; `to[ch]` is b's address of channel ch as a's handle.
struct Pair {
    std::unique_ptr<UdpWire> a, b;
    WireHandle to[kChannels];
};

inline Pair open_pair(int timestamp, UdpWire::StampKeys keys = UdpWire::StampKeys::kAuto) {
    Pair p;
    std::string err;
    const rttcc_config_t cfg = lo_config(timestamp);
    p.a = UdpWire::open(cfg, &err, keys);
    p.b = UdpWire::open(cfg, &err, keys);
    assert_non_null(p.a.get());
    assert_non_null(p.b.get());
    for (int ch = 0; ch < kChannels; ++ch) {
        uint8_t addr[64];
        const size_t len = p.b->local_address(static_cast<Channel>(ch), addr, sizeof addr);
        assert_true(p.a->resolve(static_cast<Channel>(ch), addr, len, &p.to[ch], &err));
    }
    return p;
}

inline TxDatagram datagram(WireHandle to, std::vector<uint8_t> &bytes, uint64_t cookie) {
    TxDatagram d{};
    d.dest = to;
    d.iov[0] = {bytes.data(), bytes.size()};
    d.iovcnt = 1;
    d.stamp_cookie = cookie;
    return d;
}

// Receives until `want` datagrams arrived on ch (or a second passed).
inline std::vector<RxDatagram> receive(UdpWire &w, Channel ch, size_t want) {
    std::vector<RxDatagram> got;
    RxDatagram d[64];
    const nanos deadline = monotonic_now() + msec(1000);
    while (got.size() < want && monotonic_now() < deadline) {
        const int n = w.rx_burst(ch, d, 64);
        got.insert(got.end(), d, d + n);
    }
    return got;
}

}  // namespace rttcc_test
