/* Non-contiguous datatypes: vector, indexed, struct with gaps and a resized
 * type are sent and received as different but matching type signatures;
 * every element is checked and the gaps of receive buffers stay untouched. */
#include "mpitest.h"

#define N 300000 /* ints per message: 1.2 MB of data */
#define GAP 0x5a5a5a5a

static int value(int from, int i) { return from * 1000003 + i * 7 + 1; }

/* The elements a vector (stride 3) of N ints addresses in a 3N buffer. */
static void vector_type(MPI_Datatype *t)
{
    MPI_Type_vector(N, 1, 3, MPI_INT, t);
    MPI_Type_commit(t);
}

/* N ints as struct {int a; char pad[12]; } with extent 16 (resized). */
static void struct_type(MPI_Datatype *t)
{
    MPI_Datatype s;
    int len = 1;
    MPI_Aint disp = 0;
    MPI_Datatype type = MPI_INT;
    MPI_Type_create_struct(1, &len, &disp, &type, &s);
    MPI_Type_create_resized(s, 0, 16, t);
    MPI_Type_free(&s);
    MPI_Type_commit(t);
}

/* N ints in blocks of 1..4 with holes between them: returns the span. */
static size_t indexed_type(MPI_Datatype *t, int *blocks, int *displs, int *nblocks)
{
    int placed = 0, pos = 0, b = 0;
    while (placed < N) {
        int len = 1 + b % 4;
        if (placed + len > N) {
            len = N - placed;
        }
        blocks[b] = len;
        displs[b] = pos;
        placed += len;
        pos += len + 1 + b % 3;
        ++b;
    }
    *nblocks = b;
    MPI_Type_indexed(b, blocks, displs, MPI_INT, t);
    MPI_Type_commit(t);
    return (size_t) pos;
}

int main(int argc, char **argv)
{
    int rank, n;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int peer = rank ^ 1;
    MPI_Datatype vec, str, idx;
    int *blocks = malloc(N * sizeof(int)), *displs = malloc(N * sizeof(int)), nblocks;
    vector_type(&vec);
    struct_type(&str);
    size_t span = indexed_type(&idx, blocks, displs, &nblocks);
    int *big = malloc(4 * (size_t) N * sizeof(int) + span * sizeof(int));
    int *flat = malloc((size_t) N * sizeof(int));

    for (int round = 0; round < 3 && peer < n; ++round) {
        MPI_Datatype t = round == 0 ? vec : round == 1 ? str : idx;
        int count = round == 1 ? N : 1; /* the struct type holds one element */
        size_t stride = round == 0 ? 3 : round == 1 ? 4 : 0;
        size_t len = round == 2 ? span : N * stride;
        if (rank < peer) { /* send typed, receive flat */
            for (size_t i = 0; i < len; ++i) big[i] = GAP;
            for (int b = 0, i = 0; i < N; ++b) {
                for (int j = 0; j < (stride ? 1 : blocks[b]); ++j, ++i) {
                    big[stride ? (size_t) i * stride : (size_t) displs[b] + j] = value(rank, i);
                }
            }
            MPI_Send(big, count, t, peer, round, MPI_COMM_WORLD);
            MPI_Recv(flat, N, MPI_INT, peer, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            mt_maybe_corrupt(flat, N * sizeof(int));
            for (int i = 0; i < N; ++i) {
                if (flat[i] != value(peer, i)) mt_fail("datatypes", "flat element %zu (round %zu)", (size_t) i, (size_t) round);
            }
        } else { /* receive typed, send flat */
            for (size_t i = 0; i < len; ++i) big[i] = GAP;
            MPI_Recv(big, count, t, peer, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            mt_maybe_corrupt(big, sizeof(int)); /* the first element is always data */
            size_t filled = 0;
            for (int b = 0, i = 0; i < N; ++b) {
                for (int j = 0; j < (stride ? 1 : blocks[b]); ++j, ++i) {
                    size_t at = stride ? (size_t) i * stride : (size_t) displs[b] + j;
                    if (big[at] != value(peer, i)) mt_fail("datatypes", "typed element %zu (round %zu)", (size_t) i, (size_t) round);
                    ++filled;
                }
            }
            size_t gaps = 0;
            for (size_t i = 0; i < len; ++i) gaps += big[i] == GAP;
            if (gaps != len - filled) mt_fail("datatypes", "%zu gap elements overwritten (round %zu)", len - filled - gaps, (size_t) round);
            for (int i = 0; i < N; ++i) flat[i] = value(rank, i);
            MPI_Send(flat, N, MPI_INT, peer, round, MPI_COMM_WORLD);
        }
    }
    MPI_Type_free(&vec);
    MPI_Type_free(&str);
    MPI_Type_free(&idx);
    free(big);
    free(flat);
    free(blocks);
    free(displs);
    mt_pass("datatypes");
    MPI_Finalize();
    return 0;
}
