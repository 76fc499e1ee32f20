// A wire decorator that injects faults on transmit (testing only): drop,
// duplicate, reorder (hold one datagram back behind the next) and truncate,
// at random rates, and drops chosen datagrams (drop_if).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "wire/wire.h"

namespace rttcc {

struct FaultRates {
    uint32_t drop = 0, dup = 0, reorder = 0, truncate = 0;  // per million datagrams
    bool any() const { return drop || dup || reorder || truncate; }
};

class FaultyWire final : public Wire {
public:
    // Bursts of up to max_burst datagrams (the engine's tx_batch) go whole;
    // the room for them is made here, so tx_burst allocates nothing.
    FaultyWire(std::unique_ptr<Wire> inner, FaultRates rates, uint64_t seed, size_t max_burst);

    const char *name() const override { return inner_->name(); }
    size_t local_address(Channel ch, void *buf, size_t cap) const override {
        return inner_->local_address(ch, buf, cap);
    }
    bool resolve(Channel ch, const void *a, size_t l, WireHandle *o, std::string *e) override {
        return inner_->resolve(ch, a, l, o, e);
    }
    size_t path_datagram(const void *a, size_t l) const override { return inner_->path_datagram(a, l); }
    int rx_burst(Channel ch, RxDatagram *d, int n) override { return inner_->rx_burst(ch, d, n); }
    unsigned ready() override { return inner_->ready(); }
    int poll_fds(int *fds, int cap) const override { return inner_->poll_fds(fds, cap); }
    int failures(WireFailure *out, int n) override;
    const char *refuser() const override { return inner_->refuser(); }
    std::string error_text(int error) const override { return inner_->error_text(error); }
    bool verifies_source() const override { return inner_->verifies_source(); }
    TsSource stamp_source() const override { return inner_->stamp_source(); }
    int tx_stamps(TxStamp *out, int n) override { return inner_->tx_stamps(out, n); }
    int tx_burst(Channel ch, TxDatagram *d, int n) noexcept override;

    uint64_t injected = 0;  // faults injected so far
    std::function<bool(Channel, const TxDatagram &)> drop_if;  // drops what it accepts (unit tests)
    int fail_errno = 0;  // nonzero: what drop_if drops is reported as a send failure with this errno
    std::function<bool(Channel, const TxDatagram &)> refuse_if;  // refuses it and the rest of its burst (buffer full)

private:
    bool roll(uint32_t per_million);

    static constexpr size_t kMaxFailed = 64;  // fail_errno drops kept for failures()

    std::unique_ptr<Wire> inner_;  // the real wire
    FaultRates rates_;             // how often each fault happens
    uint64_t rng_;                 // xorshift state
    size_t max_burst_;             // most datagrams of the caller's taken in one burst
    std::vector<uint8_t> held_[kChannels];  // a datagram held back for reordering (room: kMaxDatagram)
    WireHandle held_dest_[kChannels] = {};  // its destination
    std::vector<WireFailure> failed_;       // fail_errno drops not yet reported
    // Room: two a datagram (it and its duplicate) and the held one.
    std::vector<TxDatagram> out_;           // this burst's survivors, to the real wire at once
    std::vector<int> from_;                 // the caller's index of each
};

}  // namespace rttcc
