/*
 * Every engine tunable, in one place: the C struct the engine reads and the
 * table (name, help, type, info level) the MCA glue registers it from, so
 * `ompi_info --param btl rttcc --level 9` lists exactly what the engine uses.
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

enum rttcc_wire_kind { RTTCC_WIRE_AUTO = 0, RTTCC_WIRE_UDP = 1, RTTCC_WIRE_OFI = 2 };
enum rttcc_rto_mode { RTTCC_RTO_FIXED = 0, RTTCC_RTO_RTT = 1 };
/* Where RTT timestamps come from (also the source reported per sample). */
enum rttcc_timestamp { RTTCC_TS_AUTO = 0, RTTCC_TS_USER = 1, RTTCC_TS_KERNEL = 2, RTTCC_TS_NIC = 3 };
enum rttcc_ptp_enable { RTTCC_PTP_NO = 0, RTTCC_PTP_YES = 1, RTTCC_PTP_AUTO = 2 };
enum rttcc_cc { RTTCC_CC_NONE = 0, RTTCC_CC_AIMD = 1, RTTCC_CC_TIMELY = 2, RTTCC_CC_SWIFT = 3 };
enum rttcc_cc_delay { RTTCC_CC_DELAY_RTT = 0, RTTCC_CC_DELAY_FORWARD = 1 };
enum rttcc_auth { RTTCC_AUTH_NONE = 0, RTTCC_AUTH_HEADER = 1, RTTCC_AUTH_FULL = 2 };
enum rttcc_probe_strategy {
    RTTCC_PROBE_ROUND_ROBIN = 0,
    RTTCC_PROBE_ALL_PAIRS = 1,
    RTTCC_PROBE_RANDOM = 2,
    RTTCC_PROBE_ADAPTIVE = 3
};

typedef struct rttcc_config {
    int wire;                       /* rttcc_wire_kind */
    char *if_include;               /* interfaces or CIDRs to use (comma list) */
    char *if_exclude;               /* interfaces or CIDRs to avoid (comma list) */
    unsigned window;                /* send/receive window, segments, power of two */
    unsigned send_credits;          /* data segments in flight per peer */
    unsigned ack_delay_us;          /* delayed standalone ACK */
    unsigned ack_every;             /* ACK at once after this many unACKed segments */
    unsigned retrans_timeout_us;    /* fixed timeout, and the RTO before any RTT sample */
    int rto_mode;                   /* rttcc_rto_mode */
    unsigned min_rto_us;            /* floor of the RTT-derived timeout */
    unsigned max_rto_us;            /* ceiling of the backed-off timeout */
    double rtt_alpha;               /* RFC 6298 SRTT gain */
    double rtt_beta;                /* RFC 6298 RTTVAR gain */
    unsigned peer_timeout_ms;       /* unanswered this long: the peer is dead */
    unsigned fast_retrans_dupacks;  /* SACKed later segments of a channel that make a hole lost */
    unsigned data_mtu;              /* data datagram size, 0 = from the path */
    unsigned cmd_mtu;               /* command-channel datagram size */
    unsigned inline_max;            /* messages up to this size are copied */
    unsigned rx_batch;              /* datagrams per recvmmsg */
    unsigned tx_batch;              /* datagrams per sendmmsg */
    unsigned sock_buf;              /* socket send and receive buffer bytes */
    bool udp_offload;               /* use UDP GSO and GRO where the kernel has them */
    bool stats;                     /* print counters at finalize */
    int timestamp;                  /* rttcc_timestamp */
    unsigned timestamp_interval_us; /* least spacing of kernel/NIC-stamped sends per peer, 0 = auto */
    int ptp_enable;                 /* rttcc_ptp_enable */
    bool ptp_require_sync;          /* refuse to run on an unsynchronised clock */
    char *ptp_clock_device;         /* PTP hardware clock, e.g. /dev/ptp0 */
    unsigned ptp_max_offset;        /* largest tolerated clock error, ns */
    int cc;                         /* rttcc_cc */
    int cc_delay;                   /* rttcc_cc_delay: the delay congestion control acts on */
    unsigned initial_cwnd;          /* congestion window at start, segments */
    unsigned max_cwnd;              /* congestion window ceiling, segments */
    unsigned timely_tlow_us;        /* TIMELY: below this RTT, always increase */
    unsigned timely_thigh_us;       /* TIMELY: above this RTT, always decrease */
    double timely_add_step;         /* TIMELY: additive increase, segments per RTT */
    double timely_beta;             /* TIMELY: multiplicative decrease factor */
    double timely_ewma;             /* TIMELY: EWMA gain of the RTT difference */
    unsigned timely_hai_count;      /* TIMELY: negative gradients in a row before HAI */
    unsigned swift_target_us;       /* Swift: base target delay */
    unsigned swift_fs_range_us;     /* Swift: flow-scaling range added to the target */
    double swift_fs_min_cwnd;       /* Swift: window where flow scaling is largest */
    double swift_fs_max_cwnd;       /* Swift: window where flow scaling is zero */
    double swift_ai;                /* Swift: additive increase, segments per RTT */
    double swift_beta;              /* Swift: multiplicative decrease gain */
    double swift_max_mdf;           /* Swift: largest decrease per RTT (fraction) */
    bool probe_enable;              /* send RTT probes */
    unsigned probe_interval;        /* between probe rounds, microseconds */
    unsigned probe_msg_size;        /* probe datagram payload, bytes */
    int probe_strategy;             /* rttcc_probe_strategy */
    unsigned probe_startup_delay;   /* before the first probe, milliseconds */
    unsigned probe_max_rate;        /* most probes per second to one peer */
    int auth;                       /* rttcc_auth: what each datagram's MAC covers */
    unsigned reassembly_max_mb;     /* most memory held by messages arriving in chunks, MiB */
    bool agent;                     /* liveness agent: answer peers while the application is away from MPI */
    unsigned agent_idle_ms;         /* the agent steps in after this long without progress */
    char *rtt_dump;                 /* write the RTT table at finalize: PATH.<rank>.{csv,json} */
    unsigned fault_drop;            /* test only: drop per million datagrams sent */
    unsigned fault_dup;             /* test only: duplicate per million */
    unsigned fault_reorder;         /* test only: reorder per million */
    unsigned fault_truncate;        /* test only: truncate per million */
    unsigned fault_seed;            /* test only: seed of the fault generator */
    /* Set by the caller, not by users: */
    bool thread_safe;               /* lock engine state (MPI_THREAD_MULTIPLE) */
    uint32_t job_key;               /* per-job random key carried in every header */
    uint32_t self;                  /* this process's index among its peers */
    uint32_t max_message;           /* largest message the caller sends, bytes */
    const char *param_prefix;       /* how error texts name parameters: "mtl_rttcc_"; NULL = "btl_rttcc_" */
} rttcc_config_t;

typedef enum rttcc_param_type {
    RTTCC_PARAM_UINT,
    RTTCC_PARAM_BOOL,
    RTTCC_PARAM_STRING,
    RTTCC_PARAM_ENUM,
    RTTCC_PARAM_DOUBLE
} rttcc_param_type_t;

typedef struct rttcc_param {
    const char *name;        /* MCA name without the component's prefix (btl_rttcc_, mtl_rttcc_) */
    const char *help;
    rttcc_param_type_t type;
    int info_level;          /* 1..9, as OPAL_INFO_LVL_* */
    const char *enum_values; /* "name=value,..." for RTTCC_PARAM_ENUM */
    size_t offset;           /* of the field in rttcc_config_t */
} rttcc_param_t;

void rttcc_config_defaults(rttcc_config_t *config);
const rttcc_param_t *rttcc_config_params(size_t *count);

/* Checks a config; on error writes the reason (naming parameters with
 * config->param_prefix) and returns false. */
bool rttcc_config_check(const rttcc_config_t *config, char *err, size_t errlen);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
