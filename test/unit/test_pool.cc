// pool.h: InlinePool hands tiny messages small buffers and larger ones
// buffers of inline_max bytes, and reuses each kind for its own size.
#include <cstring>

#include "cmocka_cxx.h"
#include "pool.h"

using namespace rttcc;

static void test_sizes_take_their_own_buffers(void **) {
    InlinePool pool(8256);
    uint8_t *tiny = pool.get(8), *edge = pool.get(InlinePool::kSmall), *big = pool.get(InlinePool::kSmall + 1);
    std::memset(big, 0xab, 8256);  // a large buffer holds inline_max bytes
    std::memset(edge, 0xcd, InlinePool::kSmall);
    pool.put(big, InlinePool::kSmall + 1);
    pool.put(tiny, 8);
    assert_ptr_equal(pool.get(8000), big);  // a large one comes back for a large message
    assert_ptr_equal(pool.get(1), tiny);    // and a small one for a small message
    assert_ptr_not_equal(pool.get(8256), big);
    pool.put(edge, InlinePool::kSmall);
}

static void test_a_small_inline_max_needs_one_size(void **) {
    InlinePool pool(100);
    uint8_t *a = pool.get(100);
    pool.put(a, 100);
    assert_ptr_equal(pool.get(50), a);
}

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes_take_their_own_buffers),
        cmocka_unit_test(test_a_small_inline_max_needs_one_size),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
