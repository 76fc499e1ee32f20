/*
 * udp_pingpong: the raw UDP round trip that rttcc's latency is held against.
 * Two processes (fork) ping-pong a datagram over 127.0.0.1 with busy-polled
 * nonblocking sockets, as rttcc polls.  Prints the median one-way latency
 * in microseconds over `reps` runs of `iters` round trips.
 *
 *   udp_pingpong [bytes=8] [iters=20000] [reps=5] [address=127.0.0.1]
 *                [echo_netns echo_address]
 *
 * With echo_netns, the echo side runs in that network namespace (a testbed
 * host, /var/run/netns/NAME) bound to echo_address, and this side (run in
 * another host's namespace, at `address`) measures the path between them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "udp_tool.h"

static void recv_one(int fd, char *buf, size_t size)
{
    while (recv(fd, buf, size, 0) < 0) {
        if (errno != EAGAIN && errno != EINTR) {
            perror("udp_pingpong: recv");
            exit(1);
        }
    }
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    size_t size = argc > 1 ? strtoul(argv[1], NULL, 0) : 8;
    long iters = argc > 2 ? atol(argv[2]) : 20000;
    int reps = argc > 3 ? atoi(argv[3]) : 5;
    const char *addr = argc > 4 ? argv[4] : "127.0.0.1";
    const char *echo_ns = argc > 6 ? argv[5] : NULL, *echo_addr = argc > 6 ? argv[6] : addr;
    struct sockaddr_in a, b;
    int fa = udp_tool_socket("udp_pingpong", addr, &a, 0), fb = -1, port[2];
    char *buf = calloc(size + 1, 1);
    double lat[64];

    if (reps < 1 || reps > 64 || iters < 1 || argc == 6 || pipe(port) != 0) {
        fprintf(stderr, "usage: udp_pingpong [bytes] [iters] [reps 1..64] [address] [echo_netns echo_address]\n");
        return 2;
    }
    if (0 == fork()) { /* the echo side: tells its address through the pipe */
        if (echo_ns) {
            udp_tool_join_netns("udp_pingpong", echo_ns);
        }
        fb = udp_tool_socket("udp_pingpong", echo_addr, &b, 0);
        if (write(port[1], &b, sizeof b) != (ssize_t) sizeof b) {
            _exit(1);
        }
        for (long i = 0; i < (iters + iters / 10) * reps; ++i) {
            recv_one(fb, buf, size + 1);
            sendto(fb, buf, size, 0, (struct sockaddr *) &a, sizeof a);
        }
        _exit(0);
    }
    close(port[1]); /* an echo side that died is then an end of file */
    if (read(port[0], &b, sizeof b) != (ssize_t) sizeof b) {
        fprintf(stderr, "udp_pingpong: the echo side did not start\n");
        return 1;
    }
    for (int r = 0; r < reps; ++r) {
        struct timespec t0, t1;
        for (long i = 0; i < iters + iters / 10; ++i) {
            if (i == iters / 10) {
                clock_gettime(CLOCK_MONOTONIC, &t0);
            }
            sendto(fa, buf, size, 0, (struct sockaddr *) &b, sizeof b);
            recv_one(fa, buf, size + 1);
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        lat[r] = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / 1e3 / (2.0 * iters);
    }
    wait(NULL);
    qsort(lat, reps, sizeof *lat, cmp);
    printf("%zu %.2f\n", size, lat[reps / 2]);
    return 0;
}
