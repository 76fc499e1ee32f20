// libFuzzer target: the input is a small program run against two engines on
// a MemNetwork and its virtual clock (so a run is deterministic).  Each op
// is a few bytes: real traffic (messages, puts), network faults on the
// queued datagrams, time, and datagrams forged from the known peer with a
// valid MAC, their header fields taken near the live state (expected seq,
// una, outstanding probe, message ids, exposed region keys), so mutations
// explore the protocol instead of dying at header validation.
//
// What holds against a peer that has the job's key (it can send anything
// the real peer could):
//   - every message delivered with a real tag (< kForgedTag) is one that
//     the other node really sent, byte for byte, and is delivered once;
//   - every byte of a region that only real puts target holds what the
//     real puts wrote, and a put is announced only once it is whole;
//   - no delivery exceeds max_message; a send completes at most once;
//   - per-peer memory stays under reassembly_max_mb plus the windows.
// A forged datagram may take a sequence number, ACK or stall real data
// (real messages may be lost, a send may complete unreceived): that is
// what the key stands for.  Inputs with no validly-MACed forgery (faults,
// time, bad MACs and strangers only) must also be live: after the input
// the nodes settle, and every real message is delivered exactly once,
// every completed send was delivered, unless its sender declared the
// other dead (possible when the input moved time past the peer timeout).
#include <cstdint>
#include <cstring>
#include <algorithm>
#include <deque>

#include "../unit/engine_harness.h"
#include "engine/mac.h"
#include "fuzz_input.h"

using namespace rttcc;
using namespace rttcc_fuzz;
using namespace rttcc_test;

namespace {

constexpr uint8_t kForgedTag = 100;     // forged datagrams use tags kForgedTag..255
constexpr size_t kMaxOps = 64;          // ops per input: bounds the run
constexpr size_t kRegion = 16384;       // bytes of each exposed region
constexpr uint32_t kEndpoints = 2;      // node i is MemNetwork endpoint i

// The byte a real put writes at `offset` of a region: the same whichever put
// writes it, so overlapping puts agree.
uint8_t put_pattern(size_t offset) { return static_cast<uint8_t>(offset * 13 + (offset >> 7) + 5); }

struct Sent {
    uint8_t tag;
    std::vector<uint8_t> bytes;
    bool zero_copy;       // RTTCC_OK: a completion will name it
    bool delivered = false;
};

// The input's first byte picks the settings both nodes run with.
uint8_t g_settings;

void tune(rttcc_config_t &c) {
    c.window = 64;  // small: forged sequence numbers near the live ones reach past it
    c.send_credits = 32;
    static constexpr int kAuth[] = {RTTCC_AUTH_HEADER, RTTCC_AUTH_FULL, RTTCC_AUTH_NONE, RTTCC_AUTH_HEADER};
    c.auth = kAuth[g_settings & 3];
    c.cc = g_settings >> 2 & 3;  // none, aimd, timely, swift
    c.probe_enable = true;
    c.probe_interval_us = 20000;
    c.probe_startup_delay_ms = 10;
    c.probe_strategy = g_settings >> 4 & 3;
    c.rto_mode = g_settings & 0x40 ? RTTCC_RTO_FIXED : RTTCC_RTO_RTT;
}

struct World {
    MemNetwork net{3000};
    std::vector<std::unique_ptr<Node>> nodes = make_nodes(net, 2, {}, tune);
    std::deque<Sent> sent[2];            // by sender; cookies point into them
    std::deque<std::vector<uint8_t>> put_src;  // sources of zero-copy puts
    std::vector<uint8_t> real_region[2], forged_region[2];  // exposed by node i
    uint32_t real_key[2] = {}, forged_key[2] = {};
    struct Held {
        uint32_t ep;
        Channel ch;
        std::vector<uint8_t> d;
    };
    std::vector<Held> held;              // delayed datagrams
    uint32_t last_tx_id[2] = {};         // newest tx_id seen from node i
    bool forged = false;                 // a forgery with a valid MAC was sent
    size_t checked_rx[2] = {}, checked_done[2] = {}, checked_puts[2] = {};
    uint32_t next_msg = 0;

    World() {
        for (int i = 0; i < 2; ++i) {
            real_region[i].assign(kRegion, 0);
            forged_region[i].assign(kRegion, 0);
            real_key[i] = nodes[i]->engine->grant(1 - i, real_region[i].data(), kRegion);
            forged_key[i] = nodes[i]->engine->grant(1 - i, forged_region[i].data(), kRegion);
        }
    }

    void progress_all() {
        for (auto &n : nodes) n->engine->progress();
    }

    size_t message_size(Reader &r) {
        const uint8_t cls = r.u8();
        const uint16_t v = r.u16();
        switch (cls % 4) {
            case 0: return 1 + v % 64;          // tiny: command channel
            case 1: return 1 + v % 1200;        // around the command MTU
            case 2: return 1 + v % 9000;        // a few segments
            default: return 1 + (v * 3) % 40000;  // many segments
        }
    }

    void send(int from, Reader &r) {
        const size_t len = message_size(r);
        const uint32_t id = next_msg++;
        Sent &s = sent[from].emplace_back();
        s.tag = static_cast<uint8_t>(id % kForgedTag);
        s.bytes = make_message(id, len);
        iovec iov{s.bytes.data(), s.bytes.size()};
        const int rc = nodes[from]->engine->send(1 - from, s.tag, &iov, 1, &s);
        s.zero_copy = rc == RTTCC_OK;
        if (rc != RTTCC_OK && rc != RTTCC_DONE) sent[from].pop_back();  // refused (peer dead, busy)
    }

    void put(int from, Reader &r) {
        const size_t offset = r.u16() % kRegion;
        const size_t len = 1 + r.u16() % (kRegion - offset);
        auto &src = put_src.emplace_back(len);
        for (size_t i = 0; i < len; ++i) src[i] = put_pattern(offset + i);
        iovec iov{src.data(), len};
        nodes[from]->engine->put(1 - from, real_key[1 - from], offset, static_cast<uint8_t>(r.u8() % kForgedTag),
                                 &iov, 1, &src);
    }

    MemNetwork::Queue &queue_of(uint8_t sel) { return net.queue(sel & 1, sel & 2 ? kData : kCmd); }

    void fault(uint8_t op, Reader &r) {
        const uint8_t sel = r.u8();
        auto &q = queue_of(sel);
        if (q.empty()) return;
        const size_t at = (sel >> 2) % q.size();
        switch (op) {
            case 0:  // drop
                q.erase(q.begin() + static_cast<long>(at));
                break;
            case 1:  // duplicate
                q.push_back(q[at]);
                break;
            case 2:  // reorder: to the back
                q.push_back(std::move(q[at]));
                q.erase(q.begin() + static_cast<long>(at));
                break;
            case 3:  // delay until a release or the end
                held.push_back({sel & 1u, sel & 2 ? kData : kCmd, std::move(q[at])});
                q.erase(q.begin() + static_cast<long>(at));
                break;
        }
    }

    void release_held() {
        for (auto &h : held) net.queue(h.ep, h.ch).push_back(std::move(h.d));
        held.clear();
    }

    // Newest tx_id node `from` put on the wire towards the other.
    void note_tx_ids(int from) {
        for (Channel ch : {kCmd, kData})
            for (const auto &d : net.queue(1 - from, ch)) {
                PacketHeader h;
                if (d.size() < 4 + kHeaderSize) continue;
                std::memcpy(&h, d.data() + 4, sizeof h);
                if (seq_gt(h.tx_id, last_tx_id[from])) last_tx_id[from] = h.tx_id;
            }
    }

    // A datagram from node `from` to node `to`, built by the harness from the
    // input: mode 0 valid MAC, 1 wrong MAC, 2 a stranger's source, 3 a wrong key.
    void forge(int from, int mode, Reader &r) {
        const int to = 1 - from;
        note_tx_ids(from);
        note_tx_ids(to);
        const Engine &rx_engine = *nodes[to]->engine;
        const Peer *seen = rx_engine.peer(static_cast<uint32_t>(from));  // `from` as `to` knows it
        const Peer *real = nodes[from]->engine->peer(static_cast<uint32_t>(to));
        if (!seen || !real) return;
        const uint8_t form = r.u8();  // picks how each field is derived
        PacketHeader h{};
        h.magic = kMagic;
        h.version = kVersion;
        h.job_key = rx_engine.config().job_key;
        h.src = static_cast<uint32_t>(from);
        const uint8_t type_byte = r.u8();
        h.type = static_cast<uint8_t>(type_byte % 7 + 1);
        const PacketType type = static_cast<PacketType>(h.type);
        h.flags = r.u8() & 0x0f;
        if (type == PacketType::ACK || type == PacketType::BUSY) h.flags |= kFlagAckValid;
        if (type == PacketType::PROBE || type == PacketType::PROBE_REPLY) h.flags &= ~kFlagAckValid;
        h.tag = static_cast<uint8_t>(kForgedTag + r.u8() % (256 - kForgedTag));
        const auto delta = [&] { return static_cast<int32_t>(static_cast<int8_t>(r.u8())); };
        h.seq = form & 1 ? r.u32() : seen->rx.next() + static_cast<uint32_t>(delta());
        if (type == PacketType::PROBE_REPLY) h.seq = seen->probe.outstanding + static_cast<uint32_t>(delta() % 2);
        h.ack = form & 2 ? r.u32() : seen->tx.una() + static_cast<uint32_t>(delta());
        h.tx_id = last_tx_id[from] + 1 + r.u8();
        h.echo_tx_id = last_tx_id[to] - static_cast<uint32_t>(r.u8() % 8);
        h.ack_delay_ns = uint32_t{r.u16()} * 1000;
        h.msg_id = real->next_msg_id - 3 + r.u8() % 8;
        const size_t max_message = rx_engine.config().max_message;
        const uint8_t len_form = r.u8();
        const uint32_t some = r.u16();
        switch (len_form % 4) {
            case 0: h.msg_len = some; break;
            case 1: h.msg_len = static_cast<uint32_t>(max_message) - some % 4 + 1; break;
            case 2: h.msg_len = some * 64; break;
            default: h.msg_len = r.u32(); break;
        }
        h.chunk_offset = len_form & 4 ? r.u32() : (r.u8() % 16) * (real->seg_payload ? real->seg_payload : 1);
        h.tx_stamp_ns = nodes[from]->clock->now() + static_cast<uint64_t>(delta()) * 1000;
        if (type == PacketType::PUT) {
            const uint8_t k = r.u8();
            uint32_t key = k % 4 == 0 ? r.u32() & kPutKeyMask : forged_key[to] ^ (k % 4 == 1);
            if (key == real_key[to]) key = forged_key[to];  // the real region is the real puts' alone
            h.put_addr = rttcc::put_addr(key, k & 0x80 ? r.u32() : r.u16() % kRegion);
        }
        if (form & 0x80) h.put_addr ^= r.u32();  // a malformed mix now and then
        // Payload: SACK words for an ACK, else bytes from the input (repeated).
        size_t len;
        std::vector<uint8_t> payload;
        if (type == PacketType::ACK) {
            const uint8_t words = r.u8() % 5;
            len = words * 8;
            payload.resize(len);
            for (size_t i = 0; i < len; ++i) payload[i] = r.u8();
        } else {
            const uint16_t want = r.u16();
            len = (form & 0x40) ? want % 3100 : want % 600;
            if (carries_data(type) && type != PacketType::DATA && h.msg_len > h.chunk_offset &&
                !(form & 0x20))  // keep a chunk inside its message, mostly
                len = std::min<size_t>(len, h.msg_len - h.chunk_offset);
            payload.resize(len);
            const uint8_t fill = r.u8();
            for (size_t i = 0; i < len; ++i) payload[i] = static_cast<uint8_t>(fill + i * 31);
        }
        h.payload_len = static_cast<uint16_t>(len);
        iovec iov{payload.data(), payload.size()};
        h.mac = datagram_mac(rx_engine.config().auth, published_key(*nodes[to]), h, &iov, 1);  // signed for the receiver
        uint32_t ep = static_cast<uint32_t>(from);
        switch (mode) {
            case 0: forged = true; break;
            case 1: h.mac ^= uint64_t{1} << (r.u8() % 64); break;
            case 2: ep = kEndpoints + r.u8() % 4; break;   // the right src from the wrong address
            default: h.job_key ^= 1u << (r.u8() % 32); break;
        }
        if (mode == 1 && rx_engine.config().auth == RTTCC_AUTH_NONE) forged = true;
        std::vector<uint8_t> d(4 + kHeaderSize + len);
        std::memcpy(d.data(), &ep, 4);
        std::memcpy(d.data() + 4, &h, kHeaderSize);
        if (len) std::memcpy(d.data() + 4 + kHeaderSize, payload.data(), len);
        net.queue(static_cast<uint32_t>(to), type_byte & 0x80 ? kData : kCmd).push_back(std::move(d));
    }

    // The properties that hold whatever was forged (see the top).
    void check_integrity() {
        for (int to = 0; to < 2; ++to) {
            Node &n = *nodes[to];
            const int from = 1 - to;
            for (; checked_rx[to] < n.received.size(); ++checked_rx[to]) {
                const auto &got = n.received[checked_rx[to]];
                check(got.peer == static_cast<uint32_t>(from));
                check(got.bytes.size() <= n.engine->config().max_message);
                if (got.tag >= kForgedTag) continue;
                bool matched = false;
                for (auto &s : sent[from])
                    if (!s.delivered && s.tag == got.tag && s.bytes == got.bytes) {
                        s.delivered = matched = true;
                        break;
                    }
                check(matched);  // corrupted, duplicated or never sent
            }
            for (; checked_puts[to] < n.puts.size(); ++checked_puts[to]) {
                const auto &p = n.puts[checked_puts[to]];
                check(p.peer == static_cast<uint32_t>(from));
                if (p.key != real_key[to]) continue;
                check(p.offset <= kRegion && p.len <= kRegion - p.offset);
                for (size_t i = 0; i < p.len; ++i) check(real_region[to][p.offset + i] == put_pattern(p.offset + i));
            }
            size_t done = n.completed.size() + n.failed.size();
            if (done != checked_done[to]) {  // each cookie at most once
                std::vector<void *> all(n.completed);
                all.insert(all.end(), n.failed.begin(), n.failed.end());
                std::sort(all.begin(), all.end());
                check(std::adjacent_find(all.begin(), all.end()) == all.end());
                checked_done[to] = done;
            }
            const size_t cap = (size_t{n.engine->config().reassembly_max_mb} << 20) + (8u << 20);
            check(n.engine->peer_memory(static_cast<uint32_t>(from)) <= cap);
        }
    }

    bool quiet() {
        for (uint32_t ep = 0; ep < kEndpoints; ++ep)
            for (Channel ch : {kCmd, kData})
                if (!net.queue(ep, ch).empty()) return false;
        return true;
    }

    // Everything real is accounted for: delivered, or its sender gave up on the peer.
    bool settled() {
        for (int from = 0; from < 2; ++from) {
            if (!nodes[from]->dead.empty()) continue;
            for (const auto &s : sent[from])
                if (!s.delivered) return false;
            if (nodes[from]->engine->peer(1 - from)->tx.in_flight()) return false;
        }
        return true;
    }

    // Lets the nodes finish (bounded); for inputs without forgeries, checks
    // that they did and that nothing completed unreceived.
    void settle() {
        release_held();
        const int rounds = forged ? 200 : 4000;
        for (int i = 0; i < rounds; ++i) {
            progress_all();
            check_integrity();  // also marks what was delivered
            if (settled()) break;
            net.clock.advance(quiet() ? msec(20) : kRound);
        }
        for (int i = 0; i < 2; ++i)  // only real puts wrote there
            for (size_t b = 0; b < kRegion; ++b)
                check(real_region[i][b] == 0 || real_region[i][b] == put_pattern(b));
        if (forged) return;
        check(settled());
        for (int from = 0; from < 2; ++from)
            for (void *c : nodes[from]->completed)
                check(is_delivered(from, c));
    }

    bool is_delivered(int from, void *cookie) {
        for (auto &s : sent[from])
            if (&s == cookie) return s.delivered;
        return true;  // a put's source: puts are checked by their bytes
    }
};

void run(World &w, Reader r) {
    for (size_t ops = 0; ops < kMaxOps && !r.empty(); ++ops) {
        const uint8_t op = r.u8();
        switch (op % 16) {
            case 0:
            case 1:
                w.send(op & 1, r);
                break;
            case 2:
                w.put(op >> 4 & 1, r);
                break;
            case 3:
            case 4:
            case 5:
            case 6:
                w.fault(static_cast<uint8_t>(op % 16 - 3), r);
                break;
            case 7:
                w.release_held();
                break;
            case 8:  // a little time: delayed ACKs, pacing
                w.net.clock.advance(usec(10) * (1 + r.u8()));
                w.progress_all();
                break;
            case 9:  // a lot: RTOs, probes, the peer timeout
                w.net.clock.advance(msec(10) * (1 + r.u8()));
                w.progress_all();
                break;
            case 10:
                for (int k = 0; k <= (op >> 4) % 8; ++k) {
                    next_round(w.nodes);
                    w.progress_all();
                }
                break;
            case 11:  // one node alone, maybe after some time (the other computes, or is gone)
                w.net.clock.advance(msec(10) * r.u8());
                w.nodes[op >> 4 & 1]->engine->progress();
                break;
            case 12:
            case 13:
            case 14:
                w.forge(op & 1, 0, r);
                break;
            default:
                w.forge(op >> 4 & 1, 1 + (op >> 5) % 3, r);
                break;
        }
        w.check_integrity();
    }
    w.settle();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    Reader r{data, size};
    g_settings = r.u8();
    World w;
    run(w, r);
    return 0;
}
