/* The RTT table through MPI_T: after every rank exchanged verified data
 * with every other (or, with -idle, only waited inside MPI while probes
 * flowed), every peer's row is populated and plausible:
 * samples > 0, 0 < min <= srtt <= max < 10 s; the own entry is empty.
 *
 *   rtt_table [-idle SECONDS [-spin|-outside]] [-threads]
 *     -idle: no data; expects probe samples instead
 *     -spin: poll MPI without sleeping while idle
 *     -outside: idle outside MPI (no MPI call at all: only the engine's liveness agent probes)
 *     -threads: MPI_THREAD_MULTIPLE */
#include <unistd.h>

#include "mpitest.h"

/* One MPI_T performance variable bound to MPI_COMM_WORLD, read whole. */
static void read_row(const char *name, MPI_Datatype type, void *values, int n)
{
    int index, count;
    MPI_T_pvar_session session;
    MPI_T_pvar_handle handle;
    MPI_Comm comm = MPI_COMM_WORLD;

    if (MPI_SUCCESS != MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_GENERIC, &index)) {
        fprintf(stderr, "FAIL rtt_table: performance variable %s missing\n", name);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    MPI_T_pvar_session_create(&session);
    MPI_T_pvar_handle_alloc(session, index, &comm, &handle, &count);
    if (count != n) {
        mt_fail("rtt_table", "pvar bound to MPI_COMM_WORLD has %zu values for %zu ranks", (size_t) count, (size_t) n);
    }
    MPI_T_pvar_read(session, handle, values);
    MPI_T_pvar_handle_free(session, &handle);
    MPI_T_pvar_session_free(&session);
    (void) type;
}

/* Every pair exchanges verified messages of a few sizes. */
static void exchange(int rank, int n)
{
    const size_t sizes[] = {8, 4096, 262144};
    for (int round = 1; round < n; ++round) {
        int to = (rank + round) % n, from = (rank - round + n) % n;
        for (int s = 0; s < 3; ++s) {
            size_t len = sizes[s];
            unsigned char *out = mt_alloc(len), *in = mt_alloc(len);
            mt_fill(out, len, rank, to, s);
            MPI_Sendrecv(out, (int) len, MPI_BYTE, to, s, in, (int) len, MPI_BYTE, from, s, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
            mt_check("rtt_table", in, len, from, rank, s);
            free(out);
            free(in);
        }
    }
}

/* Each rank sends one verified message to the next. */
static void ring(int rank, int n)
{
    unsigned char out[64], in[64];
    int to = (rank + 1) % n, from = (rank - 1 + n) % n;
    mt_fill(out, sizeof out, rank, to, 9);
    MPI_Sendrecv(out, sizeof out, MPI_BYTE, to, 9, in, sizeof in, MPI_BYTE, from, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    mt_check("rtt_table", in, sizeof in, from, rank, 9);
}

/* Waits inside MPI (progress runs, so probes are sent and answered),
 * sleeping 200 us between polls unless `spin`. */
static void idle_in_mpi(double seconds, int spin)
{
    MPI_Request req;
    int flag = 0, rank, token = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Irecv(&token, 1, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_SELF, &req);
    double end = MPI_Wtime() + seconds;
    while (MPI_Wtime() < end) {
        MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
        if (!spin) {
            usleep(200);
        }
    }
    MPI_Send(&rank, 1, MPI_INT, 0, 99, MPI_COMM_SELF);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv)
{
    int provided, rank, n;
    double idle = 0;
    int spin = 0, outside = 0, threads = 0;
    for (int i = 1; i < argc; ++i) {
        if (0 == strcmp(argv[i], "-idle") && i + 1 < argc) {
            idle = atof(argv[i + 1]);
        }
        spin |= 0 == strcmp(argv[i], "-spin");
        outside |= 0 == strcmp(argv[i], "-outside");
        threads |= 0 == strcmp(argv[i], "-threads");
    }
    int level = threads ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE;
    MPI_T_init_thread(level, &provided);
    MPI_Init_thread(&argc, &argv, level, &provided);
    if (provided < level) {
        mt_fail("rtt_table", "MPI gave thread level %zu, asked %zu", (size_t) provided, (size_t) level);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (idle > 0 && outside) {
        MPI_Barrier(MPI_COMM_WORLD);
        usleep((useconds_t) (idle * 1e6)); /* computing: no MPI call, no progress from this thread */
        ring(rank, n);
    } else if (idle > 0) {
        idle_in_mpi(idle, spin);
        ring(rank, n); /* one verified message each: the corruption self-test must bite here too */
    } else {
        exchange(rank, n);
    }

    double *srtt = calloc(n, sizeof *srtt), *min = calloc(n, sizeof *min), *max = calloc(n, sizeof *max);
    unsigned long *samples = calloc(n, sizeof *samples), *probes = calloc(n, sizeof *probes);
    read_row("btl_rttcc_rtt_srtt", MPI_DOUBLE, srtt, n);
    read_row("btl_rttcc_rtt_min", MPI_DOUBLE, min, n);
    read_row("btl_rttcc_rtt_max", MPI_DOUBLE, max, n);
    read_row("btl_rttcc_rtt_samples", MPI_UNSIGNED_LONG, samples, n);
    read_row("btl_rttcc_rtt_probe_samples", MPI_UNSIGNED_LONG, probes, n);
    for (int j = 0; j < n; ++j) {
        unsigned long count = idle > 0 ? probes[j] : samples[j];
        if (j == rank) {
            if (0 != srtt[j] || 0 != samples[j]) {
                mt_fail("rtt_table", "own entry %zu is not empty (%zu samples)", (size_t) j, samples[j]);
            }
            continue;
        }
        if (0 == count) {
            mt_fail("rtt_table", idle > 0 ? "no probe samples for peer %zu (%zu)" : "no data samples for peer %zu (%zu)", (size_t) j, count);
        }
        if (!(min[j] > 0 && min[j] <= srtt[j] && srtt[j] <= max[j] && max[j] < 1e7)) {
            fprintf(stderr, "FAIL rtt_table on rank %d: peer %d min %.3f srtt %.3f max %.3f us\n", rank, j, min[j],
                    srtt[j], max[j]);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
    }
    free(srtt);
    free(min);
    free(max);
    free(samples);
    free(probes);
    mt_pass("rtt_table");
    MPI_T_finalize(); /* before MPI_Finalize: 4.1.4 crashes the other way round */
    MPI_Finalize();
    return 0;
}
