/* What tools/udp_pingpong and tools/udp_stream share: a busy-polled UDP
 * socket, and the other side's move into a testbed host's network
 * namespace.  Each tool is one file compiled on its own (gcc -O2 tool.c). */
#ifndef RTTCC_UDP_TOOL_H
#define RTTCC_UDP_TOOL_H

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tool_buffer.h"

/* A nonblocking UDP socket bound to addr (port chosen by the kernel, written
 * back into *bound), its buffers forced to `buffers` bytes if not 0 (as
 * root); exits with `who`'s message if it cannot be made. */
static inline int udp_tool_socket(const char *who, const char *addr, struct sockaddr_in *bound, int buffers)
{
    socklen_t len = sizeof *bound;
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
    memset(bound, 0, sizeof *bound);
    bound->sin_family = AF_INET;
    inet_pton(AF_INET, addr, &bound->sin_addr);
    if (fd < 0 || bind(fd, (struct sockaddr *) bound, sizeof *bound) != 0 ||
        getsockname(fd, (struct sockaddr *) bound, &len) != 0) {
        fprintf(stderr, "%s: socket at %s: %s\n", who, addr, strerror(errno));
        exit(1);
    }
    if (buffers) {
        (void) setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buffers, sizeof buffers);
        (void) setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &buffers, sizeof buffers);
    }
    return fd;
}

/* Moves this process into network namespace `name` (/var/run/netns/NAME,
 * as `ip netns add` makes them); _exit(1) with `who`'s message if it cannot. */
static inline void udp_tool_join_netns(const char *who, const char *name)
{
    char path[256];
    snprintf(path, sizeof path, "/var/run/netns/%s", name);
    const int ns = open(path, O_RDONLY);
    if (ns < 0 || setns(ns, CLONE_NEWNET) != 0) {
        fprintf(stderr, "%s: network namespace %s: %s\n", who, name, strerror(errno));
        _exit(1);
    }
    close(ns);
}

#endif
