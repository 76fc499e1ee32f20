/*
 * udp_flood: background traffic at a fixed rate towards one host, switched
 * on and off periodically (bench/coll_table.sh runs it from a testbed host
 * that holds no rank, towards a host that does).
 *
 *   udp_flood -dst IP [-port P] [-rate MBIT] [-size BYTES] [-on S] [-off S]
 *             [-t S] [-first on|off]
 *
 * Sends UDP datagrams of `size` payload bytes (1472: one full Ethernet
 * frame) at `rate` Mbit/s of payload (100) for `on` seconds (2), then
 * nothing for `off` seconds (2), and so on, starting with the on phase
 * (-first off: with the off phase), for `t` seconds (0: until SIGTERM or
 * SIGINT).  Pacing is by absolute deadlines (clock_nanosleep), in bursts of
 * at most 8 datagrams (sendmmsg), so the rate holds over any 100 us.  The
 * port (9, discard) need not be open: the victim drops the datagrams (and
 * answers a rate-limited few with ICMP); what matters is that they cross
 * its link.  The socket is not connected, so ICMP errors are not reported
 * to it; send errors (full buffers) are counted, not fatal.
 *
 * At the end, one line on stdout:
 *   udp_flood sent=PACKETS bytes=BYTES errors=N periods=ON_PERIODS seconds=S
 *             achieved=F
 * F: the bytes sent over those the rate asks for in the on phases so far. A
 * flooder that shares the CPU with busy ranks falls behind its deadlines
 * (and never catches up by more than 100 ms), so F below 1 says the flood
 * was weaker than asked.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { BURST = 8, MAX_SIZE = 65507 };

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void) sig;
    stop = 1;
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sleep_until(int64_t t)
{
    struct timespec ts = {(time_t) (t / 1000000000), (long) (t % 1000000000)};
    while (!stop && EINTR == clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL)) {
    }
}

/* Nanoseconds of "on" in [0, t) of a cycle that starts with on_ns of on. */
static int64_t on_time(int64_t t, int64_t on_ns, int64_t period)
{
    const int64_t part = t % period;
    return t / period * on_ns + (part < on_ns ? part : on_ns);
}

static void usage(void)
{
    fprintf(stderr, "usage: udp_flood -dst IP [-port P] [-rate MBIT] [-size BYTES (1..%d)] [-on S] [-off S]"
                    " [-t S] [-first on|off]\n", MAX_SIZE);
    exit(2);
}

int main(int argc, char **argv)
{
    const char *dst = NULL;
    int port = 9, size = 1472, first_on = 1;
    double rate = 100, on = 2, off = 2, total = 0;

    for (int i = 1; i < argc; i += 2) {
        if (i + 1 >= argc) {
            usage();
        }
        const char *k = argv[i], *v = argv[i + 1];
        if (0 == strcmp(k, "-dst")) {
            dst = v;
        } else if (0 == strcmp(k, "-port")) {
            port = atoi(v);
        } else if (0 == strcmp(k, "-rate")) {
            rate = atof(v);
        } else if (0 == strcmp(k, "-size")) {
            size = atoi(v);
        } else if (0 == strcmp(k, "-on")) {
            on = atof(v);
        } else if (0 == strcmp(k, "-off")) {
            off = atof(v);
        } else if (0 == strcmp(k, "-t")) {
            total = atof(v);
        } else if (0 == strcmp(k, "-first")) {
            first_on = 0 != strcmp(v, "off");
        } else {
            usage();
        }
    }
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t) port)};
    if (!dst || 1 != inet_pton(AF_INET, dst, &to.sin_addr) || size < 1 || size > MAX_SIZE || rate <= 0 ||
        on <= 0 || off < 0 || total < 0) {
        usage();
    }
    const int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0) { /* not connected: ICMP errors from the victim are not reported to it */
        perror("udp_flood: socket");
        return 1;
    }
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);

    static char payload[MAX_SIZE];
    memset(payload, 0xA5, sizeof payload);
    struct iovec iov = {payload, (size_t) size};
    struct mmsghdr msgs[BURST];
    memset(msgs, 0, sizeof msgs);
    for (int i = 0; i < BURST; ++i) {
        msgs[i].msg_hdr.msg_iov = &iov;
        msgs[i].msg_hdr.msg_iovlen = 1;
        msgs[i].msg_hdr.msg_name = &to;
        msgs[i].msg_hdr.msg_namelen = sizeof to;
    }
    /* A burst every `gap` ns carries BURST datagrams: rate * 1e6 / 8 bytes a second. */
    const int64_t gap = (int64_t) (BURST * (double) size * 8.0 / (rate * 1e6) * 1e9);
    const int64_t on_ns = (int64_t) (on * 1e9), period = (int64_t) ((on + off) * 1e9);
    const int64_t start = now_ns(), end = total > 0 ? start + (int64_t) (total * 1e9) : INT64_MAX;
    const int64_t shift = first_on ? 0 : on_ns; /* phase 0 of the cycle is "on" */
    uint64_t sent = 0, bytes = 0, errors = 0, periods = 0;
    int64_t next = start, last_period = -1;

    while (!stop && next < end) {
        const int64_t phase = (next - start + shift) % period;
        if (phase >= on_ns) { /* off: sleep to the next on phase */
            next += period - phase;
            sleep_until(next);
            continue;
        }
        const int64_t p = (next - start + shift) / period;
        if (p != last_period) {
            last_period = p;
            ++periods;
        }
        sleep_until(next);
        const int n = sendmmsg(fd, msgs, BURST, 0);
        if (n > 0) {
            sent += (uint64_t) n;
            bytes += (uint64_t) n * (uint64_t) size;
        } else {
            ++errors;
        }
        next += gap;
        if (now_ns() - next > 100000000) { /* more than 100 ms behind (stopped?): no catch-up burst */
            next = now_ns();
        }
    }
    const int64_t elapsed = now_ns() - start;
    const double nominal = rate * 1e6 / 8.0 * (double) (on_time(elapsed + shift, on_ns, period) -
                                                       on_time(shift, on_ns, period)) / 1e9;
    printf("udp_flood sent=%llu bytes=%llu errors=%llu periods=%llu seconds=%.1f achieved=%.2f\n",
           (unsigned long long) sent, (unsigned long long) bytes, (unsigned long long) errors,
           (unsigned long long) periods, elapsed / 1e9, nominal > 0 ? (double) bytes / nominal : 1.0);
    close(fd);
    return 0;
}
