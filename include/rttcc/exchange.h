/*
 * rttcc exchange: the data path of coll_rttcc's alltoall and alltoallv, in C.
 *
 * One exchange = one collective call: every process hands its landing area
 * over to each peer with a ready-to-receive (RTR) message, then puts its
 * blocks straight into the peers' landing areas through the engine, in the
 * order a PeerScheduler gives from the RTT table, cut into segments.  A
 * block of at most the eager limit skips that round trip: it rides on the
 * sender's own RTR to the peer, which copies it into place.  The call is
 * done when every block it sent was acknowledged, every peer's RTR is in
 * and every block it expects has landed.  Puts and RTRs may arrive in any
 * order, and an RTR may arrive before its call began (it waits in the hub,
 * with its block).
 *
 * The hub is one per engine: it owns a message tag of the engine
 * (rttcc_engine_attach) and routes RTRs, puts and completions to the
 * exchanges in progress.  The caller drives progress (the engine's and the
 * exchange's); the exchange never blocks.
 */
#ifndef RTTCC_EXCHANGE_H
#define RTTCC_EXCHANGE_H

#include <stddef.h>
#include <stdint.h>

#include "rttcc/engine.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the C API: what the library exports */

typedef struct rttcc_exchange_hub rttcc_exchange_hub_t;
typedef struct rttcc_exchange rttcc_exchange_t;

/* Scheduler policies (peer_scheduler.h). */
enum { RTTCC_SCHED_LINEAR, RTTCC_SCHED_GREEDY, RTTCC_SCHED_THRESHOLD, RTTCC_SCHED_BALANCED, RTTCC_SCHED_ADAPTIVE };

enum { RTTCC_GRANTS_AUTO = -1, RTTCC_PACED_GRANTS = 2 };

typedef struct rttcc_exchange_params {
    int policy;               /* RTTCC_SCHED_* */
    double threshold_us;      /* eligibility: RTT above the call's base by at most this */
    double variance_factor;   /* RTTVAR multiples a noisy peer may exceed the limit by */
    uint32_t max_concurrent;  /* peers being put to at once; 0 = no limit */
    uint32_t reorder_window;  /* peers that may start ahead of a deferred one before it is forced */
    double backoff_ms;        /* longest a peer stays deferred before it is forced */
    uint64_t segment_size;    /* bytes per put (clamped to the engine's largest message) */
    uint32_t segments_ahead;  /* puts in flight per peer (>= 1) */
    int32_t max_grants;       /* peers that may put into this process at once; 0 = all,
                                 RTTCC_GRANTS_AUTO = all when the engine runs congestion
                                 control (it paces the senders), else RTTCC_PACED_GRANTS */
    uint64_t eager_limit;     /* blocks up to this many bytes go with the RTR; 0 = only empty ones */
    uint64_t eager_total;     /* ... and up to this many bytes per call over all peers: the block
                                 limit shrinks to eager_total / (npeers - 1); the same setting on
                                 every process bounds what one buffers for a call it has not begun */
} rttcc_exchange_params_t;

/* coll_rttcc's defaults: adaptive policy, 100 us threshold, 8 peers at once,
 * 256 KiB segments two ahead, automatic grants, 64 KiB eager blocks up to
 * 1 MiB per call (so from 17 ranks on, 64 KiB blocks are scheduled: every
 * rank's eager blocks leave at once, a burst the fabric's queues drop). */
void rttcc_exchange_params_defaults(rttcc_exchange_params_t *params);

/* One peer of a call, by rank in the communicator.  Self's entry is ignored. */
typedef struct rttcc_xpeer {
    uint32_t engine_peer;  /* the engine's index for the peer */
    const void *send;      /* the block to put to it (contiguous) */
    uint64_t send_len;     /* its bytes; 0 = nothing */
    uint64_t recv_offset;  /* where its block lands, from the start of the landing area */
    uint64_t recv_len;     /* the bytes it must put; 0 = nothing */
} rttcc_xpeer_t;

/* The hub of an engine: attaches to `tag`. */
int rttcc_exchange_hub_create(rttcc_engine_t *engine, uint8_t tag, rttcc_exchange_hub_t **out);
/* Detaches (unless the engine was destroyed first).  Every exchange of the
 * hub must have been destroyed. */
void rttcc_exchange_hub_destroy(rttcc_exchange_hub_t *hub);

int rttcc_exchange_create(rttcc_exchange_hub_t *hub, const rttcc_exchange_params_t *params,
                          rttcc_exchange_t **out);
void rttcc_exchange_destroy(rttcc_exchange_t *x);

/* Starts a call.  (channel, seq) names it on every process of the call (a
 * communicator id and a per-communicator call count); `peers` (npeers
 * entries, indexed by rank) and the landing area stay valid until the call
 * is done.  RTTCC_ERR_ARG for bad arguments; RTTCC_ERR_BUSY if a call is
 * in progress on this exchange or (channel, seq) is in progress already;
 * RTTCC_ERR out of memory (nothing begun). */
int rttcc_exchange_begin(rttcc_exchange_t *x, uint64_t channel, uint64_t seq, uint32_t self, uint32_t npeers,
                         const rttcc_xpeer_t *peers, void *land, size_t land_len);
/* Moves the call on (the engine's progress is the caller's).  RTTCC_OK while
 * it runs, RTTCC_DONE once complete, or an error once nothing of the call is
 * in flight any more: RTTCC_ERR_UNREACH (a peer died), RTTCC_ERR_TRUNCATE (a
 * peer's block and this process's landing room for it differ in size),
 * RTTCC_ERR (a protocol error, or out of memory for a send).  After DONE or
 * an error the exchange is ready for the next begin. */
int rttcc_exchange_progress(rttcc_exchange_t *x);

/* The schedule of the latest call. */
typedef struct rttcc_exchange_summary {
    uint64_t deferrals;  /* peers set aside */
    uint64_t forced;     /* peers started although not eligible */
    uint64_t rtr_waits;  /* peers the scheduler chose before their RTR came */
    uint64_t max_active; /* most peers put to at once (at most max_concurrent when that is set) */
    uint64_t puts;       /* puts issued */
    uint64_t eager;      /* blocks sent with the RTR */
    uint64_t bytes;      /* bytes put or sent with the RTR */
    uint64_t elapsed_ns; /* begin to done */
} rttcc_exchange_summary_t;
void rttcc_exchange_summary(const rttcc_exchange_t *x, rttcc_exchange_summary_t *out);
/* The latest call's schedule as text: one line per event ("+12.3us start
 * peer 5 rtt 40.1us expected 230.0us"), then what was dropped.  A malloc'd
 * string the caller frees, or NULL. */
char *rttcc_exchange_schedule_text(const rttcc_exchange_t *x);

/* The name of a policy, and its value from a name (-1 if unknown). */
const char *rttcc_sched_policy_name(int policy);
int rttcc_sched_policy_value(const char *name);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
