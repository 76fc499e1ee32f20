/* A send the engine refuses fails, and spends none of the sequence numbers
 * that keep its sender's messages in order: the receiver gets the
 * messages after it.  Run with LD_PRELOAD=refuse_send.so (shim/), which
 * has the engine refuse every mtl_rttcc message of tag REFUSED, as it does
 * when it runs out of memory.  Rank 1 sends to rank 0: eager, synchronous
 * and rendezvous, blocking and not, each refused and followed by a
 * message that must come. */
#include "mpitest.h"

#define REFUSED 7007  /* shim/refuse_send.c's */
#define BIG (1 << 20) /* rendezvous */
#define MARKER 64
#define WITHIN 20.0

enum { EAGER, SYNC, RNDV, CASES };
static const size_t case_size[CASES] = {100, 100, BIG};

/* Rank 1: case `c`, refused; an error is what it must give. */
static void send_refused(int c, int blocking, unsigned char *buf)
{
    MPI_Request r;
    int rc;
    if (blocking) {
        rc = SYNC == c ? MPI_Ssend(buf, (int) case_size[c], MPI_BYTE, 0, REFUSED, MPI_COMM_WORLD)
                       : MPI_Send(buf, (int) case_size[c], MPI_BYTE, 0, REFUSED, MPI_COMM_WORLD);
    } else {
        rc = SYNC == c ? MPI_Issend(buf, (int) case_size[c], MPI_BYTE, 0, REFUSED, MPI_COMM_WORLD, &r)
                       : MPI_Isend(buf, (int) case_size[c], MPI_BYTE, 0, REFUSED, MPI_COMM_WORLD, &r);
        if (MPI_SUCCESS == rc) {
            rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
        }
    }
    if (MPI_SUCCESS == rc) {
        mt_fail("refused_send", "case %zu (blocking %zu) was not refused: is refuse_send.so preloaded?", (size_t) c,
                (size_t) blocking);
    }
}

/* Rank 0: the marker sent after a refused message, within WITHIN seconds. */
static void recv_marker(unsigned char *buf, int tag)
{
    MPI_Request r;
    MPI_Status st;
    double end = MPI_Wtime() + WITHIN;
    int done = 0, n;
    MPI_Irecv(buf, MARKER, MPI_BYTE, 1, tag, MPI_COMM_WORLD, &r);
    while (!done) {
        MPI_Test(&r, &done, &st);
        if (!done && MPI_Wtime() > end) {
            mt_fail("refused_send", "the message after refused case %zu did not come in %zu s", (size_t) tag / 2,
                    (size_t) WITHIN);
        }
    }
    MPI_Get_count(&st, MPI_BYTE, &n);
    if (MARKER != n) {
        mt_fail("refused_send", "the message after a refused one had %zu bytes, not %zu", (size_t) n, MARKER);
    }
    mt_check("refused_send", buf, MARKER, 1, 0, tag);
}

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    unsigned char *buf = mt_alloc(BIG);
    for (int c = 0; c < CASES; ++c) {
        for (int blocking = 0; blocking < 2; ++blocking) {
            int tag = 2 * c + blocking;
            if (1 == rank) {
                send_refused(c, blocking, buf);
                mt_fill(buf, MARKER, 1, 0, tag);
                MPI_Send(buf, MARKER, MPI_BYTE, 0, tag, MPI_COMM_WORLD);
            } else if (0 == rank) {
                recv_marker(buf, tag);
            }
        }
    }
    free(buf);
    mt_pass("refused_send");
    MPI_Finalize();
    return 0;
}
