/* MPI_THREAD_MULTIPLE: 4 threads per rank, each exchanging messages (small
 * and large) with the same thread index on the partner rank, own tags. */
#include <pthread.h>

#include "mpitest.h"

#define THREADS 4
#define ROUNDS 60

static int rank, nprocs;

static void *exchange(void *arg)
{
    int t = (int) (long) arg, peer = rank ^ 1;
    for (int r = 0; r < ROUNDS && peer < nprocs; ++r) {
        size_t s = r % 5 == 0 ? 300000 : (size_t) (r * 997 + t * 31) % 9000;
        int tag = t * 1000 + r;
        unsigned char *out = mt_alloc(s), *in = mt_alloc(s);
        MPI_Request q[2];
        mt_fill(out, s, rank, peer, tag);
        MPI_Irecv(in, (int) s, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &q[0]);
        MPI_Isend(out, (int) s, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &q[1]);
        MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
        mt_check("thread_multiple", in, s, peer, rank, tag);
        free(out);
        free(in);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    pthread_t th[THREADS];
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (MPI_THREAD_MULTIPLE != provided) {
        fprintf(stderr, "FAIL thread_multiple: MPI_THREAD_MULTIPLE not provided (%d)\n", provided);
        MPI_Abort(MPI_COMM_WORLD, 4);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    for (long t = 0; t < THREADS; ++t) {
        pthread_create(&th[t], NULL, exchange, (void *) t);
    }
    for (int t = 0; t < THREADS; ++t) {
        pthread_join(th[t], NULL);
    }
    mt_pass("thread_multiple");
    MPI_Finalize();
    return 0;
}
