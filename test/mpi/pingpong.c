/* Blocking ping-pong between rank 0 and every other rank, 0 B to -max
 * (default 64 MiB): every power of two and +-1 of each, both directions verified. */
#include "mpitest.h"

int main(int argc, char **argv)
{
    size_t max = 64u << 20;
    int rank, n, msg = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (argc > 2 && 0 == strcmp(argv[1], "-max")) {
        max = strtoull(argv[2], NULL, 0);
    }
    unsigned char *buf = mt_alloc(max + 1);
    for (int peer = 1; peer < n; ++peer) {
        for (size_t p = 1; p <= max; p *= 2) {
            size_t sizes[3] = {p - 1, p, p + 1};
            for (int k = 0; k < 3; ++k, ++msg) {
                size_t s = sizes[k];
                if (s > max) {
                    continue;
                }
                if (0 == rank) {
                    mt_fill(buf, s, 0, peer, msg);
                    MPI_Send(buf, (int) s, MPI_BYTE, peer, msg, MPI_COMM_WORLD);
                    MPI_Recv(buf, (int) s, MPI_BYTE, peer, msg, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    mt_check("pingpong", buf, s, peer, 0, msg);
                } else if (peer == rank) {
                    MPI_Recv(buf, (int) s, MPI_BYTE, 0, msg, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    mt_check("pingpong", buf, s, 0, peer, msg);
                    mt_fill(buf, s, peer, 0, msg);
                    MPI_Send(buf, (int) s, MPI_BYTE, 0, msg, MPI_COMM_WORLD);
                }
            }
        }
    }
    free(buf);
    mt_pass("pingpong");
    MPI_Finalize();
    return 0;
}
