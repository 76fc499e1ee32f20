/* MPI_THREAD_MULTIPLE: -threads threads per rank issue RMA at once.  On a
 * shared window, inside one lock_all epoch the main thread holds, each
 * thread puts into its own slot at its target, flushes, reads it back,
 * accumulates into its sums and fetch-and-adds a counter at rank 0; on its
 * own window it runs whole lock/unlock epochs (exclusive and shared in
 * turn), put then get.  Every read is checked at once, every slot, sum and
 * the counter at the end; the fetched counter values must be a permutation.
 *
 *   threads [-threads 4] [-iters 40] [-flavor allocate]
 */
#include <pthread.h>

#include "osctest.h"

enum { SUMS = 8, MAX_THREADS = 16 };

static int rank, nprocs, nthreads, iters;
static ot_win shared, own[MAX_THREADS];
static size_t slot_bytes;
static int64_t *fetched; /* [thread][iteration] */

static size_t size_of(int t)
{
    static const size_t sizes[] = {8, 1000, 65536, 200003};
    return sizes[t % 4];
}

static int target_of(int r, int t) { return (r + 1 + t) % nprocs; }
static size_t slot_at(int r, int t) { return ((size_t) r * (size_t) nthreads + (size_t) t) * slot_bytes; }
static size_t counter_at(void) { return (size_t) nprocs * (size_t) nthreads * slot_bytes; }
static int64_t contribution(int r, int t, int i, int k) { return (int64_t) r * 100000 + t * 1000 + i * 10 + k; }

static void *worker(void *arg)
{
    int t = (int) (long) arg, target = target_of(rank, t), partner = (rank + t) % nprocs;
    size_t n = size_of(t);
    unsigned char *out = mt_alloc(n), *in = mt_alloc(n), *want = mt_alloc(n);
    int64_t add[SUMS], one = 1;
    MPI_Aint at = ot_disp(&shared, target, 0, slot_at(rank, t));
    for (int i = 0; i < iters; ++i) {
        /* The shared window, in the epoch the main thread opened. */
        mt_fill(out, n, rank, target, t * 1000 + i);
        for (int k = 0; k < SUMS; ++k) {
            add[k] = contribution(rank, t, i, k);
        }
        OT(MPI_Put(out, (int) n, MPI_BYTE, target, at, (int) n, MPI_BYTE, shared.win));
        OT(MPI_Accumulate(add, SUMS, MPI_INT64_T, target, at + (MPI_Aint) n, SUMS, MPI_INT64_T, MPI_SUM, shared.win));
        OT(MPI_Fetch_and_op(&one, &fetched[t * iters + i], MPI_INT64_T, 0, ot_disp(&shared, 0, 0, counter_at()),
                            MPI_SUM, shared.win));
        OT(MPI_Win_flush(target, shared.win));
        OT(MPI_Get(in, (int) n, MPI_BYTE, target, at, (int) n, MPI_BYTE, shared.win));
        OT(MPI_Win_flush(target, shared.win));
        OT(MPI_Win_flush(0, shared.win));
        ot_check(in, out, n, "thread %d, iteration %d: read back from rank %d (shared window)", t, i, target);
        /* Its own window: whole epochs. */
        mt_fill(out, n, rank, partner, 77 + t * 1000 + i);
        OT(MPI_Win_lock(i % 2 ? MPI_LOCK_SHARED : MPI_LOCK_EXCLUSIVE, partner, 0, own[t].win));
        OT(MPI_Put(out, (int) n, MPI_BYTE, partner, ot_disp(&own[t], partner, 0, (size_t) rank * n), (int) n, MPI_BYTE,
                   own[t].win));
        OT(MPI_Win_flush(partner, own[t].win));
        OT(MPI_Get(in, (int) n, MPI_BYTE, partner, ot_disp(&own[t], partner, 0, (size_t) rank * n), (int) n,
                   MPI_BYTE, own[t].win));
        OT(MPI_Win_unlock(partner, own[t].win));
        memcpy(want, out, n);
        ot_check(in, want, n, "thread %d, iteration %d: read back from rank %d (its own window)", t, i, partner);
    }
    free(out);
    free(in);
    free(want);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    ot_test = "threads";
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (MPI_THREAD_MULTIPLE != provided) {
        ot_fail("MPI_THREAD_MULTIPLE not provided (%d)", provided);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    nthreads = atoi(ot_arg(argc, argv, "-threads", "4"));
    iters = atoi(ot_arg(argc, argv, "-iters", "40"));
    const char *flavors = ot_arg(argc, argv, "-flavor", "allocate");
    if (nthreads < 1 || nthreads > MAX_THREADS) {
        ot_fail("-threads wants 1..%d", MAX_THREADS);
    }
    slot_bytes = ((size_of(3) + SUMS * 8) + 7) & ~(size_t) 7;
    fetched = calloc((size_t) nthreads * (size_t) iters, sizeof *fetched);
    for (int f = 0; f < OT_FLAVORS; ++f) {
        if (!ot_listed(flavors, ot_flavor_names[f])) {
            continue;
        }
        ot_win_new(&shared, (enum ot_flavor) f, MPI_COMM_WORLD, 1, counter_at() + 8, 1, MPI_INFO_NULL);
        OT(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, shared.win));
        memset(shared.part[0], 0, shared.part_size);
        OT(MPI_Win_unlock(rank, shared.win));
        for (int t = 0; t < nthreads; ++t) {
            ot_win_new(&own[t], (enum ot_flavor) f, MPI_COMM_WORLD, 1, (size_t) nprocs * size_of(t), 1, MPI_INFO_NULL);
        }
        OT(MPI_Barrier(MPI_COMM_WORLD));
        OT(MPI_Win_lock_all(0, shared.win));
        pthread_t th[MAX_THREADS];
        for (long t = 0; t < nthreads; ++t) {
            pthread_create(&th[t], NULL, worker, (void *) t);
        }
        for (int t = 0; t < nthreads; ++t) {
            pthread_join(th[t], NULL);
        }
        OT(MPI_Win_unlock_all(shared.win));
        OT(MPI_Barrier(MPI_COMM_WORLD));
        /* My slots: the last pattern and every sum of the threads that target me. */
        OT(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, shared.win));
        for (int r = 0; r < nprocs; ++r) {
            for (int t = 0; t < nthreads; ++t) {
                if (target_of(r, t) != rank) {
                    continue;
                }
                size_t n = size_of(t);
                unsigned char *want = mt_alloc(n);
                int64_t sums[SUMS], expect[SUMS] = {0};
                mt_fill(want, n, r, rank, t * 1000 + iters - 1);
                ot_check(shared.part[0] + slot_at(r, t), want, n, "%s window: slot of rank %d thread %d",
                         ot_flavor_names[f], r, t);
                memcpy(sums, shared.part[0] + slot_at(r, t) + n, sizeof sums);
                for (int i = 0; i < iters; ++i) {
                    for (int k = 0; k < SUMS; ++k) {
                        expect[k] += contribution(r, t, i, k);
                    }
                }
                ot_check(sums, expect, sizeof sums, "%s window: sums of rank %d thread %d", ot_flavor_names[f], r, t);
                free(want);
            }
        }
        OT(MPI_Win_unlock(rank, shared.win));
        int total = nprocs * nthreads * iters;
        int64_t *all = 0 == rank ? calloc((size_t) total, sizeof *all) : NULL;
        OT(MPI_Gather(fetched, nthreads * iters, MPI_INT64_T, all, nthreads * iters, MPI_INT64_T, 0, MPI_COMM_WORLD));
        if (0 == rank) {
            char *hit = calloc((size_t) total, 1);
            for (int i = 0; i < total; ++i) {
                if (all[i] < 0 || all[i] >= total || hit[all[i]]++) {
                    ot_fail("%s window: fetch-and-add returned %lld twice or outside 0..%d", ot_flavor_names[f],
                            (long long) all[i], total - 1);
                }
            }
            free(hit);
            free(all);
        }
        for (int t = 0; t < nthreads; ++t) {
            ot_win_free(&own[t]);
        }
        ot_win_free(&shared);
    }
    free(fetched);
    mt_pass("threads");
    MPI_Finalize();
    return 0;
}
