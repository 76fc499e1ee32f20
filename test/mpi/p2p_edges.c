/* Point-to-point edges: the sender's order holds across eager and large
 * messages (non-overtaking), a too-small receive gets MPI_ERR_TRUNCATE with
 * the bytes that fit and leaves the next message intact, a cancelled
 * receive is cancelled, messages to oneself (eager, large, unexpected,
 * synchronous). */
#include "mpitest.h"

static const size_t sizes[] = {0, 100, 200000, 70000, 3, 1 << 20, 64, 65536, 65537};
#define NSIZES (sizeof sizes / sizeof sizes[0])
#define ORDERED 40

static void in_order(int rank, int peer)
{
    unsigned char *buf = mt_alloc(1 << 20);
    MPI_Request reqs[ORDERED];
    unsigned char *out[ORDERED];
    if (rank < peer) {
        for (int k = 0; k < ORDERED; ++k) {
            size_t s = sizes[k % NSIZES];
            out[k] = mt_alloc(s);
            mt_fill(out[k], s, rank, peer, k);
            MPI_Isend(out[k], (int) s, MPI_BYTE, peer, 7, MPI_COMM_WORLD, &reqs[k]);
        }
        MPI_Waitall(ORDERED, reqs, MPI_STATUSES_IGNORE);
        for (int k = 0; k < ORDERED; ++k) {
            free(out[k]);
        }
    } else {
        for (int k = 0; k < ORDERED; ++k) {
            MPI_Status st;
            int count;
            MPI_Recv(buf, 1 << 20, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_BYTE, &count);
            if ((size_t) count != sizes[k % NSIZES] || st.MPI_SOURCE != peer) {
                mt_fail("p2p_edges", "message %zu came with %zu bytes: out of order", (size_t) k, (size_t) count);
            }
            mt_check("p2p_edges", buf, (size_t) count, peer, rank, k);
        }
    }
    free(buf);
}

static void truncated(int rank, int peer, MPI_Comm comm)
{
    static const size_t sent[] = {1000, 300000}, room[] = {500, 100000};
    for (int k = 0; k < 2; ++k) {
        unsigned char *buf = mt_alloc(sent[k]);
        if (rank < peer) {
            mt_fill(buf, sent[k], rank, peer, 100 + k);
            MPI_Send(buf, (int) sent[k], MPI_BYTE, peer, 100 + k, comm);
            mt_fill(buf, 64, rank, peer, 200 + k);
            MPI_Send(buf, 64, MPI_BYTE, peer, 200 + k, comm);
        } else {
            MPI_Status st;
            int rc = MPI_Recv(buf, (int) room[k], MPI_BYTE, peer, 100 + k, comm, &st), cls;
            MPI_Error_class(rc, &cls);
            if (MPI_ERR_TRUNCATE != cls) {
                mt_fail("p2p_edges", "a %zu-byte message into %zu bytes did not report MPI_ERR_TRUNCATE",
                        sent[k], room[k]);
            }
            mt_check("p2p_edges", buf, room[k], peer, rank, 100 + k);
            MPI_Recv(buf, 64, MPI_BYTE, peer, 200 + k, comm, MPI_STATUS_IGNORE);
            mt_check("p2p_edges", buf, 64, peer, rank, 200 + k);
        }
        free(buf);
    }
}

static void cancelled(int peer)
{
    unsigned char b[8];
    MPI_Request r;
    MPI_Status st;
    int flag = 0;
    MPI_Irecv(b, 8, MPI_BYTE, peer, 999, MPI_COMM_WORLD, &r);
    MPI_Cancel(&r);
    MPI_Wait(&r, &st);
    MPI_Test_cancelled(&st, &flag);
    if (!flag) {
        mt_fail("p2p_edges", "a receive nobody sends to was not cancelled (%zu, %zu)", 0, 0);
    }
}

static void to_self(int rank)
{
    for (size_t k = 0; k < NSIZES; ++k) {
        size_t s = sizes[k];
        unsigned char *out = mt_alloc(s), *in = mt_alloc(s);
        MPI_Request r;
        mt_fill(out, s, rank, rank, (int) k);
        /* unexpected: sent before the receive is posted */
        MPI_Isend(out, (int) s, MPI_BYTE, rank, 300, MPI_COMM_WORLD, &r);
        MPI_Recv(in, (int) s, MPI_BYTE, rank, 300, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        mt_check("p2p_edges", in, s, rank, rank, (int) k);
        /* synchronous into a posted receive */
        memset(in, 0, s);
        MPI_Irecv(in, (int) s, MPI_BYTE, rank, 301, MPI_COMM_WORLD, &r);
        MPI_Ssend(out, (int) s, MPI_BYTE, rank, 301, MPI_COMM_WORLD);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        mt_check("p2p_edges", in, s, rank, rank, (int) k);
        free(out);
        free(in);
    }
}

int main(int argc, char **argv)
{
    int rank, n;
    MPI_Comm comm;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int peer = rank ^ 1;
    if (peer < n) {
        in_order(rank, peer);
        truncated(rank, peer, comm);
        cancelled(peer);
    }
    to_self(rank);
    MPI_Comm_free(&comm);
    mt_pass("p2p_edges");
    MPI_Finalize();
    return 0;
}
