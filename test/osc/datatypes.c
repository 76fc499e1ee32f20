/* Contiguous and derived datatypes at origin and target: every pair of
 * layouts of the same type signature (N unsigned ints: a count of
 * MPI_UNSIGNED, contiguous, shifted (contiguous from byte 8), vector,
 * indexed, indexed_block, struct, subarray, resized; N/4 mixed
 * {char, double, int, short} structs: packed
 * as C lays them out, or spread with other gaps) for put, get, accumulate
 * (MPI_SUM) and get_accumulate (not on the mixed structs: accumulate wants
 * one basic type).  Each rank is the origin of its right neighbour, whose
 * window has disp_unit 4 where the flavor allows it.  Where a type puts a
 * byte is learnt from MPI_Pack; every byte of the target's region and of the
 * origin's buffer is checked, gaps included (they must stay untouched).
 *
 *   datatypes [-ops put,get,acc,gacc] [-sync fence,lock] [-flavor create,allocate,dynamic]
 *             [-elements 24,98304] [-layouts unsigned,contiguous,...]
 */
#include "osctest.h"

typedef struct {
    const char *name;
    MPI_Datatype type;
    int count, mixed;
    size_t span;   /* bytes from the buffer's start to the last byte's end */
    size_t nbytes; /* bytes the type map moves */
    size_t *off;   /* off[j]: where the j-th packed byte lives */
} layout;

enum op { PUT, GET, ACC, GACC, OPS };
static const char *const op_names[OPS] = {"put", "get", "acc", "gacc"};
static int rank, nprocs;

/* Where each byte of (type, count) lives: four passes of MPI_Pack over a
 * buffer whose bytes hold one byte of their own offset each. */
static void learn_offsets(layout *l)
{
    MPI_Aint lb, extent, tlb, textent;
    int packed = 0;
    MPI_Type_get_extent(l->type, &lb, &extent);
    MPI_Type_get_true_extent(l->type, &tlb, &textent);
    l->span = (size_t) (tlb + textent + (l->count - 1) * extent);
    MPI_Pack_size(l->count, l->type, MPI_COMM_WORLD, &packed);
    unsigned char *probe = mt_alloc(l->span), *out = mt_alloc((size_t) packed);
    int size;
    MPI_Type_size(l->type, &size);
    l->nbytes = (size_t) size * (size_t) l->count;
    l->off = calloc(l->nbytes, sizeof *l->off);
    for (int pass = 0; pass < 4; ++pass) {
        int pos = 0;
        for (size_t i = 0; i < l->span; ++i) {
            probe[i] = (unsigned char) (i >> (8 * pass));
        }
        OT(MPI_Pack(probe, l->count, l->type, out, packed, &pos, MPI_COMM_WORLD));
        for (size_t j = 0; j < l->nbytes; ++j) {
            l->off[j] |= (size_t) out[j] << (8 * pass);
        }
    }
    free(probe);
    free(out);
}

static layout make(const char *name, MPI_Datatype type, int count, int mixed)
{
    layout l = {.name = name, .type = type, .count = count, .mixed = mixed};
    if (MPI_UNSIGNED != type) {
        OT(MPI_Type_commit(&l.type));
    }
    learn_offsets(&l);
    return l;
}

/* The layouts of n unsigned ints (n a multiple of 24) and of n / 4 mixed structs. */
static int make_layouts(int n, layout *l)
{
    int k = 0, nb = 0, pos = 0, *blocks = calloc((size_t) n, sizeof(int)), *displs = calloc((size_t) n, sizeof(int));
    MPI_Datatype t, parts[4] = {MPI_CHAR, MPI_DOUBLE, MPI_INT, MPI_SHORT};
    l[k++] = make("unsigned", MPI_UNSIGNED, n, 0);
    MPI_Type_contiguous(n, MPI_UNSIGNED, &t);
    l[k++] = make("contiguous", t, 1, 0);
    {
        int len = n;
        MPI_Aint at = 8;
        MPI_Type_create_hindexed(1, &len, &at, MPI_UNSIGNED, &t); /* contiguous, its first byte at 8 */
        l[k++] = make("shifted", t, 1, 0);
    }
    MPI_Type_vector(n / 2, 2, 5, MPI_UNSIGNED, &t);
    l[k++] = make("vector", t, 1, 0);
    for (int placed = 0; placed < n; ++nb) { /* blocks of 1..4 with holes of 1..3 */
        blocks[nb] = 1 + nb % 4 < n - placed ? 1 + nb % 4 : n - placed;
        displs[nb] = pos;
        placed += blocks[nb];
        pos += blocks[nb] + 1 + nb % 3;
    }
    MPI_Type_indexed(nb, blocks, displs, MPI_UNSIGNED, &t);
    l[k++] = make("indexed", t, 1, 0);
    for (int b = 0; b < n / 3; ++b) {
        displs[b] = 5 * b + b % 2;
    }
    MPI_Type_create_indexed_block(n / 3, 3, displs, MPI_UNSIGNED, &t);
    l[k++] = make("indexed_block", t, 1, 0);
    {
        int lens[2] = {2, 1};
        MPI_Aint at[2] = {0, 16};
        MPI_Datatype types[2] = {MPI_UNSIGNED, MPI_UNSIGNED}, s;
        MPI_Type_create_struct(2, lens, at, types, &s);
        MPI_Type_create_resized(s, 0, 28, &t);
        MPI_Type_free(&s);
        l[k++] = make("struct", t, n / 3, 0);
    }
    {
        int sizes[3] = {n / 8 + 2, 4, 5}, sub[3] = {n / 8, 2, 4}, starts[3] = {1, 1, 1};
        MPI_Type_create_subarray(3, sizes, sub, starts, MPI_ORDER_C, MPI_UNSIGNED, &t);
        l[k++] = make("subarray", t, 1, 0);
    }
    MPI_Type_create_resized(MPI_UNSIGNED, 0, 12, &t);
    l[k++] = make("resized", t, n, 0);
    {
        struct mixed { char c; double d; int i; short s; };
        int lens[4] = {1, 1, 1, 1};
        MPI_Aint native[4] = {offsetof(struct mixed, c), offsetof(struct mixed, d), offsetof(struct mixed, i),
                              offsetof(struct mixed, s)};
        MPI_Aint spread[4] = {3, 16, 28, 34};
        MPI_Datatype s;
        MPI_Type_create_struct(4, lens, native, parts, &s);
        MPI_Type_create_resized(s, 0, sizeof(struct mixed), &t);
        MPI_Type_free(&s);
        l[k++] = make("struct_mixed", t, n / 4, 1);
        MPI_Type_create_struct(4, lens, spread, parts, &s);
        MPI_Type_create_resized(s, 0, 40, &t);
        MPI_Type_free(&s);
        l[k++] = make("struct_spread", t, n / 4, 1);
    }
    free(blocks);
    free(displs);
    return k;
}

static void fill(unsigned char *buf, size_t n, int a, int b, int seq)
{
    for (size_t i = 0; i < n; ++i) {
        buf[i] = mt_byte(a, b, seq, i);
    }
}

static unsigned element(const unsigned char *buf, size_t at)
{
    unsigned v;
    memcpy(&v, buf + at, sizeof v);
    return v;
}

/* One round: origin layout o, target layout t.  The target's region starts
 * as pattern 2*seq (from the target), the origin's buffers as 2*seq+1. */
static void run_round(enum op op, int lock, ot_win *w, const layout *o, const layout *t, int seq,
                      const char *flavor, int n)
{
    int right = (rank + 1) % nprocs, left = (rank + nprocs - 1) % nprocs;
    size_t region = w->part_size;
    unsigned char *src = mt_alloc(o->span), *res = mt_alloc(o->span), *want = mt_alloc(region);
    unsigned char *mine = w->part[0], *before = mt_alloc(region);
    char what[200];
    snprintf(what, sizeof what, "%s from %s to %s (%d elements) under %s, %s window", op_names[op], o->name,
             t->name, n, lock ? "lock" : "fence", flavor);
    fill(src, o->span, rank, right, 2 * seq + 1);
    fill(res, o->span, right, rank, 2 * seq + 1);
    fill(before, region, left, rank, 2 * seq); /* what my region holds for my left neighbour */
    if (lock) {
        OT(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w->win));
        memcpy(mine, before, region);
        OT(MPI_Win_unlock(rank, w->win));
        OT(MPI_Barrier(MPI_COMM_WORLD));
        OT(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, w->win));
    } else {
        memcpy(mine, before, region);
        OT(MPI_Win_fence(0, w->win));
    }
    MPI_Aint disp = ot_disp(w, right, 0, 0);
    switch (op) {
    case PUT: OT(MPI_Put(src, o->count, o->type, right, disp, t->count, t->type, w->win)); break;
    case GET: OT(MPI_Get(res, o->count, o->type, right, disp, t->count, t->type, w->win)); break;
    case ACC: OT(MPI_Accumulate(src, o->count, o->type, right, disp, t->count, t->type, MPI_SUM, w->win)); break;
    case GACC:
        OT(MPI_Get_accumulate(src, o->count, o->type, res, o->count, o->type, right, disp, t->count, t->type,
                              MPI_SUM, w->win));
        break;
    default: break;
    }
    if (lock) {
        OT(MPI_Win_unlock(right, w->win));
        OT(MPI_Barrier(MPI_COMM_WORLD));
        OT(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w->win));
    } else {
        OT(MPI_Win_fence(0, w->win));
    }
    /* My region, written by my left neighbour with its layout pair (the same as mine). */
    memcpy(want, before, region);
    unsigned char *theirs = mt_alloc(o->span);
    fill(theirs, o->span, left, rank, 2 * seq + 1);
    for (size_t j = 0; j < t->nbytes; ++j) {
        if (PUT == op) {
            want[t->off[j]] = theirs[o->off[j]];
        }
    }
    for (size_t j = 0; (ACC == op || GACC == op) && j < t->nbytes; j += sizeof(unsigned)) {
        unsigned sum = element(before, t->off[j]) + element(theirs, o->off[j]);
        memcpy(want + t->off[j], &sum, sizeof sum);
    }
    ot_check(mine, want, region, "%s: target region", what);
    if (lock) {
        OT(MPI_Win_unlock(rank, w->win));
    }
    /* My result buffer: the right neighbour's region as it was. */
    if (GET == op || GACC == op) {
        unsigned char *target = mt_alloc(region);
        fill(target, region, rank, right, 2 * seq);
        fill(want, o->span, right, rank, 2 * seq + 1);
        for (size_t j = 0; j < t->nbytes; ++j) {
            want[o->off[j]] = target[t->off[j]];
        }
        ot_check(res, want, o->span, "%s: origin buffer", what);
        free(target);
    }
    OT(MPI_Barrier(MPI_COMM_WORLD));
    free(theirs);
    free(src);
    free(res);
    free(want);
    free(before);
}

int main(int argc, char **argv)
{
    ot_init(&argc, &argv, "datatypes");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    const char *ops = ot_arg(argc, argv, "-ops", NULL), *syncs = ot_arg(argc, argv, "-sync", NULL);
    const char *flavors = ot_arg(argc, argv, "-flavor", NULL), *names = ot_arg(argc, argv, "-layouts", NULL);
    size_t counts[8];
    int ncounts = ot_sizes(ot_arg(argc, argv, "-elements", "24,98304"), counts, 8), rounds = 0, seq = 0;
    for (int c = 0; c < ncounts; ++c) {
        int n = (int) counts[c];
        layout l[16];
        size_t region = 0;
        if (n < 24 || n % 24) {
            ot_fail("-elements wants multiples of 24, not %d", n);
        }
        int nl = make_layouts(n, l);
        for (int i = 0; i < nl; ++i) {
            region = l[i].span > region ? l[i].span : region;
        }
        region = (region + 7) & ~(size_t) 7;
        for (int f = 0; f < OT_FLAVORS; ++f) {
            if (!ot_listed(flavors, ot_flavor_names[f])) {
                continue;
            }
            ot_win w;
            ot_win_new(&w, (enum ot_flavor) f, MPI_COMM_WORLD, 1, region, 4, MPI_INFO_NULL);
            for (int lock = 0; lock < 2; ++lock) {
                if (!ot_listed(syncs, lock ? "lock" : "fence")) {
                    continue;
                }
                for (int op = 0; op < OPS; ++op) {
                    for (int i = 0; i < nl && ot_listed(ops, op_names[op]); ++i) {
                        for (int j = 0; j < nl; ++j) {
                            if (l[i].mixed != l[j].mixed || (l[i].mixed && op >= ACC) ||
                                !ot_listed(names, l[i].name) || !ot_listed(names, l[j].name)) {
                                continue;
                            }
                            run_round((enum op) op, lock, &w, &l[i], &l[j], ++seq, ot_flavor_names[f], n);
                            ++rounds;
                        }
                    }
                }
                if (!lock) { /* no fence epoch runs into the lock epochs */
                    OT(MPI_Win_fence(MPI_MODE_NOSUCCEED, w.win));
                }
            }
            ot_win_free(&w);
        }
        for (int i = 0; i < nl; ++i) {
            if (MPI_UNSIGNED != l[i].type) {
                MPI_Type_free(&l[i].type);
            }
            free(l[i].off);
        }
    }
    if (0 == rank) {
        printf("datatypes: %d rounds on %d ranks\n", rounds, nprocs);
    }
    if (0 == rounds) {
        ot_fail("no round selected");
    }
    mt_pass("datatypes");
    MPI_Finalize();
    return 0;
}
