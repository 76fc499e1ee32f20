// libFuzzer target: random and mutated datagrams into an engine's receive
// path (both channels), interleaved with real traffic from a peer so the
// fuzzer reaches sequence, ACK and reassembly state.
#include <cstdint>
#include <cstring>
#include <stdexcept>

#include "../unit/engine_harness.h"

using namespace rttcc;
using namespace rttcc_test;

namespace {

struct World {
    MemNetwork net{3000};
    std::vector<std::unique_ptr<Node>> nodes = make_nodes(net, 2);
    std::vector<std::vector<uint8_t>> sent;  // what node 0 really sent
};

// Input: [u8 channel][u16 len][bytes]... ; a zero-length record makes node 0
// send a real message instead.
void feed(World &w, const uint8_t *data, size_t size) {
    size_t i = 0;
    uint32_t real = 0;
    while (i + 3 <= size) {
        const Channel ch = data[i] & 1 ? kData : kCmd;
        size_t len = data[i + 1] | (size_t{data[i + 2]} << 8);
        i += 3;
        if (len == 0) {
            w.sent.push_back(make_message(real, (real * 977) % 9000));
            iovec iov{w.sent.back().data(), w.sent.back().size()};
            w.nodes[0]->engine->send(1, 5, &iov, 1, &w.sent.back());
            ++real;
            continue;
        }
        len = std::min(len, size - i);
        if (len == 0) break;
        std::vector<uint8_t> d(4 + len);
        const uint32_t from = data[i] & 0x80 ? 0u : 7u;  // pretend to be node 0, or a stranger
        std::memcpy(d.data(), &from, 4);
        std::memcpy(d.data() + 4, data + i, len);
        w.net.queue(1, ch).push_back(std::move(d));
        i += len;
        w.nodes[1]->engine->progress();
        w.nodes[0]->engine->progress();
    }
    for (int k = 0; k < 50; ++k)
        for (auto &n : w.nodes) n->engine->progress();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    World w;
    feed(w, data, size);
    // A datagram forged with the job's key can disturb the real peer's
    // sequence state (that is what the key and source check are for), so
    // the property is: no crash, no sanitizer report, nothing oversized.
    for (const auto &r : w.nodes[1]->received)
        if (r.bytes.size() > w.nodes[1]->engine->config().max_message) __builtin_trap();
    return 0;
}
