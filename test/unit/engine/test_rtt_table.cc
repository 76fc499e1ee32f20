// The RTT table: rows read back what was written, unknown rows say so, and
// a reader racing a writer never sees a torn row.
#include <atomic>
#include <thread>

#include "cmocka_cxx.h"
#include "clock/clock.h"
#include "engine/rtt_table.h"

using namespace rttcc;

// A row whose every field is derived from k, so a mix of two writes shows.
static RttRowData row_of(uint64_t k) {
    RttRowData r{};
    r.srtt_ns = k;
    r.rttvar_ns = k + 1;
    r.min_ns = k + 2;
    r.max_ns = k + 3;
    r.latest_ns = k + 4;
    r.samples = k + 5;
    r.probe_samples = k + 6;
    r.owd_fwd_ns = static_cast<int64_t>(k + 7);
    r.owd_rev_ns = -static_cast<int64_t>(k);
    r.losses = k + 9;
    r.cwnd = static_cast<double>(k) / 2;
    r.bytes_tx = k * 3;
    r.last_update_ns = k + 100;
    r.flags = static_cast<uint32_t>(k);
    return r;
}

static bool consistent(const RttRowData &r) {
    const uint64_t k = r.srtt_ns;
    const RttRowData want = row_of(k);
    return std::memcmp(&r, &want, sizeof r) == 0;
}

static void test_unwritten_rows_are_unknown(void **) {
    RttTable t;
    RttRowData r;
    assert_false(t.read(0, &r));
    assert_false(t.read(5000000, &r));  // chunk never allocated
    assert_non_null(t.row(7));
    assert_false(t.read(7, &r));        // allocated but never written
    assert_null(t.row(RttTable::kChunkRows * RttTable::kChunks));  // past the end
}

static void test_rows_read_back(void **) {
    RttTable t;
    for (uint32_t peer : {0u, 1u, 1023u, 1024u, 16777215u}) t.row(peer)->write(row_of(peer + 10));
    for (uint32_t peer : {0u, 1u, 1023u, 1024u, 16777215u}) {
        RttRowData r;
        assert_true(t.read(peer, &r));
        assert_int_equal(r.srtt_ns, peer + 10);
        assert_true(consistent(r));
    }
    assert_ptr_equal(t.row(1024), t.row(1024));  // rows never move
}

static void test_reader_never_sees_a_torn_row(void **) {
    RttTable t;
    RttRow *row = t.row(42);
    row->write(row_of(1));
    std::atomic<bool> stop{false};
    std::thread writer([&] {
        for (uint64_t k = 2; !stop.load(std::memory_order_relaxed); ++k) row->write(row_of(k));
    });
    uint64_t reads = 0, torn = 0, last = 0, backwards = 0;
    const nanos end = monotonic_now() + msec(300);
    while (monotonic_now() < end) {
        RttRowData r;
        assert_true(t.read(42, &r));
        torn += !consistent(r);
        backwards += r.srtt_ns < last;  // one writer: values only grow
        last = r.srtt_ns;
        ++reads;
    }
    stop = true;
    writer.join();
    print_message("%llu reads, last value %llu\n", static_cast<unsigned long long>(reads),
                  static_cast<unsigned long long>(last));
    assert_true(reads > 1000);
    assert_true(last > 1000);  // the writer really ran concurrently
    assert_int_equal(torn, 0);
    assert_int_equal(backwards, 0);
}

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unwritten_rows_are_unknown),
        cmocka_unit_test(test_rows_read_back),
        cmocka_unit_test(test_reader_never_sees_a_torn_row),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
