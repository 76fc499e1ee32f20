#include "wire/faulty_wire.h"

#include <cstring>

namespace rttcc {

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

bool FaultyWire::send_one(Channel ch, TxDatagram &d) { return inner_->tx_burst(ch, &d, 1) == 1; }

bool FaultyWire::release_held(Channel ch) {
    if (held_[ch].empty()) return true;
    TxDatagram d{held_dest_[ch], {{held_[ch].data(), held_[ch].size()}}, 1, 0};
    if (!send_one(ch, d)) return false;
    held_[ch].clear();
    return true;
}

int FaultyWire::tx_burst(Channel ch, TxDatagram *d, int n) {
    for (int i = 0; i < n; ++i) {
        TxDatagram dg = d[i];
        if (drop_if && drop_if(ch, dg)) {
            ++injected;
            if (fail_errno && failed_.size() < 64) failed_.push_back({dg.dest, fail_errno});
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
        if (held_[ch].empty() && roll(rates_.reorder)) {
            ++injected;
            for (int k = 0; k < dg.iovcnt; ++k) {
                const auto *p = static_cast<const uint8_t *>(dg.iov[k].iov_base);
                held_[ch].insert(held_[ch].end(), p, p + dg.iov[k].iov_len);
            }
            held_dest_[ch] = dg.dest;
            continue;  // goes out after the next one
        }
        if (!send_one(ch, dg)) return i;
        if (!release_held(ch)) return i + 1;
        if (roll(rates_.dup)) {
            ++injected;
            send_one(ch, dg);
        }
    }
    return n;
}

}  // namespace rttcc
