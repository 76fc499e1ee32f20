/*
 * rttcc_bench: OSU-style latency and bandwidth between pairs of ranks
 * (0-1, 2-3, ...), verifying the data it moves.
 *
 *   mpirun -np 2 ./rttcc_bench [-min BYTES] [-max BYTES] [-reps N] [-bibw] [-offset N]
 *
 * Prints one line per size: size, one-way latency (us, median of N
 * repetitions of a timed ping-pong loop, pair 0-1) and bandwidth (MB/s,
 * median of N repetitions of a 64-message window; the even rank of each
 * pair sends).  With more than one pair every pair runs at once and the
 * bandwidth is their sum, as osu_mbw_mr's; with -bibw both ranks of a
 * pair send their window at once, as osu_bibw.  The buffers start on a
 * page, as the OSU benchmarks allocate them; -offset N starts them N bytes
 * into one (16: where malloc puts a large block).  RTTCC_MPITEST_CORRUPT=1
 * flips one received byte (self-test of the check).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../tools/tool_buffer.h"

#define WINDOW 64

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int iterations(size_t size)
{
    return size <= 8192 ? 2000 : size <= 1 << 20 ? 200 : 40;
}

static int corrupt_once; /* RTTCC_MPITEST_CORRUPT: flip the first checked byte, once */

static void check(unsigned char *buf, size_t size, unsigned char seed)
{
    if (corrupt_once && size) {
        buf[0] ^= 0x40;
        corrupt_once = 0;
    }
    for (size_t i = 0; i < size; ++i) {
        if (buf[i] != (unsigned char) (seed + i)) {
            fprintf(stderr, "FAIL rttcc_bench: corrupt byte %zu of a %zu-byte message\n", i, size);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
}

static double latency_us(int rank, unsigned char *buf, size_t size)
{
    int iters = iterations(size), warm = iters / 10, peer = rank ^ 1;
    double t0 = 0;
    for (int i = 0; i < iters + warm; ++i) {
        if (i == warm) {
            t0 = MPI_Wtime();
        }
        if (0 == rank % 2) {
            MPI_Send(buf, (int) size, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
            MPI_Recv(buf, (int) size, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, (int) size, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, (int) size, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
        }
    }
    check(buf, size, (unsigned char) size);
    return (MPI_Wtime() - t0) * 1e6 / (2.0 * iters);
}

/* The bytes this rank sent per second in a window test against its pair
 * (0 for a rank that only receives). */
static double bandwidth_mbs(int rank, unsigned char *buf, unsigned char *rbuf, size_t size, int bidirectional)
{
    int iters = iterations(size) / 20 + 2, peer = rank ^ 1, sends = bidirectional || 0 == rank % 2;
    int recvs = bidirectional || 1 == rank % 2, n;
    MPI_Request req[2 * WINDOW];
    double t0 = 0;
    char ack;
    for (int i = 0; i < iters + 1; ++i) {
        if (1 == i) {
            t0 = MPI_Wtime();
        }
        n = 0;
        for (int w = 0; w < WINDOW; ++w) {
            if (recvs) {
                MPI_Irecv(rbuf, (int) size, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &req[n++]);
            }
            if (sends) {
                MPI_Isend(buf, (int) size, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &req[n++]);
            }
        }
        MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
        if (0 == rank % 2) {
            MPI_Recv(&ack, 1, MPI_CHAR, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Send(&ack, 1, MPI_CHAR, peer, 3, MPI_COMM_WORLD);
        }
    }
    double seconds = MPI_Wtime() - t0;
    if (recvs) {
        check(rbuf, size, (unsigned char) size);
    }
    return sends ? (double) size * WINDOW * iters / seconds / 1e6 : 0;
}

int main(int argc, char **argv)
{
    size_t min = 0, max = 4u << 20, offset = 0;
    int reps = 5, rank, nprocs, bidirectional = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    corrupt_once = NULL != getenv("RTTCC_MPITEST_CORRUPT") && 1 == rank;
    int bad = 0;
    for (int i = 1; i < argc; ++i) {
        if (0 == strcmp(argv[i], "-bibw")) {
            bidirectional = 1;
        } else if (i + 1 < argc && 0 == strcmp(argv[i], "-min")) {
            min = strtoull(argv[++i], NULL, 0);
        } else if (i + 1 < argc && 0 == strcmp(argv[i], "-max")) {
            max = strtoull(argv[++i], NULL, 0);
        } else if (i + 1 < argc && 0 == strcmp(argv[i], "-offset")) {
            offset = strtoull(argv[++i], NULL, 0);
        } else if (i + 1 < argc && 0 == strcmp(argv[i], "-reps")) {
            reps = atoi(argv[++i]);
        } else {
            bad = 1;
        }
    }
    const size_t page = (size_t) sysconf(_SC_PAGESIZE);
    if (bad || nprocs < 2 || nprocs % 2 || reps < 1 || reps > 99 || offset >= page) {
        if (0 == rank) {
            fprintf(stderr, "usage: mpirun -np 2|4|... rttcc_bench [-min BYTES] [-max BYTES] [-reps 1..99] [-bibw] [-offset 0..PAGE-1]\n");
        }
        MPI_Finalize();
        return 1;
    }
    unsigned char *spage = tool_page_buffer("rttcc_bench", max + page), *rpage = tool_page_buffer("rttcc_bench", max + page);
    unsigned char *buf = spage + offset, *rbuf = rpage + offset;
    if (0 == rank) {
        printf("# %-10s %14s %14s\n", "bytes", "latency_us", "bandwidth_MB/s");
    }
    for (size_t size = min; size <= max; size = size ? size * 2 : 1) {
        double lat[99], bw[99];
        for (int r = 0; r < reps; ++r) {
            for (size_t i = 0; i < size; ++i) {
                buf[i] = (unsigned char) (size + i);
            }
            lat[r] = latency_us(rank, buf, size);
            double mine = size ? bandwidth_mbs(rank, buf, rbuf, size, bidirectional) : 0;
            MPI_Reduce(&mine, &bw[r], 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        }
        if (0 == rank) {
            printf("  %-10zu %14.2f %14.1f\n", size, median(lat, reps), median(bw, reps));
            fflush(stdout);
        }
    }
    if (0 == rank) {  /* on stderr: stdout is the table compare.sh reads */
        fprintf(stderr, "PASS rttcc_bench: every window and ping-pong verified\n");
    }
    free(spage);
    free(rpage);
    MPI_Finalize();
    return 0;
}
