/* Dynamic windows whose memory changes inside one passive epoch, as a
 * PGAS runtime's heap does: every rank but the last holds MPI_Win_lock_all
 * from start to end, and the last rank (the target) detaches its region
 * and attaches memory again between rounds.  Each round the target sends
 * every origin the address to use; the origin puts its pattern there, gets
 * it back, adds to a counter beside it (accumulate), flushes, and reports.
 * The target checks every byte and the counter, then changes its memory:
 *
 *   same       the same buffer detached and attached again (a new
 *              exposure at the old address: what free and malloc of the
 *              same size usually give);
 *   wider      a larger region that holds the old one's bytes at the same
 *              addresses;
 *   moved      another buffer at another address.
 *
 * An origin may still name the region it looked up in an earlier round:
 * its operations must land in what is attached now, never be lost, never
 * stall (each round is bounded by the job's timeout).
 *
 *   reattach [-rounds 30]
 */
#include "osctest.h"

enum { BYTES = 4096, SLOT = BYTES + 64, ADDR_TAG = 11, DONE_TAG = 12 };

static void origin(MPI_Win win, int rank, int target, int rounds)
{
    unsigned char out[BYTES], in[BYTES], want[BYTES];
    const int64_t one = 1;
    OT(MPI_Win_lock_all(0, win));
    for (int r = 0; r < rounds; ++r) {
        MPI_Aint at;
        OT(MPI_Recv(&at, 1, MPI_AINT, target, ADDR_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_Aint mine = MPI_Aint_add(at, (MPI_Aint) rank * SLOT);
        mt_fill(out, sizeof out, rank, target, r);
        OT(MPI_Put(out, BYTES, MPI_BYTE, target, mine, BYTES, MPI_BYTE, win));
        OT(MPI_Win_flush(target, win));
        OT(MPI_Get(in, BYTES, MPI_BYTE, target, mine, BYTES, MPI_BYTE, win));
        OT(MPI_Accumulate(&one, 1, MPI_INT64_T, target, MPI_Aint_add(mine, BYTES), 1, MPI_INT64_T, MPI_SUM, win));
        OT(MPI_Win_flush(target, win));
        memcpy(want, out, sizeof want);
        ot_check(in, want, sizeof in, "round %d: the get from rank %d", r, target);
        OT(MPI_Send(&r, 1, MPI_INT, target, DONE_TAG, MPI_COMM_WORLD));
    }
    OT(MPI_Win_unlock_all(win));
}

static void target_side(MPI_Win win, int nprocs, int rounds)
{
    const size_t region = (size_t) (nprocs - 1) * SLOT;
    /* One block that every shape fits in: regions at block + region and
     * at block + 2 region + 128 in turn, widened by 32 bytes each side. */
    unsigned char *block = mt_alloc(4 * region);
    unsigned char *base = block + region;
    size_t len = region;
    OT(MPI_Win_attach(win, base, (MPI_Aint) len));
    for (int r = 0; r < rounds; ++r) {
        memset(base, 0, len);
        MPI_Aint at;
        OT(MPI_Get_address(base, &at));
        for (int o = 0; o < nprocs - 1; ++o) {
            OT(MPI_Send(&at, 1, MPI_AINT, o, ADDR_TAG, MPI_COMM_WORLD));
        }
        for (int o = 0; o < nprocs - 1; ++o) {
            int round;
            OT(MPI_Recv(&round, 1, MPI_INT, o, DONE_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        }
        for (int o = 0; o < nprocs - 1; ++o) {
            unsigned char want[BYTES];
            int64_t count;
            mt_fill(want, sizeof want, o, nprocs - 1, r);
            ot_check(base + (size_t) o * SLOT, want, BYTES, "round %d: the put from rank %d", r, o);
            memcpy(&count, base + (size_t) o * SLOT + BYTES, sizeof count);
            if (1 != count) {
                ot_fail("round %d: rank %d's counter is %lld, expected 1", r, o, (long long) count);
            }
        }
        OT(MPI_Win_detach(win, base));
        switch (r % 3) {
        case 0: /* same: the same buffer again */
            break;
        case 1: /* wider: holds the old region at the same addresses */
            base -= 32;
            len += 64;
            break;
        default: /* moved: a region of the first size at the other place */
            base = base < block + 2 * region ? block + 2 * region + 128 : block + region;
            len = region;
            break;
        }
        OT(MPI_Win_attach(win, base, (MPI_Aint) len));
    }
    OT(MPI_Win_detach(win, base));
    free(block);
}

int main(int argc, char **argv)
{
    int rank, nprocs;
    ot_init(&argc, &argv, "reattach");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    const int rounds = atoi(ot_arg(argc, argv, "-rounds", "30"));
    if (nprocs < 2) {
        ot_fail("needs 2 ranks or more");
    }
    MPI_Win win;
    OT(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    if (rank == nprocs - 1) {
        target_side(win, nprocs, rounds);
    } else {
        origin(win, rank, nprocs - 1, rounds);
    }
    OT(MPI_Win_free(&win));
    mt_pass("reattach");
    MPI_Finalize();
    return 0;
}
