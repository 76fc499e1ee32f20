// What the sender keeps for a message (TxMessage) and for each of its
// segments in flight (TxSegment).  Both come from engine-wide pools.
#pragma once
#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "clock/clock.h"
#include "util/intrusive_list.h"
#include "util/seq.h"
#include "wire/wire.h"

namespace rttcc {

struct Peer;

// What a message is: plain data, copied in one piece (new_message copies a
// stack template into its pool slot: member by member, beside the links,
// that copy was 3% of the engine's instructions for an 8-byte message).
struct TxMessageData {
    uint64_t no = 0;         // its number among its peer's messages, from 1 (flushes count by it)
    void *cookie = nullptr;  // caller's completion cookie; nullptr when copied
    iovec iov[3] = {};       // the message bytes, in at most three pieces
    int iovcnt = 0;
    uint32_t len = 0;        // total bytes
    uint32_t cut = 0;        // bytes already cut into segments
    uint32_t in_flight = 0;  // segments sent and not yet ACKed
    uint32_t msg_id = 0;     // CHUNK/PUT header id (unique per peer)
    uint64_t put_addr = 0;   // a put: where its first byte lands (regions.h); 0 = a message
    uint8_t tag = 0;         // caller's tag
    uint8_t client_tag = 0;  // whose on_send_done: the tag's client (an RMA request's: its asker's)
    bool all_cut = false;    // the last segment has been made (a 0-byte message has one)
    bool ack_now = false;    // its last segment asks for an ACK at once (a flush waits for it)
    bool reply = false;      // an RMA reply (the target's): nobody waits for its ACK
    bool ordered = false;    // delivered behind everything sent before it (Engine::send_ordered)
    bool copy = false;       // its sender asked for a copy (rttcc_engine_put_copied)
    uint8_t *inline_buf = nullptr;  // an engine-owned copy of the message (Engine::take_copy)
    uint32_t stride = 0;     // the copy is laid out as datagrams, one per stride (Engine::copy_message); 0: contiguous
    uint32_t exposure = 0;   // a get's reply sent from the exposure itself: its key (revoke copies it first)
    // The engine's own bytes before the caller's, sent from here: the
    // header of an RMA request sent zero-copy (iov[0] points at it).
    static constexpr size_t kPrefixMax = 32;
    uint8_t prefix[kPrefixMax] = {};

    // Done when every segment was made and every one of them was ACKed.
    bool complete() const { return all_cut && in_flight == 0; }
};
static_assert(std::is_trivially_copyable_v<TxMessageData>, "a message's data is copied in one piece");

// One message the caller handed to the engine (usnic's "fragment"): its
// data and the lists it is in (a copy is in none: Link).
struct TxMessage : TxMessageData {
    Link link;               // in its peer's pending queue, or the free list
    Link outstanding_link;   // in its peer's outstanding list until it completes (flushes wait on it)
    Link exposure_link;      // in the engine's exposure_replies_ while sent from an exposure (below)
};

// What a segment's hotel deadline means when it passes (engine_rack.cc).
enum class Timer : uint8_t {
    kRto,      // the retransmission timeout
    kProbe,    // the tail-loss probe, if still the peer's latest transmission: no ACK for about two round trips
    kReorder,  // a segment sent after it arrived, and the reordering window has passed: lost
};

// Why a segment is on the resend list.
enum class Resend : uint8_t {
    kNone,     // not on it
    kTimeout,  // its retransmission timeout passed: lost, backed off
    kRefused,  // the wire was full: never left, not a retransmission
    kResumed,  // the peer's application came back (engine_agent.cc): not lost
    kFast,     // selective ACKs show it lost (detect_losses): no backoff (only timeouts back off)
    kProbe,    // a tail-loss probe: not known lost, no congestion signal
    kReorder,  // found lost by time (RACK): no backoff either
};

// One segment in flight: from its first transmission until it is ACKed.
//   states: in the hotel (timer running) -> on the resend list -> back in the
//   hotel after the resend -> freed on ACK.  Exactly one of those at a time,
//   except that a SACKed segment is in none: it arrived, and only waits for
//   the cumulative ACK to free it.
struct TxSegment {
    Link link;                 // hotel room or engine resend list
    Peer *peer = nullptr;      // destination
    TxMessage *msg = nullptr;  // parent message
    seq_t seq = 0;             // sequence number
    uint32_t offset = 0;       // first message byte carried
    uint32_t len = 0;          // payload bytes carried
    uint32_t tx_id = 0;        // id of the latest transmission (see transmission_id)
    nanos first_tx = 0;        // first transmission time
    nanos last_tx = 0;         // latest transmission time (engine clock, at post)
    nanos prev_tx = 0;         // the one before it, if resent (its echo still samples: ids are unique)
    nanos stamp = 0;           // its kernel/NIC transmit stamp once the wire reported it, else 0
    TsSource stamp_source = TsSource::kNone;  // what took `stamp`
    nanos deadline = 0;        // retransmission deadline while in the hotel
    uint16_t retries = 0;      // retransmissions so far
    uint16_t backoff = 0;      // RTO doublings: its timeouts (a resume resets them)
    bool cmd_channel = false;  // travels on the command channel
    bool in_hotel = false;     // checked into the hotel (else on the resend list, or nowhere)
    Timer timer = Timer::kRto; // what its deadline in the hotel is
    bool probed = false;       // its tail-loss probe went: the RTO rules it now
    Resend resend = Resend::kNone;  // why it is on the resend list
    bool sacked = false;       // a selective ACK says it arrived: no timer, no credit
    bool asked_ack = false;    // its latest transmission asked for an ACK at once (kFlagAckNow)
    bool half_ask = false;     // it asked because it half-filled the cap (Engine::asks_for_ack)

    Channel channel() const { return cmd_channel ? kCmd : kData; }
};

// Names one transmission of one segment: the low 16 bits of its sequence
// number and its transmission count.  Windows are at most 65536, so the
// sequence bits find the segment among those in flight, and a retransmission
// never reuses an id (Karn: an echo is never ambiguous).  Never 0.
inline uint32_t transmission_id(seq_t seq, uint16_t retries) {
    return (seq << 16) | ((retries + 1u) & 0xffffu);
}

}  // namespace rttcc
