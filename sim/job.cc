#include "job.h"

#include <stdexcept>
#include <string>

namespace rttcc::sim {

JobConfig default_job_config() {
    JobConfig c;
    rttcc_config_defaults(&c.engine);
    c.engine.job_key = 0x5157;
    c.engine.agent = false;  // the simulation progresses every engine itself
    c.engine.max_message = 64 << 20;
    return c;
}

Job::Job(size_t ranks, const std::function<Topology(Fabric &, size_t)> &build, const JobConfig &config,
         const std::function<bool(size_t, size_t)> &peers)
    : fabric_(events_, config.seed), net_(fabric_, config.mtu) {
    later_.job = this;
    topo_ = build(fabric_, ranks);
    if (topo_.hosts.size() < ranks) throw std::invalid_argument("the topology has fewer hosts than ranks");
    std::vector<std::vector<uint8_t>> addrs;
    for (size_t i = 0; i < ranks; ++i) {
        auto r = std::make_unique<Rank>();
        r->job = this;
        r->index = static_cast<uint32_t>(i);
        r->received.assign(ranks, 0);
        r->received_at.assign(ranks, 0);
        rttcc_config_t c = config.engine;
        c.self = static_cast<uint32_t>(i);
        const rttcc_callbacks_t cb{r.get(), on_recv, on_done, on_dead, nullptr, nullptr};
        r->host = std::make_unique<SimHost>(net_, topo_.hosts[i], c, cb, clock_, config.tick, config.poll);
        addrs.push_back(r->host->address());
        ranks_.push_back(std::move(r));
    }
    for (size_t i = 0; i < ranks; ++i)
        for (size_t j = 0; j < ranks; ++j) {
            if (i == j || (peers && !peers(i, j))) continue;
            std::string err;
            if (!ranks_[i]->host->engine().add_peer(static_cast<uint32_t>(j), addrs[j].data(), addrs[j].size(), &err))
                throw std::runtime_error("add_peer: " + err);
        }
    for (auto &r : ranks_) r->host->start();
}

Job::~Job() = default;

bool Job::send(uint32_t from, uint32_t to, size_t len) {
    buffers_.push_back(std::make_unique<std::vector<uint8_t>>(len));
    std::vector<uint8_t> &b = *buffers_.back();
    for (size_t i = 0; i < len; ++i) b[i] = pattern(from, i);
    iovec iov{b.data(), len};
    Rank &r = *ranks_.at(from);
    const int rc = r.host->engine().send(to, 3, &iov, 1, &r);
    r.host->wake();
    if (rc != RTTCC_OK) buffers_.pop_back();  // copied (or refused): the engine will not read it
    if (rc == RTTCC_DONE) {  // copied and gone: no completion follows
        ++r.sends_done;
        r.last_done = events_.now();
    }
    return rc == RTTCC_OK || rc == RTTCC_DONE;
}

void Job::send_at(nanos when, uint32_t from, uint32_t to, size_t len) {
    later_.sends.push_back({from, to, len});
    events_.at(when, &later_, later_.sends.size() - 1);
}

bool Job::run_until(const std::function<bool()> &done, nanos limit) {
    const nanos end = events_.now() + limit;
    while (!done()) {
        if (events_.now() > end || !events_.step()) return false;
    }
    return true;
}

void Job::drain() {
    for (auto &r : ranks_) r->host->stop();
    while (events_.step()) {
    }
}

uint64_t Job::late_passes() const {
    uint64_t n = 0;
    for (const auto &r : ranks_) n += r->host->late_passes();
    return n;
}

void Job::on_recv(void *u, uint32_t peer, uint8_t, const void *d, size_t len) {
    auto *r = static_cast<Rank *>(u);
    const auto *b = static_cast<const uint8_t *>(d);
    for (size_t i = 0; i < len; ++i) r->job->corrupt_ += b[i] != pattern(peer, i);
    const nanos now = r->job->events_.now();
    if (peer < r->received.size()) {
        r->received[peer] += len;
        r->received_at[peer] = now;
    }
    r->last_delivery = now;
}

void Job::on_done(void *u, void *, int status) {
    auto *r = static_cast<Rank *>(u);
    if (status != RTTCC_OK) return;
    ++r->sends_done;
    r->last_done = r->job->events_.now();
}

void Job::on_dead(void *u, uint32_t, const char *) { ++static_cast<Rank *>(u)->job->dead_; }

}  // namespace rttcc::sim
