/*
 * bursts: each rank puts a burst of medium blocks and accumulates into its
 * neighbour's window in a lock_all epoch, then computes with no MPI call
 * before it flushes, as an application overlapping its communication does.
 * Behind the burst's first put the engine lets the others wait for company
 * (Engine::waits_for_company: test/osc/run.sh requires sends_waited > 0);
 * while their origin computes the liveness agent may send them
 * (test_engine_agent checks that it does), and the flush sends what is
 * left.  After each round every target checks every byte it was put and
 * every sum it was added.
 *
 *   mpirun -np N bursts [-bytes 16K] [-puts 8] [-rounds 3] [-compute 0.3] [-flavor create,allocate,dynamic]
 */
#include <limits.h>

#include "osctest.h"

/* Byte i of block k that `origin` puts in round r. */
static unsigned char pattern(int origin, int r, int k, size_t i)
{
    return (unsigned char) (origin * 31 + r * 17 + k * 7 + i * 3 + (i >> 10));
}

/* Element i of accumulate block k that `origin` adds in round r. */
static int64_t addend(int origin, int r, int k, size_t i) { return (int64_t) origin * 1000003 + r * 1009 + k * 17 + (int64_t) i; }

static void run(enum ot_flavor flavor, size_t bytes, int puts, int rounds, double secs)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int target = (rank + 1) % size, origin = (rank + size - 1) % size;
    const size_t elems = bytes / 8, area = (size_t) puts * bytes; /* puts, then sums */
    ot_win w;
    ot_win_new(&w, flavor, MPI_COMM_WORLD, 1, 2 * area, 1, MPI_INFO_NULL);
    OT(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w.win));
    memset(w.part[0], 0, 2 * area);
    OT(MPI_Win_unlock(rank, w.win));
    OT(MPI_Barrier(MPI_COMM_WORLD));

    unsigned char *src = mt_alloc(area);
    int64_t *add = (int64_t *) mt_alloc(area), *sums = (int64_t *) mt_alloc(area);
    memset(sums, 0, area);
    unsigned char *want = mt_alloc(area);
    for (int r = 0; r < rounds; ++r) {
        for (int k = 0; k < puts; ++k) {
            for (size_t i = 0; i < bytes; ++i) {
                src[(size_t) k * bytes + i] = pattern(rank, r, k, i);
            }
            for (size_t i = 0; i < elems; ++i) {
                add[(size_t) k * elems + i] = addend(rank, r, k, i);
            }
        }
        OT(MPI_Win_lock_all(0, w.win));
        for (int k = 0; k < puts; ++k) {
            OT(MPI_Put(src + (size_t) k * bytes, (int) bytes, MPI_BYTE, target, ot_disp(&w, target, 0, (size_t) k * bytes),
                       (int) bytes, MPI_BYTE, w.win));
        }
        for (int k = 0; k < puts; ++k) {
            OT(MPI_Accumulate(add + (size_t) k * elems, (int) elems, MPI_INT64_T, target,
                              ot_disp(&w, target, 0, area + (size_t) k * bytes), (int) elems, MPI_INT64_T, MPI_SUM,
                              w.win));
        }
        mt_compute(secs); /* no MPI call; the buffers stay as they are until the flush */
        OT(MPI_Win_flush(target, w.win));
        OT(MPI_Win_unlock_all(w.win));
        OT(MPI_Barrier(MPI_COMM_WORLD));

        /* What the neighbour before us put and added. */
        for (int k = 0; k < puts; ++k) {
            for (size_t i = 0; i < bytes; ++i) {
                want[(size_t) k * bytes + i] = pattern(origin, r, k, i);
            }
            for (size_t i = 0; i < elems; ++i) {
                sums[(size_t) k * elems + i] += addend(origin, r, k, i);
            }
        }
        OT(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, w.win));
        ot_check(w.part[0], want, area, "%s window, round %d: the blocks rank %d put", ot_flavor_names[flavor], r, origin);
        ot_check(w.part[0] + area, sums, area, "%s window, round %d: the sums rank %d added", ot_flavor_names[flavor], r,
                 origin);
        OT(MPI_Win_unlock(rank, w.win));
        OT(MPI_Barrier(MPI_COMM_WORLD)); /* checked before the next round's puts land */
    }
    free(src);
    free(add);
    free(sums);
    free(want);
    ot_win_free(&w);
}

int main(int argc, char **argv)
{
    ot_init(&argc, &argv, "bursts");
    const size_t bytes = ot_size(ot_arg(argc, argv, "-bytes", "16K"));
    const int puts = atoi(ot_arg(argc, argv, "-puts", "8"));
    const int rounds = atoi(ot_arg(argc, argv, "-rounds", "3"));
    const double secs = atof(ot_arg(argc, argv, "-compute", "0.3"));
    const char *flavors = ot_arg(argc, argv, "-flavor", "create,allocate,dynamic");
    if (bytes < 8 || bytes % 8 || bytes > INT_MAX || puts < 1 || (size_t) puts * bytes > INT_MAX / 2 || rounds < 1 ||
        secs < 0) {
        ot_fail("-bytes must be a positive multiple of 8 and -puts positive, both of them less than 1 GiB; -rounds "
                "positive, -compute not negative");
    }
    for (int f = 0; f < OT_FLAVORS; ++f) {
        if (ot_listed(flavors, ot_flavor_names[f])) {
            run((enum ot_flavor) f, bytes, puts, rounds, secs);
        }
    }
    mt_pass("bursts");
    MPI_Finalize();
    return 0;
}
