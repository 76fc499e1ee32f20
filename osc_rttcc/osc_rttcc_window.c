/* Windows: creation (create, allocate, dynamic), attach, detach, free.
 *
 * Each process exposes its window to every other rank once (one engine key
 * per rank, rttcc_rma_expose), and one alltoall hands each rank the key it
 * puts with; an allgather tells everyone the others' sizes, displacement
 * units and engine window numbers (their lock tables).  A dynamic window
 * exposes each attached region the same way, and gives each rank one key
 * to the whole window that names its memory by address
 * (rttcc_rma_expose_window): origins name what they access by its address
 * through it, and look regions up (rttcc_rma_lookup) only to check ranges.
 */
#include <stdlib.h>
#include <string.h>

#include "osc_rttcc.h"
#include "rttcc/mca.h"

#include "ompi/info/info.h"
#include "opal/util/info.h"

static const ompi_osc_base_module_t module_template = {
    .osc_win_attach = osc_rttcc_attach,
    .osc_win_detach = osc_rttcc_detach,
    .osc_free = osc_rttcc_free,
    .osc_put = osc_rttcc_put,
    .osc_get = osc_rttcc_get,
    .osc_accumulate = osc_rttcc_accumulate,
    .osc_compare_and_swap = osc_rttcc_compare_and_swap,
    .osc_fetch_and_op = osc_rttcc_fetch_and_op,
    .osc_get_accumulate = osc_rttcc_get_accumulate,
    .osc_rput = osc_rttcc_rput,
    .osc_rget = osc_rttcc_rget,
    .osc_raccumulate = osc_rttcc_raccumulate,
    .osc_rget_accumulate = osc_rttcc_rget_accumulate,
    .osc_fence = osc_rttcc_fence,
    .osc_start = osc_rttcc_start,
    .osc_complete = osc_rttcc_complete,
    .osc_post = osc_rttcc_post,
    .osc_wait = osc_rttcc_wait,
    .osc_test = osc_rttcc_test,
    .osc_lock = osc_rttcc_lock,
    .osc_unlock = osc_rttcc_unlock,
    .osc_lock_all = osc_rttcc_lock_all,
    .osc_unlock_all = osc_rttcc_unlock_all,
    .osc_sync = osc_rttcc_sync,
    .osc_flush = osc_rttcc_flush,
    .osc_flush_all = osc_rttcc_flush_all,
    .osc_flush_local = osc_rttcc_flush_local,
    .osc_flush_local_all = osc_rttcc_flush_local_all,
};

mca_osc_rttcc_module_t *osc_rttcc_module_of(uint32_t cid)
{
    opal_list_item_t *item;
    OPAL_LIST_FOREACH(item, &mca_osc_rttcc_component.modules, opal_list_item_t) {
        mca_osc_rttcc_module_t *m = (mca_osc_rttcc_module_t *) ((char *) item - offsetof(mca_osc_rttcc_module_t, item));
        if (m->cid == cid) {
            return m;
        }
    }
    return NULL;
}

void osc_rttcc_peer_died(uint32_t index)
{
    opal_list_item_t *item;
    OPAL_LIST_FOREACH(item, &mca_osc_rttcc_component.modules, opal_list_item_t) {
        mca_osc_rttcc_module_t *m = (mca_osc_rttcc_module_t *) ((char *) item - offsetof(mca_osc_rttcc_module_t, item));
        for (int r = 0; r < m->size; ++r) {
            if (r != m->rank && m->peers[r].index == index && !m->peers[r].dead) {
                m->peers[r].dead = true;
                ++m->dead;
            }
        }
    }
}

/* Exposes [base, base + len) to every other rank; keys[rank] (0 for self). */
static int expose_all(mca_osc_rttcc_module_t *m, void *base, size_t len, uint32_t *keys)
{
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    int rc = OMPI_SUCCESS;
    OPAL_THREAD_LOCK(&c->lock);
    for (int r = 0; r < m->size && OMPI_SUCCESS == rc; ++r) {
        keys[r] = 0;
        if (r != m->rank && len > 0 &&
            RTTCC_OK != rttcc_rma_expose(c->engine, m->window, m->peers[r].index, base, len, &keys[r])) {
            rc = OMPI_ERR_OUT_OF_RESOURCE;
        }
    }
    OPAL_THREAD_UNLOCK(&c->lock);
    return rc;
}

/* A dynamic window: every other rank's key to it by address
 * (rttcc_rma_expose_window), which no detach revokes, in m->exposures. */
static int expose_window_all(mca_osc_rttcc_module_t *m)
{
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    int rc = OMPI_SUCCESS;
    OPAL_THREAD_LOCK(&c->lock);
    for (int r = 0; r < m->size && OMPI_SUCCESS == rc; ++r) {
        m->exposures[r] = 0;
        if (r != m->rank && RTTCC_OK != rttcc_rma_expose_window(c->engine, m->window, m->peers[r].index, &m->exposures[r])) {
            rc = OMPI_ERR_OUT_OF_RESOURCE;
        }
    }
    OPAL_THREAD_UNLOCK(&c->lock);
    return rc;
}

static void revoke_all(uint32_t *keys, int n)
{
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    OPAL_THREAD_LOCK(&c->lock);
    for (int r = 0; r < n; ++r) {
        if (0 != keys[r]) {
            rttcc_engine_revoke(c->engine, keys[r]);
            keys[r] = 0;
        }
    }
    OPAL_THREAD_UNLOCK(&c->lock);
}

/* What each rank tells the others at creation. */
typedef struct {
    uint64_t size;
    int64_t disp_unit;
    uint64_t window;
} window_info_t;

static int share(mca_osc_rttcc_module_t *m)
{
    ompi_communicator_t *comm = m->comm;
    window_info_t mine = {m->len, m->disp_unit, m->window}, *all = malloc((size_t) m->size * sizeof *all);
    uint32_t *theirs = malloc((size_t) m->size * sizeof *theirs);
    int rc = NULL == all || NULL == theirs ? OMPI_ERR_OUT_OF_RESOURCE : OMPI_SUCCESS;
    if (OMPI_SUCCESS == rc) {
        rc = comm->c_coll->coll_allgather(&mine, sizeof mine, MPI_BYTE, all, sizeof mine, MPI_BYTE, comm,
                                          comm->c_coll->coll_allgather_module);
    }
    if (OMPI_SUCCESS == rc) {
        rc = comm->c_coll->coll_alltoall(m->exposures, 1, MPI_UINT32_T, theirs, 1, MPI_UINT32_T, comm,
                                         comm->c_coll->coll_alltoall_module);
    }
    for (int r = 0; r < m->size && OMPI_SUCCESS == rc; ++r) {
        m->peers[r].size = all[r].size;
        m->peers[r].disp_unit = (int) all[r].disp_unit;
        m->peers[r].window = (uint32_t) all[r].window;
        m->peers[r].key = theirs[r];
    }
    free(all);
    free(theirs);
    return rc;
}

static void module_release(mca_osc_rttcc_module_t *m)
{
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    for (int i = 0; i < m->nregions; ++i) {
        revoke_all(m->regions[i].keys, m->size);
        free(m->regions[i].keys);
    }
    free(m->regions);
    if (NULL != m->exposures) {
        revoke_all(m->exposures, m->size);
    }
    OPAL_THREAD_LOCK(&c->lock);
    if (m->window) {
        rttcc_rma_window_close(c->engine, m->window);
    }
    if (m->listed) {
        opal_list_remove_item(&c->modules, &m->item);
    }
    OPAL_THREAD_UNLOCK(&c->lock);
    OBJ_DESTRUCT(&m->item);
    osc_rttcc_group_forget(&m->access);
    osc_rttcc_group_forget(&m->exposure);
    for (int r = 0; NULL != m->peers && r < m->size; ++r) {
        free(m->peers[r].regions);
        free(m->peers[r].queue);
    }
    if (NULL != m->schedule) {
        rttcc_schedule_destroy(m->schedule);
    }
    free(m->engine_peers);
    free(m->round_bytes);
    free(m->peers);
    free(m->exposures);
    free(m->allocated);
    if (NULL != m->comm) {
        ompi_comm_free(&m->comm);
    }
    free(m);
}

int osc_rttcc_window_select(struct ompi_win_t *win, void **base, size_t size, int disp_unit,
                            struct ompi_communicator_t *comm, struct opal_info_t *info, int flavor, int *model)
{
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    mca_osc_rttcc_module_t *m = calloc(1, sizeof *m);
    int rc, flag = 0;
    if (NULL == m) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    OBJ_CONSTRUCT(&m->item, opal_list_item_t);
    m->super = module_template;
    m->flavor = flavor;
    m->disp_unit = disp_unit;
    rc = ompi_comm_dup(comm, &m->comm);
    if (OMPI_SUCCESS != rc) {
        module_release(m);
        return rc;
    }
    m->cid = ompi_comm_get_cid(m->comm);
    m->rank = ompi_comm_rank(m->comm);
    m->size = ompi_comm_size(m->comm);
    if (NULL != info) {
        opal_info_get_bool(info, "no_locks", &m->no_locks, &flag);
    }
    switch (flavor) {
    case MPI_WIN_FLAVOR_ALLOCATE:
        if (size > 0 && 0 != posix_memalign(&m->allocated, 64, size)) {
            module_release(m);
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
        m->base = *base = m->allocated;
        m->len = size;
        break;
    case MPI_WIN_FLAVOR_CREATE:
        m->base = *base;
        m->len = size;
        break;
    default: /* dynamic */
        m->base = MPI_BOTTOM;
        m->len = 0;
        break;
    }
    m->peers = calloc((size_t) m->size, sizeof *m->peers);
    m->exposures = calloc((size_t) m->size, sizeof *m->exposures);
    rc = NULL == m->peers || NULL == m->exposures ? OMPI_ERR_OUT_OF_RESOURCE : OMPI_SUCCESS;
    for (int r = 0; r < m->size && OMPI_SUCCESS == rc; ++r) {
        if (r != m->rank && !rttcc_mca_reach(&ompi_comm_peer_lookup(m->comm, r)->super.proc_name, &m->peers[r].index)) {
            rc = OMPI_ERR_UNREACH;
        }
    }
    if (OMPI_SUCCESS == rc && m->size > 2) { /* with one target there is nothing to order */
        m->engine_peers = calloc((size_t) m->size, sizeof *m->engine_peers);
        m->round_bytes = calloc((size_t) m->size, sizeof *m->round_bytes);
        rc = NULL == m->engine_peers || NULL == m->round_bytes ||
                     RTTCC_OK != rttcc_schedule_create(c->engine, &c->sched, &m->schedule)
                 ? OMPI_ERR_OUT_OF_RESOURCE
                 : OMPI_SUCCESS;
        for (int r = 0; r < m->size && OMPI_SUCCESS == rc; ++r) {
            m->engine_peers[r] = m->peers[r].index;
        }
    }
    OPAL_THREAD_LOCK(&c->lock);
    if (OMPI_SUCCESS == rc && RTTCC_OK != rttcc_rma_window_open(c->engine, &m->window)) {
        rc = OMPI_ERR_OUT_OF_RESOURCE;
    }
    if (OMPI_SUCCESS == rc) {
        /* Routable before any peer can know the window: they learn of it in share(). */
        opal_list_append(&c->modules, &m->item);
        m->listed = true;
    }
    OPAL_THREAD_UNLOCK(&c->lock);
    if (OMPI_SUCCESS == rc) {
        rc = MPI_WIN_FLAVOR_DYNAMIC == flavor ? expose_window_all(m) : expose_all(m, m->base, m->len, m->exposures);
    }
    if (OMPI_SUCCESS == rc) {
        rc = share(m);
    }
    if (OMPI_SUCCESS != rc) {
        module_release(m);
        return rc;
    }
    win->w_osc_module = &m->super;
    *model = MPI_WIN_UNIFIED;
    opal_output_verbose(10, c->output, "osc:rttcc: window %u over %s (%d ranks, %zu bytes here, %s)", m->window,
                        comm->c_name, m->size, m->len,
                        MPI_WIN_FLAVOR_DYNAMIC == flavor ? "dynamic" : MPI_WIN_FLAVOR_ALLOCATE == flavor ? "allocate" : "create");
    return OMPI_SUCCESS;
}

int osc_rttcc_attach(struct ompi_win_t *win, void *base, size_t len)
{
    mca_osc_rttcc_module_t *m = OSC_RTTCC_MODULE(win);
    osc_rttcc_region_t *grown;
    if (MPI_WIN_FLAVOR_DYNAMIC != m->flavor) {
        return OMPI_ERR_RMA_FLAVOR;
    }
    if (0 == len) {
        return OMPI_SUCCESS;
    }
    for (int i = 0; i < m->nregions; ++i) {
        const uint8_t *b = m->regions[i].base;
        if ((uint8_t *) base < b + m->regions[i].len && b < (uint8_t *) base + len) {
            return OMPI_ERR_RMA_ATTACH; /* overlaps a region attached already */
        }
    }
    grown = realloc(m->regions, (size_t) (m->nregions + 1) * sizeof *grown);
    if (NULL == grown) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    m->regions = grown;
    osc_rttcc_region_t *r = &m->regions[m->nregions];
    r->base = base;
    r->len = len;
    r->keys = calloc((size_t) m->size, sizeof *r->keys);
    if (NULL == r->keys) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    int rc = expose_all(m, base, len, r->keys);
    if (OMPI_SUCCESS != rc) {
        revoke_all(r->keys, m->size);
        free(r->keys);
        return OMPI_ERR_RMA_ATTACH;
    }
    ++m->nregions;
    return OMPI_SUCCESS;
}

int osc_rttcc_detach(struct ompi_win_t *win, const void *base)
{
    mca_osc_rttcc_module_t *m = OSC_RTTCC_MODULE(win);
    if (MPI_WIN_FLAVOR_DYNAMIC != m->flavor) {
        return OMPI_ERR_RMA_FLAVOR;
    }
    for (int i = 0; i < m->nregions; ++i) {
        if (m->regions[i].base == base) {
            revoke_all(m->regions[i].keys, m->size);
            free(m->regions[i].keys);
            m->regions[i] = m->regions[--m->nregions];
            return OMPI_SUCCESS;
        }
    }
    return OMPI_ERR_BAD_PARAM; /* nothing attached there */
}

/* Collective: once every rank is here, no operation on the window is in flight. */
int osc_rttcc_free(struct ompi_win_t *win)
{
    mca_osc_rttcc_module_t *m = OSC_RTTCC_MODULE(win);
    int rc;
    if (m->pscw_access || m->pscw_exposure || m->locks || m->lock_all) {
        return OMPI_ERR_RMA_SYNC;
    }
    osc_rttcc_release(m);
    while (0 != m->unfinished) { /* operations of a fence epoch never closed */
        opal_progress();
    }
    rc = m->comm->c_coll->coll_barrier(m->comm, m->comm->c_coll->coll_barrier_module);
    win->w_osc_module = NULL;
    module_release(m);
    return rc;
}
