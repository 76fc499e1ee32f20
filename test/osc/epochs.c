/*
 * epochs: a target writes its window the moment its epoch ends, while large
 * gets from it may still be on their way (osc_rttcc sends a large get's
 * reply from the window itself, and resends lost parts from there).  Every
 * get must bring the bytes the window held during its epoch.
 *
 * Every rank but 0 is a target; rank 0 gets `-bytes` from each of them per
 * epoch.  Epochs (-sync): fence (MPI_Win_fence on all), pscw (rank 0 starts
 * and completes, the targets post and wait).  After its epoch ends a target
 * overwrites the whole window with the next epoch's pattern; rank 0 checks
 * each get against the pattern of the epoch it was made in.
 *
 *   mpirun -np N epochs [-bytes 8M] [-iters 6] [-sync fence,pscw] [-flavor create,allocate,dynamic]
 */
#include "osctest.h"

/* The byte a target holds at `i` during epoch `e`. */
static unsigned char pattern(int target, int e, size_t i)
{
    return (unsigned char) (target * 29 + e * 53 + i * 7 + (i >> 12));
}

static void fill(unsigned char *p, int target, int e, size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        p[i] = pattern(target, e, i);
    }
}

static void run(enum ot_flavor flavor, int pscw, size_t bytes, int iters)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    ot_win w;
    ot_win_new(&w, flavor, MPI_COMM_WORLD, 1, bytes, 1, MPI_INFO_NULL);
    unsigned char *got = mt_alloc(bytes * (size_t) size), *want = mt_alloc(bytes);
    MPI_Group world, origin, targets;
    OT(MPI_Comm_group(MPI_COMM_WORLD, &world));
    const int zero = 0, range[1][3] = {{1, size - 1, 1}};
    OT(MPI_Group_incl(world, 1, &zero, &origin));
    OT(MPI_Group_range_incl(world, 1, (int(*)[3]) range, &targets));
    fill(w.part[0], rank, 0, bytes);
    OT(MPI_Barrier(MPI_COMM_WORLD));
    if (!pscw) {
        OT(MPI_Win_fence(0, w.win));
    }
    for (int e = 0; e < iters; ++e) {
        if (pscw && 0 == rank) {
            OT(MPI_Win_start(targets, 0, w.win));
        } else if (pscw) {
            OT(MPI_Win_post(origin, 0, w.win));
        }
        if (0 == rank) {
            for (int t = 1; t < size; ++t) {
                OT(MPI_Get(got + (size_t) t * bytes, (int) bytes, MPI_BYTE, t, ot_disp(&w, t, 0, 0), (int) bytes,
                           MPI_BYTE, w.win));
            }
        }
        if (pscw && 0 == rank) {
            OT(MPI_Win_complete(w.win));
        } else if (pscw) {
            OT(MPI_Win_wait(w.win));
        } else {
            OT(MPI_Win_fence(0, w.win));
        }
        if (0 != rank) {
            fill(w.part[0], rank, e + 1, bytes); /* this epoch is over: the window is the application's */
        } else {
            for (int t = 1; t < size; ++t) {
                fill(want, t, e, bytes);
                ot_check(got + (size_t) t * bytes, want, bytes, "%s, %s window, epoch %d: %zu bytes got from rank %d",
                         pscw ? "pscw" : "fence", ot_flavor_names[flavor], e, bytes, t);
            }
        }
    }
    if (!pscw) {
        OT(MPI_Win_fence(MPI_MODE_NOSUCCEED, w.win));
    }
    MPI_Group_free(&targets);
    MPI_Group_free(&origin);
    MPI_Group_free(&world);
    free(want);
    free(got);
    ot_win_free(&w);
}

int main(int argc, char **argv)
{
    ot_init(&argc, &argv, "epochs");
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        ot_fail("needs at least 2 ranks");
    }
    const size_t bytes = ot_size(ot_arg(argc, argv, "-bytes", "8M"));
    const int iters = atoi(ot_arg(argc, argv, "-iters", "6"));
    const char *syncs = ot_arg(argc, argv, "-sync", NULL), *flavors = ot_arg(argc, argv, "-flavor", NULL);
    int runs = 0;
    for (int f = 0; f < OT_FLAVORS; ++f) {
        for (int pscw = 0; pscw < 2 && ot_listed(flavors, ot_flavor_names[f]); ++pscw) {
            if (ot_listed(syncs, pscw ? "pscw" : "fence")) {
                run((enum ot_flavor) f, pscw, bytes, iters);
                ++runs;
            }
        }
    }
    if (0 == runs) {
        ot_fail("no flavor and sync selected");
    }
    if (0 == rank) {
        printf("epochs: %d runs of %d epochs, %zu bytes got from each of %d targets per epoch\n", runs, iters, bytes,
               size - 1);
    }
    mt_pass("epochs");
    MPI_Finalize();
    return 0;
}
