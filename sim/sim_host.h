// A rank at packet level: the real Engine over a SimWire, on the
// simulation's clock.  It is progressed when a datagram arrives and, while
// it is started, when the engine's next timed work is due
// (Engine::next_due: retransmission and probe timers, delayed ACKs): a host
// with nothing due costs no events.  Work the engine could not finish (a
// full NIC queue) is retried every `tick`.  With `poll`, and while a driver
// runs after each pass (after_progress), it is also progressed every tick,
// as an application spinning in its progress loop.  Its CPU costs no
// virtual time.
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
            const SimClock &clock, nanos tick, bool poll = false);
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
    void start();                          // timers on
    void stop() { ticking_ = false; }      // timers off (arrivals still progress it)
    // After a call into the engine from outside a progress pass (a send):
    // its new timers are scheduled.
    void wake() { schedule(net_.fabric().events().now()); }
    uint64_t progress_calls() const { return progress_calls_; }
    // Passes that sent something though no datagram had arrived and
    // nothing was due by the engine's last next_due: timed work the
    // schedule did not foresee, so it came late (0 unless next_due or this
    // class is wrong; polling makes such passes, -poll 1 in rttcc_sim).
    uint64_t late_passes() const { return late_passes_; }
    // Runs after each progress pass, as the application's loop would (a
    // collective's own progress); empty: nothing.
    std::function<void()> after_progress;

    void fire(nanos now, uint64_t what) override;

private:
    // An event's arg: kArrival, or a timer: kTimer | its generation << 1
    // (a timer moved earlier leaves its old event behind, which then fires
    // as stale and does nothing).
    enum : uint64_t { kArrival = 0, kTimer = 1 };
    void schedule(nanos now);

    SimNetwork &net_;
    uint32_t host_;
    SimWire *wire_;  // owned by engine_
    std::shared_ptr<Engine> engine_;
    const SimClock &clock_;
    nanos tick_;
    bool poll_;
    bool ticking_ = false;
    nanos timer_at_ = kNever;  // the pending timer's time, kNever if none
    uint64_t timer_gen_ = 0;
    uint64_t progress_calls_ = 0, late_passes_ = 0;
    nanos foreseen_ = 0;  // the engine's next_due when last asked (engine clock)
};

}  // namespace rttcc::sim
