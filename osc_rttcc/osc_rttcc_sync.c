/* Epochs and completion: fence, PSCW, locks, flushes.
 *
 *   completion   an operation is complete here when its zero-copy sends are
 *                acknowledged and its replies landed (peer.unfinished); at
 *                the target when the engine acknowledged every message sent
 *                before (rttcc_engine_flush): puts land, and requests are
 *                applied, before they are acknowledged
 *   ordered      a FENCE or COMPLETE message goes behind everything sent
 *                before it (rttcc_engine_send_ordered): its target hears
 *                it once our operations there are done, a round trip
 *                before our flush would learn it
 *   fence        two ranks: an ordered FENCE to the other, which also
 *                flushes what went before it, then wait for its FENCE;
 *                more: flush every target, then a barrier (design.md: why)
 *   PSCW         post: a POST message to each origin; start: wait for the
 *                POST of each target; complete: an ordered COMPLETE to
 *                each target, then our operations' local completion; wait:
 *                every origin's COMPLETE in
 *   locks        the target's engine keeps the lock table (rttcc_rma_lock),
 *                so a lock is granted while the target computes.  Lazy
 *                (lazy_lock): MPI_Win_lock asks for nothing, the epoch's
 *                batched puts and accumulates wait in the engine, and
 *                unlock sends lock, batch and unlock as one request whose
 *                answer says all is done (one round trip); anything else
 *                takes the lock first (osc_rttcc_lock_now).  Taken: unlock
 *                is ordered behind our operations there, flushes them in
 *                the same send call, and needs no reply of its own
 */
#include <stdlib.h>
#include <string.h>

#include "osc_rttcc.h"

#include "opal/runtime/opal_progress.h"
#include "opal/sys/atomic.h"
#include "opal/threads/thread_usage.h"

void osc_rttcc_wait_for(volatile bool *flag)
{
    while (!*flag) {
        opal_progress();
    }
    opal_atomic_rmb();
}

/* Reads a counter the engine's callbacks change. */
static uint32_t read_locked(const uint32_t *x)
{
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    OPAL_THREAD_LOCK(&c->lock);
    uint32_t v = *x;
    OPAL_THREAD_UNLOCK(&c->lock);
    return v;
}

static bool read_flag(const volatile bool *x)
{
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    OPAL_THREAD_LOCK(&c->lock);
    bool v = *x;
    OPAL_THREAD_UNLOCK(&c->lock);
    return v;
}

/* Its engine declared rank r dead: a message awaited from it never comes. */
static bool dead_locked(const mca_osc_rttcc_module_t *m, int r)
{
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    OPAL_THREAD_LOCK(&c->lock);
    bool v = m->peers[r].dead;
    OPAL_THREAD_UNLOCK(&c->lock);
    return v;
}

bool osc_rttcc_in_epoch(const mca_osc_rttcc_module_t *m, int target)
{
    const osc_rttcc_peer_t *p = &m->peers[target];
    return m->fence || (m->pscw_access && p->in_access) || p->lock || m->lock_all;
}

/* Dynamic windows: the regions looked up hold for one epoch. */
static void forget_regions(osc_rttcc_peer_t *p)
{
    p->nregions = 0;
}

/* A flush with nothing to wait for (flush_end returns at once). */
static const osc_rttcc_flush_t flush_done = {.kind = OSC_RTTCC_COOKIE_FLUSH, .done = true, .status = RTTCC_OK};

/* What the engine said to a flush cookie's request: RTTCC_OK, it calls the
 * cookie back; else nothing was to flush (RTTCC_DONE) or the request failed. */
static void flush_started(osc_rttcc_flush_t *f, int erc)
{
    if (RTTCC_OK != erc) {
        f->done = true;
        f->status = RTTCC_DONE == erc ? RTTCC_OK : erc;
    }
}

/* Asks the engine for remote completion towards `target` (flush_end waits). */
static int flush_begin(mca_osc_rttcc_module_t *m, int target, osc_rttcc_flush_t *f)
{
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    osc_rttcc_peer_t *p = &m->peers[target];
    *f = flush_done;
    if (target == m->rank || !p->dirty) {
        return OMPI_SUCCESS;
    }
    OPAL_THREAD_LOCK(&c->lock);
    f->done = false;
    flush_started(f, rttcc_engine_flush(c->engine, p->index, RTTCC_TAG_OSC, f));
    p->dirty = false;
    OPAL_THREAD_UNLOCK(&c->lock);
    return OMPI_SUCCESS;
}

static int flush_end(mca_osc_rttcc_module_t *m, int target, osc_rttcc_flush_t *f)
{
    osc_rttcc_wait_for(&f->done);
    while (0 != read_locked(&m->peers[target].unfinished)) {
        opal_progress();
    }
    return RTTCC_OK == f->status ? OMPI_SUCCESS : RTTCC_ERR_UNREACH == f->status ? OMPI_ERR_UNREACH : OMPI_ERROR;
}

static int flush_target(mca_osc_rttcc_module_t *m, int target)
{
    osc_rttcc_flush_t f;
    osc_rttcc_release_target(m, target);
    flush_begin(m, target, &f);
    return flush_end(m, target, &f);
}

/* Flushes every target at once, then waits for them all. */
static int flush_every(mca_osc_rttcc_module_t *m)
{
    osc_rttcc_flush_t *f = malloc((size_t) m->size * sizeof *f);
    int rc = osc_rttcc_release(m);
    if (NULL == f || OMPI_SUCCESS != rc) {
        free(f);
        return NULL == f ? OMPI_ERR_OUT_OF_RESOURCE : rc;
    }
    for (int t = 0; t < m->size; ++t) {
        flush_begin(m, t, &f[t]);
    }
    for (int t = 0; t < m->size; ++t) {
        int trc = flush_end(m, t, &f[t]);
        rc = OMPI_SUCCESS == rc ? trc : rc;
    }
    free(f);
    return rc;
}

/* Every lazy lock of the window is taken (osc_rttcc_lock_now). */
static int lock_every_lazy(mca_osc_rttcc_module_t *m)
{
    for (int t = 0; t < m->size; ++t) {
        int rc = osc_rttcc_lock_now(m, t);
        if (OMPI_SUCCESS != rc) {
            return rc;
        }
    }
    return OMPI_SUCCESS;
}

int osc_rttcc_flush(int target, struct ompi_win_t *win)
{
    mca_osc_rttcc_module_t *m = OSC_RTTCC_MODULE(win);
    if (ompi_win_peer_invalid(win, target)) {
        return OMPI_ERR_BAD_PARAM;
    }
    if (!m->lock_all && !m->peers[target].lock) {
        return OMPI_ERR_RMA_SYNC;
    }
    int rc = osc_rttcc_lock_now(m, target);
    return OMPI_SUCCESS == rc ? flush_target(m, target) : rc;
}

int osc_rttcc_flush_all(struct ompi_win_t *win)
{
    mca_osc_rttcc_module_t *m = OSC_RTTCC_MODULE(win);
    if (!m->lock_all && 0 == m->locks) {
        return OMPI_ERR_RMA_SYNC;
    }
    int rc = lock_every_lazy(m);
    return OMPI_SUCCESS == rc ? flush_every(m) : rc;
}

/* Local completion: the origin buffers may be reused. */
int osc_rttcc_flush_local(int target, struct ompi_win_t *win)
{
    mca_osc_rttcc_module_t *m = OSC_RTTCC_MODULE(win);
    if (ompi_win_peer_invalid(win, target)) {
        return OMPI_ERR_BAD_PARAM;
    }
    if (!m->lock_all && !m->peers[target].lock) {
        return OMPI_ERR_RMA_SYNC;
    }
    int rc = osc_rttcc_lock_now(m, target); /* a held get's reply comes once it goes */
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    osc_rttcc_release_target(m, target);
    while (0 != read_locked(&m->peers[target].unfinished)) {
        opal_progress();
    }
    return OMPI_SUCCESS;
}

int osc_rttcc_flush_local_all(struct ompi_win_t *win)
{
    mca_osc_rttcc_module_t *m = OSC_RTTCC_MODULE(win);
    if (!m->lock_all && 0 == m->locks) {
        return OMPI_ERR_RMA_SYNC;
    }
    int rc = lock_every_lazy(m);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    osc_rttcc_release(m);
    while (0 != read_locked(&m->unfinished)) {
        opal_progress();
    }
    return OMPI_SUCCESS;
}

int osc_rttcc_sync(struct ompi_win_t *win)
{
    (void) win;
    opal_atomic_mb(); /* the public and private copies are one (MPI_WIN_UNIFIED) */
    return OMPI_SUCCESS;
}

/* A message of `kind` to `rank`; ordered: delivered there only after
 * everything this process sent it before, and with `flush` (not NULL) a
 * flush of all that too (flush_end waits for it). */
static int send_message(mca_osc_rttcc_module_t *m, int rank, uint32_t kind, bool ordered, osc_rttcc_flush_t *flush)
{
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    osc_rttcc_msg_t msg = {.kind = kind, .cid = m->cid, .rank = m->rank};
    struct iovec iov = {.iov_base = &msg, .iov_len = sizeof msg};
    int rc = OMPI_SUCCESS;
    OPAL_THREAD_LOCK(&c->lock);
    if (NULL != flush) {
        *flush = flush_done;
    }
    if (rank == m->rank) {
        osc_rttcc_take_message(&msg);
    } else {
        const uint32_t peer = m->peers[rank].index;
        if (NULL != flush) {
            flush->done = false;
            m->peers[rank].dirty = false;
        }
        int erc = ordered ? rttcc_engine_send_ordered(c->engine, peer, RTTCC_TAG_OSC, &msg, sizeof msg, flush)
                          : rttcc_engine_send(c->engine, peer, RTTCC_TAG_OSC, &iov, 1, NULL);
        if (NULL != flush) {
            flush_started(flush, erc);
        }
        rc = RTTCC_DONE == erc || RTTCC_OK == erc ? OMPI_SUCCESS
             : RTTCC_ERR_UNREACH == erc           ? OMPI_ERR_UNREACH
                                                  : OMPI_ERROR;
    }
    OPAL_THREAD_UNLOCK(&c->lock);
    return rc;
}

/* The window's exposure epoch ended: the application may change its
 * memory now.  A large get's reply still leaving from it (its origin's
 * COMPLETE or FENCE came behind the request, not the reply) becomes the
 * engine's copy first. */
static void settle(mca_osc_rttcc_module_t *m)
{
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    OPAL_THREAD_LOCK(&c->lock);
    (void) rttcc_rma_settle(c->engine, m->window);
    OPAL_THREAD_UNLOCK(&c->lock);
}

/* ---------------------------------------------------------------- fence */

/* Fence of a two-rank window: an ordered FENCE to the other rank tells it
 * that our operations there are done; our flush, that it has them; its
 * FENCE, that it has entered the fence and its operations here are done.
 * Two one-way trips after our last operation, where a flush and a barrier
 * take three.  The flush stays: without it an operation of our next epoch
 * could land before a resent one of this epoch.  It covers what went
 * before the FENCE, not the FENCE, whose ACK is asked only if nothing
 * before it asks (each ACK at once costs the other rank a send call). */
static int fence_pair(mca_osc_rttcc_module_t *m)
{
    const int peer = 1 - m->rank;
    osc_rttcc_flush_t f = flush_done;
    osc_rttcc_release_target(m, peer);
    int rc = send_message(m, peer, OSC_RTTCC_MSG_FENCE, true, m->peers[peer].dirty ? &f : NULL);
    ++m->fences;
    while (OMPI_SUCCESS == rc && (int32_t) (read_locked(&m->peer_fences) - m->fences) < 0) { /* wraps */
        if (dead_locked(m, peer)) {
            rc = OMPI_ERR_UNREACH;
            break;
        }
        opal_progress();
    }
    const int frc = flush_end(m, peer, &f);
    opal_atomic_mb(); /* its data before our loads */
    return OMPI_SUCCESS == rc ? frc : rc;
}

int osc_rttcc_fence(int assert, struct ompi_win_t *win)
{
    mca_osc_rttcc_module_t *m = OSC_RTTCC_MODULE(win);
    const bool synchronizes = !(assert & MPI_MODE_NOPRECEDE) || !(assert & MPI_MODE_NOSUCCEED);
    int rc = OMPI_SUCCESS;
    if (m->pscw_access || m->pscw_exposure || m->locks || m->lock_all) {
        return OMPI_ERR_RMA_SYNC;
    }
    if (2 == m->size) {
        rc = synchronizes ? fence_pair(m) : flush_every(m);
    } else {
        rc = flush_every(m);
        if (OMPI_SUCCESS == rc && synchronizes) {
            rc = m->comm->c_coll->coll_barrier(m->comm, m->comm->c_coll->coll_barrier_module);
        }
    }
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    for (int t = 0; t < m->size; ++t) {
        forget_regions(&m->peers[t]);
    }
    settle(m);
    if (m->fence) {
        ++mca_osc_rttcc_component.counters.epochs;
    }
    m->fence = !(assert & MPI_MODE_NOSUCCEED);
    return rc;
}

/* ---------------------------------------------------------------- PSCW */

/* Lets a kept group go (a window's end, or another group comes). */
void osc_rttcc_group_forget(osc_rttcc_group_t *g)
{
    if (NULL != g->group) {
        OBJ_RELEASE(g->group);
    }
    free(g->ranks);
    free(g->flushes);
    *g = (osc_rttcc_group_t){0};
}

/* Makes *g the members of `group` as communicator ranks (and, for an
 * access group, complete's flush slots): kept from the last epoch when it
 * is the same group, else translated. */
static int group_take(mca_osc_rttcc_module_t *m, osc_rttcc_group_t *g, ompi_group_t *group, bool with_flushes)
{
    if (g->group == group) {
        return OMPI_SUCCESS;
    }
    osc_rttcc_group_forget(g);
    const int n = ompi_group_size(group);
    const size_t slots = (size_t) (n ? n : 1);
    int *in = malloc(2 * slots * sizeof *in);
    osc_rttcc_flush_t *flushes = with_flushes ? malloc(slots * sizeof *flushes) : NULL;
    if (NULL == in || (with_flushes && NULL == flushes)) {
        free(in);
        free(flushes);
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    int *out = in + n;
    for (int i = 0; i < n; ++i) {
        in[i] = i;
    }
    bool foreign = OMPI_SUCCESS != ompi_group_translate_ranks(group, n, in, m->comm->c_local_group, out);
    for (int i = 0; i < n && !foreign; ++i) {
        foreign = MPI_UNDEFINED == out[i]; /* not in the window's group: erroneous */
    }
    if (foreign) {
        free(in);
        free(flushes);
        return MPI_ERR_GROUP;
    }
    memmove(in, out, (size_t) n * sizeof *in);
    OBJ_RETAIN(group);
    *g = (osc_rttcc_group_t){.group = group, .ranks = in, .flushes = flushes, .n = n};
    return OMPI_SUCCESS;
}

void osc_rttcc_take_message(const osc_rttcc_msg_t *msg)
{
    mca_osc_rttcc_module_t *m = osc_rttcc_module_of(msg->cid);
    if (NULL == m || msg->rank < 0 || msg->rank >= m->size) {
        opal_output_verbose(10, mca_osc_rttcc_component.output,
                            "osc:rttcc: a message for window %u from rank %d: no such window here", msg->cid,
                            msg->rank);
        return;
    }
    if (OSC_RTTCC_MSG_POST == msg->kind) {
        ++m->peers[msg->rank].posts;
    } else if (OSC_RTTCC_MSG_COMPLETE == msg->kind) {
        ++m->completes;
    } else if (OSC_RTTCC_MSG_FENCE == msg->kind) {
        ++m->peer_fences;
    }
}

int osc_rttcc_post(ompi_group_t *group, int assert, struct ompi_win_t *win)
{
    mca_osc_rttcc_module_t *m = OSC_RTTCC_MODULE(win);
    int rc;
    if (m->pscw_exposure) {
        return OMPI_ERR_RMA_SYNC;
    }
    rc = group_take(m, &m->exposure, group, false);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    m->pscw_exposure = true;
    opal_atomic_mb(); /* our stores to the window before the origins hear of the post */
    for (int i = 0; i < m->exposure.n && !(assert & MPI_MODE_NOCHECK) && OMPI_SUCCESS == rc; ++i) {
        rc = send_message(m, m->exposure.ranks[i], OSC_RTTCC_MSG_POST, false, NULL);
    }
    return rc;
}

int osc_rttcc_start(ompi_group_t *group, int assert, struct ompi_win_t *win)
{
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    mca_osc_rttcc_module_t *m = OSC_RTTCC_MODULE(win);
    if (m->pscw_access || m->lock_all || m->locks) {
        return OMPI_ERR_RMA_SYNC;
    }
    const int rc = group_take(m, &m->access, group, true);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    const int *ranks = m->access.ranks;
    for (int i = 0; i < m->access.n; ++i) {
        osc_rttcc_peer_t *p = &m->peers[ranks[i]];
        while (!(assert & MPI_MODE_NOCHECK) && 0 == read_locked(&p->posts)) {
            if (dead_locked(m, ranks[i])) { /* its POST never comes */
                for (int j = 0; j < i; ++j) {
                    m->peers[ranks[j]].in_access = false;
                }
                return OMPI_ERR_UNREACH;
            }
            opal_progress();
        }
        OPAL_THREAD_LOCK(&c->lock);
        p->posts -= !(assert & MPI_MODE_NOCHECK);
        p->in_access = true;
        p->access_copied = false;
        OPAL_THREAD_UNLOCK(&c->lock);
    }
    m->pscw_access = true;
    return OMPI_SUCCESS;
}

int osc_rttcc_complete(struct ompi_win_t *win)
{
    mca_osc_rttcc_module_t *m = OSC_RTTCC_MODULE(win);
    if (!m->pscw_access) {
        return OMPI_ERR_RMA_SYNC;
    }
    const int n = m->access.n, *ranks = m->access.ranks;
    osc_rttcc_flush_t *f = m->access.flushes;
    int rc = osc_rttcc_release(m);
    for (int i = 0; i < n; ++i) { /* the target's wait ends once our operations there are done */
        f[i] = flush_done;
        /* With pieces still to be acknowledged or answered, the COMPLETE
         * also flushes them: so their ACK is asked now (behind a COMPLETE,
         * a zero-copy piece no longer ends its queue and asks nothing). */
        const bool waits = 0 != read_locked(&m->peers[ranks[i]].unfinished);
        int trc = send_message(m, ranks[i], OSC_RTTCC_MSG_COMPLETE, true, waits ? &f[i] : NULL);
        rc = OMPI_SUCCESS == rc ? trc : rc;
    }
    for (int i = 0; i < n; ++i) { /* MPI_Win_complete: done here (origin buffers free, results in) */
        int trc = flush_end(m, ranks[i], &f[i]);
        rc = OMPI_SUCCESS == rc ? trc : rc;
        m->peers[ranks[i]].in_access = false;
        forget_regions(&m->peers[ranks[i]]);
    }
    m->pscw_access = false;
    ++mca_osc_rttcc_component.counters.epochs;
    return rc;
}

/* Is a rank of the exposure epoch's group dead? */
static bool exposure_has_dead(mca_osc_rttcc_module_t *m)
{
    bool dead = false;
    for (int i = 0; i < m->exposure.n && !dead; ++i) {
        dead = dead_locked(m, m->exposure.ranks[i]);
    }
    return dead;
}

static void end_exposure(mca_osc_rttcc_module_t *m)
{
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    OPAL_THREAD_LOCK(&c->lock);
    m->completes -= (uint32_t) m->exposure.n;
    OPAL_THREAD_UNLOCK(&c->lock);
    settle(m);
    m->pscw_exposure = false;
    opal_atomic_mb(); /* the origins' data before our loads */
}

int osc_rttcc_wait(struct ompi_win_t *win)
{
    mca_osc_rttcc_module_t *m = OSC_RTTCC_MODULE(win);
    if (!m->pscw_exposure) {
        return OMPI_ERR_RMA_SYNC;
    }
    while (read_locked(&m->completes) < (uint32_t) m->exposure.n) {
        if (0 != read_locked(&m->dead) && exposure_has_dead(m)) {
            return OMPI_ERR_UNREACH; /* a COMPLETE never comes */
        }
        opal_progress();
    }
    end_exposure(m);
    return OMPI_SUCCESS;
}

int osc_rttcc_test(struct ompi_win_t *win, int *flag)
{
    mca_osc_rttcc_module_t *m = OSC_RTTCC_MODULE(win);
    if (!m->pscw_exposure) {
        return OMPI_ERR_RMA_SYNC;
    }
    opal_progress();
    *flag = read_locked(&m->completes) >= (uint32_t) m->exposure.n;
    if (*flag) {
        end_exposure(m);
    }
    return OMPI_SUCCESS;
}

/* ---------------------------------------------------------------- locks */

/* Asks for the target's lock; *granted is set when it is held, or when
 * the request failed (then *status says why). */
static int lock_begin(mca_osc_rttcc_module_t *m, int target, int type, volatile bool *granted, int *status,
                      uint8_t *landing)
{
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    const int exclusive = MPI_LOCK_EXCLUSIVE == type;
    *granted = false;
    *status = OMPI_SUCCESS;
    if (target == m->rank) {
        if (RTTCC_DONE != rttcc_rma_lock_local(c->engine, m->window, exclusive)) {
            ++c->counters.lock_waits;
            do {
                opal_progress();
            } while (RTTCC_DONE != rttcc_rma_lock_local(c->engine, m->window, exclusive));
        }
        *granted = true;
        return OMPI_SUCCESS;
    }
    return osc_rttcc_request_lock(m, target, exclusive, false, granted, status, landing);
}

/* Asks for target's lock (with_batch: a lazy one's, with its batch, see
 * osc_rttcc_request_lock) and waits for the answer. */
static int lock_and_wait(mca_osc_rttcc_module_t *m, int target, int type, bool with_batch)
{
    volatile bool granted = false;
    uint8_t landing = 1; /* the answer: 0 if the target refused the batch */
    int status = OMPI_SUCCESS;
    int rc = with_batch ? osc_rttcc_request_lock(m, target, MPI_LOCK_EXCLUSIVE == type, true, &granted, &status,
                                                 &landing)
                        : lock_begin(m, target, type, &granted, &status, &landing);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    osc_rttcc_wait_for(&granted);
    if (OMPI_SUCCESS == status && 1 != landing) { /* refused: none of it applied, its gets never answered */
        mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
        OPAL_THREAD_LOCK(&c->lock);
        (void) osc_rttcc_fail_replies_of(m->peers[target].index, m, target);
        OPAL_THREAD_UNLOCK(&c->lock);
        opal_output_verbose(10, c->output, "osc:rttcc: rank %d refused a lock epoch's operations (outside its "
                            "window)", target);
        status = OMPI_ERR_RMA_RANGE;
    }
    return status;
}

/* Whether a lazy lock's batch may be held (rttcc_rma_hold_batch). */
static int hold_batch(mca_osc_rttcc_module_t *m, int target, int hold)
{
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    OPAL_THREAD_LOCK(&c->lock);
    int erc = rttcc_rma_hold_batch(c->engine, m->peers[target].index, hold);
    OPAL_THREAD_UNLOCK(&c->lock);
    return RTTCC_OK == erc ? OMPI_SUCCESS : RTTCC_ERR_UNREACH == erc ? OMPI_ERR_UNREACH : OMPI_ERROR;
}

/* The lazy lock of (m, target) holds its peer's batch now (under the
 * component lock): false if another window's lazy lock holds it already,
 * or there is no memory to note it (the lock is then taken eagerly). */
static bool lazy_note(mca_osc_rttcc_module_t *m, int target)
{
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    const uint32_t index = m->peers[target].index;
    for (int i = 0; i < c->nlazy; ++i) {
        if (c->lazy[i].m->peers[c->lazy[i].target].index == index) {
            return false;
        }
    }
    if (c->nlazy == c->lazy_cap) {
        int cap = c->lazy_cap ? 2 * c->lazy_cap : 8;
        osc_rttcc_lazy_t *grown = realloc(c->lazy, (size_t) cap * sizeof *grown);
        if (NULL == grown) {
            return false;
        }
        c->lazy = grown;
        c->lazy_cap = cap;
    }
    c->lazy[c->nlazy++] = (osc_rttcc_lazy_t) {m, target};
    return true;
}

/* (m, target)'s lazy lock no longer holds the batch (under the component lock). */
static void lazy_forget(mca_osc_rttcc_module_t *m, int target)
{
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    for (int i = 0; i < c->nlazy; ++i) {
        if (c->lazy[i].m == m && c->lazy[i].target == target) {
            c->lazy[i] = c->lazy[--c->nlazy];
            return;
        }
    }
}

int osc_rttcc_lazy_conflicts(mca_osc_rttcc_module_t *m, int target)
{
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    const uint32_t index = m->peers[target].index;
    for (;;) {
        osc_rttcc_lazy_t other = {NULL, 0};
        OPAL_THREAD_LOCK(&c->lock);
        for (int i = 0; i < c->nlazy && NULL == other.m; ++i) {
            const osc_rttcc_lazy_t *l = &c->lazy[i];
            if (l->m->peers[l->target].index == index && (l->m != m || l->target != target)) {
                other = *l;
            }
        }
        OPAL_THREAD_UNLOCK(&c->lock);
        if (NULL == other.m) {
            return OMPI_SUCCESS;
        }
        int rc = osc_rttcc_lock_now(other.m, other.target);
        if (OMPI_SUCCESS != rc) {
            return rc;
        }
    }
}

/* A lazy lock could not be taken: its held operations are dropped, not
 * sent without it, and those waiting for a reply fail with them. */
static void drop_held(mca_osc_rttcc_module_t *m, int target)
{
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    (void) hold_batch(m, target, -1);
    OPAL_THREAD_LOCK(&c->lock);
    (void) osc_rttcc_fail_replies_of(m->peers[target].index, m, target);
    OPAL_THREAD_UNLOCK(&c->lock);
}

/* One thread takes a lazy lock; another that needs it meanwhile waits
 * until it is held (MPI_THREAD_MULTIPLE: threads share an epoch). */
int osc_rttcc_lock_now(mca_osc_rttcc_module_t *m, int target)
{
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    osc_rttcc_peer_t *p = &m->peers[target];
    if (!p->lock_lazy && !p->lock_taking) { /* every operation asks: no lock for it (with threads, never lazy) */
        return OMPI_SUCCESS;
    }
    OPAL_THREAD_LOCK(&c->lock);
    const bool mine = p->lock_lazy;
    p->lock_lazy = false;
    p->lock_taking |= mine;
    if (mine) {
        lazy_forget(m, target);
    }
    OPAL_THREAD_UNLOCK(&c->lock);
    if (!mine) {
        while (read_flag(&p->lock_taking)) {
            opal_progress();
        }
        return OMPI_SUCCESS;
    }
    ++c->counters.lazy_locks_taken;
    int rc = lock_and_wait(m, target, p->lock, false);
    /* What waited goes behind the lock; without the lock it must not go
     * (its operations fail with this error). */
    int hrc = OMPI_SUCCESS;
    if (OMPI_SUCCESS == rc) {
        hrc = hold_batch(m, target, 0);
    } else {
        drop_held(m, target);
    }
    OPAL_THREAD_LOCK(&c->lock);
    p->lock_taking = false;
    OPAL_THREAD_UNLOCK(&c->lock);
    return OMPI_SUCCESS == rc ? hrc : rc;
}

static void unlock_target(mca_osc_rttcc_module_t *m, int target)
{
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    OPAL_THREAD_LOCK(&c->lock);
    if (target == m->rank) {
        rttcc_rma_unlock_local(c->engine, m->window);
    } else {
        (void) rttcc_rma_unlock(c->engine, m->peers[target].index, m->peers[target].window, RTTCC_TAG_OSC);
    }
    OPAL_THREAD_UNLOCK(&c->lock);
}

/* Releases the lock of another rank's window behind our operations there,
 * in their send call (rttcc_rma_unlock_ordered), and waits for them. */
static int unlock_ordered(mca_osc_rttcc_module_t *m, int target)
{
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    osc_rttcc_peer_t *p = &m->peers[target];
    osc_rttcc_flush_t f = flush_done;
    osc_rttcc_release_target(m, target);
    OPAL_THREAD_LOCK(&c->lock);
    f.done = false;
    p->dirty = false;
    flush_started(&f, rttcc_rma_unlock_ordered(c->engine, p->index, p->window, RTTCC_TAG_OSC, &f));
    OPAL_THREAD_UNLOCK(&c->lock);
    return flush_end(m, target, &f);
}

int osc_rttcc_lock(int type, int target, int assert, struct ompi_win_t *win)
{
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    mca_osc_rttcc_module_t *m = OSC_RTTCC_MODULE(win);
    osc_rttcc_peer_t *p;
    int rc = OMPI_SUCCESS;
    if (ompi_win_peer_invalid(win, target)) {
        return OMPI_ERR_BAD_PARAM;
    }
    p = &m->peers[target];
    if (m->pscw_access || m->lock_all || p->lock) {
        return OMPI_ERR_RMA_SYNC;
    }
    p->lock_nocheck = (assert & MPI_MODE_NOCHECK) || m->no_locks;
    p->lock_lazy = false;
    /* Single-threaded only: another thread's operation could join the held
     * batch between its check (osc_rttcc_lazy_conflicts) and its post. */
    if (!p->lock_nocheck && target != m->rank && c->lazy_lock && 0 != c->post_bytes && !opal_using_threads()) {
        OPAL_THREAD_LOCK(&c->lock);
        p->lock_lazy = lazy_note(m, target);
        OPAL_THREAD_UNLOCK(&c->lock);
    }
    if (p->lock_lazy) {
        rc = hold_batch(m, target, 1);
    } else if (!p->lock_nocheck) {
        rc = lock_and_wait(m, target, type, false);
    }
    if (OMPI_SUCCESS != rc) {
        OPAL_THREAD_LOCK(&c->lock);
        lazy_forget(m, target);
        OPAL_THREAD_UNLOCK(&c->lock);
        p->lock_lazy = false;
        return rc;
    }
    p->lock = type;
    ++m->locks;
    return OMPI_SUCCESS;
}

int osc_rttcc_unlock(int target, struct ompi_win_t *win)
{
    mca_osc_rttcc_module_t *m = OSC_RTTCC_MODULE(win);
    osc_rttcc_peer_t *p;
    int rc;
    if (ompi_win_peer_invalid(win, target)) {
        return OMPI_ERR_BAD_PARAM;
    }
    p = &m->peers[target];
    if (!p->lock) {
        return OMPI_ERR_RMA_SYNC;
    }
    if (p->lock_lazy) { /* the lock, the batch and the unlock in one request */
        OPAL_THREAD_LOCK(&mca_osc_rttcc_component.lock);
        lazy_forget(m, target);
        OPAL_THREAD_UNLOCK(&mca_osc_rttcc_component.lock);
        p->lock_lazy = false;
        rc = lock_and_wait(m, target, p->lock, true);
        if (OMPI_SUCCESS != rc && OMPI_ERR_RMA_RANGE != rc) { /* not sent: the batch is still held */
            p->lock_lazy = true; /* taken the eager way, else what it holds is dropped */
            rc = osc_rttcc_lock_now(m, target);
            if (OMPI_SUCCESS == rc) {
                rc = unlock_ordered(m, target);
            }
        }
        p->dirty = false; /* applied: the answer came after it */
        while (0 != read_locked(&p->unfinished)) {
            opal_progress();
        }
    } else {
        rc = p->lock_nocheck || target == m->rank ? flush_target(m, target) : unlock_ordered(m, target);
    }
    if (!p->lock_nocheck && target == m->rank) {
        unlock_target(m, target);
    }
    p->lock = 0;
    --m->locks;
    forget_regions(p);
    ++mca_osc_rttcc_component.counters.epochs;
    return rc;
}

int osc_rttcc_lock_all(int assert, struct ompi_win_t *win)
{
    mca_osc_rttcc_module_t *m = OSC_RTTCC_MODULE(win);
    int rc = OMPI_SUCCESS;
    if (m->pscw_access || m->lock_all || m->locks) {
        return OMPI_ERR_RMA_SYNC;
    }
    m->lock_all_nocheck = (assert & MPI_MODE_NOCHECK) || m->no_locks;
    if (!m->lock_all_nocheck) {
        volatile bool *granted = calloc((size_t) m->size, sizeof *granted);
        int *status = calloc((size_t) m->size, sizeof *status);
        uint8_t *landing = calloc((size_t) m->size, 1);
        int asked = 0;
        if (NULL == granted || NULL == status || NULL == landing) {
            rc = OMPI_ERR_OUT_OF_RESOURCE;
        }
        for (; asked < m->size && OMPI_SUCCESS == rc; ++asked) {
            rc = lock_begin(m, asked, MPI_LOCK_SHARED, &granted[asked], &status[asked], &landing[asked]);
        }
        for (int t = 0; t < asked; ++t) { /* every reply in before the flags go */
            osc_rttcc_wait_for(&granted[t]);
            rc = OMPI_SUCCESS == rc ? status[t] : rc;
        }
        for (int t = 0; t < asked && OMPI_SUCCESS != rc; ++t) { /* no epoch: give back the locks we got */
            if (OMPI_SUCCESS == status[t]) {
                unlock_target(m, t);
            }
        }
        free((void *) granted);
        free(status);
        free(landing);
    }
    m->lock_all = OMPI_SUCCESS == rc;
    return rc;
}

int osc_rttcc_unlock_all(struct ompi_win_t *win)
{
    mca_osc_rttcc_module_t *m = OSC_RTTCC_MODULE(win);
    if (!m->lock_all) {
        return OMPI_ERR_RMA_SYNC;
    }
    int rc = flush_every(m);
    for (int t = 0; t < m->size; ++t) {
        if (!m->lock_all_nocheck) {
            unlock_target(m, t);
        }
        forget_regions(&m->peers[t]);
    }
    m->lock_all = false;
    ++mca_osc_rttcc_component.counters.epochs;
    return rc;
}
