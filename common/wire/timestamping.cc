#include "wire/timestamping.h"

#include <arpa/inet.h>
#include <linux/errqueue.h>
#include <linux/ethtool.h>
#include <linux/net_tstamp.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/ip_icmp.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

// The per-send key cmsg (Linux 6.13+); the probe checks the kernel takes it.
#ifndef SCM_TS_OPT_ID
#if defined(__hppa__)
#define SCM_TS_OPT_ID 0x404C
#else
#define SCM_TS_OPT_ID 81
#endif
#endif
#ifndef SO_TIMESTAMPING_OLD
#define SO_TIMESTAMPING_OLD SO_TIMESTAMPING
#endif

namespace rttcc {

namespace {

constexpr int64_t kNsPerSec = 1000000000;
constexpr size_t kErrCmsgSpace = 256;  // IP_RECVERR (+ offender) and SCM_TIMESTAMPING, with room

// Closes a descriptor when it goes out of scope.
struct Fd {
    int fd;  // the descriptor, -1 = none
    explicit Fd(int f) : fd(f) {}
    ~Fd() {
        if (fd >= 0) close(fd);
    }
    Fd(const Fd &) = delete;
    Fd &operator=(const Fd &) = delete;
};

// "what: <strerror(e)>"; callers pass errno saved right after the failing call.
std::string errno_text(const char *what, int e) { return std::string(what) + ": " + std::strerror(e); }

// Calls fn(level, type, data, len) for each well-formed cmsg; stops at the
// first malformed header (too short, or running past the buffer).
template <typename F>
void for_each_cmsg(const msghdr &m, F &&fn) {
    if (!m.msg_control) return;
    const uint8_t *p = static_cast<const uint8_t *>(m.msg_control);
    const uint8_t *const end = p + m.msg_controllen;
    while (static_cast<size_t>(end - p) >= sizeof(cmsghdr)) {
        cmsghdr h;
        std::memcpy(&h, p, sizeof h);
        if (h.cmsg_len < CMSG_LEN(0) || h.cmsg_len > static_cast<size_t>(end - p)) return;
        fn(h.cmsg_level, h.cmsg_type, p + CMSG_LEN(0), h.cmsg_len - CMSG_LEN(0));
        const size_t step = CMSG_ALIGN(h.cmsg_len);
        if (step >= static_cast<size_t>(end - p)) return;
        p += step;
    }
}

// Nanoseconds of a (sec, nsec) pair; 0 when absent or malformed.
int64_t to_ns(int64_t sec, int64_t nsec) {
    if (sec < 0 || nsec < 0 || nsec >= kNsPerSec || sec > INT64_MAX / kNsPerSec - 1) return 0;
    return sec * kNsPerSec + nsec;
}

// Decodes SCM_TIMESTAMPING (native timespecs or 64-bit ones); false when short.
bool decode_stamps(int type, const uint8_t *data, size_t len, RawStamp *out) {
    int64_t ns[3];
    if (type == SO_TIMESTAMPING_OLD) {
        timespec ts[3];
        if (len < sizeof ts) return false;
        std::memcpy(ts, data, sizeof ts);
        for (int i = 0; i < 3; ++i) ns[i] = to_ns(ts[i].tv_sec, ts[i].tv_nsec);
    } else {
        int64_t raw[6];  // struct scm_timestamping64: three {int64 sec, int64 nsec}
        if (len < sizeof raw) return false;
        std::memcpy(raw, data, sizeof raw);
        for (int i = 0; i < 3; ++i) ns[i] = to_ns(raw[2 * i], raw[2 * i + 1]);
    }
    out->software = ns[0];
    out->hardware = ns[2];  // ts[1] is deprecated (always zero)
    return true;
}

// SCM_TIMESTAMPING in either layout (the 64-bit one on 32-bit time64 builds).
bool is_stamp_cmsg(int level, int type) {
#ifdef SO_TIMESTAMPING_NEW
    if (level == SOL_SOCKET && type == SO_TIMESTAMPING_NEW) return true;
#endif
    return level == SOL_SOCKET && type == SO_TIMESTAMPING_OLD;
}

// Writes one cmsg (padding zeroed) at `at`; returns CMSG_SPACE(len).
size_t put_cmsg(uint8_t *at, int level, int type, const void *data, size_t len) {
    cmsghdr h{};
    h.cmsg_level = level;
    h.cmsg_type = type;
    h.cmsg_len = CMSG_LEN(len);
    std::memset(at, 0, CMSG_SPACE(len));
    std::memcpy(at, &h, sizeof h);
    std::memcpy(at + CMSG_LEN(0), data, len);
    return CMSG_SPACE(len);
}

// RX stamps of every datagram, reports of software (and raw hardware) stamps,
// small error-queue entries; TX stamps only on request (put_tx_request).
uint32_t socket_flags(StampMode mode, bool with_key) {
    uint32_t f = SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE | SOF_TIMESTAMPING_OPT_TSONLY;
    if (mode == StampMode::kHardware) f |= SOF_TIMESTAMPING_RX_HARDWARE | SOF_TIMESTAMPING_RAW_HARDWARE;
    if (with_key) f |= SOF_TIMESTAMPING_OPT_ID;
    return f;
}

// setsockopt(SO_TIMESTAMPING); false with errno.  Allocates nothing.
bool set_flags(int fd, uint32_t flags) noexcept {
    const int v = static_cast<int>(flags);
    return setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING, &v, sizeof v) == 0;
}

// The same; false with *err.
bool set_flags(int fd, uint32_t flags, std::string *err) {
    if (set_flags(fd, flags)) return true;
    *err = errno_text("setsockopt(SO_TIMESTAMPING)", errno);
    return false;
}

// "tx-software rx-software ..." for SOF_TIMESTAMPING capability bits.
std::string capability_names(uint32_t bits) {
    static const struct {
        uint32_t bit;     // SOF_TIMESTAMPING_*
        const char *name; // as ethtool -T prints it
    } kNames[] = {{SOF_TIMESTAMPING_TX_HARDWARE, "tx-hardware"},
                  {SOF_TIMESTAMPING_TX_SOFTWARE, "tx-software"},
                  {SOF_TIMESTAMPING_RX_HARDWARE, "rx-hardware"},
                  {SOF_TIMESTAMPING_RX_SOFTWARE, "rx-software"},
                  {SOF_TIMESTAMPING_SOFTWARE, "software"},
                  {SOF_TIMESTAMPING_RAW_HARDWARE, "raw-hardware"}};
    std::string s;
    for (const auto &n : kNames)
        if (bits & n.bit) s += (s.empty() ? "" : " ") + std::string(n.name);
    return s.empty() ? "none" : s;
}

// What stops `info` from stamping every datagram in hardware; empty = nothing.
std::string hardware_gaps(const TsInfo &info) {
    std::string gaps;
    auto add = [&gaps](const char *g) { gaps += (gaps.empty() ? "" : "; ") + std::string(g); };
    const uint32_t need = SOF_TIMESTAMPING_TX_HARDWARE | SOF_TIMESTAMPING_RX_HARDWARE | SOF_TIMESTAMPING_RAW_HARDWARE;
    if ((info.so_timestamping & need) != need) add("no hardware stamps");
    if (info.phc_index < 0) add("no PTP hardware clock");
    if (!(info.tx_types & (1u << HWTSTAMP_TX_ON))) add("no hardware TX stamping mode");
    if (!(info.rx_filters & (1u << HWTSTAMP_FILTER_ALL))) add("no hardware RX filter for all packets");
    if (gaps.empty()) return gaps;
    return gaps + "; capabilities: " + capability_names(info.so_timestamping);
}

// An ifreq naming `ifname`; false with *err when the name does not fit.
bool fill_ifreq(const std::string &ifname, ifreq *ifr, std::string *err) {
    *ifr = ifreq{};
    if (ifname.empty() || ifname.size() >= IFNAMSIZ) {
        *err = "bad interface name '" + ifname + "'";
        return false;
    }
    std::memcpy(ifr->ifr_name, ifname.c_str(), ifname.size());
    return true;
}

// Turns on hardware TX stamps and RX stamps of every packet on `ifname`.
bool set_hw_config(const std::string &ifname, std::string *err) {
    Fd fd(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    ifreq ifr;
    if (fd.fd < 0) {
        *err = errno_text("socket()", errno);
        return false;
    }
    if (!fill_ifreq(ifname, &ifr, err)) return false;
    hwtstamp_config cfg{};
    ifr.ifr_data = reinterpret_cast<char *>(&cfg);
    if (ioctl(fd.fd, SIOCGHWTSTAMP, &ifr) == 0 && cfg.tx_type == HWTSTAMP_TX_ON &&
        cfg.rx_filter == HWTSTAMP_FILTER_ALL)
        return true;  // already on (e.g. by ptp4l or an earlier process)
    cfg = hwtstamp_config{};
    cfg.tx_type = HWTSTAMP_TX_ON;
    cfg.rx_filter = HWTSTAMP_FILTER_ALL;
    if (ioctl(fd.fd, SIOCSHWTSTAMP, &ifr) != 0) {
        const int e = errno;
        *err = "cannot turn on hardware timestamping of " + ifname + " (" + errno_text("SIOCSHWTSTAMP", e) +
               (e == EPERM ? "; needs CAP_NET_ADMIN, or turn it on once as root: hwstamp_ctl -i " + ifname +
                                 " -t 1 -r 1"
                           : "") +
               ")";
        return false;
    }
    if (cfg.tx_type != HWTSTAMP_TX_ON || cfg.rx_filter != HWTSTAMP_FILTER_ALL) {
        *err = "interface " + ifname + " refused hardware stamps of every packet (SIOCSHWTSTAMP gave tx_type " +
               std::to_string(cfg.tx_type) + ", rx_filter " + std::to_string(cfg.rx_filter) + ")";
        return false;
    }
    return true;
}

}  // namespace

size_t rx_stamp_cmsg_space() { return CMSG_SPACE(sizeof(scm_timestamping64)); }

size_t tx_request_cmsg_space() { return 2 * CMSG_SPACE(sizeof(uint32_t)); }

bool query_ts_info(const std::string &ifname, TsInfo *out, std::string *err) {
    Fd fd(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    ifreq ifr;
    if (fd.fd < 0) {
        *err = errno_text("socket()", errno);
        return false;
    }
    if (!fill_ifreq(ifname, &ifr, err)) return false;
    ethtool_ts_info info{};
    info.cmd = ETHTOOL_GET_TS_INFO;
    ifr.ifr_data = reinterpret_cast<char *>(&info);
    if (ioctl(fd.fd, SIOCETHTOOL, &ifr) != 0) {
        const int e = errno;
        *err = "interface " + ifname + " gives no timestamping information (" +
               errno_text("ETHTOOL_GET_TS_INFO", e) + ")";
        return false;
    }
    out->so_timestamping = info.so_timestamping;
    out->phc_index = info.phc_index;
    out->tx_types = info.tx_types;
    out->rx_filters = info.rx_filters;
    return true;
}

bool enable_nic_stamping(const std::string &ifname, TsInfo *out, std::string *err) {
    if (!query_ts_info(ifname, out, err)) return false;
    const std::string gaps = hardware_gaps(*out);
    if (!gaps.empty()) {
        *err = "interface " + ifname + " has no hardware timestamping (ETHTOOL_GET_TS_INFO: " + gaps + ")";
        return false;
    }
    return set_hw_config(ifname, err);
}

bool enable_socket_stamping(int fd, StampMode mode, std::string *err) {
    return set_flags(fd, socket_flags(mode, true), err);
}

bool restart_stamp_keys(int fd, StampMode mode) noexcept {
    return set_flags(fd, socket_flags(mode, false)) && set_flags(fd, socket_flags(mode, true));
}

// Software mode stamps a datagram as it enters the device's queue discipline
// (SCHED), not as the driver takes it (SND): the time it then waits in the
// host's own queue is part of its path, and a sender that cannot see that
// queue fills it and delays its own ACKs.  The NIC stamps the wire time.
size_t put_tx_request(uint8_t *at, StampMode mode, bool explicit_key, uint32_t key) {
    const uint32_t flags = mode == StampMode::kHardware ? SOF_TIMESTAMPING_TX_SOFTWARE | SOF_TIMESTAMPING_TX_HARDWARE
                                                        : SOF_TIMESTAMPING_TX_SCHED;
    size_t used = put_cmsg(at, SOL_SOCKET, SO_TIMESTAMPING_OLD, &flags, sizeof flags);
    if (explicit_key) used += put_cmsg(at + used, SOL_SOCKET, SCM_TS_OPT_ID, &key, sizeof key);
    return used;
}

bool parse_rx_stamp(const msghdr &m, RawStamp *out) {
    bool found = false;
    for_each_cmsg(m, [&](int level, int type, const uint8_t *data, size_t len) {
        if (is_stamp_cmsg(level, type) && decode_stamps(type, data, len, out))
            found = out->software != 0 || out->hardware != 0;
    });
    return found;
}

bool parse_tx_report(const msghdr &m, TxReport *out) {
    bool have_key = false, have_stamp = false;
    for_each_cmsg(m, [&](int level, int type, const uint8_t *data, size_t len) {
        if (is_stamp_cmsg(level, type)) {
            have_stamp = decode_stamps(type, data, len, &out->stamp) &&
                         (out->stamp.software != 0 || out->stamp.hardware != 0);
        } else if ((level == SOL_IP && type == IP_RECVERR) || (level == SOL_IPV6 && type == IPV6_RECVERR)) {
            sock_extended_err ee;
            if (len < sizeof ee) return;
            std::memcpy(&ee, data, sizeof ee);
            have_key = ee.ee_origin == SO_EE_ORIGIN_TIMESTAMPING && ee.ee_errno == ENOMSG &&
                       (ee.ee_info == SCM_TSTAMP_SND || ee.ee_info == SCM_TSTAMP_SCHED);
            out->key = ee.ee_data;
        }
    });
    return have_key && have_stamp;
}

bool is_port_unreachable(const msghdr &m) {
    bool refused = false;
    for_each_cmsg(m, [&](int level, int type, const uint8_t *data, size_t len) {
        if (level != SOL_IP || type != IP_RECVERR || len < sizeof(sock_extended_err)) return;
        sock_extended_err ee;
        std::memcpy(&ee, data, sizeof ee);
        refused = ee.ee_origin == SO_EE_ORIGIN_ICMP && ee.ee_type == ICMP_DEST_UNREACH &&
                  ee.ee_code == ICMP_PORT_UNREACH;
    });
    return refused && m.msg_namelen >= sizeof(sockaddr_in);
}

ErrQueueReader::ErrQueueReader(unsigned batch)
    : msgs_(batch ? batch : 1), control_(msgs_.size() * kErrCmsgSpace), names_(msgs_.size()),
      reports_(msgs_.size()), space_(kErrCmsgSpace), filled_(msgs_.size()) {
    refused_.reserve(kMaxRefused);
    for (size_t i = 0; i < msgs_.size(); ++i) {
        msgs_[i].msg_hdr.msg_control = &control_[i * space_];
        msgs_[i].msg_hdr.msg_name = &names_[i];
    }
}

int ErrQueueReader::read(int fd, int *entries) {
    // recvmmsg rewrites the lengths of the entries it filled only.
    for (size_t i = 0; i < filled_; ++i) {
        msgs_[i].msg_hdr.msg_controllen = space_;
        msgs_[i].msg_hdr.msg_namelen = sizeof names_[i];
    }
    int got;
    do {
        got = recvmmsg(fd, msgs_.data(), static_cast<unsigned>(msgs_.size()), MSG_ERRQUEUE | MSG_DONTWAIT, nullptr);
    } while (got < 0 && errno == EINTR);
    *entries = got > 0 ? got : 0;
    filled_ = static_cast<size_t>(*entries);
    int found = 0;
    for (int i = 0; i < *entries; ++i) {
        if (parse_tx_report(msgs_[i].msg_hdr, &reports_[found]))
            ++found;
        else if (is_port_unreachable(msgs_[i].msg_hdr))
            note_refused(names_[i]);
    }
    return found;
}

// Into the room made at construction: each destination once, at most
// kMaxRefused (more are dropped until the caller takes these; a closed
// port keeps refusing, and is reported by a later read).
void ErrQueueReader::note_refused(const sockaddr_in &to) noexcept {
    if (refused_.size() >= kMaxRefused) return;
    for (const sockaddr_in &r : refused_)
        if (r.sin_addr.s_addr == to.sin_addr.s_addr && r.sin_port == to.sin_port) return;
    refused_.push_back(to);
}

bool kernel_takes_stamp_key() {
    static const bool takes = [] {
        constexpr uint32_t kProbeKey = 0x5eed1234;
        Fd fd(socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
        sockaddr_in sa{};
        sa.sin_family = AF_INET;
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t sl = sizeof sa;
        std::string err;
        if (fd.fd < 0 || bind(fd.fd, reinterpret_cast<sockaddr *>(&sa), sizeof sa) != 0 ||
            getsockname(fd.fd, reinterpret_cast<sockaddr *>(&sa), &sl) != 0 ||
            !enable_socket_stamping(fd.fd, StampMode::kSoftware, &err))
            return false;
        alignas(cmsghdr) uint8_t control[64];
        char byte = 0;
        iovec iov{&byte, 1};
        msghdr m{};
        m.msg_name = &sa;
        m.msg_namelen = sizeof sa;
        m.msg_iov = &iov;
        m.msg_iovlen = 1;
        m.msg_control = control;
        m.msg_controllen = put_tx_request(control, StampMode::kSoftware, true, kProbeKey);
        if (sendmsg(fd.fd, &m, 0) != 1) return false;  // EINVAL: the kernel does not know the cmsg
        pollfd p{fd.fd, 0, 0};  // POLLERR: the error queue has an entry
        if (poll(&p, 1, 200) != 1) return false;
        ErrQueueReader reader(4);
        int entries;
        return reader.read(fd.fd, &entries) == 1 && reader.reports()[0].key == kProbeKey;
    }();
    return takes;
}

// ---------------------------------------------------------------- StampKeyRing

StampKeyRing::StampKeyRing(unsigned slots, unsigned cookies) : slots_(slots), cookies_(cookies) {
    reset();
}

void StampKeyRing::retire(Slot &s) {
    if (!s.live) return;
    s.live = false;
    --live_;
}

uint32_t StampKeyRing::reserve() {
    retire(slot(next_key_));  // its stamp is long overdue
    return next_key_++;
}

void StampKeyRing::commit(uint32_t key, const uint64_t *cookies, int n, nanos sent_at) {
    if (next_key_ - key - 1 >= slots_.size() || n <= 0) return;  // not reserved lately
    Slot &s = slot(key);
    retire(s);
    const uint32_t most = std::min<uint32_t>(static_cast<uint32_t>(cookies_.size()), UINT16_MAX);
    const uint32_t count = std::min<uint32_t>(static_cast<uint32_t>(n), most);
    s = Slot{key, cookie_head_, static_cast<uint16_t>(count), true, sent_at};
    for (uint32_t i = 0; i < count; ++i) cookies_[(cookie_head_ + i) & (cookies_.size() - 1)] = cookies[i];
    cookie_head_ += count;
    ++live_;
}

void StampKeyRing::expire(nanos before) {
    if (next_key_ - oldest_ > slots_.size()) oldest_ = next_key_ - static_cast<uint32_t>(slots_.size());
    for (; oldest_ != next_key_; ++oldest_) {
        Slot &s = slot(oldest_);
        if (s.live && s.key == oldest_) {
            if (s.sent_at >= before) break;
            retire(s);
        }
    }
}

void StampKeyRing::reset() {
    for (Slot &s : slots_) s = Slot{0, 0, 0, false, 0};
    next_key_ = oldest_ = 0;
    live_ = 0;
}

}  // namespace rttcc
