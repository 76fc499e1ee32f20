// hotel.h: timers expire at their deadline, in deadline order within a
// sweep, check_out stops a timer, deadlines beyond one wheel turn wait,
// next_deadline is the earliest guest's.
#include <algorithm>
#include <random>
#include <vector>

#include "cmocka_cxx.h"
#include "engine/hotel.h"

using namespace rttcc;

static void test_expires_only_when_due(void **) {
    Hotel h(64, 10);  // 1.024 us rooms, 65.5 us per turn
    h.start(0);
    TxSegment a, b;
    h.check_in(a, 5000);
    h.check_in(b, 20000);
    std::vector<TxSegment *> out;
    h.expire(4999, [&](TxSegment &s) { out.push_back(&s); });
    assert_int_equal(out.size(), 0);
    h.expire(5000, [&](TxSegment &s) { out.push_back(&s); });
    assert_int_equal(out.size(), 1);
    assert_ptr_equal(out[0], &a);
    assert_false(a.in_hotel);
    h.expire(30000, [&](TxSegment &s) { out.push_back(&s); });
    assert_int_equal(out.size(), 2);
    assert_int_equal(h.guests(), 0);
}

static void test_check_out_cancels(void **) {
    Hotel h(64, 10);
    h.start(0);
    TxSegment a;
    h.check_in(a, 1000);
    h.check_out(a);
    h.expire(1000000, [](TxSegment &) { fail(); });
}

static void test_beyond_one_turn_waits(void **) {
    Hotel h(64, 10);
    h.start(0);
    TxSegment far;
    h.check_in(far, 1000000);  // ~15 turns ahead
    int fired = 0;
    for (nanos t = 0; t < 1000000; t += 3000) h.expire(t, [&](TxSegment &) { ++fired; });
    assert_int_equal(fired, 0);
    h.expire(1000000, [&](TxSegment &) { ++fired; });
    assert_int_equal(fired, 1);
}

static void test_sweep_returns_deadline_order(void **) {
    Hotel h(1024, 10);
    h.start(0);
    std::vector<TxSegment> segs(50);
    for (size_t i = 0; i < segs.size(); ++i) h.check_in(segs[i], 100000 - i * 1500);
    nanos last = 0;
    size_t n = 0;
    h.expire(200000, [&](TxSegment &s) {
        assert_true(s.deadline >= last || (last - s.deadline) < 1024);  // same room may be unordered
        last = s.deadline;
        ++n;
    });
    assert_int_equal(n, segs.size());
}

static void test_next_deadline_simple(void **) {
    Hotel h(64, 10);
    h.start(0);
    assert_true(h.next_deadline() == kNever);
    TxSegment a, b, far;
    h.check_in(far, 1000000);  // turns ahead, in an early room
    h.check_in(b, 20000);
    assert_int_equal(h.next_deadline(), 20000);
    h.check_in(a, 5000);
    assert_int_equal(h.next_deadline(), 5000);
    h.check_out(a);
    assert_int_equal(h.next_deadline(), 20000);
    h.expire(20000, [](TxSegment &) {});
    assert_int_equal(h.next_deadline(), 1000000);
    h.check_out(far);
    assert_true(h.next_deadline() == kNever);
}

static void test_next_deadline_of_an_overdue_guest(void **) {
    Hotel h(64, 10);
    h.start(0);
    TxSegment later, overdue;
    h.check_in(later, 90000);
    h.expire(50000, [](TxSegment &) {});
    h.check_in(overdue, 1000);  // due long ago: sits in the cursor's room
    assert_int_equal(h.next_deadline(), 1000);
}

// Random work on a hotel of 64 rooms of 1.024 us (65.5 us a turn): check-ins
// (overdue, near, turns ahead), check-outs, and sweeps, each one by
// sweep(h, segs, now, rng); after(h, segs, rng) follows every step.
template <typename Sweep, typename After>
static void random_work(uint64_t seed, int steps, Sweep sweep, After after) {
    Hotel h(64, 10);
    h.start(0);
    std::mt19937_64 rng(seed);
    std::vector<TxSegment> segs(200);
    nanos now = 0;
    for (int step = 0; step < steps; ++step) {
        TxSegment &s = segs[rng() % segs.size()];
        switch (rng() % 4) {
            case 0:
            case 1: {
                if (s.in_hotel) h.check_out(s);
                const bool overdue = rng() % 8 == 0, far = rng() % 2;  // one draw a statement: a fixed sequence
                const nanos by = rng() % (overdue ? 5000 : far ? 600000 : 30000);
                h.check_in(s, overdue ? now - std::min<nanos>(now, by) : now + by);
                break;
            }
            case 2:
                if (s.in_hotel) h.check_out(s);
                break;
            case 3: {
                const bool long_step = rng() % 4 == 0;
                now += rng() % (long_step ? 100000 : 20000);
                sweep(h, segs, now, rng);
                break;
            }
        }
        after(h, segs, rng);
    }
}

static nanos earliest_guest(const std::vector<TxSegment> &segs) {
    nanos want = kNever;
    for (const TxSegment &g : segs)
        if (g.in_hotel) want = std::min(want, g.deadline);
    return want;
}

// Against the brute-force minimum.
static void test_next_deadline_is_the_minimum(void **) {
    random_work(
        7, 20000, [](Hotel &h, std::vector<TxSegment> &, nanos now, std::mt19937_64 &) { h.expire(now, [](TxSegment &) {}); },
        [](Hotel &h, const std::vector<TxSegment> &segs, std::mt19937_64 &) {
            assert_true(h.next_deadline() == earliest_guest(segs));
        });
}

// Against brute force: a sweep hands over every guest due by its time and
// no guest that is not, also when the callback checks some in again, due
// or not, as the engine's resends and probe_due do (one checked in due
// may come back in the same sweep, or in the next).  next_deadline, which
// resets the hotel's bound on the deadlines, is asked now and then.
static void test_expire_hands_over_exactly_the_due(void **) {
    random_work(
        11, 40000,
        [](Hotel &h, std::vector<TxSegment> &segs, nanos now, std::mt19937_64 &rng) {
            std::vector<TxSegment *> due, got, again;
            for (TxSegment &g : segs)
                if (g.in_hotel && g.deadline <= now) due.push_back(&g);
            h.expire(now, [&](TxSegment &g) {
                assert_true(g.deadline <= now);
                got.push_back(&g);
                if (rng() % 3 == 0) {  // a new timer: sometimes already due
                    h.check_in(g, rng() % 2 ? now - std::min<nanos>(now, rng() % 1000) : now + 1 + rng() % 50000);
                    again.push_back(&g);
                }
            });
            for (TxSegment *g : due) assert_true(std::find(got.begin(), got.end(), g) != got.end());
            for (TxSegment *g : got)
                assert_true(std::find(due.begin(), due.end(), g) != due.end() ||
                            std::find(again.begin(), again.end(), g) != again.end());
        },
        [](Hotel &h, const std::vector<TxSegment> &segs, std::mt19937_64 &rng) {
            if (rng() % 16 == 0) assert_true(h.next_deadline() == earliest_guest(segs));
        });
}

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_expires_only_when_due),
        cmocka_unit_test(test_check_out_cancels),
        cmocka_unit_test(test_beyond_one_turn_waits),
        cmocka_unit_test(test_sweep_returns_deadline_order),
        cmocka_unit_test(test_next_deadline_simple),
        cmocka_unit_test(test_next_deadline_of_an_overdue_guest),
        cmocka_unit_test(test_next_deadline_is_the_minimum),
        cmocka_unit_test(test_expire_hands_over_exactly_the_due),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
