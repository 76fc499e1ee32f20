/*
 * udp_stream: the raw UDP rate that rttcc's bandwidth is held against.  One
 * process (fork) sends datagrams as fast as the kernel takes them, the other
 * receives them with busy-polled nonblocking sockets, as rttcc does, and
 * counts what arrived.  Prints the payload rate that arrived, MB/s (10^6
 * B/s), and the share of datagrams lost on the way.
 *
 *   udp_stream [bytes=1472] [seconds=2] [address=127.0.0.1] [sink_netns sink_address] [gso] [span=BYTES]
 *              [layout=split|staged]
 *   ("gso", "span=" and "layout=" may follow any of the others, in any order)
 *
 * With sink_netns the receiver runs in that network namespace (a testbed
 * host, /var/run/netns/NAME) at sink_address.  With "gso" the sender hands
 * the kernel 64 KiB at a time cut into `bytes` datagrams (UDP_SEGMENT) and
 * the receiver takes them coalesced (UDP_GRO), the offloads rttcc's wire
 * uses; without it, datagrams one by one.  Either way sendmmsg and
 * recvmmsg take 32 at a time.
 *
 * Without span the sender sends one small buffer over and over and the
 * receiver never reads what arrives: the kernel's rate with the data in
 * cache.  With span=BYTES (at least 64 KiB) the sender walks a written
 * buffer of BYTES and the receiver lands each datagram in place in its own
 * buffer of BYTES (one copy, as a transport with no bounce buffer would):
 * the rate for user data that does not sit in cache, as a 4 MiB MPI_Put's.
 *
 * With gso, layout= hands each GSO send over as rttcc's wire would a
 * zero-copy message: every datagram a 72-byte header (from a ring of
 * headers) and the rest of its bytes from the buffer, two pieces a
 * datagram (split), or those pieces first copied into one staging buffer
 * and sent from there, one piece a send (staged, as UdpWire::stage does).
 * Whether the kernel's send of many pieces or a copy in user space costs
 * less depends on the machine and the kernel: this is the question's
 * measurement.  Without layout=, one piece from the buffer.
 * Prints:
 *   udp_stream bytes=B gso=0|1 span=S layout=L MBps=R sent=N received=M lost_pct=L
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/udp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "udp_tool.h"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif

enum { kBatch = 32, kSuper = 65000, kEnd = 1, kBuffers = 32 << 20, kHeader = 72, kHeaders = 512, kMaxPieces = 1024 };
enum Layout { kOnePiece, kSplit, kStaged };
static const char *const kLayoutNames[] = {"one", "split", "staged"};

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

/* The receiver: counts datagrams and bytes until the 1-byte end marker,
 * from the first arrival to the last; reports through `out`. */
static void sink(int fd, size_t size, int gso, size_t span, int out)
{
    const size_t cap = gso ? kSuper + 1500 : size + 1;
    static struct mmsghdr msgs[kBatch];
    static struct iovec iov[kBatch];
    const size_t room = span ? span + cap * kBatch : cap * kBatch;
    char *bufs = tool_page_buffer("udp_stream", room); /* faulted in before the clock starts, as the sender's */
    size_t at = 0; /* with span: where the next datagrams land */
    double report[3] = {0, 0, 0}; /* datagrams, bytes, seconds */
    double first = 0, last = 0;
    const int on = 1;
    if (gso) {
        (void) setsockopt(fd, IPPROTO_UDP, UDP_GRO, &on, sizeof on);
    }
    for (;;) {
        for (int i = 0; i < kBatch; ++i) {
            iov[i] = (struct iovec){bufs + at + i * cap, cap};
            msgs[i].msg_hdr = (struct msghdr){.msg_iov = &iov[i], .msg_iovlen = 1};
        }
        const int n = recvmmsg(fd, msgs, kBatch, 0, NULL);
        if (n < 0) {
            continue; /* EAGAIN: poll again */
        }
        if (span) { /* the next batch lands after this one's slots */
            at += (size_t) n * cap;
            if (at >= span) {
                at = 0;
            }
        }
        for (int i = 0; i < n; ++i) {
            const size_t len = msgs[i].msg_len;
            if (len == kEnd) {
                report[2] = last - first;
                if (write(out, report, sizeof report) != (ssize_t) sizeof report) {
                    _exit(1);
                }
                _exit(0);
            }
            last = now();
            if (report[0] == 0) {
                first = last;
            }
            report[0] += gso ? (double) ((len + size - 1) / size) : 1;
            report[1] += (double) len;
        }
    }
}

/* Points msgs[i] (of `per` datagrams of `size` bytes from `from`) at the
 * pieces `layout` asks for: a header from `headers` and the rest of each
 * datagram's bytes, each a piece of `pieces` (split), or all of them copied
 * into `stage` (staged).  Returns how many pieces it used. */
static size_t lay_out(enum Layout layout, struct msghdr *m, const char *from, size_t per, size_t size,
                      const char *headers, struct iovec *pieces, char **stage)
{
    const size_t body = size - kHeader;
    size_t n = 0;
    for (size_t d = 0; d < per; ++d) {
        pieces[n++] = (struct iovec){(void *) (headers + (d % kHeaders) * kHeader), kHeader};
        pieces[n++] = (struct iovec){(void *) (from + d * body), body};
    }
    if (layout == kStaged) {
        char *to = *stage;
        for (size_t v = 0; v < n; ++v) {
            memcpy(to, pieces[v].iov_base, pieces[v].iov_len);
            to += pieces[v].iov_len;
        }
        pieces[0] = (struct iovec){*stage, per * size};
        *stage += (per * size + 63) & ~(size_t) 63;
        n = 1;
    }
    m->msg_iov = pieces;
    m->msg_iovlen = n;
    return n;
}

int main(int argc, char **argv)
{
    int gso = 0;
    size_t span = 0;
    enum Layout layout = kOnePiece;
    for (; argc > 1; --argc) { /* the trailing keywords, in either order */
        if (0 == strcmp(argv[argc - 1], "gso")) {
            gso = 1;
        } else if (0 == strncmp(argv[argc - 1], "span=", 5)) {
            span = strtoul(argv[argc - 1] + 5, NULL, 0);
        } else if (0 == strcmp(argv[argc - 1], "layout=split")) {
            layout = kSplit;
        } else if (0 == strcmp(argv[argc - 1], "layout=staged")) {
            layout = kStaged;
        } else {
            break;
        }
    }
    const size_t size = argc > 1 ? strtoul(argv[1], NULL, 0) : 1472;
    const double seconds = argc > 2 ? atof(argv[2]) : 2;
    const char *addr = argc > 3 ? argv[3] : "127.0.0.1";
    const char *sink_ns = argc > 5 ? argv[4] : NULL, *sink_addr = argc > 5 ? argv[5] : addr;
    struct sockaddr_in a, b;
    int pipe_addr[2], pipe_report[2];
    if (size < 2 || size > 9000 || seconds <= 0 || argc == 5 || (span && span < (size_t) kSuper + 1500) ||
        (layout != kOnePiece && (!gso || size <= kHeader || 2 * (kSuper / size) > kMaxPieces)) ||
        pipe(pipe_addr) || pipe(pipe_report)) {
        fprintf(stderr, "usage: udp_stream [bytes 2..9000] [seconds] [address] [sink_netns sink_address] [gso] "
                        "[span=BYTES >= 66500] [layout=split|staged, with gso, bytes 127..9000]\n");
        return 2;
    }
    const int fa = udp_tool_socket("udp_stream", addr, &a, kBuffers);
    if (0 == fork()) {
        if (sink_ns) {
            udp_tool_join_netns("udp_stream", sink_ns);
        }
        const int fb = udp_tool_socket("udp_stream", sink_addr, &b, kBuffers);
        if (write(pipe_addr[1], &b, sizeof b) != (ssize_t) sizeof b) {
            _exit(1);
        }
        sink(fb, size, gso, span, pipe_report[1]);
    }
    close(pipe_addr[1]); /* a receiver that died is then an end of file */
    close(pipe_report[1]);
    if (read(pipe_addr[0], &b, sizeof b) != (ssize_t) sizeof b || connect(fa, (struct sockaddr *) &b, sizeof b)) {
        fprintf(stderr, "udp_stream: the receiver did not start\n");
        return 1;
    }
    const size_t per_send = gso ? (kSuper / size) * size : size;
    const size_t sends_in_span = span ? span / per_send : 1;
    char *buf = tool_page_buffer("udp_stream", span ? span : per_send);
    memset(buf, 0x5a, span ? span : per_send); /* written: real pages, not the zero page */
    size_t next = 0; /* with span: the next send's place in buf */
    struct mmsghdr msgs[kBatch];
    struct iovec iov[kBatch];
    for (int i = 0; i < kBatch; ++i) {
        iov[i] = (struct iovec){buf, per_send};
        msgs[i].msg_hdr = (struct msghdr){.msg_iov = &iov[i], .msg_iovlen = 1};
    }
    const size_t per = per_send / size; /* datagrams a send */
    static char headers[kHeaders * kHeader];
    struct iovec *pieces = layout != kOnePiece ? calloc((size_t) kBatch * 2 * per, sizeof *pieces) : NULL;
    char *const stage = layout == kStaged ? tool_page_buffer("udp_stream", kBatch * (per_send + 64)) : NULL;
    if (gso) {
        const int seg = (int) size;
        if (setsockopt(fa, IPPROTO_UDP, UDP_SEGMENT, &seg, sizeof seg) != 0) {
            perror("udp_stream: UDP_SEGMENT");
            return 1;
        }
    }
    double sent = 0;
    const double end = now() + seconds;
    while (now() < end) {
        for (int i = 0; span && i < kBatch; ++i) {
            iov[i].iov_base = buf + ((next + (size_t) i) % sends_in_span) * per_send;
        }
        char *staged = stage;
        for (int i = 0, used = 0; layout != kOnePiece && i < kBatch; ++i) {
            used += (int) lay_out(layout, &msgs[i].msg_hdr, iov[i].iov_base, per, size, headers, pieces + used, &staged);
        }
        const int n = sendmmsg(fa, msgs, kBatch, 0);
        if (n > 0) {
            sent += (double) n * (double) (per_send / size);
            next = (next + (size_t) n) % sends_in_span;
        }
    }
    if (gso) {
        const int zero = 0;
        (void) setsockopt(fa, IPPROTO_UDP, UDP_SEGMENT, &zero, sizeof zero);
    }
    usleep(200000); /* what is queued arrives, then the end marker */
    const int flags = fcntl(pipe_report[0], F_GETFL);
    fcntl(pipe_report[0], F_SETFL, flags | O_NONBLOCK);
    double report[3];
    for (int i = 0; i < 50; ++i) { /* the marker may be lost: send it until the report comes */
        (void) send(fa, buf, kEnd, 0);
        struct timespec t = {0, 2000000};
        nanosleep(&t, NULL);
        if (read(pipe_report[0], report, sizeof report) == (ssize_t) sizeof report) {
            wait(NULL);
            printf("udp_stream bytes=%zu gso=%d span=%zu layout=%s MBps=%.1f sent=%.0f received=%.0f lost_pct=%.2f\n",
                   size, gso, span, kLayoutNames[layout],
                   report[2] > 0 ? report[1] / report[2] / 1e6 : 0, sent, report[0],
                   sent > 0 ? 100.0 * (sent - report[0]) / sent : 0);
            return 0;
        }
    }
    fprintf(stderr, "udp_stream: no report from the receiver\n");
    return 1;
}
