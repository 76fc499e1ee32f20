// Datagram MACs with libsodium (mac.h).
#include "engine/mac.h"

#include <sodium.h>

#include <cstddef>
#include <cstring>
#include <mutex>

namespace rttcc {

namespace {

void init_sodium() {
    static std::once_flag once;
    std::call_once(once, [] {
        if (sodium_init() < 0) abort();  // cannot happen once the library loaded: no CSPRNG, no rttcc
    });
}

// A MAC covers the header up to its own field, the last: nothing to zero,
// no copy of the header.
static_assert(offsetof(PacketHeader, mac) + sizeof(PacketHeader::mac) == sizeof(PacketHeader), "mac is last");
constexpr size_t kSigned = offsetof(PacketHeader, mac);

uint64_t header_mac(const SecretKey &key, const uint8_t *header) {
    static_assert(crypto_shorthash_BYTES == 8 && crypto_shorthash_KEYBYTES == 16, "SipHash-2-4: 64-bit out, 128-bit key");
    uint64_t mac;
    crypto_shorthash(reinterpret_cast<unsigned char *>(&mac), header, kSigned, key.data());
    return mac;
}

uint64_t full_mac(const SecretKey &key, const uint8_t *header, const iovec *payload, int pieces) {
    crypto_generichash_state st;
    crypto_generichash_init(&st, key.data(), key.size(), 16);
    crypto_generichash_update(&st, header, kSigned);
    for (int i = 0; i < pieces; ++i)
        crypto_generichash_update(&st, static_cast<const unsigned char *>(payload[i].iov_base), payload[i].iov_len);
    unsigned char out[16];
    crypto_generichash_final(&st, out, sizeof out);
    uint64_t mac;
    std::memcpy(&mac, out, sizeof mac);
    return mac;
}

// What a MAC covers: the header, and the payload when auth is full or the
// payload is the protocol's own (an ACK's SACK words, a probe's padding).
uint64_t mac_of(int auth, const SecretKey &key, const uint8_t *header, uint8_t type, uint16_t payload_len,
                const iovec *payload, int pieces) {
    if (auth == RTTCC_AUTH_NONE) return 0;
    if (payload_len == 0 || (auth == RTTCC_AUTH_HEADER && carries_data(static_cast<PacketType>(type))))
        return header_mac(key, header);
    return full_mac(key, header, payload, pieces);
}

}  // namespace

SecretKey random_key() {
    init_sodium();
    SecretKey k;
    randombytes_buf(k.data(), k.size());
    return k;
}

uint32_t random_u32() {
    init_sodium();
    return randombytes_random();
}

seq_t initial_seq(const SecretKey &sender, uint32_t receiver) {
    unsigned char in[8] = {'i', 's', 'n', 0};
    std::memcpy(in + 4, &receiver, sizeof receiver);
    uint64_t out;
    crypto_shorthash(reinterpret_cast<unsigned char *>(&out), in, sizeof in, sender.data());
    return static_cast<seq_t>(out);
}

uint64_t datagram_mac(int auth, const SecretKey &key, const PacketHeader &header, const iovec *payload,
                      int pieces) {
    return mac_of(auth, key, reinterpret_cast<const uint8_t *>(&header), header.type, header.payload_len, payload,
                  pieces);
}

bool mac_ok(int auth, const SecretKey &key, const uint8_t *buf) {
    if (auth == RTTCC_AUTH_NONE) return true;
    // check_header made sure the header and its payload are there (bytes
    // after them are padding); only three fields are read, where they lie
    // (the buffer need not be aligned).
    uint8_t type;
    uint16_t payload_len;
    uint64_t mac;
    std::memcpy(&type, buf + offsetof(PacketHeader, type), sizeof type);
    std::memcpy(&payload_len, buf + offsetof(PacketHeader, payload_len), sizeof payload_len);
    std::memcpy(&mac, buf + offsetof(PacketHeader, mac), sizeof mac);
    const iovec payload{const_cast<uint8_t *>(buf) + kHeaderSize, payload_len};
    const uint64_t want = mac_of(auth, key, buf, type, payload_len, &payload, 1);
    // One 64-bit comparison is constant time, as sodium_memcmp is for a
    // buffer, without its call (2% of a 64 KiB message's CPU, engine_cost).
    return (mac ^ want) == 0;
}

}  // namespace rttcc
