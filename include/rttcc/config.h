/*
 * Every engine tunable, described once: RTTCC_PARAMS below.  The struct the
 * engine reads, its defaults, the range checks, the MCA variables (one
 * registration, as rttcc_<name>, with btl_rttcc_<name> and mtl_rttcc_<name>
 * as synonyms) and `ompi_info --param btl rttcc --level 9` all come from it.
 */
#ifndef RTTCC_CONFIG_H
#define RTTCC_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the C API: what the library exports */

/* Enumerations: V(constant, value, name as users write it). */
#define RTTCC_WIRE_VALUES(V) V(RTTCC_WIRE_AUTO, 0, "auto") V(RTTCC_WIRE_UDP, 1, "udp") V(RTTCC_WIRE_OFI, 2, "ofi")
#define RTTCC_RTO_VALUES(V) V(RTTCC_RTO_FIXED, 0, "fixed") V(RTTCC_RTO_RTT, 1, "rtt")
/* Where RTT timestamps come from (also the source reported per sample). */
#define RTTCC_TS_VALUES(V) \
    V(RTTCC_TS_AUTO, 0, "auto") V(RTTCC_TS_USER, 1, "user") V(RTTCC_TS_KERNEL, 2, "kernel") V(RTTCC_TS_NIC, 3, "nic")
#define RTTCC_PTP_VALUES(V) V(RTTCC_PTP_NO, 0, "no") V(RTTCC_PTP_YES, 1, "yes") V(RTTCC_PTP_AUTO, 2, "auto")
#define RTTCC_CC_VALUES(V) \
    V(RTTCC_CC_NONE, 0, "none") V(RTTCC_CC_AIMD, 1, "aimd") V(RTTCC_CC_TIMELY, 2, "timely") V(RTTCC_CC_SWIFT, 3, "swift")
#define RTTCC_CC_DELAY_VALUES(V) V(RTTCC_CC_DELAY_RTT, 0, "rtt") V(RTTCC_CC_DELAY_FORWARD, 1, "forward")
#define RTTCC_AUTH_VALUES(V) V(RTTCC_AUTH_NONE, 0, "none") V(RTTCC_AUTH_HEADER, 1, "header") V(RTTCC_AUTH_FULL, 2, "full")
#define RTTCC_PROBE_VALUES(V)                                                                      \
    V(RTTCC_PROBE_ROUND_ROBIN, 0, "round_robin") V(RTTCC_PROBE_ALL_PAIRS, 1, "all_pairs")          \
    V(RTTCC_PROBE_RANDOM, 2, "random") V(RTTCC_PROBE_ADAPTIVE, 3, "adaptive")

#define RTTCC_ENUM_CONSTANT(constant, value, name) constant = value,
enum rttcc_wire_kind { RTTCC_WIRE_VALUES(RTTCC_ENUM_CONSTANT) };
enum rttcc_rto_mode { RTTCC_RTO_VALUES(RTTCC_ENUM_CONSTANT) };
enum rttcc_timestamp { RTTCC_TS_VALUES(RTTCC_ENUM_CONSTANT) };
enum rttcc_ptp_enable { RTTCC_PTP_VALUES(RTTCC_ENUM_CONSTANT) };
enum rttcc_cc { RTTCC_CC_VALUES(RTTCC_ENUM_CONSTANT) };
enum rttcc_cc_delay { RTTCC_CC_DELAY_VALUES(RTTCC_ENUM_CONSTANT) };
enum rttcc_auth { RTTCC_AUTH_VALUES(RTTCC_ENUM_CONSTANT) };
enum rttcc_probe_strategy { RTTCC_PROBE_VALUES(RTTCC_ENUM_CONSTANT) };
#undef RTTCC_ENUM_CONSTANT

/*
 * P(name, type, default, min, max, unit, level, values, help)
 *   type     UINT (unsigned), BOOL, STRING (char *), ENUM (int), DOUBLE
 *   min/max  the allowed range of a UINT (0 = no bound on that side); rules
 *            between parameters are in rttcc_config_check
 *   unit     NONE, US, MS, NS, BYTES, MIB, SEGMENTS, DATAGRAMS, PER_SECOND,
 *            PER_MILLION: the name ends in _us, _ms, _ns, _mb for the four
 *            of them that are units of time and memory
 *   level    Open MPI info level, 1..9
 *   values   the RTTCC_*_VALUES list of an ENUM, NONE otherwise
 *   help     what it does; the unit, range and values are added to it
 */
#define RTTCC_PARAMS(P)                                                                                        \
    P(wire, ENUM, RTTCC_WIRE_AUTO, 0, 0, NONE, 1, RTTCC_WIRE_VALUES,                                            \
      "Datagram wire: auto (udp), udp (Linux UDP sockets), ofi (libfabric FI_EP_DGRAM; the provider is "        \
      "libfabric's choice unless RTTCC_OFI_PROVIDER names one)")                                                \
    P(if_include, STRING, NULL, 0, 0, NONE, 1, NONE,                                                            \
      "Comma-separated interface names or CIDR subnets to use (default: every up interface but loopback, or "  \
      "loopback when nothing else is up); mutually exclusive with if_exclude")                                  \
    P(if_exclude, STRING, NULL, 0, 0, NONE, 1, NONE, "Comma-separated interface names or CIDR subnets never to use") \
    P(window, UINT, 4096, 64, 65536, SEGMENTS, 4, NONE, "Send window per peer (a power of two)")                 \
    P(send_credits, UINT, 256, 1, 0, SEGMENTS, 4, NONE, "Data segments in flight per peer (at most window)")    \
    P(ack_delay_us, UINT, 50, 0, 0, US, 5, NONE, "Delay before a standalone ACK when no data carries it")        \
    P(ack_every, UINT, 256, 0, 0, SEGMENTS, 5, NONE,                                                            \
      "Send an ACK at once after this many segments arrived unACKed (a sender also asks for one when half "     \
      "its credits are in flight)")                                                                             \
    P(retrans_timeout_us, UINT, 10000, 1, 0, US, 5, NONE,                                                       \
      "Retransmission timeout with rto_mode=fixed, and before the first RTT sample with rto_mode=rtt (doubles "  \
      "on each timeout; at most max_rto_us)")                                                                   \
    P(rto_mode, ENUM, RTTCC_RTO_RTT, 0, 0, NONE, 5, RTTCC_RTO_VALUES,                                           \
      "Retransmission timeout: rtt (per peer, SRTT + max(G, 4*RTTVAR) from the RTT samples, RFC 6298) or "      \
      "fixed (retrans_timeout_us)")                                                                             \
    P(min_rto_us, UINT, 5000, 1, 0, US, 5, NONE, "Floor of the RTT-derived retransmission timeout (at most max_rto_us)") \
    P(max_rto_us, UINT, 1000000, 1, 0, US, 5, NONE, "Ceiling of the backed-off retransmission timeout")         \
    P(rto_jitter_pct, UINT, 50, 0, 100, NONE, 5, NONE,                                                          \
      "Each retransmission timeout is lengthened by up to this percent of itself, by an amount drawn per "      \
      "process, peer, segment and timeout, so that senders whose packets were lost together (an incast) do "    \
      "not all resend together (0: exact timeouts)")                                                           \
    P(rtt_alpha, DOUBLE, 0.125, 0, 0, NONE, 6, NONE, "SRTT gain of the RTT estimator, between 0 and 1 (RFC 6298: 0.125)") \
    P(rtt_beta, DOUBLE, 0.25, 0, 0, NONE, 6, NONE, "RTTVAR gain of the RTT estimator, between 0 and 1 (RFC 6298: 0.25)") \
    P(peer_timeout_ms, UINT, 15000, 1, 0, MS, 4, NONE,                                                          \
      "A peer that acknowledges nothing for this long, despite retransmissions and liveness probes, is "        \
      "declared dead and the job gets an error")                                                                \
    P(fast_retrans_dupacks, UINT, 3, 0, 0, NONE, 5, NONE,                                                       \
      "Fast retransmit: a segment is resent as lost once a segment of its channel sent this many sequence "     \
      "numbers after it has been selectively ACKed (TCP's duplicate-ACK threshold; 0 = resend on timeout only)") \
    P(rack, BOOL, true, 0, 0, NONE, 5, NONE,                                                                    \
      "Loss found in round trips (RACK-TLP, RFC 8985): a segment is resent once one sent after it on its "      \
      "channel arrived and a quarter of the least RTT passed; and the latest transmission is resent as a "      \
      "probe after two SRTT and ack_delay_us without an ACK (at least SRTT + 4 RTTVAR of the ACKs as they "     \
      "come; doubled per probe found spurious), once, then the retransmission timeout rules. "                 \
      "Off: only selective ACKs (fast_retrans_dupacks) and the timeout resend")                                 \
    P(data_mtu, UINT, 0, 0, 65507, BYTES, 4, NONE,                                                              \
      "Data-channel datagram size including the rttcc header: 0 = from the path (65000 between processes of "   \
      "one host, the interface MTU otherwise), else at least 512")                                              \
    P(cmd_mtu, UINT, 1024, 256, 9000, BYTES, 5, NONE, "Command-channel datagram size (ACKs and tiny messages)")  \
    P(inline_max, UINT, 8192 + 64, 0, 65536, BYTES, 5, NONE,                                                    \
      "Puts, RMA requests and the engine's small copies up to this size are copied and complete at once (8 "    \
      "KiB of user data and a PML header)")                                                                     \
    P(send_copy_max, UINT, 262144 + 64, 0, 1048576, BYTES, 5, NONE,                                             \
      "Messages (not puts, unless copied on request) up to this size are copied while nothing else to their "  \
      "peer is unacknowledged, so "                                                                             \
      "the send completes at once; otherwise they are sent zero-copy and complete on the receiver's ACK, "      \
      "which costs a ping-pong's reply one more send call (the default: btl_rttcc's eager messages, 256 KiB "   \
      "and a PML header). Below inline_max, inline_max applies")                                                \
    P(send_copy_mb, UINT, 16, 0, 0, MIB, 6, NONE,                                                               \
      "Most memory the copies of messages above inline_max (send_copy_max) hold at once: beyond it such "      \
      "messages go zero-copy (a process sending to many peers at once, as an alltoall, copies that much)")      \
    P(rx_batch, UINT, 32, 1, 1024, DATAGRAMS, 6, NONE, "Datagrams received per recvmmsg call")                  \
    P(tx_batch, UINT, 128, 1, 1024, DATAGRAMS, 6, NONE,                                                        \
      "Datagrams sent per sendmmsg call; UDP GSO joins a peer's consecutive ones within a call (64 KB at most). "   \
      "Zero-copy puts and RMA requests issued back to back to a peer wait for each other while they fit one call")  \
    P(sock_buf, UINT, 32u << 20, 0, 0, BYTES, 5, NONE,                                                          \
      "Socket send and receive buffer size (forced past rmem_max when root)")                                   \
    P(udp_offload, BOOL, true, 0, 0, NONE, 5, NONE,                                                             \
      "Use UDP segmentation offload (GSO) when sending and receive offload (GRO) when receiving, where the "    \
      "kernel has them")                                                                                        \
    P(stats, BOOL, false, 0, 0, NONE, 3, NONE, "Print this process's counters at finalize (rttcc-stats lines)") \
    P(timestamp, ENUM, RTTCC_TS_AUTO, 0, 0, NONE, 4, RTTCC_TS_VALUES,                                           \
      "Where RTT timestamps come from: auto (the best that works: nic, then kernel, then user), user (the "     \
      "engine's monotonic clock at post and completion), kernel (SO_TIMESTAMPING software stamps), nic "        \
      "(SO_TIMESTAMPING hardware stamps of a PTP-capable NIC)")                                                 \
    P(timestamp_interval_us, UINT, 0, 0, 0, US, 6, NONE,                                                        \
      "Least time between two kernel- or NIC-stamped transmissions to one peer (each stamp costs a read of "    \
      "the socket's error queue; 0 = auto: 100 with congestion control, which lives on samples, 1000 without)") \
    P(ptp_enable, ENUM, RTTCC_PTP_AUTO, 0, 0, NONE, 4, RTTCC_PTP_VALUES,                                        \
      "Clock domain for one-way delays: yes (a PTP hardware clock, ptp_clock_device, is required), no "         \
      "(CLOCK_REALTIME; peers' offsets estimated from probe and ACK exchanges unless adjtimex says the clock "   \
      "is synchronised), auto (the PTP clock when it opens)")                                                   \
    P(ptp_require_sync, BOOL, false, 0, 0, NONE, 4, NONE,                                                       \
      "Refuse to start unless the clock is synchronised (adjtimex: not STA_UNSYNC) and its error is within "    \
      "ptp_max_offset_ns")                                                                                      \
    P(ptp_clock_device, STRING, "/dev/ptp0", 0, 0, NONE, 4, NONE, "PTP hardware clock device")                 \
    P(ptp_max_offset_ns, UINT, 1000, 0, 0, NS, 5, NONE, "Largest tolerated clock error with ptp_require_sync")  \
    P(cc, ENUM, RTTCC_CC_AIMD, 0, 0, NONE, 3, RTTCC_CC_VALUES,                                                  \
      "Congestion control per peer, limiting data segments in flight below send_credits: none (only the "       \
      "credits), aimd (the default: slow start; halve when a sample exceeds SRTT + 4*RTTVAR or SRTT stands "    \
      "more than max(base RTT, 3*RTTVAR) above the base RTT), timely (RTT gradient), swift (target delay with "  \
      "flow scaling; set swift_target_us to a few frames' serialisation on slow links)")                        \
    P(cc_delay, ENUM, RTTCC_CC_DELAY_FORWARD, 0, 0, NONE, 5, RTTCC_CC_DELAY_VALUES,                             \
      "The delay congestion control acts on: rtt (each round-trip sample), or forward (the default: the round " \
      "trip less the queueing its ACK met on the way back, from one-way delays, so that traffic towards this "  \
      "process does not slow its sends; the round trip while no one-way delay is known)")                       \
    P(initial_cwnd, UINT, 4, 1, 0, SEGMENTS, 5, NONE, "Congestion window at start (at most max_cwnd)")           \
    P(max_cwnd, UINT, 256, 1, 0, SEGMENTS, 5, NONE, "Largest congestion window (also bounded by send_credits)")  \
    P(aimd_queue_floor_us, UINT, 100, 0, 0, US, 6, NONE,                                                       \
      "AIMD: queueing below this is no congestion signal (a busy receiving core, not a network queue): a spike "   \
      "must exceed SRTT + 4*RTTVAR and SRTT by this much, a standing queue the base RTT by this much")          \
    P(timely_tlow_us, UINT, 50, 0, 0, US, 6, NONE, "TIMELY: below this RTT the window always grows")            \
    P(timely_thigh_us, UINT, 500, 0, 0, US, 6, NONE, "TIMELY: above this RTT the window always shrinks")        \
    P(timely_add_step, DOUBLE, 1.0, 0, 0, NONE, 6, NONE, "TIMELY: additive increase, segments per RTT (> 0)")   \
    P(timely_beta, DOUBLE, 0.8, 0, 0, NONE, 6, NONE, "TIMELY: multiplicative decrease factor, between 0 and 1") \
    P(timely_ewma, DOUBLE, 0.875, 0, 0, NONE, 6, NONE, "TIMELY: EWMA gain of the RTT difference, in (0, 1]")    \
    P(timely_hai_count, UINT, 5, 0, 0, NONE, 6, NONE,                                                           \
      "TIMELY: negative gradients in a row before hyper-active increase (0 = never)")                           \
    P(swift_target_us, UINT, 50, 0, 0, US, 6, NONE, "Swift: base target delay")                                \
    P(swift_fs_range_us, UINT, 100, 0, 0, US, 6, NONE, "Swift: flow-scaling range added to the target")         \
    P(swift_fs_min_cwnd, DOUBLE, 0.1, 0, 0, NONE, 6, NONE,                                                      \
      "Swift: window (segments) at which flow scaling adds its whole range (> 0)")                              \
    P(swift_fs_max_cwnd, DOUBLE, 128, 0, 0, NONE, 6, NONE,                                                      \
      "Swift: window (segments) at which flow scaling adds nothing (above swift_fs_min_cwnd)")                  \
    P(swift_ai, DOUBLE, 1.0, 0, 0, NONE, 6, NONE, "Swift: additive increase, segments per RTT (> 0)")           \
    P(swift_beta, DOUBLE, 0.8, 0, 0, NONE, 6, NONE, "Swift: multiplicative decrease gain, between 0 and 1")     \
    P(swift_max_mdf, DOUBLE, 0.5, 0, 0, NONE, 6, NONE, "Swift: largest decrease in one RTT (a fraction, between 0 and 1)") \
    P(probe_enable, BOOL, false, 0, 0, NONE, 3, NONE, "Send RTT probes to peers on the command channel")        \
    P(probe_interval_us, UINT, 100000, 0, 0, US, 4, NONE, "Time between probe rounds (> 0 with probe_enable)")   \
    P(probe_msg_size, UINT, 64, 0, 0, BYTES, 5, NONE, "Payload of a probe (at most cmd_mtu - 72)")              \
    P(probe_strategy, ENUM, RTTCC_PROBE_ROUND_ROBIN, 0, 0, NONE, 4, RTTCC_PROBE_VALUES,                         \
      "Which peers a probe round visits: round_robin (the next peer), all_pairs (every peer), random (one at "   \
      "random), adaptive (the peer whose row is stalest or most variable)")                                     \
    P(probe_startup_delay_ms, UINT, 500, 0, 0, MS, 5, NONE, "Time from start to the first probe")               \
    P(probe_max_rate, UINT, 100, 0, 0, PER_SECOND, 5, NONE, "Most probes to one peer (> 0 with probe_enable)")   \
    P(auth, ENUM, RTTCC_AUTH_HEADER, 0, 0, NONE, 4, RTTCC_AUTH_VALUES,                                          \
      "Datagram authentication: every datagram carries a 64-bit MAC keyed by its receiver's random 128-bit "    \
      "secret, which travels only in the modex, so datagrams nobody in the job sent are dropped (and counted: "  \
      "drop_auth). header (SipHash-2-4 over the header: sequence numbers, ACKs, SACK bounds, ids, stamps, put "  \
      "addresses), full (keyed BLAKE2b over the header and the payload), none. Every process of a job must "    \
      "use the same setting")                                                                                   \
    P(reassembly_max_mb, UINT, 256, 0, 0, MIB, 5, NONE,                                                         \
      "Most memory held by messages that arrive in chunks (each takes a buffer of about its own length): "      \
      "beyond it a new message is not acknowledged until others complete, and its sender resends it. At least " \
      "the largest message")                                                                                    \
    P(agent, BOOL, true, 0, 0, NONE, 5, NONE,                                                                   \
      "Liveness agent: a thread of the engine's own that answers peers (ACKs, keep-alives, probes) while the "  \
      "application computes outside MPI, so a busy process is never declared dead. It lands puts then (a "      \
      "rendezvous moves on) but delivers no message (messages wait for the next MPI call: agent_keep_mb), "     \
      "except under MPI_THREAD_MULTIPLE, where it progresses fully. 0 = nobody answers for a process outside "  \
      "MPI, and a peer waiting on it declares it dead after peer_timeout_ms")                                   \
    P(agent_idle_ms, UINT, 50, 0, 0, MS, 6, NONE,                                                               \
      "The liveness agent steps in once the engine has gone this long without being progressed (it sleeps "     \
      "until then; > 0 and at most a quarter of peer_timeout_ms)")                                              \
    P(agent_keep_mb, UINT, 16, 0, 0, MIB, 6, NONE,                                                               \
      "Most memory the liveness agent keeps for data that arrives while the application computes outside MPI "   \
      "(at most a window per peer), unacknowledged: the next MPI call takes it at once, so a poll such as "      \
      "MPI_Iprobe finds it. Beyond it data is turned away, and resent once the application is back")           \
    P(rtt_dump, STRING, NULL, 0, 0, NONE, 3, NONE,                                                              \
      "At finalize each process writes its RTT table to PATH.<rank>.csv and PATH.<rank>.json "                  \
      "(tools/rtt_heatmap draws them)")                                                                         \
    P(fault_drop, UINT, 0, 0, 1000000, PER_MILLION, 9, NONE, "Testing only: drop sent datagrams")               \
    P(fault_dup, UINT, 0, 0, 1000000, PER_MILLION, 9, NONE, "Testing only: send datagrams twice")               \
    P(fault_reorder, UINT, 0, 0, 1000000, PER_MILLION, 9, NONE, "Testing only: hold datagrams back behind the next") \
    P(fault_truncate, UINT, 0, 0, 1000000, PER_MILLION, 9, NONE, "Testing only: cut datagrams short")           \
    P(fault_seed, UINT, 0, 0, 0, NONE, 9, NONE, "Testing only: seed of the fault generator (0 = from the process id)")

/* Names a parameter had before, still accepted (deprecated): R(old, new). */
#define RTTCC_PARAM_RENAMES(R)                                                                    \
    R(probe_interval, probe_interval_us) R(probe_startup_delay, probe_startup_delay_ms)           \
    R(ptp_max_offset, ptp_max_offset_ns)

#define RTTCC_CTYPE_UINT unsigned
#define RTTCC_CTYPE_BOOL bool
#define RTTCC_CTYPE_STRING char *
#define RTTCC_CTYPE_ENUM int
#define RTTCC_CTYPE_DOUBLE double
#define RTTCC_CONFIG_FIELD(name, type, ...) RTTCC_CTYPE_##type name;

typedef struct rttcc_config {
    RTTCC_PARAMS(RTTCC_CONFIG_FIELD)
    /* Set by the caller, not by users: */
    bool thread_safe;     /* lock engine state (MPI_THREAD_MULTIPLE) */
    uint32_t job_key;     /* per-job random key carried in every header */
    uint32_t self;        /* this process's index among its peers */
    uint32_t max_message; /* largest message the caller sends, bytes */
} rttcc_config_t;

typedef enum rttcc_param_type {
    RTTCC_PARAM_UINT,
    RTTCC_PARAM_BOOL,
    RTTCC_PARAM_STRING,
    RTTCC_PARAM_ENUM,
    RTTCC_PARAM_DOUBLE
} rttcc_param_type_t;

typedef enum rttcc_param_unit {
    RTTCC_UNIT_NONE,
    RTTCC_UNIT_US,
    RTTCC_UNIT_MS,
    RTTCC_UNIT_NS,
    RTTCC_UNIT_BYTES,
    RTTCC_UNIT_MIB,
    RTTCC_UNIT_SEGMENTS,
    RTTCC_UNIT_DATAGRAMS,
    RTTCC_UNIT_PER_SECOND,
    RTTCC_UNIT_PER_MILLION
} rttcc_param_unit_t;

typedef struct rttcc_enum_value {
    int value;
    const char *name;
} rttcc_enum_value_t;

/* One row of RTTCC_PARAMS, as data. */
typedef struct rttcc_param {
    const char *name;                 /* as in rttcc_<name> */
    const char *help;                 /* without unit, range or values */
    rttcc_param_type_t type;
    rttcc_param_unit_t unit;
    unsigned min, max;                /* UINT range, 0 = unbounded on that side */
    int info_level;                   /* 1..9, as OPAL_INFO_LVL_* */
    const rttcc_enum_value_t *values; /* ENUM: ends with a NULL name; else NULL */
    size_t offset;                    /* of the field in rttcc_config_t */
} rttcc_param_t;

/* The prefix of every parameter's framework-neutral name. */
#define RTTCC_PARAM_PREFIX "rttcc_"

void rttcc_config_defaults(rttcc_config_t *config);
const rttcc_param_t *rttcc_config_params(size_t *count);
/* "microseconds", "segments", ...; "" for RTTCC_UNIT_NONE. */
const char *rttcc_param_unit_name(rttcc_param_unit_t unit);
/* A UINT's range as users read it ("64..65536", "at least 1", "at most
 * 65507"); "" when it has none. */
void rttcc_param_range_text(const rttcc_param_t *param, char *out, size_t cap);

/* Checks a config; on error writes the reason (naming parameters
 * rttcc_<name>) and returns false. */
bool rttcc_config_check(const rttcc_config_t *config, char *err, size_t errlen);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
