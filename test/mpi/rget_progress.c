/* A large message reaches a receiver while its sender computes outside
 * MPI: ob1 reads it with btl_rttcc's get (RGET), which the sender's engine
 * serves without the sender's application.  Even ranks MPI_Isend -size
 * bytes (contiguous, above the eager limit) to the odd rank after them and
 * compute for -busy seconds (a spin, no MPI call) before they wait; odd ranks
 * receive, check every byte and time the receive.  -within S: every receive
 * must end within S seconds (the sender is still computing then); -after S:
 * every receive must take at least S seconds (over a send pipeline the
 * receiver waits for the sender to come back, so -within can fail). */
#include "mpitest.h"


int main(int argc, char **argv)
{
    size_t size = 4u << 20;
    double busy = 3, within = -1, after = -1;
    int rank, n;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    for (int i = 1; i + 1 < argc; i += 2) {
        if (0 == strcmp(argv[i], "-size")) {
            size = strtoull(argv[i + 1], NULL, 0);
        } else if (0 == strcmp(argv[i], "-busy")) {
            busy = atof(argv[i + 1]);
        } else if (0 == strcmp(argv[i], "-within")) {
            within = atof(argv[i + 1]);
        } else if (0 == strcmp(argv[i], "-after")) {
            after = atof(argv[i + 1]);
        }
    }
    unsigned char *buf = mt_alloc(size);
    int peer = rank ^ 1;
    MPI_Barrier(MPI_COMM_WORLD);
    if (peer < n && 0 == rank % 2) {
        MPI_Request req;
        mt_fill(buf, size, rank, peer, 1);
        MPI_Isend(buf, (int) size, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &req);
        mt_compute(busy);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else if (peer < n) {
        const double start = mt_now_s();
        MPI_Recv(buf, (int) size, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        const double took = mt_now_s() - start;
        mt_check("rget_progress", buf, size, peer, rank, 1);
        if (within >= 0 && took > within) {
            mt_fail("rget_progress", "the receive took %zu ms while its sender computed, more than %zu ms",
                    (size_t) (took * 1e3), (size_t) (within * 1e3));
        }
        if (after >= 0 && took < after) {
            mt_fail("rget_progress", "the receive took %zu ms, less than %zu ms", (size_t) (took * 1e3),
                    (size_t) (after * 1e3));
        }
    }
    free(buf);
    mt_pass("rget_progress");
    MPI_Finalize();
    return 0;
}
