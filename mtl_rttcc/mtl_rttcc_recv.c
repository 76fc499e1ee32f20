/* Receives: posting and matching (include/rttcc/matcher.h), probes, matched
 * probes, the landing of eager data, and rendezvous reads (gets of the
 * sender's exposed data, answered with FIN). */
#include <string.h>

#include "mtl_rttcc.h"
#include "rttcc/handoff.h"
#include "rttcc/rma.h"

#include "ompi/communicator/communicator.h"
#include "ompi/mca/mtl/base/mtl_base_datatype.h"
#include "ompi/message/message.h"
#include "ompi/proc/proc.h"
#include "ompi/mca/rte/rte.h"
#include "opal/util/output.h"
#include "opal/util/proc.h"

_Static_assert(MPI_ANY_SOURCE == RTTCC_MATCH_ANY && MPI_ANY_TAG == RTTCC_MATCH_ANY,
               "the matcher's wildcard is MPI's");

static inline mca_mtl_rttcc_request_t *req_of(rttcc_match_item_t *item)
{
    return (mca_mtl_rttcc_request_t *) ((char *) item - offsetof(mca_mtl_rttcc_request_t, match));
}

/* Is `src` of `comm` the process `peer`?  By name: a member not met yet
 * is not made a proc here (that may read the modex, and the MTL lock is
 * held). */
static bool is_rank_of(ompi_communicator_t *comm, uint32_t peer, int32_t src)
{
    if (src < 0 || src >= comm->c_remote_group->grp_proc_count) {
        return false;
    }
    const opal_process_name_t name = ompi_group_get_proc_name(comm->c_remote_group, src);
    return name.jobid == OPAL_PROC_MY_NAME.jobid && name.vpid == peer;
}

static const char freed_here[] = "its communicator was freed here";

/* Called with the lock held (the communicator lives while it is): why an
 * arrival in its turn is dropped, or NULL if it may be matched. */
static const char *why_dropped(mca_mtl_rttcc_module_t *m, uint32_t peer, uint32_t cid, int32_t src)
{
    const mtl_rttcc_comm_t *c = cid < m->num_comms ? &m->comms[cid] : NULL;

    if (NULL != c && NULL != c->comm) {
        return is_rank_of(c->comm, peer, src) ? NULL : "its sender is not the rank it claims";
    }
    if (NULL != c && c->freed) {
        return freed_here;
    }
    return NULL; /* not made here yet (pml/cm does not send before): checked by improbe */
}

static void complete_recv(mca_mtl_rttcc_request_t *req, size_t received)
{
    ompi_status_public_t *st = &req->super.ompi_req->req_status;
    st->MPI_SOURCE = req->msg_src;
    st->MPI_TAG = req->msg_tag;
    st->MPI_ERROR = req->error;
    st->_ucount = received;
    rttcc_handoff_release(req);
    req->super.completion_callback(&req->super);
}

static void start_recv(mca_mtl_rttcc_request_t *req, struct opal_convertor_t *convertor)
{
    rttcc_handoff_acquire(req);
    req->is_send = false;
    req->convertor = convertor;
    req->error = MPI_SUCCESS;
    req->buf = NULL;
    req->buf_owned = false;
    req->landed = req->accepted = 0;
    opal_convertor_get_packed_size(convertor, &req->buf_len); /* the room */
}

/* Tells the sender of a synchronous eager message it was matched. */
static void answer_sync(mca_mtl_rttcc_module_t *m, uint32_t peer, const mtl_rttcc_match_hdr_t *hdr,
                        mca_mtl_rttcc_request_t *self_send)
{
    mtl_rttcc_reply_hdr_t ack = {.type = MTL_RTTCC_SYNC_ACK, .sid = hdr->sid};
    if (NULL != self_send) {
        mca_mtl_rttcc_send_done(self_send, OMPI_SUCCESS);
    } else if (OMPI_SUCCESS != mca_mtl_rttcc_send_control(m, peer, &ack)) {
        opal_output_verbose(1, mca_mtl_rttcc_component.output, "mtl:rttcc: cannot answer process %u", peer);
    }
}

/* A message dropped unreceived: a sender waiting for its receiver
 * (rendezvous, synchronous) learns it with CANCELLED, and its send
 * completes cancelled. */
static void refuse(mca_mtl_rttcc_module_t *m, uint32_t peer, const mtl_rttcc_match_hdr_t *hdr,
                   mca_mtl_rttcc_request_t *self_send)
{
    mtl_rttcc_reply_hdr_t no = {.type = MTL_RTTCC_CANCELLED, .sid = hdr->sid};

    if (NULL != self_send) {
        if (NULL != self_send->super.ompi_req) {
            self_send->super.ompi_req->req_status._cancelled = true;
        }
        mca_mtl_rttcc_send_done(self_send, OMPI_SUCCESS); /* the match it waited for */
    } else if ((MTL_RTTCC_RTS == hdr->type || (hdr->flags & MTL_RTTCC_FLAG_SYNC)) &&
               OMPI_SUCCESS != mca_mtl_rttcc_send_control(m, peer, &no)) {
        opal_output_verbose(1, mca_mtl_rttcc_component.output, "mtl:rttcc: cannot answer process %u", peer);
    }
}

/* Every get landed, or failed to go: the receive completes (what landed
 * in packing room is unpacked) and the sender, which keeps its data
 * exposed until then, is told with FIN. */
static void finish_read(mca_mtl_rttcc_module_t *m, mca_mtl_rttcc_request_t *req)
{
    mtl_rttcc_reply_hdr_t fin = {.type = MTL_RTTCC_FIN, .sid = req->hdr.sid, .key = req->hdr.key,
                                 .accepted = req->landed};
    bool whole = req->landed == req->accepted;

    if (req->buf_owned) { /* packed landing room of a non-contiguous type */
        if (whole) {
            (void) ompi_mtl_datatype_unpack(req->convertor, req->buf, req->accepted); /* frees it */
        } else {
            free(req->buf);
        }
        req->buf_owned = false;
    }
    if (OMPI_SUCCESS != mca_mtl_rttcc_send_control(m, req->peer, &fin)) {
        /* The engine queues what it cannot send yet: only a lost peer refuses. */
        opal_output_verbose(1, mca_mtl_rttcc_component.output, "mtl:rttcc: cannot answer process %u", req->peer);
    }
    complete_recv(req, whole ? req->accepted : 0);
}

/* A get landed (len bytes), or one did not go (0), or the reader's hold
 * ends (0): the last finishes the read. */
static void piece_done(mca_mtl_rttcc_module_t *m, mca_mtl_rttcc_request_t *req, size_t len)
{
    bool done;

    OPAL_THREAD_LOCK(&m->lock);
    req->landed += len;
    done = 0 == --req->pending;
    OPAL_THREAD_UNLOCK(&m->lock);
    if (done) {
        finish_read(m, req);
    }
}

/* Asks the sender's engine for [off, off + n) of its exposure; the reply
 * lands in a grant of that piece of the landing room, found again by its
 * key when it lands (on_put). */
static int read_piece(mca_mtl_rttcc_module_t *m, mca_mtl_rttcc_request_t *req, size_t off, size_t n)
{
    uint32_t key;
    int rc;

    if (RTTCC_OK != rttcc_engine_grant(m->engine, req->peer, (char *) req->buf + off, n, &key)) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    OPAL_THREAD_LOCK(&m->lock); /* before the get: its reply may land on another thread's progress */
    rc = opal_hash_table_set_value_uint32(&m->landing, key, req);
    if (OPAL_SUCCESS == rc) {
        ++req->pending;
    }
    OPAL_THREAD_UNLOCK(&m->lock);
    if (OPAL_SUCCESS != rc) {
        (void) rttcc_engine_revoke(m->engine, key);
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    rc = rttcc_rma_get(m->engine, req->peer, req->hdr.key, off, n, key, RTTCC_TAG_MTL);
    if (RTTCC_OK == rc || RTTCC_DONE == rc) {
        return OMPI_SUCCESS;
    }
    OPAL_THREAD_LOCK(&m->lock);
    (void) opal_hash_table_remove_value_uint32(&m->landing, key);
    OPAL_THREAD_UNLOCK(&m->lock);
    (void) rttcc_engine_revoke(m->engine, key);
    piece_done(m, req, 0); /* the piece's count (the reader's hold keeps the request) */
    return RTTCC_ERR_UNREACH == rc ? OMPI_ERR_UNREACH : OMPI_ERR_OUT_OF_RESOURCE;
}

/* Rendezvous: reads the accepted bytes of the matched RTS into the landing
 * room, in pieces the engine takes whole.  A piece that cannot go fails
 * the receive, which still waits for the pieces asked for before it (their
 * replies need their grants); the sender is answered FIN all the same. */
static void accept_rts(mca_mtl_rttcc_module_t *m, mca_mtl_rttcc_request_t *req, const mtl_rttcc_match_hdr_t *hdr,
                       size_t accepted)
{
    size_t room;

    req->hdr = *hdr;
    if (accepted > 0) {
        (void) ompi_mtl_datatype_recv_buf(req->convertor, &req->buf, &room, &req->buf_owned);
        if (NULL == req->buf) {
            req->error = MPI_ERR_NO_MEM;
            accepted = 0;
        }
    }
    req->accepted = accepted;
    req->landed = 0;
    req->pending = 1; /* the reader's hold, until every get is asked for */
    for (size_t off = 0; off < accepted; off += m->get_size) {
        size_t n = accepted - off < m->get_size ? accepted - off : m->get_size;
        int rc = read_piece(m, req, off, n);
        if (OMPI_SUCCESS != rc) {
            opal_output_verbose(1, mca_mtl_rttcc_component.output,
                                "mtl:rttcc: cannot read %zu bytes at %zu of a message from process %u (%d)", n,
                                off, req->peer, rc);
            req->error = OMPI_ERR_UNREACH == rc ? MPI_ERR_OTHER : MPI_ERR_NO_MEM;
            break;
        }
    }
    piece_done(m, req, 0);
}

/* A matched message lands in `req` (which nobody else sees any more). */
static void deliver(mca_mtl_rttcc_module_t *m, mca_mtl_rttcc_request_t *req, uint32_t peer,
                    const mtl_rttcc_match_hdr_t *hdr, const void *data, mca_mtl_rttcc_request_t *self_send)
{
    size_t n = hdr->len < req->buf_len ? hdr->len : req->buf_len;

    req->peer = peer;
    req->msg_src = hdr->src;
    req->msg_tag = hdr->tag;
    req->msg_len = hdr->len;
    if (hdr->len > req->buf_len) {
        req->error = MPI_ERR_TRUNCATE;
        MTL_RTTCC_COUNT(truncated);
    }
    if (MTL_RTTCC_RTS == hdr->type) {
        accept_rts(m, req, hdr, n);
        return;
    }
    if (n > 0) {
        struct iovec iov = {(void *) data, n};
        uint32_t count = 1;
        size_t unpacked = n;
        opal_convertor_unpack(req->convertor, &iov, &count, &unpacked);
    }
    if (hdr->flags & MTL_RTTCC_FLAG_SYNC) {
        answer_sync(m, peer, hdr, self_send);
    }
    complete_recv(req, n);
}

static mtl_rttcc_arrival_t *keep(uint32_t peer, const mtl_rttcc_match_hdr_t *hdr, const void *data,
                                 mca_mtl_rttcc_request_t *self_send, bool malformed)
{
    size_t bytes = MTL_RTTCC_EAGER == hdr->type && !malformed ? hdr->len : 0;
    mtl_rttcc_arrival_t *a = malloc(sizeof *a + bytes);
    if (NULL == a) {
        return NULL;
    }
    memset(&a->match, 0, sizeof a->match);
    a->match.cid = hdr->cid;
    a->match.src = hdr->src;
    a->match.tag = hdr->tag;
    a->match.peer = peer;
    a->match.seq = hdr->seq;
    a->hdr = *hdr;
    a->self_send = self_send;
    a->malformed = malformed;
    if (bytes) {
        memcpy(a->payload, data, bytes);
    }
    return a;
}

/* A message we cannot keep cannot be dropped either: the job ends. */
static void out_of_memory(size_t bytes)
{
    rttcc_mca_show_help(false, "mtl out of memory", opal_process_info.nodename, bytes);
    ompi_rte_abort(OMPI_ERR_OUT_OF_RESOURCE, NULL);
}

/* A sender ran further ahead of a message it has not delivered than the
 * matcher holds: what it sent is acknowledged and cannot be dropped. */
static void too_far_ahead(mca_mtl_rttcc_module_t *m, uint32_t peer, uint32_t seq)
{
    opal_process_name_t name = OPAL_PROC_MY_NAME;
    size_t posted, unexpected, held;

    OPAL_THREAD_LOCK(&m->lock);
    rttcc_matcher_counts(m->matcher, &posted, &unexpected, &held);
    OPAL_THREAD_UNLOCK(&m->lock);
    name.vpid = peer;
    rttcc_mca_show_help(false, "mtl held too many", opal_process_info.nodename, held, OPAL_NAME_PRINT(name), seq,
                            m->held_max, 4 * m->held_max);
    ompi_rte_abort(OMPI_ERR_OUT_OF_RESOURCE, NULL);
}

/* Called with the lock held, for an arrival whose turn it is; returns
 * with the lock held.  `a` is the kept copy, or NULL while the message is
 * still only in the engine's buffer.  It is checked now, when the
 * communicator its id names is the one it would be matched in. */
static void match_in_order(mca_mtl_rttcc_module_t *m, uint32_t peer, const mtl_rttcc_match_hdr_t *hdr,
                           const void *data, mca_mtl_rttcc_request_t *self_send, mtl_rttcc_arrival_t *a,
                           bool malformed)
{
    if (mca_mtl_rttcc_drop_cancelled(m, peer, hdr->seq)) { /* its sender took it back */
        free(a);
        return;
    }
    if (MTL_RTTCC_SKIP == hdr->type) { /* never sent (mtl_rttcc_skip.c): nothing to match */
        MTL_RTTCC_COUNT(skips_received);
        free(a);
        return;
    }
    const char *why = malformed ? "malformed" : why_dropped(m, peer, hdr->cid, hdr->src);
    if (NULL != why) {
        OPAL_THREAD_UNLOCK(&m->lock);
        if (freed_here == why) {
            MTL_RTTCC_COUNT(stale);
        } else {
            MTL_RTTCC_COUNT(bad_messages);
        }
        opal_output_verbose(1, mca_mtl_rttcc_component.output,
                            "mtl:rttcc: dropped a message from process %u (cid %u, rank %d, tag %d, seq %u): %s",
                            peer, hdr->cid, hdr->src, hdr->tag, hdr->seq, why);
        refuse(m, peer, hdr, self_send);
        free(a);
        OPAL_THREAD_LOCK(&m->lock);
        return;
    }
    rttcc_match_item_t probe = {.cid = hdr->cid, .src = hdr->src, .tag = hdr->tag};
    rttcc_match_item_t *r = rttcc_matcher_take_posted(m->matcher, &probe);

    if (NULL == r) {
        if (NULL == a) {
            a = keep(peer, hdr, data, self_send, false);
        }
        if (NULL == a || 0 != rttcc_matcher_add_unexpected(m->matcher, &a->match)) {
            OPAL_THREAD_UNLOCK(&m->lock);
            out_of_memory(hdr->len);
        }
        MTL_RTTCC_COUNT(unexpected);
        return;
    }
    OPAL_THREAD_UNLOCK(&m->lock);
    deliver(m, req_of(r), peer, hdr, NULL != a ? a->payload : data, self_send);
    free(a);
    OPAL_THREAD_LOCK(&m->lock);
}

void mca_mtl_rttcc_on_arrival(mca_mtl_rttcc_module_t *m, uint32_t peer, const mtl_rttcc_match_hdr_t *hdr,
                              const void *data, mca_mtl_rttcc_request_t *self_send, bool malformed)
{
    mtl_rttcc_arrival_t *a;
    int order;

    OPAL_THREAD_LOCK(&m->lock);
    order = rttcc_matcher_in_order(m->matcher, peer, hdr->seq);
    if (-2 == order) {
        OPAL_THREAD_UNLOCK(&m->lock);
        out_of_memory(hdr->len);
    }
    if (order < 0) {
        OPAL_THREAD_UNLOCK(&m->lock);
        MTL_RTTCC_COUNT(bad_messages);
        opal_output_verbose(1, mca_mtl_rttcc_component.output,
                            "mtl:rttcc: dropped a message from process %u with an old sequence number %u", peer,
                            hdr->seq);
        return;
    }
    if (0 == order) { /* ahead of an earlier message of the same sender */
        a = keep(peer, hdr, data, self_send, malformed);
        int held = NULL != a ? rttcc_matcher_hold(m->matcher, &a->match) : 0;
        OPAL_THREAD_UNLOCK(&m->lock);
        MTL_RTTCC_COUNT(out_of_order);
        if (NULL == a) {
            out_of_memory(hdr->len);
        } else if (-2 == held) {
            free(a);
            MTL_RTTCC_COUNT(bad_messages);
            opal_output_verbose(1, mca_mtl_rttcc_component.output,
                                "mtl:rttcc: dropped a message from process %u with a sequence number it used already (%u)",
                                peer, hdr->seq);
        } else if (0 != held) {
            too_far_ahead(m, peer, hdr->seq);
        }
        return;
    }
    match_in_order(m, peer, hdr, data, self_send, NULL, malformed);
    while (NULL != (a = (mtl_rttcc_arrival_t *) rttcc_matcher_release(m->matcher, peer))) {
        match_in_order(m, peer, &a->hdr, a->payload, a->self_send, a, a->malformed);
    }
    OPAL_THREAD_UNLOCK(&m->lock);
}

void mca_mtl_rttcc_on_put(mca_mtl_rttcc_module_t *m, uint32_t peer, uint32_t key, size_t len)
{
    mca_mtl_rttcc_request_t *req = NULL;
    void *value = NULL;

    OPAL_THREAD_LOCK(&m->lock);
    if (OPAL_SUCCESS == opal_hash_table_get_value_uint32(&m->landing, key, &value)) {
        req = value;
    }
    if (NULL != req && req->peer == peer) {
        (void) opal_hash_table_remove_value_uint32(&m->landing, key);
    } else {
        req = NULL;
    }
    OPAL_THREAD_UNLOCK(&m->lock);
    if (NULL == req) {
        MTL_RTTCC_COUNT(bad_messages);
        opal_output_verbose(1, mca_mtl_rttcc_component.output, "mtl:rttcc: a put from %u into unknown region %u",
                            peer, key);
        return;
    }
    (void) rttcc_engine_revoke(m->engine, key); /* one reply per grant */
    piece_done(m, req, len);
}

int mca_mtl_rttcc_irecv(struct mca_mtl_base_module_t *mtl, struct ompi_communicator_t *comm, int src, int tag,
                        struct opal_convertor_t *convertor, mca_mtl_request_t *mtl_request)
{
    mca_mtl_rttcc_module_t *m = (mca_mtl_rttcc_module_t *) mtl;
    mca_mtl_rttcc_request_t *req = (mca_mtl_rttcc_request_t *) mtl_request;
    mtl_rttcc_arrival_t *a;
    int rc;

    start_recv(req, convertor);
    memset(&req->match, 0, sizeof req->match);
    req->match.cid = ompi_comm_get_cid(comm);
    req->match.src = src;
    req->match.tag = tag;
    OPAL_THREAD_LOCK(&m->lock);
    a = (mtl_rttcc_arrival_t *) rttcc_matcher_take_unexpected(m->matcher, &req->match);
    rc = NULL == a ? rttcc_matcher_add_posted(m->matcher, &req->match) : 0;
    OPAL_THREAD_UNLOCK(&m->lock);
    if (0 != rc) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    if (NULL != a) {
        deliver(m, req, a->match.peer, &a->hdr, a->payload, a->self_send);
        free(a);
    }
    return OMPI_SUCCESS;
}

/* What a probe tells: never MPI_ERROR, which only calls completing several
 * requests set (MPI 3.1, 3.2.5); pml/cm hands us the user's status. */
static void probe_status(ompi_status_public_t *status, const mtl_rttcc_arrival_t *a)
{
    if (MPI_STATUS_IGNORE != status) {
        status->MPI_SOURCE = a->hdr.src;
        status->MPI_TAG = a->hdr.tag;
        status->_cancelled = false;
        status->_ucount = a->hdr.len;
    }
}

int mca_mtl_rttcc_iprobe(struct mca_mtl_base_module_t *mtl, struct ompi_communicator_t *comm, int src, int tag,
                         int *flag, struct ompi_status_public_t *status)
{
    mca_mtl_rttcc_module_t *m = (mca_mtl_rttcc_module_t *) mtl;
    rttcc_match_item_t want = {.cid = ompi_comm_get_cid(comm), .src = src, .tag = tag};
    mtl_rttcc_arrival_t *a;

    (void) mca_mtl_rttcc_progress();
    OPAL_THREAD_LOCK(&m->lock);
    a = (mtl_rttcc_arrival_t *) rttcc_matcher_find_unexpected(m->matcher, &want);
    if (NULL != a) {
        probe_status(status, a);
    }
    OPAL_THREAD_UNLOCK(&m->lock);
    *flag = NULL != a;
    return OMPI_SUCCESS;
}

int mca_mtl_rttcc_improbe(struct mca_mtl_base_module_t *mtl, struct ompi_communicator_t *comm, int src, int tag,
                          int *matched, struct ompi_message_t **message, struct ompi_status_public_t *status)
{
    mca_mtl_rttcc_module_t *m = (mca_mtl_rttcc_module_t *) mtl;
    rttcc_match_item_t want = {.cid = ompi_comm_get_cid(comm), .src = src, .tag = tag};
    ompi_message_t *msg = ompi_message_alloc();
    mtl_rttcc_arrival_t *a;

    if (NULL == msg) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    (void) mca_mtl_rttcc_progress();
    OPAL_THREAD_LOCK(&m->lock);
    a = (mtl_rttcc_arrival_t *) rttcc_matcher_take_unexpected(m->matcher, &want);
    OPAL_THREAD_UNLOCK(&m->lock);
    if (NULL != a && !is_rank_of(comm, a->match.peer, a->hdr.src)) { /* queued before comm was made here */
        MTL_RTTCC_COUNT(bad_messages); /* the PML would look the rank up */
        opal_output_verbose(1, mca_mtl_rttcc_component.output,
                            "mtl:rttcc: dropped a message from process %u claiming rank %d", a->match.peer,
                            a->hdr.src);
        refuse(m, a->match.peer, &a->hdr, a->self_send);
        free(a);
        a = NULL;
    }
    *matched = NULL != a;
    if (NULL == a) {
        ompi_message_return(msg);
        *message = NULL;
        return OMPI_SUCCESS;
    }
    probe_status(status, a);
    msg->comm = comm;
    msg->req_ptr = a;
    msg->peer = a->hdr.src;
    msg->count = a->hdr.len;
    *message = msg;
    return OMPI_SUCCESS;
}

int mca_mtl_rttcc_imrecv(struct mca_mtl_base_module_t *mtl, struct opal_convertor_t *convertor,
                         struct ompi_message_t **message, mca_mtl_request_t *mtl_request)
{
    mca_mtl_rttcc_request_t *req = (mca_mtl_rttcc_request_t *) mtl_request;
    mtl_rttcc_arrival_t *a = (*message)->req_ptr;

    ompi_message_return(*message);
    *message = MPI_MESSAGE_NULL;
    start_recv(req, convertor);
    deliver((mca_mtl_rttcc_module_t *) mtl, req, a->match.peer, &a->hdr, a->payload, a->self_send);
    free(a);
    return OMPI_SUCCESS;
}

void mca_mtl_rttcc_comm_freed(mca_mtl_rttcc_module_t *m, uint32_t cid)
{
    mtl_rttcc_arrival_t *a;
    size_t dropped = 0;

    OPAL_THREAD_LOCK(&m->lock);
    if (cid < m->num_comms) { /* (added: pml/cm frees only what it added) */
        m->comms[cid].comm = NULL;
        m->comms[cid].freed = true;
    }
    while (NULL != (a = (mtl_rttcc_arrival_t *) rttcc_matcher_pop_unexpected(m->matcher, cid))) {
        OPAL_THREAD_UNLOCK(&m->lock);
        MTL_RTTCC_COUNT(stale);
        refuse(m, a->match.peer, &a->hdr, a->self_send);
        free(a);
        ++dropped;
        OPAL_THREAD_LOCK(&m->lock);
    }
    OPAL_THREAD_UNLOCK(&m->lock);
    if (dropped > 0) {
        opal_output_verbose(10, mca_mtl_rttcc_component.output,
                            "mtl:rttcc: communicator %u freed with %zu messages nobody received: dropped", cid,
                            dropped);
    }
}

void mca_mtl_rttcc_free_arrivals(mca_mtl_rttcc_module_t *m)
{
    rttcc_match_item_t *a;
    size_t posted, unexpected, held;

    rttcc_matcher_counts(m->matcher, &posted, &unexpected, &held);
    if (unexpected + held > 0) {
        opal_output_verbose(10, mca_mtl_rttcc_component.output,
                            "mtl:rttcc: finalize drops %zu unreceived messages (%zu out of order)", unexpected + held,
                            held);
    }
    while (NULL != (a = rttcc_matcher_pop_arrival(m->matcher))) {
        free(a);
    }
}
