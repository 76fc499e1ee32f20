// The peer scheduler: policies, deferral and forcing (see peer_scheduler.h).
#include "exchange/peer_scheduler.h"

#include <algorithm>
#include <cassert>
#include <cinttypes>
#include <cstdio>
#include <cstring>

namespace rttcc {

namespace {

constexpr nanos kNanosMax = nanos{1} << 62;  // saturation point of every time computed here

nanos to_nanos(double ns) {
    if (!(ns > 0)) return 0;  // also NaN
    return ns >= static_cast<double>(kNanosMax) ? kNanosMax : static_cast<nanos>(ns);
}

nanos sat_add(nanos a, nanos b) { return a >= kNanosMax || b >= kNanosMax - a ? kNanosMax : a + b; }

const char *const kPolicyNames[] = {"linear", "greedy", "threshold", "balanced", "adaptive"};

}  // namespace

const char *sched_policy_name(SchedPolicy p) { return kPolicyNames[static_cast<int>(p)]; }

bool sched_policy_parse(const char *name, SchedPolicy *out) {
    for (int i = 0; i < 5; ++i) {
        if (name && std::strcmp(name, kPolicyNames[i]) == 0) {
            *out = static_cast<SchedPolicy>(i);
            return true;
        }
    }
    return false;
}

const char *sched_event_name(SchedEventKind k) {
    switch (k) {
    case SchedEventKind::kStart: return "start";
    case SchedEventKind::kDefer: return "defer";
    case SchedEventKind::kPromote: return "promote";
    case SchedEventKind::kForcedWindow: return "forced_window";
    case SchedEventKind::kForcedBackoff: return "forced_backoff";
    case SchedEventKind::kForcedIdle: return "forced_idle";
    }
    return "?";
}

// ---------------------------------------------------------------- SlotHeap

void SlotHeap::reset(uint32_t nslots) {
    assert(nslots <= kMaxSlots);
    if (nslots > capacity_) {
        heap_ = std::make_unique<uint64_t[]>(nslots);
        pos_ = std::make_unique<uint32_t[]>(nslots);
        capacity_ = nslots;
    }
    std::fill(pos_.get(), pos_.get() + nslots, kAbsent);
    size_ = 0;
}

void SlotHeap::place(uint32_t i, uint64_t e) {
    heap_[i] = e;
    pos_[slot_of(e)] = i;
    ++ops_;
}

void SlotHeap::sift(uint32_t i) {
    const uint64_t e = heap_[i];
    while (i > 0) {
        const uint32_t parent = (i - 1) / kArity;
        if (heap_[parent] <= e) break;
        place(i, heap_[parent]);
        i = parent;
    }
    for (;;) {
        const uint32_t first = kArity * i + 1;
        if (first >= size_) break;
        const uint32_t end = std::min(first + kArity, size_);
        uint32_t c = first;
        uint64_t least = heap_[first];
        for (uint32_t j = first + 1; j < end; ++j) {  // branch-free: conditional moves
            const bool less = heap_[j] < least;
            c = less ? j : c;
            least = less ? heap_[j] : least;
        }
        if (e <= least) break;
        place(i, least);
        i = c;
    }
    place(i, e);
}

void SlotHeap::push(uint32_t slot, uint64_t key) {
    assert(size_ < capacity_ && !contains(slot));
    place(size_, entry(slot, key));
    sift(size_++);
}

void SlotHeap::set_key(uint32_t slot, uint64_t key) {
    assert(contains(slot));
    const uint32_t i = pos_[slot];
    heap_[i] = entry(slot, key);
    sift(i);
}

void SlotHeap::erase(uint32_t slot) {
    const uint32_t i = pos_[slot];
    if (i == kAbsent) return;
    pos_[slot] = kAbsent;
    if (i != --size_) {
        place(i, heap_[size_]);
        sift(i);
    }
}

uint32_t SlotHeap::pop() {
    assert(size_ > 0);
    const uint32_t slot = top();
    erase(slot);
    return slot;
}

// ---------------------------------------------------------------- PeerScheduler

PeerScheduler::PeerScheduler(SchedPolicy policy, const SchedParams &params)
    : policy_(policy),
      params_(params),
      threshold_(to_nanos(params.threshold_us * 1e3)),
      backoff_(to_nanos(params.backoff_ms * 1e6)),
      default_rtt_(to_nanos(params.default_rtt_us * 1e3)) {}

bool PeerScheduler::reset(uint32_t self, uint32_t npeers) {
    const bool ok = self < npeers && npeers <= kMaxPeers;
    if (!ok) self = npeers = 0;
    if (npeers > capacity_) {
        slots_ = std::make_unique<Slot[]>(npeers);
        costs_ = std::make_unique<PeerCost[]>(npeers);
        history_ = std::make_unique<Deferral[]>(npeers);
        scratch_ = std::make_unique<nanos[]>(npeers);
        events_cap_ = 3 * npeers + 16;
        events_ = std::make_unique<SchedEvent[]>(events_cap_);
        capacity_ = npeers;
    }
    self_ = self;
    npeers_ = npeers;
    std::fill(slots_.get(), slots_.get() + npeers, Slot{});
    std::fill(costs_.get(), costs_.get() + npeers, PeerCost{});
    std::fill(history_.get(), history_.get() + npeers, Deferral{});
    if (npeers) slots_[0].state = State::kSelf;
    for (SlotHeap *h : {&ready_, &by_window_, &by_backoff_, &by_rtt_}) h->reset(npeers);
    ops_base_ = ready_.ops() + by_window_.ops() + by_backoff_.ops() + by_rtt_.ops();
    built_ = false;
    epoch_ = fill_ = base_ = 0;
    widen_ = 1.0;
    cursor_ = 1;
    last_now_ = 0;
    remaining_ = npeers ? npeers - 1 : 0;
    in_flight_ = parked_ = 0;
    starts_ = deferrals_ = forced_ = 0;
    nevents_ = 0;
    events_dropped_ = 0;
    return ok;
}

void PeerScheduler::set_peer(uint32_t peer, const PeerCost &c) { update(peer, c); }

void PeerScheduler::exclude(uint32_t peer) {
    if (built_ || peer >= npeers_ || peer == self_) return;
    Slot &q = slots_[slot(peer)];
    if (q.state != State::kReady) return;
    q.state = State::kDone;
    --remaining_;
}

nanos PeerScheduler::limit() const {
    return to_nanos(static_cast<double>(base_) + static_cast<double>(threshold_) * widen_);
}

uint64_t PeerScheduler::heap_ops() const {
    return ready_.ops() + by_window_.ops() + by_backoff_.ops() + by_rtt_.ops() - ops_base_;
}

uint64_t PeerScheduler::ready_key(uint32_t s) const {
    switch (policy_) {
    case SchedPolicy::kGreedy: return slots_[s].expected;
    case SchedPolicy::kBalanced:  // longest first
        return SlotHeap::kMaxKey - std::min(slots_[s].expected, SlotHeap::kMaxKey);
    default: return 0;  // threshold, adaptive: the rotation (the slot) alone
    }
}

nanos transfer_time(const PeerCost &c, double default_rate) {
    const double rate = c.rate > 0 ? c.rate : default_rate;
    return rate > 0 ? to_nanos(static_cast<double>(c.bytes) * 1e9 / rate) : 0;
}

void PeerScheduler::derive(uint32_t s) {
    const PeerCost &c = costs_[s];
    Slot &q = slots_[s];
    q.rtt = c.samples ? std::min(c.srtt, kNanosMax) : fill_;
    q.expected = sat_add(q.rtt, transfer_time(c, params_.rate_bytes_per_s));
    const double slack = c.samples ? params_.variance_factor * static_cast<double>(c.rttvar) : 0;
    q.admit = to_nanos(static_cast<double>(q.rtt) - slack);
}

void PeerScheduler::build(nanos now) {
    built_ = true;
    epoch_ = now;
    uint32_t n = 0;
    for (uint32_t s = 1; s < npeers_; ++s)
        if (costs_[s].samples) scratch_[n++] = std::min(costs_[s].srtt, kNanosMax);
    fill_ = default_rtt_;
    if (n) {
        nanos *mid = scratch_.get() + n / 2;
        std::nth_element(scratch_.get(), mid, scratch_.get() + n);
        const nanos upper = *mid;
        const nanos lower = (n % 2) ? upper : *std::max_element(scratch_.get(), mid);
        fill_ = lower + (upper - lower) / 2;
    }
    base_ = npeers_ > 1 ? kNanosMax : 0;
    for (uint32_t s = 1; s < npeers_; ++s) {
        derive(s);
        base_ = std::min(base_, slots_[s].rtt);
        if (policy_ != SchedPolicy::kLinear && slots_[s].state == State::kReady) ready_.push(s, ready_key(s));
    }
}

void PeerScheduler::update(uint32_t peer, const PeerCost &c) {
    if (peer >= npeers_ || peer == self_) return;
    const uint32_t s = slot(peer);
    costs_[s] = c;
    if (!built_) return;  // build() derives everything
    derive(s);
    base_ = std::min(base_, slots_[s].rtt);
    if (slots_[s].state == State::kReady && policy_ != SchedPolicy::kLinear) {
        ready_.set_key(s, ready_key(s));  // an ineligible one is deferred when it comes up
    } else if (slots_[s].state == State::kDeferred) {
        by_rtt_.set_key(s, slots_[s].admit);
        if (slots_[s].admit <= limit()) promote(s);
    }
}

bool PeerScheduler::next(nanos now, uint32_t *out) {
    if (!built_) build(now);
    last_now_ = now;
    if (remaining_ == 0) return false;
    if (params_.max_concurrent && in_flight_ >= params_.max_concurrent) return false;
    if (policy_ == SchedPolicy::kLinear) {
        while (slots_[cursor_].state != State::kReady) ++cursor_;  // excluded ones; remaining_ > 0 bounds it
        start(cursor_++, now, SchedEventKind::kStart, out);
        return true;
    }
    for (;;) {
        if (take_due(now, out)) return true;
        if (ready_.empty()) break;
        const uint32_t s = ready_.pop();
        if (eligible(s)) {
            start(s, now, SchedEventKind::kStart, out);
            return true;
        }
        defer(s, now);
    }
    // Peers remain, all deferred, a slot is free: the least congested goes.
    const uint32_t s = by_rtt_.top();
    undefer(s);
    ++forced_;
    start(s, now, SchedEventKind::kForcedIdle, out);
    return true;
}

bool PeerScheduler::take_due(nanos now, uint32_t *out) {
    if (by_window_.empty()) return false;
    uint32_t s;
    SchedEventKind why;
    if (by_window_.top_key() <= starts_) {
        s = by_window_.top();
        why = SchedEventKind::kForcedWindow;
    } else if (by_backoff_.top_key() <= (now > epoch_ ? now - epoch_ : 0)) {
        s = by_backoff_.top();
        why = SchedEventKind::kForcedBackoff;
    } else {
        return false;
    }
    undefer(s);
    ++forced_;
    start(s, now, why, out);
    return true;
}

void PeerScheduler::defer(uint32_t s, nanos now) {
    Deferral &h = history_[s];
    if (!h.once) {
        h.first = now;
        h.once = true;
    }
    h.start = starts_;
    slots_[s].state = State::kDeferred;
    const uint64_t window = params_.reorder_window;
    const nanos due = sat_add(h.first, backoff_);
    by_window_.push(s, starts_ + (h.passes < window ? window - h.passes : 0));
    by_backoff_.push(s, due > epoch_ ? due - epoch_ : 0);
    by_rtt_.push(s, slots_[s].admit);
    ++deferrals_;
    record(now, s, SchedEventKind::kDefer);
    if (policy_ == SchedPolicy::kAdaptive) {
        widen_ = 1.0 + params_.adapt_step * static_cast<double>(deferrals_);
        const nanos lim = limit();
        while (!by_rtt_.empty() && by_rtt_.top_key() <= lim) promote(by_rtt_.top());
    }
}

void PeerScheduler::undefer(uint32_t s) {
    Deferral &h = history_[s];
    h.passes += starts_ - h.start;
    by_window_.erase(s);
    by_backoff_.erase(s);
    by_rtt_.erase(s);
}

void PeerScheduler::promote(uint32_t s) {
    undefer(s);
    slots_[s].state = State::kReady;
    ready_.push(s, ready_key(s));
    record(last_now_, s, SchedEventKind::kPromote);
}

void PeerScheduler::start(uint32_t s, nanos now, SchedEventKind why, uint32_t *out) {
    slots_[s].state = State::kInFlight;
    ++in_flight_;
    --remaining_;
    ++starts_;
    record(now, s, why);
    *out = peer(s);
}

bool PeerScheduler::finished(uint32_t peer) {
    if (peer >= npeers_) return false;
    Slot &q = slots_[slot(peer)];
    if (q.state != State::kInFlight && q.state != State::kParked) return false;
    --(q.state == State::kInFlight ? in_flight_ : parked_);
    q.state = State::kDone;
    return true;
}

bool PeerScheduler::park(uint32_t peer) {
    if (peer >= npeers_) return false;
    Slot &q = slots_[slot(peer)];
    if (q.state != State::kInFlight) return false;
    q.state = State::kParked;
    --in_flight_;
    ++parked_;
    return true;
}

bool PeerScheduler::unpark(uint32_t peer) {
    if (peer >= npeers_) return false;
    Slot &q = slots_[slot(peer)];
    if (q.state != State::kParked) return false;
    q.state = State::kInFlight;
    ++in_flight_;
    --parked_;
    return true;
}

void PeerScheduler::record(nanos now, uint32_t s, SchedEventKind kind) {
    if (nevents_ == events_cap_) {
        ++events_dropped_;
        return;
    }
    const Slot &q = slots_[s];
    events_[nevents_++] = SchedEvent{now, q.rtt, q.expected, peer(s), kind};
}

std::string schedule_text(const PeerScheduler &s) {
    std::string text;
    char line[160];
    const SchedEvent *ev = s.events();
    const nanos t0 = s.nevents() ? ev[0].now : 0;
    for (uint32_t i = 0; i < s.nevents(); ++i) {
        std::snprintf(line, sizeof line, "+%.1fus %s peer %" PRIu32 " rtt %.1fus expected %.1fus\n",
                      static_cast<double>(ev[i].now - t0) / 1e3, sched_event_name(ev[i].kind), ev[i].peer,
                      static_cast<double>(ev[i].rtt) / 1e3, static_cast<double>(ev[i].expected) / 1e3);
        text += line;
    }
    if (s.events_dropped()) {
        std::snprintf(line, sizeof line, "(%" PRIu64 " more events not kept)\n", s.events_dropped());
        text += line;
    }
    return text;
}

}  // namespace rttcc
