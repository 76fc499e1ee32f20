/*
 * syscall_timeline: an LD_PRELOAD library that records when every datagram
 * send and receive call of a process started and ended, to see where a
 * message's time goes across processes (the send call that also runs the
 * receiver's stack on veth, the standalone ACKs, ob1's control messages).
 *
 *   gcc -O2 -shared -fPIC -o syscall_timeline.so tools/syscall_timeline.c -ldl
 *   LD_PRELOAD=$PWD/syscall_timeline.so RTTCC_TIMELINE_DIR=/tmp/tl ./app
 *   mpirun -x LD_PRELOAD=... -x RTTCC_TIMELINE_DIR=/tmp/tl ...
 *   tools/timeline_summary /tmp/tl
 *
 * Each process writes DIR/timeline.PID at exit (DIR defaults to /tmp), one
 * line per call: "START_NS END_NS KIND FD COUNT BYTES" on CLOCK_MONOTONIC
 * (one clock for every process of a host, namespaces included).  KIND is S
 * for a send, R for a receive that returned datagrams, E for a read of the
 * socket's error queue (transmit stamps); receives that found nothing are
 * not recorded.  Recording is a few stores per call into a fixed buffer of
 * kEvents events (later calls are dropped and counted on the last line).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { kEvents = 1 << 21 };

struct event {
    int64_t start, end;
    int fd, count, bytes;
    char kind;
};

static struct event events[kEvents];
static unsigned long used, dropped;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Thread-safe: an engine's liveness agent reads from its own thread. */
static void record(char kind, int64_t start, int fd, int count, long bytes)
{
    const unsigned long i = __atomic_fetch_add(&used, 1, __ATOMIC_RELAXED);
    if (i >= kEvents) {
        __atomic_fetch_add(&dropped, 1, __ATOMIC_RELAXED);
        return;
    }
    events[i] = (struct event) {start, now_ns(), fd, count, (int) bytes, kind};
}

static void dump(void)
{
    const char *dir = getenv("RTTCC_TIMELINE_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/timeline.%d", dir && *dir ? dir : "/tmp", (int) getpid());
    FILE *f = fopen(path, "w");
    if (!f) {
        return;
    }
    const unsigned long n = used < kEvents ? used : kEvents;
    for (unsigned long i = 0; i < n; ++i) {
        const struct event *e = &events[i];
        fprintf(f, "%lld %lld %c %d %d %d\n", (long long) e->start, (long long) e->end, e->kind, e->fd, e->count,
                e->bytes);
    }
    if (dropped) {
        fprintf(f, "# dropped %lu\n", dropped);
    }
    fclose(f);
}

/* A forked child starts with an empty timeline of its own. */
static void in_child(void)
{
    used = dropped = 0;
}

__attribute__((constructor)) static void start(void)
{
    atexit(dump);
    pthread_atfork(NULL, NULL, in_child);
}

/* Children of fork that leave by _exit (the tools' echo sides) dump too. */
void _exit(int status)
{
    static void (*real)(int);
    if (!real) {
        real = (void (*)(int)) dlsym(RTLD_NEXT, "_exit");
    }
    dump();
    real(status);
    __builtin_unreachable();
}

/* The libc function this one stands in for. */
#define REAL(name) \
    static __typeof__(name) *real; \
    if (!real) { \
        real = (__typeof__(name) *) dlsym(RTLD_NEXT, #name); \
    }

int sendmmsg(int fd, struct mmsghdr *v, unsigned int n, int flags)
{
    REAL(sendmmsg);
    const int64_t t = now_ns();
    const int got = real(fd, v, n, flags);
    long bytes = 0;
    for (int i = 0; i < got; ++i) {
        bytes += v[i].msg_len;
    }
    record('S', t, fd, got, bytes);
    return got;
}

int recvmmsg(int fd, struct mmsghdr *v, unsigned int n, int flags, struct timespec *timeout)
{
    REAL(recvmmsg);
    const int64_t t = now_ns();
    const int got = real(fd, v, n, flags, timeout);
    if (got > 0) {
        long bytes = 0;
        for (int i = 0; i < got; ++i) {
            bytes += v[i].msg_len;
        }
        record(flags & MSG_ERRQUEUE ? 'E' : 'R', t, fd, got, bytes);
    }
    return got;
}

ssize_t sendmsg(int fd, const struct msghdr *m, int flags)
{
    REAL(sendmsg);
    const int64_t t = now_ns();
    const ssize_t got = real(fd, m, flags);
    record('S', t, fd, got >= 0, got > 0 ? got : 0);
    return got;
}

ssize_t recvmsg(int fd, struct msghdr *m, int flags)
{
    REAL(recvmsg);
    const int64_t t = now_ns();
    const ssize_t got = real(fd, m, flags);
    if (got >= 0) {
        record(flags & MSG_ERRQUEUE ? 'E' : 'R', t, fd, 1, got);
    }
    return got;
}

ssize_t sendto(int fd, const void *buf, size_t len, int flags, const struct sockaddr *to, socklen_t tolen)
{
    REAL(sendto);
    const int64_t t = now_ns();
    const ssize_t got = real(fd, buf, len, flags, to, tolen);
    record('S', t, fd, got >= 0, got > 0 ? got : 0);
    return got;
}

ssize_t recv(int fd, void *buf, size_t len, int flags)
{
    REAL(recv);
    const int64_t t = now_ns();
    const ssize_t got = real(fd, buf, len, flags);
    if (got > 0) {
        record('R', t, fd, 1, got);
    }
    return got;
}
