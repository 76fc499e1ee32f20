// The libfabric wire: FI_EP_DGRAM endpoints (one per channel) of any
// provider that offers them (usnic, verbs;ofi_rxd's UD, efa, udp).  Sends
// are copied into registered bounce slots (the caller's iovecs are valid only
// during tx_burst); receives land in pre-posted slots, reposted once the
// engine is done with them (at the next rx_burst on that channel).  Sends
// the provider refuses (at once, or later as an error completion) and
// datagrams over its or the peer's largest message are dropped and reported
// through failures().
#pragma once
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#include <memory>
#include <string>
#include <vector>

#include "rttcc/config.h"
#include "util/aligned_bytes.h"
#include "wire/wire.h"

namespace rttcc {

class OfiWire final : public Wire {
public:
    // Opens fabric, domain, address vector and both endpoints; nullptr with *err.
    // The provider is libfabric's choice unless RTTCC_OFI_PROVIDER names one.
    static std::unique_ptr<OfiWire> open(const rttcc_config_t &cfg, std::string *err);
    ~OfiWire() override;

    const char *name() const override { return "ofi"; }
    size_t local_address(Channel ch, void *buf, size_t cap) const override;
    bool resolve(Channel ch, const void *addr, size_t len, WireHandle *out, std::string *err) override;
    size_t path_datagram(const void *data_addr, size_t len) const override;
    int tx_burst(Channel ch, TxDatagram *d, int n) noexcept override;
    int rx_burst(Channel ch, RxDatagram *d, int n) override;
    bool verifies_source() const override { return has_source_; }
    int failures(WireFailure *out, int n) override;
    const char *refuser() const override { return refuser_.c_str(); }
    std::string error_text(int error) const override { return fi_strerror(error); }

    const char *provider() const { return provider_.c_str(); }
    // A channel's transmit completion queue: unit tests put their own
    // operations in front of the provider's to report send errors there.
    fid_cq *tx_queue(Channel ch) { return reinterpret_cast<fid_cq *>(ep_[ch].tx_cq.get()); }
    // The same for receives: its completion queue and its endpoint (fi_recv).
    fid_cq *rx_queue(Channel ch) { return reinterpret_cast<fid_cq *>(ep_[ch].rx_cq.get()); }
    fid_ep *endpoint(Channel ch) { return reinterpret_cast<fid_ep *>(ep_[ch].ep.get()); }

private:
    struct Fid {  // closes any libfabric object
        void operator()(fid *f) const {
            if (f) fi_close(f);
        }
    };
    using FidPtr = std::unique_ptr<fid, Fid>;
    struct Slots {                   // registered buffers of one direction of one channel
        AlignedBytes bytes;          // `count` slots of `size` bytes, line-aligned
        size_t size = 0;
        size_t count = 0;
        FidPtr mr;                   // registration, when the provider wants one
        void *desc = nullptr;        // its descriptor for data transfers
        uint8_t *at(size_t i) { return bytes.data() + i * AlignedBytes::stride(size); }
    };
    struct Endpoint {
        FidPtr ep, tx_cq, rx_cq;      // the endpoint and its completion queues
        Slots tx, rx;                 // bounce and receive buffers
        std::vector<size_t> tx_free;  // free tx slots
        std::vector<WireHandle> tx_dest;  // where each tx slot's datagram goes
        std::vector<size_t> unposted; // rx slots to post at the next burst: given to the engine, or whose post failed
        std::vector<uint8_t> name;    // fi_getname
        size_t max_datagram = 0;      // largest payload on this channel
        Channel channel = kCmd;       // which one it is
    };

    OfiWire() = default;
    bool open_endpoint(Channel ch, fi_info *info, const rttcc_config_t &cfg, std::string *err);
    bool register_slots(Slots &s, uint64_t access, std::string *err);
    bool post_recv(Endpoint &e, size_t slot);
    void post_unposted(Endpoint &e);
    void reap_tx(Endpoint &e);
    void refuse(const Endpoint &e, WireHandle dest, int error);

    FidPtr fabric_, domain_, av_;  // shared by both endpoints (fid_fabric etc. as fid)
    Endpoint ep_[kChannels];
    size_t prefix_ = 0;            // FI_MSG_PREFIX bytes in front of every buffer
    bool mr_local_ = false;        // the provider needs registered local buffers
    bool has_source_ = false;      // receive completions name the sender
    std::string provider_;         // which provider we got
    std::string refuser_;          // "libfabric's <provider> provider"
    std::vector<uint32_t> peer_max_;     // by handle: the largest datagram that peer's channel takes
    std::vector<WireFailure> failed_;    // refused sends not yet reported (at most kMaxFailed)
    static constexpr size_t kMaxFailed = 64;
};

}  // namespace rttcc
