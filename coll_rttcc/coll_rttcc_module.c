/* Module: which communicators coll_rttcc serves (comm_query), and the
 * module's life: it keeps the functions it replaces, to delegate to. */
#include <stdlib.h>
#include <string.h>

#include "coll_rttcc.h"
#include "btl_rttcc.h"
#include "mtl_rttcc_endpoint.h"

#include "ompi/mca/bml/base/base.h"
#include "ompi/mca/mtl/base/base.h"
#include "ompi/mca/pml/base/base.h"
#include "ompi/proc/proc.h"
#include "opal/mca/btl/btl.h"
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

/* The engine index of a remote rank under pml/ob1, if it is reached through btl_rttcc
 * only (every eager and send BTL of its BML endpoint is rttcc). */
static bool reached_through_rttcc(struct ompi_proc_t *proc, uint32_t *index)
{
    mca_bml_base_endpoint_t *ep = mca_bml_base_get_endpoint(proc);
    if (NULL == ep || 0 == mca_bml_base_btl_array_get_size(&ep->btl_send)) {
        return false;
    }
    mca_bml_base_btl_array_t *arrays[2] = {&ep->btl_eager, &ep->btl_send};
    for (int a = 0; a < 2; ++a) {
        for (size_t i = 0; i < mca_bml_base_btl_array_get_size(arrays[a]); ++i) {
            mca_bml_base_btl_t *b = mca_bml_base_btl_array_get_index(arrays[a], i);
            if (0 != strcmp(b->btl->btl_component->btl_version.mca_component_name, "rttcc")) {
                return false;
            }
            *index = ((mca_btl_rttcc_endpoint_t *) b->btl_endpoint)->index;
        }
    }
    return true;
}

/* The engine index of a remote rank under pml/cm: mtl_rttcc reaches it
 * (asked to now if Open MPI has not added the process yet). */
static bool reached_through_mtl_rttcc(struct ompi_proc_t *proc, uint32_t *index)
{
    const mca_mtl_rttcc_endpoint_t *ep = proc->proc_endpoints[OMPI_PROC_ENDPOINT_TAG_MTL];
    if (NULL == ep && OMPI_SUCCESS == ompi_mtl->mtl_add_procs(ompi_mtl, 1, &proc)) {
        ep = proc->proc_endpoints[OMPI_PROC_ENDPOINT_TAG_MTL];
    }
    if (NULL == ep || MCA_MTL_RTTCC_ENDPOINT_MAGIC != ep->magic) {
        return false;
    }
    *index = ep->index;
    return true;
}

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
    const char *pml = mca_pml_base_selected_component.pmlm_version.mca_component_name;
    int size = ompi_comm_size(comm), me = ompi_comm_rank(comm);
    bool (*reached)(struct ompi_proc_t *, uint32_t *);
    rttcc_xpeer_t *peers;
    mca_coll_rttcc_module_t *m;

    if (c->priority < 0 || NULL == c->hub || OMPI_COMM_IS_INTER(comm) || size < 2) {
        return NULL;
    }
    if (0 == strcmp(pml, "ob1")) {
        reached = reached_through_rttcc;
    } else if (0 == strcmp(pml, "cm") && NULL != ompi_mtl_base_selected_component &&
               0 == strcmp(ompi_mtl_base_selected_component->mtl_version.mca_component_name, "rttcc")) {
        reached = reached_through_mtl_rttcc;
    } else {
        opal_output_verbose(10, c->output, "coll:rttcc: pml %s without rttcc under it: declining %s", pml,
                            comm->c_name);
        return NULL;
    }
    peers = calloc(size, sizeof *peers);
    if (NULL == peers) {
        return NULL;
    }
    for (int r = 0; r < size; ++r) {
        if (r != me && !reached(ompi_comm_peer_lookup(comm, r), &peers[r].engine_peer)) {
            opal_output_verbose(10, c->output, "coll:rttcc: rank %d of %s is not reached through rttcc (pml %s): declining",
                                r, comm->c_name, pml);
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
