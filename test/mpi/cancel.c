/* MPI_Cancel (MPI 3.1, 3.8.4): a wait on a request marked for cancellation
 * returns whatever the other process does (it is local), and either the
 * cancellation succeeds (MPI_Test_cancelled true: the message is never
 * received) or the communication does (false: it is received whole), never
 * both.  Sends of every protocol and mode (buffered ones complete at once,
 * persistent ones) to a peer that has posted nothing, and to oneself; a
 * receive nobody sent to (cancelled, and the message sent later goes to the
 * next receive) and one already matched (not cancelled).  Ranks pair up
 * (0-1, 2-3, ...); the even one receives. */
#include "mpitest.h"

enum { RNDV, SSEND, EAGER, SSEND_EMPTY, BSEND, PERSISTENT, CASES };
static const size_t case_size[CASES] = {1 << 20, 100, 100, 0, 1 << 20, 1 << 20};
#define MARKER 64 /* bytes of the message sent after each case with its tag */

static void start_send(int c, unsigned char *buf, int to, int tag, MPI_Comm comm, MPI_Request *r)
{
    switch (c) {
    case SSEND:
    case SSEND_EMPTY:
        MPI_Issend(buf, (int) case_size[c], MPI_BYTE, to, tag, comm, r);
        break;
    case BSEND: /* complete once buffered: nothing left to cancel */
        MPI_Ibsend(buf, (int) case_size[c], MPI_BYTE, to, tag, comm, r);
        break;
    case PERSISTENT:
        MPI_Send_init(buf, (int) case_size[c], MPI_BYTE, to, tag, comm, r);
        MPI_Start(r);
        break;
    default:
        MPI_Isend(buf, (int) case_size[c], MPI_BYTE, to, tag, comm, r);
    }
}

/* Waits for a cancelled send; true if it was cancelled. */
static int finish_send(int c, MPI_Request *r)
{
    MPI_Status st;
    int cancelled;
    MPI_Wait(r, &st); /* local: nobody posts a receive for it meanwhile */
    MPI_Test_cancelled(&st, &cancelled);
    if (PERSISTENT == c) {
        MPI_Request_free(r);
    }
    return cancelled;
}

/* The receiver's side of a case: the message if it was not cancelled, then
 * the marker (a cancelled message must not come first). */
static void receive_case(int c, int cancelled, unsigned char *buf, int from, int tag, MPI_Comm comm)
{
    MPI_Status st;
    int n;
    if (!cancelled) {
        MPI_Recv(buf, 1 << 20, MPI_BYTE, from, tag, comm, &st);
        MPI_Get_count(&st, MPI_BYTE, &n);
        if ((size_t) n != case_size[c]) {
            mt_fail("cancel", "a send reported not cancelled came with %zu bytes, not %zu", (size_t) n, case_size[c]);
        }
        mt_check("cancel", buf, case_size[c], from, 0, tag);
    }
    MPI_Recv(buf, 1 << 20, MPI_BYTE, from, tag, comm, &st);
    MPI_Get_count(&st, MPI_BYTE, &n);
    if (MARKER != n) {
        mt_fail("cancel", "case %zu: a message of %zu bytes came before the marker (a cancelled send delivered)",
                (size_t) c, (size_t) n);
    }
    mt_check("cancel", buf, MARKER, from, 0, tag + 1000);
}

static void sends(int rank, int peer, MPI_Comm comm)
{
    unsigned char *buf = mt_alloc(1 << 20);
    int cancelled[CASES];
    if (rank > peer) { /* sender */
        for (int c = 0; c < CASES; ++c) {
            MPI_Request r;
            mt_fill(buf, case_size[c], rank, 0, 10 + c);
            start_send(c, buf, peer, 10 + c, comm, &r);
            MPI_Cancel(&r);
            cancelled[c] = finish_send(c, &r); /* the peer posts nothing until it hears below */
        }
        MPI_Send(cancelled, CASES, MPI_INT, peer, 1, comm);
        for (int c = 0; c < CASES; ++c) {
            mt_fill(buf, MARKER, rank, 0, 10 + c + 1000);
            MPI_Send(buf, MARKER, MPI_BYTE, peer, 10 + c, comm);
        }
    } else {
        MPI_Recv(cancelled, CASES, MPI_INT, peer, 1, comm, MPI_STATUS_IGNORE);
        for (int c = 0; c < CASES; ++c) {
            receive_case(c, cancelled[c], buf, peer, 10 + c, comm);
        }
    }
    free(buf);
}

static void sends_to_self(int rank, MPI_Comm comm)
{
    unsigned char *buf = mt_alloc(1 << 20);
    for (int c = 0; c < CASES; ++c) {
        MPI_Request r;
        int cancelled;
        mt_fill(buf, case_size[c], rank, 0, 30 + c);
        start_send(c, buf, rank, 30 + c, comm, &r);
        MPI_Cancel(&r);
        cancelled = finish_send(c, &r); /* no receive is posted */
        mt_fill(buf, MARKER, rank, 0, 30 + c + 1000);
        MPI_Send(buf, MARKER, MPI_BYTE, rank, 30 + c, comm); /* eager: completes unreceived */
        receive_case(c, cancelled, buf, rank, 30 + c, comm);
    }
    free(buf);
}

static void receives(int rank, int peer, MPI_Comm comm)
{
    unsigned char buf[MARKER], matched[MARKER];
    MPI_Request r;
    MPI_Status st;
    int cancelled;
    if (rank < peer) {
        /* Nobody has sent to it: cancelled; the later message takes the next receive. */
        MPI_Irecv(buf, MARKER, MPI_BYTE, peer, 50, comm, &r);
        MPI_Cancel(&r);
        MPI_Wait(&r, &st);
        MPI_Test_cancelled(&st, &cancelled);
        if (!cancelled) {
            mt_fail("cancel", "a receive nobody sent to was not cancelled (%zu, %zu)", 0, 0);
        }
        MPI_Irecv(matched, MARKER, MPI_BYTE, peer, 51, comm, &r);
        MPI_Barrier(comm);
        MPI_Recv(buf, MARKER, MPI_BYTE, peer, 50, comm, MPI_STATUS_IGNORE);
        mt_check("cancel", buf, MARKER, peer, 0, 50);
        /* Matched by the synchronous send that returned before the barrier: not cancelled. */
        MPI_Barrier(comm);
        MPI_Cancel(&r);
        MPI_Wait(&r, &st);
        MPI_Test_cancelled(&st, &cancelled);
        if (cancelled) {
            mt_fail("cancel", "a matched receive was cancelled (%zu, %zu)", 0, 0);
        }
        mt_check("cancel", matched, MARKER, peer, 0, 51);
    } else {
        MPI_Barrier(comm);
        mt_fill(buf, MARKER, rank, 0, 50);
        MPI_Send(buf, MARKER, MPI_BYTE, peer, 50, comm);
        mt_fill(buf, MARKER, rank, 0, 51);
        MPI_Ssend(buf, MARKER, MPI_BYTE, peer, 51, comm);
        MPI_Barrier(comm);
    }
}

int main(int argc, char **argv)
{
    int rank, n;
    MPI_Comm comm, pair;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank, &pair);
    int bsend_room = 2 * ((1 << 20) + MPI_BSEND_OVERHEAD); /* to the peer and to oneself */
    void *bsend_buffer = mt_alloc((size_t) bsend_room);
    MPI_Buffer_attach(bsend_buffer, bsend_room);
    int peer = rank ^ 1;
    if (peer < n) {
        sends(rank, peer, comm);
        receives(rank % 2, peer % 2, pair);
    }
    sends_to_self(rank, comm);
    MPI_Buffer_detach(&bsend_buffer, &bsend_room); /* waits for the buffered sends */
    free(bsend_buffer);
    MPI_Comm_free(&pair);
    MPI_Comm_free(&comm);
    mt_pass("cancel");
    MPI_Finalize();
    return 0;
}
