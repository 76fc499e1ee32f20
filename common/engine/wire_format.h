// The whole rttcc wire format: one fixed header in front of every datagram.
//
// Byte order is the host's (x86-64 and aarch64 are little-endian); a peer of
// the other order fails the magic check and its datagrams are dropped as foreign.
#pragma once
#include <cstddef>
#include <cstdint>

#include "util/seq.h"

namespace rttcc {

// Packet types: one list gives the enum and the names.
#define RTTCC_PACKET_TYPES(X)                                                      \
    X(DATA, 1)  /* a whole message in one segment */                                \
    X(CHUNK, 2) /* one chunk of a message larger than a segment */                  \
    X(ACK, 3)   /* a standalone cumulative ACK (no sequence number of its own), */     \
                /* with a SACK bitmap as payload while the receiver has a gap */      \
    X(PROBE, 4) /* an RTT probe (unsequenced, command channel): seq = probe id */     \
    X(PROBE_REPLY, 5) /* its answer: seq = probe id, ack_delay_ns = hold time */     \
    X(PUT, 6) /* a chunk of a one-sided put: lands at put_addr (regions.h) */       \
    X(BUSY, 7) /* unsequenced (command channel): our application is away from MPI, */ \
               /* so the liveness agent turned data away; the ACK fields say what */  \
               /* was delivered.  Keeps the sender from declaring us dead. */

enum class PacketType : uint8_t {
#define RTTCC_PT_ENUM(name, value) name = value,
    RTTCC_PACKET_TYPES(RTTCC_PT_ENUM)
#undef RTTCC_PT_ENUM
};

inline const char *packet_type_name(PacketType t) {
    switch (t) {
#define RTTCC_PT_NAME(name, value) \
    case PacketType::name:         \
        return #name;
        RTTCC_PACKET_TYPES(RTTCC_PT_NAME)
#undef RTTCC_PT_NAME
    }
    return "unknown";
}

constexpr uint16_t kMagic = 0x5452;  // "RT"
constexpr uint8_t kVersion = 11;  // 2: ACKs carry SACK bitmaps; 3: BUSY, kFlagResume, the MAC; 4: by the receiver's key;
                                 // 5: RMA batches; 6: batch entries with replies (gets, fetching accumulates);
                                 // 7: 32-bit entry lengths, plain gets (kPlainGet); 8: the MAC covers
                                 // the header up to its field (64 bytes), not the header with it zeroed;
                                 // bytes past a header's payload are padding (UdpWire::group);
                                 // 9: kFlagOrdered; 10: ordered RMA requests (an unlock), LOCKED_BATCH;
                                 // 11: window keys (a dynamic window's requests name addresses)

// An ACK's payload, when there is one, is the selective ACK: 64-bit words,
// bit i (word i / 64, bit i % 64) set if segment ack + 1 + i has arrived.
//
//     ack (missing)   ack+1 ....................... ack+64  ack+65 ...
//        x            bit 0 of word 0 ............. bit 63  bit 0 of word 1
//
// At most kMaxSackWords words: arrivals further ahead are not reported.
constexpr uint32_t kMaxSackWords = 64;

enum HeaderFlags : uint8_t {
    kFlagAckValid = 1u << 0,  // `ack`, `echo_tx_id`, `ack_delay_ns` carry an ACK
    kFlagTimed = 1u << 1,     // the sender stamps this transmission: echo it in preference
    kFlagAckNow = 1u << 2,    // the sender waits for this segment's ACK: do not delay it
    kFlagResume = 1u << 3,    // ACK: we are back in MPI; resend at once what was turned away
    kFlagOrdered = 1u << 4,   // DATA: deliver only once every segment numbered before it has arrived
};

#pragma pack(push, 1)
struct PacketHeader {
    uint16_t magic;         // kMagic
    uint8_t version;        // kVersion
    uint8_t type;           // PacketType
    uint32_t job_key;       // per-job key: datagrams of other jobs are dropped
    uint8_t flags;          // HeaderFlags
    uint8_t tag;            // the caller's message tag (BTL active-message tag)
    uint16_t payload_len;   // bytes after the header
    uint32_t src;           // sender's process index
    seq_t seq;              // DATA, CHUNK: this segment's number; ACK: the segment that triggered it
    seq_t ack;              // cumulative ACK: every segment before `ack` arrived
    uint32_t tx_id;         // unique id of this transmission (Karn: never reused)
    uint32_t echo_tx_id;    // tx_id of the segment that made the receiver send `ack`
    uint32_t ack_delay_ns;  // how long the receiver held that ACK (or PROBE_REPLY) before sending it
    uint32_t msg_id;        // CHUNK: the sender's id of the message being cut
    uint32_t msg_len;       // CHUNK: the message's whole length
    uint32_t chunk_offset;  // CHUNK: where this chunk's payload goes in the message
    uint64_t tx_stamp_ns;   // sender's clock-domain time at transmission (offsets, one-way delays)
    uint64_t put_addr;      // PUT: region key << 40 | offset of the put's first byte; else 0
    uint64_t mac;           // MAC of the datagram by the receiver's secret (mac.h), 0 with auth none
};
#pragma pack(pop)

static_assert(sizeof(PacketHeader) == 72, "the header is 72 bytes on the wire");
constexpr size_t kHeaderSize = sizeof(PacketHeader);

// Types whose payload is the user's bytes (the rest carry the protocol's own).
inline bool carries_data(PacketType t) {
    return t == PacketType::DATA || t == PacketType::CHUNK || t == PacketType::PUT;
}

// Why a received datagram was refused.
enum class Verdict { kOk, kMalformed, kForeign };

// Checks everything that can be checked without engine state.
inline Verdict check_header(const void *buf, size_t len, uint32_t job_key, const PacketHeader **out) {
    if (len < kHeaderSize) return Verdict::kMalformed;
    const auto *h = static_cast<const PacketHeader *>(buf);
    if (h->magic != kMagic || h->version != kVersion || h->job_key != job_key)
        return Verdict::kForeign;
    if (h->payload_len > len - kHeaderSize) return Verdict::kMalformed;  // less: padded (a GSO group's)
    if ((h->put_addr != 0) != (h->type == static_cast<uint8_t>(PacketType::PUT))) return Verdict::kMalformed;
    if ((h->flags & kFlagOrdered) && h->type != static_cast<uint8_t>(PacketType::DATA)) return Verdict::kMalformed;
    switch (static_cast<PacketType>(h->type)) {
        case PacketType::DATA:
            break;
        case PacketType::CHUNK:
        case PacketType::PUT:
            if (h->msg_len == 0 || h->chunk_offset >= h->msg_len ||
                h->payload_len == 0 || h->payload_len > h->msg_len - h->chunk_offset)
                return Verdict::kMalformed;
            break;
        case PacketType::ACK:
            if (h->payload_len % 8 || h->payload_len > kMaxSackWords * 8 || !(h->flags & kFlagAckValid))
                return Verdict::kMalformed;
            break;
        case PacketType::PROBE:
            if (h->flags & kFlagAckValid) return Verdict::kMalformed;
            break;
        case PacketType::PROBE_REPLY:
            if (h->payload_len != 0 || (h->flags & kFlagAckValid)) return Verdict::kMalformed;
            break;
        case PacketType::BUSY:
            if (h->payload_len != 0 || !(h->flags & kFlagAckValid)) return Verdict::kMalformed;
            break;
        default:
            return Verdict::kMalformed;
    }
    *out = h;
    return Verdict::kOk;
}

}  // namespace rttcc
