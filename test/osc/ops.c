/* Every RMA operation under every synchronization mode, on windows of every
 * flavor, from 1 byte to several MiB.  Each rank is the origin of its right
 * neighbour and of itself (-targets ring) or of every rank (-targets all),
 * in its own part of each target's window.  Before each round the target
 * fills its parts with one pattern and the origin its buffers with another;
 * after it every byte of every part and of every result buffer is checked,
 * and buffers an operation has completed locally (request-based operations
 * after MPI_Wait, anything after MPI_Win_flush_local) are overwritten at
 * once, so a late read of them shows as wrong data at the target.
 *
 *   ops [-ops put,get,acc,gacc,fop,cas,rput,rget,racc,rgacc]
 *       [-sync fence,fence_assert,pscw,pscw_test,pscw_nocheck,lock_excl,lock_shared,
 *              lock_all,flush,flush_all,flush_local,flush_local_all,win_sync]
 *       [-flavor create,allocate,dynamic] [-sizes 1,7,64K,4M] [-targets ring|all] [-v 1]
 *
 * Accumulates add unsigned chars (MPI_SUM); fetch_and_op and
 * compare_and_swap work on up to 16 elements, 64-bit where the size allows.
 * Request-based operations need a passive epoch: the active modes skip them. */
#include "osctest.h"

enum op { PUT, GET, ACC, GACC, FOP, CAS, RPUT, RGET, RACC, RGACC, OPS };
static const char *const op_names[OPS] = {"put", "get", "acc", "gacc", "fop", "cas", "rput", "rget", "racc", "rgacc"};

enum sync {
    FENCE, FENCE_ASSERT, PSCW, PSCW_TEST, PSCW_NOCHECK, LOCK_EXCL, LOCK_SHARED, LOCK_ALL,
    FLUSH, FLUSH_ALL, FLUSH_LOCAL, FLUSH_LOCAL_ALL, WIN_SYNC, SYNCS
};
static const char *const sync_names[SYNCS] = {
    "fence", "fence_assert", "pscw", "pscw_test", "pscw_nocheck", "lock_excl", "lock_shared", "lock_all",
    "flush", "flush_all", "flush_local", "flush_local_all", "win_sync"};

#define MAX_ELEMENTS 16
#define NOTIFY_TAG 77

static int rank, nprocs, all_targets;
static int ntargets, norigins, *targets, *origins;
static MPI_Group target_group, origin_group;
static int fence_open; /* the last fence may have started an epoch */

/* The part of a target's window that `origin` works on. */
static int part_of(int origin, int target)
{
    return all_targets ? origin : origin == target;
}

static int is_requested(enum op op) { return op >= RPUT; }
static int is_active(enum sync s) { return s <= PSCW_NOCHECK; }
static enum op plain(enum op op) { return is_requested(op) ? op - RPUT : op; }

typedef struct {
    enum op op;
    enum sync sync;
    ot_win *w;
    size_t size, elsize, elements;
    int seq;
    MPI_Datatype eltype;
    char what[200];
    unsigned char **src, **res, **cmp, *want;
    MPI_Request *req;
    int *nreq;
} round_t;

static unsigned char init_byte(const round_t *r, int target, int origin, size_t i)
{
    return mt_byte(target, origin, 2 * r->seq, i);
}

static unsigned char data_byte(const round_t *r, int origin, int target, size_t i)
{
    return mt_byte(origin, target, 2 * r->seq + 1, i);
}

/* Element e of a pattern, as the operations see it. */
static uint64_t element(const round_t *r, int is_init, int a, int b, size_t e)
{
    uint64_t v = 0;
    unsigned char bytes[8];
    for (size_t i = 0; i < r->elsize; ++i) {
        size_t at = e * r->elsize + i;
        bytes[i] = is_init ? init_byte(r, a, b, at) : data_byte(r, a, b, at);
    }
    memcpy(&v, bytes, r->elsize);
    return v;
}

static void put_element(const round_t *r, unsigned char *buf, size_t e, uint64_t v)
{
    memcpy(buf + e * r->elsize, &v, r->elsize);
}

/* What `origin`'s part of `target`'s window holds after the round. */
static void expect_part(const round_t *r, int target, int origin, unsigned char *out)
{
    for (size_t i = 0; i < r->size; ++i) {
        unsigned char init = init_byte(r, target, origin, i), data = data_byte(r, origin, target, i);
        switch (plain(r->op)) {
        case PUT: out[i] = data; break;
        case ACC:
        case GACC: out[i] = (unsigned char) (init + data); break;
        default: out[i] = init; break;
        }
    }
    for (size_t e = 0; e < r->elements; ++e) {
        uint64_t init = element(r, 1, target, origin, e), data = element(r, 0, origin, target, e);
        if (FOP == r->op) {
            put_element(r, out, e, init + data);
        } else if (CAS == r->op && 0 == e % 2) { /* even elements compare equal: swapped */
            put_element(r, out, e, data);
        }
    }
}

/* The bytes of the origin's result buffer a round fills: 0 if none. */
static size_t result_bytes(const round_t *r)
{
    switch (plain(r->op)) {
    case GET:
    case GACC: return r->size;
    case FOP:
    case CAS: return r->elements * r->elsize;
    default: return 0;
    }
}

static void check_results(round_t *r, int k)
{
    size_t n = result_bytes(r);
    for (size_t i = 0; i < n; ++i) {
        r->want[i] = init_byte(r, targets[k], rank, i);
    }
    if (n > 0) {
        ot_check(r->res[k], r->want, n, "%s: result from target %d", r->what, targets[k]);
    }
}

/* Buffers the operations towards target k no longer read. */
static void scribble(round_t *r, int k)
{
    memset(r->src[k], 0xa5, r->size);
    memset(r->cmp[k], 0xa5, r->elements * r->elsize);
}

static void check_parts(round_t *r)
{
    for (int j = 0; j < norigins; ++j) {
        expect_part(r, rank, origins[j], r->want);
        ot_check(r->w->part[part_of(origins[j], rank)], r->want, r->size, "%s: part of origin %d at target %d",
                 r->what, origins[j], rank);
    }
}

static void fill_parts(round_t *r)
{
    for (int j = 0; j < norigins; ++j) {
        unsigned char *p = r->w->part[part_of(origins[j], rank)];
        for (size_t i = 0; i < r->size; ++i) {
            p[i] = init_byte(r, rank, origins[j], i);
        }
    }
}

static void fill_buffers(round_t *r)
{
    for (int k = 0; k < ntargets; ++k) {
        for (size_t i = 0; i < r->size; ++i) {
            r->src[k][i] = data_byte(r, rank, targets[k], i);
        }
        memset(r->res[k], 0xee, r->size);
        for (size_t e = 0; e < r->elements; ++e) { /* odd elements compare unequal: kept */
            uint64_t init = element(r, 1, targets[k], rank, e);
            put_element(r, r->cmp[k], e, e % 2 ? ~init : init);
        }
    }
}

/* The operations of the round towards targets[k]: transfers in three
 * pieces (or one, under 3 bytes), element operations one by one. */
static void issue(round_t *r, int k)
{
    int t = targets[k];
    MPI_Win win = r->w->win;
    MPI_Aint base = ot_disp(r->w, t, part_of(rank, t), 0);
    unsigned char *src = r->src[k], *res = r->res[k];
    size_t cuts[4] = {0, r->size / 3, 2 * r->size / 3, r->size};
    int pieces = r->size >= 3 ? 3 : 1;
    if (1 == pieces) {
        cuts[1] = r->size;
    }
    r->nreq[k] = 0;
    for (int p = 0; p < pieces && plain(r->op) != FOP && plain(r->op) != CAS; ++p) {
        size_t a = cuts[p];
        int n = (int) (cuts[p + 1] - a);
        MPI_Aint d = base + (MPI_Aint) a;
        MPI_Request *q = &r->req[k * 3 + r->nreq[k]];
        switch (r->op) {
        case PUT: OT(MPI_Put(src + a, n, MPI_BYTE, t, d, n, MPI_BYTE, win)); break;
        case GET: OT(MPI_Get(res + a, n, MPI_BYTE, t, d, n, MPI_BYTE, win)); break;
        case ACC: OT(MPI_Accumulate(src + a, n, MPI_UNSIGNED_CHAR, t, d, n, MPI_UNSIGNED_CHAR, MPI_SUM, win)); break;
        case GACC:
            OT(MPI_Get_accumulate(src + a, n, MPI_UNSIGNED_CHAR, res + a, n, MPI_UNSIGNED_CHAR, t, d, n,
                                  MPI_UNSIGNED_CHAR, MPI_SUM, win));
            break;
        case RPUT: OT(MPI_Rput(src + a, n, MPI_BYTE, t, d, n, MPI_BYTE, win, q)); break;
        case RGET: OT(MPI_Rget(res + a, n, MPI_BYTE, t, d, n, MPI_BYTE, win, q)); break;
        case RACC:
            OT(MPI_Raccumulate(src + a, n, MPI_UNSIGNED_CHAR, t, d, n, MPI_UNSIGNED_CHAR, MPI_SUM, win, q));
            break;
        case RGACC:
            OT(MPI_Rget_accumulate(src + a, n, MPI_UNSIGNED_CHAR, res + a, n, MPI_UNSIGNED_CHAR, t, d, n,
                                   MPI_UNSIGNED_CHAR, MPI_SUM, win, q));
            break;
        default: break;
        }
        r->nreq[k] += is_requested(r->op);
    }
    for (size_t e = 0; e < r->elements; ++e) {
        size_t at = e * r->elsize;
        if (FOP == r->op) {
            OT(MPI_Fetch_and_op(src + at, res + at, r->eltype, t, base + (MPI_Aint) at, MPI_SUM, win));
        } else if (CAS == r->op) {
            OT(MPI_Compare_and_swap(src + at, r->cmp[k] + at, res + at, r->eltype, t, base + (MPI_Aint) at, win));
        }
    }
}

static void issue_all(round_t *r)
{
    for (int k = 0; k < ntargets; ++k) {
        issue(r, k);
    }
}

/* Request-based operations towards targets[k] are done locally: results
 * are there, and the origin buffers are free again. */
static void wait_requests(round_t *r, int k)
{
    if (is_requested(r->op)) {
        OT(MPI_Waitall(r->nreq[k], &r->req[k * 3], MPI_STATUSES_IGNORE));
        check_results(r, k);
        scribble(r, k);
    }
}

static void local_done(round_t *r, int k)
{
    check_results(r, k);
    scribble(r, k);
}

/* Every origin tells its targets that its operations are complete there. */
static void notify(void)
{
    int token = rank, got[nprocs];
    MPI_Request q[2 * nprocs];
    for (int j = 0; j < norigins; ++j) {
        OT(MPI_Irecv(&got[j], 1, MPI_INT, origins[j], NOTIFY_TAG, MPI_COMM_WORLD, &q[j]));
    }
    for (int k = 0; k < ntargets; ++k) {
        OT(MPI_Isend(&token, 1, MPI_INT, targets[k], NOTIFY_TAG, MPI_COMM_WORLD, &q[norigins + k]));
    }
    OT(MPI_Waitall(norigins + ntargets, q, MPI_STATUSES_IGNORE));
}

/* Flushed and notified: the target sees the data after MPI_Win_sync, still
 * inside its own lock_all epoch. */
static void check_in_epoch(round_t *r)
{
    notify();
    OT(MPI_Win_sync(r->w->win));
    check_parts(r);
    OT(MPI_Barrier(MPI_COMM_WORLD));
    OT(MPI_Win_unlock_all(r->w->win));
}

static void close_fence(MPI_Win win)
{
    if (fence_open) {
        OT(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
        fence_open = 0;
    }
}

static void run_round(round_t *r)
{
    MPI_Win win = r->w->win;
    int checked = 0, nocheck = PSCW_NOCHECK == r->sync ? MPI_MODE_NOCHECK : 0;
    if (!is_active(r->sync)) {
        close_fence(win);
    }
    fill_buffers(r);
    if (is_active(r->sync)) {
        fill_parts(r);
    } else if (WIN_SYNC == r->sync) {
        OT(MPI_Win_lock_all(0, win));
        fill_parts(r);
        OT(MPI_Win_sync(win));
        OT(MPI_Barrier(MPI_COMM_WORLD));
    } else {
        OT(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
        fill_parts(r);
        OT(MPI_Win_unlock(rank, win));
        OT(MPI_Barrier(MPI_COMM_WORLD));
    }
    switch (r->sync) {
    case FENCE:
        OT(MPI_Win_fence(0, win));
        issue_all(r);
        OT(MPI_Win_fence(0, win));
        fence_open = 1;
        break;
    case FENCE_ASSERT:
        OT(MPI_Win_fence(MPI_MODE_NOPRECEDE | (GET == r->op ? MPI_MODE_NOPUT : 0), win));
        issue_all(r);
        OT(MPI_Win_fence(MPI_MODE_NOSTORE | MPI_MODE_NOSUCCEED, win));
        fence_open = 0;
        break;
    case PSCW:
    case PSCW_TEST:
    case PSCW_NOCHECK:
        OT(MPI_Win_post(origin_group, nocheck, win));
        if (nocheck) {
            OT(MPI_Barrier(MPI_COMM_WORLD)); /* every post precedes every start */
        }
        OT(MPI_Win_start(target_group, nocheck, win));
        issue_all(r);
        OT(MPI_Win_complete(win));
        if (PSCW_TEST == r->sync) {
            for (int done = 0; !done;) {
                OT(MPI_Win_test(win, &done));
            }
        } else {
            OT(MPI_Win_wait(win));
        }
        break;
    case LOCK_EXCL:
    case LOCK_SHARED:
        for (int k = 0; k < ntargets; ++k) {
            OT(MPI_Win_lock(LOCK_EXCL == r->sync ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, targets[k], 0, win));
            issue(r, k);
            wait_requests(r, k);
            OT(MPI_Win_unlock(targets[k], win));
        }
        break;
    case LOCK_ALL:
        OT(MPI_Win_lock_all(0, win));
        issue_all(r);
        for (int k = 0; k < ntargets; ++k) {
            wait_requests(r, k);
        }
        OT(MPI_Win_unlock_all(win));
        break;
    case FLUSH:
        OT(MPI_Win_lock_all(0, win));
        for (int k = 0; k < ntargets; ++k) {
            issue(r, k);
            wait_requests(r, k);
            OT(MPI_Win_flush(targets[k], win));
            check_results(r, k);
        }
        check_in_epoch(r);
        checked = 1;
        break;
    case FLUSH_ALL:
    case WIN_SYNC:
        if (FLUSH_ALL == r->sync) {
            OT(MPI_Win_lock_all(0, win));
        }
        issue_all(r);
        for (int k = 0; k < ntargets; ++k) {
            wait_requests(r, k);
        }
        OT(MPI_Win_flush_all(win));
        for (int k = 0; k < ntargets; ++k) {
            check_results(r, k);
        }
        check_in_epoch(r);
        checked = 1;
        break;
    case FLUSH_LOCAL:
        for (int k = 0; k < ntargets; ++k) {
            OT(MPI_Win_lock(MPI_LOCK_SHARED, targets[k], 0, win));
            issue(r, k);
            OT(MPI_Win_flush_local(targets[k], win));
            wait_requests(r, k);
            local_done(r, k);
            OT(MPI_Win_unlock(targets[k], win));
        }
        break;
    case FLUSH_LOCAL_ALL:
        OT(MPI_Win_lock_all(0, win));
        issue_all(r);
        OT(MPI_Win_flush_local_all(win));
        for (int k = 0; k < ntargets; ++k) {
            wait_requests(r, k);
            local_done(r, k);
        }
        OT(MPI_Win_unlock_all(win));
        break;
    default: break;
    }
    for (int k = 0; k < ntargets; ++k) {
        check_results(r, k);
    }
    if (!checked && is_active(r->sync)) {
        check_parts(r);
    } else if (!checked) {
        OT(MPI_Barrier(MPI_COMM_WORLD));
        OT(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
        check_parts(r);
        OT(MPI_Win_unlock(rank, win));
    }
    OT(MPI_Barrier(MPI_COMM_WORLD));
}

static void set_peers(void)
{
    MPI_Group world;
    targets = calloc((size_t) nprocs, sizeof *targets);
    origins = calloc((size_t) nprocs, sizeof *origins);
    if (all_targets) {
        for (int i = 0; i < nprocs; ++i) {
            targets[ntargets++] = i;
            origins[norigins++] = i;
        }
    } else {
        targets[ntargets++] = rank;
        origins[norigins++] = rank;
        if (nprocs > 1) {
            targets[ntargets++] = (rank + 1) % nprocs;
            origins[norigins++] = (rank + nprocs - 1) % nprocs;
        }
    }
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, ntargets, targets, &target_group);
    MPI_Group_incl(world, norigins, origins, &origin_group);
    MPI_Group_free(&world);
}

int main(int argc, char **argv)
{
    ot_init(&argc, &argv, "ops");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    const char *ops = ot_arg(argc, argv, "-ops", NULL), *syncs = ot_arg(argc, argv, "-sync", NULL);
    const char *flavors = ot_arg(argc, argv, "-flavor", NULL);
    size_t sizes[64];
    int nsizes = ot_sizes(ot_arg(argc, argv, "-sizes", "1,7,64,1000,65536,1048579,4M"), sizes, 64);
    all_targets = 0 == strcmp(ot_arg(argc, argv, "-targets", "ring"), "all");
    set_peers();
    int verbose = NULL != ot_arg(argc, argv, "-v", NULL);
    int seq = 0, rounds = 0;
    for (int f = 0; f < OT_FLAVORS; ++f) {
        if (!ot_listed(flavors, ot_flavor_names[f])) {
            continue;
        }
        for (int z = 0; z < nsizes; ++z) {
            size_t size = sizes[z];
            ot_win w;
            ot_win_new(&w, (enum ot_flavor) f, MPI_COMM_WORLD, all_targets ? nprocs : 2, size, 1, MPI_INFO_NULL);
            round_t r = {.w = &w, .size = size, .elsize = size % 8 ? 1 : 8};
            r.eltype = 8 == r.elsize ? MPI_UINT64_T : MPI_UINT8_T;
            r.elements = size / r.elsize < MAX_ELEMENTS ? size / r.elsize : MAX_ELEMENTS;
            r.src = calloc((size_t) ntargets, sizeof *r.src);
            r.res = calloc((size_t) ntargets, sizeof *r.res);
            r.cmp = calloc((size_t) ntargets, sizeof *r.cmp);
            r.req = calloc((size_t) ntargets * 3, sizeof *r.req);
            r.nreq = calloc((size_t) ntargets, sizeof *r.nreq);
            r.want = mt_alloc(size);
            for (int k = 0; k < ntargets; ++k) {
                r.src[k] = mt_alloc(size);
                r.res[k] = mt_alloc(size);
                r.cmp[k] = mt_alloc(MAX_ELEMENTS * 8);
            }
            for (int o = 0; o < OPS; ++o) {
                for (int y = 0; y < SYNCS; ++y) {
                    if (!ot_listed(ops, op_names[o]) || !ot_listed(syncs, sync_names[y]) ||
                        (is_requested((enum op) o) && is_active((enum sync) y)) ||
                        ((FOP == o || CAS == o) && 0 == r.elements)) {
                        continue;
                    }
                    r.op = (enum op) o;
                    r.sync = (enum sync) y;
                    r.seq = ++seq;
                    snprintf(r.what, sizeof r.what, "%s under %s, %s window, %zu bytes", op_names[o], sync_names[y],
                             ot_flavor_names[f], size);
                    if (verbose && 0 == rank) {
                        printf("ops: %s\n", r.what);
                        fflush(stdout);
                    }
                    run_round(&r);
                    ++rounds;
                }
            }
            close_fence(w.win);
            for (int k = 0; k < ntargets; ++k) {
                free(r.src[k]);
                free(r.res[k]);
                free(r.cmp[k]);
            }
            free(r.src);
            free(r.res);
            free(r.cmp);
            free(r.req);
            free(r.nreq);
            free(r.want);
            ot_win_free(&w);
        }
    }
    if (0 == rank) {
        printf("ops: %d rounds on %d ranks (%s targets)\n", rounds, nprocs, all_targets ? "all" : "ring");
    }
    if (0 == rounds) {
        ot_fail("no round selected");
    }
    mt_pass("ops");
    MPI_Finalize();
    return 0;
}
