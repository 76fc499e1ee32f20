#include "scale.h"

#include <malloc.h>

#include <chrono>
#include <cmath>
#include <deque>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>

#include "event_queue.h"
#include "sim_host.h"

namespace rttcc::sim {

PeerMemory measure_peer_memory(size_t peers, const rttcc_config_t &config) {
    EventQueue events;
    Fabric fabric(events);
    std::vector<uint32_t> hosts(peers + 1);
    for (uint32_t &h : hosts) h = fabric.add_host();  // no links, no routes: nothing is sent
    SimNetwork net(fabric);
    SimClock clock(events);
    rttcc_config_t c = config;
    c.self = 0;
    c.agent = false;  // no thread: the engine is all there is to measure
    const rttcc_callbacks_t none{};
    SimHost host(net, hosts[0], c, none, clock, 5000);
    const size_t before = mallinfo2().uordblks;
    std::string err;
    for (size_t j = 1; j <= peers; ++j) {
        const std::vector<uint8_t> a = host.address_as(hosts[j]);
        if (!host.engine().add_peer(static_cast<uint32_t>(j), a.data(), a.size(), &err))
            throw std::runtime_error("add_peer: " + err);
    }
    const size_t after = mallinfo2().uordblks;
    PeerMemory m;
    m.peers = peers;
    m.idle_peer_bytes = host.engine().peer_memory(1);
    m.heap_per_peer = peers ? static_cast<double>(after - before) / static_cast<double>(peers) : 0;
    return m;
}

PickCost measure_pick_cost(SchedPolicy policy, size_t peers, uint64_t bytes, uint64_t seed,
                           const SchedParams &params) {
    if (peers < 2 || peers > PeerScheduler::kMaxPeers) throw std::invalid_argument("peers: 2 .. 2^24");
    PeerScheduler s(policy, params);
    const auto n = static_cast<uint32_t>(peers);
    if (!s.reset(0, n)) throw std::invalid_argument("the scheduler refused the round");
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> log_rtt(std::log(2e3), std::log(2e6));  // 2 us .. 2 ms, log-uniform
    for (uint32_t p = 1; p < n; ++p) {
        PeerCost c;
        c.srtt = static_cast<nanos>(std::exp(log_rtt(rng)));
        c.rttvar = c.srtt / 8;
        c.samples = 16;
        c.bytes = bytes;
        s.set_peer(p, c);
    }
    std::deque<uint32_t> in_flight;
    PickCost r;
    r.peers = peers;
    nanos now = 1000000000;
    const auto wall0 = std::chrono::steady_clock::now();
    while (!s.done()) {
        uint32_t p;
        if (s.next(now, &p)) {
            in_flight.push_back(p);
            ++r.picks;
            now += 1000;
            continue;
        }
        if (in_flight.empty()) throw std::logic_error("the scheduler stalled with nothing in flight");
        s.finished(in_flight.front());
        in_flight.pop_front();
    }
    const double wall = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - wall0).count();
    r.ns_per_pick = r.picks ? wall / static_cast<double>(r.picks) : 0;
    r.heap_ops = s.heap_ops();
    r.deferrals = s.deferrals();
    r.forced = s.forced();
    return r;
}

}  // namespace rttcc::sim
