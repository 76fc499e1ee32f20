// Datagram MACs with libsodium (mac.h).
#include "engine/mac.h"

#include <sodium.h>

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

PacketHeader without_mac(const PacketHeader &h) {
    PacketHeader copy = h;
    copy.mac = 0;
    return copy;
}

uint64_t header_mac(const SecretKey &key, const PacketHeader &h) {
    static_assert(crypto_shorthash_BYTES == 8 && crypto_shorthash_KEYBYTES == 16, "SipHash-2-4: 64-bit out, 128-bit key");
    const PacketHeader clean = without_mac(h);
    uint64_t mac;
    crypto_shorthash(reinterpret_cast<unsigned char *>(&mac), reinterpret_cast<const unsigned char *>(&clean),
                     sizeof clean, key.data());
    return mac;
}

uint64_t full_mac(const SecretKey &key, const PacketHeader &h, const iovec *payload, int pieces) {
    const PacketHeader clean = without_mac(h);
    crypto_generichash_state st;
    crypto_generichash_init(&st, key.data(), key.size(), 16);
    crypto_generichash_update(&st, reinterpret_cast<const unsigned char *>(&clean), sizeof clean);
    for (int i = 0; i < pieces; ++i)
        crypto_generichash_update(&st, static_cast<const unsigned char *>(payload[i].iov_base), payload[i].iov_len);
    unsigned char out[16];
    crypto_generichash_final(&st, out, sizeof out);
    uint64_t mac;
    std::memcpy(&mac, out, sizeof mac);
    return mac;
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

// What a MAC covers: the header, and the payload when auth is full or the
// payload is the protocol's own (an ACK's SACK words, a probe's padding).
uint64_t datagram_mac(int auth, const SecretKey &key, const PacketHeader &header, const iovec *payload,
                      int pieces) {
    if (auth == RTTCC_AUTH_NONE) return 0;
    const bool user_bytes = carries_data(static_cast<PacketType>(header.type));
    if (header.payload_len == 0 || (auth == RTTCC_AUTH_HEADER && user_bytes)) return header_mac(key, header);
    return full_mac(key, header, payload, pieces);
}

bool mac_ok(int auth, const SecretKey &key, const uint8_t *buf, size_t len) {
    if (auth == RTTCC_AUTH_NONE) return true;
    PacketHeader h;
    std::memcpy(&h, buf, sizeof h);  // check_header made sure it is all there
    const iovec payload{const_cast<uint8_t *>(buf) + sizeof h, len - sizeof h};
    const uint64_t want = datagram_mac(auth, key, h, &payload, 1);
    // One 64-bit comparison is constant time, as sodium_memcmp is for a
    // buffer, without its call (2% of a 64 KiB message's CPU, engine_cost).
    return (h.mac ^ want) == 0;
}

}  // namespace rttcc
