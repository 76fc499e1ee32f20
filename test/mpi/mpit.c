/* rttcc's counters through MPI_T: the performance variables exist, can be
 * read in a session, and grow by at least the bytes this rank sends. */
#include "mpitest.h"

/* A handle on a counter: MPI_T counters count from the handle's start. */
typedef struct {
    MPI_T_pvar_session session;
    MPI_T_pvar_handle handle;
} counter_t;

static void counter_open(counter_t *c, const char *name)
{
    int index, count;
    if (MPI_SUCCESS != MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &index)) {
        fprintf(stderr, "FAIL mpit: performance variable %s missing\n", name);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    MPI_T_pvar_session_create(&c->session);
    MPI_T_pvar_handle_alloc(c->session, index, NULL, &c->handle, &count);
}

static unsigned long counter_read_close(counter_t *c)
{
    unsigned long value = 0;
    MPI_T_pvar_read(c->session, c->handle, &value);
    MPI_T_pvar_handle_free(c->session, &c->handle);
    MPI_T_pvar_session_free(&c->session);
    return value;
}

int main(int argc, char **argv)
{
    int provided, rank, n;
    const size_t size = 1u << 20;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    counter_t tx, rx;
    counter_open(&tx, "btl_rttcc_bytes_tx");
    counter_open(&rx, "btl_rttcc_segs_rx");
    unsigned char *buf = mt_alloc(size);
    int peer = rank ^ 1;
    if (peer < n) {
        mt_fill(buf, size, rank, peer, 0);
        MPI_Sendrecv_replace(buf, (int) size, MPI_BYTE, peer, 0, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        mt_check("mpit", buf, size, peer, rank, 0);
    }
    unsigned long sent = counter_read_close(&tx), segs = counter_read_close(&rx);
    if (peer < n && sent < size) {
        mt_fail("mpit", "btl_rttcc_bytes_tx grew by %zu, less than the %zu bytes sent", sent, size);
    }
    if (peer < n && segs < size / 65000) {
        mt_fail("mpit", "btl_rttcc_segs_rx grew by %zu after receiving %zu bytes", segs, size);
    }
    free(buf);
    mt_pass("mpit");
    MPI_T_finalize(); /* before MPI_Finalize: 4.1.4 crashes the other way round */
    MPI_Finalize();
    return 0;
}
