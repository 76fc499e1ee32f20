// rttcc_sim at packet level: the real engines in virtual time over the
// simulated fabric.  Messages arrive whole and verified, a transfer is
// paced by its bottleneck (never faster than the line allows), an incast
// through a shallow queue loses packets the engines repair, and the same
// inputs give the same run.
#include "cmocka_cxx.h"
#include "sim/job.h"

using namespace rttcc::sim;
using rttcc::nanos;

namespace {

Topology star(Fabric &f, size_t n) {
    LinkConfig l;
    l.bits_per_s = 10'000'000'000ull;
    l.delay = 1000;
    l.queue_bytes = 1 << 20;
    return one_switch(f, n, l);
}

bool all_sent(Job &job, uint32_t first, uint32_t last) {
    for (uint32_t s = first; s <= last; ++s)
        if (job.rank(s).sends_done == 0) return false;
    return true;
}

// Sends 1 MiB from rank 0 to rank 1 and runs until it is delivered and
// ACKed, verified; returns when it was delivered.
nanos send_one_mib(Job &job, nanos limit) {
    assert_true(job.send(0, 1, 1 << 20));
    assert_true(job.run_until([&] { return all_sent(job, 0, 0) && job.rank(1).received[0] == (1u << 20); }, limit));
    assert_int_equal(job.corrupt_bytes(), 0);
    return job.rank(1).last_delivery;
}

}  // namespace

// 1 MiB at 10 Gbit/s: on the wire at least 1 MiB * 8 / 10 Gbit/s (839 us),
// frames' overhead and the engine's header on top; well within twice that.
static void test_one_message_at_line_rate(void **) {
    Job job(2, star, default_job_config());
    const double us = send_one_mib(job, rttcc::msec(100)) / 1e3;
    assert_true(us >= 839.0);
    assert_true(us < 2 * 839.0);
    print_message("1 MiB at 10 Gbit/s: %.1f us\n", us);
}

// The receiver's link shaped to 1 Gbit/s with a 64-packet queue: the
// message takes at least 8.39 ms, and the engine's congestion control keeps
// it near that pace however many packets the queue drops.
static void test_shaped_receiver_paces_the_transfer(void **) {
    Job job(2, [](Fabric &f, size_t n) {
        Topology t = star(f, n);
        shape(f, t.hosts[1], 1'000'000'000ull, 64 * 1566);
        return t;
    }, default_job_config());
    const double ms = send_one_mib(job, rttcc::msec(500)) / 1e6;
    assert_true(ms >= 8.39);
    assert_true(ms < 1.5 * 8.39);
    print_message("1 MiB into 1 Gbit/s: %.2f ms, %lu drops\n", ms,
                  (unsigned long) job.fabric().port(job.topology().switches[0], job.topology().hosts[1])->stats().drops);
}

// 8 senders, 256 KiB each, into one host through a 32-packet queue: drops
// happen, and every byte still arrives once.
static void test_incast_through_a_shallow_queue(void **) {
    Job job(9, [](Fabric &f, size_t n) {
        Topology t = star(f, n);
        Port *in = f.port(t.switches[0], t.hosts[0]);
        LinkConfig c = in->config();
        c.queue_bytes = 32 * 1566;
        in->reconfigure(c);
        return t;
    }, default_job_config(), [](size_t i, size_t j) { return i == 0 || j == 0; });
    for (uint32_t s = 1; s < 9; ++s) assert_true(job.send(s, 0, 256 << 10));
    auto all = [&] {
        for (uint32_t s = 1; s < 9; ++s)
            if (job.rank(0).received[s] != (256u << 10)) return false;
        return all_sent(job, 1, 8);
    };
    assert_true(job.run_until(all, rttcc::msec(500)));
    assert_int_equal(job.corrupt_bytes(), 0);
    assert_int_equal(job.dead_peers(), 0);
    Port *in = job.fabric().port(job.topology().switches[0], job.topology().hosts[0]);
    assert_true(in->stats().drops > 0);
    assert_true(job.rank(0).last_delivery >= 1'677'000);  // 2 MiB through a 10 Gbit/s link: 1.68 ms at least
    print_message("incast 8 x 256 KiB: %.2f ms, %lu drops\n", job.rank(0).last_delivery / 1e6,
                  (unsigned long) in->stats().drops);
    job.drain();
    for (uint32_t s = 1; s < 9; ++s) assert_int_equal(job.rank(0).received[s], 256u << 10);  // once, not more
}

// Every datagram's buffer comes back: delivered, dropped, or held by a wire until it goes.
static void test_buffers_come_back(void **) {
    SimNetwork *net = nullptr;
    {
        Job job(3, [](Fabric &f, size_t n) {
            Topology t = star(f, n);
            shape(f, t.hosts[0], 2'000'000'000ull, 16 * 1566);
            return t;
        }, default_job_config());
        net = &job.network();
        job.send(1, 0, 300000);
        job.send(2, 0, 300000);
        assert_true(job.run_until([&] { return all_sent(job, 1, 2); }, rttcc::msec(500)));
        job.drain();
        assert_true(net->buffers_in_use() <= 2 * 2 * 64);  // at most what the wires lent their engines
        assert_true(job.fabric().delivered() > 400);
    }
}

static nanos one_run(uint64_t *events) {
    Job job(4, star, default_job_config());
    for (uint32_t s = 1; s < 4; ++s) job.send(s, 0, 300000);
    job.run_until([&] { return all_sent(job, 1, 3); }, rttcc::msec(100));
    *events = job.events().executed();
    return job.rank(0).last_delivery;
}

static void test_same_inputs_same_run(void **) {
    uint64_t a_events = 0, b_events = 0;
    const nanos a = one_run(&a_events), b = one_run(&b_events);
    assert_true(a > 0);
    assert_int_equal(a, b);
    assert_int_equal(a_events, b_events);
}

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_message_at_line_rate),
        cmocka_unit_test(test_shaped_receiver_paces_the_transfer),
        cmocka_unit_test(test_incast_through_a_shallow_queue),
        cmocka_unit_test(test_buffers_come_back),
        cmocka_unit_test(test_same_inputs_same_run),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
