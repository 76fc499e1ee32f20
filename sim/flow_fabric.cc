#include "flow_fabric.h"

#include <algorithm>
#include <stdexcept>

#include "sim_wire.h"

namespace rttcc::sim {

namespace {

// |[a, b) ∩ [x, y)|
uint64_t overlap(uint64_t a, uint64_t b, uint64_t x, uint64_t y) {
    const uint64_t lo = std::max(a, x), hi = std::min(b, y);
    return hi > lo ? hi - lo : 0;
}

}  // namespace

uint32_t FlowFabric::add_type(const std::string &name, double rate, double count, bool nic) {
    FlowLinkType t;
    t.name = name;
    t.bits_per_s = rate;
    t.count = count;
    t.delay = c_.delay;
    t.queue_bytes = c_.queue_bytes;
    t.nic = nic;
    types_.push_back(t);
    return static_cast<uint32_t>(types_.size() - 1);
}

FlowFabric::FlowFabric(const FlowFabricConfig &c) : c_(c) {
    const uint32_t P = c.ranks, K = c.per_leaf, S = c.spines;
    if (P < 2) throw std::invalid_argument("flow level: at least 2 ranks");
    if (!(c.bits_per_s > 0) || !(c.hot >= 1)) throw std::invalid_argument("flow level: a rate > 0 and hot >= 1");
    if (c.fat_tree && (K == 0 || S == 0 || P % K))
        throw std::invalid_argument("flow level: a fat tree's ranks fill whole leaves (ranks a multiple of per_leaf)");
    const bool hotspot = c.hotspot_bits_per_s > 0;
    const bool rank0 = hotspot || (!c.fat_tree && c.hot > 1);
    const bool leaf0 = c.fat_tree && (hotspot || c.hot > 1);
    if (c.fat_tree && c.flood_spine >= S) throw std::invalid_argument("flow level: flood_spine past the spines");

    // Leaf kinds: 0 plain (aggregate), then leaf 0 and the flooder's leaf where special.
    const uint32_t leaves = c.fat_tree ? P / K : 1;
    leaf_kinds_.resize(1);
    uint32_t kind0 = 0, flood_kind = 0;
    if (c.fat_tree) {
        const uint32_t plain = leaves - (leaf0 ? 1 : 0);
        if (plain > 0) {
            leaf_kinds_[0].up.push_back(add_type("leaf_up", c.bits_per_s, double(plain) * S));
            leaf_kinds_[0].down.push_back(add_type("leaf_down", c.bits_per_s, double(plain) * S));
        }
        auto special = [&](const std::string &name, bool hot_first) {
            LeafKind k;
            k.special = true;
            for (uint32_t s = 0; s < S; ++s) {
                const double rate = hot_first && s == 0 ? c.bits_per_s / c.hot : c.bits_per_s;
                k.up.push_back(add_type(name + "_up" + std::to_string(s), rate, 1));
                k.down.push_back(add_type(name + "_down" + std::to_string(s), rate, 1));
            }
            leaf_kinds_.push_back(k);
            return static_cast<uint32_t>(leaf_kinds_.size() - 1);
        };
        if (leaf0) kind0 = special("leaf0", c.hot > 1);
        if (hotspot) flood_kind = special("flood_leaf", false);
    }

    // Classes: contiguous ranges, each inside one leaf kind.
    auto add_class = [&](const std::string &name, uint32_t first, uint32_t end, uint32_t kind) {
        if (first < end) classes_.push_back({name, first, end, kind});
    };
    if (rank0) add_class("rank0", 0, 1, kind0);
    if (c.fat_tree && leaf0) {
        add_class("leaf0", rank0 ? 1 : 0, K, kind0);
        add_class("plain", K, P, 0);
    } else {
        add_class(rank0 ? "others" : "all", rank0 ? 1 : 0, P, 0);
    }
    for (const FlowClass &k : classes_) {
        const double rate = !c.fat_tree && c.hot > 1 && k.first == 0 ? c.bits_per_s / c.hot : c.bits_per_s;
        nic_up_.push_back(add_type(k.name + "_nic", rate, k.size(), true));
        nic_down_.push_back(add_type(k.name + "_in", rate, k.size()));
    }
    if (hotspot) {
        flood_path_.push_back(add_type("flooder_nic", c.bits_per_s, 1, true));
        if (c.fat_tree) {
            flood_path_.push_back(up(flood_kind, c.flood_spine));
            flood_path_.push_back(down(kind0, c.flood_spine));
        }
        flood_path_.push_back(nic_down_[class_of(0)]);
    }
}

uint32_t FlowFabric::class_of(uint32_t rank) const {
    for (uint32_t i = 0; i < classes_.size(); ++i)
        if (rank >= classes_[i].first && rank < classes_[i].end) return i;
    throw std::out_of_range("no such rank");
}

uint32_t FlowFabric::up(uint32_t leaf_kind, uint32_t s) const {
    const LeafKind &k = leaf_kinds_.at(leaf_kind);
    return k.special ? k.up.at(s) : k.up.at(0);
}

uint32_t FlowFabric::down(uint32_t leaf_kind, uint32_t s) const {
    const LeafKind &k = leaf_kinds_.at(leaf_kind);
    return k.special ? k.down.at(s) : k.down.at(0);
}

double FlowFabric::flows_to(uint32_t c, uint32_t d, uint32_t offset) const {
    const uint64_t P = c_.ranks, a = classes_[c].first + uint64_t{offset}, b = classes_[c].end + uint64_t{offset};
    const uint64_t x = classes_[d].first, y = classes_[d].end;
    // [a, b) mod P: one range or two
    if (a >= P) return static_cast<double>(overlap(a - P, b - P, x, y));
    if (b <= P) return static_cast<double>(overlap(a, b, x, y));
    return static_cast<double>(overlap(a, P, x, y) + overlap(0, b - P, x, y));
}

double FlowFabric::same_leaf(uint32_t c, uint32_t d, uint32_t offset) const {
    if (!c_.fat_tree) return flows_to(c, d, offset);  // one switch: every flow
    const FlowClass &k = classes_[c];
    const uint32_t P = c_.ranks, K = c_.per_leaf;
    if (k.size() <= K) {  // within one leaf: count them
        uint64_t n = 0;
        for (uint32_t m = k.first; m < k.end; ++m) {
            const uint32_t to = static_cast<uint32_t>((uint64_t{m} + offset) % P);
            n += leaf_of(m) == leaf_of(to) && to >= classes_[d].first && to < classes_[d].end;
        }
        return static_cast<double>(n);
    }
    // Whole leaves (by construction): a flow stays in its leaf, so in c.
    if (c != d) return 0;
    const double leaves = static_cast<double>(k.size() / K);
    double n = 0;
    if (offset < K) n += leaves * (K - offset);                // m + offset, no wrap
    if (P - offset < K) n += leaves * (K - (P - offset));      // m - (P - offset), wrapped
    return n;
}

void FlowFabric::add_channels(uint32_t c, uint32_t d, double flows, bool same, std::vector<FlowChannelPath> *out) const {
    if (flows <= 0) return;
    if (same || !c_.fat_tree) {
        out->push_back({d, flows, 2, {nic_up_[c], nic_down_[d]}, {nic_up_[d], nic_down_[c]}});
        return;
    }
    const uint32_t sl = classes_[c].leaf_kind, dl = classes_[d].leaf_kind;
    const bool split = leaf_kinds_[sl].special || leaf_kinds_[dl].special;
    const uint32_t spines = split ? c_.spines : 1;
    for (uint32_t s = 0; s < spines; ++s)
        out->push_back({d, flows / spines, 4, {nic_up_[c], up(sl, s), down(dl, s), nic_down_[d]},
                        {nic_up_[d], nic_down_[c]}});
}

void FlowFabric::channels(uint32_t c, uint32_t offset, std::vector<FlowChannelPath> *out) const {
    if (offset == 0 || offset >= c_.ranks) throw std::invalid_argument("offset: 1 .. ranks - 1");
    for (uint32_t d = 0; d < classes_.size(); ++d) {
        const double all = flows_to(c, d, offset);
        if (all <= 0) continue;
        const double same = same_leaf(c, d, offset);
        add_channels(c, d, same, true, out);
        add_channels(c, d, all - same, false, out);
    }
}

nanos FlowFabric::base_rtt(const FlowChannelPath &p, uint32_t frame) const {
    double t = 0;
    for (uint32_t h = 0; h < p.hops; ++h)
        t += 2.0 * static_cast<double>(types_[p.path[h]].delay) + frame * 8e9 / types_[p.path[h]].bits_per_s;
    return static_cast<nanos>(t);
}

// hotspot_bits_per_s is UDP payload (udp_flood's -rate), in full frames.
double FlowFabric::flood_wire_bits_per_s() const {
    return c_.hotspot_bits_per_s * frame_bytes(c_.mtu) / (c_.mtu - 28);
}

double FlowFabric::flood_bits_per_s(nanos now) const {
    if (flood_path_.empty()) return 0;
    const nanos period = c_.flood_on + c_.flood_off;
    const bool on = period == 0 || now % period < c_.flood_on;
    return on ? flood_wire_bits_per_s() : 0;
}

double FlowFabric::flood_mean_bits_per_s() const {
    if (flood_path_.empty()) return 0;
    const double period = static_cast<double>(c_.flood_on + c_.flood_off);
    return period > 0 ? flood_wire_bits_per_s() * static_cast<double>(c_.flood_on) / period : flood_wire_bits_per_s();
}

}  // namespace rttcc::sim
