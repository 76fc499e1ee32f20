/*
 * rttcc schedule: the PeerScheduler of coll_rttcc's exchanges for any
 * client that sends a round of transfers to many peers (osc_rttcc's
 * epochs): the order in which to start them, from the engine's RTT table.
 *
 *   begin(bytes per rank)  -> next() gives a rank to start, while a slot is
 *   free (max_concurrent) -> finished(rank) frees its slot -> ... done()
 *
 * One round at a time; nothing here sends.  Not thread-safe: the caller
 * serializes calls on one schedule.
 */
#ifndef RTTCC_SCHEDULE_H
#define RTTCC_SCHEDULE_H

#include <stddef.h>
#include <stdint.h>

#include "rttcc/engine.h"
#include "rttcc/exchange.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

typedef struct rttcc_schedule rttcc_schedule_t;

typedef struct rttcc_schedule_params {
    int policy;               /* RTTCC_SCHED_* (rttcc/exchange.h) */
    double threshold_us;      /* eligibility: RTT above the round's base by at most this */
    double variance_factor;   /* RTTVAR multiples a noisy peer may exceed the limit by */
    uint32_t max_concurrent;  /* ranks in flight at once; 0 = no limit */
    uint32_t reorder_window;  /* ranks that may start ahead of a deferred one before it is forced */
    double backoff_ms;        /* longest a rank stays deferred before it is forced */
} rttcc_schedule_params_t;

int rttcc_schedule_create(rttcc_engine_t *engine, const rttcc_schedule_params_t *params, rttcc_schedule_t **out);
void rttcc_schedule_destroy(rttcc_schedule_t *s);

/* Begins a round over ranks 0 .. n-1 (self never scheduled): rank r is
 * the engine's peer engine_peers[r] and is sent bytes[r] (0: not in the
 * round).  Costs come from the engine's RTT table now. */
int rttcc_schedule_begin(rttcc_schedule_t *s, uint32_t self, uint32_t n, const uint32_t *engine_peers,
                         const uint64_t *bytes);
/* The next rank to start: 1 and *rank, or 0 when none may start now
 * (every rank started, or max_concurrent in flight). */
int rttcc_schedule_next(rttcc_schedule_t *s, uint32_t *rank);
/* A started rank's transfers completed: its slot is free. */
void rttcc_schedule_finished(rttcc_schedule_t *s, uint32_t rank);
/* Every rank of the round started and finished. */
int rttcc_schedule_done(const rttcc_schedule_t *s);
/* The round's deferrals and forced starts (counted over the schedule's life). */
uint64_t rttcc_schedule_deferrals(const rttcc_schedule_t *s);
uint64_t rttcc_schedule_forced(const rttcc_schedule_t *s);
/* The round's schedule as text, one line per event; malloc'd, caller frees (NULL on failure). */
char *rttcc_schedule_text(const rttcc_schedule_t *s);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
