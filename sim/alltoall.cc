#include "alltoall.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "exchange/exchange.h"

namespace rttcc::sim {

namespace {

constexpr uint8_t kExchangeTag = 0x21;  // coll_rttcc's hub
constexpr uint8_t kTunedTag = 0x22;     // tuned's algorithms' messages

// One rank's side of the call, driven after each of its engine's passes.
class RankCall {
public:
    RankCall(Job &job, uint32_t rank, size_t block)
        : job_(job), rank_(rank), ranks_(static_cast<uint32_t>(job.size())), block_(block) {}
    virtual ~RankCall() = default;
    RankCall(const RankCall &) = delete;
    RankCall &operator=(const RankCall &) = delete;

    virtual void start() = 0;
    virtual void progress() = 0;
    // Bytes of what it ended with that are not what was sent to it.
    virtual uint64_t corrupt() const = 0;

    bool ended() const { return ended_; }
    bool failed() const { return failed_; }
    nanos end() const { return end_; }

protected:
    Engine &engine() { return job_.rank(rank_).host->engine(); }
    void finish(bool ok) {
        ended_ = true;
        failed_ = !ok;
        end_ = job_.events().now();
    }
    // The blocks to every peer, laid out by destination (self's left empty).
    std::vector<uint8_t> blocks_by_destination() const {
        std::vector<uint8_t> b(ranks_ * block_);
        for (uint32_t to = 0; to < ranks_; ++to)
            if (to != rank_)
                for (size_t i = 0; i < block_; ++i) b[to * block_ + i] = block_byte(rank_, to, i);
        return b;
    }
    // Wrong bytes of a landing area laid out by origin.
    uint64_t corrupt_by_origin(const std::vector<uint8_t> &land) const {
        uint64_t bad = 0;
        for (uint32_t from = 0; from < ranks_; ++from)
            if (from != rank_)
                for (size_t i = 0; i < block_; ++i) bad += land[from * block_ + i] != block_byte(from, rank_, i);
        return bad;
    }

    Job &job_;
    const uint32_t rank_, ranks_;
    const size_t block_;

private:
    bool ended_ = false, failed_ = false;
    nanos end_ = 0;
};

// coll_rttcc's exchange over this rank's engine.
class RttccCall final : public RankCall {
public:
    RttccCall(Job &job, uint32_t rank, size_t block, const rttcc_exchange_params_t &xp)
        : RankCall(job, rank, block), send_(blocks_by_destination()), land_(ranks_ * block_) {
        std::shared_ptr<ExchangeHub> &hub = job.rank(rank).hub;
        if (!hub) {
            int rc = RTTCC_ERR;
            hub = std::make_shared<ExchangeHub>(job.rank(rank).host->shared_engine(), kExchangeTag, &rc);
            if (rc != RTTCC_OK) throw std::runtime_error("cannot attach the exchange hub");
        }
        hub_ = hub;
        call_ = std::make_unique<Exchange>(*hub_, xp);
        peers_.resize(ranks_);
        for (uint32_t j = 0; j < ranks_; ++j) {
            const size_t n = j == rank_ ? 0 : block_;
            peers_[j] = rttcc_xpeer_t{j, send_.data() + j * block_, n, j * block_, n};
        }
    }
    ~RttccCall() override {
        call_.reset();  // before its hub
    }

    // begin() only sets the call up: its RTRs (and eager blocks) go out from
    // progress(), at once as coll_rttcc's alltoall calls it, not a tick later.
    void start() override {
        if (call_->begin(1, 1, rank_, ranks_, peers_.data(), land_.data(), land_.size()) != RTTCC_OK) {
            finish(false);
            return;
        }
        progress();
    }
    void progress() override {
        if (ended()) return;
        const int rc = call_->progress();
        if (rc != RTTCC_OK) finish(rc == RTTCC_DONE);
    }
    uint64_t corrupt() const override { return corrupt_by_origin(land_); }

private:
    std::vector<uint8_t> send_, land_;
    std::vector<rttcc_xpeer_t> peers_;
    std::shared_ptr<ExchangeHub> hub_;
    std::unique_ptr<Exchange> call_;
};

class TunedCall;

}  // namespace

// kTunedTag on one rank's engine, attached by its first tuned alltoall (a
// detached tag is never attached again), passing what comes to the call
// running now.  Alltoalls follow each other as after a barrier: every
// message of one was delivered before the next starts.
class TunedPort {
public:
    explicit TunedPort(Engine &engine) : engine_(engine) {
        const rttcc_callbacks_t cb{this, on_recv, on_send_done, on_dead, nullptr, nullptr};
        if (engine.attach(kTunedTag, cb) != RTTCC_OK) throw std::runtime_error("cannot attach tuned's tag");
    }
    ~TunedPort() { engine_.detach(kTunedTag); }
    TunedPort(const TunedPort &) = delete;
    TunedPort &operator=(const TunedPort &) = delete;
    TunedCall *call = nullptr;

private:
    static void on_recv(void *u, uint32_t peer, uint8_t, const void *d, size_t len);
    static void on_send_done(void *u, void *, int status);
    static void on_dead(void *u, uint32_t, const char *);
    Engine &engine_;
};

namespace {

// What tuned's algorithms share: messages on kTunedTag, zero-copy sends
// counted as they are ACKed.
class TunedCall : public RankCall {
public:
    TunedCall(Job &job, uint32_t rank, size_t block) : RankCall(job, rank, block) {
        std::shared_ptr<TunedPort> &port = job.rank(rank).tuned;
        if (!port) port = std::make_shared<TunedPort>(engine());
        port_ = port;
        port_->call = this;
    }
    ~TunedCall() override { port_->call = nullptr; }

protected:
    // Sends `len` bytes at `data` (kept alive by the caller until acknowledged).
    void send(uint32_t to, const uint8_t *data, size_t len) {
        iovec iov{const_cast<uint8_t *>(data), len};
        const int rc = engine().send(to, kTunedTag, &iov, 1, this);
        if (rc == RTTCC_DONE)
            ++sends_done_;
        else if (rc != RTTCC_OK)
            finish(false);
    }
    virtual void received(uint32_t from, const uint8_t *data, size_t len) = 0;

    uint64_t sends_done_ = 0;

private:
    friend class ::rttcc::sim::TunedPort;
    std::shared_ptr<TunedPort> port_;
};

}  // namespace

void TunedPort::on_recv(void *u, uint32_t peer, uint8_t, const void *d, size_t len) {
    if (TunedCall *c = static_cast<TunedPort *>(u)->call) c->received(peer, static_cast<const uint8_t *>(d), len);
}

void TunedPort::on_send_done(void *u, void *, int status) {
    TunedCall *c = static_cast<TunedPort *>(u)->call;
    if (!c) return;
    if (status == RTTCC_OK)
        ++c->sends_done_;
    else
        c->finish(false);
}

void TunedPort::on_dead(void *u, uint32_t, const char *) {
    if (TunedCall *c = static_cast<TunedPort *>(u)->call) c->finish(false);
}

namespace {

// Pairwise and linear: one message per ordered pair, landing by origin.
class DirectCall final : public TunedCall {
public:
    DirectCall(Job &job, uint32_t rank, size_t block, bool pairwise)
        : TunedCall(job, rank, block), pairwise_(pairwise), send_(blocks_by_destination()),
          land_(ranks_ * block_), got_(ranks_, false) {}

    void start() override {
        if (!pairwise_) {
            for (uint32_t s = 1; s < ranks_; ++s) send(peer_at(s), &send_[peer_at(s) * block_], block_);
        } else if (ranks_ > 1) {
            send(peer_at(1), &send_[peer_at(1) * block_], block_);
        }
        progress();
    }
    void progress() override {
        if (ended()) return;
        if (!pairwise_) {
            if (sends_done_ == ranks_ - 1u && arrivals_ == ranks_ - 1u) finish(true);
            return;
        }
        // Step s is done once its send was ACKed and rank - s's block is in.
        while (step_ < ranks_ && sends_done_ >= step_ && got_[(rank_ + ranks_ - step_) % ranks_]) {
            if (++step_ < ranks_) send(peer_at(step_), &send_[peer_at(step_) * block_], block_);
        }
        if (step_ >= ranks_) finish(true);
    }
    uint64_t corrupt() const override {
        uint64_t bad = corrupt_by_origin(land_) + stray_bytes_;
        for (uint32_t from = 0; from < ranks_; ++from)
            if (from != rank_ && !got_[from]) bad += block_;
        return bad;
    }

private:
    uint32_t peer_at(uint32_t step) const { return (rank_ + step) % ranks_; }
    void received(uint32_t from, const uint8_t *data, size_t len) override {
        if (from >= ranks_ || got_[from] || len != block_) {
            stray_bytes_ += len;
            return;
        }
        std::memcpy(&land_[from * block_], data, len);
        got_[from] = true;
        ++arrivals_;
    }

    const bool pairwise_;
    std::vector<uint8_t> send_, land_;
    std::vector<bool> got_;
    uint32_t arrivals_ = 0, step_ = 1;
    uint64_t stray_bytes_ = 0;  // bytes of messages not expected (a second one, or the wrong size)
};

// Bruck's: blocks travel by powers of two, several to a message.  A
// message is [round, count, (from, to) * count] as uint32s, then the blocks.
class BruckCall final : public TunedCall {
public:
    BruckCall(Job &job, uint32_t rank, size_t block) : TunedCall(job, rank, block) {
        for (uint32_t to = 0; to < ranks_; ++to) {
            Held h{rank_, to, std::vector<uint8_t>(block_)};
            for (size_t i = 0; i < block_; ++i) h.bytes[i] = block_byte(rank_, to, i);
            held_.push_back(std::move(h));
        }
        while ((1u << rounds_) < ranks_) ++rounds_;
        inbox_.resize(rounds_);
    }

    void start() override {
        send_round();
        progress();
    }
    void progress() override {
        while (!ended() && round_ < rounds_ && sends_done_ > round_ && !inbox_[round_].empty()) {
            take(inbox_[round_]);
            inbox_[round_].clear();
            ++round_;
            send_round();
        }
        if (!ended() && round_ >= rounds_) finish(true);
    }
    uint64_t corrupt() const override {
        uint64_t bad = 0;
        std::vector<bool> have(ranks_, false);
        for (const Held &h : held_) {
            if (h.to != rank_ || h.from >= ranks_ || have[h.from]) {
                bad += h.bytes.size();
                continue;
            }
            have[h.from] = true;
            for (size_t i = 0; i < block_; ++i) bad += h.bytes[i] != block_byte(h.from, rank_, i);
        }
        for (uint32_t from = 0; from < ranks_; ++from) bad += have[from] ? 0 : block_;
        return bad;
    }

private:
    struct Held {
        uint32_t from, to;
        std::vector<uint8_t> bytes;
    };

    // Round round_'s message: the held blocks whose distance to their
    // destination has bit round_ set go to rank + 2^round_.
    void send_round() {
        if (round_ >= rounds_) return;
        const uint32_t bit = 1u << round_;
        const auto go = std::stable_partition(held_.begin(), held_.end(), [&](const Held &h) {
            return !(((h.to + ranks_ - rank_) % ranks_) & bit);  // stays
        });
        std::vector<uint32_t> head{round_, static_cast<uint32_t>(held_.end() - go)};
        for (auto h = go; h != held_.end(); ++h) {
            head.push_back(h->from);
            head.push_back(h->to);
        }
        auto msg = std::make_unique<std::vector<uint8_t>>(head.size() * 4 + head[1] * block_);
        std::memcpy(msg->data(), head.data(), head.size() * 4);
        size_t at = head.size() * 4;
        for (auto h = go; h != held_.end(); ++h, at += block_) std::memcpy(msg->data() + at, h->bytes.data(), block_);
        held_.erase(go, held_.end());
        outbox_.push_back(std::move(msg));
        send((rank_ + bit) % ranks_, outbox_.back()->data(), outbox_.back()->size());
    }
    void take(const std::vector<uint8_t> &m) {
        uint32_t count;
        std::memcpy(&count, m.data() + 4, 4);
        const size_t blocks_at = 8 + size_t{count} * 8;
        for (uint32_t k = 0; k < count; ++k) {
            Held h;
            std::memcpy(&h.from, m.data() + 8 + 8 * k, 4);
            std::memcpy(&h.to, m.data() + 12 + 8 * k, 4);
            h.bytes.assign(m.begin() + blocks_at + k * block_, m.begin() + blocks_at + (k + 1) * block_);
            held_.push_back(std::move(h));
        }
    }
    void received(uint32_t, const uint8_t *data, size_t len) override {
        uint32_t round = 0, count = 0;
        if (len >= 8) {
            std::memcpy(&round, data, 4);
            std::memcpy(&count, data + 4, 4);
        }
        if (len < 8 || round >= rounds_ || len != 8 + size_t{count} * (8 + block_) || !inbox_[round].empty()) {
            finish(false);  // not a message of this call
            return;
        }
        inbox_[round].assign(data, data + len);
    }

    std::vector<Held> held_;
    std::vector<std::vector<uint8_t>> inbox_;  // each round's message, once in
    std::vector<std::unique_ptr<std::vector<uint8_t>>> outbox_;  // sent, read by the engine until ACKed
    uint32_t rounds_ = 0, round_ = 0;
};

std::unique_ptr<RankCall> make_call(Job &job, uint32_t rank, AlltoallAlgo algo, size_t block,
                                    const rttcc_exchange_params_t &xp) {
    switch (algo) {
        case AlltoallAlgo::kRttcc:
            return std::make_unique<RttccCall>(job, rank, block, xp);
        case AlltoallAlgo::kPairwise:
            return std::make_unique<DirectCall>(job, rank, block, true);
        case AlltoallAlgo::kLinear:
            return std::make_unique<DirectCall>(job, rank, block, false);
        case AlltoallAlgo::kBruck:
            return std::make_unique<BruckCall>(job, rank, block);
    }
    return nullptr;
}

}  // namespace

bool alltoall_algo_named(const std::string &name, AlltoallAlgo *out) {
    for (AlltoallAlgo a : {AlltoallAlgo::kRttcc, AlltoallAlgo::kPairwise, AlltoallAlgo::kLinear, AlltoallAlgo::kBruck})
        if (name == alltoall_algo_name(a)) {
            *out = a;
            return true;
        }
    return false;
}

const char *alltoall_algo_name(AlltoallAlgo a) {
    switch (a) {
        case AlltoallAlgo::kRttcc:
            return "rttcc";
        case AlltoallAlgo::kPairwise:
            return "pairwise";
        case AlltoallAlgo::kLinear:
            return "linear";
        case AlltoallAlgo::kBruck:
            return "bruck";
    }
    return "?";
}

uint64_t bruck_largest_message(size_t ranks, size_t block) {
    uint64_t most = 0;
    for (size_t bit = 1; bit < ranks; bit <<= 1) {
        uint64_t blocks = 0;  // distances in [0, ranks) with this bit set
        for (size_t d = 0; d < ranks; ++d) blocks += (d & bit) != 0;
        most = std::max<uint64_t>(most, 8 + blocks * (8 + uint64_t{block}));
    }
    return most;
}

uint64_t alltoall_memory_bytes(size_t ranks, size_t block, AlltoallAlgo algo) {
    double copies = 2.5;
    if (algo == AlltoallAlgo::kLinear) copies = 4.5;
    if (algo == AlltoallAlgo::kBruck) {
        uint32_t rounds = 0;
        while ((size_t{1} << rounds) < ranks) ++rounds;
        copies = 2.5 + rounds;
    }
    const double pairs = static_cast<double>(ranks) * static_cast<double>(ranks - 1);
    return static_cast<uint64_t>(32e6 + pairs * (6144 + copies * static_cast<double>(block)));
}

AlltoallResult run_alltoall(Job &job, AlltoallAlgo algo, size_t block, const rttcc_exchange_params_t &xp,
                            nanos limit) {
    const size_t n = job.size();
    std::vector<std::shared_ptr<RankCall>> calls;
    for (uint32_t r = 0; r < n; ++r) calls.push_back(make_call(job, r, algo, block, xp));
    const nanos start = job.events().now();
    for (uint32_t r = 0; r < n; ++r) {
        RankCall *c = calls[r].get();
        job.rank(r).host->after_progress = [c] { c->progress(); };
    }
    for (auto &c : calls) c->start();
    for (uint32_t r = 0; r < n; ++r) job.rank(r).host->wake();  // polls from now on
    size_t running = 0;  // calls before it have ended (and stay so)
    auto all_ended = [&] {
        while (running < n && calls[running]->ended()) ++running;
        return running == n;
    };
    AlltoallResult res;
    res.finished = job.run_until(all_ended, limit);
    for (uint32_t r = 0; r < n; ++r) {
        job.rank(r).host->after_progress = nullptr;
        const RankCall &c = *calls[r];
        res.rank_end.push_back(c.ended() ? c.end() - start : 0);
        res.completion = std::max(res.completion, res.rank_end.back());
        res.errors += c.failed();
        res.corrupt_bytes += c.corrupt();
        if (!res.finished) job.keep(calls[r]);  // an engine may still read its buffers
    }
    return res;
}

}  // namespace rttcc::sim
