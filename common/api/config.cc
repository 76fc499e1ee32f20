// Defaults, help text and validation of every engine tunable.
#include "rttcc/config.h"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <string>

#include "api/param_names.h"

namespace {

constexpr bool is_pow2(unsigned v) { return v != 0 && (v & (v - 1)) == 0; }

#define RTTCC_FIELD(f) offsetof(rttcc_config_t, f)

const rttcc_param_t kParams[] = {
    {"wire",
     "Datagram wire: auto (udp), udp (Linux UDP sockets), ofi (libfabric FI_EP_DGRAM; "
     "the provider is libfabric's choice unless RTTCC_OFI_PROVIDER names one)",
     RTTCC_PARAM_ENUM, 1, "auto=0,udp=1,ofi=2", RTTCC_FIELD(wire)},
    {"if_include",
     "Comma-separated interface names or CIDR subnets to use (default: every up interface "
     "but loopback, or loopback when nothing else is up); mutually exclusive with if_exclude",
     RTTCC_PARAM_STRING, 1, nullptr, RTTCC_FIELD(if_include)},
    {"if_exclude", "Comma-separated interface names or CIDR subnets never to use",
     RTTCC_PARAM_STRING, 1, nullptr, RTTCC_FIELD(if_exclude)},
    {"window", "Send window per peer, in segments (power of two, 64..65536)", RTTCC_PARAM_UINT, 4,
     nullptr, RTTCC_FIELD(window)},
    {"send_credits", "Data segments in flight per peer (bounded by window)", RTTCC_PARAM_UINT, 4,
     nullptr, RTTCC_FIELD(send_credits)},
    {"ack_delay_us", "Delay before a standalone ACK when no data carries it, microseconds",
     RTTCC_PARAM_UINT, 5, nullptr, RTTCC_FIELD(ack_delay_us)},
    {"ack_every", "Send an ACK at once after this many segments arrived unACKed",
     RTTCC_PARAM_UINT, 5, nullptr, RTTCC_FIELD(ack_every)},
    {"retrans_timeout_us",
     "Retransmission timeout with rto_mode=fixed, and before the first RTT sample with "
     "rto_mode=rtt, microseconds (doubles on each retry)",
     RTTCC_PARAM_UINT, 5, nullptr, RTTCC_FIELD(retrans_timeout_us)},
    {"rto_mode",
     "Retransmission timeout: rtt (per peer, SRTT + max(G, 4*RTTVAR) from the RTT samples, "
     "RFC 6298) or fixed (retrans_timeout_us)",
     RTTCC_PARAM_ENUM, 5, "fixed=0,rtt=1", RTTCC_FIELD(rto_mode)},
    {"min_rto_us", "Floor of the RTT-derived retransmission timeout, microseconds",
     RTTCC_PARAM_UINT, 5, nullptr, RTTCC_FIELD(min_rto_us)},
    {"rtt_alpha", "SRTT gain of the RTT estimator (RFC 6298: 0.125)", RTTCC_PARAM_DOUBLE, 6, nullptr,
     RTTCC_FIELD(rtt_alpha)},
    {"rtt_beta", "RTTVAR gain of the RTT estimator (RFC 6298: 0.25)", RTTCC_PARAM_DOUBLE, 6, nullptr,
     RTTCC_FIELD(rtt_beta)},
    {"max_rto_us", "Ceiling of the backed-off retransmission timeout, microseconds",
     RTTCC_PARAM_UINT, 5, nullptr, RTTCC_FIELD(max_rto_us)},
    {"peer_timeout_ms",
     "A peer that acknowledges nothing for this long, despite retransmissions, is declared "
     "dead and the job gets an error, milliseconds",
     RTTCC_PARAM_UINT, 4, nullptr, RTTCC_FIELD(peer_timeout_ms)},
    {"fast_retrans_dupacks",
     "Fast retransmit: a segment is resent as lost once a segment of its channel sent this many sequence "
     "numbers after it has been selectively ACKed (TCP's duplicate-ACK threshold; 0 = resend on timeout only)",
     RTTCC_PARAM_UINT, 5, nullptr, RTTCC_FIELD(fast_retrans_dupacks)},
    {"data_mtu",
     "Data-channel datagram size in bytes including the rttcc header (0 = from the path: "
     "65000 between processes of one host, the interface MTU otherwise)",
     RTTCC_PARAM_UINT, 4, nullptr, RTTCC_FIELD(data_mtu)},
    {"cmd_mtu", "Command-channel datagram size in bytes (ACKs and tiny messages)",
     RTTCC_PARAM_UINT, 5, nullptr, RTTCC_FIELD(cmd_mtu)},
    {"inline_max", "Messages up to this many bytes are copied and complete at once",
     RTTCC_PARAM_UINT, 5, nullptr, RTTCC_FIELD(inline_max)},
    {"rx_batch", "Datagrams received per recvmmsg call", RTTCC_PARAM_UINT, 6, nullptr,
     RTTCC_FIELD(rx_batch)},
    {"tx_batch", "Datagrams sent per sendmmsg call", RTTCC_PARAM_UINT, 6, nullptr,
     RTTCC_FIELD(tx_batch)},
    {"sock_buf", "Socket send and receive buffer size, bytes (forced past rmem_max when root)",
     RTTCC_PARAM_UINT, 5, nullptr, RTTCC_FIELD(sock_buf)},
    {"udp_offload",
     "Use UDP segmentation offload (GSO) when sending and receive offload (GRO) when "
     "receiving, where the kernel has them",
     RTTCC_PARAM_BOOL, 5, nullptr, RTTCC_FIELD(udp_offload)},
    {"stats", "Print this process's counters at finalize (one rttcc-stats line)",
     RTTCC_PARAM_BOOL, 3, nullptr, RTTCC_FIELD(stats)},
    {"timestamp",
     "Where RTT timestamps come from: auto (the best that works: nic, then kernel, then user), "
     "user (the engine's monotonic clock at post and completion), kernel (SO_TIMESTAMPING "
     "software stamps), nic (SO_TIMESTAMPING hardware stamps of a PTP-capable NIC)",
     RTTCC_PARAM_ENUM, 4, "auto=0,user=1,kernel=2,nic=3", RTTCC_FIELD(timestamp)},
    {"timestamp_interval_us",
     "Least time between two kernel- or NIC-stamped transmissions to one peer, microseconds "
     "(each stamp costs a read of the socket's error queue; 0 = auto: 100 with congestion "
     "control, which lives on samples, 1000 without)",
     RTTCC_PARAM_UINT, 6, nullptr, RTTCC_FIELD(timestamp_interval_us)},
    {"ptp_enable",
     "Clock domain for one-way delays: yes (a PTP hardware clock, ptp_clock_device, is "
     "required), no (CLOCK_REALTIME; peers' offsets estimated from probe and ACK exchanges "
     "unless adjtimex says the clock is synchronised), auto (the PTP clock when it opens)",
     RTTCC_PARAM_ENUM, 4, "no=0,yes=1,auto=2", RTTCC_FIELD(ptp_enable)},
    {"ptp_require_sync",
     "Refuse to start unless the clock is synchronised (adjtimex: not STA_UNSYNC) and its "
     "error is within ptp_max_offset",
     RTTCC_PARAM_BOOL, 4, nullptr, RTTCC_FIELD(ptp_require_sync)},
    {"ptp_clock_device", "PTP hardware clock device", RTTCC_PARAM_STRING, 4, nullptr,
     RTTCC_FIELD(ptp_clock_device)},
    {"ptp_max_offset", "Largest tolerated clock error with ptp_require_sync, nanoseconds",
     RTTCC_PARAM_UINT, 5, nullptr, RTTCC_FIELD(ptp_max_offset)},
    {"cc",
     "Congestion control per peer, limiting data segments in flight below send_credits: "
     "none (only the credits), aimd (the default: slow start; halve when a sample exceeds "
     "SRTT + 4*RTTVAR or SRTT stands more than max(base RTT, 3*RTTVAR) above the base RTT), "
     "timely (RTT gradient), swift (target delay with flow scaling; set swift_target_us to a "
     "few frames' serialisation on slow links)",
     RTTCC_PARAM_ENUM, 3, "none=0,aimd=1,timely=2,swift=3", RTTCC_FIELD(cc)},
    {"cc_delay",
     "The delay congestion control acts on: rtt (each round-trip sample), or forward (the "
     "default: the round trip less the queueing its ACK met on the way back, from one-way "
     "delays, so that traffic towards this process does not slow its sends; the round trip "
     "while no one-way delay is known)",
     RTTCC_PARAM_ENUM, 5, "rtt=0,forward=1", RTTCC_FIELD(cc_delay)},
    {"initial_cwnd", "Congestion window at start, segments", RTTCC_PARAM_UINT, 5,
     nullptr, RTTCC_FIELD(initial_cwnd)},
    {"max_cwnd", "Largest congestion window, segments (also bounded by send_credits)",
     RTTCC_PARAM_UINT, 5, nullptr, RTTCC_FIELD(max_cwnd)},
    {"timely_tlow_us", "TIMELY: below this RTT the window always grows, microseconds",
     RTTCC_PARAM_UINT, 6, nullptr, RTTCC_FIELD(timely_tlow_us)},
    {"timely_thigh_us", "TIMELY: above this RTT the window always shrinks, microseconds",
     RTTCC_PARAM_UINT, 6, nullptr, RTTCC_FIELD(timely_thigh_us)},
    {"timely_add_step", "TIMELY: additive increase, segments per RTT", RTTCC_PARAM_DOUBLE, 6,
     nullptr, RTTCC_FIELD(timely_add_step)},
    {"timely_beta", "TIMELY: multiplicative decrease factor (0..1)", RTTCC_PARAM_DOUBLE, 6,
     nullptr, RTTCC_FIELD(timely_beta)},
    {"timely_ewma", "TIMELY: EWMA gain of the RTT difference (0..1)", RTTCC_PARAM_DOUBLE, 6,
     nullptr, RTTCC_FIELD(timely_ewma)},
    {"timely_hai_count", "TIMELY: negative gradients in a row before hyper-active increase",
     RTTCC_PARAM_UINT, 6, nullptr, RTTCC_FIELD(timely_hai_count)},
    {"swift_target_us", "Swift: base target delay, microseconds", RTTCC_PARAM_UINT, 6, nullptr,
     RTTCC_FIELD(swift_target_us)},
    {"swift_fs_range_us", "Swift: flow-scaling range added to the target, microseconds",
     RTTCC_PARAM_UINT, 6, nullptr, RTTCC_FIELD(swift_fs_range_us)},
    {"swift_fs_min_cwnd", "Swift: window (segments) at which flow scaling adds its whole range",
     RTTCC_PARAM_DOUBLE, 6, nullptr, RTTCC_FIELD(swift_fs_min_cwnd)},
    {"swift_fs_max_cwnd", "Swift: window (segments) at which flow scaling adds nothing",
     RTTCC_PARAM_DOUBLE, 6, nullptr, RTTCC_FIELD(swift_fs_max_cwnd)},
    {"swift_ai", "Swift: additive increase, segments per RTT", RTTCC_PARAM_DOUBLE, 6, nullptr,
     RTTCC_FIELD(swift_ai)},
    {"swift_beta", "Swift: multiplicative decrease gain (0..1)", RTTCC_PARAM_DOUBLE, 6, nullptr,
     RTTCC_FIELD(swift_beta)},
    {"swift_max_mdf", "Swift: largest multiplicative decrease in one RTT (0..1)",
     RTTCC_PARAM_DOUBLE, 6, nullptr, RTTCC_FIELD(swift_max_mdf)},
    {"probe_enable", "Send RTT probes to peers on the command channel", RTTCC_PARAM_BOOL, 3,
     nullptr, RTTCC_FIELD(probe_enable)},
    {"probe_interval", "Time between probe rounds, microseconds", RTTCC_PARAM_UINT, 4, nullptr,
     RTTCC_FIELD(probe_interval)},
    {"probe_msg_size", "Payload bytes of a probe (0..cmd_mtu - 72)", RTTCC_PARAM_UINT, 5,
     nullptr, RTTCC_FIELD(probe_msg_size)},
    {"probe_strategy",
     "Which peers a probe round visits: round_robin (the next peer), all_pairs (every peer), "
     "random (one at random), adaptive (the peer whose row is stalest or most variable)",
     RTTCC_PARAM_ENUM, 4, "round_robin=0,all_pairs=1,random=2,adaptive=3",
     RTTCC_FIELD(probe_strategy)},
    {"probe_startup_delay", "Time from start to the first probe, milliseconds", RTTCC_PARAM_UINT,
     5, nullptr, RTTCC_FIELD(probe_startup_delay)},
    {"probe_max_rate", "Most probes per second to one peer", RTTCC_PARAM_UINT, 5, nullptr,
     RTTCC_FIELD(probe_max_rate)},
    {"auth",
     "Datagram authentication: every datagram carries a 64-bit MAC keyed by its sender's random "
     "128-bit secret, which travels only in the modex, so datagrams nobody in the job sent are dropped "
     "(and counted: drop_auth). header (SipHash-2-4 over the header: sequence numbers, ACKs, SACK "
     "bounds, ids, stamps, put addresses), full (keyed BLAKE2b over the header and the payload), none. "
     "Every process of a job must use the same setting",
     RTTCC_PARAM_ENUM, 4, "none=0,header=1,full=2", RTTCC_FIELD(auth)},
    {"reassembly_max_mb",
     "Most memory held by messages that arrive in chunks, MiB (each takes a buffer of about its "
     "own length): beyond it a new message is not acknowledged until others complete, and its "
     "sender resends it. At least the largest message",
     RTTCC_PARAM_UINT, 5, nullptr, RTTCC_FIELD(reassembly_max_mb)},
    {"agent",
     "Liveness agent: a thread of the engine's own that answers peers (ACKs, keep-alives, probes) "
     "while the application computes outside MPI, so a busy process is never declared dead. It "
     "delivers nothing then (data waits for the next MPI call, and is resent at once), except under "
     "MPI_THREAD_MULTIPLE, where it progresses fully. 0 = nobody answers for a process outside MPI, "
     "and a peer waiting on it declares it dead after peer_timeout_ms",
     RTTCC_PARAM_BOOL, 5, nullptr, RTTCC_FIELD(agent)},
    {"agent_idle_ms",
     "The liveness agent steps in once the engine has gone this long without being progressed, "
     "milliseconds (it sleeps until then)",
     RTTCC_PARAM_UINT, 6, nullptr, RTTCC_FIELD(agent_idle_ms)},
    {"rtt_dump",
     "At finalize each process writes its RTT table to PATH.<rank>.csv and PATH.<rank>.json "
     "(tools/rtt_heatmap draws them)",
     RTTCC_PARAM_STRING, 3, nullptr, RTTCC_FIELD(rtt_dump)},
    {"fault_drop", "Testing only: drop this many sent datagrams per million", RTTCC_PARAM_UINT, 9,
     nullptr, RTTCC_FIELD(fault_drop)},
    {"fault_dup", "Testing only: send this many datagrams per million twice", RTTCC_PARAM_UINT, 9,
     nullptr, RTTCC_FIELD(fault_dup)},
    {"fault_reorder", "Testing only: hold back this many datagrams per million behind the next",
     RTTCC_PARAM_UINT, 9, nullptr, RTTCC_FIELD(fault_reorder)},
    {"fault_truncate", "Testing only: cut this many datagrams per million short",
     RTTCC_PARAM_UINT, 9, nullptr, RTTCC_FIELD(fault_truncate)},
    {"fault_seed", "Testing only: seed of the fault generator (0 = from the process id)",
     RTTCC_PARAM_UINT, 9, nullptr, RTTCC_FIELD(fault_seed)},
};

}  // namespace

extern "C" void rttcc_config_defaults(rttcc_config_t *c) {
    *c = rttcc_config_t{};
    c->wire = RTTCC_WIRE_AUTO;
    c->window = 4096;
    c->send_credits = 128;
    c->ack_delay_us = 50;
    c->ack_every = 32;
    c->retrans_timeout_us = 10000;
    c->rto_mode = RTTCC_RTO_RTT;
    c->min_rto_us = 5000;
    c->rtt_alpha = 0.125;
    c->rtt_beta = 0.25;
    c->max_rto_us = 1000000;
    c->peer_timeout_ms = 15000;
    c->fast_retrans_dupacks = 3;
    c->data_mtu = 0;
    c->cmd_mtu = 1024;
    c->inline_max = 8192 + 64;  // 8 KiB of user data and a PML header are copied: no wait for an ACK
    c->rx_batch = 32;
    c->tx_batch = 32;
    c->sock_buf = 32u << 20;
    c->udp_offload = true;
    c->timestamp = RTTCC_TS_AUTO;
    c->timestamp_interval_us = 0;
    c->ptp_enable = RTTCC_PTP_AUTO;
    c->ptp_clock_device = const_cast<char *>("/dev/ptp0");  // the MCA layer copies it
    c->ptp_max_offset = 1000;
    c->cc = RTTCC_CC_AIMD;
    c->cc_delay = RTTCC_CC_DELAY_FORWARD;
    c->initial_cwnd = 4;
    c->max_cwnd = 128;
    c->timely_tlow_us = 50;
    c->timely_thigh_us = 500;
    c->timely_add_step = 1.0;
    c->timely_beta = 0.8;
    c->timely_ewma = 0.875;
    c->timely_hai_count = 5;
    c->swift_target_us = 50;
    c->swift_fs_range_us = 100;
    c->swift_fs_min_cwnd = 0.1;
    c->swift_fs_max_cwnd = 128;
    c->swift_ai = 1.0;
    c->swift_beta = 0.8;
    c->swift_max_mdf = 0.5;
    c->probe_enable = false;
    c->probe_interval = 100000;
    c->probe_msg_size = 64;
    c->probe_strategy = RTTCC_PROBE_ROUND_ROBIN;
    c->probe_startup_delay = 500;
    c->probe_max_rate = 100;
    c->auth = RTTCC_AUTH_HEADER;
    c->reassembly_max_mb = 256;
    c->agent = true;
    c->agent_idle_ms = 50;
    c->max_message = 4u << 20;
}

extern "C" const rttcc_param_t *rttcc_config_params(size_t *count) {
    *count = sizeof kParams / sizeof kParams[0];
    return kParams;
}

extern "C" bool rttcc_config_check(const rttcc_config_t *c, char *err, size_t errlen) {
    auto fail = [&](const char *what) {
        std::snprintf(err, errlen, "%s", rttcc::name_params(what, rttcc::param_prefix(*c)).c_str());
        return false;
    };
    if (!is_pow2(c->window) || c->window < 64 || c->window > 65536)
        return fail("{window} must be a power of two from 64 to 65536");
    if (c->send_credits == 0 || c->send_credits > c->window)
        return fail("{send_credits} must be between 1 and {window}");
    if (c->data_mtu != 0 && (c->data_mtu < 512 || c->data_mtu > 65507))
        return fail("{data_mtu} must be 0 (auto) or 512..65507");
    if (c->cmd_mtu < 256 || c->cmd_mtu > 9000)
        return fail("{cmd_mtu} must be 256..9000");
    if (c->inline_max > 65536) return fail("{inline_max} must be at most 65536");
    if (c->rx_batch == 0 || c->rx_batch > 1024 || c->tx_batch == 0 || c->tx_batch > 1024)
        return fail("{rx_batch} and {tx_batch} must be 1..1024");
    if (c->retrans_timeout_us == 0 || c->max_rto_us < c->retrans_timeout_us)
        return fail("{retrans_timeout_us} must be > 0 and <= {max_rto_us}");
    if (c->max_message == 0 || c->max_message > (1u << 30))
        return fail("the largest message must be 1 byte to 1 GiB");
    if (c->peer_timeout_ms == 0) return fail("{peer_timeout_ms} must be > 0");
    if ((uint64_t{c->reassembly_max_mb} << 20) < c->max_message)
        return fail("{reassembly_max_mb} must hold at least the largest message");
    if (c->agent && (c->agent_idle_ms == 0 || 4ull * c->agent_idle_ms > c->peer_timeout_ms))
        return fail("{agent_idle_ms} must be > 0 and at most a quarter of {peer_timeout_ms}");
    if (c->min_rto_us == 0 || c->min_rto_us > c->max_rto_us)
        return fail("{min_rto_us} must be > 0 and <= {max_rto_us}");
    if (!(c->rtt_alpha > 0 && c->rtt_alpha < 1 && c->rtt_beta > 0 && c->rtt_beta < 1))
        return fail("{rtt_alpha} and {rtt_beta} must be between 0 and 1");
    if (c->initial_cwnd == 0 || c->max_cwnd == 0 || c->initial_cwnd > c->max_cwnd)
        return fail("{initial_cwnd} must be between 1 and {max_cwnd}");
    if (c->timely_tlow_us >= c->timely_thigh_us)
        return fail("{timely_tlow_us} must be below {timely_thigh_us}");
    if (!(c->timely_beta > 0 && c->timely_beta < 1 && c->timely_ewma > 0 && c->timely_ewma <= 1 &&
          c->swift_beta > 0 && c->swift_beta < 1 && c->swift_max_mdf > 0 && c->swift_max_mdf < 1))
        return fail("{timely_beta}, {timely_ewma}, {swift_beta} and {swift_max_mdf} must be "
                    "between 0 and 1");
    if (!(c->timely_add_step > 0 && c->swift_ai > 0 && c->swift_fs_min_cwnd > 0 &&
          c->swift_fs_min_cwnd < c->swift_fs_max_cwnd))
        return fail("{timely_add_step} and {swift_ai} must be > 0, and "
                    "0 < {swift_fs_min_cwnd} < {swift_fs_max_cwnd}");
    if (c->probe_enable && (c->probe_interval == 0 || c->probe_max_rate == 0))
        return fail("{probe_interval} and {probe_max_rate} must be > 0");
    if (c->probe_msg_size + 72 > c->cmd_mtu)
        return fail("{probe_msg_size} must leave room for the 72-byte header in "
                    "{cmd_mtu}");
    if (c->if_include && *c->if_include && c->if_exclude && *c->if_exclude)
        return fail("{if_include} and {if_exclude} are mutually exclusive");
    return true;
}

namespace rttcc {

const char *param_prefix(const rttcc_config_t &c) { return c.param_prefix ? c.param_prefix : "btl_rttcc_"; }

std::string name_params(const std::string &text, const char *prefix) {
    std::string out;
    out.reserve(text.size() + 64);
    size_t at = 0;
    for (size_t open; (open = text.find('{', at)) != std::string::npos;) {
        const size_t close = text.find('}', open);
        if (close == std::string::npos) break;
        const std::string name = text.substr(open + 1, close - open - 1);
        const bool known = std::any_of(std::begin(kParams), std::end(kParams),
                                       [&](const rttcc_param_t &p) { return name == p.name; });
        out.append(text, at, open - at);
        out += known ? prefix + name : text.substr(open, close - open + 1);
        at = close + 1;
    }
    return out.append(text, at, std::string::npos);
}

}  // namespace rttcc
