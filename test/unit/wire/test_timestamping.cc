// Socket timestamping: cmsg parsing on hand-built control data, the key ring,
// real loopback sockets with kernel stamps, and the UDP wire's stamps.
#include <arpa/inet.h>
#include <linux/errqueue.h>
#include <linux/net_tstamp.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <vector>

#include "cmocka_cxx.h"
#include "wire/timestamping.h"
#include "wire/udp_pair.h"
#include "wire/udp_wire.h"

using namespace rttcc;
using namespace rttcc_test;

namespace {

constexpr int64_t kSec = 1000000000;

int64_t realtime_ns() {
    timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<int64_t>(ts.tv_sec) * kSec + ts.tv_nsec;
}

// A control buffer assembled cmsg by cmsg, as the kernel would fill it.
struct Control {
    alignas(cmsghdr) uint8_t buf[512] = {};
    size_t used = 0;

    void add(int level, int type, const void *data, size_t len) {
        cmsghdr h{};
        h.cmsg_level = level;
        h.cmsg_type = type;
        h.cmsg_len = CMSG_LEN(len);
        std::memcpy(buf + used, &h, sizeof h);
        std::memcpy(buf + used + CMSG_LEN(0), data, len);
        used += CMSG_SPACE(len);
    }
    void add_stamps(int64_t sw, int64_t hw) {
        timespec ts[3] = {};
        ts[0] = {static_cast<time_t>(sw / kSec), static_cast<long>(sw % kSec)};
        ts[2] = {static_cast<time_t>(hw / kSec), static_cast<long>(hw % kSec)};
        add(SOL_SOCKET, SO_TIMESTAMPING, ts, sizeof ts);
    }
    void add_err(uint32_t key, uint8_t origin = SO_EE_ORIGIN_TIMESTAMPING, uint32_t info = SCM_TSTAMP_SND) {
        sock_extended_err ee{};
        ee.ee_errno = ENOMSG;
        ee.ee_origin = origin;
        ee.ee_info = info;
        ee.ee_data = key;
        uint8_t with_offender[sizeof ee + sizeof(sockaddr_in)] = {};
        std::memcpy(with_offender, &ee, sizeof ee);
        add(SOL_IP, IP_RECVERR, with_offender, sizeof with_offender);
    }
    msghdr msg() {
        msghdr m{};
        m.msg_control = buf;
        m.msg_controllen = used;
        return m;
    }
};

// ---------------------------------------------------------------- parsing

void test_parse_rx_software_and_hardware(void **) {
    Control c;
    c.add_stamps(5 * kSec + 6, 7 * kSec + 8);
    RawStamp s{};
    msghdr m = c.msg();
    assert_true(parse_rx_stamp(m, &s));
    assert_int_equal(s.software, 5 * kSec + 6);
    assert_int_equal(s.hardware, 7 * kSec + 8);

    Control sw_only;
    sw_only.add_stamps(9 * kSec, 0);
    m = sw_only.msg();
    assert_true(parse_rx_stamp(m, &s));
    assert_int_equal(s.software, 9 * kSec);
    assert_int_equal(s.hardware, 0);
}

void test_parse_rx_64bit_layout_and_neighbours(void **) {
#ifdef SO_TIMESTAMPING_NEW
    Control c;
    int gro = 1400;
    c.add(SOL_UDP, UDP_GRO, &gro, sizeof gro);  // an unrelated cmsg first
    const int64_t raw[6] = {11, 12, 0, 0, 13, 14};
    c.add(SOL_SOCKET, SO_TIMESTAMPING_NEW, raw, sizeof raw);
    RawStamp s{};
    msghdr m = c.msg();
    assert_true(parse_rx_stamp(m, &s));
    assert_int_equal(s.software, 11 * kSec + 12);
    assert_int_equal(s.hardware, 13 * kSec + 14);
#else
    skip();
#endif
}

void test_parse_tx_report(void **) {
    Control c;
    c.add_err(42);
    c.add_stamps(3 * kSec + 1, 0);
    TxReport r{};
    msghdr m = c.msg();
    assert_true(parse_tx_report(m, &r));
    assert_int_equal(r.key, 42);
    assert_int_equal(r.stamp.software, 3 * kSec + 1);

    Control stamp_first;  // order does not matter
    stamp_first.add_stamps(0, 4 * kSec);
    stamp_first.add_err(7);
    m = stamp_first.msg();
    assert_true(parse_tx_report(m, &r));
    assert_int_equal(r.key, 7);
    assert_int_equal(r.stamp.hardware, 4 * kSec);

    Control sched;  // software mode asks for the stamp at the queue discipline
    sched.add_err(9, SO_EE_ORIGIN_TIMESTAMPING, SCM_TSTAMP_SCHED);
    sched.add_stamps(5 * kSec, 0);
    m = sched.msg();
    assert_true(parse_tx_report(m, &r));
    assert_int_equal(r.key, 9);
    assert_int_equal(r.stamp.software, 5 * kSec);
}

void test_parse_tx_report_refuses_other_errors(void **) {
    TxReport r{};
    Control icmp;
    icmp.add_err(1, SO_EE_ORIGIN_ICMP);
    icmp.add_stamps(kSec, 0);
    msghdr m = icmp.msg();
    assert_false(parse_tx_report(m, &r));

    Control acked;  // a stamp type never asked for (TCP's)
    acked.add_err(1, SO_EE_ORIGIN_TIMESTAMPING, SCM_TSTAMP_ACK);
    acked.add_stamps(kSec, 0);
    m = acked.msg();
    assert_false(parse_tx_report(m, &r));

    Control no_stamp;
    no_stamp.add_err(1);
    m = no_stamp.msg();
    assert_false(parse_tx_report(m, &r));

    Control no_key;
    no_key.add_stamps(kSec, 0);
    m = no_key.msg();
    assert_false(parse_tx_report(m, &r));
}

void test_parse_ignores_garbage(void **) {
    RawStamp s{};
    msghdr none{};
    assert_false(parse_rx_stamp(none, &s));  // no control at all

    Control zero;  // a stamp cmsg with nothing in it
    zero.add_stamps(0, 0);
    msghdr m = zero.msg();
    assert_false(parse_rx_stamp(m, &s));

    Control shorty;  // SCM_TIMESTAMPING too short for three timespecs
    const int64_t half[2] = {1, 2};
    shorty.add(SOL_SOCKET, SO_TIMESTAMPING, half, sizeof half);
    m = shorty.msg();
    assert_false(parse_rx_stamp(m, &s));

    // A stamp cmsg whose cmsg_len lies: past the buffer, or below a header.
    for (size_t len : {size_t{4096}, size_t{3}}) {
        Control lying;
        lying.add_stamps(kSec, 0);
        cmsghdr h;
        std::memcpy(&h, lying.buf, sizeof h);
        h.cmsg_len = len;
        std::memcpy(lying.buf, &h, sizeof h);
        m = lying.msg();
        assert_false(parse_rx_stamp(m, &s));
    }

    Control cut;  // controllen shorter than a header
    cut.add_stamps(kSec, 0);
    m = cut.msg();
    m.msg_controllen = sizeof(cmsghdr) - 1;
    assert_false(parse_rx_stamp(m, &s));

    Control bad_nsec;  // tv_nsec out of range: not a time
    timespec ts[3] = {};
    ts[0] = {5, 1500000000L};
    bad_nsec.add(SOL_SOCKET, SO_TIMESTAMPING, ts, sizeof ts);
    m = bad_nsec.msg();
    assert_false(parse_rx_stamp(m, &s));
}

// ---------------------------------------------------------------- key ring

void test_ring_matches_exact_keys(void **) {
    StampKeyRing ring(8, 32);
    const uint64_t a[] = {100}, b[] = {200, 201};
    const uint32_t ka = ring.reserve(), kb = ring.reserve();
    ring.commit(ka, a, 1, 1000);
    ring.commit(kb, b, 2, 1000);
    assert_int_equal(ring.outstanding(), 2);
    std::vector<uint64_t> got;
    auto sink = [&got](uint64_t c) { got.push_back(c); };
    assert_false(ring.take(kb + 1, 2000, sink));  // never sent
    assert_true(ring.take(kb, 2000, sink));
    assert_false(ring.take(kb, 2000, sink));  // a second report for the same send
    assert_true(ring.take(ka, 2000, sink));
    assert_int_equal(got.size(), 3);
    assert_int_equal(got[0], 200);
    assert_int_equal(got[1], 201);
    assert_int_equal(got[2], 100);
    assert_int_equal(ring.outstanding(), 0);
}

void test_ring_drops_rather_than_misattributes(void **) {
    StampKeyRing ring(4, 8);
    std::vector<uint64_t> got;
    auto sink = [&got](uint64_t c) { got.push_back(c); };
    const uint64_t one[] = {1};
    // A stamp earlier than its send belongs to something else.
    const uint32_t k = ring.reserve();
    ring.commit(k, one, 1, msec(10));
    assert_false(ring.take(k, msec(10) - StampKeyRing::kSlack - 1, sink));
    assert_int_equal(ring.outstanding(), 0);
    // A slot reused after the ring wrapped: the old key no longer matches.
    const uint32_t old_key = ring.reserve();
    ring.commit(old_key, one, 1, 0);
    for (int i = 0; i < 4; ++i) ring.commit(ring.reserve(), one, 1, 0);
    assert_false(ring.take(old_key, 1, sink));
    // Cookies overwritten by later sends: the send is dropped.
    StampKeyRing small(8, 4);
    const uint64_t four[] = {1, 2, 3, 4};
    const uint32_t first = small.reserve();
    small.commit(first, four, 4, 0);
    small.commit(small.reserve(), four, 1, 0);
    assert_false(small.take(first, 1, sink));
    assert_true(got.empty());
}

void test_ring_expires_and_resets(void **) {
    StampKeyRing ring(8, 32);
    const uint64_t c[] = {9};
    const uint32_t k0 = ring.reserve();
    ring.commit(k0, c, 1, 100);
    const uint32_t k1 = ring.reserve();
    ring.commit(k1, c, 1, 500);
    ring.reserve();  // reserved, never sent
    ring.expire(300);
    assert_int_equal(ring.outstanding(), 1);
    int calls = 0;
    assert_false(ring.take(k0, 1000, [&calls](uint64_t) { ++calls; }));
    assert_true(ring.take(k1, 1000, [&calls](uint64_t) { ++calls; }));
    assert_int_equal(calls, 1);
    ring.commit(ring.reserve(), c, 1, 600);
    ring.reset();
    assert_int_equal(ring.outstanding(), 0);
    assert_int_equal(ring.next_key(), 0);
}

// ---------------------------------------------------------------- real sockets

// A nonblocking UDP socket on 127.0.0.1 with an ephemeral port.
int loopback_socket(sockaddr_in *addr) {
    const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    *addr = sockaddr_in{};
    addr->sin_family = AF_INET;
    addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof *addr;
    assert_int_equal(bind(fd, reinterpret_cast<sockaddr *>(addr), sizeof *addr), 0);
    assert_int_equal(getsockname(fd, reinterpret_cast<sockaddr *>(addr), &len), 0);
    return fd;
}

// Sends `len` bytes; stamp: ask for a TX stamp (explicit key when key >= 0); gso: segment size.
bool send_one(int fd, const sockaddr_in &to, size_t len, bool stamp, int64_t key = -1, uint16_t gso = 0) {
    static uint8_t payload[70000];
    iovec iov{payload, len};
    alignas(cmsghdr) uint8_t control[128] = {};
    size_t used = 0;
    if (gso) {
        cmsghdr h{};
        h.cmsg_level = SOL_UDP;
        h.cmsg_type = UDP_SEGMENT;
        h.cmsg_len = CMSG_LEN(sizeof gso);
        std::memcpy(control, &h, sizeof h);
        std::memcpy(control + CMSG_LEN(0), &gso, sizeof gso);
        used = CMSG_SPACE(sizeof gso);
    }
    if (stamp) used += put_tx_request(control + used, StampMode::kSoftware, key >= 0, static_cast<uint32_t>(key));
    msghdr m{};
    m.msg_name = const_cast<sockaddr_in *>(&to);
    m.msg_namelen = sizeof to;
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = used ? control : nullptr;
    m.msg_controllen = used;
    return sendmsg(fd, &m, 0) == static_cast<ssize_t>(len);
}

// Every TX report queued on fd (loopback stamps are queued during sendmsg).
std::vector<TxReport> read_reports(int fd) {
    std::vector<TxReport> all;
    ErrQueueReader reader(4);
    int entries;
    do {
        const int n = reader.read(fd, &entries);
        all.insert(all.end(), reader.reports(), reader.reports() + n);
    } while (entries == 4);
    return all;
}

// One datagram of at most `cap` bytes with its control data (the stamps);
// returns recvmsg's result and leaves *out pointing into `buf` and `control`.
template <size_t Cap, size_t ControlCap>
ssize_t recv_stamped(int fd, uint8_t (&buf)[Cap], uint8_t (&control)[ControlCap], iovec *iov, msghdr *out) {
    *iov = {buf, Cap};
    *out = msghdr{};
    out->msg_iov = iov;
    out->msg_iovlen = 1;
    out->msg_control = control;
    out->msg_controllen = ControlCap;
    return recvmsg(fd, out, MSG_DONTWAIT);
}

void drain(int fd) {
    uint8_t buf[70000];
    while (recv(fd, buf, sizeof buf, MSG_DONTWAIT) >= 0) {
    }
}

// Port-unreachable errors for many closed ports: the reader keeps at most
// kMaxRefused of them, in the room it made when it was made (UdpWire's
// tx_burst reads the queue and must not allocate), each port once.
void test_reader_keeps_refused_ports_in_its_room(void **) {
    sockaddr_in a;
    const int fa = loopback_socket(&a);
    const int on = 1;
    assert_int_equal(setsockopt(fa, SOL_IP, IP_RECVERR, &on, sizeof on), 0);
    constexpr int kPorts = 3 * static_cast<int>(ErrQueueReader::kMaxRefused);
    for (int i = 0; i < kPorts; ++i) {
        sockaddr_in closed;
        const int fc = loopback_socket(&closed);
        close(fc);  // its port is closed now
        assert_true(send_one(fa, closed, 10, false) || errno == ECONNREFUSED);
        if (i % 2 == 0) (void)send_one(fa, closed, 10, false);  // the same port again
    }
    ErrQueueReader reader(4);
    const size_t room = reader.refused().capacity();
    assert_true(room >= ErrQueueReader::kMaxRefused);
    int entries, all = 0;
    do {
        reader.read(fa, &entries);
        all += entries;
    } while (entries == 4);
    assert_true(all > static_cast<int>(ErrQueueReader::kMaxRefused));  // more errors than it keeps
    const std::vector<sockaddr_in> &got = reader.refused();
    assert_int_equal(got.size(), ErrQueueReader::kMaxRefused);
    assert_int_equal(got.capacity(), room);
    for (size_t i = 0; i < got.size(); ++i)
        for (size_t j = i + 1; j < got.size(); ++j) assert_false(got[i].sin_port == got[j].sin_port);
    close(fa);
}

void test_socket_rx_stamps_are_realtime(void **) {
    sockaddr_in a, b;
    const int fa = loopback_socket(&a), fb = loopback_socket(&b);
    std::string err;
    assert_true(enable_socket_stamping(fb, StampMode::kSoftware, &err));
    const int64_t before = realtime_ns();
    assert_true(send_one(fa, b, 64, false));
    uint8_t buf[128];
    alignas(cmsghdr) uint8_t control[256];
    iovec iov;
    msghdr m;
    assert_int_equal(recv_stamped(fb, buf, control, &iov, &m), 64);
    const int64_t after = realtime_ns();
    RawStamp s{};
    assert_true(parse_rx_stamp(m, &s));
    assert_true(s.software >= before - 1000000 && s.software <= after);
    assert_int_equal(s.hardware, 0);
    close(fa);
    close(fb);
}

void test_socket_tx_stamps_only_when_asked(void **) {
    sockaddr_in a, b;
    const int fa = loopback_socket(&a), fb = loopback_socket(&b);
    std::string err;
    assert_true(enable_socket_stamping(fa, StampMode::kSoftware, &err));
    const int64_t before = realtime_ns();
    // Counted keys: only the stamped sends count.
    const bool pattern[] = {true, false, false, true, false, true};
    for (bool stamp : pattern) assert_true(send_one(fa, b, 100, stamp));
    std::vector<TxReport> r = read_reports(fa);
    assert_int_equal(r.size(), 3);
    for (uint32_t i = 0; i < 3; ++i) {
        assert_int_equal(r[i].key, i);
        assert_true(r[i].stamp.software >= before - 1000000 && r[i].stamp.software <= realtime_ns());
    }
    // A failed stamped send (too big) does not use a key on this kernel, and
    // one GSO send (4 segments) gives one stamp.
    assert_false(send_one(fa, b, 70000, true));  // EMSGSIZE
    assert_true(send_one(fa, b, 4000, true, -1, 1000));
    r = read_reports(fa);
    assert_int_equal(r.size(), 1);
    assert_int_equal(r[0].key, 3);
    // Explicit keys where the kernel takes them.
    if (kernel_takes_stamp_key()) {
        assert_true(send_one(fa, b, 100, true, 1000));
        assert_true(send_one(fa, b, 100, false));
        assert_true(send_one(fa, b, 100, true, 7));
        r = read_reports(fa);
        assert_int_equal(r.size(), 2);
        assert_int_equal(r[0].key, 1000);
        assert_int_equal(r[1].key, 7);
    }
    drain(fb);
    close(fa);
    close(fb);
}

void test_nic_stamping_on_loopback_is_refused(void **) {
    TsInfo info;
    std::string err;
    assert_true(query_ts_info("lo", &info, &err));
    assert_int_equal(info.phc_index, -1);
    assert_false(enable_nic_stamping("lo", &info, &err));
    assert_true(err.find("interface lo has no hardware timestamping") != std::string::npos);
    assert_true(err.find("ETHTOOL_GET_TS_INFO") != std::string::npos);
    assert_true(err.find("no PTP hardware clock") != std::string::npos);
    assert_false(query_ts_info("nosuchif0", &info, &err));
    assert_true(err.find("nosuchif0") != std::string::npos);
}

// ---------------------------------------------------------------- the UDP wire

// Collects transmit stamps until `want` arrived (or `wait` passed).
std::vector<TxStamp> stamps(UdpWire &w, size_t want, nanos wait = msec(1000)) {
    std::vector<TxStamp> got;
    TxStamp s[8];
    const nanos deadline = monotonic_now() + wait;
    while (got.size() < want && monotonic_now() < deadline) {
        const int n = w.tx_stamps(s, 8);
        got.insert(got.end(), s, s + n);
    }
    return got;
}

const TxStamp *find(const std::vector<TxStamp> &v, uint64_t cookie) {
    for (const auto &s : v)
        if (s.cookie == cookie) return &s;
    return nullptr;
}

// Sends three datagrams (cookies 11, none, 13) on ch and checks both sides.
void check_single_sends(Pair &p, Channel ch) {
    std::vector<uint8_t> b1(100, 1), b2(200, 2), b3(300, 3);  // three sizes: three sends
    TxDatagram d[3] = {datagram(p.to[ch], b1, 11), datagram(p.to[ch], b2, 0), datagram(p.to[ch], b3, 13)};
    const nanos before = monotonic_now();
    assert_int_equal(p.a->tx_burst(ch, d, 3), 3);
    const nanos after = monotonic_now();
    const Received rx = receive(*p.b, ch, 3);
    assert_int_equal(rx.size(), 3);
    for (const auto &r : rx) {
        assert_int_equal(r.rx_source, TsSource::kKernel);
        assert_true(r.rx_stamp + StampKeyRing::kSlack >= before && r.rx_stamp <= monotonic_now());
    }
    const std::vector<TxStamp> tx = stamps(*p.a, 2);
    assert_int_equal(tx.size(), 2);
    for (uint64_t cookie : {11, 13}) {
        const TxStamp *s = find(tx, cookie);
        assert_non_null(s);
        assert_int_equal(s->source, TsSource::kKernel);
        assert_true(s->when + StampKeyRing::kSlack >= before && s->when <= after + StampKeyRing::kSlack);
    }
    assert_int_equal(p.a->stamps_outstanding(), 0);
    TxStamp extra;
    assert_int_equal(p.a->tx_stamps(&extra, 1), 0);
}

// Four equal datagrams (cookies 21, -, 23, -): one GSO send, one stamp for both cookies.
void check_gso_group(Pair &p) {
    std::vector<uint8_t> bytes(1000, 7);
    TxDatagram d[4] = {datagram(p.to[kData], bytes, 21), datagram(p.to[kData], bytes, 0),
                       datagram(p.to[kData], bytes, 23), datagram(p.to[kData], bytes, 0)};
    assert_int_equal(p.a->tx_burst(kData, d, 4), 4);
    const Received rx = receive(*p.b, kData, 4);
    assert_int_equal(rx.size(), 4);
    for (const auto &r : rx) {
        assert_int_equal(r.len, 1000);
        assert_int_equal(r.rx_source, TsSource::kKernel);
        if (p.b->gro()) assert_int_equal(r.rx_stamp, rx[0].rx_stamp);  // one GRO buffer, one stamp
    }
    const std::vector<TxStamp> tx = stamps(*p.a, 2);
    assert_int_equal(tx.size(), 2);
    const TxStamp *s21 = find(tx, 21), *s23 = find(tx, 23);
    assert_non_null(s21);
    assert_non_null(s23);
    if (p.a->gso()) assert_int_equal(s21->when, s23->when);
    assert_int_equal(p.a->stamps_outstanding(), 0);
}

void test_wire_kernel_stamps(void **) {
    Pair p = open_pair(RTTCC_TS_KERNEL);
    assert_int_equal(p.a->stamp_source(), TsSource::kKernel);
    check_single_sends(p, kData);
    check_single_sends(p, kCmd);
    assert_true(p.a->gso());
    check_gso_group(p);
    assert_int_equal(p.a->stamp_restarts(), 0);
}

void test_wire_counted_keys(void **) {
    Pair p = open_pair(RTTCC_TS_KERNEL, UdpWire::StampKeys::kCounted);
    assert_int_equal(p.a->stamp_keys(), UdpWire::StampKeys::kCounted);
    check_single_sends(p, kData);
    check_gso_group(p);
    check_single_sends(p, kData);
}

void test_wire_explicit_keys_where_the_kernel_has_them(void **) {
    std::string err;
    const rttcc_config_t cfg = lo_config(RTTCC_TS_KERNEL);
    auto w = UdpWire::open(cfg, &err, UdpWire::StampKeys::kExplicit);
    if (kernel_takes_stamp_key()) {
        assert_non_null(w.get());
        assert_int_equal(w->stamp_keys(), UdpWire::StampKeys::kExplicit);
        Pair p = open_pair(RTTCC_TS_KERNEL, UdpWire::StampKeys::kExplicit);
        check_single_sends(p, kData);
        check_gso_group(p);
    } else {
        assert_null(w.get());
        assert_true(err.find("SCM_TS_OPT_ID") != std::string::npos);
    }
}

// A stamped send that fails: explicit keys go on; counted keys restart and
// take no stamps for a while, then resume with the right cookies.
void check_failed_stamped_send(UdpWire::StampKeys keys) {
    Pair p = open_pair(RTTCC_TS_KERNEL, keys);
    std::vector<uint8_t> small(100, 1), huge(70000, 2);  // too big for UDP: EMSGSIZE
    TxDatagram d[2] = {datagram(p.to[kData], small, 31), datagram(p.to[kData], huge, 32)};
    assert_int_equal(p.a->tx_burst(kData, d, 2), 2);
    assert_int_equal(p.a->tx_errors(), 1);
    std::vector<TxStamp> tx = stamps(*p.a, 1, msec(50));
    if (p.a->stamp_keys() == UdpWire::StampKeys::kExplicit) {
        assert_int_equal(p.a->stamp_restarts(), 0);
        assert_int_equal(tx.size(), 1);
        assert_int_equal(tx[0].cookie, 31);
        return;
    }
    assert_int_equal(p.a->stamp_restarts(), 1);
    assert_true(tx.empty());  // 31's key was forgotten with the rest
    TxDatagram quiet = datagram(p.to[kData], small, 33);
    assert_int_equal(p.a->tx_burst(kData, &quiet, 1), 1);
    assert_int_equal(p.a->stamps_outstanding(), 0);  // no stamps while quiet
    usleep(1100 * 1000);
    TxDatagram again = datagram(p.to[kData], small, 34);
    assert_int_equal(p.a->tx_burst(kData, &again, 1), 1);
    tx = stamps(*p.a, 1);
    assert_int_equal(tx.size(), 1);  // 31's old-key stamp was thrown away, not given to 34
    assert_int_equal(tx[0].cookie, 34);
}

void test_wire_failed_stamped_send_explicit(void **) {
    if (!kernel_takes_stamp_key()) skip();
    check_failed_stamped_send(UdpWire::StampKeys::kExplicit);
}

void test_wire_failed_stamped_send_counted(void **) { check_failed_stamped_send(UdpWire::StampKeys::kCounted); }

void test_wire_nic_on_loopback_fails(void **) {
    std::string err;
    const rttcc_config_t cfg = lo_config(RTTCC_TS_NIC);
    assert_null(UdpWire::open(cfg, &err).get());
    assert_true(err.find("rttcc_timestamp=nic") != std::string::npos);
    assert_true(err.find("interface lo has no hardware timestamping") != std::string::npos);
}

void test_wire_auto_on_loopback_is_kernel(void **) {
    std::string err;
    const rttcc_config_t cfg = lo_config(RTTCC_TS_AUTO);
    auto w = UdpWire::open(cfg, &err);
    assert_non_null(w.get());
    assert_int_equal(w->stamp_source(), TsSource::kKernel);
    assert_true(w->stamp_note().find("no nic stamps") != std::string::npos);
    assert_true(w->stamp_note().find("kernel stamps on lo") != std::string::npos);
}

void test_wire_user_takes_no_stamps(void **) {
    Pair p = open_pair(RTTCC_TS_USER);
    assert_int_equal(p.a->stamp_source(), TsSource::kNone);
    std::vector<uint8_t> bytes(100, 1);
    TxDatagram d = datagram(p.to[kData], bytes, 41);
    assert_int_equal(p.a->tx_burst(kData, &d, 1), 1);
    const Received rx = receive(*p.b, kData, 1);
    assert_int_equal(rx.size(), 1);
    assert_int_equal(rx[0].rx_stamp, 0);
    assert_int_equal(rx[0].rx_source, TsSource::kNone);
    assert_int_equal(p.a->stamps_outstanding(), 0);
    TxStamp s;
    assert_int_equal(p.a->tx_stamps(&s, 1), 0);
}

// The kernel turns receive stamping on for the whole system a moment after
// the first socket asks (a deferred static key), so the first datagrams may
// come unstamped.  Keep one stamping socket open for the run, and wait until
// its own datagrams come stamped.
int g_keeper = -1;

int keep_rx_stamping_on(void **) {
    sockaddr_in self;
    g_keeper = loopback_socket(&self);
    std::string err;
    if (!enable_socket_stamping(g_keeper, StampMode::kSoftware, &err)) return -1;
    for (int i = 0; i < 1000; ++i) {
        if (!send_one(g_keeper, self, 8, false)) return -1;
        uint8_t buf[16];
        alignas(cmsghdr) uint8_t control[256];
        iovec iov;
        msghdr m;
        RawStamp s;
        if (recv_stamped(g_keeper, buf, control, &iov, &m) == 8 && parse_rx_stamp(m, &s)) return 0;
        usleep(1000);
    }
    return -1;  // the kernel never stamped a received datagram
}

int close_keeper(void **) {
    close(g_keeper);
    return 0;
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_rx_software_and_hardware),
        cmocka_unit_test(test_parse_rx_64bit_layout_and_neighbours),
        cmocka_unit_test(test_parse_tx_report),
        cmocka_unit_test(test_parse_tx_report_refuses_other_errors),
        cmocka_unit_test(test_parse_ignores_garbage),
        cmocka_unit_test(test_ring_matches_exact_keys),
        cmocka_unit_test(test_ring_drops_rather_than_misattributes),
        cmocka_unit_test(test_ring_expires_and_resets),
        cmocka_unit_test(test_reader_keeps_refused_ports_in_its_room),
        cmocka_unit_test(test_socket_rx_stamps_are_realtime),
        cmocka_unit_test(test_socket_tx_stamps_only_when_asked),
        cmocka_unit_test(test_nic_stamping_on_loopback_is_refused),
        cmocka_unit_test(test_wire_kernel_stamps),
        cmocka_unit_test(test_wire_counted_keys),
        cmocka_unit_test(test_wire_explicit_keys_where_the_kernel_has_them),
        cmocka_unit_test(test_wire_failed_stamped_send_explicit),
        cmocka_unit_test(test_wire_failed_stamped_send_counted),
        cmocka_unit_test(test_wire_nic_on_loopback_fails),
        cmocka_unit_test(test_wire_auto_on_loopback_is_kernel),
        cmocka_unit_test(test_wire_user_takes_no_stamps),
    };
    return cmocka_run_group_tests(tests, keep_rx_stamping_on, close_keeper);
}
