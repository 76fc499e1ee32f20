/* A peer that stops answering: rank 1 freezes itself (SIGSTOP, or dies
 * with SIGKILL when run with "kill") after a barrier while rank 0 sends to
 * it.  The job must end with an error naming the problem within a bounded
 * time, never hang: a frozen peer is rttcc's to detect (its help message), a
 * dead one is also seen by mpirun.  With "get", rank 0 reads rank 1's window
 * instead (passive target): its gets wait for replies that never come, and
 * must fail when the peer is declared dead.  With "fence", rank 0 puts into
 * rank 1's window and fences: its fence waits for a FENCE that never comes
 * and must end too (the BTL ends the job, or the fence fails). */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank;
    size_t size = 4u << 20;
    const char *how = argc > 1 ? argv[1] : "";
    const int by_get = 0 == strcmp(how, "get"), by_fence = 0 == strcmp(how, "fence");
    char *buf = calloc(size, 1), *base;
    MPI_Win win = MPI_WIN_NULL;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (by_get || by_fence) {
        MPI_Win_allocate((MPI_Aint) size, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
        MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
        if (0 == rank && by_get) { /* the lock is held before the peer goes: what waits then is the gets */
            MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
            MPI_Get(buf, 1, MPI_BYTE, 1, 0, 1, MPI_BYTE, win);
            MPI_Win_flush(1, win);
        }
        if (by_fence) {
            MPI_Win_fence(0, win);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (1 == rank) {
        raise(0 == strcmp(how, "kill") ? SIGKILL : SIGSTOP);
    } else if (0 == rank && by_get) {
        for (int i = 0; i < 100; ++i) {
            for (int k = 0; k < 8; ++k) {
                MPI_Get(buf + k * (size / 8), (int) (size / 8), MPI_BYTE, 1, 0, (int) (size / 8), MPI_BYTE, win);
            }
            const int rc = MPI_Win_flush(1, win);
            if (MPI_SUCCESS != rc) {
                char what[MPI_MAX_ERROR_STRING];
                int len;
                MPI_Error_string(rc, what, &len);
                printf("gets from a dead peer failed: %s\n", what);
                fflush(stdout);
                MPI_Abort(MPI_COMM_WORLD, 3);
            }
        }
        printf("UNEXPECTED: every get from a frozen peer completed\n");
    } else if (0 == rank && by_fence) {
        MPI_Put(buf, 8, MPI_BYTE, 1, 0, 8, MPI_BYTE, win);
        const int rc = MPI_Win_fence(0, win);
        char what[MPI_MAX_ERROR_STRING] = "none";
        int len;
        if (MPI_SUCCESS != rc) {
            MPI_Error_string(rc, what, &len);
        }
        printf("%s: %s\n", MPI_SUCCESS != rc ? "a fence with a dead peer failed" : "UNEXPECTED: a fence with a frozen peer completed", what);
        fflush(stdout);
        MPI_Abort(MPI_COMM_WORLD, 3);
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
