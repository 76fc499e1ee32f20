#include "shaped_link.h"

#include <algorithm>
#include <cmath>

#include "sim_wire.h"
#include "topology.h"

namespace rttcc::sim {

namespace {

constexpr uint32_t kPinger = 0, kSink = 1, kFirstStreamer = 2, kRanks = 4;
constexpr size_t kPing = 8;

}  // namespace

double ShapedLinkResult::percentile(double p) const {
    if (ping_us.empty()) return 0;
    const auto i = static_cast<size_t>(std::ceil(p * static_cast<double>(ping_us.size()))) - 1;
    return ping_us[std::min(i, ping_us.size() - 1)];
}

ShapedLinkResult run_shaped_link(const ShapedLinkConfig &c) {
    LinkConfig link;
    link.bits_per_s = c.link_bits_per_s;
    link.delay = c.delay;
    link.queue_bytes = 4 << 20;  // a host's send queue: deep, like a socket's buffer
    Job job(kRanks, [&](Fabric &f, size_t hosts) {
        Topology t = one_switch(f, hosts, link);
        shape(f, t.hosts[kSink], c.shaped_bits_per_s, c.queue_frames * frame_bytes(c.job.mtu));
        return t;
    }, c.job);
    ShapedLinkResult r;
    std::vector<uint64_t> sent(kRanks, 0);  // stream messages per streamer
    uint64_t pings = 0, pongs = 0;          // sent by the pinger, answered by the sink
    nanos ping_at = 0;
    uint64_t at_warm = 0, at_time = 0;      // stream bytes at the sink by `warm` and by `time`
    bool warmed = false, timed = false, refused = false;
    // A stream message is in flight until the sink has it whole and its
    // send completed (cc_bench's Isend).  A zero-copy one completes when
    // ACKed, after its delivery; a copied one at once (RTTCC_DONE), so
    // counting completions alone would refill the window at one virtual
    // instant, forever.
    auto in_flight = [&](uint32_t s) {
        return sent[s] - std::min<uint64_t>(job.rank(s).sends_done, job.rank(kSink).received[s] / c.size);
    };
    auto stream_bytes = [&] {
        uint64_t n = 0;
        for (uint32_t s = kFirstStreamer; s < kRanks; ++s) n += job.rank(kSink).received[s];
        return n;
    };
    // The ranks' loop, run after every event (Job::run_until): streamers
    // refill their window, the sink answers each ping, the pinger times
    // each pong and pings again.
    auto loop = [&] {
        const nanos now = job.events().now();
        if (!warmed && now >= c.warm) {
            warmed = true;
            at_warm = stream_bytes();
        }
        if (!timed && now >= c.time) {
            timed = true;
            at_time = stream_bytes();
        }
        const bool on = now < c.time;
        for (uint32_t s = kFirstStreamer; s < kRanks; ++s)
            while (on && in_flight(s) < c.window && !refused) {
                refused = !job.send(s, kSink, c.size);
                ++sent[s];
            }
        if (job.rank(kSink).received[kPinger] == (pongs + 1) * kPing && pongs < pings) {
            refused |= !job.send(kSink, kPinger, kPing);
            ++pongs;
        }
        if (job.rank(kPinger).received[kSink] == pings * kPing) {
            if (pings > 0 && ping_at >= c.warm && now <= c.time) r.ping_us.push_back((now - ping_at) / 1e3);
            if (on) {
                refused |= !job.send(kPinger, kSink, kPing);
                ping_at = now;
                ++pings;
            }
        }
        if (refused || on) return refused;
        // After `time`: done once every message sent has arrived.
        for (uint32_t s = kFirstStreamer; s < kRanks; ++s)
            if (job.rank(kSink).received[s] != sent[s] * c.size) return false;
        return job.rank(kPinger).received[kSink] == pings * kPing;
    };
    r.finished = job.run_until(loop, c.time + 60'000'000'000ull) && !refused;
    const nanos span = c.time - c.warm;
    if (r.finished) r.mbps = static_cast<double>(at_time - at_warm) / (static_cast<double>(span) / 1e9) / 1e6;
    std::sort(r.ping_us.begin(), r.ping_us.end());
    Fabric &f = job.fabric();
    const uint32_t sink = job.topology().hosts[kSink];
    r.drops = f.nic(sink).stats().drops + f.port(f.nic(sink).to(), sink)->stats().drops;
    r.corrupt_bytes = job.corrupt_bytes();
    return r;
}

}  // namespace rttcc::sim
