// rttcc_sim: the real engine, many ranks in one process, in virtual time.
//
//   rttcc_sim incast [-senders N] [-bytes B] [-cc none|aimd|timely|swift]
//                    [-gbit G] [-queue PACKETS] [-delay NS] [-seed S] [-warm 0|1]
//                    [-jitter NS] [-rto_jitter PCT] [-poll 0|1] [-limit MS] [-header]
//   rttcc_sim alltoall [-ranks N] [-block B] [-algo rttcc|pairwise|linear|bruck]
//                    [-policy linear|greedy|threshold|balanced|adaptive]
//                    [-eager_limit B] [-eager_total B] [-max_concurrent N]
//                    [-topo star|fat_tree] [-per_leaf K] [-spines S] [-hot F] [-hotspot MBIT]
//                    [-testbed a|b|c|d] [-fast MBIT] [-slow MBIT] [-link MBIT] [-queue PACKETS]
//                    [-flood MBIT] [-flood_on S] [-flood_off S] [-iters N] [-time S]
//                    [-cc ...] [-gbit G] [-delay NS] [-seed S] [-rto_jitter PCT] [-limit MS] [-header]
//                    [-level packet|flow] [-dt NS]
//   rttcc_sim scale [-peers N] [-policy P] [-block B] [-seed S] [-header]
//   rttcc_sim shaped [-rate MBIT] [-queue PACKETS] [-cc ...] [-swift_target_us US]
//                    [-bytes B] [-window N] [-from S] [-time S] [-gbit G] [-delay NS] [-seed S] [-header]
//
// incast: N senders on one switch each send B bytes to one receiver at
// once; every host link at G Gbit/s with D ns of delay, the receiver's
// switch port with a queue of PACKETS full-size frames.  Prints one CSV
// line (-header: the column names first): completion, goodput against the
// line, drops, the queue's peak, Jain's fairness index over the senders'
// rates, retransmissions and the simulator's own events per second.
// -warm 1: first every sender sends the receiver one 8-byte message and
// has it ACKed (PACKETS / 2 senders at a time), as ranks that have talked
// before; the incast then meets timers derived from RTT samples, not the
// first contact's retransmission timeout, and its times count from its
// start.  -jitter J: each sender starts at a time drawn uniformly from
// [0, J) ns by the seed (0: all at once, and the seed changes nothing):
// an incast past its queue is chaotic (one sender's lost first flight and
// its backed-off timeouts can double the completion), so figures are
// medians over seeds.
//
// alltoall: -iters alltoalls (1) of B-byte blocks on N ranks
// (sim/alltoall.h), one after another as after a barrier, and more until
// -time seconds of virtual time have passed (0), on one switch or
// a two-level fat tree (K hosts per leaf, S spines, every link at G
// Gbit/s); -eager_limit, -eager_total and -max_concurrent set coll_rttcc's
// (64 KiB, 16 MiB and 8: blocks up to the limit, and to eager_total over
// all peers, go with the RTR, to every peer at once, the
// others to at most 8 peers at a time in the policy's order); -hot F runs
// one link at 1/F of the rate: rank 0's own link (star) or leaf 0's first
// uplink (fat_tree); -hotspot M adds a host (in
// the last leaf) that floods rank 0 with M Mbit/s of UDP for -flood_on
// seconds and pauses for -flood_off, over and over (a transient hotspot on
// its path).  -testbed builds
// bench/coll_table.sh's scenario instead (build_alltoall_fabric below).
// Prints one CSV line: the median completion over the iterations, the
// line bound (the bottleneck's bytes at its rate, a flood or not), their
// ratio, the last iteration's median rank end, drops, retransmissions,
// events per second, the iterations, the mean completion, the level and,
// with a flood, an estimate: the same bound with the ports it crosses at
// their rate less its mean on the wire (inf if it leaves nothing), and the
// flood's own drops (drops are the alltoall's packets').  At packet level a
// job whose memory (about 6 KB per pair of ranks and the blocks' copies,
// alltoall_memory_bytes) exceeds this machine's is refused.
//
// -level flow: the same alltoalls at flow level (sim/flow_alltoall.h: the
// real PeerScheduler and congestion control over fluid flows, ranks in
// classes the fabric cannot tell apart; each call starts from the RTT
// table the ones before it left), on one switch or a fat
// tree (ranks a multiple of -per_leaf), with -hot and -hotspot (the flood
// crosses spine seed % spines); up to 2^24 ranks.  Steps of -dt ns (0: an
// eighth of the shortest round trip; at most a quarter of it, well below
// the one-way delay); events are steps.
//
// Both: -rto_jitter PCT sets the engines' rto_jitter_pct (0: exact
// timeouts); -poll 1 also progresses every engine every 5 us, as an
// application spinning in MPI (sim/sim_host.h): many more passes, the same
// work at the same times (ties between hosts at one instant may go the
// other way, and a chaotic incast then takes another course).  Both end
// with late_passes: progress passes that did timed work the engine's
// next_due had not foreseen, so the simulator ran it late; a run with any
// fails (exit 1).
//
// shaped: bench/cc_table.sh's run (sim/shaped_link.h): two streamers keep
// -window messages of -bytes (4 x 1 MiB) in flight to a sink whose link is
// shaped to -rate Mbit/s (150) with a -queue of full frames (200) while a
// pinger ping-pongs 8 bytes with it; measured from -from (1) to -time (4)
// seconds: the sink's MB/s, the pings' p50 and p99, the shaped link's drops.
//
// scale: what the shipped code costs at N peers (sim/scale.h): the memory
// one engine holds per peer once it knows N, and the PeerScheduler's cost
// per pick in one round over N peers with B bytes each (policy P; RTTs
// drawn from seed S).  Prints one CSV line.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include "alltoall.h"
#include "background.h"
#include "exchange/exchange.h"
#include "flow_alltoall.h"
#include "job.h"
#include "scale.h"
#include "shaped_link.h"
#include "sim_wire.h"

using namespace rttcc::sim;

namespace {

struct Options {
    std::string scenario;
    size_t senders = 10, bytes = 1 << 20;
    size_t ranks = 16, block = 65536, per_leaf = 16, spines = 0;  // 0 spines: as many as per_leaf (1:1)
    size_t peers = 65536;
    AlltoallAlgo algo = AlltoallAlgo::kRttcc;
    int policy = RTTCC_SCHED_ADAPTIVE;
    std::string topo = "star";
    double hot = 1;
    int cc = RTTCC_CC_AIMD;
    double gbit = 10;
    uint32_t queue = 0;  // -queue; 0: the scenario's (queue_frames)
    rttcc::nanos delay = 1000;
    uint64_t seed = 1;
    double limit_ms = 10000;
    bool warm = false;
    bool poll = false;
    std::string testbed;  // alltoall: coll_table.sh's scenario a, b, c or d
    double hotspot_mbit = 0;  // alltoall on star or fat_tree: a flooder host sends rank 0 this much
    double fast_mbit = 500, slow_mbit = 100, link_mbit = 200, flood_mbit = 300, flood_on = 1, flood_off = 1;
    size_t iters = 1;
    long long eager_limit = -1, eager_total = -1, max_concurrent = -1;  // alltoall rttcc: coll_rttcc's, unless set
    double time_s = 0;  // alltoall: go on past -iters until this much virtual time has passed
    rttcc::nanos jitter = 0;
    int rto_jitter = -1;  // the engine's default (rto_jitter_pct)
    bool header = false;
    bool flow = false;  // alltoall: -level flow
    double rate_mbit = 150, from_s = 1;  // shaped
    uint32_t window = 4;
    long long swift_target_us = -1;
    rttcc::nanos dt = 0;
};

[[noreturn]] void usage(const char *why) {
    std::fprintf(stderr,
                 "rttcc_sim: %s\nusage: rttcc_sim incast [-senders N] [-bytes B] [-cc none|aimd|timely|swift] "
                 "[-gbit G] [-queue PACKETS] [-delay NS] [-seed S] [-warm 0|1] [-jitter NS] [-rto_jitter PCT] "
                 "[-poll 0|1] [-limit MS] [-header]\n"
                 "       rttcc_sim alltoall [-ranks N] [-block B] [-algo rttcc|pairwise|linear|bruck] "
                 "[-policy linear|greedy|threshold|balanced|adaptive] [-eager_limit B] [-eager_total B] [-max_concurrent N] [-topo star|fat_tree] [-per_leaf K] "
                 "[-spines S] [-hot F] [-hotspot MBIT] [-testbed a|b|c|d] [-fast MBIT] [-slow MBIT] [-link MBIT] [-queue PACKETS] "
                 "[-flood MBIT] [-flood_on S] [-flood_off S] [-iters N] [-time S] [-cc ...] [-gbit G] [-delay NS] [-seed S] "
                 "[-rto_jitter PCT] [-poll 0|1] [-limit MS] [-header] [-level packet|flow] [-dt NS]\n"
                 "       rttcc_sim scale [-peers N] [-policy P] [-block B] [-seed S] [-header]\n"
                 "       rttcc_sim shaped [-rate MBIT] [-queue PACKETS] [-cc ...] [-swift_target_us US] [-bytes B] "
                 "[-window N] [-from S] [-time S] [-gbit G] [-delay NS] [-seed S] [-header]\n",
                 why);
    std::exit(2);
}

const char *const cc_names[] = {"none", "aimd", "timely", "swift"};  // by RTTCC_CC_*

int cc_named(const char *s) {
    for (int i = 0; i < 4; ++i)
        if (0 == std::strcmp(s, cc_names[i])) return i;
    usage("-cc: none, aimd, timely or swift");
}

double number(const char *flag, const char *s, double lo, double hi) {
    char *end = nullptr;
    const double v = std::strtod(s, &end);
    if (end == s || *end || !(v >= lo && v <= hi)) usage((std::string(flag) + ": out of range").c_str());
    return v;
}

Options parse(int argc, char **argv) {
    Options o;
    if (argc < 2 || (std::strcmp(argv[1], "incast") && std::strcmp(argv[1], "alltoall") && std::strcmp(argv[1], "scale") &&
                     std::strcmp(argv[1], "shaped")))
        usage("the scenarios are incast, alltoall, scale and shaped");
    o.scenario = argv[1];
    for (int i = 2; i < argc; ++i) {
        const char *f = argv[i];
        if (0 == std::strcmp(f, "-header")) {
            o.header = true;
            continue;
        }
        if (i + 1 >= argc) usage((std::string(f) + " needs a value").c_str());
        const char *v = argv[++i];
        if (0 == std::strcmp(f, "-senders")) o.senders = static_cast<size_t>(number(f, v, 1, 4096));
        else if (0 == std::strcmp(f, "-bytes")) o.bytes = static_cast<size_t>(number(f, v, 1, 64 << 20));
        else if (0 == std::strcmp(f, "-cc")) o.cc = cc_named(v);
        else if (0 == std::strcmp(f, "-gbit")) o.gbit = number(f, v, 0.001, 1000);
        else if (0 == std::strcmp(f, "-queue")) o.queue = static_cast<uint32_t>(number(f, v, 1, 1e6));
        else if (0 == std::strcmp(f, "-delay")) o.delay = static_cast<rttcc::nanos>(number(f, v, 0, 1e9));
        else if (0 == std::strcmp(f, "-seed")) o.seed = static_cast<uint64_t>(number(f, v, 0, 1e18));
        else if (0 == std::strcmp(f, "-limit")) o.limit_ms = number(f, v, 0.001, 1e7);
        else if (0 == std::strcmp(f, "-warm")) o.warm = number(f, v, 0, 1) != 0;
        else if (0 == std::strcmp(f, "-poll")) o.poll = number(f, v, 0, 1) != 0;
        else if (0 == std::strcmp(f, "-jitter")) o.jitter = static_cast<rttcc::nanos>(number(f, v, 0, 1e9));
        else if (0 == std::strcmp(f, "-rto_jitter")) o.rto_jitter = static_cast<int>(number(f, v, 0, 100));
        else if (0 == std::strcmp(f, "-ranks")) o.ranks = static_cast<size_t>(number(f, v, 2, 1 << 24));
        else if (0 == std::strcmp(f, "-block")) o.block = static_cast<size_t>(number(f, v, 1, 64 << 20));
        else if (0 == std::strcmp(f, "-algo")) {
            if (!alltoall_algo_named(v, &o.algo)) usage("-algo: rttcc, pairwise, linear or bruck");
        } else if (0 == std::strcmp(f, "-policy")) {
            o.policy = rttcc_sched_policy_value(v);
            if (o.policy < 0) usage("-policy: linear, greedy, threshold, balanced or adaptive");
        } else if (0 == std::strcmp(f, "-topo")) {
            o.topo = v;
            if (o.topo != "star" && o.topo != "fat_tree") usage("-topo: star or fat_tree");
        } else if (0 == std::strcmp(f, "-per_leaf")) o.per_leaf = static_cast<size_t>(number(f, v, 1, 4096));
        else if (0 == std::strcmp(f, "-spines")) o.spines = static_cast<size_t>(number(f, v, 1, 4096));
        else if (0 == std::strcmp(f, "-hot")) o.hot = number(f, v, 1, 1e6);
        else if (0 == std::strcmp(f, "-testbed")) {
            o.testbed = v;
            if (o.testbed != "a" && o.testbed != "b" && o.testbed != "c" && o.testbed != "d")
                usage("-testbed: a, b, c or d");
        } else if (0 == std::strcmp(f, "-fast")) o.fast_mbit = number(f, v, 1, 1e6);
        else if (0 == std::strcmp(f, "-slow")) o.slow_mbit = number(f, v, 1, 1e6);
        else if (0 == std::strcmp(f, "-link")) o.link_mbit = number(f, v, 1, 1e6);
        else if (0 == std::strcmp(f, "-flood")) o.flood_mbit = number(f, v, 1, 1e6);
        else if (0 == std::strcmp(f, "-hotspot")) o.hotspot_mbit = number(f, v, 1, 1e7);
        else if (0 == std::strcmp(f, "-flood_on")) o.flood_on = number(f, v, 0.001, 1000);
        else if (0 == std::strcmp(f, "-flood_off")) o.flood_off = number(f, v, 0, 1000);
        else if (0 == std::strcmp(f, "-iters")) o.iters = static_cast<size_t>(number(f, v, 1, 1e6));
        else if (0 == std::strcmp(f, "-eager_limit")) o.eager_limit = static_cast<long long>(number(f, v, 0, 1 << 30));
        else if (0 == std::strcmp(f, "-eager_total")) o.eager_total = static_cast<long long>(number(f, v, 0, 1ll << 40));
        else if (0 == std::strcmp(f, "-max_concurrent")) o.max_concurrent = static_cast<long long>(number(f, v, 0, 1 << 20));
        else if (0 == std::strcmp(f, "-time")) o.time_s = number(f, v, 0, 1e4);
        else if (0 == std::strcmp(f, "-level")) {
            if (std::strcmp(v, "packet") && std::strcmp(v, "flow")) usage("-level: packet or flow");
            o.flow = 0 == std::strcmp(v, "flow");
        } else if (0 == std::strcmp(f, "-rate")) o.rate_mbit = number(f, v, 0.01, 1e6);
        else if (0 == std::strcmp(f, "-from")) o.from_s = number(f, v, 0, 1e4);
        else if (0 == std::strcmp(f, "-window")) o.window = static_cast<uint32_t>(number(f, v, 1, 1024));
        else if (0 == std::strcmp(f, "-swift_target_us")) o.swift_target_us = static_cast<long long>(number(f, v, 1, 1e7));
        else if (0 == std::strcmp(f, "-dt")) o.dt = static_cast<rttcc::nanos>(number(f, v, 0, 1e9));
        else if (0 == std::strcmp(f, "-peers")) o.peers = static_cast<size_t>(number(f, v, 2, 1 << 24));
        else usage((std::string("unknown option ") + f).c_str());
    }
    return o;
}

constexpr size_t kWarmBytes = 8;

// A shaped queue's room in full frames: -queue, else 100 (shaped: 200, as bench/cc_table.sh).
uint32_t queue_frames(const Options &o) { return o.queue ? o.queue : o.scenario == "shaped" ? 200 : 100; }

// The simulator's self-check: no engine met timed work later than due.
bool late_passes_ok(const Job &job) {
    if (job.late_passes() == 0) return true;
    std::fprintf(stderr, "rttcc_sim: %llu progress passes did timed work that the engines' next_due did not "
                 "foresee: the simulator ran their timers late, so its times are wrong\n",
                 (unsigned long long) job.late_passes());
    return false;
}

// -warm: every sender's engine learns its path to rank 0 (one small
// message, delivered, and an RTT sample from its ACK), queue / 2 senders at
// a time so that the warm-up drops nothing.  False if it did not end within
// `limit`.
bool warm_up(Job &job, uint32_t queue, rttcc::nanos limit) {
    const uint32_t n = static_cast<uint32_t>(job.size()), batch = std::max<uint32_t>(1, queue / 2);
    for (uint32_t first = 1; first < n; first += batch) {
        const uint32_t last = std::min(n, first + batch);
        for (uint32_t s = first; s < last; ++s)
            if (!job.send(s, 0, kWarmBytes)) return false;
        auto warmed = [&] {
            rttcc_rtt_row_t row;
            for (uint32_t s = first; s < last; ++s)
                if (job.rank(0).received[s] != kWarmBytes || !job.rank(s).host->engine().rtt_row(0, &row) ||
                    row.samples == 0)
                    return false;
            return true;
        };
        if (!job.run_until(warmed, limit)) return false;
    }
    return true;
}

// What both scenarios set of their job: congestion control, seed, polling, RTO jitter.
JobConfig job_config(const Options &o) {
    JobConfig jc = default_job_config();
    jc.engine.cc = o.cc;
    jc.seed = o.seed;
    jc.poll = o.poll;
    if (o.rto_jitter >= 0) jc.engine.rto_jitter_pct = static_cast<unsigned>(o.rto_jitter);
    return jc;
}

int incast(const Options &o) {
    const JobConfig jc = job_config(o);
    const uint32_t frame = frame_bytes(jc.mtu);
    LinkConfig link;
    link.bits_per_s = static_cast<uint64_t>(o.gbit * 1e9);
    link.delay = o.delay;
    link.queue_bytes = 4 << 20;  // senders' NICs: deep, like a socket's buffer
    const size_t n = o.senders + 1;
    const auto wall0 = std::chrono::steady_clock::now();
    Job job(n, [&](Fabric &f, size_t hosts) {
        Topology t = one_switch(f, hosts, link);
        Port *in = f.port(t.switches[0], t.hosts[0]);
        LinkConfig c = in->config();
        c.queue_bytes = queue_frames(o) * frame;
        in->reconfigure(c);
        return t;
    }, jc, [](size_t i, size_t j) { return i == 0 || j == 0; });
    const rttcc::nanos limit = static_cast<rttcc::nanos>(o.limit_ms * 1e6);
    const size_t warm_bytes = o.warm ? kWarmBytes : 0;
    bool finished = !o.warm || warm_up(job, queue_frames(o), limit);
    const rttcc::nanos start = job.events().now();
    std::mt19937_64 rng(o.seed);
    std::vector<rttcc::nanos> began(n, start);  // each sender's start
    for (uint32_t s = 1; s < n && finished; ++s) {
        began[s] = start + (o.jitter ? rng() % o.jitter : 0);
        job.send_at(began[s], s, 0, o.bytes);
    }
    auto done = [&] {
        if (job.refused_sends()) return true;  // reported below
        for (uint32_t s = 1; s < n; ++s)
            if (job.rank(0).received[s] != warm_bytes + o.bytes || job.rank(s).sends_done < (o.warm ? 2u : 1u)) return false;
        return true;
    };
    finished = finished && job.run_until(done, limit);
    if (job.refused_sends()) {
        std::fprintf(stderr, "rttcc_sim: the engine refused a %zu-byte message\n", o.bytes);
        return 1;
    }
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    const Port &in = *job.fabric().port(job.topology().switches[0], job.topology().hosts[0]);
    double sum = 0, sum2 = 0;
    uint64_t retx = 0;
    // Each sender's rate: its bytes over the time from its start until the
    // receiver had its last byte (its own completion says nothing for a
    // message the engine copied: that is the instant it was sent).
    const std::vector<rttcc::nanos> &got_at = job.rank(0).received_at;
    for (uint32_t s = 1; s < n; ++s) {
        const double rate = got_at[s] > began[s] ? o.bytes / ((got_at[s] - began[s]) / 1e9) : 0;
        sum += rate;
        sum2 += rate * rate;
        retx += job.rank(s).host->engine().stats().retx;
    }
    const double jain = sum2 > 0 ? sum * sum / (o.senders * sum2) : 0;
    const double secs = job.rank(0).last_delivery > start ? (job.rank(0).last_delivery - start) / 1e9 : 0;
    const double goodput = secs > 0 ? o.senders * o.bytes * 8 / secs / 1e9 : 0;
    if (o.header)
        std::printf("scenario,senders,bytes,cc,gbit,queue_pkts,seed,finished,completion_us,goodput_gbit,"
                    "goodput_of_line,drops,max_queue_bytes,jain,retransmits,corrupt_bytes,events,events_per_s,warm,poll,jitter_ns,rto_jitter_pct,late_passes\n");
    std::printf("incast,%zu,%zu,%s,%g,%u,%llu,%d,%.1f,%.3f,%.3f,%llu,%u,%.4f,%llu,%llu,%llu,%.0f,%d,%d,%llu,%u,%llu\n", o.senders,
                o.bytes, cc_names[o.cc], o.gbit, queue_frames(o), (unsigned long long) o.seed, finished ? 1 : 0, secs * 1e6,
                goodput, goodput / o.gbit, (unsigned long long) in.stats().drops, in.stats().max_queue_bytes, jain,
                (unsigned long long) retx, (unsigned long long) job.corrupt_bytes(),
                (unsigned long long) job.events().executed(), job.events().executed() / std::max(wall, 1e-9),
                o.warm ? 1 : 0, o.poll ? 1 : 0, (unsigned long long) o.jitter, jc.engine.rto_jitter_pct,
                (unsigned long long) job.late_passes());
    if (!late_passes_ok(job)) return 1;
    if (job.corrupt_bytes()) {
        std::fprintf(stderr, "rttcc_sim: %llu bytes arrived corrupt\n", (unsigned long long) job.corrupt_bytes());
        return 1;
    }
    if (!finished) {
        std::fprintf(stderr, "rttcc_sim: not finished within %g ms of virtual time\n", o.limit_ms);
        return 1;
    }
    return 0;
}

// Background UDP from host `from` to host `to` at `mbit`, -flood_on s on and -flood_off s off.
std::unique_ptr<Flood> flood_between(const Options &o, Fabric &f, uint32_t from, uint32_t to, double mbit) {
    FloodConfig fc;
    fc.from = from;
    fc.to = to;
    fc.payload_bits_per_s = static_cast<uint64_t>(mbit * 1e6);
    fc.on = static_cast<rttcc::nanos>(o.flood_on * 1e9);
    fc.off = static_cast<rttcc::nanos>(o.flood_off * 1e9);
    return std::make_unique<Flood>(f, fc);
}

// The fabric of an alltoall: one switch or a fat tree with an optional hot
// link, or one of coll_table.sh's testbed scenarios (every host link at
// -fast, shaped links with -queue packets of room in both directions):
// a: nothing more; b: rank 1's link at -slow; c: two groups of ranks
// joined by one link at -link; d: one more host floods rank 1 with -flood
// Mbit/s of UDP payload, -flood_on s on and -flood_off s off.  Defaults as
// coll_table.sh's: 500, 100, 200 and 300 Mbit/s, 1 s and 1 s.
Topology build_alltoall_fabric(const Options &o, Fabric &f, size_t hosts, const LinkConfig &link, uint32_t mtu,
                               std::unique_ptr<Flood> *flood) {
    Topology t;
    if (!o.testbed.empty()) {
        LinkConfig shaped = link;
        shaped.bits_per_s = static_cast<uint64_t>(o.fast_mbit * 1e6);
        shaped.queue_bytes = queue_frames(o) * frame_bytes(mtu);
        if (o.testbed == "c") {
            LinkConfig between = shaped;
            between.bits_per_s = static_cast<uint64_t>(o.link_mbit * 1e6);
            return groups(f, 2, hosts / 2, shaped, between);
        }
        t = one_switch(f, hosts + (o.testbed == "d"), shaped);
        if (o.testbed == "b") shape(f, t.hosts[1], static_cast<uint64_t>(o.slow_mbit * 1e6), shaped.queue_bytes);
        if (o.testbed == "d") *flood = flood_between(o, f, t.hosts[hosts], t.hosts[1], o.flood_mbit);
        return t;
    }
    const uint64_t hot_rate = static_cast<uint64_t>(link.bits_per_s / o.hot);
    const size_t all = hosts + (o.hotspot_mbit > 0);  // the flooder last
    if (o.topo == "star") {
        t = one_switch(f, all, link);
        if (o.hot > 1) shape(f, t.hosts[0], hot_rate, link.queue_bytes);
    } else {
        const size_t leaves = (all + o.per_leaf - 1) / o.per_leaf;
        t = fat_tree(f, leaves, o.per_leaf, o.spines ? o.spines : o.per_leaf, link, link);
        if (o.hot > 1) {
            const uint32_t leaf0 = t.switches[0], spine0 = t.switches[leaves];
            for (Port *p : {f.port(leaf0, spine0), f.port(spine0, leaf0)}) {
                LinkConfig c = p->config();
                c.bits_per_s = hot_rate;
                p->reconfigure(c);
            }
        }
    }
    if (o.hotspot_mbit > 0) *flood = flood_between(o, f, t.hosts[hosts], t.hosts[0], o.hotspot_mbit);
    return t;
}

// Every block's bits (no headers) on each port its flow takes (ECMP as the fabric picks).
std::map<Port *, double> alltoall_port_load(Fabric &f, const Topology &t, size_t ranks, size_t block) {
    std::map<Port *, double> load;
    for (size_t i = 0; i < ranks; ++i)
        for (size_t j = 0; j < ranks; ++j) {
            if (i == j) continue;
            Packet p;
            p.src = t.hosts[i];
            p.dst = t.hosts[j];
            p.flow = SimWire::flow_of(p.src, p.dst, rttcc::kData);
            for (Port *port : f.path(p)) load[port] += static_cast<double>(block) * 8;
        }
    return load;
}

// The line bound of one alltoall: the busiest port's load at its rate.  No
// schedule can end sooner, a flood or not (a flood loses its share of a
// full queue too, so the alltoall may get more than the rate less the
// flood's).
double alltoall_line_bound_us(const std::map<Port *, double> &load) {
    double worst = 0;
    for (const auto &[port, bits] : load) worst = std::max(worst, bits / static_cast<double>(port->config().bits_per_s));
    return worst * 1e6;
}

// An estimate with a flood: the same with each port the flood crosses at
// its rate less the flood's mean on the wire (frames); infinite where the
// flood takes the whole rate of a port the alltoall needs.
double alltoall_flood_estimate_us(Fabric &f, const std::map<Port *, double> &load, const Flood &flood) {
    std::map<Port *, double> taken;
    for (Port *port : f.path(flood.packet())) taken[port] = flood.mean_wire_bits_per_s();
    double worst = 0;
    for (const auto &[port, bits] : load) {
        const double left = static_cast<double>(port->config().bits_per_s) - taken[port];
        worst = std::max(worst, left > 0 ? bits / left : HUGE_VAL);
    }
    return worst * 1e6;
}

// coll_rttcc's parameters, as the options set them.
rttcc_exchange_params_t exchange_params(const Options &o) {
    rttcc_exchange_params_t xp;
    rttcc_exchange_params_defaults(&xp);
    xp.policy = o.policy;
    if (o.eager_limit >= 0) xp.eager_limit = static_cast<uint64_t>(o.eager_limit);
    if (o.eager_total >= 0) xp.eager_total = static_cast<uint64_t>(o.eager_total);
    if (o.max_concurrent >= 0) xp.max_concurrent = static_cast<uint32_t>(o.max_concurrent);
    return xp;
}

// The alltoall's CSV columns at both levels (the flow level adds its own after them).
constexpr const char *kAlltoallColumns =
    "scenario,ranks,block,algo,policy,topo,hot,cc,gbit,seed,finished,completion_us,line_bound_us,of_bound,"
    "median_end_us,drops,retransmits,corrupt_bytes,errors,events,events_per_s,late_passes,iters,mean_us,level,"
    "flood_est_us,flood_drops";

// The median (of an even count, the mean of the middle two) and the mean
// of alltoall times (0 and 0 for none).
std::pair<double, double> median_and_mean(std::vector<double> times) {
    if (times.empty()) return {0, 0};
    double mean = 0;
    for (const double t : times) mean += t / static_cast<double>(times.size());
    std::sort(times.begin(), times.end());
    const size_t mid = times.size() / 2;
    return {times.size() % 2 ? times[mid] : (times[mid - 1] + times[mid]) / 2, mean};
}

// What the flow level does not model, said when it would apply: coll_rttcc
// paces its grants (max_grants) without congestion control, so that at
// most that many peers put into a rank at once; the flow level lets every
// picked peer put.
void warn_paced_grants(const Options &o, const rttcc_exchange_params_t &xp) {
    if (o.algo != AlltoallAlgo::kRttcc) return;
    const uint32_t most = rttcc::grant_limit(xp.max_grants, o.cc);
    const uint64_t cut = std::min<uint64_t>(xp.eager_limit, xp.eager_total / (o.ranks - 1));
    if (most == 0 || o.block <= cut || o.ranks - 1 <= most) return;
    std::fprintf(stderr,
                 "rttcc_sim: warning: -level flow does not model paced grants: with cc %s coll_rttcc lets at most "
                 "%u peers put into a rank at once (max_grants), the flow level every peer its scheduler picks\n",
                 cc_names[o.cc], most);
}

int flow_alltoall(const Options &o) {
    if (!o.testbed.empty() || o.time_s > 0)
        usage("-level flow: alltoalls (no -time) on star or fat_tree (no -testbed)");
    if (o.algo == AlltoallAlgo::kBruck) usage("-level flow: rttcc, pairwise or linear");
    if (o.topo == "fat_tree" && o.ranks % o.per_leaf) usage("-level flow: a fat tree's ranks fill whole leaves (-ranks a multiple of -per_leaf)");
    FlowFabricConfig fc;
    fc.fat_tree = o.topo == "fat_tree";
    fc.ranks = static_cast<uint32_t>(o.ranks);
    fc.per_leaf = static_cast<uint32_t>(o.per_leaf);
    fc.spines = static_cast<uint32_t>(o.spines ? o.spines : o.per_leaf);
    fc.bits_per_s = o.gbit * 1e9;
    fc.delay = o.delay;
    fc.hot = o.hot;
    fc.hotspot_bits_per_s = o.hotspot_mbit * 1e6;
    fc.flood_on = static_cast<rttcc::nanos>(o.flood_on * 1e9);
    fc.flood_off = static_cast<rttcc::nanos>(o.flood_off * 1e9);
    fc.flood_spine = static_cast<uint32_t>(o.seed % fc.spines);
    const JobConfig jc = job_config(o);
    fc.mtu = jc.mtu;
    const auto wall0 = std::chrono::steady_clock::now();
    const FlowFabric fabric(fc);
    if (o.dt > flow_max_dt(fabric, jc.mtu))
        usage(("-dt: at most " + std::to_string(flow_max_dt(fabric, jc.mtu)) +
               " ns here (a quarter of the shortest round trip: a step well below the one-way delay)").c_str());
    FlowAlltoallConfig ac;
    ac.algo = o.algo;
    ac.block = o.block;
    ac.xp = exchange_params(o);
    warn_paced_grants(o, ac.xp);
    ac.engine = jc.engine;
    ac.mtu = jc.mtu;
    ac.dt = o.dt;
    ac.limit = static_cast<rttcc::nanos>(o.limit_ms * 1e6);
    const double bound_us = flow_line_bound_ns(fabric, o.block) / 1e3;
    const double flood_us = flow_flood_estimate_ns(fabric, o.block) / 1e3;
    // -iters N: calls one after another, each starting from the RTT table the
    // ones before it left (coll_bench's loop); median and mean as at packet level.
    FlowRttTable table;
    ac.table = &table;
    FlowAlltoallResult r;
    std::vector<double> times_us;
    uint64_t steps = 0;
    double drop_bytes = 0, flood_drop_bytes = 0, timeouts = 0;
    for (size_t it = 0; it < o.iters; ++it) {
        r = run_flow_alltoall(fabric, ac);
        steps += r.steps;
        drop_bytes += r.drop_bytes;
        flood_drop_bytes += r.flood_drop_bytes;
        timeouts += r.timeouts;
        if (!r.finished) break;
        times_us.push_back(r.completion / 1e3);
        ac.start = r.ended_at;
    }
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    const auto [done_us, mean_us] = median_and_mean(times_us);
    if (o.header)
        std::printf("%s,classes,channels,timeouts,dt_ns,wall_s\n", kAlltoallColumns);
    // drops and retransmits: the dropped frames' bytes as full frames (each is resent)
    const double drops = drop_bytes / frame_bytes(jc.mtu), flood_drops = flood_drop_bytes / frame_bytes(jc.mtu);
    std::printf("alltoall,%zu,%zu,%s,%s,%s,%g,%s,%g,%llu,%d,%.1f,%.1f,%.3f,%.1f,%.0f,%.0f,0,0,%llu,%.0f,0,%zu,%.1f,flow,"
                "%.1f,%.0f,%zu,%llu,%.0f,%llu,%.2f\n",
                o.ranks, o.block, alltoall_algo_name(o.algo),
                o.algo == AlltoallAlgo::kRttcc ? rttcc_sched_policy_name(o.policy) : "-", o.topo.c_str(), o.hot,
                cc_names[o.cc], o.gbit, (unsigned long long) o.seed, r.finished ? 1 : 0, done_us, bound_us,
                done_us / bound_us, r.median_end / 1e3, drops, drops, (unsigned long long) steps,
                steps / std::max(wall, 1e-9), times_us.size(), mean_us, flood_us, flood_drops, fabric.classes().size(),
                (unsigned long long) r.channels, timeouts, (unsigned long long) r.dt, wall);
    if (!r.finished) {
        std::fprintf(stderr, "rttcc_sim: not finished within %g ms of virtual time\n", o.limit_ms);
        return 1;
    }
    return 0;
}

// This machine's physical memory in bytes (0 if unknown).
uint64_t physical_memory() {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
}

// A packet-level alltoall whose memory (growing as ranks^2) would not fit this machine is refused.
void check_packet_memory(const Options &o) {
    const uint64_t need = alltoall_memory_bytes(o.ranks, o.block, o.algo), have = physical_memory();
    if (have == 0 || need <= have) return;
    char why[320];
    std::snprintf(why, sizeof why,
                  "-ranks %zu at packet level needs about %.1f GB (6 KB per pair of ranks and the blocks' "
                  "copies), more than this machine's %.1f GB: -level flow runs it",
                  o.ranks, need / 1e9, have / 1e9);
    usage(why);
}

// Bruck's messages carry several blocks: one the engine would refuse is refused here.
void check_bruck_messages(const Options &o) {
    if (o.algo != AlltoallAlgo::kBruck) return;
    const uint64_t most = bruck_largest_message(o.ranks, o.block), limit = job_config(o).engine.max_message;
    if (most <= limit) return;
    usage(("-algo bruck: its largest message would be " + std::to_string(most) + " bytes, above the engine's "
           "max_message (" + std::to_string(limit) + "): a smaller -block or fewer -ranks").c_str());
}

int alltoall(const Options &o) {
    if (o.flow) return flow_alltoall(o);
    if (o.ranks > 65536) usage("-ranks: at most 65536 at packet level (-level flow goes to 2^24)");
    check_packet_memory(o);
    check_bruck_messages(o);
    if (o.testbed == "c" && o.ranks % 2) usage("-testbed c: an even number of ranks (two groups)");
    const JobConfig jc = job_config(o);
    LinkConfig link;
    link.bits_per_s = static_cast<uint64_t>(o.gbit * 1e9);
    link.delay = o.delay;
    link.queue_bytes = 1 << 20;
    const auto wall0 = std::chrono::steady_clock::now();
    std::unique_ptr<Flood> flood;
    Job job(o.ranks, [&](Fabric &f, size_t hosts) { return build_alltoall_fabric(o, f, hosts, link, jc.mtu, &flood); },
            jc);
    const std::map<Port *, double> load = alltoall_port_load(job.fabric(), job.topology(), o.ranks, o.block);
    const double bound_us = alltoall_line_bound_us(load);
    const double flood_us = flood ? alltoall_flood_estimate_us(job.fabric(), load, *flood) : bound_us;
    const rttcc_exchange_params_t xp = exchange_params(o);
    // -iters N: alltoalls one after another (coll_bench's loop, its
    // barrier free), and more until -time has passed (coll_bench -time);
    // the figures are the median and the mean of their times.
    std::vector<double> times_us;
    AlltoallResult r;
    const rttcc::nanos until = job.events().now() + static_cast<rttcc::nanos>(o.time_s * 1e9);
    for (size_t it = 0; it < o.iters || job.events().now() < until; ++it) {
        r = run_alltoall(job, o.algo, o.block, xp, static_cast<rttcc::nanos>(o.limit_ms * 1e6));
        if (!r.finished || r.corrupt_bytes || r.errors) break;
        times_us.push_back(r.completion / 1e3);
    }
    if (flood) flood->stop();
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    const auto [median_us, mean_us] = median_and_mean(times_us);
    std::vector<rttcc::nanos> ends = r.rank_end;
    std::sort(ends.begin(), ends.end());
    uint64_t drops = 0, flood_drops = 0, retx = 0;  // the alltoall's packets, the flood's
    for (const auto &n : job.fabric().ports()) {
        drops += n->stats().drops - n->stats().background_drops;
        flood_drops += n->stats().background_drops;
    }
    for (size_t i = 0; i < o.ranks; ++i) retx += job.rank(i).host->engine().stats().retx;
    const std::string topo = o.testbed.empty() ? o.topo : "testbed_" + o.testbed;
    if (o.header)
        std::printf("%s\n", kAlltoallColumns);
    std::printf("alltoall,%zu,%zu,%s,%s,%s,%g,%s,%g,%llu,%d,%.1f,%.1f,%.3f,%.1f,%llu,%llu,%llu,%llu,%llu,%.0f,%llu,"
                "%zu,%.1f,packet,%.1f,%llu\n",
                o.ranks, o.block, alltoall_algo_name(o.algo),
                o.algo == AlltoallAlgo::kRttcc ? rttcc_sched_policy_name(o.policy) : "-", topo.c_str(), o.hot,
                cc_names[o.cc], o.gbit, (unsigned long long) o.seed, r.finished ? 1 : 0, median_us, bound_us,
                median_us / bound_us, ends[ends.size() / 2] / 1e3, (unsigned long long) drops,
                (unsigned long long) retx, (unsigned long long) r.corrupt_bytes, (unsigned long long) r.errors,
                (unsigned long long) job.events().executed(), job.events().executed() / std::max(wall, 1e-9),
                (unsigned long long) job.late_passes(), times_us.size(), mean_us, flood_us,
                (unsigned long long) flood_drops);
    if (!late_passes_ok(job)) return 1;
    if (!r.finished) {  // its blocks not yet in count as corrupt: say why first
        std::fprintf(stderr, "rttcc_sim: not finished within %g ms of virtual time\n", o.limit_ms);
        return 1;
    }
    if (r.corrupt_bytes || r.errors) {
        std::fprintf(stderr, "rttcc_sim: %llu bytes arrived corrupt or missing, %llu ranks failed\n",
                     (unsigned long long) r.corrupt_bytes, (unsigned long long) r.errors);
        return 1;
    }
    return 0;
}

int shaped(const Options &o) {
    const double time_s = o.time_s > 0 ? o.time_s : 4;
    if (o.from_s >= time_s) usage("shaped: -from before -time");
    ShapedLinkConfig c;
    c.job = job_config(o);
    if (o.swift_target_us >= 0) c.job.engine.swift_target_us = static_cast<unsigned>(o.swift_target_us);
    c.link_bits_per_s = static_cast<uint64_t>(o.gbit * 1e9);
    c.delay = o.delay;
    c.shaped_bits_per_s = static_cast<uint64_t>(o.rate_mbit * 1e6);
    c.queue_frames = queue_frames(o);
    c.size = o.bytes;
    c.window = o.window;
    c.warm = static_cast<rttcc::nanos>(o.from_s * 1e9);
    c.time = static_cast<rttcc::nanos>(time_s * 1e9);
    const auto wall0 = std::chrono::steady_clock::now();
    const ShapedLinkResult r = run_shaped_link(c);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    if (o.header)
        std::printf("scenario,rate_mbit,queue_pkts,cc,swift_target_us,bytes,window,seed,finished,mbps,ping_n,p50_us,"
                    "p99_us,drops,corrupt_bytes,wall_s\n");
    std::printf("shaped,%g,%u,%s,%u,%zu,%u,%llu,%d,%.2f,%zu,%.1f,%.1f,%llu,%llu,%.1f\n", o.rate_mbit, c.queue_frames,
                cc_names[o.cc], c.job.engine.swift_target_us, o.bytes, o.window, (unsigned long long) o.seed,
                r.finished ? 1 : 0, r.mbps, r.ping_us.size(), r.percentile(0.5), r.percentile(0.99),
                (unsigned long long) r.drops, (unsigned long long) r.corrupt_bytes, wall);
    if (r.corrupt_bytes || !r.finished) {
        std::fprintf(stderr, "rttcc_sim: %s\n", r.corrupt_bytes ? "bytes arrived corrupt" : "not finished");
        return 1;
    }
    return 0;
}

int scale(const Options &o) {
    rttcc_exchange_params_t xp;
    rttcc_exchange_params_defaults(&xp);
    const rttcc::SchedPolicy policy = rttcc::sched_policy_of(o.policy);
    const PickCost pick = measure_pick_cost(policy, o.peers, o.block, o.seed, rttcc::sched_params_of(xp));
    // Memory: one engine knowing every peer (up to 64k: a rank of the largest packet-level job).
    const size_t known = std::min<size_t>(o.peers - 1, 65535);
    const PeerMemory mem = measure_peer_memory(known, default_job_config().engine);
    if (o.header)
        std::printf("scenario,peers,policy,block,seed,picks,ns_per_pick,heap_ops_per_pick,deferrals,forced,"
                    "peers_known,idle_peer_bytes,heap_bytes_per_peer\n");
    std::printf("scale,%zu,%s,%zu,%llu,%llu,%.1f,%.2f,%llu,%llu,%zu,%zu,%.0f\n", o.peers,
                rttcc::sched_policy_name(policy), o.block, (unsigned long long) o.seed,
                (unsigned long long) pick.picks, pick.ns_per_pick,
                pick.picks ? static_cast<double>(pick.heap_ops) / static_cast<double>(pick.picks) : 0.0,
                (unsigned long long) pick.deferrals, (unsigned long long) pick.forced, mem.peers, mem.idle_peer_bytes,
                mem.heap_per_peer);
    if (pick.picks != o.peers - 1) {
        std::fprintf(stderr, "rttcc_sim: the round started %llu peers of %zu\n", (unsigned long long) pick.picks,
                     o.peers - 1);
        return 1;
    }
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    try {
        const Options o = parse(argc, argv);
        if (o.scenario == "scale") return scale(o);
        if (o.scenario == "shaped") return shaped(o);
        return o.scenario == "alltoall" ? alltoall(o) : incast(o);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "rttcc_sim: %s\n", e.what());
        return 1;
    }
}
