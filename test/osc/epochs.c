/*
 * epochs: a target writes its window the moment its epoch ends, while large
 * gets from it may still be on their way (osc_rttcc sends a large get's
 * reply from the window itself, and resends lost parts from there).  Every
 * get must bring the bytes the window held during its epoch.
 *
 * Every rank but 0 is a target; rank 0 gets `-bytes` from each of them per
 * epoch.  Epochs (-sync): fence (MPI_Win_fence on all), pscw (rank 0 starts
 * and completes, the targets post and wait), pscw_rotate (pscw with one
 * target an epoch, in turn, in a group made for that epoch and freed after
 * it: osc_rttcc keeps a group's ranks while the same group comes back, and
 * must not mistake a new one for it).  After its epoch ends a target
 * overwrites the whole window with the next epoch's pattern; rank 0 checks
 * each get against the pattern of the epoch it was made in.
 *
 *   mpirun -np N epochs [-bytes 8M] [-iters 6] [-sync fence,pscw,pscw_rotate] [-flavor create,allocate,dynamic]
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

enum sync { FENCE, PSCW, PSCW_ROTATE, SYNCS };
static const char *const sync_names[SYNCS] = {"fence", "pscw", "pscw_rotate"};

static void run(enum ot_flavor flavor, enum sync sync, size_t bytes, int iters)
{
    const int pscw = FENCE != sync;
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    ot_win w;
    ot_win_new(&w, flavor, MPI_COMM_WORLD, 1, bytes, 1, MPI_INFO_NULL);
    unsigned char *got = mt_alloc(bytes * (size_t) size), *want = mt_alloc(bytes);
    int *turns = calloc((size_t) size, sizeof *turns);
    if (NULL == turns) {
        ot_fail("out of memory");
    }
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
        /* this epoch's targets: first .. last */
        const int first = PSCW_ROTATE == sync ? 1 + e % (size - 1) : 1, last = PSCW_ROTATE == sync ? first : size - 1;
        const int in_epoch = 0 == rank || (first <= rank && rank <= last);
        MPI_Group group = targets;
        if (PSCW_ROTATE == sync && 0 == rank) {
            OT(MPI_Group_incl(world, 1, &first, &group));
        }
        if (pscw && 0 == rank) {
            OT(MPI_Win_start(group, 0, w.win));
        } else if (pscw && in_epoch) {
            OT(MPI_Win_post(origin, 0, w.win));
        }
        if (0 == rank) {
            for (int t = first; t <= last; ++t) {
                OT(MPI_Get(got + (size_t) t * bytes, (int) bytes, MPI_BYTE, t, ot_disp(&w, t, 0, 0), (int) bytes,
                           MPI_BYTE, w.win));
            }
        }
        if (pscw && 0 == rank) {
            OT(MPI_Win_complete(w.win));
        } else if (pscw && in_epoch) {
            OT(MPI_Win_wait(w.win));
        } else if (!pscw) {
            OT(MPI_Win_fence(0, w.win));
        }
        if (group != targets) {
            MPI_Group_free(&group);
        }
        /* a target's pattern counts the epochs it was in */
        if (0 != rank && in_epoch) {
            fill(w.part[0], rank, ++turns[rank], bytes); /* this epoch is over: the window is the application's */
        }
        for (int t = first; t <= last && 0 == rank; ++t) {
            fill(want, t, turns[t]++, bytes);
            ot_check(got + (size_t) t * bytes, want, bytes, "%s, %s window, epoch %d: %zu bytes got from rank %d",
                     sync_names[sync], ot_flavor_names[flavor], e, bytes, t);
        }
    }
    if (!pscw) {
        OT(MPI_Win_fence(MPI_MODE_NOSUCCEED, w.win));
    }
    MPI_Group_free(&targets);
    MPI_Group_free(&origin);
    MPI_Group_free(&world);
    free(turns);
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
        for (int y = 0; y < SYNCS && ot_listed(flavors, ot_flavor_names[f]); ++y) {
            if (ot_listed(syncs, sync_names[y])) {
                run((enum ot_flavor) f, (enum sync) y, bytes, iters);
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
