// bench/cc_table.sh's testbed run at packet level: rank 1 (the sink) sits
// behind a shaped link; ranks 2 and 3 keep `window` messages of `size`
// bytes in flight to it for `time`; rank 0 ping-pongs 8-byte messages with
// it all along (cc_bench's pinger; here on its own host, where the testbed
// gives it the host of rank 3, whose unshaped link is no bottleneck).
// Measured from `warm` to `time`, as cc_bench: the sink's received stream
// bytes per second, the pings' round trips, the shaped queue's drops.
#pragma once
#include <cstdint>
#include <vector>

#include "job.h"

namespace rttcc::sim {

struct ShapedLinkConfig {
    JobConfig job = default_job_config();
    uint64_t link_bits_per_s = 10'000'000'000ull;  // every unshaped link
    nanos delay = 1000;
    uint64_t shaped_bits_per_s = 150'000'000ull;   // the sink's link, both ways
    uint32_t queue_frames = 200;                   // its queue, full-size frames
    size_t size = 1 << 20;                         // stream messages
    uint32_t window = 4;                           // in flight per streamer
    nanos warm = 1'000'000'000, time = 4'000'000'000;
};

struct ShapedLinkResult {
    double mbps = 0;                // stream bytes at the sink in [warm, time], 10^6 B/s
    std::vector<double> ping_us;    // each ping's round trip in [warm, time], sorted
    uint64_t drops = 0;             // by the shaped link's queues, both ways
    uint64_t corrupt_bytes = 0;
    bool finished = false;          // every stream message and ping delivered
    double percentile(double p) const;  // of ping_us (0 if none)
};

ShapedLinkResult run_shaped_link(const ShapedLinkConfig &c);

}  // namespace rttcc::sim
