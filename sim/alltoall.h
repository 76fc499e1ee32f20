// One alltoall at packet level: every rank sends one block to every other.
//
//   rttcc      coll_rttcc's data path itself: the real Exchange (RTRs, puts
//              ordered by the PeerScheduler's policy from the RTT table,
//              eager blocks, grants) on each rank's real engine
//   pairwise   tuned's pairwise: P - 1 steps, step s sends to rank + s and
//              receives from rank - s, the next step once both are done
//   linear     tuned's basic linear: every send and receive posted at once
//   bruck      Bruck's: ceil(log2 P) rounds; round k sends every held block
//              whose distance to its destination has bit k set to rank + 2^k,
//              the next round once its own send and its receive are done
//
// A block's bytes name its origin and destination (block_byte), so a block
// delivered to the wrong rank, or a wrong byte, counts as corrupt.  The
// copies Bruck makes cost no virtual time (the model charges no CPU).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "job.h"
#include "rttcc/exchange.h"

namespace rttcc::sim {

enum class AlltoallAlgo { kRttcc, kPairwise, kLinear, kBruck };

// "rttcc", "pairwise", "linear", "bruck"; false for another name.
bool alltoall_algo_named(const std::string &name, AlltoallAlgo *out);
const char *alltoall_algo_name(AlltoallAlgo a);

struct AlltoallResult {
    bool finished = false;        // every rank ended within the limit
    nanos completion = 0;         // the last rank's end, from the start
    std::vector<nanos> rank_end;  // each rank's, from the start (0: not ended)
    uint64_t corrupt_bytes = 0;   // bytes not as sent, or blocks not delivered whole
    uint64_t errors = 0;          // ranks whose call ended in an error
};

// Byte i of the block `from` sends `to`.
inline uint8_t block_byte(uint32_t from, uint32_t to, size_t i) {
    return static_cast<uint8_t>(from * 131 + to * 29 + i * 7 + (i >> 9));
}

// The largest message Bruck's algorithm sends on `ranks` ranks: a round's
// header and the blocks whose distance to their destination has its bit
// set, with their (from, to) (the engine refuses one above max_message).
uint64_t bruck_largest_message(size_t ranks, size_t block);

// About the most memory a packet-level job of `ranks` running this alltoall
// holds (rttcc_sim alltoall's peak RSS, measured at 32 to 512 ranks): 32 MB,
// and per ordered pair of ranks 6 KB (its engines' peer state, the hub, the
// fabric's routes) and the block's copies: the sender's and the landing
// area (2.5 blocks; linear's reassembly buffers, all at once, 4.5;
// Bruck's held blocks and kept messages 2.5 + its rounds).
uint64_t alltoall_memory_bytes(size_t ranks, size_t block, AlltoallAlgo algo);

// Runs one alltoall of `block` bytes per ordered pair on every rank of
// `job`, started at once; `xp` configures the rttcc algorithm (its
// policy and tunables).  Gives up after `limit` of virtual time.
AlltoallResult run_alltoall(Job &job, AlltoallAlgo algo, size_t block, const rttcc_exchange_params_t &xp,
                            nanos limit);

}  // namespace rttcc::sim
