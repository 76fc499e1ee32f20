/*
 * udp_pingpong: the raw UDP round trip that rttcc's latency is held against.
 * Two processes (fork) ping-pong a datagram over 127.0.0.1 with busy-polled
 * nonblocking sockets, as rttcc polls.  Prints the median one-way latency
 * in microseconds over `reps` runs of `iters` round trips.
 *
 *   udp_pingpong [-wire | -gso | -signed] [bytes=8] [iters=20000] [reps=5]
 *                [address=127.0.0.1] [echo_netns echo_address]
 *
 * With echo_netns, the echo side runs in that network namespace (a testbed
 * host, /var/run/netns/NAME) bound to echo_address, and this side (run in
 * another host's namespace, at `address`) measures the path between them.
 *
 * -wire: the kernel as rttcc's UDP wire uses it, and nothing of the engine:
 * a command and a data socket per side, both with software receive stamps
 * (SO_TIMESTAMPING, where the RTT samples come from) and GRO on the data
 * socket; recvmmsg with a control buffer, polling the command socket every
 * time and the idle data socket every fourth time, one slot after an empty
 * poll; sendto, as the wire sends a lone datagram of one piece without a
 * transmit stamp (a small message, an ACK).  Its latency is the floor
 * of any transport built on those kernel features; the gap to the plain run
 * is what the features cost (here, one-way: receive stamps 0.2 us, recvmmsg
 * with a control buffer 0.1, the data socket's polls 0.06).
 *
 * -gso: a message of `bytes` crosses as datagrams of at most 1472 bytes (an
 * Ethernet MTU of 1500, as rttcc's data channel cuts it), sent in GSO
 * groups of up to 44 (UDP_SEGMENT) and received with GRO straight into the
 * message buffer, in order, with no header and no reliability.  It is the
 * floor of a medium or large message through the kernel's UDP at that MTU:
 * no UDP transport can ping-pong such a message faster.  Nothing is resent:
 * a run that loses a datagram (not seen on veth) stops with an error, and
 * one whose message came back changed (reordered) fails its final check.
 *
 * -signed: as -gso, but each datagram carries what an authenticated
 * datagram transport cannot do without: a 72-byte header (sequence number,
 * offset, lengths) signed as rttcc's auth=header signs its own (SipHash-2-4
 * of the 64 bytes before the MAC, libsodium's crypto_shorthash, a key both
 * sides share), before up to 1400 bytes of the message.  The sender lays
 * each GSO group out in a staging buffer, header and payload a datagram, as
 * rttcc's UDP wire stages a zero-copy message; the receiver reads the GRO
 * buffers into a ring, checks each datagram's MAC and copies its payload
 * into place.  No ACKs, windows, timers or resends: the floor of a signed
 * datagram transport at that MTU, which the engine's own work is measured
 * above.  Build with -lsodium.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/net_tstamp.h>
#include <netinet/udp.h>
#include <sodium.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "udp_tool.h"

#ifndef UDP_GRO
#define UDP_GRO 104
#endif
#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif

static int as_wire; /* -wire */
static int as_gso;  /* -gso, and -signed */
static int as_signed; /* -signed */

enum { kSegment = 1472, kGroupSegments = 44, kBuffers = 8 << 20 };
enum { kHeader = 72, kBody = kSegment - kHeader, kGroupBytes = kSegment * kGroupSegments };

/* -signed: a datagram's header; the MAC covers the bytes before it. */
struct header {
    uint32_t seq, offset, len, msg_len;
    uint8_t rest[48]; /* where rttcc's header has its other fields: signed as zeros */
    uint64_t mac;
};
_Static_assert(sizeof(struct header) == kHeader, "rttcc's header size");
static unsigned char key[crypto_shorthash_KEYBYTES];

/* -wire: the options rttcc's wire sets on its sockets. */
static void as_the_wire(int fd, int data)
{
    const int stamps = SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE;
    const int one = 1;
    if (setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING, &stamps, sizeof stamps) != 0 ||
        (data && setsockopt(fd, IPPROTO_UDP, UDP_GRO, &one, sizeof one) != 0)) {
        perror("udp_pingpong: socket options of -wire");
        exit(1);
    }
}

/* One endpoint: the socket the ping-pong uses and, with -wire, the idle data
 * socket beside it. */
struct side {
    int fd, data;
    unsigned polls;
    uint32_t seq;  /* -signed: the next datagram's number, and the next one expected */
    uint32_t expect;
    char *stage;   /* -signed: a GSO group laid out to send, or a GRO buffer read */
};

/* -gso, -signed: one GSO group of n bytes, retried while the socket's
 * buffer is full. */
static void send_group(struct side *s, const char *group, size_t n, struct sockaddr_in *to)
{
    while (sendto(s->fd, group, n, 0, (struct sockaddr *) to, sizeof *to) != (ssize_t) n) {
        if (errno != EAGAIN && errno != ENOBUFS && errno != EINTR) {
            perror("udp_pingpong: send");
            exit(1);
        }
    }
}

static uint64_t mac_of(const struct header *h)
{
    uint64_t mac;
    crypto_shorthash((unsigned char *) &mac, (const unsigned char *) h, offsetof(struct header, mac), key);
    return mac;
}

/* -signed: the message in GSO groups of signed datagrams laid out in s->stage. */
static void send_signed(struct side *s, const char *buf, size_t size, struct sockaddr_in *to)
{
    for (size_t at = 0; at < size;) {
        size_t n = 0;
        for (int d = 0; d < kGroupSegments && at < size; ++d) {
            struct header h = {.seq = s->seq++, .offset = (uint32_t) at, .msg_len = (uint32_t) size};
            h.len = (uint32_t) (size - at < (size_t) kBody ? size - at : (size_t) kBody);
            h.mac = mac_of(&h);
            memcpy(s->stage + n, &h, sizeof h);
            memcpy(s->stage + n + kHeader, buf + at, h.len);
            n += kHeader + h.len;
            at += h.len;
        }
        send_group(s, s->stage, n, to);
    }
}

/* -signed: checks and places the datagrams of one GRO buffer; returns the
 * message bytes they carried. */
static size_t take_signed(struct side *s, size_t len, char *buf, size_t size)
{
    size_t got = 0;
    for (size_t at = 0; at < len; at += kSegment) {
        struct header h;
        const size_t dgram = len - at < (size_t) kSegment ? len - at : (size_t) kSegment;
        memcpy(&h, s->stage + at, sizeof h);
        if (dgram < kHeader || h.mac != mac_of(&h) || h.seq != s->expect++ || h.msg_len != size ||
            h.offset > size || h.len > size - h.offset || h.len != dgram - kHeader) {
            fprintf(stderr, "udp_pingpong: -signed: a datagram failed its checks (lost, reordered or forged)\n");
            exit(1);
        }
        memcpy(buf + h.offset, s->stage + at + kHeader, h.len);
        got += h.len;
    }
    return got;
}

/* -gso: the message in GSO groups of kGroupSegments datagrams. */
static void send_segmented(struct side *s, char *buf, size_t size, struct sockaddr_in *to)
{
    for (size_t at = 0; at < size;) {
        const size_t n = size - at < (size_t) kGroupBytes ? size - at : (size_t) kGroupBytes;
        send_group(s, buf + at, n, to);
        at += n;
    }
}

/* -gso: reads GRO buffers into place until the message is whole (-signed:
 * into s->stage, then each datagram's payload into place); a second
 * without progress means a lost datagram. */
static void recv_segmented(struct side *s, char *buf, size_t size)
{
    struct timespec last, now;
    clock_gettime(CLOCK_MONOTONIC, &last);
    for (size_t got = 0; got < size;) {
        const ssize_t r = as_signed ? recv(s->fd, s->stage, kGroupBytes, 0) : recv(s->fd, buf + got, size - got, 0);
        if (r > 0) {
            got += as_signed ? take_signed(s, (size_t) r, buf, size) : (size_t) r;
            clock_gettime(CLOCK_MONOTONIC, &last);
            continue;
        }
        if (r < 0 && errno != EAGAIN && errno != EINTR) {
            perror("udp_pingpong: recv");
            exit(1);
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - last.tv_sec > 1) {
            fprintf(stderr, "udp_pingpong: -gso lost a datagram (%zu of %zu bytes came)\n", got, size);
            exit(1);
        }
    }
}

static int recv_plain(int fd, char *buf, size_t size)
{
    return (int) recv(fd, buf, size, 0);
}

static int recv_as_wire(int fd, char *buf, size_t size)
{
    char control[256];
    struct sockaddr_in from;
    struct iovec iov = {buf, size};
    struct mmsghdr m;
    memset(&m, 0, sizeof m);
    m.msg_hdr.msg_name = &from;
    m.msg_hdr.msg_namelen = sizeof from;
    m.msg_hdr.msg_iov = &iov;
    m.msg_hdr.msg_iovlen = 1;
    m.msg_hdr.msg_control = control;
    m.msg_hdr.msg_controllen = sizeof control;
    return recvmmsg(fd, &m, 1, MSG_DONTWAIT, NULL);
}

static void recv_one(struct side *s, char *buf, size_t size)
{
    for (;;) {
        if (as_wire && s->polls++ % 4 == 0) {
            (void) recv_as_wire(s->data, buf, size);
        }
        if ((as_wire ? recv_as_wire : recv_plain)(s->fd, buf, size) >= 0) {
            return;
        }
        if (errno != EAGAIN && errno != EINTR) {
            perror("udp_pingpong: recv");
            exit(1);
        }
    }
}

/* Receives one message of `size` bytes (a datagram's slot has one byte more:
 * a longer datagram would show). */
static void recv_message(struct side *s, char *buf, size_t size)
{
    if (as_gso) {
        recv_segmented(s, buf, size);
    } else {
        recv_one(s, buf, size + 1);
    }
}

static void send_one(struct side *s, char *buf, size_t size, struct sockaddr_in *to)
{
    if (as_signed) {
        send_signed(s, buf, size, to);
        return;
    }
    if (as_gso) {
        send_segmented(s, buf, size, to);
        return;
    }
    sendto(s->fd, buf, size, 0, (struct sockaddr *) to, sizeof *to);
}

static struct side open_side(const char *addr, struct sockaddr_in *bound)
{
    struct side s = {udp_tool_socket("udp_pingpong", addr, bound, as_gso ? kBuffers : 0), -1, 0, 0, 0, NULL};
    if (as_signed) {
        s.stage = tool_page_buffer("udp_pingpong", kGroupBytes);
    }
    const int seg = kSegment, one = 1;
    if (as_gso && (setsockopt(s.fd, IPPROTO_UDP, UDP_SEGMENT, &seg, sizeof seg) != 0 ||
                   setsockopt(s.fd, IPPROTO_UDP, UDP_GRO, &one, sizeof one) != 0)) {
        perror("udp_pingpong: socket options of -gso");
        exit(1);
    }
    if (as_wire) {
        struct sockaddr_in data;
        s.data = udp_tool_socket("udp_pingpong", addr, &data, 0);
        as_the_wire(s.fd, 0);
        as_the_wire(s.data, 1);
    }
    return s;
}

/* The message's byte i, which the run checks came back. */
static char pattern(size_t i)
{
    return (char) (i * 131 + 7);
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc > 1 && (0 == strcmp(argv[1], "-wire") || 0 == strcmp(argv[1], "-gso") || 0 == strcmp(argv[1], "-signed"))) {
        as_wire = 0 == strcmp(argv[1], "-wire");
        as_signed = 0 == strcmp(argv[1], "-signed");
        as_gso = !as_wire;
        --argc, ++argv;
    }
    if (as_signed) {
        if (sodium_init() < 0) {
            fprintf(stderr, "udp_pingpong: libsodium did not start\n");
            return 1;
        }
        randombytes_buf(key, sizeof key); /* before the fork: both sides have it */
    }
    size_t size = argc > 1 ? strtoul(argv[1], NULL, 0) : 8;
    long iters = argc > 2 ? atol(argv[2]) : 20000;
    int reps = argc > 3 ? atoi(argv[3]) : 5;
    const char *addr = argc > 4 ? argv[4] : "127.0.0.1";
    const char *echo_ns = argc > 6 ? argv[5] : NULL, *echo_addr = argc > 6 ? argv[6] : addr;
    struct sockaddr_in a, b;
    struct side sa = open_side(addr, &a);
    int port[2];
    char *buf = tool_page_buffer("udp_pingpong", size + 1);
    double lat[64];

    if (reps < 1 || reps > 64 || iters < 1 || argc == 6 || size < 1 || pipe(port) != 0) {
        fprintf(stderr, "usage: udp_pingpong [-wire | -gso | -signed] [bytes] [iters] [reps 1..64] [address] [echo_netns echo_address]\n");
        return 2;
    }
    for (size_t i = 0; i < size; ++i) {
        buf[i] = pattern(i);
    }
    if (0 == fork()) { /* the echo side: tells its address through the pipe */
        if (echo_ns) {
            udp_tool_join_netns("udp_pingpong", echo_ns);
        }
        struct side sb = open_side(echo_addr, &b);
        if (write(port[1], &b, sizeof b) != (ssize_t) sizeof b) {
            _exit(1);
        }
        for (long i = 0; i < (iters + iters / 10) * reps; ++i) {
            recv_message(&sb, buf, size);
            send_one(&sb, buf, size, &a);
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
            send_one(&sa, buf, size, &b);
            recv_message(&sa, buf, size);
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        lat[r] = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / 1e3 / (2.0 * iters);
    }
    wait(NULL);
    for (size_t i = 0; i < size; ++i) {
        if (buf[i] != pattern(i)) {
            fprintf(stderr, "udp_pingpong: byte %zu came back changed\n", i);
            return 1;
        }
    }
    qsort(lat, reps, sizeof *lat, cmp);
    printf("%zu %.2f\n", size, lat[reps / 2]);
    return 0;
}
