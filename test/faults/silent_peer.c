/* A peer that stops answering: rank 1 freezes itself (SIGSTOP, or dies
 * with SIGKILL when run with "kill") after a barrier while rank 0 sends to
 * it.  The job must end with an error naming the problem within a bounded
 * time, never hang: a frozen peer is rttcc's to detect (its help message), a
 * dead one is also seen by mpirun. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank;
    size_t size = 4u << 20;
    char *buf = calloc(size, 1);

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    if (1 == rank) {
        raise(argc > 1 && 0 == strcmp(argv[1], "kill") ? SIGKILL : SIGSTOP);
    } else if (0 == rank) {
        for (int i = 0; i < 100; ++i) {
            MPI_Send(buf, (int) size, MPI_BYTE, 1, i, MPI_COMM_WORLD);
        }
        printf("UNEXPECTED: every send to a frozen peer completed\n");
    }
    MPI_Finalize();
    free(buf);
    return 0;
}
