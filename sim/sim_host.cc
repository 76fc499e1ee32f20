#include "sim_host.h"

#include <algorithm>

namespace rttcc::sim {

SimHost::SimHost(SimNetwork &net, uint32_t host, const rttcc_config_t &config, const rttcc_callbacks_t &callbacks,
                 const SimClock &clock, nanos tick)
    : net_(net), host_(host), tick_(tick) {
    auto wire = std::make_unique<SimWire>(net, host, this, kArrival);
    wire_ = wire.get();
    net.fabric().set_sink(host, wire_);
    engine_ = std::make_shared<Engine>(config, callbacks, std::move(wire), nullptr, clock);
}

std::vector<uint8_t> SimHost::address() const {
    std::vector<uint8_t> a(512);
    a.resize(engine_->local_address(a.data(), a.size()));
    return a;
}

std::vector<uint8_t> SimHost::address_as(uint32_t host) const {
    std::vector<uint8_t> a = address();
    uint8_t cmd[64], data[64];
    const size_t cl = SimWire::address_of(host, kCmd, cmd, sizeof cmd);
    const size_t dl = SimWire::address_of(host, kData, data, sizeof data);
    const size_t header = a.size() - cl - dl;  // the engine's address ends with its wire's two
    std::copy(cmd, cmd + cl, a.begin() + static_cast<std::ptrdiff_t>(header));
    std::copy(data, data + dl, a.begin() + static_cast<std::ptrdiff_t>(header + cl));
    return a;
}

void SimHost::start() {
    ticking_ = true;
    if (!tick_pending_) {
        tick_pending_ = true;
        net_.fabric().events().after(tick_, this, kTick);
    }
}

void SimHost::fire(nanos now, uint64_t what) {
    if (what == kTick) tick_pending_ = false;
    engine_->progress();
    ++progress_calls_;
    if (after_progress) after_progress();
    if (wire_->ready()) net_.fabric().events().at(now, this, kArrival);  // a burst it did not finish
    if (what == kTick && ticking_) start();
}

}  // namespace rttcc::sim
