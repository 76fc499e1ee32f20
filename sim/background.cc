#include "background.h"

#include <stdexcept>

#include "sim_wire.h"

namespace rttcc::sim {

Flood::Flood(Fabric &fabric, const FloodConfig &config) : fabric_(fabric), c_(config) {
    if (c_.payload_bits_per_s == 0 || c_.on == 0 || c_.burst == 0) throw std::invalid_argument("flood: no rate");
    gap_ = static_cast<nanos>(8.0 * c_.payload * c_.burst / static_cast<double>(c_.payload_bits_per_s) * 1e9);
    fabric_.events().at(c_.start, this);
}

double Flood::mean_bits_per_s() const {
    return static_cast<double>(c_.payload_bits_per_s) * static_cast<double>(c_.on) / static_cast<double>(c_.on + c_.off);
}

double Flood::mean_wire_bits_per_s() const {
    return mean_bits_per_s() * static_cast<double>(c_.payload + kFrameOverhead) / static_cast<double>(c_.payload);
}

Packet Flood::packet() const {
    Packet p;
    p.src = c_.from;
    p.dst = c_.to;
    p.bytes = c_.payload + kFrameOverhead;
    p.flow = static_cast<uint64_t>(c_.from) << 32 | c_.to;
    p.payload = kNoPayload;
    return p;
}

void Flood::fire(nanos now, uint64_t) {
    if (stopped_) return;
    const nanos period = c_.on + c_.off;
    const nanos phase = (now - c_.start) % period;
    if (phase >= c_.on) {  // off: wait for the next on period
        fabric_.events().at(now + period - phase, this);
        return;
    }
    for (uint32_t i = 0; i < c_.burst; ++i) {
        fabric_.send(packet());
        ++sent_;
    }
    fabric_.events().at(now + gap_, this);
}

}  // namespace rttcc::sim
