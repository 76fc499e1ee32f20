/* MPI_Alltoall and MPI_Alltoallv, every byte checked (written for
 * coll_rttcc, passes with any correct coll component):
 *   1. alltoall, blocks of 0 and 1 byte up to -max (1 MiB) as MPI_BYTE,
 *      MPI_INT and MPI_DOUBLE;
 *   2. alltoallv with a random counts matrix (same seed on every rank):
 *      zero pairs, a rank sending nothing or receiving nothing, blocks in a
 *      random order with gaps between them;
 *   3. MPI_IN_PLACE for both (alltoallv with a symmetric matrix);
 *   4. derived datatypes: a strided vector, a struct with gaps, a resized
 *      type, and send type != receive type with the same signature;
 *   5. the same on MPI_Comm_dup, odd/even MPI_Comm_split and a split with
 *      reversed keys (comm rank order != world rank order);
 *   6. with MPI_THREAD_MULTIPLE, two threads looping on their own dups;
 *   7. -errors: a mismatched alltoallv on an MPI_ERRORS_RETURN dup returns
 *      an error on some rank (no hang, no crash, nothing written past the
 *      posted receive block), 164 and 270000 bytes sent for 100 and 200000
 *      expected (coll/tuned over ob1 and btl tcp hangs on the large one);
 *      and, without mpi_param_check (Open MPI's own check returns on that
 *      rank alone, before any coll component, and its peers wait), rank 0's
 *      block to itself mismatched alike, or sent into 0 bytes: rank 0 gets
 *      MPI_ERR_TRUNCATE, every rank returns, and a rank that returns
 *      success has every block;
 *   8. the MPI_T counter coll_rttcc_calls; -expect-rttcc: it must exist and
 *      count at least every call made on a communicator of 2+ ranks (but
 *      alltoalls of 0 bytes, which MPI_Alltoall itself returns from).
 * Byte k of the data rank a sends rank b in call c is mt_byte(a, b, c, k)
 * in signature order (world ranks), so a misplaced block shows.  Receive
 * buffers start as a sentinel with slack around them: every byte no
 * received block covers (gaps, datatype holes, slack) must stay so, and
 * send buffers must come back unchanged.
 *
 *   alltoall [-max BYTES] [-iters N] [-seed S] [-rounds N] [-single]
 *            [-errors [-errors-timeout S]] [-expect-rttcc] [-timeout S] [-v]
 *     -max: largest alltoall block (alltoallv pairs: up to -max/4, one call
 *           per round up to -max); -iters: repeat sections 1-5; -seed: the
 *           counts matrices; -rounds: calls per thread in section 6;
 *     -single: ask for MPI_THREAD_SINGLE (skips section 6, as -rounds 0
 *     does); -timeout: FAIL naming the call when one takes longer (60 s;
 *     -errors-timeout: 30 s); -v: each section's time, calls and count of
 *     coll_rttcc_calls on rank 0 */
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <unistd.h>

#include "mpitest.h"

#define SENTINEL 0xA5 /* receive buffers before the call */
#define JUNK 0x5A     /* send buffers outside the blocks */
#define SLACK 64      /* sentinel bytes before and after every receive buffer */
#define MAX_COMMS 16
#ifndef CALLS_PVAR /* -DCALLS_PVAR='"name"' tries the MPI_T code on another variable */
#define CALLS_PVAR "coll_rttcc_calls"
#endif

static size_t opt_max = 1u << 20;
static int opt_iters = 1, opt_rounds = 16, opt_errors, opt_expect, opt_single, opt_verbose, opt_err_timeout = 30;
static unsigned long long opt_seed = 1;
static int wrank, wsize;
static __thread char where[256]; /* the call being checked, for FAIL lines */

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "FAIL alltoall on rank %d: %s [%s]\n", wrank, msg, where);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 3);
    exit(3);
}

static void fail_rc(const char *call, int rc)
{
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, s, &len);
    fail("%s returned %d (%s)", call, rc, s);
}

/* Watchdog: a collective that does not return within -timeout seconds
 * (-errors-timeout for section 7) is a hang: FAIL with what was running. */
static char *watched[3]; /* `where` of the main thread and of the two threads */
static int opt_timeout = 60;

static void on_alarm(int sig)
{
    char line[512];
    (void) sig;
    for (int i = 0; i < 3; ++i) {
        char *w = watched[i];
        if (NULL != w && w[0]) {
            int len = snprintf(line, sizeof line,
                               "FAIL alltoall on rank %d: a call did not return in time (hang) [%s]\n", wrank, w);
            if (len > 0 && write(2, line, len < (int) sizeof line ? (size_t) len : sizeof line - 1) < 0) {
                break;
            }
        }
    }
    _exit(4);
}

static void watch(void)
{
    if (opt_timeout > 0) {
        alarm((unsigned) opt_timeout);
    }
}

/* Any MPI error on a test communicator: a FAIL line, then abort. */
static void on_mpi_error(MPI_Comm *comm, int *code, ...)
{
    (void) comm;
    fail_rc("an MPI call", *code);
}
static MPI_Errhandler errh;

/* ---- Datatypes: where one element's data lies, in signature order ---- */

typedef struct {
    const char *name;
    MPI_Datatype type;
    size_t extent, size; /* bytes; every lower bound is 0 */
    int nruns;
    size_t off[4], len[4];
    /* Signature: byte k is the top byte of a double when k % dbl_period ==
     * dbl_at; its bit 6 is cleared so no double is a NaN or an infinity. */
    size_t dbl_period, dbl_at;
} layout_t;

enum { L_BYTE, L_INT, L_DOUBLE, L_VECTOR, L_STRUCT, L_RESIZED, L_COUNT };
static layout_t L[L_COUNT];

static void layout_check(layout_t *l)
{
    int size;
    MPI_Aint lb, extent;
    size_t sum = 0;
    MPI_Type_size(l->type, &size);
    MPI_Type_get_extent(l->type, &lb, &extent);
    for (int r = 0; r < l->nruns; ++r) {
        sum += l->len[r];
    }
    l->extent = (size_t) extent;
    if (0 != lb || (size_t) size != l->size || sum != l->size ||
        l->off[l->nruns - 1] + l->len[l->nruns - 1] > l->extent) {
        fail("test bug: datatype %s has size %d, lb %ld, extent %ld", l->name, size, (long) lb, (long) extent);
    }
}

static void layouts_init(void)
{
    L[L_BYTE] = (layout_t){"byte", MPI_BYTE, 1, 1, 1, {0}, {1}, 0, 0};
    L[L_INT] = (layout_t){"int", MPI_INT, 4, 4, 1, {0}, {4}, 0, 0};
    L[L_DOUBLE] = (layout_t){"double", MPI_DOUBLE, 8, 8, 1, {0}, {8}, 8, 7};

    /* 3 blocks of 4 ints, stride 6 ints: 8-byte holes after the first two. */
    MPI_Datatype t;
    MPI_Type_vector(3, 4, 6, MPI_INT, &t);
    MPI_Type_commit(&t);
    L[L_VECTOR] = (layout_t){"vector", t, 0, 48, 3, {0, 24, 48}, {16, 16, 16}, 0, 0};

    /* struct { int @0; double @8; char @16 }: holes 4..7 and after 16. */
    int blens[3] = {1, 1, 1};
    MPI_Aint displs[3] = {0, 8, 16};
    MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
    MPI_Type_create_struct(3, blens, displs, types, &t);
    MPI_Type_commit(&t);
    L[L_STRUCT] = (layout_t){"struct", t, 0, 13, 3, {0, 8, 16}, {4, 8, 1}, 13, 11};

    /* 3 ints resized to an extent of 20 bytes: an 8-byte hole after each. */
    MPI_Datatype c3;
    MPI_Type_contiguous(3, MPI_INT, &c3);
    MPI_Type_create_resized(c3, 0, 20, &t);
    MPI_Type_free(&c3);
    MPI_Type_commit(&t);
    L[L_RESIZED] = (layout_t){"resized", t, 0, 12, 1, {0}, {12}, 0, 0};

    for (int i = 0; i < L_COUNT; ++i) {
        layout_check(&L[i]);
    }
}

static void layouts_free(void)
{
    for (int i = L_VECTOR; i < L_COUNT; ++i) {
        MPI_Type_free(&L[i].type);
    }
}

static inline unsigned char sbyte(const layout_t *l, int from, int to, int call, size_t k)
{
    unsigned char b = mt_byte(from, to, call, k);
    return l->dbl_period && k % l->dbl_period == l->dbl_at ? b & 0xBF : b;
}

static inline int contiguous(const layout_t *l)
{
    return 1 == l->nruns && l->len[0] == l->extent;
}

/* Writes the data `from` sends `to` in `call`: `count` elements at `base`. */
static void place(unsigned char *base, const layout_t *l, size_t count, int from, int to, int call)
{
    size_t k = 0;
    if (contiguous(l)) {
        for (; k < count * l->size; ++k) {
            base[k] = sbyte(l, from, to, call, k);
        }
        return;
    }
    for (size_t e = 0; e < count; ++e) {
        for (int r = 0; r < l->nruns; ++r) {
            unsigned char *p = base + e * l->extent + l->off[r];
            for (size_t j = 0; j < l->len[r]; ++j) {
                p[j] = sbyte(l, from, to, call, k++);
            }
        }
    }
}

/* ---- Receive buffers with sentinel slack and a map of checked bytes ---- */

typedef struct {
    unsigned char *mem, *buf, *mask;
    size_t span, total;
} region_t;

static void region_init(region_t *r, size_t span)
{
    r->span = span;
    r->total = span + 2 * SLACK;
    r->mem = mt_alloc(r->total);
    memset(r->mem, SENTINEL, r->total);
    r->buf = r->mem + SLACK;
    r->mask = calloc(r->total, 1);
    if (NULL == r->mask) {
        fail("out of memory for %zu bytes", r->total);
    }
}

/* Checks `count` elements received from `from` at byte `at` of the buffer. */
static void check_block(region_t *rg, size_t at, const layout_t *l, size_t count, int from, int to, int call)
{
    size_t k = 0;
    for (size_t e = 0; e < count; ++e) {
        for (int r = 0; r < l->nruns; ++r) {
            size_t pos = at + e * l->extent + l->off[r];
            for (size_t j = 0; j < l->len[r]; ++j, ++k, ++pos) {
                unsigned char want = sbyte(l, from, to, call, k);
                if (rg->mask[SLACK + pos]) {
                    fail("test bug: byte %zu of the receive buffer lies in two blocks", pos);
                }
                rg->mask[SLACK + pos] = 1;
                if (rg->buf[pos] != want) {
                    fail("byte %zu of the %zu-byte block from world rank %d (buffer offset %zu) is 0x%02x, "
                         "expected 0x%02x",
                         k, count * l->size, from, pos, rg->buf[pos], want);
                }
            }
        }
    }
}

/* Every byte no block covered still holds the sentinel. */
static void region_done(region_t *r)
{
    for (size_t i = 0; i < r->total; ++i) {
        if (!r->mask[i] && SENTINEL != r->mem[i]) {
            fail("byte at offset %ld of the receive buffer (span %zu) lies in no received block (a gap, a datatype "
                 "hole or outside the buffer) and was overwritten: 0x%02x",
                 (long) i - SLACK, r->span, r->mem[i]);
        }
    }
    free(r->mem);
    free(r->mask);
}

static unsigned char *send_alloc(size_t span, unsigned char **copy)
{
    unsigned char *s = mt_alloc(span);
    memset(s, JUNK, span);
    *copy = mt_alloc(span);
    return s;
}

static void send_done(unsigned char *s, unsigned char *copy, size_t span)
{
    for (size_t i = 0; i < span; ++i) {
        if (s[i] != copy[i]) {
            fail("the send buffer changed at byte %zu of %zu", i, span);
        }
    }
    free(s);
    free(copy);
}

/* ---- Communicators ---- */

typedef struct {
    MPI_Comm comm;
    char name[32];
    int n, rank, me; /* size, rank in it, world rank */
    int *world;      /* world rank of each comm rank */
    unsigned long calls, empty; /* alltoall(v) calls made; alltoalls of 0 bytes */
    MPI_T_pvar_handle pvar;
    int has_pvar;
} comm_t;

static comm_t *comms[MAX_COMMS];
static int ncomms;

/* The calls on `c` coll_rttcc must serve: none on one rank; an alltoall of
 * 0 bytes never reaches a coll component (MPI_Alltoall returns at once). */
static unsigned long due(const comm_t *c)
{
    return c->n > 1 ? c->calls - c->empty : 0;
}

/* ---- MPI_T: coll_rttcc_calls ---- */

static struct {
    int found, index, var_class, bind, continuous, count;
    MPI_Datatype type;
    MPI_T_pvar_session session;
    MPI_T_pvar_handle global;
    int has_global;
    char note[256];
} pv;

static void pvar_find(const char *want)
{
    int num = 0;
    MPI_T_pvar_get_num(&num);
    for (int i = 0; i < num; ++i) {
        char name[256], desc[1024];
        int nl = sizeof name, dl = sizeof desc, verbosity, var_class, bind, readonly, continuous, atomic;
        MPI_Datatype type;
        MPI_T_enum enumtype;
        if (MPI_SUCCESS != MPI_T_pvar_get_info(i, name, &nl, &verbosity, &var_class, &type, &enumtype, desc, &dl,
                                               &bind, &readonly, &continuous, &atomic) ||
            0 != strcmp(name, want)) {
            continue;
        }
        if (!pv.found || MPI_T_PVAR_CLASS_COUNTER == var_class) {
            pv.found = 1;
            pv.index = i;
            pv.var_class = var_class;
            pv.bind = bind;
            pv.continuous = continuous;
            pv.type = type;
        }
    }
    if (!pv.found) {
        snprintf(pv.note, sizeof pv.note, "performance variable %s missing", want);
        return;
    }
    if (MPI_T_BIND_NO_OBJECT != pv.bind && MPI_T_BIND_MPI_COMM != pv.bind) {
        snprintf(pv.note, sizeof pv.note, "%s is bound to object kind %d, neither none nor a communicator", want,
                 pv.bind);
        pv.found = 0;
        return;
    }
    MPI_T_pvar_session_create(&pv.session);
}

/* A handle counting from now: on `comm`, or on no object for NULL. */
static int pvar_attach(MPI_Comm *comm, MPI_T_pvar_handle *h)
{
    int count = 0, rc = MPI_T_pvar_handle_alloc(pv.session, pv.index, comm, h, &count);
    if (MPI_SUCCESS != rc || count < 1) {
        snprintf(pv.note, sizeof pv.note, "MPI_T_pvar_handle_alloc(" CALLS_PVAR ") returned %d, count %d", rc,
                 count);
        return 0;
    }
    pv.count = count;
    if (!pv.continuous) {
        MPI_T_pvar_start(pv.session, *h);
    }
    return 1;
}

/* The handle's value (summed if it has several). */
static unsigned long long pvar_read(MPI_T_pvar_handle *h)
{
    unsigned char buf[8 * 64];
    unsigned long long sum = 0;
    int count = pv.count < 64 ? pv.count : 64, size = 0;
    if (pv.count > 64) {
        fail(CALLS_PVAR " has %d values per handle", pv.count);
    }
    MPI_Type_size(pv.type, &size);
    if (MPI_SUCCESS != MPI_T_pvar_read(pv.session, *h, buf)) {
        fail("MPI_T_pvar_read(" CALLS_PVAR ") failed");
    }
    for (int i = 0; i < count; ++i) {
        const void *p = buf + (size_t) i * size;
        if (MPI_UNSIGNED == pv.type) {
            sum += *(const unsigned *) p;
        } else if (MPI_UNSIGNED_LONG == pv.type) {
            sum += *(const unsigned long *) p;
        } else if (MPI_UNSIGNED_LONG_LONG == pv.type || MPI_COUNT == pv.type || MPI_LONG_LONG == pv.type) {
            sum += *(const unsigned long long *) p;
        } else if (MPI_INT == pv.type) {
            sum += (unsigned long long) *(const int *) p;
        } else if (MPI_LONG == pv.type) {
            sum += (unsigned long long) *(const long *) p;
        } else if (MPI_DOUBLE == pv.type) {
            sum += (unsigned long long) *(const double *) p;
        } else {
            fail(CALLS_PVAR " has an unexpected MPI datatype (size %d)", size);
        }
    }
    return sum;
}

static unsigned long long pvar_read_free(MPI_T_pvar_handle *h)
{
    unsigned long long sum = pvar_read(h);
    if (!pv.continuous) {
        MPI_T_pvar_stop(pv.session, *h);
    }
    MPI_T_pvar_handle_free(pv.session, h);
    return sum;
}

static comm_t *comm_new(MPI_Comm comm, const char *name)
{
    comm_t *c = calloc(1, sizeof *c);
    MPI_Group g, wg;
    if (NULL == c || ncomms == MAX_COMMS) {
        fail("test bug: too many communicators");
    }
    c->comm = comm;
    snprintf(c->name, sizeof c->name, "%s", name);
    MPI_Comm_size(comm, &c->n);
    MPI_Comm_rank(comm, &c->rank);
    c->me = wrank;
    c->world = malloc(c->n * sizeof *c->world);
    int *ranks = malloc(c->n * sizeof *ranks);
    for (int i = 0; i < c->n; ++i) {
        ranks[i] = i;
    }
    MPI_Comm_group(comm, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_translate_ranks(g, c->n, ranks, wg, c->world);
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    free(ranks);
    MPI_Comm_set_errhandler(comm, errh);
    if (pv.found && MPI_T_BIND_MPI_COMM == pv.bind && c->n > 1) {
        c->has_pvar = pvar_attach(&c->comm, &c->pvar);
    }
    comms[ncomms++] = c;
    return c;
}

/* ---- The two collectives, checked ---- */

/* One MPI_Alltoall: `scount` elements of `ls` to every rank, `rcount` of
 * `lr` from every rank (the same signature); in place: from `lr` to `lr`. */
static void a2a(comm_t *c, int call, const layout_t *ls, size_t scount, const layout_t *lr, size_t rcount, int inplace)
{
    int n = c->n;
    if (inplace) {
        ls = lr;
        scount = rcount;
    }
    snprintf(where, sizeof where, "alltoall%s comm=%s np=%d call=%d send %zu x %s, receive %zu x %s",
             inplace ? " in place" : "", c->name, n, call, scount, ls->name, rcount, lr->name);
    if (scount * ls->size != rcount * lr->size) {
        fail("test bug: send and receive sizes differ");
    }
    size_t sblock = scount * ls->extent, rblock = rcount * lr->extent;
    unsigned char *s = NULL, *copy = NULL;
    region_t r;
    region_init(&r, n * rblock);
    if (inplace) {
        for (int p = 0; p < n; ++p) {
            place(r.buf + p * rblock, lr, rcount, c->me, c->world[p], call);
        }
    } else {
        s = send_alloc(n * sblock, &copy);
        for (int p = 0; p < n; ++p) {
            place(s + p * sblock, ls, scount, c->me, c->world[p], call);
        }
        memcpy(copy, s, n * sblock);
    }
    watch();
    int rc = MPI_Alltoall(inplace ? MPI_IN_PLACE : s, (int) scount, ls->type, r.buf, (int) rcount, lr->type, c->comm);
    c->calls++;
    c->empty += 0 == rcount * lr->size;
    if (MPI_SUCCESS != rc) {
        fail_rc("MPI_Alltoall", rc);
    }
    mt_maybe_corrupt(r.mem, r.total);
    for (int p = 0; p < n; ++p) {
        check_block(&r, p * rblock, lr, rcount, c->world[p], c->me, call);
    }
    region_done(&r);
    if (!inplace) {
        send_done(s, copy, n * sblock);
    }
}

static uint64_t mix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t rng(uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t s = a * 0x100000001B3ull ^ b;
    mix(&s);
    s ^= c * 0xD6E8FEB86659FD93ull;
    mix(&s);
    return s;
}

/* 1..maxu, log-uniform (as many small blocks as large ones). */
static size_t rand_units(uint64_t *s, size_t maxu)
{
    int bits = 0;
    if (0 == maxu) {
        return 0;
    }
    while ((maxu >> bits) > 1) {
        ++bits;
    }
    int b = (int) (mix(s) % (uint64_t) (bits + 2));
    size_t hi = b > bits ? maxu : (size_t) 1 << b;
    return 1 + (size_t) (mix(s) % hi);
}

/* Displacements (in elements) for blocks of `counts` elements, in a random
 * order with 0-2 elements of gap before each; returns the span in elements. */
static size_t scatter_blocks(uint64_t *s, int n, const int *counts, int *displs)
{
    int *order = malloc(n * sizeof *order);
    size_t pos = 0;
    for (int i = 0; i < n; ++i) {
        order[i] = i;
    }
    for (int i = n - 1; i > 0; --i) {
        int j = (int) (mix(s) % (uint64_t) (i + 1)), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (int i = 0; i < n; ++i) {
        pos += mix(s) % 3;
        displs[order[i]] = (int) pos;
        pos += counts[order[i]];
    }
    pos += mix(s) % 3;
    free(order);
    return pos;
}

/* One MPI_Alltoallv of random counts: a pair moves u units, u * rs elements
 * of `ls` sent, u * rr elements of `lr` received; in place: `lr` only and a
 * symmetric matrix.  Pairs move at most `pair_max` bytes. */
static void a2av(comm_t *c, int call, const layout_t *ls, int rs, const layout_t *lr, int rr, size_t pair_max,
                 int inplace)
{
    int n = c->n, me = c->rank;
    if (inplace) {
        ls = lr;
        rs = rr;
    }
    snprintf(where, sizeof where, "alltoallv%s comm=%s np=%d call=%d seed=%llu send %s, receive %s",
             inplace ? " in place" : "", c->name, n, call, opt_seed, ls->name, lr->name);
    size_t unit = rs * ls->size;
    if (unit != rr * lr->size) {
        fail("test bug: send and receive units differ");
    }
    /* The counts matrix: every rank draws the same one. */
    size_t maxu = pair_max / unit, *u = calloc((size_t) n * n, sizeof *u);
    uint64_t st = rng(opt_seed, (uint64_t) call, 0xA11);
    for (int i = 0; i < n * n; ++i) {
        u[i] = 0 == mix(&st) % 4 ? 0 : rand_units(&st, maxu);
    }
    if (inplace) {
        for (int a = 0; a < n; ++a) {
            for (int b = 0; b < a; ++b) {
                u[a * n + b] = u[b * n + a];
            }
        }
    }
    int quiet = (int) (mix(&st) % (uint64_t) n), mode = call % 3;
    for (int i = 0; i < n; ++i) {
        if (0 == mode || (inplace && 1 == mode)) {
            u[quiet * n + i] = 0; /* sends nothing at all */
        }
        if (1 == mode || (inplace && 0 == mode)) {
            u[i * n + quiet] = 0; /* receives nothing at all */
        }
    }
    int *sc = malloc(n * sizeof *sc), *sd = malloc(n * sizeof *sd);
    int *rc = malloc(n * sizeof *rc), *rd = malloc(n * sizeof *rd);
    for (int p = 0; p < n; ++p) {
        sc[p] = (int) (u[me * n + p] * rs);
        rc[p] = (int) (u[p * n + me] * rr);
    }
    free(u);
    /* Where this rank's blocks lie: its own draw. */
    uint64_t lt = rng(opt_seed, (uint64_t) call, 0x1000 + (uint64_t) c->me);
    size_t rspan = scatter_blocks(&lt, n, rc, rd) * lr->extent, sspan = 0;
    unsigned char *s = NULL, *copy = NULL;
    region_t r;
    region_init(&r, rspan);
    if (inplace) {
        for (int p = 0; p < n; ++p) {
            place(r.buf + rd[p] * lr->extent, lr, rc[p], c->me, c->world[p], call);
        }
    } else {
        sspan = scatter_blocks(&lt, n, sc, sd) * ls->extent;
        s = send_alloc(sspan, &copy);
        for (int p = 0; p < n; ++p) {
            place(s + sd[p] * ls->extent, ls, sc[p], c->me, c->world[p], call);
        }
        memcpy(copy, s, sspan);
    }
    watch();
    int err = inplace ? MPI_Alltoallv(MPI_IN_PLACE, rc, rd, lr->type, r.buf, rc, rd, lr->type, c->comm)
                      : MPI_Alltoallv(s, sc, sd, ls->type, r.buf, rc, rd, lr->type, c->comm);
    c->calls++;
    if (MPI_SUCCESS != err) {
        fail_rc("MPI_Alltoallv", err);
    }
    mt_maybe_corrupt(r.mem, r.total);
    for (int p = 0; p < n; ++p) {
        check_block(&r, rd[p] * lr->extent, lr, rc[p], c->world[p], c->me, call);
    }
    region_done(&r);
    if (!inplace) {
        send_done(s, copy, sspan);
    }
    free(sc);
    free(sd);
    free(rc);
    free(rd);
}

/* ---- Sections ---- */

static size_t atleast1(size_t v)
{
    return v ? v : 1;
}

/* 1: blocks of 0, 1, ... -max bytes, MPI_BYTE always, MPI_INT and
 * MPI_DOUBLE in turn, all three at -max. */
static void sizes_section(comm_t *c, int *call)
{
    static const size_t steps[] = {0, 1, 2, 7, 64, 1000, 4099, 65536, 65541, 262144, 1u << 20};
    size_t sizes[16], n = 0;
    for (size_t i = 0; i < sizeof steps / sizeof *steps && steps[i] < opt_max; ++i) {
        sizes[n++] = steps[i];
    }
    sizes[n++] = opt_max;
    for (size_t i = 0; i < n; ++i) {
        size_t s = sizes[i];
        a2a(c, (*call)++, &L[L_BYTE], s, &L[L_BYTE], s, 0);
        if (i == n - 1 || i % 2) {
            a2a(c, (*call)++, &L[L_INT], s / 4, &L[L_INT], s / 4, 0);
        }
        if (i == n - 1 || !(i % 2)) {
            a2a(c, (*call)++, &L[L_DOUBLE], s / 8, &L[L_DOUBLE], s / 8, 0);
        }
    }
}

/* 4: derived datatypes, the same on both sides and matching signatures. */
static void derived_section(comm_t *c, int *call)
{
    size_t big = atleast1(opt_max / 4 / L[L_VECTOR].extent);
    const size_t counts[] = {0, 1, 5, big};
    for (int i = 0; i < 4; ++i) {
        size_t k = counts[i];
        a2a(c, (*call)++, &L[L_VECTOR], k, &L[L_VECTOR], k, 0);
        a2a(c, (*call)++, &L[L_INT], 12 * k, &L[L_VECTOR], k, 0); /* 4n ints into n blocks of 4 */
        a2a(c, (*call)++, &L[L_VECTOR], k, &L[L_INT], 12 * k, 0);
        a2a(c, (*call)++, &L[L_STRUCT], 2 * k + 1, &L[L_STRUCT], 2 * k + 1, 0);
        a2a(c, (*call)++, &L[L_RESIZED], 3 * k, &L[L_RESIZED], 3 * k, 0);
        a2a(c, (*call)++, &L[L_RESIZED], k, &L[L_INT], 3 * k, 0);
    }
}

/* 2: alltoallv, every datatype and mix, pairs up to -max/4, then one call
 * with pairs up to -max. */
static void alltoallv_section(comm_t *c, int *call)
{
    size_t pm = atleast1(opt_max / 4);
    a2av(c, (*call)++, &L[L_BYTE], 1, &L[L_BYTE], 1, pm, 0);
    a2av(c, (*call)++, &L[L_INT], 1, &L[L_INT], 1, pm, 0);
    a2av(c, (*call)++, &L[L_DOUBLE], 1, &L[L_DOUBLE], 1, pm, 0);
    a2av(c, (*call)++, &L[L_VECTOR], 1, &L[L_VECTOR], 1, pm, 0);
    a2av(c, (*call)++, &L[L_STRUCT], 1, &L[L_STRUCT], 1, pm, 0);
    a2av(c, (*call)++, &L[L_RESIZED], 1, &L[L_RESIZED], 1, pm, 0);
    a2av(c, (*call)++, &L[L_INT], 12, &L[L_VECTOR], 1, pm, 0);
    a2av(c, (*call)++, &L[L_VECTOR], 1, &L[L_INT], 12, pm, 0);
    a2av(c, (*call)++, &L[L_RESIZED], 1, &L[L_INT], 3, pm, 0);
    a2av(c, (*call)++, &L[L_BYTE], 1, &L[L_BYTE], 1, opt_max, 0);
}

/* 3: MPI_IN_PLACE. */
static void inplace_section(comm_t *c, int *call)
{
    const size_t sizes[] = {0, 1, 1000, 70000, opt_max / 2};
    for (int i = 0; i < 5; ++i) {
        a2a(c, (*call)++, NULL, 0, &L[L_BYTE], sizes[i], 1);
    }
    a2a(c, (*call)++, NULL, 0, &L[L_INT], 5000, 1);
    a2a(c, (*call)++, NULL, 0, &L[L_VECTOR], 3, 1);
    size_t pm = atleast1(opt_max / 4);
    a2av(c, (*call)++, NULL, 0, &L[L_BYTE], 1, pm, 1);
    a2av(c, (*call)++, NULL, 0, &L[L_INT], 1, pm, 1);
    a2av(c, (*call)++, NULL, 0, &L[L_VECTOR], 1, pm, 1);
    a2av(c, (*call)++, NULL, 0, &L[L_STRUCT], 1, pm, 1);
}

/* 5: a shorter mix for the other communicators. */
static void comm_section(comm_t *c, int *call)
{
    const size_t sizes[] = {0, 1, 5000, opt_max < 100000 ? opt_max : 100000};
    size_t pm = atleast1(opt_max / 8);
    for (int i = 0; i < 4; ++i) {
        a2a(c, (*call)++, &L[L_BYTE], sizes[i], &L[L_BYTE], sizes[i], 0);
    }
    a2a(c, (*call)++, &L[L_INT], 1000, &L[L_INT], 1000, 0);
    a2a(c, (*call)++, &L[L_VECTOR], 20, &L[L_INT], 240, 0);
    a2a(c, (*call)++, NULL, 0, &L[L_BYTE], 3000, 1);
    a2av(c, (*call)++, &L[L_BYTE], 1, &L[L_BYTE], 1, pm, 0);
    a2av(c, (*call)++, &L[L_INT], 12, &L[L_VECTOR], 1, pm, 0);
    a2av(c, (*call)++, NULL, 0, &L[L_INT], 1, pm, 1);
}

/* 6: two threads, each on its own dup, alltoall and alltoallv in turn. */
static void *thread_main(void *arg)
{
    comm_t *c = arg;
    int t = c->name[6] - '0'; /* "thread0", "thread1" */
    watched[1 + t] = where;
    for (int r = 0; r < opt_rounds; ++r) {
        int call = 1000000 * (t + 1) + r;
        size_t s = (size_t) (r * 7919 + t * 4001) % (opt_max < 70000 ? opt_max + 1 : 70001);
        switch (r % 4) {
        case 0: a2a(c, call, &L[L_BYTE], s, &L[L_BYTE], s, 0); break;
        case 1: a2av(c, call, &L[L_INT], 1, &L[L_INT], 1, atleast1(opt_max / 16), 0); break;
        case 2: a2a(c, call, &L[t ? L_INT : L_DOUBLE], s / 8, &L[t ? L_INT : L_DOUBLE], s / 8, 0); break;
        default: a2av(c, call, NULL, 0, &L[L_VECTOR], 1, atleast1(opt_max / 16), 1); break;
        }
    }
    watched[1 + t] = NULL;
    return NULL;
}

static void threads_section(void)
{
    MPI_Comm d[2];
    comm_t *c[2];
    pthread_t th[2];
    for (int t = 0; t < 2; ++t) {
        char name[16];
        snprintf(name, sizeof name, "thread%d", t);
        MPI_Comm_dup(MPI_COMM_WORLD, &d[t]);
        c[t] = comm_new(d[t], name);
    }
    snprintf(where, sizeof where, "main thread waiting for the threads of section 6");
    for (int t = 0; t < 2; ++t) {
        if (0 != pthread_create(&th[t], NULL, thread_main, c[t])) {
            fail("pthread_create failed");
        }
    }
    for (int t = 0; t < 2; ++t) {
        pthread_join(th[t], NULL);
    }
    snprintf(where, sizeof where, "after the threads");
}

/* One alltoallv of -errors, on a new dup (never used again) with
 * MPI_ERRORS_RETURN: counts and displacements in bytes, each block sent
 * filled with pattern `seed` (checked where it lands if `check` and the
 * call succeeded).  Whatever the error, nothing past a posted block may be
 * written (a gap before the next block, the slack).  Returns its error. */
static int errors_alltoallv(const int *sc, const int *sd, const int *rc, const int *rd, size_t send_bytes,
                            size_t recv_bytes, int seed, int check)
{
    MPI_Comm d;
    int n = wsize, me = wrank;
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
    unsigned char *s = mt_alloc(send_bytes);
    region_t r;
    region_init(&r, recv_bytes);
    for (int p = 0; p < n; ++p) {
        mt_fill(s + sd[p], sc[p], me, p, seed);
    }
    alarm((unsigned) opt_err_timeout);
    int err = MPI_Alltoallv(s, sc, sd, MPI_BYTE, r.buf, rc, rd, MPI_BYTE, d);
    for (int p = 0; p < n; ++p) {
        if (check && MPI_SUCCESS == err) {
            mt_check("alltoall", r.buf + rd[p], rc[p], p, me, seed);
        }
        memset(r.mask + SLACK + rd[p], 1, rc[p]);
    }
    region_done(&r);
    free(s);
    return err;
}

/* 7: comm rank 1 sends comm rank 0 `extra` bytes more than it expects (in
 * the pairwise algorithm, rank 0's last step: no early return can strand a
 * later step).  Some rank must get an error.  Returns 1 if this rank got
 * one. */
static int mismatch(int base, int extra)
{
    int n = wsize, me = wrank;
    snprintf(where, sizeof where, "-errors: alltoallv, rank 1 sends rank 0 %d bytes instead of %d", base + extra, base);
    int *sc = malloc(n * sizeof *sc), *sd = malloc(n * sizeof *sd);
    int *rc = malloc(n * sizeof *rc), *rd = malloc(n * sizeof *rd);
    for (int p = 0; p < n; ++p) {
        sc[p] = base + (1 == me && 0 == p ? extra : 0);
        sd[p] = p * (base + extra);
        rc[p] = base;
        rd[p] = p * (base + 4096); /* a 4096-byte gap after every block */
    }
    int err = errors_alltoallv(sc, sd, rc, rd, (size_t) n * (base + extra), (size_t) n * (base + 4096), 7, 0);
    if (MPI_SUCCESS != err) {
        char str[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(err, str, &len);
        printf("NOTE alltoall: -errors (%d+%d bytes): rank %d got error %d: %s\n", base, extra, me, err, str);
        fflush(stdout);
    }
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    return MPI_SUCCESS != err;
}

/* 7, the self block: every pair moves `sent` bytes but rank 0's block to
 * itself, which has room for `room`.  Rank 0 must get MPI_ERR_TRUNCATE and
 * every rank must return (the others cannot see the error: a rank whose
 * call succeeds has every block). */
static void self_mismatch(int sent, int room)
{
    int n = wsize, me = wrank, cls = MPI_SUCCESS;
    snprintf(where, sizeof where, "-errors: alltoallv, rank 0 sends itself %d bytes into %d", sent, room);
    int *sc = malloc(n * sizeof *sc), *sd = malloc(n * sizeof *sd);
    int *rc = malloc(n * sizeof *rc), *rd = malloc(n * sizeof *rd);
    for (int p = 0; p < n; ++p) {
        sc[p] = sent;
        sd[p] = p * sent;
        rc[p] = 0 == me && 0 == p ? room : sent;
        rd[p] = p * (sent + 4096);
    }
    int err = errors_alltoallv(sc, sd, rc, rd, (size_t) n * sent, (size_t) n * (sent + 4096), 8, 1);
    if (MPI_SUCCESS != err) {
        MPI_Error_class(err, &cls);
    }
    if (0 == me && MPI_ERR_TRUNCATE != cls) {
        fail("-errors: rank 0 sent itself %d bytes into %d and got error class %d, not MPI_ERR_TRUNCATE (%d)", sent,
             room, cls, MPI_ERR_TRUNCATE);
    }
    free(sc);
    free(sd);
    free(rc);
    free(rd);
}

/* The cvar mpi_param_check (1 if it cannot be read). */
static int param_check(void)
{
    int index, count, value = 1;
    MPI_T_cvar_handle h;
    if (MPI_SUCCESS != MPI_T_cvar_get_index("mpi_param_check", &index) ||
        MPI_SUCCESS != MPI_T_cvar_handle_alloc(index, NULL, &h, &count)) {
        return 1;
    }
    if (MPI_SUCCESS != MPI_T_cvar_read(h, &value)) {
        value = 1;
    }
    MPI_T_cvar_handle_free(&h);
    return value;
}

static void errors_section(void)
{
    const int cases[2][2] = {{100, 64}, {200000, 70000}};
    const int self_cases[3][2] = {{164, 100}, {270000, 200000}, {100, 0}};
    for (int i = 0; i < 2; ++i) {
        int mine = mismatch(cases[i][0], cases[i][1]), any = 0;
        MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD); /* still under the alarm */
        if (!any) {
            fail("-errors: rank 1 sent rank 0 %d bytes more than the %d it expected and no rank got an error",
                 cases[i][1], cases[i][0]);
        }
    }
    if (!param_check()) {
        for (int i = 0; i < 3; ++i) {
            self_mismatch(self_cases[i][0], self_cases[i][1]);
        }
    } else if (0 == wrank) {
        printf("NOTE alltoall: -errors: a mismatched self block is checked with --mca mpi_param_check 0 only\n");
        fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD); /* still under the alarm: no rank left waiting */
    alarm(0);
}

/* -v: seconds since the previous lap on rank 0, and its calls on 2+ ranks
 * against what coll_rttcc_calls counted (when bound to no object). */
static void lap(const char *what)
{
    static double t0 = -1;
    static unsigned long calls0;
    static unsigned long long counted0;
    double t = MPI_Wtime();
    unsigned long calls = 0;
    unsigned long long counted = 0;
    if (!opt_verbose || 0 != wrank) {
        return;
    }
    for (int i = 0; i < ncomms; ++i) {
        calls += due(comms[i]);
    }
    if (pv.has_global) {
        counted = pvar_read(&pv.global);
    }
    if (t0 >= 0) {
        printf("TIME alltoall %s %.2fs, calls %lu, " CALLS_PVAR " %llu\n", what, t - t0, calls - calls0,
               counted - counted0);
        fflush(stdout);
    }
    t0 = t;
    calls0 = calls;
    counted0 = counted;
}

int main(int argc, char **argv)
{
    int provided;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
        if (0 == strcmp(a, "-max")) {
            opt_max = strtoull(v, NULL, 0), ++i;
        } else if (0 == strcmp(a, "-iters")) {
            opt_iters = atoi(v), ++i;
        } else if (0 == strcmp(a, "-seed")) {
            opt_seed = strtoull(v, NULL, 0), ++i;
        } else if (0 == strcmp(a, "-rounds")) {
            opt_rounds = atoi(v), ++i;
        } else if (0 == strcmp(a, "-timeout")) {
            opt_timeout = atoi(v), ++i;
        } else if (0 == strcmp(a, "-errors-timeout")) {
            opt_err_timeout = atoi(v), ++i;
        } else if (0 == strcmp(a, "-errors")) {
            opt_errors = 1;
        } else if (0 == strcmp(a, "-expect-rttcc")) {
            opt_expect = 1;
        } else if (0 == strcmp(a, "-v")) {
            opt_verbose = 1;
        } else if (0 == strcmp(a, "-single")) {
            opt_single = 1;
        } else {
            fprintf(stderr, "FAIL alltoall: unknown option %s\n", a);
            return 2;
        }
    }
    int level = opt_single ? MPI_THREAD_SINGLE : MPI_THREAD_MULTIPLE;
    MPI_T_init_thread(level, &provided);
    MPI_Init_thread(&argc, &argv, level, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    MPI_Comm_create_errhandler(on_mpi_error, &errh);
    watched[0] = where;
    signal(SIGALRM, on_alarm);
    layouts_init();

    pvar_find(CALLS_PVAR);
    if (pv.found && MPI_T_BIND_NO_OBJECT == pv.bind) {
        pv.has_global = pvar_attach(NULL, &pv.global);
    }
    comm_t *world = comm_new(MPI_COMM_WORLD, "world");
    int call = 0;

    /* 1-5 */
    lap("start");
    for (int it = 0; it < opt_iters; ++it) {
        sizes_section(world, &call);
        lap("sizes");
        alltoallv_section(world, &call);
        lap("alltoallv");
        inplace_section(world, &call);
        lap("in-place");
        derived_section(world, &call);
        lap("derived");
    }
    MPI_Comm dup, parity, rev, revdup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wrank, &parity);
    MPI_Comm_split(MPI_COMM_WORLD, 0, wsize - wrank, &rev);
    MPI_Comm_dup(rev, &revdup);
    comm_t *others[4] = {comm_new(dup, "dup"), comm_new(parity, wrank % 2 ? "odd" : "even"),
                         comm_new(rev, "reversed"), comm_new(revdup, "reversed-dup")};
    for (int it = 0; it < opt_iters; ++it) {
        for (int i = 0; i < 4; ++i) {
            comm_section(others[i], &call);
        }
    }
    a2av(others[2], call++, &L[L_BYTE], 1, &L[L_BYTE], 1, atleast1(opt_max / 4), 0);
    lap("communicators");

    /* 6 */
    int threads = MPI_THREAD_MULTIPLE == provided && opt_rounds > 0;
    if (threads) {
        threads_section();
        lap("threads");
    } else if (0 == wrank && opt_rounds > 0) {
        printf("NOTE alltoall: MPI_THREAD_MULTIPLE not provided (level %d): concurrent collectives skipped\n",
               provided);
        fflush(stdout);
    }

    /* 7 */
    if (opt_errors && wsize > 1) {
        errors_section();
        lap("errors");
    }

    alarm(0);

    /* 8: every call that reached a coll component on 2+ ranks (all reach
     * each other through rttcc when the run pins btl rttcc,self) must have
     * gone through coll_rttcc. */
    snprintf(where, sizeof where, CALLS_PVAR);
    unsigned long calls = 0, calls_all = 0;
    unsigned long long counted = 0;
    int ok = 1;
    for (int i = 0; i < ncomms; ++i) {
        comm_t *c = comms[i];
        calls_all += c->calls;
        calls += due(c);
        if (c->has_pvar) {
            unsigned long long v = pvar_read_free(&c->pvar);
            counted += v;
            if (opt_expect && v < due(c)) {
                fprintf(stderr, "FAIL alltoall on rank %d: " CALLS_PVAR " on comm %s counted %llu of %lu calls\n",
                        wrank, c->name, v, due(c));
                ok = 0;
            }
        } else if (opt_expect && pv.found && MPI_T_BIND_MPI_COMM == pv.bind && c->n > 1) {
            fprintf(stderr, "FAIL alltoall on rank %d: no " CALLS_PVAR " handle on comm %s: %s\n", wrank, c->name,
                    pv.note);
            ok = 0;
        }
    }
    if (pv.has_global) {
        counted = pvar_read_free(&pv.global);
        if (opt_expect && counted < calls) {
            fprintf(stderr,
                    "FAIL alltoall on rank %d: " CALLS_PVAR " counted %llu, fewer than the %lu alltoall(v) calls "
                    "(not of 0 bytes) on communicators of 2+ ranks\n",
                    wrank, counted, calls);
            ok = 0;
        }
    }
    if (pv.found) {
        MPI_T_pvar_session_free(&pv.session);
    }
    if (opt_expect && (!pv.found || (MPI_T_BIND_NO_OBJECT == pv.bind && !pv.has_global))) {
        fprintf(stderr, "FAIL alltoall on rank %d: -expect-rttcc: %s\n", wrank, pv.note);
        ok = 0;
    }
    fflush(stderr);
    int all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok) {
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    if (0 == wrank) {
        char rttcc[64];
        if (pv.found) {
            snprintf(rttcc, sizeof rttcc, "%llu", counted);
        } else {
            snprintf(rttcc, sizeof rttcc, "n/a");
        }
        printf("PASS alltoall np=%d calls=%lu (%lu for coll_rttcc) " CALLS_PVAR "=%s threads=%s errors=%s\n", wsize,
               calls_all, calls, rttcc, threads ? "yes" : "skipped", opt_errors ? "checked" : "off");
        fflush(stdout);
    }
    for (int i = 0; i < ncomms; ++i) {
        if (MPI_COMM_WORLD != comms[i]->comm) {
            MPI_Comm_free(&comms[i]->comm);
        }
        free(comms[i]->world);
        free(comms[i]);
    }
    layouts_free();
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Errhandler_free(&errh);
    MPI_T_finalize(); /* before MPI_Finalize: 4.1.4 crashes the other way round */
    MPI_Finalize();
    return 0;
}
