/* Module: the BTL function table over the engine. */
#include <string.h>

#include "btl_rttcc.h"
#include "btl_rttcc_frag.h"

#include "opal/datatype/opal_convertor.h"
#include "opal/mca/btl/base/btl_base_error.h"
#include "opal/mca/pmix/pmix.h"
#include "opal/util/output.h"
#include "opal/util/show_help.h"

static mca_btl_rttcc_module_t *to_module(struct mca_btl_base_module_t *btl)
{
    return (mca_btl_rttcc_module_t *) btl;
}

static int map_rc(int rc)
{
    switch (rc) {
    case RTTCC_OK:
        return OPAL_SUCCESS;
    case RTTCC_ERR_BUSY:
        return OPAL_ERR_OUT_OF_RESOURCE;
    case RTTCC_ERR_UNREACH:
        return OPAL_ERR_UNREACH;
    case RTTCC_ERR_ARG:
        return OPAL_ERR_BAD_PARAM;
    default:
        return OPAL_ERROR;
    }
}

/* ------------------------------------------------------------ peers */

static mca_btl_rttcc_endpoint_t *endpoint_for_locked(mca_btl_rttcc_module_t *m, opal_proc_t *proc)
{
    uint32_t vpid = proc->proc_name.vpid;
    mca_btl_rttcc_endpoint_t *ep;

    if (vpid < m->num_endpoints && NULL != m->endpoints[vpid]) {
        return m->endpoints[vpid];
    }
    if (vpid >= m->num_endpoints) {
        size_t n = vpid + 1 > 2 * m->num_endpoints ? vpid + 1 : 2 * m->num_endpoints;
        void *grown = realloc(m->endpoints, n * sizeof *m->endpoints);
        if (NULL == grown) {
            return NULL;
        }
        m->endpoints = grown;
        memset(m->endpoints + m->num_endpoints, 0, (n - m->num_endpoints) * sizeof *m->endpoints);
        m->num_endpoints = n;
    }
    /* Not found: the peer runs no rttcc, it is not reachable through us. */
    if (OPAL_SUCCESS != rttcc_mca_engine_add_peer(m->engine, &proc->proc_name)) {
        return NULL;
    }
    ep = calloc(1, sizeof *ep);
    if (NULL == ep) {
        return NULL;
    }
    ep->proc = proc;
    ep->index = vpid;
    m->endpoints[vpid] = ep;
    opal_output_verbose(10, mca_btl_rttcc_component.output,
                        "btl:rttcc: peer %s reachable, %zu-byte segments",
                        OPAL_NAME_PRINT(proc->proc_name),
                        rttcc_engine_peer_segment_size(m->engine, vpid));
    return ep;
}

/* add_procs (any MPI thread) and a datagram from a peer not yet added (the
 * progressing thread, maybe the liveness agent) may add the same peer at once. */
static mca_btl_rttcc_endpoint_t *endpoint_for(mca_btl_rttcc_module_t *m, opal_proc_t *proc)
{
    mca_btl_rttcc_endpoint_t *ep;
    OPAL_THREAD_LOCK(&m->endpoints_lock);
    ep = endpoint_for_locked(m, proc);
    OPAL_THREAD_UNLOCK(&m->endpoints_lock);
    return ep;
}

static int rttcc_add_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                           struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **peers,
                           opal_bitmap_t *reachable)
{
    mca_btl_rttcc_module_t *m = to_module(btl);
    opal_proc_t *self = opal_proc_local_get();

    for (size_t i = 0; i < nprocs; ++i) {
        if (procs[i] == self || procs[i]->proc_name.jobid != self->proc_name.jobid) {
            continue; /* btl/self serves us; other jobs are not supported */
        }
        peers[i] = endpoint_for(m, procs[i]);
        if (NULL != peers[i] && NULL != reachable) {
            opal_bitmap_set_bit(reachable, (int) i);
        }
    }
    return OPAL_SUCCESS;
}

static int rttcc_del_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                           struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **peers)
{
    /* Endpoints live until finalize: the engine may still be ACKing them. */
    return OPAL_SUCCESS;
}

/* ------------------------------------------------------------ descriptors */

static mca_btl_base_descriptor_t *rttcc_alloc(struct mca_btl_base_module_t *btl,
                                              struct mca_btl_base_endpoint_t *ep, uint8_t order,
                                              size_t size, uint32_t flags)
{
    mca_btl_rttcc_frag_t *frag = mca_btl_rttcc_frag_get(to_module(btl), size);
    if (NULL == frag) {
        return NULL;
    }
    frag->base.des_flags = flags;
    return &frag->base;
}

static int rttcc_free(struct mca_btl_base_module_t *btl, mca_btl_base_descriptor_t *des)
{
    mca_btl_rttcc_frag_put((mca_btl_rttcc_frag_t *) des);
    return OPAL_SUCCESS;
}

/* Header area in our buffer; contiguous user data is referenced in place
 * (zero-copy, completed when ACKed), anything else is packed behind it. */
static mca_btl_base_descriptor_t *rttcc_prepare_src(struct mca_btl_base_module_t *btl,
                                                    struct mca_btl_base_endpoint_t *ep,
                                                    struct opal_convertor_t *conv, uint8_t order,
                                                    size_t reserve, size_t *size, uint32_t flags)
{
    mca_btl_rttcc_module_t *m = to_module(btl);
    mca_btl_rttcc_frag_t *frag;
    struct iovec iov;
    uint32_t iov_count = 1;
    size_t max_data = *size;
    bool in_place = !opal_convertor_need_buffers(conv) &&
                    reserve + max_data > m->inline_max;

    if (!in_place && reserve + max_data > btl->btl_max_send_size) {
        if (reserve >= btl->btl_max_send_size) { /* no room for data: the component refuses such limits */
            return NULL;
        }
        max_data = btl->btl_max_send_size - reserve;
    }
    frag = mca_btl_rttcc_frag_get(m, in_place ? reserve : reserve + max_data);
    if (NULL == frag) {
        return NULL;
    }
    iov.iov_len = max_data;
    iov.iov_base = in_place ? NULL : frag->buf + reserve;
    if (opal_convertor_pack(conv, &iov, &iov_count, &max_data) < 0) {
        mca_btl_rttcc_frag_put(frag);
        return NULL;
    }
    frag->segments[0].seg_len = reserve + (in_place ? 0 : max_data);
    if (in_place) {
        frag->segments[1].seg_addr.pval = iov.iov_base;
        frag->segments[1].seg_len = max_data;
        frag->base.des_segment_count = 2;
    }
    frag->base.des_flags = flags;
    *size = max_data;
    return &frag->base;
}

/* ------------------------------------------------------------ sending */

/* The send is over: tell the PML if it wants to know, recycle if ours. */
static void complete_send(mca_btl_rttcc_module_t *m, mca_btl_rttcc_frag_t *frag, int status,
                          bool always_callback)
{
    mca_btl_base_descriptor_t *des = &frag->base;
    int owned = des->des_flags & MCA_BTL_DES_FLAGS_BTL_OWNERSHIP;
    if (always_callback && NULL != des->des_cbfunc) {
        des->des_cbfunc(&m->super, frag->endpoint, des, status);
    }
    if (owned) {
        mca_btl_rttcc_frag_put(frag);
    }
}

static int rttcc_send(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep,
                      mca_btl_base_descriptor_t *des, mca_btl_base_tag_t tag)
{
    mca_btl_rttcc_module_t *m = to_module(btl);
    mca_btl_rttcc_frag_t *frag = (mca_btl_rttcc_frag_t *) des;
    struct iovec iov[2];
    int rc;

    for (size_t i = 0; i < des->des_segment_count; ++i) {
        iov[i].iov_base = des->des_segments[i].seg_addr.pval;
        iov[i].iov_len = des->des_segments[i].seg_len;
    }
    frag->endpoint = ep;
    rc = rttcc_engine_send(m->engine, ep->index, tag, iov, (int) des->des_segment_count, frag);
    if (RTTCC_DONE == rc) {
        /* Copied: done now.  Returning 1 tells the PML no callback follows
         * unless it asked for one always. */
        complete_send(m, frag, OPAL_SUCCESS, des->des_flags & MCA_BTL_DES_SEND_ALWAYS_CALLBACK);
        return 1;
    }
    return map_rc(rc);
}

void mca_btl_rttcc_on_send_done(void *user, void *cookie, int status)
{
    complete_send((mca_btl_rttcc_module_t *) user, (mca_btl_rttcc_frag_t *) cookie,
                  RTTCC_OK == status ? OPAL_SUCCESS : map_rc(status), true);
}

typedef struct {
    const void *header;
    size_t header_size;
    opal_convertor_t *conv;
    size_t payload_size;
} sendi_fill_t;

static void sendi_fill(void *ctx, void *dst, size_t len)
{
    sendi_fill_t *f = (sendi_fill_t *) ctx;
    struct iovec iov = {.iov_base = (char *) dst + f->header_size, .iov_len = f->payload_size};
    uint32_t iov_count = 1;
    size_t max_data = f->payload_size;

    memcpy(dst, f->header, f->header_size);
    if (f->payload_size) {
        opal_convertor_pack(f->conv, &iov, &iov_count, &max_data);
    }
}

static int rttcc_sendi(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep,
                       struct opal_convertor_t *conv, void *header, size_t header_size,
                       size_t payload_size, uint8_t order, uint32_t flags,
                       mca_btl_base_tag_t tag, mca_btl_base_descriptor_t **descriptor)
{
    mca_btl_rttcc_module_t *m = to_module(btl);
    sendi_fill_t fill = {header, header_size, conv, payload_size};
    size_t len = header_size + payload_size;
    int rc = RTTCC_ERR_BUSY;

    if (len <= m->inline_max) {
        rc = rttcc_engine_send_now(m->engine, ep->index, tag, len, sendi_fill, &fill);
        if (RTTCC_DONE == rc) {
            return OPAL_SUCCESS;
        }
    }
    if (NULL != descriptor) {
        *descriptor = NULL; /* the PML falls back to alloc + send */
    }
    return RTTCC_ERR_UNREACH == rc ? OPAL_ERR_UNREACH : OPAL_ERR_RESOURCE_BUSY;
}

/* ------------------------------------------------------------ receiving */

void mca_btl_rttcc_on_recv(void *user, uint32_t peer, uint8_t tag, const void *data, size_t len)
{
    mca_btl_rttcc_module_t *m = (mca_btl_rttcc_module_t *) user;
    const mca_btl_active_message_callback_t *reg = mca_btl_base_active_message_trigger + tag;
    mca_btl_base_segment_t seg;
    mca_btl_base_descriptor_t des;

    if (NULL == reg->cbfunc) {
        opal_output_verbose(1, mca_btl_rttcc_component.output,
                            "btl:rttcc: dropped a message with unregistered tag %u", tag);
        return;
    }
    seg.seg_addr.pval = (void *) data;
    seg.seg_len = len;
    memset(&des, 0, sizeof des);
    des.des_segments = &seg;
    des.des_segment_count = 1;
    reg->cbfunc(&m->super, tag, &des, reg->cbdata);
    (void) peer;
}

/* A datagram signed with our key came from a process of our job that the
 * BML has not added yet (add_procs is lazy past mpi_add_procs_cutoff): add
 * it now, so its retransmissions are accepted.  The engine asks once per
 * process, and never for a datagram nobody in the job signed. */
void mca_btl_rttcc_on_unknown_peer(void *user, uint32_t peer)
{
    mca_btl_rttcc_module_t *m = (mca_btl_rttcc_module_t *) user;
    opal_process_name_t name = OPAL_PROC_MY_NAME;
    opal_proc_t *proc;

    name.vpid = peer;
    proc = opal_proc_for_name(name);
    if (NULL != proc) {
        (void) endpoint_for(m, proc);
    }
}

/* ------------------------------------------------------------ errors */

void mca_btl_rttcc_on_peer_dead(void *user, uint32_t peer, const char *why)
{
    mca_btl_rttcc_module_t *m = (mca_btl_rttcc_module_t *) user;
    mca_btl_rttcc_endpoint_t *ep;
    OPAL_THREAD_LOCK(&m->endpoints_lock);
    ep = peer < m->num_endpoints ? m->endpoints[peer] : NULL;
    OPAL_THREAD_UNLOCK(&m->endpoints_lock);
    opal_proc_t *proc = ep ? ep->proc : NULL;

    rttcc_mca_report_dead_peer(m->engine, peer, why);
    if (NULL != m->error_cb) {
        m->error_cb(&m->super, MCA_BTL_ERROR_FLAGS_FATAL, proc, (char *) "btl_rttcc: peer dead");
    }
    mca_btl_rttcc_fail_gets(m, peer); /* if the PML carries on: none will be answered */
}

static int rttcc_register_error(struct mca_btl_base_module_t *btl,
                                mca_btl_base_module_error_cb_fn_t cbfunc)
{
    to_module(btl)->error_cb = cbfunc;
    return OPAL_SUCCESS;
}

/* ------------------------------------------------------------ lifetime */

static int rttcc_finalize(struct mca_btl_base_module_t *btl)
{
    mca_btl_rttcc_module_t *m = to_module(btl);

    mca_btl_rttcc_component.module = NULL;
    mca_btl_rttcc_rdma_close(m);
    rttcc_mca_engine_close(m->engine); /* drains (a late get's reply still lands), reports, destroys */
    mca_btl_rttcc_rdma_fini(m);
    for (size_t i = 0; i < m->num_endpoints; ++i) {
        free(m->endpoints[i]);
    }
    free(m->endpoints);
    OBJ_DESTRUCT(&m->endpoints_lock);
    mca_btl_rttcc_frag_lists_fini(m);
    free(m);
    return OPAL_SUCCESS;
}

int mca_btl_rttcc_module_init(mca_btl_rttcc_module_t *module)
{
    OBJ_CONSTRUCT(&module->endpoints_lock, opal_mutex_t);
    int rc = mca_btl_rttcc_rdma_init(module);
    return OPAL_SUCCESS == rc ? mca_btl_rttcc_frag_lists_init(module) : rc;
}

mca_btl_rttcc_module_t mca_btl_rttcc_module_template = {
    .super = {
        .btl_component = &mca_btl_rttcc_component.super,
        .btl_add_procs = rttcc_add_procs,
        .btl_del_procs = rttcc_del_procs,
        .btl_finalize = rttcc_finalize,
        .btl_alloc = rttcc_alloc,
        .btl_free = rttcc_free,
        .btl_prepare_src = rttcc_prepare_src,
        .btl_send = rttcc_send,
        .btl_sendi = rttcc_sendi,
        .btl_register_error = rttcc_register_error,
        .btl_register_mem = mca_btl_rttcc_register_mem,
        .btl_deregister_mem = mca_btl_rttcc_deregister_mem,
        .btl_get = mca_btl_rttcc_get,
    },
};
