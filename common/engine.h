// The engine: one per process.  It ties the wire, the peers, the hotel and
// the batches together.  Its work is split by protocol concern:
//   engine.cc         lifetime, peers, the public calls, progress loop
//   engine_tx.cc      cutting messages into segments, transmission, batching
//   engine_rx.cc      receiving: validation, sequence check, delivery, reassembly
//   engine_ack.cc     ACKs: sending (piggy-backed or delayed), processing, fast retransmit
//   engine_loss.cc    retransmission timeouts, backoff, dead peers
#pragma once
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "clock.h"
#include "hotel.h"
#include "peer.h"
#include "pool.h"
#include "rttcc_config.h"
#include "rttcc_engine.h"
#include "wire.h"
#include "wire_format.h"

namespace rttcc {

// A mutex that is only taken when the engine is shared between threads.
class MaybeMutex {
public:
    explicit MaybeMutex(bool enabled) : enabled_(enabled) {}
    void lock() {
        if (enabled_) mu_.lock();
    }
    void unlock() {
        if (enabled_) mu_.unlock();
    }
    bool try_lock() { return !enabled_ || mu_.try_lock(); }

private:
    bool enabled_;
    std::mutex mu_;
};

class Engine {
public:
    static constexpr uint32_t kMaxPeers = 1u << 24;  // process indices the engine accepts

    Engine(const rttcc_config_t &config, const rttcc_callbacks_t &callbacks,
           std::unique_ptr<Wire> wire);
    ~Engine();
    Engine(const Engine &) = delete;
    Engine &operator=(const Engine &) = delete;

    const char *wire_name() const { return wire_->name(); }
    size_t local_address(void *buf, size_t cap) const;
    bool add_peer(uint32_t index, const void *addr, size_t len, std::string *err);

    // rttcc_engine_send / rttcc_engine_send_now.
    int send(uint32_t peer, uint8_t tag, const iovec *iov, int iovcnt, void *cookie);
    int send_now(uint32_t peer, uint8_t tag, size_t len, rttcc_fill_fn fill, void *ctx);
    int progress();
    bool drain(unsigned timeout_ms);

    rttcc_stats_t stats() const;
    bool peer_stats(uint32_t index, rttcc_stats_t *out) const;
    bool peer_rtt(uint32_t index, rttcc_rtt_t *out) const;
    const Peer *peer(uint32_t index) const {
        return index < peers_.size() ? peers_[index].get() : nullptr;
    }
    size_t peer_memory(uint32_t index) const;
    const rttcc_config_t &config() const { return cfg_; }

private:
    struct TxBatch {
        std::vector<TxDatagram> dgrams;     // datagrams ready to send
        std::vector<PacketHeader> headers;  // their headers (dgrams[i].iov[0])
        std::vector<TxSegment *> segs;      // their segment, nullptr for a standalone ACK
        std::vector<Peer *> peers;          // their destination
        size_t count = 0;
    };
    struct Completion {
        void *cookie;
        int status;
    };
    struct DeadPeer {
        uint32_t peer;
        std::string why;
    };

    // engine_tx.cc
    int submit(uint32_t peer, TxMessage &m, bool only_if_open, rttcc_fill_fn fill, void *ctx);
    bool has_room(const Peer &p, const TxMessage &m) const;
    void pump(Peer &p, nanos now, uint32_t budget);
    void serve_sends(nanos now);
    void cut_segment(Peer &p, TxMessage &m, nanos now);
    void transmit(TxSegment &seg, nanos now);
    PacketHeader &stage(Channel ch, Peer &p, TxSegment *seg);
    void flush(Channel ch);
    void flush_all();
    void fill_payload(TxDatagram &d, const TxMessage &m, uint32_t offset, uint32_t len) const;
    void finish_message(TxMessage &m, int status);
    void release_segment(TxSegment &seg, int status);
    Channel channel_for(const TxMessage &m) const;

    // engine_rx.cc
    int receive(Channel ch, nanos now, int *got);
    bool handle_datagram(Channel ch, const RxDatagram &d, nanos now);
    Peer *sender_of(Channel ch, const RxDatagram &d, const PacketHeader **h);
    bool accept_segment(Peer &p, const PacketHeader &h, nanos now);

    // engine_ack.cc
    void owe_ack(Peer &p, const PacketHeader &h, nanos now, bool at_once);
    void put_ack(Peer &p, PacketHeader &h, nanos now);
    void send_ack(Peer &p, nanos now);
    void send_due_acks(nanos now);
    void process_ack(Peer &p, const PacketHeader &h, nanos now);
    void sample_rtt(Peer &p, const PacketHeader &h, nanos now);
    void fast_retransmit(Peer &p, nanos now);

    // engine_loss.cc
    nanos rto(const TxSegment &seg) const;
    void expire_timers(nanos now);
    void serve_resends(nanos now);
    void declare_dead(Peer &p, nanos now, const TxSegment &oldest);

    // Runs callbacks collected under the lock, with the lock released;
    // returns how many send completions it reported.
    int run_callbacks();

    rttcc_config_t cfg_;                 // tunables (strings not kept)
    rttcc_callbacks_t cb_;               // the caller's callbacks
    std::unique_ptr<Wire> wire_;         // where datagrams go
    bool verify_source_;                 // the wire names senders: check them
    uint32_t cmd_payload_;               // payload bytes per command-channel datagram
    std::vector<std::unique_ptr<Peer>> peers_;  // by caller's index; null where unknown

    Pool<TxMessage> messages_;           // message descriptors
    Pool<TxSegment> segments_;           // segment descriptors
    BufferPool inline_buffers_;          // copies of small messages
    BufferPool reassembly_buffers_;      // whole-message buffers for chunked receives
    Hotel hotel_;                        // retransmission timers
    List<TxSegment, &TxSegment::link> resends_;  // due for retransmission, served first
    List<Peer, &Peer::sends_link> sends_;        // peers with messages to cut and room to send
    List<Peer, &Peer::ack_link> acks_;           // peers owing a delayed ACK, oldest first
    TxBatch batch_[kChannels];           // datagrams staged per channel
    std::vector<RxDatagram> rx_;         // datagrams of the current receive burst
    bool wire_full_ = false;             // the wire refused a datagram since the last progress
    RttEstimator::Params rtt_params_;    // for every peer's estimator

    std::vector<Completion> completions_;  // on_send_done calls to make
    std::vector<Completion> spare_completions_;  // recycled storage for completions_
    std::vector<DeadPeer> dead_;           // on_peer_dead calls to make
    std::vector<uint32_t> unknown_;        // on_unknown_peer calls to make
    std::vector<bool> asked_;              // unknown senders already reported
    rttcc_stats_t stats_ = {};             // engine-wide counters
    mutable MaybeMutex state_mu_;          // guards everything above
    MaybeMutex rx_mu_;                     // one thread receives at a time (owns rx buffers)
};

}  // namespace rttcc
