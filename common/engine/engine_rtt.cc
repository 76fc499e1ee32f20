// Timestamps, RTT samples, congestion control and the RTT table.
//
// A sample is the age of the echoed transmission when its ACK (or a
// probe's reply) arrived, minus the time the receiver held it (RFC 9002).
// Both ends of the age come from the same source: the wire's kernel/NIC
// stamps when the transmission was stamped and the ACK's arrival too,
// otherwise the engine's clock at post and at progress.
#include "engine/engine.h"

namespace rttcc {

// The segment in flight whose latest transmission has this id, if any.
static TxSegment *find_transmission(const Peer &p, uint32_t tx_id) {
    const seq_t una = p.tx.una();
    const seq_t seq = una + ((tx_id >> 16) - (una & 0xffffu)) % 0x10000u;
    TxSegment *seg = p.tx.at(seq);
    return seg && seg->tx_id == tx_id ? seg : nullptr;
}

// Asks the wire to stamp this transmission (and the receiver to echo it),
// at most once per timestamp interval per peer.  Only for a wire that stamps.
void Engine::stamp_transmission(Peer &p, TxDatagram &d, PacketHeader &h, uint64_t cookie, nanos now) {
    if (now < p.path.next_stamp) return;
    d.stamp_cookie = cookie;
    h.flags |= kFlagTimed;
    p.path.next_stamp = now + stamp_interval_;
}

// Attaches the transmit stamps the wire has learnt to their segment or probe.
void Engine::reap_tx_stamps() {
    const int cap = static_cast<int>(tx_stamps_.size());
    for (int n = cap; n == cap;) {
        n = wire_->tx_stamps(tx_stamps_.data(), cap);
        for (int i = 0; i < n; ++i) {
            const TxStamp &s = tx_stamps_[i];
            const uint32_t index = static_cast<uint32_t>(s.cookie >> 32) & 0x7fffffffu;
            Peer *p = index < peers_.size() ? peers_[index].get() : nullptr;
            if (!p) continue;
            const uint32_t id = static_cast<uint32_t>(s.cookie);
            if (s.cookie & kProbeCookie) {
                if (p->probe.outstanding == id) {
                    p->probe.stamp = s.when;
                    p->probe.stamp_source = s.source;
                }
            } else if (TxSegment *seg = find_transmission(*p, id)) {
                seg->stamp = s.when;
                seg->stamp_source = s.source;
            }
        }
    }
}

// The RTT sample an ACK's echo gives (0 if none).  Taken before the ACK
// releases the echoed segment.  Transmission ids are never reused, so the
// echo of the transmission before a resend (a spurious probe's original)
// still samples, from the engine's clock; older ones match nothing.
nanos Engine::sample_rtt(Peer &p, const PacketHeader &h, const Arrival &a) {
    const uint32_t echo = h.echo_tx_id;
    if (echo == 0 || echo == p.last_echo) return 0;  // nothing echoed, or sampled already
    if (const TxSegment *seg = find_transmission(p, echo)) {
        p.last_echo = echo;
        if (seg->probed && seg->retries == 1) probe_verdict(p, /*spurious=*/false);
        return take_exchange(p, seg->last_tx, seg->stamp, seg->stamp_source, h, a, /*probe=*/false);
    }
    const TxSegment *seg = find_transmission(p, echo + 1);  // the next transmission's id
    if (!seg || !seg->prev_tx || (echo & 0xffffu) == 0xffffu) return 0;
    p.last_echo = echo;
    if (seg->probed && seg->retries == 1) probe_verdict(p, /*spurious=*/true);
    return take_exchange(p, seg->prev_tx, 0, TsSource::kNone, h, a, /*probe=*/false);
}

// One exchange: ours posted at `posted` (and stamped at `stamp` by
// `source`, 0 if the wire reported none), held by the peer h.ack_delay_ns,
// answered by h, which arrived as `a`.  Feeds the retransmission timer, the
// RTT estimator and the clock offset; returns the RTT sample (0 if none).
nanos Engine::take_exchange(Peer &p, nanos posted, nanos stamp, TsSource source, const PacketHeader &h,
                            const Arrival &a, bool probe) {
    // The retransmission timer waits for answers as they really come, the
    // peer's hold included (delayed ACKs, a descheduled peer), as TCP's
    // does; the RTT of the table and of congestion control leaves it out.
    if (a.now > posted) p.response.on_sample(a.now - posted);
    const bool stamped = stamp && a.stamp && source == a.source;
    const nanos sent = stamped ? stamp : posted;
    const nanos arrived = stamped ? a.stamp : a.now;
    const nanos age = arrived > sent ? arrived - sent : 0;
    const nanos rtt = age > h.ack_delay_ns ? age - h.ack_delay_ns : age;
    if (!rtt || !take_sample(p, rtt, stamped ? a.source : TsSource::kUser, probe, a.now)) return 0;
    take_offset(p, sent, arrived, h);
    return rtt;
}

// The queueing a datagram from the peer met on its way here, for cc_delay
// forward: its one-way time (our arrival less its send stamp, each on its
// own clock, synchronised or not) above the least over the last one to two
// seconds, of every datagram from the peer.  The clocks' offset cancels
// out; their drift over that window (a microsecond or two for disciplined
// clocks, 100 us for free-running ones 50 ppm apart) does not.  A queue
// that never drains for two seconds becomes the floor: the delay is then
// the round trip again (what cc_delay rtt always uses).
void Engine::note_one_way(Peer &p, const PacketHeader &h, const Arrival &a) {
    if (!p.cc || cfg_.cc_delay != RTTCC_CC_DELAY_FORWARD) return;
    PathState &path = p.path;
    const int64_t one_way = static_cast<int64_t>(domain_time(a.best()) - h.tx_stamp_ns);
    path.rev_floor.add(one_way, static_cast<int64_t>(a.now));
    path.rev_queue = static_cast<nanos>(one_way - path.rev_floor.min());
}

// Clock offset and one-way delays from one exchange (ours sent at `sent`,
// the peer's reply posted at h.tx_stamp_ns on its clock after holding ours
// for h.ack_delay_ns, arriving at `arrived`):
//   t1 = sent, t2 = t3 - hold, t3 = h.tx_stamp_ns, t4 = arrived
// In a synchronised domain the offset is 0 within the clock's error bound;
// otherwise it is estimated NTP-style (offset_estimator.h).
void Engine::take_offset(Peer &p, nanos sent, nanos arrived, const PacketHeader &h) {
    if (!domain_) return;
    const int64_t t1 = domain_->to_domain(sent), t4 = domain_->to_domain(arrived);
    const int64_t t3 = static_cast<int64_t>(h.tx_stamp_ns), t2 = t3 - static_cast<int64_t>(h.ack_delay_ns);
    PathState &path = p.path;
    if (domain_->synchronized()) {
        path.offset = 0;
        path.offset_bound = 2 * domain_->error_bound_ns();  // ours and, alike, the peer's
    } else {
        if (!path.offsets.add(t1, t2, t3, t4)) return;
        path.offset = path.offsets.offset();
        path.offset_bound = static_cast<uint64_t>(path.offsets.bound());
    }
    path.owd_fwd = OffsetEstimator::forward_delay(t1, t2, path.offset);
    path.owd_rev = OffsetEstimator::reverse_delay(t3, t4, path.offset);
    path.clocked = true;
}

// Feeds the peer's estimator.  Once the wire's own stamps have given a
// sample, user-clock samples (which include host delays) are left out.
bool Engine::take_sample(Peer &p, nanos rtt, TsSource source, bool probe, nanos now) {
    const bool best = source == timestamp_source();
    if (!best && p.path.best_samples) return false;
    p.path.best_samples += best;
    p.rtt.on_sample(rtt);
    p.path.last_source = source;
    p.path.last_was_probe = probe;
    p.path.last_sample = now;
    if (probe) ++p.probe.samples;
    return true;
}

// The delay congestion control sees for a round-trip sample: with
// cc_delay forward, less the queueing its ACK met on the way back.  Two
// peers sending to each other over one slow link each fill the queue the
// other's ACKs wait in; judged on round trips, each would take that for its
// own queue and back off, leaving the link idle half the time.
//
// Never below the least round trip, a true lower bound: a clock step or
// drift that inflates the reverse one-way time cannot make the controllers
// see a 0 delay (and keep it as their base).
nanos Engine::cc_sample(const Peer &p, nanos rtt) const {
    if (!rtt || cfg_.cc_delay != RTTCC_CC_DELAY_FORWARD || !p.path.rev_queue) return rtt;
    const nanos floor = std::min(rtt, p.rtt.min());
    return rtt > floor + p.path.rev_queue ? rtt - p.path.rev_queue : floor;
}

// An ACK released `acked_data` data segments and/or gave a sample (taken
// from it just before: p.path.rev_queue is that exchange's).
void Engine::on_acked(Peer &p, uint32_t acked_data, nanos rtt, nanos now) {
    if (p.cc) {
        const nanos sample = cc_sample(p, rtt);
        if (sample) p.cc_rtt.on_sample(sample);
        const RttEstimator &r = p.cc_rtt;
        p.cc->on_ack(AckEvent{now, acked_data, sample, r.srtt(), r.rttvar(), r.min(), p.rtt.srtt()});
    }
    if (rtt || p.cc) publish(p, now);
}

// A segment was lost: retransmission timeout, or a hole SACKs showed.
void Engine::on_loss(Peer &p, bool timeout, nanos now) {
    if (p.cc) {
        if (timeout)
            p.cc->on_timeout(now);
        else
            p.cc->on_fast_retransmit(now);
    }
    publish(p, now);
}

// Writes the peer's row of the RTT table.
void Engine::publish(Peer &p, nanos now) {
    if (!p.row) return;
    const RttEstimator &r = p.rtt;
    const bool sampled = r.samples() != 0;
    rttcc_rtt_row_t row{};
    row.srtt_ns = r.srtt();
    row.rttvar_ns = r.rttvar();
    row.min_ns = r.min();
    row.max_ns = r.max();
    row.latest_ns = r.latest();
    row.samples = r.samples() - p.probe.samples;
    row.probe_samples = p.probe.samples;
    row.owd_fwd_ns = p.path.owd_fwd;
    row.owd_rev_ns = p.path.owd_rev;
    row.clock_offset_ns = p.path.offset;
    row.offset_bound_ns = p.path.offset_bound;
    row.losses = p.stats.retx_timeout + p.stats.retx_fast + p.stats.probes_lost;
    row.retransmits = p.stats.retx;
    row.probes_sent = p.stats.probes_tx;
    row.probes_lost = p.stats.probes_lost;
    row.cwnd = p.cc ? p.cc->cwnd() : 0.0;
    row.bytes_tx = p.stats.bytes_tx;
    row.bytes_rx = p.stats.bytes_rx;
    row.rto_ns = p.response.rto();
    row.last_update_ns = now;
    row.rtt_source = static_cast<uint32_t>(sampled ? p.path.last_source : TsSource::kNone);
    uint32_t flags = 0;
    if (p.path.clocked) flags |= RTTCC_ROW_OWD | RTTCC_ROW_OFFSET;
    if (sampled && p.path.last_was_probe) flags |= RTTCC_ROW_LAST_PROBE;
    if (p.cc) flags |= RTTCC_ROW_CC;
    row.flags = flags;
    p.row->write(row);
}

}  // namespace rttcc
