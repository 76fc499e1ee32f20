// The per-peer RTT table: one row per peer, written by the engine (under
// its state lock) and read without locks by anyone (MPI_T, coll_rttcc, the
// finalize dump, other threads).
//
// Each row is a seqlock:
//
//   writer: seq odd -> store fields -> seq even        (one writer at a time)
//   reader: s1 = seq (even?) -> load fields -> s2 = seq; retry unless s1 == s2
//
// Fields are relaxed atomics, so a torn read is impossible by the memory
// model, and a reader that raced a writer simply retries.  Rows live in
// fixed chunks that are never moved or freed while the table lives, so a
// reader may hold a row pointer across calls.
#pragma once
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>

#include "rttcc/engine.h"

namespace rttcc {

// One consistent snapshot of a row: the C struct of rttcc/engine.h.
using RttRowData = rttcc_rtt_row_t;

class alignas(64) RttRow {
public:
    static constexpr size_t kWords = sizeof(RttRowData) / sizeof(uint64_t);
    static_assert(sizeof(RttRowData) % sizeof(uint64_t) == 0, "the row is a whole number of words");

    void write(const RttRowData &d) {
        uint64_t w[kWords];
        std::memcpy(w, &d, sizeof d);
        const uint32_t s = seq_.load(std::memory_order_relaxed);
        seq_.store(s + 1, std::memory_order_relaxed);  // odd: a write is under way
        std::atomic_thread_fence(std::memory_order_release);
        for (size_t i = 0; i < kWords; ++i) words_[i].store(w[i], std::memory_order_relaxed);
        seq_.store(s + 2, std::memory_order_release);  // even again: consistent
    }

    // A consistent copy; false if the row was never written.
    bool read(RttRowData *out) const {
        uint64_t w[kWords];
        for (;;) {
            const uint32_t s1 = seq_.load(std::memory_order_acquire);
            if (s1 & 1u) continue;  // a writer is inside
            for (size_t i = 0; i < kWords; ++i) w[i] = words_[i].load(std::memory_order_relaxed);
            std::atomic_thread_fence(std::memory_order_acquire);
            if (seq_.load(std::memory_order_relaxed) != s1) continue;
            if (s1 == 0) return false;
            std::memcpy(out, w, sizeof *out);
            return true;
        }
    }

private:
    std::atomic<uint32_t> seq_{0};         // even: stable; odd: being written; 0: never written
    std::atomic<uint64_t> words_[kWords];  // the row's fields (RttRowData), word by word
};

// Rows by peer index, in chunks allocated on first use.
class RttTable {
public:
    static constexpr uint32_t kChunkRows = 1024;  // rows per chunk (power of two)
    static constexpr uint32_t kChunks = 16384;    // chunk slots: 16M peers

    RttTable()
        : chunks_(std::make_unique<std::atomic<RttRow *>[]>(kChunks)),
          owned_(std::make_unique<std::unique_ptr<RttRow[]>[]>(kChunks)) {
        for (uint32_t i = 0; i < kChunks; ++i) chunks_[i].store(nullptr, std::memory_order_relaxed);
    }
    RttTable(const RttTable &) = delete;
    RttTable &operator=(const RttTable &) = delete;

    // The row of a peer, created on first use (writers only); nullptr past the end.
    RttRow *row(uint32_t peer) {
        if (peer >= kChunkRows * kChunks) return nullptr;
        std::atomic<RttRow *> &slot = chunks_[peer / kChunkRows];
        RttRow *chunk = slot.load(std::memory_order_acquire);
        if (!chunk) {
            std::lock_guard<std::mutex> g(grow_mu_);
            chunk = slot.load(std::memory_order_relaxed);
            if (!chunk) {
                owned_[peer / kChunkRows] = std::make_unique<RttRow[]>(kChunkRows);
                chunk = owned_[peer / kChunkRows].get();
                slot.store(chunk, std::memory_order_release);
            }
        }
        return &chunk[peer % kChunkRows];
    }

    // Lock-free read of a peer's row; false if it was never written.
    bool read(uint32_t peer, RttRowData *out) const {
        if (peer >= kChunkRows * kChunks) return false;
        const RttRow *chunk = chunks_[peer / kChunkRows].load(std::memory_order_acquire);
        return chunk && chunk[peer % kChunkRows].read(out);
    }

private:
    std::unique_ptr<std::atomic<RttRow *>[]> chunks_;  // chunk pointers for readers, set once each
    std::unique_ptr<std::unique_ptr<RttRow[]>[]> owned_;  // the chunks themselves (writers only)
    std::mutex grow_mu_;                               // serialises chunk creation
};

}  // namespace rttcc
