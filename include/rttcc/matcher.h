/*
 * rttcc matcher: MPI message matching for mtl_rttcc, free of Open MPI.
 *
 * Two queues per communicator (context id): receives posted and not yet
 * matched, and arrivals nobody has asked for yet, each in its own order.
 * Arrivals carry a per-peer sequence number; the transport may deliver
 * messages out of order, so the matcher hands them on strictly in the
 * sender's order (MPI's non-overtaking rule):
 *
 *      peer's seq:  ... 6 | 7  8  9 ...
 *                       ^   ^        arrivals 8 and 9 came first: held,
 *                 matched   expected  released in turn once 7 arrives
 *
 * Sequence numbers wrap (32 bits, compared modulo 2^32).  The caller owns
 * every item and its memory and serializes calls (one lock).
 *
 * Held arrivals are bounded, per peer and in all: a sender that runs
 * further ahead of a message it has not delivered is refused (the caller
 * ends the job with a clear error: what is refused is already
 * acknowledged and cannot be dropped).  A legal sender does get ahead:
 * its messages after a lost segment (at most the engine's window of them)
 * and, while a data-channel message waits for credits, its command-channel
 * ones (rttcc/engine.h), which are bounded by how fast it sends, not by
 * the window.
 */
#ifndef RTTCC_MATCH_H
#define RTTCC_MATCH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the C API: what the library exports */

#define RTTCC_MATCH_ANY (-1) /* MPI_ANY_SOURCE / MPI_ANY_TAG in a receive */
#define RTTCC_MATCH_MAX_INDEX (1u << 24) /* context ids and peers are below this */

/* Where the matcher links a queued item (the caller neither reads nor
 * initializes it). */
typedef struct rttcc_match_link {
    struct rttcc_match_link *prev, *next;
} rttcc_match_link_t;

/* A posted receive or an arrival.  `link` belongs to the matcher.  A
 * receive's `src` and `tag` may be RTTCC_MATCH_ANY; an arrival's are the
 * sender's rank and tag (negative tags are Open MPI's internal ones:
 * ANY_TAG never matches them). */
typedef struct rttcc_match_item {
    rttcc_match_link_t link;
    uint32_t cid;  /* communicator's context id */
    int32_t src;   /* rank in that communicator */
    int32_t tag;
    uint32_t peer; /* arrivals: the sending process (engine index) */
    uint32_t seq;  /* arrivals: its sequence number towards us */
} rttcc_match_item_t;

typedef struct rttcc_matcher rttcc_matcher_t;

/* A matcher that holds at most `max_held_per_peer` arrivals of one peer
 * and `max_held` in all; NULL without memory. */
rttcc_matcher_t *rttcc_matcher_create(size_t max_held_per_peer, size_t max_held);
/* Items still queued are left alone (rttcc_matcher_pop_arrival drains arrivals). */
void rttcc_matcher_destroy(rttcc_matcher_t *m);

/* Arrival ordering: 1 if `seq` is the one expected from `peer` (now
 * consumed), 0 if it is ahead (hold it), -1 if it is behind (a duplicate),
 * -2 if the peer is out of range or its state could not be allocated. */
int rttcc_matcher_in_order(rttcc_matcher_t *m, uint32_t peer, uint32_t seq);
/* Keeps an arrival that came ahead of its turn (in_order said 0): 0, or
 * -1 if it would pass a bound (held_max_per_peer or held_max), or -2 if
 * an arrival of the same peer and seq is held already (a duplicate: the
 * engine never delivers one twice).  Refused, it is not queued. */
int rttcc_matcher_hold(rttcc_matcher_t *m, rttcc_match_item_t *arrival);
/* The held arrival whose turn it now is (consumed), or NULL. */
rttcc_match_item_t *rttcc_matcher_release(rttcc_matcher_t *m, uint32_t peer);

/* An arrival in order: the oldest posted receive it matches, dequeued, or
 * NULL; then the caller queues it with rttcc_matcher_add_unexpected.
 * The add functions return 0, or -1 for a context id out of range or no
 * memory (the item is then not queued). */
rttcc_match_item_t *rttcc_matcher_take_posted(rttcc_matcher_t *m, const rttcc_match_item_t *arrival);
int rttcc_matcher_add_unexpected(rttcc_matcher_t *m, rttcc_match_item_t *arrival);

/* A new receive: the oldest unexpected arrival it matches, dequeued, or
 * NULL; then the caller queues it with rttcc_matcher_add_posted. */
rttcc_match_item_t *rttcc_matcher_take_unexpected(rttcc_matcher_t *m, const rttcc_match_item_t *recv);
int rttcc_matcher_add_posted(rttcc_matcher_t *m, rttcc_match_item_t *recv);

/* Probe: the oldest unexpected arrival `recv` would match, left queued. */
rttcc_match_item_t *rttcc_matcher_find_unexpected(rttcc_matcher_t *m, const rttcc_match_item_t *recv);

/* Cancel: 1 if the receive was still posted (now dequeued), 0 if not. */
int rttcc_matcher_cancel(rttcc_matcher_t *m, rttcc_match_item_t *recv);

/* Cancel of a send: where arrival `seq` of `peer` is.  1: unexpected in
 * `cid`, now dequeued into *out; 0: matched already (handed on and not
 * unexpected); -1: not handed on yet (held, or still on its way), so
 * unmatched. */
int rttcc_matcher_take_arrival(rttcc_matcher_t *m, uint32_t cid, uint32_t peer, uint32_t seq,
                               rttcc_match_item_t **out);

/* A communicator freed: dequeues and returns its oldest unexpected
 * arrival, or NULL once there is none. */
rttcc_match_item_t *rttcc_matcher_pop_unexpected(rttcc_matcher_t *m, uint32_t cid);

/* Numbers of posted receives, unexpected and held arrivals. */
void rttcc_matcher_counts(const rttcc_matcher_t *m, size_t *posted, size_t *unexpected, size_t *held);

/* Shutdown: dequeues and returns any unexpected or held arrival, or NULL. */
rttcc_match_item_t *rttcc_matcher_pop_arrival(rttcc_matcher_t *m);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
