// Datagram authentication (the `auth` tunable): every datagram carries a
// 64-bit MAC keyed by its receiver's secret, a random 128-bit key each engine
// draws from the kernel's CSPRNG at start and publishes only in its address
// (the modex), so only processes of the job know it.  Without the key a
// datagram cannot be forged: not data, not an ACK or SACK, not a probe or a
// put.  The receiver checks every datagram with its own key, before it
// knows the sender: a datagram from a process it has not added yet (lazy
// wire-up) is checked before it may cost a runtime lookup of that process.
//
//   header: SipHash-2-4 over the header (libsodium crypto_shorthash);
//           the payload too where it is the protocol's own (an ACK's SACK
//           words, a probe's padding): keyed BLAKE2b then, cut to 64 bits
//   full:   the payload of every datagram too (keyed BLAKE2b)
//   none:   mac = 0, not checked (every process of the job must agree)
//
// A MAC covers the header's 64 bytes before its `mac` field, the last.
#pragma once
#include <sys/uio.h>

#include <array>
#include <cstddef>
#include <cstdint>

#include "rttcc/config.h"
#include "util/seq.h"
#include "engine/wire_format.h"

namespace rttcc {

using SecretKey = std::array<uint8_t, 16>;

// A fresh key from the kernel's CSPRNG (getrandom through libsodium).
SecretKey random_key();

// A random 32-bit value (initial probe ids, region keys): unguessable.
uint32_t random_u32();

// Where a sender's sequence numbers towards `receiver` start: a function of
// the sender's key, so the receiver (which has it) knows it and nobody else
// can guess it.
seq_t initial_seq(const SecretKey &sender, uint32_t receiver);

// The MAC of a datagram: `header` (its mac field is read as 0) and, where
// `auth` covers it, the payload pieces.
uint64_t datagram_mac(int auth, const SecretKey &key, const PacketHeader &header, const iovec *payload,
                      int pieces);

// True if a received datagram's MAC is right for `key` (check_header
// passed: its header and payload_len bytes of payload are at buf).
bool mac_ok(int auth, const SecretKey &key, const uint8_t *buf);

}  // namespace rttcc
