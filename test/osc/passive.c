/* Passive target against a target that computes.  Rank 0 spins in a loop
 * with no MPI call for -busy seconds while every other rank runs epochs on
 * it (lock shared, lock exclusive, lock_all with flush, in turn): put its
 * epoch's pattern into its own area, get back the previous epoch's, add to
 * its accumulate area, fetch-and-add the shared counter.  The origins go on
 * until rank 0 says it is done, then everything is checked: the areas, the
 * sums, the counter, the fetched values (a permutation), rank 0's own
 * computation.  How many epochs each origin completed while rank 0 was busy
 * is printed; -expect-progress 1 fails the test if one of them completed
 * none (a target that computes must not stall passive target epochs).
 *
 * Then mutual exclusion: every rank increments a counter at the last rank
 * under MPI_LOCK_EXCLUSIVE (get, flush, put), with an owner field it must
 * find free on entry and its own on exit, and a tally that must not move
 * while it holds the lock; in between it adds to the tally in epochs of
 * one accumulate (lazy locks); -iters epochs in all.  Then flushes inside
 * epochs whose lock is still lazy: a get complete after MPI_Win_flush_local,
 * a put read back after MPI_Win_flush; and another window's epoch to the
 * same process in the middle of a lazy one.
 *
 *   passive [-busy 3] [-iters 100] [-flavor allocate] [-expect-progress 1]
 */
#include <time.h>

#include "osctest.h"

enum { AREA = 4096, SUMS = 64, DONE_TAG = 5 };

/* Window of rank 0: per origin an area of AREA bytes, then SUMS int64
 * accumulators per origin, then the shared counter. */
static size_t area_at(int o) { return (size_t) o * AREA; }
static size_t sums_at(int nprocs, int o) { return (size_t) nprocs * AREA + (size_t) o * SUMS * 8; }
static size_t counter_at(int nprocs) { return (size_t) nprocs * (AREA + SUMS * 8); }

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

static int64_t contribution(int o, int e, int i) { return (int64_t) (o + 1) * 1000 + e * 7 + i; }

static void computing_target(enum ot_flavor f, int rank, int nprocs, double busy, int expect_progress)
{
    ot_win w;
    size_t bytes = counter_at(nprocs) + 8;
    ot_win_new(&w, f, MPI_COMM_WORLD, 1, bytes, 1, MPI_INFO_NULL);
    OT(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w.win));
    memset(w.part[0], 0, bytes);
    OT(MPI_Win_unlock(rank, w.win));
    OT(MPI_Barrier(MPI_COMM_WORLD));
    int epochs = 0, while_busy = 0, cap = 100000;
    int64_t *fetched = calloc((size_t) cap, sizeof *fetched);
    if (0 == rank) {
        /* Compute, outside MPI, something whose result is checked. */
        uint64_t x = 1, steps = 0;
        double end = now() + busy;
        while (now() < end) {
            for (int i = 0; i < 100000; ++i) {
                x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            }
            steps += 100000;
        }
        uint64_t y = 1;
        for (uint64_t i = 0; i < steps; ++i) {
            y = y * 6364136223846793005ULL + 1442695040888963407ULL;
        }
        if (x != y) {
            ot_fail("the computation went wrong: %llu steps", (unsigned long long) steps);
        }
        for (int o = 1; o < nprocs; ++o) {
            OT(MPI_Send(&o, 1, MPI_INT, o, DONE_TAG, MPI_COMM_WORLD));
        }
    } else {
        unsigned char *out = mt_alloc(AREA), *in = mt_alloc(AREA), *want = mt_alloc(AREA);
        int64_t add[SUMS], one = 1;
        int done = 0, token;
        MPI_Request q;
        OT(MPI_Irecv(&token, 1, MPI_INT, 0, DONE_TAG, MPI_COMM_WORLD, &q));
        for (; (!done || epochs < 4) && epochs < cap; ++epochs) {
            int mode = epochs % 3;
            mt_fill(out, AREA, rank, 0, epochs);
            for (int i = 0; i < SUMS; ++i) {
                add[i] = contribution(rank, epochs, i);
            }
            if (2 == mode) {
                OT(MPI_Win_lock_all(0, w.win));
            } else {
                OT(MPI_Win_lock(mode ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, 0, 0, w.win));
            }
            OT(MPI_Get(in, AREA, MPI_BYTE, 0, ot_disp(&w, 0, 0, area_at(rank)), AREA, MPI_BYTE, w.win));
            OT(MPI_Win_flush(0, w.win)); /* the get reads before the put writes */
            OT(MPI_Put(out, AREA, MPI_BYTE, 0, ot_disp(&w, 0, 0, area_at(rank)), AREA, MPI_BYTE, w.win));
            OT(MPI_Accumulate(add, SUMS, MPI_INT64_T, 0, ot_disp(&w, 0, 0, sums_at(nprocs, rank)), SUMS, MPI_INT64_T,
                              MPI_SUM, w.win));
            OT(MPI_Fetch_and_op(&one, &fetched[epochs], MPI_INT64_T, 0, ot_disp(&w, 0, 0, counter_at(nprocs)),
                                MPI_SUM, w.win));
            if (2 == mode) {
                OT(MPI_Win_flush(0, w.win));
                OT(MPI_Win_unlock_all(w.win));
            } else {
                OT(MPI_Win_unlock(0, w.win));
            }
            if (epochs > 0) {
                mt_fill(want, AREA, rank, 0, epochs - 1);
            } else {
                memset(want, 0, AREA);
            }
            ot_check(in, want, AREA, "%s window: epoch %d read its area at the computing target", ot_flavor_names[f],
                     epochs);
            if (!done) {
                OT(MPI_Test(&q, &done, MPI_STATUS_IGNORE));
                while_busy += !done;
            }
        }
        if (!done) { /* enough epochs: the rest of the busy time is waited out */
            OT(MPI_Wait(&q, MPI_STATUS_IGNORE));
        }
        free(out);
        free(in);
        free(want);
    }
    /* Everything checked at rank 0; fetched values gathered there. */
    int *counts = calloc((size_t) nprocs, sizeof *counts), *busy_counts = calloc((size_t) nprocs, sizeof *counts);
    OT(MPI_Gather(&epochs, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD));
    OT(MPI_Gather(&while_busy, 1, MPI_INT, busy_counts, 1, MPI_INT, 0, MPI_COMM_WORLD));
    int total = 0, *displs = calloc((size_t) nprocs, sizeof *displs);
    for (int o = 0; o < nprocs; ++o) {
        displs[o] = total;
        total += counts[o];
    }
    int64_t *all = calloc((size_t) total + 1, sizeof *all);
    OT(MPI_Gatherv(fetched, epochs, MPI_INT64_T, all, counts, displs, MPI_INT64_T, 0, MPI_COMM_WORLD));
    if (0 == rank) {
        unsigned char *want = mt_alloc(AREA);
        char line[512];
        int len = 0, stalled = 0;
        OT(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w.win));
        for (int o = 1; o < nprocs; ++o) {
            int64_t sums[SUMS], expect[SUMS];
            mt_fill(want, AREA, o, 0, counts[o] - 1);
            ot_check(w.part[0] + area_at(o), want, AREA, "%s window: area of origin %d after its %d epochs",
                     ot_flavor_names[f], o, counts[o]);
            memcpy(sums, w.part[0] + sums_at(nprocs, o), sizeof sums);
            for (int i = 0; i < SUMS; ++i) {
                expect[i] = 0;
                for (int e = 0; e < counts[o]; ++e) {
                    expect[i] += contribution(o, e, i);
                }
            }
            ot_check(sums, expect, sizeof sums, "%s window: accumulated sums of origin %d", ot_flavor_names[f], o);
            len += snprintf(line + len, sizeof line - (size_t) len, " %d/%d", busy_counts[o], counts[o]);
            stalled += 0 == busy_counts[o];
        }
        int64_t counter;
        memcpy(&counter, w.part[0] + counter_at(nprocs), sizeof counter);
        if (counter != total) {
            ot_fail("%s window: the shared counter is %lld after %d fetch-and-adds", ot_flavor_names[f],
                    (long long) counter, total);
        }
        char *hit = calloc((size_t) total, 1);
        for (int i = 0; i < total; ++i) {
            if (all[i] < 0 || all[i] >= total || hit[all[i]]++) {
                ot_fail("%s window: fetch-and-add returned %lld twice or outside 0..%d", ot_flavor_names[f],
                        (long long) all[i], total - 1);
            }
        }
        OT(MPI_Win_unlock(0, w.win));
        printf("passive: %s window: epochs completed while the target computed / in all, per origin:%s\n",
               ot_flavor_names[f], line);
        if (expect_progress && stalled) {
            ot_fail("%s window: %d origins completed no epoch while the target computed for %.1f s (per origin:%s)",
                    ot_flavor_names[f], stalled, busy, line);
        }
        free(hit);
        free(want);
    }
    OT(MPI_Barrier(MPI_COMM_WORLD));
    ot_win_free(&w);
    free(fetched);
    free(counts);
    free(busy_counts);
    free(displs);
    free(all);
}

/* Counter, owner and a tally at the last rank, only ever touched under the
 * exclusive lock.  Odd iterations add to the tally in an epoch of that
 * accumulate alone (a lazy lock: lock, accumulate and unlock travel as one
 * request, osc_rttcc_lazy_lock); even ones increment the counter (get,
 * flush, put: the lock is taken at the get) and read the tally twice while
 * they hold the lock: it must not move in between. */
static void exclusive(enum ot_flavor f, int rank, int nprocs, int iters)
{
    ot_win w;
    int target = nprocs - 1;
    int64_t state[3], mine, tally[2], one = 1;
    ot_win_new(&w, f, MPI_COMM_WORLD, 1, sizeof state, 1, MPI_INFO_NULL);
    OT(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w.win));
    state[0] = 0;
    state[1] = -1;
    state[2] = 0;
    memcpy(w.part[0], state, sizeof state);
    OT(MPI_Win_unlock(rank, w.win));
    OT(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Aint at = ot_disp(&w, target, 0, 0);
    for (int i = 0; i < iters; ++i) {
        OT(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, w.win));
        if (i % 2) {
            OT(MPI_Accumulate(&one, 1, MPI_INT64_T, target, at + 16, 1, MPI_INT64_T, MPI_SUM, w.win));
            OT(MPI_Win_unlock(target, w.win));
            continue;
        }
        OT(MPI_Get(state, 3, MPI_INT64_T, target, at, 3, MPI_INT64_T, w.win));
        OT(MPI_Win_flush(target, w.win));
        if (-1 != state[1]) {
            ot_fail("%s window: exclusive lock held, but rank %lld is inside too", ot_flavor_names[f],
                    (long long) state[1]);
        }
        state[0] += 1;
        state[1] = rank;
        OT(MPI_Put(state, 2, MPI_INT64_T, target, at, 2, MPI_INT64_T, w.win));
        OT(MPI_Win_flush(target, w.win));
        OT(MPI_Get(&mine, 1, MPI_INT64_T, target, at + 8, 1, MPI_INT64_T, w.win));
        OT(MPI_Get(&tally[1], 1, MPI_INT64_T, target, at + 16, 1, MPI_INT64_T, w.win));
        OT(MPI_Win_flush(target, w.win));
        if (mine != rank) {
            ot_fail("%s window: exclusive lock held, but the owner field became %lld", ot_flavor_names[f],
                    (long long) mine);
        }
        tally[0] = state[2];
        if (tally[1] != tally[0]) {
            ot_fail("%s window: exclusive lock held, but the tally went from %lld to %lld", ot_flavor_names[f],
                    (long long) tally[0], (long long) tally[1]);
        }
        state[1] = -1;
        OT(MPI_Put(&state[1], 1, MPI_INT64_T, target, at + 8, 1, MPI_INT64_T, w.win));
        OT(MPI_Win_unlock(target, w.win));
    }
    OT(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == target) {
        OT(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w.win));
        memcpy(state, w.part[0], sizeof state);
        int64_t want[3] = {(int64_t) (iters - iters / 2) * nprocs, -1, (int64_t) (iters / 2) * nprocs};
        ot_check(state, want, sizeof state,
                 "%s window: counter, owner and tally after %d exclusive epochs by %d ranks", ot_flavor_names[f],
                 iters, nprocs);
        OT(MPI_Win_unlock(rank, w.win));
    }
    ot_win_free(&w);
}

/* The flushes inside a lock epoch whose lock is still lazy (nothing asked
 * yet): MPI_Win_flush_local must return with a get's bytes in place, and
 * MPI_Win_flush with a put landed (read back in the same epoch). */
static void flushes_in_lazy_epochs(enum ot_flavor f, int rank, int nprocs, int iters)
{
    ot_win w;
    int target = 0;
    int64_t word = -1, back = -1;
    ot_win_new(&w, f, MPI_COMM_WORLD, 1, 8 * (size_t) nprocs, 1, MPI_INFO_NULL);
    OT(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w.win));
    for (int r = 0; r < nprocs; ++r) {
        ((int64_t *) w.part[0])[r] = 1000 + r;
    }
    OT(MPI_Win_unlock(rank, w.win));
    OT(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Aint mine = ot_disp(&w, target, 0, 8 * (size_t) rank);
    for (int i = 0; rank != target && i < iters; ++i) {
        OT(MPI_Win_lock(i % 2 ? MPI_LOCK_SHARED : MPI_LOCK_EXCLUSIVE, target, 0, w.win));
        OT(MPI_Get(&word, 1, MPI_INT64_T, target, mine, 1, MPI_INT64_T, w.win));
        OT(MPI_Win_flush_local(target, w.win));
        if (word != 1000 + rank + i) {
            ot_fail("%s window: after MPI_Win_flush_local the get brought %lld, not %lld", ot_flavor_names[f],
                    (long long) word, (long long) (1000 + rank + i));
        }
        word += 1;
        OT(MPI_Put(&word, 1, MPI_INT64_T, target, mine, 1, MPI_INT64_T, w.win));
        OT(MPI_Win_flush(target, w.win));
        OT(MPI_Get(&back, 1, MPI_INT64_T, target, mine, 1, MPI_INT64_T, w.win));
        OT(MPI_Win_unlock(target, w.win));
        if (back != word) {
            ot_fail("%s window: after MPI_Win_flush a get read %lld, not the %lld put", ot_flavor_names[f],
                    (long long) back, (long long) word);
        }
    }
    OT(MPI_Barrier(MPI_COMM_WORLD));
    ot_win_free(&w);
}

/* Window w holds `want` at rank 1, read in an epoch of its own. */
static void expect_word(ot_win *w, enum ot_flavor f, int64_t want)
{
    int64_t back = -1;
    OT(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, w->win));
    OT(MPI_Get(&back, 1, MPI_INT64_T, 1, ot_disp(w, 1, 0, 0), 1, MPI_INT64_T, w->win));
    OT(MPI_Win_unlock(1, w->win));
    if (back != want) {
        ot_fail("%s windows: window a read back %lld, not %lld, after its epoch", ot_flavor_names[f],
                (long long) back, (long long) want);
    }
}

/* Two windows to the same process: while rank 0's lock epoch of window a
 * is lazy (its put waits in the batch the engine holds for rank 1), a
 * lock_all epoch of window b puts, flushes and reads back there.  b's
 * operations must not wait with a's (they would travel under a's lock). */
static void two_windows(enum ot_flavor f, int rank, int iters)
{
    ot_win a, b;
    int64_t x, y, back;
    ot_win_new(&a, f, MPI_COMM_WORLD, 1, 8, 1, MPI_INFO_NULL);
    ot_win_new(&b, f, MPI_COMM_WORLD, 1, 8, 1, MPI_INFO_NULL);
    OT(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; 0 == rank && i < iters; ++i) {
        x = 100 + i;
        y = 200 + i;
        OT(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, a.win));
        OT(MPI_Put(&x, 1, MPI_INT64_T, 1, ot_disp(&a, 1, 0, 0), 1, MPI_INT64_T, a.win));
        OT(MPI_Win_lock_all(0, b.win));
        OT(MPI_Put(&y, 1, MPI_INT64_T, 1, ot_disp(&b, 1, 0, 0), 1, MPI_INT64_T, b.win));
        OT(MPI_Win_flush(1, b.win));
        OT(MPI_Get(&back, 1, MPI_INT64_T, 1, ot_disp(&b, 1, 0, 0), 1, MPI_INT64_T, b.win));
        OT(MPI_Win_flush(1, b.win));
        OT(MPI_Win_unlock_all(b.win));
        if (back != y) {
            ot_fail("%s windows: window b read back %lld, not %lld, during a's lock epoch", ot_flavor_names[f],
                    (long long) back, (long long) y);
        }
        OT(MPI_Win_unlock(1, a.win));
        expect_word(&a, f, x);
        /* The other order: b's put still in the engine's batch when a's lazy lock begins. */
        x += 1000;
        y += 1000;
        OT(MPI_Win_lock_all(0, b.win));
        OT(MPI_Put(&y, 1, MPI_INT64_T, 1, ot_disp(&b, 1, 0, 0), 1, MPI_INT64_T, b.win));
        OT(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, a.win));
        OT(MPI_Put(&x, 1, MPI_INT64_T, 1, ot_disp(&a, 1, 0, 0), 1, MPI_INT64_T, a.win));
        OT(MPI_Win_unlock(1, a.win));
        OT(MPI_Win_flush(1, b.win));
        OT(MPI_Get(&back, 1, MPI_INT64_T, 1, ot_disp(&b, 1, 0, 0), 1, MPI_INT64_T, b.win));
        OT(MPI_Win_flush(1, b.win));
        OT(MPI_Win_unlock_all(b.win));
        if (back != y) {
            ot_fail("%s windows: window b read back %lld, not %lld, with a's lazy epoch after its put",
                    ot_flavor_names[f], (long long) back, (long long) y);
        }
        expect_word(&a, f, x);
    }
    OT(MPI_Barrier(MPI_COMM_WORLD));
    ot_win_free(&b);
    ot_win_free(&a);
}

int main(int argc, char **argv)
{
    int rank, nprocs;
    ot_init(&argc, &argv, "passive");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    double busy = atof(ot_arg(argc, argv, "-busy", "3"));
    int iters = atoi(ot_arg(argc, argv, "-iters", "100"));
    int expect_progress = atoi(ot_arg(argc, argv, "-expect-progress", "0"));
    const char *flavors = ot_arg(argc, argv, "-flavor", "allocate");
    if (nprocs < 2) {
        ot_fail("needs 2 ranks or more");
    }
    for (int f = 0; f < OT_FLAVORS; ++f) {
        if (ot_listed(flavors, ot_flavor_names[f])) {
            computing_target((enum ot_flavor) f, rank, nprocs, busy, expect_progress);
            exclusive((enum ot_flavor) f, rank, nprocs, iters);
            flushes_in_lazy_epochs((enum ot_flavor) f, rank, nprocs, iters);
            two_windows((enum ot_flavor) f, rank, iters);
        }
    }
    mt_pass("passive");
    MPI_Finalize();
    return 0;
}
