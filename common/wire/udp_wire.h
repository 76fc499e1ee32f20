// The native Linux UDP wire: one nonblocking socket per channel bound to the
// chosen interface, sendmmsg/recvmmsg batches, large socket buffers, and
// (the timestamp parameter) kernel or NIC timestamps of datagrams: every received
// datagram's, and those of sends that carry a stamp_cookie.
#pragma once
#include <netinet/in.h>
#include <sys/socket.h>

#include <memory>
#include <string>
#include <vector>

#include "clock/clock_domain.h"
#include "wire/netif.h"
#include "rttcc/config.h"
#include "wire/timestamping.h"
#include "util/aligned_bytes.h"
#include "wire/wire.h"

namespace rttcc {

class UdpWire final : public Wire {
public:
    // How transmit stamps are matched to sends: by a key named in each send
    // (SCM_TS_OPT_ID, Linux 6.13+), or by counting stamped sends as the kernel
    // does (older kernels; after a failed stamped send the count is uncertain,
    // so the channel restarts its keys and takes no stamps for a while).
    enum class StampKeys : uint8_t { kAuto, kExplicit, kCounted };

    // Opens both sockets and turns on the timestamps cfg.timestamp asks for;
    // nullptr with *err saying why.  `keys` is for tests (kAuto: explicit
    // keys when the kernel takes them).
    static std::unique_ptr<UdpWire> open(const rttcc_config_t &cfg, std::string *err,
                                         StampKeys keys = StampKeys::kAuto);
    ~UdpWire() override;

    const char *name() const override { return "udp"; }
    size_t local_address(Channel ch, void *buf, size_t cap) const override;
    bool resolve(Channel ch, const void *addr, size_t len, WireHandle *out, std::string *err) override;
    size_t path_datagram(const void *data_addr, size_t len) const override;
    int tx_burst(Channel ch, TxDatagram *d, int n) noexcept override;
    int poll_fds(int *fds, int cap) const override {
        int n = 0;
        for (int fd : fd_)
            if (n < cap && fd >= 0) fds[n++] = fd;
        return n;
    }
    int rx_burst(Channel ch, RxDatagram *d, int n) override;
    unsigned ready() override;
    int failures(WireFailure *out, int n) override;
    TsSource stamp_source() const override { return stamp_source_; }
    int tx_stamps(TxStamp *out, int n) override;

    const Interface &interface() const { return iface_; }
    bool gso() const { return gso_; }
    bool gro() const { return gro_; }
    uint64_t tx_errors() const { return tx_errors_; }
    // What cfg.timestamp gave and why (for a verbose log line).
    const std::string &stamp_note() const { return stamp_note_; }
    // How transmit stamps are matched (kAuto when there are none).
    StampKeys stamp_keys() const { return stamp_keys_; }
    // Stamped sends whose transmit stamp has not come yet.
    unsigned stamps_outstanding() const { return rings_[kCmd].outstanding() + rings_[kData].outstanding(); }
    // Counted keys restarted after an uncertain failed send.
    uint64_t stamp_restarts() const { return stamp_restarts_; }
    uint64_t staged_groups() const { return staged_groups_; }

private:
    // What a peer publishes per channel.
    struct Address {
        uint32_t ip;     // network byte order
        uint16_t port;   // network byte order
        uint16_t mtu;    // the peer's interface MTU (0 = 65535 and up)
    };
    struct RxRing {
        AlignedBytes bytes;             // slots of `slot` bytes each, line-aligned
        std::vector<mmsghdr> msgs;      // one per slot
        std::vector<iovec> iovs;        // one per slot
        std::vector<sockaddr_in> from;  // sender per slot
        std::vector<uint8_t> control;   // cmsg space per slot (GRO segment size, stamp)
        size_t control_space = 0;       // cmsg bytes per slot (0 = none)
        size_t slot = 0;                // bytes per slot
        int filled = -1;                // slots the last recvmmsg wrote into (-1: all, as at the start)
        // Datagrams of the last recvmmsg not yet handed out (a GRO buffer can
        // hold more datagrams than the caller asked for).
        std::vector<RxDatagram> backlog;
        size_t backlog_next = 0;
    };
    // One sendmmsg entry: a single datagram, or several of equal size to one
    // peer sent as a UDP GSO super-datagram that the kernel cuts.
    struct TxGroup {
        int first;     // index of its first datagram
        int count;     // datagrams in it
        uint16_t gso;  // segment size when count > 1
        bool stamped;  // asks for a transmit stamp (a datagram has a cookie)
        uint32_t key;  // its explicit stamp key
    };
    // A destination whose route refused a GSO group (segment over its path
    // MTU): its groups keep their segments below the size refused.
    struct GsoLimit {
        uint32_t ip;       // network byte order
        size_t refused;    // smallest segment size refused
    };

    UdpWire() = default;
    bool open_channel(Channel ch, const rttcc_config_t &cfg, std::string *err);
    void size_rx_control(Channel ch);
    int group(Channel ch, TxDatagram *d, int n);
    int stage(int first, int pieces, size_t *staged);
    size_t put_group_control(uint8_t *at, const TxGroup &g) const;
    int send_one(Channel ch, const msghdr &m);
    int send_groups(Channel ch, const TxDatagram *d, int ngroups);
    size_t gso_limit_index(uint32_t ip) const;
    size_t gso_refused(WireHandle dest) const;
    void limit_gso(WireHandle dest, size_t refused);
    void split(RxRing &r, int slot, size_t len, WireHandle src, nanos stamp, TsSource source);
    bool data_idle() const;

    // Timestamps (timestamping.h): setup, then the send and receive sides.
    bool setup_stamping(const rttcc_config_t &cfg, StampKeys keys, std::string *err);
    bool start_nic_stamping(StampKeys keys, std::string *err);
    bool start_stamping(StampMode mode, StampKeys keys, std::string *err);
    bool may_stamp(Channel ch);
    void note_sent(Channel ch, const TxDatagram *d, int first_group, int groups);
    void note_failed(int group);
    void restart_keys(Channel ch);
    void drain_stamps(Channel ch);
    void collect_stamps(Channel ch, int *entries = nullptr);
    int take_pending(TxStamp *out, int n);
    void refresh_offsets();
    int64_t to_mono(const RawStamp &s, TsSource *source) const;
    static WireHandle handle_of(uint32_t ip, uint16_t port) { return (WireHandle{ip} << 16) | port; }

    Interface iface_;                         // where we are bound
    std::vector<uint32_t> local_ips_;         // every address of this host (same-host peers)
    int fd_[kChannels] = {-1, -1};            // socket per channel
    unsigned data_idle_polls_ = 0;            // data-channel polls in a row that found nothing
    unsigned data_skips_ = 0;                 // ready() calls while the data channel is idle
    bool cmd_news_ = false;                   // this pass's command poll brought datagrams
    bool data_owed_ = false;                  // an idle data poll was left to the next pass
    Address local_[kChannels] = {};           // our address per channel
    RxRing rx_[kChannels];                    // receive buffers per channel
    std::vector<mmsghdr> tx_msgs_;            // sendmmsg scratch, one per group
    std::vector<sockaddr_in> tx_to_;          // destinations scratch, one per group
    std::vector<iovec> tx_iovs_;              // the groups' iovecs, flattened
    std::vector<TxGroup> tx_groups_;          // how the burst was grouped
    AlignedBytes stage_;                      // many-piece groups copied into one piece (stage())
    uint64_t staged_groups_ = 0;              // groups sent from stage_ so far
    std::vector<uint8_t> tx_control_;         // cmsg space per group (UDP_SEGMENT, stamp request)
    size_t tx_control_space_ = 0;             // cmsg bytes per group
    bool gso_ = false;                        // the kernel takes UDP_SEGMENT
    std::vector<GsoLimit> gso_limits_;        // by ip, at most kMaxGsoLimits
    bool regroup_ = false;                    // send_groups stopped at a group refused for its GSO
    bool gro_ = false;                        // the kernel gives UDP_GRO buffers
    uint64_t tx_errors_ = 0;                  // datagrams the kernel refused for good
    bool errq_news_ = false;                  // an ICMP error may be queued (ECONNREFUSED, a short sendmmsg)
    std::vector<WireFailure> failed_;         // sends refused for good, not yet reported (at most kMaxFailed, room made)

    TsSource stamp_source_ = TsSource::kNone; // best stamps the sockets take
    StampMode stamp_mode_ = StampMode::kSoftware; // how the sockets were set up
    StampKeys stamp_keys_ = StampKeys::kAuto; // kExplicit or kCounted once stamping
    std::string stamp_note_;                  // what cfg.timestamp gave and why
    bool stamp_rx_ = false;                   // received datagrams carry stamps
    bool stamp_tx_ = false;                   // sends with a cookie ask for a stamp
    bool tx_stamps_off_[kChannels] = {};      // a channel whose keys cannot be trusted any more
    StampKeyRing rings_[kChannels];           // outstanding stamped sends per channel
    nanos quiet_until_[kChannels] = {};       // counted keys restarted: no stamps before this (0 = none)
    bool restart_due_ = false;                // a stamped send of this burst failed (counted keys)
    uint64_t stamp_restarts_ = 0;             // counted-key restarts so far
    nanos burst_now_ = 0;                     // engine clock of this burst's first stamped group (0 = unread)
    int stamped_groups_ = 0;                  // groups of this burst that ask for a stamp
    ErrQueueReader errq_;                     // error-queue batch reader
    std::vector<TxStamp> pending_;            // stamps read but not handed out yet
    size_t pending_next_ = 0;                 // next of pending_ to hand out
    int64_t rt_offset_ = 0;                   // CLOCK_REALTIME - CLOCK_MONOTONIC, last sample
    nanos offsets_at_ = 0;                    // coarse monotonic time of that sample
    std::unique_ptr<ClockDomain> nic_clock_;  // the NIC's PTP clock (nic stamps)
};

}  // namespace rttcc
