/* LD_PRELOAD shim for a rendezvous test under pml/cm (test/mpi/run.sh):
 * before a receiver's first get of a message (rttcc_rma_get at offset 0),
 * it sends the message's sender two FINs the MTL never sends (mtl_rttcc.h):
 * one naming another exposure, one naming the right one but a byte more
 * than any message, both for slot 0 (pingpong's one send waiting at a
 * time), and then waits FORGE_FIN_DELAY_MS before the get goes.  The
 * sender must drop both (bad_messages) and wait for the real FIN: a
 * sender that took either completed early and revoked its exposure, and
 * the get then delayed is never answered (the test hangs and times out). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "rttcc/engine.h"
#include "rttcc/tags.h"

#define FIN 3 /* mtl_rttcc.h's reply type */
#define FORGE_FIN_DELAY_MS 200
#define FORGED_MESSAGES 4 /* the first messages read get forged FINs */

/* mtl_rttcc.h's mtl_rttcc_reply_hdr_t. */
struct reply_hdr {
    uint8_t type;
    uint8_t reserved[3];
    uint32_t sid;
    uint32_t key;
    uint32_t reserved2;
    uint64_t accepted;
};

typedef int (*get_fn)(rttcc_engine_t *, uint32_t, uint32_t, uint64_t, size_t, uint32_t, uint8_t);
typedef int (*send_fn)(rttcc_engine_t *, uint32_t, uint8_t, const struct iovec *, int, void *);

static get_fn next_get; /* the engine's */
static send_fn engine_send;

static void find_next(void)
{
    void *lib = dlopen("libmca_common_rttcc.so.0", RTLD_LAZY | RTLD_NOLOAD); /* loaded with the MTL */
    next_get = NULL != lib ? (get_fn) dlsym(lib, "rttcc_rma_get") : NULL;
    engine_send = NULL != lib ? (send_fn) dlsym(lib, "rttcc_engine_send") : NULL;
    if (NULL == next_get || NULL == engine_send) {
        fprintf(stderr, "forge_fin: no rttcc_rma_get or rttcc_engine_send to hand on to\n");
        abort();
    }
}

static void forge(rttcc_engine_t *engine, uint32_t peer, uint32_t key)
{
    const struct reply_hdr forged[] = {
        {.type = FIN, .sid = 0, .key = key ^ 1, .accepted = 0},
        {.type = FIN, .sid = 0, .key = key, .accepted = UINT64_MAX},
    };
    for (size_t i = 0; i < sizeof forged / sizeof forged[0]; ++i) {
        struct iovec iov = {(void *) &forged[i], sizeof forged[i]};
        if (engine_send(engine, peer, RTTCC_TAG_MTL, &iov, 1, NULL) < 0) {
            fprintf(stderr, "forge_fin: the engine refused a forged FIN\n");
            abort();
        }
    }
    const struct timespec delay = {0, FORGE_FIN_DELAY_MS * 1000000L};
    nanosleep(&delay, NULL);
}

static int forged_messages;

/* A run in which nothing was forged tests nothing: it fails. */
__attribute__((destructor)) static void forged_something(void)
{
    if (0 == __atomic_load_n(&forged_messages, __ATOMIC_RELAXED)) {
        fprintf(stderr, "forge_fin: no rendezvous read was intercepted, nothing was forged\n");
        _exit(1);
    }
}

int rttcc_rma_get(rttcc_engine_t *engine, uint32_t peer, uint32_t key, uint64_t offset, size_t len,
                  uint32_t reply_key, uint8_t tag)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, find_next);
    if (RTTCC_TAG_MTL == tag && 0 == offset &&
        __atomic_fetch_add(&forged_messages, 1, __ATOMIC_RELAXED) < FORGED_MESSAGES) {
        forge(engine, peer, key);
    }
    return next_get(engine, peer, key, offset, len, reply_key, tag);
}
