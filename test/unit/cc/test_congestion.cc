// The congestion controllers on synthetic RTT traces: AIMD's slow start,
// avoidance and halving; TIMELY's thresholds, gradient and hyper-active
// increase; Swift's target delay, decrease bound and flow scaling, and its
// steady state on a simulated bottleneck; the once-per-RTT decrease rule;
// the factory, the config mapping and window().
#include "cmocka_cxx.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "cc/cc_aimd.h"
#include "cc/cc_swift.h"
#include "cc/cc_timely.h"
#include "cc/congestion.h"
#include "cc/rtt_estimator.h"

using namespace rttcc;

// Fails unless lo <= v <= hi.
#define assert_between(v, lo, hi) assert_between_at((v), (lo), (hi), __FILE__, __LINE__)
static void assert_between_at(double v, double lo, double hi, const char *file, int line) {
    if (v >= lo && v <= hi) return;
    print_error("%.12g is not in [%.12g, %.12g]\n", v, lo, hi);
    _fail(file, line);
}

// Fails unless |a - b| <= eps.
#define assert_near(a, b, eps) assert_between_at((a), (b) - (eps), (b) + (eps), __FILE__, __LINE__)

// The defaults of every tunable (RTTCC_PARAMS) but these.
static CcParams params(CcKind kind, uint32_t initial_cwnd, uint32_t max_cwnd) {
    rttcc_config_t cfg;
    rttcc_config_defaults(&cfg);
    CcParams p = cc_params_from(cfg);
    p.kind = kind;
    p.initial_cwnd = initial_cwnd;
    p.max_cwnd = max_cwnd;
    return p;
}

// AIMD's rules alone, without the floor below which queueing is no signal.
static CcParams without_floor(CcParams p) {
    p.aimd_queue_floor = 0;
    return p;
}

// An ACK of `acked` segments with sample `rtt` and explicit estimator state.
static AckEvent ack(nanos now, nanos rtt, nanos srtt, uint32_t acked = 1, nanos rttvar = 0,
                    nanos min_rtt = 0) {
    return AckEvent{now, acked, rtt, srtt, rttvar, min_rtt != 0 ? min_rtt : rtt, 0};
}

// Feeds RTT samples through a real RttEstimator, as the engine does, and
// hands the resulting ACKs to a controller; time advances with the ACKs.
struct Driver {
    CongestionControl &cc;  // the controller under test
    RttEstimator est{};     // the peer's estimator
    nanos now = 0;          // time of the latest ACK

    // One ACK for `acked` segments carrying `rtt`, `gap` after the previous ACK.
    void ack(nanos rtt, uint32_t acked = 1, nanos gap = 0) {
        now += gap;
        est.on_sample(rtt);
        cc.on_ack(AckEvent{now, acked, rtt, est.srtt(), est.rttvar(), est.min(), 0});
    }

    // One round trip: window() segments in flight, each ACKed on its own,
    // the ACKs spread evenly over `rtt`.
    void round(nanos rtt) {
        const uint32_t w = cc.window();
        for (uint32_t i = 0; i < w; ++i) ack(rtt, 1, rtt / w);
    }
};

// One flow through a bottleneck: up to `bdp` segments in flight fill the
// pipe, each one beyond it waits `per_segment` in the queue.
struct Bottleneck {
    nanos base;           // RTT with an empty queue
    nanos per_segment;    // queueing delay each segment beyond the BDP adds
    uint32_t bdp;         // segments the pipe holds
    uint32_t max_cwnd;    // the controller's ceiling
};

// ---------------------------------------------------------------- AIMD

static void test_aimd_slow_start_doubles_per_rtt_up_to_max(void **) {
    AimdCc cc(params(CcKind::kAimd, 2, 1024));
    Driver d{cc};
    uint32_t expect = 2;
    for (int r = 0; r < 12; ++r) {  // 2, 4, ..., 1024, then held at max_cwnd
        assert_int_equal(cc.window(), expect);
        d.round(usec(100));
        expect = std::min(expect * 2, 1024u);
    }
    assert_near(cc.cwnd(), 1024, 0);
    cc.on_ack(ack(d.now + 1, usec(100), usec(100), 1000000));
    assert_near(cc.cwnd(), 1024, 0);  // never above max_cwnd
}

static void test_aimd_avoidance_grows_one_segment_per_rtt(void **) {
    AimdCc cc(params(CcKind::kAimd, 32, 1024));
    Driver d{cc};
    d.round(usec(100));  // 32 -> 64 in slow start
    cc.on_timeout(d.now);  // ssthresh = 32, cwnd = 1
    assert_near(cc.ssthresh(), 32, 0);
    for (uint32_t w : {1u, 2u, 4u, 8u, 16u}) {  // slow start stops exactly at ssthresh
        assert_int_equal(cc.window(), w);
        d.round(usec(100));
    }
    assert_near(cc.cwnd(), 32, 0);
    for (int r = 0; r < 10; ++r) {  // one window of ACKs adds acked / cwnd each: just under 1
        const double before = cc.cwnd();
        d.round(usec(100));
        assert_between(cc.cwnd() - before, 0.9, 1.0);
    }
    assert_int_equal(cc.window(), 41);
}

static void test_aimd_halves_on_rtt_spike_once_per_rtt(void **) {
    AimdCc cc(without_floor(params(CcKind::kAimd, 64, 128)));
    const nanos srtt = usec(100), var = usec(5);  // bound: 100 + 4 * 5 = 120 us
    cc.on_ack(ack(0, usec(100), srtt, 0, var));
    cc.on_ack(ack(usec(10), usec(120), srtt, 0, var));  // at the bound: no congestion
    assert_near(cc.cwnd(), 64, 0);
    cc.on_ack(ack(usec(20), usec(121), srtt, 1, var));  // above: halve, no growth
    assert_near(cc.cwnd(), 32, 0);
    assert_near(cc.ssthresh(), 32, 0);
    cc.on_ack(ack(usec(60), usec(900), srtt, 1, var));   // same round trip: held back
    cc.on_ack(ack(usec(119), usec(900), srtt, 1, var));  // and does not grow either
    assert_near(cc.cwnd(), 32, 0);
    cc.on_ack(ack(usec(120), usec(900), srtt, 1, var));  // one SRTT after the cut
    assert_near(cc.cwnd(), 16, 0);
    assert_near(cc.ssthresh(), 16, 0);
    for (int i = 0; i < 10; ++i) cc.on_ack(ack(usec(300 + 100 * i), usec(900), srtt, 1, var));
    assert_near(cc.cwnd(), 2, 0);  // halving stops at ssthresh's floor of 2
    assert_near(cc.ssthresh(), 2, 0);
}

static void test_aimd_slow_start_stops_at_ssthresh_within_an_ack(void **) {
    AimdCc cc(params(CcKind::kAimd, 64, 128));
    cc.on_ack(ack(0, usec(100), usec(100), 0, usec(5)));
    cc.on_fast_retransmit(usec(10));  // ssthresh = cwnd = 32
    cc.on_timeout(msec(1));           // ssthresh = 16, cwnd = 1
    cc.on_ack(ack(msec(2), usec(100), usec(100), 13, usec(5)));
    assert_near(cc.cwnd(), 14, 0);
    cc.on_ack(ack(msec(2), usec(100), usec(100), 4, usec(5)));  // 2 in slow start, 2 beyond
    assert_near(cc.cwnd(), 16 + 2.0 / 16, 1e-12);
}

static void test_aimd_decrease_never_raises_the_window(void **) {
    AimdCc cc(params(CcKind::kAimd, 64, 128));
    cc.on_ack(ack(0, usec(100), usec(100), 0, usec(5)));
    cc.on_timeout(usec(10));  // cwnd 1, below ssthresh's floor of 2
    cc.on_ack(ack(msec(1), msec(1), usec(100), 0, usec(5)));  // a spike a round trip later
    assert_near(cc.cwnd(), 1, 0);
    assert_near(cc.ssthresh(), 2, 0);
    cc.on_fast_retransmit(msec(2));
    assert_near(cc.cwnd(), 1, 0);
}

static void test_aimd_ignores_the_first_sample(void **) {
    AimdCc cc(params(CcKind::kAimd, 64, 128));
    cc.on_ack(ack(0, msec(10), msec(10), 0, msec(5)));  // no earlier state to compare with
    assert_near(cc.cwnd(), 64, 0);
    cc.on_ack(ack(usec(10), 0, msec(10), 0, msec(5)));  // ACK without a sample
    assert_near(cc.cwnd(), 64, 0);
}

static void test_aimd_acks_without_samples_keep_the_bound(void **) {
    AimdCc cc(without_floor(params(CcKind::kAimd, 64, 128)));
    cc.on_ack(ack(0, usec(100), usec(100), 0, usec(5)));
    cc.on_ack(AckEvent{usec(5), 1, 0, 0, 0, 0, 0});  // no sample, no state: grows, bound kept
    assert_near(cc.cwnd(), 65, 0);
    cc.on_ack(ack(usec(10), usec(121), usec(100), 0, usec(5)));
    assert_near(cc.cwnd(), 32.5, 0);
}

// The event carries the estimator's state *after* the sample, whose bound
// SRTT + 4 * RTTVAR has already risen by 1.125 times the spike's excess:
// only the state before the sample can flag it.
static void test_aimd_detects_spike_through_the_estimator(void **) {
    AimdCc cc(params(CcKind::kAimd, 64, 128));
    Driver d{cc};
    for (int i = 0; i < 30; ++i) d.ack(usec(100), 0, usec(10));
    assert_near(cc.cwnd(), 64, 0);
    d.ack(usec(300), 0, usec(10));
    assert_near(cc.cwnd(), 32, 0);
    assert_false(usec(300) > d.est.srtt() + 4 * d.est.rttvar());  // the state after it hides it
}

// A fast path learns its base RTT from single-segment exchanges (10 us);
// a bulk transfer then sees 60 us round trips, the receiving core's own
// backlog: less than aimd_queue_floor_us (100) above SRTT and the base, so
// no signal, and the window grows.  A network queue (300 us) still halves.
static void test_aimd_queueing_below_the_floor_is_no_signal(void **) {
    AimdCc cc(params(CcKind::kAimd, 16, 128));
    Driver d{cc};
    for (int i = 0; i < 50; ++i) d.ack(usec(10), 1, usec(20));
    const double before = cc.cwnd();
    for (int r = 0; r < 20; ++r) d.round(usec(60));
    assert_true(cc.cwnd() > before);
    AimdCc bare(without_floor(params(CcKind::kAimd, 16, 128)));  // the same samples without the floor
    Driver b{bare};
    for (int i = 0; i < 50; ++i) b.ack(usec(10), 1, usec(20));
    for (int r = 0; r < 20; ++r) b.round(usec(60));
    assert_true(bare.cwnd() < before);
    const double grown = cc.cwnd();
    d.ack(usec(300), 1, usec(60));
    assert_near(cc.cwnd(), grown / 2, 1);
}

static void test_aimd_fast_retransmit_halves_once_per_rtt(void **) {
    AimdCc cc(params(CcKind::kAimd, 64, 128));
    cc.on_ack(ack(0, usec(100), usec(100), 0, usec(5)));
    cc.on_fast_retransmit(usec(10));
    assert_near(cc.cwnd(), 32, 0);
    cc.on_fast_retransmit(usec(109));  // same round trip
    assert_near(cc.cwnd(), 32, 0);
    cc.on_fast_retransmit(usec(110));
    assert_near(cc.cwnd(), 16, 0);
}

// A lone loss on a path with no queue (every sample at its base RTT) is
// noise: the window stays.  Losses beyond max(1, cwnd / 8) in one round
// trip are a queue overflowing: halved.  So is a lone loss while SRTT sits
// more than the floor (100 us) above the base.
static void test_aimd_lone_loss_without_queueing_keeps_the_window(void **) {
    AimdCc cc(params(CcKind::kAimd, 64, 128));
    Driver d{cc};
    for (int i = 0; i < 30; ++i) d.ack(usec(20), 1, usec(1));
    const double w = cc.cwnd();
    cc.on_fast_retransmit(d.now + usec(1));
    assert_near(cc.cwnd(), w, 0);
    for (int i = 0; i < 3; ++i) cc.on_fast_retransmit(d.now + usec(2 + i));  // 4 in the round trip: < 94 / 8
    assert_near(cc.cwnd(), w, 0);
    for (int i = 0; i < 8; ++i) cc.on_fast_retransmit(d.now + usec(5 + i));  // 12 > w / 8
    assert_near(cc.cwnd(), w / 2, 0);
    for (int i = 0; i < 5; ++i) cc.on_fast_retransmit(d.now + usec(100 + i));  // a new round trip: 5 < 47 / 8
    assert_near(cc.cwnd(), w / 2, 0);
    cc.on_fast_retransmit(d.now + usec(106));
    assert_near(cc.cwnd(), w / 4, 0);

    AimdCc queued(params(CcKind::kAimd, 64, 128));
    Driver q{queued};
    for (int i = 0; i < 30; ++i) q.ack(usec(20), 1, usec(1));
    for (int i = 0; i < 30; ++i) q.ack(usec(150), 0, usec(1));  // SRTT ~140 us: 120 above the base, no data released
    const double before = queued.cwnd();
    queued.on_fast_retransmit(q.now + msec(1));  // a round trip after the standing queue's own cut
    assert_near(queued.cwnd(), before / 2, 0);
}

// A queue that grows by a segment per round trip, under the jitter of a
// real path (segments of a window meet the queue at different depths),
// makes no spike; the standing-queue rule must still hold the window near
// the pipe's size.  (A 150 Mbit/s link: 77 us per segment, a 3-segment
// pipe; without the rule the window climbs to max_cwnd, a 9.6 ms queue.)
static void test_aimd_holds_a_standing_queue_short(void **) {
    const Bottleneck b{usec(231), usec(77), 3, 128};
    AimdCc cc(params(CcKind::kAimd, 4, b.max_cwnd));
    Driver d{cc};
    double delay_sum = 0, window_sum = 0;
    const int rounds = 600, measured = 200;
    uint32_t k = 0;
    for (int r = 0; r < rounds; ++r) {
        const uint32_t w = cc.window();
        const nanos delay = b.base + (w > b.bdp ? (w - b.bdp) * b.per_segment : 0);
        if (r >= rounds - measured) {
            delay_sum += delay;
            window_sum += w;
        }
        for (uint32_t i = 0; i < w; ++i, ++k) d.ack(delay + (k * 37 % 7) * usec(40), 1, delay / w);
    }
    const double mean_delay = delay_sum / measured, mean_window = window_sum / measured;
    print_message("aimd: mean delay %.0f us, mean window %.1f\n", mean_delay / 1000, mean_window);
    assert_true(mean_delay < msec(2));        // not the 9.6 ms of a full window
    assert_true(mean_window >= b.bdp);        // the pipe stays full
    assert_true(mean_window < 30);
}

// A path whose delay rises for good (a route change, a receiver host that
// became oversubscribed): 100 us, then 1 ms with no queue of the flow's
// own.  The base was the all-time smallest sample, so every ACK afterwards
// read as a standing queue and the window sat at 2 for the rest of the
// job.  The base forgets in 10-20 s: the window grows again after that.
static void test_aimd_takes_a_lasting_delay_rise_as_a_new_base(void **) {
    AimdCc cc(params(CcKind::kAimd, 32, 128));
    Driver d{cc};
    for (int r = 0; r < 50; ++r) d.round(usec(100));
    for (int r = 0; r < 2000; ++r) d.round(msec(1));  // 2 s of the new path
    assert_true(cc.window() <= 4);                   // a standing queue, as far as it can tell
    while (d.now < msec(25000)) d.round(msec(1));
    print_message("aimd: window %u after 25 s at a new delay\n", cc.window());
    assert_true(cc.window() >= 64);
}

static void test_aimd_timeout_resets_to_one(void **) {
    AimdCc cc(params(CcKind::kAimd, 64, 128));
    cc.on_ack(ack(0, usec(100), usec(100), 0, usec(5)));
    cc.on_timeout(usec(10));
    assert_near(cc.cwnd(), 1, 0);
    assert_int_equal(cc.window(), 1);
    assert_near(cc.ssthresh(), 32, 0);
    cc.on_fast_retransmit(usec(50));  // the same event: no further cut of ssthresh
    assert_near(cc.ssthresh(), 32, 0);
    cc.on_timeout(usec(500));
    assert_near(cc.cwnd(), 1, 0);
    assert_near(cc.ssthresh(), 2, 0);
}

// ---------------------------------------------------------------- TIMELY

static void test_timely_grows_below_tlow(void **) {
    TimelyCc cc(params(CcKind::kTimely, 4, 128));
    cc.on_ack(ack(usec(1), usec(20), usec(20)));
    assert_near(cc.cwnd(), 4.25, 1e-12);  // add_step * acked / cwnd
    cc.on_ack(ack(usec(2), 0, usec(20), 4));  // no sample: no change
    assert_near(cc.cwnd(), 4.25, 1e-12);
    Driver d{cc};
    for (int r = 0; r < 20; ++r) {  // about add_step per round trip
        const double before = cc.cwnd();
        d.round(usec(20));
        assert_between(cc.cwnd() - before, 0.5, 1.0);
    }
    assert_true(cc.window() >= 20);
}

static void test_timely_flat_rtt_in_band_grows(void **) {
    TimelyCc cc(params(CcKind::kTimely, 16, 128));
    Driver d{cc};
    for (int r = 0; r < 10; ++r) d.round(usec(200));  // tlow < 200 us < thigh, gradient 0
    assert_true(cc.window() >= 50);  // hyper-active from the 5th ACK; 1 step per RTT gives 25
}

static void test_timely_rising_rtt_in_band_cuts(void **) {
    TimelyCc cc(params(CcKind::kTimely, 16, 128));
    Driver d{cc};
    d.ack(usec(60));  // first sample: gradient 0, a small increase
    double prev = cc.cwnd();
    for (nanos rtt = usec(65); rtt <= usec(500); rtt += usec(5)) {
        d.ack(rtt, 1, rtt / cc.window());
        assert_true(cc.cwnd() <= prev);  // a rising RTT never grows the window
        prev = cc.cwnd();
    }
    assert_true(cc.window() <= 10);  // 16 -> 9.3: one cut of ~7% per round trip
}

static void test_timely_cuts_above_thigh(void **) {
    TimelyCc at(params(CcKind::kTimely, 64, 128));
    at.on_ack(ack(0, usec(500), usec(500)));  // at thigh: in band, gradient 0
    assert_near(at.cwnd(), 64 + 1.0 / 64, 1e-12);
    TimelyCc cc(params(CcKind::kTimely, 64, 128));
    cc.on_ack(ack(0, msec(1), msec(1)));  // 1 - 0.8 * (1 - 500 / 1000) = 0.6
    assert_near(cc.cwnd(), 38.4, 1e-9);
    cc.on_ack(ack(usec(999), msec(1), msec(1)));  // within one SRTT
    assert_near(cc.cwnd(), 38.4, 1e-9);
    cc.on_ack(ack(msec(1), msec(1), msec(1)));
    assert_near(cc.cwnd(), 23.04, 1e-9);
}

static void test_timely_gradient_cut_is_bounded(void **) {
    TimelyCc cc(params(CcKind::kTimely, 64, 128));
    cc.on_ack(ack(0, usec(100), usec(100), 1, 0, usec(50)));
    assert_near(cc.cwnd(), 64 + 1.0 / 64, 1e-12);
    cc.on_ack(ack(usec(1), usec(450), usec(150), 1, 0, usec(50)));  // gradient 6.1: factor 0.5
    assert_near(cc.cwnd(), (64 + 1.0 / 64) / 2, 1e-12);
}

static void test_timely_hyperactive_increase(void **) {
    TimelyCc cc(params(CcKind::kTimely, 1000, 10000));
    nanos now = 0, rtt = usec(400);
    auto step = [&](nanos r) {  // additive steps the sample added (each ACK acks 1 segment)
        const double before = cc.cwnd();
        now += usec(1);
        cc.on_ack(ack(now, r, usec(300), 1, 0, usec(100)));
        return (cc.cwnd() - before) * before;
    };
    for (int k = 1; k <= 8; ++k, rtt -= usec(10))  // falling RTT: gradient <= 0
        assert_near(step(rtt), k < 5 ? 1 : 5, 1e-9);  // 5x from the hai_count-th on
    const double before = cc.cwnd();
    step(rtt + usec(60));  // rising: gradient ~0.425, cut and reset the count
    assert_between(cc.cwnd() / before, 0.65, 0.67);
    assert_near(step(rtt + usec(50)), 1, 1e-9);  // falling again: 1x
    for (int k = 2; k <= 5; ++k, rtt -= usec(10)) step(rtt + usec(40));
    assert_near(step(rtt + usec(40)), 5, 1e-9);  // hyper-active again
    assert_near(step(usec(49)), 1, 1e-9);        // below tlow: add_step, ends the run
    assert_near(step(usec(51)), 1, 1e-9);        // in band, still falling on average: 1x
}

// At or above tlow a loss cuts by beta / 2, once per round trip; below
// it a lone loss is noise and a run cuts; a timeout halves.
static void test_timely_loss_reactions(void **) {
    TimelyCc cc(params(CcKind::kTimely, 64, 128));
    cc.on_ack(ack(0, usec(100), usec(100), 0));
    cc.on_fast_retransmit(usec(10));  // 1 - beta / 2
    assert_near(cc.cwnd(), 38.4, 1e-9);
    cc.on_fast_retransmit(usec(50));  // same round trip
    assert_near(cc.cwnd(), 38.4, 1e-9);
    cc.on_timeout(usec(60));  // halves, whatever the round trip
    assert_near(cc.cwnd(), 19.2, 1e-9);
    for (int i = 0; i < 6; ++i) cc.on_timeout(usec(100 + i));
    assert_near(cc.cwnd(), 1, 0);

    TimelyCc calm(params(CcKind::kTimely, 64, 128));
    calm.on_ack(ack(0, usec(20), usec(20), 0));  // 20 us: below tlow (50)
    calm.on_fast_retransmit(usec(10));
    assert_near(calm.cwnd(), 64, 0);
    for (int i = 0; i < 8; ++i) calm.on_fast_retransmit(usec(11 + i));  // 9 > 64 / 8
    assert_near(calm.cwnd(), 38.4, 1e-9);
}

// ---------------------------------------------------------------- Swift

// Swift without flow scaling: the target is swift_target (50 us).
static CcParams swift_flat(uint32_t initial_cwnd) {
    CcParams p = params(CcKind::kSwift, initial_cwnd, 128);
    p.swift_fs_range = 0;
    return p;
}

static void test_swift_increases_below_target(void **) {
    SwiftCc cc(swift_flat(4));
    assert_int_equal(cc.target(), usec(50));
    cc.on_ack(ack(0, usec(20), usec(20)));
    assert_near(cc.cwnd(), 4.25, 1e-12);  // ai * acked / cwnd
    cc.on_ack(ack(0, 0, usec(20), 4));      // no sample: no change
    assert_near(cc.cwnd(), 4.25, 1e-12);
    cc.on_ack(ack(usec(1), usec(49), usec(20), 17));
    assert_near(cc.cwnd(), 8.25, 1e-12);
}

static void test_swift_holds_at_the_target(void **) {
    SwiftCc cc(swift_flat(10));
    cc.on_ack(ack(0, usec(50), usec(50)));  // delay == target: a decrease by a factor of 1
    assert_near(cc.cwnd(), 10, 0);
    cc.on_ack(ack(usec(10), usec(49), usec(50)));  // below it: the increase (not held back)
    assert_near(cc.cwnd(), 10.1, 1e-12);
}

static void test_swift_decrease_is_proportional_and_bounded(void **) {
    SwiftCc mild(swift_flat(100));
    mild.on_ack(ack(0, usec(100), usec(100)));  // 1 - 0.8 * (100 - 50) / 100
    assert_near(mild.cwnd(), 60, 1e-9);
    SwiftCc harsh(swift_flat(100));
    harsh.on_ack(ack(0, msec(10), msec(10)));  // 1 - 0.8 * 0.995 < 1 - max_mdf
    assert_near(harsh.cwnd(), 50, 1e-9);
    CcParams p = swift_flat(100);
    p.swift_max_mdf = 0.3;
    SwiftCc capped(p);
    capped.on_ack(ack(0, msec(10), msec(10)));
    assert_near(capped.cwnd(), 70, 1e-9);
}

static void test_swift_one_decrease_per_rtt(void **) {
    SwiftCc cc(swift_flat(100));
    cc.on_ack(ack(0, usec(100), usec(80)));
    assert_near(cc.cwnd(), 60, 1e-9);
    cc.on_ack(ack(usec(40), usec(200), usec(80)));  // within one SRTT: held back
    cc.on_ack(ack(usec(79), usec(200), usec(80)));
    assert_near(cc.cwnd(), 60, 1e-9);
    cc.on_ack(ack(usec(79), usec(20), usec(80)));  // increases are not held back
    assert_near(cc.cwnd(), 60 + 1.0 / 60, 1e-9);
    cc.on_ack(ack(usec(80), usec(100), usec(80)));
    assert_near(cc.cwnd(), (60 + 1.0 / 60) * 0.6, 1e-9);
}

static void test_swift_flow_scaling(void **) {
    CcParams p = params(CcKind::kSwift, 1, 256);
    p.swift_fs_min_cwnd = 1;
    p.swift_fs_max_cwnd = 100;  // alpha = 100 us / 0.9, beta_fs = -alpha / 10
    auto target_at = [&](uint32_t cwnd) {
        p.initial_cwnd = cwnd;
        return SwiftCc(p).target();
    };
    assert_in_range(target_at(1), usec(150) - 1, usec(150));  // the whole range
    assert_in_range(target_at(4), 94444 - 1, 94444);          // 50 + 100 / 0.9 * (1/2 - 1/10) us
    assert_in_range(target_at(25), 61111 - 1, 61111);         // 50 + 100 / 0.9 * (1/5 - 1/10) us
    assert_int_equal(target_at(100), usec(50));               // none at fs_max_cwnd
    assert_int_equal(target_at(200), usec(50));               // nor above it
    p.initial_cwnd = 4;
    SwiftCc small(p);  // 80 us is below its target of 94.4 us
    small.on_ack(ack(0, usec(80), usec(80)));
    assert_near(small.cwnd(), 4.25, 1e-12);
    p.initial_cwnd = 100;
    SwiftCc large(p);  // and above this one's 50 us
    large.on_ack(ack(0, usec(80), usec(80)));
    assert_near(large.cwnd(), 100 * (1 - 0.8 * 30.0 / 80), 1e-9);
}

// Runs Swift (default target and flow scaling) for 600 round trips; checks
// the last 100: delay near the target, the pipe full, the window above 1.
static void check_swift_settles(const Bottleneck &b) {
    SwiftCc cc(params(CcKind::kSwift, 4, b.max_cwnd));
    Driver d{cc};
    double delay_sum = 0, target_sum = 0, window_sum = 0, min_cwnd = b.max_cwnd;
    const int rounds = 600, measured = 100;
    for (int r = 0; r < rounds; ++r) {
        const uint32_t w = cc.window();
        const nanos delay = b.base + (w > b.bdp ? (w - b.bdp) * b.per_segment : 0);
        if (r >= rounds - measured) {
            delay_sum += delay;
            target_sum += cc.target();
            window_sum += w;
            min_cwnd = std::min(min_cwnd, cc.cwnd());
        }
        d.round(delay);
    }
    const double mean_delay = delay_sum / measured, mean_target = target_sum / measured;
    const double mean_window = window_sum / measured;
    print_message("swift: mean delay %.2f us, mean target %.2f us, mean window %.2f\n",
                  mean_delay / 1000, mean_target / 1000, mean_window);
    assert_true(mean_delay <= 1.1 * mean_target);
    assert_true(mean_delay > b.base);  // a standing queue: the pipe stays full
    assert_true(mean_window >= b.bdp);
    assert_true(min_cwnd > 1);
}

static void test_swift_settles_at_target_on_a_bottleneck(void **) {
    check_swift_settles({usec(20), usec(5), 10, 128});   // target reachable exactly
    check_swift_settles({usec(10), usec(20), 8, 128});   // coarse queue: oscillates around it
    check_swift_settles({usec(10), 500, 60, 1000});      // large BDP, fine-grained queue
}

// Below the target a lone loss is noise; a run of them (more than
// cwnd / 8 in a round trip) cuts by max_mdf, once per round trip; at or
// above the target every loss cuts; every timeout cuts.
static void test_swift_loss_reactions(void **) {
    SwiftCc cc(params(CcKind::kSwift, 64, 128));
    cc.on_ack(ack(0, usec(10), usec(100), 0));  // delay 10 us, below the target
    cc.on_fast_retransmit(usec(10));
    assert_near(cc.cwnd(), 64, 0);
    for (int i = 0; i < 8; ++i) cc.on_fast_retransmit(usec(11 + i));  // the 9th of the round trip: > 64 / 8
    assert_near(cc.cwnd(), 32, 1e-12);
    cc.on_fast_retransmit(usec(109));  // same round trip
    assert_near(cc.cwnd(), 32, 1e-12);
    for (double expect : {16.0, 8.0, 4.0, 2.0, 1.0, 1.0}) {  // every timeout cuts, down to 1
        cc.on_timeout(usec(111));
        assert_near(cc.cwnd(), expect, 1e-12);
    }
    assert_int_equal(cc.window(), 1);
    cc.on_ack(ack(usec(112), usec(10), usec(100), 7));  // 1 + 7
    cc.on_fast_retransmit(usec(212));  // lone
    assert_near(cc.cwnd(), 8, 1e-12);
    cc.on_fast_retransmit(usec(213));  // 2 > 8 / 8: a run
    assert_near(cc.cwnd(), 4, 1e-12);

    SwiftCc queued(params(CcKind::kSwift, 64, 128));
    queued.on_ack(ack(0, usec(400), usec(400), 0));  // far above the target: cut by the ACK itself
    const double w = queued.cwnd();
    queued.on_fast_retransmit(msec(1));  // a round trip later: a lone loss with a queue cuts
    assert_near(queued.cwnd(), w / 2, 1e-12);
}

// ---------------------------------------------------------------- common

static void test_factory(void **) {
    assert_null(make_congestion_control(params(CcKind::kNone, 4, 128)).get());
    const std::pair<CcKind, const char *> kinds[] = {
        {CcKind::kAimd, "aimd"}, {CcKind::kTimely, "timely"}, {CcKind::kSwift, "swift"}};
    for (const auto &[k, name] : kinds) {
        const auto cc = make_congestion_control(params(k, 7, 128));
        assert_non_null(cc.get());
        assert_string_equal(cc->name(), name);
        assert_near(cc->cwnd(), 7, 0);
        assert_int_equal(cc->window(), 7);
    }
    assert_int_equal(make_congestion_control(params(CcKind::kAimd, 0, 128))->window(), 1);
    assert_int_equal(make_congestion_control(params(CcKind::kSwift, 500, 128))->window(), 128);
}

static void test_cc_params_from_converts_microseconds(void **) {
    rttcc_config_t cfg;
    std::memset(&cfg, 0, sizeof cfg);
    cfg.cc = RTTCC_CC_TIMELY;
    cfg.initial_cwnd = 3;
    cfg.max_cwnd = 77;
    cfg.timely_tlow_us = 40;
    cfg.timely_thigh_us = 700;
    cfg.timely_add_step = 2.5;
    cfg.timely_beta = 0.7;
    cfg.timely_ewma = 0.5;
    cfg.timely_hai_count = 9;
    cfg.swift_target_us = 25;
    cfg.swift_fs_range_us = 80;
    cfg.swift_fs_min_cwnd = 0.5;
    cfg.swift_fs_max_cwnd = 64;
    cfg.swift_ai = 1.5;
    cfg.swift_beta = 0.6;
    cfg.swift_max_mdf = 0.4;
    const CcParams p = cc_params_from(cfg);
    assert_true(p.kind == CcKind::kTimely);
    assert_int_equal(p.initial_cwnd, 3);
    assert_int_equal(p.max_cwnd, 77);
    assert_int_equal(p.timely_tlow, 40000);
    assert_int_equal(p.timely_thigh, 700000);
    assert_near(p.timely_add_step, 2.5, 0);
    assert_near(p.timely_beta, 0.7, 0);
    assert_near(p.timely_ewma, 0.5, 0);
    assert_int_equal(p.timely_hai_count, 9);
    assert_int_equal(p.swift_target, 25000);
    assert_int_equal(p.swift_fs_range, 80000);
    assert_near(p.swift_fs_min_cwnd, 0.5, 0);
    assert_near(p.swift_fs_max_cwnd, 64, 0);
    assert_near(p.swift_ai, 1.5, 0);
    assert_near(p.swift_beta, 0.6, 0);
    assert_near(p.swift_max_mdf, 0.4, 0);
    const int codes[] = {RTTCC_CC_NONE, RTTCC_CC_AIMD, RTTCC_CC_TIMELY, RTTCC_CC_SWIFT};
    const CcKind kinds[] = {CcKind::kNone, CcKind::kAimd, CcKind::kTimely, CcKind::kSwift};
    for (int i = 0; i < 4; ++i) {
        cfg.cc = codes[i];
        assert_true(cc_params_from(cfg).kind == kinds[i]);
    }
}

// A controller that reports whatever window it is given.
class FixedCc final : public CongestionControl {
public:
    FixedCc(double cwnd, uint32_t max_cwnd) : CongestionControl(max_cwnd), cwnd_(cwnd) {}
    void on_ack(const AckEvent &) override {}
    void on_fast_retransmit(nanos) override {}
    void on_timeout(nanos) override {}
    double cwnd() const override { return cwnd_; }
    const char *name() const override { return "fixed"; }

private:
    double cwnd_;  // the reported window
};

static void test_window_floors_and_clamps(void **) {
    assert_int_equal(FixedCc(0.3, 8).window(), 1);
    assert_int_equal(FixedCc(1.0, 8).window(), 1);
    assert_int_equal(FixedCc(3.99, 8).window(), 3);
    assert_int_equal(FixedCc(8.0, 8).window(), 8);
    assert_int_equal(FixedCc(50.5, 8).window(), 8);
    assert_int_equal(FixedCc(5.0, 0).window(), 1);  // a zero ceiling still sends one
}

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_aimd_slow_start_doubles_per_rtt_up_to_max),
        cmocka_unit_test(test_aimd_avoidance_grows_one_segment_per_rtt),
        cmocka_unit_test(test_aimd_halves_on_rtt_spike_once_per_rtt),
        cmocka_unit_test(test_aimd_queueing_below_the_floor_is_no_signal),
        cmocka_unit_test(test_aimd_slow_start_stops_at_ssthresh_within_an_ack),
        cmocka_unit_test(test_aimd_decrease_never_raises_the_window),
        cmocka_unit_test(test_aimd_ignores_the_first_sample),
        cmocka_unit_test(test_aimd_acks_without_samples_keep_the_bound),
        cmocka_unit_test(test_aimd_detects_spike_through_the_estimator),
        cmocka_unit_test(test_aimd_fast_retransmit_halves_once_per_rtt),
        cmocka_unit_test(test_aimd_lone_loss_without_queueing_keeps_the_window),
        cmocka_unit_test(test_aimd_holds_a_standing_queue_short),
        cmocka_unit_test(test_aimd_takes_a_lasting_delay_rise_as_a_new_base),
        cmocka_unit_test(test_aimd_timeout_resets_to_one),
        cmocka_unit_test(test_timely_grows_below_tlow),
        cmocka_unit_test(test_timely_flat_rtt_in_band_grows),
        cmocka_unit_test(test_timely_rising_rtt_in_band_cuts),
        cmocka_unit_test(test_timely_cuts_above_thigh),
        cmocka_unit_test(test_timely_gradient_cut_is_bounded),
        cmocka_unit_test(test_timely_hyperactive_increase),
        cmocka_unit_test(test_timely_loss_reactions),
        cmocka_unit_test(test_swift_increases_below_target),
        cmocka_unit_test(test_swift_holds_at_the_target),
        cmocka_unit_test(test_swift_decrease_is_proportional_and_bounded),
        cmocka_unit_test(test_swift_one_decrease_per_rtt),
        cmocka_unit_test(test_swift_flow_scaling),
        cmocka_unit_test(test_swift_settles_at_target_on_a_bottleneck),
        cmocka_unit_test(test_swift_loss_reactions),
        cmocka_unit_test(test_factory),
        cmocka_unit_test(test_cc_params_from_converts_microseconds),
        cmocka_unit_test(test_window_floors_and_clamps),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
