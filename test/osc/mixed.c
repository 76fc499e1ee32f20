/* Point-to-point messages inside passive-target epochs, as an application
 * that reads its neighbours' halos with MPI_Recv while it holds a lock on
 * a window: rank r locks its right neighbour's window (shared, and in
 * turn exclusive and lock_all), puts a small pattern there, then sends a
 * large message to its right neighbour and receives one from its left
 * (above the eager limit: ob1 reads it with the BTL's get), and only then
 * unlocks.  Every message and every put is checked.  Each rank's get of
 * the message it receives must not wait for, or be lost with, the
 * operations its own epoch holds back for the lock.
 *
 *   mixed [-bytes 524288,2097152] [-rounds 6] [-flavor allocate]
 */
#include "osctest.h"

enum { SMALL = 64, TAG = 21 };

static void round_trip(ot_win *w, int rank, int nprocs, size_t bytes, int round, int mode)
{
    int right = (rank + 1) % nprocs, left = (rank + nprocs - 1) % nprocs;
    unsigned char small[SMALL], want[SMALL];
    unsigned char *out = mt_alloc(bytes), *in = mt_alloc(bytes), *expect = mt_alloc(bytes);
    static const char *const names[] = {"shared lock", "exclusive lock", "lock_all"};
    mt_fill(small, sizeof small, rank, right, round);
    mt_fill(out, bytes, rank, right, round + 1000);
    if (2 == mode) {
        OT(MPI_Win_lock_all(0, w->win));
    } else {
        OT(MPI_Win_lock(0 == mode ? MPI_LOCK_SHARED : MPI_LOCK_EXCLUSIVE, right, 0, w->win));
    }
    OT(MPI_Put(small, SMALL, MPI_BYTE, right, ot_disp(w, right, 0, 0), SMALL, MPI_BYTE, w->win));
    MPI_Request q[2];
    OT(MPI_Irecv(in, (int) bytes, MPI_BYTE, left, TAG, MPI_COMM_WORLD, &q[0]));
    OT(MPI_Isend(out, (int) bytes, MPI_BYTE, right, TAG, MPI_COMM_WORLD, &q[1]));
    OT(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
    OT(2 == mode ? MPI_Win_unlock_all(w->win) : MPI_Win_unlock(right, w->win));
    mt_fill(expect, bytes, left, rank, round + 1000);
    ot_check(in, expect, bytes, "%s, round %d: the %zu-byte message from rank %d", names[mode], round, bytes, left);
    OT(MPI_Barrier(MPI_COMM_WORLD));
    OT(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w->win));
    mt_fill(want, sizeof want, left, rank, round);
    ot_check(w->part[0], want, sizeof want, "%s, round %d: the put from rank %d", names[mode], round, left);
    OT(MPI_Win_unlock(rank, w->win));
    OT(MPI_Barrier(MPI_COMM_WORLD));
    free(out);
    free(in);
    free(expect);
}

int main(int argc, char **argv)
{
    int rank, nprocs;
    ot_init(&argc, &argv, "mixed");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    size_t sizes[8];
    const int nsizes = ot_sizes(ot_arg(argc, argv, "-bytes", "524288,2097152"), sizes, 8);
    const int rounds = atoi(ot_arg(argc, argv, "-rounds", "6"));
    const char *flavors = ot_arg(argc, argv, "-flavor", "allocate");
    if (nprocs < 2) {
        ot_fail("needs 2 ranks or more");
    }
    for (int f = 0; f < OT_FLAVORS; ++f) {
        if (!ot_listed(flavors, ot_flavor_names[f])) {
            continue;
        }
        ot_win w;
        ot_win_new(&w, (enum ot_flavor) f, MPI_COMM_WORLD, 1, SMALL, 1, MPI_INFO_NULL);
        for (int s = 0; s < nsizes; ++s) {
            for (int r = 0; r < rounds; ++r) {
                round_trip(&w, rank, nprocs, sizes[s], s * rounds + r, r % 3);
            }
        }
        ot_win_free(&w);
    }
    mt_pass("mixed");
    MPI_Finalize();
    return 0;
}
