// rttcc_sim at packet level: the real engines in virtual time over the
// simulated fabric.  Messages arrive whole and verified, a transfer is
// paced by its bottleneck (never faster than the line allows), an incast
// through a shallow queue loses packets the engines repair, and the same
// inputs give the same run.
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

#include "cmocka_cxx.h"
#include "sim/sim_host.h"
#include "sim/topology.h"

using namespace rttcc::sim;
using rttcc::nanos;

namespace {

uint8_t pattern(uint32_t sender, size_t i) { return static_cast<uint8_t>(sender * 37 + i * 7 + (i >> 9)); }

// n engines on a fabric, every one a peer of every other.
struct Run {
    struct Rank {
        Run *run;
        uint32_t index;
        std::unique_ptr<SimHost> host;
        std::vector<std::vector<uint8_t>> received;  // by sender
        bool sent_done = false;
        nanos done_at = 0;  // when its message was acknowledged
    };
    EventQueue events;
    Fabric fabric;
    SimNetwork net;
    SimClock clock{events};
    Topology topo;
    std::vector<std::unique_ptr<Rank>> ranks;
    nanos last_delivery = 0;
    uint64_t corrupt = 0;

    template <class Build>
    Run(size_t n, Build build, uint64_t seed = 1) : fabric(events, seed), net(fabric) {
        topo = build(fabric, n);
        std::vector<std::vector<uint8_t>> addrs;
        for (size_t i = 0; i < n; ++i) {
            auto r = std::make_unique<Rank>();
            r->run = this;
            r->index = static_cast<uint32_t>(i);
            r->received.resize(n);
            rttcc_config_t c;
            rttcc_config_defaults(&c);
            c.self = static_cast<uint32_t>(i);
            c.job_key = 0x5157;
            c.agent = false;
            c.max_message = 4 << 20;
            rttcc_callbacks_t cb{r.get(), on_recv, on_done, on_dead, nullptr, nullptr};
            r->host = std::make_unique<SimHost>(net, topo.hosts[i], c, cb, clock, rttcc::usec(5));
            addrs.push_back(r->host->address());
            ranks.push_back(std::move(r));
        }
        for (size_t i = 0; i < n; ++i)
            for (size_t j = 0; j < n; ++j) {
                std::string err;
                if (i != j && !ranks[i]->host->engine().add_peer(static_cast<uint32_t>(j), addrs[j].data(),
                                                                  addrs[j].size(), &err))
                    throw std::runtime_error(err);
            }
        for (auto &r : ranks) r->host->start();
    }

    static void on_recv(void *u, uint32_t peer, uint8_t, const void *d, size_t len) {
        auto *r = static_cast<Rank *>(u);
        const auto *b = static_cast<const uint8_t *>(d);
        r->received[peer].assign(b, b + len);
        for (size_t i = 0; i < len; ++i) r->run->corrupt += b[i] != pattern(peer, i);
        r->run->last_delivery = r->run->events.now();
    }
    static void on_done(void *u, void *, int status) {
        auto *r = static_cast<Rank *>(u);
        r->sent_done = status == RTTCC_OK;
        r->done_at = r->run->events.now();
    }
    static void on_dead(void *, uint32_t, const char *) { fail_msg("a peer was declared dead"); }

    // Rank `from` sends `len` pattern bytes to `to` (the buffer lives in `keep`).
    void send(uint32_t from, uint32_t to, size_t len, std::vector<std::vector<uint8_t>> &keep) {
        keep.emplace_back(len);
        for (size_t i = 0; i < len; ++i) keep.back()[i] = pattern(from, i);
        iovec iov{keep.back().data(), len};
        const int rc = ranks[from]->host->engine().send(to, 3, &iov, 1, ranks[from].get());
        assert_true(rc == RTTCC_OK || rc == RTTCC_DONE);
        if (rc == RTTCC_DONE) ranks[from]->sent_done = true;
    }

    // Runs until `done` or `limit` of virtual time; false on the limit.
    template <class Done>
    bool until(Done done, nanos limit) {
        while (!done()) {
            if (events.now() > limit || !events.step()) return false;
        }
        for (auto &r : ranks) r->host->stop();
        return true;
    }
};

Topology star(Fabric &f, size_t n) {
    LinkConfig l;
    l.bits_per_s = 10'000'000'000ull;
    l.delay = 1000;
    l.queue_bytes = 1 << 20;
    return one_switch(f, n, l);
}

// 1 MiB at 10 Gbit/s: on the wire at least 1 MiB * 8 / 10 Gbit/s (839 us),
// frames' overhead and the engine's header on top; well within twice that.
static void test_one_message_at_line_rate(void **) {
    Run run(2, star);
    std::vector<std::vector<uint8_t>> keep;
    run.send(0, 1, 1 << 20, keep);
    assert_true(run.until([&] { return run.ranks[0]->sent_done && !run.ranks[1]->received[0].empty(); },
                          rttcc::msec(100)));
    assert_int_equal(run.ranks[1]->received[0].size(), 1 << 20);
    assert_int_equal(run.corrupt, 0);
    const double us = run.last_delivery / 1e3;
    assert_true(us >= 839.0);
    assert_true(us < 2 * 839.0);
    print_message("1 MiB at 10 Gbit/s: %.1f us\n", us);
}

// The receiver's link shaped to 1 Gbit/s with a 64-packet queue: the
// message takes at least 8.39 ms, and the engine's congestion control keeps
// it near that pace however many packets the queue drops.
static void test_shaped_receiver_paces_the_transfer(void **) {
    Run run(2, [](Fabric &f, size_t n) {
        Topology t = star(f, n);
        shape(f, t.hosts[1], 1'000'000'000ull, 64 * 1566);
        return t;
    });
    std::vector<std::vector<uint8_t>> keep;
    run.send(0, 1, 1 << 20, keep);
    assert_true(run.until([&] { return run.ranks[0]->sent_done && !run.ranks[1]->received[0].empty(); },
                          rttcc::msec(500)));
    assert_int_equal(run.corrupt, 0);
    const double ms = run.last_delivery / 1e6;
    assert_true(ms >= 8.39);
    assert_true(ms < 1.5 * 8.39);
    print_message("1 MiB into 1 Gbit/s: %.2f ms, %lu drops\n", ms,
                  (unsigned long) run.fabric.port(run.topo.switches[0], run.topo.hosts[1])->stats().drops);
}

// 8 senders, 256 KiB each, into one host through a 32-packet queue: drops
// happen, and every byte still arrives once.
static void test_incast_through_a_shallow_queue(void **) {
    Run run(9, [](Fabric &f, size_t n) {
        Topology t = star(f, n);
        Port *in = f.port(t.switches[0], t.hosts[0]);
        LinkConfig c = in->config();
        c.queue_bytes = 32 * 1566;
        in->reconfigure(c);
        return t;
    });
    std::vector<std::vector<uint8_t>> keep;
    for (uint32_t s = 1; s < 9; ++s) run.send(s, 0, 256 << 10, keep);
    auto all = [&] {
        for (uint32_t s = 1; s < 9; ++s)
            if (!run.ranks[s]->sent_done || run.ranks[0]->received[s].size() != (256u << 10)) return false;
        return true;
    };
    assert_true(run.until(all, rttcc::msec(500)));
    assert_int_equal(run.corrupt, 0);
    Port *in = run.fabric.port(run.topo.switches[0], run.topo.hosts[0]);
    assert_true(in->stats().drops > 0);
    // 2 MiB through the receiver's 10 Gbit/s link: at least 1.68 ms
    assert_true(run.last_delivery >= 1'677'000);
    print_message("incast 8 x 256 KiB: %.2f ms, %lu drops\n", run.last_delivery / 1e6, (unsigned long) in->stats().drops);
    // every datagram's buffer comes back: delivered, dropped, or held by a wire until it goes
    while (run.events.step()) {
    }
    run.ranks.clear();
    assert_int_equal(run.net.buffers_in_use(), 0);
}

static nanos one_run(uint64_t *events) {
    Run run(4, star);
    std::vector<std::vector<uint8_t>> keep;
    for (uint32_t s = 1; s < 4; ++s) run.send(s, 0, 300000, keep);
    run.until([&] { return run.ranks[1]->sent_done && run.ranks[2]->sent_done && run.ranks[3]->sent_done; },
              rttcc::msec(100));
    *events = run.events.executed();
    return run.last_delivery;
}

static void test_same_inputs_same_run(void **) {
    uint64_t a_events = 0, b_events = 0;
    const nanos a = one_run(&a_events), b = one_run(&b_events);
    assert_true(a > 0);
    assert_int_equal(a, b);
    assert_int_equal(a_events, b_events);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_message_at_line_rate),
        cmocka_unit_test(test_shaped_receiver_paces_the_transfer),
        cmocka_unit_test(test_incast_through_a_shallow_queue),
        cmocka_unit_test(test_same_inputs_same_run),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
