/* Dynamic windows whose target detaches and attaches its memory again many
 * times (more than the revoked exposures its implementation may remember)
 * while origins keep accessing it under one MPI_Win_lock_all.  Every rank
 * holds lock_all from start to end (the target's makes its MPI_Win_sync
 * legal); the last rank (the target) attaches one
 * region and, before each step, detaches it and attaches it again -churn
 * times at the same address.  A barrier after its MPI_Win_sync tells the
 * origins the memory is attached (MPI 3.1, 11.2.4); each then does one
 * operation into its slot of it, with whatever it remembers of the region
 * from the last step, flushes, and checks what came back; a second barrier
 * hands the slot to the target, which checks every byte:
 *
 *   put, put_large       a pattern put (small: posted into a batch; large:
 *                        the engine's puts), checked at the target
 *   get, get_large       a pattern the target wrote, read back
 *   acc, acc_large       MPI_SUM into int64 elements the target set
 *   gacc_large           MPI_Get_accumulate: the old elements and the new
 *   fop, cas             MPI_Fetch_and_op and MPI_Compare_and_swap on a counter
 *
 * An operation naming a region the target detached since must still land
 * once (never lost, never applied twice) and never stall (each run is
 * bounded by the job's timeout).
 *
 *   churn [-churn 300] [-rounds 2] [-bytes 100000] [-steps put,get,...]
 */
#include "osctest.h"

enum { PUT, PUT_LARGE, GET, GET_LARGE, ACC, ACC_LARGE, GACC_LARGE, FOP, CAS, STEPS };
static const char *const step_names[STEPS] = {"put", "put_large", "get", "get_large", "acc",
                                              "acc_large", "gacc_large", "fop", "cas"};

static size_t large; /* bytes of the large steps (a multiple of 8) */
static size_t slot;  /* each origin's slot: large bytes, then a counter */

/* Element i of the int64 pattern of step s in round r for origin o. */
static int64_t element(int o, int r, int s, size_t i)
{
    return (int64_t) (o + 1) * 1000003 + r * 1009 + s * 101 + (int64_t) i * 7;
}

static void fill64(int64_t *v, size_t n, int o, int r, int s)
{
    for (size_t i = 0; i < n; ++i) {
        v[i] = element(o, r, s, i);
    }
}

static size_t step_bytes(int s)
{
    return PUT == s || GET == s ? 8 : large;
}

/* What the target writes into origin o's slot before step s. */
static void target_prepare(unsigned char *at, int o, int r, int s)
{
    memset(at, 0, slot);
    if (GET == s || GET_LARGE == s) {
        mt_fill(at, step_bytes(s), 1000 + o, r, s);
    } else if (ACC == s || ACC_LARGE == s || GACC_LARGE == s) {
        fill64((int64_t *) at, (ACC == s ? 8 : large) / 8, o, r, s);
    } else if (FOP == s || CAS == s) {
        const int64_t start = element(o, r, s, 0);
        memcpy(at + large, &start, sizeof start);
    }
}

/* What the target finds in origin o's slot after step s. */
static void target_check(unsigned char *at, int o, int r, int s)
{
    const size_t n = step_bytes(s);
    unsigned char *want = mt_alloc(slot);
    int64_t *w = (int64_t *) want;
    memset(want, 0, slot);
    switch (s) {
    case PUT:
    case PUT_LARGE:
        mt_fill(want, n, o, r, s);
        break;
    case GET:
    case GET_LARGE:
        mt_fill(want, n, 1000 + o, r, s);
        break;
    case FOP:
    case CAS:
        w[large / 8] = element(o, r, s, 0) + (FOP == s ? 5 : 77);
        break;
    default: /* the target's elements plus the origin's (their index + 1) */
        for (size_t i = 0; i < (ACC == s ? 8 : large) / 8; ++i) {
            w[i] = element(o, r, s, i) + (int64_t) i + 1;
        }
    }
    ot_check(at, want, slot, "round %d, %s: origin %d's slot at the target", r, step_names[s], o);
    free(want);
}

/* One step at origin o: the operation, a flush, and its own checks. */
static void origin_step(MPI_Win win, int o, int target, MPI_Aint base, int r, int s)
{
    const MPI_Aint at = MPI_Aint_add(base, (MPI_Aint) ((size_t) o * slot));
    const MPI_Aint counter = MPI_Aint_add(at, (MPI_Aint) large);
    const size_t n = step_bytes(s);
    unsigned char *out = mt_alloc(large), *in = mt_alloc(large), *want = mt_alloc(large);
    int64_t *elems = (int64_t *) out;
    int64_t got = 0;
    memset(in, 0, large);
    switch (s) {
    case PUT:
    case PUT_LARGE:
        mt_fill(out, n, o, r, s);
        OT(MPI_Put(out, (int) n, MPI_BYTE, target, at, (int) n, MPI_BYTE, win));
        break;
    case GET:
    case GET_LARGE:
        OT(MPI_Get(in, (int) n, MPI_BYTE, target, at, (int) n, MPI_BYTE, win));
        break;
    case ACC:
    case ACC_LARGE:
    case GACC_LARGE: {
        const int count = (int) ((ACC == s ? 8 : large) / 8);
        for (int i = 0; i < count; ++i) {
            elems[i] = i + 1;
        }
        if (GACC_LARGE == s) {
            OT(MPI_Get_accumulate(out, count, MPI_INT64_T, in, count, MPI_INT64_T, target, at, count, MPI_INT64_T,
                                  MPI_SUM, win));
        } else {
            OT(MPI_Accumulate(out, count, MPI_INT64_T, target, at, count, MPI_INT64_T, MPI_SUM, win));
        }
        break;
    }
    case FOP: {
        const int64_t five = 5;
        OT(MPI_Fetch_and_op(&five, &got, MPI_INT64_T, target, counter, MPI_SUM, win));
        break;
    }
    default: {
        const int64_t compare = element(o, r, s, 0), swap = compare + 77;
        OT(MPI_Compare_and_swap(&swap, &compare, &got, MPI_INT64_T, target, counter, win));
    }
    }
    OT(MPI_Win_flush(target, win));
    if (GET == s || GET_LARGE == s) {
        mt_fill(want, n, 1000 + o, r, s);
        ot_check(in, want, n, "round %d, %s: the get by origin %d", r, step_names[s], o);
    } else if (GACC_LARGE == s) {
        fill64((int64_t *) want, large / 8, o, r, s);
        ot_check(in, want, large, "round %d, %s: the old elements origin %d fetched", r, step_names[s], o);
    } else if (FOP == s || CAS == s) {
        const int64_t was = element(o, r, s, 0);
        ot_check(&got, &was, sizeof got, "round %d, %s: the old counter origin %d fetched", r, step_names[s], o);
    }
    free(out);
    free(in);
    free(want);
}

/* Detaches the region and attaches it again, `times` times. */
static void churn(MPI_Win win, unsigned char *base, size_t len, int times)
{
    for (int i = 0; i < times; ++i) {
        OT(MPI_Win_detach(win, base));
        OT(MPI_Win_attach(win, base, (MPI_Aint) len));
    }
}

int main(int argc, char **argv)
{
    int rank, nprocs;
    ot_init(&argc, &argv, "churn");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    const int times = atoi(ot_arg(argc, argv, "-churn", "300"));
    const int rounds = atoi(ot_arg(argc, argv, "-rounds", "2"));
    const char *steps = ot_arg(argc, argv, "-steps", NULL);
    large = ot_size(ot_arg(argc, argv, "-bytes", "100000")) & ~(size_t) 7;
    if (nprocs < 2 || large < 16) {
        ot_fail("needs 2 ranks or more and -bytes 16 or more");
    }
    slot = large + 64;
    const int target = nprocs - 1, origins = nprocs - 1;
    const size_t len = (size_t) origins * slot;
    unsigned char *mem = rank == target ? mt_alloc(len) : NULL;
    MPI_Aint base = 0;
    MPI_Win win;
    OT(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    OT(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    if (rank == target) {
        OT(MPI_Win_attach(win, mem, (MPI_Aint) len));
        OT(MPI_Get_address(mem, &base));
    }
    OT(MPI_Bcast(&base, 1, MPI_AINT, target, MPI_COMM_WORLD));
    OT(MPI_Win_lock_all(0, win));
    int done = 0;
    for (int r = 0; r < rounds; ++r) {
        for (int s = 0; s < STEPS; ++s) {
            if (!ot_listed(steps, step_names[s])) {
                continue;
            }
            if (rank == target) {
                churn(win, mem, len, done ? times : 0); /* the first step looks the region up */
                for (int o = 0; o < origins; ++o) {
                    target_prepare(mem + (size_t) o * slot, o, r, s);
                }
                OT(MPI_Win_sync(win));
            }
            OT(MPI_Barrier(MPI_COMM_WORLD)); /* attached and prepared */
            if (rank != target) {
                OT(MPI_Win_sync(win));
                origin_step(win, rank, target, base, r, s);
            }
            OT(MPI_Barrier(MPI_COMM_WORLD)); /* every origin's operation is complete */
            if (rank == target) {
                OT(MPI_Win_sync(win));
                for (int o = 0; o < origins; ++o) {
                    target_check(mem + (size_t) o * slot, o, r, s);
                }
            }
            ++done;
        }
    }
    OT(MPI_Win_unlock_all(win));
    if (rank == target) {
        OT(MPI_Win_detach(win, mem));
    }
    OT(MPI_Win_free(&win));
    free(mem);
    if (0 == rank) {
        printf("churn: %d steps in %d rounds, the region attached again %d times before each but the first\n", done,
               rounds, times);
    }
    mt_pass("churn");
    MPI_Finalize();
    return 0;
}
