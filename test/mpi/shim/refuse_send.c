/* LD_PRELOAD shim for test/mpi/refused_send.c: the engine refuses (as it
 * does when it runs out of memory) every mtl_rttcc message of MPI tag
 * REFUSE_TAG, and hands every other one on. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "rttcc/engine.h"
#include "rttcc/tags.h"

#define REFUSE_TAG 7007 /* refused_send.c's */

/* The start of mtl_rttcc.h's mtl_rttcc_match_hdr_t (EAGER, RTS). */
struct match_hdr {
    uint8_t type, flags;
    uint16_t reserved;
    uint32_t cid;
    int32_t src, tag;
};

typedef int (*send_fn)(rttcc_engine_t *, uint32_t, uint8_t, const struct iovec *, int, void *);

int rttcc_engine_send(rttcc_engine_t *engine, uint32_t peer, uint8_t tag, const struct iovec *iov, int iovcnt,
                      void *cookie)
{
    static send_fn next;
    if (NULL == next) {
        void *lib = dlopen("libmca_common_rttcc.so.0", RTLD_LAZY | RTLD_NOLOAD); /* loaded with the MTL */
        next = NULL != lib ? (send_fn) dlsym(lib, "rttcc_engine_send") : NULL;
        if (NULL == next) {
            fprintf(stderr, "refuse_send: no rttcc_engine_send to hand on to\n");
            abort();
        }
    }
    const struct match_hdr *h = iovcnt > 0 ? iov[0].iov_base : NULL;
    if (RTTCC_TAG_MTL == tag && NULL != h && iov[0].iov_len >= sizeof *h && (1 == h->type || 2 == h->type) &&
        REFUSE_TAG == h->tag) {
        return RTTCC_ERR;
    }
    return next(engine, peer, tag, iov, iovcnt, cookie);
}
