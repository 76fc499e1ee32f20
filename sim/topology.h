// The fabrics rttcc_sim builds: the testbed's (one switch; two groups
// joined by one link) and a two-level fat tree with a chosen
// oversubscription.  Each returns its hosts in rank order.
#pragma once
#include <cstdint>
#include <vector>

#include "fabric.h"

namespace rttcc::sim {

struct Topology {
    std::vector<uint32_t> hosts;     // node ids, rank order
    std::vector<uint32_t> switches;  // node ids
};

// Every host on one switch, each by its own link.
Topology one_switch(Fabric &f, size_t hosts, const LinkConfig &host_link);

// `groups` switches of `per_group` hosts each; with two groups their
// switches share one `group_link` (the testbed's scenario c), with more each
// group switch has a `group_link` to one core switch.
Topology groups(Fabric &f, size_t groups, size_t per_group, const LinkConfig &host_link,
                const LinkConfig &group_link);

// `leaves` leaf switches of `per_leaf` hosts, each leaf linked to every one
// of `spines` spine switches by `uplink`.  Oversubscription is
// per_leaf * host rate / (spines * uplink rate).
Topology fat_tree(Fabric &f, size_t leaves, size_t per_leaf, size_t spines, const LinkConfig &host_link,
                  const LinkConfig &uplink);

// Both directions of a host's own link at `bits_per_s` with a queue of
// `queue_bytes` (what the testbed's `shape` does with htb and pfifo).
void shape(Fabric &f, uint32_t host, uint64_t bits_per_s, uint32_t queue_bytes);

}  // namespace rttcc::sim
