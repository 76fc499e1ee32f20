/* MPI_ANY_SOURCE / MPI_ANY_TAG: rank 0 receives from everyone without
 * naming sender or tag, identifies each message from its status, checks
 * MPI_Get_count and the bytes. */
#include "mpitest.h"

#define PER_PEER 12

static size_t size_of(int src, int i) { return (size_t) ((src * 7919 + i * 104729) % 200000); }

int main(int argc, char **argv)
{
    int rank, n;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    unsigned char *buf = mt_alloc(200000);
    if (0 == rank) {
        int *seen = calloc((size_t) n * PER_PEER, sizeof *seen);
        for (int m = 0; m < (n - 1) * PER_PEER; ++m) {
            MPI_Status st;
            int count;
            MPI_Recv(buf, 200000, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_BYTE, &count);
            if (st.MPI_SOURCE < 1 || st.MPI_SOURCE >= n || st.MPI_TAG < 0 || st.MPI_TAG >= PER_PEER) {
                mt_fail("anysource", "bad status source %zu tag %zu", (size_t) st.MPI_SOURCE, (size_t) st.MPI_TAG);
            }
            if ((size_t) count != size_of(st.MPI_SOURCE, st.MPI_TAG)) {
                mt_fail("anysource", "count %zu, expected %zu", (size_t) count, size_of(st.MPI_SOURCE, st.MPI_TAG));
            }
            if (seen[st.MPI_SOURCE * PER_PEER + st.MPI_TAG]++) {
                mt_fail("anysource", "message from %zu tag %zu arrived twice", (size_t) st.MPI_SOURCE, (size_t) st.MPI_TAG);
            }
            mt_check("anysource", buf, (size_t) count, st.MPI_SOURCE, 0, st.MPI_TAG);
        }
        free(seen);
    } else {
        for (int i = 0; i < PER_PEER; ++i) {
            mt_fill(buf, size_of(rank, i), rank, 0, i);
            MPI_Send(buf, (int) size_of(rank, i), MPI_BYTE, 0, i, MPI_COMM_WORLD);
        }
    }
    free(buf);
    mt_pass("anysource");
    MPI_Finalize();
    return 0;
}
