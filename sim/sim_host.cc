#include "sim_host.h"

#include <algorithm>

namespace rttcc::sim {

SimHost::SimHost(SimNetwork &net, uint32_t host, const rttcc_config_t &config, const rttcc_callbacks_t &callbacks,
                 const SimClock &clock, nanos tick, bool poll)
    : net_(net), host_(host), clock_(clock), tick_(tick), poll_(poll) {
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
    schedule(net_.fabric().events().now());
}

// The timer goes at the engine's next due time, a tick away when work is
// pending, never when nothing is due; at most a tick away when polling.
void SimHost::schedule(nanos now) {
    const nanos due = foreseen_ = engine_->next_due();
    if (!ticking_) return;
    nanos at = kNever;
    if (due != kNever) at = due > clock_.now() ? due - SimClock::kEpoch : now + tick_;
    if (poll_ || after_progress) at = std::min(at, now + tick_);
    if (at >= timer_at_) return;  // kNever, or not before the pending timer
    timer_at_ = at;
    net_.fabric().events().at(at, this, kTimer | ++timer_gen_ << 1);
}

void SimHost::fire(nanos now, uint64_t what) {
    if (what != kArrival) {
        if (what >> 1 != timer_gen_) return;  // moved earlier: fired already
        timer_at_ = kNever;
    }
    const bool quiet = !wire_->ready() && clock_.now() < foreseen_;
    const uint64_t sent = wire_->sent();
    engine_->progress();
    ++progress_calls_;
    late_passes_ += quiet && wire_->sent() != sent;
    if (after_progress) after_progress();
    if (wire_->ready()) net_.fabric().events().at(now, this, kArrival);  // a burst it did not finish
    schedule(now);
}

}  // namespace rttcc::sim
