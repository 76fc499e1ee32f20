/*
 * coll_bench: completion time of MPI_Alltoall and MPI_Alltoallv per block
 * size, data verified.
 *
 *   mpirun-tb -np 4 --mca pml ob1 --mca btl rttcc,self ./coll_bench
 *       [-min BYTES] [-max BYTES] [-factor F] [-sizes B,B,..]
 *       [-ops alltoall,alltoallv] [-iters N] [-warmup W] [-min_iters M]
 *       [-budget S] [-time S] [-trace 1] [-through R | -across G]
 *
 * Block sizes: -min (1 KiB) to -max (4 MiB), each F (4) times the last, or
 * the list -sizes (e.g. 1K,64K,1M); every size a multiple of 8 bytes, at
 * least 16.  The data is MPI_BYTE.
 *
 * One iteration: MPI_Barrier, t0, the collective, t1; then (outside the
 * timed span) the check of the received data, MPI_Allreduce(MAX) of t1 - t0
 * (and of the time since the size's first measured iteration, so that every
 * rank takes the same decision to stop) and MPI_Reduce(SUM) of t1 - t0.
 * Per iteration: the max over ranks and the mean over ranks of t1 - t0.
 *
 * Iterations per size: W warm-up iterations (left out; the second and later
 * ones are skipped once the warm-up took budget / 4), then measured ones:
 * at least M (3); stop after N (20) if at least S (-time, 0) seconds have
 * passed since the first measured one, or earlier, once M are done, when
 * -budget seconds (2; raised to -time) have passed.  -time makes a size
 * span a wall-clock window (e.g. whole on/off periods of a background
 * flood), -budget bounds large blocks on slow links.
 *
 * alltoall: every rank sends `bytes` to every rank (itself included).
 * alltoallv: rank i sends c(i, j) bytes to rank j, with
 *     c(i, j) = 8 * max(1, floor(w * (0.5 + u(i, j)))),  w = bytes / 8,
 *     u(i, j) = splitmix64(i * 2^32 + j) / 2^64 in [0, 1):
 * every pair's count is the block size scaled by a factor in [0.5, 1.5),
 * fixed per pair (the same for every size and every run), so pairs differ
 * by up to 3x while the total stays close to alltoall's (P^2 * bytes on
 * average); displacements pack the blocks back to back.  `bytes` in the
 * output is the nominal block size, as for alltoall.
 *
 * Checking: the send buffer holds word(src, dst, k) at word k of the block
 * for dst; before each iteration the first and last word of every block are
 * re-tagged with the iteration number and the receiver poisons the first
 * and last word of every incoming block, then checks them after the
 * collective (cheap, every iteration: stale or misplaced blocks fail); the
 * first warm-up iteration and one more untimed iteration after the measured
 * ones check every word.  A mismatch prints FAIL and aborts.
 * RTTCC_MPITEST_CORRUPT=1 flips one received word on rank 0 (self-test of
 * the check).
 *
 * Output, from rank 0: a header "# coll_bench np=.. hosts=h,h,..", then
 * per op and size
 *   RESULT op=alltoall bytes=65536 iters=20 max_us=.. mean_us=..
 *          avg_max_us=.. avg_mean_us=.. min_max_us=..
 * max_us: median over iterations of the max over ranks; mean_us: median
 * over iterations of the mean over ranks; avg_*: the same averaged over the
 * iterations instead (the total time of the window over the iterations);
 * min_max_us: the fastest iteration's max over ranks.  With -trace 1, each
 * measured iteration also prints "ITER op=.. bytes=.. i=.. max_us=.. mean_us=..".
 * At the end "PASS coll_bench".
 *
 * -through and -across measure a bound instead of the collective: only the
 * pairs whose blocks cross a scenario's bottleneck exchange them, all at once
 * with MPI_Isend/MPI_Irecv, with the op's counts; the rest stays home.
 *     -through R  pairs with one end on rank R's host and the other not
 *                 (that host's link is the bottleneck)
 *     -across G   pairs with one end on a host before rank G's and the
 *                 other not (two groups of hosts joined by one link)
 * Hosts are numbered in the order of their first rank (MPI_Get_processor_name),
 * so with one rank per host these are rank R, and ranks below G; with more,
 * pairs on one host (which cross no link) stay home too.  When all ranks
 * share one host, ranks stand for hosts (so the bound runs on one machine).
 * No order of the collective's transfers can move the bottleneck's bytes
 * faster than this, over the same transport, so its time bounds what any
 * algorithm can gain there.  The RESULT line then also gives
 * bound=through:R or across:G and neck_bytes=: the bytes that cross the
 * bottleneck in its busier direction.
 */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tools/tool_buffer.h"

enum { OP_ALLTOALL = 1, OP_ALLTOALLV = 2, HARD_MAX_ITERS = 1000000, MAX_SIZES = 64 };

typedef struct opts {
    size_t min, max; /* block sizes, bytes */
    int factor;      /* each size is factor times the last */
    size_t sizes[MAX_SIZES]; /* the block sizes measured, from min/max/factor or -sizes */
    int nsizes;
    int ops;         /* OP_* bits */
    int iters;       /* measured iterations per size (target) */
    int warmup;      /* warm-up iterations per size */
    int min_iters;   /* measured iterations per size, at least */
    double budget;   /* seconds: stop a size's measured iterations past this (once min_iters are done) */
    double time;     /* seconds: a size's measured iterations span at least this */
    int trace;       /* 1: print every measured iteration */
    int only_kind;   /* ONLY_*: the collective, or -through / -across */
    int only_arg;    /* R or G */
} opts_t;

enum { ONLY_NONE = 0, ONLY_THROUGH = 1, ONLY_ACROSS = 2 };

/* The buffers and the layout of one collective. */
typedef struct layout {
    int n, rank;
    size_t *scount, *sdispl, *rcount, *rdispl; /* per peer, in 8-byte words */
    int *sc, *sd, *rc, *rd;                    /* the same in bytes, for MPI_Alltoallv */
    uint64_t *sbuf, *rbuf;
    const opts_t *o;                           /* o->only_kind != ONLY_NONE: the -only bound */
    int *host;                                 /* per rank, its host's number (first rank order) */
    MPI_Request *reqs;                         /* 2 per peer, for the bound */
} layout_t;

static void fail(const char *what, long a, long b, long c)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fprintf(stderr, "FAIL coll_bench on rank %d: %s (%ld, %ld, %ld)\n", rank, what, a, b, c);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 3);
}

static uint64_t splitmix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* Words from rank i to rank j for nominal block w words: w * (0.5 + u(i, j)), at least 1. */
static size_t v_words(int i, int j, size_t w)
{
    const double u = (double) (splitmix64(((uint64_t) i << 32) | (uint64_t) j) >> 11) * 0x1.0p-53;
    const size_t c = (size_t) floor((double) w * (0.5 + u));
    return c ? c : 1;
}

/* Whether rank i is on the bottleneck's first side: on rank R's host (through R), or on a host
 * before rank G's (across G). */
static int first_side(const layout_t *l, int i)
{
    const int h = l->host[i], arg = l->host[l->o->only_arg];
    return ONLY_THROUGH == l->o->only_kind ? h == arg : h < arg;
}

/* Whether the block from rank i to rank j crosses the bound's bottleneck (always, for the collective). */
static int crosses(const layout_t *l, int i, int j)
{
    return ONLY_NONE == l->o->only_kind || first_side(l, i) != first_side(l, j);
}

/* Word k of the block from src to dst (blocks of different sizes differ too). */
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

/* Counts and displacements for `op` with nominal block `w` words; fills the
 * send buffer with the pattern and poisons the receive buffer. */
static void set_layout(layout_t *l, int op, size_t w)
{
    size_t s = 0, r = 0;
    for (int p = 0; p < l->n; ++p) {
        l->scount[p] = OP_ALLTOALL == op ? w : v_words(l->rank, p, w);
        l->rcount[p] = OP_ALLTOALL == op ? w : v_words(p, l->rank, w);
        l->sdispl[p] = s;
        l->rdispl[p] = r;
        s += l->scount[p];
        r += l->rcount[p];
        l->sc[p] = (int) (l->scount[p] * 8);
        l->sd[p] = (int) (l->sdispl[p] * 8);
        l->rc[p] = (int) (l->rcount[p] * 8);
        l->rd[p] = (int) (l->rdispl[p] * 8);
        for (size_t k = 0; k < l->scount[p]; ++k) {
            l->sbuf[l->sdispl[p] + k] = word(l->rank, p, k, l->scount[p]);
        }
    }
    for (size_t k = 0; k < r; ++k) {
        l->rbuf[k] = POISON;
    }
}

/* Before iteration `it`: tags the ends of the outgoing blocks, poisons the ends of the incoming ones. */
static void prepare(layout_t *l, long it)
{
    for (int p = 0; p < l->n; ++p) {
        uint64_t *s = l->sbuf + l->sdispl[p], *r = l->rbuf + l->rdispl[p];
        const size_t c = l->scount[p];
        if (crosses(l, l->rank, p)) {
            s[0] = tag(word(l->rank, p, 0, c), it);
            s[c - 1] = tag(word(l->rank, p, c - 1, c), it);
        }
        if (crosses(l, p, l->rank)) {
            r[0] = POISON;
            r[l->rcount[p] - 1] = POISON;
        }
    }
}

/* After iteration `it`: the ends of every incoming block, and with `full` every word. */
static void verify(layout_t *l, long it, int full)
{
    static int corrupt = -1;
    if (corrupt < 0) {
        corrupt = NULL != getenv("RTTCC_MPITEST_CORRUPT") && 0 == l->rank;
    }
    for (int p = l->n - 1; corrupt && p >= 0; --p) {
        if (crosses(l, p, l->rank)) {
            l->rbuf[l->rdispl[p]] ^= 0x40;
            break;
        }
    }
    for (int p = 0; p < l->n; ++p) {
        const uint64_t *r = l->rbuf + l->rdispl[p];
        const size_t c = l->rcount[p];
        if (!crosses(l, p, l->rank)) {
            continue;
        }
        if (r[0] != tag(word(p, l->rank, 0, c), it) || r[c - 1] != tag(word(p, l->rank, c - 1, c), it)) {
            fail("wrong data at an end of the block from (rank, words, iteration)", p, (long) c, it);
        }
        for (size_t k = 1; full && k + 1 < c; ++k) {
            if (r[k] != word(p, l->rank, k, c)) {
                fail("wrong data in the block from (rank, word, iteration)", p, (long) k, it);
            }
        }
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n ? (n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2])) : NAN;
}

static double average(const double *v, int n)
{
    double s = 0;
    for (int i = 0; i < n; ++i) {
        s += v[i];
    }
    return n ? s / n : NAN;
}

/* The bound: the crossing blocks alone, all posted at once. */
static int bound_exchange(layout_t *l)
{
    int n = 0, rc = MPI_SUCCESS;
    for (int p = 0; p < l->n && MPI_SUCCESS == rc; ++p) {
        if (crosses(l, p, l->rank)) {
            rc = MPI_Irecv(l->rbuf + l->rdispl[p], l->rc[p], MPI_BYTE, p, 7, MPI_COMM_WORLD, &l->reqs[n++]);
        }
    }
    for (int i = 1; i < l->n && MPI_SUCCESS == rc; ++i) {
        const int p = (l->rank + i) % l->n;
        if (crosses(l, l->rank, p)) {
            rc = MPI_Isend(l->sbuf + l->sdispl[p], l->sc[p], MPI_BYTE, p, 7, MPI_COMM_WORLD, &l->reqs[n++]);
        }
    }
    return MPI_SUCCESS == rc ? MPI_Waitall(n, l->reqs, MPI_STATUSES_IGNORE) : rc;
}

static void collective(layout_t *l, int op)
{
    int rc;
    if (ONLY_NONE != l->o->only_kind) {
        rc = bound_exchange(l);
    } else if (OP_ALLTOALL == op) {
        rc = MPI_Alltoall(l->sbuf, l->sc[0], MPI_BYTE, l->rbuf, l->rc[0], MPI_BYTE, MPI_COMM_WORLD);
    } else {
        rc = MPI_Alltoallv(l->sbuf, l->sc, l->sd, MPI_BYTE, l->rbuf, l->rc, l->rd, MPI_BYTE, MPI_COMM_WORLD);
    }
    if (MPI_SUCCESS != rc) {
        fail("the collective returned an error (op, code, -)", op, rc, 0);
    }
}

/* One iteration; returns {max over ranks of t1 - t0, max over ranks of now - since} on every
 * rank and the sum over ranks of t1 - t0 in *sum on rank 0. */
static void iteration(layout_t *l, int op, long it, int full, double since, double out[2], double *sum)
{
    prepare(l, it);
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    collective(l, op);
    const double t1 = MPI_Wtime();
    verify(l, it, full);
    double in[2] = {t1 - t0, MPI_Wtime() - since};
    MPI_Allreduce(in, out, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Reduce(&in[0], sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
}

/* Bytes that cross the bound's bottleneck in its busier direction (0 for the collective). */
static uint64_t neck_bytes(const layout_t *l, int op, size_t w)
{
    uint64_t a = 0, b = 0; /* through: into R, out of R; across: low to high, high to low */
    for (int i = 0; i < l->n; ++i) {
        for (int j = 0; j < l->n; ++j) {
            if (ONLY_NONE == l->o->only_kind || !crosses(l, i, j)) {
                continue;
            }
            const uint64_t c = 8 * (uint64_t) (OP_ALLTOALL == op ? w : v_words(i, j, w));
            const int first = ONLY_THROUGH == l->o->only_kind ? first_side(l, j) : first_side(l, i);
            *(first ? &a : &b) += c;
        }
    }
    return a > b ? a : b;
}

/* Measures one op at one block size and prints its RESULT line (rank 0). */
static void measure(layout_t *l, const opts_t *o, int op, size_t bytes)
{
    double out[2], sum = 0;
    int cap = o->iters > 64 ? o->iters : 64, n = 0;
    double *vmax = malloc(cap * sizeof *vmax), *vmean = malloc(cap * sizeof *vmean);
    long it = 0;

    set_layout(l, op, bytes / 8);
    const double warm_start = MPI_Wtime();
    for (int w = 0; w < o->warmup; ++w, ++it) {
        iteration(l, op, it, 0 == w, warm_start, out, &sum);
        if (out[1] >= o->budget / 4) {
            break;
        }
    }
    const double start = MPI_Wtime();
    for (int going = 1; going; ++it) {
        iteration(l, op, it, 0, start, out, &sum);
        if (n == cap) {
            cap *= 2;
            vmax = realloc(vmax, cap * sizeof *vmax);
            vmean = realloc(vmean, cap * sizeof *vmean);
        }
        vmax[n] = out[0] * 1e6;
        vmean[n] = sum / l->n * 1e6;
        if (o->trace && 0 == l->rank) {
            printf("ITER op=%s bytes=%zu i=%d max_us=%.1f mean_us=%.1f\n", OP_ALLTOALL == op ? "alltoall" : "alltoallv",
                   bytes, n, vmax[n], vmean[n]);
        }
        ++n;
        /* out[] is the same on every rank: so is the decision */
        going = n < HARD_MAX_ITERS && (n < o->min_iters || (out[1] < o->budget && (n < o->iters || out[1] < o->time)));
    }
    iteration(l, op, it, 1, start, out, &sum); /* every word, untimed */
    if (0 == l->rank) {
        const double avg_max = average(vmax, n), avg_mean = average(vmean, n);
        const double mean_med = median(vmean, n), max_med = median(vmax, n); /* sorts vmax: min is vmax[0] */
        printf("RESULT op=%s bytes=%zu iters=%d max_us=%.1f mean_us=%.1f avg_max_us=%.1f avg_mean_us=%.1f "
               "min_max_us=%.1f",
               OP_ALLTOALL == op ? "alltoall" : "alltoallv", bytes, n, max_med, mean_med, avg_max, avg_mean, vmax[0]);
        if (ONLY_NONE != o->only_kind) {
            printf(" bound=%s:%d neck_bytes=%llu", ONLY_THROUGH == o->only_kind ? "through" : "across", o->only_arg,
                   (unsigned long long) neck_bytes(l, op, bytes / 8));
        }
        printf("\n");
        fflush(stdout);
    }
    free(vmax);
    free(vmean);
}

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

static int parse(opts_t *o, int argc, char **argv)
{
    for (int i = 1; i < argc; i += 2) {
        const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (NULL == v) {
            return 0;
        } else if (0 == strcmp(k, "-min")) {
            o->min = parse_size(v);
        } else if (0 == strcmp(k, "-max")) {
            o->max = parse_size(v);
        } else if (0 == strcmp(k, "-factor")) {
            o->factor = atoi(v);
        } else if (0 == strcmp(k, "-sizes")) {
            char *list = strdup(v), *save = NULL;
            o->nsizes = 0;
            for (char *t = strtok_r(list, ",", &save); t && o->nsizes < MAX_SIZES; t = strtok_r(NULL, ",", &save)) {
                o->sizes[o->nsizes++] = parse_size(t);
            }
            free(list);
        } else if (0 == strcmp(k, "-ops")) {
            o->ops = (strstr(v, "alltoall,") || 0 == strcmp(v, "alltoall") ? OP_ALLTOALL : 0) |
                     (strstr(v, "alltoallv") ? OP_ALLTOALLV : 0);
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
        } else if (0 == strcmp(k, "-trace")) {
            o->trace = atoi(v);
        } else if (0 == strcmp(k, "-through") || 0 == strcmp(k, "-across")) {
            char *end;
            const long a = strtol(v, &end, 10);
            if (*end || end == v || a < 0 || a > 1 << 20 || ONLY_NONE != o->only_kind) {
                return 0;
            }
            o->only_kind = 0 == strcmp(k, "-through") ? ONLY_THROUGH : ONLY_ACROSS;
            o->only_arg = (int) a;
        } else {
            return 0;
        }
    }
    if (o->budget < o->time) {
        o->budget = o->time;
    }
    if (0 == o->nsizes) {
        if (o->factor < 2) {
            return 0;
        }
        for (size_t b = o->min; b <= o->max && o->nsizes < MAX_SIZES; b *= (size_t) o->factor) {
            o->sizes[o->nsizes++] = b;
        }
    }
    o->max = 0;
    for (int i = 0; i < o->nsizes; ++i) {
        if (o->sizes[i] < 16 || o->sizes[i] % 8 || o->sizes[i] > (64u << 20)) {
            return 0;
        }
        o->max = o->sizes[i] > o->max ? o->sizes[i] : o->max;
    }
    return o->nsizes > 0 && o->ops && o->iters >= 1 && o->warmup >= 0 && o->min_iters >= 1 && o->budget >= 0 &&
           o->time >= 0;
}

int main(int argc, char **argv)
{
    opts_t o = {.min = 1024, .max = 4u << 20, .factor = 4, .ops = OP_ALLTOALL | OP_ALLTOALLV, .iters = 20,
                .warmup = 2, .min_iters = 3, .budget = 2.0, .time = 0};
    layout_t l;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &l.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &l.n);
    if (!parse(&o, argc, argv) ||
        (ONLY_NONE != o.only_kind && (o.only_arg >= l.n || (ONLY_ACROSS == o.only_kind && 0 == o.only_arg)))) {
        if (0 == l.rank) {
            fprintf(stderr, "usage: coll_bench [-min BYTES (>= 16, n * 8)] [-max BYTES (<= 64M)] [-factor F (>= 2)]"
                            " [-sizes B,B,..] [-ops alltoall,alltoallv] [-iters N] [-warmup W] [-min_iters M]"
                            " [-budget S] [-time S] [-trace 1] [-through R (0 <= R < np) | -across G (0 < G < np)]\n");
        }
        MPI_Finalize();
        return 1;
    }

    /* Which host each rank is on (one line, so a run's placement is on record), and the hosts'
     * numbers in the order of their first rank. */
    char name[MPI_MAX_PROCESSOR_NAME] = {0};
    char *names = malloc((size_t) l.n * MPI_MAX_PROCESSOR_NAME);
    l.host = malloc((size_t) l.n * sizeof *l.host);
    if (!names || !l.host) {
        fail("out of memory (ranks, -, -)", l.n, 0, 0);
    }
    int len, hosts = 0;
    MPI_Get_processor_name(name, &len);
    MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, MPI_COMM_WORLD);
    for (int r = 0; r < l.n; ++r) {
        int q = 0;
        while (q < r && strcmp(names + (size_t) q * MPI_MAX_PROCESSOR_NAME, names + (size_t) r * MPI_MAX_PROCESSOR_NAME)) {
            ++q;
        }
        l.host[r] = q < r ? l.host[q] : hosts++;
    }
    for (int r = 0; 1 == hosts && r < l.n; ++r) { /* one machine: ranks stand for hosts */
        l.host[r] = r;
    }
    if (0 == l.rank) {
        printf("# coll_bench np=%d hosts=", l.n);
        for (int r = 0; r < l.n; ++r) {
            printf("%s%s", r ? "," : "", names + (size_t) r * MPI_MAX_PROCESSOR_NAME);
        }
        printf(" sizes=");
        for (int i = 0; i < o.nsizes; ++i) {
            printf("%s%zu", i ? "," : "", o.sizes[i]);
        }
        printf(" iters=%d warmup=%d min_iters=%d budget=%g time=%g\n", o.iters, o.warmup, o.min_iters, o.budget,
               o.time);
        fflush(stdout);
    }
    free(names);

    /* Room for the largest alltoallv (every count < 1.5 blocks). */
    const size_t words = (size_t) l.n * (o.max / 8 + o.max / 16 + 1);
    l.sbuf = tool_page_buffer("coll_bench", words * 8);
    l.rbuf = tool_page_buffer("coll_bench", words * 8);
    l.scount = calloc(4 * (size_t) l.n, sizeof(size_t));
    l.sdispl = l.scount + l.n, l.rcount = l.scount + 2 * l.n, l.rdispl = l.scount + 3 * l.n;
    l.sc = calloc(4 * (size_t) l.n, sizeof(int));
    l.o = &o;
    l.reqs = malloc(2 * (size_t) l.n * sizeof *l.reqs);
    l.sd = l.sc + l.n, l.rc = l.sc + 2 * l.n, l.rd = l.sc + 3 * l.n;
    if (!l.sbuf || !l.rbuf || !l.scount || !l.sc || !l.reqs) {
        fail("out of memory (words, -, -)", (long) words, 0, 0);
    }

    for (int op = OP_ALLTOALL; op <= OP_ALLTOALLV; op <<= 1) {
        for (int i = 0; (o.ops & op) && i < o.nsizes; ++i) {
            measure(&l, &o, op, o.sizes[i]);
        }
    }
    if (0 == l.rank) {
        printf("PASS coll_bench\n");
    }
    free(l.sbuf);
    free(l.rbuf);
    free(l.scount);
    free(l.sc);
    free(l.reqs);
    free(l.host);
    MPI_Finalize();
    return 0;
}
