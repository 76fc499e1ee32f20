// The C face of PeerScheduler (rttcc/schedule.h): osc_rttcc's epochs.
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "api/engine_handle.h"
#include "exchange/exchange.h"
#include "exchange/peer_scheduler.h"
#include "rttcc/schedule.h"

struct rttcc_schedule {
    rttcc_schedule(rttcc_engine_t *e, const rttcc_schedule_params_t &p)
        : engine(e->impl), sched(rttcc::sched_policy_of(p.policy), rttcc::sched_params_of(p)) {}
    std::shared_ptr<rttcc::Engine> engine;  // its RTT table and clock
    rttcc::PeerScheduler sched;
};

extern "C" {

int rttcc_schedule_create(rttcc_engine_t *engine, const rttcc_schedule_params_t *params, rttcc_schedule_t **out) {
    *out = nullptr;
    if (!engine || !params) return RTTCC_ERR_ARG;
    try {
        *out = new rttcc_schedule(engine, *params);
        return RTTCC_OK;
    } catch (...) {
        return RTTCC_ERR;
    }
}

void rttcc_schedule_destroy(rttcc_schedule_t *s) { delete s; }

int rttcc_schedule_begin(rttcc_schedule_t *s, uint32_t self, uint32_t n, const uint32_t *engine_peers,
                         const uint64_t *bytes) {
    try {
        if (!s->sched.reset(self, n)) return RTTCC_ERR_ARG;
    } catch (...) {
        return RTTCC_ERR;
    }
    for (uint32_t r = 0; r < n; ++r) {
        if (r == self) continue;
        if (!bytes[r]) {
            s->sched.exclude(r);
            continue;
        }
        rttcc_rtt_row_t row;
        if (!s->engine->rtt_row(engine_peers[r], &row)) row = rttcc_rtt_row_t{};
        s->sched.set_peer(r, rttcc::peer_cost_from_row(row, bytes[r]));
    }
    return RTTCC_OK;
}

int rttcc_schedule_next(rttcc_schedule_t *s, uint32_t *rank) { return s->sched.next(s->engine->now(), rank); }

void rttcc_schedule_finished(rttcc_schedule_t *s, uint32_t rank) { s->sched.finished(rank); }

int rttcc_schedule_done(const rttcc_schedule_t *s) { return s->sched.done(); }

uint64_t rttcc_schedule_deferrals(const rttcc_schedule_t *s) { return s->sched.deferrals(); }

uint64_t rttcc_schedule_forced(const rttcc_schedule_t *s) { return s->sched.forced(); }

char *rttcc_schedule_text(const rttcc_schedule_t *s) {
    try {
        const std::string text = rttcc::schedule_text(s->sched);
        char *out = static_cast<char *>(std::malloc(text.size() + 1));
        if (out) std::memcpy(out, text.c_str(), text.size() + 1);
        return out;
    } catch (...) {
        return nullptr;
    }
}

}  // extern "C"
