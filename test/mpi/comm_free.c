/* Messages a receiver cannot take because of how its communicator was
 * freed.  Every case is an erroneous program that mtl_rttcc tolerates
 * (MPI never receives a message sent on a communicator its receiver has
 * freed): the message is dropped, its sender's later messages still come,
 * and a send that waits for its receiver (synchronous, rendezvous)
 * completes cancelled instead of hanging.  The cases rely on Open MPI
 * giving a new communicator the lowest context id free at its members, so
 * that the freed communicator's id is reused.
 *
 *   reuse:   ranks 0 and 2 free A and make B of the two of them (A's id);
 *            rank 1 then sends on A: to rank 0 that id names B, whose rank 1
 *            is process 2.
 *   improbe: the same, but rank 1's Issend on A reaches rank 0 before B is
 *            made there (and is dropped then, A being freed), and rank 0
 *            then probes B with MPI_Improbe: it must find nothing.  (The
 *            improbe's own refusal, of a message queued under an id no
 *            communicator of this process had, is not reached here: pml/cm
 *            makes a communicator at every member before any sends on it.)
 *   freed:   rank 1's messages on A are queued at rank 0 when it frees A,
 *            and more come after; then all make B (A's id), whose wildcard
 *            receive must get B's message, not one of A's. */
#include "mpitest.h"

#define BIG (1 << 20) /* rendezvous */
#define WITHIN 20.0   /* seconds a completion may take */

/* Waits for `r` at most WITHIN seconds: a send nobody answers fails here. */
static void wait_within(MPI_Request *r, MPI_Status *st, const char *what)
{
    double end = MPI_Wtime() + WITHIN;
    int done = 0, rank;
    while (!done) {
        MPI_Test(r, &done, st);
        if (!done && MPI_Wtime() > end) {
            MPI_Comm_rank(MPI_COMM_WORLD, &rank);
            fprintf(stderr, "FAIL comm_free on rank %d: %s did not complete in %.0f s\n", rank, what, WITHIN);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
    }
}

/* Rank 1: messages to rank 0 on a communicator rank 0 frees without
 * receiving them (eager, synchronous, rendezvous), then one on `comm` that
 * rank 0 receives; the two sends that wait for their receiver must
 * complete cancelled. */
static void send_stale(MPI_Comm freed, unsigned char *buf, int tag, MPI_Comm comm)
{
    MPI_Request r[2];
    MPI_Status st;
    int cancelled;
    MPI_Send(buf, 100, MPI_BYTE, 0, tag, freed);
    MPI_Issend(buf, 100, MPI_BYTE, 0, tag + 1, freed, &r[0]);
    MPI_Isend(buf, BIG, MPI_BYTE, 0, tag + 2, freed, &r[1]);
    mt_fill(buf + BIG, 64, 1, 0, tag);
    MPI_Send(buf + BIG, 64, MPI_BYTE, 0, tag, comm);
    for (int k = 0; k < 2; ++k) {
        wait_within(&r[k], &st, k ? "a rendezvous send to a freed communicator" : "an Issend to a freed communicator");
        MPI_Test_cancelled(&st, &cancelled);
        if (!cancelled) {
            mt_fail("comm_free", "send %zu of tag %zu to a freed communicator completed not cancelled", (size_t) k,
                    (size_t) tag + 1 + k);
        }
    }
}

/* Rank 0: the message rank 1 sent on `comm` after the stale ones comes all the same. */
static void recv_after_stale(unsigned char *buf, int tag, MPI_Comm comm)
{
    MPI_Request r;
    MPI_Status st;
    int n;
    MPI_Irecv(buf, BIG, MPI_BYTE, 1, tag, comm, &r);
    wait_within(&r, &st, "the message sent behind stale ones");
    MPI_Get_count(&st, MPI_BYTE, &n);
    if (64 != n) {
        mt_fail("comm_free", "the message sent behind stale ones had %zu bytes, not %zu", (size_t) n, 64);
    }
    mt_check("comm_free", buf, 64, 1, 0, tag);
}

/* Nothing is left to receive on `comm`. */
static void nothing_on(MPI_Comm comm)
{
    int flag;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, MPI_STATUS_IGNORE);
    if (flag) {
        mt_fail("comm_free", "a stale message is pending on a new communicator (%zu, %zu)", 0, 0);
    }
}

/* Ranks 0 and 2: B, of the two of them. */
static MPI_Comm pair_of_0_and_2(void)
{
    MPI_Comm b;
    MPI_Group world, pair;
    const int members[2] = {0, 2};
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 2, members, &pair);
    MPI_Comm_create_group(MPI_COMM_WORLD, pair, 5, &b);
    MPI_Group_free(&pair);
    MPI_Group_free(&world);
    return b;
}

static void reuse(int rank, unsigned char *buf)
{
    MPI_Comm a, b = MPI_COMM_NULL;
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    if (0 == rank || 2 == rank) {
        MPI_Comm_free(&a);
        b = pair_of_0_and_2();
    }
    if (0 == rank) {
        MPI_Send(NULL, 0, MPI_BYTE, 1, 1, MPI_COMM_WORLD); /* B is made */
        recv_after_stale(buf, 10, MPI_COMM_WORLD);
        nothing_on(b);
    } else if (1 == rank) {
        MPI_Recv(NULL, 0, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        send_stale(a, buf, 10, MPI_COMM_WORLD);
    }
    if (MPI_COMM_NULL != b) {
        MPI_Comm_free(&b);
    }
    if (MPI_COMM_NULL != a) {
        MPI_Comm_free(&a);
    }
}

static void freed(int rank, unsigned char *buf)
{
    MPI_Comm a, b;
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    if (0 == rank) {
        recv_after_stale(buf, 30, MPI_COMM_WORLD); /* rank 1's messages on A are queued */
        MPI_Comm_free(&a);
        MPI_Send(NULL, 0, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
        recv_after_stale(buf, 40, MPI_COMM_WORLD);
    } else if (1 == rank) {
        send_stale(a, buf, 30, MPI_COMM_WORLD);
        MPI_Recv(NULL, 0, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* A is freed at 0 */
        send_stale(a, buf, 40, MPI_COMM_WORLD);
        MPI_Comm_free(&a);
    } else {
        MPI_Comm_free(&a);
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &b); /* A's id: free at every rank now */
    if (0 == rank) {
        MPI_Status st;
        int n;
        MPI_Recv(buf, BIG, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, b, &st);
        MPI_Get_count(&st, MPI_BYTE, &n);
        if (50 != st.MPI_TAG || 1 != st.MPI_SOURCE || 64 != n) {
            mt_fail("comm_free", "a new communicator received tag %zu of %zu bytes: a freed one's message",
                    (size_t) st.MPI_TAG, (size_t) n);
        }
        mt_check("comm_free", buf, 64, 1, 0, 50);
    } else if (1 == rank) {
        mt_fill(buf, 64, 1, 0, 50);
        MPI_Send(buf, 64, MPI_BYTE, 0, 50, b);
    }
    MPI_Comm_free(&b);
}

static void improbe(int rank, unsigned char *buf)
{
    MPI_Comm a, b = MPI_COMM_NULL;
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    if (0 == rank || 2 == rank) {
        MPI_Comm_free(&a);
    }
    if (0 == rank) {
        MPI_Message msg;
        int flag;
        MPI_Send(NULL, 0, MPI_BYTE, 1, 1, MPI_COMM_WORLD); /* A is freed */
        recv_after_stale(buf, 20, MPI_COMM_WORLD);      /* the Issend is here */
        b = pair_of_0_and_2();
        MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, b, &flag, &msg, MPI_STATUS_IGNORE);
        if (flag) {
            mt_fail("comm_free", "MPI_Improbe found a stale message on a new communicator (%zu, %zu)", 0, 0);
        }
    } else if (1 == rank) {
        MPI_Request r;
        MPI_Status st;
        int cancelled;
        MPI_Recv(NULL, 0, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Issend(buf, 100, MPI_BYTE, 0, 21, a, &r);
        mt_fill(buf + BIG, 64, 1, 0, 20);
        MPI_Send(buf + BIG, 64, MPI_BYTE, 0, 20, MPI_COMM_WORLD);
        wait_within(&r, &st, "an Issend to a freed communicator");
        MPI_Test_cancelled(&st, &cancelled);
        if (!cancelled) {
            mt_fail("comm_free", "an Issend to a freed communicator completed not cancelled (%zu, %zu)", 0, 0);
        }
    } else if (2 == rank) {
        b = pair_of_0_and_2();
    }
    if (MPI_COMM_NULL != b) {
        MPI_Comm_free(&b);
    }
    if (MPI_COMM_NULL != a) {
        MPI_Comm_free(&a);
    }
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    unsigned char *buf = mt_alloc(BIG + 64);
    freed(rank, buf);
    if (size >= 3) {
        reuse(rank, buf);
        improbe(rank, buf);
    }
    free(buf);
    mt_pass("comm_free");
    MPI_Finalize();
    return 0;
}
