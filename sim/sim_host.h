// A rank at packet level: the real Engine over a SimWire, on the
// simulation's clock.  It is progressed when a datagram arrives and every
// `tick` of virtual time while it is started (the engine's own timers:
// delayed ACKs, retransmissions, probes).  Its CPU costs no virtual time.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "engine/engine.h"
#include "sim_wire.h"

namespace rttcc::sim {

class SimClock final : public Clock {
public:
    static constexpr nanos kEpoch = 1000ull * 1000000000ull;  // an engine's time 0 means "never"
    explicit SimClock(const EventQueue &events) : events_(events) {}
    nanos now() const override { return kEpoch + events_.now(); }

private:
    const EventQueue &events_;
};

class SimHost final : public EventTarget {
public:
    SimHost(SimNetwork &net, uint32_t host, const rttcc_config_t &config, const rttcc_callbacks_t &callbacks,
            const SimClock &clock, nanos tick);
    SimHost(const SimHost &) = delete;
    SimHost &operator=(const SimHost &) = delete;

    Engine &engine() { return *engine_; }
    const std::shared_ptr<Engine> &shared_engine() const { return engine_; }  // for an ExchangeHub
    SimWire &wire() { return *wire_; }
    uint32_t host() const { return host_; }
    std::vector<uint8_t> address() const;  // what the modex would carry
    // The address of an engine like this one at fabric host `host` (its key
    // and settings, the other host's wire): peers for hosts without an engine.
    std::vector<uint8_t> address_as(uint32_t host) const;
    void start();                          // ticks on
    void stop() { ticking_ = false; }      // ticks off (arrivals still progress it)
    uint64_t progress_calls() const { return progress_calls_; }
    // Runs after each progress pass, as the application's loop would (a
    // collective's own progress); empty: nothing.
    std::function<void()> after_progress;

    void fire(nanos now, uint64_t what) override;

private:
    enum : uint64_t { kArrival = 0, kTick = 1 };
    SimNetwork &net_;
    uint32_t host_;
    SimWire *wire_;  // owned by engine_
    std::shared_ptr<Engine> engine_;
    nanos tick_;
    bool ticking_ = false, tick_pending_ = false;
    uint64_t progress_calls_ = 0;
};

}  // namespace rttcc::sim
