// rttcc_sim's flow level against cases with exact answers: the classes
// follow the fabric's symmetry, a class's channels count exactly the flows
// of its ranks (against every rank counted one by one), the line bound is
// the busiest link's load, one flow runs at its NIC's rate, a hot link sets
// the pace, an overfull queue drops and congestion control drops less, and
// the same inputs give the same run.
#include <cmath>
#include <stdexcept>
#include <vector>

#include "cmocka_cxx.h"
#include "engine/wire_format.h"
#include "sim/flow_alltoall.h"
#include "sim/flow_fabric.h"
#include "sim/job.h"
#include "sim/sim_wire.h"

using namespace rttcc::sim;
using rttcc::nanos;

namespace {

FlowFabricConfig fat_tree(uint32_t ranks, uint32_t per_leaf, uint32_t spines) {
    FlowFabricConfig c;
    c.fat_tree = true;
    c.ranks = ranks;
    c.per_leaf = per_leaf;
    c.spines = spines;
    return c;
}

FlowFabricConfig star(uint32_t ranks) {
    FlowFabricConfig c;
    c.ranks = ranks;
    return c;
}

FlowAlltoallConfig alltoall(AlltoallAlgo algo, uint64_t block, int cc) {
    FlowAlltoallConfig a;
    a.algo = algo;
    a.block = block;
    rttcc_exchange_params_defaults(&a.xp);
    a.engine = default_job_config().engine;
    a.engine.cc = cc;
    return a;
}

}  // namespace

static void test_classes_follow_the_symmetry(void **) {
    assert_int_equal(FlowFabric(fat_tree(64, 8, 4)).classes().size(), 1);  // every rank alike
    FlowFabricConfig hot = fat_tree(64, 8, 4);
    hot.hot = 4;
    const FlowFabric h(hot);
    assert_int_equal(h.classes().size(), 2);  // leaf 0, the rest
    assert_int_equal(h.classes()[0].end, 8);
    assert_int_equal(h.class_of(8), 1);
    FlowFabricConfig spot = fat_tree(64, 8, 4);
    spot.hotspot_bits_per_s = 8e9;
    const FlowFabric s(spot);
    assert_int_equal(s.classes().size(), 3);  // rank 0, the rest of leaf 0, the rest
    assert_int_equal(s.flood_path().size(), 4);
    FlowFabricConfig one = star(10);
    one.hot = 2;
    assert_int_equal(FlowFabric(one).classes().size(), 2);
    bool refused = false;
    try {
        FlowFabric bad(fat_tree(60, 8, 4));  // 60 ranks do not fill leaves of 8
    } catch (const std::invalid_argument &) {
        refused = true;
    }
    assert_true(refused);
}

// Every class and offset: the flows to each class and within one leaf, as
// each rank of the class counts them; the channels carry every flow once.
static void test_channels_count_every_rank(void **) {
    for (const int variant : {0, 1, 2, 3}) {
        FlowFabricConfig c = fat_tree(48, 8, 4);
        if (variant == 1) c.hot = 4;
        if (variant == 2) c.hotspot_bits_per_s = 1e9;
        if (variant == 3) c = fat_tree(16, 16, 2);  // one leaf
        const FlowFabric f(c);
        const uint32_t P = c.ranks;
        for (uint32_t k = 0; k < f.classes().size(); ++k)
            for (uint32_t off = 1; off < P; ++off) {
                double all = 0;
                for (uint32_t d = 0; d < f.classes().size(); ++d) {
                    uint32_t to = 0, same = 0;
                    for (uint32_t m = f.classes()[k].first; m < f.classes()[k].end; ++m) {
                        const uint32_t dst = (m + off) % P;
                        if (f.class_of(dst) != d) continue;
                        ++to;
                        same += f.leaf_of(m) == f.leaf_of(dst);
                    }
                    assert_true(f.flows_to(k, d, off) == to);
                    assert_true(f.same_leaf(k, d, off) == same);
                }
                std::vector<FlowChannelPath> ch;
                f.channels(k, off, &ch);
                for (const FlowChannelPath &p : ch) all += p.flows;
                assert_true(std::fabs(all - f.classes()[k].size()) < 1e-9);
            }
    }
}

// The bound is the busiest link's bytes at its rate: on one switch every
// host link carries P - 1 blocks; with a hot uplink, leaf 0's flows out of
// the leaf, a quarter of them over spine 0, at a quarter of the rate.
static void test_line_bound_is_the_busiest_link(void **) {
    const uint64_t block = 65536;
    assert_true(std::fabs(flow_line_bound_ns(FlowFabric(star(8)), block) - 7.0 * block * 8 / 10) < 1e-6);
    FlowFabricConfig hot = fat_tree(64, 8, 4);
    hot.hot = 4;
    const double hot_link = 8.0 * 56 * block * 8 / 4 / (10e9 / 4) * 1e9;
    assert_true(std::fabs(flow_line_bound_ns(FlowFabric(hot), block) - hot_link) < 1e-3);
}

// A flood into rank 0 leaves the bound as it is (the flood loses its share
// of a full queue, so no schedule is bound by what it leaves); the estimate
// takes its mean on the wire (frames) off the links it crosses, and is
// infinite when that is their whole rate.
static void test_a_flood_leaves_the_bound_and_makes_the_estimate(void **) {
    const uint64_t block = 65536;
    const double calm = 7.0 * block * 8 / 10;  // ns: rank 0's link
    FlowFabricConfig c = star(8);
    c.hotspot_bits_per_s = 4e9;
    c.flood_on = 1'000'000;
    c.flood_off = 1'000'000;  // half the time: 2 Gbit/s of payload on average
    const FlowFabric f(c);
    assert_true(std::fabs(flow_line_bound_ns(f, block) - calm) < 1e-6);
    const double wire = 2e9 * frame_bytes(1500) / 1472;
    assert_true(std::fabs(flow_flood_estimate_ns(f, block) - 7.0 * block * 8 / (10e9 - wire) * 1e9) < 1e-3);
    c.hotspot_bits_per_s = 10e9;
    c.flood_off = 0;
    const FlowFabric full(c);
    assert_true(std::fabs(flow_line_bound_ns(full, block) - calm) < 1e-6);
    assert_true(std::isinf(flow_flood_estimate_ns(full, block)));
}

// Two ranks, one flow each way, no congestion control: the window (the send
// credits) keeps the NIC's queue busy, so the block's frames take what the
// line needs for them, and at most 5% more (the first round trip, the last
// window's wait behind the queues, its ACK's behind the other flow's data).
static void test_one_flow_runs_at_its_nic(void **) {
    const uint64_t block = 64 << 20;
    const FlowFabric f(star(2));
    const FlowAlltoallResult r = run_flow_alltoall(f, alltoall(AlltoallAlgo::kLinear, block, RTTCC_CC_NONE));
    assert_true(r.finished);
    const double payload = 1500 - 28 - rttcc::kHeaderSize;  // per segment
    const double line_ns = flow_line_bound_ns(f, block) * frame_bytes(1500) / payload;
    assert_true(r.completion > line_ns);
    assert_true(r.completion < 1.05 * line_ns);
    assert_true(r.drop_bytes == 0);
}

// A star whose rank 0 has a link at a quarter of the rate: every algorithm
// ends no sooner than that link's bound, and within twice it (the packet
// level: 1.39x for rttcc, 1.80x for pairwise, whose steps wait on rank 0).
static void test_hot_link_sets_the_pace(void **) {
    FlowFabricConfig c = star(8);
    c.hot = 4;
    const FlowFabric f(c);
    const double bound = flow_line_bound_ns(f, 1 << 20);
    for (const AlltoallAlgo a : {AlltoallAlgo::kRttcc, AlltoallAlgo::kPairwise, AlltoallAlgo::kLinear}) {
        const FlowAlltoallResult r = run_flow_alltoall(f, alltoall(a, 1 << 20, RTTCC_CC_AIMD));
        assert_true(r.finished);
        assert_true(r.completion >= bound);
        assert_true(r.completion < 2 * bound);
    }
}

// Linear on a fat tree with small queues: without congestion control the
// queues overflow; AIMD drops less, and both deliver everything.
static void test_overfull_queues_drop_and_cc_drops_less(void **) {
    FlowFabricConfig c = fat_tree(32, 8, 2);
    c.queue_bytes = 64 << 10;
    const FlowFabric f(c);
    const FlowAlltoallResult none = run_flow_alltoall(f, alltoall(AlltoallAlgo::kLinear, 1 << 20, RTTCC_CC_NONE));
    const FlowAlltoallResult aimd = run_flow_alltoall(f, alltoall(AlltoallAlgo::kLinear, 1 << 20, RTTCC_CC_AIMD));
    assert_true(none.finished && aimd.finished);
    assert_true(none.drop_bytes > 0);
    assert_true(aimd.drop_bytes < none.drop_bytes);
}

static void test_same_inputs_same_run(void **) {
    FlowFabricConfig c = fat_tree(64, 8, 4);
    c.hotspot_bits_per_s = 8e9;
    c.flood_on = c.flood_off = 500'000;
    const FlowFabric f(c);
    for (const int policy : {RTTCC_SCHED_ADAPTIVE, RTTCC_SCHED_GREEDY}) {
        FlowAlltoallConfig a = alltoall(AlltoallAlgo::kRttcc, 65536, RTTCC_CC_SWIFT);
        a.xp.policy = policy;
        const FlowAlltoallResult x = run_flow_alltoall(f, a), y = run_flow_alltoall(f, a);
        assert_true(x.finished);
        assert_int_equal(x.completion, y.completion);
        assert_int_equal(x.steps, y.steps);
        assert_true(x.drop_bytes == y.drop_bytes);
    }
}

// A call leaves its RTT table to the next: after one with a hotspot, the
// rest's round trip to the flooded rank 0 is longer than to each other; a
// second call starts where the first ended and, from that table, differs.
static void test_a_call_leaves_its_rtt_table(void **) {
    FlowFabricConfig c = fat_tree(64, 8, 4);
    c.hotspot_bits_per_s = 8e9;
    const FlowFabric f(c);
    const uint32_t plain = f.class_of(63), rank0 = f.class_of(0);
    FlowRttTable table;
    FlowAlltoallConfig a = alltoall(AlltoallAlgo::kRttcc, 65536, RTTCC_CC_AIMD);
    a.table = &table;
    const FlowAlltoallResult first = run_flow_alltoall(f, a);
    assert_true(first.finished);
    assert_true(table.srtt(plain, plain, false) > 0);
    assert_true(table.srtt(plain, rank0, false) > table.srtt(plain, plain, false));
    a.start = first.ended_at;
    const FlowAlltoallResult second = run_flow_alltoall(f, a);
    assert_true(second.finished);
    assert_int_equal(second.ended_at, first.ended_at + second.completion);
    assert_true(second.completion != first.completion);
}

// A call's completion counts from its start, its RTR phase included: it
// ends at start + completion, whether its blocks go with the RTRs (4 KiB)
// or are put once the RTRs are in (64 KiB).
static void test_completion_counts_from_the_start(void **) {
    const FlowFabric f(star(9));
    for (const uint64_t block : {4096, 65536})
        for (const nanos start : {nanos{0}, nanos{1'000'000}}) {
            FlowAlltoallConfig a = alltoall(AlltoallAlgo::kRttcc, block, RTTCC_CC_AIMD);
            a.start = start;
            const FlowAlltoallResult r = run_flow_alltoall(f, a);
            assert_true(r.finished);
            assert_int_equal(r.ended_at, start + r.completion);
        }
}

// What a queue drops goes no further: a 20 Gbit/s flood (payload) into rank
// 0 across a 10 Gbit/s spine link loses about half there, and the hops
// after it see only the rest, so it cannot lose more than it sent (counting
// every hop's drops of the whole flood, it lost 1.5 times that).
static void test_what_a_queue_drops_goes_no_further(void **) {
    FlowFabricConfig c = fat_tree(16, 8, 2);
    c.hotspot_bits_per_s = 20e9;
    c.flood_off = 0;
    const FlowFabric f(c);
    FlowAlltoallConfig a = alltoall(AlltoallAlgo::kRttcc, 65536, RTTCC_CC_AIMD);
    a.limit = 10'000'000;  // the alltoall starves: 10 ms of flood, its queues' first fill a tenth of it
    const FlowAlltoallResult r = run_flow_alltoall(f, a);
    const double sent = f.flood_bits_per_s(0) / 8 * static_cast<double>(r.steps * r.dt) / 1e9;
    print_message("flood: %.0f bytes sent, %.0f dropped\n", sent, r.flood_drop_bytes);
    assert_true(r.flood_drop_bytes > 0.4 * sent);
    assert_true(r.flood_drop_bytes < 0.6 * sent);
}

static void test_an_unfinished_run_says_so(void **) {
    FlowAlltoallConfig a = alltoall(AlltoallAlgo::kRttcc, 1 << 20, RTTCC_CC_AIMD);
    a.limit = 100'000;  // 100 us for 7 MiB a host
    const FlowAlltoallResult r = run_flow_alltoall(FlowFabric(star(8)), a);
    assert_false(r.finished);
    assert_int_equal(r.completion, 0);
    bool refused = false;
    try {
        run_flow_alltoall(FlowFabric(star(8)), alltoall(AlltoallAlgo::kBruck, 65536, RTTCC_CC_AIMD));
    } catch (const std::invalid_argument &) {
        refused = true;
    }
    assert_true(refused);
}

// A step is well below the one-way delay: at most a quarter of the shortest
// round trip (one switch, 1 us links: 2 hops of 2 us and a frame's 1230 ns
// each way), and a longer one is refused (a 1 s step made a 786 us
// alltoall take 7 s).
static void test_a_step_is_well_below_the_delay(void **) {
    const FlowFabric f(star(16));
    assert_int_equal(flow_max_dt(f, 1500), (2 * (2000 + frame_bytes(1500) * 8 / 10)) / 4);
    FlowAlltoallConfig a = alltoall(AlltoallAlgo::kRttcc, 65536, RTTCC_CC_AIMD);
    a.dt = flow_max_dt(f, 1500);
    assert_true(run_flow_alltoall(f, a).finished);
    a.dt = 1'000'000'000;
    bool refused = false;
    try {
        run_flow_alltoall(f, a);
    } catch (const std::invalid_argument &) {
        refused = true;
    }
    assert_true(refused);
}

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classes_follow_the_symmetry),
        cmocka_unit_test(test_channels_count_every_rank),
        cmocka_unit_test(test_line_bound_is_the_busiest_link),
        cmocka_unit_test(test_a_flood_leaves_the_bound_and_makes_the_estimate),
        cmocka_unit_test(test_one_flow_runs_at_its_nic),
        cmocka_unit_test(test_hot_link_sets_the_pace),
        cmocka_unit_test(test_overfull_queues_drop_and_cc_drops_less),
        cmocka_unit_test(test_same_inputs_same_run),
        cmocka_unit_test(test_a_call_leaves_its_rtt_table),
        cmocka_unit_test(test_completion_counts_from_the_start),
        cmocka_unit_test(test_what_a_queue_drops_goes_no_further),
        cmocka_unit_test(test_an_unfinished_run_says_so),
        cmocka_unit_test(test_a_step_is_well_below_the_delay),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
