// The C face of exchange.h (rttcc/exchange.h): what coll_rttcc calls.
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

#include "api/engine_handle.h"
#include "exchange/exchange.h"
#include "rttcc/exchange.h"

struct rttcc_exchange_hub {
    std::unique_ptr<rttcc::ExchangeHub> impl;
};

struct rttcc_exchange {
    std::unique_ptr<rttcc::Exchange> impl;
};

extern "C" {

int rttcc_exchange_hub_create(rttcc_engine_t *engine, uint8_t tag, rttcc_exchange_hub_t **out) {
    *out = nullptr;
    if (!engine) return RTTCC_ERR_ARG;
    auto h = std::unique_ptr<rttcc_exchange_hub>(new (std::nothrow) rttcc_exchange_hub);
    if (!h) return RTTCC_ERR;
    int rc = RTTCC_ERR;
    try {
        h->impl = std::make_unique<rttcc::ExchangeHub>(engine->impl, tag, &rc);
    } catch (...) {
        return RTTCC_ERR;
    }
    if (rc != RTTCC_OK) return rc;
    *out = h.release();
    return RTTCC_OK;
}

void rttcc_exchange_hub_destroy(rttcc_exchange_hub_t *hub) { delete hub; }

void rttcc_exchange_params_defaults(rttcc_exchange_params_t *p) {
    *p = rttcc_exchange_params_t{};
    p->policy = RTTCC_SCHED_ADAPTIVE;
    p->threshold_us = 100;
    p->variance_factor = 2.0;
    p->max_concurrent = 8;
    p->reorder_window = 10;
    p->backoff_ms = 0.1;
    p->segment_size = 262144;
    p->segments_ahead = 2;
    p->max_grants = RTTCC_GRANTS_AUTO;
    p->eager_limit = 262144;  // coll_table (a): 256 KiB blocks by RTR and put took 1.04-1.08x tuned's linear, eager 0.98-1.02
    p->eager_total = 1 << 20;  // rttcc_sim: 16 MiB made 128 ranks' 64 KiB blocks one burst (1.85x the line, 153k drops; 1.15x with 1 MiB)
}

int rttcc_exchange_create(rttcc_exchange_hub_t *hub, const rttcc_exchange_params_t *params, rttcc_exchange_t **out) {
    *out = nullptr;
    if (!hub || !params) return RTTCC_ERR_ARG;
    try {
        auto x = std::make_unique<rttcc_exchange>();
        x->impl = std::make_unique<rttcc::Exchange>(*hub->impl, *params);
        *out = x.release();
        return RTTCC_OK;
    } catch (...) {
        return RTTCC_ERR;
    }
}

void rttcc_exchange_destroy(rttcc_exchange_t *x) { delete x; }

int rttcc_exchange_begin(rttcc_exchange_t *x, uint64_t channel, uint64_t seq, uint32_t self, uint32_t npeers,
                         const rttcc_xpeer_t *peers, void *land, size_t land_len) {
    try {
        return x->impl->begin(channel, seq, self, npeers, peers, land, land_len);
    } catch (...) {
        return RTTCC_ERR;
    }
}

int rttcc_exchange_progress(rttcc_exchange_t *x) {
    try {
        return x->impl->progress();
    } catch (...) {
        return RTTCC_ERR;
    }
}

void rttcc_exchange_summary(const rttcc_exchange_t *x, rttcc_exchange_summary_t *out) { x->impl->summary(out); }

char *rttcc_exchange_schedule_text(const rttcc_exchange_t *x) {
    try {
        const std::string s = x->impl->schedule_text();
        char *text = static_cast<char *>(std::malloc(s.size() + 1));
        if (text) std::memcpy(text, s.c_str(), s.size() + 1);
        return text;
    } catch (...) {
        return nullptr;
    }
}

const char *rttcc_sched_policy_name(int policy) {
    return policy >= RTTCC_SCHED_LINEAR && policy <= RTTCC_SCHED_ADAPTIVE
               ? rttcc::sched_policy_name(rttcc::sched_policy_of(policy))
               : "unknown";
}

int rttcc_sched_policy_value(const char *name) {
    for (int p = RTTCC_SCHED_LINEAR; p <= RTTCC_SCHED_ADAPTIVE; ++p)
        if (name && std::strcmp(name, rttcc_sched_policy_name(p)) == 0) return p;
    return -1;
}

}  // extern "C"
