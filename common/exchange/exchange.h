// One alltoall(v) call over the engine's puts (rttcc/exchange.h says what
// it does), and the hub that routes the engine's deliveries to the calls.
//
// A call, seen from one process P:
//
//   grant:    grant each peer the room for its block in the landing area
//             (only that peer may put there, only during this call);
//             RTR(channel, seq, key, len) to every peer (the room for its
//             block and its grant's key, 0 bytes included, so
//             a mismatch is seen by the sender and nobody waits forever),
//             longest expected transfer first, at most max_grants blocks
//             larger than the eager cut open at once: the receiver paces
//             what comes into its link (an RTR goes out as a granted block
//             lands)
//   eager:    a block of at most the eager cut (eager_limit, and at most
//             eager_total over the call's peers) rides on this process's
//             RTR to its peer (RTR_BLOCK), outside the schedule (with paced
//             grants it waits for the RTR's turn); the peer copies it into
//             place, or refuses it whole if it is not the size it expects
//   send:     the scheduler picks the other peers (at most max_concurrent
//             at once); a picked peer whose RTR is in gets its block put in
//             segments, segments_ahead at a time; one whose RTR is not in
//             yet is parked without a slot (holding slots for peers that
//             have not granted could deadlock against their own grants).
//             Parked peers whose RTR came take the slots that free up
//             before any new pick, in the order they were picked: every
//             peer is picked (and parked) in the first round trip, before
//             any RTR is in, so letting each go as its RTR came would put
//             to every peer at once, in no policy's order (rttcc_sim: the
//             same times for every policy and max_concurrent before).
//             A block whose length differs from
//             the room the RTR offers is not sent: TRUNC(len) tells the
//             receiver why.  The peer is finished when every segment was
//             ACKed (an eager one: when its RTR_BLOCK was ACKed and the
//             peer's RTR is in).
//   receive:  on_put counts each peer's landed bytes; TRUNC ends a peer
//             with an error, and so does an RTR_BLOCK of the wrong size.
//   done:     every RTR sent, every peer finished on both sides, no engine
//             send of the call owed a completion (cookies point into the
//             call); then the grants are revoked.
//
// Locking: one hub mutex guards the hub and every exchange's state; engine
// callbacks take it.  An exchange holds it through the engine's sends, puts
// and grants: the engine calls back from progress passes only, which hold no
// engine lock those calls wait for (engine.h).  Only the thread that drives a
// call touches its scheduler and active list; callbacks touch its per-peer
// counters and flags.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "clock/clock.h"
#include "exchange/peer_scheduler.h"
#include "rttcc/engine.h"
#include "rttcc/exchange.h"

namespace rttcc {

class Engine;
class Exchange;

// The scheduler policy an RTTCC_SCHED_* value names (linear if none).
SchedPolicy sched_policy_of(int rttcc_sched);
// The scheduler's tunables from a C parameter struct that names them as
// SchedParams does (rttcc_exchange_params_t, rttcc_schedule_params_t).
template <typename P>
SchedParams sched_params_of(const P &p) {
    SchedParams s;
    s.threshold_us = p.threshold_us;
    s.variance_factor = p.variance_factor;
    s.max_concurrent = p.max_concurrent;
    s.reorder_window = p.reorder_window;
    s.backoff_ms = p.backoff_ms;
    return s;
}

// The grant limit a call uses (0 = none) for the max_grants parameter and
// the engine's congestion control (rttcc_cc): with congestion control the
// senders pace themselves, and holding grants back only idles the link
// (on the testbed's slow host, 2 grants made a 1 MiB alltoall 15% slower).
uint32_t grant_limit(int32_t max_grants, int cc);

// The wire form of an exchange's control messages (RTR, RTR_BLOCK and TRUNC).
struct XControl {
    enum Type : uint32_t { kRtr = 1, kTrunc = 2, kRtrBlock = 3 };
    uint32_t type;
    uint32_t rank;     // the sender's rank in the call
    uint64_t channel;  // the call's name: channel and seq
    uint64_t seq;
    uint32_t key;      // RTR: the grant of the room for the peer's block (0: none)
    uint32_t block;    // RTR_BLOCK: the bytes of the sender's block that follow
    uint64_t len;      // RTR: room for the peer's block; TRUNC: the block's real length
};

class ExchangeHub {
public:
    // RTRs held before their call began here, one per (peer, channel): a
    // peer cannot finish a call without our RTR of it, so it begins no later
    // call of the channel before we began this one.  It has one waiting per
    // communicator it is in a call on (per thread of it in an alltoall at
    // once).  A second on the channel, or more than kEarlyCallsPerPeer
    // channels or kEarlyBytesPerPeer bytes of blocks held for a peer, and
    // the engine declares it dead (protocol_errors).  A TRUNC answers our
    // RTR: with no call of its own here, that call is over (a receiver
    // whose room is 0 may end before it comes), and it is dropped.
    static constexpr uint32_t kEarlyCallsPerPeer = 4096;
    static constexpr uint64_t kEarlyBytesPerPeer = uint64_t{64} << 20;  // 256 calls' blocks at the default eager_limit

    // Attaches to `tag` of the engine; *rc says whether it could.  The hub
    // does not keep the engine alive: it may go first (then the hub's calls
    // must not be driven any more), and the hub's end detaches only from an
    // engine that is still there.
    ExchangeHub(const std::shared_ptr<Engine> &engine, uint8_t tag, int *rc);
    ~ExchangeHub();
    ExchangeHub(const ExchangeHub &) = delete;
    ExchangeHub &operator=(const ExchangeHub &) = delete;

    Engine &engine() { return engine_; }
    uint8_t tag() const { return tag_; }
    size_t early_held() const { return early_.size(); }  // under mutex(): control messages before their call
    std::mutex &mutex() { return mu_; }

    // Under mutex(): calls in progress.  add() false if (channel, seq) is taken.
    bool add(Exchange *x);
    void remove(Exchange *x);
    // Under mutex(): control messages that came before their call began;
    // f(engine_peer, message, its block) for those of (channel, seq).
    // Those of earlier calls of the channel are dropped.
    template <typename F>
    void take_early(uint64_t channel, uint64_t seq, F f);
    // Under mutex(): a peer's measured put rate (bytes/s, 0 = unknown), room
    // for the rates of engine peers up to top, and a new measurement (of a
    // peer with room: progress allocates nothing).
    double rate(uint32_t engine_peer) const { return engine_peer < rates_.size() ? rates_[engine_peer] : 0; }
    void rate_room(uint32_t top) {
        if (rates_.size() <= top) rates_.resize(top + 1, 0.0);
    }
    void measured(uint32_t engine_peer, double bytes_per_s);

private:
    struct Early {
        XControl c;
        std::vector<uint8_t> block;  // RTR_BLOCK's block
    };
    using EarlyMap = std::map<std::pair<uint64_t, uint32_t>, Early>;  // by (channel, engine peer)
    struct Held {
        uint32_t calls = 0;  // its messages in early_
        uint64_t bytes = 0;  // and their blocks' bytes
    };

    static void on_recv(void *user, uint32_t peer, uint8_t tag, const void *data, size_t len);
    static void on_put(void *user, uint32_t peer, uint32_t key, uint64_t offset, size_t len, uint8_t tag);
    static void on_send_done(void *user, void *cookie, int status);
    static void on_peer_dead(void *user, uint32_t peer, const char *why);
    Exchange *find(uint64_t channel, uint64_t seq) const;
    void hold_early(uint32_t peer, const XControl &c, const uint8_t *block, size_t len);
    void forget(EarlyMap::iterator it);  // an early message goes
    void drop_early(uint32_t peer);
    void fail_early(uint32_t peer, const std::string &why);

    Engine &engine_;
    std::weak_ptr<Engine> lifetime_;  // expired once the engine is gone
    uint8_t tag_;
    bool attached_ = false;
    std::mutex mu_;
    std::vector<Exchange *> live_;           // calls in progress (few: one per communicator in use)
    EarlyMap early_;                         // RTRs before their call began
    std::vector<Held> held_;                 // by engine peer
    std::vector<double> rates_;              // by engine peer
};

class Exchange {
public:
    Exchange(ExchangeHub &hub, const rttcc_exchange_params_t &params);
    ~Exchange();  // an unfinished call is abandoned (its grants revoked)
    Exchange(const Exchange &) = delete;
    Exchange &operator=(const Exchange &) = delete;

    // rttcc_exchange_begin and rttcc_exchange_progress.  Out of memory,
    // begin leaves no call behind and progress ends the call: RTTCC_ERR.
    int begin(uint64_t channel, uint64_t seq, uint32_t self, uint32_t npeers, const rttcc_xpeer_t *peers,
              void *land, size_t land_len);
    int progress();
    void summary(rttcc_exchange_summary_t *out) const;
    std::string schedule_text() const;

    uint64_t channel() const { return channel_; }
    uint64_t seq() const { return seq_; }
    // Under the hub mutex: this call granted `key` to the peer.
    bool granted(uint32_t engine_peer, uint32_t key) const {
        const uint32_t r1 = engine_peer < rank_of_.size() ? rank_of_[engine_peer] : 0;
        return running() && r1 && rx_[r1 - 1].key == key;
    }

    // The hub's deliveries, under its mutex.
    void take_control(uint32_t engine_peer, const XControl &c, const void *block);
    void take_put(uint32_t engine_peer, size_t len);  // granted(engine_peer, its key)
    void take_peer_dead(uint32_t engine_peer);
    // An engine send's completion (put or control message): the cookie is the peer's Tx.
    static void take_send_done(void *cookie, int status);

private:
    // What this process sends one peer.
    struct Tx {
        Exchange *x = nullptr;
        uint64_t issued = 0;       // bytes handed to the engine
        uint64_t room = 0;         // RTR: bytes the peer has room for
        uint32_t key = 0;          // RTR: the grant of that room
        uint32_t outstanding = 0;  // puts and control messages not yet ACKed
        nanos started = 0;         // when the scheduler picked it
        XControl rtr_head{};       // this process's RTR(_BLOCK) to the peer, and
        XControl trunc_head{};     // its TRUNC: the engine may send them zero-copy
        bool eager = false;        // the block goes with this process's RTR (at most eager_cut_)
        bool rtr_out = false;      // this process's RTR to the peer went
        bool rtr_in = false;       // the peer's RTR came
        bool refused = false;      // the block does not fit the peer's room: not sent
        bool picked = false;       // the scheduler picked it
        bool parked = false;       // picked before its RTR came: waits without a slot
        uint32_t pick_order = 0;   // its place among the picks of the call
        bool finished = false;     // every byte ACKed (or never to be sent)
    };
    // What this process receives from one peer.
    struct Rx {
        uint64_t landed = 0;  // bytes landed
        uint32_t key = 0;     // the peer's grant of its room (0: none, the room is empty)
        bool done = false;    // all in, or ended by TRUNC or a wrong-sized RTR_BLOCK
        bool open = false;    // counted in grants_open_
    };

    bool running() const { return npeers_ != 0; }
    int set_up(uint32_t top, void *land);  // begin()'s allocations and grants
    void order_grants();                   // grant_order_ for a new call
    int send_controls();                   // RTRs owed; RTTCC_ERR_BUSY if the engine is full
    int send_rtr(uint32_t rank);
    void settle_eager(uint32_t rank);      // finishes an eager peer once all is in
    int send_control(uint32_t rank, const XControl &head, const void *block, uint64_t len);
    void take_block(uint32_t rank, const void *data, uint64_t len);
    void end_rx(uint32_t rank);            // nothing more of the peer's block comes
    void begin_send(Tx &t) {               // an engine send whose completion will come
        ++t.outstanding;
        ++inflight_;
    }
    void end_send(Tx &t) {                 // ... came
        --t.outstanding;
        --inflight_;
    }
    void pick(nanos now);                  // scheduler picks while slots are free
    void start_puts(uint32_t rank);        // a picked peer whose RTR is in takes its slot
    int feed(uint32_t rank);               // puts for a picked peer whose RTR is in
    int refuse(uint32_t rank);
    int put_segments(uint32_t rank);
    void finish_tx(uint32_t rank, nanos now);
    void refresh_costs();                  // a few not-yet-picked peers' costs from the live table
    PeerCost cost_of(uint32_t rank, uint64_t bytes) const;
    void set_error(int rc) {  // the first fatal error stays
        if (error_ == RTTCC_OK) error_ = rc;
    }
    bool grant_rooms();                    // every peer's grant; false (none left) if one fails
    void revoke_rooms();
    void close_call();                     // revoke, leave the hub

    ExchangeHub &hub_;
    rttcc_exchange_params_t params_;
    uint32_t max_grants_;                // grant_limit() of the parameter, 0 = none
    PeerScheduler sched_;
    uint64_t segment_ = 0;         // bytes per put

    // The call (npeers_ == 0 between calls).
    uint64_t channel_ = 0, seq_ = 0;
    uint32_t self_ = 0, npeers_ = 0;
    const rttcc_xpeer_t *peers_ = nullptr;
    uint8_t *land_ = nullptr;      // the landing area (eager blocks are copied in)
    uint64_t eager_cut_ = 0;       // blocks up to this go with the RTR
    std::vector<Tx> tx_;           // by rank
    std::vector<Rx> rx_;           // by rank
    std::vector<uint32_t> rank_of_;  // engine peer -> rank + 1 (0 = not in the call)
    std::vector<uint32_t> active_;   // picked ranks with their RTR in, not yet finished
    std::vector<uint32_t> rtr_in_;   // ranks whose RTR came since the last pick() (callbacks add)
    // Parked ranks whose RTR is in, waiting for a slot: a min-heap of
    // (pick_order, rank), so the earliest picked goes first.
    std::vector<std::pair<uint32_t, uint32_t>> waiting_;
    uint32_t picks_ = 0;             // picks so far in the call
    std::vector<uint32_t> grant_order_;  // the order of this process's RTRs (self left out)
    std::vector<nanos> grant_cost_;      // by rank: expected inbound time, 0 for a block of at most the eager cut
    size_t grant_next_ = 0;        // next entry of grant_order_ owed an RTR
    uint32_t grants_open_ = 0;     // RTRs sent for blocks above eager_cut_ not yet landed
    uint32_t rx_left_ = 0;         // peers whose block has not fully landed
    uint32_t tx_left_ = 0;         // peers not finished
    uint32_t inflight_ = 0;        // the Txs' outstanding summed: the call ends only at 0
    uint32_t refresh_next_ = 1;    // refresh_costs() cursor (distance from self)
    int error_ = RTTCC_OK;         // the call's first fatal error: it stops
    bool truncated_ = false;       // a block and its room differed: the rest goes on, the call fails
    nanos began_ = 0;
    rttcc_exchange_summary_t sum_{};
};

template <typename F>
void ExchangeHub::take_early(uint64_t channel, uint64_t seq, F f) {
    for (auto it = early_.lower_bound({channel, 0}); it != early_.end() && it->first.first == channel;) {
        const Early &e = it->second;
        if (e.c.seq > seq && seq != 0) {
            ++it;
            continue;
        }
        if (e.c.seq == seq) f(it->first.second, e.c, e.block.data());
        // else: an earlier call of the channel, over (or of a freed communicator
        // whose id was reused: nobody can be past call 0 of a new one): dropped
        forget(it++);
    }
}

}  // namespace rttcc
