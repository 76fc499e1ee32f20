// Everything the engine keeps about one peer: its address, both halves of
// the sequence space, the ACK it owes, queued messages and reassembly.
#pragma once
#include <cstdint>

#include "clock.h"
#include "intrusive_list.h"
#include "reassembly.h"
#include "recv_window.h"
#include "rtt_estimator.h"
#include "rttcc_engine.h"
#include "segment.h"
#include "send_window.h"
#include "wire.h"

namespace rttcc {

struct Peer {
    // Both sides start 1024 below the 2^32 wrap: every run crosses it early,
    // so wraparound is exercised all the time rather than after 4 billion segments.
    static constexpr seq_t kFirstSeq = 0u - 1024u;

    Peer(uint32_t index, uint32_t window, const RttEstimator::Params &rtt_params)
        : id(index), tx(window, kFirstSeq), rtt(rtt_params), rx(window, kFirstSeq) {}

    uint32_t id;                       // caller's index of this peer
    WireHandle addr[kChannels] = {};   // resolved address per channel
    uint32_t seg_payload = 0;          // payload bytes per data-channel segment
    bool dead = false;                 // declared dead: every send fails

    // Sending.
    SendWindow tx;                                // segments in flight
    uint32_t data_in_flight = 0;                  // data-channel segments in flight (credits used)
    List<TxMessage, &TxMessage::link> pending;    // messages not yet fully cut
    Link sends_link;                              // in the engine's peers-with-sends queue
    uint32_t next_msg_id = 1;                     // id for the next cut message
    uint32_t dup_acks = 0;                        // duplicate ACKs in a row
    RttEstimator rtt;                             // round trips to this peer, and the RTO
    uint32_t last_echo = 0;                       // transmission id of the latest RTT sample

    // Receiving.
    RecvWindow rx;                   // arrivals and the cumulative ACK
    Reassembly reassembly;           // messages arriving in chunks
    Link ack_link;                   // in the engine's delayed-ACK queue
    bool ack_owed = false;           // an ACK must go out
    nanos ack_owed_since = 0;        // when it became owed
    uint32_t echo_tx_id = 0;         // tx_id of the latest new segment
    seq_t echo_seq = 0;              // its sequence number
    nanos echo_arrival = 0;          // when that segment arrived
    uint32_t unacked_arrivals = 0;   // new segments since our last ACK

    rttcc_stats_t stats = {};        // this peer's counters
};

}  // namespace rttcc
