#include "fabric.h"

#include <limits>
#include <stdexcept>

namespace rttcc::sim {

namespace {

uint64_t mix(uint64_t x) {  // splitmix64's finaliser: a cheap, well-spread hash
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

}  // namespace

bool Port::offer(Packet p, nanos now) {
    if (!sending_ && waiting_.empty()) {
        on_wire_ = p;
        start(now);
        return true;
    }
    if (queued_ + p.bytes > config_.queue_bytes) {
        ++stats_.drops;
        stats_.drop_bytes += p.bytes;
        stats_.background_drops += p.payload == kNoPayload;
        fabric_.dropped(now, p);
        return false;
    }
    if (p.ect && config_.ecn_bytes && queued_ >= config_.ecn_bytes) {
        p.ce = true;
        ++stats_.marks;
    }
    waiting_.push_back(p);
    queued_ += p.bytes;
    if (queued_ > stats_.max_queue_bytes) stats_.max_queue_bytes = queued_;
    return true;
}

Port::Port(Fabric &fabric, uint32_t from, uint32_t to, const LinkConfig &config)
    : fabric_(fabric), from_(from), to_(to), config_(checked(config)) {}

void Port::reconfigure(const LinkConfig &config) { config_ = checked(config); }

const LinkConfig &Port::checked(const LinkConfig &config) {
    if (config.bits_per_s == 0) throw std::invalid_argument("a link needs a rate of at least 1 bit/s");
    return config;
}

// Sends on_wire_: bytes * 8 / rate, in bits (a rate below 8 bit/s is no
// byte rate), with the remainder carried to the next packet of a busy
// period so that a saturated port runs at exactly its rate.
void Port::start(nanos now) {
    const uint64_t work = on_wire_.bytes * 8'000'000'000ull + carry_;
    carry_ = work % config_.bits_per_s;
    sending_ = true;
    started_ = now;
    fabric_.events().after(work / config_.bits_per_s, this, kSent);
}

void Port::fire(nanos now, uint64_t what) {
    if (what == kArrived) {
        const Packet p = in_flight_.front();
        in_flight_.pop_front();
        fabric_.arrive(to_, p, now);
        return;
    }
    ++stats_.packets;
    stats_.bytes += on_wire_.bytes;
    stats_.busy += now - started_;
    in_flight_.push_back(on_wire_);
    fabric_.events().after(config_.delay, this, kArrived);
    if (waiting_.empty()) {
        sending_ = false;
        carry_ = 0;
        return;
    }
    on_wire_ = waiting_.front();
    waiting_.pop_front();
    queued_ -= on_wire_.bytes;
    start(now);
}

uint32_t Fabric::add_host() {
    const auto id = static_cast<uint32_t>(nodes_.size());
    nodes_.push_back({true, {}, nullptr, {}});
    host_index_.resize(nodes_.size(), std::numeric_limits<uint32_t>::max());
    host_index_[id] = static_cast<uint32_t>(hosts_.size());
    hosts_.push_back(id);
    return id;
}

uint32_t Fabric::add_switch() {
    nodes_.push_back({false, {}, nullptr, {}});
    host_index_.resize(nodes_.size(), std::numeric_limits<uint32_t>::max());
    return static_cast<uint32_t>(nodes_.size() - 1);
}

void Fabric::connect(uint32_t a, uint32_t b, const LinkConfig &a_to_b, const LinkConfig &b_to_a) {
    if (a >= nodes_.size() || b >= nodes_.size() || a == b) throw std::invalid_argument("connect: bad nodes");
    nodes_[a].ports.push_back(static_cast<uint32_t>(ports_.size()));
    ports_.push_back(std::make_unique<Port>(*this, a, b, a_to_b));
    nodes_[b].ports.push_back(static_cast<uint32_t>(ports_.size()));
    ports_.push_back(std::make_unique<Port>(*this, b, a, b_to_a));
}

Port *Fabric::port(uint32_t from, uint32_t to) {
    for (const uint32_t i : nodes_.at(from).ports)
        if (ports_[i]->to() == to) return ports_[i].get();
    return nullptr;
}

// Breadth-first from each destination host; hosts other than the
// destination carry no transit traffic.  A node's next hops towards it are
// its ports to neighbours one step closer.  Consecutive equal sets share
// their entry in route_ports_ (a leaf's many "up" routes are one set).
void Fabric::build_routes() {
    constexpr uint32_t kFar = std::numeric_limits<uint32_t>::max();
    route_ports_.clear();
    for (Node &n : nodes_) n.routes.assign(hosts_.size(), {0, 0});
    std::vector<uint32_t> dist(nodes_.size()), frontier, next, hops;
    for (size_t h = 0; h < hosts_.size(); ++h) {
        const uint32_t dst = hosts_[h];
        std::fill(dist.begin(), dist.end(), kFar);
        dist[dst] = 0;
        frontier.assign(1, dst);
        while (!frontier.empty()) {
            next.clear();
            for (const uint32_t n : frontier) {
                if (n != dst && nodes_[n].host) continue;  // reached, but not a way through
                for (const uint32_t pi : nodes_[n].ports) {
                    const uint32_t m = ports_[pi]->to();
                    if (dist[m] == kFar) {
                        dist[m] = dist[n] + 1;
                        next.push_back(m);
                    }
                }
            }
            frontier.swap(next);
        }
        for (uint32_t n = 0; n < nodes_.size(); ++n) {
            if (n == dst || dist[n] == kFar) continue;
            hops.clear();
            for (const uint32_t pi : nodes_[n].ports) {
                const uint32_t m = ports_[pi]->to();
                if (dist[m] + 1 == dist[n] && (m == dst || !nodes_[m].host)) hops.push_back(pi);
            }
            const auto count = static_cast<uint32_t>(hops.size());
            const auto first = static_cast<uint32_t>(route_ports_.size());
            auto &route = nodes_[n].routes[h];
            if (h > 0) {  // the same set as this node's route to the previous host?
                const auto &prev = nodes_[n].routes[h - 1];
                if (prev.second == count && std::equal(hops.begin(), hops.end(), route_ports_.begin() + prev.first)) {
                    route = prev;
                    continue;
                }
            }
            route_ports_.insert(route_ports_.end(), hops.begin(), hops.end());
            route = {first, count};
        }
    }
}

Port *Fabric::next_hop(uint32_t node, const Packet &p) {
    const uint32_t h = host_index_.at(p.dst);
    const Node &n = nodes_[node];
    if (h >= n.routes.size() || n.routes[h].second == 0) return nullptr;
    const auto [first, count] = n.routes[h];
    const uint32_t pick = count == 1 ? 0 : static_cast<uint32_t>(mix(p.flow ^ mix(seed_ ^ node)) % count);
    return ports_[route_ports_[first + pick]].get();
}

std::vector<Port *> Fabric::path(const Packet &p) {
    std::vector<Port *> ports;
    if (p.dst >= nodes_.size() || !nodes_[p.dst].host || p.src >= nodes_.size() || !nodes_[p.src].host) return ports;
    for (uint32_t node = p.src; node != p.dst;) {
        Port *out = (node == p.src || !nodes_[node].host) ? next_hop(node, p) : nullptr;
        if (!out || ports.size() > nodes_.size()) return {};
        ports.push_back(out);
        node = out->to();
    }
    return ports;
}

bool Fabric::send(Packet p) {
    p.id = next_id_++;
    Port *out = p.dst < nodes_.size() && nodes_[p.dst].host && p.src < nodes_.size() && nodes_[p.src].host
                    ? next_hop(p.src, p)
                    : nullptr;
    if (!out) {
        ++unroutable_;
        dropped(events_.now(), p);
        return false;
    }
    return out->offer(p, events_.now());
}

void Fabric::arrive(uint32_t node, const Packet &p, nanos now) {
    if (node == p.dst) {
        ++delivered_;
        if (nodes_[node].sink) nodes_[node].sink->deliver(now, p);
        return;
    }
    Port *out = nodes_[node].host ? nullptr : next_hop(node, p);
    if (!out) {
        ++unroutable_;
        dropped(now, p);
        return;
    }
    out->offer(p, now);
}

}  // namespace rttcc::sim
