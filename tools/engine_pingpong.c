/*
 * engine_pingpong: rttcc's engine alone, with no MPI above it, ping-ponging
 * a message between two processes (fork) over its UDP wire, busy-polled.
 * Between tools/udp_pingpong (the kernel's path) and an MPI ping-pong over
 * btl_rttcc (the engine plus ob1 and opal_progress) it shows what each
 * layer costs.  Prints the median one-way latency in microseconds over
 * `reps` runs of `iters` round trips.
 *
 *   engine_pingpong [bytes=8] [iters=20000] [reps=5] [address=127.0.0.1]
 *                   [echo_netns echo_address]
 *
 * With echo_netns, the echo side runs in that network namespace (a testbed
 * host) at echo_address, and this side (run in another host's namespace,
 * at `address`) measures the path between them.  The engine's parameters
 * come from the environment as rttcc_<name> would (RTTCC_AUTH=none, ...:
 * any RTTCC_<NAME> the config knows).  Build against the installed library:
 *
 *   gcc -O2 -Iinclude tools/engine_pingpong.c -L$(mpicc --showme:libdirs) \
 *       -lmca_common_rttcc -Wl,-rpath,$(mpicc --showme:libdirs)
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../tools/engine_tool.h"
#include "../tools/udp_tool.h"

static volatile int arrived;

static void on_recv(void *user, uint32_t peer, uint8_t tag, const void *data, size_t len)
{
    (void) user, (void) peer, (void) tag, (void) data, (void) len;
    arrived = 1;
}

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static rttcc_engine_t *make_engine(uint32_t self, const char *address)
{
    char cidr[64];
    snprintf(cidr, sizeof cidr, "%s/32", address);
    const rttcc_callbacks_t cb = {.on_recv = on_recv};
    return engine_tool_make("engine_pingpong", self, cidr, &cb);
}

/* Sends `bytes` (copied) and waits for the answer. */
static void send_one(rttcc_engine_t *e, uint32_t peer, const char *buf, size_t bytes)
{
    struct iovec iov = {(void *) buf, bytes};
    int rc;
    while (RTTCC_ERR_BUSY == (rc = rttcc_engine_send(e, peer, 1, &iov, 1, NULL))) rttcc_engine_progress(e);
    if (rc < 0) {
        fprintf(stderr, "engine_pingpong: send: %d\n", rc);
        exit(1);
    }
}

static void wait_one(rttcc_engine_t *e)
{
    while (!arrived) rttcc_engine_progress(e);
    arrived = 0;
}

int main(int argc, char **argv)
{
    const size_t bytes = argc > 1 ? strtoul(argv[1], NULL, 0) : 8;
    const int iters = argc > 2 ? atoi(argv[2]) : 20000;
    const int reps = argc > 3 ? atoi(argv[3]) : 5;
    const char *addr = argc > 4 ? argv[4] : "127.0.0.1";
    const char *echo_ns = argc > 6 ? argv[5] : NULL;
    const char *echo_addr = argc > 6 ? argv[6] : addr;
    int to_child[2], to_parent[2];
    char *buf = tool_page_buffer("engine_pingpong", bytes);
    if (pipe(to_child) || pipe(to_parent)) {
        perror("engine_pingpong");
        return 1;
    }
    const pid_t child = fork();
    const uint32_t self = child == 0 ? 1 : 0;
    if (child == 0 && echo_ns) udp_tool_join_netns("engine_pingpong", echo_ns);
    rttcc_engine_t *e = make_engine(self, child == 0 ? echo_addr : addr);
    /* The modex: each side writes its address, reads the other's. */
    char mine[512], theirs[512];
    const int len = rttcc_engine_local_address(e, mine, sizeof mine);
    uint32_t n = (uint32_t) len;
    const int wfd = child == 0 ? to_parent[1] : to_child[1], rfd = child == 0 ? to_child[0] : to_parent[0];
    if (len <= 0 || write(wfd, &n, sizeof n) != sizeof n || write(wfd, mine, n) != (ssize_t) n ||
        read(rfd, &n, sizeof n) != sizeof n || n > sizeof theirs || read(rfd, theirs, n) != (ssize_t) n) {
        fprintf(stderr, "engine_pingpong: address exchange failed\n");
        return 1;
    }
    char err[256];
    if (RTTCC_OK != rttcc_engine_add_peer(e, 1 - self, theirs, n, err, sizeof err)) {
        fprintf(stderr, "engine_pingpong: add_peer: %s\n", err);
        return 1;
    }
    double best[64];
    const int runs = reps < 64 ? reps : 64;
    for (int r = 0; r < runs; ++r) {
        const int warm = iters / 10 + 1;
        double t0 = 0;
        for (int i = 0; i < warm + iters; ++i) {
            if (i == warm) t0 = now_us();
            if (self == 0) {
                send_one(e, 1 - self, buf, bytes);
                wait_one(e);
            } else {
                wait_one(e);
                send_one(e, 1 - self, buf, bytes);
            }
        }
        best[r] = (now_us() - t0) / iters / 2;
    }
    if (self == 1) { /* the last reply's ACK: let it go before leaving */
        rttcc_engine_drain(e, 100);
        rttcc_engine_destroy(e);
        _exit(0);
    }
    rttcc_engine_drain(e, 100);
    waitpid(child, NULL, 0);
    rttcc_engine_destroy(e);
    for (int i = 1; i < runs; ++i)
        for (int j = i; j > 0 && best[j] < best[j - 1]; --j) {
            const double t = best[j];
            best[j] = best[j - 1];
            best[j - 1] = t;
        }
    printf("%zu %.2f\n", bytes, best[runs / 2]);
    return 0;
}
