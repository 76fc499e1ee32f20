// Everything the engine keeps about one peer: its address, both halves of
// the sequence space, the ACK it owes, queued messages and reassembly.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "clock/clock.h"
#include "cc/congestion.h"
#include "clock/offset_estimator.h"
#include "cc/windowed_min.h"
#include "util/intrusive_list.h"
#include "engine/mac.h"
#include "engine/reassembly.h"
#include "engine/regions.h"
#include "engine/request_order.h"
#include "engine/rma_batch.h"
#include "engine/recv_window.h"
#include "cc/rtt_estimator.h"
#include "engine/rtt_table.h"
#include "rttcc/engine.h"
#include "engine/segment.h"
#include "engine/send_window.h"
#include "wire/wire.h"

namespace rttcc {

// One peer's RTT probes (engine_probe.cc).
struct ProbeState {
    uint32_t next_id = 1;                // id of the next probe (never 0)
    uint32_t outstanding = 0;            // id of the probe awaiting its reply, 0 = none
    nanos sent = 0;                      // when it was posted (engine clock)
    nanos stamp = 0;                     // its kernel/NIC transmit stamp, 0 until reported
    TsSource stamp_source = TsSource::kNone;  // what took `stamp`
    nanos next_allowed = 0;              // probe_max_rate: no probe to this peer before this
    uint64_t samples = 0;                // RTT samples taken from replies
};

// What the peer's row of the RTT table shows beyond the estimator (engine_rtt.cc).
struct PathState {
    nanos last_sample = 0;               // when the latest sample was taken
    TsSource last_source = TsSource::kNone;  // stamps of the latest sample
    bool last_was_probe = false;         // the latest sample came from a probe
    uint64_t best_samples = 0;           // samples taken with the wire's own stamps
    bool clocked = false;                // an exchange gave the fields below
    int64_t owd_fwd = 0, owd_rev = 0;    // latest one-way delays to and from the peer
    static constexpr int64_t kOneWaySpan = 1000000000;  // the floor below: the least of 1-2 s
    WindowedMin rev_floor{kOneWaySpan};  // one-way time from the peer with no queue
    nanos rev_queue = 0;                 // the latest datagram's one-way time above that floor
    int64_t offset = 0;                  // peer's clock minus ours
    uint64_t offset_bound = 0;           // +- error of `offset`
    OffsetEstimator offsets{16, 2000000000};  // NTP-style filter: best of 16 exchanges within 2 s
    nanos next_stamp = 0;                // earliest post of the next stamped transmission
};

// A transmission's retransmission and tail-loss probe timeouts (Engine::timeouts).
struct Timeouts {
    nanos rto, probe;
};

struct Peer {
    // Each direction starts at its sender's initial_seq (mac.h): random to
    // anyone without the sender's key.
    Peer(uint32_t index, uint32_t window, const RttEstimator::Params &rtt_params, seq_t tx_first, seq_t rx_first)
        : id(index),
          tx(window, tx_first),
          sacked_high{tx_first - 1, tx_first - 1},
          loss_scan{tx_first, tx_first},
          rtt(rtt_params),
          response(rtt_params),
          cc_rtt(rtt_params),
          rx(window, rx_first),
          reassembly(window),
          puts(window),
          requests(window) {}

    uint32_t id;                       // caller's index of this peer
    uint32_t keepalives = 0;           // liveness probes sent to it since last_heard (engine_probe.cc)
    WireHandle addr[kChannels] = {};   // resolved address per channel
    SecretKey key{};                   // its secret: what we send it carries a MAC by it (mac.h)
    uint32_t seg_payload = 0;          // payload bytes per data-channel segment
    bool dead = false;                 // declared dead: every send fails
    uint8_t probe_shift = 0;           // tail-loss probes found spurious lately: their timeout doubles per one
    bool recovering = false;           // a timeout resent `una`; until una passes `recover` (at the end),
                                       //   each ACK that moves the window resends the new una
                                       //   at once (NewReno's partial ACKs: one hole per RTT)
    bool half_ask_out = false;         // a segment in flight asked at half the cap (TxSegment::half_ask)
    nanos last_heard = 0;              // when its latest valid datagram arrived (0: never)
    nanos busy_heard = 0;              // when it last said BUSY: its application was away, not dead
    nanos last_sacked[kChannels] = {}; // when a SACK last showed a segment of that channel arrived
    nanos busy_sent = 0;               // when we last told it BUSY (at most one per ms)
    uint32_t kept = 0;                 // its data segments a quiet pass kept (Engine::kept_)
    Link away_link;                    // in the engine's list of peers owed a resume ACK
    uint32_t failures = 0;             // our datagrams to it that failed the same way in a row (Wire::failures)
    int failure_errno = 0;             // how: ECONNREFUSED (port closed) or a send's errno
    nanos first_failure = 0;           // when the first of them did
    nanos last_advance = 0;            // when an ACK last moved its send window (RTO restarts from it)
    nanos recovery_start = 0;          // recovering: the timeout's time (una sent again since is not resent)

    // Sending.
    SendWindow tx;                                // segments in flight
    uint32_t data_in_flight = 0;                  // data-channel segments in flight (credits used)
    uint32_t next_request = 0;                    // the number (rseq) of our next RMA request to it
    // Messages not yet fully cut, per channel: a command-channel message
    // (a protocol's handshake, an RTR) never waits behind a data message
    // that is held by the credits; the receiver does not assume order.
    List<TxMessage, &TxMessage::link> pending[kChannels];
    bool has_pending() const { return !pending[kCmd].empty() || !pending[kData].empty(); }
    // Every message not yet complete (ACKed whole), in the order they came,
    // and the flushes waiting on them:
    //   outstanding: m(no 7) <-> m(no 9) <-> m(no 12)     (8, 10, 11 completed)
    //   flushes:     {upto 8} {upto 12}                   oldest first
    // A flush completes once the oldest outstanding message is younger than
    // it (its no > upto): {upto 8} waits for 7 only, {upto 12} for all three.
    List<TxMessage, &TxMessage::outstanding_link> outstanding;
    uint64_t next_message_no = 1;
    std::unique_ptr<RmaBatch> batch;              // posts to it not yet a request (made at the first post)
    struct Flush {
        uint64_t upto;  // the newest message it waits for
        void *cookie;   // the caller's, for on_send_done
        uint8_t tag;    // whose on_send_done
    };
    std::vector<Flush> flushes;                   // oldest first
    Link sends_link;                              // in the engine's peers-with-sends queue
    uint32_t next_msg_id = 1;                     // id for the next cut message
    // Selective ACKs, per channel (engine_ack.cc): the newest segment SACKed,
    // and where the loss scan resumes.  Both are kept at or after una - 1
    // (so that modular comparisons with una stay valid).
    seq_t sacked_high[kChannels];
    seq_t loss_scan[kChannels];
    uint32_t last_echo = 0;                       // transmission id of the latest RTT sample
    // RACK-TLP (engine_rack.cc): per channel, the latest transmission known
    // to have arrived (its time, and its sequence number for ties); how long
    // the latest such news took.
    seq_t rack_seq[kChannels] = {};
    nanos rack_xmit[kChannels] = {};
    nanos rack_rtt = 0;
    TxSegment *tail[kChannels] = {};              // per channel, the latest transmission in flight: its tail-loss probe's
    RttEstimator rtt;                             // round trips to this peer (the table)
    RttEstimator response;                        // time until its ACKs arrive, holds included: the RTO
    RttEstimator cc_rtt;                          // the delay congestion control acts on (cc_delay)
    std::unique_ptr<CongestionControl> cc;        // congestion window; nullptr with cc = none
    RttRow *row = nullptr;                        // this peer's row of the engine's RTT table
    PathState path;                               // the rest of what the row shows
    ProbeState probe;                             // RTT probes to this peer
    // The timeouts of a segment first sent at `at` (Engine::timeouts), kept
    // for the pass's other segments to the peer: valid while the estimators
    // and the probe backoff they came from stand.
    struct FreshTimeouts {
        nanos at = kNever;
        uint64_t rtt_samples = 0, response_samples = 0;
        uint8_t probe_shift = 0;
        Timeouts timeouts{};
    } fresh_timeouts;

    // Receiving.
    RecvWindow rx;                   // arrivals and the cumulative ACK
    Reassembly reassembly;           // messages arriving in chunks
    PutArrivals puts;                // one-sided puts landing in what we granted it
    RequestOrder requests;           // its RMA requests: the one due, those held until then
    Link ack_link;                   // in the engine's delayed-ACK queue
    Link ack_soon_link;              // in the engine's ACKs owed by the end of this progress pass
    bool ack_owed = false;           // an ACK must go out
    bool ack_in_burst = false;       // by the end of the receive burst (in the engine's acks_burst_)
    bool ack_asked = false;          // it flushes: ACK at once once everything through ack_asked_seq is in
    bool echo_timed = false;         // echo_tx_id is a timed transmission: keep it until ACKed
    seq_t ack_asked_seq = 0;         // the last segment it had sent when it asked
    nanos ack_owed_since = 0;        // when it became owed
    uint32_t echo_tx_id = 0;         // tx_id to echo: the latest new segment, or a timed one
    seq_t echo_seq = 0;              // its sequence number
    nanos echo_arrival = 0;          // when that segment arrived (kernel/NIC stamp if any)
    uint32_t unacked_arrivals = 0;   // new segments since our last ACK
    seq_t recover = 0;               // recovering (above): the end of the flight at the timeout (here: packs)

    rttcc_stats_t stats = {};        // this peer's counters
};

}  // namespace rttcc
