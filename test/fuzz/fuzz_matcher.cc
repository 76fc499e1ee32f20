// libFuzzer target: the MPI matcher (rttcc/matcher.h) against a plain model of
// MPI's rules, driven the way mtl_rttcc drives it.  Each op is a few bytes:
// an arrival (peer, sequence number near the expected one, communicator,
// source, tag), a posted receive (wildcards included), a probe, a cancel.
// Every answer must be the model's: the same receive or arrival, the same
// counts, and at the end exactly the arrivals the model still keeps.
//
// The driver never holds a sequence number that is already held: the engine
// delivers each message once, so mtl_rttcc never sees one twice from an
// honest peer.
#include <algorithm>
#include <cstdint>
#include <deque>
#include <vector>

#include "rttcc/matcher.h"
#include "util/seq.h"
#include "fuzz_input.h"

using namespace rttcc_fuzz;

namespace {

constexpr size_t kMaxOps = 128;
constexpr uint32_t kPeers = 3, kComms = 3;

using Item = rttcc_match_item_t;

bool matches(const Item &recv, const Item &arrival) {
    return (recv.src == RTTCC_MATCH_ANY || recv.src == arrival.src) &&
           (recv.tag == arrival.tag || (recv.tag == RTTCC_MATCH_ANY && arrival.tag >= 0));
}

struct Model {
    std::deque<Item *> posted[kComms], unexpected[kComms];  // oldest first
    uint32_t expected[kPeers] = {};
    std::vector<Item *> held[kPeers];

    static Item *take_first(std::deque<Item *> &q, const Item &key, bool key_is_recv) {
        for (auto it = q.begin(); it != q.end(); ++it)
            if (key_is_recv ? matches(key, **it) : matches(**it, key)) {
                Item *found = *it;
                q.erase(it);
                return found;
            }
        return nullptr;
    }
    size_t count(const std::deque<Item *> (&qs)[kComms]) const {
        size_t n = 0;
        for (const auto &q : qs) n += q.size();
        return n;
    }
    size_t held_count() const {
        size_t n = 0;
        for (const auto &h : held) n += h.size();
        return n;
    }
};

struct Run {
    rttcc_matcher_t *m = rttcc_matcher_create(kMaxOps, 4 * kMaxOps);  // caps a run never reaches
    Model model;
    std::vector<Item> items = std::vector<Item>(kMaxOps);  // never reallocated: the matcher links them
    size_t used = 0;
    ~Run() { rttcc_matcher_destroy(m); }

    // An arrival in its turn: the oldest matching receive, or unexpected.
    void deliver(Item *a) {
        Item *got = rttcc_matcher_take_posted(m, a);
        check(got == Model::take_first(model.posted[a->cid], *a, false));
        if (!got) {
            check(rttcc_matcher_add_unexpected(m, a) == 0);
            model.unexpected[a->cid].push_back(a);
        }
    }

    void arrive(Item *a) {
        const uint32_t expected = model.expected[a->peer];
        const int order = rttcc_matcher_in_order(m, a->peer, a->seq);
        check(order == (a->seq == expected ? 1 : rttcc::seq_gt(a->seq, expected) ? 0 : -1));
        if (order == 0) {
            auto &h = model.held[a->peer];
            if (std::any_of(h.begin(), h.end(), [&](const Item *i) { return i->seq == a->seq; })) return;
            rttcc_matcher_hold(m, a);
            h.push_back(a);
            check(rttcc_matcher_release(m, a->peer) == nullptr);  // not its turn yet
            return;
        }
        if (order < 0) return;
        ++model.expected[a->peer];
        deliver(a);
        // Then the held ones whose turn came, in sequence order.
        for (;;) {
            auto &h = model.held[a->peer];
            auto next = std::find_if(h.begin(), h.end(), [&](const Item *i) { return i->seq == model.expected[a->peer]; });
            Item *released = rttcc_matcher_release(m, a->peer);
            check(released == (next == h.end() ? nullptr : *next));
            if (!released) break;
            h.erase(next);
            ++model.expected[a->peer];
            deliver(released);
        }
    }

    void post(Item *r) {
        Item *got = rttcc_matcher_take_unexpected(m, r);
        check(got == Model::take_first(model.unexpected[r->cid], *r, true));
        if (!got) {
            check(rttcc_matcher_add_posted(m, r) == 0);
            model.posted[r->cid].push_back(r);
        }
    }

    void probe(const Item &r) {
        const Item *found = nullptr;
        for (Item *a : model.unexpected[r.cid])
            if (matches(r, *a)) {
                found = a;
                break;
            }
        check(rttcc_matcher_find_unexpected(m, &r) == found);
    }

    void cancel(size_t which) {
        if (!used) return;
        Item *r = &items[which % used];
        auto &q = model.posted[r->cid];
        const auto it = std::find(q.begin(), q.end(), r);
        const bool queued = it != q.end();
        if (queued) q.erase(it);
        check(rttcc_matcher_cancel(m, r) == (queued ? 1 : 0));
    }

    void check_counts() {
        size_t posted, unexpected, held;
        rttcc_matcher_counts(m, &posted, &unexpected, &held);
        check(posted == model.count(model.posted) && unexpected == model.count(model.unexpected) &&
              held == model.held_count());
    }

    // Shutdown: exactly the arrivals still kept come back, once each.
    void drain() {
        std::vector<Item *> kept;
        for (auto &q : model.unexpected) kept.insert(kept.end(), q.begin(), q.end());
        for (auto &h : model.held) kept.insert(kept.end(), h.begin(), h.end());
        size_t popped = 0;
        while (Item *a = rttcc_matcher_pop_arrival(m)) {
            const auto it = std::find(kept.begin(), kept.end(), a);
            check(it != kept.end());
            kept.erase(it);
            check(++popped <= kMaxOps);
        }
        check(kept.empty());
    }
};

int32_t pick(uint8_t b, int32_t lo, int32_t hi) { return lo + b % (hi - lo + 1); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    Run run;
    for (size_t i = 0; i + 4 <= size && run.used < kMaxOps; i += 4) {
        const uint8_t op = data[i], a = data[i + 1], b = data[i + 2], c = data[i + 3];
        Item &it = run.items[run.used];
        it.cid = a % kComms;
        switch (op % 4) {
            case 0:  // an arrival: rank and tag as sent (negative: Open MPI's internal tags)
                it.peer = a / kComms % kPeers;
                it.seq = run.model.expected[it.peer] + static_cast<uint32_t>(static_cast<int8_t>(c) % 6);
                it.src = static_cast<int32_t>(it.peer);
                it.tag = pick(b, -2, 5);
                ++run.used;
                run.arrive(&it);
                break;
            case 1:  // a receive: source and tag may be wildcards
            case 2:
                it.src = b & 0x80 ? RTTCC_MATCH_ANY : pick(b, 0, kPeers - 1);
                it.tag = c & 0x80 ? RTTCC_MATCH_ANY : pick(c, -2, 5);
                if (op % 4 == 2) {
                    run.probe(it);
                    break;
                }
                ++run.used;
                run.post(&it);
                break;
            default:
                run.cancel(b);
                break;
        }
        run.check_counts();
    }
    run.drain();
    return 0;
}
