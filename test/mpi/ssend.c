/* Synchronous and ready modes: MPI_Ssend and MPI_Issend, small and large,
 * then MPI_Rsend into a receive known to be posted (barrier). */
#include "mpitest.h"

int main(int argc, char **argv)
{
    static const size_t sizes[] = {0, 8, 1500, 70000, 3u << 20};
    int rank, n;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    unsigned char *buf = mt_alloc(3u << 20);
    int peer = rank ^ 1;
    for (int k = 0; k < 5 && peer < n; ++k) {
        size_t s = sizes[k];
        if (rank < peer) {
            mt_fill(buf, s, rank, peer, k);
            MPI_Ssend(buf, (int) s, MPI_BYTE, peer, k, MPI_COMM_WORLD);
            MPI_Request r;
            mt_fill(buf, s, rank, peer, k + 10);
            MPI_Issend(buf, (int) s, MPI_BYTE, peer, k + 10, MPI_COMM_WORLD, &r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, (int) s, MPI_BYTE, peer, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            mt_check("ssend", buf, s, peer, rank, k);
            MPI_Recv(buf, (int) s, MPI_BYTE, peer, k + 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            mt_check("issend", buf, s, peer, rank, k + 10);
        }
    }
    /* Rsend: the receive is posted before the barrier the sender waits for. */
    for (int k = 0; k < 5 && peer < n; ++k) {
        size_t s = sizes[k];
        MPI_Request r = MPI_REQUEST_NULL;
        if (rank > peer) {
            MPI_Irecv(buf, (int) s, MPI_BYTE, peer, 100 + k, MPI_COMM_WORLD, &r);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank < peer) {
            mt_fill(buf, s, rank, peer, 100 + k);
            MPI_Rsend(buf, (int) s, MPI_BYTE, peer, 100 + k, MPI_COMM_WORLD);
        } else {
            MPI_Wait(&r, MPI_STATUS_IGNORE);
            mt_check("rsend", buf, s, peer, rank, 100 + k);
        }
    }
    if (peer >= n) { /* odd rank count: the last rank still joins the barriers */
        for (int k = 0; k < 5; ++k) {
            MPI_Barrier(MPI_COMM_WORLD);
        }
    }
    free(buf);
    mt_pass("ssend");
    MPI_Finalize();
    return 0;
}
