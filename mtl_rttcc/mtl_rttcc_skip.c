/* SKIPs: a message takes its sequence number before the engine sees it
 * (the MTL lock is not held through the engine's send), so a message the
 * engine refuses (a peer declared dead, no memory) has spent one, and its
 * receiver, which hands its sender's messages on strictly in order, would
 * hold every later one for ever.  The sender owes it SKIP{seq} instead:
 * noted when the engine refuses the message (whose send fails), sent from
 * progress and tried again there until the engine takes it.  The receiver
 * takes a SKIP as the message of its number, in its turn, that matches
 * nothing (mtl_rttcc_recv.c): held while it comes early, checked as any
 * other arrival (a number behind, or one held already, is dropped).
 *
 *   sender                                 receiver (expects 7)
 *   seq 7: refused, the send fails
 *   seq 8: EAGER ------------------------> held behind 7
 *   progress: SKIP{7} -------------------> 7 passed over; 8 matched
 *
 * A peer declared dead is owed nothing (MPI cannot go on without it).
 * SKIPs refused for MTL_RTTCC_SKIP_WAIT_MS of trying in a row end the job: their
 * receivers wait, and may hold up this process (a reply it waits for,
 * the fence in MPI_Finalize before the MTL's finalize) for ever. */
#include <time.h>

#include "mtl_rttcc.h"

#include "ompi/mca/rte/rte.h"
#include "opal/util/output.h"
#include "opal/util/proc.h"

/* Room for this many SKIPs from the start: the first refusals need no
 * memory (the engine refuses for want of it). */
#define MTL_RTTCC_OWED_START 64
/* How long SKIPs may be refused in a row (at finalize too), counting only
 * time spent trying: tries further apart than MTL_RTTCC_SKIP_GAP_MS (the
 * process computed outside MPI in between) start the count again. */
#define MTL_RTTCC_SKIP_WAIT_MS 500
#define MTL_RTTCC_SKIP_GAP_MS 100

int mca_mtl_rttcc_skips_init(mca_mtl_rttcc_module_t *m)
{
    m->owed = malloc(MTL_RTTCC_OWED_START * sizeof *m->owed);
    m->num_owed = m->sending_skips = 0;
    m->skips_refused_since = m->skips_refused_last = 0;
    m->max_owed = NULL != m->owed ? MTL_RTTCC_OWED_START : 0;
    return NULL != m->owed ? OMPI_SUCCESS : OMPI_ERR_OUT_OF_RESOURCE;
}

void mca_mtl_rttcc_skips_fini(mca_mtl_rttcc_module_t *m)
{
    free(m->owed);
    m->owed = NULL;
    m->num_owed = m->sending_skips = m->max_owed = 0;
}

/* Read without the lock by every progress pass: nothing owed is the rule. */
static bool any_owed(mca_mtl_rttcc_module_t *m)
{
    return 0 != __atomic_load_n(&m->num_owed, __ATOMIC_RELAXED);
}

static void set_owed(mca_mtl_rttcc_module_t *m, size_t n)
{
    __atomic_store_n(&m->num_owed, n, __ATOMIC_RELAXED);
}

/* Called with the lock held: room for one more, those being sent counted
 * (each may come back). */
static bool room_for_one(mca_mtl_rttcc_module_t *m)
{
    if (m->num_owed + m->sending_skips < m->max_owed) {
        return true;
    }
    size_t n = 2 * m->max_owed;
    mtl_rttcc_owed_t *grown = realloc(m->owed, n * sizeof *grown);
    if (NULL == grown) {
        return false;
    }
    m->owed = grown;
    m->max_owed = n;
    return true;
}

/* A SKIP we cannot note cannot be sent: its receiver would wait for ever,
 * so the job ends. */
static void cannot_owe(uint32_t peer, uint32_t seq)
{
    opal_process_name_t name = OPAL_PROC_MY_NAME;
    name.vpid = peer;
    rttcc_mca_show_help(false, "mtl skip out of memory", opal_process_info.nodename, OPAL_NAME_PRINT(name), seq);
    ompi_rte_abort(OMPI_ERR_OUT_OF_RESOURCE, NULL);
}

void mca_mtl_rttcc_owe_skip(mca_mtl_rttcc_module_t *m, uint32_t peer, uint32_t seq)
{
    bool noted;

    OPAL_THREAD_LOCK(&m->lock);
    noted = room_for_one(m);
    if (noted) {
        m->owed[m->num_owed] = (mtl_rttcc_owed_t){.peer = peer, .seq = seq};
        set_owed(m, m->num_owed + 1);
    }
    OPAL_THREAD_UNLOCK(&m->lock);
    if (!noted) {
        cannot_owe(peer, seq);
    }
    opal_output_verbose(10, mca_mtl_rttcc_component.output,
                        "mtl:rttcc: the engine refused message %u to process %u: a SKIP is owed", seq, peer);
}

/* One SKIP owed, taken out to be sent (its room stays reserved). */
static bool take_owed(mca_mtl_rttcc_module_t *m, mtl_rttcc_owed_t *out)
{
    bool taken;

    if (!any_owed(m)) {
        return false;
    }
    OPAL_THREAD_LOCK(&m->lock);
    taken = m->num_owed > 0;
    if (taken) {
        *out = m->owed[m->num_owed - 1];
        set_owed(m, m->num_owed - 1);
        ++m->sending_skips;
    }
    OPAL_THREAD_UNLOCK(&m->lock);
    return taken;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* A SKIP taken out was sent (`again` false) or is owed again; true once
 * SKIPs have been refused in a row for MTL_RTTCC_SKIP_WAIT_MS of trying
 * (*owed: how many are owed then). */
static bool sent_or_again(mca_mtl_rttcc_module_t *m, const mtl_rttcc_owed_t *s, bool again, size_t *owed)
{
    const double now = again ? now_ms() : 0;
    bool overdue = false;

    OPAL_THREAD_LOCK(&m->lock);
    --m->sending_skips;
    if (again) { /* into the room it kept */
        m->owed[m->num_owed] = *s;
        set_owed(m, m->num_owed + 1);
        if (0 == m->skips_refused_since || now - m->skips_refused_last > MTL_RTTCC_SKIP_GAP_MS) {
            m->skips_refused_since = now; /* the first, or the first try after a pause */
        }
        m->skips_refused_last = now;
        overdue = now - m->skips_refused_since >= MTL_RTTCC_SKIP_WAIT_MS;
    } else {
        m->skips_refused_since = m->skips_refused_last = 0;
    }
    *owed = m->num_owed;
    OPAL_THREAD_UNLOCK(&m->lock);
    return overdue;
}

/* Copied: SKIP is shorter than an RTS, which inline_max holds (checked at
 * init), so no completion follows. */
static int send_skip(mca_mtl_rttcc_module_t *m, const mtl_rttcc_owed_t *s)
{
    mtl_rttcc_skip_hdr_t skip = {.type = MTL_RTTCC_SKIP, .seq = s->seq};
    struct iovec iov = {&skip, sizeof skip};
    return rttcc_engine_send(m->engine, s->peer, RTTCC_TAG_MTL, &iov, 1, NULL);
}

void mca_mtl_rttcc_send_skips(mca_mtl_rttcc_module_t *m)
{
    mtl_rttcc_owed_t s;
    size_t owed;

    while (take_owed(m, &s)) {
        int rc = send_skip(m, &s);
        bool again = rc < 0 && RTTCC_ERR_UNREACH != rc; /* a dead peer waits for nothing */
        if (sent_or_again(m, &s, again, &owed)) {
            rttcc_mca_show_help(false, "mtl skips refused", opal_process_info.nodename, owed,
                                MTL_RTTCC_SKIP_WAIT_MS);
            ompi_rte_abort(OMPI_ERR_OUT_OF_RESOURCE, NULL);
        }
        if (again) { /* (refused: the others would be too) */
            return;
        }
        if (rc >= 0) {
            MTL_RTTCC_COUNT(skips_sent);
        }
        opal_output_verbose(10, mca_mtl_rttcc_component.output, "mtl:rttcc: SKIP{%u} to process %u %s", s.seq,
                            s.peer, rc >= 0 ? "sent" : "dropped: the process is gone");
    }
}

/* At finalize, the SKIPs still owed go before the engine closes: tried
 * until sent, or refused for MTL_RTTCC_SKIP_WAIT_MS (send_skips ends the job). */
void mca_mtl_rttcc_flush_skips(mca_mtl_rttcc_module_t *m)
{
    mca_mtl_rttcc_send_skips(m);
    while (any_owed(m)) {
        (void) rttcc_engine_progress(m->engine);
        mca_mtl_rttcc_send_skips(m);
    }
}

void mca_mtl_rttcc_on_skip(mca_mtl_rttcc_module_t *m, uint32_t peer, const mtl_rttcc_skip_hdr_t *skip)
{
    mtl_rttcc_match_hdr_t hdr = {.type = MTL_RTTCC_SKIP, .seq = skip->seq};

    opal_output_verbose(50, mca_mtl_rttcc_component.output, "mtl:rttcc: SKIP{%u} from process %u", skip->seq,
                        peer);
    mca_mtl_rttcc_on_arrival(m, peer, &hdr, NULL, NULL, false); /* ordered and checked as any arrival */
}
