// Background traffic: a host that sends packets nobody reads towards
// another at a fixed rate, switched on and off (bench/udp_flood.c, the
// testbed's scenario d).  Each packet is a full frame; bursts of `burst`
// packets every burst * frame * 8 / rate, as udp_flood paces its sendmmsg.
#pragma once
#include <cstdint>

#include "fabric.h"

namespace rttcc::sim {

struct FloodConfig {
    uint32_t from = 0, to = 0;       // host node ids
    uint64_t payload_bits_per_s = 300'000'000ull;  // as udp_flood's -rate: UDP payload
    uint32_t payload = 1472;         // UDP payload bytes per packet
    nanos on = 1'000'000'000ull, off = 1'000'000'000ull;
    nanos start = 0;                 // the first on period begins here
    uint32_t burst = 8;
};

class Flood final : public EventTarget {
public:
    Flood(Fabric &fabric, const FloodConfig &config);
    Flood(const Flood &) = delete;
    Flood &operator=(const Flood &) = delete;
    uint64_t sent() const { return sent_; }  // packets handed to the source's NIC (its queue may drop some)
    void stop() { stopped_ = true; }         // no more packets (its pending event then ends)
    // Its average payload rate over whole on/off periods.
    double mean_bits_per_s() const;
    // The same on the wire: its frames' bits (headers and framing included).
    double mean_wire_bits_per_s() const;
    // One of its packets (its path through the fabric).
    Packet packet() const;

    void fire(nanos now, uint64_t) override;

private:
    Fabric &fabric_;
    FloodConfig c_;
    nanos gap_;  // between bursts
    uint64_t sent_ = 0;
    bool stopped_ = false;
};

}  // namespace rttcc::sim
