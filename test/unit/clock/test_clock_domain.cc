// The NTP-style offset estimator on worked examples, and the clock domain
// with injected clocks (PHC present or not, synchronised or not) and on the
// real clocks.
#include <linux/ptp_clock.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "clock/clock_domain.h"
#include "cmocka_cxx.h"
#include "clock/offset_estimator.h"
#include "cc/windowed_min.h"

using namespace rttcc;

namespace {

constexpr int64_t kSec = 1000000000;

bool contains(const std::string &s, const char *part) { return s.find(part) != std::string::npos; }

// ---------------------------------------------------------------- estimator

// The peer's clock runs 1000 ns ahead; 50 ns each way; the peer holds 10 ns.
void test_symmetric_path(void **) {
    OffsetEstimator e;
    assert_false(e.valid());
    assert_true(e.add(0, 1050, 1060, 110));
    assert_true(e.valid());
    assert_int_equal(e.offset(), 1000);
    assert_int_equal(e.delay(), 100);
    assert_int_equal(e.bound(), 50);
    assert_int_equal(OffsetEstimator::forward_delay(0, 1050, e.offset()), 50);
    assert_int_equal(OffsetEstimator::reverse_delay(1060, 110, e.offset()), 50);
}

// 80 ns out, 20 ns back: the estimate is off by half the asymmetry, within the bound.
void test_asymmetric_path(void **) {
    OffsetEstimator e;
    assert_true(e.add(0, 1080, 1090, 110));
    assert_int_equal(e.offset(), 1030);
    assert_int_equal(e.bound(), 50);
    assert_true(std::llabs(e.offset() - 1000) <= e.bound());
    // With the true offset the one-way delays come out exactly.
    assert_int_equal(OffsetEstimator::forward_delay(0, 1080, 1000), 80);
    assert_int_equal(OffsetEstimator::reverse_delay(1090, 110, 1000), 20);
}

// The peer's clock 500 ns behind; 30 ns each way, held 10 ns.
void test_negative_offset(void **) {
    OffsetEstimator e;
    assert_true(e.add(10000, 9530, 9540, 10070));
    assert_int_equal(e.offset(), -500);
    assert_int_equal(e.delay(), 60);
    assert_int_equal(e.bound(), 30);
}

void test_filter_keeps_least_delay(void **) {
    OffsetEstimator e;
    // True offset 1000; queueing on the way out inflates delay and offset.
    assert_true(e.add(0, 1250, 1260, 310));       // 250 out, 50 back
    assert_true(e.add(1000, 2050, 2060, 1110));   // 50/50: the best
    assert_true(e.add(2000, 3150, 3160, 2210));   // 150 out, 50 back
    assert_int_equal(e.samples(), 3);
    assert_int_equal(e.offset(), 1000);
    assert_int_equal(e.delay(), 100);
    assert_int_equal(e.bound(), 50);
    assert_int_equal(e.best().at, 1110);
}

void test_window_forgets_old_best(void **) {
    OffsetEstimator e(4);
    assert_true(e.add(0, 1050, 1060, 110));  // delay 100
    for (int i = 1; i <= 3; ++i) assert_true(e.add(i * 1000, i * 1000 + 1100, i * 1000 + 1110, i * 1000 + 210));
    assert_int_equal(e.delay(), 100);  // still among the last 4
    assert_true(e.add(4000, 5100, 5110, 4210));  // pushes it out
    assert_int_equal(e.delay(), 200);
    assert_int_equal(e.offset(), 1000);
}

void test_horizon_forgets_stale_best(void **) {
    OffsetEstimator e(8, 10000);
    assert_true(e.add(0, 1050, 1060, 110));  // delay 100 at t4 = 110
    assert_true(e.add(5000, 6150, 6160, 5310));
    assert_int_equal(e.delay(), 100);  // 5200 ns old: still young enough
    assert_true(e.add(20000, 21150, 21160, 20310));
    assert_int_equal(e.delay(), 300);  // the old best is past the horizon
    assert_int_equal(e.best().at, 20310);
}

// The filter against a reference that reads every competing sample each
// time: random delays with many ties, offsets that tell samples apart,
// times mostly in order and sometimes not (and sometimes equal), every
// window size, with and without a horizon.  The filter keeps its best
// between samples; the reference never does.
void test_filter_matches_a_full_scan(void **) {
    uint64_t rng = 12345;
    auto next = [&rng](uint64_t n) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        return static_cast<int64_t>((rng >> 33) % n);
    };
    for (unsigned window = 1; window <= OffsetEstimator::kMaxWindow; ++window) {
        for (int64_t horizon : {int64_t{0}, int64_t{3000}}) {
            OffsetEstimator e(window, horizon);
            std::vector<OffsetSample> kept;  // the last `window` accepted
            int64_t t = 0;
            for (int i = 0; i < 3000; ++i) {
                t += next(10) == 0 ? -next(2000) : next(8) == 0 ? 0 : next(1500);  // now and then out of order, or equal
                const int64_t delay = 100 + 10 * next(8);  // ties are common
                const int64_t out = next(delay + 1), hold = next(50);  // how the delay splits; the peer's hold
                const int64_t t1 = t - delay - hold, t2 = t1 + 1000 + out, t3 = t2 + hold, t4 = t;
                assert_true(e.add(t1, t2, t3, t4));
                OffsetSample s;
                assert_true(OffsetEstimator::measure(t1, t2, t3, t4, &s));
                kept.push_back(s);
                if (kept.size() > window) kept.erase(kept.begin());
                OffsetSample want{};
                bool found = false;
                for (const OffsetSample &k : kept) {  // in arrival order: exact ties go to the later one
                    if (horizon > 0 && s.at - k.at > horizon) continue;
                    if (!found || k.delay < want.delay || (k.delay == want.delay && k.at >= want.at)) want = k;
                    found = true;
                }
                assert_int_equal(e.best().delay, want.delay);
                assert_int_equal(e.best().at, want.at);
                assert_int_equal(e.best().offset, want.offset);
            }
        }
    }
}

void test_inconsistent_samples_refused(void **) {
    OffsetEstimator e;
    assert_false(e.add(100, 1000, 1010, 50));    // received before sent
    assert_false(e.add(0, 1000, 990, 100));      // the peer answered before it received
    assert_false(e.add(0, 1000, 1200, 100));     // held longer than the round trip
    assert_int_equal(e.samples(), 0);
    assert_false(e.valid());
}

void test_no_overflow_on_large_offsets(void **) {
    OffsetSample s;
    const int64_t far = 5000000000000000000LL;  // 5e18: a + b overflows int64
    assert_true(OffsetEstimator::measure(0, far, far + 10, 100, &s));
    assert_int_equal(s.offset, far - 45);
    assert_int_equal(s.delay, 90);
    assert_true(OffsetEstimator::measure(0, 1, 1, 0, &s));
    assert_int_equal(s.offset, 1);  // ((1) + (1)) / 2
    assert_true(OffsetEstimator::measure(0, 2, 2, 1, &s));
    assert_int_equal(s.offset, 1);  // (2 + 1) / 2 truncates
    assert_true(OffsetEstimator::measure(0, -2, -2, 1, &s));
    assert_int_equal(s.offset, -2);  // (-2 - 3) / 2 truncates toward zero
}

// ---------------------------------------------------------------- clock domain

// A system with an optional fake PTP clock and a scripted adjtimex.
struct FakeSystem : SystemClock {
    std::string device;             // the path that opens ("" = none)
    int fd = 900;                   // its descriptor (never a real one)
    bool caps_ok = true;            // PTP_CLOCK_GETCAPS works
    int closed = 0;                 // close_device calls
    int64_t phc_ahead_ns = 0;       // PHC - (CLOCK_REALTIME + tai)
    int phc_tai = 37;               // the TAI offset the PHC really runs at
    int64_t realtime_step_ns = 0;   // CLOCK_REALTIME stepped by this (a leap second: -1 s)
    int64_t monotonic_ahead_ns = 0; // CLOCK_MONOTONIC moved on by this (time passing)
    int adjtimex_calls = 0;
    int state = TIME_OK;            // adjtimex result
    int status = 0;                 // adjtimex status bits
    long maxerror = 100;            // us
    long esterror = 0;              // us
    int tai = 37;                   // adjtimex's TAI offset

    int open_device(const char *path) override {
        if (!device.empty() && device == path) return fd;
        errno = ENOENT;
        return -1;
    }
    void close_device(int f) override { closed += f == fd; }
    int clock_caps(int, ptp_clock_caps *caps) override {
        if (!caps_ok) {
            errno = ENOTTY;
            return -1;
        }
        *caps = ptp_clock_caps{};
        return 0;
    }
    bool read(clockid_t id, int64_t *ns) override {
        if (id == CLOCK_MONOTONIC) {
            if (!SystemClock::read(id, ns)) return false;
            *ns += monotonic_ahead_ns;
            return true;
        }
        if (id != phc_clock_id(fd) && id != CLOCK_REALTIME) return SystemClock::read(id, ns);
        if (!SystemClock::read(CLOCK_REALTIME, ns)) return false;
        *ns += id == CLOCK_REALTIME ? realtime_step_ns : phc_tai * kSec + phc_ahead_ns;
        return true;
    }
    int adjtimex(timex *tx) override {
        ++adjtimex_calls;
        *tx = timex{};
        tx->status = status;
        tx->maxerror = maxerror;
        tx->esterror = esterror;
        tx->tai = tai;
        return state;
    }
    void unsynced() {
        state = TIME_ERROR;
        status = STA_UNSYNC;
        maxerror = esterror = 16000000;
    }
};

rttcc_config_t config(int ptp_enable, const char *device, bool require_sync = false) {
    rttcc_config_t c;
    rttcc_config_defaults(&c);
    c.ptp_enable = ptp_enable;
    c.ptp_clock_device = const_cast<char *>(device);
    c.ptp_require_sync = require_sync;
    return c;
}

void test_ptp_yes_without_device_fails(void **) {
    FakeSystem sys;
    std::string err, note;
    assert_null(ClockDomain::open(config(RTTCC_PTP_YES, "/dev/ptp0"), &err, &note, &sys).get());
    assert_true(contains(err, "rttcc_ptp_enable=yes"));
    assert_true(contains(err, "/dev/ptp0"));
    assert_true(contains(err, std::strerror(ENOENT)));
    // The same on the real system, with a path that surely is not there.
    err.clear();
    assert_null(ClockDomain::open(config(RTTCC_PTP_YES, "/dev/ptp-rttcc-missing"), &err, &note).get());
    assert_true(contains(err, "/dev/ptp-rttcc-missing"));
    assert_true(contains(err, "No such file"));
    assert_null(ClockDomain::open(config(RTTCC_PTP_YES, ""), &err, &note, &sys).get());
    assert_true(contains(err, "rttcc_ptp_clock_device is empty"));
}

void test_ptp_yes_not_a_ptp_clock(void **) {
    FakeSystem sys;
    sys.device = "/dev/ptp0";
    sys.caps_ok = false;
    std::string err, note;
    assert_null(ClockDomain::open(config(RTTCC_PTP_YES, "/dev/ptp0"), &err, &note, &sys).get());
    assert_true(contains(err, "/dev/ptp0 is not a PTP clock"));
    assert_true(contains(err, "PTP_CLOCK_GETCAPS"));
    assert_int_equal(sys.closed, 1);
}

void test_ptp_yes_with_synced_phc(void **) {
    FakeSystem sys;
    sys.device = "/dev/ptp3";
    sys.phc_ahead_ns = 200;
    std::string err, note;
    auto d = ClockDomain::open(config(RTTCC_PTP_YES, "/dev/ptp3", true), &err, &note, &sys);
    assert_non_null(d.get());
    assert_int_equal(d->kind(), ClockDomain::Kind::kPhc);
    assert_string_equal(d->name().c_str(), "/dev/ptp3");
    assert_string_equal(ClockDomain::kind_name(d->kind()), "phc");
    assert_true(d->synchronized());
    assert_true(d->sync().phc_measured);
    assert_true(std::llabs(d->sync().phc_offset_ns - 200) <= d->sync().phc_read_ns + 1000);
    assert_true(d->error_bound_ns() >= 150 && d->error_bound_ns() <= 1000);
    assert_true(contains(note, "/dev/ptp3"));
    // Domain time is UTC, as a CLOCK_REALTIME host's: the PHC (realtime +
    // tai + 200 ns) less tai.  A hardware stamp is a PHC reading.
    const nanos mono = monotonic_now();
    int64_t realtime;
    assert_true(SystemClock::real().read(CLOCK_REALTIME, &realtime));
    assert_true(std::llabs(d->to_domain(mono) - (realtime + 200)) < msec(1));
    assert_true(std::llabs(d->now() - (realtime + 200)) < msec(100));
    assert_int_equal(d->from_domain(d->to_domain(mono)), static_cast<int64_t>(mono));
    assert_int_equal(d->from_reading(d->to_domain(mono) + 37 * kSec), static_cast<int64_t>(mono));
    d.reset();
    assert_int_equal(sys.closed, 1);
}

// A host with a PHC and one with only CLOCK_REALTIME, both synchronised,
// publish times on one scale (UTC): the same instant in either domain is
// the same within the clocks' error, not tai (37 s) apart.  At a leap
// second (CLOCK_REALTIME steps back, tai goes up, the PHC runs on) the PHC
// domain's time steps with CLOCK_REALTIME from update_sync() on, before a
// refresh().
void test_phc_and_realtime_domains_share_a_scale(void **) {
    FakeSystem with_phc, without;
    with_phc.device = "/dev/ptp0";
    std::string err, note;
    auto phc = ClockDomain::open(config(RTTCC_PTP_YES, "/dev/ptp0", true), &err, &note, &with_phc);
    auto rt = ClockDomain::open(config(RTTCC_PTP_NO, "", true), &err, &note, &without);
    assert_non_null(phc.get());
    assert_non_null(rt.get());
    assert_true(phc->synchronized() && rt->synchronized());
    const nanos mono = monotonic_now();
    assert_true(std::llabs(phc->to_domain(mono) - rt->to_domain(mono)) < msec(1));
    for (FakeSystem *sys : {&with_phc, &without}) {
        sys->realtime_step_ns = -kSec;
        sys->tai = 38;
    }
    phc->update_sync();
    assert_true(rt->refresh());
    assert_true(phc->synchronized());
    assert_true(std::llabs(phc->to_domain(mono) - rt->to_domain(mono)) < msec(1));
}

// A clock synchronised at open that loses it later (STA_UNSYNC), or a PHC
// that drifts past ptp_max_offset_ns, stops counting as synchronised within
// a second of refresh() calls; refresh() reads adjtimex only that often.
void test_a_later_loss_of_sync_is_seen(void **) {
    for (const bool phc : {false, true}) {
        FakeSystem sys;
        if (phc) sys.device = "/dev/ptp0";
        std::string err, note;
        auto d = ClockDomain::open(config(phc ? RTTCC_PTP_YES : RTTCC_PTP_NO, "/dev/ptp0"), &err, &note, &sys);
        assert_non_null(d.get());
        assert_true(d->synchronized());
        if (phc)
            sys.phc_ahead_ns = 50000;  // 50 us > 1000 ns
        else
            sys.unsynced();
        const int calls = sys.adjtimex_calls;
        for (int i = 0; i < 100; ++i) assert_true(d->refresh());  // passes within a second
        assert_int_equal(sys.adjtimex_calls, calls);
        assert_true(d->synchronized());
        sys.monotonic_ahead_ns += kSec;
        assert_true(d->refresh());
        assert_int_equal(sys.adjtimex_calls, calls + 1);
        assert_false(d->synchronized());
        if (!phc) assert_int_equal(d->kind(), ClockDomain::Kind::kRealtimeEstimated);
    }
}

void test_tai_offset_counts(void **) {
    FakeSystem sys;
    sys.device = "/dev/ptp0";
    sys.tai = 0;  // nobody told the kernel the TAI offset: the PHC looks 37 s off
    std::string err, note;
    auto d = ClockDomain::open(config(RTTCC_PTP_YES, "/dev/ptp0"), &err, &note, &sys);
    assert_non_null(d.get());
    assert_true(d->sync().phc_offset_ns > 36 * kSec);
    assert_false(d->synchronized());
    assert_null(ClockDomain::open(config(RTTCC_PTP_YES, "/dev/ptp0", true), &err, &note, &sys).get());
    assert_true(contains(err, "exceeds rttcc_ptp_max_offset_ns 1000 ns"));
    assert_true(contains(err, "tai 0 s"));
}

void test_auto_falls_back_with_a_note(void **) {
    FakeSystem sys;
    sys.unsynced();
    std::string err, note;
    auto d = ClockDomain::open(config(RTTCC_PTP_AUTO, "/dev/ptp0"), &err, &note, &sys);
    assert_non_null(d.get());
    assert_int_equal(d->kind(), ClockDomain::Kind::kRealtimeEstimated);
    assert_string_equal(d->name().c_str(), "CLOCK_REALTIME");
    assert_false(d->synchronized());
    assert_int_equal(d->error_bound_ns(), 16000000ull * 1000);
    assert_true(contains(note, "ptp_enable=auto"));
    assert_true(contains(note, "cannot open PTP clock /dev/ptp0"));
    assert_true(contains(note, "using CLOCK_REALTIME"));
    assert_true(contains(note, "realtime_estimated"));

    sys.device = "/dev/ptp0";  // now there is one
    d = ClockDomain::open(config(RTTCC_PTP_AUTO, "/dev/ptp0"), &err, &note, &sys);
    assert_non_null(d.get());
    assert_int_equal(d->kind(), ClockDomain::Kind::kPhc);
    assert_false(contains(note, "using CLOCK_REALTIME"));
}

void test_ptp_no_uses_realtime(void **) {
    FakeSystem sys;
    sys.device = "/dev/ptp0";  // present, but not asked for
    std::string err, note;
    auto d = ClockDomain::open(config(RTTCC_PTP_NO, "/dev/ptp0"), &err, &note, &sys);
    assert_non_null(d.get());
    assert_int_equal(d->kind(), ClockDomain::Kind::kRealtimeSynced);
    assert_true(d->synchronized());
    assert_int_equal(d->error_bound_ns(), 0);
    assert_true(contains(note, "ptp_enable=no"));
    rttcc_config_t bad = config(7, "/dev/ptp0");
    assert_null(ClockDomain::open(bad, &err, &note, &sys).get());
    assert_true(contains(err, "rttcc_ptp_enable"));
}

void test_require_sync_refuses_unsynced(void **) {
    FakeSystem sys;
    sys.unsynced();
    std::string err, note;
    assert_null(ClockDomain::open(config(RTTCC_PTP_NO, "/dev/ptp0", true), &err, &note, &sys).get());
    assert_true(contains(err, "rttcc_ptp_require_sync"));
    assert_true(contains(err, "not synchronised"));
    assert_true(contains(err, "TIME_ERROR"));
    assert_true(contains(err, "STA_UNSYNC"));
    assert_true(contains(err, "maxerror 16000000 us"));
}

void test_require_sync_checks_the_error(void **) {
    FakeSystem sys;
    std::string err, note;
    sys.esterror = 0;  // synchronised, no error estimate
    auto d = ClockDomain::open(config(RTTCC_PTP_NO, "", true), &err, &note, &sys);
    assert_non_null(d.get());
    assert_true(d->synchronized());
    sys.esterror = 5;  // 5 us > 1000 ns
    assert_null(ClockDomain::open(config(RTTCC_PTP_NO, "", true), &err, &note, &sys).get());
    assert_true(contains(err, "5000 ns exceeds rttcc_ptp_max_offset_ns 1000 ns"));
    rttcc_config_t loose = config(RTTCC_PTP_NO, "", true);
    loose.ptp_max_offset_ns = 10000;
    assert_non_null(ClockDomain::open(loose, &err, &note, &sys).get());
    // A PHC too far from CLOCK_REALTIME.
    sys.esterror = 0;
    sys.device = "/dev/ptp0";
    sys.phc_ahead_ns = 50000;
    assert_null(ClockDomain::open(config(RTTCC_PTP_YES, "/dev/ptp0", true), &err, &note, &sys).get());
    assert_true(contains(err, "/dev/ptp0 clock error"));
    assert_true(contains(err, "PHC - (CLOCK_REALTIME + tai) = "));
}

void test_real_clocks_round_trip(void **) {
    std::string err, note;
    auto d = ClockDomain::open(config(RTTCC_PTP_NO, nullptr), &err, &note);
    assert_non_null(d.get());
    assert_string_equal(d->name().c_str(), "CLOCK_REALTIME");
    assert_true((d->kind() == ClockDomain::Kind::kRealtimeSynced) == d->sync().realtime_synced);
    assert_true(d->sync().state >= 0);
    assert_true(d->refresh());
    const nanos mono = monotonic_now();
    int64_t rt;
    assert_true(SystemClock::real().read(CLOCK_REALTIME, &rt));
    assert_true(std::llabs(d->to_domain(mono) - rt) < msec(1));
    assert_int_equal(d->from_domain(d->to_domain(mono)), static_cast<int64_t>(mono));
    assert_true(std::llabs(d->now() - rt) < msec(100));
    // The static helper: a CLOCK_REALTIME reading back on the engine's clock.
    const int64_t off = ClockDomain::sample_realtime_offset();
    assert_true(SystemClock::real().read(CLOCK_REALTIME, &rt));
    const nanos now = monotonic_now();
    const int64_t back = ClockDomain::realtime_to_mono(rt, off);
    assert_true(back <= static_cast<int64_t>(now) + static_cast<int64_t>(usec(10)));
    assert_true(static_cast<int64_t>(now) - back < static_cast<int64_t>(msec(1)));
    assert_true(std::llabs(off - d->offset()) < msec(1));
}

}  // namespace

// The floor of one-way times: the least of the current span and the one
// before; an older minimum is forgotten (clock drift), and so is one from
// before a gap of two spans.
static void test_windowed_min_follows_two_spans(void **) {
    WindowedMin m(1000);
    m.add(50, 0);
    m.add(40, 10);
    m.add(60, 999);
    assert_int_equal(m.min(), 40);
    m.add(70, 1000);  // a new span: the previous one still counts
    assert_int_equal(m.min(), 40);
    m.add(65, 1500);
    assert_int_equal(m.min(), 40);
    m.add(80, 2000);  // the span holding 40 retires
    assert_int_equal(m.min(), 65);
    m.add(90, 5000);  // after a gap of more than a span the old floor is gone
    assert_int_equal(m.min(), 90);
    m.add(-30, 5001);  // clocks with any offset: negative one-way times too
    assert_int_equal(m.min(), -30);
}

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_symmetric_path),
        cmocka_unit_test(test_windowed_min_follows_two_spans),
        cmocka_unit_test(test_asymmetric_path),
        cmocka_unit_test(test_negative_offset),
        cmocka_unit_test(test_filter_keeps_least_delay),
        cmocka_unit_test(test_window_forgets_old_best),
        cmocka_unit_test(test_horizon_forgets_stale_best),
        cmocka_unit_test(test_filter_matches_a_full_scan),
        cmocka_unit_test(test_inconsistent_samples_refused),
        cmocka_unit_test(test_no_overflow_on_large_offsets),
        cmocka_unit_test(test_ptp_yes_without_device_fails),
        cmocka_unit_test(test_ptp_yes_not_a_ptp_clock),
        cmocka_unit_test(test_ptp_yes_with_synced_phc),
        cmocka_unit_test(test_phc_and_realtime_domains_share_a_scale),
        cmocka_unit_test(test_a_later_loss_of_sync_is_seen),
        cmocka_unit_test(test_tai_offset_counts),
        cmocka_unit_test(test_auto_falls_back_with_a_note),
        cmocka_unit_test(test_ptp_no_uses_realtime),
        cmocka_unit_test(test_require_sync_refuses_unsynced),
        cmocka_unit_test(test_require_sync_checks_the_error),
        cmocka_unit_test(test_real_clocks_round_trip),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
