// One alltoall(v) call over puts, and the hub that routes to it (exchange.h).
#include "exchange/exchange.h"

#include <algorithm>
#include <functional>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <new>

#include "engine/engine.h"

namespace rttcc {

namespace {

constexpr uint32_t kRefreshPerFinish = 4;  // not-yet-picked peers re-read from the table per finished peer
constexpr double kRateGain = 0.25;         // EWMA gain of a peer's measured put rate
constexpr uint64_t kRateMinBytes = 16384;  // blocks smaller than this say little about the rate

}  // namespace

SchedPolicy sched_policy_of(int p) {
    switch (p) {
        case RTTCC_SCHED_GREEDY: return SchedPolicy::kGreedy;
        case RTTCC_SCHED_THRESHOLD: return SchedPolicy::kThreshold;
        case RTTCC_SCHED_BALANCED: return SchedPolicy::kBalanced;
        case RTTCC_SCHED_ADAPTIVE: return SchedPolicy::kAdaptive;
        default: return SchedPolicy::kLinear;
    }
}

// ---------------------------------------------------------------- the hub

ExchangeHub::ExchangeHub(const std::shared_ptr<Engine> &engine, uint8_t tag, int *rc)
    : engine_(*engine), lifetime_(engine), tag_(tag) {
    rttcc_callbacks_t cb{};
    cb.user = this;
    cb.on_recv = on_recv;
    cb.on_send_done = on_send_done;
    cb.on_peer_dead = on_peer_dead;
    cb.on_put = on_put;
    *rc = engine_.attach(tag, cb);
    attached_ = *rc == RTTCC_OK;
}

ExchangeHub::~ExchangeHub() {
    // The engine may be gone first (finalize closes the BTL before the coll
    // framework): then there is nothing to detach from.
    const std::shared_ptr<Engine> engine = lifetime_.lock();
    if (engine && attached_) engine->detach(tag_);
}

bool ExchangeHub::add(Exchange *x) {
    if (find(x->channel(), x->seq())) return false;
    live_.push_back(x);
    return true;
}

void ExchangeHub::remove(Exchange *x) { live_.erase(std::remove(live_.begin(), live_.end(), x), live_.end()); }

Exchange *ExchangeHub::find(uint64_t channel, uint64_t seq) const {
    for (Exchange *x : live_)
        if (x->channel() == channel && x->seq() == seq) return x;
    return nullptr;
}

void ExchangeHub::measured(uint32_t engine_peer, double bytes_per_s) {
    double &r = rates_[engine_peer];
    r = r == 0 ? bytes_per_s : r + kRateGain * (bytes_per_s - r);
}

void ExchangeHub::on_recv(void *user, uint32_t peer, uint8_t, const void *data, size_t len) {
    auto *hub = static_cast<ExchangeHub *>(user);
    XControl c;
    if (len < sizeof c) return;  // not ours to guess at: the same job speaks one version
    std::memcpy(&c, data, sizeof c);
    const bool whole = len - sizeof c == (c.type == XControl::kRtrBlock ? c.block : 0);
    const uint8_t *block = static_cast<const uint8_t *>(data) + sizeof c;
    std::lock_guard<std::mutex> g(hub->mu_);
    if (Exchange *x = hub->find(c.channel, c.seq))
        x->take_control(peer, whole ? c : XControl{}, block);  // a malformed one ends the call with an error
    else if (whole)
        hub->hold_early(peer, c, block, len - sizeof c);
}

// An RTR of a call not begun here waits for it (exchange.h says how many).
void ExchangeHub::hold_early(uint32_t peer, const XControl &c, const uint8_t *block, size_t len) {
    if (c.type == XControl::kTrunc) return;  // of a call over here
    if (peer >= held_.size()) held_.resize(peer + 1);
    const auto it = early_.find({c.channel, peer});
    if (it != early_.end())
        return fail_early(peer, "it sent control messages of alltoall calls " + std::to_string(it->second.c.seq) +
                                    " and " + std::to_string(c.seq) + " of channel " + std::to_string(c.channel) +
                                    " before this process began either (it cannot finish a call without this "
                                    "process's RTR of it): it does not follow the rttcc protocol");
    Held &h = held_[peer];
    if (h.calls == kEarlyCallsPerPeer)
        return fail_early(peer, "it sent control messages of alltoall calls this process had not begun on more "
                                "than " + std::to_string(kEarlyCallsPerPeer) +
                                    " communicators at once: it does not follow the rttcc protocol");
    if (len > kEarlyBytesPerPeer - h.bytes)
        return fail_early(peer, "it sent more than " + std::to_string(kEarlyBytesPerPeer) +
                                    " bytes of blocks of alltoall calls this process had not begun (one per "
                                    "communicator in a call, of at most eager_limit)");
    early_.emplace(std::make_pair(c.channel, peer), Early{c, std::vector<uint8_t>(block, block + len)});
    ++h.calls;
    h.bytes += len;
}

void ExchangeHub::forget(EarlyMap::iterator it) {
    Held &h = held_[it->first.second];
    --h.calls;
    h.bytes -= it->second.block.size();
    early_.erase(it);
}

// The peer's early messages go: it is dead, no call will take them.
void ExchangeHub::drop_early(uint32_t peer) {
    for (auto it = early_.begin(); it != early_.end();) {
        if (it->first.second == peer)
            forget(it++);
        else
            ++it;
    }
}

void ExchangeHub::fail_early(uint32_t peer, const std::string &why) {
    drop_early(peer);
    engine_.fail_peer(peer, why);
}

void ExchangeHub::on_put(void *user, uint32_t peer, uint32_t key, uint64_t, size_t len, uint8_t) {
    auto *hub = static_cast<ExchangeHub *>(user);
    std::lock_guard<std::mutex> g(hub->mu_);
    for (Exchange *x : hub->live_)
        if (x->granted(peer, key)) return x->take_put(peer, len);
    // A put into a grant no call holds cannot land: the engine checked it.
}

void ExchangeHub::on_send_done(void *user, void *cookie, int status) {
    auto *hub = static_cast<ExchangeHub *>(user);
    std::lock_guard<std::mutex> g(hub->mu_);
    Exchange::take_send_done(cookie, status);
}

void ExchangeHub::on_peer_dead(void *user, uint32_t peer, const char *) {
    auto *hub = static_cast<ExchangeHub *>(user);
    std::lock_guard<std::mutex> g(hub->mu_);
    hub->drop_early(peer);
    for (Exchange *x : hub->live_) x->take_peer_dead(peer);
}

uint32_t grant_limit(int32_t max_grants, int cc) {
    if (max_grants >= 0) return static_cast<uint32_t>(max_grants);
    return cc == RTTCC_CC_NONE ? RTTCC_PACED_GRANTS : 0;
}

// ---------------------------------------------------------------- a call

Exchange::Exchange(ExchangeHub &hub, const rttcc_exchange_params_t &params)
    : hub_(hub), params_(params), sched_(sched_policy_of(params.policy), sched_params_of(params)) {
    const uint64_t most = hub_.engine().config().max_message;
    segment_ = std::max<uint64_t>(1, std::min<uint64_t>(params.segment_size ? params.segment_size : most, most));
    params_.segments_ahead = std::max<uint32_t>(1, params.segments_ahead);
    max_grants_ = grant_limit(params.max_grants, hub_.engine().config().cc);
    // An eager block and its header go in one message; XControl::block holds its size.
    params_.eager_limit = std::min<uint64_t>({params.eager_limit, most > sizeof(XControl) ? most - sizeof(XControl) : 0,
                                              UINT32_MAX});
}

Exchange::~Exchange() {
    // An abandoned call: its peers array may be gone already; the puts still
    // in flight name Tx entries, so the destroyer must have drained them.
    std::lock_guard<std::mutex> g(hub_.mutex());
    if (!running()) return;
    revoke_rooms();
    hub_.remove(this);
}

int Exchange::begin(uint64_t channel, uint64_t seq, uint32_t self, uint32_t npeers, const rttcc_xpeer_t *peers,
                    void *land, size_t land_len) {
    if (npeers == 0 || self >= npeers || !peers || (land_len && !land)) return RTTCC_ERR_ARG;
    uint32_t top = 0;
    for (uint32_t r = 0; r < npeers; ++r) {
        if (r == self) continue;
        const rttcc_xpeer_t &p = peers[r];
        if ((p.send_len && !p.send) || p.recv_offset > land_len || p.recv_len > land_len - p.recv_offset ||
            p.engine_peer >= Engine::kMaxPeers)
            return RTTCC_ERR_ARG;
        top = std::max(top, p.engine_peer);
    }
    std::lock_guard<std::mutex> g(hub_.mutex());
    if (running()) return RTTCC_ERR_BUSY;
    channel_ = channel;
    seq_ = seq;
    try {
        if (!hub_.add(this)) return RTTCC_ERR_BUSY;
        self_ = self;
        npeers_ = npeers;
        peers_ = peers;
        const int rc = set_up(top, land);
        if (rc != RTTCC_OK) {
            close_call();
            return rc;
        }
    } catch (const std::bad_alloc &) {  // no half-begun call stays, nor its grants
        close_call();
        return RTTCC_ERR;
    }
    hub_.take_early(channel, seq, [this](uint32_t engine_peer, const XControl &c, const void *block) {
        take_control(engine_peer, c, block);
    });
    return RTTCC_OK;
}

// The call's state, and every peer's grant.  Everything it needs is
// allocated here: progress() and the callbacks allocate nothing of their own.
int Exchange::set_up(uint32_t top, void *land) {
    eager_cut_ = std::min(params_.eager_limit, npeers_ > 1 ? params_.eager_total / (npeers_ - 1) : 0);
    land_ = static_cast<uint8_t *>(land);
    tx_.assign(npeers_, Tx{});
    rx_.assign(npeers_, Rx{});
    if (rank_of_.size() <= top) rank_of_.resize(top + 1, 0);
    hub_.rate_room(top);
    active_.clear();
    rtr_in_.clear();
    waiting_.clear();
    active_.reserve(npeers_);
    rtr_in_.reserve(npeers_);
    waiting_.reserve(npeers_);
    rx_left_ = tx_left_ = npeers_ - 1;
    for (uint32_t r = 0; r < npeers_; ++r) {
        tx_[r].x = this;
        tx_[r].eager = peers_[r].send_len <= eager_cut_;
        if (r == self_) continue;
        rank_of_[peers_[r].engine_peer] = r + 1;
        if (peers_[r].recv_len == 0) {
            rx_[r].done = true;
            --rx_left_;
        }
    }
    rx_[self_].done = tx_[self_].finished = true;
    order_grants();
    refresh_next_ = 1;
    error_ = RTTCC_OK;
    truncated_ = false;
    picks_ = 0;
    sum_ = rttcc_exchange_summary_t{};
    began_ = hub_.engine().now();

    sched_.reset(self_, npeers_);
    for (uint32_t r = 0; r < npeers_; ++r) {
        if (r == self_) continue;
        sched_.set_peer(r, cost_of(r, peers_[r].send_len));
        if (tx_[r].eager) sched_.exclude(r);  // its block goes with the RTR
    }
    return grant_rooms() ? RTTCC_OK : RTTCC_ERR_ARG;
}

// A peer's cost for `bytes` from the live table and its measured put rate.
PeerCost Exchange::cost_of(uint32_t rank, uint64_t bytes) const {
    const uint32_t peer = peers_[rank].engine_peer;
    rttcc_rtt_row_t row;
    if (!hub_.engine().rtt_row(peer, &row)) row = rttcc_rtt_row_t{};
    return peer_cost_from_row(row, bytes, hub_.rate(peer));
}

int Exchange::progress() {
    std::lock_guard<std::mutex> g(hub_.mutex());
    if (!running()) return RTTCC_ERR_ARG;
    const nanos now = hub_.engine().now();
    try {
        if (error_ == RTTCC_OK && send_controls() == RTTCC_OK) {
            pick(now);
            // Backwards: feed() may finish a peer, which leaves active_.
            for (size_t i = active_.size(); i-- > 0 && error_ == RTTCC_OK;)
                if (i < active_.size() && feed(active_[i]) == RTTCC_ERR_BUSY) break;
            pick(now);  // slots freed by finished peers
        }
    } catch (const std::bad_alloc &) {  // the engine's, for a send or put: not counted, the call stops
        set_error(RTTCC_ERR);
    }
    if (inflight_) return RTTCC_OK;  // their cookies point here: wait for them
    if (error_ != RTTCC_OK) {
        const int rc = error_;
        close_call();
        return rc;
    }
    if (tx_left_ || rx_left_ || grant_next_ < grant_order_.size()) return RTTCC_OK;
    close_call();
    return truncated_ ? RTTCC_ERR_TRUNCATE : RTTCC_DONE;
}

// Sends a control message (and a block after it).  The header lives in the
// peer's Tx and its completion counts there, as a put's: the engine may
// send both zero-copy.
int Exchange::send_control(uint32_t rank, const XControl &head, const void *block, uint64_t len) {
    Tx &t = tx_[rank];
    const iovec iov[2] = {{const_cast<XControl *>(&head), sizeof head}, {const_cast<void *>(block), len}};
    const int rc = hub_.engine().send(peers_[rank].engine_peer, hub_.tag(), iov, len ? 2 : 1, &t);
    if (rc == RTTCC_OK) begin_send(t);  // not copied (RTTCC_DONE) nor refused: a completion follows
    return rc;
}

// The order in which this process hands its landing room over: blocks of
// at most the eager cut first (they come with the peer's RTR, unpaced), then
// the longest expected transfer first, so slow senders overlap the fast
// ones (LPT).
void Exchange::order_grants() {
    grant_order_.clear();
    for (uint32_t d = 1; d < npeers_; ++d) grant_order_.push_back((self_ + d) % npeers_);
    grant_cost_.resize(npeers_);
    for (uint32_t r : grant_order_) {
        const PeerCost c = cost_of(r, peers_[r].recv_len);
        grant_cost_[r] =
            c.bytes <= eager_cut_ ? 0 : c.srtt + transfer_time(c, SchedParams{}.rate_bytes_per_s) + 1;
    }
    std::stable_sort(grant_order_.begin(), grant_order_.end(), [this](uint32_t a, uint32_t b) {
        const bool ea = grant_cost_[a] == 0, eb = grant_cost_[b] == 0;
        return ea != eb ? ea : grant_cost_[a] > grant_cost_[b];
    });
    grant_next_ = 0;
    grants_open_ = 0;
}

// RTRs in grant order, at most max_grants blocks above the eager cut open at
// once; RTTCC_ERR_BUSY while the engine is full.
int Exchange::send_controls() {
    while (grant_next_ < grant_order_.size()) {
        const uint32_t r = grant_order_[grant_next_];
        Rx &x = rx_[r];
        const bool paced = !x.done && peers_[r].recv_len > eager_cut_;
        if (paced && max_grants_ && grants_open_ >= max_grants_) break;
        const int rc = send_rtr(r);
        if (rc == RTTCC_ERR_BUSY) return rc;
        if (rc < 0) set_error(rc);
        if (paced) {
            x.open = true;
            ++grants_open_;
        }
        ++grant_next_;
    }
    return RTTCC_OK;
}

// The RTR to a peer, with this process's block for it if that is small
// (RTR_BLOCK): the peer is then finished once the block was ACKed and the
// peer's own RTR confirmed the size.
int Exchange::send_rtr(uint32_t rank) {
    const rttcc_xpeer_t &p = peers_[rank];
    Tx &t = tx_[rank];
    t.rtr_head = {t.eager ? XControl::kRtrBlock : XControl::kRtr, self_, channel_, seq_, rx_[rank].key,
                  t.eager ? static_cast<uint32_t>(p.send_len) : 0, p.recv_len};
    const int rc = send_control(rank, t.rtr_head, p.send, t.eager ? p.send_len : 0);
    if (rc != RTTCC_OK && rc != RTTCC_DONE) return rc;
    t.rtr_out = true;
    if (t.eager) {
        ++sum_.eager;
        sum_.bytes += p.send_len;
        settle_eager(rank);
    }
    return rc;
}

// An eager peer is finished once its block (with this process's RTR) was
// ACKed and its own RTR confirmed the size.  Outside the schedule, so
// callbacks may call this too.
void Exchange::settle_eager(uint32_t rank) {
    Tx &t = tx_[rank];
    if (!t.eager || t.finished || !t.rtr_in || !t.rtr_out || t.outstanding) return;
    if (t.room != peers_[rank].send_len) truncated_ = true;  // the peer refused it whole
    t.finished = true;
    --tx_left_;
}

// Starts the peers the scheduler picks; one whose RTR is not in yet is
// parked (its slot goes to the next pick) until the RTR comes, then waits
// for a free slot, before new picks, earliest picked first.
void Exchange::pick(nanos now) {
    using Waiting = std::pair<uint32_t, uint32_t>;
    for (uint32_t r : rtr_in_) {
        if (!tx_[r].parked) continue;
        waiting_.push_back({tx_[r].pick_order, r});
        std::push_heap(waiting_.begin(), waiting_.end(), std::greater<Waiting>());
    }
    rtr_in_.clear();
    while (error_ == RTTCC_OK && !waiting_.empty() && sched_.has_slot()) {
        std::pop_heap(waiting_.begin(), waiting_.end(), std::greater<Waiting>());
        const uint32_t w = waiting_.back().second;
        waiting_.pop_back();
        if (!sched_.unpark(w)) continue;
        tx_[w].parked = false;
        start_puts(w);
    }
    uint32_t r;
    while (error_ == RTTCC_OK && sched_.next(now, &r)) {  // none while no slot is free: the waiting keep their turn
        Tx &t = tx_[r];
        t.picked = true;
        t.started = now;
        t.pick_order = picks_++;
        if (!t.rtr_in) {
            ++sum_.rtr_waits;
            t.parked = sched_.park(r);
            continue;
        }
        start_puts(r);
    }
}

// A picked peer whose RTR is in takes its slot and its first puts.
void Exchange::start_puts(uint32_t rank) {
    active_.push_back(rank);
    sum_.max_active = std::max<uint64_t>(sum_.max_active, active_.size());
    feed(rank);
}

// Moves a picked peer whose RTR is in: puts the next segments of its block
// (or the TRUNC that says why not), and finishes it when all were ACKed.
// RTTCC_ERR_BUSY when the engine is full.
int Exchange::feed(uint32_t rank) {
    Tx &t = tx_[rank];
    if (!t.rtr_in || t.finished) return RTTCC_OK;
    const uint64_t len = peers_[rank].send_len;
    if (!t.refused && t.room != len) {
        const int rc = refuse(rank);
        if (rc == RTTCC_ERR_BUSY) return rc;
    }
    if (!t.refused) {
        const int rc = put_segments(rank);
        if (rc != RTTCC_OK) return rc;
    }
    if ((t.refused || t.issued == len) && t.outstanding == 0) finish_tx(rank, hub_.engine().now());
    return RTTCC_OK;
}

// The block does not fit the peer's room: it is not sent, TRUNC says why.
int Exchange::refuse(uint32_t rank) {
    Tx &t = tx_[rank];
    t.trunc_head = {XControl::kTrunc, self_, channel_, seq_, 0, 0, peers_[rank].send_len};
    const int rc = send_control(rank, t.trunc_head, nullptr, 0);
    if (rc == RTTCC_ERR_BUSY) return rc;
    if (rc < 0) set_error(rc);
    t.refused = true;
    truncated_ = true;
    return RTTCC_OK;
}

// Up to segments_ahead puts in flight.
int Exchange::put_segments(uint32_t rank) {
    Tx &t = tx_[rank];
    const rttcc_xpeer_t &p = peers_[rank];
    while (t.issued < p.send_len && t.outstanding < params_.segments_ahead && error_ == RTTCC_OK) {
        const uint64_t n = std::min(segment_, p.send_len - t.issued);
        iovec iov{const_cast<uint8_t *>(static_cast<const uint8_t *>(p.send) + t.issued), n};
        const int rc = hub_.engine().put(p.engine_peer, t.key, t.issued, hub_.tag(), &iov, 1, &t);
        if (rc == RTTCC_OK) begin_send(t);  // not copied (RTTCC_DONE) nor refused: a completion follows
        if (rc == RTTCC_ERR_BUSY) return rc;
        if (rc < 0) {
            set_error(rc);
            return rc;
        }
        t.issued += n;
        ++sum_.puts;
        sum_.bytes += n;
    }
    return RTTCC_OK;
}

void Exchange::finish_tx(uint32_t rank, nanos now) {
    Tx &t = tx_[rank];
    t.finished = true;
    --tx_left_;
    sched_.finished(rank);
    active_.erase(std::find(active_.begin(), active_.end(), rank));
    const uint64_t len = peers_[rank].send_len;
    if (len >= kRateMinBytes && now > t.started)
        hub_.measured(peers_[rank].engine_peer, static_cast<double>(len) * 1e9 / static_cast<double>(now - t.started));
    refresh_costs();
}

// The live table: a few peers not yet picked get their costs re-read, so a
// long call follows the samples its own segments (and probes) bring.
void Exchange::refresh_costs() {
    if (sched_.remaining() == 0) return;
    for (uint32_t k = 0; k < kRefreshPerFinish; ++k) {
        const uint32_t r = (self_ + refresh_next_) % npeers_;
        refresh_next_ = refresh_next_ + 1 < npeers_ ? refresh_next_ + 1 : 1;
        if (!tx_[r].picked && !tx_[r].eager) sched_.update(r, cost_of(r, peers_[r].send_len));
    }
}

void Exchange::take_control(uint32_t engine_peer, const XControl &c, const void *block) {
    const uint32_t r = c.rank;
    if (r >= npeers_ || r == self_ || peers_[r].engine_peer != engine_peer) return set_error(RTTCC_ERR);
    if (c.type == XControl::kRtr || c.type == XControl::kRtrBlock) {
        Tx &t = tx_[r];
        if (t.rtr_in) return set_error(RTTCC_ERR);
        t.rtr_in = true;
        t.key = c.key;
        t.room = c.len;  // fed from progress(): the engine is not called from a callback
        if (t.eager)
            settle_eager(r);
        else
            rtr_in_.push_back(r);
        if (c.type == XControl::kRtrBlock) take_block(r, block, c.block);
    } else if (c.type == XControl::kTrunc) {
        truncated_ = true;  // the peer's block does not fit its room: nothing of it comes
        end_rx(r);
    } else {
        set_error(RTTCC_ERR);
    }
}

// A peer's block that came with its RTR.
void Exchange::take_block(uint32_t rank, const void *data, uint64_t len) {
    const rttcc_xpeer_t &p = peers_[rank];
    Rx &x = rx_[rank];
    if (len != p.recv_len) {
        truncated_ = true;
    } else if (x.landed || (x.done && len)) {
        return set_error(RTTCC_ERR);  // a second copy of the block: a protocol error
    } else {
        if (len) std::memcpy(land_ + p.recv_offset, data, len);
        x.landed = len;
    }
    end_rx(rank);
}

// A put of the peer landed inside its grant (the engine saw to that).
void Exchange::take_put(uint32_t engine_peer, size_t len) {
    const uint32_t r1 = rank_of_[engine_peer];  // granted(): in the call
    const rttcc_xpeer_t &p = peers_[r1 - 1];
    Rx &x = rx_[r1 - 1];
    if (x.done || x.landed + len > p.recv_len)
        return set_error(RTTCC_ERR);  // more than its block (puts that overlap): a protocol error
    x.landed += len;
    if (x.landed == p.recv_len) end_rx(r1 - 1);
}

// The peer's block is all in (or never coming); its grant slot is free for
// the next RTR, which goes from progress().
void Exchange::end_rx(uint32_t rank) {
    Rx &x = rx_[rank];
    if (!x.done) {
        x.done = true;
        --rx_left_;
    }
    if (x.open) {
        x.open = false;
        --grants_open_;
    }
}

void Exchange::take_send_done(void *cookie, int status) {
    Tx &t = *static_cast<Tx *>(cookie);
    Exchange &x = *t.x;
    x.end_send(t);
    if (status != RTTCC_OK) x.set_error(status);
    x.settle_eager(static_cast<uint32_t>(&t - x.tx_.data()));
    // The next segments go from progress(); a finished block frees its slot there too.
}

void Exchange::take_peer_dead(uint32_t engine_peer) {
    if (engine_peer < rank_of_.size() && rank_of_[engine_peer]) set_error(RTTCC_ERR_UNREACH);
}

// Each peer with room for its block gets a grant of that room alone.
bool Exchange::grant_rooms() {
    for (uint32_t r = 0; r < npeers_; ++r) {
        const rttcc_xpeer_t &p = peers_[r];
        if (r == self_ || p.recv_len == 0) continue;
        rx_[r].key = hub_.engine().grant(p.engine_peer, land_ + p.recv_offset, p.recv_len);
        if (rx_[r].key == 0) return false;
    }
    return true;
}

void Exchange::revoke_rooms() {
    for (Rx &x : rx_) {
        if (x.key) hub_.engine().revoke(x.key);
        x.key = 0;
    }
}

void Exchange::close_call() {
    revoke_rooms();
    for (uint32_t r = 0; r < npeers_; ++r)
        if (r != self_ && peers_[r].engine_peer < rank_of_.size()) rank_of_[peers_[r].engine_peer] = 0;
    hub_.remove(this);
    sum_.deferrals = sched_.deferrals();
    sum_.forced = sched_.forced();
    sum_.elapsed_ns = hub_.engine().now() - began_;
    npeers_ = 0;
    peers_ = nullptr;
}

void Exchange::summary(rttcc_exchange_summary_t *out) const {
    std::lock_guard<std::mutex> g(hub_.mutex());
    *out = sum_;
}

std::string Exchange::schedule_text() const {
    std::lock_guard<std::mutex> g(hub_.mutex());
    return rttcc::schedule_text(sched_);
}

}  // namespace rttcc
