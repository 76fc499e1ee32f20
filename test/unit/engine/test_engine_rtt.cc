// RTT samples, the RTT table and congestion control inside the engine
// (engine_rtt.cc), over the in-memory wire.
#include <cstdio>
#include <deque>
#include <fstream>
#include <sstream>

#include "cmocka_cxx.h"
#include "engine_harness.h"

using namespace rttcc;
using namespace rttcc_test;

static const std::vector<size_t> kSizes = {8, 900, 3937, 65536, 300001};

static rttcc_rtt_row_t row_of(Node &n, uint32_t peer) {
    rttcc_rtt_row_t r;
    assert_true(n.engine->rtt_row(peer, &r));
    return r;
}

static void test_row_is_populated_and_plausible(void **) {
    MemNetwork net(4000);
    // Credits within what a receiving pass reads (8 bursts of rx_batch):
    // with more, some datagrams wait a round in its queue, a third round.
    auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) { c.send_credits = 128; });
    exchange(nodes, kSizes, 40);
    const rttcc_rtt_row_t r = row_of(*nodes[0], 1);
    assert_true(r.samples > 0);
    assert_int_equal(r.probe_samples, 0);
    // Every sample one round trip: a round, two for data sent between rounds.
    assert_int_equal(r.min_ns, kRound);
    assert_true(r.min_ns <= r.srtt_ns && r.srtt_ns <= r.max_ns && r.max_ns <= 2 * kRound);
    assert_int_equal(r.rtt_source, static_cast<uint32_t>(TsSource::kUser));
    assert_int_equal(r.flags & RTTCC_ROW_CC, 0);  // cc = none
    assert_int_equal(r.rto_ns, nodes[0]->engine->peer(1)->response.rto());
    assert_true(nodes[0]->engine->peer(1)->response.srtt() >= r.srtt_ns);  // holds included
    assert_int_equal(r.bytes_tx, nodes[0]->engine->stats().bytes_tx);
    // The receiving side sends only ACKs, which nobody echoes: no samples,
    // but a row that says so.
    const rttcc_rtt_row_t back = row_of(*nodes[1], 0);
    assert_int_equal(back.samples, 0);
    assert_int_equal(back.rtt_source, static_cast<uint32_t>(TsSource::kNone));
}

// With kernel-like stamps the samples come from the stamps alone: the
// sender stamps some transmissions, the receiver echoes those in preference.
static void test_kernel_stamps_give_kernel_samples(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) { c.timestamp_interval_us = 1; }, nullptr, true);
    assert_int_equal(static_cast<int>(nodes[0]->engine->timestamp_source()), static_cast<int>(TsSource::kKernel));
    exchange(nodes, kSizes, 40);
    const Peer &p = *nodes[0]->engine->peer(1);
    const rttcc_rtt_row_t r = row_of(*nodes[0], 1);
    assert_true(nodes[0]->stamps->stamped > 0);
    assert_true(p.path.best_samples > 0);
    assert_int_equal(r.rtt_source, static_cast<uint32_t>(TsSource::kKernel));
    // Once stamped samples arrive the user clock is no longer sampled.
    assert_true(p.rtt.samples() - p.path.best_samples <= 1);
    // Stamps are 3 us early on arrival and 2 us late on sending: the kernel
    // sample of a one-round round trip is 8 us short of it (the data's
    // send, the ACK's arrival, and the data's arrival, from which the
    // receiver's hold runs).
    assert_int_equal(r.min_ns, kRound - usec(8));
    assert_true(r.min_ns <= r.srtt_ns);
}

static void test_stamped_sends_are_spaced_by_the_interval(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) { c.timestamp_interval_us = 1000000; }, nullptr, true);
    exchange(nodes, kSizes, 40);
    assert_int_equal(nodes[0]->stamps->stamped, 1);  // one per second per peer at most
}

static void test_user_clock_ignores_wire_stamps_when_asked(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) { c.timestamp = RTTCC_TS_USER; }, nullptr, true);
    exchange(nodes, kSizes, 20);
    assert_int_equal(nodes[0]->stamps->stamped, 0);
    assert_int_equal(row_of(*nodes[0], 1).rtt_source, static_cast<uint32_t>(TsSource::kUser));
}

// cc = aimd: the data segments in flight never exceed the congestion
// window, which starts at initial_cwnd and grows in slow start.
static void test_congestion_window_gates_data_segments(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, {}, [](rttcc_config_t &c) {
        c.cc = RTTCC_CC_AIMD;
        c.initial_cwnd = 2;
        c.max_cwnd = 64;
    });
    const Peer &p = *nodes[0]->engine->peer(1);
    assert_non_null(p.cc.get());
    assert_int_equal(p.cc->window(), 2);
    std::vector<uint8_t> big = make_message(7, 300000);  // dozens of data segments
    iovec iov{big.data(), big.size()};
    assert_int_equal(nodes[0]->engine->send(1, 3, &iov, 1, &big), RTTCC_OK);
    assert_true(p.data_in_flight <= 2);
    uint32_t most = 0;
    assert_true(run_until(nodes, [&] {
        most = std::max(most, p.data_in_flight);
        assert_true(p.data_in_flight <= p.cc->window() + 1);  // + the one just ACKed may refill
        return nodes[0]->completed.size() == 1;
    }));
    assert_true(p.cc->window() > 2);  // slow start grew it
    assert_true(most > 2);
    assert_true(nodes[1]->received[0].bytes == big);
    const rttcc_rtt_row_t r = row_of(*nodes[0], 1);
    assert_true(r.flags & RTTCC_ROW_CC);
    assert_true(r.cwnd == p.cc->cwnd());
}

// Random loss shows in the row (losses, retransmissions).  A run of losses
// in one round trip (here 30 segments of one flight) cuts the window; lone
// ones on a path with no queue do not (cc_aimd.h).
static void test_losses_show_in_the_row_and_a_run_cuts_the_window(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 2, FaultRates{50000, 0, 0, 0}, [](rttcc_config_t &c) {
        c.cc = RTTCC_CC_AIMD;
        c.max_cwnd = 128;
    });
    exchange(nodes, kSizes, 60);
    const rttcc_rtt_row_t r = row_of(*nodes[0], 1);
    assert_true(r.losses > 0);
    assert_true(r.retransmits > 0);

    auto clean = make_nodes(net, 2, {}, [](rttcc_config_t &c) {
        c.cc = RTTCC_CC_AIMD;
        c.max_cwnd = 128;
    });
    exchange(clean, kSizes, 20);
    const double before = clean[0]->engine->peer(1)->cc->cwnd();
    const seq_t first = clean[0]->engine->peer(1)->tx.next();
    clean[0]->faults->drop_if = [&](Channel ch, const TxDatagram &d) {
        const auto *h = static_cast<const PacketHeader *>(d.iov[0].iov_base);
        const uint32_t nth = h->seq - first;
        return ch == kData && (h->tx_id & 0xffffu) == 1 && nth >= 10 && nth < 40;  // first transmissions only
    };
    const std::vector<uint8_t> big = make_message(9, 600000);
    iovec iov{const_cast<uint8_t *>(big.data()), big.size()};
    int cookie;
    const size_t done = clean[0]->completed.size();
    assert_int_equal(clean[0]->engine->send(1, 3, &iov, 1, &cookie), RTTCC_OK);
    assert_true(run_until(clean, [&] { return clean[0]->completed.size() == done + 1; }));
    assert_true(clean[0]->engine->stats().retx_fast + clean[0]->engine->stats().retx_rack >= 30);
    assert_true(clean[0]->engine->peer(1)->cc->cwnd() < before);
}

// A wire whose command-channel arrivals (ACKs) wait `hold` of the engines'
// time before the engine sees them: a queue on the way back only.
class HoldingWire final : public Wire {
public:
    HoldingWire(std::unique_ptr<Wire> inner, const Clock &clock) : inner_(std::move(inner)), clock_(clock) {}
    const char *name() const override { return "holding"; }
    size_t local_address(Channel ch, void *b, size_t c) const override { return inner_->local_address(ch, b, c); }
    bool resolve(Channel ch, const void *a, size_t l, WireHandle *o, std::string *e) override {
        return inner_->resolve(ch, a, l, o, e);
    }
    size_t path_datagram(const void *a, size_t l) const override { return inner_->path_datagram(a, l); }
    int tx_burst(Channel ch, TxDatagram *d, int n) noexcept override { return inner_->tx_burst(ch, d, n); }
    int rx_burst(Channel ch, RxDatagram *d, int n) override {
        if (ch != kCmd) return inner_->rx_burst(ch, d, n);
        RxDatagram in[16];
        const nanos now = clock_.now();
        for (int got = inner_->rx_burst(ch, in, 16), i = 0; i < got; ++i)
            held_.push_back({std::vector<uint8_t>(in[i].buf, in[i].buf + in[i].len), in[i].src, now});
        out_.clear();
        while (static_cast<int>(out_.size()) < n && !held_.empty() && held_.front().at + hold <= now) {
            out_.push_back(std::move(held_.front()));
            held_.pop_front();
        }
        for (size_t i = 0; i < out_.size(); ++i)
            d[i] = {out_[i].bytes.data(), out_[i].bytes.size(), out_[i].src, 0, TsSource::kNone};
        return static_cast<int>(out_.size());
    }
    nanos hold = 0;

private:
    struct Held {
        std::vector<uint8_t> bytes;
        WireHandle src;
        nanos at;
    };
    std::unique_ptr<Wire> inner_;
    const Clock &clock_;
    std::deque<Held> held_;
    std::vector<Held> out_;  // handed out by the latest rx_burst
};

// Node 0 sends `message` to node 1 `count` times, each after the last one
// was ACKed (zero-copy sends complete on their ACK).
static void stream_to_node1(std::vector<std::unique_ptr<Node>> &nodes, std::vector<uint8_t> &message, size_t count) {
    iovec iov{message.data(), message.size()};
    for (size_t k = 0; k < count; ++k) {
        const size_t before = nodes[0]->completed.size();
        assert_int_equal(nodes[0]->engine->send(1, 3, &iov, 1, &message), RTTCC_OK);
        assert_true(run_until(nodes, [&] { return nodes[0]->completed.size() > before; }, 20));
    }
}

// Node 0 streams to node 1 while node 1's ACKs queue 2 ms on the way back
// (as behind node 1's own data on a shared slow link).  The RTT table sees
// the round trip; with cc_delay forward, congestion control sees it less
// the queue and keeps growing its window; with cc_delay rtt it sees the
// round trip, as the table does.
static void test_queueing_on_the_way_back_is_not_congestion(void **) {
    for (int mode : {RTTCC_CC_DELAY_FORWARD, RTTCC_CC_DELAY_RTT}) {
        MemNetwork net(4000);
        static int cc_delay;
        cc_delay = mode;
        HoldingWire *holding = nullptr;
        auto nodes = make_nodes(
            net, 2, {},
            [](rttcc_config_t &c) {
                c.cc = RTTCC_CC_AIMD;
                c.cc_delay = cc_delay;
                c.max_cwnd = 64;
                c.ack_delay_us = 0;
            },
            nullptr, false, [&](int i, std::unique_ptr<Wire> w) -> std::unique_ptr<Wire> {
                if (i != 0) return w;
                auto h = std::make_unique<HoldingWire>(std::move(w), net.time());
                holding = h.get();
                return h;
            });
        const Peer &p = *nodes[0]->engine->peer(1);
        std::vector<uint8_t> big = make_message(9, 200000);
        auto stream = [&](size_t messages) { stream_to_node1(nodes, big, messages); };
        stream(2);  // no queue: the floor of the replies' one-way time
        holding->hold = msec(2);
        stream(8);  // an ACK per 64 segments (ack_every): enough samples for the averages to settle
        assert_true(p.rtt.srtt() > msec(1));  // the table: round trips
        if (mode == RTTCC_CC_DELAY_FORWARD) {
            assert_int_equal(p.path.rev_queue, msec(2));
            // the forward delay: well under the round trip
            assert_true(p.cc_rtt.srtt() < p.rtt.srtt() / 2);
            assert_true(p.cc->cwnd() >= 16);
        } else {
            assert_true(p.cc_rtt.srtt() == p.rtt.srtt());
        }
    }
}

// CLOCK_REALTIME as the system has it, stepped by `step` (a test sets it).
struct SteppedClock : SystemClock {
    int64_t step = 0;
    bool read(clockid_t id, int64_t *ns) override {
        if (!SystemClock::real().read(id, ns)) return false;
        if (id == CLOCK_REALTIME) *ns += step;
        return true;
    }
};

// Node 1's clock steps back 5 ms mid-stream: node 0 sees the one-way time
// of everything from node 1 jump by 5 ms, more than any round trip, for a
// second or two.  Congestion control must not take that for a 0 delay (it
// would keep it as its base and then halve its window for good): the delay
// it sees never falls below the least round trip.
static void test_a_clock_step_does_not_zero_the_forward_delay(void **) {
    MemNetwork net(4000);
    static SteppedClock stepped;
    stepped.step = 0;
    auto nodes = make_nodes(
        net, 2, {},
        [](rttcc_config_t &c) {
            c.cc = RTTCC_CC_AIMD;
            c.cc_delay = RTTCC_CC_DELAY_FORWARD;
            c.max_cwnd = 64;
            c.ptp_enable = RTTCC_PTP_NO;
        },
        nullptr, false, nullptr, [](int i) -> std::unique_ptr<ClockDomain> {
            rttcc_config_t c = test_config(static_cast<uint32_t>(i));
            c.ptp_enable = RTTCC_PTP_NO;
            std::string err, note;
            return ClockDomain::open(c, &err, &note, i == 1 ? &stepped : nullptr);
        });
    const Peer &p = *nodes[0]->engine->peer(1);
    std::vector<uint8_t> big = make_message(4, 200000);
    auto stream = [&](size_t messages) { stream_to_node1(nodes, big, messages); };
    stream(2);
    stepped.step = -static_cast<int64_t>(msec(5));
    const nanos until = now_of(nodes) + msec(5);  // node 1 reads its clock again every millisecond
    run_until(nodes, [&] { return now_of(nodes) > until; }, 1);
    stream(4);
    assert_true(p.path.rev_queue > msec(4));  // the step shows as queueing on the way back
    assert_true(p.cc_rtt.min() >= p.rtt.min());
    assert_true(p.cc->cwnd() >= 16);
}

static std::string slurp(const std::string &path) {
    std::ifstream f(path);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

static void test_dump_writes_csv_and_json(void **) {
    MemNetwork net(4000);
    auto nodes = make_nodes(net, 3);
    assert_int_equal(row_of(*nodes[0], 2).last_update_ns, ManualClock::kStart);  // published when added
    exchange(nodes, kSizes, 10);
    char dump_ms[64];  // every row is published at the dump, the engines' time since they started
    std::snprintf(dump_ms, sizeof dump_ms, "\"last_update_ms\": %.3f,", (now_of(nodes) - ManualClock::kStart) / 1e6);
    char dir[] = "/tmp/rttcc-dump.XXXXXX";
    assert_non_null(mkdtemp(dir));
    const std::string prefix = std::string(dir) + "/rtt";
    std::string err;
    assert_true(nodes[0]->engine->dump_rtt(prefix.c_str(), 0, "hostA", &err));
    const std::string csv = slurp(prefix + ".0.csv"), json = slurp(prefix + ".0.json");
    assert_non_null(std::strstr(csv.c_str(), "# rttcc rtt table rank=0 host=hostA timestamp_source=user"));
    assert_non_null(std::strstr(csv.c_str(), "\nrank,peer,srtt_us,"));
    assert_non_null(std::strstr(csv.c_str(), "\n0,1,"));
    assert_non_null(std::strstr(csv.c_str(), "\n0,2,"));  // a peer without traffic still has its row
    assert_non_null(std::strstr(json.c_str(), "\"peer\": 1, \"srtt_us\": "));
    assert_non_null(std::strstr(json.c_str(), "\"owd_fwd_us\": null"));
    assert_non_null(std::strstr(json.c_str(), dump_ms));
    std::remove((prefix + ".0.csv").c_str());
    std::remove((prefix + ".0.json").c_str());
    std::remove(dir);
    // An unwritable place is an error that says where.
    assert_false(nodes[0]->engine->dump_rtt("/nonexistent-dir/rtt", 0, "hostA", &err));
    assert_non_null(std::strstr(err.c_str(), "/nonexistent-dir/rtt.0.csv"));
}

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_row_is_populated_and_plausible),
        cmocka_unit_test(test_kernel_stamps_give_kernel_samples),
        cmocka_unit_test(test_stamped_sends_are_spaced_by_the_interval),
        cmocka_unit_test(test_user_clock_ignores_wire_stamps_when_asked),
        cmocka_unit_test(test_congestion_window_gates_data_segments),
        cmocka_unit_test(test_losses_show_in_the_row_and_a_run_cuts_the_window),
        cmocka_unit_test(test_queueing_on_the_way_back_is_not_congestion),
        cmocka_unit_test(test_a_clock_step_does_not_zero_the_forward_delay),
        cmocka_unit_test(test_dump_writes_csv_and_json),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
