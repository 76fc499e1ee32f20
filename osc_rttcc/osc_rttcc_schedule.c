/* An epoch's large puts and accumulates, queued per target and released in
 * the order the PeerScheduler picks from the RTT table (the policies of
 * coll_rttcc), so an alltoall written as puts in a fence epoch is ordered
 * as coll_rttcc orders MPI_Alltoall:
 *
 *   MPI_Put ... MPI_Put   (each >= eager_bytes, fence/PSCW/lock_all epoch)
 *      -> queued per target, nothing sent
 *   MPI_Win_fence (or complete, flush, unlock...)
 *      -> round: next() picks a target, its queue goes out; when its
 *         operations are complete the slot frees (max_concurrent)
 *
 * Smaller operations are issued at once; a window whose queues reach
 * queue_bytes runs its round then and there.  An accumulate that is not
 * queued sends its target's queue first when it holds accumulates: a
 * target applies accumulates in the order they are sent, and one origin's
 * must be applied in the order it issued them (accumulate_ordering).  Completion is unchanged:
 * the epoch's end still waits for every operation, queued or not.
 */
#include <stdlib.h>

#include "osc_rttcc.h"

#include "opal/runtime/opal_progress.h"
#include "opal/util/output.h"

bool osc_rttcc_schedules(const mca_osc_rttcc_module_t *m, int target, size_t bytes)
{
    return NULL != m->schedule && target != m->rank && bytes >= mca_osc_rttcc_component.eager_bytes &&
           (m->fence || m->pscw_access || m->lock_all);
}

int osc_rttcc_queue(mca_osc_rttcc_module_t *m, int target, const osc_rttcc_piece_t *piece)
{
    osc_rttcc_peer_t *p = &m->peers[target];
    if (p->nqueue == p->cap_queue) {
        int cap = p->cap_queue ? 2 * p->cap_queue : 16;
        osc_rttcc_piece_t *grown = realloc(p->queue, (size_t) cap * sizeof *grown);
        if (NULL == grown) {
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
        p->queue = grown;
        p->cap_queue = cap;
    }
    p->queue[p->nqueue++] = *piece;
    p->queued_accs += piece->rop >= 0;
    p->queued_bytes += piece->len;
    m->queued_bytes += piece->len;
    ++piece->op->pending;
    return OMPI_SUCCESS;
}

/* Sends a target's queue (under the lock). */
static void send_queue(mca_osc_rttcc_module_t *m, int target)
{
    osc_rttcc_peer_t *p = &m->peers[target];
    for (int i = 0; i < p->nqueue; ++i) {
        osc_rttcc_send_piece(&p->queue[i], p->index);
    }
    m->queued_bytes -= p->queued_bytes;
    p->queued_bytes = 0;
    p->nqueue = 0;
    p->queued_accs = 0;
}

void osc_rttcc_release_target(mca_osc_rttcc_module_t *m, int target)
{
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    OPAL_THREAD_LOCK(&c->lock);
    send_queue(m, target);
    OPAL_THREAD_UNLOCK(&c->lock);
}

void osc_rttcc_release_accumulates(mca_osc_rttcc_module_t *m, int target)
{
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    OPAL_THREAD_LOCK(&c->lock);
    if (0 != m->peers[target].queued_accs) {
        send_queue(m, target);
    }
    OPAL_THREAD_UNLOCK(&c->lock);
}

int osc_rttcc_release(mca_osc_rttcc_module_t *m)
{
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    uint64_t deferrals, forced;
    bool done = false;
    int rc;
    OPAL_THREAD_LOCK(&c->lock);
    if (0 == m->queued_bytes) {
        OPAL_THREAD_UNLOCK(&c->lock);
        return OMPI_SUCCESS;
    }
    for (int r = 0; r < m->size; ++r) {
        m->round_bytes[r] = m->peers[r].queued_bytes;
    }
    deferrals = rttcc_schedule_deferrals(m->schedule);
    forced = rttcc_schedule_forced(m->schedule);
    rc = rttcc_schedule_begin(m->schedule, (uint32_t) m->rank, (uint32_t) m->size, m->engine_peers, m->round_bytes);
    OPAL_THREAD_UNLOCK(&c->lock);
    if (RTTCC_OK != rc) {
        return OMPI_ERROR;
    }
    ++c->counters.rounds;
    while (!done) {
        uint32_t t;
        OPAL_THREAD_LOCK(&c->lock);
        while (rttcc_schedule_next(m->schedule, &t)) {
            send_queue(m, (int) t);
        }
        /* round_bytes marks the targets in flight: started and not finished */
        for (int r = 0; r < m->size; ++r) {
            if (0 != m->round_bytes[r] && 0 == m->peers[r].nqueue && 0 == m->peers[r].unfinished) {
                rttcc_schedule_finished(m->schedule, (uint32_t) r);
                m->round_bytes[r] = 0;
            }
        }
        done = rttcc_schedule_done(m->schedule);
        OPAL_THREAD_UNLOCK(&c->lock);
        if (!done) {
            opal_progress();
        }
    }
    c->counters.deferrals += rttcc_schedule_deferrals(m->schedule) - deferrals;
    c->counters.forced += rttcc_schedule_forced(m->schedule) - forced;
    if (c->verbose >= 30) {
        char *text = rttcc_schedule_text(m->schedule);
        opal_output(c->output, "osc:rttcc: window %u, rank %d, the epoch's schedule:\n%s", m->window, m->rank,
                    NULL != text ? text : "(out of memory)\n");
        free(text);
    }
    return OMPI_SUCCESS;
}
