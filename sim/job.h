// A job at packet level: one SimHost (the real engine) per rank on a
// fabric, peers wired as the modex would, and what each rank received from
// each sender, checked byte by byte against the pattern senders write.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "sim_host.h"
#include "topology.h"

namespace rttcc {
class ExchangeHub;
}

namespace rttcc::sim {

class TunedPort;  // sim/alltoall.cc

struct JobConfig {
    rttcc_config_t engine;  // every rank's engine (self is set per rank)
    nanos tick = 5000;      // retry interval of unfinished work, and of polling
    bool poll = false;      // progress every engine every tick too, as a spinning application (SimHost)
    uint32_t mtu = 1500;
    uint64_t seed = 1;      // the fabric's (ECMP)
};

JobConfig default_job_config();

class Job {
public:
    struct Rank {
        Job *job = nullptr;
        uint32_t index = 0;
        std::unique_ptr<SimHost> host;
        std::vector<uint64_t> received;  // bytes delivered whole, by sender
        std::vector<nanos> received_at;  // when the last of them was delivered, by sender (0: none)
        uint64_t sends_done = 0;         // messages acknowledged
        nanos last_done = 0;             // when the last was (a copied one's: its send)
        nanos last_delivery = 0;         // when its last message arrived
        // coll_rttcc's hub on this rank's engine, made by the first
        // alltoall (a tag, once detached, is never attached again)
        std::shared_ptr<ExchangeHub> hub;
        std::shared_ptr<TunedPort> tuned;  // tuned's tag, likewise
    };
    // `build` makes the fabric for `ranks` hosts; `peers(i, j)`: does rank i know rank j (null: all).
    Job(size_t ranks, const std::function<Topology(Fabric &, size_t)> &build, const JobConfig &config,
        const std::function<bool(size_t, size_t)> &peers = nullptr);
    Job(const Job &) = delete;
    Job &operator=(const Job &) = delete;
    ~Job();

    // Rank `from` sends `len` pattern bytes to `to`; false if the engine refused.
    bool send(uint32_t from, uint32_t to, size_t len);
    // The same at virtual time `when`; a refusal then counts in refused_sends().
    void send_at(nanos when, uint32_t from, uint32_t to, size_t len);
    uint64_t refused_sends() const { return later_.refused; }
    // Runs until done() or `limit` of virtual time has passed; false on the limit.
    bool run_until(const std::function<bool()> &done, nanos limit);
    // Stops the timers and runs what is left (in-flight packets, last ACKs).
    void drain();

    EventQueue &events() { return events_; }
    Fabric &fabric() { return fabric_; }
    SimNetwork &network() { return net_; }
    const Topology &topology() const { return topo_; }
    Rank &rank(size_t i) { return *ranks_[i]; }
    size_t size() const { return ranks_.size(); }
    uint64_t corrupt_bytes() const { return corrupt_; }
    // Keeps `thing` until the job ends (buffers an engine may still read).
    void keep(std::shared_ptr<void> thing) { kept_.push_back(std::move(thing)); }
    uint64_t dead_peers() const { return dead_; }
    uint64_t late_passes() const;  // over the ranks (SimHost::late_passes)

    static uint8_t pattern(uint32_t sender, size_t i) { return static_cast<uint8_t>(sender * 37 + i * 7 + (i >> 9)); }

private:
    static void on_recv(void *u, uint32_t peer, uint8_t tag, const void *d, size_t len);
    static void on_done(void *u, void *cookie, int status);
    static void on_dead(void *u, uint32_t peer, const char *why);

    struct LaterSends final : EventTarget {  // send_at's, fired by index
        struct Send {
            uint32_t from, to;
            size_t len;
        };
        Job *job = nullptr;
        std::vector<Send> sends;
        uint64_t refused = 0;
        void fire(nanos, uint64_t i) override {
            const Send &s = sends[i];
            refused += !job->send(s.from, s.to, s.len);
        }
    };

    EventQueue events_;
    LaterSends later_;
    Fabric fabric_;
    SimNetwork net_;
    SimClock clock_{events_};
    Topology topo_;
    std::vector<std::unique_ptr<Rank>> ranks_;
    std::vector<std::unique_ptr<std::vector<uint8_t>>> buffers_;  // zero-copy sends' bytes, kept to the end
    uint64_t corrupt_ = 0, dead_ = 0;
    std::vector<std::shared_ptr<void>> kept_;  // after the ranks: destroyed first
};

}  // namespace rttcc::sim
