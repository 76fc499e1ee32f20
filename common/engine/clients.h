// Who hears what the engine delivers.  The creator's callbacks get every
// message tag, unless another client of the same engine (coll_rttcc beside
// the BTL) attached to that tag: then its messages, puts and send
// completions go to that client.  Dead-peer news goes to every live client,
// the attached ones first (newest first) and the creator last: the creator
// (the BTL or MTL) may end the job on it, so what the others built on its
// peers is torn down before.
//
// Lookups are lock-free (one atomic load per delivery): a tag names a slot,
// slots never move, and a slot is filled before a tag is pointed at it.
// Slots are not reused; a detached tag points at the deaf slot, whose
// deliveries are dropped (late messages of a client that went away).
#pragma once
#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>

#include "rttcc/engine.h"

namespace rttcc {

class ClientTable {
public:
    static constexpr uint8_t kCreator = 0;
    static constexpr uint8_t kDeaf = 1;
    static constexpr uint8_t kSlots = 8;  // creator, deaf, and six attaches per engine

    explicit ClientTable(const rttcc_callbacks_t &creator) {
        slots_[kCreator] = creator;
        live_[kCreator] = true;
        for (auto &t : owner_) t.store(kCreator, std::memory_order_relaxed);
    }

    // The callbacks of the client that owns `tag`.
    const rttcc_callbacks_t &of(uint8_t tag) const { return slots_[owner_[tag].load(std::memory_order_acquire)]; }
    const rttcc_callbacks_t &creator() const { return slots_[kCreator]; }

    // RTTCC_ERR_BUSY if the tag is attached already or every slot was used.
    int attach(uint8_t tag, const rttcc_callbacks_t &cb) {
        std::lock_guard<std::mutex> g(mu_);
        if (owner_[tag].load(std::memory_order_relaxed) != kCreator || used_ == kSlots) return RTTCC_ERR_BUSY;
        slots_[used_] = cb;
        live_[used_].store(true, std::memory_order_relaxed);
        owner_[tag].store(used_++, std::memory_order_release);
        return RTTCC_OK;
    }
    // RTTCC_ERR_ARG if the tag is not attached.
    int detach(uint8_t tag) {
        std::lock_guard<std::mutex> g(mu_);
        const uint8_t s = owner_[tag].load(std::memory_order_relaxed);
        if (s == kCreator || s == kDeaf) return RTTCC_ERR_ARG;
        owner_[tag].store(kDeaf, std::memory_order_release);
        live_[s].store(false, std::memory_order_relaxed);
        return RTTCC_OK;
    }

    // f(callbacks) for every attached client, newest first, then the creator.
    template <typename F>
    void for_each_live(F f) const {
        for (uint8_t s = kSlots; s-- > 0;)
            if (s != kDeaf && live_[s].load(std::memory_order_acquire)) f(slots_[s]);
    }

private:
    std::array<rttcc_callbacks_t, kSlots> slots_{};       // [kDeaf] stays all null
    std::array<std::atomic<bool>, kSlots> live_{};        // attached and not detached
    std::array<std::atomic<uint8_t>, 256> owner_;         // slot of each tag
    uint8_t used_ = 2;                                    // slots filled so far
    std::mutex mu_;                                       // attach/detach
};

}  // namespace rttcc
