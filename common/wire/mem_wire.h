// An in-memory wire: several engines of one process exchange datagrams
// through a MemNetwork, so protocol tests run without sockets, on the
// network's own time.
#pragma once
#include <array>
#include <atomic>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "clock/clock.h"
#include "wire/wire.h"

namespace rttcc {

// Time that moves only when the test moves it: what the engines do, and
// when, is the same however loaded the machine is.  It starts late enough
// that no time the engines keep is 0 (their "never").
class ManualClock final : public Clock {
public:
    static constexpr nanos kStart = 1000ull * 1000000000ull;  // 1000 s
    nanos now() const override { return now_.load(std::memory_order_relaxed); }
    void advance(nanos by) { now_.fetch_add(by, std::memory_order_relaxed); }

private:
    std::atomic<nanos> now_{kStart};
};

class MemNetwork {
public:
    explicit MemNetwork(size_t datagram = 9000) : datagram_(datagram) {}
    size_t datagram() const { return datagram_; }
    // Registers an endpoint; returns its index.
    uint32_t attach() {
        std::lock_guard<std::mutex> g(mu_);
        queues_.emplace_back();
        return static_cast<uint32_t>(queues_.size() - 1);
    }
    using Queue = std::deque<std::vector<uint8_t>>;
    // Queue of (endpoint, channel); the sender is carried in the first 4 bytes.
    Queue &queue(uint32_t ep, Channel ch) { return queues_[ep][ch]; }
    // Engines' liveness agents use the wire from threads of their own.
    std::mutex &mutex() { return mu_; }
    uint64_t delivered = 0;  // datagrams handed to receivers
    // The time of the engines on this network (engine_harness.h gives it
    // them): `clock`, which the test moves, or CLOCK_MONOTONIC for engines
    // with threads of their own (real_time).
    ManualClock clock;
    bool real_time = false;
    const Clock &time() const { return real_time ? monotonic_clock() : clock; }

private:
    std::mutex mu_;                               // guards the queues and `delivered`
    size_t datagram_;                             // path datagram size
    std::vector<std::array<Queue, kChannels>> queues_;  // per endpoint and channel
};

class MemWire final : public Wire {
public:
    explicit MemWire(MemNetwork &net) : net_(net), self_(net.attach()) {}
    const char *name() const override { return "mem"; }
    size_t local_address(Channel, void *buf, size_t cap) const override {
        if (cap < sizeof self_) return 0;
        std::memcpy(buf, &self_, sizeof self_);
        return sizeof self_;
    }
    bool resolve(Channel, const void *addr, size_t len, WireHandle *out, std::string *err) override {
        uint32_t ep;
        if (len != sizeof ep) return *err = "bad mem address", false;
        std::memcpy(&ep, addr, sizeof ep);
        *out = ep;
        return true;
    }
    size_t path_datagram(const void *, size_t) const override { return net_.datagram(); }
    // Allocates (a test wire): out of memory here ends the program.
    int tx_burst(Channel ch, TxDatagram *d, int n) noexcept override {
        for (int i = 0; i < n; ++i) {
            std::vector<uint8_t> bytes(sizeof self_);
            std::memcpy(bytes.data(), &self_, sizeof self_);
            for (int k = 0; k < d[i].iovcnt; ++k) {
                const auto *p = static_cast<const uint8_t *>(d[i].iov[k].iov_base);
                bytes.insert(bytes.end(), p, p + d[i].iov[k].iov_len);
            }
            std::lock_guard<std::mutex> g(net_.mutex());
            net_.queue(static_cast<uint32_t>(d[i].dest), ch).push_back(std::move(bytes));
        }
        return n;
    }
    int rx_burst(Channel ch, RxDatagram *d, int n) override {
        std::lock_guard<std::mutex> g(net_.mutex());
        auto &q = net_.queue(self_, ch);
        held_[ch].clear();
        int got = 0;
        for (; got < n && !q.empty(); ++got) {
            held_[ch].push_back(std::move(q.front()));
            q.pop_front();
        }
        for (int i = 0; i < got; ++i) {
            const auto &b = held_[ch][i];
            uint32_t src;
            std::memcpy(&src, b.data(), sizeof src);
            d[i] = {b.data() + sizeof src, b.size() - sizeof src, src, 0, TsSource::kNone};
        }
        net_.delivered += static_cast<uint64_t>(got);
        return got;
    }

private:
    MemNetwork &net_;                              // shared medium
    uint32_t self_;                                // our endpoint index
    std::vector<std::vector<uint8_t>> held_[kChannels];  // last burst's datagrams
};

}  // namespace rttcc
