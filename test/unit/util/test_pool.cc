// pool.h: InlinePool hands tiny messages small buffers and larger ones
// buffers of inline_max bytes, and reuses each kind for its own size;
// BufferPool holds chunked messages in buffers of about their own size,
// never more than its cap, and gives back what it does not keep.
#include <cstring>
#include <vector>

#include "cmocka_cxx.h"
#include "util/pool.h"

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

static void test_message_buffers_fit_their_message(void **) {
    BufferPool pool(1u << 20, 8u << 20);
    assert_int_equal(pool.class_size(1), BufferPool::kSmallest);
    assert_int_equal(pool.class_size(65537), 128 * 1024);
    assert_int_equal(pool.class_size(1u << 20), 1u << 20);
    assert_int_equal(pool.class_size((1u << 20) + 1), 0);  // larger than the largest message
    assert_null(pool.get((1u << 20) + 1));
    uint8_t *a = pool.get(100000);
    std::memset(a, 1, 100000);
    assert_int_equal(pool.in_use(), 128 * 1024);
    pool.put(a, 100000);
    assert_int_equal(pool.in_use(), 0);
    assert_ptr_equal(pool.get(70000), a);  // the same class comes back
    pool.put(a, 70000);
}

static void test_message_buffers_stop_at_the_cap(void **) {
    BufferPool pool(1u << 20, 3u << 20);
    uint8_t *b[3];
    for (auto &x : b) x = pool.get(1u << 20);
    for (auto *x : b) assert_non_null(x);
    assert_false(pool.can_get(1));
    assert_null(pool.get(1));  // over the cap: the caller leaves the message for later
    pool.put(b[0], 1u << 20);
    assert_true(pool.can_get(1u << 20));
    pool.put(b[1], 1u << 20);
    pool.put(b[2], 1u << 20);
}

static void test_message_buffers_beyond_the_kept_are_freed(void **) {
    BufferPool pool(1u << 20, 64u << 20);
    std::vector<uint8_t *> out;
    for (int i = 0; i < 10; ++i) out.push_back(pool.get(1u << 20));
    assert_int_equal(pool.held(), 10u << 20);
    for (auto *x : out) pool.put(x, 1u << 20);
    assert_int_equal(pool.held(), BufferPool::kKeep << 20);
    assert_int_equal(pool.in_use(), 0);
}

// Copies into these buffers come mostly from buffers on a page or 16 bytes
// into one (malloc); a copy 1 to 31 bytes past its source within the page
// runs up to 15 times slower (aligned_bytes.h), so every buffer starts on a
// cache line: message buffers of each class (up to 1 MiB: malloc puts
// those 16 bytes into a page) and copy buffers of both sizes.
static void test_buffers_start_on_a_cache_line(void **) {
    auto on_a_line = [](const uint8_t *p) { return reinterpret_cast<uintptr_t>(p) % AlignedBytes::kLine == 0; };
    BufferPool messages(1u << 20, 64u << 20);
    std::vector<std::pair<uint8_t *, size_t>> out;
    for (size_t len = 1; len <= (1u << 20); len *= 4) {
        out.emplace_back(messages.get(len), len);
        assert_true(on_a_line(out.back().first));
    }
    for (auto &b : out) messages.put(b.first, b.second);
    InlinePool copies(8256);
    std::vector<std::pair<uint8_t *, size_t>> small;
    for (size_t len : {8, 1024, 1025, 8256, 100, 5000}) {
        small.emplace_back(copies.get(len), len);
        assert_true(on_a_line(small.back().first));
    }
    for (auto &b : small) copies.put(b.first, b.second);
}

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes_take_their_own_buffers),
        cmocka_unit_test(test_a_small_inline_max_needs_one_size),
        cmocka_unit_test(test_message_buffers_fit_their_message),
        cmocka_unit_test(test_message_buffers_stop_at_the_cap),
        cmocka_unit_test(test_message_buffers_beyond_the_kept_are_freed),
        cmocka_unit_test(test_buffers_start_on_a_cache_line),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
