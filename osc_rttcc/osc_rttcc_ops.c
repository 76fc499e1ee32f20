/* Put, get, accumulate, the fetching ops and their request forms.
 *
 * An operation walks its target datatype's contiguous runs; each run is
 * checked against the target's window (or, in a dynamic window, against the
 * region the target's engine names for it) and cut into engine calls of at
 * most the largest message.  The origin's bytes travel packed in the
 * target's order: contiguous origins as they are, others through a stage.
 *
 *   put            rttcc_engine_put into the target's exposure (a dynamic
 *                  window's: a REPLACE request, which names an address)
 *   get            rttcc_rma_get; the reply lands in a grant over the
 *                  origin buffer (or a stage, unpacked at the end)
 *   accumulate     rttcc_rma_accumulate, applied by the target's engine
 *   get_accumulate the same with a reply grant for the old values
 *   small pieces   (at most post_bytes; up to a batch: a lazy lock's, and
 *                  a PSCW epoch's first accumulate to a target, whose
 *                  first put the engine copies: osc_rttcc_post_limit)
 *                  of all of these, and plain gets of any size: rttcc_rma_post,
 *                  rttcc_rma_post_fetch and rttcc_rma_post_get, one batch
 *                  per target and pass (a lazy lock's: per epoch)
 *   self           the same updates applied here, under the engine's lock
 *
 * An operation that needs nothing more once issued (a copied put) leaves no
 * trace; the others are an osc_rttcc_op_t until their last piece is done.
 */
#include <stdlib.h>
#include <string.h>

#include "osc_rttcc.h"
#include "rttcc/mca.h"

#include "ompi/errhandler/errcode-internal.h"
#include "opal/sys/atomic.h"

/* From ompi/mca/osc/base/osc_base_obj_convert.h (libmpi exports it), which
 * Debian's headers cannot compile: it needs ompi/op/op.h, whose Fortran
 * header is not installed. */
OMPI_DECLSPEC int ompi_osc_base_get_primitive_type_info(ompi_datatype_t *datatype, ompi_datatype_t **prim_datatype,
                                                        uint32_t *prim_count);

/* ---------------------------------------------------------------- requests */

typedef struct osc_rttcc_request_t {
    ompi_request_t super;
} osc_rttcc_request_t;

static int request_free(ompi_request_t **r)
{
    if (!REQUEST_COMPLETE(*r)) {
        return MPI_ERR_REQUEST;
    }
    OMPI_REQUEST_FINI(*r);
    OBJ_RELEASE(*r);
    *r = MPI_REQUEST_NULL;
    return OMPI_SUCCESS;
}

static int request_cancel(ompi_request_t *r, int complete)
{
    (void) r;
    (void) complete;
    return MPI_ERR_REQUEST; /* RMA requests cannot be cancelled */
}

static void request_construct(osc_rttcc_request_t *r)
{
    r->super.req_type = OMPI_REQUEST_WIN;
    r->super.req_free = request_free;
    r->super.req_cancel = request_cancel;
}

static OBJ_CLASS_INSTANCE(osc_rttcc_request_t, ompi_request_t, request_construct, NULL);

static ompi_request_t *request_new(void)
{
    osc_rttcc_request_t *r = OBJ_NEW(osc_rttcc_request_t);
    if (NULL == r) {
        return NULL;
    }
    OMPI_REQUEST_INIT(&r->super, false);
    r->super.req_state = OMPI_REQUEST_ACTIVE;
    r->super.req_status._cancelled = 0;
    return &r->super;
}

static void request_complete(ompi_request_t *r, int status)
{
    r->req_status.MPI_ERROR = OMPI_SUCCESS == status ? MPI_SUCCESS : ompi_errcode_get_mpi_code(status);
    ompi_request_complete(r, true);
}

/* ---------------------------------------------------------------- operations */

/* Finished operations kept for reuse (under the component's lock, like
 * every op_new and op_finish): at most this many. */
#define SPARE_OPS_MAX 256

static osc_rttcc_op_t *op_new(mca_osc_rttcc_module_t *m, int target, ompi_request_t *request)
{
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    osc_rttcc_op_t *op = c->spare_ops;
    if (NULL != op) {
        c->spare_ops = op->next_spare;
        --c->nspare_ops;
    } else if (NULL == (op = malloc(sizeof *op))) {
        return NULL;
    }
    memset(op, 0, sizeof *op);
    op->kind = OSC_RTTCC_COOKIE_OP;
    op->module = m;
    op->target = target;
    op->pending = 1; /* the issuer's, dropped when every piece was issued */
    op->request = request;
    ++m->unfinished;
    ++m->peers[target].unfinished;
    return op;
}

static void op_finish(osc_rttcc_op_t *op)
{
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    mca_osc_rttcc_module_t *m = op->module;
    if (NULL != op->result_dt) {
        size_t size;
        ompi_datatype_type_size(op->result_dt, &size);
        if (OMPI_SUCCESS == op->status) {
            op->status = osc_rttcc_unpack(op->result, op->result_count, op->result_dt, op->landing,
                                          size * (size_t) op->result_count);
        }
        OBJ_RELEASE(op->result_dt);
    }
    free(op->landing);
    free(op->stage);
    if (NULL != op->request) {
        request_complete(op->request, op->status);
    }
    if (NULL != op->status_out) {
        *op->status_out = op->status;
    }
    if (NULL != op->done) {
        opal_atomic_wmb();
        *op->done = true;
    }
    --m->unfinished;
    --m->peers[op->target].unfinished;
    if (c->nspare_ops < SPARE_OPS_MAX) {
        op->next_spare = c->spare_ops;
        c->spare_ops = op;
        ++c->nspare_ops;
    } else {
        free(op);
    }
}

void osc_rttcc_op_piece_done(osc_rttcc_op_t *op, int status)
{
    if (OMPI_SUCCESS == op->status && RTTCC_OK != status) {
        op->status = RTTCC_ERR_UNREACH == status ? OMPI_ERR_UNREACH : OMPI_ERROR;
    }
    if (0 == --op->pending) {
        op_finish(op);
    }
}

/* The replies table: reply key -> the operation waiting for it.  Engine
 * keys come from a counter, and opal's hash table probes linearly from
 * key mod capacity: consecutive keys make one cluster that every removal
 * rehashes (quadratic in the replies outstanding).  The table therefore
 * holds key * odd, a bijection of 32-bit integers that scatters them. */
#define kScatter 2654435761u
#define kGather 244002641u /* kScatter * kGather == 1 (mod 2^32): slot * kGather is the key */
_Static_assert((uint32_t) (kScatter * kGather) == 1u, "kGather inverts kScatter");

static void reply_add(uint32_t key, osc_rttcc_op_t *op)
{
    opal_hash_table_set_value_uint32(&mca_osc_rttcc_component.replies, key * kScatter, op);
}

osc_rttcc_op_t *osc_rttcc_reply_take(uint32_t key)
{
    void *op = NULL;
    opal_hash_table_t *t = &mca_osc_rttcc_component.replies;
    if (OPAL_SUCCESS != opal_hash_table_get_value_uint32(t, key * kScatter, &op)) {
        return NULL;
    }
    opal_hash_table_remove_value_uint32(t, key * kScatter);
    return op;
}

/* A grant of `len` bytes at `at` to the target, whose reply completes a piece of `op`. */
static int reply_grant(osc_rttcc_op_t *op, void *at, size_t len, uint32_t *key)
{
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    if (RTTCC_OK != rttcc_engine_grant(c->engine, op->module->peers[op->target].index, at, len, key)) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    reply_add(*key, op);
    ++op->pending;
    return OMPI_SUCCESS;
}

/* Undoes reply_grant after the request could not be sent. */
static void reply_cancel(osc_rttcc_op_t *op, uint32_t key)
{
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    (void) osc_rttcc_reply_take(key);
    rttcc_engine_revoke(c->engine, key);
    --op->pending;
}

static int engine_error(int rc)
{
    return RTTCC_ERR_UNREACH == rc ? OMPI_ERR_UNREACH : RTTCC_ERR_ARG == rc ? OMPI_ERR_BAD_PARAM : OMPI_ERROR;
}

/* A piece sent zero-copy (RTTCC_OK) completes later, by its cookie. */
static int sent(osc_rttcc_op_t *op, int rc)
{
    if (RTTCC_OK == rc) {
        ++op->pending;
        return OMPI_SUCCESS;
    }
    return RTTCC_DONE == rc ? OMPI_SUCCESS : engine_error(rc);
}

size_t osc_rttcc_fail_replies(uint32_t index)
{
    return osc_rttcc_fail_replies_of(index, NULL, 0);
}

size_t osc_rttcc_fail_replies_of(uint32_t index, const mca_osc_rttcc_module_t *m, int target)
{
    enum { kPerWalk = 256 };
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    size_t failed = 0, n;
    /* Walks collect the matching keys, then fail them: a removal moves
     * later entries of the table back (open addressing), so removing
     * during a walk would skip some. */
    do {
        uint32_t slot, keys[kPerWalk];
        void *value, *node;
        n = 0;
        int rc = opal_hash_table_get_first_key_uint32(&c->replies, &slot, &value, &node);
        while (OPAL_SUCCESS == rc && n < kPerWalk) {
            const osc_rttcc_op_t *op = value;
            if (op->module->peers[op->target].index == index && (NULL == m || (op->module == m && op->target == target))) {
                keys[n++] = slot * kGather;
            }
            rc = opal_hash_table_get_next_key_uint32(&c->replies, &slot, &value, node, &node);
        }
        for (size_t i = 0; i < n; ++i) {
            osc_rttcc_op_t *op = osc_rttcc_reply_take(keys[i]);
            if (NULL != op) { /* else an earlier failure's end took it */
                rttcc_engine_revoke(c->engine, keys[i]);
                osc_rttcc_op_piece_done(op, RTTCC_ERR_UNREACH);
                ++failed;
            }
        }
    } while (kPerWalk == n);
    return failed;
}

int osc_rttcc_request_lock(mca_osc_rttcc_module_t *m, int target, int exclusive, bool with_batch,
                           volatile bool *granted, int *status, uint8_t *landing)
{
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    osc_rttcc_peer_t *p = &m->peers[target];
    uint32_t key;
    int rc;
    OPAL_THREAD_LOCK(&c->lock);
    osc_rttcc_op_t *op = op_new(m, target, NULL);
    rc = NULL == op ? OMPI_ERR_OUT_OF_RESOURCE : reply_grant(op, landing, 1, &key);
    if (OMPI_SUCCESS != rc) { /* nothing was asked: the answer is this failure */
        *status = rc;
        *granted = true;
    } else {
        op->done = granted;
        op->status_out = status;
        int erc = with_batch ? rttcc_rma_lock_batch(c->engine, p->index, p->window, exclusive, key, RTTCC_TAG_OSC)
                             : rttcc_rma_lock(c->engine, p->index, p->window, exclusive, key, RTTCC_TAG_OSC);
        c->counters.lazy_locks += with_batch && RTTCC_OK == erc;
        if (with_batch && RTTCC_DONE == erc) { /* nothing was posted: nothing to lock */
            reply_cancel(op, key);
        } else if (RTTCC_OK != erc && RTTCC_DONE != erc) {
            reply_cancel(op, key);
            rc = op->status = engine_error(erc);
        }
    }
    if (NULL != op) {
        osc_rttcc_op_piece_done(op, RTTCC_OK); /* the issuer's part */
    }
    OPAL_THREAD_UNLOCK(&c->lock);
    return rc;
}

/* ---------------------------------------------------------------- targets */

/* Is [addr, addr + len) inside a region of this epoch's lookups?  (Under the lock.) */
static bool region_kept(const osc_rttcc_peer_t *p, uint64_t addr, size_t len)
{
    for (int i = 0; i < p->nregions; ++i) {
        if (addr >= p->regions[i].base && len <= p->regions[i].len && addr - p->regions[i].base <= p->regions[i].len - len) {
            return true;
        }
    }
    return false;
}

/* Keeps a lookup's answer for the epoch (under the lock).  A window's
 * regions never overlap: one we kept that overlaps it was detached since. */
static int keep_region(osc_rttcc_peer_t *p, const rttcc_rma_region_t *found)
{
    int kept = 0;
    for (int i = 0; i < p->nregions; ++i) {
        const rttcc_rma_region_t q = p->regions[i];
        if (q.base + q.len <= found->base || found->base + found->len <= q.base) {
            p->regions[kept++] = q;
        }
    }
    p->nregions = kept;
    if (p->nregions == p->cap_regions) {
        int cap = p->cap_regions ? 2 * p->cap_regions : 4;
        rttcc_rma_region_t *grown = realloc(p->regions, (size_t) cap * sizeof *grown);
        if (NULL == grown) {
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
        p->regions = grown;
        p->cap_regions = cap;
    }
    p->regions[p->nregions++] = *found;
    return OMPI_SUCCESS;
}

/* Dynamic windows: makes sure the target's region holding [addr, addr +
 * len) is among this epoch's lookups (a new one waits for its answer);
 * MPI_ERR_RMA_RANGE if no region holds it.  The regions are read and
 * changed under the component lock: threads of one epoch share them. */
static int region_of(mca_osc_rttcc_module_t *m, int target, uint64_t addr, size_t len)
{
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    osc_rttcc_peer_t *p = &m->peers[target];
    rttcc_rma_region_t found = {0}; /* stays so if the lookup fails (its target died): no region */
    volatile bool done = false;
    uint32_t key;
    int rc;
    OPAL_THREAD_LOCK(&c->lock);
    if (region_kept(p, addr, len)) {
        OPAL_THREAD_UNLOCK(&c->lock);
        return OMPI_SUCCESS;
    }
    osc_rttcc_op_t *op = op_new(m, target, NULL);
    rc = NULL == op ? OMPI_ERR_OUT_OF_RESOURCE : reply_grant(op, &found, sizeof found, &key);
    if (OMPI_SUCCESS == rc) {
        op->done = &done;
        int erc = rttcc_rma_lookup(c->engine, p->index, p->window, addr, len, key, RTTCC_TAG_OSC);
        if (RTTCC_OK != erc && RTTCC_DONE != erc) {
            reply_cancel(op, key);
            rc = engine_error(erc);
        }
    }
    if (NULL != op) {
        osc_rttcc_op_piece_done(op, RTTCC_OK); /* the issuer's part */
    }
    OPAL_THREAD_UNLOCK(&c->lock);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    osc_rttcc_wait_for(&done);
    if (0 == found.key) {
        return OMPI_ERR_RMA_RANGE;
    }
    OPAL_THREAD_LOCK(&c->lock);
    rc = keep_region(p, &found);
    OPAL_THREAD_UNLOCK(&c->lock);
    return rc;
}

/* Where one run of the target lands: the exposure key and the offset in it,
 * after the bounds check.  A dynamic window's key names it by address
 * (rttcc_rma_expose_window), its offset is the address: no detach makes it
 * stale.  Its regions are looked up first (check_target) for the range
 * check only, so this never waits; it reads them under the lock. */
static int locate(mca_osc_rttcc_module_t *m, int target, ptrdiff_t at, size_t len, uint32_t *key, uint64_t *offset)
{
    osc_rttcc_peer_t *p = &m->peers[target];
    if (MPI_WIN_FLAVOR_DYNAMIC != m->flavor) {
        if (at < 0 || (uint64_t) at > p->size || len > p->size - (uint64_t) at) {
            return OMPI_ERR_RMA_RANGE;
        }
        *key = p->key;
        *offset = (uint64_t) at;
        return OMPI_SUCCESS;
    }
    if (!region_kept(p, (uint64_t) at, len)) {
        return OMPI_ERR_RMA_RANGE;
    }
    *key = p->key; /* the window by address: whatever holds `at` when the target serves it */
    *offset = (uint64_t) at;
    return OMPI_SUCCESS;
}

typedef struct {
    mca_osc_rttcc_module_t *m;
    int target;
} check_ctx_t;

/* One run inside the target's window (a dynamic window's regions are
 * looked up, which waits). */
static int check_run(void *ctx, ptrdiff_t at, size_t len)
{
    check_ctx_t *k = ctx;
    mca_osc_rttcc_module_t *m = k->m;
    uint32_t key;
    uint64_t offset;
    if (k->target == m->rank) {
        return MPI_WIN_FLAVOR_DYNAMIC == m->flavor || (at >= 0 && (size_t) at <= m->len && len <= m->len - (size_t) at)
                   ? OMPI_SUCCESS
                   : OMPI_ERR_RMA_RANGE;
    }
    if (MPI_WIN_FLAVOR_DYNAMIC == m->flavor) {
        return region_of(m, k->target, (uint64_t) at, len);
    }
    return locate(m, k->target, at, len, &key, &offset);
}

/* Every run of the target inside its window, before anything is sent: an
 * operation out of range does nothing (MPI_ERR_RMA_RANGE). */
static int check_target(mca_osc_rttcc_module_t *m, int target, ompi_datatype_t *tdt, int tcount, ptrdiff_t at)
{
    check_ctx_t k = {m, target};
    return osc_rttcc_runs(tdt, tcount, at, check_run, &k);
}

/* The target's address of displacement `disp` (self), or its offset in the window. */
static ptrdiff_t target_at(const mca_osc_rttcc_module_t *m, int target, ptrdiff_t disp)
{
    if (MPI_WIN_FLAVOR_DYNAMIC == m->flavor) {
        return disp; /* an address */
    }
    return disp * (ptrdiff_t) m->peers[target].disp_unit;
}

/* ---------------------------------------------------------------- issuing runs */

enum { KIND_PUT, KIND_GET, KIND_ACC };

/* One operation being issued: the packed origin bytes walk along the
 * target's runs. */
typedef struct {
    mca_osc_rttcc_module_t *m;
    int target;
    int kind;
    uint8_t *data;           /* put, acc: the bytes to send; get: where replies land */
    uint8_t *fetch;          /* acc: where old values land (NULL: none) */
    size_t done;             /* bytes of data used so far */
    size_t total;            /* bytes of data */
    int rop, rtype;          /* acc: the engine's op and type */
    size_t esize;            /* acc: element size (pieces are whole elements) */
    bool queue;              /* pieces wait for the epoch's schedule (osc_rttcc_schedule.c) */
    bool atomic;             /* get: as one accumulate reads (MPI_NO_OP), not as MPI_Get may */
    osc_rttcc_op_t *op;
} issue_t;

/* A put's piece: the engine's put (copied: rttcc_engine_put_copied), or in
 * a dynamic window, whose key names addresses, which only requests carry, a
 * REPLACE on bytes (applied in order with the origin's other requests). */
static int send_put(const mca_osc_rttcc_module_t *m, uint32_t peer, uint32_t key, uint64_t offset,
                    struct iovec *iov, osc_rttcc_op_t *op, bool copied)
{
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    if (MPI_WIN_FLAVOR_DYNAMIC == m->flavor) {
        return rttcc_rma_accumulate(c->engine, peer, key, offset, RTTCC_RMA_REPLACE, RTTCC_RMA_BYTE, iov, 1, 0,
                                    RTTCC_TAG_OSC, op);
    }
    return (copied ? rttcc_engine_put_copied : rttcc_engine_put)(c->engine, peer, key, offset, RTTCC_TAG_OSC, iov, 1,
                                                                  op);
}

void osc_rttcc_send_piece(const osc_rttcc_piece_t *piece, uint32_t peer)
{
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    struct iovec iov = {.iov_base = piece->data, .iov_len = piece->len};
    int rc = piece->rop < 0 ? send_put(piece->op->module, peer, piece->key, piece->offset, &iov, piece->op, false)
                            : rttcc_rma_accumulate(c->engine, peer, piece->key, piece->offset, piece->rop,
                                                   piece->rtype, &iov, 1, 0, RTTCC_TAG_OSC, piece->op);
    if (RTTCC_OK != rc) { /* else the queue's hold on the op passes to the send's completion */
        osc_rttcc_op_piece_done(piece->op, RTTCC_DONE == rc ? RTTCC_OK : rc);
    }
}

/* PSCW access: the first piece without a reply (a put, an accumulate) of
 * up to a batch's worth per target and epoch is a copy.  MPI_Win_complete
 * waits for local completion only, and a zero-copy piece made it wait for
 * an ACK of its own, one more send call of the target's (its next POST
 * carries the ACK of copies), in an epoch of one medium operation per
 * target (a halo exchange).  The pieces after it go zero-copy: copying a
 * stream of them costs bandwidth.  A piece with a reply waits for it
 * anyway.  An accumulate's copy joins the batch; a put's is the engine's
 * (rttcc_engine_put_copied), which lands in the window straight from the
 * datagrams where a batch is reassembled and then applied. */
static bool first_access_copy(const mca_osc_rttcc_module_t *m, int target, size_t n)
{
    const osc_rttcc_peer_t *p = &m->peers[target];
    return 0 != mca_osc_rttcc_component.post_bytes && p->in_access && !p->access_copied &&
           n <= OSC_RTTCC_LAZY_PIECE;
}

/* The largest piece that joins target's batch: post_bytes (0: none,
 * batches are off), or more where a copy saves a wait.  A piece in the
 * batch is a copy, done at once; one sent alone is zero-copy, done on the
 * target's ACK (but for first_access_copy's puts).
 *   lazy lock     a batch's worth: it goes as one request with the lock
 *   PSCW access   an accumulate's first_access_copy */
static size_t osc_rttcc_post_limit(const mca_osc_rttcc_module_t *m, int target, bool fetching, bool put)
{
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    const osc_rttcc_peer_t *p = &m->peers[target];
    if (0 == c->post_bytes || !(p->lock_lazy || (first_access_copy(m, target, 0) && !fetching && !put))) {
        return c->post_bytes;
    }
    const size_t whole = c->post_most < OSC_RTTCC_LAZY_PIECE ? c->post_most : OSC_RTTCC_LAZY_PIECE;
    return whole > c->post_bytes ? whole : c->post_bytes;
}

/* Posts a piece into the target's batch: RTTCC_ERR_BUSY if it does not fit
 * one (it goes alone).  Puts and accumulates carry their bytes, up to
 * osc_rttcc_post_limit; a plain get carries none, and its reply is not a
 * copy, so any the engine takes is posted (unless post_bytes is 0: nothing
 * is). */
static int post_piece(issue_t *s, uint32_t peer, uint32_t key, uint64_t offset, uint8_t *bytes, size_t n,
                      uint32_t reply)
{
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    if (KIND_GET == s->kind && !s->atomic && 0 != c->post_bytes) {
        return rttcc_rma_post_get(c->engine, peer, key, offset, n, reply, RTTCC_TAG_OSC);
    }
    if (n > osc_rttcc_post_limit(s->m, s->target, 0 != reply,
                                 KIND_PUT == s->kind && MPI_WIN_FLAVOR_DYNAMIC != s->m->flavor)) {
        return RTTCC_ERR_BUSY;
    }
    int rc;
    switch (s->kind) {
    case KIND_PUT: /* REPLACE on bytes */
        rc = rttcc_rma_post(c->engine, peer, key, offset, RTTCC_RMA_REPLACE, RTTCC_RMA_BYTE, bytes, n);
        break;
    case KIND_GET: /* an atomic read: NO_OP on bytes, with a copied reply */
        rc = rttcc_rma_post_fetch(c->engine, peer, key, offset, RTTCC_RMA_NO_OP, RTTCC_RMA_BYTE, NULL, n, reply,
                                  RTTCC_TAG_OSC);
        break;
    default:
        rc = rttcc_rma_post_fetch(c->engine, peer, key, offset, s->rop, s->rtype, bytes, n, reply, RTTCC_TAG_OSC);
        break;
    }
    if (RTTCC_DONE == rc && n > c->post_bytes && 0 == reply) {
        s->m->peers[s->target].access_copied = true;
    }
    return rc;
}

static int issue_piece(issue_t *s, uint32_t key, uint64_t offset, size_t n)
{
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    const uint32_t peer = s->m->peers[s->target].index;
    uint8_t *bytes = s->data + s->done;
    struct iovec iov = {.iov_base = bytes, .iov_len = n};
    uint8_t *reply_at = KIND_GET == s->kind ? bytes : NULL != s->fetch ? s->fetch + s->done : NULL;
    uint32_t reply = 0;
    int rc;
    if (s->queue) {
        const osc_rttcc_piece_t piece = {.op = s->op, .key = key, .offset = offset, .data = bytes, .len = n,
                                         .rop = KIND_PUT == s->kind ? -1 : s->rop, .rtype = s->rtype};
        return osc_rttcc_queue(s->m, s->target, &piece);
    }
    if (NULL != reply_at && OMPI_SUCCESS != (rc = reply_grant(s->op, reply_at, n, &reply))) {
        return rc;
    }
    rc = post_piece(s, peer, key, offset, bytes, n, reply);
    if (RTTCC_ERR_BUSY != rc) {
        c->counters.posted += RTTCC_DONE == rc;
    } else if (KIND_PUT == s->kind) {
        /* (a dynamic window's puts are requests: never copied as a first access) */
        const bool copy = MPI_WIN_FLAVOR_DYNAMIC != s->m->flavor && first_access_copy(s->m, s->target, n);
        rc = send_put(s->m, peer, key, offset, &iov, s->op, copy);
        s->m->peers[s->target].access_copied |= copy; /* the first: copied, or refused for want of memory */
    } else if (KIND_GET == s->kind) {
        rc = (s->atomic ? rttcc_rma_get_atomic : rttcc_rma_get)(c->engine, peer, key, offset, n, reply, RTTCC_TAG_OSC);
    } else {
        rc = rttcc_rma_accumulate(c->engine, peer, key, offset, s->rop, s->rtype, &iov, 1, reply, RTTCC_TAG_OSC,
                                  s->op);
    }
    if (RTTCC_OK != rc && RTTCC_DONE != rc && 0 != reply) {
        reply_cancel(s->op, reply);
    }
    return sent(s->op, rc);
}

/* One contiguous run of the target, cut into messages. */
static int issue_run(void *ctx, ptrdiff_t at, size_t len)
{
    issue_t *s = ctx;
    size_t max = rttcc_engine_max_message(mca_osc_rttcc_component.engine);
    uint32_t key;
    uint64_t offset;
    int rc = locate(s->m, s->target, at, len, &key, &offset);
    if (KIND_ACC == s->kind || (KIND_PUT == s->kind && MPI_WIN_FLAVOR_DYNAMIC == s->m->flavor)) {
        max -= RTTCC_RMA_REQUEST_HEADER; /* a request and its header travel as one message (send_put) */
        max -= KIND_ACC == s->kind ? max % s->esize : 0;
    }
    while (OMPI_SUCCESS == rc && len > 0) {
        size_t n = len < max ? len : max;
        rc = issue_piece(s, key, offset, n);
        s->done += n;
        offset += n;
        len -= n;
    }
    return rc;
}

/* Applies one run here (the target is this process). */
static int local_run(void *ctx, ptrdiff_t at, size_t len)
{
    issue_t *s = ctx;
    mca_osc_rttcc_module_t *m = s->m;
    uint8_t *to = (uint8_t *) (MPI_WIN_FLAVOR_DYNAMIC == m->flavor ? (uintptr_t) at : (uintptr_t) m->base + at);
    switch (s->kind) { /* check_target found it inside the window */
    case KIND_PUT:
        memcpy(to, s->data + s->done, len);
        break;
    case KIND_GET:
        if (s->atomic) { /* under the engine's lock, as peers' accumulates here are applied */
            (void) rttcc_rma_apply_local(mca_osc_rttcc_component.engine, RTTCC_RMA_NO_OP, RTTCC_RMA_BYTE, to, NULL,
                                         len, s->data + s->done);
        } else {
            memcpy(s->data + s->done, to, len);
        }
        break;
    default:
        if (RTTCC_OK != rttcc_rma_apply_local(mca_osc_rttcc_component.engine, s->rop, s->rtype, to,
                                              s->data + s->done, len / s->esize,
                                              NULL != s->fetch ? s->fetch + s->done : NULL)) {
            return OMPI_ERR_BAD_PARAM;
        }
    }
    s->done += len;
    return OMPI_SUCCESS;
}

/* ---------------------------------------------------------------- the common path */

typedef struct {
    const void *origin;          /* put/acc: source; get: destination */
    int ocount;
    ompi_datatype_t *odt;
    void *result;                /* get_accumulate's */
    int rcount;
    ompi_datatype_t *rdt;
    int target;
    ptrdiff_t disp;
    int tcount;
    ompi_datatype_t *tdt;
    struct ompi_op_t *op;        /* acc: NULL for put and get */
    int kind;
    bool fetch;                  /* get_accumulate */
    bool atomic;                 /* get: a get_accumulate with MPI_NO_OP */
    ompi_request_t **request;    /* request forms */
} rma_call_t;

/* A contiguous buffer's first byte, or NULL if the layout has holes. */
static uint8_t *contiguous(const void *buf, int count, ompi_datatype_t *dt)
{
    ptrdiff_t lb, extent;
    if (!ompi_datatype_is_contiguous_memory_layout(dt, count)) {
        return NULL;
    }
    ompi_datatype_get_true_extent(dt, &lb, &extent);
    return (uint8_t *) buf + lb;
}

static void count_call(const rma_call_t *a, size_t bytes)
{
    mca_osc_rttcc_counters_t *k = &mca_osc_rttcc_component.counters;
    if (KIND_PUT == a->kind) {
        ++k->puts;
        k->bytes_put += bytes;
    } else if (KIND_GET == a->kind) {
        ++k->gets;
        k->bytes_got += bytes;
    } else {
        ++k->accumulates;
        k->bytes_put += bytes;
        if (a->fetch) {
            k->bytes_got += bytes;
        }
    }
}

/* The engine's op and type for an accumulate, and whether the elements
 * travel as they lie in memory (the pair types: their packed form drops
 * the padding the target's memory has). */
static int acc_codes(const rma_call_t *a, issue_t *s, bool *raw)
{
    ompi_datatype_t *prim = NULL;
    uint32_t prim_count;
    int rc = ompi_osc_base_get_primitive_type_info(a->tdt, &prim, &prim_count);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    if (NULL == prim) { /* a derived type of more than one predefined type: Open MPI names none */
        return OMPI_ERR_NOT_SUPPORTED;
    }
    s->rtype = osc_rttcc_type_code(prim);
    s->rop = osc_rttcc_op_code(a->op);
    if (s->rtype < 0 || s->rop < 0 || !rttcc_rma_op_valid(s->rop, s->rtype)) {
        opal_output_verbose(10, mca_osc_rttcc_component.output,
                            "osc:rttcc: no engine code for this op on type %s", prim->name);
        return OMPI_ERR_NOT_SUPPORTED;
    }
    s->esize = rttcc_rma_type_size(s->rtype);
    size_t psize;
    ompi_datatype_type_size(prim, &psize);
    *raw = psize != s->esize;
    if (*raw && (a->tdt != prim || (a->ocount > 0 && a->odt != prim) || (a->fetch && a->rdt != prim))) {
        opal_output_verbose(10, mca_osc_rttcc_component.output,
                            "osc:rttcc: %s accumulates only as the predefined type itself", prim->name);
        return OMPI_ERR_NOT_SUPPORTED;
    }
    return OMPI_SUCCESS;
}

/* The origin's first byte and where the target's one run lies, for an
 * operation contiguous at both ends whose run is in range (the regions a
 * dynamic window's lookups found this epoch): else false. */
static bool small_run(mca_osc_rttcc_module_t *m, const rma_call_t *a, size_t bytes, uint8_t **data, uint32_t *key,
                      uint64_t *offset)
{
    ptrdiff_t lb, extent;
    *data = contiguous(a->origin, a->ocount, a->odt);
    if (NULL == *data || !ompi_datatype_is_contiguous_memory_layout(a->tdt, a->tcount)) {
        return false;
    }
    ompi_datatype_get_true_extent(a->tdt, &lb, &extent);
    const bool dynamic = MPI_WIN_FLAVOR_DYNAMIC == m->flavor; /* its regions are shared by threads */
    if (dynamic) {
        OPAL_THREAD_LOCK(&mca_osc_rttcc_component.lock);
    }
    const int rc = locate(m, a->target, target_at(m, a->target, a->disp) + lb, bytes, key, offset);
    if (dynamic) {
        OPAL_THREAD_UNLOCK(&mca_osc_rttcc_component.lock);
    }
    return OMPI_SUCCESS == rc;
}

/* A small put or accumulate (without a result) of contiguous bytes to
 * another process, outside any schedule, joins its target's batch and is
 * done once copied: it needs no operation record and no walk of its runs
 * (the operations of a burst).  False when its bytes are not contiguous at
 * both ends, its run is not found in range (check_target then looks a
 * dynamic window's region up, or says it is out of range), or the batch
 * would not take it: the common path then issues it.  Else *rc is the
 * outcome. */
static bool post_small(issue_t *s, const rma_call_t *a, size_t bytes, int *rc)
{
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    mca_osc_rttcc_module_t *m = s->m;
    uint8_t *data;
    uint32_t key;
    uint64_t offset;
    if (!small_run(m, a, bytes, &data, &key, &offset)) {
        return false;
    }
    OPAL_THREAD_LOCK(&c->lock);
    const int erc = post_piece(s, m->peers[a->target].index, key, offset, data, bytes, 0);
    if (RTTCC_DONE == erc) {
        ++c->counters.posted;
        m->peers[a->target].dirty = true;
    }
    OPAL_THREAD_UNLOCK(&c->lock);
    *rc = RTTCC_DONE == erc ? OMPI_SUCCESS : engine_error(erc);
    return RTTCC_ERR_BUSY != erc;
}

/* A get, or an accumulate with a result, of contiguous bytes (at most
 * osc_rttcc_post_limit) to a target whose lock is lazy joins its held
 * batch, its reply granted as the common path grants it: the lock, the
 * operation and the unlock still go as one request.  False as post_small
 * says it, and when a result is not contiguous. */
static bool fetch_small(issue_t *s, const rma_call_t *a, size_t bytes, int *rc)
{
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    mca_osc_rttcc_module_t *m = s->m;
    uint8_t *data, *reply_at;
    uint32_t key, reply = 0;
    uint64_t offset;
    if (!small_run(m, a, bytes, &data, &key, &offset)) {
        return false;
    }
    reply_at = KIND_GET == a->kind ? data : contiguous(a->result, a->rcount, a->rdt);
    if (NULL == reply_at) {
        return false;
    }
    OPAL_THREAD_LOCK(&c->lock);
    osc_rttcc_op_t *op = op_new(m, a->target, NULL);
    int erc = RTTCC_ERR;
    if (NULL != op && OMPI_SUCCESS == reply_grant(op, reply_at, bytes, &reply)) {
        erc = post_piece(s, m->peers[a->target].index, key, offset, data, bytes, reply);
        if (RTTCC_DONE != erc) {
            reply_cancel(op, reply);
        }
    }
    if (RTTCC_DONE == erc) {
        ++c->counters.posted;
        m->peers[a->target].dirty = true;
    }
    if (NULL != op) {
        osc_rttcc_op_piece_done(op, RTTCC_OK); /* the issuer's part */
    }
    OPAL_THREAD_UNLOCK(&c->lock);
    *rc = RTTCC_DONE == erc ? OMPI_SUCCESS : RTTCC_ERR == erc ? OMPI_ERR_OUT_OF_RESOURCE : engine_error(erc);
    return RTTCC_ERR_BUSY != erc;
}

/* Do `count` of `dt` hold as many bytes as `tcount` of `tdt`? */
static bool same_bytes(ompi_datatype_t *dt, int count, ompi_datatype_t *tdt, int tcount)
{
    size_t size = 0, tsize = 0;
    if (count > 0) {
        ompi_datatype_type_size(dt, &size);
    }
    if (tcount > 0) {
        ompi_datatype_type_size(tdt, &tsize);
    }
    return size * (size_t) count == tsize * (size_t) tcount;
}

static int rma_call(rma_call_t *a, struct ompi_win_t *win)
{
    mca_osc_rttcc_module_t *m = OSC_RTTCC_MODULE(win);
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    issue_t s = {.m = m, .target = a->target, .kind = a->kind, .atomic = a->atomic};
    bool raw = false, self = a->target == m->rank;
    size_t tsize, bytes;
    uint8_t *stage = NULL, *fetch_stage = NULL;
    ompi_request_t *request = NULL;
    int rc;

    if (ompi_win_peer_invalid(win, a->target)) {
        return OMPI_ERR_BAD_PARAM;
    }
    if (!osc_rttcc_in_epoch(m, a->target)) {
        return OMPI_ERR_RMA_SYNC;
    }
    if (NULL != a->request && !m->lock_all && !m->peers[a->target].lock) {
        return OMPI_ERR_RMA_SYNC; /* request forms belong to passive-target epochs (MPI 3.1, 11.3.5) */
    }
    if (KIND_ACC == a->kind && OMPI_SUCCESS != (rc = acc_codes(a, &s, &raw))) {
        return rc;
    }
    ompi_datatype_type_size(a->tdt, &tsize);
    bytes = raw ? (size_t) a->tcount * rttcc_rma_type_size(s.rtype) : tsize * (size_t) a->tcount;
    /* The origin's (and a fetch's result) type signatures must be the
     * target's: the origin's bytes are read, or a get's and a fetch's
     * written, as many as the target's. */
    if (!same_bytes(a->odt, a->ocount, a->tdt, a->tcount) ||
        (KIND_ACC == a->kind && a->fetch && !same_bytes(a->rdt, a->rcount, a->tdt, a->tcount))) {
        return OMPI_ERR_BAD_PARAM;
    }
    count_call(a, bytes);
    if (!self && 0 != c->nlazy && OMPI_SUCCESS != (rc = osc_rttcc_lazy_conflicts(m, a->target))) {
        return rc;
    }
    const bool queued = !self && NULL == a->request && (KIND_PUT == a->kind || (KIND_ACC == a->kind && !a->fetch)) &&
                        osc_rttcc_schedules(m, a->target, bytes);
    if ((KIND_ACC == a->kind || a->atomic) && !queued) {
        osc_rttcc_release_accumulates(m, a->target);
    }
    const size_t small = osc_rttcc_post_limit(m, a->target, false,
                                              KIND_PUT == a->kind && MPI_WIN_FLAVOR_DYNAMIC != m->flavor);
    if ((KIND_PUT == a->kind || (KIND_ACC == a->kind && !a->fetch && !raw)) && !self && NULL == a->request &&
        0 < bytes && bytes <= small && !queued && post_small(&s, a, bytes, &rc)) {
        return rc; /* in a lazy lock's batch too */
    }
    if ((KIND_GET == a->kind || (KIND_ACC == a->kind && a->fetch && !raw)) && !self && NULL == a->request &&
        m->peers[a->target].lock_lazy && 0 < bytes && bytes <= small && fetch_small(&s, a, bytes, &rc)) {
        return rc;
    }
    if (!self && OMPI_SUCCESS != (rc = osc_rttcc_lock_now(m, a->target))) {
        return rc; /* anything else needs the lock held first */
    }
    rc = raw ? check_run(&(check_ctx_t){m, a->target}, target_at(m, a->target, a->disp), bytes)
             : check_target(m, a->target, a->tdt, a->tcount, target_at(m, a->target, a->disp));
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    if (NULL != a->request && NULL == (request = request_new())) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }

    /* The origin side, packed in the target's order. */
    s.total = bytes;
    if (KIND_GET == a->kind) {
        s.data = contiguous(a->origin, a->ocount, a->odt);
    } else if (raw || a->ocount == 0) {
        s.data = (uint8_t *) a->origin;
    } else if (NULL == (s.data = contiguous(a->origin, a->ocount, a->odt))) {
        stage = malloc(bytes ? bytes : 1);
        rc = NULL == stage ? OMPI_ERR_OUT_OF_RESOURCE : osc_rttcc_pack(a->origin, a->ocount, a->odt, stage, bytes);
        s.data = stage;
    }
    if (KIND_GET == a->kind && NULL == s.data) {
        s.data = stage = malloc(bytes ? bytes : 1); /* unpacked into the origin at the end */
        rc = NULL == stage ? OMPI_ERR_OUT_OF_RESOURCE : rc;
    }
    if (a->fetch && OMPI_SUCCESS == rc && NULL == (s.fetch = raw ? (uint8_t *) a->result : contiguous(a->result, a->rcount, a->rdt))) {
        s.fetch = fetch_stage = malloc(bytes ? bytes : 1);
        rc = NULL == fetch_stage ? OMPI_ERR_OUT_OF_RESOURCE : rc;
    }
    if (OMPI_SUCCESS != rc) {
        free(stage);
        free(fetch_stage);
        if (NULL != request) {
            request_complete(request, rc);
            *a->request = request;
        }
        return rc;
    }

    OPAL_THREAD_LOCK(&c->lock);
    s.op = op_new(m, a->target, request);
    if (NULL == s.op) {
        OPAL_THREAD_UNLOCK(&c->lock);
        free(stage);
        free(fetch_stage);
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    /* What the end of the operation unpacks and frees. */
    if (NULL != fetch_stage) {
        s.op->landing = fetch_stage;
        s.op->result = a->result;
        s.op->result_count = a->rcount;
        s.op->result_dt = a->rdt;
    } else if (KIND_GET == a->kind && NULL != stage) {
        s.op->landing = stage;
        s.op->result = (void *) a->origin;
        s.op->result_count = a->ocount;
        s.op->result_dt = a->odt;
        stage = NULL;
    }
    s.op->stage = stage;
    if (NULL != s.op->result_dt) {
        OBJ_RETAIN(s.op->result_dt);
    }
    m->peers[a->target].dirty |= !self;
    /* A request form completes by itself (MPI_Wait would wait on the queue forever). */
    s.queue = queued;
    c->counters.queued += s.queue;
    /* Pair types travel as they lie in memory: one run of whole elements. */
    rc = raw ? (self ? local_run : issue_run)(&s, target_at(m, a->target, a->disp), bytes)
             : osc_rttcc_runs(a->tdt, a->tcount, target_at(m, a->target, a->disp), self ? local_run : issue_run, &s);
    if (OMPI_SUCCESS != rc && OMPI_SUCCESS == s.op->status) {
        s.op->status = rc;
    }
    osc_rttcc_op_piece_done(s.op, RTTCC_OK); /* the issuer's part: may finish it */
    const bool overflow = m->queued_bytes > c->queue_bytes;
    OPAL_THREAD_UNLOCK(&c->lock);
    if (NULL != a->request) {
        *a->request = request;
    }
    if (overflow) {
        ++c->counters.overflows;
        int xrc = osc_rttcc_release(m);
        rc = OMPI_SUCCESS == rc ? xrc : rc;
    }
    return rc;
}

/* ---------------------------------------------------------------- the MPI calls */

static int put_call(const void *origin, int ocount, ompi_datatype_t *odt, int target, ptrdiff_t disp, int tcount,
                    ompi_datatype_t *tdt, struct ompi_win_t *win, ompi_request_t **request)
{
    rma_call_t a = {.origin = origin, .ocount = ocount, .odt = odt, .target = target, .disp = disp,
                    .tcount = tcount, .tdt = tdt, .kind = KIND_PUT, .request = request};
    return rma_call(&a, win);
}

static int get_call(void *origin, int ocount, ompi_datatype_t *odt, int target, ptrdiff_t disp, int tcount,
                    ompi_datatype_t *tdt, struct ompi_win_t *win, ompi_request_t **request, bool atomic)
{
    rma_call_t a = {.origin = origin, .ocount = ocount, .odt = odt, .target = target, .disp = disp,
                    .tcount = tcount, .tdt = tdt, .kind = KIND_GET, .atomic = atomic, .request = request};
    return rma_call(&a, win);
}

/* A fetching accumulate with MPI_NO_OP reads: an atomic get, which the
 * target's engine serves under the same lock and in the same order. */
static int acc_call(const void *origin, int ocount, ompi_datatype_t *odt, void *result, int rcount,
                    ompi_datatype_t *rdt, int target, ptrdiff_t disp, int tcount, ompi_datatype_t *tdt,
                    struct ompi_op_t *op, bool fetch, struct ompi_win_t *win, ompi_request_t **request)
{
    if (fetch && MPI_NO_OP == op) {
        mca_osc_rttcc_component.counters.accumulates++;
        return get_call(result, rcount, rdt, target, disp, tcount, tdt, win, request, true);
    }
    rma_call_t a = {.origin = origin, .ocount = ocount, .odt = odt, .result = result, .rcount = rcount,
                    .rdt = rdt, .target = target, .disp = disp, .tcount = tcount, .tdt = tdt, .op = op,
                    .kind = KIND_ACC, .fetch = fetch, .request = request};
    return rma_call(&a, win);
}

int osc_rttcc_put(const void *origin, int ocount, ompi_datatype_t *odt, int target, ptrdiff_t disp, int tcount,
                  ompi_datatype_t *tdt, struct ompi_win_t *win)
{
    return put_call(origin, ocount, odt, target, disp, tcount, tdt, win, NULL);
}

int osc_rttcc_rput(const void *origin, int ocount, ompi_datatype_t *odt, int target, ptrdiff_t disp, int tcount,
                   ompi_datatype_t *tdt, struct ompi_win_t *win, ompi_request_t **request)
{
    return put_call(origin, ocount, odt, target, disp, tcount, tdt, win, request);
}

int osc_rttcc_get(void *origin, int ocount, ompi_datatype_t *odt, int target, ptrdiff_t disp, int tcount,
                  ompi_datatype_t *tdt, struct ompi_win_t *win)
{
    return get_call(origin, ocount, odt, target, disp, tcount, tdt, win, NULL, false);
}

int osc_rttcc_rget(void *origin, int ocount, ompi_datatype_t *odt, int target, ptrdiff_t disp, int tcount,
                   ompi_datatype_t *tdt, struct ompi_win_t *win, ompi_request_t **request)
{
    return get_call(origin, ocount, odt, target, disp, tcount, tdt, win, request, false);
}

int osc_rttcc_accumulate(const void *origin, int ocount, ompi_datatype_t *odt, int target, ptrdiff_t disp,
                         int tcount, ompi_datatype_t *tdt, struct ompi_op_t *op, struct ompi_win_t *win)
{
    return acc_call(origin, ocount, odt, NULL, 0, NULL, target, disp, tcount, tdt, op, false, win, NULL);
}

int osc_rttcc_raccumulate(const void *origin, int ocount, ompi_datatype_t *odt, int target, ptrdiff_t disp,
                          int tcount, ompi_datatype_t *tdt, struct ompi_op_t *op, struct ompi_win_t *win,
                          ompi_request_t **request)
{
    return acc_call(origin, ocount, odt, NULL, 0, NULL, target, disp, tcount, tdt, op, false, win, request);
}

int osc_rttcc_get_accumulate(const void *origin, int ocount, ompi_datatype_t *odt, void *result, int rcount,
                             ompi_datatype_t *rdt, int target, ptrdiff_t disp, int tcount, ompi_datatype_t *tdt,
                             struct ompi_op_t *op, struct ompi_win_t *win)
{
    return acc_call(origin, ocount, odt, result, rcount, rdt, target, disp, tcount, tdt, op, true, win, NULL);
}

int osc_rttcc_rget_accumulate(const void *origin, int ocount, ompi_datatype_t *odt, void *result, int rcount,
                              ompi_datatype_t *rdt, int target, ptrdiff_t disp, int tcount, ompi_datatype_t *tdt,
                              struct ompi_op_t *op, struct ompi_win_t *win, ompi_request_t **request)
{
    return acc_call(origin, ocount, odt, result, rcount, rdt, target, disp, tcount, tdt, op, true, win, request);
}

int osc_rttcc_fetch_and_op(const void *origin, void *result, ompi_datatype_t *dt, int target, ptrdiff_t disp,
                           struct ompi_op_t *op, struct ompi_win_t *win)
{
    return acc_call(origin, 1, dt, result, 1, dt, target, disp, 1, dt, op, true, win, NULL);
}

int osc_rttcc_compare_and_swap(const void *origin, const void *compare, void *result, ompi_datatype_t *dt,
                               int target, ptrdiff_t disp, struct ompi_win_t *win)
{
    mca_osc_rttcc_module_t *m = OSC_RTTCC_MODULE(win);
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    const int type = osc_rttcc_type_code(dt);
    const ptrdiff_t at = target_at(m, target, disp);
    size_t esize;
    uint32_t key, reply;
    uint64_t offset;
    int rc;

    if (ompi_win_peer_invalid(win, target)) {
        return OMPI_ERR_BAD_PARAM;
    }
    if (!osc_rttcc_in_epoch(m, target)) {
        return OMPI_ERR_RMA_SYNC;
    }
    if (type < 0) {
        return OMPI_ERR_NOT_SUPPORTED;
    }
    esize = rttcc_rma_type_size(type);
    ++c->counters.atomics;
    if (OMPI_SUCCESS != (rc = check_target(m, target, dt, 1, at))) {
        return rc;
    }
    if (target == m->rank) {
        uint8_t *to = (uint8_t *) (MPI_WIN_FLAVOR_DYNAMIC == m->flavor ? (uintptr_t) at : (uintptr_t) m->base + at);
        return RTTCC_OK == rttcc_rma_compare_and_swap_local(c->engine, type, to, compare, origin, result)
                   ? OMPI_SUCCESS
                   : OMPI_ERR_BAD_PARAM;
    }
    if (OMPI_SUCCESS != (rc = osc_rttcc_lock_now(m, target)) ||
        (0 != c->nlazy && OMPI_SUCCESS != (rc = osc_rttcc_lazy_conflicts(m, target)))) {
        return rc;
    }
    osc_rttcc_release_accumulates(m, target); /* a compare-and-swap is an accumulate: in order with them */
    OPAL_THREAD_LOCK(&c->lock);
    osc_rttcc_op_t *op = NULL;
    rc = locate(m, target, at, esize, &key, &offset);
    if (OMPI_SUCCESS == rc) {
        op = op_new(m, target, NULL);
        rc = NULL == op ? OMPI_ERR_OUT_OF_RESOURCE : reply_grant(op, result, esize, &reply);
    }
    if (OMPI_SUCCESS == rc) {
        m->peers[target].dirty = true;
        int erc = rttcc_rma_compare_and_swap(c->engine, m->peers[target].index, key, offset, type, compare, origin,
                                             reply, RTTCC_TAG_OSC);
        if (RTTCC_OK != erc && RTTCC_DONE != erc) {
            reply_cancel(op, reply);
            rc = op->status = engine_error(erc);
        }
    }
    if (NULL != op) {
        osc_rttcc_op_piece_done(op, RTTCC_OK);
    }
    OPAL_THREAD_UNLOCK(&c->lock);
    return rc;
}
