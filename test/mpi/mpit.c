/* rttcc's counters through MPI_T: the performance variables exist, can be
 * read in a session, and grow by at least the bytes this rank sends.
 * Each component's variables count its own engine: btl_rttcc_* (the
 * default) under pml/ob1, mtl_rttcc_* (-component mtl_rttcc) under pml/cm.
 * -gets: the 1 MiB message came by ob1's RGET, btl_rttcc_rdma_get_bytes
 * grew by all of it; -no-gets: it did not grow (btl_rttcc_flags without get). */
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
    const char *component = "btl_rttcc";
    char tx_name[64], rx_name[64];
    int gets = -1; /* -gets 1, -no-gets 0, else not checked */
    for (int i = 1; i < argc; ++i) {
        if (0 == strcmp(argv[i], "-component") && i + 1 < argc) {
            component = argv[i + 1];
        } else if (0 == strcmp(argv[i], "-gets") || 0 == strcmp(argv[i], "-no-gets")) {
            gets = 0 == strcmp(argv[i], "-gets");
        }
    }
    snprintf(tx_name, sizeof tx_name, "%s_bytes_tx", component);
    snprintf(rx_name, sizeof rx_name, "%s_segs_rx", component);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    counter_t tx, rx, got;
    counter_open(&tx, tx_name);
    counter_open(&rx, rx_name);
    if (gets >= 0) {
        counter_open(&got, "btl_rttcc_rdma_get_bytes");
    }
    unsigned char *buf = mt_alloc(size);
    int peer = rank ^ 1;
    if (peer < n) {
        mt_fill(buf, size, rank, peer, 0);
        MPI_Sendrecv_replace(buf, (int) size, MPI_BYTE, peer, 0, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        mt_check("mpit", buf, size, peer, rank, 0);
    }
    unsigned long sent = counter_read_close(&tx), segs = counter_read_close(&rx);
    unsigned long read = gets >= 0 ? counter_read_close(&got) : 0;
    char why[128];
    if (peer < n && 1 == gets && read < size) {
        mt_fail("mpit", "btl_rttcc_rdma_get_bytes grew by %zu, not the %zu bytes received by RGET", read, size);
    }
    if (peer < n && 0 == gets && 0 != read) {
        mt_fail("mpit", "btl_rttcc_rdma_get_bytes grew by %zu without btl_rttcc's get (%zu bytes)", read, size);
    }
    if (peer < n && sent < size) {
        snprintf(why, sizeof why, "%s grew by %%zu, less than the %%zu bytes sent", tx_name);
        mt_fail("mpit", why, sent, size);
    }
    if (peer < n && segs < size / 65000) {
        snprintf(why, sizeof why, "%s grew by %%zu after receiving %%zu bytes", rx_name);
        mt_fail("mpit", why, segs, size);
    }
    free(buf);
    mt_pass("mpit");
    MPI_T_finalize(); /* before MPI_Finalize: 4.1.4 crashes the other way round */
    MPI_Finalize();
    return 0;
}
