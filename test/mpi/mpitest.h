/* Shared helpers of the MPI tests: deterministic patterns, verification
 * that aborts with the first bad offset, and the PASS line. */
#ifndef RTTCC_MPITEST_H
#define RTTCC_MPITEST_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Byte `i` of message `msg` from `from` to `to`. */
static inline unsigned char mt_byte(int from, int to, int msg, size_t i)
{
    return (unsigned char) (from * 37 + to * 11 + msg * 5 + i + (i >> 8) + (i >> 16));
}

static inline void mt_fill(unsigned char *buf, size_t n, int from, int to, int msg)
{
    for (size_t i = 0; i < n; ++i) {
        buf[i] = mt_byte(from, to, msg, i);
    }
}

static inline void mt_fail(const char *test, const char *fmt, size_t a, size_t b)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fprintf(stderr, "FAIL %s on rank %d: ", test, rank);
    fprintf(stderr, fmt, a, b);
    fprintf(stderr, "\n");
    MPI_Abort(MPI_COMM_WORLD, 3);
}

/* RTTCC_MPITEST_CORRUPT=1 flips one received byte before every check: the
 * runner's self-test proves that every test notices corruption. */
static inline void mt_maybe_corrupt(void *buf, size_t bytes)
{
    if (bytes > 0 && getenv("RTTCC_MPITEST_CORRUPT")) {
        ((unsigned char *) buf)[bytes / 2] ^= 0x40;
    }
}

static inline void mt_check(const char *test, const unsigned char *buf, size_t n, int from, int to, int msg)
{
    mt_maybe_corrupt((void *) buf, n);
    for (size_t i = 0; i < n; ++i) {
        if (buf[i] != mt_byte(from, to, msg, i)) {
            mt_fail(test, "byte %zu of a %zu-byte message is wrong", i, n);
        }
    }
}

static inline double mt_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Computes (no MPI call, no sleep) for `seconds`: a rank away from MPI. */
static inline void mt_compute(double seconds)
{
    volatile double x = 1.0;
    const double end = mt_now_s() + seconds;
    while (mt_now_s() < end) {
        for (int i = 0; i < 10000; ++i) {
            x = x * 1.0000001 + 1e-9;
        }
    }
}

static inline unsigned char *mt_alloc(size_t n)
{
    unsigned char *p = malloc(n ? n : 1);
    if (NULL == p) {
        mt_fail("alloc", "out of memory for %zu bytes (%zu)", n, 0);
    }
    return p;
}

static inline void mt_pass(const char *test)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    if (0 == rank) {
        printf("PASS %s\n", test);
        fflush(stdout);
    }
}

#endif
