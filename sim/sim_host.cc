#include "sim_host.h"

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
