/* Module: process table (add/del procs), the engine's callbacks, progress,
 * finalize. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mtl_rttcc.h"
#include "rttcc/rma.h"

#include "ompi/communicator/communicator.h"
#include "ompi/proc/proc.h"
#include "ompi/mca/rte/rte.h"
#include "opal/mca/pmix/pmix.h"
#include "opal/runtime/opal_progress.h"
#include "opal/util/output.h"
#include "opal/util/proc.h"

static int rttcc_add_procs(struct mca_mtl_base_module_t *mtl, size_t nprocs, struct ompi_proc_t **procs);
static int rttcc_del_procs(struct mca_mtl_base_module_t *mtl, size_t nprocs, struct ompi_proc_t **procs);
static int rttcc_finalize(struct mca_mtl_base_module_t *mtl);

/* pml/cm calls these for every communicator this process is in: arrivals
 * are checked against the live one of their context id (the matcher keys
 * its queues by context id and makes them on first use).  Open MPI adds a
 * communicator at every member before any member may send on it (the
 * barrier of ompi_comm_activate), and frees a context id for reuse right
 * after del_comm, while messages sent on it may still be on their way. */
static int rttcc_add_comm(struct mca_mtl_base_module_t *mtl, struct ompi_communicator_t *comm)
{
    mca_mtl_rttcc_module_t *m = (mca_mtl_rttcc_module_t *) mtl;
    uint32_t cid = ompi_comm_get_cid(comm);
    int rc = OMPI_SUCCESS;

    OPAL_THREAD_LOCK(&m->lock);
    if (cid >= m->num_comms) {
        size_t n = cid + 1 > 2 * m->num_comms ? cid + 1 : 2 * m->num_comms;
        mtl_rttcc_comm_t *grown = realloc(m->comms, n * sizeof *grown);
        if (NULL == grown) {
            rc = OMPI_ERR_OUT_OF_RESOURCE;
            goto out;
        }
        memset(grown + m->num_comms, 0, (n - m->num_comms) * sizeof *grown);
        m->comms = grown;
        m->num_comms = n;
    }
    m->comms[cid].comm = comm;
    m->comms[cid].freed = false;
out:
    OPAL_THREAD_UNLOCK(&m->lock);
    return rc;
}

static int rttcc_del_comm(struct mca_mtl_base_module_t *mtl, struct ompi_communicator_t *comm)
{
    mca_mtl_rttcc_comm_freed((mca_mtl_rttcc_module_t *) mtl, ompi_comm_get_cid(comm));
    return OMPI_SUCCESS;
}

mca_mtl_rttcc_module_t ompi_mtl_rttcc = {
    .super = {
        .mtl_max_contextid = MTL_RTTCC_MAX_CID,
        .mtl_max_tag = INT32_MAX,
        .mtl_request_size = sizeof(mca_mtl_rttcc_request_t) - sizeof(mca_mtl_request_t),
        .mtl_add_procs = rttcc_add_procs,
        .mtl_del_procs = rttcc_del_procs,
        .mtl_finalize = rttcc_finalize,
        .mtl_send = mca_mtl_rttcc_send,
        .mtl_isend = mca_mtl_rttcc_isend,
        .mtl_irecv = mca_mtl_rttcc_irecv,
        .mtl_iprobe = mca_mtl_rttcc_iprobe,
        .mtl_imrecv = mca_mtl_rttcc_imrecv,
        .mtl_improbe = mca_mtl_rttcc_improbe,
        .mtl_cancel = mca_mtl_rttcc_cancel,
        .mtl_add_comm = rttcc_add_comm,
        .mtl_del_comm = rttcc_del_comm,
    },
};

int mca_mtl_rttcc_module_init(mca_mtl_rttcc_module_t *m)
{
    /* A sender gets ahead by at most a window of messages after a loss, and
     * by more only while its command-channel messages pass a data-channel
     * one that waits for credits (rttcc/matcher.h). */
    m->held_max = mca_mtl_rttcc_component.held_max > 0 ? (size_t) mca_mtl_rttcc_component.held_max
                                                        : 16 * (size_t) rttcc_mca_config()->window;
    /* Rendezvous sends expose their data in it (gets need an open window). */
    if (RTTCC_OK != rttcc_rma_window_open(m->engine, &m->window)) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    m->matcher = rttcc_matcher_create(m->held_max, 4 * m->held_max);
    if (NULL == m->matcher || OMPI_SUCCESS != mca_mtl_rttcc_skips_init(m)) {
        rttcc_matcher_destroy(m->matcher);
        m->matcher = NULL;
        (void) rttcc_rma_window_close(m->engine, m->window);
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    OBJ_CONSTRUCT(&m->lock, opal_mutex_t);
    OBJ_CONSTRUCT(&m->slots, opal_pointer_array_t);
    opal_pointer_array_init(&m->slots, 64, INT32_MAX, 64);
    OBJ_CONSTRUCT(&m->landing, opal_hash_table_t);
    opal_hash_table_init(&m->landing, 256);
    OBJ_CONSTRUCT(&m->cancelled, opal_hash_table_t);
    opal_hash_table_init(&m->cancelled, 64);
    m->tx_seq = NULL;
    m->num_tx_seq = 0;
    m->comms = NULL;
    m->num_comms = 0;
    return OMPI_SUCCESS;
}

/* ------------------------------------------------------------ processes */

/* Makes the process reachable: an engine peer, a sequence number towards
 * it, its endpoint.  The lock covers only the tables (the modex may block). */
static int reach(mca_mtl_rttcc_module_t *m, ompi_proc_t *proc)
{
    uint32_t vpid = proc->super.proc_name.vpid;
    mca_mtl_rttcc_endpoint_t *ep;
    int rc;

    if (NULL != proc->proc_endpoints[OMPI_PROC_ENDPOINT_TAG_MTL]) {
        return OMPI_SUCCESS;
    }
    rc = rttcc_mca_engine_add_peer(m->engine, &proc->super.proc_name); /* (itself: nothing to add) */
    if (OPAL_ERR_NOT_FOUND == rc) {
        rttcc_mca_show_help(false, "unreachable process", opal_process_info.nodename,
                            OMPI_NAME_PRINT(&proc->super.proc_name), "it published no mtl_rttcc address");
    }
    if (OMPI_SUCCESS != rc) {
        return OMPI_ERR_UNREACH;
    }
    rc = OMPI_ERR_OUT_OF_RESOURCE;
    OPAL_THREAD_LOCK(&m->lock);
    if (vpid >= m->num_tx_seq) {
        size_t n = vpid + 1 > 2 * m->num_tx_seq ? vpid + 1 : 2 * m->num_tx_seq;
        uint32_t *grown = realloc(m->tx_seq, n * sizeof *grown);
        if (NULL == grown) {
            goto out;
        }
        memset(grown + m->num_tx_seq, 0, (n - m->num_tx_seq) * sizeof *grown);
        m->tx_seq = grown;
        m->num_tx_seq = n;
    }
    rc = OMPI_SUCCESS;
    if (NULL == proc->proc_endpoints[OMPI_PROC_ENDPOINT_TAG_MTL]) {
        ep = malloc(sizeof *ep);
        if (NULL == ep) {
            rc = OMPI_ERR_OUT_OF_RESOURCE;
            goto out;
        }
        ep->index = vpid;
        opal_atomic_wmb(); /* the endpoint is read without the lock */
        proc->proc_endpoints[OMPI_PROC_ENDPOINT_TAG_MTL] = ep;
    }
out:
    OPAL_THREAD_UNLOCK(&m->lock);
    return rc;
}

static int rttcc_add_procs(struct mca_mtl_base_module_t *mtl, size_t nprocs, struct ompi_proc_t **procs)
{
    mca_mtl_rttcc_module_t *m = (mca_mtl_rttcc_module_t *) mtl;
    int rc = OMPI_SUCCESS;

    for (size_t i = 0; i < nprocs && OMPI_SUCCESS == rc; ++i) {
        rc = reach(m, procs[i]);
    }
    return rc;
}

/* Under lazy wire-up (Open MPI adds remote processes on first use) a send
 * may name a process add_procs never saw: reach it now. */
mca_mtl_rttcc_endpoint_t *mca_mtl_rttcc_endpoint(mca_mtl_rttcc_module_t *m, ompi_proc_t *proc)
{
    mca_mtl_rttcc_endpoint_t *ep = proc->proc_endpoints[OMPI_PROC_ENDPOINT_TAG_MTL];
    if (OPAL_LIKELY(NULL != ep)) {
        return ep;
    }
    (void) reach(m, proc);
    return proc->proc_endpoints[OMPI_PROC_ENDPOINT_TAG_MTL];
}

static int rttcc_del_procs(struct mca_mtl_base_module_t *mtl, size_t nprocs, struct ompi_proc_t **procs)
{
    for (size_t i = 0; i < nprocs; ++i) {
        free(procs[i]->proc_endpoints[OMPI_PROC_ENDPOINT_TAG_MTL]);
        procs[i]->proc_endpoints[OMPI_PROC_ENDPOINT_TAG_MTL] = NULL;
    }
    return OMPI_SUCCESS;
}

/* ------------------------------------------------------------ engine callbacks */

static void on_recv(void *user, uint32_t peer, uint8_t tag, const void *data, size_t len)
{
    mca_mtl_rttcc_module_t *m = user;
    uint8_t type = len > 0 ? *(const uint8_t *) data : 0;

    if (RTTCC_TAG_MTL == tag && (MTL_RTTCC_EAGER == type || MTL_RTTCC_RTS == type) &&
        len >= sizeof(mtl_rttcc_match_hdr_t)) {
        mtl_rttcc_match_hdr_t hdr;
        memcpy(&hdr, data, sizeof hdr);
        size_t payload = len - sizeof hdr;
        bool malformed = hdr.cid > MTL_RTTCC_MAX_CID ||
                         (MTL_RTTCC_EAGER == type ? hdr.len != payload
                                                  : (0 != payload || 0 == hdr.key)); /* RTS: names its exposure */
        /* Dropped or not, it spends its sequence number: in its turn. */
        mca_mtl_rttcc_on_arrival(m, peer, &hdr, (const char *) data + sizeof hdr, NULL, malformed);
        return;
    } else if (RTTCC_TAG_MTL == tag &&
               (MTL_RTTCC_FIN == type || MTL_RTTCC_SYNC_ACK == type || MTL_RTTCC_CANCELLED == type) &&
               len == sizeof(mtl_rttcc_reply_hdr_t)) {
        mtl_rttcc_reply_hdr_t reply;
        memcpy(&reply, data, sizeof reply);
        mca_mtl_rttcc_on_reply(m, peer, &reply);
        return;
    } else if (RTTCC_TAG_MTL == tag && MTL_RTTCC_CANCEL == type && len == sizeof(mtl_rttcc_cancel_hdr_t)) {
        mtl_rttcc_cancel_hdr_t cancel;
        memcpy(&cancel, data, sizeof cancel);
        mca_mtl_rttcc_on_cancel(m, peer, &cancel);
        return;
    } else if (RTTCC_TAG_MTL == tag && MTL_RTTCC_SKIP == type && len == sizeof(mtl_rttcc_skip_hdr_t)) {
        mtl_rttcc_skip_hdr_t skip;
        memcpy(&skip, data, sizeof skip);
        mca_mtl_rttcc_on_skip(m, peer, &skip);
        return;
    }
    MTL_RTTCC_COUNT(bad_messages);
    opal_output_verbose(1, mca_mtl_rttcc_component.output,
                        "mtl:rttcc: dropped a malformed message from process %u (tag 0x%x, type %u, %zu bytes)",
                        peer, tag, type, len);
}

static void on_send_done(void *user, void *cookie, int status)
{
    (void) user;
    mca_mtl_rttcc_send_done(cookie, RTTCC_OK == status ? OMPI_SUCCESS : OMPI_ERR_UNREACH);
}

/* A reply of a rendezvous get (mtl_rttcc_recv.c) landed. */
static void on_put(void *user, uint32_t peer, uint32_t key, uint64_t offset, size_t len, uint8_t tag)
{
    (void) offset;
    if (RTTCC_TAG_MTL == tag) {
        mca_mtl_rttcc_on_put(user, peer, key, len);
    }
}

/* A lost peer: MPI cannot go on without it (as pml/ob1 with a BTL's fatal
 * error), so say who and why, and abort the job. */
static void on_peer_dead(void *user, uint32_t peer, const char *why)
{
    mca_mtl_rttcc_module_t *m = user;
    rttcc_mca_report_dead_peer(m->engine, peer, why);
    ompi_rte_abort(OMPI_ERR_UNREACH, NULL);
}

/* A datagram signed with our key from a process not added yet (add_procs
 * runs per communicator under lazy wire-up): add it, its retransmissions
 * get in.  The engine asks once per process, never for a forgery. */
static void on_unknown_peer(void *user, uint32_t peer)
{
    mca_mtl_rttcc_module_t *m = user;
    opal_process_name_t name = OPAL_PROC_MY_NAME;
    ompi_proc_t *proc;

    name.vpid = peer;
    proc = (ompi_proc_t *) ompi_proc_for_name(name);
    if (NULL != proc) {
        (void) reach(m, proc);
    }
}

void mca_mtl_rttcc_callbacks(rttcc_callbacks_t *cbs, mca_mtl_rttcc_module_t *m)
{
    cbs->user = m;
    cbs->on_recv = on_recv;
    cbs->on_send_done = on_send_done;
    cbs->on_peer_dead = on_peer_dead;
    cbs->on_unknown_peer = on_unknown_peer;
    cbs->on_put = on_put;
}

int mca_mtl_rttcc_send_control(mca_mtl_rttcc_module_t *m, uint32_t peer, const mtl_rttcc_reply_hdr_t *reply)
{
    struct iovec iov = {(void *) reply, sizeof *reply};
    int rc;

    if (peer == m->self) {
        mca_mtl_rttcc_on_reply(m, peer, reply);
        return OMPI_SUCCESS;
    }
    rc = rttcc_engine_send(m->engine, peer, RTTCC_TAG_MTL, &iov, 1, NULL);
    return rc >= 0 ? OMPI_SUCCESS : OMPI_ERR_UNREACH; /* copied: no completion follows */
}

int mca_mtl_rttcc_progress(void)
{
    rttcc_engine_t *e = ompi_mtl_rttcc.engine;
    if (NULL == e) {
        return 0;
    }
    int events = rttcc_engine_progress(e);
    mca_mtl_rttcc_send_skips(&ompi_mtl_rttcc); /* after the pass: what it freed may take them */
    return events;
}

/* ------------------------------------------------------------ finalize */

/* rttcc_stats: the MTL's own counters. */
static void print_counters(mca_mtl_rttcc_module_t *m)
{
    const mca_mtl_rttcc_counters_t *c = &mca_mtl_rttcc_component.counters;
    fprintf(stderr, "rttcc-mtl rank=%u"
#define MTL_RTTCC_FORMAT(name, help) " " #name "=%lld"
            MCA_MTL_RTTCC_COUNTERS(MTL_RTTCC_FORMAT)
#undef MTL_RTTCC_FORMAT
            "\n", m->self
#define MTL_RTTCC_VALUE(name, help) , (long long) c->name
            MCA_MTL_RTTCC_COUNTERS(MTL_RTTCC_VALUE)
#undef MTL_RTTCC_VALUE
    );
}

static int rttcc_finalize(struct mca_mtl_base_module_t *mtl)
{
    mca_mtl_rttcc_module_t *m = (mca_mtl_rttcc_module_t *) mtl;

    opal_progress_unregister(mca_mtl_rttcc_progress);
    mca_mtl_rttcc_flush_skips(m); /* before the drain: their receivers wait for them */
    if (rttcc_mca_config()->stats) {
        print_counters(m); /* (the engine's lines follow: close prints them) */
    }
    (void) rttcc_rma_window_close(m->engine, m->window); /* (every send completed: nothing exposed) */
    rttcc_mca_engine_close(m->engine); /* drains, reports, destroys */
    m->engine = NULL;
    mca_mtl_rttcc_skips_fini(m);
    mca_mtl_rttcc_free_arrivals(m);
    rttcc_matcher_destroy(m->matcher);
    m->matcher = NULL;
    free(m->tx_seq);
    m->tx_seq = NULL;
    m->num_tx_seq = 0;
    free(m->comms);
    m->comms = NULL;
    m->num_comms = 0;
    OBJ_DESTRUCT(&m->landing);
    OBJ_DESTRUCT(&m->cancelled);
    OBJ_DESTRUCT(&m->slots);
    OBJ_DESTRUCT(&m->lock);
    return OMPI_SUCCESS;
}
