/* Accumulate semantics: every predefined op on every predefined C type it
 * applies to (and the Fortran INTEGER, REAL, DOUBLE PRECISION, LOGICAL,
 * COMPLEX, DOUBLE COMPLEX, 2INTEGER of the C API), through MPI_Accumulate,
 * MPI_Get_accumulate and MPI_Fetch_and_op (MPI_NO_OP through the last two
 * only: MPI_Accumulate does not take it).  Expected values are folded
 * locally with MPI_Reduce_local (MPI_REPLACE and MPI_NO_OP by hand); every
 * value is a small integer, so floating-point sums are exact in any order.
 *
 * Phases (-phases, all by default):
 *   serial      each rank updates its own block at one target: every fetched
 *               value is the fold of the contributions before it, in order
 *   concurrent  every rank updates the same block at one target at once: the
 *               result is the fold of all contributions (no update lost or
 *               torn: per-element atomicity); a fetching MPI_REPLACE swaps, so
 *               the values fetched plus the final one are, per element,
 *               exactly the initial value plus every value written
 *   ordering    accumulate_ordering (default rar,raw,war,waw): one origin's
 *               REPLACE, then SUM, then (integers) a compare-and-swap of
 *               the first with the sum, then a fetching NO_OP on the same
 *               elements, with no flush between: the swap happens and the
 *               fetch reads the result (under a shared lock and in a
 *               lock_all epoch); under
 *               accumulate_ordering=none with flushes between, the same
 *   same_op     windows with accumulate_ops=same_op (concurrent MPI_SUM) and
 *               same_op_no_op (MPI_SUM with concurrent fetching MPI_NO_OP)
 *   counter     fetch-and-add of 1 by every rank: the values fetched are a
 *               permutation of 0..n-1; compare-and-swap claims of slots: each
 *               slot claimed by exactly one rank, as it believes
 *
 *   accumulate [-phases ...] [-types int,double,...] [-ops sum,replace,...]
 *              [-flavor create,allocate,dynamic] [-iters 6]
 */
#include "osctest.h"

#include <complex.h>
#include <stddef.h>

#define ELEMENTS 16 /* per block: even, so mt_maybe_corrupt hits a value byte */
#define MAX_EXTENT 32

enum kind { K_INT, K_UINT, K_FLOAT, K_COMPLEX, K_BOOL, K_LOGICAL, K_BYTE, K_CHAR, K_PAIR_INT, K_PAIR_FLOAT };

typedef struct {
    const char *name;
    MPI_Datatype type;
    enum kind kind;
    int vsize;  /* bytes of the value (of each part, for complex; of the value of a pair) */
    int ext;    /* the element's extent */
    int fortran;
} tinfo;

static const tinfo types[] = {
    {"signed_char", MPI_SIGNED_CHAR, K_INT, 1, 1, 0},
    {"unsigned_char", MPI_UNSIGNED_CHAR, K_UINT, 1, 1, 0},
    {"short", MPI_SHORT, K_INT, 2, 2, 0},
    {"unsigned_short", MPI_UNSIGNED_SHORT, K_UINT, 2, 2, 0},
    {"int", MPI_INT, K_INT, 4, 4, 0},
    {"unsigned", MPI_UNSIGNED, K_UINT, 4, 4, 0},
    {"long", MPI_LONG, K_INT, sizeof(long), sizeof(long), 0},
    {"unsigned_long", MPI_UNSIGNED_LONG, K_UINT, sizeof(long), sizeof(long), 0},
    {"long_long", MPI_LONG_LONG, K_INT, 8, 8, 0},
    {"unsigned_long_long", MPI_UNSIGNED_LONG_LONG, K_UINT, 8, 8, 0},
    {"int8_t", MPI_INT8_T, K_INT, 1, 1, 0},
    {"int16_t", MPI_INT16_T, K_INT, 2, 2, 0},
    {"int32_t", MPI_INT32_T, K_INT, 4, 4, 0},
    {"int64_t", MPI_INT64_T, K_INT, 8, 8, 0},
    {"uint8_t", MPI_UINT8_T, K_UINT, 1, 1, 0},
    {"uint16_t", MPI_UINT16_T, K_UINT, 2, 2, 0},
    {"uint32_t", MPI_UINT32_T, K_UINT, 4, 4, 0},
    {"uint64_t", MPI_UINT64_T, K_UINT, 8, 8, 0},
    {"aint", MPI_AINT, K_INT, sizeof(MPI_Aint), sizeof(MPI_Aint), 0},
    {"offset", MPI_OFFSET, K_INT, sizeof(MPI_Offset), sizeof(MPI_Offset), 0},
    {"count", MPI_COUNT, K_INT, sizeof(MPI_Count), sizeof(MPI_Count), 0},
    {"float", MPI_FLOAT, K_FLOAT, 4, 4, 0},
    {"double", MPI_DOUBLE, K_FLOAT, 8, 8, 0},
    {"long_double", MPI_LONG_DOUBLE, K_FLOAT, sizeof(long double), sizeof(long double), 0},
    {"c_float_complex", MPI_C_FLOAT_COMPLEX, K_COMPLEX, 4, 8, 0},
    {"c_double_complex", MPI_C_DOUBLE_COMPLEX, K_COMPLEX, 8, 16, 0},
    {"c_long_double_complex", MPI_C_LONG_DOUBLE_COMPLEX, K_COMPLEX, sizeof(long double), 2 * sizeof(long double), 0},
    {"c_bool", MPI_C_BOOL, K_BOOL, 1, 1, 0},
    {"byte", MPI_BYTE, K_BYTE, 1, 1, 0},
    {"char", MPI_CHAR, K_CHAR, 1, 1, 0},
    {"wchar", MPI_WCHAR, K_CHAR, sizeof(wchar_t), sizeof(wchar_t), 0},
    {"float_int", MPI_FLOAT_INT, K_PAIR_FLOAT, 4, 8, 0},
    {"double_int", MPI_DOUBLE_INT, K_PAIR_FLOAT, 8, 16, 0},
    {"long_int", MPI_LONG_INT, K_PAIR_INT, sizeof(long), 16, 0},
    {"2int", MPI_2INT, K_PAIR_INT, 4, 8, 0},
    {"short_int", MPI_SHORT_INT, K_PAIR_INT, 2, 8, 0},
    {"long_double_int", MPI_LONG_DOUBLE_INT, K_PAIR_FLOAT, sizeof(long double), 32, 0},
    {"integer", MPI_INTEGER, K_INT, 4, 4, 1},
    {"real", MPI_REAL, K_FLOAT, 4, 4, 1},
    {"double_precision", MPI_DOUBLE_PRECISION, K_FLOAT, 8, 8, 1},
    {"logical", MPI_LOGICAL, K_LOGICAL, 4, 4, 1},
    {"complex", MPI_COMPLEX, K_COMPLEX, 4, 8, 1},
    {"double_complex", MPI_DOUBLE_COMPLEX, K_COMPLEX, 8, 16, 1},
    {"2integer", MPI_2INTEGER, K_PAIR_INT, 4, 8, 1},
};
#define NTYPES ((int) (sizeof types / sizeof types[0]))

enum opcode { SUM, PROD, MAX, MIN, LAND, LOR, LXOR, BAND, BOR, BXOR, MAXLOC, MINLOC, REPLACE, NO_OP, NOPS };
static const char *const op_names[NOPS] = {"sum", "prod", "max", "min", "land", "lor", "lxor",
                                           "band", "bor", "bxor", "maxloc", "minloc", "replace", "no_op"};
static MPI_Op mpi_op(enum opcode op)
{
    const MPI_Op ops[NOPS] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN, MPI_LAND, MPI_LOR, MPI_LXOR,
                              MPI_BAND, MPI_BOR, MPI_BXOR, MPI_MAXLOC, MPI_MINLOC, MPI_REPLACE, MPI_NO_OP};
    return ops[op];
}

/* Which ops MPI defines on which type (logical ops take C integers, not Fortran ones). */
static int applies(enum opcode op, const tinfo *t)
{
    enum kind k = t->kind;
    int integer = K_INT == k || K_UINT == k, pair = K_PAIR_INT == k || K_PAIR_FLOAT == k;
    switch (op) {
    case SUM:
    case PROD: return integer || K_FLOAT == k || K_COMPLEX == k;
    case MAX:
    case MIN: return integer || K_FLOAT == k;
    case LAND:
    case LOR:
    case LXOR: return (integer && !t->fortran) || K_BOOL == k || K_LOGICAL == k;
    case BAND:
    case BOR:
    case BXOR: return integer || K_BYTE == k;
    case MAXLOC:
    case MINLOC: return pair;
    default: return 1;
    }
}

static int rank, nprocs, iters;

/* Bytes of an element that hold its value (long double has padding). */
static int significant(const tinfo *t, int byte)
{
    int part = K_PAIR_INT == t->kind || K_PAIR_FLOAT == t->kind ? (t->vsize < 4 ? 4 : t->vsize) : t->vsize;
    int ld = sizeof(long double) == (size_t) t->vsize && (K_FLOAT == t->kind || K_COMPLEX == t->kind ||
                                                          K_PAIR_FLOAT == t->kind);
    int in_part = byte % (K_COMPLEX == t->kind ? t->vsize : t->ext);
    if (K_PAIR_INT == t->kind || K_PAIR_FLOAT == t->kind) {
        if (byte >= part) {
            return byte < part + 4;
        }
        return byte < (ld ? 10 : t->vsize);
    }
    return in_part < (ld ? 10 : t->vsize);
}

/* An element: integer value iv (or iv + frac/1024 for floating types),
 * imaginary part im, pair index idx.  Unused bytes are zero. */
static void set_elem(const tinfo *t, unsigned char *p, long long iv, long long im, int idx, int frac)
{
    long double f = (long double) iv + (long double) frac / 1024.0L, g = (long double) im;
    memset(p, 0, (size_t) t->ext);
    switch (t->kind) {
    case K_BOOL: *(_Bool *) p = 0 != iv; break;
    case K_LOGICAL: *(int *) p = 0 != iv; break;
    case K_FLOAT:
    case K_PAIR_FLOAT:
    case K_COMPLEX:
        if (4 == t->vsize) {
            float v[2] = {(float) f, (float) g};
            memcpy(p, v, K_COMPLEX == t->kind ? 8 : 4);
        } else if (8 == t->vsize) {
            double v[2] = {(double) f, (double) g};
            memcpy(p, v, K_COMPLEX == t->kind ? 16 : 8);
        } else {
            memcpy(p, &f, 10);
            if (K_COMPLEX == t->kind) {
                memcpy(p + sizeof(long double), &g, 10);
            }
        }
        break;
    default: memcpy(p, &iv, (size_t) t->vsize); break; /* little-endian: the low bytes */
    }
    if (K_PAIR_INT == t->kind || K_PAIR_FLOAT == t->kind) {
        memcpy(p + (t->vsize < 4 ? 4 : t->vsize), &idx, sizeof idx);
    }
}

static unsigned long long mix(unsigned long long x)
{
    x = (x ^ (x >> 31)) * 0x7fb5d329728ea185ULL;
    return x ^ (x >> 27);
}

static int is_logical(const tinfo *t) { return K_BOOL == t->kind || K_LOGICAL == t->kind; }

/* The value rank r writes in iteration k to element e (r < 0: the initial value). */
static void value(const tinfo *t, enum opcode op, int r, int k, int e, unsigned char *p)
{
    int init = r < 0, bits = 8 * t->vsize, truth = is_logical(t) ? 1 : 2;
    int last = r == nprocs - 1 && k == iters - 1 && e % 2;
    long long u = init ? 0x7e : (long long) r * iters + k + 1, sign = k % 2 ? -1 : 2;
    switch (op) {
    case SUM: set_elem(t, p, init ? e % 5 : sign, init ? 1 : -sign, 0, 0); break;
    case PROD:
        if (init) {
            set_elem(t, p, 1 + e % 3, 0, 0, 0);
        } else if (0 == r && 0 == k) {
            set_elem(t, p, 2, 0, 0, 0);
        } else if (K_COMPLEX == t->kind && 1 == (r + k + e) % 4) {
            set_elem(t, p, 0, 1, 0, 0); /* i */
        } else {
            set_elem(t, p, (r + k + e) % 3 ? 1 : -1, 0, 0, 0);
        }
        break;
    case MAX:
    case MIN: {
        long long v = init ? (e * 11) % 61 : ((long long) (r * iters + k) * 7 + e * 3) % 61;
        set_elem(t, p, K_UINT == t->kind ? v : v - 30, 0, 0, 0);
        break;
    }
    case LAND: set_elem(t, p, init || !last ? truth : 0, 0, 0, 0); break;
    case LOR: set_elem(t, p, !init && last ? truth : 0, 0, 0, 0); break;
    case LXOR: set_elem(t, p, init ? e % 2 : (r + k + e) % 2 ? truth : 0, 0, 0, 0); break;
    case BAND: set_elem(t, p, init ? -1 : (long long) ~(1ULL << ((r * iters + k + e) % bits)), 0, 0, 0); break;
    case BOR: set_elem(t, p, init ? 0 : (long long) (1ULL << ((r * iters + k + e) % bits)), 0, 0, 0); break;
    case BXOR: set_elem(t, p, (long long) mix((unsigned long long) (r * 1000 + k * 31 + e + 7)), 0, 0, 0); break;
    case MAXLOC:
    case MINLOC:
        set_elem(t, p, init ? 3 : ((r * iters + k) * 5 + e) % 7, 0, init ? 1000000 : r * iters + k, 0);
        break;
    default: /* REPLACE, NO_OP: every byte of the value tells who wrote it */
        if (is_logical(t)) {
            set_elem(t, p, u % 2, 0, 0, 0);
        } else if (K_INT == t->kind || K_UINT == t->kind || K_BYTE == t->kind || K_CHAR == t->kind ||
                   K_PAIR_INT == t->kind) {
            set_elem(t, p, (long long) (0x0101010101010101ULL * (unsigned long long) u), 0, (int) u, 0);
        } else {
            set_elem(t, p, u + e, -u, (int) u, (int) u);
        }
        break;
    }
}

/* acc = contribution (op) acc, as MPI defines op. */
static void fold(const tinfo *t, enum opcode op, const unsigned char *in, unsigned char *acc, int n)
{
    if (REPLACE == op) {
        memcpy(acc, in, (size_t) n * (size_t) t->ext);
    } else if (NO_OP != op) {
        /* Open MPI 4.1.4's MPI_Reduce_local compares MPI_OFFSET as unsigned
         * (MAX(3, -21) = -21): the reference takes the signed 64-bit type
         * MPI_Offset is. */
        MPI_Datatype type = MPI_OFFSET == t->type && 8 == sizeof(MPI_Offset) ? MPI_INT64_T : t->type;
        OT(MPI_Reduce_local(in, acc, n, type, mpi_op(op)));
    }
}

/* Two elements are equal: floating parts by value (sums and products of
 * the same values may give zeros of either sign), the rest byte by byte. */
static int same_elem(const tinfo *t, const unsigned char *a, const unsigned char *b)
{
    int floating = K_FLOAT == t->kind || K_COMPLEX == t->kind || K_PAIR_FLOAT == t->kind;
    int parts = K_COMPLEX == t->kind ? 2 : 1;
    for (int i = 0; i < parts && floating; ++i) {
        const unsigned char *x = a + i * t->vsize, *y = b + i * t->vsize;
        long double u, v;
        if (4 == t->vsize) {
            float f, g;
            memcpy(&f, x, 4);
            memcpy(&g, y, 4);
            u = f;
            v = g;
        } else if (8 == t->vsize) {
            double f, g;
            memcpy(&f, x, 8);
            memcpy(&g, y, 8);
            u = f;
            v = g;
        } else {
            memcpy(&u, x, sizeof u);
            memcpy(&v, y, sizeof v);
        }
        if (u != v) {
            return 0;
        }
    }
    int rest = !floating ? 0 : K_PAIR_FLOAT == t->kind ? t->vsize : t->ext; /* a pair's index */
    for (int i = rest; i < t->ext; ++i) {
        if (significant(t, i) && a[i] != b[i]) {
            return 0;
        }
    }
    return 1;
}

static void check_elems(unsigned char *got, const unsigned char *want, int n, const tinfo *t, const char *what,
                        int e0)
{
    mt_maybe_corrupt(got + (size_t) (n / 2) * (size_t) t->ext, 1);
    for (int e = 0; e < n; ++e) {
        const unsigned char *g = got + (size_t) e * (size_t) t->ext, *w = want + (size_t) e * (size_t) t->ext;
        if (!same_elem(t, g, w)) {
            char hex[2][3 * MAX_EXTENT + 1];
            for (int b = 0; b < t->ext; ++b) {
                snprintf(hex[0] + 3 * b, 4, " %02x", g[b]);
                snprintf(hex[1] + 3 * b, 4, " %02x", w[b]);
            }
            ot_fail("%s: element %d is%s, expected%s", what, e0 + e, hex[0], hex[1]);
        }
    }
}

/* A window of `blocks` blocks of ELEMENTS elements of up to MAX_EXTENT bytes. */
static void window(ot_win *w, enum ot_flavor f, int blocks, MPI_Info info)
{
    ot_win_new(w, f, MPI_COMM_WORLD, blocks, ELEMENTS * MAX_EXTENT, 1, info);
}

/* The target sets blocks [0, blocks) to the initial values, under its own lock. */
static void init_blocks(ot_win *w, const tinfo *t, enum opcode op, int target, int blocks)
{
    if (rank == target) {
        OT(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w->win));
        for (int b = 0; b < blocks; ++b) {
            for (int e = 0; e < ELEMENTS; ++e) {
                value(t, op, -1, 0, e, w->part[b] + (size_t) e * (size_t) t->ext);
            }
        }
        OT(MPI_Win_unlock(rank, w->win));
    }
    OT(MPI_Barrier(MPI_COMM_WORLD));
}

/* Iteration k's update of ELEMENTS elements at (target, block): by
 * MPI_Accumulate, MPI_Get_accumulate or MPI_Fetch_and_op per element (method
 * 0, 1, 2), fetched values into `fetched`. */
static void update(ot_win *w, const tinfo *t, enum opcode op, int method, int target, int block,
                   const unsigned char *in, unsigned char *fetched)
{
    MPI_Aint d = ot_disp(w, target, block, 0);
    if (0 == method) {
        OT(MPI_Accumulate(in, ELEMENTS, t->type, target, d, ELEMENTS, t->type, mpi_op(op), w->win));
    } else if (1 == method) {
        OT(MPI_Get_accumulate(in, ELEMENTS, t->type, fetched, ELEMENTS, t->type, target, d, ELEMENTS, t->type,
                              mpi_op(op), w->win));
    } else {
        for (int e = 0; e < ELEMENTS; ++e) {
            size_t at = (size_t) e * (size_t) t->ext;
            OT(MPI_Fetch_and_op(in + at, fetched + at, t->type, target, d + (MPI_Aint) at, mpi_op(op), w->win));
        }
    }
}

static void contributions(const tinfo *t, enum opcode op, int r, int k, unsigned char *out)
{
    for (int e = 0; e < ELEMENTS; ++e) {
        value(t, op, r, k, e, out + (size_t) e * (size_t) t->ext);
    }
}

/* serial: rank r alone on block r of `target`; iteration k's method is k % 3
 * (fetching ones only for MPI_NO_OP). */
static void serial(ot_win *w, const tinfo *t, enum opcode op, int target, const char *what)
{
    size_t bytes = (size_t) ELEMENTS * (size_t) t->ext;
    unsigned char in[ELEMENTS * MAX_EXTENT], acc[ELEMENTS * MAX_EXTENT], *fetched = mt_alloc(bytes * (size_t) iters);
    unsigned char *src = mt_alloc(bytes * (size_t) iters);
    char where[300];
    init_blocks(w, t, op, target, nprocs);
    OT(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, w->win));
    for (int k = 0; k < iters; ++k) { /* origin buffers stay untouched until the flush or unlock */
        contributions(t, op, rank, k, src + (size_t) k * bytes);
        update(w, t, op, NO_OP == op ? 1 + k % 2 : k % 3, target, rank, src + (size_t) k * bytes,
               fetched + (size_t) k * bytes);
        if (k % 2) {
            OT(MPI_Win_flush(target, w->win));
        }
    }
    OT(MPI_Win_unlock(target, w->win));
    contributions(t, op, -1, 0, acc);
    for (int k = 0; k < iters; ++k) {
        if (k % 3 || NO_OP == op) {
            snprintf(where, sizeof where, "%s, serial: value fetched by iteration %d", what, k);
            check_elems(fetched + (size_t) k * bytes, acc, ELEMENTS, t, where, 0);
        }
        contributions(t, op, rank, k, in);
        fold(t, op, in, acc, ELEMENTS);
    }
    OT(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == target) {
        OT(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w->win));
        for (int r = 0; r < nprocs; ++r) {
            contributions(t, op, -1, 0, acc);
            for (int k = 0; k < iters; ++k) {
                contributions(t, op, r, k, in);
                fold(t, op, in, acc, ELEMENTS);
            }
            snprintf(where, sizeof where, "%s, serial: block of origin %d", what, r);
            check_elems(w->part[r], acc, ELEMENTS, t, where, 0);
        }
        OT(MPI_Win_unlock(rank, w->win));
    }
    free(fetched);
    free(src);
}

static int cmp_bytes(const void *a, const void *b, size_t n) { return memcmp(a, b, n); }

/* Element e of every value in `vals` (count of them) sorted, into out. */
static void sorted_column(const tinfo *t, const unsigned char *vals, int count, int e, unsigned char *out)
{
    size_t ext = (size_t) t->ext, bytes = ELEMENTS * ext;
    for (int i = 0; i < count; ++i) {
        memcpy(out + (size_t) i * ext, vals + (size_t) i * bytes + (size_t) e * ext, ext);
        for (size_t b = 0; b < ext; ++b) { /* padding does not count */
            out[(size_t) i * ext + b] &= significant(t, (int) b) ? 0xff : 0;
        }
    }
    for (int i = 1; i < count; ++i) { /* insertion sort: counts are small */
        unsigned char tmp[MAX_EXTENT];
        memcpy(tmp, out + (size_t) i * ext, ext);
        int j = i - 1;
        for (; j >= 0 && cmp_bytes(out + (size_t) j * ext, tmp, ext) > 0; --j) {
            memcpy(out + (size_t) (j + 1) * ext, out + (size_t) j * ext, ext);
        }
        memcpy(out + (size_t) (j + 1) * ext, tmp, ext);
    }
}

/* concurrent: every rank on block 0 of `target` at once. */
static void concurrent(ot_win *w, const tinfo *t, enum opcode op, int target, const char *what)
{
    size_t bytes = (size_t) ELEMENTS * (size_t) t->ext, total = bytes * (size_t) iters * (size_t) nprocs;
    unsigned char in[ELEMENTS * MAX_EXTENT], acc[ELEMENTS * MAX_EXTENT];
    unsigned char *fetched = mt_alloc(bytes * (size_t) iters), *all = rank == target ? mt_alloc(total + bytes) : NULL;
    unsigned char *src = mt_alloc(bytes * (size_t) iters);
    int swap = REPLACE == op || NO_OP == op; /* every update fetches: each value is seen once */
    char where[300];
    init_blocks(w, t, op, target, 1);
    OT(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, w->win));
    for (int k = 0; k < iters; ++k) {
        contributions(t, op, rank, k, src + (size_t) k * bytes);
        update(w, t, op, swap ? 1 + k % 2 : k % 3, target, 0, src + (size_t) k * bytes, fetched + (size_t) k * bytes);
        if (k % 2) {
            OT(MPI_Win_flush(target, w->win));
        }
    }
    OT(MPI_Win_unlock(target, w->win));
    OT(MPI_Gather(fetched, (int) (bytes * (size_t) iters), MPI_BYTE, all, (int) (bytes * (size_t) iters), MPI_BYTE,
                  target, MPI_COMM_WORLD));
    if (rank == target) {
        OT(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w->win));
        snprintf(where, sizeof where, "%s, concurrent: result of %d ranks x %d updates", what, nprocs, iters);
        if (REPLACE != op) {
            contributions(t, op, -1, 0, acc);
            for (int r = 0; r < nprocs; ++r) {
                for (int k = 0; k < iters; ++k) {
                    contributions(t, op, r, k, in);
                    fold(t, op, in, acc, ELEMENTS);
                }
            }
            check_elems(w->part[0], acc, ELEMENTS, t, where, 0);
        }
        if (swap) {
            /* fetched + final == initial + written, element by element */
            int n = nprocs * iters + 1;
            unsigned char *seen = mt_alloc((size_t) n * bytes), *written = mt_alloc((size_t) n * bytes);
            unsigned char *a = mt_alloc((size_t) n * (size_t) t->ext), *b = mt_alloc((size_t) n * (size_t) t->ext);
            memcpy(all + total, w->part[0], bytes);
            mt_maybe_corrupt(all + total + (ELEMENTS / 2) * (size_t) t->ext, 1);
            memcpy(seen, all, total + bytes);
            contributions(t, op, -1, 0, written);
            for (int r = 0; r < nprocs; ++r) {
                for (int k = 0; k < iters; ++k) {
                    unsigned char *slot = written + (size_t) (1 + r * iters + k) * bytes;
                    if (NO_OP == op) {
                        contributions(t, op, -1, 0, slot); /* nothing is written: every fetch sees the initial */
                    } else {
                        contributions(t, op, r, k, slot);
                    }
                }
            }
            for (int e = 0; e < ELEMENTS; ++e) {
                sorted_column(t, seen, n, e, a);
                sorted_column(t, written, n, e, b);
                for (int i = 0; i < n; ++i) {
                    if (!same_elem(t, a + (size_t) i * (size_t) t->ext, b + (size_t) i * (size_t) t->ext)) {
                        ot_fail("%s, concurrent: element %d: the values fetched and left are not those written "
                                "(a lost, duplicated or torn swap; sorted position %d of %d)", what, e, i, n);
                    }
                }
            }
            free(seen);
            free(written);
            free(a);
            free(b);
        }
        OT(MPI_Win_unlock(rank, w->win));
    }
    OT(MPI_Barrier(MPI_COMM_WORLD));
    free(fetched);
    free(all);
    free(src);
}

/* ordering: rank r on block r of its right neighbour, REPLACE v, SUM w,
 * fetching NO_OP, `rounds` times in one epoch: a shared lock of the
 * neighbour, or with all = 1 a lock_all epoch (where a large accumulate may
 * wait for the epoch's schedule while a later small one goes at once).
 * ordered = 0: the window says accumulate_ordering=none, and flushes
 * separate the steps. */
static void ordering(enum ot_flavor f, const tinfo *t, int ordered, int all, const char *what)
{
    enum { ROUNDS = 20 };
    size_t bytes = (size_t) ELEMENTS * (size_t) t->ext;
    int right = (rank + 1) % nprocs;
    unsigned char v[ELEMENTS * MAX_EXTENT], s[ELEMENTS * MAX_EXTENT], want[ELEMENTS * MAX_EXTENT];
    unsigned char *got = mt_alloc(bytes * ROUNDS);
    char where[300];
    ot_win w;
    MPI_Info info = MPI_INFO_NULL;
    if (!ordered) {
        MPI_Info_create(&info);
        MPI_Info_set(info, "accumulate_ordering", "none");
    }
    window(&w, f, nprocs, info);
    if (all) {
        OT(MPI_Win_lock_all(0, w.win));
    } else {
        OT(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, w.win));
    }
    MPI_Aint d = ot_disp(&w, right, rank, 0);
    unsigned char *vs = mt_alloc(bytes * ROUNDS), *ss = mt_alloc(bytes * ROUNDS);
    /* Integers: a compare-and-swap of element 0 after the SUM (it compares
     * with the sum, so it swaps only if the accumulates went first). */
    const int cas = (K_INT == t->kind || K_UINT == t->kind) && !t->fortran;
    unsigned char swapped[ROUNDS][MAX_EXTENT], seen[ROUNDS][MAX_EXTENT], sum0[ROUNDS][MAX_EXTENT];
    for (int i = 0; i < ROUNDS; ++i) {
        for (int e = 0; e < ELEMENTS; ++e) {
            set_elem(t, vs + (size_t) i * bytes + (size_t) e * (size_t) t->ext, rank * 100 + i * 3 + e, 0, 0, 0);
            set_elem(t, ss + (size_t) i * bytes + (size_t) e * (size_t) t->ext, i % 2 ? -e : e + 1, 0, 0, 0);
        }
        OT(MPI_Accumulate(vs + (size_t) i * bytes, ELEMENTS, t->type, right, d, ELEMENTS, t->type, MPI_REPLACE, w.win));
        if (!ordered) {
            OT(MPI_Win_flush(right, w.win));
        }
        OT(MPI_Accumulate(ss + (size_t) i * bytes, ELEMENTS, t->type, right, d, ELEMENTS, t->type, MPI_SUM, w.win));
        if (!ordered) {
            OT(MPI_Win_flush(right, w.win));
        }
        if (cas) {
            memcpy(sum0[i], vs + (size_t) i * bytes, (size_t) t->ext);
            fold(t, SUM, ss + (size_t) i * bytes, sum0[i], 1);
            set_elem(t, swapped[i], rank * 10 + i + 7, 0, 0, 0);
            OT(MPI_Compare_and_swap(swapped[i], sum0[i], seen[i], t->type, right, d, w.win));
            if (!ordered) {
                OT(MPI_Win_flush(right, w.win));
            }
        }
        OT(MPI_Get_accumulate(NULL, 0, t->type, got + (size_t) i * bytes, ELEMENTS, t->type, right, d, ELEMENTS,
                              t->type, MPI_NO_OP, w.win));
    }
    OT(all ? MPI_Win_unlock_all(w.win) : MPI_Win_unlock(right, w.win));
    for (int i = 0; i < ROUNDS; ++i) {
        memcpy(v, vs + (size_t) i * bytes, bytes);
        memcpy(s, ss + (size_t) i * bytes, bytes);
        memcpy(want, v, bytes);
        fold(t, SUM, s, want, ELEMENTS);
        if (cas) {
            snprintf(where, sizeof where, "%s, %s, %s: the compare-and-swap after REPLACE and SUM, round %d", what,
                     ordered ? "accumulate_ordering (default)" : "accumulate_ordering=none with flushes",
                     all ? "lock_all" : "shared lock", i);
            check_elems(seen[i], sum0[i], 1, t, where, 0);
            memcpy(want, swapped[i], (size_t) t->ext);
        }
        snprintf(where, sizeof where, "%s, %s, %s: REPLACE then SUM then fetch, round %d", what,
                 ordered ? "accumulate_ordering (default)" : "accumulate_ordering=none with flushes",
                 all ? "lock_all" : "shared lock", i);
        check_elems(got + (size_t) i * bytes, want, ELEMENTS, t, where, 0);
    }
    ot_win_free(&w);
    if (!ordered) {
        MPI_Info_free(&info);
    }
    free(got);
    free(vs);
    free(ss);
}

/* same_op: accumulate_ops=same_op (concurrent MPI_SUM) or same_op_no_op
 * (and every other rank reads with a fetching MPI_NO_OP meanwhile). */
static void same_op(enum ot_flavor f, const tinfo *t, const char *key, const char *what)
{
    ot_win w;
    MPI_Info info;
    int target = nprocs - 1, no_op = 0 == strcmp(key, "same_op_no_op");
    unsigned char in[ELEMENTS * MAX_EXTENT], acc[ELEMENTS * MAX_EXTENT], seen[ELEMENTS * MAX_EXTENT];
    char where[300];
    MPI_Info_create(&info);
    MPI_Info_set(info, "accumulate_ops", key);
    window(&w, f, 1, info);
    init_blocks(&w, t, SUM, target, 1);
    OT(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, w.win));
    for (int k = 0; k < iters; ++k) {
        if (no_op && rank % 2) {
            OT(MPI_Get_accumulate(NULL, 0, t->type, seen, ELEMENTS, t->type, target, ot_disp(&w, target, 0, 0),
                                  ELEMENTS, t->type, MPI_NO_OP, w.win));
        } else {
            contributions(t, SUM, rank, k, in);
            update(&w, t, SUM, k % 3, target, 0, in, seen);
        }
        OT(MPI_Win_flush(target, w.win));
    }
    OT(MPI_Win_unlock(target, w.win));
    OT(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == target) {
        OT(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w.win));
        contributions(t, SUM, -1, 0, acc);
        for (int r = 0; r < nprocs; ++r) {
            for (int k = 0; k < iters && !(no_op && r % 2); ++k) {
                contributions(t, SUM, r, k, in);
                fold(t, SUM, in, acc, ELEMENTS);
            }
        }
        snprintf(where, sizeof where, "%s, accumulate_ops=%s: concurrent sums", what, key);
        check_elems(w.part[0], acc, ELEMENTS, t, where, 0);
        OT(MPI_Win_unlock(rank, w.win));
    }
    ot_win_free(&w);
    MPI_Info_free(&info);
}

/* counter: fetch-and-add 1 on one element of rank 0, `iters` * 8 times by
 * every rank; then compare-and-swap claims of nprocs * 4 slots. */
static void counter(enum ot_flavor f, const tinfo *t, const char *what)
{
    int n = iters * 8, total = n * nprocs, slots = nprocs * 4;
    unsigned char one[MAX_EXTENT], got[MAX_EXTENT], zero[MAX_EXTENT];
    long long *mine = calloc((size_t) n, sizeof *mine), *all = calloc((size_t) total, sizeof *all);
    ot_win w;
    window(&w, f, 1, MPI_INFO_NULL);
    OT(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w.win));
    memset(w.part[0], 0, w.part_size);
    for (int s = 0; s < slots; ++s) {
        set_elem(t, w.part[0] + (size_t) (1 + s) * (size_t) t->ext, -1, 0, 0, 0);
    }
    OT(MPI_Win_unlock(rank, w.win));
    OT(MPI_Barrier(MPI_COMM_WORLD));
    set_elem(t, one, 1, 0, 0, 0);
    OT(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w.win));
    for (int i = 0; i < n; ++i) {
        OT(MPI_Fetch_and_op(one, got, t->type, 0, ot_disp(&w, 0, 0, 0), MPI_SUM, w.win));
        OT(MPI_Win_flush(0, w.win));
        mine[i] = 0;
        memcpy(&mine[i], got, (size_t) t->vsize);
    }
    /* Claims: slot s goes to whoever swaps -1 for its rank first. */
    int *claimed = calloc((size_t) slots, sizeof *claimed), *owners = calloc((size_t) slots * nprocs, sizeof *owners);
    unsigned char free_mark[MAX_EXTENT], me[MAX_EXTENT];
    set_elem(t, free_mark, -1, 0, 0, 0);
    set_elem(t, me, rank, 0, 0, 0);
    for (int i = 0; i < slots; ++i) {
        int s = (i + rank * 3) % slots;
        MPI_Aint d = ot_disp(&w, 0, 0, (size_t) (1 + s) * (size_t) t->ext);
        OT(MPI_Compare_and_swap(me, free_mark, got, t->type, 0, d, w.win));
        OT(MPI_Win_flush(0, w.win));
        claimed[s] = 0 == memcmp(got, free_mark, (size_t) t->vsize);
    }
    OT(MPI_Win_unlock(0, w.win));
    OT(MPI_Allgather(mine, n, MPI_LONG_LONG, all, n, MPI_LONG_LONG, MPI_COMM_WORLD));
    OT(MPI_Allgather(claimed, slots, MPI_INT, owners, slots, MPI_INT, MPI_COMM_WORLD));
    if (0 == rank) {
        char *hit = calloc((size_t) total, 1);
        mt_maybe_corrupt(all, sizeof *all);
        for (int i = 0; i < total; ++i) {
            if (all[i] < 0 || all[i] >= total || hit[all[i]]++) {
                ot_fail("%s, counter: fetch-and-add gave %lld (twice, or outside 0..%d): an update was lost or "
                        "duplicated", what, all[i], total - 1);
            }
        }
        free(hit);
        OT(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w.win));
        set_elem(t, zero, total, 0, 0, 0);
        check_elems(w.part[0], zero, 1, t, what, 0);
        for (int s = 0; s < slots; ++s) {
            int count = 0, owner = -1;
            for (int r = 0; r < nprocs; ++r) {
                if (owners[r * slots + s]) {
                    ++count;
                    owner = r;
                }
            }
            set_elem(t, me, owner, 0, 0, 0);
            if (1 != count || !same_elem(t, me, w.part[0] + (size_t) (1 + s) * (size_t) t->ext)) {
                ot_fail("%s, compare_and_swap: slot %d claimed by %d ranks (the last %d), and holds another", what, s,
                        count, owner);
            }
        }
        OT(MPI_Win_unlock(0, w.win));
    }
    ot_win_free(&w);
    free(mine);
    free(all);
    free(claimed);
    free(owners);
}

int main(int argc, char **argv)
{
    ot_init(&argc, &argv, "accumulate");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    const char *phases = ot_arg(argc, argv, "-phases", NULL), *names = ot_arg(argc, argv, "-types", NULL);
    const char *ops = ot_arg(argc, argv, "-ops", NULL), *flavors = ot_arg(argc, argv, "-flavor", "allocate");
    iters = atoi(ot_arg(argc, argv, "-iters", "6"));
    int checks = 0, combo = 0;
    char what[200];
    for (int f = 0; f < OT_FLAVORS; ++f) {
        if (!ot_listed(flavors, ot_flavor_names[f])) {
            continue;
        }
        ot_win w;
        window(&w, (enum ot_flavor) f, nprocs, MPI_INFO_NULL);
        for (int ti = 0; ti < NTYPES; ++ti) {
            const tinfo *t = &types[ti];
            int size = 0;
            if (!ot_listed(names, t->name)) {
                continue;
            }
            MPI_Type_size(t->type, &size);
            if (0 == size && t->fortran) {
                continue; /* Open MPI built without Fortran */
            }
            for (int op = 0; op < NOPS; ++op) {
                if (!applies((enum opcode) op, t) || !ot_listed(ops, op_names[op])) {
                    continue;
                }
                snprintf(what, sizeof what, "%s on %s, %s window", op_names[op], t->name, ot_flavor_names[f]);
                ot_where = what;
                int target = combo++ % nprocs;
                if (ot_listed(phases, "serial")) {
                    serial(&w, t, (enum opcode) op, target, what);
                    ++checks;
                }
                if (ot_listed(phases, "concurrent")) {
                    concurrent(&w, t, (enum opcode) op, target, what);
                    ++checks;
                }
            }
            snprintf(what, sizeof what, "%s, %s window", t->name, ot_flavor_names[f]);
            ot_where = what;
            int numeric = applies(SUM, t);
            if (numeric && ot_listed(phases, "ordering") && ot_listed(ops, "sum")) {
                ordering((enum ot_flavor) f, t, 1, 0, what);
                ordering((enum ot_flavor) f, t, 1, 1, what);
                ordering((enum ot_flavor) f, t, 0, 0, what);
                checks += 3;
            }
            if (numeric && ot_listed(phases, "same_op") && ot_listed(ops, "sum")) {
                same_op((enum ot_flavor) f, t, "same_op", what);
                same_op((enum ot_flavor) f, t, "same_op_no_op", what);
                checks += 2;
            }
            if ((K_INT == t->kind || K_UINT == t->kind) && t->vsize >= 2 && ot_listed(phases, "counter") &&
                ot_listed(ops, "sum")) {
                counter((enum ot_flavor) f, t, what);
                ++checks;
            }
        }
        ot_win_free(&w);
    }
    if (0 == rank) {
        printf("accumulate: %d checks on %d ranks, %d updates each\n", checks, nprocs, iters);
    }
    if (0 == checks) {
        ot_fail("no check selected");
    }
    mt_pass("accumulate");
    MPI_Finalize();
    return 0;
}
