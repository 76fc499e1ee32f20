// reassembly.h and coverage.h: a message is whole when each byte arrived
// exactly once; what a peer holds is bounded by the receive window; a
// message a later one proves incomplete for good is freed.
#include <cstring>
#include <vector>

#include "cmocka_cxx.h"
#include "engine/reassembly.h"
#include "engine/recv_window.h"

using namespace rttcc;

namespace {

constexpr uint32_t kWindow = 64;

struct Fixture {
    BufferPool buffers{1 << 20, 64 << 20};
    Reassembly r{kWindow};
    RecvWindow rx{kWindow, 1000};
    uint32_t abandoned = 0;
    bool no_memory = false;
    std::vector<uint8_t> bytes = std::vector<uint8_t>(1 << 20);

    Reassembly::Chunk chunk(seq_t seq, uint32_t msg, uint32_t len, uint32_t offset, uint32_t n) {
        return {seq, msg, len, 1, offset, n, bytes.data() + offset};
    }
    seq_t next() const { return rx.next(); }
    // Takes a chunk as the engine does once it fits: its sequence number
    // is recorded first.
    Reassembly::Message *arrive(seq_t seq, uint32_t msg, uint32_t len, uint32_t offset, uint32_t n) {
        assert_int_equal(static_cast<int>(rx.arrive(seq)), static_cast<int>(RecvWindow::Arrival::kNew));
        return r.add(buffers, chunk(seq, msg, len, offset, n), rx.next(), &abandoned, &no_memory);
    }
    Reassembly::Fit fit(seq_t seq, uint32_t msg, uint32_t len, uint32_t offset, uint32_t n) {
        return r.fit(buffers, chunk(seq, msg, len, offset, n), rx.next());
    }
    // Takes a whole message out and frees its buffer, as the engine does once it delivered it.
    void release(Reassembly::Message *m) {
        const Reassembly::Whole w = r.take(m);
        buffers.put(w.buf, w.len);
    }
};

}  // namespace

static void test_spans_merge_and_refuse_overlaps(void **) {
    Coverage c;
    assert_int_equal(c.add(100, 50), 1);
    assert_int_equal(c.add(0, 50), 1);
    assert_int_equal(c.spans(), 2);
    assert_true(c.overlaps(149, 1));
    assert_true(c.overlaps(40, 100));  // covers the hole and both ends
    assert_false(c.overlaps(50, 50));  // exactly the hole
    assert_int_equal(c.added_spans(50, 50), -1);
    assert_int_equal(c.add(50, 50), -1);
    assert_int_equal(c.spans(), 1);
    assert_true(c.whole(150));
    assert_false(c.whole(151));
    assert_int_equal(c.add(150, 10), 0);
    assert_true(c.whole(160));
    // A chunk where the last span ends extends it, also with a hole before.
    Coverage d;
    assert_int_equal(d.add(0, 50), 1);
    assert_int_equal(d.add(100, 50), 1);
    assert_false(d.overlaps(150, 10));
    assert_true(d.overlaps(149, 10));
    assert_int_equal(d.added_spans(150, 10), 0);
    assert_int_equal(d.add(150, 10), 0);
    assert_int_equal(d.spans(), 2);
    assert_true(d.overlaps(155, 1));
    assert_int_equal(d.add(50, 50), -1);
    assert_true(d.whole(160));
}

// The old count of bytes made [0,600) twice a whole 1000-byte message,
// its last 400 bytes never written.  The second one is refused; the
// message is whole when [600,1000) comes, with the bytes sent.
static void test_an_overlapping_chunk_never_completes_a_message(void **) {
    Fixture f;
    for (size_t i = 0; i < 1000; ++i) f.bytes[i] = static_cast<uint8_t>(i * 7);
    assert_null(f.arrive(1000, 5, 1000, 0, 600));
    assert_int_equal(f.fit(1001, 5, 1000, 0, 600), static_cast<int>(Reassembly::Fit::kOverlap));
    assert_int_equal(f.fit(1001, 5, 1000, 599, 2), static_cast<int>(Reassembly::Fit::kOverlap));
    assert_null(f.arrive(1001, 5, 1000, 0, 600));  // add() leaves it alone too
    assert_int_equal(f.r.spans(), 1);
    Reassembly::Message *m = f.arrive(1002, 5, 1000, 600, 400);
    assert_non_null(m);
    assert_memory_equal(m->buf, f.bytes.data(), 1000);
    const Reassembly::Whole w = f.r.take(m);
    assert_int_equal(f.r.active(), 0);
    assert_int_equal(f.r.spans(), 0);
    assert_true(w.buf && w.len == 1000 && w.tag == 1);
    assert_memory_equal(w.buf, f.bytes.data(), 1000);
    assert_int_not_equal(f.buffers.in_use(), 0);  // the taker's until it gives the buffer back
    f.buffers.put(w.buf, w.len);
    assert_int_equal(f.buffers.in_use(), 0);
}

// Message ids advance with every message, puts too, and a peer's chunked
// messages may be 2^31 ids and 2^32 sequence numbers apart.  The newest
// message kept from long ago made the next one look older than it and
// already settled: every chunk refused, never acknowledged, the peer
// declared dead.  With no message partly there it is forgotten.
static void test_a_message_long_after_the_last_one_is_not_settled(void **) {
    Fixture f;
    uint32_t abandoned = 0;
    bool no_memory = false;
    assert_null(f.r.add(f.buffers, f.chunk(1000, 100, 2000, 0, 1000), 1001, &abandoned, &no_memory));
    Reassembly::Message *m = f.r.add(f.buffers, f.chunk(1001, 100, 2000, 1000, 1000), 1002, &abandoned, &no_memory);
    assert_non_null(m);
    f.release(m);
    const uint32_t later = 100u + (1u << 31) + 5;  // 2^31 + 5 messages later: seq_lt(later, 100)
    const seq_t seq = 1050;                        // 2^32 + 50 segments later: seq_lt(1000, seq)
    assert_int_equal(static_cast<int>(f.r.fit(f.buffers, f.chunk(seq, later, 2000, 0, 1000), seq)),
                     static_cast<int>(Reassembly::Fit::kYes));
    assert_null(f.r.add(f.buffers, f.chunk(seq, later, 2000, 0, 1000), seq + 1, &abandoned, &no_memory));
    assert_int_equal(abandoned, 0);
    m = f.r.add(f.buffers, f.chunk(seq + 1, later, 2000, 1000, 1000), seq + 2, &abandoned, &no_memory);
    assert_non_null(m);
    assert_memory_equal(m->buf, f.bytes.data(), 2000);
    f.release(m);
    assert_int_equal(f.buffers.in_use(), 0);
}

static void test_chunks_in_any_order_complete_once(void **) {
    Fixture f;
    for (size_t i = 0; i < 5000; ++i) f.bytes[i] = static_cast<uint8_t>(i * 13 + 1);
    const uint32_t order[] = {3, 0, 4, 1, 2};  // chunks of 1000 bytes
    const seq_t s = f.next();
    for (int k = 0; k < 4; ++k) assert_null(f.arrive(s + order[k], 9, 5000, order[k] * 1000, 1000));
    assert_int_equal(f.r.spans(), 2);  // [0,2000) and [3000,5000)
    Reassembly::Message *m = f.arrive(s + order[4], 9, 5000, order[4] * 1000, 1000);
    assert_non_null(m);
    assert_memory_equal(m->buf, f.bytes.data(), 5000);
    assert_int_equal(f.abandoned, 0);
}

static void test_a_chunk_must_agree_with_its_message(void **) {
    Fixture f;
    assert_null(f.arrive(1000, 5, 1000, 0, 100));
    assert_int_equal(f.fit(1001, 5, 2000, 100, 100), static_cast<int>(Reassembly::Fit::kMismatch));
    Reassembly::Chunk other_tag = f.chunk(1001, 5, 1000, 100, 100);
    other_tag.tag = 2;
    assert_int_equal(static_cast<int>(f.r.fit(f.buffers, other_tag, f.next())),
                     static_cast<int>(Reassembly::Fit::kMismatch));
}

// Behind a hole at `next`, a sender can open no more than W/2 + 1 messages:
// a legal one cannot have more partly arrived (reassembly.h).
static void test_partial_messages_are_bounded_by_the_window(void **) {
    Fixture f;
    const seq_t hole = f.next();
    uint32_t taken = 0;
    for (uint32_t i = 1; i < kWindow; ++i) {
        if (f.fit(hole + i, 100 + i, 4000, 0, 10) != Reassembly::Fit::kYes) continue;
        f.arrive(hole + i, 100 + i, 4000, 0, 10);
        ++taken;
    }
    assert_int_equal(taken, kWindow / 2 + 1);
    assert_int_equal(f.r.active(), kWindow / 2 + 1);
    assert_int_equal(f.fit(hole + kWindow, 100 + kWindow, 4000, 0, 10), static_cast<int>(Reassembly::Fit::kFull));
}

// One message with a hole between every chunk: at most W + 1 spans.
static void test_spans_are_bounded_by_the_window(void **) {
    Fixture f;
    uint32_t taken = 0;
    for (uint32_t i = 0; i < 4 * kWindow; ++i) {
        const seq_t s = f.next();
        if (f.fit(s, 7, 100000, 2 * i, 1) != Reassembly::Fit::kYes) break;
        f.arrive(s, 7, 100000, 2 * i, 1);
        ++taken;
    }
    assert_int_equal(taken, kWindow + 1);
    assert_int_equal(f.r.spans(), kWindow + 1);
    assert_int_equal(f.fit(f.next(), 7, 100000, 2 * kWindow - 1, 1), static_cast<int>(Reassembly::Fit::kYes));  // joins two
}

// Messages opened and never finished, each chunk in order: each new one
// shows the one before can never be whole, which is freed at once.
static void test_a_message_a_later_one_settles_is_abandoned(void **) {
    Fixture f;
    uint32_t abandoned = 0;
    for (uint32_t id = 1; id <= 1000; ++id) {
        assert_null(f.arrive(f.next(), id, 1 << 20, 0, 80));
        abandoned += f.abandoned;
    }
    assert_int_equal(abandoned, 999);
    assert_int_equal(f.r.active(), 1);
    assert_int_equal(f.buffers.in_use(), 1 << 20);
    // A chunk of a settled message is refused (it cannot be legal).
    assert_int_equal(f.fit(f.next(), 3, 1 << 20, 80, 80), static_cast<int>(Reassembly::Fit::kSettled));
}

// Behind a hole nothing is proven: the messages stay until the hole fills
// and a later chunk arrives, then all those left incomplete go.
static void test_messages_behind_a_hole_wait_for_it(void **) {
    Fixture f;
    const seq_t hole = f.next();
    for (uint32_t i = 1; i <= 10; ++i) f.arrive(hole + i, i, 4000, 0, 10);
    assert_int_equal(f.r.active(), 10);
    assert_int_equal(f.abandoned, 0);
    f.rx.arrive(hole);  // the hole was a segment of another kind
    f.arrive(f.next(), 11, 4000, 0, 10);
    assert_int_equal(f.abandoned, 10);
    assert_int_equal(f.r.active(), 1);
}

// Legal traffic is never abandoned: message 2's first chunk arrives before
// message 1's lost one is resent, and message 1 still completes.
static void test_a_late_chunk_of_an_earlier_message_is_taken(void **) {
    Fixture f;
    const seq_t s = f.next();
    f.arrive(s, 1, 2000, 0, 1000);
    // s + 1 (message 1's second chunk) is lost; message 2 goes on.
    f.arrive(s + 2, 2, 2000, 0, 1000);
    assert_int_equal(f.fit(s + 1, 1, 2000, 1000, 1000), static_cast<int>(Reassembly::Fit::kYes));
    Reassembly::Message *m = f.arrive(s + 1, 1, 2000, 1000, 1000);  // next jumps past s + 2 now
    assert_non_null(m);
    assert_int_equal(m->msg_id, 1);
    f.release(m);
    assert_non_null(f.arrive(s + 3, 2, 2000, 1000, 1000));
    assert_int_equal(f.abandoned, 0);
}

static void test_slots_keep_their_storage(void **) {
    Fixture f;
    for (uint32_t id = 1; id <= 3; ++id) {
        const seq_t s = f.next();
        f.arrive(s, id, 3000, 2000, 1000);
        f.arrive(s + 1, id, 3000, 0, 1000);
        Reassembly::Message *m = f.arrive(s + 2, id, 3000, 1000, 1000);
        assert_non_null(m);
        f.release(m);
    }
    const size_t warm = f.r.memory();
    for (uint32_t id = 4; id <= 100; ++id) {
        const seq_t s = f.next();
        f.arrive(s, id, 3000, 2000, 1000);
        f.arrive(s + 1, id, 3000, 0, 1000);
        f.release(f.arrive(s + 2, id, 3000, 1000, 1000));
    }
    assert_int_equal(f.r.memory(), warm);
}

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spans_merge_and_refuse_overlaps),
        cmocka_unit_test(test_an_overlapping_chunk_never_completes_a_message),
        cmocka_unit_test(test_a_message_long_after_the_last_one_is_not_settled),
        cmocka_unit_test(test_chunks_in_any_order_complete_once),
        cmocka_unit_test(test_a_chunk_must_agree_with_its_message),
        cmocka_unit_test(test_partial_messages_are_bounded_by_the_window),
        cmocka_unit_test(test_spans_are_bounded_by_the_window),
        cmocka_unit_test(test_a_message_a_later_one_settles_is_abandoned),
        cmocka_unit_test(test_messages_behind_a_hole_wait_for_it),
        cmocka_unit_test(test_a_late_chunk_of_an_earlier_message_is_taken),
        cmocka_unit_test(test_slots_keep_their_storage),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
