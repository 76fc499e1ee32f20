// Loss found in round trips, not timeouts (RACK-TLP, RFC 8985).
//
// RACK.  Each channel is FIFO: once a segment sent at t is known to have
// arrived, every segment of its channel sent before t should have arrived
// too, give or take a reordering window.  One that has not is lost when its
// own latest transmission is older than that news by rack_rtt + reo_wnd, and
// until then it waits on a reorder timer.  A lost retransmission is found the
// same way (its transmission time is its latest), which the sequence-number
// rule (detect_losses) cannot do: before, it waited for the RTO.
//
//   sent        a (t1)   b (t2)   c (t3)         c's news comes at n:
//   arrived       -        -        x            rack_xmit[c's channel] = t3, rack_rtt = n - t3
//   a lost at t1 + rack_rtt + reo_wnd, b at t2 + rack_rtt + reo_wnd
//
// TLP.  The latest transmission to a peer on each channel (new data or a
// resend) carries a probe timer of two SRTT plus the peer's ACK delay
// instead of the RTO: per channel, as RACK's news is, so that a lost
// command (an RMA request, a FIN) followed by data that arrives is probed
// too, where it used to wait for the RTO.  If
// it passes with no ACK moving the window, that segment goes again as a
// probe, which asks for an ACK at once (asks_for_ack): the ACK and its SACKs
// show what the tail lost, and RACK resends it.  One probe per segment, then
// the RTO rules.  A peer that is merely descheduled costs one spurious
// probe, not a window cut.
#include <algorithm>

#include "engine/engine.h"

namespace rttcc {

// Two SRTT plus the peer's worst ACK hold, and no less than its answers
// take as they really come (the RTO's estimator without the RTO's floor);
// at least two hotel ticks.  Doubled per probe lately found spurious: a
// peer descheduled now and then (an oversubscribed node), or a tail now
// and then behind a deep queue, is probed less.  But never past 7/8 of the
// RTO, so that a probe always comes first: past it, probes stopped (the RTO
// rules a segment no probe went ahead of, and only a probe brings the
// doubling back down), and at 0.1% loss on one busy host every lost command
// waited the 5 ms floor of the RTO.  Half the RTO was too soon: with the
// RTO at its floor, every tail that waited more than 2.5 ms in a 100 Mbit/s
// link's queue was probed (97% of coll_rttcc's resends on the testbed).
nanos Engine::probe_timeout(const Peer &p) const {
    const nanos answers = p.response.srtt() + 4 * p.response.rttvar();
    const nanos pto = std::max<nanos>({2 * p.rtt.srtt() + usec(cfg_.ack_delay_us), answers, usec(32)}) << p.probe_shift;
    return std::min(pto, std::max<nanos>(base_rto(p) / 8 * 7, usec(32)));
}

// An ACK's echo named the transmission before a probe (sample_rtt): the
// original had arrived, the probe was spurious.  A probe whose own
// transmission is echoed repaired a loss: the timeout comes back down.
void Engine::probe_verdict(Peer &p, bool spurious) {
    constexpr uint8_t kMaxShift = 8;  // x256: past any RTO floor
    if (spurious && p.probe_shift < kMaxShift) ++p.probe_shift;
    if (!spurious && p.probe_shift) --p.probe_shift;
}

// RFC 8985's reordering window: a quarter of the least RTT.
nanos Engine::reorder_window(const Peer &p) const { return p.rtt.min() / 4; }

// The RTO and probe timeout of a transmission at `now`.  Every segment a
// pass first sends to a peer gets the same ones (the RTO's jitter is drawn
// from the peer and the first transmission's time), so they are worked out
// once per clock reading, and again when the estimators or the probe
// backoff they come from moved (a 32 KiB message, 23 segments: 3% of
// both engines' instructions).
Timeouts Engine::timeouts(const TxSegment &seg, nanos now) {
    Peer &p = *seg.peer;
    if (seg.backoff || seg.first_tx != now) return {rto(seg), probe_timeout(p)};
    Peer::FreshTimeouts &f = p.fresh_timeouts;
    if (f.at != now || f.rtt_samples != p.rtt.samples() || f.response_samples != p.response.samples() ||
        f.probe_shift != p.probe_shift)
        f = {now, p.rtt.samples(), p.response.samples(), p.probe_shift, {rto(seg), probe_timeout(p)}};
    return f.timeouts;
}

// Starts a segment's timer after a transmission.  The latest transmission
// to a peer on a channel is that channel's tail and carries the tail-loss
// probe, when the peer has an RTT, the probe comes first and the segment
// was not probed already.
// The previous tail keeps its probe deadline: most segments are ACKed
// before it, and probe_due gives the others their RTO then, off the send path.
void Engine::arm_timer(TxSegment &seg, nanos now) {
    Peer &p = *seg.peer;
    const Timeouts t = timeouts(seg, now);
    const nanos rto_at = now + t.rto;
    p.tail[seg.channel()] = &seg;
    seg.timer = Timer::kRto;
    if (cfg_.rack && !seg.probed && p.rtt.samples() && !peer_away(p)) {
        const nanos probe_at = now + t.probe;
        if (probe_at < rto_at) {
            seg.timer = Timer::kProbe;
            hotel_.check_in(seg, probe_at);
            return;
        }
    }
    hotel_.check_in(seg, rto_at);
}

// The hotel's verdict on a probe timer: the RTO for a segment no longer the
// tail; later if ACKs moved the window since (the flight drains); else the probe.
void Engine::probe_due(TxSegment &seg, nanos now) {
    Peer &p = *seg.peer;
    const bool tail = &seg == p.tail[seg.channel()];
    const nanos restart = std::max(seg.last_tx, p.last_advance) + probe_timeout(p);
    if (tail && restart > now && restart < seg.last_tx + rto(seg)) {
        hotel_.check_in(seg, restart);
    } else if (!tail || restart > now || peer_away(p)) {
        seg.timer = Timer::kRto;
        hotel_.check_in(seg, seg.last_tx + rto(seg));
    } else {
        seg.probed = true;
        queue_resend(seg, Resend::kProbe);
    }
}

// Sent before the channel's newest news: earlier, or in the same pass
// (one clock reading) with a lower sequence number (RFC 8985's tie-break).
static bool sent_before(const Peer &p, int ch, nanos when, seq_t seq) {
    return when < p.rack_xmit[ch] || (when == p.rack_xmit[ch] && seq_lt(seq, p.rack_seq[ch]));
}

// A segment's arrival is news for its channel (process_ack, take_sack).
// A retransmitted one is news only if the ACK's echo names the resend
// itself: else the original may be what arrived (it was only late), and
// taking the resend's time as news would condemn every segment sent
// before it, all on their way behind it (RFC 8985, 6.2, with the echo for
// its timestamps).
void Engine::rack_delivered(Peer &p, const TxSegment &seg, uint32_t echo, nanos now) {
    if (seg.retries && echo != seg.tx_id) return;
    const int ch = seg.channel();
    if (sent_before(p, ch, seg.last_tx, seg.seq)) return;
    p.rack_xmit[ch] = seg.last_tx;
    p.rack_seq[ch] = seg.seq;
    p.rack_rtt = now > seg.last_tx ? now - seg.last_tx : 0;  // (now read before another thread's send)
}

// Marks lost (or sets the reorder timer of) each segment in flight sent
// before its channel's newest news.  Sequence numbers are given out in send
// order, and a resend is only later: the scan stops at the first segment
// whose first transmission is before no news.
void Engine::rack_detect(Peer &p, nanos now) {
    const nanos reo = reorder_window(p);
    for (seq_t s = p.tx.una(); s != p.tx.next(); ++s) {
        TxSegment *seg = p.tx.at(s);
        if (!sent_before(p, kCmd, seg->first_tx, s) && !sent_before(p, kData, seg->first_tx, s)) break;
        if (seg->sacked || !seg->in_hotel || seg->timer == Timer::kReorder) continue;
        if (!sent_before(p, seg->channel(), seg->last_tx, s)) continue;
        const nanos due = seg->last_tx + p.rack_rtt + reo;
        if (due <= now) {
            queue_resend(*seg, Resend::kReorder);
        } else {
            unschedule(*seg);
            seg->timer = Timer::kReorder;
            hotel_.check_in(*seg, due);
        }
    }
}

// Takes the segment off its timer and puts it on the resend list, saying why.
void Engine::queue_resend(TxSegment &seg, Resend why) {
    unschedule(seg);
    seg.resend = why;
    resends_.push_back(seg);
}

}  // namespace rttcc
