/* Every rank exchanges messages of many sizes (0 B to 2 MiB) with every
 * other rank, verifying every byte.  Used under injected faults. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned char pattern(int from, int to, int msg, size_t i)
{
    return (unsigned char) (from * 31 + to * 17 + msg * 7 + i + (i >> 9));
}

int main(int argc, char **argv)
{
    static const size_t sizes[] = {0, 1, 100, 1000, 4096, 65535, 65536, 65537, 300000, 2u << 20};
    enum { NSIZES = sizeof sizes / sizeof sizes[0] };
    int rank, n, errors = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    for (int round = 0; round < 2; ++round) {
        for (int m = 0; m < NSIZES; ++m) {
            size_t size = sizes[m];
            unsigned char **out = calloc(n, sizeof *out), **in = calloc(n, sizeof *in);
            MPI_Request *req = calloc(2 * n, sizeof *req);
            int nreq = 0;
            for (int p = 0; p < n; ++p) {
                if (p == rank) {
                    continue;
                }
                out[p] = malloc(size + 1);
                in[p] = malloc(size + 1);
                for (size_t i = 0; i < size; ++i) {
                    out[p][i] = pattern(rank, p, m + round, i);
                }
                MPI_Irecv(in[p], (int) size, MPI_BYTE, p, m, MPI_COMM_WORLD, &req[nreq++]);
                MPI_Isend(out[p], (int) size, MPI_BYTE, p, m, MPI_COMM_WORLD, &req[nreq++]);
            }
            MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE);
            for (int p = 0; p < n; ++p) {
                for (size_t i = 0; p != rank && i < size; ++i) {
                    if (in[p][i] != pattern(p, rank, m + round, i)) {
                        fprintf(stderr, "rank %d: byte %zu of %zu from %d is wrong\n", rank, i, size, p);
                        ++errors;
                        break;
                    }
                }
                free(out[p]);
                free(in[p]);
            }
            free(out);
            free(in);
            free(req);
        }
    }
    MPI_Allreduce(MPI_IN_PLACE, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (0 == rank) {
        printf(errors ? "FAIL exchange: %d bad messages\n" : "PASS exchange\n", errors);
    }
    MPI_Finalize();
    return errors ? 1 : 0;
}
