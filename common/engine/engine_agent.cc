// The liveness agent: a thread of the engine's own that answers peers while
// the application computes outside MPI.  Without it nobody would: the engine
// runs only inside MPI calls, and a peer whose data goes unacknowledged for
// peer_timeout declares us dead.
//
//   app:    MPI ..... | compute, no MPI call ...................... | MPI
//   agent:  asleep    | quiet passes: ACK what was delivered, resend | asleep
//           (checks   |   our own data, probe, land puts, keep new   |
//            each     |   messages unACKed and answer BUSY           |
//            idle_ms) ^ agent_idle_ms without progress               ^ kept ones first
//
// Quiet passes call nobody back: under MPI_THREAD_SINGLE the host (ob1,
// cm) may not be entered from a second thread.  Puts land (the bytes are
// in place: a rendezvous or a get's reply moves on while the application
// computes), and the owner of a grant hears of its put at its application's
// next pass.  A message arriving then is not accepted, so nothing is ever
// acknowledged that was not delivered; its sender hears BUSY, which keeps it
// from declaring us dead and from taking its timeouts for congestion.  The
// segment is kept (up to a window per peer) and the application's next pass
// takes it first: an application that computes for long stretches and
// polls in between (MPI_Iprobe, MPI_Test) finds its message at the first
// poll.  One turned away for want of room is resent: the application's next
// pass sends its peer an ACK with kFlagResume, and the peer resends
// everything unacknowledged at once instead of waiting for its (backed-off)
// timer.  Under MPI_THREAD_MULTIPLE the engine is
// thread-safe and the agent's passes are full ones: it delivers too.
#include <poll.h>

#include <algorithm>
#include <chrono>
#include <new>

#include "engine/engine.h"

namespace rttcc {

namespace {
constexpr int kAgentPollMs = 2;          // longest sleep between passes while the application is away
constexpr nanos kBusyInterval = 1000000;  // at most one BUSY per peer per this (1 ms)
}  // namespace

void Engine::start_agent() {
    if (cfg_.agent) agent_ = std::thread([this] { agent_main(); });
}

void Engine::stop_agent() {
    if (!agent_.joinable()) return;
    {
        std::lock_guard<std::mutex> g(agent_mu_);
        stopping_.store(true);
    }
    agent_cv_.notify_all();
    agent_.join();
}

// Sleeps in real time; measures the application's absence on the engine's clock.
void Engine::agent_main() {
    const nanos idle = msec(cfg_.agent_idle_ms);
    while (!stopping_.load()) {
        // The application's last pass first: one it makes after the clock
        // is read would be later than now (unsigned: away would wrap).
        const nanos last = app_progress_.load(std::memory_order_relaxed);
        const nanos now = clock_.now();
        const nanos away = now > last ? now - last : 0;
        if (away < idle) {  // the application progresses: sleep until it may have stopped
            std::unique_lock<std::mutex> lock(agent_mu_);
            agent_cv_.wait_for(lock, std::chrono::nanoseconds(idle - away), [this] { return stopping_.load(); });
            continue;
        }
        // Without the turn, the application is back, in a pass of its own.
        if (const RxTurn turn = try_rx_turn()) {
            agent_in_pass_.store(true, std::memory_order_relaxed);
            pass(turn, /*by_agent=*/true);
            agent_in_pass_.store(false, std::memory_order_relaxed);
        }
        wait_for_datagrams(kAgentPollMs);
    }
}

// Sleeps until a datagram arrives or timeout_ms pass.  A socket whose only
// news is its error queue (transmit stamps) does not cut the sleep short.
void Engine::wait_for_datagrams(int timeout_ms) {
    int fds[kChannels];
    const int n = wire_->poll_fds(fds, kChannels);
    if (n > 0) {
        pollfd pfd[kChannels];
        for (int i = 0; i < n; ++i) pfd[i] = {fds[i], POLLIN, 0};
        if (poll(pfd, static_cast<nfds_t>(n), timeout_ms) > 0 &&
            std::any_of(pfd, pfd + n, [](const pollfd &p) { return p.revents & POLLIN; }))
            return;
    }
    std::unique_lock<std::mutex> lock(agent_mu_);
    agent_cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [this] { return stopping_.load(); });
}

// A quiet pass met a new data segment from p: not accepted, and p hears
// BUSY.  It is kept, unacknowledged, for the application's next pass while
// there is room (a window per peer: p sends no more unacknowledged; a
// resend of one kept already is not kept twice); else it is turned away,
// and p hears a resume ACK once the application is back.
void Engine::keep_or_turn_away(Peer &p, const PacketHeader &h, const RxDatagram &d, const Arrival &a) {
    const uint64_t id = uint64_t{p.id} << 32 | h.seq;
    if (!kept_ids_.count(id)) {
        const bool room = p.kept < cfg_.window && kept_bytes_ + d.len <= (size_t{cfg_.agent_keep_mb} << 20) &&
                          p.rx.classify(h.seq) == RecvWindow::Arrival::kNew;
        if (!room || !keep(p, id, d, a)) {
            count(p, &rttcc_stats_t::turned_away);
            if (!p.away_link.linked()) turned_away_.push_back(p);
        }
    }
    if (!p.busy_sent || a.now - p.busy_sent >= kBusyInterval) send_busy(p, a.now);
}

// A copy of d for the application's next pass; false if memory ran out.
bool Engine::keep(Peer &p, uint64_t id, const RxDatagram &d, const Arrival &a) {
    try {
        kept_.push_back({p.id, a, std::vector<uint8_t>(d.buf, d.buf + d.len)});
    } catch (const std::bad_alloc &) {
        return false;
    }
    try {
        kept_ids_.insert(id);
    } catch (const std::bad_alloc &) {
        kept_.pop_back();
        return false;
    }
    ++p.kept;
    kept_bytes_ += d.len;
    count(p, &rttcc_stats_t::agent_kept);
    return true;
}

// A quiet pass lands a put into a notify grant (its owner hears of it
// later: landed_) if there is room to remember it.
bool Engine::room_to_land(const PacketHeader &h) {
    if (h.type != static_cast<uint8_t>(PacketType::PUT) || landed_.size() >= kMaxLandedPuts) return false;
    try {
        if (landed_.size() == landed_.capacity()) landed_.reserve(std::max<size_t>(64, 2 * landed_.capacity()));
    } catch (const std::bad_alloc &) {
        return false;
    }
    return true;
}

// The application's first pass after quiet ones: the puts landed are told
// (first: an ordered message kept must not be heard before them, and a
// peer declared dead since was acknowledged them), then the kept segments
// arrive, in their order, as if just read, up to kPassBytes a pass (as the
// wire is read: a long pass lets peers' timers fire).  Their ACK fields and
// one-way times were taken when they came; they echo no RTT sample (the
// wait was not the path's).  Returns how many messages it delivered.
int Engine::take_kept() {
    std::vector<LandedPut> landed;
    landed.swap(landed_);
    int delivered = 0;
    std::unique_lock<MaybeMutex> lock(state_mu_);
    for (const LandedPut &l : landed) {
        lock.unlock();
        const rttcc_callbacks_t &cb = clients_.of(l.tag);
        if (cb.on_put) {
            cb.on_put(cb.user, l.peer, l.key, l.offset, l.len, l.tag);
            ++delivered;
        }
        lock.lock();
    }
    size_t n = 0, bytes = 0;
    for (; n < kept_.size() && bytes < kPassBytes; ++n) {
        if (!lock.owns_lock()) lock.lock();
        KeptDatagram &k = kept_[n];
        bytes += k.bytes.size();
        Peer &p = *peers_[k.peer];
        auto &h = *reinterpret_cast<PacketHeader *>(k.bytes.data());
        --p.kept;
        kept_ids_.erase(uint64_t{p.id} << 32 | h.seq);
        if (p.dead) continue;
        h.tx_id = 0;
        h.flags &= static_cast<uint8_t>(~kFlagTimed);
        const bool fresh = accept_segment(p, h, k.arrival);
        flush_all();
        if (fresh) delivered += deliver_segment(p, h, k.bytes.data() + kHeaderSize, lock);
    }
    if (!lock.owns_lock()) lock.lock();
    kept_.erase(kept_.begin(), kept_.begin() + static_cast<std::ptrdiff_t>(n));
    kept_bytes_ -= bytes;
    send_burst_acks();
    flush_all();
    return delivered;
}

void Engine::send_busy(Peer &p, nanos now) {
    p.busy_sent = now;
    PacketHeader &h = stage(kCmd, p, Staged::kAck, nullptr);
    h.type = static_cast<uint8_t>(PacketType::BUSY);
    h.tx_stamp_ns = domain_time(now);
    put_ack(p, h, now);  // what was delivered before we went away
    h.echo_tx_id = 0;    // and no RTT sample: the hold is not the path's
    count(p, &rttcc_stats_t::busy_tx);
}

// p's application is away: what it had delivered is in the ACK fields.
void Engine::take_busy(Peer &p, const PacketHeader &h, const uint8_t *payload, const Arrival &a) {
    process_ack(p, h, payload, a);
    p.busy_heard = a.now;
    count(p, &rttcc_stats_t::busy_rx);
}

// The application's first pass after the agent turned data away: each such
// peer is asked to resend at once.
void Engine::send_resumes(nanos now) {
    List<Peer, &Peer::away_link> owed;  // a resume the wire refuses rejoins turned_away_ (flush): next pass
    owed.splice_back(turned_away_);
    while (Peer *p = owed.pop_front()) {
        send_ack(*p, now).flags |= kFlagResume;
        count(*p, &rttcc_stats_t::resumes_tx);
    }
}

// The peer is back and dropped whatever reached it while it was away:
// every segment waiting on its timer goes again now, as a retransmission
// but not as a loss, with its backoff reset.
void Engine::resend_turned_away(Peer &p) {
    count(p, &rttcc_stats_t::resumes_rx);
    for (seq_t s = p.tx.una(); s != p.tx.next(); ++s) {
        TxSegment *seg = p.tx.at(s);
        if (!seg || seg->sacked || !seg->in_hotel) continue;
        seg->backoff = 0;
        queue_resend(*seg, Resend::kResumed);
    }
}

}  // namespace rttcc
