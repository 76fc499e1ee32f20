// The UDP wire's receive ring and send grouping, on real loopback sockets.
#include <cstdint>
#include <utility>
#include <vector>

#include <unistd.h>

#include "cmocka_cxx.h"
#include "util/aligned_bytes.h"
#include "wire/private_net.h"
#include "wire/udp_pair.h"

using namespace rttcc;
using namespace rttcc_test;

namespace {

// The kernel copies each datagram (or GRO buffer) to the start of a
// receive slot; its copy runs at half speed into a slot that does not start
// on a cache line (util/aligned_bytes.h).  Three sizes: three sends, so
// three slots on each channel.
void test_receive_slots_start_on_a_cache_line(void **) {
    Pair p = open_pair(RTTCC_TS_USER);
    for (int c = 0; c < kChannels; ++c) {
        const Channel ch = static_cast<Channel>(c);
        std::vector<uint8_t> b1(100, 1), b2(333, 2), b3(1000, 3);
        TxDatagram d[3] = {datagram(p.to[ch], b1, 0), datagram(p.to[ch], b2, 0), datagram(p.to[ch], b3, 0)};
        assert_int_equal(p.a->tx_burst(ch, d, 3), 3);
        const Received rx = receive(*p.b, ch, 3);
        assert_int_equal(rx.size(), 3);
        for (size_t i = 0; i < rx.size(); ++i) {
            assert_int_equal(rx[i].len, d[i].iov[0].iov_len);
            assert_int_equal(reinterpret_cast<uintptr_t>(rx.slots[i]) % AlignedBytes::kLine, 0);
        }
    }
}

// Pieces of a GSO group that continue each other go to the kernel as one
// (datagrams laid out in one buffer, Engine::copy_message); the others stay
// apart.  Four datagrams of a header piece and a payload piece: the first
// two laid out in one buffer, the third's header elsewhere, the fourth
// continuing the third's payload.  Each arrives as it was sent.
void test_pieces_that_continue_each_other_are_joined(void **) {
    Pair p = open_pair(RTTCC_TS_USER);
    constexpr size_t kHeader = 8, kSize = 1000;
    std::vector<uint8_t> buf(4 * kSize), other(kHeader);
    for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<uint8_t>(i * 7 + (i >> 8));
    for (size_t i = 0; i < other.size(); ++i) other[i] = static_cast<uint8_t>(0xa0 + i);
    TxDatagram d[4];
    std::vector<std::vector<uint8_t>> want(4);
    for (int k = 0; k < 4; ++k) {
        d[k] = TxDatagram{};
        d[k].dest = p.to[kData];
        uint8_t *at = buf.data() + k * kSize;
        uint8_t *header = k == 2 ? other.data() : at;
        d[k].iov[0] = {header, kHeader};
        d[k].iov[1] = {at + kHeader, kSize - kHeader};
        d[k].iovcnt = 2;
        want[k].assign(header, header + kHeader);
        want[k].insert(want[k].end(), at + kHeader, at + kSize);
    }
    assert_int_equal(p.a->tx_burst(kData, d, 4), 4);
    const Received rx = receive(*p.b, kData, 4);
    assert_int_equal(rx.size(), 4);
    for (int k = 0; k < 4; ++k) {
        assert_int_equal(rx[k].len, kSize);
        assert_memory_equal(rx[k].buf, want[k].data(), kSize);
    }
}

// A short datagram followed by a full one to the same peer (a message's
// last segment, then the next message's first) is padded to the group's
// size so that the group goes on: four datagrams of 1000, 400, 1000 and 400
// bytes leave as one GSO group and arrive in one receive slot, back to back
// at 1000 bytes apart, each starting with what was sent; the padded one
// ends in zeros, the group's last is not padded.
void test_a_short_datagram_is_padded_to_keep_its_group(void **) {
    Pair p = open_pair(RTTCC_TS_USER);
    if (!p.a->gso()) skip();
    std::vector<std::vector<uint8_t>> bytes;
    TxDatagram d[4];
    for (int k = 0; k < 4; ++k) {
        bytes.emplace_back(k % 2 ? 400 : 1000);
        for (size_t i = 0; i < bytes[k].size(); ++i) bytes[k][i] = static_cast<uint8_t>(k * 31 + i * 7 + 1);
    }
    for (int k = 0; k < 4; ++k) d[k] = datagram(p.to[kData], bytes[k], 0);
    assert_int_equal(p.a->tx_burst(kData, d, 4), 4);
    const Received rx = receive(*p.b, kData, 4);
    assert_int_equal(rx.size(), 4);
    for (int k = 0; k < 4; ++k) assert_memory_equal(rx[k].buf, bytes[k].data(), bytes[k].size());
    for (int k = 0; k < 3; ++k) assert_ptr_equal(rx.slots[k + 1], rx.slots[k] + 1000);
    assert_int_equal(rx[1].len, 1000);
    const std::vector<uint8_t> zeros(600, 0);
    assert_memory_equal(rx[1].buf + 400, zeros.data(), zeros.size());
    assert_int_equal(rx[3].len, 400);
}

// A short datagram followed by a shorter one that is the burst's last to
// that peer (a message's last segment, then a small message: a fence's) is
// padded too: 1000, 400 and 100 bytes leave as one group and arrive back to
// back.  With another datagram after the 100 the 400 ends its group (the
// rule pads once, at a burst's tail), and the two that follow make one.
void test_a_short_datagram_before_the_last_is_padded(void **) {
    Pair p = open_pair(RTTCC_TS_USER);
    if (!p.a->gso()) skip();
    for (const bool tail : {true, false}) {
        std::vector<std::vector<uint8_t>> bytes{std::vector<uint8_t>(1000), std::vector<uint8_t>(400),
                                                std::vector<uint8_t>(100)};
        if (!tail) bytes.emplace_back(100);
        const int n = static_cast<int>(bytes.size());
        TxDatagram d[4];
        for (int k = 0; k < n; ++k) {
            for (size_t i = 0; i < bytes[k].size(); ++i) bytes[k][i] = static_cast<uint8_t>(k * 29 + i * 5 + 3);
            d[k] = datagram(p.to[kData], bytes[k], 0);
        }
        assert_int_equal(p.a->tx_burst(kData, d, n), n);
        const Received rx = receive(*p.b, kData, n);
        assert_int_equal(rx.size(), n);
        for (int k = 0; k < n; ++k) assert_memory_equal(rx[k].buf, bytes[k].data(), bytes[k].size());
        assert_ptr_equal(rx.slots[1], rx.slots[0] + 1000);
        if (tail) {
            assert_int_equal(rx[1].len, 1000);
            assert_ptr_equal(rx.slots[2], rx.slots[1] + 1000);
            assert_int_equal(rx[2].len, 100);
        } else {
            assert_int_equal(rx[1].len, 400);
            assert_ptr_not_equal(rx.slots[2], rx.slots[1] + 1000);
            assert_ptr_equal(rx.slots[3], rx.slots[2] + 100);
        }
    }
}

// A group of many pieces, or of a few and small, is copied into one and
// sent so; a large group of a few pieces is not.  Datagrams of an 8-byte
// header from one array and a payload from a buffer with gaps: 8 of 992
// bytes (16 pieces), staged; 2 of 2992 (4 pieces, 6000 bytes), not; 1 of
// 100 (2 pieces), staged.  Each datagram arrives as it was sent.
void test_groups_of_many_or_small_pieces_go_as_one(void **) {
    Pair p = open_pair(RTTCC_TS_USER);
    if (!p.a->gso()) skip();
    constexpr size_t kHeader = 8;
    struct Case {
        int count;
        size_t payload;
        uint64_t staged;
    };
    for (const Case c : {Case{8, 992, 1}, Case{2, 2992, 0}, Case{1, 100, 1}}) {
        const size_t gap = 100;
        std::vector<uint8_t> headers(c.count * kHeader), payloads(c.count * (c.payload + gap));
        for (size_t i = 0; i < headers.size(); ++i) headers[i] = static_cast<uint8_t>(0x40 + i * 3);
        for (size_t i = 0; i < payloads.size(); ++i) payloads[i] = static_cast<uint8_t>(i * 11 + (i >> 8));
        TxDatagram d[8];
        std::vector<std::vector<uint8_t>> want(c.count);
        for (int k = 0; k < c.count; ++k) {
            d[k] = TxDatagram{};
            d[k].dest = p.to[kData];
            uint8_t *header = headers.data() + k * kHeader, *payload = payloads.data() + k * (c.payload + gap);
            d[k].iov[0] = {header, kHeader};
            d[k].iov[1] = {payload, c.payload};
            d[k].iovcnt = 2;
            want[k].assign(header, header + kHeader);
            want[k].insert(want[k].end(), payload, payload + c.payload);
        }
        const uint64_t before = p.a->staged_groups();
        assert_int_equal(p.a->tx_burst(kData, d, c.count), c.count);
        assert_int_equal(p.a->staged_groups() - before, c.staged);
        const Received rx = receive(*p.b, kData, c.count);
        assert_int_equal(rx.size(), c.count);
        for (int k = 0; k < c.count; ++k) {
            assert_int_equal(rx[k].len, kHeader + c.payload);
            assert_memory_equal(rx[k].buf, want[k].data(), kHeader + c.payload);
        }
    }
}

// A GSO group whose segments are larger than the route's MTU allows (a
// route with `mtu 1500` on a 9000-byte link, a learned PMTU) is refused by
// the kernel (EMSGSIZE; EINVAL on older kernels), while each datagram alone
// goes (fragmented).  Behind a 1500-byte route on lo, four datagrams of
// 2000 bytes are taken and arrive, no failure is reported, and GSO stays on:
// four of 1000 to the same peer still leave as one group (one receive slot).
void test_a_group_over_the_route_mtu_goes_without_gso(void **) {
    Pair p;
    {
        PrivateLoopback net;
        std::string why;
        if (!net.enter(1500, &why)) {
            print_message("skipped: %s\n", why.c_str());
            skip();
        }
        p = open_pair(RTTCC_TS_USER);
    }
    if (!p.a->gso()) skip();
    for (const size_t size : {size_t{2000}, size_t{1000}}) {
        std::vector<std::vector<uint8_t>> bytes;
        TxDatagram d[4];
        for (int k = 0; k < 4; ++k) {
            bytes.emplace_back(size);
            for (size_t i = 0; i < size; ++i) bytes[k][i] = static_cast<uint8_t>(k * 37 + i * 3 + 1);
            d[k] = datagram(p.to[kData], bytes[k], 0);
        }
        assert_int_equal(p.a->tx_burst(kData, d, 4), 4);
        const Received rx = receive(*p.b, kData, 4);
        assert_int_equal(rx.size(), 4);
        for (int k = 0; k < 4; ++k) {
            assert_int_equal(rx[k].len, size);
            assert_memory_equal(rx[k].buf, bytes[k].data(), size);
        }
        WireFailure f[4];
        assert_int_equal(p.a->failures(f, 4), 0);
        assert_int_equal(p.a->tx_errors(), 0);
        assert_true(p.a->gso());
        if (size == 1000 && p.b->gro())
            for (int k = 0; k < 3; ++k) assert_ptr_equal(rx.slots[k + 1], rx.slots[k] + size);
    }
}

// sendmmsg reports an error only when it sent nothing: to a closed port and
// then an open one on loopback, the first datagram's ICMP port unreachable
// comes back during the call (a few sends give it time), the next send
// meets it (ECONNREFUSED) and the call returns a short count.  The wire
// sends the rest again, and failures() still names the closed port.
void test_a_short_sendmmsg_count_reads_the_error_queue(void **) {
    Pair p = open_pair(RTTCC_TS_USER);
    WireHandle closed;
    {
        Pair gone = open_pair(RTTCC_TS_USER);
        uint8_t addr[64];
        std::string err;
        const size_t len = gone.b->local_address(kCmd, addr, sizeof addr);
        assert_true(p.a->resolve(kCmd, addr, len, &closed, &err));
    }  // its sockets are closed now
    constexpr int kOpen = 16;
    std::vector<uint8_t> small(100, 5), large(200, 6);
    TxDatagram d[kOpen + 1] = {datagram(closed, small, 0)};
    for (int k = 1; k <= kOpen; ++k) d[k] = datagram(p.to[kCmd], k % 2 ? small : large, 0);  // a group each
    assert_int_equal(p.a->tx_burst(kCmd, d, kOpen + 1), kOpen + 1);
    assert_int_equal(receive(*p.b, kCmd, kOpen).size(), kOpen);
    WireFailure f[4];
    assert_int_equal(p.a->failures(f, 4), 1);
    assert_true(f[0].dest == closed);
    assert_int_equal(f[0].error, ECONNREFUSED);
}

// One progress pass as the engine makes it: ready(), then the command
// channel, then the data channel if ready() named it.  Returns what each
// channel gave; *data_polled says whether the data channel was asked.
std::pair<int, int> pass(UdpWire &w, bool *data_polled) {
    RxDatagram d[64];
    const unsigned mask = w.ready();
    const int cmd = w.rx_burst(kCmd, d, 64);
    *data_polled = mask & (1u << kData);
    return {cmd, *data_polled ? w.rx_burst(kData, d, 64) : 0};
}

// An idle data channel is polled every fourth pass; a pass whose command
// poll brought a datagram leaves that poll to the next pass, which makes it
// whatever the stride says, so a data datagram waits one pass at most.
void test_command_news_defers_an_idle_data_poll(void **) {
    Pair p = open_pair(RTTCC_TS_USER);
    bool polled = false;
    for (int i = 0; i < 2000; ++i) pass(*p.b, &polled);  // the data channel is idle now
    int busy = 0;
    for (int i = 0; i < 8; ++i) busy += (pass(*p.b, &polled), polled);
    assert_int_equal(busy, 2);  // every fourth pass
    // Find the pass before a stride poll, then send on both channels.
    while (pass(*p.b, &polled), !polled) {
    }
    for (int i = 0; i < 3; ++i) pass(*p.b, &polled);
    std::vector<uint8_t> c(40, 7), x(900, 9);
    TxDatagram dc = datagram(p.to[kCmd], c, 0), dx = datagram(p.to[kData], x, 0);
    assert_int_equal(p.a->tx_burst(kCmd, &dc, 1), 1);
    assert_int_equal(p.a->tx_burst(kData, &dx, 1), 1);
    const nanos deadline = monotonic_now() + msec(1000);
    std::pair<int, int> got{0, 0};
    while (monotonic_now() < deadline) {  // the command datagram and the stride's pass
        got = pass(*p.b, &polled);
        if (got.first) break;
    }
    assert_int_equal(got.first, 1);
    assert_true(polled);  // named by ready() ...
    assert_int_equal(got.second, 0);  // ... but left to the next pass
    got = pass(*p.b, &polled);
    assert_true(polled);
    assert_int_equal(got.first, 0);
    assert_int_equal(got.second, 1);
}

// recvmmsg pays an empty read after the last datagram it finds.  After an
// empty poll either channel asks for one datagram (the likely news is a
// lone message; on the data channel only with GRO); the next read takes the
// rest in one batch.  Without GRO the data channel reads whole batches.
void test_a_read_after_an_empty_poll_takes_one_datagram(void **) {
    Pair p = open_pair(RTTCC_TS_USER);
    for (const Channel ch : {kCmd, kData}) {
        const bool one = ch == kCmd || p.b->gro();
        RxDatagram d[64];
        assert_int_equal(p.b->rx_burst(ch, d, 64), 0);  // the empty poll
        std::vector<std::vector<uint8_t>> bytes{std::vector<uint8_t>(100, 1), std::vector<uint8_t>(200, 2),
                                                std::vector<uint8_t>(300, 3)};
        for (auto &b : bytes) {  // one send each: three datagrams, never one GRO group
            TxDatagram t = datagram(p.to[ch], b, 0);
            assert_int_equal(p.a->tx_burst(ch, &t, 1), 1);
        }
        usleep(20000);  // all three are in b's socket
        if (!one) {
            assert_int_equal(p.b->rx_burst(ch, d, 64), 3);
            continue;
        }
        assert_int_equal(p.b->rx_burst(ch, d, 64), 1);
        assert_int_equal(d[0].len, 100);
        assert_int_equal(p.b->rx_burst(ch, d, 64), 2);
        assert_int_equal(d[0].len, 200);
        assert_int_equal(d[1].len, 300);
    }
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_receive_slots_start_on_a_cache_line),
        cmocka_unit_test(test_pieces_that_continue_each_other_are_joined),
        cmocka_unit_test(test_a_short_datagram_is_padded_to_keep_its_group),
        cmocka_unit_test(test_a_short_datagram_before_the_last_is_padded),
        cmocka_unit_test(test_groups_of_many_or_small_pieces_go_as_one),
        cmocka_unit_test(test_a_group_over_the_route_mtu_goes_without_gso),
        cmocka_unit_test(test_a_short_sendmmsg_count_reads_the_error_queue),
        cmocka_unit_test(test_command_news_defers_an_idle_data_poll),
        cmocka_unit_test(test_a_read_after_an_empty_poll_takes_one_datagram),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
