// Engine lifetime, peers, the public calls and the progress loop.
#include "engine/engine.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <utility>

namespace rttcc {

// Published address: this header, then the command and the data channel's
// wire addresses.  Besides where to send, it says what every process of
// the job must agree on, and the secret that signs our datagrams.
struct Engine::AddressHeader {
    uint32_t version;      // kVersion
    uint16_t cmd_len;      // bytes of the command-channel address
    uint16_t data_len;     // bytes of the data-channel address
    uint32_t auth;         // rttcc_auth
    uint32_t cmd_mtu;      // command-channel datagrams are received into buffers this large
    uint32_t max_message;  // largest message: reassembly buffers are this large
    uint8_t key[16];       // our secret (SecretKey)
};

Engine::Engine(const rttcc_config_t &config, const rttcc_callbacks_t &callbacks,
               std::unique_ptr<Wire> wire, std::unique_ptr<ClockDomain> domain, const Clock &clock)
    : cfg_(config),
      clients_(callbacks),
      wire_(std::move(wire)),
      domain_(std::move(domain)),
      clock_(clock),
      key_(random_key()),
      verify_source_(wire_->verifies_source()),
      cmd_payload_(config.cmd_mtu - kHeaderSize),
      sack_words_(std::min<uint32_t>(kMaxSackWords, cmd_payload_ / 8)),
      inline_buffers_(std::max<size_t>(config.inline_max, 1)),
      copy_buffers_(config.max_message, SIZE_MAX),  // as many as peers ask for (their replies)
      message_copies_(config.max_message, size_t{config.send_copy_mb} << 20),
      reassembly_buffers_(config.max_message, size_t{config.reassembly_max_mb} << 20),
      state_mu_(config.thread_safe || config.agent),
      rx_mu_(config.thread_safe || config.agent) {
    cfg_.if_include = cfg_.if_exclude = nullptr;  // owned by the caller; not needed past create
    rtt_params_ = rtt_params_from(cfg_);
    cc_params_ = cc_params_from(cfg_);
    cfg_.ptp_clock_device = cfg_.rtt_dump = nullptr;  // owned by the caller too
    stamp_source_ = cfg_.timestamp == RTTCC_TS_USER ? TsSource::kNone : wire_->stamp_source();
    // Every stamp costs an error-queue read: congestion control needs the
    // samples (every 100 us), the table alone does with fewer (every 1 ms).
    stamp_interval_ = usec(cfg_.timestamp_interval_us ? cfg_.timestamp_interval_us
                                                      : cfg_.cc != RTTCC_CC_NONE ? 100 : 1000);
    tx_stamps_.resize(64);
    probe_pad_.resize(cfg_.probe_msg_size);
    probe_rng_ = 0x9e3779b97f4a7c15ull ^ (uint64_t{cfg_.self} << 17) ^ cfg_.job_key;
    for (auto &b : batch_) {
        b.dgrams.resize(cfg_.tx_batch);
        b.headers.resize(cfg_.tx_batch);
        b.segs.resize(cfg_.tx_batch);
        b.peers.resize(cfg_.tx_batch);
        b.kinds.resize(cfg_.tx_batch);
    }
    batch_[kCmd].sacks.resize(cfg_.tx_batch);
    rx_.resize(cfg_.rx_batch);
    acks_burst_.reserve(cfg_.rx_batch);  // one per datagram at most: no allocation while receiving
    completions_.reserve(256);
    spare_completions_.reserve(256);
    const nanos now = clock_.now();
    start_ = now;
    hotel_.start(now);
    next_probe_round_ = now + msec(cfg_.probe_startup_delay_ms);
    app_progress_.store(now, std::memory_order_relaxed);
    start_agent();
}

Engine::~Engine() {
    stop_agent();
    // Return every message still held, without callbacks: the caller is gone.
    for (auto &p : peers_) {
        if (!p) continue;
        p->outstanding.for_each([&](TxMessage &m) {
            release_copy(m);
        });
        p->tx.clear([&](TxSegment *seg) {
            if (seg->link.linked()) seg->link.unlink();
            segments_.put(seg);
        });
        p->reassembly.clear(reassembly_buffers_);
        p->puts.clear();
    }
}

size_t Engine::local_address(void *buf, size_t cap) const {
    uint8_t cmd[64], data[64];
    const size_t cl = wire_->local_address(kCmd, cmd, sizeof cmd);
    const size_t dl = wire_->local_address(kData, data, sizeof data);
    const size_t need = sizeof(AddressHeader) + cl + dl;
    if (cap < need) return 0;
    AddressHeader h{kVersion, static_cast<uint16_t>(cl), static_cast<uint16_t>(dl),
                    static_cast<uint32_t>(cfg_.auth), cfg_.cmd_mtu, cfg_.max_message, {}};
    std::memcpy(h.key, key_.data(), key_.size());
    auto *out = static_cast<uint8_t *>(buf);
    std::memcpy(out, &h, sizeof h);
    std::memcpy(out + sizeof h, cmd, cl);
    std::memcpy(out + sizeof h + cl, data, dl);
    return need;
}

// Settings every process of the job must share: a difference would drop
// datagrams for good (a hang), so it stops the wire-up with its name.
bool Engine::same_settings(const AddressHeader &h, std::string *err) const {
    const char *names[] = {"none", "header", "full"};
    char text[256];
    if (h.auth != static_cast<uint32_t>(cfg_.auth))
        std::snprintf(text, sizeof text, "rttcc_auth is %s here but %s there", names[cfg_.auth % 3], names[h.auth % 3]);
    else if (h.cmd_mtu != cfg_.cmd_mtu)
        std::snprintf(text, sizeof text, "rttcc_cmd_mtu is %u here but %u there", cfg_.cmd_mtu, h.cmd_mtu);
    else if (h.max_message != cfg_.max_message)
        std::snprintf(text, sizeof text,
                      "the largest message is %u bytes here but %u there (max_send_size or eager_limit differ)",
                      cfg_.max_message, h.max_message);
    else
        return true;
    *err = std::string(text) + ": every process of a job must use the same";
    return false;
}

bool Engine::add_peer(uint32_t index, const void *addr, size_t len, std::string *err) {
    AddressHeader h;
    if (index >= kMaxPeers || index == cfg_.self) {
        *err = "peer index out of range";
        return false;
    }
    if (len < sizeof h) {
        *err = "peer address too short";
        return false;
    }
    std::memcpy(&h, addr, sizeof h);
    if (h.version != kVersion || len != sizeof h + h.cmd_len + h.data_len) {
        *err = "peer address of another rttcc version or corrupt";
        return false;
    }
    if (!same_settings(h, err)) return false;
    const auto *cmd = static_cast<const uint8_t *>(addr) + sizeof h;
    const auto *data = cmd + h.cmd_len;
    SecretKey theirs;
    std::memcpy(theirs.data(), h.key, theirs.size());
    auto p = std::make_unique<Peer>(index, cfg_.window, rtt_params_, initial_seq(key_, index),
                                    initial_seq(theirs, cfg_.self));
    p->key = theirs;
    p->probe.next_id = random_u32() | 1;  // never 0, never guessable
    p->cc = make_congestion_control(cc_params_);
    if (!wire_->resolve(kCmd, cmd, h.cmd_len, &p->addr[kCmd], err) ||
        !wire_->resolve(kData, data, h.data_len, &p->addr[kData], err))
        return false;
    size_t dgram = wire_->path_datagram(data, h.data_len);
    if (cfg_.data_mtu) dgram = std::min<size_t>(dgram, cfg_.data_mtu);
    if (dgram <= kHeaderSize + 64) {
        *err = "path datagram size too small";
        return false;
    }
    p->seg_payload = static_cast<uint32_t>(dgram - kHeaderSize);

    std::lock_guard<MaybeMutex> g(state_mu_);
    if (index >= peers_.size()) peers_.resize(index + 1);
    if (peers_[index]) {
        *err = "peer added twice";
        return false;
    }
    p->row = table_.row(index);
    publish(*p, clock_.now());
    peers_[index] = std::move(p);
    return true;
}

int Engine::send(uint32_t index, uint8_t tag, const iovec *iov, int iovcnt, void *cookie) {
    if (tag == RTTCC_TAG_RMA) return RTTCC_ERR_ARG;
    return send_message(index, tag, 0, iov, iovcnt, cookie);
}

int Engine::put(uint32_t index, uint32_t key, uint64_t offset, uint8_t tag, const iovec *iov, int iovcnt,
                void *cookie, bool copy) {
    if (key == 0 || key > kPutKeyMask || offset > kPutOffsetMask || tag == RTTCC_TAG_RMA) return RTTCC_ERR_ARG;
    return send_message(index, tag, put_addr(key, offset), iov, iovcnt, cookie, copy);
}

uint32_t Engine::grant(uint32_t peer, void *base, size_t len, bool notify) {
    std::lock_guard<MaybeMutex> g(state_mu_);
    return base && len ? grants_.grant(peer, base, len, notify) : 0;
}

int Engine::flush(uint32_t index, uint8_t tag, void *cookie) {
    if (tag == RTTCC_TAG_RMA) return RTTCC_ERR_ARG;
    const nanos now = clock_.now();
    std::lock_guard<MaybeMutex> g(state_mu_);
    Peer *p = live_peer(index);
    if (!p) return RTTCC_ERR_UNREACH;
    bool asked;
    const int rc = begin_flush(*p, tag, cookie, now, /*queue_only=*/false, &asked);
    if (rc == RTTCC_OK && !asked) ask_for_ack(*p, now);  // a bare ACK request
    return rc;
}

// A flush of everything sent to p so far: what waits for company goes
// (waits_for_company), and its batch closes, the last segment asking for
// the ACK the flush waits for; so did our newest segment if it ends what
// is queued and asked at once (asks_for_ack).
// *asked says whether an ACK is coming so; if not, the caller asks.
// RTTCC_DONE if nothing is outstanding.
int Engine::begin_flush(Peer &p, uint8_t tag, void *cookie, nanos now, bool queue_only, bool *asked) {
    const bool batched = p.batch && !p.batch->empty() && !p.batch->held;  // a held one stays
    if (!queue_only && !batched && p.has_pending()) send_queued(p, now);  // puts that wait for company go now, the last asking
    const int rc = close_batch(p, true, now, queue_only);
    if (rc != RTTCC_OK) return rc;
    *asked = true;
    if (p.outstanding.empty()) return RTTCC_DONE;
    p.flushes.push_back({p.next_message_no - 1, cookie, tag});
    const TxSegment *newest = nullptr;
    for (const TxSegment *t : p.tail)
        if (t && t->seq == p.tx.next() - 1) newest = t;
    *asked = batched || (newest && newest->asked_ack && !p.has_pending());
    return RTTCC_OK;
}

bool Engine::revoke(uint32_t key) {
    std::lock_guard<MaybeMutex> g(state_mu_);
    copy_replies_from(key);
    return grants_.revoke(key);
}

void Engine::fail_peer(uint32_t index, const std::string &why) {
    std::lock_guard<MaybeMutex> g(state_mu_);
    Peer *p = index < peers_.size() ? peers_[index].get() : nullptr;
    if (p && !p->dead) broke_protocol(*p, why);
}

void Engine::broke_protocol(Peer &p, const std::string &why) {
    ++stats_.protocol_errors;
    declare_dead(p, why);
}

// A message (put_addr 0) or a put: copied or zero-copy as submit decides.
int Engine::send_message(uint32_t index, uint8_t tag, uint64_t put_addr, const iovec *iov, int iovcnt,
                         void *cookie, bool copy) {
    if (iovcnt < 0 || iovcnt > 2) return RTTCC_ERR_ARG;
    size_t len = 0;
    for (int i = 0; i < iovcnt; ++i) len += iov[i].iov_len;
    if (len > cfg_.max_message || (put_addr && len == 0)) return RTTCC_ERR_ARG;
    TxMessage m;
    m.tag = m.client_tag = tag;
    m.len = static_cast<uint32_t>(len);
    m.put_addr = put_addr;
    m.cookie = cookie;
    m.copy = copy;
    for (int i = 0; i < iovcnt; ++i)
        if (iov[i].iov_len) m.iov[m.iovcnt++] = iov[i];
    MessageBytes bytes;
    bytes.iov = iov;
    bytes.iovcnt = iovcnt;
    return submit(index, m, false, bytes);
}

int Engine::send_now(uint32_t index, uint8_t tag, size_t len, rttcc_fill_fn fill, void *ctx) {
    if (len > cfg_.inline_max || !fill || tag == RTTCC_TAG_RMA) return RTTCC_ERR_ARG;
    TxMessage m;
    m.tag = m.client_tag = tag;
    m.len = static_cast<uint32_t>(len);
    MessageBytes bytes;
    bytes.fill = fill;
    bytes.ctx = ctx;
    return submit(index, m, true, bytes);
}

// A small message delivered behind everything sent to the peer before it
// (kFlagOrdered): it goes on the data channel, whose queue holds every
// earlier data message and which pump() cuts after the command channel's,
// so its sequence number is above every segment sent before it; the
// receiver holds it until all of those have arrived (Engine::hold).  The
// peer's batch of posted RMA operations closes first and leaves with it in
// one send call.  With flush_cookie, what was sent before it is flushed
// too (begin_flush): the ACK the flush waits for is asked by the batch or
// the newest segment, else by this message; no ACK request of its own.
int Engine::send_ordered(uint32_t index, uint8_t tag, const void *data, size_t len, void *flush_cookie) {
    if (tag == RTTCC_TAG_RMA || len > cmd_payload_ || (len && !data)) return RTTCC_ERR_ARG;
    const nanos now = clock_.now();
    std::lock_guard<MaybeMutex> g(state_mu_);
    Peer *p = live_peer(index);
    if (!p) return RTTCC_ERR_UNREACH;
    if (len > p->seg_payload) return RTTCC_ERR_ARG;
    return queue_ordered(*p, tag, data, len, nullptr, flush_cookie, now);
}

// send_ordered's work, under state_mu_: `len` bytes of `data`, or the RMA
// request *r (numbered here, once nothing can fail: a number taken and not
// sent would stall every later request of ours at the target).
int Engine::queue_ordered(Peer &p, uint8_t tag, const void *data, size_t len, RmaRequest *r, void *flush_cookie,
                          nanos now) {
    // Everything that may fail comes first: once a flush is registered its
    // cookie is the engine's to complete, and a failure after it would
    // hand the caller an error for a flush still pending.
    TxMessage proto;
    proto.tag = r ? RTTCC_TAG_RMA : tag;
    proto.client_tag = tag;
    proto.len = static_cast<uint32_t>(len);
    proto.ordered = true;
    TxMessage *m = messages_.get();
    proto.inline_buf = take_copy(len);
    if (!proto.inline_buf) {
        messages_.put(m);
        return RTTCC_ERR;
    }
    proto.iov[proto.iovcnt++] = {proto.inline_buf, len};
    bool asked = true;
    const int flushed = flush_cookie ? begin_flush(p, tag, flush_cookie, now, /*queue_only=*/true, &asked)
                                     : close_batch(p, false, now, /*queue_only=*/true);
    if (flushed != RTTCC_OK && flushed != RTTCC_DONE) {  // out of memory for the batch's copy: nothing was queued
        release_copy(proto);
        messages_.put(m);
        return flushed;
    }
    if (r) {
        r->rseq = p.next_request++;
        data = r;
    }
    if (len) std::memcpy(proto.inline_buf, data, len);
    proto.ack_now = !asked;
    enqueue(p, new_message(p, proto, m));
    send_queued(p, now);
    return flush_cookie && flushed == RTTCC_OK ? RTTCC_OK : RTTCC_DONE;
}

// Another application thread in a pass: this call has nothing to do.  The
// liveness agent in one: wait for it (a pass is short), or a poll made
// between stretches of computation (MPI_Iprobe, MPI_Test) would do nothing.
int Engine::progress() {
    RxTurn turn = try_rx_turn();
    if (!turn && agent_in_pass_.load(std::memory_order_relaxed)) turn = RxTurn(rx_mu_);
    return turn ? pass(turn, /*by_agent=*/false) : 0;
}

// One progress pass, in the receive turn: the application's, or the liveness
// agent's (quiet unless the engine is thread-safe: then it may call back).
int Engine::pass(const RxTurn &, bool by_agent) {
    quiet_ = by_agent && !cfg_.thread_safe;
    if (by_agent || stamp_source_ != TsSource::kNone) {
        std::lock_guard<MaybeMutex> g(state_mu_);
        if (by_agent) ++stats_.agent_passes;  // before its work: who sees the work sees the pass
        if (stamp_source_ != TsSource::kNone) reap_tx_stamps();  // ACKs below may need them
    }
    // Read what is queued (bounded) before looking at timers: after this
    // process was descheduled, the ACKs that cancel them may be deep in the
    // socket queues.  Bounded by bytes too (kPassBytes, as sending): 8
    // bursts of 32 loopback datagrams of 64 KiB, copied in and then out to
    // where they land, kept a pass busy for 10-17 ms of CPU with nothing
    // sent, and its peer's retransmission timers fired.
    constexpr int kMaxBursts = 8;
    const unsigned ready = wire_->ready();
    int delivered = quiet_ || (kept_.empty() && landed_.empty()) ? 0 : take_kept();  // before what is queued
    const bool read_wire = quiet_ || kept_.empty();  // what was kept is older: the rest of it first
    size_t read = 0;
    for (int ch = 0; ch < kChannels && read_wire; ++ch) {
        if (!(ready & (1u << ch))) continue;
        for (int b = 0; b < kMaxBursts && read < kPassBytes; ++b) {
            int got = 0;
            delivered += receive(static_cast<Channel>(ch), &got, &read);
            // Rare: ordered messages behind a gap.  After each burst, as a
            // held request due holds back the requests after it (request_order.h).
            if (!held_.empty()) delivered += deliver_held();
            if (got < static_cast<int>(rx_.size())) break;
        }
    }
    {
        std::lock_guard<MaybeMutex> g(state_mu_);
        const nanos now = clock_.now();  // after receiving: deliveries may have taken a while
        if (!by_agent) app_progress_.store(now, std::memory_order_relaxed);
        if (!quiet_ && !turned_away_.empty()) send_resumes(now);
        if (domain_ && now >= next_clock_refresh_) {  // domain - monotonic drifts slowly
            domain_->refresh();
            next_clock_refresh_ = now + msec(1);
        }
        wire_full_ = false;
        take_failures(now);
        expire_timers(now);
        close_batches(now);
        serve_resends(now);
        serve_sends(now);
        if (cfg_.probe_enable) serve_probes(now);
        serve_keepalives(now);
        send_due_acks(now);
        flush_all();
    }
    return delivered + (quiet_ ? 0 : run_callbacks());
}

nanos Engine::next_due() {
    std::lock_guard<MaybeMutex> g(state_mu_);
    const nanos now = clock_.now();
    if (resends_.front() || sends_.front() || !batching_.empty() || turned_away_.front() || acks_soon_.front() ||
        wire_full_)
        return now;
    nanos due = hotel_.next_deadline();
    if (const Peer *p = acks_.front()) due = std::min(due, p->ack_owed_since + usec(cfg_.ack_delay_us));
    if (cfg_.probe_enable) due = std::min(due, next_probe_round_);
    if (domain_) due = std::min(due, next_clock_refresh_);
    return std::min(due, next_keepalive_scan_);
}

size_t Engine::drain(unsigned timeout_ms) {
    const nanos end = clock_.now() + msec(timeout_ms);
    {
        std::lock_guard<MaybeMutex> g(state_mu_);
        draining_ = true;
        const nanos now = clock_.now();
        close_batches(now);
        serve_sends(now);  // what waits for company too
        while (Peer *p = acks_.front()) send_ack(*p, now);
        flush_all();
    }
    for (;;) {
        {
            std::lock_guard<MaybeMutex> g(state_mu_);
            const bool sent = segments_.in_use() == 0 && !sends_.front();
            if (sent || clock_.now() > end) return segments_.in_use();
        }
        progress();
    }
}

int Engine::run_callbacks() {
    // Swap the pending calls out under the lock and make them without it; the
    // emptied vectors are recycled so the steady state allocates nothing.
    std::vector<Completion> done;
    std::vector<DeadPeer> dead;
    std::vector<uint32_t> unknown;
    {
        std::lock_guard<MaybeMutex> g(state_mu_);
        if (completions_.empty() && dead_.empty() && unknown_.empty()) return 0;
        done.swap(completions_);
        completions_.swap(spare_completions_);
        dead.swap(dead_);
        unknown.swap(unknown_);
    }
    const rttcc_callbacks_t &creator = clients_.creator();
    for (uint32_t u : unknown)
        if (creator.on_unknown_peer) creator.on_unknown_peer(creator.user, u);
    for (const auto &d : dead)
        clients_.for_each_live([&](const rttcc_callbacks_t &cb) {
            if (cb.on_peer_dead) cb.on_peer_dead(cb.user, d.peer, d.why.c_str());
        });
    for (const auto &c : done) {
        const rttcc_callbacks_t &cb = clients_.of(c.tag);
        if (cb.on_send_done) cb.on_send_done(cb.user, c.cookie, c.status);
    }
    const int n = static_cast<int>(done.size());
    done.clear();
    std::lock_guard<MaybeMutex> g(state_mu_);
    if (spare_completions_.capacity() < done.capacity()) spare_completions_.swap(done);
    return n;
}

rttcc_stats_t Engine::stats() const {
    std::lock_guard<MaybeMutex> g(state_mu_);
    return stats_;
}

bool Engine::peer_stats(uint32_t index, rttcc_stats_t *out) const {
    std::lock_guard<MaybeMutex> g(state_mu_);
    const Peer *p = peer(index);
    if (!p) return false;
    *out = p->stats;
    return true;
}

size_t Engine::segment_size(uint32_t index) const {
    std::lock_guard<MaybeMutex> g(state_mu_);
    const Peer *p = peer(index);
    return p ? p->seg_payload : 0;
}

size_t Engine::peer_memory(uint32_t index) const {
    std::lock_guard<MaybeMutex> g(state_mu_);
    const Peer *p = peer(index);
    if (!p) return 0;
    return sizeof(Peer) + sizeof(RttRow) + p->tx.memory() + p->rx.memory() + p->reassembly.memory();
}

}  // namespace rttcc
