/* Nonblocking storm: every rank posts many Irecv/Isend to and from every
 * other rank at once, mixed sizes (0 B to 256 KiB), distinct tags. */
#include "mpitest.h"

#define PER_PEER 40

static size_t size_of(int i) { return (size_t[]){0, 1, 64, 1000, 4096, 65000, 70000, 262144}[i % 8]; }

int main(int argc, char **argv)
{
    int rank, n;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int total = (n - 1) * PER_PEER;
    unsigned char **in = calloc(total, sizeof *in), **out = calloc(total, sizeof *out);
    MPI_Request *req = calloc(2 * total, sizeof *req);
    int k = 0;
    for (int p = 0; p < n; ++p) {
        for (int i = 0; p != rank && i < PER_PEER; ++i, ++k) {
            in[k] = mt_alloc(size_of(i + p));
            out[k] = mt_alloc(size_of(i + rank));
            mt_fill(out[k], size_of(i + rank), rank, p, i);
            MPI_Irecv(in[k], (int) size_of(i + p), MPI_BYTE, p, i, MPI_COMM_WORLD, &req[2 * k]);
            MPI_Isend(out[k], (int) size_of(i + rank), MPI_BYTE, p, i, MPI_COMM_WORLD, &req[2 * k + 1]);
        }
    }
    MPI_Waitall(2 * total, req, MPI_STATUSES_IGNORE);
    k = 0;
    for (int p = 0; p < n; ++p) {
        for (int i = 0; p != rank && i < PER_PEER; ++i, ++k) {
            mt_check("storm", in[k], size_of(i + p), p, rank, i);
            free(in[k]);
            free(out[k]);
        }
    }
    free(in);
    free(out);
    free(req);
    mt_pass("storm");
    MPI_Finalize();
    return 0;
}
