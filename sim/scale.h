// What the shipped code costs at scale (rttcc_sim scale): the memory one
// rank's engine holds per peer once it knows P peers (the peer table with
// each peer's RTT row, windows, congestion control and probe state), and
// the PeerScheduler's cost per pick over P peers, measured on this machine.
#pragma once
#include <cstddef>
#include <cstdint>

#include "exchange/peer_scheduler.h"
#include "rttcc/config.h"

namespace rttcc::sim {

struct PeerMemory {
    size_t peers = 0;               // peers the engine knows
    size_t idle_peer_bytes = 0;     // Engine::peer_memory of one idle peer
    double heap_per_peer = 0;       // heap growth while they were added, per peer
};

// One engine (host 0 of a fabric of peers + 1 unlinked hosts) adds peers
// 1 .. peers, as the modex would; nothing is sent.
PeerMemory measure_peer_memory(size_t peers, const rttcc_config_t &config);

struct PickCost {
    size_t peers = 0;
    uint64_t picks = 0;             // next() calls that started a peer (peers - 1: all but self)
    double ns_per_pick = 0;         // wall time of the whole round (first next() builds the heaps) / picks
    uint64_t heap_ops = 0;          // heap entries placed in the round
    uint64_t deferrals = 0, forced = 0;
};

// One round of a PeerScheduler over `peers` peers whose RTTs are drawn
// (seeded) between 2 us and 2 ms, each sent `bytes`; picks as coll_rttcc
// makes them: next() while a slot is free, then the oldest in flight
// finishes; virtual time moves 1 us per pick (so deferrals time out).
PickCost measure_pick_cost(SchedPolicy policy, size_t peers, uint64_t bytes, uint64_t seed,
                           const SchedParams &params);

}  // namespace rttcc::sim
