/* A rank that computes outside MPI is alive.  Rank 0 sends rank 1 a
 * message and waits for the reply; rank 1 computes for -busy seconds
 * (a spin, no MPI call) where -when says:
 *   after:    after its receive, before the reply (the ACK of what it
 *             received is owed while it computes);
 *   before:   before its receive (rank 0's message is in flight towards it);
 *   inflight: before its receives, while rank 0 has -count messages in
 *             flight towards it (MPI_Isend) and waits for them;
 * over -rounds rounds, every byte checked both ways (-announce 1: rank 0
 * prints "busy_peer: started" once the ranks have met).  Before and inflight,
 * rank 0 sends 0.5 s into rank 1's computation, so that its data meets a
 * rank that is away for sure.  The job must run to the end whatever the
 * length of the computation: rttcc may not take a busy rank for a dead one. */
#include "mpitest.h"

#include <unistd.h>

int main(int argc, char **argv)
{
    size_t size = 64;
    double busy = 5;
    const char *when = "after";
    int rounds = 1, count = 4, announce = 0, rank, nprocs;

    for (int i = 1; i + 1 < argc; i += 2) {
        if (0 == strcmp(argv[i], "-size")) size = strtoul(argv[i + 1], NULL, 0);
        else if (0 == strcmp(argv[i], "-busy")) busy = atof(argv[i + 1]);
        else if (0 == strcmp(argv[i], "-when")) when = argv[i + 1];
        else if (0 == strcmp(argv[i], "-rounds")) rounds = atoi(argv[i + 1]);
        else if (0 == strcmp(argv[i], "-count")) count = atoi(argv[i + 1]);
        else if (0 == strcmp(argv[i], "-announce")) announce = atoi(argv[i + 1]);
    }
    const int inflight = 0 == strcmp(when, "inflight");
    const int msgs = inflight ? count : 1;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (nprocs != 2) {
        mt_fail("busy_peer", "needs 2 ranks, got %zu%zu", (size_t) nprocs, 0);
    }
    unsigned char *buf = mt_alloc(size * msgs);
    MPI_Request *reqs = malloc(sizeof *reqs * msgs);
    MPI_Barrier(MPI_COMM_WORLD);
    if (announce && 0 == rank) {
        printf("busy_peer: started\n"); /* the ranks are up and talk: a fault can be injected now */
        fflush(stdout);
    }
    const double start = mt_now_s();
    for (int r = 0; r < rounds; ++r) {
        if (0 == rank) {
            if (0 != strcmp(when, "after") && busy > 1) usleep(500000);
            for (int m = 0; m < msgs; ++m) {
                mt_fill(buf + m * size, size, 0, 1, r * msgs + m);
                MPI_Isend(buf + m * size, (int) size, MPI_BYTE, 1, m, MPI_COMM_WORLD, &reqs[m]);
            }
            MPI_Waitall(msgs, reqs, MPI_STATUSES_IGNORE);
            MPI_Recv(buf, (int) size, MPI_BYTE, 1, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            mt_check("busy_peer", buf, size, 1, 0, r);
        } else {
            if (0 != strcmp(when, "after")) mt_compute(busy);
            for (int m = 0; m < msgs; ++m) {
                MPI_Recv(buf + m * size, (int) size, MPI_BYTE, 0, m, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                mt_check("busy_peer", buf + m * size, size, 0, 1, r * msgs + m);
            }
            if (0 == strcmp(when, "after")) mt_compute(busy);
            mt_fill(buf, size, 1, 0, r);
            MPI_Send(buf, (int) size, MPI_BYTE, 0, 99, MPI_COMM_WORLD);
        }
    }
    if (0 == rank) {
        printf("busy_peer: %d round(s), %zu bytes x %d, rank 1 computed %.1f s %s: %.1f s in all\n", rounds,
               size, msgs, busy, when, mt_now_s() - start);
    }
    free(reqs);
    free(buf);
    mt_pass("busy_peer");
    MPI_Finalize();
    return 0;
}
