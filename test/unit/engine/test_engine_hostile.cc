// Valid but hostile datagrams: signed with the right key (a peer of the job
// that misbehaves, or a leaked key), so they pass every check a stranger's
// would fail.  What they may make the engine hold stays bounded (reassembly.h),
// and no message is delivered but whole, each byte once.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "engine_harness.h"
#include "engine/mac.h"

using namespace rttcc;
using namespace rttcc_test;

namespace {

// Forges chunks of messages from node 0 to node 1 on the data channel,
// signed as node 0 signs them (with node 1's key).
struct Forger {
    MemNetwork &net;
    std::vector<std::unique_ptr<Node>> &nodes;
    std::vector<uint8_t> bytes = make_message(77, 1 << 20);

    seq_t next() const { return nodes[1]->engine->peer(0)->rx.next(); }
    void chunk(seq_t seq, uint32_t msg_id, uint32_t len, uint32_t offset, uint16_t n) {
        PacketHeader h = forged_header(PacketType::CHUNK, n);
        h.tag = 1;
        h.seq = seq;
        h.tx_id = transmission_id(seq, 0);
        h.msg_id = msg_id;
        h.msg_len = len;
        h.chunk_offset = offset;
        iovec p{bytes.data() + offset, n};
        h.mac = datagram_mac(RTTCC_AUTH_HEADER, published_key(*nodes[1]), h, &p, 1);
        inject(net, 0, 1, kData, h, std::vector<uint8_t>(bytes.begin() + offset, bytes.begin() + offset + n));
    }
    // Node 1 takes in what was forged; node 0 (which sent none of it) never hears the ACKs.
    void deliver() {
        for (int i = 0; i < 4; ++i) nodes[1]->engine->progress();
        std::lock_guard<std::mutex> g(net.mutex());
        net.queue(0, kCmd).clear();
        net.queue(0, kData).clear();
    }
};

// Resident memory of this process, KiB.
long rss_kib() {
    FILE *f = std::fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && std::fgets(line, sizeof line, f))
        if (std::sscanf(line, "VmRSS: %ld", &kib) == 1) break;
    if (f) std::fclose(f);
    return kib;
}

}  // namespace

// [0,600) twice under two sequence numbers, then [600,1000): delivered
// once, each byte as sent (counting bytes delivered it after the second,
// its last 400 bytes never written).
static void test_overlapping_chunks_never_deliver_stale_bytes(void **) {
    MemNetwork net(9000);
    auto nodes = make_nodes(net, 2);
    Forger f{net, nodes};
    const seq_t s = f.next();
    f.chunk(s, 5, 1000, 0, 600);
    f.chunk(s + 1, 5, 1000, 0, 600);
    f.deliver();
    f.chunk(s + 2, 5, 1000, 600, 400);
    f.deliver();
    assert_int_equal(nodes[1]->received.size(), 1);
    assert_memory_equal(nodes[1]->received[0].bytes.data(), f.bytes.data(), 1000);
    assert_int_equal(nodes[1]->engine->stats().dup_chunks, 1);
}

// Message ids opened and never finished, in order: each new one proves the
// one before will never be whole, so one is held at a time.
static void test_messages_never_finished_are_freed(void **) {
    MemNetwork net(9000);
    auto nodes = make_nodes(net, 2);
    Forger f{net, nodes};
    for (uint32_t id = 1; id <= 2000; ++id) {
        f.chunk(f.next(), id, 1 << 20, 0, 80);
        f.deliver();
    }
    assert_int_equal(nodes[1]->engine->peer(0)->reassembly.active(), 1);
    assert_int_equal(nodes[1]->engine->stats().reassembly_abandoned, 1999);
}

// Behind a hole that never fills: no more partial messages than the window
// allows a legal sender (W/2 + 1), the rest refused unacknowledged.
static void test_messages_behind_a_hole_are_bounded(void **) {
    MemNetwork net(9000);
    auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) { c.window = 256; });
    Forger f{net, nodes};
    const seq_t hole = f.next();
    for (uint32_t i = 1; i < 256; ++i) f.chunk(hole + i, i, 1 << 20, 0, 80);
    f.deliver();
    assert_int_equal(nodes[1]->engine->peer(0)->reassembly.active(), 256 / 2 + 1);
    assert_int_equal(nodes[1]->engine->stats().drop_undeliverable, 255 - (256 / 2 + 1));
}

// One message with a hole after every byte: at most W + 1 spans.
static void test_a_message_full_of_holes_is_bounded(void **) {
    MemNetwork net(9000);
    auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) { c.window = 256; });
    Forger f{net, nodes};
    for (uint32_t i = 0; i < 1000; ++i) {
        f.chunk(f.next(), 9, 1 << 20, 2 * i, 1);
        f.deliver();
    }
    assert_int_equal(nodes[1]->engine->peer(0)->reassembly.spans(), 256 + 1);
    assert_true(nodes[1]->engine->stats().drop_undeliverable > 0);
}

// One flood, from a fresh pair of engines in a child process (so that no
// other test's memory is counted): what node 1's resident memory grew by,
// KiB, and what it holds and delivered after.
struct Flood {
    long rss_kib;
    size_t held;
    size_t delivered;
};
enum class Kind { kNeverFinished, kOverlapping, kBehindAHole };

Flood flood(Kind kind) {
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    const pid_t child = fork();
    assert_true(child >= 0);
    if (child > 0) {
        close(fds[1]);
        Flood r{};
        assert_int_equal(read(fds[0], &r, sizeof r), sizeof r);
        close(fds[0]);
        int status;
        waitpid(child, &status, 0);
        return r;
    }
    close(fds[0]);
    MemNetwork net(65000);
    auto nodes = make_nodes(net, 2);
    Forger f{net, nodes};
    const long base = rss_kib();
    const seq_t first = f.next();
    switch (kind) {
        case Kind::kNeverFinished:  // 20000 ids of 1 MiB, one 8000-byte chunk each, in order
            for (uint32_t id = 1; id <= 20000; ++id) {
                f.chunk(first + id - 1, id, 1 << 20, 0, 8000);
                if (id % 64 == 0) f.deliver();
            }
            break;
        case Kind::kOverlapping:  // 20000 chunks of 60000 bytes over [0, 60000) of one 1 MiB message
            for (uint32_t k = 0; k < 20000; ++k) {
                f.chunk(first + k % 4096, 1, 1 << 20, 0, 60000);
                if (k % 64 == 0) f.deliver();
            }
            break;
        case Kind::kBehindAHole:  // the window behind a hole full of 60000-byte chunks (UDP on one
            for (seq_t seq = first + 1; seq_diff(seq, first) < 4096;) {  // host), 17 to a 1 MiB message
                const uint32_t id = seq;
                for (uint32_t off = 0; off + 60000 < (1 << 20) && seq_diff(seq, first) < 4096; off += 60000)
                    f.chunk(seq++, id, 1 << 20, off, 60000);
                f.deliver();
            }
            break;
    }
    f.deliver();
    const Flood r{rss_kib() - base, nodes[1]->engine->peer(0)->reassembly.active(), nodes[1]->received.size()};
    if (write(fds[1], &r, sizeof r) != sizeof r) _exit(1);
    _exit(0);
}

// The figures, with the default window (4096) and reassembly_max_mb (256).
// (Resident memory is printed, not checked: a sanitizer's shadow memory
// counts in it.)
static void test_rss_under_hostile_floods(void **) {
    const char *names[] = {"20000 ids never finished", "20000 overlapping chunks", "a hole, then the window full"};
    const Kind kinds[] = {Kind::kNeverFinished, Kind::kOverlapping, Kind::kBehindAHole};
    const size_t most_held[] = {1, 1, 4095 / 17 + 1};  // the last: 17 chunks a message, in the window
    for (int i = 0; i < 3; ++i) {
        const Flood r = flood(kinds[i]);
        print_message("%s: RSS %+ld KiB, %zu messages held, %zu delivered\n", names[i], r.rss_kib, r.held, r.delivered);
        assert_true(r.held <= most_held[i]);
        assert_int_equal(r.delivered, 0);  // nothing was ever whole
    }
}

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_overlapping_chunks_never_deliver_stale_bytes),
        cmocka_unit_test(test_messages_never_finished_are_freed),
        cmocka_unit_test(test_messages_behind_a_hole_are_bounded),
        cmocka_unit_test(test_a_message_full_of_holes_is_bounded),
        cmocka_unit_test(test_rss_under_hostile_floods),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
