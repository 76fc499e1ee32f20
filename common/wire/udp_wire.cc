#include "wire/udp_wire.h"

#include <arpa/inet.h>
#include <netinet/udp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "util/copy_bytes.h"

namespace rttcc {

namespace {
constexpr size_t kLocalPathDatagram = 65000;  // same host: the kernel's loopback path
constexpr size_t kIpUdpOverhead = 28;
constexpr int kMaxGsoSegments = 64;       // UDP_MAX_SEGMENTS on every kernel with GSO
constexpr size_t kMaxGsoBytes = 65000;    // a GSO super-datagram is one IP packet's worth
constexpr int kStagePieces = 4;           // a group of more pieces is copied into one (UdpWire::stage),
constexpr size_t kStageSmall = 4096;      // as is one of fewer that is no larger
constexpr size_t kStageBytes = 4 * 65536; // stage_: a burst of 128 datagrams at MTU 1500 is three groups
constexpr size_t kGsoCmsgSpace = CMSG_SPACE(sizeof(uint16_t));  // UDP_SEGMENT on a send
constexpr size_t kGroCmsgSpace = CMSG_SPACE(sizeof(int));       // UDP_GRO on a receive
constexpr unsigned kBusyPolls = 256;      // empty data-channel polls in a row before it counts as idle
constexpr unsigned kIdleStride = 4;       // an idle data channel is polled on every fourth pass
constexpr nanos kStampTimeout = msec(200);  // a transmit stamp later than this is given up
constexpr nanos kKeysQuiet = msec(1000);    // counted keys restarted: no stamped sends for this long
constexpr size_t kMaxGsoLimits = 256;       // destinations with a GSO limit; one more turns GSO off
constexpr size_t kMaxFailed = 64;           // refused sends kept until failures() reports them
constexpr size_t kNoGsoLimit = 65536;       // gso_refused() of a destination without one

size_t datagram_bytes(const TxDatagram &d) {
    size_t n = 0;
    for (int i = 0; i < d.iovcnt; ++i) n += d.iov[i].iov_len;
    return n;
}

// What pads a short datagram to its GSO group's size (group()): a group's
// datagrams are at most kMaxGsoBytes / 2.
const uint8_t kPadding[kMaxGsoBytes / 2] = {};

void set_buffer(int fd, int force_opt, int opt, int bytes) {
    if (setsockopt(fd, SOL_SOCKET, force_opt, &bytes, sizeof bytes) != 0)
        setsockopt(fd, SOL_SOCKET, opt, &bytes, sizeof bytes);
}

bool has_cookie(const TxDatagram *d, int n) {
    for (int i = 0; i < n; ++i)
        if (d[i].stamp_cookie) return true;
    return false;
}

// The engine's clock to a tick's precision, for a few nanoseconds.
nanos coarse_now() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return static_cast<nanos>(ts.tv_sec) * 1000000000ull + static_cast<nanos>(ts.tv_nsec);
}
}  // namespace

std::unique_ptr<UdpWire> UdpWire::open(const rttcc_config_t &cfg, std::string *err, StampKeys keys) {
    std::unique_ptr<UdpWire> w(new UdpWire());
    const auto all = list_interfaces();
    if (!select_interface(all, cfg.if_include, cfg.if_exclude, &w->iface_, err)) return nullptr;
    for (const auto &i : all) w->local_ips_.push_back(i.ip);
    if (!w->open_channel(kCmd, cfg, err) || !w->open_channel(kData, cfg, err)) return nullptr;
    if (!w->setup_stamping(cfg, keys, err)) return nullptr;
    w->size_rx_control(kCmd);
    w->size_rx_control(kData);

    w->tx_msgs_.resize(cfg.tx_batch);
    w->tx_to_.resize(cfg.tx_batch);
    w->tx_iovs_.resize(cfg.tx_batch * 5);  // four pieces a datagram, and padding
    w->tx_groups_.resize(cfg.tx_batch);
    w->gso_limits_.reserve(kMaxGsoLimits);
    w->failed_.reserve(kMaxFailed);
    w->stage_ = AlignedBytes(kStageBytes);
    w->tx_control_space_ = kGsoCmsgSpace + (w->stamp_tx_ ? tx_request_cmsg_space() : 0);
    w->tx_control_.resize(cfg.tx_batch * w->tx_control_space_);
    if (w->stamp_tx_) w->pending_.reserve(size_t{w->errq_.batch()} * kMaxGsoSegments);
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
    const int one = 1;  // ICMP errors to the error queue: a peer's closed port is news (failures())
    setsockopt(fd, SOL_IP, IP_RECVERR, &one, sizeof one);
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
    const size_t stride = AlignedBytes::stride(r.slot);
    r.bytes = AlignedBytes(stride * cfg.rx_batch);
    r.msgs.resize(cfg.rx_batch);
    r.iovs.resize(cfg.rx_batch);
    r.from.resize(cfg.rx_batch);
    r.backlog.reserve(cfg.rx_batch * kMaxGsoSegments);
    for (unsigned i = 0; i < cfg.rx_batch; ++i) {
        r.iovs[i] = {r.bytes.data() + i * stride, r.slot};
        r.msgs[i] = mmsghdr{};
        r.msgs[i].msg_hdr.msg_iov = &r.iovs[i];
        r.msgs[i].msg_hdr.msg_iovlen = 1;
        r.msgs[i].msg_hdr.msg_name = &r.from[i];
    }
    return true;
}

// Control space per receive slot: the GRO segment size on the data channel,
// the stamp on both when stamping.
void UdpWire::size_rx_control(Channel ch) {
    RxRing &r = rx_[ch];
    r.control_space = (ch == kData && gro_ ? kGroCmsgSpace : 0) + (stamp_rx_ ? rx_stamp_cmsg_space() : 0);
    r.control.assign(r.control_space * r.msgs.size(), 0);
}

UdpWire::~UdpWire() {
    for (int fd : fd_)
        if (fd >= 0) close(fd);
}

// The command channel (tiny messages, ACKs) is polled on every call: that
// is the latency path.  The data channel is polled on every call while it is
// busy and on every fourth call once it has been idle for a while, which
// saves an empty recvmmsg on most idle polls (measurable in 8-byte latency).
// A pass whose command poll brought news leaves such an idle poll to the
// next pass (rx_burst): the news is likely what the application waits for,
// and the empty poll would hold the pass's return for a system call.
unsigned UdpWire::ready() {
    unsigned mask = 1u << kCmd;
    cmd_news_ = false;
    if (!data_idle() || data_owed_ || ++data_skips_ % kIdleStride == 0) mask |= 1u << kData;
    return mask;
}

bool UdpWire::data_idle() const {
    return data_idle_polls_ >= kBusyPolls && rx_[kData].backlog_next == rx_[kData].backlog.size();
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
// group may be shorter) into GSO super-datagrams, below the size its route
// refused (limit_gso); returns the group count.
// A short datagram (a message's last segment) is padded to the group's size,
// so the group goes on, when a full one to the same peer follows, or a
// shorter one that is the burst's last to that peer (a message and the
// small one after it: a batch of puts and a fence's ordered message): the
// receiver reads a header's payload_len, not the datagram's length.  On
// veth each group costs the sender the receiver's whole stack: 32 replies
// of 2 KiB (1508 + 684 bytes each) took one sendmmsg of 32 groups, 155 us.
// A group with a stamp cookie asks for one transmit stamp (the kernel stamps
// a GSO send once, whatever cuts it), which then stands for all its cookies.
int UdpWire::group(Channel ch, TxDatagram *d, int n) {
    int groups = 0, iovs = 0;
    size_t staged = 0;  // bytes of stage_ this burst's groups took
    for (int i = 0; i < n;) {
        const size_t size = datagram_bytes(d[i]);
        TxGroup g{i, 1, 0, false, 0};
        size_t total = size;
        const bool can_group = gso_ && size * 2 <= kMaxGsoBytes && size < gso_refused(d[i].dest);
        // Is d[k] worth padding to `size`: does d[k + 1], to the same peer,
        // continue the group (full) or end it (shorter, the burst's last to
        // the peer), with both fitting?
        auto pad_for_next = [&](int k) {
            if (k + 1 >= n || d[k + 1].dest != d[i].dest) return false;
            const size_t next = datagram_bytes(d[k + 1]);
            const bool ends = next < size && (k + 2 == n || d[k + 2].dest != d[i].dest);
            return (next == size || ends) && g.count + 2 <= kMaxGsoSegments && total + size + next <= kMaxGsoBytes;
        };
        while (can_group && i + g.count < n && g.count < kMaxGsoSegments) {
            const int k = i + g.count;
            const size_t nsize = datagram_bytes(d[k]);
            if (d[k].dest != d[i].dest || nsize > size || total + nsize > kMaxGsoBytes) break;
            // only the last segment may be short
            const bool last = nsize < size && !pad_for_next(k);
            total += last ? nsize : size;
            ++g.count;
            if (last) break;
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
        // Pieces that continue each other are one (datagrams laid out in
        // one buffer, Engine::copy_message): the kernel's send costs per piece.
        // A datagram before the group's last that is short gets its padding.
        const int first = iovs;
        for (int k = 0; k < g.count; ++k) {
            size_t bytes = 0;
            for (int v = 0; v < d[i + k].iovcnt; ++v) {
                const iovec &piece = d[i + k].iov[v];
                bytes += piece.iov_len;
                iovec *last = iovs > first ? &tx_iovs_[iovs - 1] : nullptr;
                if (last && static_cast<uint8_t *>(last->iov_base) + last->iov_len == piece.iov_base)
                    last->iov_len += piece.iov_len;
                else
                    tx_iovs_[iovs++] = piece;
            }
            if (k + 1 < g.count && bytes < size) tx_iovs_[iovs++] = {const_cast<uint8_t *>(kPadding), size - bytes};
        }
        iovs = first + stage(first, iovs - first, &staged);
        m.msg_iovlen = static_cast<size_t>(&tx_iovs_[iovs] - static_cast<iovec *>(m.msg_iov));
        if (stamp_tx_ && has_cookie(d + i, g.count) && may_stamp(ch)) {
            g.stamped = true;
            if (stamp_keys_ == StampKeys::kExplicit) g.key = rings_[ch].reserve();
            ++stamped_groups_;
        }
        if (g.gso || g.stamped) {
            uint8_t *control = &tx_control_[groups * tx_control_space_];
            m.msg_control = control;
            m.msg_controllen = put_group_control(control, g);
        }
        tx_groups_[groups++] = g;
        i += g.count;
    }
    return groups;
}

// A group of more than kStagePieces pieces (datagrams of a header and a
// payload apiece: zero-copy segments, replies, small messages), or of
// several pieces and at most kStageSmall bytes (a lone small datagram), is
// copied into stage_ after what this burst staged before (*staged) and goes
// to the kernel as one piece; returns the group's piece count then.  The
// kernel's send costs per piece: a raw stream of 64 KiB GSO groups of
// 1436-byte datagrams across testbed hosts ran at 3.6-4.3 GB/s from 88
// pieces (a 72-byte header and a payload each) and at 5.8-7.4 from this
// copy (6.2-6.6 from one piece, no headers), 10 alternating runs; an 8 B
// to 2 KiB MPI ping-pong there took 1-3% less with small groups staged too.
// stage_ is free again once sendmmsg returns: UDP copies what it sends.  A
// group that does not fit what is left goes in pieces.
int UdpWire::stage(int first, int pieces, size_t *staged) {
    if (pieces <= 1) return pieces;
    size_t bytes = 0;
    for (int v = first; v < first + pieces; ++v) bytes += tx_iovs_[v].iov_len;
    if ((pieces <= kStagePieces && bytes > kStageSmall) || *staged + bytes > stage_.size()) return pieces;
    uint8_t *const start = stage_.data() + *staged;
    uint8_t *to = start;
    for (int v = first; v < first + pieces; ++v) {
        copy_bytes(to, tx_iovs_[v].iov_base, tx_iovs_[v].iov_len);
        to += tx_iovs_[v].iov_len;
    }
    tx_iovs_[first] = {start, bytes};
    *staged += AlignedBytes::stride(bytes);  // the next group's copy starts on a line too
    ++staged_groups_;
    return 1;
}

// Writes a group's cmsgs (GSO segment size, stamp request) at `at`; returns their bytes.
size_t UdpWire::put_group_control(uint8_t *at, const TxGroup &g) const {
    size_t used = 0;
    if (g.gso) {
        cmsghdr c{};
        c.cmsg_level = SOL_UDP;
        c.cmsg_type = UDP_SEGMENT;
        c.cmsg_len = CMSG_LEN(sizeof g.gso);
        std::memset(at, 0, kGsoCmsgSpace);
        std::memcpy(at, &c, sizeof c);
        std::memcpy(at + CMSG_LEN(0), &g.gso, sizeof g.gso);
        used = kGsoCmsgSpace;
    }
    if (g.stamped) used += put_tx_request(at + used, stamp_mode_, stamp_keys_ == StampKeys::kExplicit, g.key);
    return used;
}

// One group alone: a single piece with no cmsg (a small message, an ACK)
// goes by sendto, which spares the kernel sendmmsg's msghdr and iovec
// copies; returns 1 once sent, else -1 with errno, as sendmmsg would.
int UdpWire::send_one(Channel ch, const msghdr &m) {
    if (m.msg_iovlen != 1 || m.msg_controllen != 0) return sendmsg(fd_[ch], &m, 0) < 0 ? -1 : 1;
    const ssize_t r = sendto(fd_[ch], m.msg_iov[0].iov_base, m.msg_iov[0].iov_len, 0,
                             static_cast<const sockaddr *>(m.msg_name), m.msg_namelen);
    return r < 0 ? -1 : 1;
}

// Sends the groups; returns how many datagrams the kernel took.  sendmmsg
// stops at the first failing message, so after a short count the next group
// has been tried once and failed, for a reason it does not tell.
int UdpWire::send_groups(Channel ch, const TxDatagram *d, int ngroups) {
    constexpr int kMaxRefusedRetries = 8;  // ICMP errors reported per call: each one costs a retry
    int done = 0, taken = 0, refused_retries = 0;
    bool hidden = false;  // the last call sent some, and hid why the next group failed
    while (done < ngroups) {
        const int r = ngroups - done == 1 ? send_one(ch, tx_msgs_[done].msg_hdr)
                                          : sendmmsg(fd_[ch], &tx_msgs_[done], static_cast<unsigned>(ngroups - done), 0);
        if (r > 0) {
            // A hidden failure that went at once was no full buffer: an
            // error the call consumed (ECONNREFUSED), whose ICMP waits in
            // the error queue.
            if (hidden) errq_news_ = true;
            for (int k = done; k < done + r; ++k) taken += tx_groups_[k].count;
            if (stamped_groups_) note_sent(ch, d, done, r);
            done += r;
            hidden = done < ngroups;
            if (hidden && stamped_groups_) note_failed(done);
            continue;
        }
        if (stamped_groups_) note_failed(done);
        if (errno == EINTR) continue;
        if (errno == ECONNREFUSED) {  // an earlier datagram's ICMP error, reported here: this one was not sent
            errq_news_ = true;          // the error queue says whose
            if (refused_retries++ < kMaxRefusedRetries) continue;
            break;  // as EAGAIN: the rest go later (never blamed on this datagram's peer)
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK) break;
        if (errno == ENOBUFS) {
            // Dropped on the way out (a full qdisc, a device that drops
            // frames over its MTU): lost like in the network, so the
            // protocol's timers resend it.  IP_RECVERR makes the kernel
            // report it; retried at once, a drop that lasts would spin.
            taken += tx_groups_[done++].count;
            continue;
        }
        if (tx_groups_[done].gso && (errno == EMSGSIZE || errno == EINVAL || errno == EIO)) {
            // Refused for its segmentation, not its datagrams: a segment
            // over the route's MTU (EMSGSIZE; EINVAL on older kernels),
            // which sent alone the kernel fragments, or a device that
            // cannot segment (EIO).  tx_burst groups the rest again.
            if (errno == EIO)
                gso_ = false;
            else
                limit_gso(d[tx_groups_[done].first].dest, tx_groups_[done].gso);
            regroup_ = true;
            break;
        }
        ++tx_errors_;  // refused for good (EMSGSIZE, ENETUNREACH, EPERM, ...): the engine hears of it
        if (failed_.size() < kMaxFailed) failed_.push_back({d[tx_groups_[done].first].dest, errno, ch});
        taken += tx_groups_[done++].count;
    }
    return taken;
}

// Where `ip` is or goes in gso_limits_ (sorted by ip).
size_t UdpWire::gso_limit_index(uint32_t ip) const {
    return static_cast<size_t>(std::lower_bound(gso_limits_.begin(), gso_limits_.end(), ip,
                                                [](const GsoLimit &l, uint32_t v) { return l.ip < v; }) -
                               gso_limits_.begin());
}

// The smallest GSO segment size refused on the way to `dest` (kNoGsoLimit: none).
size_t UdpWire::gso_refused(WireHandle dest) const {
    if (gso_limits_.empty()) return kNoGsoLimit;
    const uint32_t ip = static_cast<uint32_t>(dest >> 16);
    const size_t i = gso_limit_index(ip);
    return i < gso_limits_.size() && gso_limits_[i].ip == ip ? gso_limits_[i].refused : kNoGsoLimit;
}

// The route to `dest` refused segments of `refused` bytes: smaller ones may
// still go grouped there (the command channel's, a message's short tail).
// The route is per address, so both channels' ports share the limit.
void UdpWire::limit_gso(WireHandle dest, size_t refused) {
    const uint32_t ip = static_cast<uint32_t>(dest >> 16);
    const auto at = gso_limits_.begin() + static_cast<std::ptrdiff_t>(gso_limit_index(ip));
    if (at != gso_limits_.end() && at->ip == ip) {
        at->refused = std::min(at->refused, refused);
    } else if (gso_limits_.size() < kMaxGsoLimits) {
        gso_limits_.insert(at, {ip, refused});
    } else {
        gso_ = false;  // too many odd routes to remember: no GSO at all
    }
}

// A group refused for its GSO leaves the rest of the burst to be grouped
// again (without it); each such round lowers a limit or turns GSO off, so
// the rounds end.
int UdpWire::tx_burst(Channel ch, TxDatagram *d, int n) noexcept {
    n = std::min<int>(n, static_cast<int>(tx_msgs_.size()));
    int taken = 0;
    do {
        regroup_ = false;
        burst_now_ = 0;
        stamped_groups_ = 0;
        taken += send_groups(ch, d + taken, group(ch, d + taken, n - taken));
        if (restart_due_) restart_keys(ch);
    } while (regroup_ && taken < n);
    return taken;
}

// Cuts a GRO buffer (several datagrams of one size back to back) apart; the
// pieces share the buffer's stamp.
void UdpWire::split(RxRing &r, int slot, size_t len, WireHandle src, nanos stamp, TsSource source) {
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
    for (size_t off = 0; off < len; off += seg)
        r.backlog.push_back({p + off, std::min(seg, len - off), src, stamp, source});
}

int UdpWire::rx_burst(Channel ch, RxDatagram *d, int n) {
    RxRing &r = rx_[ch];
    if (ch == kData) {
        if (cmd_news_ && !data_owed_ && data_idle()) {
            data_owed_ = true;  // ready() asks for it on the next pass
            return 0;
        }
        data_owed_ = false;
    }
    if (r.backlog_next == r.backlog.size()) {  // all handed out: the slots may be reused
        r.backlog.clear();
        r.backlog_next = 0;
        const int slots = static_cast<int>(r.msgs.size());
        // recvmmsg rewrites the name and control lengths of what it filled
        // only: an empty poll (the busy loop's usual one) restores nothing.
        for (int i = 0, n_dirty = r.filled < 0 ? slots : r.filled; i < n_dirty; ++i) {
            r.msgs[i].msg_hdr.msg_namelen = sizeof(sockaddr_in);
            r.msgs[i].msg_hdr.msg_control = r.control_space ? &r.control[i * r.control_space] : nullptr;
            r.msgs[i].msg_hdr.msg_controllen = r.control_space;
        }
        // recvmmsg reads until the socket is empty, so a batch that finds one
        // datagram pays a second, empty read (0.14 us on veth).  After an
        // empty poll, ask for one: the news is likely a lone message (on the
        // data channel a whole GRO group: 2-32 KiB ping-pongs across hosts
        // were 2-4% faster so; without GRO a message is many datagrams, and
        // the batch reads them).  Any other poll takes a whole batch: in a
        // stream polls are rarely empty, and one slot per read slowed 1-4 MiB
        // streams across hosts by 3-4%.
        const int want = r.filled == 0 && (ch == kCmd || gro_) ? 1 : std::min(n, slots);
        int got;
        do {
            got = recvmmsg(fd_[ch], r.msgs.data(), static_cast<unsigned>(want), MSG_DONTWAIT, nullptr);
        } while (got < 0 && errno == EINTR);
        r.filled = std::max(got, 0);
        if (ch == kCmd && got > 0) cmd_news_ = true;
        if (got < 0 && errno == ECONNREFUSED) errq_news_ = true;  // an ICMP error, not a datagram
        if (stamp_rx_ && got > 0) refresh_offsets();
        for (int i = 0; i < got; ++i) {
            RawStamp raw;
            TsSource source = TsSource::kNone;
            const int64_t when = stamp_rx_ && parse_rx_stamp(r.msgs[i].msg_hdr, &raw) ? to_mono(raw, &source) : 0;
            split(r, i, r.msgs[i].msg_len, handle_of(r.from[i].sin_addr.s_addr, r.from[i].sin_port),
                  when > 0 ? static_cast<nanos>(when) : 0, when > 0 ? source : TsSource::kNone);
        }
        if (ch == kData) data_idle_polls_ = got > 0 ? 0 : data_idle_polls_ + 1;
    }
    const int out = static_cast<int>(std::min<size_t>(n, r.backlog.size() - r.backlog_next));
    for (int i = 0; i < out; ++i) d[i] = r.backlog[r.backlog_next++];
    return out;
}

// ---------------------------------------------------------------- timestamps

// cfg.timestamp: user = the engine's clock only; kernel and nic must work or
// open fails; auto = nic if it works, else kernel, else the engine's clock.
bool UdpWire::setup_stamping(const rttcc_config_t &cfg, StampKeys keys, std::string *err) {
    std::string why_nic, why_kernel;
    switch (cfg.timestamp) {
        case RTTCC_TS_USER:
            stamp_note_ = "timestamp=user: the engine's clock";
            return true;
        case RTTCC_TS_KERNEL:
            if (start_stamping(StampMode::kSoftware, keys, &why_kernel)) break;
            *err = "rttcc_timestamp=kernel: " + why_kernel;
            return false;
        case RTTCC_TS_NIC:
            if (start_nic_stamping(keys, &why_nic)) break;
            *err = "rttcc_timestamp=nic: " + why_nic;
            return false;
        case RTTCC_TS_AUTO:
            if (start_nic_stamping(keys, &why_nic)) break;
            if (start_stamping(StampMode::kSoftware, keys, &why_kernel)) {
                stamp_note_ = "timestamp=auto: no nic stamps (" + why_nic + "); ";
                break;
            }
            stamp_note_ = "timestamp=auto: the engine's clock (nic: " + why_nic + "; kernel: " + why_kernel + ")";
            return true;
        default:
            *err = "unknown rttcc_timestamp value " + std::to_string(cfg.timestamp);
            return false;
    }
    stamp_note_ += std::string(ts_source_name(stamp_source_)) + " stamps on " + iface_.name +
                   (nic_clock_ ? " (" + nic_clock_->name() + ")" : "") + ", " +
                   (stamp_keys_ == StampKeys::kExplicit ? "explicit" : "counted") + " transmit-stamp keys";
    return true;
}

// Hardware stamps need the NIC set up and its PTP clock readable (to convert
// its stamps to the engine's clock).
bool UdpWire::start_nic_stamping(StampKeys keys, std::string *err) {
    TsInfo info;
    if (!enable_nic_stamping(iface_.name, &info, err)) return false;
    auto clock = ClockDomain::open_phc("/dev/ptp" + std::to_string(info.phc_index), err);
    if (!clock) {
        *err = "the PTP clock of " + iface_.name + ": " + *err;
        return false;
    }
    nic_clock_ = std::move(clock);
    if (start_stamping(StampMode::kHardware, keys, err)) return true;
    nic_clock_.reset();
    return false;
}

bool UdpWire::start_stamping(StampMode mode, StampKeys keys, std::string *err) {
    for (int fd : fd_)
        if (!enable_socket_stamping(fd, mode, err)) return false;
    const bool explicit_ok = keys != StampKeys::kCounted && kernel_takes_stamp_key();
    if (keys == StampKeys::kExplicit && !explicit_ok) {
        *err = "this kernel does not take explicit transmit-stamp keys (SCM_TS_OPT_ID, Linux 6.13+)";
        return false;
    }
    stamp_mode_ = mode;
    stamp_keys_ = explicit_ok ? StampKeys::kExplicit : StampKeys::kCounted;
    stamp_source_ = mode == StampMode::kHardware ? TsSource::kNic : TsSource::kKernel;
    stamp_rx_ = stamp_tx_ = true;
    rt_offset_ = ClockDomain::sample_realtime_offset();
    for (StampKeyRing &r : rings_) r.reset();
    return true;
}

// May a group of this burst on `ch` ask for a stamp?  Reads the engine's
// clock once per burst (the sends' time, for matching and expiry).
bool UdpWire::may_stamp(Channel ch) {
    if (tx_stamps_off_[ch]) return false;
    if (!burst_now_) burst_now_ = monotonic_now();
    if (!quiet_until_[ch]) return true;
    if (burst_now_ < quiet_until_[ch]) return false;
    drain_stamps(ch);  // whatever the old keys still brought
    quiet_until_[ch] = 0;
    return true;
}

// Records the cookies of the stamped groups sendmmsg took.  Counted keys are
// the kernel's count of stamped sends that succeeded, in order.
void UdpWire::note_sent(Channel ch, const TxDatagram *d, int first_group, int groups) {
    for (int k = first_group; k < first_group + groups; ++k) {
        const TxGroup &g = tx_groups_[k];
        if (!g.stamped) continue;
        uint64_t cookies[kMaxGsoSegments];
        int n = 0;
        for (int i = g.first; i < g.first + g.count; ++i)
            if (d[i].stamp_cookie) cookies[n++] = d[i].stamp_cookie;
        const uint32_t key = stamp_keys_ == StampKeys::kExplicit ? g.key : rings_[ch].reserve();
        rings_[ch].commit(key, cookies, n, burst_now_);
    }
}

// A stamped group failed to send: with counted keys, whether it used a key
// is unknown (kernels before 6.9 keep it, some errors keep it everywhere).
void UdpWire::note_failed(int group) {
    if (stamp_keys_ == StampKeys::kCounted && tx_groups_[group].stamped) restart_due_ = true;
}

// Counted keys became uncertain: restart them at 0 and forget every
// outstanding send; stamps of sends made before stay in the queue and are
// thrown away when the channel takes stamps again, kKeysQuiet later.
void UdpWire::restart_keys(Channel ch) {
    restart_due_ = false;
    ++stamp_restarts_;
    rings_[ch].reset();
    if (!restart_stamp_keys(fd_[ch], stamp_mode_)) {  // (allocates nothing: tx_burst is noexcept)
        tx_stamps_off_[ch] = true;  // the keys can never be trusted again
        return;
    }
    quiet_until_[ch] = (burst_now_ ? burst_now_ : monotonic_now()) + kKeysQuiet;
}

void UdpWire::drain_stamps(Channel ch) {
    int entries;
    do {
        errq_.read(fd_[ch], &entries);
    } while (entries == static_cast<int>(errq_.batch()));
}

// Reads a batch of the channel's error queue and matches its stamps to the
// outstanding sends; when the queue is empty, sends waiting longer than
// kStampTimeout are given up (their stamp was lost).
void UdpWire::collect_stamps(Channel ch, int *entries_out) {
    int entries;
    const int found = errq_.read(fd_[ch], &entries);
    if (entries_out) *entries_out = entries;
    if (found) refresh_offsets();
    for (int i = 0; i < found; ++i) {
        const TxReport &r = errq_.reports()[i];
        TsSource source;
        const int64_t when = to_mono(r.stamp, &source);
        if (when <= 0) continue;
        rings_[ch].take(r.key, static_cast<nanos>(when), [&](uint64_t cookie) {
            pending_.push_back({cookie, static_cast<nanos>(when), source});
        });
    }
    if (entries < static_cast<int>(errq_.batch())) {
        const nanos now = monotonic_now();
        if (now > kStampTimeout) rings_[ch].expire(now - kStampTimeout);
    }
}

// Reads both error queues once a call said an ICMP error is there (stamps
// found on the way are matched as usual), then hands out the destinations
// whose port was closed and the sends refused for good.
int UdpWire::failures(WireFailure *out, int n) {
    if (errq_news_) {
        errq_news_ = false;
        for (int ch = 0; ch < kChannels; ++ch) {
            int entries;
            do {
                if (stamp_tx_) {
                    collect_stamps(static_cast<Channel>(ch), &entries);
                } else {
                    errq_.read(fd_[ch], &entries);
                }
            } while (entries == static_cast<int>(errq_.batch()));
        }
    }
    int k = 0;
    std::vector<sockaddr_in> &refused = errq_.refused();
    for (; k < n && !refused.empty(); ++k) {
        out[k] = {handle_of(refused.back().sin_addr.s_addr, refused.back().sin_port), ECONNREFUSED, kData};
        refused.pop_back();
    }
    for (; k < n && !failed_.empty(); ++k) {
        out[k] = failed_.back();
        failed_.pop_back();
    }
    return k;
}

int UdpWire::take_pending(TxStamp *out, int n) {
    int got = 0;
    while (got < n && pending_next_ < pending_.size()) out[got++] = pending_[pending_next_++];
    if (pending_next_ == pending_.size()) {
        pending_.clear();
        pending_next_ = 0;
    }
    return got;
}

// Reads the error queue only of a channel with stamps outstanding, and only
// once what was read before has been handed out.
int UdpWire::tx_stamps(TxStamp *out, int n) {
    int got = take_pending(out, n);
    for (int ch = 0; ch < kChannels && got < n; ++ch) {
        if (!rings_[ch].outstanding()) continue;
        collect_stamps(static_cast<Channel>(ch));
        got += take_pending(out + got, n - got);
    }
    return got;
}

// Samples CLOCK_REALTIME - CLOCK_MONOTONIC (changes only when the clock is
// stepped) and the NIC clock's offset, at most once per clock tick.
void UdpWire::refresh_offsets() {
    const nanos now = coarse_now();
    if (offsets_at_ && now - offsets_at_ < msec(1)) return;
    offsets_at_ = now;
    rt_offset_ = ClockDomain::sample_realtime_offset();
    if (nic_clock_) nic_clock_->refresh();
}

// A stamp on the engine's clock (<= 0: none): the NIC's when it took one
// (PHC time, converted with the PHC offset; untested here, no PTP NIC), else
// the kernel's (CLOCK_REALTIME).
int64_t UdpWire::to_mono(const RawStamp &s, TsSource *source) const {
    if (s.hardware && nic_clock_) {
        *source = TsSource::kNic;
        return nic_clock_->from_reading(s.hardware);
    }
    *source = s.software ? TsSource::kKernel : TsSource::kNone;
    return s.software ? ClockDomain::realtime_to_mono(s.software, rt_offset_) : 0;
}

}  // namespace rttcc
