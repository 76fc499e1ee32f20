// rttcc_sim's alltoall drivers at packet level: coll_rttcc's exchange (each
// policy) and tuned's pairwise, linear and Bruck over the real engines.
// Every block ends at its destination byte for byte, no faster than the
// hosts' links allow, and the same inputs give the same run.
#include <cstdio>

#include <sys/resource.h>

#include "cmocka_cxx.h"
#include "sim/alltoall.h"

using namespace rttcc::sim;
using rttcc::nanos;

namespace {

constexpr uint64_t kRate = 10'000'000'000ull;

Topology star(Fabric &f, size_t n) {
    LinkConfig l;
    l.bits_per_s = kRate;
    l.delay = 1000;
    l.queue_bytes = 1 << 20;
    return one_switch(f, n, l);
}

rttcc_exchange_params_t defaults(int policy) {
    rttcc_exchange_params_t xp;
    rttcc_exchange_params_defaults(&xp);
    xp.policy = policy;
    return xp;
}

// Each host sends (P - 1) blocks through its own link: none can end sooner.
double line_bound_us(size_t ranks, size_t block) { return (ranks - 1) * block * 8.0 / kRate * 1e6; }

AlltoallResult run(AlltoallAlgo algo, size_t ranks, size_t block, int policy = RTTCC_SCHED_ADAPTIVE) {
    Job job(ranks, star, default_job_config());
    return run_alltoall(job, algo, block, defaults(policy), rttcc::msec(2000));
}

}  // namespace

static void test_every_algorithm_delivers_every_block(void **) {
    const size_t ranks = 8, block = 65536;
    for (AlltoallAlgo a : {AlltoallAlgo::kRttcc, AlltoallAlgo::kPairwise, AlltoallAlgo::kLinear, AlltoallAlgo::kBruck}) {
        const AlltoallResult r = run(a, ranks, block);
        assert_true(r.finished);
        assert_int_equal(r.errors, 0);
        assert_int_equal(r.corrupt_bytes, 0);
        const double us = r.completion / 1e3;
        assert_true(us >= line_bound_us(ranks, block));
        assert_true(us < 4 * line_bound_us(ranks, block));
        print_message("%-8s 8 ranks x 64 KiB: %.1f us (line bound %.1f)\n", alltoall_algo_name(a), us,
                      line_bound_us(ranks, block));
    }
}

// Bruck with a rank count that is not a power of two (the last round's
// distance wraps), and rttcc's other policies.
static void test_odd_sizes_and_every_policy(void **) {
    const AlltoallResult b = run(AlltoallAlgo::kBruck, 7, 3000);
    assert_true(b.finished);
    assert_int_equal(b.corrupt_bytes, 0);
    for (int p : {RTTCC_SCHED_LINEAR, RTTCC_SCHED_GREEDY, RTTCC_SCHED_THRESHOLD, RTTCC_SCHED_BALANCED}) {
        const AlltoallResult r = run(AlltoallAlgo::kRttcc, 6, 300000, p);
        assert_true(r.finished);
        assert_int_equal(r.errors, 0);
        assert_int_equal(r.corrupt_bytes, 0);
        assert_true(r.completion / 1e3 >= line_bound_us(6, 300000));
    }
}

// A rank whose engine lost every datagram would never end: the run reports
// it unfinished, with the blocks it never got as corrupt.
static void test_an_unfinished_run_says_so(void **) {
    Job job(4, [](Fabric &f, size_t n) {
        Topology t = star(f, n);
        shape(f, t.hosts[3], 1000, 1600);  // 1 kbit/s: nothing of a 64 KiB block gets through in 50 ms
        return t;
    }, default_job_config());
    const AlltoallResult r = run_alltoall(job, AlltoallAlgo::kPairwise, 65536, defaults(RTTCC_SCHED_LINEAR),
                                          rttcc::msec(50));
    assert_false(r.finished);
    assert_true(r.corrupt_bytes >= 65536);
}

// Every algorithm sends from its start, not from its first poll a tick
// later: the same alltoall with a 5 us and a 50 us tick ends at the same
// time (4 KiB blocks go with the RTRs, driven by arrivals from then on).
static void test_the_start_does_not_wait_for_a_tick(void **) {
    for (AlltoallAlgo a : {AlltoallAlgo::kRttcc, AlltoallAlgo::kPairwise, AlltoallAlgo::kLinear}) {
        nanos took[2] = {};
        for (const int i : {0, 1}) {
            JobConfig jc = default_job_config();
            jc.tick = i ? 50'000 : 5'000;
            Job job(9, star, jc);
            const AlltoallResult r = run_alltoall(job, a, 4096, defaults(RTTCC_SCHED_ADAPTIVE), rttcc::msec(100));
            assert_true(r.finished);
            took[i] = r.completion;
        }
        print_message("%-8s 9 ranks x 4 KiB: %.1f us with a 5 us tick, %.1f with 50\n", alltoall_algo_name(a),
                      took[0] / 1e3, took[1] / 1e3);
        assert_int_equal(took[0], took[1]);
    }
}

// Bruck's largest message: 8 ranks send 4 blocks a round (distances 1, 3,
// 5, 7; 2, 3, 6, 7; 4-7), 7 ranks 3 (1, 3, 5; 2, 3, 6; 4, 5, 6), each with
// its (from, to) after the round's 8-byte header.  It is the run's
// largest: engines whose max_message is exactly that run it, one byte
// less fails it.
static void test_bruck_largest_message(void **) {
    assert_int_equal(bruck_largest_message(8, 1000), 8 + 4 * (8 + 1000));
    assert_int_equal(bruck_largest_message(7, 3000), 8 + 3 * (8 + 3000));
    assert_int_equal(bruck_largest_message(2, 64 << 20), 8 + 8 + (64 << 20));
    for (const uint32_t less : {0u, 1u}) {
        JobConfig jc = default_job_config();
        jc.engine.max_message = static_cast<uint32_t>(bruck_largest_message(7, 3000)) - less;
        Job job(7, star, jc);
        const AlltoallResult r =
            run_alltoall(job, AlltoallAlgo::kBruck, 3000, defaults(RTTCC_SCHED_ADAPTIVE), rttcc::msec(100));
        assert_true((r.finished && r.errors == 0) == (less == 0));
    }
}

// The memory estimate rttcc_sim refuses a job by tracks what one takes:
// this process's peak after a 32-rank alltoall of 64 KiB blocks (everything
// it ran before was smaller) is between half the estimate and the estimate.
static void test_memory_estimate_tracks_the_peak(void **) {
    const AlltoallResult r = run(AlltoallAlgo::kRttcc, 32, 65536);
    assert_true(r.finished);
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    const double peak = u.ru_maxrss * 1024.0, estimate = alltoall_memory_bytes(32, 65536, AlltoallAlgo::kRttcc);
    print_message("32 ranks x 64 KiB: peak %.0f MB, estimate %.0f MB\n", peak / 1e6, estimate / 1e6);
    assert_true(peak <= estimate);
    assert_true(peak >= estimate / 2);
    // Bruck keeps its rounds' messages; linear's blocks all arrive at once.
    assert_true(alltoall_memory_bytes(64, 65536, AlltoallAlgo::kBruck) >
                3 * alltoall_memory_bytes(64, 65536, AlltoallAlgo::kRttcc));
    assert_true(alltoall_memory_bytes(64, 65536, AlltoallAlgo::kLinear) >
                alltoall_memory_bytes(64, 65536, AlltoallAlgo::kPairwise));
}

static void test_same_inputs_same_run(void **) {
    const AlltoallResult a = run(AlltoallAlgo::kRttcc, 8, 100000), b = run(AlltoallAlgo::kRttcc, 8, 100000);
    assert_true(a.finished && b.finished);
    assert_int_equal(a.completion, b.completion);
    assert_true(a.rank_end == b.rank_end);
}

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_algorithm_delivers_every_block),
        cmocka_unit_test(test_odd_sizes_and_every_policy),
        cmocka_unit_test(test_an_unfinished_run_says_so),
        cmocka_unit_test(test_same_inputs_same_run),
        cmocka_unit_test(test_the_start_does_not_wait_for_a_tick),
        cmocka_unit_test(test_bruck_largest_message),
        cmocka_unit_test(test_memory_estimate_tracks_the_peak),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
