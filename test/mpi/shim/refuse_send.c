/* LD_PRELOAD shim for test/mpi/refused_send.c: the engine refuses (as it
 * does when it runs out of memory) every mtl_rttcc message of MPI tag
 * REFUSE_TAG, and the first try of each SKIP (which says a refused
 * message's sequence number will never come, mtl_rttcc.h), so that the
 * MTL must try it again; it hands every other message on.
 * With REFUSE_SEND_FORGE=1 in the environment, the first SKIP that goes
 * is followed by three the MTL never sends: a duplicate, one 3 * 2^30
 * numbers on (behind, modulo 2^32) and one 2^30 on (ahead, held for ever):
 * its receiver must drop the first two (refused_send.c's FORGED_DROPPED)
 * and match the rest as if none had come.
 * For mtl_rttcc's abort paths (refused_send.c -owe): REFUSE_SEND_SKIPS=all
 * refuses every try of every SKIP, so they stay owed (finalize gives up on
 * them), REFUSE_SEND_SKIPS=<n> its first n tries (refused_send.c -pause); REFUSE_SEND_NOMEM=1 makes mtl_rttcc's reallocs fail once a
 * message was refused, so the table of SKIPs owed cannot grow. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "rttcc/engine.h"
#include "rttcc/tags.h"

#define REFUSE_TAG 7007 /* refused_send.c's */
#define MATCH_EAGER 1   /* mtl_rttcc.h's message types */
#define MATCH_RTS 2
#define SKIP 7
#define REMEMBERED 4096 /* skips whose first try was refused */

/* The start of mtl_rttcc.h's mtl_rttcc_match_hdr_t (EAGER, RTS). */
struct match_hdr {
    uint8_t type, flags;
    uint16_t reserved;
    uint32_t cid;
    int32_t src, tag;
};

/* mtl_rttcc.h's mtl_rttcc_skip_hdr_t. */
struct skip_hdr {
    uint8_t type;
    uint8_t reserved[3];
    uint32_t seq;
};

typedef int (*send_fn)(rttcc_engine_t *, uint32_t, uint8_t, const struct iovec *, int, void *);
typedef void *(*realloc_fn)(void *, size_t);

static send_fn next;            /* the engine's */
static realloc_fn next_realloc; /* the C library's, found at the first realloc */
static int every_skip;          /* REFUSE_SEND_SKIPS=all */
static int skip_tries = 1;      /* REFUSE_SEND_SKIPS=<n>: tries of each SKIP refused */
static int no_memory;           /* REFUSE_SEND_NOMEM=1 */
static int refused_one;         /* a message was refused */

static int env_is(const char *name, const char *value)
{
    const char *env = getenv(name);
    return NULL != env && 0 == strcmp(env, value);
}

__attribute__((constructor)) static void setup(void)
{
    every_skip = env_is("REFUSE_SEND_SKIPS", "all");
    if (!every_skip && NULL != getenv("REFUSE_SEND_SKIPS")) {
        skip_tries = atoi(getenv("REFUSE_SEND_SKIPS"));
    }
    no_memory = env_is("REFUSE_SEND_NOMEM", "1");
}

/* True if `code` is in mtl_rttcc. */
static int in_mtl(const void *code)
{
    Dl_info info;
    return 0 != dladdr(code, &info) && NULL != info.dli_fname && NULL != strstr(info.dli_fname, "mca_mtl_rttcc");
}

/* REFUSE_SEND_NOMEM: mtl_rttcc's reallocs fail once a message was refused.
 * The C library's is looked up here, not in setup: a library initialized
 * before this one (one it depends on) may realloc first. */
void *realloc(void *p, size_t n)
{
    realloc_fn real = __atomic_load_n(&next_realloc, __ATOMIC_ACQUIRE);
    if (NULL == real) {
        real = (realloc_fn) dlsym(RTLD_NEXT, "realloc");
        __atomic_store_n(&next_realloc, real, __ATOMIC_RELEASE);
    }
    if (no_memory && __atomic_load_n(&refused_one, __ATOMIC_RELAXED) && in_mtl(__builtin_return_address(0))) {
        return NULL;
    }
    return real(p, n);
}

static void find_next(void)
{
    void *lib = dlopen("libmca_common_rttcc.so.0", RTLD_LAZY | RTLD_NOLOAD); /* loaded with the MTL */
    next = NULL != lib ? (send_fn) dlsym(lib, "rttcc_engine_send") : NULL;
    if (NULL == next) {
        fprintf(stderr, "refuse_send: no rttcc_engine_send to hand on to\n");
        abort();
    }
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t tried[REMEMBERED];
static int tries[REMEMBERED];
static size_t num_tried;

/* True for the first skip_tries tries of a skip (then refused), while there
 * is room to remember it. */
static int early_try(uint32_t peer, uint32_t seq)
{
    uint64_t key = (uint64_t) peer << 32 | seq;
    size_t i;
    int early = 0;
    pthread_mutex_lock(&lock);
    for (i = 0; i < num_tried && tried[i] != key; ++i) {
    }
    if (i == num_tried && num_tried < REMEMBERED) {
        tried[num_tried] = key;
        tries[num_tried++] = 0;
    }
    if (i < num_tried) {
        early = ++tries[i] <= skip_tries;
    }
    pthread_mutex_unlock(&lock);
    return early;
}

/* REFUSE_SEND_FORGE: after the first SKIP that goes, the forged ones. */
static void forge(rttcc_engine_t *engine, uint32_t peer, const struct skip_hdr *real)
{
    static int forged;
    const uint32_t offsets[] = {0, 0xc0000000u, 0x40000000u};
    if (!env_is("REFUSE_SEND_FORGE", "1") || __atomic_exchange_n(&forged, 1, __ATOMIC_RELAXED)) {
        return;
    }
    for (size_t i = 0; i < sizeof offsets / sizeof offsets[0]; ++i) {
        struct skip_hdr s = *real;
        struct iovec iov = {&s, sizeof s};
        s.seq += offsets[i];
        if (next(engine, peer, RTTCC_TAG_MTL, &iov, 1, NULL) < 0) {
            fprintf(stderr, "refuse_send: the engine refused a forged SKIP\n");
            abort();
        }
    }
}

/* The mtl_rttcc message type of a send, 0 if none. */
static uint8_t type_of(uint8_t tag, const struct iovec *iov, int iovcnt)
{
    return RTTCC_TAG_MTL == tag && iovcnt >= 1 && iov[0].iov_len >= 1 ? *(const uint8_t *) iov[0].iov_base : 0;
}

static int refused(uint32_t peer, uint8_t type, const struct iovec *iov)
{
    if ((MATCH_EAGER == type || MATCH_RTS == type) && iov[0].iov_len >= sizeof(struct match_hdr)) {
        const struct match_hdr *h = iov[0].iov_base;
        if (REFUSE_TAG != h->tag) {
            return 0;
        }
        __atomic_store_n(&refused_one, 1, __ATOMIC_RELAXED);
        return 1;
    }
    if (SKIP == type && iov[0].iov_len == sizeof(struct skip_hdr)) {
        const struct skip_hdr *s = iov[0].iov_base;
        return every_skip || early_try(peer, s->seq);
    }
    return 0;
}

int rttcc_engine_send(rttcc_engine_t *engine, uint32_t peer, uint8_t tag, const struct iovec *iov, int iovcnt,
                      void *cookie)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, find_next);
    const uint8_t type = type_of(tag, iov, iovcnt);
    if (0 != type && refused(peer, type, iov)) {
        return RTTCC_ERR;
    }
    int rc = next(engine, peer, tag, iov, iovcnt, cookie);
    if (rc >= 0 && SKIP == type && iov[0].iov_len == sizeof(struct skip_hdr)) {
        forge(engine, peer, iov[0].iov_base);
    }
    return rc;
}
