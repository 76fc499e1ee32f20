#include "topology.h"

#include <stdexcept>

namespace rttcc::sim {

namespace {

void add_hosts(Fabric &f, Topology &t, uint32_t on_switch, size_t n, const LinkConfig &link) {
    for (size_t i = 0; i < n; ++i) {
        const uint32_t h = f.add_host();
        f.connect(h, on_switch, link);
        t.hosts.push_back(h);
    }
}

}  // namespace

Topology one_switch(Fabric &f, size_t hosts, const LinkConfig &host_link) {
    Topology t;
    t.switches.push_back(f.add_switch());
    add_hosts(f, t, t.switches[0], hosts, host_link);
    f.build_routes();
    return t;
}

Topology groups(Fabric &f, size_t groups, size_t per_group, const LinkConfig &host_link,
                const LinkConfig &group_link) {
    if (groups < 2) throw std::invalid_argument("groups: at least two");
    Topology t;
    for (size_t g = 0; g < groups; ++g) {
        t.switches.push_back(f.add_switch());
        add_hosts(f, t, t.switches.back(), per_group, host_link);
    }
    if (groups == 2) {
        f.connect(t.switches[0], t.switches[1], group_link);
    } else {
        const uint32_t core = f.add_switch();
        for (size_t g = 0; g < groups; ++g) f.connect(t.switches[g], core, group_link);
        t.switches.push_back(core);
    }
    f.build_routes();
    return t;
}

Topology fat_tree(Fabric &f, size_t leaves, size_t per_leaf, size_t spines, const LinkConfig &host_link,
                  const LinkConfig &uplink) {
    if (leaves < 1 || spines < 1) throw std::invalid_argument("fat_tree: at least one leaf and one spine");
    Topology t;
    std::vector<uint32_t> spine_ids;
    for (size_t s = 0; s < spines; ++s) spine_ids.push_back(f.add_switch());
    for (size_t l = 0; l < leaves; ++l) {
        const uint32_t leaf = f.add_switch();
        t.switches.push_back(leaf);
        add_hosts(f, t, leaf, per_leaf, host_link);
        for (const uint32_t s : spine_ids) f.connect(leaf, s, uplink);
    }
    t.switches.insert(t.switches.end(), spine_ids.begin(), spine_ids.end());
    f.build_routes();
    return t;
}

void shape(Fabric &f, uint32_t host, uint64_t bits_per_s, uint32_t queue_bytes) {
    Port &out = f.nic(host);
    Port *in = f.port(out.to(), host);
    for (Port *p : {&out, in}) {
        LinkConfig c = p->config();
        c.bits_per_s = bits_per_s;
        c.queue_bytes = queue_bytes;
        p->reconfigure(c);
    }
}

}  // namespace rttcc::sim
