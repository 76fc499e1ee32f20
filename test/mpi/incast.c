/* Many-to-one: every rank sends several 4 MiB messages to rank 0 at once;
 * rank 0 receives them all with nonblocking receives and checks them. */
#include "mpitest.h"

#define MSGS 3
#define SIZE (4u << 20)

int main(int argc, char **argv)
{
    int rank, n;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (0 == rank) {
        int total = (n - 1) * MSGS;
        unsigned char **buf = calloc(total, sizeof *buf);
        MPI_Request *req = calloc(total, sizeof *req);
        for (int p = 1, k = 0; p < n; ++p) {
            for (int m = 0; m < MSGS; ++m, ++k) {
                buf[k] = mt_alloc(SIZE);
                MPI_Irecv(buf[k], SIZE, MPI_BYTE, p, m, MPI_COMM_WORLD, &req[k]);
            }
        }
        MPI_Waitall(total, req, MPI_STATUSES_IGNORE);
        for (int p = 1, k = 0; p < n; ++p) {
            for (int m = 0; m < MSGS; ++m, ++k) {
                mt_check("incast", buf[k], SIZE, p, 0, m);
                free(buf[k]);
            }
        }
        free(buf);
        free(req);
    } else {
        unsigned char *buf[MSGS];
        MPI_Request req[MSGS];
        for (int m = 0; m < MSGS; ++m) {
            buf[m] = mt_alloc(SIZE);
            mt_fill(buf[m], SIZE, rank, 0, m);
            MPI_Isend(buf[m], SIZE, MPI_BYTE, 0, m, MPI_COMM_WORLD, &req[m]);
        }
        MPI_Waitall(MSGS, req, MPI_STATUSES_IGNORE);
        for (int m = 0; m < MSGS; ++m) {
            free(buf[m]);
        }
    }
    mt_pass("incast");
    MPI_Finalize();
    return 0;
}
