// rttcc_sim's flow level, its fabric: classes of ranks and types of links.
//
// At 64k ranks an alltoall is 4 x 10^9 flows.  Following each would cost
// the real scheduler's picks alone 481 s and its heaps 200 GB (one
// PeerScheduler of 64k peers per rank), so the flow level follows the
// fabric's symmetry instead:
//
//   rank class  ranks the fabric cannot tell apart, one contiguous range:
//               rank 0 alone where it is special (a hot host link, the
//               hotspot's target), the rest of leaf 0 where leaf 0 is special
//               (its hot uplink, the hotspot), all other ranks together
//   link type   links that carry the same kind of traffic, `count` of them:
//               the host links of a class (one type per direction), the
//               uplinks and downlinks of the plain leaves, and each uplink
//               and downlink of a special leaf (leaf 0, the flooder's) alone.
//               A type's load is spread evenly over its links (mean field).
//
// A flow from rank m to rank m + offset (mod P) stands for that flow of
// every rank of m's class: the rotation symmetry of the linear order, which
// the PeerScheduler's ties and tuned's pairwise follow.  Those flows reach
// different classes, in the same leaf or not; they split into channels
// (destination class; same leaf, or across a spine), each with the number of
// flows it carries and its path of link types.  Across spines, ECMP is taken
// as an even split (1/S of the flows per spine where a special leaf is at
// either end; one channel over the plain types otherwise): the packet level
// hashes each flow onto one spine instead.
//
//   host --NIC_up[c]--> leaf --Up(leaf, s)--> spine s --Down(leaf', s)--> leaf' --NIC_down[c']--> host
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "clock/clock.h"

namespace rttcc::sim {

struct FlowFabricConfig {
    bool fat_tree = false;     // else one switch
    uint32_t ranks = 16;       // fat tree: a multiple of per_leaf
    uint32_t per_leaf = 16;    // fat tree: hosts per leaf
    uint32_t spines = 16;      // fat tree
    double bits_per_s = 10e9;  // every link's rate
    nanos delay = 1000;        // every link's propagation
    uint32_t queue_bytes = 1 << 20;  // every queue's room
    double hot = 1;            // > 1: rank 0's link (star) or leaf 0's uplink to spine 0 (fat tree) at 1/hot
    double hotspot_bits_per_s = 0;  // > 0: a flooder (the last leaf's, or on the switch) sends rank 0 this much
    nanos flood_on = 2'000'000, flood_off = 2'000'000;  // the flood's period
    uint32_t flood_spine = 0;  // fat tree: the spine the flood's ECMP hash picks
    uint32_t mtu = 1500;       // the flood's frames are full ones
};

struct FlowLinkType {
    std::string name;
    double bits_per_s = 0;  // each link's
    double count = 0;       // links of this type
    nanos delay = 0;
    uint32_t queue_bytes = 0;
    bool nic = false;       // a host's send queue: full means "send later", never a drop
};

struct FlowClass {
    std::string name;
    uint32_t first = 0, end = 0;  // ranks [first, end)
    uint32_t leaf_kind = 0;       // FlowFabric::leaf_kinds() index
    uint32_t size() const { return end - first; }
};

// Where some of a class's flows go: `flows` of them (fractional: an even
// ECMP split) to class `dest`, over `path` (link types, in order: 2 within
// a leaf or on one switch, 4 across a spine).  Their ACKs wait in the
// hosts' queues at both ends, `back` (the receiver's NIC, behind its data;
// the sender's own link in), but not in a spine's: the ACKs' flow hashes
// onto a spine of its own, which the fluid cannot tell.  (Counting the
// spines' mean instead made delay-based controllers back off from a hot
// spine's queue that a quarter of the ACKs meet, and leave the hot link a
// third idle where the packet level fills it.)
struct FlowChannelPath {
    static constexpr uint32_t kMaxHops = 4;
    uint32_t dest = 0;
    double flows = 0;
    uint32_t hops = 0;
    uint32_t path[kMaxHops] = {}, back[2] = {};
};

class FlowFabric {
public:
    // Throws std::invalid_argument for a configuration it cannot build.
    explicit FlowFabric(const FlowFabricConfig &c);

    const FlowFabricConfig &config() const { return c_; }
    uint32_t ranks() const { return c_.ranks; }
    const std::vector<FlowClass> &classes() const { return classes_; }
    const std::vector<FlowLinkType> &types() const { return types_; }
    uint32_t class_of(uint32_t rank) const;
    uint32_t leaf_of(uint32_t rank) const { return c_.fat_tree ? rank / c_.per_leaf : 0; }

    // The channels of the flows m -> (m + offset) mod P of every m in class
    // c (0 < offset < P), appended to `out`.
    void channels(uint32_t c, uint32_t offset, std::vector<FlowChannelPath> *out) const;
    // Flows of class c that reach class d at that offset: all, and within one leaf.
    double flows_to(uint32_t c, uint32_t d, uint32_t offset) const;
    double same_leaf(uint32_t c, uint32_t d, uint32_t offset) const;
    // The channels of one flow from class c to class d, within one leaf or
    // across the spines (its flows add up to 1), appended to `out`.
    void paths(uint32_t c, uint32_t d, bool within_leaf, std::vector<FlowChannelPath> *out) const {
        add_channels(c, d, 1, within_leaf, out);
    }

    // Round trip of a channel with empty queues: propagation both ways and
    // one `frame`-byte frame's serialization per hop (an ACK's is ignored).
    nanos base_rtt(const FlowChannelPath &p, uint32_t frame) const;

    // The hotspot's flood: its rate now on the wire (frames; 0 while off or
    // without one), the types it crosses, and its mean over a period (frames).
    double flood_bits_per_s(nanos now) const;
    const std::vector<uint32_t> &flood_path() const { return flood_path_; }
    double flood_mean_bits_per_s() const;

private:
    uint32_t add_type(const std::string &name, double rate, double count, bool nic = false);
    double flood_wire_bits_per_s() const;  // while on
    // Up and Down of a leaf kind at spine s (a plain kind: its aggregate types).
    uint32_t up(uint32_t leaf_kind, uint32_t s) const;
    uint32_t down(uint32_t leaf_kind, uint32_t s) const;
    void add_channels(uint32_t c, uint32_t d, double flows, bool same_leaf, std::vector<FlowChannelPath> *out) const;

    struct LeafKind {
        bool special = false;               // one leaf, a type per spine
        std::vector<uint32_t> up, down;     // special: per spine; plain: one aggregate each
    };

    FlowFabricConfig c_;
    std::vector<FlowClass> classes_;
    std::vector<FlowLinkType> types_;
    std::vector<LeafKind> leaf_kinds_;
    std::vector<uint32_t> nic_up_, nic_down_;  // per class
    std::vector<uint32_t> flood_path_;
};

}  // namespace rttcc::sim
