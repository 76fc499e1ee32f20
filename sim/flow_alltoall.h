// rttcc_sim's flow level, one alltoall: the real PeerScheduler and the real
// congestion-control classes drive fluid flows over a FlowFabric.
//
//   rttcc     each class's first rank runs coll_rttcc's PeerScheduler (its
//             policy, max_concurrent; each peer's cost from the RTT table a
//             previous call left (FlowRttTable), else the fabric's round trip
//             with empty queues; the table is not updated during a call); each
//             peer it starts is a group of channels (FlowFabric::channels)
//             standing for that put of every rank of the class.  Puts start
//             once every RTR is in (the largest one-way delay); blocks under
//             the eager cut all go at once, with the RTRs, at the call's
//             start, from which its time counts either way.
//   pairwise  tuned's: step s sends every rank's block to rank + s, the
//             next step once every flow of the step is done (lockstep)
//   linear    tuned's basic linear: every block at once
//   (Bruck's stays at packet level.)
//
// The class follows its median rank: a group frees its scheduler slot once
// channels carrying half its flows are done.  What is left of it (the flows
// of the ranks whose block goes somewhere slow, such as into a hotspot)
// joins the class's background channel of that path, where flows share the
// rate and leave as their bytes are done (processor sharing); the class's
// ranks hold slots for those flows too (their number over the class's ranks,
// rounded), so a class cannot run ahead of its slow flows.
//
// Every channel has its own controller (make_congestion_control, or the
// send credits as the window with cc none) and RTT estimator, and keeps its
// window in flight (sim/flow_channel.h).  Time goes in steps of dt:
//
//   each channel puts what its window has room for into its NIC's queue (a
//   full one says "later", as the packet level's full NIC); the NIC sends
//   its line's worth, shared by the channels in proportion to their bytes
//   in it; a switch queue grows by what arrives beyond its rate and drops
//   what passes its room, from every flow in proportion (drop-tail); what
//   it drops goes no further (the hops after it see the rest)
//   what arrived is acknowledged after the switches' queues ahead and the
//   hosts' on the way back; a loss is found then and sent again, as a fast
//   retransmit, but the share of flows that lost their whole window
//   (p^window for a drop share p) sleeps out a backed-off RTO instead
//
// What the fluid leaves out: per-flow ECMP hashing (FlowFabric), which
// flows time out (a share of each channel does, not chosen ones), ranks of
// a class drifting apart beyond the median rule, paced grants (coll_rttcc's
// max_grants, in force with cc none: every picked peer puts at once here;
// rttcc_sim warns), and CPUs (as the packet level).
#pragma once
#include <cstdint>
#include <map>
#include <vector>

#include "alltoall.h"
#include "cc/rtt_estimator.h"
#include "flow_fabric.h"
#include "rttcc/config.h"
#include "rttcc/exchange.h"

namespace rttcc::sim {

// What the ranks' RTT tables have learned, per class and the kind of peer
// (its class, within the class's leaf or not): the engine's estimator fed
// the smoothed RTT of each channel that ended there.  Kept across calls, it
// is the warm table of the next one.
class FlowRttTable {
public:
    // 0: nothing learned yet.
    nanos srtt(uint32_t cls, uint32_t dest, bool same_leaf) const {
        const auto it = rtt_.find(key(cls, dest, same_leaf));
        return it == rtt_.end() ? 0 : it->second.srtt();
    }
    void observe(uint32_t cls, uint32_t dest, bool same_leaf, nanos rtt) {
        rtt_[key(cls, dest, same_leaf)].on_sample(rtt);
    }

private:
    static uint64_t key(uint32_t cls, uint32_t dest, bool same) { return uint64_t{cls} << 33 | uint64_t{dest} << 1 | same; }
    std::map<uint64_t, RttEstimator> rtt_;
};

struct FlowAlltoallConfig {
    AlltoallAlgo algo = AlltoallAlgo::kRttcc;  // rttcc, pairwise or linear
    uint64_t block = 65536;                    // bytes per ordered pair
    rttcc_exchange_params_t xp{};              // rttcc: policy, max_concurrent, eager cut (set by the caller)
    rttcc_config_t engine{};                   // cc and its tunables, send_credits (set by the caller)
    uint32_t mtu = 1500;
    nanos dt = 0;                              // the step; 0: an eighth of the smallest base round trip
                                               // (at most flow_max_dt)
    nanos limit = 10'000'000'000;              // give up past this much virtual time
    nanos start = 0;                           // the call's start (a flood's phase runs on)
    FlowRttTable *table = nullptr;             // rttcc: the warm table to start from and learn into (null: none)
};

struct FlowAlltoallResult {
    bool finished = false;
    nanos completion = 0;            // the last class's end, from the call's start
    nanos ended_at = 0;              // the same in the run's time (where a next call may start)
    std::vector<nanos> class_end;    // per FlowFabric class (0: not ended)
    nanos median_end = 0;            // the median rank's end
    double drop_bytes = 0;           // frames' bytes the queues dropped, over all ranks
    double flood_drop_bytes = 0;     // the flood's frames' bytes they dropped
    double timeouts = 0;             // flows that slept out an RTO
    uint64_t steps = 0;              // time steps taken
    uint64_t channels = 0;           // channels started
    nanos dt = 0;                    // the step used
};

// Throws std::invalid_argument for an algorithm, block or step the flow level cannot run.
FlowAlltoallResult run_flow_alltoall(const FlowFabric &fabric, const FlowAlltoallConfig &config);

// The longest step that keeps a round trip several steps long: a quarter of
// the shortest base round trip (half its one-way delay), for `mtu`'s frames.
nanos flow_max_dt(const FlowFabric &fabric, uint32_t mtu);

// The line bound: every block's bytes on the link types its channels take,
// the busiest link's load at its rate, in ns.  No schedule ends sooner, a
// flood or not.
double flow_line_bound_ns(const FlowFabric &fabric, uint64_t block);

// An estimate with the hotspot's flood: the same with the links it crosses
// at their rate less its mean on the wire; infinite where it leaves nothing
// of a link the alltoall needs (the line bound without a flood).
double flow_flood_estimate_ns(const FlowFabric &fabric, uint64_t block);

}  // namespace rttcc::sim
