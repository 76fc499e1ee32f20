// mac.h and the engine's use of it: what a MAC covers, and that a datagram
// nobody in the job signed is dropped and counted, never acted on (not even
// by a lookup of its sender), while one signed with the receiver's key (as a
// leaked key would allow) is taken.
#include <cstring>

#include "engine_harness.h"
#include "engine/mac.h"

using namespace rttcc;
using namespace rttcc_test;

namespace {


// A DATA segment from node 0 that node 1 would take as the next in order.
PacketHeader next_data(const std::vector<std::unique_ptr<Node>> &nodes, uint16_t len) {
    PacketHeader h = forged_header(PacketType::DATA, len);
    h.seq = nodes[1]->engine->peer(0)->rx.next();
    h.tx_id = transmission_id(h.seq, 0);
    h.tag = 9;
    return h;
}

}  // namespace

static void test_the_mac_covers_every_header_field(void **) {
    const SecretKey k = random_key();
    PacketHeader h = forged_header(PacketType::ACK, 0);
    const uint64_t base = datagram_mac(RTTCC_AUTH_HEADER, k, h, nullptr, 0);
    auto *bytes = reinterpret_cast<uint8_t *>(&h);
    for (size_t i = 0; i < offsetof(PacketHeader, mac); ++i) {
        bytes[i] ^= 1;
        assert_true(datagram_mac(RTTCC_AUTH_HEADER, k, h, nullptr, 0) != base);
        bytes[i] ^= 1;
    }
    h.mac = 12345;  // the field itself is read as 0
    assert_true(datagram_mac(RTTCC_AUTH_HEADER, k, h, nullptr, 0) == base);
    SecretKey other = k;
    other[0] ^= 1;
    assert_true(datagram_mac(RTTCC_AUTH_HEADER, other, h, nullptr, 0) != base);
    assert_int_equal(datagram_mac(RTTCC_AUTH_NONE, k, h, nullptr, 0), 0);
}

// header: an ACK's SACK words are covered, a DATA payload is not; full: both.
static void test_what_the_payload_mode_covers(void **) {
    const SecretKey k = random_key();
    uint64_t words[2] = {0xff, 0};
    iovec sack{words, sizeof words};
    const PacketHeader ack = forged_header(PacketType::ACK, sizeof words);
    const uint64_t a = datagram_mac(RTTCC_AUTH_HEADER, k, ack, &sack, 1);
    words[1] = 1;
    assert_true(datagram_mac(RTTCC_AUTH_HEADER, k, ack, &sack, 1) != a);
    uint8_t user[100] = {};
    iovec data{user, sizeof user};
    const PacketHeader dh = forged_header(PacketType::DATA, sizeof user);
    const uint64_t hd = datagram_mac(RTTCC_AUTH_HEADER, k, dh, &data, 1);
    const uint64_t fd = datagram_mac(RTTCC_AUTH_FULL, k, dh, &data, 1);
    user[50] = 1;
    assert_true(datagram_mac(RTTCC_AUTH_HEADER, k, dh, &data, 1) == hd);
    assert_true(datagram_mac(RTTCC_AUTH_FULL, k, dh, &data, 1) != fd);
}

static void test_initial_sequence_numbers_follow_the_key(void **) {
    const SecretKey a = random_key(), b = random_key();
    assert_true(initial_seq(a, 1) == initial_seq(a, 1));
    assert_true(initial_seq(a, 1) != initial_seq(a, 2));
    assert_true(initial_seq(a, 1) != initial_seq(b, 1));
}

// Forged data with the right source, job key and next sequence number, a
// forged ACK that would complete a send, and a forged SACK that would take
// the segment off its timer: all dropped and counted; the send completes
// only when the real ACK comes.
static void test_forgeries_are_dropped_and_counted(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2);
    std::vector<uint8_t> big = make_message(1, 20000);
    iovec b{big.data(), big.size()};
    nodes[0]->faults->drop_if = [](Channel, const TxDatagram &) { return true; };  // node 1 hears nothing real
    assert_int_equal(nodes[0]->engine->send(1, 1, &b, 1, &big), RTTCC_OK);
    nodes[0]->engine->progress();
    const Peer &to1 = *nodes[0]->engine->peer(1);
    const seq_t una = to1.tx.una();
    assert_true(to1.tx.in_flight() > 0);

    std::vector<uint8_t> payload(32, 0x66);
    PacketHeader data = next_data(nodes, 32);
    data.mac = 0x0123456789abcdefull;  // guessed
    inject(net, 0, 1, kData, data, payload);
    PacketHeader ack = forged_header(PacketType::ACK, 0);
    ack.src = 1;
    ack.flags = kFlagAckValid;
    ack.ack = to1.tx.next();  // everything node 0 sent
    inject(net, 1, 0, kCmd, ack, {});
    PacketHeader sack = forged_header(PacketType::ACK, 8);
    sack.src = 1;
    sack.flags = kFlagAckValid;
    sack.ack = to1.tx.una();
    inject(net, 1, 0, kCmd, sack, std::vector<uint8_t>(8, 0xff));
    nodes[1]->engine->progress();
    nodes[0]->engine->progress();

    assert_int_equal(nodes[1]->received.size(), 0);
    assert_int_equal(nodes[1]->engine->stats().drop_auth, 1);
    assert_int_equal(nodes[0]->engine->stats().drop_auth, 2);
    assert_int_equal(nodes[0]->completed.size(), 0);
    assert_int_equal(to1.tx.una(), una);  // the forged ACK moved nothing
    for (seq_t s = to1.tx.una(); s != to1.tx.next(); ++s) assert_false(to1.tx.at(s)->sacked);

    nodes[0]->faults->drop_if = nullptr;  // the real datagrams go through again
    assert_true(run_until(nodes, [&] { return nodes[0]->completed.size() == 1; }));
    assert_int_equal(nodes[1]->received.size(), 1);
    assert_true(nodes[1]->received[0].bytes == big);
}

// The same forged segment signed with node 1's key (a leaked key) is taken:
// the check accepts exactly what the key signs.
static void test_a_datagram_signed_with_the_key_is_taken(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2);
    std::vector<uint8_t> payload(32, 0x66);
    PacketHeader data = next_data(nodes, 32);
    iovec p{payload.data(), payload.size()};
    data.mac = datagram_mac(RTTCC_AUTH_HEADER, published_key(*nodes[1]), data, &p, 1);
    inject(net, 0, 1, kData, data, payload);
    nodes[1]->engine->progress();
    assert_int_equal(nodes[1]->engine->stats().drop_auth, 0);
    assert_int_equal(nodes[1]->received.size(), 1);
    assert_true(nodes[1]->received[0].bytes == payload);
}

// Datagrams claiming 1000 senders node 1 has not added, with guessed MACs,
// are dropped as forgeries: none costs a lookup (on_unknown_peer, which
// in MPI asks the runtime for the process).  One signed with node 1's key,
// which only processes of the job know, is looked up, once however often it
// comes and whether or not the lookup finds it.
static void test_only_a_signed_datagram_asks_for_its_sender(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2);
    for (uint32_t src = 2; src < 1002; ++src) {
        PacketHeader h = forged_header(PacketType::DATA, 0);
        h.src = src;
        h.mac = 0x9e3779b97f4a7c15ull * src;  // guessed
        inject(net, 0, 1, kCmd, h, {});
    }
    for (int i = 0; i < 10; ++i) nodes[1]->engine->progress();
    assert_int_equal(nodes[1]->unknown.size(), 0);
    assert_int_equal(nodes[1]->engine->stats().drop_auth, 1000);
    PacketHeader h = forged_header(PacketType::DATA, 0);
    h.src = 5;
    h.mac = datagram_mac(RTTCC_AUTH_HEADER, published_key(*nodes[1]), h, nullptr, 0);
    for (int i = 0; i < 3; ++i) {
        inject(net, 0, 1, kCmd, h, {});
        nodes[1]->engine->progress();
    }
    assert_int_equal(nodes[1]->unknown.size(), 1);
    assert_int_equal(nodes[1]->unknown[0], 5);
    assert_int_equal(nodes[1]->engine->stats().drop_unknown_peer, 3);
}

// auth full: a data byte altered on the way is dropped, and the resend
// brings the message whole.  (With header the payload is left to the
// wire's checksum: test_what_the_payload_mode_covers.)
static void test_full_mode_catches_an_altered_payload(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) { c.auth = RTTCC_AUTH_FULL; });
    const std::vector<uint8_t> msg = make_message(2, 3000);
    std::vector<uint8_t> copy = msg;
    iovec v{copy.data(), copy.size()};
    assert_int_equal(nodes[0]->engine->send(1, 1, &v, 1, nullptr), RTTCC_DONE);
    nodes[0]->engine->progress();
    {
        std::lock_guard<std::mutex> g(net.mutex());
        auto &q = net.queue(1, kData).empty() ? net.queue(1, kCmd) : net.queue(1, kData);
        assert_false(q.empty());
        q.front()[4 + kHeaderSize + 10] ^= 1;  // in flight, after the sender prefix and the header
    }
    assert_true(run_until(nodes, [&] { return nodes[1]->received.size() == 1; }));
    assert_int_equal(nodes[1]->engine->stats().drop_auth, 1);
    assert_true(nodes[1]->received[0].bytes == msg);
}

// Processes whose auth settings differ refuse each other at wire-up, with
// the setting named.
static void test_differing_settings_are_refused_at_wire_up(void **) {
    MemNetwork net(4000);
    auto a = make_nodes(net, 1);
    auto b = make_nodes(net, 1, {}, [](rttcc_config_t &c) {
        c.self = 1;
        c.auth = RTTCC_AUTH_NONE;
    });
    std::string err;
    assert_false(a[0]->engine->add_peer(1, b[0]->address.data(), b[0]->address.size(), &err));
    assert_true(err.find("rttcc_auth is header here but none there") != std::string::npos);
    auto c = make_nodes(net, 1, {}, [](rttcc_config_t &cfg) {
        cfg.self = 1;
        cfg.max_message = 1 << 21;
    });
    assert_false(a[0]->engine->add_peer(1, c[0]->address.data(), c[0]->address.size(), &err));
    assert_true(err.find("largest message") != std::string::npos);
}

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_mac_covers_every_header_field),
        cmocka_unit_test(test_what_the_payload_mode_covers),
        cmocka_unit_test(test_initial_sequence_numbers_follow_the_key),
        cmocka_unit_test(test_forgeries_are_dropped_and_counted),
        cmocka_unit_test(test_a_datagram_signed_with_the_key_is_taken),
        cmocka_unit_test(test_only_a_signed_datagram_asks_for_its_sender),
        cmocka_unit_test(test_full_mode_catches_an_altered_payload),
        cmocka_unit_test(test_differing_settings_are_refused_at_wire_up),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
