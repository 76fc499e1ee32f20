#include "wire/ofi_wire.h"

#include <arpa/inet.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "wire/netif.h"

namespace rttcc {

namespace {

constexpr uint32_t kApiVersion = FI_VERSION(1, 5);
constexpr fi_addr_t kMaxTableIndex = 1u << 24;  // peers whose datagram limit we keep

struct InfoDeleter {
    void operator()(fi_info *i) const { fi_freeinfo(i); }
};
using InfoPtr = std::unique_ptr<fi_info, InfoDeleter>;

std::string fail(const char *what, int rc) { return std::string(what) + ": " + fi_strerror(-rc); }

// A slot's operation context is slot + 1: an error entry of no operation
// (context null) is told from slot 0's.
void *context_of(size_t slot) { return reinterpret_cast<void *>(slot + 1); }
bool slot_of(void *context, size_t *slot) {
    if (!context) return false;
    *slot = reinterpret_cast<size_t>(context) - 1;
    return true;
}

// What a peer publishes per channel: its largest datagram, then its fi_getname.
struct AddressHead {
    uint32_t max_datagram;
    uint32_t name_len;
};

// Asks for FI_EP_DGRAM with FI_SOURCE first, then without.
InfoPtr find_provider(const rttcc_config_t &cfg, sockaddr_in *src, std::string *err) {
    for (const bool want_source : {true, false}) {
        InfoPtr hints(fi_allocinfo());
        if (!hints) return *err = "fi_allocinfo failed", nullptr;
        hints->ep_attr->type = FI_EP_DGRAM;
        hints->caps = FI_MSG | (want_source ? FI_SOURCE : 0);
        hints->mode = FI_MSG_PREFIX;
        hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_VIRT_ADDR;
        if (const char *prov = std::getenv("RTTCC_OFI_PROVIDER"))
            hints->fabric_attr->prov_name = strdup(prov);
        if (src) {  // bind to the chosen interface where the provider speaks IPv4
            hints->addr_format = FI_SOCKADDR_IN;
            hints->src_addr = std::malloc(sizeof *src);
            std::memcpy(hints->src_addr, src, sizeof *src);
            hints->src_addrlen = sizeof *src;
        }
        fi_info *info = nullptr;
        const int rc = fi_getinfo(kApiVersion, nullptr, nullptr, 0, hints.get(), &info);
        if (rc == 0 && info) return InfoPtr(info);
        *err = fail("fi_getinfo found no FI_EP_DGRAM provider", rc);
    }
    (void)cfg;
    return nullptr;
}

}  // namespace

std::unique_ptr<OfiWire> OfiWire::open(const rttcc_config_t &cfg, std::string *err) {
    std::unique_ptr<OfiWire> w(new OfiWire());
    Interface iface;
    sockaddr_in src{};
    const bool have_iface = select_interface(list_interfaces(), cfg.if_include, cfg.if_exclude, &iface, err);
    if (!have_iface && ((cfg.if_include && *cfg.if_include) || (cfg.if_exclude && *cfg.if_exclude)))
        return nullptr;  // the user named interfaces and none fits
    src.sin_family = AF_INET;
    src.sin_addr.s_addr = iface.ip;
    InfoPtr info = find_provider(cfg, have_iface ? &src : nullptr, err);
    if (!info && have_iface) info = find_provider(cfg, nullptr, err);  // a provider without IPv4 addresses
    if (!info) return nullptr;

    w->provider_ = info->fabric_attr->prov_name ? info->fabric_attr->prov_name : "?";
    w->refuser_ = "libfabric's " + w->provider_ + " provider";
    w->prefix_ = (info->mode & FI_MSG_PREFIX) ? info->ep_attr->msg_prefix_size : 0;
    w->mr_local_ = info->domain_attr->mr_mode & FI_MR_LOCAL;
    w->has_source_ = info->caps & FI_SOURCE;

    fid_fabric *fabric;
    fid_domain *domain;
    fid_av *av;
    int rc = fi_fabric(info->fabric_attr, &fabric, nullptr);
    if (rc) return *err = fail("fi_fabric", rc), nullptr;
    w->fabric_.reset(&fabric->fid);
    if ((rc = fi_domain(fabric, info.get(), &domain, nullptr))) return *err = fail("fi_domain", rc), nullptr;
    w->domain_.reset(&domain->fid);
    fi_av_attr av_attr{};
    av_attr.type = FI_AV_TABLE;
    if ((rc = fi_av_open(domain, &av_attr, &av, nullptr))) return *err = fail("fi_av_open", rc), nullptr;
    w->av_.reset(&av->fid);
    if (!w->open_endpoint(kCmd, info.get(), cfg, err) || !w->open_endpoint(kData, info.get(), cfg, err))
        return nullptr;
    w->failed_.reserve(kMaxFailed);  // tx_burst allocates nothing
    return w;
}

OfiWire::~OfiWire() {
    // Endpoints before their queues, queues and registrations before the domain.
    for (auto &e : ep_) {
        e.ep.reset();
        e.tx_cq.reset();
        e.rx_cq.reset();
        e.tx.mr.reset();
        e.rx.mr.reset();
    }
    av_.reset();
    domain_.reset();
    fabric_.reset();
}

bool OfiWire::register_slots(Slots &s, uint64_t access, std::string *err) {
    s.bytes = AlignedBytes(AlignedBytes::stride(s.size) * s.count);
    if (!mr_local_) return true;
    fid_mr *mr;
    const int rc = fi_mr_reg(reinterpret_cast<fid_domain *>(domain_.get()), s.bytes.data(), s.bytes.size(),
                             access, 0, 0, 0, &mr, nullptr);
    if (rc) return *err = fail("fi_mr_reg", rc), false;
    s.mr.reset(&mr->fid);
    s.desc = fi_mr_desc(mr);
    return true;
}

bool OfiWire::open_endpoint(Channel ch, fi_info *info, const rttcc_config_t &cfg, std::string *err) {
    Endpoint &e = ep_[ch];
    e.channel = ch;
    auto *domain = reinterpret_cast<fid_domain *>(domain_.get());
    const size_t provider_max = std::min<size_t>(info->ep_attr->max_msg_size, kMaxDatagram);
    e.max_datagram = ch == kCmd ? std::min<size_t>(cfg.cmd_mtu, provider_max) : provider_max;
    const size_t depth = std::max<size_t>(2 * cfg.rx_batch, 64);

    fid_ep *ep;
    fid_cq *tx_cq, *rx_cq;
    fi_cq_attr cq_attr{};
    cq_attr.format = FI_CQ_FORMAT_MSG;
    cq_attr.size = std::max<size_t>(depth, info->tx_attr->size);
    int rc = fi_endpoint(domain, info, &ep, nullptr);
    if (rc) return *err = fail("fi_endpoint", rc), false;
    e.ep.reset(&ep->fid);
    if ((rc = fi_cq_open(domain, &cq_attr, &tx_cq, nullptr))) return *err = fail("fi_cq_open", rc), false;
    e.tx_cq.reset(&tx_cq->fid);
    if ((rc = fi_cq_open(domain, &cq_attr, &rx_cq, nullptr))) return *err = fail("fi_cq_open", rc), false;
    e.rx_cq.reset(&rx_cq->fid);
    if ((rc = fi_ep_bind(ep, &tx_cq->fid, FI_TRANSMIT)) || (rc = fi_ep_bind(ep, &rx_cq->fid, FI_RECV)) ||
        (rc = fi_ep_bind(ep, av_.get(), 0)) || (rc = fi_enable(ep)))
        return *err = fail("binding the endpoint", rc), false;

    e.tx.size = e.rx.size = prefix_ + e.max_datagram;
    e.tx.count = std::min<size_t>(info->tx_attr->size ? info->tx_attr->size : depth, depth);
    e.rx.count = std::min<size_t>(info->rx_attr->size ? info->rx_attr->size : depth, depth);
    if (!register_slots(e.tx, FI_SEND, err) || !register_slots(e.rx, FI_RECV, err)) return false;
    for (size_t i = 0; i < e.tx.count; ++i) e.tx_free.push_back(e.tx.count - 1 - i);
    e.tx_dest.assign(e.tx.count, 0);
    e.unposted.reserve(e.rx.count);
    for (size_t i = 0; i < e.rx.count; ++i)
        if (!post_recv(e, i)) return *err = "fi_recv: cannot post receive buffers", false;

    size_t len = 0;
    fi_getname(&ep->fid, nullptr, &len);
    e.name.resize(len);
    if ((rc = fi_getname(&ep->fid, e.name.data(), &len))) return *err = fail("fi_getname", rc), false;
    e.name.resize(len);
    return true;
}

bool OfiWire::post_recv(Endpoint &e, size_t slot) {
    auto *ep = reinterpret_cast<fid_ep *>(e.ep.get());
    for (;;) {
        const ssize_t rc = fi_recv(ep, e.rx.at(slot), e.rx.size, e.rx.desc, FI_ADDR_UNSPEC, context_of(slot));
        if (rc == 0) return true;
        if (rc != -FI_EAGAIN) return false;
        fi_cq_entry dummy;  // drive the provider's progress, then retry
        fi_cq_read(reinterpret_cast<fid_cq *>(e.rx_cq.get()), &dummy, 0);
    }
}

size_t OfiWire::local_address(Channel ch, void *buf, size_t cap) const {
    const Endpoint &e = ep_[ch];
    const AddressHead h{static_cast<uint32_t>(e.max_datagram), static_cast<uint32_t>(e.name.size())};
    if (cap < sizeof h + e.name.size()) return 0;
    std::memcpy(buf, &h, sizeof h);
    std::memcpy(static_cast<uint8_t *>(buf) + sizeof h, e.name.data(), e.name.size());
    return sizeof h + e.name.size();
}

bool OfiWire::resolve(Channel, const void *addr, size_t len, WireHandle *out, std::string *err) {
    AddressHead h;
    if (len < sizeof h) return *err = "peer published a libfabric address too short", false;
    std::memcpy(&h, addr, sizeof h);
    if (len != sizeof h + h.name_len) return *err = "peer published a corrupt libfabric address", false;
    fi_addr_t fa = FI_ADDR_NOTAVAIL;
    const int rc = fi_av_insert(reinterpret_cast<fid_av *>(av_.get()), static_cast<const uint8_t *>(addr) + sizeof h,
                                1, &fa, 0, nullptr);
    if (rc != 1) return *err = "fi_av_insert refused the peer's address (another provider?)", false;
    if (fa < kMaxTableIndex) {  // FI_AV_TABLE hands out small indices
        if (fa >= peer_max_.size()) peer_max_.resize(fa + 1, 0);
        peer_max_[fa] = h.max_datagram;
    }
    *out = fa;
    return true;
}

size_t OfiWire::path_datagram(const void *data_addr, size_t len) const {
    AddressHead h{};
    if (len >= sizeof h) std::memcpy(&h, data_addr, sizeof h);
    return std::min<size_t>(ep_[kData].max_datagram, h.max_datagram ? h.max_datagram : kMaxDatagram);
}

// A datagram dropped for good: failures() tells the engine where it went and why.
void OfiWire::refuse(const Endpoint &e, WireHandle dest, int error) {
    if (failed_.size() < kMaxFailed) failed_.push_back({dest, error, e.channel});
}

int OfiWire::failures(WireFailure *out, int n) {
    int k = 0;
    for (; k < n && !failed_.empty(); ++k) {
        out[k] = failed_.back();
        failed_.pop_back();
    }
    return k;
}

// Returns finished send slots to the free list; a send the provider failed
// frees its slot too, and is reported (the protocol resends it meanwhile).
void OfiWire::reap_tx(Endpoint &e) {
    fi_cq_msg_entry done[64];
    auto *cq = reinterpret_cast<fid_cq *>(e.tx_cq.get());
    for (;;) {
        const ssize_t n = fi_cq_read(cq, done, 64);
        if (n > 0) {
            size_t slot;
            for (ssize_t i = 0; i < n; ++i)
                if (slot_of(done[i].op_context, &slot)) e.tx_free.push_back(slot);
            continue;
        }
        fi_cq_err_entry ce{};
        if (n != -FI_EAVAIL || fi_cq_readerr(cq, &ce, 0) <= 0) return;
        size_t slot;
        if (!slot_of(ce.op_context, &slot)) continue;  // no send of ours
        e.tx_free.push_back(slot);
        refuse(e, e.tx_dest[slot], ce.err > 0 ? ce.err : FI_EOTHER);
    }
}

int OfiWire::tx_burst(Channel ch, TxDatagram *d, int n) noexcept {
    Endpoint &e = ep_[ch];
    auto *ep = reinterpret_cast<fid_ep *>(e.ep.get());
    reap_tx(e);
    for (int i = 0; i < n; ++i) {
        size_t len = 0;
        for (int k = 0; k < d[i].iovcnt; ++k) len += d[i].iov[k].iov_len;
        const uint32_t peer_max = d[i].dest < peer_max_.size() ? peer_max_[d[i].dest] : 0;
        if (len > e.max_datagram || (peer_max && len > peer_max)) {
            refuse(e, d[i].dest, FI_EMSGSIZE);  // would be cut short: dropped whole
            continue;
        }
        if (e.tx_free.empty()) {
            reap_tx(e);
            if (e.tx_free.empty()) return i;  // queue full: later
        }
        const size_t slot = e.tx_free.back();
        uint8_t *p = e.tx.at(slot) + prefix_;
        size_t at = 0;
        for (int k = 0; k < d[i].iovcnt; ++k) {
            std::memcpy(p + at, d[i].iov[k].iov_base, d[i].iov[k].iov_len);
            at += d[i].iov[k].iov_len;
        }
        e.tx_dest[slot] = d[i].dest;
        const ssize_t rc = fi_send(ep, e.tx.at(slot), prefix_ + len, e.tx.desc, d[i].dest, context_of(slot));
        if (rc == -FI_EAGAIN) {
            reap_tx(e);
            return i;
        }
        if (rc == 0) {
            e.tx_free.pop_back();
        } else {
            refuse(e, d[i].dest, static_cast<int>(-rc));  // refused for good: dropped, the protocol resends
        }
    }
    return n;
}

// Posts the slots waiting for it; one whose post fails (not FI_EAGAIN,
// which post_recv waits out) waits for the next burst, not lost.
void OfiWire::post_unposted(Endpoint &e) {
    size_t kept = 0;
    for (size_t slot : e.unposted)
        if (!post_recv(e, slot)) e.unposted[kept++] = slot;
    e.unposted.resize(kept);
}

int OfiWire::rx_burst(Channel ch, RxDatagram *d, int n) {
    Endpoint &e = ep_[ch];
    if (!e.unposted.empty()) post_unposted(e);
    fi_cq_msg_entry done[64];
    fi_addr_t from[64];
    auto *cq = reinterpret_cast<fid_cq *>(e.rx_cq.get());
    const ssize_t got = has_source_ ? fi_cq_readfrom(cq, done, std::min(n, 64), from)
                                    : fi_cq_read(cq, done, std::min(n, 64));
    if (got == -FI_EAVAIL) {  // a failed receive (e.g. truncated): its buffer goes again
        fi_cq_err_entry ce{};
        size_t slot;
        if (fi_cq_readerr(cq, &ce, 0) > 0 && slot_of(ce.op_context, &slot) && !post_recv(e, slot))
            e.unposted.push_back(slot);
        return 0;
    }
    int out = 0;
    for (ssize_t i = 0; i < got; ++i) {
        size_t slot;
        if (!slot_of(done[i].op_context, &slot)) continue;
        e.unposted.push_back(slot);
        const size_t len = done[i].len >= prefix_ ? done[i].len - prefix_ : 0;
        d[out++] = {e.rx.at(slot) + prefix_, std::min(len, e.max_datagram),
                    has_source_ ? from[i] : WireHandle{0}, 0, TsSource::kNone};
    }
    return out;
}

}  // namespace rttcc
