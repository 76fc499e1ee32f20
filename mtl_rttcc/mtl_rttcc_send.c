/* Sends: eager (data with the match header), rendezvous (the data exposed
 * to the receiver, which reads it with gets and answers FIN), and sends to
 * this process itself. */
#include <string.h>

#include "mtl_rttcc.h"
#include "rttcc/handoff.h"
#include "rttcc/rma.h"

#include "ompi/communicator/communicator.h"
#include "ompi/mca/mtl/base/mtl_base_datatype.h"
#include "ompi/proc/proc.h"
#include "opal/runtime/opal_progress.h"
#include "opal/util/output.h"

/* A request's `pending` counts what it still waits for: each engine send
 * not yet ACKed, the FIN or SYNC_ACK, and a hold the starting code keeps
 * while it issues, so that completions racing in from another thread's
 * progress (MPI_THREAD_MULTIPLE) cannot finish it early. */
static void hold(mca_mtl_rttcc_request_t *req, int32_t n)
{
    OPAL_THREAD_ADD_FETCH32(&req->pending, n);
}

/* Done, whichever way: the receiver reads no more (its FIN came, it
 * cancelled, or the RTS never went), so the exposure goes first. */
static void finish(mca_mtl_rttcc_request_t *req)
{
    if (0 != req->key) {
        (void) rttcc_engine_revoke(ompi_mtl_rttcc.engine, req->key);
        req->key = 0;
    }
    if (req->buf_owned) {
        free(req->buf);
        req->buf = NULL;
        req->buf_owned = false;
    }
    if (NULL == req->super.ompi_req) { /* a blocking send's own request */
        rttcc_handoff_release(req);
        opal_atomic_wmb();
        req->pending = -1;
        return;
    }
    req->super.ompi_req->req_status.MPI_ERROR = req->error;
    rttcc_handoff_release(req);
    req->super.completion_callback(&req->super);
}

void mca_mtl_rttcc_send_done(mca_mtl_rttcc_request_t *req, int status)
{
    if (OMPI_SUCCESS != status) {
        req->error = MPI_ERR_OTHER;
    }
    /* The count is a reference count, so its decrement is acquire-release:
     * what each thread did with the request, this decrement included,
     * happens before whichever thread finishes it.  (opal's atomics are
     * relaxed: ThreadSanitizer rightly saw an earlier decrement race with
     * the request's reuse.) */
    if (0 == __atomic_sub_fetch(&req->pending, 1, __ATOMIC_ACQ_REL)) {
        finish(req);
    }
}

/* A slot names a send waiting for a reply; the reply must come from its
 * peer, and a FIN must name the exposure and at most the bytes sent.
 * CANCELLED may come unasked: the receiver dropped the message. */
static int take_slot(mca_mtl_rttcc_module_t *m, mca_mtl_rttcc_request_t *req, uint8_t awaits)
{
    req->hdr.sid = (uint32_t) opal_pointer_array_add(&m->slots, req);
    req->sid = (int) req->hdr.sid;
    req->awaits = awaits;
    return req->sid < 0 ? OMPI_ERR_OUT_OF_RESOURCE : OMPI_SUCCESS;
}

static mca_mtl_rttcc_request_t *claim_slot(mca_mtl_rttcc_module_t *m, uint32_t peer, const mtl_rttcc_reply_hdr_t *r)
{
    mca_mtl_rttcc_request_t *req;
    OPAL_THREAD_LOCK(&m->lock);
    req = r->sid < INT32_MAX ? opal_pointer_array_get_item(&m->slots, (int) r->sid) : NULL;
    if (NULL != req && req->peer == peer && (req->awaits == r->type || MTL_RTTCC_CANCELLED == r->type) &&
        (MTL_RTTCC_FIN != r->type || (r->key == req->key && r->accepted <= req->buf_len))) {
        opal_pointer_array_set_item(&m->slots, (int) r->sid, NULL);
        req->sid = -1;
    } else {
        req = NULL;
    }
    OPAL_THREAD_UNLOCK(&m->lock);
    return req;
}

void mca_mtl_rttcc_on_reply(mca_mtl_rttcc_module_t *m, uint32_t peer, const mtl_rttcc_reply_hdr_t *r)
{
    mca_mtl_rttcc_request_t *req = claim_slot(m, peer, r);

    if (NULL == req) {
        MTL_RTTCC_COUNT(bad_messages);
        opal_output_verbose(1, mca_mtl_rttcc_component.output,
                            "mtl:rttcc: dropped an unsolicited or malformed reply (type %u, slot %u) from process %u",
                            r->type, r->sid, peer);
        return;
    }
    if (MTL_RTTCC_CANCELLED == r->type) { /* taken back (mtl_rttcc_cancel.c), or dropped unreceived */
        MTL_RTTCC_COUNT(cancelled);
        if (NULL != req->super.ompi_req) { /* a blocking send has no status to say it */
            req->super.ompi_req->req_status._cancelled = true;
        }
    } else if (MTL_RTTCC_FIN == r->type) {
        opal_output_verbose(50, mca_mtl_rttcc_component.output, "mtl:rttcc: FIN from %u: it read %llu of %zu bytes",
                            peer, (unsigned long long) r->accepted, req->buf_len);
    }
    mca_mtl_rttcc_send_done(req, OMPI_SUCCESS); /* the reply it waited for; finish() revokes the exposure */
}

/* The message could not go: no reply will come for its slot. */
static void abandon_reply(mca_mtl_rttcc_module_t *m, mca_mtl_rttcc_request_t *req)
{
    bool held = false;
    OPAL_THREAD_LOCK(&m->lock);
    if (req->sid >= 0) {
        opal_pointer_array_set_item(&m->slots, req->sid, NULL);
        req->sid = -1;
        held = true;
    }
    OPAL_THREAD_UNLOCK(&m->lock);
    if (held) {
        mca_mtl_rttcc_send_done(req, OMPI_ERR_UNREACH);
    }
}

/* The engine refused the message (rc), whose sequence number is spent:
 * its receiver is owed a SKIP, unless it is dead (it waits for nothing),
 * and no reply will come. */
static void refused(mca_mtl_rttcc_module_t *m, mca_mtl_rttcc_request_t *req, int rc)
{
    if (RTTCC_ERR_UNREACH != rc) {
        mca_mtl_rttcc_owe_skip(m, req->peer, req->hdr.seq);
    }
    abandon_reply(m, req);
}

static int start_send(mca_mtl_rttcc_module_t *m, struct ompi_communicator_t *comm, int dest, int tag,
                      struct opal_convertor_t *convertor, mca_pml_base_send_mode_t mode,
                      mca_mtl_rttcc_request_t *req)
{
    mca_mtl_rttcc_endpoint_t *ep = mca_mtl_rttcc_endpoint(m, ompi_comm_peer_lookup(comm, dest));
    bool sync = MCA_PML_BASE_SEND_SYNCHRONOUS == mode;
    size_t len;
    int rc;

    if (NULL == ep) {
        return OMPI_ERR_UNREACH;
    }
    rttcc_handoff_acquire(req);
    req->is_send = true;
    req->peer = ep->index;
    req->convertor = convertor;
    req->error = MPI_SUCCESS;
    req->sid = -1;
    req->awaits = 0;
    req->cancelling = false;
    req->key = 0;
    req->pending = 1; /* the hold */
    rc = ompi_mtl_datatype_pack(convertor, &req->buf, &len, &req->buf_owned);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    req->buf_len = len;
    memset(&req->hdr, 0, sizeof req->hdr);
    req->hdr.cid = ompi_comm_get_cid(comm);
    req->hdr.src = ompi_comm_rank(comm);
    req->hdr.tag = tag;
    req->hdr.len = len;
    req->hdr.flags = sync ? MTL_RTTCC_FLAG_SYNC : 0;

    bool rndv = len > m->eager_limit && req->peer != m->self;
    uint8_t awaits = rndv ? MTL_RTTCC_FIN : (sync && req->peer != m->self) ? MTL_RTTCC_SYNC_ACK : 0;
    /* The receiver reads the data where it is (len > 0: above the eager
     * limit), from the moment the RTS names it. */
    if (rndv && RTTCC_OK != rttcc_rma_expose(m->engine, m->window, req->peer, req->buf, len, &req->key)) {
        req->key = 0;
        rc = OMPI_ERR_OUT_OF_RESOURCE;
        goto fail;
    }
    req->hdr.key = req->key;
    mca_mtl_rttcc_send_skips(m); /* owed ones first: this message would wait behind them (progress sends them too) */
    OPAL_THREAD_LOCK(&m->lock);
    rc = 0 != awaits ? take_slot(m, req, awaits) : OMPI_SUCCESS;
    if (OMPI_SUCCESS == rc) {
        /* Spent even if the engine refuses the message below: its receiver
         * is then owed a SKIP (refused()). */
        req->hdr.seq = m->tx_seq[req->peer]++;
    }
    OPAL_THREAD_UNLOCK(&m->lock);
    if (OMPI_SUCCESS != rc) {
        goto fail;
    }
    if (0 != awaits || sync) {
        hold(req, 1); /* the reply, or a synchronous send to self being matched */
    }

    if (req->peer == m->self) {
        MTL_RTTCC_COUNT(self_sends);
        req->hdr.type = MTL_RTTCC_EAGER;
        mca_mtl_rttcc_on_arrival(m, m->self, &req->hdr, req->buf, sync ? req : NULL, false); /* copies what waits */
    } else if (!rndv) {
        struct iovec iov[2] = {{&req->hdr, sizeof req->hdr}, {req->buf, len}};
        MTL_RTTCC_COUNT(eager_sends);
        req->hdr.type = MTL_RTTCC_EAGER;
        hold(req, 1);
        rc = rttcc_engine_send(m->engine, req->peer, RTTCC_TAG_MTL, iov, len ? 2 : 1, req);
        if (rc < 0) {
            refused(m, req, rc);
        }
        if (RTTCC_OK != rc) { /* copied, or refused */
            mca_mtl_rttcc_send_done(req, rc >= 0 ? OMPI_SUCCESS : OMPI_ERR_UNREACH);
        }
    } else {
        struct iovec iov = {&req->hdr, sizeof req->hdr};
        MTL_RTTCC_COUNT(rndv_sends);
        req->hdr.type = MTL_RTTCC_RTS;
        rc = rttcc_engine_send(m->engine, req->peer, RTTCC_TAG_MTL, &iov, 1, NULL); /* copied */
        if (rc < 0) {
            refused(m, req, rc);
        }
    }
    opal_output_verbose(50, mca_mtl_rttcc_component.output, "mtl:rttcc: %s %zu bytes to %u (cid %u tag %d seq %u)",
                        MTL_RTTCC_RTS == req->hdr.type ? "RTS" : "eager", len, req->peer, req->hdr.cid, tag,
                        req->hdr.seq);
    mca_mtl_rttcc_send_done(req, OMPI_SUCCESS); /* the hold */
    return OMPI_SUCCESS;

fail: /* nothing went: the request is the caller's again */
    if (0 != req->key) {
        (void) rttcc_engine_revoke(m->engine, req->key);
        req->key = 0;
    }
    if (req->buf_owned) {
        free(req->buf);
        req->buf_owned = false;
    }
    return rc;
}

int mca_mtl_rttcc_isend(struct mca_mtl_base_module_t *mtl, struct ompi_communicator_t *comm, int dest, int tag,
                        struct opal_convertor_t *convertor, mca_pml_base_send_mode_t mode, bool blocking,
                        mca_mtl_request_t *mtl_request)
{
    (void) blocking;
    return start_send((mca_mtl_rttcc_module_t *) mtl, comm, dest, tag, convertor, mode,
                      (mca_mtl_rttcc_request_t *) mtl_request);
}

int mca_mtl_rttcc_send(struct mca_mtl_base_module_t *mtl, struct ompi_communicator_t *comm, int dest, int tag,
                       struct opal_convertor_t *convertor, mca_pml_base_send_mode_t mode)
{
    mca_mtl_rttcc_request_t req;
    int rc;

    memset(&req, 0, sizeof req);
    req.super.ompi_req = NULL; /* finish() marks completion with pending = -1 */
    rc = start_send((mca_mtl_rttcc_module_t *) mtl, comm, dest, tag, convertor, mode, &req);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    while (-1 != req.pending) {
        opal_progress();
    }
    opal_atomic_rmb();
    rttcc_handoff_acquire(&req);
    return MPI_SUCCESS == req.error ? OMPI_SUCCESS : OMPI_ERROR;
}
