/* Many windows at once: windows over MPI_COMM_WORLD, a dup of it, a split
 * in halves, a split in reverse rank order and MPI_COMM_SELF, of every
 * flavor and of different sizes, all open together: first in passive epochs
 * on every window at once, then in fence epochs on some and PSCW epochs on
 * the others, interleaved; then windows created, used and freed in a loop
 * (hundreds) while those stay open; then windows of zero bytes on the odd
 * ranks (and on every rank).  Ranks are ranks of each window's
 * communicator, so a wrong translation puts bytes into the wrong process.
 *
 *   windows [-flavor create,allocate,dynamic] [-loop 300]
 */
#include "osctest.h"

enum { COMMS = 5 };

typedef struct {
    ot_win w;
    int id, rank, size;
    size_t half;
} win_t;

static int world_rank, world_size;

/* Byte i that origin (world rank) puts into target's window `id`, round r. */
static unsigned char put_byte(int id, int r, int origin, int target, size_t i)
{
    return mt_byte(origin, target, 40 * r + id, i);
}

/* Byte i of the second half of `owner`'s window `id`, which gets read. */
static unsigned char own_byte(int id, int r, int owner, size_t i)
{
    return mt_byte(owner, 99, 40 * r + 20 + id, i);
}

static int world_of(const win_t *x, int comm_rank)
{
    MPI_Group g, world;
    int out;
    MPI_Win_get_group(x->w.win, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_translate_ranks(g, 1, &comm_rank, world, &out);
    MPI_Group_free(&g);
    MPI_Group_free(&world);
    return out;
}

/* Under the owner's own lock: first half zero, second half its pattern. */
static void fill(win_t *x, int r)
{
    OT(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, x->rank, 0, x->w.win));
    memset(x->w.part[0], 0, x->half);
    for (size_t i = 0; i < x->half; ++i) {
        x->w.part[0][x->half + i] = own_byte(x->id, r, world_rank, i);
    }
    OT(MPI_Win_unlock(x->rank, x->w.win));
}

/* Each rank puts the first half of its right neighbour's window and gets
 * the second half of its left neighbour's. */
static void issue(win_t *x, int r, unsigned char *out, unsigned char *in)
{
    int right = (x->rank + 1) % x->size, left = (x->rank + x->size - 1) % x->size;
    int wr = world_of(x, right);
    for (size_t i = 0; i < x->half; ++i) {
        out[i] = put_byte(x->id, r, world_rank, wr, i);
    }
    OT(MPI_Put(out, (int) x->half, MPI_BYTE, right, ot_disp(&x->w, right, 0, 0), (int) x->half, MPI_BYTE, x->w.win));
    OT(MPI_Get(in, (int) x->half, MPI_BYTE, left, ot_disp(&x->w, left, 0, x->half), (int) x->half, MPI_BYTE,
               x->w.win));
}

static void check(win_t *x, int r, unsigned char *in, unsigned char *want, const char *how)
{
    int left = world_of(x, (x->rank + x->size - 1) % x->size);
    for (size_t i = 0; i < x->half; ++i) {
        want[i] = put_byte(x->id, r, left, world_rank, i);
    }
    ot_check(x->w.part[0], want, x->half, "window %d (%d ranks) under %s: first half, put by world rank %d", x->id,
             x->size, how, left);
    for (size_t i = 0; i < x->half; ++i) {
        want[i] = own_byte(x->id, r, left, i);
    }
    ot_check(in, want, x->half, "window %d (%d ranks) under %s: get from world rank %d", x->id, x->size, how, left);
}

static void zero_sized(enum ot_flavor f, int round)
{
    ot_win z;
    int odd = world_rank % 2;
    size_t bytes = odd ? 0 : (size_t) world_size * 8;
    unsigned char out[8], in[8], want[8], none = 0;
    ot_win_new(&z, f, MPI_COMM_WORLD, 1, bytes, 1, MPI_INFO_NULL);
    if (!odd) {
        OT(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, world_rank, 0, z.win));
        memset(z.part[0], 0, bytes);
        OT(MPI_Win_unlock(world_rank, z.win));
    }
    OT(MPI_Barrier(MPI_COMM_WORLD));
    OT(MPI_Win_lock_all(0, z.win));
    for (int t = 0; t < world_size; ++t) {
        if (t % 2) { /* nothing to move into a window of no bytes, and nothing to read */
            OT(MPI_Put(&none, 0, MPI_BYTE, t, 0, 0, MPI_BYTE, z.win));
            OT(MPI_Get(&none, 0, MPI_BYTE, t, 0, 0, MPI_BYTE, z.win));
            continue;
        }
        for (size_t i = 0; i < 8; ++i) {
            out[i] = mt_byte(world_rank, t, round, i);
        }
        OT(MPI_Put(out, 8, MPI_BYTE, t, ot_disp(&z, t, 0, (size_t) world_rank * 8), 8, MPI_BYTE, z.win));
        OT(MPI_Win_flush(t, z.win));
        OT(MPI_Get(in, 8, MPI_BYTE, t, ot_disp(&z, t, 0, (size_t) world_rank * 8), 8, MPI_BYTE, z.win));
        OT(MPI_Win_flush(t, z.win));
        ot_check(in, out, 8, "zero-sized windows on odd ranks, %s: read back from rank %d", ot_flavor_names[f], t);
    }
    OT(MPI_Win_unlock_all(z.win));
    OT(MPI_Barrier(MPI_COMM_WORLD));
    if (!odd) {
        OT(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, world_rank, 0, z.win));
        for (int o = 0; o < world_size; ++o) {
            for (size_t i = 0; i < 8; ++i) {
                want[i] = mt_byte(o, world_rank, round, i);
            }
            ot_check(z.part[0] + o * 8, want, 8, "zero-sized windows on odd ranks, %s: bytes of rank %d",
                     ot_flavor_names[f], o);
        }
        OT(MPI_Win_unlock(world_rank, z.win));
    }
    ot_win_free(&z);
    /* No bytes anywhere: epochs still work. */
    ot_win_new(&z, f, MPI_COMM_WORLD, 1, 0, 1, MPI_INFO_NULL);
    OT(MPI_Win_fence(0, z.win));
    OT(MPI_Put(&none, 0, MPI_BYTE, (world_rank + 1) % world_size, 0, 0, MPI_BYTE, z.win));
    OT(MPI_Win_fence(MPI_MODE_NOSUCCEED, z.win));
    ot_win_free(&z);
}

int main(int argc, char **argv)
{
    ot_init(&argc, &argv, "windows");
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    const char *flavors = ot_arg(argc, argv, "-flavor", NULL);
    int loops = atoi(ot_arg(argc, argv, "-loop", "300")), nflavors = 0;
    enum ot_flavor fl[OT_FLAVORS];
    for (int f = 0; f < OT_FLAVORS; ++f) {
        if (ot_listed(flavors, ot_flavor_names[f])) {
            fl[nflavors++] = (enum ot_flavor) f;
        }
    }
    if (0 == nflavors) {
        ot_fail("no flavor selected");
    }
    MPI_Comm comms[COMMS];
    const char *comm_names[COMMS] = {"world", "dup", "half", "reversed", "self"};
    comms[0] = MPI_COMM_WORLD;
    OT(MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]));
    OT(MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, world_rank, &comms[2]));
    OT(MPI_Comm_split(MPI_COMM_WORLD, 0, world_size - world_rank, &comms[3]));
    comms[4] = MPI_COMM_SELF;
    enum { WINS = 2 * COMMS };
    win_t x[WINS];
    size_t max_half = 0;
    for (int i = 0; i < WINS; ++i) { /* two windows per communicator, of different flavors and sizes */
        x[i].id = i;
        x[i].half = 1000 + 333 * (size_t) i;
        max_half = x[i].half > max_half ? x[i].half : max_half;
        ot_win_new(&x[i].w, fl[i % nflavors], comms[i / 2], 1, 2 * x[i].half, 1, MPI_INFO_NULL);
        MPI_Comm_rank(comms[i / 2], &x[i].rank);
        MPI_Comm_size(comms[i / 2], &x[i].size);
    }
    unsigned char *out = mt_alloc(max_half * WINS), *in = mt_alloc(max_half * WINS), *want = mt_alloc(max_half);

    /* 1. Passive epochs on every window at once. */
    for (int i = 0; i < WINS; ++i) {
        fill(&x[i], 1);
    }
    OT(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < WINS; ++i) {
        OT(MPI_Win_lock_all(0, x[i].w.win));
    }
    for (int i = 0; i < WINS; ++i) {
        issue(&x[i], 1, out + i * max_half, in + i * max_half);
    }
    for (int i = WINS - 1; i >= 0; --i) {
        OT(MPI_Win_unlock_all(x[i].w.win));
    }
    OT(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < WINS; ++i) {
        OT(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, x[i].rank, 0, x[i].w.win));
        check(&x[i], 1, in + i * max_half, want, "lock_all on every window");
        OT(MPI_Win_unlock(x[i].rank, x[i].w.win));
    }

    /* 2. Fence epochs on the even windows, PSCW on the odd ones, nested. */
    for (int i = 0; i < WINS; ++i) {
        fill(&x[i], 2);
    }
    OT(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Group groups[WINS];
    for (int i = 0; i < WINS; ++i) {
        if (i % 2) {
            MPI_Group g;
            int ranks[2] = {(x[i].rank + 1) % x[i].size, (x[i].rank + x[i].size - 1) % x[i].size};
            MPI_Win_get_group(x[i].w.win, &g);
            MPI_Group_incl(g, ranks[0] == ranks[1] ? 1 : 2, ranks, &groups[i]);
            MPI_Group_free(&g);
            OT(MPI_Win_post(groups[i], 0, x[i].w.win));
            OT(MPI_Win_start(groups[i], 0, x[i].w.win));
        } else {
            OT(MPI_Win_fence(MPI_MODE_NOPRECEDE, x[i].w.win));
        }
    }
    for (int i = 0; i < WINS; ++i) {
        issue(&x[i], 2, out + i * max_half, in + i * max_half);
    }
    for (int i = 0; i < WINS; ++i) {
        if (i % 2) {
            OT(MPI_Win_complete(x[i].w.win));
            OT(MPI_Win_wait(x[i].w.win));
            MPI_Group_free(&groups[i]);
        } else {
            OT(MPI_Win_fence(MPI_MODE_NOSUCCEED, x[i].w.win));
        }
    }
    for (int i = 0; i < WINS; ++i) {
        check(&x[i], 2, in + i * max_half, want, i % 2 ? "pscw" : "fence");
    }

    /* 3. Windows created and freed in a loop, with those still open. */
    for (int n = 0; n < loops; ++n) {
        win_t y = {.id = 10 + n % 3, .half = 64 + (size_t) (n * 37) % (max_half - 64)};
        MPI_Comm c = comms[n % 3];
        ot_win_new(&y.w, fl[n % nflavors], c, 1, 2 * y.half, 1, MPI_INFO_NULL);
        MPI_Comm_rank(c, &y.rank);
        MPI_Comm_size(c, &y.size);
        fill(&y, 3 + n);
        OT(MPI_Barrier(c));
        if (n % 2) {
            OT(MPI_Win_fence(0, y.w.win));
            issue(&y, 3 + n, out, in);
            OT(MPI_Win_fence(MPI_MODE_NOSUCCEED, y.w.win));
        } else {
            OT(MPI_Win_lock_all(0, y.w.win));
            issue(&y, 3 + n, out, in);
            OT(MPI_Win_unlock_all(y.w.win));
            OT(MPI_Barrier(c));
        }
        OT(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, y.rank, 0, y.w.win));
        char how[64];
        snprintf(how, sizeof how, "%s, window %d of the loop on %s", n % 2 ? "fence" : "lock_all", n,
                 comm_names[n % 3]);
        check(&y, 3 + n, in, want, how);
        OT(MPI_Win_unlock(y.rank, y.w.win));
        ot_win_free(&y.w);
    }

    /* 4. Zero-sized windows. */
    for (int f = 0; f < nflavors; ++f) {
        zero_sized(fl[f], 7 + f);
    }

    for (int i = 0; i < WINS; ++i) {
        ot_win_free(&x[i].w);
    }
    MPI_Comm_free(&comms[1]);
    MPI_Comm_free(&comms[2]);
    MPI_Comm_free(&comms[3]);
    free(out);
    free(in);
    free(want);
    if (0 == world_rank) {
        printf("windows: %d windows open at once, %d created and freed in a loop, zero-sized on odd ranks\n", WINS,
               loops);
    }
    mt_pass("windows");
    MPI_Finalize();
    return 0;
}
