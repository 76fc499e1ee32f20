/* Component: parameters, MPI_T counters, selection, and the engine's
 * callbacks (osc_rttcc is the process engine's client of RTTCC_TAG_OSC). */
#include <string.h>

#include "osc_rttcc.h"
#include "rttcc/mca.h"

#include "ompi/proc/proc.h"
#include "ompi/runtime/mpiruntime.h"
#include "opal/mca/base/mca_base_var.h"
#include "opal/util/output.h"

static int rttcc_register(void);
static int rttcc_open(void);
static int rttcc_close(void);
static int rttcc_init(bool enable_progress_threads, bool enable_mpi_threads);
static int rttcc_query(struct ompi_win_t *win, void **base, size_t size, int disp_unit,
                       struct ompi_communicator_t *comm, struct opal_info_t *info, int flavor);
static int rttcc_finalize(void);

mca_osc_rttcc_component_t mca_osc_rttcc_component = {
    .super = {
        .osc_version = {
            OMPI_OSC_BASE_VERSION_3_0_0,
            .mca_component_name = "rttcc",
            MCA_BASE_MAKE_VERSION(component, 0, 1, 0),
            .mca_open_component = rttcc_open,
            .mca_close_component = rttcc_close,
            .mca_register_component_params = rttcc_register,
        },
        .osc_data = {
            .param_field = MCA_BASE_METADATA_PARAM_CHECKPOINT,
        },
        .osc_init = rttcc_init,
        .osc_query = rttcc_query,
        .osc_select = osc_rttcc_window_select,
        .osc_finalize = rttcc_finalize,
    },
    .priority = 50, /* above osc/pt2pt; below osc/sm, which serves windows inside one node */
    .output = -1,
    .sched = {
        .policy = RTTCC_SCHED_ADAPTIVE,
        .threshold_us = 100,
        .variance_factor = 2.0,
        .max_concurrent = 8,
        .reorder_window = 10,
        .backoff_ms = 0.1,
    },
    .eager_bytes = 65536,
    .post_bytes = 8192,
    .lazy_lock = true,
    .queue_bytes = 256u << 20,
};

static void var(const char *name, const char *help, mca_base_var_type_t type, mca_base_var_enum_t *e,
                int level, void *storage)
{
    (void) mca_base_component_var_register(&mca_osc_rttcc_component.super.osc_version, name, help, type, e, 0, 0,
                                           (mca_base_var_info_lvl_t) level, MCA_BASE_VAR_SCOPE_READONLY, storage);
}

static int rttcc_register(void)
{
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    const mca_base_component_t *v = &c->super.osc_version;
    mca_base_var_enum_t *policy_enum = rttcc_mca_policy_enum("osc_rttcc_policy");
    var("priority", "Priority of osc_rttcc on windows whose every rank the process engine (btl_rttcc's or mtl_rttcc's) "
        "reaches (osc/sm, at 100, keeps windows inside one node unless excluded)",
        MCA_BASE_VAR_TYPE_INT, NULL, OPAL_INFO_LVL_6, &c->priority);
    var("verbose", "Verbosity: 10 = one line per window and per declined one, 30 = each epoch's schedule",
        MCA_BASE_VAR_TYPE_INT, NULL, OPAL_INFO_LVL_9, &c->verbose);
    var("policy",
        "Order in which an epoch's queued puts and accumulates go to their targets (coll_rttcc_policy's "
        "policies): linear (rank+i), greedy (lowest expected time first), threshold (rank+i among targets whose "
        "RTT is within threshold_us of the best), balanced (longest expected time first among those), adaptive "
        "(threshold, widened by each deferral)",
        MCA_BASE_VAR_TYPE_INT, policy_enum, OPAL_INFO_LVL_5, &c->sched.policy);
    if (NULL != policy_enum) {
        OBJ_RELEASE(policy_enum);
    }
    var("threshold_us", "A target goes now if its RTT is at most this many microseconds above the round's best",
        MCA_BASE_VAR_TYPE_DOUBLE, NULL, OPAL_INFO_LVL_5, &c->sched.threshold_us);
    var("max_concurrent", "Targets being sent an epoch's queued operations at once (0 = no limit)",
        MCA_BASE_VAR_TYPE_UNSIGNED_INT, NULL, OPAL_INFO_LVL_5, &c->sched.max_concurrent);
    var("eager_bytes",
        "Operations moving fewer bytes are issued at once; larger puts and accumulates of a fence, PSCW or lock_all "
        "epoch wait for the epoch's schedule (its end, or queue_bytes)",
        MCA_BASE_VAR_TYPE_SIZE_T, NULL, OPAL_INFO_LVL_5, &c->eager_bytes);
    var("post_bytes",
        "Puts, gets and accumulates (fetching ones too) of at most this many bytes per contiguous piece travel "
        "in a batch (up to 64 KiB) with the others made to the same target until the next flush or progress "
        "call: a burst of them costs one request, not one each.  Larger pieces go alone, zero-copy, except "
        "up to 60 KiB: the first put or accumulate to each target of a PSCW access epoch (MPI_Win_complete "
        "then waits for no ACK; an accumulate in the batch, a put copied by the engine) and those of a lazy "
        "lock's epoch.  Operations of at least eager_bytes in a "
        "scheduled fence, PSCW or lock_all epoch wait for the schedule instead.  At most a batch (64 KiB less 56 bytes of headers); above 8-16 KiB a "
        "copy costs more bandwidth than it saves.  Plain gets (MPI_Get) are batched "
        "whatever their size, as their replies are not copies (0 = every operation goes alone)",
        MCA_BASE_VAR_TYPE_SIZE_T, NULL, OPAL_INFO_LVL_5, &c->post_bytes);
    var("lazy_lock",
        "MPI_Win_lock of another rank's window asks for nothing: the epoch's contiguous puts, accumulates "
        "(fetching ones too) and gets (up to 60 KiB in all, if post_bytes is not 0) wait, and "
        "MPI_Win_unlock sends the lock, them and the unlock as "
        "one request, one round trip in all; any other operation, or a flush, takes the lock first and waits "
        "for it.  false, and always with MPI_THREAD_MULTIPLE: MPI_Win_lock asks for the lock and waits for it",
        MCA_BASE_VAR_TYPE_BOOL, NULL, OPAL_INFO_LVL_5, &c->lazy_lock);
    var("queue_bytes", "Most bytes a window keeps queued for its schedule: beyond, the round runs at once",
        MCA_BASE_VAR_TYPE_SIZE_T, NULL, OPAL_INFO_LVL_6, &c->queue_bytes);
#define MCA_OSC_RTTCC_PVAR(name, help) (void) rttcc_mca_register_counter(v, #name, help, &c->counters.name);
    MCA_OSC_RTTCC_COUNTERS(MCA_OSC_RTTCC_PVAR)
#undef MCA_OSC_RTTCC_PVAR
    return OMPI_SUCCESS;
}

static int rttcc_open(void)
{
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    c->output = opal_output_open(NULL);
    opal_output_set_verbosity(c->output, c->verbose);
    if (OMPI_MPI_STATE_INIT_STARTED == ompi_mpi_state) { /* not in ompi_info */
        const rttcc_mca_setting_t shared[] = {{"osc_rttcc_priority", (uint64_t) c->priority}};
        (void) rttcc_mca_publish_settings(&c->super.osc_version, shared, 1);
    }
    return OMPI_SUCCESS;
}

static int rttcc_close(void)
{
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    rttcc_mca_forget_settings(&c->super.osc_version);
    opal_output_close(c->output);
    c->output = -1;
    return OMPI_SUCCESS;
}

/* ---------------------------------------------------------------- engine callbacks
 * They run in the engine's progress passes, maybe on another thread. */

static void on_recv(void *user, uint32_t peer, uint8_t tag, const void *data, size_t len)
{
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    osc_rttcc_msg_t msg;
    (void) user;
    (void) tag;
    if (len != sizeof msg) {
        opal_output_verbose(10, c->output, "osc:rttcc: a message of %zu bytes from peer %u: not ours, dropped", len,
                            peer);
        return;
    }
    memcpy(&msg, data, sizeof msg);
    OPAL_THREAD_LOCK(&c->lock);
    osc_rttcc_take_message(&msg);
    OPAL_THREAD_UNLOCK(&c->lock);
}

/* A reply landed whole in one of our grants. */
static void on_put(void *user, uint32_t peer, uint32_t key, uint64_t offset, size_t len, uint8_t tag)
{
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    osc_rttcc_op_t *op;
    (void) user;
    (void) peer;
    (void) offset;
    (void) len;
    (void) tag;
    OPAL_THREAD_LOCK(&c->lock);
    if (NULL != (op = osc_rttcc_reply_take(key))) {
        rttcc_engine_revoke(c->engine, key);
        osc_rttcc_op_piece_done(op, RTTCC_OK);
    }
    OPAL_THREAD_UNLOCK(&c->lock);
}

static void on_send_done(void *user, void *cookie, int status)
{
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    (void) user;
    OPAL_THREAD_LOCK(&c->lock);
    if (OSC_RTTCC_COOKIE_OP == *(int *) cookie) {
        osc_rttcc_op_piece_done(cookie, status);
    } else {
        osc_rttcc_flush_t *f = cookie;
        f->status = status;
        opal_atomic_wmb();
        f->done = true;
    }
    OPAL_THREAD_UNLOCK(&c->lock);
}

/* Its replies never come: the operations waiting for them fail (the BTL or
 * MTL, the engine's creator, says why). */
static void on_peer_dead(void *user, uint32_t peer, const char *why)
{
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    (void) user;
    OPAL_THREAD_LOCK(&c->lock);
    const size_t failed = osc_rttcc_fail_replies(peer);
    osc_rttcc_peer_died(peer);
    OPAL_THREAD_UNLOCK(&c->lock);
    opal_output_verbose(10, c->output, "osc:rttcc: peer %u dead (%s): %zu awaited replies given up, their operations fail",
                        peer, why, failed);
}

/* Attaches to the process engine (btl_rttcc's under pml/ob1, mtl_rttcc's
 * under pml/cm); MPI_Init calls this right after the PML started. */
static int rttcc_init(bool enable_progress_threads, bool enable_mpi_threads)
{
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    rttcc_engine_t *engine = rttcc_mca_process_engine();
    const rttcc_callbacks_t callbacks = {
        .on_recv = on_recv,
        .on_send_done = on_send_done,
        .on_peer_dead = on_peer_dead,
        .on_put = on_put,
    };
    (void) enable_progress_threads;
    (void) enable_mpi_threads;
    OBJ_CONSTRUCT(&c->lock, opal_mutex_t);
    OBJ_CONSTRUCT(&c->replies, opal_hash_table_t);
    OBJ_CONSTRUCT(&c->modules, opal_list_t);
    opal_hash_table_init(&c->replies, 1024);
    if (NULL == engine || c->priority < 0) {
        return OMPI_SUCCESS; /* no rttcc engine here: every query declines */
    }
    int rc = rttcc_engine_attach(engine, RTTCC_TAG_OSC, &callbacks);
    if (RTTCC_OK != rc) {
        opal_output_verbose(1, c->output, "osc:rttcc: cannot attach to the process engine (code %d)", rc);
        return OMPI_SUCCESS;
    }
    c->engine = engine;
    /* A post is at most the engine's largest message, less a request's
     * headers: beyond, a larger put would be an error instead of going alone. */
    const size_t max = rttcc_engine_max_message(engine);
    c->post_most = max > RTTCC_RMA_REQUEST_HEADER ? max - RTTCC_RMA_REQUEST_HEADER : 0;
    if (c->post_bytes > c->post_most) {
        opal_output_verbose(1, c->output, "osc:rttcc: post_bytes %zu is more than the engine's largest message "
                            "takes: %zu", c->post_bytes, c->post_most);
        c->post_bytes = c->post_most;
    }
    return OMPI_SUCCESS;
}

static int rttcc_finalize(void)
{
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    if (NULL != c->engine) {
        rttcc_engine_detach(c->engine, RTTCC_TAG_OSC);
        c->engine = NULL;
    }
    while (NULL != c->spare_ops) {
        osc_rttcc_op_t *op = c->spare_ops;
        c->spare_ops = op->next_spare;
        free(op);
    }
    c->nspare_ops = 0;
    free(c->lazy);
    c->lazy = NULL;
    c->nlazy = c->lazy_cap = 0;
    OBJ_DESTRUCT(&c->modules);
    OBJ_DESTRUCT(&c->replies);
    OBJ_DESTRUCT(&c->lock);
    return OMPI_SUCCESS;
}

/* Serves a window when the process engine reaches every rank of it. */
static int rttcc_query(struct ompi_win_t *win, void **base, size_t size, int disp_unit,
                       struct ompi_communicator_t *comm, struct opal_info_t *info, int flavor)
{
    mca_osc_rttcc_component_t *c = &mca_osc_rttcc_component;
    const int n = ompi_comm_size(comm), me = ompi_comm_rank(comm);
    char where[MPI_MAX_OBJECT_NAME + 16];
    uint32_t index;
    (void) win;
    (void) base;
    (void) size;
    (void) disp_unit;
    (void) info;
    if (NULL == c->engine || MPI_WIN_FLAVOR_SHARED == flavor || OMPI_COMM_IS_INTER(comm)) {
        return OMPI_ERR_NOT_SUPPORTED;
    }
    snprintf(where, sizeof where, "a window of %s", comm->c_name);
    for (int r = 0; r < n; ++r) {
        const opal_process_name_t *name = &ompi_comm_peer_lookup(comm, r)->super.proc_name;
        if (r != me && !rttcc_mca_reach(name, &index)) {
            opal_output_verbose(10, c->output, "osc:rttcc: rank %d of %s is not reached through rttcc: declining", r,
                                comm->c_name);
            return OMPI_ERR_NOT_SUPPORTED;
        }
        if (r != me && !rttcc_mca_same_settings(&c->super.osc_version, name, where)) {
            opal_output_verbose(10, c->output, "osc:rttcc: rank %d of %s runs osc_rttcc otherwise: declining", r,
                                comm->c_name);
            return OMPI_ERR_NOT_SUPPORTED;
        }
    }
    return c->priority;
}
