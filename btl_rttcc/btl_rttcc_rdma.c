/* RDMA get over the engine, so ob1 uses its RGET protocol for contiguous
 * messages above the eager limit: the sender registers its buffer (an
 * exposure of the engine's RMA window to the receiver), the receiver's
 * btl_get asks the sender's engine for the bytes, and they land straight
 * in the receive buffer (a grant the receiver makes for the reply):
 *
 *   sender (ob1)            receiver (ob1)            engines
 *   register: expose  --RGET(handle)-->  btl_get: grant reply buffer
 *                                       rttcc_rma_get -------> served by
 *                     <-- reply lands in the receive buffer ---- the sender's
 *                                       on_put: get done, FIN    engine
 *   FIN: deregister: revoke
 *
 * The sender's application takes no part in serving the get (its engine
 * does, or its liveness agent while it computes), the receiver copies no
 * byte out of a reassembly buffer, and a get's reply never asks for an ACK
 * at once: the FIN carries it back. */
#include <stdlib.h>

#include "btl_rttcc.h"

#include "opal/util/output.h"
#include "rttcc/rma.h"
#include "rttcc/tags.h"

/* A get in flight, found by its reply grant's key. */
typedef struct rttcc_get_t {
    struct rttcc_get_t *next;
    uint32_t reply_key; /* the grant its reply lands in */
    mca_btl_rttcc_endpoint_t *endpoint;
    void *local_address;
    mca_btl_base_registration_handle_t *local_handle;
    mca_btl_base_rdma_completion_fn_t cbfunc;
    void *cbcontext, *cbdata;
} rttcc_get_t;

static mca_btl_rttcc_module_t *to_module(struct mca_btl_base_module_t *btl)
{
    return (mca_btl_rttcc_module_t *) btl;
}

int mca_btl_rttcc_rdma_init(mca_btl_rttcc_module_t *m)
{
    OBJ_CONSTRUCT(&m->gets_lock, opal_mutex_t);
    m->gets = NULL;
    return RTTCC_OK == rttcc_rma_window_open(m->engine, &m->window) ? OPAL_SUCCESS : OPAL_ERROR;
}

void mca_btl_rttcc_rdma_close(mca_btl_rttcc_module_t *m)
{
    (void) rttcc_rma_window_close(m->engine, m->window);
    OPAL_THREAD_LOCK(&m->gets_lock);
    while (NULL != m->gets) { /* the PML is gone: a reply that still lands calls nobody (on_put finds none) */
        rttcc_get_t *g = m->gets;
        m->gets = g->next;
        free(g);
    }
    OPAL_THREAD_UNLOCK(&m->gets_lock);
}

void mca_btl_rttcc_rdma_fini(mca_btl_rttcc_module_t *m)
{
    OBJ_DESTRUCT(&m->gets_lock); /* the engine is closed: nothing takes it any more */
}

/* Memory a peer may read (the sender's buffer under RGET) is exposed to
 * that peer alone; memory registered for local writes needs nothing (a get
 * grants its own reply buffer). */
mca_btl_base_registration_handle_t *mca_btl_rttcc_register_mem(struct mca_btl_base_module_t *btl,
                                                               struct mca_btl_base_endpoint_t *ep, void *base,
                                                               size_t size, uint32_t flags)
{
    mca_btl_rttcc_module_t *m = to_module(btl);
    mca_btl_base_registration_handle_t *h = calloc(1, sizeof *h);

    if (NULL == h) {
        return NULL;
    }
    h->base = (uint64_t) (uintptr_t) base;
    h->len = size;
    if ((flags & MCA_BTL_REG_FLAG_REMOTE_READ) &&
        (NULL == ep || RTTCC_OK != rttcc_rma_expose(m->engine, m->window, ep->index, base, size, &h->key))) {
        free(h); /* ob1 then sends by rendezvous */
        return NULL;
    }
    return h;
}

int mca_btl_rttcc_deregister_mem(struct mca_btl_base_module_t *btl, mca_btl_base_registration_handle_t *h)
{
    if (0 != h->key) {
        (void) rttcc_engine_revoke(to_module(btl)->engine, h->key); /* replies in flight are copied first */
    }
    free(h);
    return OPAL_SUCCESS;
}

static void track(mca_btl_rttcc_module_t *m, rttcc_get_t *g)
{
    OPAL_THREAD_LOCK(&m->gets_lock);
    g->next = m->gets;
    m->gets = g;
    OPAL_THREAD_UNLOCK(&m->gets_lock);
}

/* The get whose reply lands in reply_key (peer < 0: any peer), or the first
 * get from `peer` (reply_key 0), taken off the list; NULL if none. */
static rttcc_get_t *untrack(mca_btl_rttcc_module_t *m, uint32_t reply_key, int64_t peer)
{
    rttcc_get_t **at, *g = NULL;
    OPAL_THREAD_LOCK(&m->gets_lock);
    for (at = &m->gets; NULL != *at; at = &(*at)->next) {
        if ((0 == reply_key || (*at)->reply_key == reply_key) && (peer < 0 || (*at)->endpoint->index == peer)) {
            g = *at;
            *at = g->next;
            break;
        }
    }
    OPAL_THREAD_UNLOCK(&m->gets_lock);
    return g;
}

static void finish(mca_btl_rttcc_module_t *m, rttcc_get_t *g, int status)
{
    (void) rttcc_engine_revoke(m->engine, g->reply_key);
    g->cbfunc(&m->super, g->endpoint, g->local_address, g->local_handle, g->cbcontext, g->cbdata, status);
    free(g);
}

int mca_btl_rttcc_get(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep, void *local_address,
                      uint64_t remote_address, struct mca_btl_base_registration_handle_t *local_handle,
                      struct mca_btl_base_registration_handle_t *remote_handle, size_t size, int flags,
                      int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata)
{
    mca_btl_rttcc_module_t *m = to_module(btl);
    uint64_t offset = remote_address - remote_handle->base;
    rttcc_get_t *g;
    int rc;

    if (0 == remote_handle->key || remote_address < remote_handle->base || offset > remote_handle->len ||
        size > remote_handle->len - offset || size > btl->btl_get_limit || 0 == size) {
        return OPAL_ERR_BAD_PARAM;
    }
    g = calloc(1, sizeof *g);
    if (NULL == g) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    *g = (rttcc_get_t){.endpoint = ep, .local_address = local_address, .local_handle = local_handle,
                       .cbfunc = cbfunc, .cbcontext = cbcontext, .cbdata = cbdata};
    if (RTTCC_OK != rttcc_engine_grant(m->engine, ep->index, local_address, size, &g->reply_key)) {
        free(g);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    track(m, g); /* before the request: its reply may land on another thread's progress */
    /* A request of its own, never a batch entry: the peer's batch may be
     * held by a lazy lock of osc_rttcc (until MPI_Win_unlock, which may
     * wait for this very message), and a batch is refused whole when one
     * of its entries is bad. */
    rc = rttcc_rma_get(m->engine, ep->index, remote_handle->key, offset, size, g->reply_key, RTTCC_TAG_BTL_GET);
    if (RTTCC_OK != rc && RTTCC_DONE != rc) {
        if (untrack(m, g->reply_key, -1) == g) {
            (void) rttcc_engine_revoke(m->engine, g->reply_key);
            free(g);
        }
        return RTTCC_ERR_UNREACH == rc ? OPAL_ERR_UNREACH : OPAL_ERR_OUT_OF_RESOURCE;
    }
    BTL_RTTCC_COUNT(rdma_gets, 1);
    BTL_RTTCC_COUNT(rdma_get_bytes, (int64_t) size);
    (void) flags, (void) order;
    return OPAL_SUCCESS;
}

/* A reply landed whole: its get is done.  Puts on other tags are not ours. */
void mca_btl_rttcc_on_put(void *user, uint32_t peer, uint32_t key, uint64_t offset, size_t len, uint8_t tag)
{
    mca_btl_rttcc_module_t *m = (mca_btl_rttcc_module_t *) user;
    rttcc_get_t *g;

    if (RTTCC_TAG_BTL_GET != tag || NULL == (g = untrack(m, key, peer))) {
        return;
    }
    finish(m, g, OPAL_SUCCESS);
    (void) offset, (void) len;
}

/* The peer is gone: its gets will never be answered. */
void mca_btl_rttcc_fail_gets(mca_btl_rttcc_module_t *m, uint32_t peer)
{
    rttcc_get_t *g;
    while (NULL != (g = untrack(m, 0, peer))) {
        finish(m, g, OPAL_ERR_UNREACH);
    }
}
