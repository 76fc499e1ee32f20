/* coll/tuned over rttcc: Bcast, Allreduce (exact integer and double sums),
 * Alltoall, Allgatherv, Reduce_scatter_block; small and multi-MiB sizes,
 * checked against locally computed results. */
#include "mpitest.h"

static int rank, n;

static void check_int(const char *what, long got, long want, size_t i)
{
    if (got != want) {
        mt_fail(what, "element %zu wrong (%zu)", i, (size_t) got);
    }
}

static void bcast(size_t s)
{
    unsigned char *b = mt_alloc(s);
    for (int root = 0; root < n; root += n > 2 ? n - 1 : 1) {
        if (rank == root) mt_fill(b, s, root, 0, 1);
        MPI_Bcast(b, (int) s, MPI_BYTE, root, MPI_COMM_WORLD);
        mt_check("bcast", b, s, root, 0, 1);
    }
    free(b);
}

static void allreduce(size_t count)
{
    long *in = malloc(count * sizeof *in), *out = malloc(count * sizeof *out);
    double *din = malloc(count * sizeof *din), *dout = malloc(count * sizeof *dout);
    for (size_t i = 0; i < count; ++i) {
        in[i] = (long) (i % 1000) * (rank + 1);
        din[i] = 0.5 * (double) (rank + 1);
    }
    MPI_Allreduce(in, out, (int) count, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(din, dout, (int) count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    mt_maybe_corrupt(out, count * sizeof *out);
    for (size_t i = 0; i < count; ++i) {
        check_int("allreduce", out[i], (long) (i % 1000) * n * (n + 1) / 2, i);
        if (dout[i] != 0.25 * n * (n + 1)) mt_fail("allreduce double", "element %zu (%zu)", i, 0);
    }
    free(in); free(out); free(din); free(dout);
}

static void alltoall(size_t block)
{
    unsigned char *s = mt_alloc(block * n), *r = mt_alloc(block * n);
    for (int p = 0; p < n; ++p) mt_fill(s + p * block, block, rank, p, 2);
    MPI_Alltoall(s, (int) block, MPI_BYTE, r, (int) block, MPI_BYTE, MPI_COMM_WORLD);
    for (int p = 0; p < n; ++p) mt_check("alltoall", r + p * block, block, p, rank, 2);
    free(s); free(r);
}

static void allgatherv(size_t base)
{
    int *counts = malloc(n * sizeof *counts), *displs = malloc(n * sizeof *displs), total = 0;
    for (int p = 0; p < n; ++p) {
        counts[p] = (int) (base * (p % 3) + p);  /* includes a zero-size contribution */
        displs[p] = total;
        total += counts[p];
    }
    unsigned char *s = mt_alloc(counts[rank]), *r = mt_alloc(total);
    mt_fill(s, counts[rank], rank, 0, 3);
    MPI_Allgatherv(s, counts[rank], MPI_BYTE, r, counts, displs, MPI_BYTE, MPI_COMM_WORLD);
    for (int p = 0; p < n; ++p) mt_check("allgatherv", r + displs[p], counts[p], p, 0, 3);
    free(s); free(r); free(counts); free(displs);
}

static void reduce_scatter(size_t count)
{
    int *in = malloc(count * n * sizeof *in), *out = malloc(count * sizeof *out);
    for (size_t i = 0; i < count * n; ++i) in[i] = (int) (i % 977) + rank;
    MPI_Reduce_scatter_block(in, out, (int) count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (size_t i = 0; i < count; ++i) {
        size_t g = rank * count + i;
        check_int("reduce_scatter", out[i], (long) (g % 977) * n + (long) n * (n - 1) / 2, i);
    }
    free(in); free(out);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    static const size_t sizes[] = {1, 100, 5000, 70000, 1u << 20, 3u << 20};
    for (int k = 0; k < 6; ++k) {
        bcast(sizes[k]);
        allreduce(sizes[k] / 8 + 1);
        alltoall(sizes[k] / n + 1);
        allgatherv(sizes[k] / n);
        reduce_scatter(sizes[k] / (4 * n) + 1);
    }
    mt_pass("collectives");
    MPI_Finalize();
    return 0;
}
