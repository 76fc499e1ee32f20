// The order in which one collective call starts its puts to its peers,
// driven by the per-peer RTT table (coll_rttcc's alltoall and alltoallv).
// Pure: no clock, no transport, no engine; the caller passes the time and
// each peer's cost, and starts/finishes the puts itself.
//
// Each peer's expected time is its RTT estimate plus bytes / rate:
//
//   rtt(p)      = srtt (samples > 0), else the median srtt of the peers that
//                 have samples when the call starts (first next()), else
//                 default_rtt_us; an unknown peer's rttvar counts as 0
//   expected(p) = rtt(p) + bytes(p) / rate(p)
//   base        = the lowest rtt(p) seen in this call
//   limit       = base + threshold_us * widen        (widen = 1 but for adaptive)
//   eligible(p) = rtt(p) - variance_factor * rttvar(p) <= limit
//
// Policies (all return every peer but self exactly once per call):
//   linear     (self + i) % P for i = 1 .. P-1; costs are ignored (the control)
//   greedy     lowest expected time first; every peer is eligible.  (Ranks
//              with similar tables then all start with the same fast
//              receivers; the rotation of the other policies avoids that.)
//   threshold  the linear rotation among eligible peers; the others are set
//              aside (deferred).  Keeping the rotation keeps the receivers
//              spread (every rank sends to self+i at step i) and isolates
//              the effect of deferral from that of reordering
//   balanced   longest expected time first among eligible peers (LPT: the
//              slow transfers start early and the short ones fill the slots
//              around them); the others are deferred
//   adaptive   threshold, but each deferral widens the threshold by
//              adapt_step (widen = 1 + adapt_step * deferrals); widen never
//              shrinks during a call (only an update() that lowers base
//              narrows the limit), so no peer ping-pongs inside a next()
// Ties go to the smaller rank distance (peer - self) mod P, so equal costs
// give the linear order.  Times saturate at 2^40 ns (18 minutes) in the
// heaps' keys: beyond that, order falls back to the rank distance.
//
// A deferred peer is forced (started although not eligible) once
// reorder_window other peers have started ahead of it since it was set
// aside, or backoff_ms after it was first set aside.  When a slot is free and
// no peer is eligible, the deferred peer with the lowest RTT is forced:
// next() never returns false while peers remain and a slot is free.
//
// Cost: a peer not yet started is either ready (one heap, in the policy's
// order) or deferred (three heaps: by passes due, by time due, by RTT); the
// heaps know where each peer sits, so next(), finished() and update() cost
// O(log P) amortised (a next() that sets k peers aside pays for k
// deferrals); the first next() builds the heap in O(P log P).  Storage is
// sized in reset(); next(), finished() and update() never allocate.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "clock/clock.h"

namespace rttcc {

enum class SchedPolicy { kLinear, kGreedy, kThreshold, kBalanced, kAdaptive };

// "linear", "greedy", "threshold", "balanced" or "adaptive".
const char *sched_policy_name(SchedPolicy p);
// The policy a name spells; false for an unknown name.
bool sched_policy_parse(const char *name, SchedPolicy *out);

// The scheduler's tunables, with the seed's names and defaults
// (RTT_SCHED_THRESHOLD, _VARIANCE_FACTOR, _MAX_CONCURRENT, _BACKOFF_MS).
// The seed gives reorder_window no default: 10 follows its forced-send rule
// (defer_count > 10); adapt_step is its adaptive 0.1; default_rtt_us and
// rate_bytes_per_s are ours.
struct SchedParams {
    double threshold_us = 100;       // how far above base a peer's RTT may be and still go now
    double variance_factor = 2.0;    // rttvar multiples a noisy peer's RTT may exceed the limit by
    uint32_t max_concurrent = 8;     // peers in flight at once; 0 = no limit
    uint32_t reorder_window = 10;    // peers that may start ahead of a deferred one before it is forced
    double backoff_ms = 0.1;         // longest a peer stays deferred before it is forced
    double adapt_step = 0.1;         // adaptive: threshold widening per deferral (fraction of threshold_us)
    double default_rtt_us = 50;      // RTT of unknown peers when no peer has samples yet
    double rate_bytes_per_s = 1.25e9;  // transfer rate of peers whose PeerCost::rate is 0
};

// What the scheduler knows of one peer (from its RTT table row, see
// peer_cost_from_row) and what the call sends it.
struct PeerCost {
    nanos srtt = 0;          // smoothed RTT; ignored while samples == 0
    nanos rttvar = 0;        // RTT variation
    uint64_t samples = 0;    // RTT samples behind srtt; 0 = RTT unknown
    uint64_t bytes = 0;      // bytes this call puts to the peer
    double rate = 0;         // bytes per second to the peer; 0 = SchedParams::rate_bytes_per_s
};

// A peer's cost from a row of the RTT table (rttcc_rtt_row_t; a template so
// that this header needs no engine include).
template <typename Row>
PeerCost peer_cost_from_row(const Row &r, uint64_t bytes, double rate = 0) {
    PeerCost c;
    c.srtt = r.srtt_ns;
    c.rttvar = r.rttvar_ns;
    c.samples = r.samples + r.probe_samples;
    c.bytes = bytes;
    c.rate = rate;
    return c;
}

// How long c.bytes take at c.rate (default_rate when c.rate is 0): the
// transfer part of a peer's expected time.
nanos transfer_time(const PeerCost &c, double default_rate);

// One step of a schedule, for a verbose stream.
enum class SchedEventKind : uint8_t {
    kStart,         // started: eligible (or any peer, for linear and greedy)
    kDefer,         // set aside: not eligible
    kPromote,       // deferred peer eligible again (update() or a wider threshold)
    kForcedWindow,  // started although not eligible: reorder_window peers went ahead
    kForcedBackoff, // started although not eligible: deferred for backoff_ms
    kForcedIdle     // started although not eligible: a slot was free and no peer eligible
};
// "start", "defer", "promote", "forced_window", "forced_backoff", "forced_idle".
const char *sched_event_name(SchedEventKind k);

struct SchedEvent {
    nanos now;            // time given to the next() that made it (update(): the latest one)
    nanos rtt;            // the peer's RTT estimate then
    nanos expected;       // the peer's expected time then
    uint32_t peer;        // the peer
    SchedEventKind kind;  // what happened
};

// A 4-ary min-heap of slots 0 .. n-1 (n <= 2^24), each with a 40-bit key,
// which knows where each slot sits, so that a key can change or a slot
// leave in O(log n).  An entry is key << 24 | slot, so one integer compare
// orders by key and then by slot, and four children fill 32 bytes: 10,000
// entries take 80 KB and a pop reads one or two cache lines per level.
class SlotHeap {
public:
    static constexpr uint32_t kSlotBits = 24;
    static constexpr uint32_t kMaxSlots = 1u << kSlotBits;          // slots a heap can hold
    static constexpr uint64_t kMaxKey = (uint64_t{1} << 40) - 1;  // larger keys saturate here
    static constexpr uint32_t kAbsent = UINT32_MAX;
    static constexpr uint32_t kArity = 4;  // children per node

    void reset(uint32_t nslots);  // empties; room for slots 0 .. nslots-1
    bool empty() const { return size_ == 0; }
    uint32_t size() const { return size_; }
    bool contains(uint32_t slot) const { return pos_[slot] != kAbsent; }
    uint32_t top() const { return slot_of(heap_[0]); }
    uint64_t top_key() const { return heap_[0] >> kSlotBits; }
    void push(uint32_t slot, uint64_t key);     // the slot must not be in the heap
    void set_key(uint32_t slot, uint64_t key);  // the slot must be in the heap
    void erase(uint32_t slot);                  // no-op if absent
    uint32_t pop();                             // the heap must not be empty
    uint64_t ops() const { return ops_; }       // entries placed so far (a cost measure)

private:
    static uint32_t slot_of(uint64_t e) { return static_cast<uint32_t>(e & (kMaxSlots - 1)); }
    static uint64_t entry(uint32_t slot, uint64_t key) {
        return (key < kMaxKey ? key : kMaxKey) << kSlotBits | slot;
    }
    void place(uint32_t i, uint64_t e);  // heap_[i] = e, pos_ follows
    void sift(uint32_t i);               // restores the heap around i (up or down)

    std::unique_ptr<uint64_t[]> heap_;  // heap_[0 .. size_): entries
    std::unique_ptr<uint32_t[]> pos_;   // pos_[slot]: index in heap_, kAbsent if not there
    uint32_t size_ = 0;                 // entries in the heap
    uint32_t capacity_ = 0;             // room allocated (slots)
    uint64_t ops_ = 0;                  // entries placed, over the heap's life
};

class PeerScheduler {
public:
    static constexpr uint32_t kMaxPeers = SlotHeap::kMaxSlots;  // 2^24, as the RTT table

    PeerScheduler(SchedPolicy policy, const SchedParams &params);

    // Starts a call: peers 0 .. npeers-1, this process is `self` (never
    // scheduled).  Every peer's cost is unknown until set_peer().  False
    // (and an empty schedule) unless self < npeers <= kMaxPeers.
    bool reset(uint32_t self, uint32_t npeers);
    // A peer's cost.  Before the first next() it is an input of the start
    // of the schedule; afterwards it acts as update().
    void set_peer(uint32_t peer, const PeerCost &c);
    // Before the first next(): the peer is served outside the schedule
    // (never started, never counted); its cost still informs the others'.
    void exclude(uint32_t peer);
    // A peer's cost changed during the call (e.g. RTT samples from segments
    // already sent): the peers not yet started are reordered; a deferred
    // peer that became eligible is promoted.
    void update(uint32_t peer, const PeerCost &c);
    // The next peer to start; the scheduler counts it in flight.  False
    // when every peer has started or max_concurrent are in flight.
    bool next(nanos now, uint32_t *peer);
    // The put to `peer` completed; false if it was not in flight or parked.
    bool finished(uint32_t peer);
    // A started peer that cannot go yet (its receiver has not handed its
    // buffer over) gives its slot back until unpark(); the slot may start
    // another peer meanwhile.  (A sender that held slots for peers not
    // ready to receive could wait on a receiver that waits on it: a
    // deadlock.)  unpark() takes a slot whether one is free or not: a
    // caller that keeps max_concurrent unparks only when has_slot().
    bool park(uint32_t peer);
    bool unpark(uint32_t peer);
    bool has_slot() const { return params_.max_concurrent == 0 || in_flight_ < params_.max_concurrent; }

    uint32_t npeers() const { return npeers_; }
    uint32_t remaining() const { return remaining_; }   // peers not yet started
    uint32_t in_flight() const { return in_flight_; }   // started, not finished
    uint32_t parked() const { return parked_; }         // started, waiting without a slot
    bool done() const { return remaining_ == 0 && in_flight_ == 0 && parked_ == 0; }
    uint64_t deferrals() const { return deferrals_; }   // peers set aside (a peer may count twice)
    uint64_t forced() const { return forced_; }         // peers started although not eligible
    uint32_t deferred_now() const { return by_rtt_.size(); }  // peers waiting set aside
    double widen() const { return widen_; }             // adaptive threshold factor
    // From the first next() on: the eligibility bound now, and a peer's RTT
    // estimate and expected time as the scheduler uses them.
    nanos limit() const;
    nanos rtt(uint32_t peer) const { return slots_[slot(peer)].rtt; }
    nanos expected(uint32_t peer) const { return slots_[slot(peer)].expected; }
    uint64_t heap_ops() const;  // heap entries placed in this call

    // The schedule so far; events past the storage reserved in reset() are
    // counted in events_dropped() instead.
    const SchedEvent *events() const { return events_.get(); }
    uint32_t nevents() const { return nevents_; }
    uint64_t events_dropped() const { return events_dropped_; }

private:
    // Everything inside is indexed by slot = (peer - self) mod npeers: slot 0
    // is self, the linear order is slot 1, 2, ..., and the heaps break ties
    // by slot.
    enum class State : uint8_t { kSelf, kReady, kDeferred, kInFlight, kParked, kDone };
    // What every pop reads (32 bytes).
    struct Slot {
        nanos rtt = 0;       // rtt(p): srtt, or the fill while unknown
        nanos expected = 0;  // rtt + transfer time
        nanos admit = 0;     // rtt - variance_factor * rttvar (>= 0): eligible iff <= limit()
        State state = State::kReady;  // where it is
    };
    // A peer's deferral history in this call (touched only when it is set aside or comes back).
    struct Deferral {
        uint64_t passes = 0;  // peers started ahead of it while deferred, before its latest deferral
        uint64_t start = 0;   // starts_ at its latest deferral
        nanos first = 0;      // time of its first deferral
        bool once = false;    // first is set
    };

    uint32_t slot(uint32_t peer) const { return peer >= self_ ? peer - self_ : peer + npeers_ - self_; }
    uint32_t peer(uint32_t slot) const { return slot < npeers_ - self_ ? slot + self_ : slot + self_ - npeers_; }
    bool uses_threshold() const { return policy_ != SchedPolicy::kLinear && policy_ != SchedPolicy::kGreedy; }
    bool eligible(uint32_t s) const { return !uses_threshold() || slots_[s].admit <= limit(); }
    uint64_t ready_key(uint32_t s) const;
    void build(nanos now);  // the first next(): fill unknown RTTs, fill the ready heap
    void derive(uint32_t s);  // rtt, expected, admit from costs_
    bool take_due(nanos now, uint32_t *out);  // a deferred peer that must go now
    void defer(uint32_t s, nanos now);
    void undefer(uint32_t s);  // out of the deferred heaps, passes kept
    void promote(uint32_t s);  // a deferred peer goes back to ready
    void start(uint32_t s, nanos now, SchedEventKind why, uint32_t *out);
    void record(nanos now, uint32_t s, SchedEventKind kind);

    SchedPolicy policy_;  // how peers are ordered
    SchedParams params_;  // tunables as given
    nanos threshold_;     // threshold_us in ns
    nanos backoff_;       // backoff_ms in ns
    nanos default_rtt_;   // default_rtt_us in ns

    uint32_t self_ = 0;       // this process (never scheduled)
    uint32_t npeers_ = 0;     // peers in the call, self included
    uint32_t capacity_ = 0;   // slots the storage below holds (>= npeers_)
    bool built_ = false;      // the first next() happened
    nanos epoch_ = 0;         // now at the first next(): by_backoff_ keys are relative to it
    nanos fill_ = 0;          // RTT of unknown peers, fixed at build()
    nanos base_ = 0;          // lowest rtt(p) seen in this call
    double widen_ = 1.0;      // threshold factor; only adaptive raises it, never lowers
    uint32_t cursor_ = 1;     // linear: the next slot
    nanos last_now_ = 0;      // the latest time next() was given (stamps update()'s events)
    uint32_t remaining_ = 0;  // peers not yet started (ready + deferred)
    uint32_t in_flight_ = 0;  // started, not finished, not parked; <= max_concurrent unless 0 (or after unpark)
    uint32_t parked_ = 0;     // started, parked
    uint64_t starts_ = 0;     // peers started in this call
    uint64_t deferrals_ = 0;  // kDefer events (a peer may count more than once)
    uint64_t forced_ = 0;     // kForced* events
    uint64_t ops_base_ = 0;   // sum of heap ops() at reset (heap_ops() is relative)

    std::unique_ptr<Slot[]> slots_;        // per slot, [0, npeers_)
    std::unique_ptr<PeerCost[]> costs_;    // per slot: the latest inputs
    std::unique_ptr<Deferral[]> history_;  // per slot: deferral history
    std::unique_ptr<nanos[]> scratch_;     // build(): the known RTTs, for the median
    SlotHeap ready_;       // ready slots (not started, eligible when last looked at) by ready_key
    SlotHeap by_window_;   // deferred slots by the start count at which they are forced
    SlotHeap by_backoff_;  // deferred slots by the time (from epoch_) at which they are forced
    SlotHeap by_rtt_;      // deferred slots by admit (promotion, idle forcing)

    std::unique_ptr<SchedEvent[]> events_;  // the schedule, [0, nevents_)
    uint32_t nevents_ = 0;                  // events recorded
    uint32_t events_cap_ = 0;               // room in events_
    uint64_t events_dropped_ = 0;           // events past events_cap_
};

// The schedule so far as text, one line per event ("+12.3us start peer 5
// rtt 40.1us expected 230.0us"), then how many events were not kept.
std::string schedule_text(const PeerScheduler &s);

}  // namespace rttcc
