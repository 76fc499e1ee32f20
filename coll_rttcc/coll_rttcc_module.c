/* Module: which communicators coll_rttcc serves (comm_query), and the
 * module's life: it keeps the functions it replaces, to delegate to. */
#include <stdlib.h>
#include <string.h>

#include "coll_rttcc.h"
#include "rttcc/mca.h"

#include "ompi/proc/proc.h"
#include "opal/util/output.h"

static void module_construct(mca_coll_rttcc_module_t *m)
{
    m->prev_alltoall = NULL;
    m->prev_alltoall_module = NULL;
    m->prev_alltoallv = NULL;
    m->prev_alltoallv_module = NULL;
    m->exchange = NULL;
    m->peers = NULL;
    m->seq = 0;
    m->send_stage = m->recv_stage = NULL;
    m->send_stage_size = m->recv_stage_size = 0;
}

static void module_destruct(mca_coll_rttcc_module_t *m)
{
    if (NULL != m->prev_alltoall_module) {
        OBJ_RELEASE(m->prev_alltoall_module);
    }
    if (NULL != m->prev_alltoallv_module) {
        OBJ_RELEASE(m->prev_alltoallv_module);
    }
    if (NULL != m->exchange) {
        rttcc_exchange_destroy(m->exchange);
    }
    free(m->peers);
    free(m->send_stage);
    free(m->recv_stage);
}

OBJ_CLASS_INSTANCE(mca_coll_rttcc_module_t, mca_coll_base_module_t, module_construct, module_destruct);

static int module_enable(mca_coll_base_module_t *module, struct ompi_communicator_t *comm)
{
    mca_coll_rttcc_module_t *m = (mca_coll_rttcc_module_t *) module;
    m->prev_alltoall = comm->c_coll->coll_alltoall;
    m->prev_alltoall_module = comm->c_coll->coll_alltoall_module;
    m->prev_alltoallv = comm->c_coll->coll_alltoallv;
    m->prev_alltoallv_module = comm->c_coll->coll_alltoallv_module;
    if (NULL == m->prev_alltoall || NULL == m->prev_alltoall_module || NULL == m->prev_alltoallv ||
        NULL == m->prev_alltoallv_module) {
        m->prev_alltoall_module = m->prev_alltoallv_module = NULL;
        opal_output_verbose(10, mca_coll_rttcc_component.output,
                            "coll:rttcc: no module below to delegate to on %s: disabled", comm->c_name);
        return OMPI_ERROR;
    }
    OBJ_RETAIN(m->prev_alltoall_module);
    OBJ_RETAIN(m->prev_alltoallv_module);
    return OMPI_SUCCESS;
}

mca_coll_base_module_t *mca_coll_rttcc_comm_query(struct ompi_communicator_t *comm, int *priority)
{
    mca_coll_rttcc_component_t *c = &mca_coll_rttcc_component;
    int size = ompi_comm_size(comm), me = ompi_comm_rank(comm);
    rttcc_xpeer_t *peers;
    mca_coll_rttcc_module_t *m;

    if (c->priority < 0 || NULL == c->hub || OMPI_COMM_IS_INTER(comm) || size < 2) {
        return NULL;
    }
    peers = calloc(size, sizeof *peers);
    if (NULL == peers) {
        return NULL;
    }
    for (int r = 0; r < size; ++r) {
        const opal_process_name_t *name = &ompi_comm_peer_lookup(comm, r)->super.proc_name;
        if (r != me && !rttcc_mca_reach(name, &peers[r].engine_peer)) {
            opal_output_verbose(10, c->output, "coll:rttcc: rank %d of %s is not reached through rttcc: declining",
                                r, comm->c_name);
            free(peers);
            return NULL;
        }
        if (r != me && !rttcc_mca_same_settings(&c->super.collm_version, name, comm->c_name)) {
            opal_output_verbose(10, c->output, "coll:rttcc: rank %d of %s runs coll_rttcc otherwise: declining", r,
                                comm->c_name);
            free(peers);
            return NULL;
        }
    }
    m = OBJ_NEW(mca_coll_rttcc_module_t);
    if (NULL == m) {
        free(peers);
        return NULL;
    }
    m->peers = peers; /* the module owns it from here */
    if (RTTCC_OK != rttcc_exchange_create(c->hub, &c->xp, &m->exchange)) {
        OBJ_RELEASE(m);
        return NULL;
    }
    m->super.coll_module_enable = module_enable;
    m->super.coll_alltoall = mca_coll_rttcc_alltoall;
    m->super.coll_alltoallv = mca_coll_rttcc_alltoallv;
    *priority = c->priority;
    opal_output_verbose(10, c->output, "coll:rttcc: serving %s (%d ranks, policy %s)", comm->c_name, size,
                        rttcc_sched_policy_name(c->xp.policy));
    return &m->super;
}
