// Ordered messages (rttcc_engine_send_ordered, kFlagOrdered) over the
// in-memory wire: the receiver delivers one only once everything its
// sender sent before it has arrived, so when it is delivered every earlier
// message is in, every put has landed and every posted RMA operation has
// been applied, also when the datagram that carried one of them was lost
// and resent after the ordered message arrived.  Without loss nothing is
// held.  Each test checks the target's state at the moment of delivery.
#include <cstring>
#include <vector>

#include "api/engine_handle.h"
#include "cmocka_cxx.h"
#include "engine_harness.h"
#include "rttcc/rma.h"

using namespace rttcc;
using namespace rttcc_test;

namespace {

constexpr uint8_t kTag = 7, kOrderedTag = 8;
const uint8_t kNote[] = {'f', 'e', 'n', 'c', 'e'};

const PacketHeader &header_of(const TxDatagram &d) { return *static_cast<const PacketHeader *>(d.iov[0].iov_base); }

// Drops the first transmission of node 0's first data-channel datagram
// that `pick` accepts; counts what it dropped.
struct DropFirst {
    int dropped = 0;
    template <typename P>
    void arm(Node &n, P pick) {
        n.faults->drop_if = [this, pick](Channel ch, const TxDatagram &d) {
            if (dropped || ch != kData || !pick(header_of(d))) return false;
            ++dropped;
            return true;
        };
    }
};

size_t ordered_deliveries(const Node &n) {
    size_t k = 0;
    for (const auto &r : n.received) k += r.tag == kOrderedTag;
    return k;
}

// Runs the nodes until node 1 delivered the ordered message; returns
// check() as it was right after the progress call that delivered it.
template <typename C>
bool at_delivery(std::vector<std::unique_ptr<Node>> &nodes, C &&check) {
    bool verdict = false;
    const nanos end = now_of(nodes) + msec(2000);
    while (now_of(nodes) < end) {
        next_round(nodes);
        nodes[0]->engine->progress();
        nodes[1]->engine->progress();
        if (ordered_deliveries(*nodes[1]) > 0) {
            verdict = check();
            break;
        }
    }
    return verdict;
}

void send_note(Node &n) {
    assert_int_equal(n.engine->send_ordered(1, kOrderedTag, kNote, sizeof kNote, nullptr), RTTCC_DONE);
}

}  // namespace

// A message of 3 data segments whose first datagram is lost: the ordered
// message sent after it arrives first, is held, and is delivered after it.
static void test_an_ordered_message_follows_a_lost_message(void **) {
    for (bool lose : {true, false}) {
        MemNetwork net(4000);
        auto nodes = make_nodes(net, 2);
        std::vector<uint8_t> big = make_message(1, 3 * nodes[0]->engine->peer(1)->seg_payload);
        DropFirst drop;
        if (lose) drop.arm(*nodes[0], [](const PacketHeader &h) { return h.type == static_cast<uint8_t>(PacketType::CHUNK); });
        iovec iov{big.data(), big.size()};
        const int rc = nodes[0]->engine->send(1, kTag, &iov, 1, &big);
        assert_true(rc == RTTCC_OK || rc == RTTCC_DONE);
        send_note(*nodes[0]);
        assert_true(at_delivery(nodes, [&] {
            return nodes[1]->received.size() == 2 && nodes[1]->received[0].bytes == big &&
                   nodes[1]->received[1].tag == kOrderedTag &&
                   std::vector<uint8_t>(kNote, kNote + sizeof kNote) == nodes[1]->received[1].bytes;
        }));
        assert_int_equal(drop.dropped, lose ? 1 : 0);
        assert_int_equal(nodes[1]->engine->stats().ordered_held, lose ? 1 : 0);
    }
}

// A zero-copy put into a silent grant whose first datagram is lost: when
// the ordered message is delivered, every byte of the put has landed.
static void test_an_ordered_message_follows_a_lost_put(void **) {
    for (bool lose : {true, false}) {
        MemNetwork net(4000);
        auto nodes = make_nodes(net, 2);
        std::vector<uint8_t> src = make_message(2, 4 * nodes[0]->engine->peer(1)->seg_payload);
        std::vector<uint8_t> dst(src.size(), 0);
        const uint32_t key = nodes[1]->engine->grant(0, dst.data(), dst.size(), /*notify=*/false);
        assert_true(key != 0);
        DropFirst drop;
        if (lose) drop.arm(*nodes[0], [](const PacketHeader &h) { return h.type == static_cast<uint8_t>(PacketType::PUT); });
        iovec iov{src.data(), src.size()};
        const int rc = nodes[0]->engine->put(1, key, 0, kTag, &iov, 1, &src);
        assert_true(rc == RTTCC_OK || rc == RTTCC_DONE);
        send_note(*nodes[0]);
        assert_true(at_delivery(nodes, [&] { return dst == src; }));
        assert_int_equal(drop.dropped, lose ? 1 : 0);
        assert_int_equal(nodes[1]->engine->stats().ordered_held, lose ? 1 : 0);
    }
}

// Small puts posted to a batch (rttcc_rma_post), then the ordered message:
// the batch closes first, and its request, lost once, is applied before
// the ordered message is delivered.
static void test_an_ordered_message_follows_posted_operations(void **) {
    for (bool lose : {true, false}) {
        MemNetwork net(4000);
        auto nodes = make_nodes(net, 2);
        rttcc_engine h0{nodes[0]->engine, ""}, h1{nodes[1]->engine, ""};
        std::vector<uint8_t> dst(256, 0), want(256, 0);
        uint32_t window = 0, key = 0;
        assert_int_equal(rttcc_rma_window_open(&h1, &window), RTTCC_OK);
        assert_int_equal(rttcc_rma_expose(&h1, window, 0, dst.data(), dst.size(), &key), RTTCC_OK);
        DropFirst drop;
        if (lose) drop.arm(*nodes[0], [](const PacketHeader &h) { return h.tag == RTTCC_TAG_RMA; });
        for (uint64_t i = 0; i < 16; ++i) {
            const std::vector<uint8_t> bytes = make_message(static_cast<uint32_t>(i), 16);
            std::memcpy(want.data() + 16 * i, bytes.data(), 16);
            assert_int_equal(rttcc_rma_post(&h0, 1, key, 16 * i, RTTCC_RMA_REPLACE, RTTCC_RMA_BYTE, bytes.data(), 16),
                             RTTCC_DONE);
        }
        send_note(*nodes[0]);
        assert_true(at_delivery(nodes, [&] { return dst == want; }));
        assert_int_equal(drop.dropped, lose ? 1 : 0);
        assert_int_equal(nodes[1]->engine->stats().ordered_held, lose ? 1 : 0);
    }
}

void two_credits(rttcc_config_t &c) { c.send_credits = 2; }

// With two send credits a 6-segment message is still being cut when the
// ordered message is sent: it waits in the data channel's queue behind the
// message's last segments instead of overtaking them on the command
// channel, and is delivered after the whole message.
static void test_an_ordered_message_queues_behind_a_stalled_message(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, {}, two_credits);
    std::vector<uint8_t> big = make_message(3, 6 * nodes[0]->engine->peer(1)->seg_payload);
    iovec iov{big.data(), big.size()};
    const int rc = nodes[0]->engine->send(1, kTag, &iov, 1, &big);
    assert_true(rc == RTTCC_OK || rc == RTTCC_DONE);
    assert_true(nodes[0]->engine->peer(1)->has_pending());  // not all cut: the credits hold it
    send_note(*nodes[0]);
    assert_true(at_delivery(nodes, [&] { return nodes[1]->received.size() == 2 && nodes[1]->received[0].bytes == big; }));
}

// Two ordered messages keep their order: O1 is held behind a lost segment;
// the segment's resend and O2 then come in one burst, so O2 finds nothing
// missing before it, but waits behind O1 all the same.
static void test_ordered_messages_keep_their_order(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2);
    std::vector<uint8_t> big = make_message(5, 3 * nodes[0]->engine->peer(1)->seg_payload);
    DropFirst drop;
    drop.arm(*nodes[0], [](const PacketHeader &h) { return h.type == static_cast<uint8_t>(PacketType::CHUNK); });
    iovec iov{big.data(), big.size()};
    const int rc = nodes[0]->engine->send(1, kTag, &iov, 1, &big);
    assert_true(rc == RTTCC_OK || rc == RTTCC_DONE);
    const uint8_t o1[] = {1}, o2[] = {2};
    assert_int_equal(nodes[0]->engine->send_ordered(1, kOrderedTag, o1, 1, nullptr), RTTCC_DONE);
    next_round(nodes);
    nodes[1]->engine->progress();  // the rest of the message and O1, held
    assert_int_equal(nodes[1]->engine->stats().ordered_held, 1);
    only_node0(nodes, 200, [&] { return nodes[0]->engine->stats().retx > 0; });  // the SACK brings the resend
    assert_true(nodes[0]->engine->stats().retx > 0);
    assert_int_equal(nodes[0]->engine->send_ordered(1, kOrderedTag, o2, 1, nullptr), RTTCC_DONE);
    next_round(nodes);
    nodes[1]->engine->progress();  // the resend and O2 in one burst
    assert_true(run_until(nodes, [&] { return ordered_deliveries(*nodes[1]) == 2; }));
    std::vector<uint8_t> order;
    for (const auto &r : nodes[1]->received)
        if (r.tag == kOrderedTag) order.push_back(r.bytes[0]);
    assert_int_equal(order.size(), 2);
    assert_int_equal(order[0], 1);
    assert_int_equal(order[1], 2);
}

// A peer that sends an ordered message larger than send_ordered makes,
// with a gap below it (so that it would be held), breaks the protocol: it
// is declared dead, saying why, and nothing is held or delivered.
static void test_an_oversized_ordered_message_ends_the_peer(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2);
    const size_t len = nodes[1]->engine->config().cmd_mtu;  // more than a command datagram's payload
    const std::vector<uint8_t> bytes(len, 0x6b);
    PacketHeader h = forged_header(PacketType::DATA, static_cast<uint16_t>(len));
    h.tag = kOrderedTag;
    h.flags = kFlagOrdered;
    h.seq = nodes[1]->engine->peer(0)->rx.next() + 1;  // one missing below it
    h.tx_id = transmission_id(h.seq, 0);
    iovec payload{const_cast<uint8_t *>(bytes.data()), bytes.size()};
    h.mac = datagram_mac(RTTCC_AUTH_HEADER, published_key(*nodes[1]), h, &payload, 1);
    inject(net, 0, 1, kData, h, bytes);
    nodes[1]->engine->progress();
    assert_int_equal(nodes[1]->dead.size(), 1);
    assert_true(nodes[1]->dead_why[0].find("ordered message of") != std::string::npos);
    assert_int_equal(nodes[1]->engine->stats().protocol_errors, 1);
    assert_int_equal(nodes[1]->engine->stats().ordered_held, 0);
    assert_true(nodes[1]->received.empty());
}

// With a flush cookie the call also flushes what was sent before it: the
// flush completes within a round trip (three rounds; a delayed ACK would
// take five), and no bare ACK request goes (node 0 sends no ACK packet).
// Before it: posted puts (their batch asks for the ACK), a message whose
// last segment asks (a put), or one that does not (a small copied
// message: then the ordered message asks).  With nothing sent, RTTCC_DONE.
static void test_an_ordered_message_flushes_what_went_before(void **) {
    for (int before = 0; before < 4; ++before) {
        MemNetwork net(4000);
        auto nodes = make_nodes(net, 2);
        rttcc_engine h0{nodes[0]->engine, ""}, h1{nodes[1]->engine, ""};
        std::vector<uint8_t> dst(4096, 0), src = make_message(4, 4096);
        uint32_t window = 0, key = 0;
        assert_int_equal(rttcc_rma_window_open(&h1, &window), RTTCC_OK);
        assert_int_equal(rttcc_rma_expose(&h1, window, 0, dst.data(), dst.size(), &key), RTTCC_OK);
        iovec iov{src.data(), before == 1 ? src.size() : 8};
        if (before == 0)
            assert_int_equal(rttcc_rma_post(&h0, 1, key, 0, RTTCC_RMA_REPLACE, RTTCC_RMA_BYTE, src.data(), 64), RTTCC_DONE);
        if (before == 1) assert_int_equal(nodes[0]->engine->put(1, key, 0, kTag, &iov, 1, nullptr), RTTCC_DONE);
        if (before == 2) assert_int_equal(nodes[0]->engine->send(1, kTag, &iov, 1, nullptr), RTTCC_DONE);
        int cookie = 0;
        const int rc = nodes[0]->engine->send_ordered(1, kOrderedTag, kNote, sizeof kNote, &cookie);
        if (before == 3) {
            assert_int_equal(rc, RTTCC_DONE);
            continue;
        }
        assert_int_equal(rc, RTTCC_OK);
        assert_true(run_until(nodes, [&] { return position(nodes[0]->completed, &cookie) < nodes[0]->completed.size(); },
                              30e-6));
        assert_int_equal(nodes[0]->engine->stats().acks_tx, 0);
        assert_int_equal(ordered_deliveries(*nodes[1]), 1);
    }
}

// What the call refuses: the engine's own RMA tag, and more than a
// command-channel datagram's payload.
static void test_send_ordered_refuses_what_it_cannot_order(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2);
    std::vector<uint8_t> big(nodes[0]->engine->config().cmd_mtu, 1);
    assert_int_equal(nodes[0]->engine->send_ordered(1, RTTCC_TAG_RMA, kNote, sizeof kNote, nullptr), RTTCC_ERR_ARG);
    assert_int_equal(nodes[0]->engine->send_ordered(1, kOrderedTag, big.data(), big.size(), nullptr), RTTCC_ERR_ARG);
    assert_int_equal(nodes[0]->engine->send_ordered(5, kOrderedTag, kNote, sizeof kNote, nullptr), RTTCC_ERR_UNREACH);
}

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_an_ordered_message_follows_a_lost_message),
        cmocka_unit_test(test_an_ordered_message_follows_a_lost_put),
        cmocka_unit_test(test_an_ordered_message_follows_posted_operations),
        cmocka_unit_test(test_an_ordered_message_queues_behind_a_stalled_message),
        cmocka_unit_test(test_an_oversized_ordered_message_ends_the_peer),
        cmocka_unit_test(test_ordered_messages_keep_their_order),
        cmocka_unit_test(test_an_ordered_message_flushes_what_went_before),
        cmocka_unit_test(test_send_ordered_refuses_what_it_cannot_order),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
