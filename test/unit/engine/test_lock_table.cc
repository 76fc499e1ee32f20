// lock_table.h: a window's lock is held by one exclusive holder or by any
// number of shared ones; waiters are granted in arrival order (a waiting
// exclusive request holds back later shared ones); this process only takes
// it when it is free and nobody waits; a forgotten (dead) peer lets go of
// what it held and stops waiting.
#include <vector>

#include "cmocka_cxx.h"
#include "engine/lock_table.h"

using namespace rttcc;

namespace {
LockTable::Request shared(uint32_t who) { return {who, false, 100 + who, 7}; }
LockTable::Request exclusive(uint32_t who) { return {who, true, 100 + who, 7}; }
std::vector<uint32_t> whos(const std::vector<LockTable::Request> &v) {
    std::vector<uint32_t> w;
    for (const auto &r : v) w.push_back(r.who);
    return w;
}
}  // namespace

static void test_exclusive_excludes_everyone(void **) {
    LockTable t;
    std::vector<LockTable::Request> granted;
    assert_true(t.acquire(exclusive(1)));
    assert_false(t.acquire(shared(2)));
    assert_false(t.acquire(exclusive(3)));
    assert_int_equal(t.holders(), 1);
    assert_int_equal(t.waiting(), 2);
    assert_true(t.release(1, &granted));
    assert_true(whos(granted) == std::vector<uint32_t>{2});
    assert_int_equal(granted[0].reply_key, 102);  // comes back whole, to be answered
    granted.clear();
    assert_true(t.release(2, &granted));
    assert_true(whos(granted) == std::vector<uint32_t>{3});
}

static void test_shared_holders_share(void **) {
    LockTable t;
    std::vector<LockTable::Request> granted;
    assert_true(t.acquire(shared(1)));
    assert_true(t.acquire(shared(2)));
    assert_true(t.try_acquire(LockTable::kSelf, false));
    assert_int_equal(t.holders(), 3);
    assert_false(t.acquire(exclusive(3)));  // waits for all three
    assert_true(t.release(1, &granted));
    assert_true(t.release(LockTable::kSelf, &granted));
    assert_true(granted.empty());
    assert_true(t.release(2, &granted));
    assert_true(whos(granted) == std::vector<uint32_t>{3});
}

// A shared request behind a waiting exclusive one waits too (FIFO), and
// the shared ones behind it are let in together.
static void test_waiters_are_granted_in_arrival_order(void **) {
    LockTable t;
    std::vector<LockTable::Request> granted;
    assert_true(t.acquire(shared(1)));
    assert_false(t.acquire(exclusive(2)));
    assert_false(t.acquire(shared(3)));  // compatible with the holder, but 2 came first
    assert_false(t.acquire(shared(4)));
    assert_false(t.acquire(exclusive(5)));
    assert_true(t.release(1, &granted));
    assert_true(whos(granted) == std::vector<uint32_t>{2});
    assert_true(t.release(2, &granted));
    assert_true(whos(granted) == (std::vector<uint32_t>{2, 3, 4}));
    assert_true(t.release(4, &granted));
    assert_true(t.release(3, &granted));
    assert_true(whos(granted) == (std::vector<uint32_t>{2, 3, 4, 5}));
}

// This process never waits: it takes the lock only if it is free for it
// now and no peer waits (it would overtake them).
static void test_this_process_takes_it_only_when_nobody_waits(void **) {
    LockTable t;
    std::vector<LockTable::Request> granted;
    assert_true(t.try_acquire(LockTable::kSelf, true));
    assert_false(t.try_acquire(LockTable::kSelf, false));
    assert_int_equal(t.waiting(), 0);  // refused, not queued
    assert_true(t.release(LockTable::kSelf, &granted));
    assert_true(t.acquire(shared(1)));
    assert_true(t.try_acquire(LockTable::kSelf, false));
    assert_false(t.try_acquire(LockTable::kSelf, true));
    assert_true(t.release(LockTable::kSelf, &granted));
    assert_false(t.acquire(exclusive(2)));
    assert_false(t.try_acquire(LockTable::kSelf, false));  // free for shared, but 2 waits
    assert_int_equal(t.waiting(), 1);
}

static void test_releasing_what_is_not_held_is_refused(void **) {
    LockTable t;
    std::vector<LockTable::Request> granted;
    assert_false(t.release(1, &granted));
    assert_true(t.acquire(shared(1)));
    assert_false(t.acquire(exclusive(2)));
    assert_false(t.release(2, &granted));  // waiting is not holding
    assert_int_equal(t.holders(), 1);
    assert_int_equal(t.waiting(), 1);
    assert_true(granted.empty());
}

// A dead peer: its holds go, its waiting requests go, and who waited
// behind it gets the lock.
static void test_a_forgotten_peer_lets_go(void **) {
    LockTable t;
    std::vector<LockTable::Request> granted;
    assert_true(t.acquire(exclusive(1)));
    assert_false(t.acquire(exclusive(2)));
    assert_false(t.acquire(shared(1)));  // 1 waits too (a second epoch of it)
    assert_false(t.acquire(shared(3)));
    t.forget(1, &granted);
    assert_true(whos(granted) == std::vector<uint32_t>{2});
    assert_int_equal(t.waiting(), 1);
    t.forget(2, &granted);
    assert_true(whos(granted) == (std::vector<uint32_t>{2, 3}));
    assert_int_equal(t.holders(), 1);
    assert_int_equal(t.waiting(), 0);
}

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exclusive_excludes_everyone),
        cmocka_unit_test(test_shared_holders_share),
        cmocka_unit_test(test_waiters_are_granted_in_arrival_order),
        cmocka_unit_test(test_this_process_takes_it_only_when_nobody_waits),
        cmocka_unit_test(test_releasing_what_is_not_held_is_refused),
        cmocka_unit_test(test_a_forgotten_peer_lets_go),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
