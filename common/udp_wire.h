// The native Linux UDP wire: one nonblocking socket per channel bound to the
// chosen interface, sendmmsg/recvmmsg batches, large socket buffers.
#pragma once
#include <netinet/in.h>
#include <sys/socket.h>

#include <memory>
#include <string>
#include <vector>

#include "netif.h"
#include "rttcc_config.h"
#include "wire.h"

namespace rttcc {

class UdpWire final : public Wire {
public:
    // Opens both sockets; nullptr with *err saying why.
    static std::unique_ptr<UdpWire> open(const rttcc_config_t &cfg, std::string *err);
    ~UdpWire() override;

    const char *name() const override { return "udp"; }
    size_t local_address(Channel ch, void *buf, size_t cap) const override;
    bool resolve(Channel ch, const void *addr, size_t len, WireHandle *out, std::string *err) override;
    size_t path_datagram(const void *data_addr, size_t len) const override;
    int tx_burst(Channel ch, TxDatagram *d, int n) override;
    int rx_burst(Channel ch, RxDatagram *d, int n) override;
    unsigned ready() override;

    const Interface &interface() const { return iface_; }
    bool gso() const { return gso_; }
    bool gro() const { return gro_; }
    uint64_t tx_errors() const { return tx_errors_; }

private:
    // What a peer publishes per channel.
    struct Address {
        uint32_t ip;     // network byte order
        uint16_t port;   // network byte order
        uint16_t mtu;    // the peer's interface MTU (0 = 65535 and up)
    };
    struct RxRing {
        std::vector<uint8_t> bytes;     // slots of `slot` bytes each
        std::vector<mmsghdr> msgs;      // one per slot
        std::vector<iovec> iovs;        // one per slot
        std::vector<sockaddr_in> from;  // sender per slot
        std::vector<uint8_t> control;   // cmsg space per slot (GRO segment size)
        size_t slot = 0;                // bytes per slot
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
    };

    UdpWire() = default;
    bool open_channel(Channel ch, const rttcc_config_t &cfg, std::string *err);
    int group(TxDatagram *d, int n);
    int send_groups(Channel ch, int ngroups);
    void split(RxRing &r, int slot, size_t len, WireHandle src);
    static WireHandle handle_of(uint32_t ip, uint16_t port) { return (WireHandle{ip} << 16) | port; }

    Interface iface_;                         // where we are bound
    std::vector<uint32_t> local_ips_;         // every address of this host (same-host peers)
    int fd_[kChannels] = {-1, -1};            // socket per channel
    unsigned data_idle_polls_ = 0;            // data-channel polls in a row that found nothing
    unsigned data_skips_ = 0;                 // ready() calls while the data channel is idle
    Address local_[kChannels] = {};           // our address per channel
    RxRing rx_[kChannels];                    // receive buffers per channel
    std::vector<mmsghdr> tx_msgs_;            // sendmmsg scratch, one per group
    std::vector<sockaddr_in> tx_to_;          // destinations scratch, one per group
    std::vector<iovec> tx_iovs_;              // the groups' iovecs, flattened
    std::vector<TxGroup> tx_groups_;          // how the burst was grouped
    std::vector<uint8_t> tx_control_;         // cmsg space per group (UDP_SEGMENT)
    bool gso_ = false;                        // the kernel takes UDP_SEGMENT
    bool gro_ = false;                        // the kernel gives UDP_GRO buffers
    uint64_t tx_errors_ = 0;                  // datagrams the kernel refused for good
};

}  // namespace rttcc
