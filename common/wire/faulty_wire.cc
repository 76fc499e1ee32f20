#include "wire/faulty_wire.h"

#include <algorithm>
#include <cstring>

namespace rttcc {

FaultyWire::FaultyWire(std::unique_ptr<Wire> inner, FaultRates rates, uint64_t seed, size_t max_burst)
    : inner_(std::move(inner)), rates_(rates), rng_(seed ? seed : 0x9e3779b97f4a7c15ull), max_burst_(max_burst) {
    for (auto &h : held_) h.reserve(kMaxDatagram);
    failed_.reserve(kMaxFailed);
    out_.reserve(2 * max_burst + 1);  // each datagram and its duplicate, and the held one
    from_.reserve(out_.capacity());
}

namespace {
size_t bytes_of(const TxDatagram &d) {
    size_t n = 0;
    for (int k = 0; k < d.iovcnt; ++k) n += d.iov[k].iov_len;
    return n;
}
}  // namespace

bool FaultyWire::roll(uint32_t per_million) {
    if (!per_million) return false;
    rng_ ^= rng_ << 13;
    rng_ ^= rng_ >> 7;
    rng_ ^= rng_ << 17;
    return rng_ % 1000000 < per_million;
}

int FaultyWire::failures(WireFailure *out, int n) {
    int k = inner_->failures(out, n);
    for (; k < n && !failed_.empty(); ++k) {
        out[k] = failed_.back();
        failed_.pop_back();
    }
    return k;
}

// The faults are rolled per datagram; what survives goes to the real wire
// as one burst, so injection keeps the wire's batching (and GSO) and only
// the faults differ from a clean run.  A datagram held back for reordering
// rides behind the next one; if the wire refuses it, it stays held.  The
// vectors have their room from the constructor: a burst past max_burst
// is cut short ("full now"), and a datagram too long to hold is not held.
int FaultyWire::tx_burst(Channel ch, TxDatagram *d, int n) noexcept {
    n = std::min(n, static_cast<int>(max_burst_));
    out_.clear();
    from_.clear();
    int held_at = -1;  // index in out_ of the held datagram, if it goes in this burst
    int offered = n;   // the caller's datagrams the real wire is offered
    for (int i = 0; i < n; ++i) {
        TxDatagram dg = d[i];
        if (refuse_if && refuse_if(ch, dg)) {
            offered = i;
            break;
        }
        if (drop_if && drop_if(ch, dg)) {
            ++injected;
            if (fail_errno && failed_.size() < kMaxFailed) failed_.push_back({dg.dest, fail_errno, ch});
            continue;
        }
        if (roll(rates_.drop)) {
            ++injected;
            continue;
        }
        if (roll(rates_.truncate)) {
            ++injected;
            iovec &last = dg.iov[dg.iovcnt - 1];
            last.iov_len /= 2;  // header-only datagrams lose half their header
        }
        if (held_[ch].empty() && roll(rates_.reorder) && bytes_of(dg) <= held_[ch].capacity()) {
            ++injected;
            for (int k = 0; k < dg.iovcnt; ++k) {
                const auto *p = static_cast<const uint8_t *>(dg.iov[k].iov_base);
                held_[ch].insert(held_[ch].end(), p, p + dg.iov[k].iov_len);
            }
            held_dest_[ch] = dg.dest;
            continue;  // goes out after the next one
        }
        out_.push_back(dg);
        from_.push_back(i);
        if (!held_[ch].empty() && held_at < 0) {
            held_at = static_cast<int>(out_.size());
            out_.push_back(TxDatagram{held_dest_[ch], {{held_[ch].data(), held_[ch].size()}}, 1, 0});
            from_.push_back(i);
        }
        if (roll(rates_.dup)) {
            ++injected;
            out_.push_back(dg);
            from_.push_back(i);
        }
    }
    const int k = out_.empty() ? 0 : inner_->tx_burst(ch, out_.data(), static_cast<int>(out_.size()));
    if (held_at >= 0 && k > held_at) held_[ch].clear();
    if (k == static_cast<int>(out_.size())) return offered;
    // Refused from out_[k] on: the caller keeps its datagram and the ones after
    // (a refused duplicate or held copy is no loss of the caller's).
    const int first_kept = from_[static_cast<size_t>(k)];
    const bool its_original_went = k > 0 && from_[static_cast<size_t>(k - 1)] == first_kept;
    return its_original_went ? first_kept + 1 : first_kept;
}

}  // namespace rttcc
