/*
 * rttcc engine: the C interface the Open MPI components (and tests) use.
 *
 * One engine per process.  It owns the wire (sockets), the peers and every
 * protocol timer; callers drive it with rttcc_engine_progress().  It never
 * includes Open MPI headers.  All functions are safe to call from several
 * threads when the engine was created with config.thread_safe set.
 */
#ifndef RTTCC_ENGINE_H
#define RTTCC_ENGINE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "rttcc/config.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the C API: what the library exports */

typedef struct rttcc_engine rttcc_engine_t;

/* Return codes. */
enum {
    RTTCC_OK = 0,
    RTTCC_DONE = 1,          /* send completed at once: no completion callback follows */
    RTTCC_ERR = -1,          /* generic failure; the error text says why */
    RTTCC_ERR_BUSY = -2,     /* out of resources now; retry after progress */
    RTTCC_ERR_UNREACH = -3,  /* the peer is unknown or has been declared dead */
    RTTCC_ERR_ARG = -4,      /* bad argument */
    RTTCC_ERR_CLOCK = -5,    /* the clock domain asked for (ptp_enable, ptp_require_sync) is missing */
    RTTCC_ERR_TIMESTAMP = -6, /* the timestamps asked for (timestamp=kernel|nic) are missing */
    RTTCC_ERR_TRUNCATE = -7   /* an exchange's block and its landing room differ in size */
};

/* Callbacks into the component.  They run only in progress passes: inside
 * rttcc_engine_progress() and rttcc_engine_drain() and, on a thread-safe
 * engine (config.thread_safe), in the liveness agent's passes.  No other
 * call (send, put, send_now, grant, revoke, add_peer, attach, ...) runs one:
 * what it changes is told in the next pass.  So a component may hold a lock
 * of its own through those calls that its callbacks take.  They run without
 * engine locks held, so they may call back into the engine (send from a
 * receive callback). */
typedef struct rttcc_callbacks {
    void *user;
    /* A whole message from `peer` arrived.  `data` is valid only during the call. */
    void (*on_recv)(void *user, uint32_t peer, uint8_t tag, const void *data, size_t len);
    /* Every byte of a zero-copy send was acknowledged (status RTTCC_OK) or the
     * peer was declared dead (RTTCC_ERR_UNREACH). */
    void (*on_send_done)(void *user, void *cookie, int status);
    /* The peer stopped answering: retransmissions exhausted. */
    void (*on_peer_dead)(void *user, uint32_t peer, const char *why);
    /* A datagram signed with our key (so sent by a process of the job) came
     * from a peer never added (the caller adds peers lazily): add it if it
     * exists; its retransmissions then get in.  Once per peer, found or not. */
    void (*on_unknown_peer)(void *user, uint32_t peer);
    /* A put from `peer` landed whole: `len` bytes at `offset` of the grant
     * `key` (rttcc_engine_grant; never for rttcc_engine_expose).  May be
     * NULL if the caller never grants. */
    void (*on_put)(void *user, uint32_t peer, uint32_t key, uint64_t offset, size_t len, uint8_t tag);
} rttcc_callbacks_t;

/* Counters, kept per engine and per peer. */
#define RTTCC_STATS(X)                                                            \
    X(bytes_tx, "payload bytes sent, first transmissions only")                    \
    X(bytes_rx, "payload bytes received and accepted")                             \
    X(segs_tx, "segments sent, first transmissions")                               \
    X(segs_rx, "segments received and accepted")                                   \
    X(segs_ooo, "segments accepted out of order (after a gap)")                    \
    X(ordered_held, "ordered messages (fence, PSCW completion) held until what was sent before them arrived") \
    X(retx, "segments retransmitted (timeout or fast retransmit)")                 \
    X(retx_timeout, "retransmissions caused by a retransmission timeout")          \
    X(retx_fast, "fast retransmissions (holes shown by selective ACKs)")           \
    X(retx_rack, "retransmissions of segments found lost by time: one sent later arrived (RACK)") \
    X(retx_probe, "tail-loss probes: the latest transmission resent after two round trips without an ACK (TLP)") \
    X(acks_tx, "standalone ACK packets sent")                                      \
    X(acks_piggy, "ACKs piggy-backed on data segments")                            \
    X(acks_rx, "ACKs received that advanced the window")                           \
    X(dup_acks, "duplicate ACKs received (standalone ACKs repeating una)")         \
    X(dup_segs, "duplicate or old segments received (dropped, ACKed at once)")     \
    X(dup_chunks, "chunks over bytes their message already had (dropped unacknowledged)") \
    X(reassembly_abandoned, "messages abandoned half-arrived: a later message's chunks showed they never would be whole") \
    X(drops, "received datagrams dropped, all reasons")                            \
    X(drop_malformed, "dropped: too short, bad length or bad fields")              \
    X(drop_foreign, "dropped: wrong magic, version or job key")                    \
    X(drop_unknown_peer, "dropped: unknown sender or wrong source address")        \
    X(drop_auth, "dropped: its MAC was wrong (forged, altered, or signed with another key)") \
    X(drop_undeliverable, "dropped unacknowledged: no client for its tag, a chunk that does not fit (no buffer, overlapping), a put outside its region") \
    X(drop_beyond_window, "dropped: sequence number beyond the receive window")    \
    X(drop_bad_put, "dropped: a put or an RMA request outside what was granted or exposed to its sender, or inconsistent") \
    X(rma_posted, "small puts and accumulates gathered into batches (rttcc_rma_post)") \
    X(rma_batches, "batches sent: one request each, however many puts and accumulates it carries") \
    X(locked_batches_waited, "lazy locks' batches (rttcc_rma_lock_batch) that came while their lock was held: they waited for it") \
    X(protocol_errors, "peers declared dead for sending what the protocol never sends (puts, early control messages beyond their caps)") \
    X(sends_waited, "zero-copy puts and accumulates that waited behind another to leave with the next in one send call") \
    X(puts_copied, "puts copied at their sender's request (rttcc_engine_put_copied): done at once, no ACK waited for") \
    X(window_stalls, "times a send found its peer's window or credits full")       \
    X(wire_stalls, "times the wire refused a datagram (socket buffer full)")       \
    X(msgs_tx, "messages (fragments) handed to the engine")                        \
    X(msgs_rx, "messages (fragments) delivered")                                   \
    X(probes_tx, "RTT probes sent")                                                \
    X(probes_answered, "RTT probes of peers answered")                             \
    X(probe_replies, "replies to our RTT probes received in time")                 \
    X(probes_lost, "RTT probes never answered")                                    \
    X(agent_passes, "progress passes the liveness agent made while the application was away") \
    X(turned_away, "segments the liveness agent turned away (resent once the application came back)") \
    X(agent_kept, "segments the liveness agent kept for the application's next pass (no resend needed)") \
    X(busy_tx, "BUSY replies sent: a peer's data arrived while our application was away") \
    X(busy_rx, "BUSY replies received: a peer's application was away, not dead")    \
    X(resumes_tx, "resume ACKs sent: peers asked to resend what the agent turned away") \
    X(resumes_rx, "resume ACKs received: segments resent at once, not on a timer") \
    X(port_unreachable, "our datagrams the kernel answered with ICMP port unreachable (a peer that is gone)") \
    X(send_errors, "our datagrams the kernel or the libfabric provider refused for good (EMSGSIZE, ENETUNREACH, EPERM, provider errors, ...)")

typedef struct rttcc_stats {
#define RTTCC_STATS_FIELD(name, help) uint64_t name;
    RTTCC_STATS(RTTCC_STATS_FIELD)
#undef RTTCC_STATS_FIELD
} rttcc_stats_t;

/* Creates the engine and opens its wire.  On failure returns an RTTCC_ERR*
 * code and writes a one-line reason into err. */
int rttcc_engine_create(const rttcc_config_t *config, const rttcc_callbacks_t *callbacks,
                        rttcc_engine_t **out, char *err, size_t errlen);
void rttcc_engine_destroy(rttcc_engine_t *engine);

/* A second client of the engine: messages, puts and send completions with
 * `tag` go to `callbacks` instead of the creator's; on_peer_dead goes to
 * both; on_unknown_peer stays with the creator.  RTTCC_ERR_BUSY if the tag
 * is attached already or the engine has no room for another client.
 * After detach, deliveries with the tag are dropped (never the creator's). */
int rttcc_engine_attach(rttcc_engine_t *engine, uint8_t tag, const rttcc_callbacks_t *callbacks);
int rttcc_engine_detach(rttcc_engine_t *engine, uint8_t tag);

/* What the engine chose where the configuration let it (timestamps, clock
 * domain) and why: one line for a verbose log. */
const char *rttcc_engine_notes(const rttcc_engine_t *engine);

/* Which wire the engine runs on ("udp", "mem", ...). */
const char *rttcc_engine_wire_name(const rttcc_engine_t *engine);

/* This process's address, to publish to peers (modex).  Returns its size,
 * or a negative code if `cap` is too small. */
int rttcc_engine_local_address(const rttcc_engine_t *engine, void *buf, size_t cap);

/* Adds a peer from its published address.  `peer` is the caller's index for
 * it (a small dense integer); the same index names it in every call. */
int rttcc_engine_add_peer(rttcc_engine_t *engine, uint32_t peer, const void *addr, size_t len,
                          char *err, size_t errlen);

/* Largest message (or put) one call may hand over, bytes. */
size_t rttcc_engine_max_message(const rttcc_engine_t *engine);

/* Largest payload of one datagram to `peer` on the data channel (0 for a
 * peer never added). */
size_t rttcc_engine_peer_segment_size(const rttcc_engine_t *engine, uint32_t peer);

/* Sends one message of up to two pieces.  Messages no larger than
 * config.inline_max are copied and the call returns RTTCC_DONE, and so are
 * those up to config.send_copy_max while nothing else sent to the peer is
 * unacknowledged (and memory is left for the copy).  Other ones are sent
 * zero-copy from the caller's memory, which must stay untouched until
 * on_send_done(cookie): RTTCC_OK.  Never blocks. */
int rttcc_engine_send(rttcc_engine_t *engine, uint32_t peer, uint8_t tag,
                      const struct iovec *iov, int iovcnt, void *cookie);

/* One-sided puts (coll_rttcc's and mtl_rttcc's data path).  A process
 * grants memory to one peer and hands it the key; that peer, and no other,
 * puts bytes straight into it, until the grant is revoked.  A put from
 * another peer, outside the grant or after its revocation is dropped
 * unacknowledged (drop_bad_put).  Keys are never 0 and come back only once a
 * counter went round its 2^24 values, so a late put of an earlier call
 * never lands in a later one.
 * Returns RTTCC_ERR_ARG for an empty or too large region (or with 2^22
 * grants live). */
int rttcc_engine_grant(rttcc_engine_t *engine, uint32_t peer, void *base, size_t len, uint32_t *key);
/* A silent grant (an RMA window's exposure to one peer): the same, but
 * nobody is told of the puts that land (no on_put), so they land at any
 * time, also while the application is away from MPI (the liveness agent
 * lands them and ACKs them); that a put landed is its sender's to know
 * (its completion). */
int rttcc_engine_expose(rttcc_engine_t *engine, uint32_t peer, void *base, size_t len, uint32_t *key);
int rttcc_engine_revoke(rttcc_engine_t *engine, uint32_t key);

/* Puts a message of up to two pieces (1 byte to the largest message) at
 * `offset` of the grant `key` that `peer` gave this process; the peer's
 * on_put tells it when every byte landed.  Copied and RTTCC_DONE up to inline_max,
 * otherwise zero-copy with on_send_done(cookie) as for rttcc_engine_send;
 * a zero-copy put right behind another may wait for the next progress pass,
 * flush or send to the peer, to leave with the puts after it. */
int rttcc_engine_put(rttcc_engine_t *engine, uint32_t peer, uint32_t key, uint64_t offset, uint8_t tag,
                     const struct iovec *iov, int iovcnt, void *cookie);

/* As rttcc_engine_put, but copied up to send_copy_max while engine memory
 * for copies lasts (send_copy_mb): RTTCC_DONE, the caller's bytes free at
 * once, for a caller that needs no ACK to complete (MPI_Win_complete);
 * else zero-copy as rttcc_engine_put. */
int rttcc_engine_put_copied(rttcc_engine_t *engine, uint32_t peer, uint32_t key, uint64_t offset, uint8_t tag,
                            const struct iovec *iov, int iovcnt, void *cookie);

/* Remote completion (MPI_Win_flush): everything sent or put to `peer`
 * before this call, copied or not, acknowledged by it.  RTTCC_DONE if
 * nothing is unacknowledged now; else RTTCC_OK and on_send_done(cookie) of
 * the client of `tag` once it is (RTTCC_ERR_UNREACH if the peer is
 * declared dead first), whatever was sent after.  RTTCC_ERR_UNREACH for an
 * unknown or dead peer. */
int rttcc_engine_flush(rttcc_engine_t *engine, uint32_t peer, uint8_t tag, void *cookie);

/* Sends a message of at most config.cmd_mtu - 72 bytes by copy that the
 * peer delivers only once every message, put and RMA request this process
 * sent it before has arrived there: puts landed, requests served
 * (operations posted with rttcc_rma_post go first, in the same send call).
 * What the peer learns from it is what a flush would tell the sender, a
 * round trip earlier (osc_rttcc's fence between two processes,
 * MPI_Win_complete).  flush_cookie, if not NULL: also a flush, as
 * rttcc_engine_flush(peer, tag, flush_cookie), of what was sent before the
 * message (not of the message), whose ACK is asked without a datagram of
 * its own.  RTTCC_DONE: sent, nothing to flush; RTTCC_OK: sent, the flush
 * completes later. */
int rttcc_engine_send_ordered(rttcc_engine_t *engine, uint32_t peer, uint8_t tag, const void *data, size_t len,
                              void *flush_cookie);

/* Writes `len` bytes of a message into `dst` (e.g. packs a datatype). */
typedef void (*rttcc_fill_fn)(void *ctx, void *dst, size_t len);

/* Sends a message of `len` <= config.inline_max bytes by copy, only if the
 * peer can take it now (window and credits open): then fill() writes it into
 * engine memory and the call returns RTTCC_DONE.  Otherwise RTTCC_ERR_BUSY
 * and fill() is not called. */
int rttcc_engine_send_now(rttcc_engine_t *engine, uint32_t peer, uint8_t tag, size_t len,
                          rttcc_fill_fn fill, void *ctx);

/* Runs the protocol: receives, delivers, ACKs, retransmits, sends queued
 * segments.  Returns the number of events (messages delivered or completed). */
int rttcc_engine_progress(rttcc_engine_t *engine);

/* Before shutdown: sends every ACK owed now, then progresses until nothing
 * is in flight or `timeout_ms` passed.  Returns how many segments are still
 * unacknowledged (0: every one was ACKed), or a negative code. */
int rttcc_engine_drain(rttcc_engine_t *engine, unsigned timeout_ms);

/* This process's counters, summed over its peers. */
void rttcc_engine_stats(const rttcc_engine_t *engine, rttcc_stats_t *out);
/* One peer's row of the RTT table.  Times are nanoseconds; a field whose
 * flag is clear is unknown.  Read without locks (a seqlock snapshot). */
enum {
    RTTCC_ROW_OWD = 1u << 0,        /* owd_fwd_ns / owd_rev_ns are valid */
    RTTCC_ROW_OFFSET = 1u << 1,     /* clock_offset_ns / offset_bound_ns are valid */
    RTTCC_ROW_LAST_PROBE = 1u << 2, /* the latest sample came from a probe, not data */
    RTTCC_ROW_CC = 1u << 3          /* cwnd is a congestion window (cc != none) */
};
typedef struct rttcc_rtt_row {
    uint64_t srtt_ns, rttvar_ns;   /* RFC 6298 estimator */
    uint64_t min_ns, max_ns, latest_ns;
    uint64_t samples;              /* RTT samples from data ACKs */
    uint64_t probe_samples;        /* RTT samples from probe replies */
    int64_t owd_fwd_ns;            /* one-way delay to the peer (latest sample) */
    int64_t owd_rev_ns;            /* one-way delay from the peer */
    int64_t clock_offset_ns;       /* peer's clock minus ours */
    uint64_t offset_bound_ns;      /* the offset is right within +- this */
    uint64_t losses;               /* segments retransmitted for loss, plus probes lost */
    uint64_t retransmits;          /* segments retransmitted, all causes */
    uint64_t probes_sent;          /* probes sent to the peer */
    uint64_t probes_lost;          /* probes never answered */
    double cwnd;                   /* congestion window, segments (0 with cc = none) */
    uint64_t bytes_tx, bytes_rx;   /* payload bytes sent (first transmissions) and received */
    uint64_t rto_ns;               /* current retransmission timeout */
    uint64_t last_update_ns;       /* when the row last changed (engine's monotonic clock) */
    uint32_t rtt_source;           /* where the latest sample's stamps came from: 1 user, 2 kernel, 3 nic */
    uint32_t flags;                /* RTTCC_ROW_* */
} rttcc_rtt_row_t;

/* Lock-free read of a peer's row; RTTCC_ERR_ARG if the peer has none yet. */
int rttcc_engine_rtt_row(const rttcc_engine_t *engine, uint32_t peer, rttcc_rtt_row_t *out);

/* Name of a timestamp source (rtt_source): "user", "kernel", "nic", "none". */
const char *rttcc_timestamp_source_name(uint32_t source);

/* Writes the RTT table to PREFIX.<rank>.csv and PREFIX.<rank>.json. */
int rttcc_engine_dump_rtt(rttcc_engine_t *engine, const char *prefix, uint32_t rank, const char *host,
                          char *err, size_t errlen);

/* One peer's counters; RTTCC_ERR_ARG for an unknown peer. */
int rttcc_engine_peer_stats(const rttcc_engine_t *engine, uint32_t peer, rttcc_stats_t *out);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
