/* MPI_Probe / MPI_Iprobe sized receives, and matched probes
 * (MPI_Mprobe + MPI_Mrecv, MPI_Improbe + MPI_Imrecv). */
#include "mpitest.h"

static size_t size_of(int src, int i) { return (size_t) ((src + 1) * (i + 3) * 4099) % 400000; }

static void receive_probed(int mode, int i)
{
    MPI_Status st;
    MPI_Message msg = MPI_MESSAGE_NULL;
    int count, flag = 0;
    switch (mode) {
    case 0:
        MPI_Probe(MPI_ANY_SOURCE, i, MPI_COMM_WORLD, &st);
        break;
    case 1:
        while (!flag) {
            MPI_Iprobe(MPI_ANY_SOURCE, i, MPI_COMM_WORLD, &flag, &st);
        }
        break;
    case 2:
        MPI_Mprobe(MPI_ANY_SOURCE, i, MPI_COMM_WORLD, &msg, &st);
        break;
    default:
        while (!flag) {
            MPI_Improbe(MPI_ANY_SOURCE, i, MPI_COMM_WORLD, &flag, &msg, &st);
        }
    }
    MPI_Get_count(&st, MPI_BYTE, &count);
    if ((size_t) count != size_of(st.MPI_SOURCE, i)) {
        mt_fail("probe", "probed count %zu, expected %zu", (size_t) count, size_of(st.MPI_SOURCE, i));
    }
    unsigned char *buf = mt_alloc((size_t) count);
    if (mode < 2) {
        MPI_Recv(buf, count, MPI_BYTE, st.MPI_SOURCE, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (mode == 2) {
        MPI_Mrecv(buf, count, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
    } else {
        MPI_Request r;
        MPI_Imrecv(buf, count, MPI_BYTE, &msg, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    mt_check("probe", buf, (size_t) count, st.MPI_SOURCE, 0, i);
    free(buf);
}

int main(int argc, char **argv)
{
    int rank, n;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    for (int i = 0; i < 16; ++i) {
        if (0 == rank) {
            for (int m = 1; m < n; ++m) {
                receive_probed(i % 4, i);
            }
        } else {
            unsigned char *buf = mt_alloc(size_of(rank, i));
            mt_fill(buf, size_of(rank, i), rank, 0, i);
            MPI_Send(buf, (int) size_of(rank, i), MPI_BYTE, 0, i, MPI_COMM_WORLD);
            free(buf);
        }
    }
    mt_pass("probe");
    MPI_Finalize();
    return 0;
}
