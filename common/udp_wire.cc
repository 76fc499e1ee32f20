#include "udp_wire.h"

#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "wire_format.h"

namespace rttcc {

namespace {
constexpr size_t kLocalPathDatagram = 65000;  // same host: the kernel's loopback path
constexpr size_t kIpUdpOverhead = 28;

void set_buffer(int fd, int force_opt, int opt, int bytes) {
    if (setsockopt(fd, SOL_SOCKET, force_opt, &bytes, sizeof bytes) != 0)
        setsockopt(fd, SOL_SOCKET, opt, &bytes, sizeof bytes);
}
}  // namespace

std::unique_ptr<UdpWire> UdpWire::open(const rttcc_config_t &cfg, std::string *err) {
    std::unique_ptr<UdpWire> w(new UdpWire());
    const auto all = list_interfaces();
    if (!select_interface(all, cfg.if_include, cfg.if_exclude, &w->iface_, err)) return nullptr;
    for (const auto &i : all) w->local_ips_.push_back(i.ip);
    if (!w->open_channel(kCmd, cfg, err) || !w->open_channel(kData, cfg, err)) return nullptr;
    w->tx_msgs_.resize(cfg.tx_batch);
    w->tx_to_.resize(cfg.tx_batch);
    return w;
}

bool UdpWire::open_channel(Channel ch, const rttcc_config_t &cfg, std::string *err) {
    const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        *err = std::string("socket(): ") + std::strerror(errno);
        return false;
    }
    fd_[ch] = fd;
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = iface_.ip;
    socklen_t sl = sizeof sa;
    if (bind(fd, reinterpret_cast<sockaddr *>(&sa), sizeof sa) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr *>(&sa), &sl) != 0) {
        *err = "bind to " + iface_.name + ": " + std::strerror(errno);
        return false;
    }
    const int buf = static_cast<int>(std::min<unsigned>(cfg.sock_buf, 1u << 30));
    set_buffer(fd, SO_SNDBUFFORCE, SO_SNDBUF, buf);
    set_buffer(fd, SO_RCVBUFFORCE, SO_RCVBUF, buf);
    local_[ch] = {iface_.ip, sa.sin_port, static_cast<uint16_t>(std::min(iface_.mtu, 65535u))};

    RxRing &r = rx_[ch];
    r.slot = ch == kCmd ? cfg.cmd_mtu : kMaxDatagram + 1;  // +1: an oversized datagram shows as truncated
    r.bytes.resize(r.slot * cfg.rx_batch);
    r.msgs.resize(cfg.rx_batch);
    r.iovs.resize(cfg.rx_batch);
    r.from.resize(cfg.rx_batch);
    for (unsigned i = 0; i < cfg.rx_batch; ++i) {
        r.iovs[i] = {r.bytes.data() + i * r.slot, r.slot};
        r.msgs[i] = mmsghdr{};
        r.msgs[i].msg_hdr.msg_iov = &r.iovs[i];
        r.msgs[i].msg_hdr.msg_iovlen = 1;
        r.msgs[i].msg_hdr.msg_name = &r.from[i];
    }
    return true;
}

UdpWire::~UdpWire() {
    for (int fd : fd_)
        if (fd >= 0) close(fd);
}

size_t UdpWire::local_address(Channel ch, void *buf, size_t cap) const {
    if (cap < sizeof(Address)) return 0;
    std::memcpy(buf, &local_[ch], sizeof(Address));
    return sizeof(Address);
}

bool UdpWire::resolve(Channel, const void *addr, size_t len, WireHandle *out, std::string *err) {
    if (len != sizeof(Address)) {
        *err = "peer published a UDP address of the wrong size";
        return false;
    }
    Address a;
    std::memcpy(&a, addr, sizeof a);
    *out = handle_of(a.ip, a.port);
    return true;
}

size_t UdpWire::path_datagram(const void *data_addr, size_t len) const {
    Address a{};
    if (len == sizeof a) std::memcpy(&a, data_addr, sizeof a);
    if (std::find(local_ips_.begin(), local_ips_.end(), a.ip) != local_ips_.end())
        return kLocalPathDatagram;
    const size_t mtu = std::min<size_t>(iface_.mtu, a.mtu ? a.mtu : 65535);
    return std::min(mtu - kIpUdpOverhead, kMaxDatagram);
}

int UdpWire::tx_burst(Channel ch, TxDatagram *d, int n) {
    n = std::min<int>(n, static_cast<int>(tx_msgs_.size()));
    for (int i = 0; i < n; ++i) {
        sockaddr_in &to = tx_to_[i];
        to = sockaddr_in{};
        to.sin_family = AF_INET;
        to.sin_addr.s_addr = static_cast<uint32_t>(d[i].dest >> 16);
        to.sin_port = static_cast<uint16_t>(d[i].dest & 0xffff);
        msghdr &m = tx_msgs_[i].msg_hdr;
        m = msghdr{};
        m.msg_name = &to;
        m.msg_namelen = sizeof to;
        m.msg_iov = d[i].iov;
        m.msg_iovlen = static_cast<size_t>(d[i].iovcnt);
    }
    int done = 0;
    while (done < n) {
        const int r = sendmmsg(fd_[ch], &tx_msgs_[done], static_cast<unsigned>(n - done), 0);
        if (r > 0) {
            done += r;
            continue;
        }
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) break;
        ++tx_errors_;  // refused for good (e.g. unreachable): retransmission recovers
        ++done;
    }
    return done;
}

int UdpWire::rx_burst(Channel ch, RxDatagram *d, int n) {
    RxRing &r = rx_[ch];
    n = std::min<int>(n, static_cast<int>(r.msgs.size()));
    for (int i = 0; i < n; ++i) r.msgs[i].msg_hdr.msg_namelen = sizeof(sockaddr_in);
    int got;
    do {
        got = recvmmsg(fd_[ch], r.msgs.data(), static_cast<unsigned>(n), MSG_DONTWAIT, nullptr);
    } while (got < 0 && errno == EINTR);
    if (got <= 0) return 0;
    for (int i = 0; i < got; ++i) {
        d[i].buf = static_cast<const uint8_t *>(r.iovs[i].iov_base);
        d[i].len = r.msgs[i].msg_len;
        d[i].src = handle_of(r.from[i].sin_addr.s_addr, r.from[i].sin_port);
    }
    return got;
}

}  // namespace rttcc
