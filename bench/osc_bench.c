/*
 * osc_bench: MPI one-sided latency and bandwidth from rank 0 (origin) to
 * rank 1 (target), and an alltoall written as MPI_Put in a fence epoch;
 * every test verifies the data it moved.
 *
 *   mpirun -np 2 --mca osc pt2pt ./osc_bench [-tests put,get,acc,fop,cas,put_bw,get_bw,acc_bw]
 *       [-sync flush,fence,pscw,lock] [-min BYTES] [-max BYTES] [-window W] [-scale F] [-win allocate|create|dynamic]
 *   mpirun -np N ... ./osc_bench -tests alltoall [-sizes B,B,..] [-iters N] [-warmup W]
 *       [-min_iters M] [-budget S] [-time S] [-win allocate|create|dynamic]
 *
 * Latency tests (ranks 0 and 1; any further ranks wait), one element or
 * -min (8) to -max (4 MiB) bytes doubling, the window MPI_Win_allocate'd
 * (-win create: MPI_Win_create over memory of our own; that and the
 * origin buffers start on a page, as the OSU benchmarks allocate them;
 * -win dynamic: MPI_Win_create_dynamic with such memory attached, the
 * displacements its addresses, which an allgather tells every rank):
 *   put, get     MPI_Put / MPI_Get of `bytes` MPI_BYTEs at displacement 0;
 *   acc          MPI_Accumulate of bytes / 8 MPI_DOUBLEs, MPI_SUM;
 *   fop          MPI_Fetch_and_op of one MPI_INT64_T, MPI_SUM (8 bytes only);
 *   cas          MPI_Compare_and_swap of one MPI_INT64_T (8 bytes only);
 * each with -sync
 *   flush        MPI_Win_lock_all once, then per iteration the op and
 *                MPI_Win_flush(1) (osu_put_latency's flush), the target
 *                passive in MPI_Barrier;
 *   fence        per iteration the op and MPI_Win_fence on both ranks;
 *   pscw         per iteration MPI_Win_start, the op and MPI_Win_complete
 *                at the origin, MPI_Win_post and MPI_Win_wait at the
 *                target (on request: not in the default -sync);
 *   lock         per iteration MPI_Win_lock(exclusive, 1), the op and
 *                MPI_Win_unlock(1) (osu_put_latency -s lock), the target
 *                passive in MPI_Barrier (on request).
 * Iterations W warm-up + N timed: 100 + 1000 up to 8 KiB, 20 + 200 up to
 * 256 KiB, 5 + 50 above, each times -scale (1); us is the timed span
 * over N (as osu_*_latency), p50_us the median iteration.
 * Bandwidth tests (-sync is flush only): put_bw, get_bw, acc_bw (bytes / 8
 * MPI_DOUBLEs, MPI_SUM, from 8 bytes): lock_all, then per iteration
 * -window (32) ops of `bytes` into consecutive slots of the target window
 * (wrapping at -max) and one MPI_Win_flush(1) (osu_put_bw);
 * iterations 64 MiB / (window * bytes) clamped to 3..100 (times -scale, at
 * least 2), a tenth of that (at least 1) warm-up first.
 *
 * Checks: before each (test, size) the target window and the origin's
 * buffers are set to known values; after its last iteration the verifier
 * reads them once: put the target window (every put byte), get the
 * origin's buffer, acc and acc_bw every double equal to the number of
 * accumulates into its slot times what was added, fop and cas the target element equal to the number of ops and the
 * last fetched value one less (every cas swapped, every fop added).  The
 * target reads and writes its window inside MPI_Win_lock(exclusive, self).
 *
 * alltoall (on every rank): one window of np * max bytes; per iteration
 * MPI_Barrier, t0, MPI_Win_fence(MPI_MODE_NOPRECEDE), MPI_Put of the block
 * for each other rank p into p's window at rank * bytes, in the order
 * rank + 1, rank + 2, ... (mod np), its own block copied in place, then
 * MPI_Win_fence(MPI_MODE_NOSUCCEED), t1: what MPI_Alltoall does, written in
 * MPI one-sided.  Sizes (-sizes, default 1K,4K,..,4M), iteration rules,
 * data checks and the RESULT line are coll_bench's (bench/coll_bench.c):
 * per iteration the max and the mean over ranks of t1 - t0; -iters (20)
 * measured iterations after -warmup (2), at least -min_iters (3), a size
 * stops early past -budget (2) s and lasts at least -time (0) s.
 *
 * Output, from rank 0: "# osc_bench np=.. hosts=h,h,.. win=.. model=unified|separate"
 * then per (test, size)
 *   RESULT test=put sync=flush bytes=8 iters=1000 us=12.34 p50_us=11.90 MBps=0.65
 *   RESULT test=put_bw sync=flush bytes=8 iters=100 window=32 us=1.02 MBps=7.84
 *   RESULT op=put_alltoall bytes=1024 iters=20 max_us=.. mean_us=.. avg_max_us=.. avg_mean_us=.. min_max_us=..
 * us: one iteration (latency tests) or one op (bandwidth: the window's
 * span over its ops); MBps: 10^6 bytes per second.  At the end
 * "PASS osc_bench".  Wrong data or an MPI error prints "FAIL osc_bench ..."
 * and aborts.  RTTCC_MPITEST_CORRUPT=1 flips one byte the verifier reads
 * (self-test of the checks).
 */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tools/tool_buffer.h"

enum test { T_PUT, T_GET, T_ACC, T_FOP, T_CAS, T_PUT_BW, T_GET_BW, T_ACC_BW, T_ALLTOALL, T_COUNT };
static const char *const test_names[T_COUNT] = {"put", "get", "acc", "fop", "cas", "put_bw", "get_bw", "acc_bw", "alltoall"};
enum sync { S_FLUSH = 1, S_FENCE = 2, S_PSCW = 4, S_LOCK = 8 };

static const char *sync_name(enum sync s)
{
    return S_FLUSH == s ? "flush" : S_FENCE == s ? "fence" : S_PSCW == s ? "pscw" : "lock";
}
enum { MAX_SIZES = 64, BW_BYTES = 64 << 20 };

typedef struct opts {
    unsigned tests;          /* 1 << T_* */
    unsigned syncs;          /* S_* bits */
    size_t min, max;         /* latency and bandwidth sizes */
    int window;              /* ops per flush in the bandwidth tests */
    double scale;            /* iteration counts times this */
    int create;              /* 1: MPI_Win_create, 2: MPI_Win_create_dynamic, 0: MPI_Win_allocate */
    size_t sizes[MAX_SIZES]; /* alltoall block sizes */
    int nsizes;
    int iters, warmup, min_iters; /* alltoall iteration rules (coll_bench's) */
    double budget, time;
} opts_t;

/* A window and the memory behind it. */
typedef struct window {
    MPI_Win win;
    unsigned char *base;
    void *owned; /* malloc'd base of a created window */
    MPI_Aint *at; /* dynamic: every rank's base address, by rank in the window's group; else NULL */
} window_t;

/* The target displacement of byte `offset` of rank's window. */
static MPI_Aint disp(const window_t *w, int rank, size_t offset)
{
    return NULL != w->at ? MPI_Aint_add(w->at[rank], (MPI_Aint) offset) : (MPI_Aint) offset;
}

static int corrupt_once = -1; /* RTTCC_MPITEST_CORRUPT: flip one verified byte, once */

static void fail(const char *what, long a, long b)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fprintf(stderr, "FAIL osc_bench on rank %d: %s (%ld, %ld)\n", rank, what, a, b);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 3);
}

/* Every MPI call of the tests returns its error here (MPI_ERRORS_RETURN). */
static void check_rc(int rc, const char *call)
{
    if (MPI_SUCCESS != rc) {
        char s[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, s, &len);
        int rank;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        fprintf(stderr, "FAIL osc_bench on rank %d: %s: %s\n", rank, call, s);
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 4);
    }
}
#define CHECK(call) check_rc((call), #call)

static void maybe_corrupt(unsigned char *p)
{
    if (corrupt_once < 0) {
        corrupt_once = NULL != getenv("RTTCC_MPITEST_CORRUPT");
    }
    if (corrupt_once) {
        *p ^= 0x40;
        corrupt_once = 0;
    }
}

static void win_open(window_t *w, size_t bytes, int create, MPI_Comm comm)
{
    w->owned = NULL;
    w->at = NULL;
    if (2 == create) {
        int n;
        MPI_Aint mine;
        MPI_Comm_size(comm, &n);
        w->owned = tool_page_buffer("osc_bench", bytes);
        w->base = w->owned;
        w->at = malloc((size_t) n * sizeof *w->at);
        if (NULL == w->at) {
            fail("out of memory for the window's addresses (ranks, -)", n, 0);
        }
        check_rc(MPI_Win_create_dynamic(MPI_INFO_NULL, comm, &w->win),
                 "MPI_Win_create_dynamic (does an osc component serve this window? e.g. --mca osc pt2pt)");
        CHECK(MPI_Win_attach(w->win, w->base, (MPI_Aint) bytes));
        CHECK(MPI_Get_address(w->base, &mine));
        CHECK(MPI_Allgather(&mine, 1, MPI_AINT, w->at, 1, MPI_AINT, comm));
    } else if (create) {
        w->owned = tool_page_buffer("osc_bench", bytes);
        w->base = w->owned;
        check_rc(MPI_Win_create(w->base, (MPI_Aint) bytes, 1, MPI_INFO_NULL, comm, &w->win),
                 "MPI_Win_create (does an osc component serve this window? e.g. --mca osc pt2pt)");
    } else {
        check_rc(MPI_Win_allocate((MPI_Aint) bytes, 1, MPI_INFO_NULL, comm, &w->base, &w->win),
                 "MPI_Win_allocate (does an osc component serve this window? e.g. --mca osc pt2pt)");
    }
    CHECK(MPI_Win_set_errhandler(w->win, MPI_ERRORS_RETURN));
}

static void win_close(window_t *w)
{
    if (NULL != w->at) {
        CHECK(MPI_Win_detach(w->win, w->base));
    }
    CHECK(MPI_Win_free(&w->win));
    free(w->owned);
    free(w->at);
}

/* Byte k of a `bytes`-byte message; its complement is the poison. */
static inline unsigned char pattern(size_t bytes, size_t k)
{
    return (unsigned char) (k * 131 + bytes * 7 + 1);
}

static void fill(unsigned char *p, size_t bytes, int poison)
{
    for (size_t k = 0; k < bytes; ++k) {
        p[k] = poison ? (unsigned char) ~pattern(bytes, k) : pattern(bytes, k);
    }
}

static void expect_pattern(unsigned char *p, size_t bytes, const char *what)
{
    maybe_corrupt(p + bytes / 2);
    for (size_t k = 0; k < bytes; ++k) {
        if (p[k] != pattern(bytes, k)) {
            fail(what, (long) bytes, (long) k);
        }
    }
}

/* What acc adds to double k. */
static inline double addend(size_t k)
{
    return (double) (k % 1000 + 1);
}

static int cmp_double(const void *x, const void *y)
{
    const double a = *(const double *) x, b = *(const double *) y;
    return (a > b) - (a < b);
}

static double median(double *v, int n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n ? (n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2])) : NAN;
}

/* ---- rank 0 to rank 1 ---- */

typedef struct pair {
    MPI_Comm comm; /* ranks 0 and 1 of MPI_COMM_WORLD */
    int rank;      /* 0 origin, 1 target */
    window_t w;
    unsigned char *sbuf, *rbuf; /* the origin's, -max bytes each */
    double *addends;
    int64_t add, swap, compare; /* fop's and cas's origin operands: read until the op completes */
    int64_t fetched;            /* their results */
} pair_t;

static int latency_iters(size_t bytes, double scale, int *warm)
{
    const int n = bytes <= 8192 ? 1000 : bytes <= 262144 ? 200 : 50;
    *warm = (int) (n / 10 * scale);
    const int s = (int) (n * scale);
    return s > 2 ? s : 2;
}

static int bandwidth_iters(size_t bytes, int window, double scale, int *warm)
{
    long n = BW_BYTES / ((long) window * (long) bytes);
    n = n < 3 ? 3 : n > 100 ? 100 : n;
    const int s = (int) (n * scale);
    *warm = s / 10 > 1 ? s / 10 : 1;
    return s > 2 ? s : 2;
}

/* One op of test t towards rank 1; i numbers it from 0 (the value cas expects). */
static void issue(pair_t *p, enum test t, size_t bytes, long i, size_t slot)
{
    const int target = 1;
    switch (t) {
    case T_PUT:
    case T_PUT_BW:
        CHECK(MPI_Put(p->sbuf, (int) bytes, MPI_BYTE, target, disp(&p->w, target, slot * bytes), (int) bytes, MPI_BYTE,
                      p->w.win));
        break;
    case T_GET:
    case T_GET_BW:
        CHECK(MPI_Get(p->rbuf + slot * bytes, (int) bytes, MPI_BYTE, target, disp(&p->w, target, slot * bytes),
                      (int) bytes, MPI_BYTE, p->w.win));
        break;
    case T_ACC:
    case T_ACC_BW:
        CHECK(MPI_Accumulate(p->addends, (int) (bytes / 8), MPI_DOUBLE, target, disp(&p->w, target, slot * bytes),
                             (int) (bytes / 8), MPI_DOUBLE, MPI_SUM, p->w.win));
        break;
    case T_FOP:
        p->add = 1;
        CHECK(MPI_Fetch_and_op(&p->add, &p->fetched, MPI_INT64_T, target, disp(&p->w, target, 0), MPI_SUM, p->w.win));
        break;
    case T_CAS:
        p->compare = i;
        p->swap = i + 1;
        CHECK(MPI_Compare_and_swap(&p->swap, &p->compare, &p->fetched, MPI_INT64_T, target, disp(&p->w, target, 0),
                                   p->w.win));
        break;
    default:
        fail("no such test (test, -)", t, 0);
    }
}

/* Before a (test, size): the target's window and the origin's buffers. */
static void prepare(pair_t *p, enum test t, size_t bytes, size_t used)
{
    if (1 == p->rank) {
        CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, p->w.win));
        if (T_PUT == t || T_PUT_BW == t || T_GET == t || T_GET_BW == t) {
            for (size_t s = 0; s < used / bytes; ++s) {
                fill(p->w.base + s * bytes, bytes, T_PUT == t || T_PUT_BW == t);
            }
        } else {
            memset(p->w.base, 0, T_ACC_BW == t ? used : T_ACC == t ? bytes : sizeof(int64_t));
        }
        CHECK(MPI_Win_unlock(1, p->w.win));
    } else {
        if (T_PUT == t || T_PUT_BW == t) {
            fill(p->sbuf, bytes, 0);
        } else if (T_GET == t || T_GET_BW == t) {
            for (size_t s = 0; s < used / bytes; ++s) {
                fill(p->rbuf + s * bytes, bytes, 1);
            }
        } else if (T_ACC == t || T_ACC_BW == t) {
            for (size_t k = 0; k < bytes / 8; ++k) {
                p->addends[k] = addend(k);
            }
        }
        p->fetched = -1;
    }
    CHECK(MPI_Barrier(p->comm));
}

/* After a (test, size) of `ops` ops, or of `ops` windows of `window` ops
 * into `used` bytes of slots (op j of a window into slot j mod slots): the
 * data, once. */
static void verify(pair_t *p, enum test t, size_t bytes, size_t used, long ops, int window)
{
    if (1 == p->rank && T_GET != t && T_GET_BW != t) {
        CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, p->w.win));
        if (T_PUT == t || T_PUT_BW == t) {
            for (size_t s = 0; s < used / bytes; ++s) {
                expect_pattern(p->w.base + s * bytes, bytes, "wrong byte at the target after puts (bytes, offset)");
            }
        } else if (T_ACC == t || T_ACC_BW == t) {
            const size_t slots = used / bytes, w = T_ACC_BW == t ? (size_t) window : slots;
            double *d = (double *) p->w.base;
            maybe_corrupt(p->w.base);
            for (size_t s = 0; s < slots; ++s) {
                const long adds = ops * (long) (w / slots + (s < w % slots)); /* into slot s */
                for (size_t k = 0; k < bytes / 8; ++k) {
                    if (d[s * bytes / 8 + k] != (double) adds * addend(k)) {
                        fail("wrong sum at the target after accumulates (doubles, index)", (long) (bytes / 8),
                             (long) (s * bytes / 8 + k));
                    }
                }
            }
        } else {
            int64_t v;
            maybe_corrupt(p->w.base);
            memcpy(&v, p->w.base, sizeof v);
            if (v != ops) {
                fail(T_FOP == t ? "fetch_and_op: target value is not the number of ops (value, ops)"
                                : "compare_and_swap: target value is not the number of ops (value, ops)",
                     (long) v, ops);
            }
        }
        CHECK(MPI_Win_unlock(1, p->w.win));
    } else if (0 == p->rank) {
        if (T_GET == t || T_GET_BW == t) {
            for (size_t s = 0; s < used / bytes; ++s) {
                expect_pattern(p->rbuf + s * bytes, bytes, "wrong byte at the origin after gets (bytes, offset)");
            }
        } else if (T_FOP == t || T_CAS == t) {
            maybe_corrupt((unsigned char *) &p->fetched);
            if (p->fetched != ops - 1) {
                fail("the last fetched value is not the number of ops before it (value, ops)", (long) p->fetched,
                     ops - 1);
            }
        }
    }
    CHECK(MPI_Barrier(p->comm));
}

/* p50: the median iteration's seconds (latency tests), or 0. */
static void report(enum test t, enum sync s, size_t bytes, int iters, int window, double secs, double p50)
{
    const double ops = (double) iters * (window ? window : 1);
    printf("RESULT test=%s sync=%s bytes=%zu iters=%d", test_names[t],
           sync_name(s), bytes,
           iters);
    if (window) {
        printf(" window=%d", window);
    }
    printf(" us=%.2f", secs / ops * 1e6);
    if (p50 > 0) {
        printf(" p50_us=%.2f", p50 * 1e6);
    }
    printf(" MBps=%.2f\n", (double) bytes * ops / secs / 1e6);
    fflush(stdout);
}

/* Latency of test t with sync s at one size; stamps[i] is when timed iteration i began (iters + 1 of them). */
static void latency(pair_t *p, const opts_t *o, enum test t, enum sync s, size_t bytes, double *stamps)
{
    int warm;
    const int iters = latency_iters(bytes, o->scale, &warm);
    prepare(p, t, bytes, bytes);
    if (S_FLUSH == s && 0 == p->rank) {
        CHECK(MPI_Win_lock_all(0, p->w.win));
        for (long i = 0; i < warm + iters; ++i) {
            if (i >= warm) {
                stamps[i - warm] = MPI_Wtime();
            }
            issue(p, t, bytes, i, 0);
            CHECK(MPI_Win_flush(1, p->w.win));
        }
        stamps[iters] = MPI_Wtime();
        CHECK(MPI_Win_unlock_all(p->w.win));
    } else if (S_FENCE == s) {
        CHECK(MPI_Win_fence(MPI_MODE_NOPRECEDE, p->w.win));
        for (long i = 0; i < warm + iters; ++i) {
            if (i >= warm) {
                stamps[i - warm] = MPI_Wtime();
            }
            if (0 == p->rank) {
                issue(p, t, bytes, i, 0);
            }
            CHECK(MPI_Win_fence(i + 1 == warm + iters ? MPI_MODE_NOSUCCEED : 0, p->w.win));
        }
        stamps[iters] = MPI_Wtime();
    } else if (S_LOCK == s && 0 == p->rank) {
        for (long i = 0; i < warm + iters; ++i) {
            if (i >= warm) {
                stamps[i - warm] = MPI_Wtime();
            }
            CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, p->w.win));
            issue(p, t, bytes, i, 0);
            CHECK(MPI_Win_unlock(1, p->w.win));
        }
        stamps[iters] = MPI_Wtime();
    } else if (S_PSCW == s) {
        MPI_Group all, other;
        const int peer = 1 - p->rank;
        CHECK(MPI_Comm_group(p->comm, &all));
        CHECK(MPI_Group_incl(all, 1, &peer, &other));
        for (long i = 0; i < warm + iters; ++i) {
            if (i >= warm) {
                stamps[i - warm] = MPI_Wtime();
            }
            if (0 == p->rank) {
                CHECK(MPI_Win_start(other, 0, p->w.win));
                issue(p, t, bytes, i, 0);
                CHECK(MPI_Win_complete(p->w.win));
            } else {
                CHECK(MPI_Win_post(other, 0, p->w.win));
                CHECK(MPI_Win_wait(p->w.win));
            }
        }
        stamps[iters] = MPI_Wtime();
        MPI_Group_free(&other);
        MPI_Group_free(&all);
    }
    CHECK(MPI_Barrier(p->comm)); /* the target waits here through flush and lock */
    verify(p, t, bytes, bytes, warm + iters, 0);
    if (0 == p->rank) {
        const double span = stamps[iters] - stamps[0];
        for (int i = 0; i < iters; ++i) {
            stamps[i] = stamps[i + 1] - stamps[i];
        }
        report(t, s, bytes, iters, 0, span, median(stamps, iters));
    }
}

/* Bandwidth of put_bw or get_bw at one size: windows of ops, a flush after each. */
static void bandwidth(pair_t *p, const opts_t *o, enum test t, size_t bytes)
{
    int warm;
    const int iters = bandwidth_iters(bytes, o->window, o->scale, &warm);
    const size_t slots = o->max / bytes, used = (slots < (size_t) o->window ? slots : (size_t) o->window) * bytes;
    double t0 = 0, t1 = 0;
    prepare(p, t, bytes, used);
    if (0 == p->rank) {
        CHECK(MPI_Win_lock_all(0, p->w.win));
        for (long i = 0; i < warm + iters; ++i) {
            if (i == warm) {
                t0 = MPI_Wtime();
            }
            for (int j = 0; j < o->window; ++j) {
                issue(p, t, bytes, i, (size_t) j % slots);
            }
            CHECK(MPI_Win_flush(1, p->w.win));
        }
        t1 = MPI_Wtime();
        CHECK(MPI_Win_unlock_all(p->w.win));
    }
    CHECK(MPI_Barrier(p->comm));
    verify(p, t, bytes, used, warm + iters, o->window);
    if (0 == p->rank) {
        report(t, S_FLUSH, bytes, iters, o->window, t1 - t0, 0);
    }
}

static void pair_tests(const opts_t *o)
{
    int wrank;
    pair_t p = {0};
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    CHECK(MPI_Comm_split(MPI_COMM_WORLD, wrank < 2 ? 0 : MPI_UNDEFINED, wrank, &p.comm));
    if (MPI_COMM_NULL == p.comm) {
        return;
    }
    p.rank = wrank;
    CHECK(MPI_Comm_set_errhandler(p.comm, MPI_ERRORS_RETURN));
    win_open(&p.w, o->max, o->create, p.comm);
    p.sbuf = tool_page_buffer("osc_bench", o->max);
    p.rbuf = tool_page_buffer("osc_bench", o->max);
    p.addends = tool_page_buffer("osc_bench", o->max);
    int warm;
    double *stamps = malloc(((size_t) latency_iters(8, o->scale, &warm) + 1) * sizeof *stamps);
    if (!stamps) {
        fail("out of memory (bytes, -)", (long) o->max, 0);
    }
    for (enum test t = T_PUT; t <= T_CAS; ++t) {
        for (enum sync s = S_FLUSH; (o->tests & 1u << t) && s <= S_LOCK; s <<= 1) {
            for (size_t b = o->min; (o->syncs & s) && b <= o->max; b *= 2) {
                latency(&p, o, t, s, b, stamps);
                if (T_FOP == t || T_CAS == t) {
                    break; /* one element */
                }
            }
        }
    }
    for (enum test t = T_PUT_BW; t <= T_ACC_BW; ++t) {
        for (size_t b = T_ACC_BW == t && o->min < 8 ? 8 : o->min; (o->tests & 1u << t) && b <= o->max; b *= 2) {
            bandwidth(&p, o, t, b);
        }
    }
    win_close(&p.w);
    free(p.sbuf);
    free(p.rbuf);
    free(p.addends);
    free(stamps);
    CHECK(MPI_Comm_free(&p.comm));
}

/* ---- alltoall as puts in a fence epoch, on every rank ---- */

typedef struct a2a {
    int n, rank;
    window_t w;       /* n blocks: block p comes from rank p */
    uint64_t *sbuf;   /* n blocks: block p goes to rank p */
} a2a_t;

/* Word k of the block from src to dst (coll_bench's). */
static inline uint64_t word(int src, int dst, size_t k, size_t words)
{
    return ((uint64_t) src << 48) ^ ((uint64_t) dst << 32) ^ (k * 0x9E3779B97F4A7C15ull) ^ (words << 8);
}

/* What the first and last word of a block carry in iteration `it`. */
static inline uint64_t tag(uint64_t w, long it)
{
    return w ^ ((uint64_t) (it + 2) * 0xC2B2AE3D27D4EB4Full);
}

static const uint64_t POISON = 0xDEADBEEFDEADBEEFull;

static void a2a_layout(a2a_t *a, size_t words)
{
    for (int p = 0; p < a->n; ++p) {
        for (size_t k = 0; k < words; ++k) {
            a->sbuf[p * words + k] = word(a->rank, p, k, words);
        }
    }
    uint64_t *r = (uint64_t *) a->w.base;
    for (size_t k = 0; k < (size_t) a->n * words; ++k) {
        r[k] = POISON;
    }
}

/* Outside any epoch: tags the ends of the outgoing blocks, poisons the ends of the incoming ones. */
static void a2a_prepare(a2a_t *a, size_t words, long it)
{
    uint64_t *r = (uint64_t *) a->w.base;
    for (int p = 0; p < a->n; ++p) {
        uint64_t *s = a->sbuf + p * words;
        s[0] = tag(word(a->rank, p, 0, words), it);
        s[words - 1] = tag(word(a->rank, p, words - 1, words), it);
        r[p * words] = POISON;
        r[p * words + words - 1] = POISON;
    }
}

static void a2a_verify(a2a_t *a, size_t words, long it, int full)
{
    uint64_t *r = (uint64_t *) a->w.base;
    if (0 == a->rank) {
        maybe_corrupt((unsigned char *) &r[(a->n - 1) * words]);
    }
    for (int p = 0; p < a->n; ++p) {
        const uint64_t *b = r + p * words;
        if (b[0] != tag(word(p, a->rank, 0, words), it) || b[words - 1] != tag(word(p, a->rank, words - 1, words), it)) {
            fail("put alltoall: wrong data at an end of the block from (rank, iteration)", p, it);
        }
        for (size_t k = 1; full && k + 1 < words; ++k) {
            if (b[k] != word(p, a->rank, k, words)) {
                fail("put alltoall: wrong data in the block from (rank, word)", p, (long) k);
            }
        }
    }
}

static void a2a_exchange(a2a_t *a, size_t bytes)
{
    CHECK(MPI_Win_fence(MPI_MODE_NOPRECEDE, a->w.win));
    for (int i = 1; i < a->n; ++i) {
        const int p = (a->rank + i) % a->n;
        CHECK(MPI_Put((unsigned char *) a->sbuf + p * bytes, (int) bytes, MPI_BYTE, p, disp(&a->w, p, a->rank * bytes),
                      (int) bytes, MPI_BYTE, a->w.win));
    }
    memcpy(a->w.base + a->rank * bytes, (unsigned char *) a->sbuf + a->rank * bytes, bytes);
    CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED, a->w.win));
}

/* One iteration: out = {max over ranks of t1 - t0, max over ranks of now - since}, *sum on rank 0. */
static void a2a_iteration(a2a_t *a, size_t bytes, long it, int full, double since, double out[2], double *sum)
{
    a2a_prepare(a, bytes / 8, it);
    CHECK(MPI_Barrier(MPI_COMM_WORLD));
    const double t0 = MPI_Wtime();
    a2a_exchange(a, bytes);
    const double t1 = MPI_Wtime();
    a2a_verify(a, bytes / 8, it, full);
    double in[2] = {t1 - t0, MPI_Wtime() - since};
    CHECK(MPI_Allreduce(in, out, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    CHECK(MPI_Reduce(&in[0], sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD));
}

static double average(const double *v, int n)
{
    double s = 0;
    for (int i = 0; i < n; ++i) {
        s += v[i];
    }
    return n ? s / n : NAN;
}

/* One block size, coll_bench's iteration rules and RESULT line. */
static void a2a_measure(a2a_t *a, const opts_t *o, size_t bytes)
{
    double out[2], sum = 0;
    int cap = o->iters > 64 ? o->iters : 64, n = 0;
    double *vmax = malloc(cap * sizeof *vmax), *vmean = malloc(cap * sizeof *vmean);
    long it = 0;

    a2a_layout(a, bytes / 8);
    const double warm_start = MPI_Wtime();
    for (int w = 0; w < o->warmup; ++w, ++it) {
        a2a_iteration(a, bytes, it, 0 == w, warm_start, out, &sum);
        if (out[1] >= o->budget / 4) {
            break;
        }
    }
    const double start = MPI_Wtime();
    for (int going = 1; going; ++it) {
        a2a_iteration(a, bytes, it, 0, start, out, &sum);
        if (n == cap) {
            cap *= 2;
            vmax = realloc(vmax, cap * sizeof *vmax);
            vmean = realloc(vmean, cap * sizeof *vmean);
        }
        vmax[n] = out[0] * 1e6;
        vmean[n] = sum / a->n * 1e6;
        ++n;
        /* out[] is the same on every rank: so is the decision */
        going = n < o->min_iters || (out[1] < o->budget && (n < o->iters || out[1] < o->time));
    }
    a2a_iteration(a, bytes, it, 1, start, out, &sum); /* every word, untimed */
    if (0 == a->rank) {
        const double avg_max = average(vmax, n), avg_mean = average(vmean, n);
        const double mean_med = median(vmean, n), max_med = median(vmax, n); /* sorts vmax: min is vmax[0] */
        printf("RESULT op=put_alltoall bytes=%zu iters=%d max_us=%.1f mean_us=%.1f avg_max_us=%.1f avg_mean_us=%.1f "
               "min_max_us=%.1f\n",
               bytes, n, max_med, mean_med, avg_max, avg_mean, vmax[0]);
        fflush(stdout);
    }
    free(vmax);
    free(vmean);
}

static void alltoall_tests(const opts_t *o)
{
    a2a_t a;
    size_t max = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &a.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &a.n);
    for (int i = 0; i < o->nsizes; ++i) {
        max = o->sizes[i] > max ? o->sizes[i] : max;
    }
    win_open(&a.w, (size_t) a.n * max, o->create, MPI_COMM_WORLD);
    a.sbuf = tool_page_buffer("osc_bench", (size_t) a.n * max);
    for (int i = 0; i < o->nsizes; ++i) {
        a2a_measure(&a, o, o->sizes[i]);
    }
    win_close(&a.w);
    free(a.sbuf);
}

/* ---- options ---- */

static size_t parse_size(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    switch (*end) {
    case 'k': case 'K': v *= 1024; break;
    case 'm': case 'M': v *= 1024 * 1024; break;
    default: break;
    }
    return (size_t) v;
}

/* A comma-separated list of names into bits of their indexes in names[]; 0 for an unknown name. */
static unsigned parse_names(const char *v, const char *const *names, int count)
{
    unsigned bits = 0;
    char *list = strdup(v), *save = NULL;
    for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int i = 0;
        while (i < count && strcmp(t, names[i])) {
            ++i;
        }
        if (i == count) {
            bits = 0;
            break;
        }
        bits |= 1u << i;
    }
    free(list);
    return bits;
}

static int parse(opts_t *o, int argc, char **argv)
{
    static const char *const syncs[] = {"flush", "fence", "pscw", "lock"};
    for (int i = 1; i < argc; i += 2) {
        const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (NULL == v) {
            return 0;
        } else if (0 == strcmp(k, "-tests")) {
            o->tests = parse_names(v, test_names, T_COUNT);
        } else if (0 == strcmp(k, "-sync")) {
            o->syncs = parse_names(v, syncs, 4);
        } else if (0 == strcmp(k, "-min")) {
            o->min = parse_size(v);
        } else if (0 == strcmp(k, "-max")) {
            o->max = parse_size(v);
        } else if (0 == strcmp(k, "-window")) {
            o->window = atoi(v);
        } else if (0 == strcmp(k, "-scale")) {
            o->scale = atof(v);
        } else if (0 == strcmp(k, "-win")) {
            if (strcmp(v, "allocate") && strcmp(v, "create") && strcmp(v, "dynamic")) {
                return 0;
            }
            o->create = 0 == strcmp(v, "create") ? 1 : 0 == strcmp(v, "dynamic") ? 2 : 0;
        } else if (0 == strcmp(k, "-sizes")) {
            char *list = strdup(v), *save = NULL;
            o->nsizes = 0;
            for (char *t = strtok_r(list, ",", &save); t && o->nsizes < MAX_SIZES; t = strtok_r(NULL, ",", &save)) {
                o->sizes[o->nsizes++] = parse_size(t);
            }
            free(list);
        } else if (0 == strcmp(k, "-iters")) {
            o->iters = atoi(v);
        } else if (0 == strcmp(k, "-warmup")) {
            o->warmup = atoi(v);
        } else if (0 == strcmp(k, "-min_iters")) {
            o->min_iters = atoi(v);
        } else if (0 == strcmp(k, "-budget")) {
            o->budget = atof(v);
        } else if (0 == strcmp(k, "-time")) {
            o->time = atof(v);
        } else {
            return 0;
        }
    }
    if (o->budget < o->time) {
        o->budget = o->time;
    }
    for (int i = 0; i < o->nsizes; ++i) {
        if (o->sizes[i] < 16 || o->sizes[i] % 8 || o->sizes[i] > (64u << 20)) {
            return 0;
        }
    }
    return o->tests && o->syncs && o->min >= 8 && o->min % 8 == 0 && o->max >= o->min && o->max <= (1u << 30) &&
           o->window >= 1 && o->scale > 0 && o->nsizes > 0 && o->iters >= 1 && o->warmup >= 0 &&
           o->min_iters >= 1 && o->budget >= 0 && o->time >= 0;
}

int main(int argc, char **argv)
{
    opts_t o = {.tests = (1u << T_ALLTOALL) - 1, .syncs = S_FLUSH | S_FENCE, .min = 8, .max = 4u << 20, .window = 32,
                .scale = 1, .nsizes = 0, .iters = 20, .warmup = 2, .min_iters = 3, .budget = 2.0, .time = 0};
    int rank, n;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (size_t b = 1024; b <= (4u << 20); b *= 4) {
        o.sizes[o.nsizes++] = b;
    }
    if (!parse(&o, argc, argv) || n < 2) {
        if (0 == rank) {
            fprintf(stderr, "usage: mpirun -np 2 osc_bench [-tests put,get,acc,fop,cas,put_bw,get_bw,acc_bw,alltoall]"
                            " [-sync flush,fence,pscw,lock] [-min BYTES (>= 8, n * 8)] [-max BYTES] [-window W] [-scale F]"
                            " [-win allocate|create|dynamic] [-sizes B,B,.. (>= 16, n * 8)] [-iters N] [-warmup W]"
                            " [-min_iters M] [-budget S] [-time S]\n");
        }
        MPI_Finalize();
        return 1;
    }

    char name[MPI_MAX_PROCESSOR_NAME] = {0};
    char *names = malloc((size_t) n * MPI_MAX_PROCESSOR_NAME);
    int len, flag, *model = NULL;
    MPI_Get_processor_name(name, &len);
    MPI_Gather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, MPI_COMM_WORLD);
    window_t probe;
    win_open(&probe, 8, o.create, MPI_COMM_WORLD); /* the memory model, and a clear error if no osc serves a window */
    CHECK(MPI_Win_get_attr(probe.win, MPI_WIN_MODEL, &model, &flag));
    if (0 == rank) {
        printf("# osc_bench np=%d hosts=", n);
        for (int r = 0; r < n; ++r) {
            printf("%s%s", r ? "," : "", names + (size_t) r * MPI_MAX_PROCESSOR_NAME);
        }
        printf(" win=%s model=%s\n", 2 == o.create ? "dynamic" : o.create ? "create" : "allocate",
               flag && MPI_WIN_UNIFIED == *model ? "unified" : "separate");
        fflush(stdout);
    }
    win_close(&probe);
    free(names);

    if (o.tests & ((1u << T_ALLTOALL) - 1)) {
        pair_tests(&o);
    }
    if (o.tests & 1u << T_ALLTOALL) {
        alltoall_tests(&o);
    }
    CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (0 == rank) {
        printf("PASS osc_bench\n");
    }
    MPI_Finalize();
    return 0;
}
