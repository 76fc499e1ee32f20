// wire_format.h: header validation refuses short, foreign and malformed datagrams.
#include <cstring>
#include <vector>

#include "cmocka_cxx.h"
#include "engine/wire_format.h"

using namespace rttcc;

static const uint32_t kKey = 0xabcdef01u;

static std::vector<uint8_t> datagram(PacketType t, size_t payload) {
    std::vector<uint8_t> b(kHeaderSize + payload, 0x5a);
    PacketHeader h{};
    h.magic = kMagic;
    h.version = kVersion;
    h.type = static_cast<uint8_t>(t);
    h.job_key = kKey;
    h.payload_len = static_cast<uint16_t>(payload);
    if (t == PacketType::ACK) h.flags = kFlagAckValid;
    if (t == PacketType::CHUNK || t == PacketType::PUT) {
        h.msg_len = static_cast<uint32_t>(payload * 4);
        h.chunk_offset = static_cast<uint32_t>(payload);
    }
    if (t == PacketType::PUT) h.put_addr = (uint64_t{7} << 40) | 4096;
    std::memcpy(b.data(), &h, sizeof h);
    return b;
}

static PacketHeader *hdr(std::vector<uint8_t> &b) { return reinterpret_cast<PacketHeader *>(b.data()); }

static Verdict check(const std::vector<uint8_t> &b) {
    const PacketHeader *out;
    return check_header(b.data(), b.size(), kKey, &out);
}

static void test_valid_packets_pass(void **) {
    assert_int_equal(static_cast<int>(check(datagram(PacketType::DATA, 100))), static_cast<int>(Verdict::kOk));
    assert_int_equal(static_cast<int>(check(datagram(PacketType::DATA, 0))), static_cast<int>(Verdict::kOk));
    assert_int_equal(static_cast<int>(check(datagram(PacketType::CHUNK, 100))), static_cast<int>(Verdict::kOk));
    assert_int_equal(static_cast<int>(check(datagram(PacketType::ACK, 0))), static_cast<int>(Verdict::kOk));
    assert_int_equal(static_cast<int>(check(datagram(PacketType::ACK, 8))), static_cast<int>(Verdict::kOk));
    assert_int_equal(static_cast<int>(check(datagram(PacketType::ACK, kMaxSackWords * 8))),
                     static_cast<int>(Verdict::kOk));
    assert_int_equal(static_cast<int>(check(datagram(PacketType::PUT, 100))), static_cast<int>(Verdict::kOk));
    assert_int_equal(static_cast<int>(check(datagram(PacketType::PROBE, 64))), static_cast<int>(Verdict::kOk));
    assert_int_equal(static_cast<int>(check(datagram(PacketType::PROBE_REPLY, 0))), static_cast<int>(Verdict::kOk));
}

static void test_short_and_truncated_are_malformed(void **) {
    auto b = datagram(PacketType::DATA, 100);
    std::vector<uint8_t> shortb(b.begin(), b.begin() + kHeaderSize - 1);
    assert_int_equal(static_cast<int>(check(shortb)), static_cast<int>(Verdict::kMalformed));
    b.resize(b.size() - 1);  // truncated in flight
    assert_int_equal(static_cast<int>(check(b)), static_cast<int>(Verdict::kMalformed));
}

// Bytes after a header's payload are padding (a short datagram the UDP
// wire padded to its GSO group's size): taken, the payload still ends at
// payload_len.
static void test_padding_after_the_payload_is_taken(void **) {
    for (PacketType t : {PacketType::DATA, PacketType::CHUNK, PacketType::PUT, PacketType::ACK}) {
        auto b = datagram(t, t == PacketType::ACK ? 8 : 100);
        b.resize(b.size() + 900, 0);
        assert_int_equal(static_cast<int>(check(b)), static_cast<int>(Verdict::kOk));
    }
}

static void test_foreign_key_magic_version(void **) {
    auto b = datagram(PacketType::DATA, 8);
    hdr(b)->job_key ^= 1;
    assert_int_equal(static_cast<int>(check(b)), static_cast<int>(Verdict::kForeign));
    b = datagram(PacketType::DATA, 8);
    hdr(b)->magic = 0x1234;
    assert_int_equal(static_cast<int>(check(b)), static_cast<int>(Verdict::kForeign));
    b = datagram(PacketType::DATA, 8);
    hdr(b)->version = kVersion + 1;
    assert_int_equal(static_cast<int>(check(b)), static_cast<int>(Verdict::kForeign));
}

static void test_bad_fields_are_malformed(void **) {
    auto b = datagram(PacketType::DATA, 8);
    hdr(b)->type = 99;
    assert_int_equal(static_cast<int>(check(b)), static_cast<int>(Verdict::kMalformed));
    b = datagram(PacketType::CHUNK, 100);
    hdr(b)->chunk_offset = hdr(b)->msg_len - 10;  // chunk overruns the message
    assert_int_equal(static_cast<int>(check(b)), static_cast<int>(Verdict::kMalformed));
    b = datagram(PacketType::ACK, 0);
    hdr(b)->flags = 0;  // an ACK without an ACK
    assert_int_equal(static_cast<int>(check(b)), static_cast<int>(Verdict::kMalformed));
    b = datagram(PacketType::ACK, 12);  // a SACK of whole words only
    assert_int_equal(static_cast<int>(check(b)), static_cast<int>(Verdict::kMalformed));
    b = datagram(PacketType::ACK, (kMaxSackWords + 1) * 8);  // a SACK longer than any window we report
    assert_int_equal(static_cast<int>(check(b)), static_cast<int>(Verdict::kMalformed));
    b = datagram(PacketType::DATA, 8);
    hdr(b)->put_addr = 0x1000;  // only a PUT names a place to land
    assert_int_equal(static_cast<int>(check(b)), static_cast<int>(Verdict::kMalformed));
    b = datagram(PacketType::PUT, 100);
    hdr(b)->put_addr = 0;  // a PUT that names no place
    assert_int_equal(static_cast<int>(check(b)), static_cast<int>(Verdict::kMalformed));
    b = datagram(PacketType::PUT, 100);
    hdr(b)->chunk_offset = hdr(b)->msg_len - 10;  // chunk overruns the put
    assert_int_equal(static_cast<int>(check(b)), static_cast<int>(Verdict::kMalformed));
    b = datagram(PacketType::PROBE_REPLY, 8);  // a reply carries no payload
    assert_int_equal(static_cast<int>(check(b)), static_cast<int>(Verdict::kMalformed));
}

static void test_type_names(void **) {
    assert_string_equal(packet_type_name(PacketType::CHUNK), "CHUNK");
    assert_string_equal(packet_type_name(static_cast<PacketType>(77)), "unknown");
}

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_packets_pass),
        cmocka_unit_test(test_short_and_truncated_are_malformed),
        cmocka_unit_test(test_padding_after_the_payload_is_taken),
        cmocka_unit_test(test_foreign_key_magic_version),
        cmocka_unit_test(test_bad_fields_are_malformed),
        cmocka_unit_test(test_type_names),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
