/* MPI_Cancel (MPI 3.1, 3.8.4): a wait on a cancelled request is local, and
 * either the cancel succeeds (the message is never received) or the
 * communication does, never both.
 *
 * A receive is cancelled while it is still posted.  A send is cancelled
 * while its receiver has not matched it.  Only sends that wait for their
 * receiver (rendezvous, synchronous) ask: the others complete on their own
 * and are not cancelled.  The receiver takes the message out of its
 * unexpected queue or, when its turn has not come (held behind an earlier
 * one, or still on its way), notes it and drops it when it does; either
 * way it answers CANCELLED, and the sender revokes a rendezvous send's
 * exposure.  A message already matched gets no answer: its FIN (once its
 * receiver has read it) or SYNC_ACK comes and the send completes as usual.
 *
 *   sender                                receiver
 *   RTS{seq 7, sid 3} ------------------> unexpected
 *   MPI_Cancel: CANCEL{sid 3, seq 7} ---> taken out (or noted)
 *   completes cancelled <---------------- CANCELLED{sid 3}
 */
#include "mtl_rttcc.h"
#include "rttcc/handoff.h"

#include "opal/util/output.h"

/* Cancelled messages noted before their turn; past this, cancels of such
 * messages fail (the sends then complete as usual). */
#define MTL_RTTCC_MAX_NOTED 4096

static uint64_t noted_key(uint32_t peer, uint32_t seq)
{
    return (uint64_t) peer << 32 | seq;
}

bool mca_mtl_rttcc_drop_cancelled(mca_mtl_rttcc_module_t *m, uint32_t peer, uint32_t seq)
{
    return 0 != opal_hash_table_get_size(&m->cancelled) &&
           OPAL_SUCCESS == opal_hash_table_remove_value_uint64(&m->cancelled, noted_key(peer, seq));
}

void mca_mtl_rttcc_on_cancel(mca_mtl_rttcc_module_t *m, uint32_t peer, const mtl_rttcc_cancel_hdr_t *c)
{
    mtl_rttcc_reply_hdr_t reply = {.type = MTL_RTTCC_CANCELLED, .sid = c->sid};
    rttcc_match_item_t *arrival;
    bool taken;

    OPAL_THREAD_LOCK(&m->lock);
    switch (rttcc_matcher_take_arrival(m->matcher, c->cid, peer, c->seq, &arrival)) {
    case 1:
        taken = true;
        break;
    case -1:
        taken = opal_hash_table_get_size(&m->cancelled) < MTL_RTTCC_MAX_NOTED &&
                OPAL_SUCCESS == opal_hash_table_set_value_uint64(&m->cancelled, noted_key(peer, c->seq), m);
        break;
    default:
        taken = false; /* matched */
    }
    OPAL_THREAD_UNLOCK(&m->lock);
    free(arrival); /* the arrival's first member */
    if (taken && OMPI_SUCCESS != mca_mtl_rttcc_send_control(m, peer, &reply)) {
        opal_output_verbose(1, mca_mtl_rttcc_component.output, "mtl:rttcc: cannot answer process %u", peer);
    }
}

/* Asks the receiver, once, while the send waits for its reply and its MPI
 * request has not completed (pml/cm completes a buffered send's at once:
 * the user may have seen it not cancelled already). */
static void cancel_send(mca_mtl_rttcc_module_t *m, mca_mtl_rttcc_request_t *req)
{
    mtl_rttcc_cancel_hdr_t c = {.type = MTL_RTTCC_CANCEL, .cid = req->hdr.cid, .seq = req->hdr.seq};
    struct iovec iov = {&c, sizeof c};
    bool ask;

    OPAL_THREAD_LOCK(&m->lock);
    ask = req->sid >= 0 && !req->cancelling && !REQUEST_COMPLETE(req->super.ompi_req);
    if (ask) {
        req->cancelling = true;
        c.sid = (uint32_t) req->sid;
    }
    OPAL_THREAD_UNLOCK(&m->lock);
    if (ask && rttcc_engine_send(m->engine, req->peer, RTTCC_TAG_MTL, &iov, 1, NULL) < 0) {
        opal_output_verbose(1, mca_mtl_rttcc_component.output, "mtl:rttcc: cannot ask process %u to cancel",
                            req->peer);
    }
}

/* A synchronous send to this process waits for its match: cancelled while
 * it is still unexpected here (never buffered: that mode is not synchronous). */
static void cancel_self_send(mca_mtl_rttcc_module_t *m, mca_mtl_rttcc_request_t *req)
{
    rttcc_match_item_t *arrival;
    int where;

    OPAL_THREAD_LOCK(&m->lock);
    where = rttcc_matcher_take_arrival(m->matcher, req->hdr.cid, m->self, req->hdr.seq, &arrival);
    OPAL_THREAD_UNLOCK(&m->lock);
    if (1 == where) {
        free(arrival);
        MTL_RTTCC_COUNT(cancelled);
        req->super.ompi_req->req_status._cancelled = true;
        mca_mtl_rttcc_send_done(req, OMPI_SUCCESS); /* the match it waited for */
    }
}

static void cancel_recv(mca_mtl_rttcc_module_t *m, mca_mtl_rttcc_request_t *req)
{
    int removed;

    OPAL_THREAD_LOCK(&m->lock);
    removed = rttcc_matcher_cancel(m->matcher, &req->match);
    OPAL_THREAD_UNLOCK(&m->lock);
    if (removed) {
        MTL_RTTCC_COUNT(cancelled);
        req->super.ompi_req->req_status._cancelled = true;
        rttcc_handoff_release(req);
        req->super.completion_callback(&req->super);
    }
}

int mca_mtl_rttcc_cancel(struct mca_mtl_base_module_t *mtl, mca_mtl_request_t *mtl_request, int flag)
{
    mca_mtl_rttcc_module_t *m = (mca_mtl_rttcc_module_t *) mtl;
    mca_mtl_rttcc_request_t *req = (mca_mtl_rttcc_request_t *) mtl_request;

    (void) flag;
    if (!req->is_send) {
        cancel_recv(m, req);
    } else if (req->peer != m->self) {
        cancel_send(m, req);
    } else if (req->hdr.flags & MTL_RTTCC_FLAG_SYNC) {
        cancel_self_send(m, req);
    }
    return OMPI_SUCCESS;
}
