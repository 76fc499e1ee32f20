// The UDP wire's receive ring, on real loopback sockets.
#include <cstdint>
#include <vector>

#include "cmocka_cxx.h"
#include "util/aligned_bytes.h"
#include "wire/udp_pair.h"

using namespace rttcc;
using namespace rttcc_test;

namespace {

// The kernel copies each datagram (or GRO buffer) to the start of a
// receive slot; its copy runs at half speed into a slot that does not start
// on a cache line (util/aligned_bytes.h).  Three sizes: three sends, so
// three slots on each channel.
void test_receive_slots_start_on_a_cache_line(void **) {
    Pair p = open_pair(RTTCC_TS_USER);
    for (int c = 0; c < kChannels; ++c) {
        const Channel ch = static_cast<Channel>(c);
        std::vector<uint8_t> b1(100, 1), b2(333, 2), b3(1000, 3);
        TxDatagram d[3] = {datagram(p.to[ch], b1, 0), datagram(p.to[ch], b2, 0), datagram(p.to[ch], b3, 0)};
        assert_int_equal(p.a->tx_burst(ch, d, 3), 3);
        const std::vector<RxDatagram> rx = receive(*p.b, ch, 3);
        assert_int_equal(rx.size(), 3);
        for (size_t i = 0; i < rx.size(); ++i) {
            assert_int_equal(rx[i].len, d[i].iov[0].iov_len);
            assert_int_equal(reinterpret_cast<uintptr_t>(rx[i].buf) % AlignedBytes::kLine, 0);
        }
    }
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_receive_slots_start_on_a_cache_line),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
