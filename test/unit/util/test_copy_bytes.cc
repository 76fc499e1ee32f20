// copy_bytes.h: every byte arrives and nothing beside the destination is
// touched, whether it copies in one piece or, 1 to 31 bytes past its
// source within a page, in pieces (the last one short).
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "cmocka_cxx.h"
#include "util/copy_bytes.h"

using namespace rttcc;

static void test_copies_land_whole_at_every_page_distance(void **) {
    constexpr size_t kPage = 4096, kMax = 65536 + 7;
    uint8_t *src = static_cast<uint8_t *>(std::aligned_alloc(kPage, 2 * kPage + kMax));
    uint8_t *dst = static_cast<uint8_t *>(std::aligned_alloc(kPage, 2 * kPage + kMax + kPage));
    assert_non_null(src);
    assert_non_null(dst);
    for (size_t i = 0; i < 2 * kPage + kMax; ++i) src[i] = static_cast<uint8_t>(i * 31 + 7);
    for (size_t n : {size_t{0}, size_t{1}, size_t{1023}, size_t{1024}, size_t{1025}, size_t{4096}, kMax}) {
        for (size_t past : {0, 1, 8, 16, 31, 32, 64, 4080, 4095}) {  // dst - src within the page
            for (size_t src_at : {size_t{0}, size_t{16}, size_t{100}}) {
                const size_t dst_at = kPage + (src_at + past) % kPage;
                std::memset(dst, 0xee, 2 * kPage + kMax + kPage);
                copy_bytes(dst + dst_at, src + src_at, n);
                for (size_t i = 0; i < n; ++i) assert_int_equal(dst[dst_at + i], src[src_at + i]);
                assert_int_equal(dst[dst_at - 1], 0xee);
                assert_int_equal(dst[dst_at + n], 0xee);
            }
        }
    }
    std::free(src);
    std::free(dst);
}

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_copies_land_whole_at_every_page_distance),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
