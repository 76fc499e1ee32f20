// regions.h: a key names memory granted to one peer, its puts land only
// inside it, a key of a finished call stays dead, and a put is whole
// exactly when all of its bytes arrived (a peer has at most its window of
// puts partly landed); an RMA window's exposures are found by window, peer
// and address.
#include <vector>

#include "cmocka_cxx.h"
#include "engine/mac.h"
#include "engine/regions.h"

using namespace rttcc;

static void test_put_addr_packs_key_and_offset(void **) {
    const uint64_t a = put_addr(0xabcdef, 0xfedcba9876ull);
    assert_int_equal(put_key(a), 0xabcdef);
    assert_int_equal(put_offset(a), 0xfedcba9876ull);
}

static void test_targets_stay_inside_their_grant(void **) {
    std::vector<uint8_t> buf(1000);
    GrantTable t(rttcc::random_u32());
    const uint32_t k = t.grant(3, buf.data(), buf.size());
    assert_int_not_equal(k, 0);
    assert_ptr_equal(t.target(3, k, 0, 1000), buf.data());
    assert_ptr_equal(t.target(3, k, 999, 1), buf.data() + 999);
    assert_ptr_equal(t.target(3, k, 1000, 0), buf.data() + 1000);
    assert_null(t.target(3, k, 999, 2));                 // one byte past the end
    assert_null(t.target(3, k, 1001, 0));
    assert_null(t.target(3, k, ~uint64_t{0}, 2));       // offset + len wraps
    assert_null(t.target(3, k ^ 1, 0, 1));               // unknown key
    assert_true(t.revoke(k));
    assert_null(t.target(3, k, 0, 1));                   // gone
    assert_false(t.revoke(k));
}

// A grant names its peer: another peer that knows the key (any peer of
// the job could have seen it) puts nothing into it.
static void test_only_its_peer_may_use_a_grant(void **) {
    std::vector<uint8_t> a(100), b(100);
    GrantTable t(rttcc::random_u32());
    const uint32_t ka = t.grant(1, a.data(), a.size()), kb = t.grant(2, b.data(), b.size());
    assert_ptr_equal(t.target(1, ka, 0, 100), a.data());
    assert_ptr_equal(t.target(2, kb, 0, 100), b.data());
    assert_null(t.target(2, ka, 0, 1));  // the right key, the wrong peer
    assert_null(t.target(1, kb, 0, 1));
    assert_null(t.target(0, ka, 0, 1));
}

static void test_keys_are_unique_and_never_zero(void **) {
    uint8_t b;
    GrantTable t(rttcc::random_u32());
    std::vector<uint32_t> keys;
    for (int i = 0; i < 100; ++i) keys.push_back(t.grant(0, &b, 1));
    for (size_t i = 0; i < keys.size(); ++i) {
        assert_int_not_equal(keys[i], 0);
        assert_true(keys[i] <= kPutKeyMask);
        for (size_t j = i + 1; j < keys.size(); ++j) assert_int_not_equal(keys[i], keys[j]);
    }
    for (uint32_t k : keys) assert_ptr_equal(t.target(0, k, 0, 1), &b);  // every one still found
    assert_int_equal(t.live(), 100);
    assert_int_equal(t.grant(0, &b, kPutOffsetMask + 1), 0);  // too large to address
    GrantTable u(kPutKeyMask);  // the counter wraps past 0
    assert_int_equal(u.grant(0, &b, 1), kPutKeyMask);
    assert_int_equal(u.grant(0, &b, 1), 1);
}

// The key of a finished call stays dead: one peer's calls, one after the
// other, each granted and revoked, never get a key back before the counter
// went round, even though each grant reuses the slot of the one before.
static void test_a_finished_calls_key_stays_dead(void **) {
    uint8_t b;
    GrantTable t(rttcc::random_u32());
    const uint32_t first = t.grant(7, &b, 1);
    assert_true(t.revoke(first));
    std::vector<bool> seen(kPutKeyMask + 1, false);
    seen[first] = true;
    for (int call = 0; call < 1 << 20; ++call) {
        const uint32_t k = t.grant(7, &b, 1);
        assert_false(seen[k]);
        seen[k] = true;
        assert_null(t.target(7, first, 0, 1));
        assert_true(t.revoke(k));
    }
}

// A key whose slot is taken by a live grant is skipped, and a live grant
// outlives any number of others coming and going.
static void test_live_grants_are_skipped(void **) {
    uint8_t b, c;
    GrantTable t(1);
    assert_int_equal(t.grant(0, &b, 1), 1);  // held for the whole test
    for (uint32_t k = 2; k <= 16; ++k) {
        assert_int_equal(t.grant(0, &c, 1), k);
        assert_true(t.revoke(k));
    }
    assert_int_equal(t.grant(0, &c, 1), 18);  // 17 shares 1's slot (16 slots)
    for (int i = 0; i < 1000; ++i) t.grant(0, &c, 1);  // the table grows
    assert_ptr_equal(t.target(0, 1, 0, 1), &b);
    assert_int_equal(t.live(), 1002);
}

// An exposure names its window and its peer: found by its key only for
// that peer, and by address only among that window's exposures to that
// peer (a dynamic window's lookup); a revoked one is found by neither.
static void test_exposures_are_found_by_window_peer_and_address(void **) {
    std::vector<uint8_t> a(100), b(200), c(50);
    GrantTable t(rttcc::random_u32());
    const uint32_t plain = t.grant(1, a.data(), a.size(), /*notify=*/false);
    const uint32_t ka = t.expose(7, 1, a.data(), a.size()), kb = t.expose(7, 1, b.data(), b.size());
    const uint32_t kc = t.expose(8, 1, c.data(), c.size()), k2 = t.expose(7, 2, b.data(), b.size());
    assert_false(t.place(1, ka, 0, 0).grant->notify);  // silent, as any exposure
    assert_ptr_equal(t.target(1, ka, 0, 100), a.data());
    assert_int_equal(t.place(1, ka, 0, 0).grant->window, 7);
    assert_int_equal(t.place(1, kc, 0, 0).grant->window, 8);
    assert_null(t.place(2, ka, 0, 0).grant);                // another peer's
    assert_int_equal(t.place(1, plain, 0, 0).grant->window, 0);  // silent, but no window's
    auto at = [](const std::vector<uint8_t> &v, size_t i) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(v.data() + i)); };
    assert_int_equal(t.exposure_holding(7, 1, at(b, 10), 190)->key, kb);
    assert_int_equal(t.exposure_holding(7, 1, at(a, 0), 100)->key, ka);
    assert_int_equal(t.exposure_holding(7, 2, at(b, 0), 1)->key, k2);
    assert_null(t.exposure_holding(7, 1, at(b, 10), 191));  // one byte past its end
    assert_null(t.exposure_holding(7, 1, at(c, 0), 1));     // window 8's
    assert_null(t.exposure_holding(7, 3, at(a, 0), 1));     // no exposure to peer 3
    assert_null(t.exposure_holding(7, 1, ~uint64_t{0}, 2));
    assert_true(t.revoke(kb));
    assert_null(t.place(1, kb, 0, 1).grant);  // nothing of window 7 holds its bytes now
    assert_null(t.exposure_holding(7, 1, at(b, 10), 1));
    assert_int_equal(t.exposure_holding(7, 1, at(a, 99), 1)->key, ka);
    for (int i = 0; i < 100; ++i) t.grant(0, &a[0], 1);  // the table grows: exposures are still found
    assert_int_equal(t.exposure_holding(7, 1, at(a, 5), 5)->key, ka);
    assert_true(t.revoke(ka));
    assert_true(t.revoke(k2));
    assert_null(t.exposure_holding(7, 2, at(b, 0), 1));
}

// A window key names a dynamic window's memory by address: its offsets
// reach the exposure of that window to that peer holding them when they
// are used, through any number of detaches and attaches (nothing is
// remembered of revoked exposures); nothing where nothing is attached,
// nothing of another window, nothing for another peer.
static void test_a_window_key_reaches_what_is_attached_now(void **) {
    std::vector<uint8_t> mem(300);
    const auto addr = [&](size_t i) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(mem.data() + i)); };
    GrantTable t(rttcc::random_u32());
    const uint32_t wk = t.expose_window(7, 1);
    assert_int_not_equal(wk, 0);
    assert_null(t.target(1, wk, addr(110), 20));  // nothing attached
    assert_null(t.exposure_holding(7, 1, addr(110), 20));  // a lookup never finds the window key
    const uint32_t region = t.expose(7, 1, mem.data() + 100, 100);  // [100, 200)
    GrantTable::Place p = t.place(1, wk, addr(110), 20);
    assert_non_null(p.grant);
    assert_int_equal(p.grant->key, region);  // the exposure itself (a large get's reply is sent from it)
    assert_false(p.grant->notify);
    assert_ptr_equal(p.at, mem.data() + 110);
    assert_null(t.place_put(1, wk, addr(110), 20).at);  // a PUT packet's offset is no address
    assert_ptr_equal(t.place_put(1, region, 10, 20).at, mem.data() + 110);  // the region's own key is
    assert_null(t.target(1, wk, addr(190), 20));  // past its end
    assert_null(t.target(1, wk, addr(90), 20));   // before its start
    assert_null(t.target(2, wk, addr(110), 20));  // another peer does not hold the key
    const uint32_t other = t.expose(8, 1, mem.data(), 300);  // window 8's memory is not window 7's
    assert_true(t.revoke(region));
    assert_null(t.target(1, wk, addr(110), 20));
    uint32_t wide = 0;
    for (int i = 0; i < 5000; ++i) {  // far more than any table of revoked keys kept
        wide = t.expose(7, 1, mem.data(), 300);
        assert_int_not_equal(wide, 0);
        if (i + 1 < 5000) assert_true(t.revoke(wide));
    }
    p = t.place(1, wk, addr(190), 20);  // [0, 300) holds it now
    assert_int_equal(p.grant->key, wide);
    assert_ptr_equal(p.at, mem.data() + 190);
    assert_true(t.revoke(wk));
    assert_null(t.target(1, wk, addr(190), 20));
    assert_int_equal(t.exposure_holding(7, 1, addr(190), 20)->key, wide);  // its exposures stay
    assert_true(t.revoke(wide) && t.revoke(other));
    assert_int_equal(t.live(), 0);
}

// The exposures of one window to one peer do not overlap (the one holding
// an address is then the last that starts at or before it): one that
// would is refused; other peers' and other windows' are apart.  Among
// many, each address finds its own.
static void test_exposures_of_a_window_to_a_peer_do_not_overlap(void **) {
    std::vector<uint8_t> mem(4096);
    const auto addr = [&](size_t i) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(mem.data() + i)); };
    GrantTable t(rttcc::random_u32());
    const uint32_t k = t.expose(7, 1, mem.data() + 100, 100);  // [100, 200)
    assert_int_equal(t.expose(7, 1, mem.data() + 199, 1), 0);
    assert_int_equal(t.expose(7, 1, mem.data() + 50, 51), 0);
    assert_int_equal(t.expose(7, 1, mem.data(), 300), 0);
    assert_int_equal(t.expose(7, 1, mem.data() + 100, 100), 0);
    assert_int_equal(t.expose(7, 1, mem.data(), 0), 0);
    const uint32_t before = t.expose(7, 1, mem.data() + 50, 50), after = t.expose(7, 1, mem.data() + 200, 1);
    assert_true(before && after);
    const uint32_t peer2 = t.expose(7, 2, mem.data() + 150, 10), win8 = t.expose(8, 1, mem.data() + 150, 10);
    assert_true(peer2 && win8);
    assert_true(t.revoke(k));
    const uint32_t again = t.expose(7, 1, mem.data() + 100, 100);  // its place is free again
    assert_int_not_equal(again, 0);
    assert_true(t.revoke(before) && t.revoke(after) && t.revoke(again) && t.revoke(peer2) && t.revoke(win8));
    std::vector<uint32_t> keys;  // 1000 regions of 3 bytes, one byte apart
    for (size_t i = 0; i < 1000; ++i) keys.push_back(t.expose(7, 1, mem.data() + 4 * i, 3));
    for (size_t i = 0; i < 1000; ++i) {
        assert_int_equal(t.exposure_holding(7, 1, addr(4 * i + 1), 2)->key, keys[i]);
        assert_null(t.exposure_holding(7, 1, addr(4 * i + 3), 1));  // the gap
    }
}

static void test_put_is_whole_when_every_byte_landed(void **) {
    PutArrivals a(64);
    PutArrivals::Put done{};
    const uint64_t addr = put_addr(5, 64);
    const auto add = [&](uint32_t id, uint32_t len, uint8_t tag, uint32_t offset, uint32_t n) {
        return static_cast<int>(a.add(id, len, addr, tag, offset, n, &done));
    };
    constexpr int kBad = static_cast<int>(PutArrivals::Step::kBad);
    constexpr int kPartial = static_cast<int>(PutArrivals::Step::kPartial);
    constexpr int kComplete = static_cast<int>(PutArrivals::Step::kComplete);
    assert_int_equal(add(1, 300, 7, 0, 100), kPartial);
    assert_int_equal(add(2, 50, 7, 0, 50), kComplete);
    assert_int_equal(done.msg_id, 2);
    assert_int_equal(add(1, 300, 8, 100, 100), kBad);  // other tag
    assert_int_equal(add(1, 999, 7, 100, 100), kBad);  // other length
    assert_int_equal(add(1, 300, 7, 200, 100), kPartial);
    assert_int_equal(add(1, 300, 7, 100, 100), kComplete);
    assert_int_equal(done.len, 300);
    assert_int_equal(done.addr, addr);
    assert_int_equal(done.tag, 7);
    assert_int_equal(a.active(), 0);
}

// A put counted bytes, not which bytes: two chunks (two sequence numbers)
// over the same 100 bytes of a 200-byte put made it whole with its last
// 100 bytes never written.  A chunk over landed bytes is refused now (and
// does not land), and the put is whole when the bytes it lacks come.
static void test_a_chunk_over_landed_bytes_is_refused(void **) {
    PutArrivals a(64);
    PutArrivals::Put done{};
    const uint64_t addr = put_addr(5, 0);
    assert_int_equal(static_cast<int>(a.add(9, 200, addr, 1, 0, 100, &done)), static_cast<int>(PutArrivals::Step::kPartial));
    assert_int_equal(static_cast<int>(a.add(9, 200, addr, 1, 0, 100, &done)), static_cast<int>(PutArrivals::Step::kBad));
    assert_int_equal(static_cast<int>(a.add(9, 200, addr, 1, 50, 100, &done)), static_cast<int>(PutArrivals::Step::kBad));
    assert_int_equal(a.active(), 1);
    assert_int_equal(static_cast<int>(a.add(9, 200, addr, 1, 100, 100, &done)),
                     static_cast<int>(PutArrivals::Step::kComplete));
    assert_int_equal(a.active(), 0);
}

// Holes are bounded as puts are: at most window + 1 spans in all.
static void test_holes_in_puts_are_capped(void **) {
    PutArrivals a(4);
    PutArrivals::Put done{};
    const uint64_t addr = put_addr(5, 0);
    for (uint32_t k = 0; k < 5; ++k)  // 5 separate spans of one put
        assert_int_equal(static_cast<int>(a.add(1, 1000, addr, 0, k * 100, 10, &done)),
                         static_cast<int>(PutArrivals::Step::kPartial));
    assert_int_equal(static_cast<int>(a.add(1, 1000, addr, 0, 700, 10, &done)), static_cast<int>(PutArrivals::Step::kBad));
    assert_int_equal(static_cast<int>(a.add(2, 1000, addr, 0, 0, 10, &done)), static_cast<int>(PutArrivals::Step::kBad));
    assert_int_equal(static_cast<int>(a.add(1, 1000, addr, 0, 10, 90, &done)),  // joins two: fewer spans
                     static_cast<int>(PutArrivals::Step::kPartial));
    assert_int_equal(static_cast<int>(a.add(2, 1000, addr, 0, 0, 10, &done)), static_cast<int>(PutArrivals::Step::kPartial));
    a.clear();
    assert_int_equal(a.active(), 0);
    assert_int_equal(static_cast<int>(a.add(3, 20, addr, 0, 0, 20, &done)), static_cast<int>(PutArrivals::Step::kComplete));
}

// A peer cannot have more than its window of puts partly landed (regions.h
// says why): the put beyond is refused, and a completed put makes room.
static void test_puts_partly_landed_are_capped_at_the_window(void **) {
    PutArrivals a(64);
    PutArrivals::Put done{};
    for (uint32_t id = 1; id <= 64; ++id) {
        assert_true(a.fits(id, 300, put_addr(5, id * 300), 0, 0, 100));
        assert_int_equal(static_cast<int>(a.add(id, 300, put_addr(5, id * 300), 0, 0, 100, &done)),
                         static_cast<int>(PutArrivals::Step::kPartial));
    }
    assert_false(a.beyond_cap(64));  // one of them: its chunks still fit
    assert_true(a.fits(64, 300, put_addr(5, 64 * 300), 0, 100, 100));
    assert_true(a.beyond_cap(65));
    assert_false(a.fits(65, 300, put_addr(5, 65 * 300), 0, 0, 100));
    assert_int_equal(static_cast<int>(a.add(65, 300, put_addr(5, 65 * 300), 0, 0, 100, &done)),
                     static_cast<int>(PutArrivals::Step::kBad));
    assert_int_equal(a.active(), 64);
    assert_int_equal(static_cast<int>(a.add(3, 300, put_addr(5, 900), 0, 100, 200, &done)),
                     static_cast<int>(PutArrivals::Step::kComplete));
    assert_false(a.beyond_cap(65));
    assert_true(a.fits(65, 300, put_addr(5, 65 * 300), 0, 0, 100));
}

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_put_addr_packs_key_and_offset),
        cmocka_unit_test(test_targets_stay_inside_their_grant),
        cmocka_unit_test(test_only_its_peer_may_use_a_grant),
        cmocka_unit_test(test_keys_are_unique_and_never_zero),
        cmocka_unit_test(test_a_finished_calls_key_stays_dead),
        cmocka_unit_test(test_live_grants_are_skipped),
        cmocka_unit_test(test_exposures_are_found_by_window_peer_and_address),
        cmocka_unit_test(test_a_window_key_reaches_what_is_attached_now),
        cmocka_unit_test(test_exposures_of_a_window_to_a_peer_do_not_overlap),
        cmocka_unit_test(test_put_is_whole_when_every_byte_landed),
        cmocka_unit_test(test_a_chunk_over_landed_bytes_is_refused),
        cmocka_unit_test(test_holes_in_puts_are_capped),
        cmocka_unit_test(test_puts_partly_landed_are_capped_at_the_window),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
