// regions.h: keys name exposed memory, puts land only inside it, and a
// put is whole exactly when all of its bytes arrived.
#include <vector>

#include "cmocka_cxx.h"
#include "mac.h"
#include "regions.h"

using namespace rttcc;

static void test_put_addr_packs_key_and_offset(void **) {
    const uint64_t a = put_addr(0xabcdef, 0xfedcba9876ull);
    assert_int_equal(put_key(a), 0xabcdef);
    assert_int_equal(put_offset(a), 0xfedcba9876ull);
}

static void test_targets_stay_inside_their_region(void **) {
    std::vector<uint8_t> buf(1000);
    RegionTable t;
    const uint32_t k = t.expose(buf.data(), buf.size(), rttcc::random_u32);
    assert_int_not_equal(k, 0);
    assert_ptr_equal(t.target(k, 0, 1000), buf.data());
    assert_ptr_equal(t.target(k, 999, 1), buf.data() + 999);
    assert_ptr_equal(t.target(k, 1000, 0), buf.data() + 1000);
    assert_null(t.target(k, 999, 2));                 // one byte past the end
    assert_null(t.target(k, 1001, 0));
    assert_null(t.target(k, ~uint64_t{0}, 2));       // offset + len wraps
    assert_null(t.target(k ^ 1, 0, 1));               // unknown key
    assert_true(t.unexpose(k));
    assert_null(t.target(k, 0, 1));                   // gone
    assert_false(t.unexpose(k));
}

static void test_keys_are_unique_and_never_zero(void **) {
    uint8_t b;
    RegionTable t;
    std::vector<uint32_t> keys;
    for (int i = 0; i < 100; ++i) keys.push_back(t.expose(&b, 1, rttcc::random_u32));
    for (size_t i = 0; i < keys.size(); ++i) {
        assert_int_not_equal(keys[i], 0);
        for (size_t j = i + 1; j < keys.size(); ++j) assert_int_not_equal(keys[i], keys[j]);
    }
    assert_int_equal(t.exposed(), 100);
    assert_int_equal(t.expose(&b, kPutOffsetMask + 1, rttcc::random_u32), 0);  // too large to address
    // A draw of 0, or of a key in use, is drawn again.
    const uint32_t draws[] = {0, 5, 5 | (1u << 24), 0, 7};
    size_t next = 0;
    auto scripted = [&] { return draws[next++]; };
    RegionTable u;
    assert_int_equal(u.expose(&b, 1, scripted), 5);
    assert_int_equal(u.expose(&b, 1, scripted), 7);  // 5 again (the high bits are not the key's), then 0
    assert_int_equal(next, 5);
}

static void test_put_is_whole_when_every_byte_landed(void **) {
    PutArrivals a;
    PutArrivals::Put done{};
    const uint64_t addr = put_addr(5, 64);
    assert_int_equal(static_cast<int>(a.add(1, 300, addr, 7, 100, &done)), static_cast<int>(PutArrivals::Step::kPartial));
    assert_int_equal(static_cast<int>(a.add(2, 50, addr, 7, 50, &done)), static_cast<int>(PutArrivals::Step::kComplete));
    assert_int_equal(done.msg_id, 2);
    assert_int_equal(static_cast<int>(a.add(1, 300, addr, 8, 100, &done)), static_cast<int>(PutArrivals::Step::kBad));  // other tag
    assert_int_equal(static_cast<int>(a.add(1, 999, addr, 7, 100, &done)), static_cast<int>(PutArrivals::Step::kBad));  // other length
    assert_int_equal(static_cast<int>(a.add(1, 300, addr, 7, 100, &done)), static_cast<int>(PutArrivals::Step::kPartial));
    assert_int_equal(static_cast<int>(a.add(1, 300, addr, 7, 100, &done)), static_cast<int>(PutArrivals::Step::kComplete));
    assert_int_equal(done.len, 300);
    assert_int_equal(done.addr, addr);
    assert_int_equal(done.tag, 7);
    assert_int_equal(a.active(), 0);
}

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_put_addr_packs_key_and_offset),
        cmocka_unit_test(test_targets_stay_inside_their_region),
        cmocka_unit_test(test_keys_are_unique_and_never_zero),
        cmocka_unit_test(test_put_is_whole_when_every_byte_landed),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
