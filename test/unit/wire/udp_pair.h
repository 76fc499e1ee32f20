// Two UDP wires on loopback for the wire tests: open them, address
// datagrams from one to the other, receive what arrived.
#pragma once
#include <cstring>
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

// What receive() got: each datagram as rx_burst gave it, its buf pointing
// at a copy of its bytes taken at once (a datagram's buffer is the wire's
// only until its next rx_burst on that channel), and where the wire had
// put it (`slots`, for layout checks).
struct Received {
    std::vector<RxDatagram> d;
    std::vector<const uint8_t *> slots;
    std::vector<std::unique_ptr<uint8_t[]>> copies;
    size_t size() const { return d.size(); }
    const RxDatagram &operator[](size_t i) const { return d[i]; }
    std::vector<RxDatagram>::const_iterator begin() const { return d.begin(); }
    std::vector<RxDatagram>::const_iterator end() const { return d.end(); }
};

// Receives until `want` datagrams came on `ch`, or a second passed.
inline Received receive(UdpWire &w, Channel ch, size_t want) {
    Received got;
    RxDatagram d[64];
    const nanos deadline = monotonic_now() + msec(1000);
    while (got.size() < want && monotonic_now() < deadline) {
        const int n = w.rx_burst(ch, d, 64);
        for (int i = 0; i < n; ++i) {
            got.slots.push_back(d[i].buf);
            got.copies.emplace_back(new uint8_t[d[i].len ? d[i].len : 1]);
            if (d[i].len) std::memcpy(got.copies.back().get(), d[i].buf, d[i].len);
            got.d.push_back(d[i]);
            got.d.back().buf = got.copies.back().get();
        }
    }
    return got;
}

}  // namespace rttcc_test
