/* The target of test/faults/spoof: ranks 0 and 1 exchange messages of 64 B,
 * 100 KB and 1 MiB for -seconds, every byte checked both ways, while forged
 * datagrams arrive.  Each rank prints its pid (to find its sockets) and,
 * rank 1, its resident memory before and after. */
#include "../mpi/mpitest.h"

#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static long rss_kb(void)
{
    char line[256];
    long kb = -1;
    FILE *f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof line, f)) {
        if (1 == sscanf(line, "VmRSS: %ld kB", &kb)) break;
    }
    if (f) fclose(f);
    return kb;
}

int main(int argc, char **argv)
{
    const size_t sizes[] = {64, 100000, 1u << 20};
    double seconds = 5;
    int rank, rounds = 0;

    for (int i = 1; i + 1 < argc; i += 2) {
        if (0 == strcmp(argv[i], "-seconds")) seconds = atof(argv[i + 1]);
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    unsigned char *buf = mt_alloc(sizes[2]);
    MPI_Barrier(MPI_COMM_WORLD);
    printf("victim rank %d pid %d\n", rank, (int) getpid());
    fflush(stdout);
    const long before = rss_kb();
    int go = 1;
    const double end = now_s() + seconds;
    while (go) {
        const size_t n = sizes[rounds % 3];
        if (rank < 2) {
            const int peer = 1 - rank;
            if (0 == rank) {
                mt_fill(buf, n, 0, 1, rounds);
                MPI_Send(buf, (int) n, MPI_BYTE, 1, rounds, MPI_COMM_WORLD);
                MPI_Recv(buf, (int) n, MPI_BYTE, 1, rounds, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                mt_check("victim", buf, n, 1, 0, rounds);
            } else {
                MPI_Recv(buf, (int) n, MPI_BYTE, peer, rounds, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                mt_check("victim", buf, n, 0, 1, rounds);
                mt_fill(buf, n, 1, 0, rounds);
                MPI_Send(buf, (int) n, MPI_BYTE, peer, rounds, MPI_COMM_WORLD);
            }
        }
        ++rounds;
        go = now_s() < end;
        MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
    if (1 == rank) {
        printf("victim rank 1 rss_kb before %ld after %ld, %d rounds\n", before, rss_kb(), rounds);
        fflush(stdout);
    }
    free(buf);
    mt_pass("victim");
    MPI_Finalize();
    return 0;
}
