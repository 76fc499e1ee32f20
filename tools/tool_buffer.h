/* The message buffers of the tools: zeroed, starting on a page, as the OSU
 * benchmarks allocate theirs.  Where a buffer starts within its page
 * matters on x86: a copy whose destination lies 1 to 31 bytes past its
 * source within their pages runs up to 15 times slower (4K aliasing), and
 * malloc puts large blocks 16 bytes into a page, the kernel's buffers on
 * one.  A 256 KiB UDP ping-pong took 142-160 us into a calloc'd buffer,
 * 57-60 us into a page-aligned one. */
#ifndef RTTCC_TOOL_BUFFER_H
#define RTTCC_TOOL_BUFFER_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* `size` zeroed bytes on a page; exits with `who`'s message if there is no memory. */
static inline void *tool_page_buffer(const char *who, size_t size)
{
    void *p = NULL;
    if (posix_memalign(&p, (size_t) sysconf(_SC_PAGESIZE), size ? size : 1)) {
        fprintf(stderr, "%s: out of memory for %zu bytes\n", who, size);
        exit(1);
    }
    memset(p, 0, size ? size : 1);
    return p;
}

#endif
