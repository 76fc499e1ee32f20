/* User mistakes, the MPI way: with MPI_ERRORS_RETURN on the window, each
 * mistake must come back as an error of the right class (at the call, or
 * for a range error at the latest at the synchronization that completes
 * the operation), and the job must go on: after every case each rank puts
 * into its right neighbour and gets from its left in a fresh epoch, every
 * byte checked.
 *
 *   range_put, range_get, range_acc   beyond the end of the target's window: MPI_ERR_RMA_RANGE
 *   range_dynamic                     at an address the target never attached: MPI_ERR_RMA_RANGE
 *   no_epoch                          MPI_Put outside any epoch: MPI_ERR_RMA_SYNC
 *   unlock_unlocked                   MPI_Win_unlock without MPI_Win_lock: MPI_ERR_RMA_SYNC
 *   unlock_all_unlocked               MPI_Win_unlock_all without MPI_Win_lock_all: MPI_ERR_RMA_SYNC
 *   flush_unlocked                    MPI_Win_flush outside a passive epoch: MPI_ERR_RMA_SYNC
 *   lock_twice                        MPI_Win_lock of a target already locked: MPI_ERR_RMA_SYNC
 *                                     (or MPI_ERR_RMA_CONFLICT)
 *   complete_unstarted                MPI_Win_complete without MPI_Win_start: MPI_ERR_RMA_SYNC
 *   rput_in_fence                     MPI_Rput in an active epoch: MPI_ERR_RMA_SYNC
 *   count_mismatch                    an origin or result buffer that holds fewer bytes than
 *                                     the target's (0 ints against 16): MPI_ERR_ARG, nothing written
 *   foreign_group                     MPI_Win_start and MPI_Win_post with a group naming a
 *                                     process outside the window (3+ ranks): MPI_ERR_GROUP
 *
 *   errors [-cases range_put,...] [-flavor create,allocate,dynamic]   (dynamic: range_dynamic)
 */
#include "osctest.h"

enum { BYTES = 4096 };

static int rank, nprocs, round_no;

static const char *class_name(int cls)
{
    switch (cls) {
    case MPI_SUCCESS: return "MPI_SUCCESS";
    case MPI_ERR_RMA_SYNC: return "MPI_ERR_RMA_SYNC";
    case MPI_ERR_RMA_RANGE: return "MPI_ERR_RMA_RANGE";
    case MPI_ERR_RMA_CONFLICT: return "MPI_ERR_RMA_CONFLICT";
    case MPI_ERR_RMA_ATTACH: return "MPI_ERR_RMA_ATTACH";
    case MPI_ERR_WIN: return "MPI_ERR_WIN";
    case MPI_ERR_ARG: return "MPI_ERR_ARG";
    case MPI_ERR_GROUP: return "MPI_ERR_GROUP";
    case MPI_ERR_DISP: return "MPI_ERR_DISP";
    default: return "another class";
    }
}

/* rc must be an error of class `want` (or `also`); `what` names the call. */
static void expect_either(int rc, int want, int also, const char *test_case, const char *what)
{
    int cls = MPI_SUCCESS;
    if (MPI_SUCCESS != rc) {
        MPI_Error_class(rc, &cls);
    }
    if (cls != want && cls != also) {
        char text[MPI_MAX_ERROR_STRING] = "";
        int len = 0;
        if (MPI_SUCCESS != rc) {
            MPI_Error_string(rc, text, &len);
        }
        ot_fail("%s: %s returned class %d (%s%s%s), expected %s", test_case, what, cls, class_name(cls),
                len ? ": " : "", text, class_name(want));
    }
}

static void expect_class(int rc, int want, const char *test_case, const char *what)
{
    expect_either(rc, want, want, test_case, what);
}

/* The job goes on: a put to the right and a get from the left, checked. */
static void still_works(ot_win *w, const char *test_case)
{
    int right = (rank + 1) % nprocs, left = (rank + nprocs - 1) % nprocs;
    unsigned char out[BYTES / 2], in[BYTES / 2], want[BYTES / 2];
    ++round_no;
    OT(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w->win));
    mt_fill(w->part[0] + BYTES / 2, BYTES / 2, rank, 0, round_no);
    OT(MPI_Win_unlock(rank, w->win));
    OT(MPI_Barrier(MPI_COMM_WORLD));
    mt_fill(out, sizeof out, rank, right, round_no);
    OT(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, w->win));
    OT(MPI_Put(out, BYTES / 2, MPI_BYTE, right, ot_disp(w, right, 0, 0), BYTES / 2, MPI_BYTE, w->win));
    OT(MPI_Win_unlock(right, w->win));
    OT(MPI_Win_lock(MPI_LOCK_SHARED, left, 0, w->win));
    OT(MPI_Get(in, BYTES / 2, MPI_BYTE, left, ot_disp(w, left, 0, BYTES / 2), BYTES / 2, MPI_BYTE, w->win));
    OT(MPI_Win_unlock(left, w->win));
    OT(MPI_Barrier(MPI_COMM_WORLD));
    mt_fill(want, sizeof want, left, 0, round_no);
    ot_check(in, want, sizeof in, "%s: afterwards, a get from rank %d", test_case, left);
    OT(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w->win));
    mt_fill(want, sizeof want, left, rank, round_no);
    ot_check(w->part[0], want, sizeof want, "%s: afterwards, a put from rank %d", test_case, left);
    OT(MPI_Win_unlock(rank, w->win));
}

/* A range error from the operation itself or, at the latest, from the
 * unlock that completes it. */
static void range(ot_win *w, const char *test_case, int which)
{
    int right = (rank + 1) % nprocs, rc;
    unsigned char buf[64] = {0};
    int64_t one = 1;
    MPI_Aint beyond = ot_disp(w, right, 0, BYTES - 8); /* 8 bytes inside, 56 beyond */
    OT(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, w->win));
    if (0 == which) {
        rc = MPI_Put(buf, 64, MPI_BYTE, right, beyond, 64, MPI_BYTE, w->win);
    } else if (1 == which) {
        rc = MPI_Get(buf, 64, MPI_BYTE, right, beyond, 64, MPI_BYTE, w->win);
    } else {
        rc = MPI_Accumulate(&one, 1, MPI_INT64_T, right, ot_disp(w, right, 0, BYTES), 1, MPI_INT64_T, MPI_SUM,
                            w->win);
    }
    int unlocked = MPI_Win_unlock(right, w->win);
    if (MPI_SUCCESS == rc) {
        rc = unlocked;
    } else {
        expect_class(unlocked, MPI_SUCCESS, test_case, "MPI_Win_unlock after the failed operation");
    }
    expect_class(rc, MPI_ERR_RMA_RANGE, test_case, "the operation (or the unlock that completes it)");
}

int main(int argc, char **argv)
{
    ot_init(&argc, &argv, "errors");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    const char *cases = ot_arg(argc, argv, "-cases", NULL), *flavors = ot_arg(argc, argv, "-flavor", NULL);
    int right = (rank + 1) % nprocs, checked = 0;
    unsigned char buf[8] = {0};
    for (int f = 0; f < OT_FLAVORS; ++f) {
        if (!ot_listed(flavors, ot_flavor_names[f]) || OT_DYNAMIC == f) {
            continue;
        }
        ot_win w;
        char c[64];
        ot_win_new(&w, (enum ot_flavor) f, MPI_COMM_WORLD, 1, BYTES, 1, MPI_INFO_NULL);
#define CASE(name) (snprintf(c, sizeof c, "%s (%s window)", name, ot_flavor_names[f]), ot_where = c, \
                    ot_listed(cases, name) && ++checked)
        if (CASE("range_put")) {
            range(&w, c, 0);
            still_works(&w, c);
        }
        if (CASE("range_get")) {
            range(&w, c, 1);
            still_works(&w, c);
        }
        if (CASE("range_acc")) {
            range(&w, c, 2);
            still_works(&w, c);
        }
        if (CASE("no_epoch")) {
            expect_class(MPI_Put(buf, 8, MPI_BYTE, right, 0, 8, MPI_BYTE, w.win), MPI_ERR_RMA_SYNC, c, "MPI_Put");
            still_works(&w, c);
        }
        if (CASE("unlock_unlocked")) {
            expect_class(MPI_Win_unlock(right, w.win), MPI_ERR_RMA_SYNC, c, "MPI_Win_unlock");
            still_works(&w, c);
        }
        if (CASE("unlock_all_unlocked")) {
            expect_class(MPI_Win_unlock_all(w.win), MPI_ERR_RMA_SYNC, c, "MPI_Win_unlock_all");
            still_works(&w, c);
        }
        if (CASE("flush_unlocked")) {
            expect_class(MPI_Win_flush(right, w.win), MPI_ERR_RMA_SYNC, c, "MPI_Win_flush");
            still_works(&w, c);
        }
        if (CASE("lock_twice")) {
            OT(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, w.win));
            expect_either(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, w.win), MPI_ERR_RMA_SYNC, MPI_ERR_RMA_CONFLICT, c,
                          "the second MPI_Win_lock");
            OT(MPI_Win_unlock(right, w.win));
            still_works(&w, c);
        }
        if (CASE("complete_unstarted")) {
            expect_class(MPI_Win_complete(w.win), MPI_ERR_RMA_SYNC, c, "MPI_Win_complete");
            still_works(&w, c);
        }
        if (CASE("rput_in_fence")) {
            MPI_Request q = MPI_REQUEST_NULL;
            OT(MPI_Win_fence(0, w.win));
            int rc = MPI_Rput(buf, 8, MPI_BYTE, right, 0, 8, MPI_BYTE, w.win, &q);
            if (MPI_SUCCESS == rc) {
                OT(MPI_Wait(&q, MPI_STATUS_IGNORE));
            }
            OT(MPI_Win_fence(MPI_MODE_NOSUCCEED, w.win));
            expect_class(rc, MPI_ERR_RMA_SYNC, c, "MPI_Rput");
            still_works(&w, c);
        }
        if (CASE("count_mismatch")) {
            int guard[32], origin[16] = {0}, result[4];
            memset(guard, 0x5a, sizeof guard);
            OT(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, w.win));
            expect_class(MPI_Get(guard, 0, MPI_INT, right, 0, 16, MPI_INT, w.win), MPI_ERR_ARG, c,
                         "MPI_Get of 16 ints into 0");
            expect_class(MPI_Put(origin, 4, MPI_INT, right, 0, 16, MPI_INT, w.win), MPI_ERR_ARG, c,
                         "MPI_Put of 4 ints onto 16");
            expect_class(MPI_Get_accumulate(origin, 16, MPI_INT, result, 4, MPI_INT, right, 0, 16, MPI_INT, MPI_SUM,
                                            w.win),
                         MPI_ERR_ARG, c, "MPI_Get_accumulate of 16 ints with room for 4 results");
            OT(MPI_Win_unlock(right, w.win));
            for (size_t i = 0; i < sizeof guard; ++i) {
                if (0x5a != ((unsigned char *) guard)[i]) {
                    ot_fail("%s: MPI_Get of 16 ints into 0 wrote byte %zu of the origin", c, i);
                }
            }
            still_works(&w, c);
        }
        ot_where = NULL;
        ot_win_free(&w);
    }
    if (ot_listed(cases, "foreign_group") && nprocs >= 3) {
        /* ranks 0 and 1 share a window; rank 2 is outside it */
        MPI_Comm pair;
        OT(MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : MPI_UNDEFINED, rank, &pair));
        ot_where = "foreign_group";
        ++checked;
        if (MPI_COMM_NULL != pair) {
            ot_win w;
            ot_win_new(&w, OT_ALLOCATE, pair, 1, BYTES, 1, MPI_INFO_NULL);
            MPI_Group world, outside;
            const int two = 2;
            OT(MPI_Comm_group(MPI_COMM_WORLD, &world));
            OT(MPI_Group_incl(world, 1, &two, &outside));
            expect_class(MPI_Win_start(outside, 0, w.win), MPI_ERR_GROUP, "foreign_group", "MPI_Win_start");
            expect_class(MPI_Win_post(outside, 0, w.win), MPI_ERR_GROUP, "foreign_group", "MPI_Win_post");
            MPI_Group_free(&outside);
            MPI_Group_free(&world);
            /* the window still works: a put each way in a PSCW epoch of the pair */
            MPI_Group pair_group, other;
            const int peer = 1 - rank;
            OT(MPI_Comm_group(pair, &pair_group));
            OT(MPI_Group_incl(pair_group, 1, &peer, &other));
            const unsigned char mine = (unsigned char) (0x40 + rank);
            OT(MPI_Win_post(other, 0, w.win));
            OT(MPI_Win_start(other, 0, w.win));
            OT(MPI_Put(&mine, 1, MPI_BYTE, peer, ot_disp(&w, peer, 0, 0), 1, MPI_BYTE, w.win));
            OT(MPI_Win_complete(w.win));
            OT(MPI_Win_wait(w.win));
            const unsigned char theirs = (unsigned char) (0x40 + peer);
            ot_check(w.part[0], &theirs, 1, "foreign_group: afterwards, a put from rank %d", peer);
            MPI_Group_free(&other);
            MPI_Group_free(&pair_group);
            ot_win_free(&w);
            MPI_Comm_free(&pair);
        }
        ot_where = NULL;
    }
    if (ot_listed(cases, "range_dynamic") && ot_listed(flavors, "dynamic")) {
        ot_win w;
        ot_where = "range_dynamic";
        ++checked;
        ot_win_new(&w, OT_DYNAMIC, MPI_COMM_WORLD, 1, BYTES, 1, MPI_INFO_NULL);
        OT(MPI_Barrier(MPI_COMM_WORLD));
        OT(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, w.win));
        /* Just past the end of the region the target attached. */
        int rc = MPI_Put(buf, 8, MPI_BYTE, right, ot_disp(&w, right, 0, BYTES), 8, MPI_BYTE, w.win);
        int unlocked = MPI_Win_unlock(right, w.win);
        expect_class(MPI_SUCCESS == rc ? unlocked : rc, MPI_ERR_RMA_RANGE, "range_dynamic",
                     "MPI_Put beyond the attached region (or the unlock)");
        still_works(&w, "range_dynamic");
        ot_where = NULL;
        ot_win_free(&w);
    }
    if (0 == checked) {
        ot_fail("no case selected");
    }
    if (0 == rank) {
        printf("errors: %d cases returned their error class, and the job went on\n", checked);
    }
    mt_pass("errors");
    MPI_Finalize();
    return 0;
}
