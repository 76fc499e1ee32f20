/*
 * engine_cost: what rttcc's engine costs the CPU per message, without the
 * noise of a busy-polled peer.  Two engines live in one process and one
 * thread on 127.0.0.1 and ping-pong a message: one sends (copied, as
 * eager), the other is progressed until it delivered, and back.  Nobody
 * spins waiting for the other, so what the process spends is the engines'
 * work on both sides plus the kernel's.  Prints per one-way message: the
 * wall time, the user and system CPU time (getrusage), and the user-space
 * instructions in all and per data segment (a perf counter; -1 where the
 * kernel offers none, as in most VMs).  Use it to compare engine builds
 * (LD_LIBRARY_PATH) or settings: instructions are nearly deterministic,
 * times are not.  After each repetition one more message is checked byte
 * for byte.
 *
 *   engine_cost [bytes=65536] [iters=2000] [reps=5]
 *
 * The engines' parameters come from the environment (engine_tool.h);
 * RTTCC_DATA_MTU=1500 cuts segments as an Ethernet path would (loopback
 * otherwise takes 64 KiB datagrams).  Build against the installed library:
 *
 *   gcc -O2 -Iinclude tools/engine_cost.c -L$(mpicc --showme:libdirs) \
 *       -lmca_common_rttcc -Wl,-rpath,$(mpicc --showme:libdirs)
 */
#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../tools/engine_tool.h"

static int arrived[2];
static const char *expected; /* when set, the next delivery must hold these bytes */
static size_t expected_len;

static void on_recv(void *user, uint32_t peer, uint8_t tag, const void *data, size_t len)
{
    (void) peer, (void) tag;
    if (expected && (len != expected_len || memcmp(data, expected, len))) {
        fprintf(stderr, "engine_cost: a %zu-byte message arrived as %zu bytes or changed\n", expected_len, len);
        exit(1);
    }
    arrived[*(const int *) user] = 1;
}

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static double cpu_us(int user)
{
    struct rusage r;
    getrusage(RUSAGE_SELF, &r);
    const struct timeval t = user ? r.ru_utime : r.ru_stime;
    return t.tv_sec * 1e6 + t.tv_usec;
}

/* A counter of this process's user-space instructions, or -1. */
static int instruction_counter(void)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_HARDWARE;
    a.config = PERF_COUNT_HW_INSTRUCTIONS;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    return (int) syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
}

static uint64_t instructions(int fd)
{
    uint64_t v = 0;
    return fd >= 0 && read(fd, &v, sizeof v) == sizeof v ? v : 0;
}

static const int ids[2] = {0, 1};

static rttcc_engine_t *make_engine(uint32_t self)
{
    const rttcc_callbacks_t cb = {.on_recv = on_recv, .user = (void *) &ids[self]};
    return engine_tool_make("engine_cost", self, "127.0.0.1/32", &cb);
}

static void connect_engines(rttcc_engine_t *e[2])
{
    for (int i = 0; i < 2; ++i) {
        char addr[512], err[256];
        const int len = rttcc_engine_local_address(e[1 - i], addr, sizeof addr);
        if (len <= 0 || RTTCC_OK != rttcc_engine_add_peer(e[i], (uint32_t) (1 - i), addr, (size_t) len, err, sizeof err)) {
            fprintf(stderr, "engine_cost: add_peer: %s\n", len <= 0 ? "no address" : err);
            exit(1);
        }
    }
}

/* e[from] sends `bytes` to e[1 - from]; both are progressed (the sender
 * for its ACKs) until the receiver delivered it. */
static void one_way(rttcc_engine_t *e[2], int from, const char *buf, size_t bytes)
{
    struct iovec iov = {(void *) buf, bytes};
    int rc;
    while (RTTCC_ERR_BUSY == (rc = rttcc_engine_send(e[from], (uint32_t) (1 - from), 1, &iov, 1, NULL))) {
        rttcc_engine_progress(e[1 - from]);
        rttcc_engine_progress(e[from]);
    }
    if (rc < 0) {
        fprintf(stderr, "engine_cost: send: %d\n", rc);
        exit(1);
    }
    for (long spins = 0; !arrived[1 - from]; ++spins) {
        rttcc_engine_progress(e[1 - from]);
        rttcc_engine_progress(e[from]);
        if (spins > 100000000) {
            fprintf(stderr, "engine_cost: a %zu-byte message did not arrive\n", bytes);
            exit(1);
        }
    }
    arrived[1 - from] = 0;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    const size_t bytes = argc > 1 ? strtoul(argv[1], NULL, 0) : 65536;
    const int iters = argc > 2 ? atoi(argv[2]) : 2000;
    const int reps = argc > 3 && atoi(argv[3]) > 0 ? (atoi(argv[3]) < 64 ? atoi(argv[3]) : 64) : 5;
    char *buf = tool_page_buffer("engine_cost", bytes);
    if (iters < 1 || (argc > 1 && !bytes)) {
        fprintf(stderr, "usage: engine_cost [bytes] [iters] [reps]\n");
        return 2;
    }
    for (size_t i = 0; i < bytes; ++i) buf[i] = (char) (i * 7 + 1);
    rttcc_engine_t *e[2] = {make_engine(0), make_engine(1)};
    connect_engines(e);
    const size_t seg = rttcc_engine_peer_segment_size(e[0], 1);
    const double segments = bytes && seg ? (double) ((bytes + seg - 1) / seg) : 1;
    const int counter = instruction_counter();
    double wall[64], user[64], sys[64], ins[64];
    for (int r = 0; r < reps; ++r) {
        for (int i = 0; i < iters / 10 + 1; ++i) one_way(e, i & 1, buf, bytes);  // warm: windows open
        const double w0 = now_us(), u0 = cpu_us(1), s0 = cpu_us(0);
        const uint64_t i0 = instructions(counter);
        for (int i = 0; i < iters; ++i) one_way(e, i & 1, buf, bytes);
        ins[r] = (double) (instructions(counter) - i0) / iters;
        wall[r] = (now_us() - w0) / iters;
        user[r] = (cpu_us(1) - u0) / iters;
        sys[r] = (cpu_us(0) - s0) / iters;
        expected = buf, expected_len = bytes;
        one_way(e, r & 1, buf, bytes);
        expected = NULL;
    }
    qsort(wall, reps, sizeof *wall, cmp_double);
    qsort(user, reps, sizeof *user, cmp_double);
    qsort(sys, reps, sizeof *sys, cmp_double);
    qsort(ins, reps, sizeof *ins, cmp_double);
    printf("# bytes segments wall_us user_us sys_us user_instructions instructions_per_segment (medians of %d)\n", reps);
    printf("%zu %.0f %.2f %.2f %.2f %.0f %.0f\n", bytes, segments, wall[reps / 2], user[reps / 2], sys[reps / 2],
           counter >= 0 ? ins[reps / 2] : -1.0, counter >= 0 ? ins[reps / 2] / segments : -1.0);
    rttcc_engine_destroy(e[0]);
    rttcc_engine_destroy(e[1]);
    free(buf);
    return 0;
}
