#include "udp_wire.h"

#include <arpa/inet.h>
#include <netinet/udp.h>
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
constexpr int kMaxGsoSegments = 64;       // UDP_MAX_SEGMENTS on every kernel with GSO
constexpr size_t kMaxGsoBytes = 65000;    // a GSO super-datagram is one IP packet's worth
constexpr size_t kCmsgSpace = CMSG_SPACE(sizeof(uint16_t)) > CMSG_SPACE(sizeof(int))
                                  ? CMSG_SPACE(sizeof(uint16_t)) : CMSG_SPACE(sizeof(int));

size_t datagram_bytes(const TxDatagram &d) {
    size_t n = 0;
    for (int i = 0; i < d.iovcnt; ++i) n += d.iov[i].iov_len;
    return n;
}

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
    w->tx_iovs_.resize(cfg.tx_batch * 4);
    w->tx_groups_.resize(cfg.tx_batch);
    w->tx_control_.resize(cfg.tx_batch * kCmsgSpace);
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
    if (ch == kData && cfg.udp_offload) {
        int zero = 0, one = 1;
        gso_ = setsockopt(fd, SOL_UDP, UDP_SEGMENT, &zero, sizeof zero) == 0;
        gro_ = setsockopt(fd, SOL_UDP, UDP_GRO, &one, sizeof one) == 0;
    }

    RxRing &r = rx_[ch];
    r.slot = ch == kCmd ? cfg.cmd_mtu : kMaxDatagram + 1;  // +1: an oversized datagram shows as truncated
    r.bytes.resize(r.slot * cfg.rx_batch);
    r.msgs.resize(cfg.rx_batch);
    r.iovs.resize(cfg.rx_batch);
    r.from.resize(cfg.rx_batch);
    r.control.resize(cfg.rx_batch * kCmsgSpace);
    r.backlog.reserve(cfg.rx_batch * kMaxGsoSegments);
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

// The command channel (tiny messages, ACKs) is polled on every call: that
// is the latency path.  The data channel is polled on every call while it is
// busy and on every fourth call once it has been idle for a while, which
// saves an empty recvmmsg on most idle polls (measurable in 8-byte latency).
unsigned UdpWire::ready() {
    constexpr unsigned kBusyPolls = 256, kIdleStride = 4;
    unsigned mask = 1u << kCmd;
    const bool backlog = rx_[kData].backlog_next != rx_[kData].backlog.size();
    if (backlog || data_idle_polls_ < kBusyPolls || ++data_skips_ % kIdleStride == 0) mask |= 1u << kData;
    return mask;
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

// Groups consecutive datagrams to one peer that share a size (the last of a
// group may be shorter) into GSO super-datagrams; returns the group count.
int UdpWire::group(TxDatagram *d, int n) {
    int groups = 0, iovs = 0;
    for (int i = 0; i < n;) {
        const size_t size = datagram_bytes(d[i]);
        TxGroup g{i, 1, 0};
        size_t total = size;
        const bool can_group = gso_ && size * 2 <= kMaxGsoBytes;
        while (can_group && i + g.count < n && g.count < kMaxGsoSegments) {
            const TxDatagram &next = d[i + g.count];
            const size_t nsize = datagram_bytes(next);
            if (next.dest != d[i].dest || nsize > size || total + nsize > kMaxGsoBytes) break;
            total += nsize;
            ++g.count;
            if (nsize < size) break;  // only the last segment may be short
        }
        if (g.count > 1) g.gso = static_cast<uint16_t>(size);
        // Flatten the iovecs and fill the msghdr.
        msghdr &m = tx_msgs_[groups].msg_hdr;
        m = msghdr{};
        sockaddr_in &to = tx_to_[groups];
        to = sockaddr_in{};
        to.sin_family = AF_INET;
        to.sin_addr.s_addr = static_cast<uint32_t>(d[i].dest >> 16);
        to.sin_port = static_cast<uint16_t>(d[i].dest & 0xffff);
        m.msg_name = &to;
        m.msg_namelen = sizeof to;
        m.msg_iov = &tx_iovs_[iovs];
        for (int k = 0; k < g.count; ++k)
            for (int v = 0; v < d[i + k].iovcnt; ++v) tx_iovs_[iovs++] = d[i + k].iov[v];
        m.msg_iovlen = static_cast<size_t>(&tx_iovs_[iovs] - static_cast<iovec *>(m.msg_iov));
        if (g.gso) {
            m.msg_control = &tx_control_[groups * kCmsgSpace];
            m.msg_controllen = CMSG_SPACE(sizeof(uint16_t));
            cmsghdr *c = CMSG_FIRSTHDR(&m);
            c->cmsg_level = SOL_UDP;
            c->cmsg_type = UDP_SEGMENT;
            c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
            std::memcpy(CMSG_DATA(c), &g.gso, sizeof g.gso);
        }
        tx_groups_[groups++] = g;
        i += g.count;
    }
    return groups;
}

// Sends the groups; returns how many datagrams the kernel took.
int UdpWire::send_groups(Channel ch, int ngroups) {
    int done = 0, taken = 0;
    while (done < ngroups) {
        const int r = sendmmsg(fd_[ch], &tx_msgs_[done], static_cast<unsigned>(ngroups - done), 0);
        if (r > 0) {
            for (int k = done; k < done + r; ++k) taken += tx_groups_[k].count;
            done += r;
            continue;
        }
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) break;
        if (tx_groups_[done].gso && (errno == EIO || errno == EINVAL)) {
            gso_ = false;  // the device cannot segment: the caller resends them one by one
            break;
        }
        ++tx_errors_;  // refused for good (e.g. unreachable): retransmission recovers
        taken += tx_groups_[done++].count;
    }
    return taken;
}

int UdpWire::tx_burst(Channel ch, TxDatagram *d, int n) {
    n = std::min<int>(n, static_cast<int>(tx_msgs_.size()));
    return send_groups(ch, group(d, n));
}

// Cuts a GRO buffer (several datagrams of one size back to back) apart.
void UdpWire::split(RxRing &r, int slot, size_t len, WireHandle src) {
    size_t seg = len;
    msghdr &m = r.msgs[slot].msg_hdr;
    for (cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
        if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
            int v;
            std::memcpy(&v, CMSG_DATA(c), sizeof v);
            if (v > 0) seg = static_cast<size_t>(v);
        }
    }
    const uint8_t *p = static_cast<const uint8_t *>(r.iovs[slot].iov_base);
    for (size_t off = 0; off < len; off += seg) r.backlog.push_back({p + off, std::min(seg, len - off), src});
}

int UdpWire::rx_burst(Channel ch, RxDatagram *d, int n) {
    RxRing &r = rx_[ch];
    if (r.backlog_next == r.backlog.size()) {  // all handed out: the slots may be reused
        r.backlog.clear();
        r.backlog_next = 0;
        const int slots = static_cast<int>(r.msgs.size());
        for (int i = 0; i < slots; ++i) {
            r.msgs[i].msg_hdr.msg_namelen = sizeof(sockaddr_in);
            r.msgs[i].msg_hdr.msg_control = gro_ && ch == kData ? &r.control[i * kCmsgSpace] : nullptr;
            r.msgs[i].msg_hdr.msg_controllen = r.msgs[i].msg_hdr.msg_control ? kCmsgSpace : 0;
        }
        int got;
        do {
            got = recvmmsg(fd_[ch], r.msgs.data(), static_cast<unsigned>(std::min(n, slots)), MSG_DONTWAIT, nullptr);
        } while (got < 0 && errno == EINTR);
        for (int i = 0; i < got; ++i)
            split(r, i, r.msgs[i].msg_len, handle_of(r.from[i].sin_addr.s_addr, r.from[i].sin_port));
        if (ch == kData) data_idle_polls_ = got > 0 ? 0 : data_idle_polls_ + 1;
    }
    const int out = static_cast<int>(std::min<size_t>(n, r.backlog.size() - r.backlog_next));
    for (int i = 0; i < out; ++i) d[i] = r.backlog[r.backlog_next++];
    return out;
}

}  // namespace rttcc
