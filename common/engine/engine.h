// The engine: one per process.  It ties the wire, the peers, the hotel and
// the batches together.  Its work is split by protocol concern:
//   engine.cc         lifetime, peers, the public calls, progress loop
//   engine_tx.cc      cutting messages into segments, transmission, batching
//   engine_rx.cc      receiving: validation, sequence check, delivery, reassembly
//   engine_ack.cc     ACKs: sending (piggy-backed or delayed, with SACKs), processing, fast retransmit
//   engine_loss.cc    retransmission timeouts, backoff, dead peers
//   engine_rtt.cc     timestamps, RTT samples, congestion control, the RTT table
//   engine_probe.cc   RTT probes: scheduling, sending, answering, replies
//   engine_agent.cc   the liveness agent: answers peers while the application is away from MPI
//   engine_rma.cc     RMA: windows and their locks, requests made and served (rttcc/rma.h)
//   rtt_dump.cc       the RTT table as CSV and JSON
//
// Callbacks run in passes only, never inside a caller's other engine call:
//
//   send, put, send_now, grant,        call nobody; the news they make (a dead
//   revoke, fail_peer, add_peer,     -> peer, failed sends) waits in dead_ and
//   RMA requests and local ops, ...    completions_ for the next pass
//   progress, drain, the agent's     -> on_recv and on_put while receiving (a
//   pass (rx_mu_ held throughout)      quiet pass's wait for the next), the
//                                      news queued at the end; state_mu_ is
//                                      released before each callback (RMA
//                                      requests are served under it, calling
//                                      nobody)
//
// So a client may hold its own lock through any call but progress() and
// drain() and take that lock in its callbacks: a pass calling back holds
// rx_mu_ alone, which no call but a pass takes (and a pass only tries it).
#pragma once
#include <array>
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "clock/clock.h"
#include "engine/clients.h"
#include "clock/clock_domain.h"
#include "engine/hotel.h"
#include "engine/lock_table.h"
#include "engine/peer.h"
#include "engine/rma_request.h"
#include "util/pool.h"
#include "engine/regions.h"
#include "rttcc/config.h"
#include "rttcc/engine.h"
#include "rttcc/tags.h"
#include "engine/rtt_table.h"
#include "wire/wire.h"
#include "engine/wire_format.h"

namespace rttcc {

// Stamp cookies (TxDatagram::stamp_cookie) name a segment's transmission or,
// with kProbeCookie set, a probe: peer index above, tx_id or probe id below.
constexpr uint64_t kProbeCookie = 1ull << 63;
inline uint64_t segment_cookie(uint32_t peer, uint32_t tx_id) { return (uint64_t{peer} << 32) | tx_id; }
inline uint64_t probe_cookie(uint32_t peer, uint32_t probe_id) { return kProbeCookie | segment_cookie(peer, probe_id); }

// A mutex that is only taken when the engine is shared between threads.
// Lockable: held through std::lock_guard or std::unique_lock (try_to_lock too).
class MaybeMutex {
public:
    explicit MaybeMutex(bool enabled) : enabled_(enabled) {}
    void lock() {
        if (enabled_) mu_.lock();
    }
    void unlock() {
        if (enabled_) mu_.unlock();
    }
    bool try_lock() { return !enabled_ || mu_.try_lock(); }

private:
    bool enabled_;
    std::mutex mu_;
};

class Engine {
public:
    static constexpr uint32_t kMaxPeers = 1u << 24;  // process indices the engine accepts

    // `domain`: the clock domain of one-way delays and offsets; nullptr = none
    // (then the header's tx_stamp carries the engine's clock and no OWD is derived).
    // `clock`: the engine's own time (it must outlive the engine).
    Engine(const rttcc_config_t &config, const rttcc_callbacks_t &callbacks,
           std::unique_ptr<Wire> wire, std::unique_ptr<ClockDomain> domain = nullptr,
           const Clock &clock = monotonic_clock());
    ~Engine();
    Engine(const Engine &) = delete;
    Engine &operator=(const Engine &) = delete;

    const char *wire_name() const { return wire_->name(); }
    size_t local_address(void *buf, size_t cap) const;
    bool add_peer(uint32_t index, const void *addr, size_t len, std::string *err);

    // rttcc_engine_send / rttcc_engine_send_now.
    int send(uint32_t peer, uint8_t tag, const iovec *iov, int iovcnt, void *cookie);
    int put(uint32_t peer, uint32_t key, uint64_t offset, uint8_t tag, const iovec *iov, int iovcnt, void *cookie,
            bool copy = false);
    // rttcc_engine_grant / rttcc_engine_revoke.
    uint32_t grant(uint32_t peer, void *base, size_t len, bool notify = true);
    // rttcc_engine_flush.
    int flush(uint32_t peer, uint8_t tag, void *cookie);
    bool revoke(uint32_t key);
    // The peer broke the protocol (a client saw it): declared dead with `why`.
    void fail_peer(uint32_t peer, const std::string &why);
    // rttcc_engine_attach / rttcc_engine_detach.  RTTCC_TAG_RMA is the
    // engine's own (RMA requests): no client attaches, sends or puts on it.
    int attach(uint8_t tag, const rttcc_callbacks_t &cb) {
        return tag == RTTCC_TAG_RMA ? RTTCC_ERR_ARG : clients_.attach(tag, cb);
    }
    int detach(uint8_t tag) { return clients_.detach(tag); }
    int send_now(uint32_t peer, uint8_t tag, size_t len, rttcc_fill_fn fill, void *ctx);
    // rttcc_engine_send_ordered.
    int send_ordered(uint32_t peer, uint8_t tag, const void *data, size_t len, void *flush_cookie);
    // The application's progress call (the agent makes its own passes).
    int progress();
    // When a progress pass next has timed work (engine clock): a
    // retransmission, probe or reorder timer, a delayed ACK, a probe round
    // or keepalive scan; now if work is pending already; kNever if
    // only an arrival or a call can give it work.  For a driver that
    // progresses the engine on events (rttcc_sim), not in a loop.
    nanos next_due();
    // rttcc_engine_drain: the segments still unacknowledged at the end.
    size_t drain(unsigned timeout_ms);

    // RMA (rttcc/rma.h), engine_rma.cc.  Windows: their numbers name their
    // lock tables; an exposure of a window not open is refused (0).
    uint32_t open_window();
    bool close_window(uint32_t window);
    uint32_t expose(uint32_t window, uint32_t peer, void *base, size_t len);
    uint32_t expose_window(uint32_t window, uint32_t peer);
    // rttcc_rma_settle: replies sent from the window's exposures become copies.
    int settle(uint32_t window);
    // An origin's request to `peer` (its rseq is ours to fill in) with its
    // payload: copied (RTTCC_DONE) up to inline_max, and always when it has
    // no payload or is a compare-and-swap; else zero-copy with
    // on_send_done(cookie) of the client of r.reply_tag.
    int request(uint32_t peer, RmaRequest r, const iovec *iov, int iovcnt, void *cookie);
    // rttcc_rma_hold_batch, rttcc_rma_lock_batch: a lazy lock's batch.
    enum class BatchHold { kRelease, kHold, kDiscard };
    int hold_batch(uint32_t peer, BatchHold hold);
    int lock_batch(uint32_t peer, uint32_t window, bool exclusive, uint32_t reply_key, uint8_t tag);
    // A request without payload as an ordered message (send_ordered, with
    // its flush_cookie): rttcc_rma_unlock_ordered.
    int request_ordered(uint32_t peer, RmaRequest r, void *flush_cookie);
    // rttcc_rma_post: an entry for peer's batch (rma_batch.h), copied.
    int post(uint32_t peer, const RmaBatchEntry &e, const void *bytes);
    // This process's own window: the same updates and locks, under state_mu_.
    int apply_local(int op, int type, void *dst, const void *src, size_t count, void *old);
    int compare_and_swap_local(int type, void *dst, const void *compare, const void *swap, void *old);
    int lock_local(uint32_t window, bool exclusive);
    int unlock_local(uint32_t window);

    rttcc_stats_t stats() const;
    bool peer_stats(uint32_t index, rttcc_stats_t *out) const;
    bool rtt_row(uint32_t index, rttcc_rtt_row_t *out) const { return table_.read(index, out); }
    // Writes every peer's row to prefix.<rank>.csv and .json; false with *err on failure.
    bool dump_rtt(const char *prefix, uint32_t rank, const char *host, std::string *err);
    // Where this engine's RTT samples get their stamps (the best the wire gives).
    TsSource timestamp_source() const { return stamp_source_ == TsSource::kNone ? TsSource::kUser : stamp_source_; }
    // The clock domain of one-way delays and offsets (ClockDomain::name()).
    const char *clock_domain_name() const {
        return domain_ ? ClockDomain::kind_name(domain_->kind()) : "none";
    }
    // The engine's time (an exchange on it reads it too).
    nanos now() const { return clock_.now(); }
    // A peer's state, for the engine itself (under state_mu_) and for tests
    // that drive it from one thread: add_peer may move the table meanwhile.
    const Peer *peer(uint32_t index) const {
        return index < peers_.size() ? peers_[index].get() : nullptr;
    }
    // rttcc_engine_peer_segment_size: from any thread (0 for a peer not added).
    size_t segment_size(uint32_t index) const;
    size_t peer_memory(uint32_t index) const;
    const rttcc_config_t &config() const { return cfg_; }

private:
    struct AddressHeader;
    bool same_settings(const AddressHeader &h, std::string *err) const;
    enum class Staged : uint8_t { kSegment, kAck, kProbe };  // what a staged datagram is
    struct TxBatch {
        std::vector<TxDatagram> dgrams;     // datagrams ready to send
        std::vector<PacketHeader> headers;  // their headers (dgrams[i].iov[0], unless it names a laid-out room: fill_payload)
        std::vector<TxSegment *> segs;      // their segment, nullptr unless kSegment
        std::vector<Peer *> peers;          // their destination
        std::vector<Staged> kinds;          // what each one is
        std::vector<std::array<uint64_t, kMaxSackWords>> sacks;  // ACKs' SACK payloads (command channel)
        size_t count = 0;
    };
    // When a datagram arrived: the progress call's time and, if the wire
    // took one, its kernel/NIC stamp.
    struct Arrival {
        nanos now;
        nanos stamp;
        TsSource source;
        nanos best() const { return stamp ? stamp : now; }
    };
    struct Completion {
        void *cookie;
        int status;
        uint8_t tag;  // the message's: picks the client told
    };
    struct DeadPeer {
        uint32_t peer;
        std::string why;
    };

    // engine_tx.cc
    int send_message(uint32_t peer, uint8_t tag, uint64_t put_addr, const iovec *iov, int iovcnt, void *cookie,
                     bool copy = false);
    // Where submit copies a message's bytes from, if it copies them: the
    // caller's pieces (the copy may then be laid out as datagrams), or a fill
    // callback that writes them in one piece.  Neither: never copied.
    struct MessageBytes {
        const iovec *iov = nullptr;
        int iovcnt = 0;
        rttcc_fill_fn fill = nullptr;
        void *ctx = nullptr;
    };
    int submit(uint32_t peer, TxMessage &m, bool only_if_open, const MessageBytes &bytes);
    bool worth_copying(const Peer &p, const TxMessage &m) const;
    bool copy_message(const Peer &p, TxMessage &m, const MessageBytes &bytes);
    bool lays_out(const TxMessage &m) const;
    size_t copy_size(const TxMessage &m) const;
    void join_header(TxDatagram &d, const PacketHeader &h) const;
    Peer *live_peer(uint32_t index);  // nullptr for one unknown or dead
    TxMessage &new_message(Peer &p, const TxMessage &proto, TxMessage *slot = nullptr);
    void enqueue(Peer &p, TxMessage &m);
    void send_queued(Peer &p, nanos now);
    bool pump_or_defer(Peer &p, nanos now, uint32_t segments, uint64_t *cut = nullptr);
    uint8_t *take_copy(size_t len);
    void release_copy(TxMessage &m);
    bool has_room(const Peer &p, const TxMessage &m) const;
    uint32_t data_cap(const Peer &p) const;
    bool asks_for_ack(Peer &p, TxSegment &seg);
    bool waits_for_company(Peer &p, const TxMessage &m);
    uint64_t pump(Peer &p, nanos now, uint32_t budget);
    // New data one call (a pass, or a send) sends at most, and what a pass
    // reads at most (give or take a burst): the wire copies every byte in
    // this thread (on loopback its send calls deliver it too) and nothing
    // else is done meanwhile, so the peers' ACKs and commands wait.  The
    // window of 256 loopback segments of 64 KiB, 16 MiB in one pass, took
    // 6.6 ms, past the RTO's 5 ms floor: a peer's FINs to us timed out.
    static constexpr uint64_t kPassBytes = 1u << 20;
    void serve_sends(nanos now);
    uint32_t segments_within(const Peer &p, uint64_t bytes) const;
    uint32_t cut_segment(Peer &p, TxMessage &m, nanos now);
    void transmit(TxSegment &seg, nanos now);
    // A transmission's time, never before the last one's: threads read the
    // clock before they take state_mu_, and RACK takes send order from
    // these times (a later send stamped earlier would be condemned).
    nanos tx_time(nanos now) { return latest_tx_ = std::max(latest_tx_, now); }
    PacketHeader &stage(Channel ch, Peer &p, Staged kind, TxSegment *seg);
    void flush(Channel ch);
    void flush_all();
    void fill_payload(TxDatagram &d, const TxMessage &m, uint32_t offset, uint32_t len) const;
    void finish_message(Peer &p, TxMessage &m, int status);
    int begin_flush(Peer &p, uint8_t tag, void *cookie, nanos now, bool queue_only, bool *asked);
    int queue_ordered(Peer &p, uint8_t tag, const void *data, size_t len, RmaRequest *r, void *flush_cookie,
                      nanos now);
    void complete_flushes(Peer &p, int status);  // those no earlier message holds back (all, if status is an error)
    void unschedule(TxSegment &seg);
    void release_segment(TxSegment &seg, int status);
    Channel channel_for(const TxMessage &m) const;

    // engine_rx.cc
    int receive(Channel ch, int *got, size_t *read);
    bool handle_datagram(Channel ch, const RxDatagram &d, nanos now, std::unique_lock<MaybeMutex> &lock);
    Peer *sender_of(Channel ch, const RxDatagram &d, const PacketHeader **h);
    bool deliverable(const Peer &p, const PacketHeader &h) const;
    // A put into an exposure (a silent grant), or (a segment of) an RMA
    // request, which the engine serves: nobody is told, so the liveness
    // agent may take it.
    bool lands_silently(const Peer &p, const PacketHeader &h) const {
        if (h.type != static_cast<uint8_t>(PacketType::PUT)) return h.tag == RTTCC_TAG_RMA;
        const GrantTable::Place place =
            grants_.place_put(p.id, put_key(h.put_addr), put_offset(h.put_addr) + h.chunk_offset, h.payload_len);
        return place.grant && !place.grant->notify;
    }
    bool accept_segment(Peer &p, const PacketHeader &h, const Arrival &a);
    bool deliver_segment(Peer &p, const PacketHeader &h, const uint8_t *payload, std::unique_lock<MaybeMutex> &lock);
    bool land_put(Peer &p, const PacketHeader &h, const uint8_t *payload, std::unique_lock<MaybeMutex> &lock);
    void hold(Peer &p, const PacketHeader &h, const uint8_t *payload);
    bool holds_from(uint32_t id) const;
    int deliver_held();
    void take_busy(Peer &p, const PacketHeader &h, const uint8_t *payload, const Arrival &a);

    // engine_rma.cc
    // Origin side: a request numbered and queued; the batch a flush, a
    // request or a progress pass closes first (ack_now: a flush waits).
    // queue_only: the caller sends it with what it queues next (one send call).
    int send_request(Peer &p, RmaRequest &r, const iovec *iov, int iovcnt, void *cookie, bool ack_now, nanos now,
                     bool queue_only = false);
    int close_batch(Peer &p, bool ack_now, nanos now, bool queue_only = false);
    int send_batch(Peer &p, RmaRequest &r, bool ack_now, nanos now, bool queue_only);
    void close_batches(nanos now);
    size_t batch_cap() const;
    bool serve_batch(Peer &p, const RmaRequest &r, const uint8_t *payload, size_t n);
    bool batch_fits(const Peer &p, const uint8_t *payload, size_t n, uint32_t entries, uint32_t window) const;
    void apply_batch(Peer &p, const uint8_t *payload, size_t n, uint32_t entries, bool copy_replies);
    bool serve_locked_batch(Peer &p, const RmaRequest &r, const uint8_t *payload, size_t n);
    void finish_locked_batch(Peer &p, uint32_t window, uint32_t reply_key, uint8_t reply_tag, const uint8_t *payload,
                             size_t n, uint32_t entries);
    void answer_locked_batch(Peer &p, uint32_t reply_key, uint8_t reply_tag, bool applied);
    void settle_window(uint32_t window);
    static bool batch_kind(const RmaRequest &r) {
        return r.kind == static_cast<uint8_t>(RmaKind::kBatch) || r.kind == static_cast<uint8_t>(RmaKind::kLockedBatch);
    }
    void take_request(Peer &p, const uint8_t *msg, size_t len);
    void serve_request(Peer &p, const uint8_t *msg, size_t len);
    bool serve(Peer &p, const RmaRequest &r, const uint8_t *payload, size_t n);
    uint8_t *reply_buffer(Peer &p, size_t len);
    void reply(Peer &p, uint32_t reply_key, uint8_t reply_tag, const uint8_t *bytes, size_t len,
               uint32_t exposure = 0);
    void copy_replies_from(uint32_t key);
    bool copy_reply(Peer &p, TxMessage &m);
    void answer_lock_grants();
    void forget_requests(Peer &p);
    LockTable *window_locks(uint32_t window);

    // engine_ack.cc
    // When an owed ACK goes: after ack_delay unless data carries it first;
    // by the end of this progress pass (data staged in it may carry it); by
    // the end of this receive burst (one ACK and SACK for all its arrivals).
    enum class AckWhen { kDelayed, kThisPass, kThisBurst };
    void owe_ack(Peer &p, const PacketHeader &h, const Arrival &a, AckWhen when, bool duplicate = false);
    void owe_ack_again(Peer &p);
    void put_ack(Peer &p, PacketHeader &h, nanos now);
    PacketHeader &send_ack(Peer &p, nanos now);
    void send_due_acks(nanos now);
    void send_burst_acks();
    // A flush waits: the peer is asked to ACK, without its delay, everything
    // we sent so far (a bare ACK with kFlagAckNow naming our last segment),
    // and take_ack_request() is its side.
    void ask_for_ack(Peer &p, nanos now);
    void take_ack_request(Peer &p, const PacketHeader &h, nanos now);
    void attach_sack(Peer &p, PacketHeader &h);
    void process_ack(Peer &p, const PacketHeader &h, const uint8_t *payload, const Arrival &a);
    uint32_t take_sack(Peer &p, const PacketHeader &h, const uint8_t *payload, uint32_t words, nanos now);
    void detect_losses(Peer &p);

    // engine_rack.cc
    nanos probe_timeout(const Peer &p) const;
    nanos reorder_window(const Peer &p) const;
    Timeouts timeouts(const TxSegment &seg, nanos now);
    void arm_timer(TxSegment &seg, nanos now);
    void probe_due(TxSegment &seg, nanos now);
    void probe_verdict(Peer &p, bool spurious);
    void rack_delivered(Peer &p, const TxSegment &seg, uint32_t echo, nanos now);
    void rack_detect(Peer &p, nanos now);
    void queue_resend(TxSegment &seg, Resend why);

    // engine_rtt.cc
    void reap_tx_stamps();
    void stamp_transmission(Peer &p, TxDatagram &d, PacketHeader &h, uint64_t cookie, nanos now);
    nanos sample_rtt(Peer &p, const PacketHeader &h, const Arrival &a);
    nanos take_exchange(Peer &p, nanos posted, nanos stamp, TsSource source, const PacketHeader &h,
                        const Arrival &a, bool probe);
    bool take_sample(Peer &p, nanos rtt, TsSource source, bool probe, nanos now);
    void on_acked(Peer &p, uint32_t acked_data, nanos rtt, nanos now);
    void on_loss(Peer &p, bool timeout, nanos now);
    void publish(Peer &p, nanos now);
    uint64_t domain_time(nanos t) const {
        return domain_ ? static_cast<uint64_t>(domain_->to_domain(t)) : t;
    }
    void take_offset(Peer &p, nanos sent, nanos arrived, const PacketHeader &h);
    void note_one_way(Peer &p, const PacketHeader &h, const Arrival &a);
    nanos cc_sample(const Peer &p, nanos rtt) const;

    // engine_probe.cc
    void serve_probes(nanos now);
    void serve_keepalives(nanos now);
    void probe_round(nanos now);
    Peer *next_probe_target(nanos now);
    bool probe_allowed(const Peer &p, nanos now) const;
    void send_probe(Peer &p, nanos now);
    void answer_probe(Peer &p, const PacketHeader &h, const Arrival &a);
    void take_probe_reply(Peer &p, const PacketHeader &h, const Arrival &a);

    // The receive turn: rx_mu_, held through one pass.  A thread that cannot
    // take it at once skips its pass (another one is receiving).
    using RxTurn = std::unique_lock<MaybeMutex>;
    RxTurn try_rx_turn() { return RxTurn(rx_mu_, std::try_to_lock); }

    // engine_agent.cc
    int pass(const RxTurn &turn, bool by_agent);
    void start_agent();
    void stop_agent();
    void agent_main();
    void wait_for_datagrams(int timeout_ms);
    void keep_or_turn_away(Peer &p, const PacketHeader &h, const RxDatagram &d, const Arrival &a);
    bool keep(Peer &p, uint64_t id, const RxDatagram &d, const Arrival &a);
    int take_kept();
    bool room_to_land(const PacketHeader &h);
    void send_busy(Peer &p, nanos now);
    void send_resumes(nanos now);
    void resend_turned_away(Peer &p);
    // The peer said BUSY since its window last moved (a BUSY may move it itself).
    bool peer_away(const Peer &p) const { return p.busy_heard && p.busy_heard >= p.last_advance; }

    // engine_loss.cc
    nanos base_rto(const Peer &p) const;
    nanos rto(const TxSegment &seg) const;
    void expire_timers(nanos now);
    void resend_partial(Peer &p);
    void serve_resends(nanos now);
    std::string why_unanswered(const Peer &p, nanos now, const TxSegment &oldest) const;
    void take_failures(nanos now);
    void take_failure(Peer &p, const WireFailure &failure, nanos now);
    void declare_dead(Peer &p, std::string why);
    void broke_protocol(Peer &p, const std::string &why);  // counted, then declare_dead

    // Counts an event of peer p in its counters and the engine's.
    void count(Peer &p, uint64_t rttcc_stats_t::*event, uint64_t n = 1) {
        p.stats.*event += n;
        stats_.*event += n;
    }
    // Counts a received datagram dropped, and why (a drop_* counter).
    void drop(uint64_t rttcc_stats_t::*reason) {
        ++stats_.drops;
        ++(stats_.*reason);
    }

    // At the end of a pass (the only caller): runs the callbacks queued
    // under state_mu_, with it released; returns how many send completions
    // it reported.
    int run_callbacks();

    rttcc_config_t cfg_;                 // tunables (strings not kept)
    ClientTable clients_;                // whose callbacks hear each tag
    std::unique_ptr<Wire> wire_;         // where datagrams go
    std::unique_ptr<ClockDomain> domain_;  // clock domain of one-way delays (may be null)
    const Clock &clock_;                 // the engine's time: every timer and sample reads it
    SecretKey key_;                      // our secret: the MAC of what we receive (mac.h)
    nanos latest_tx_ = 0;                // the latest transmission's time (tx_time)
    nanos next_clock_refresh_ = 0;       // when domain_'s offset to our clock is sampled again
    bool verify_source_;                 // the wire names senders: check them
    uint32_t cmd_payload_;               // payload bytes per command-channel datagram
    uint32_t sack_words_;                // most SACK words an ACK carries (fits cmd_payload_)
    std::vector<std::unique_ptr<Peer>> peers_;  // by caller's index; null where unknown

    Pool<TxMessage> messages_;           // message descriptors
    Pool<TxSegment> segments_;           // segment descriptors
    InlinePool inline_buffers_;          // copies of small messages
    BufferPool copy_buffers_;            // larger copies (RMA replies), while they are sent
    BufferPool message_copies_;          // copies of lone messages above inline_max (laid out), up to send_copy_mb
    BufferPool reassembly_buffers_;      // whole-message buffers for chunked receives
    Hotel hotel_;                        // retransmission timers
    GrantTable grants_{random_u32()};    // memory granted to peers' puts
    std::unordered_map<uint32_t, LockTable> windows_;  // open RMA windows' locks, by number
    uint32_t next_window_ = 1;           // the number of the next window opened (never 0)
    std::vector<LockTable::Request> lock_grants_;  // waiters a release let in, to answer
    std::vector<uint8_t> due_request_;   // a held RMA request whose turn came
    List<TxSegment, &TxSegment::link> resends_;  // due for retransmission, served first
    List<TxMessage, &TxMessage::exposure_link> exposure_replies_;  // replies sent from an exposure (settle)
    List<Peer, &Peer::sends_link> sends_;        // peers with messages to cut and room to send
    std::vector<uint32_t> batching_;             // peers posted to since the last pass (RmaBatch::listed)
    List<Peer, &Peer::ack_link> acks_;           // peers owing a delayed ACK, oldest first
    List<Peer, &Peer::ack_soon_link> acks_soon_; // peers owing one by the end of this pass
    // Ordered messages (kFlagOrdered) that came while a segment sent before
    // them was missing, in arrival order: each goes once its peer's rx.next()
    // has passed it (deliver_held).  Rare, and few: no memory per peer.
    struct HeldMessage {
        uint32_t peer;
        seq_t seq;
        uint8_t tag;
        std::vector<uint8_t> bytes;
    };
    std::vector<HeldMessage> held_;
    // Data segments the liveness agent's quiet passes read while the
    // application was away, unacknowledged, for its next pass to take
    // (take_kept) so their senders need not resend them: at most a window
    // per peer and agent_keep_mb in all, beyond which they are turned away.
    // Only the receive turn's holder touches them.
    struct KeptDatagram {
        uint32_t peer;
        Arrival arrival;
        std::vector<uint8_t> bytes;  // the datagram, header first
    };
    std::vector<KeptDatagram> kept_;
    std::unordered_set<uint64_t> kept_ids_;  // peer << 32 | seq of each
    size_t kept_bytes_ = 0;
    // Puts into notify grants that quiet passes landed (and acknowledged:
    // the bytes are in place); their owners hear of them (on_put) at the
    // application's next pass, before the kept segments.  Room for one is
    // made before a put segment is accepted (room_to_land), so landing one
    // cannot fail.
    struct LandedPut {
        uint32_t peer;
        uint32_t key;
        uint64_t offset;
        uint32_t len;
        uint8_t tag;
    };
    static constexpr size_t kMaxLandedPuts = size_t{1} << 16;
    std::vector<LandedPut> landed_;
    std::vector<Peer *> acks_burst_;             // peers owing one by the end of this receive burst
    TxBatch batch_[kChannels];           // datagrams staged per channel
    std::vector<RxDatagram> rx_;         // datagrams of the current receive burst
    bool wire_full_ = false;             // the wire refused a datagram since the last progress
    RttEstimator::Params rtt_params_;    // for every peer's estimator
    CcParams cc_params_;                 // for every peer's congestion control
    RttTable table_;                     // every peer's RTT row, readable without locks
    TsSource stamp_source_;              // stamps the wire takes for us (kNone: user clock only)
    nanos stamp_interval_;               // least spacing of stamped transmissions to a peer
    std::vector<TxStamp> tx_stamps_;     // scratch for reap_tx_stamps
    std::vector<uint8_t> probe_pad_;     // a probe's payload (zeros)
    nanos start_ = 0;                    // when the engine started (engine clock)
    nanos next_probe_round_ = 0;
    nanos next_keepalive_scan_ = 0;      // when serve_keepalives looks at the peers again         // when the next probe round is due
    uint32_t probe_cursor_ = 0;          // round robin: the peer index probed last
    uint64_t probe_rng_;                 // random strategy: xorshift state
    std::atomic<nanos> app_progress_{0};  // when the application last progressed (the agent reads it)
    bool quiet_ = false;                 // this pass is the agent's: deliver nothing, call nobody (rx_mu_)
    List<Peer, &Peer::away_link> turned_away_;  // peers whose data the agent turned away: owed a resume
    std::thread agent_;                  // the liveness agent (engine_agent.cc), if started
    std::mutex agent_mu_;                // guards stopping_ for the agent's waits
    std::condition_variable agent_cv_;   // wakes the agent to stop
    std::atomic<bool> stopping_{false};  // the agent must end
    std::atomic<bool> agent_in_pass_{false};  // the agent holds the receive turn (progress waits for it)

    bool draining_ = false;                // in drain(): a closed port is a peer that finished
    std::vector<Completion> completions_;  // on_send_done calls to make
    std::vector<Completion> spare_completions_;  // recycled storage for completions_
    std::vector<DeadPeer> dead_;           // on_peer_dead calls to make
    std::vector<uint32_t> unknown_;        // on_unknown_peer calls to make
    std::vector<bool> asked_;              // unknown senders already reported
    rttcc_stats_t stats_ = {};             // engine-wide counters
    mutable MaybeMutex state_mu_;          // guards everything above
    MaybeMutex rx_mu_;                     // one thread receives at a time (owns rx buffers)
};

}  // namespace rttcc
