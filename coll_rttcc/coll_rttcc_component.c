/* Component: MCA parameters, MPI_T counters, open/close. */
#include "coll_rttcc.h"
#include "rttcc/mca.h"

#include "ompi/runtime/mpiruntime.h"

#include "opal/mca/base/mca_base_var.h"
#include "opal/mca/base/mca_base_var_enum.h"
#include "opal/util/output.h"
#include "opal/util/show_help.h"

static int rttcc_register(void);
static int register_pvars(void);
static int rttcc_open(void);
static int rttcc_close(void);
static int rttcc_init_query(bool enable_progress_threads, bool enable_mpi_threads);

mca_coll_rttcc_component_t mca_coll_rttcc_component = {
    .super = {
        .collm_version = {
            MCA_COLL_BASE_VERSION_2_0_0,
            .mca_component_name = "rttcc",
            MCA_BASE_MAKE_VERSION(component, 0, 1, 0),
            .mca_open_component = rttcc_open,
            .mca_close_component = rttcc_close,
            .mca_register_component_params = rttcc_register,
        },
        .collm_data = {
            .param_field = MCA_BASE_METADATA_PARAM_CHECKPOINT,
        },
        .collm_init_query = rttcc_init_query,
        .collm_comm_query = mca_coll_rttcc_comm_query,
    },
    .priority = 40,
    .output = -1,
    .min_bytes = 65536, /* smaller blocks: coll/tuned, whose algorithms suit them on large communicators */
};

static void var(const char *name, const char *help, mca_base_var_type_t type, mca_base_var_enum_t *e,
                int level, void *storage)
{
    (void) mca_base_component_var_register(&mca_coll_rttcc_component.super.collm_version, name, help, type, e, 0,
                                           0, (mca_base_var_info_lvl_t) level, MCA_BASE_VAR_SCOPE_READONLY,
                                           storage);
}

static int rttcc_register(void)
{
    mca_coll_rttcc_component_t *c = &mca_coll_rttcc_component;
    mca_base_var_enum_t *policy_enum = rttcc_mca_policy_enum("coll_rttcc_policy");
    rttcc_exchange_params_defaults(&c->xp); /* the registered defaults */
    var("priority", "Priority of coll_rttcc on communicators whose every peer the process engine (btl_rttcc's or mtl_rttcc's) reaches",
        MCA_BASE_VAR_TYPE_INT, NULL, OPAL_INFO_LVL_6, &c->priority);
    var("verbose", "Verbosity: 10 = one line per call, 30 = each call's schedule, peer by peer",
        MCA_BASE_VAR_TYPE_INT, NULL, OPAL_INFO_LVL_9, &c->verbose);
    var("policy",
        "Order of the puts: linear (rank+i, the control), greedy (lowest expected time first), threshold "
        "(rank+i among peers whose RTT is within threshold_us of the best; the others deferred), balanced "
        "(longest expected time first among those), adaptive (threshold, widened by each deferral)",
        MCA_BASE_VAR_TYPE_INT, policy_enum, OPAL_INFO_LVL_5, &c->xp.policy);
    if (NULL != policy_enum) {
        OBJ_RELEASE(policy_enum);
    }
    var("threshold_us", "A peer goes now if its RTT is at most this many microseconds above the call's best",
        MCA_BASE_VAR_TYPE_DOUBLE, NULL, OPAL_INFO_LVL_5, &c->xp.threshold_us);
    var("variance_factor", "RTTVAR multiples by which a noisy peer's RTT may exceed the threshold",
        MCA_BASE_VAR_TYPE_DOUBLE, NULL, OPAL_INFO_LVL_6, &c->xp.variance_factor);
    var("max_concurrent", "Peers being put to at once (0 = no limit)", MCA_BASE_VAR_TYPE_UNSIGNED_INT, NULL,
        OPAL_INFO_LVL_5, &c->xp.max_concurrent);
    var("reorder_window", "A deferred peer is forced once this many peers started ahead of it",
        MCA_BASE_VAR_TYPE_UNSIGNED_INT, NULL, OPAL_INFO_LVL_6, &c->xp.reorder_window);
    var("backoff_ms", "A deferred peer is forced after this many milliseconds", MCA_BASE_VAR_TYPE_DOUBLE, NULL,
        OPAL_INFO_LVL_6, &c->xp.backoff_ms);
    var("segment_size", "Bytes per put: blocks are cut into puts of this size so RTT samples flow during a call",
        MCA_BASE_VAR_TYPE_UNSIGNED_LONG, NULL, OPAL_INFO_LVL_5, &c->xp.segment_size);
    var("segments_ahead", "Puts in flight per peer", MCA_BASE_VAR_TYPE_UNSIGNED_INT, NULL, OPAL_INFO_LVL_6,
        &c->xp.segments_ahead);
    var("max_grants",
        "Peers whose blocks may come into this process at once: a receiver hands its buffer to this many senders "
        "at a time, the longest expected transfer first, and to the next as a block lands (0 = all at once; "
        "-1 = auto: all at once when rttcc_cc runs congestion control, which paces the senders, else 2)",
        MCA_BASE_VAR_TYPE_INT, NULL, OPAL_INFO_LVL_5, &c->xp.max_grants);
    var("eager_limit",
        "Blocks of at most this many bytes travel with the ready-to-receive message to their peer, which copies "
        "them into place, instead of being put after its own ready-to-receive message came back: no round trip, "
        "no ordering by the RTT table (0 = only empty blocks)",
        MCA_BASE_VAR_TYPE_UNSIGNED_LONG, NULL, OPAL_INFO_LVL_5, &c->xp.eager_limit);
    var("eager_total",
        "Bytes a process may send with its ready-to-receive messages in one call, over all peers: on large "
        "communicators the per-block eager_limit shrinks to eager_total / (ranks - 1), so that every rank's eager "
        "blocks, which all leave at the call's start, do not overflow the fabric's queues. The same setting on "
        "every rank bounds the memory a process needs for the blocks of a call it has not begun yet (per "
        "communicator)",
        MCA_BASE_VAR_TYPE_UNSIGNED_LONG, NULL, OPAL_INFO_LVL_6, &c->xp.eager_total);
    var("min_bytes",
        "MPI_Alltoall calls whose blocks are smaller than this many bytes go to the previously selected module "
        "(0 = serve every call; MPI_Alltoallv is always served: its ranks could disagree)",
        MCA_BASE_VAR_TYPE_SIZE_T, NULL, OPAL_INFO_LVL_5, &c->min_bytes);
    return register_pvars();
}

static int register_pvars(void)
{
    const mca_base_component_t *c = &mca_coll_rttcc_component.super.collm_version;
#define MCA_COLL_RTTCC_PVAR(name, help) \
    (void) rttcc_mca_register_counter(c, #name, help, &mca_coll_rttcc_component.counters.name);
    MCA_COLL_RTTCC_COUNTERS(MCA_COLL_RTTCC_PVAR)
#undef MCA_COLL_RTTCC_PVAR
    return OPAL_SUCCESS;
}

static int rttcc_open(void)
{
    mca_coll_rttcc_component_t *c = &mca_coll_rttcc_component;
    c->output = opal_output_open(NULL);
    opal_output_set_verbosity(c->output, c->verbose);
    if (0 == c->xp.segment_size || 0 == c->xp.segments_ahead || c->xp.threshold_us < 0 ||
        c->xp.variance_factor < 0 || c->xp.backoff_ms < 0) {
        rttcc_mca_show_help(true, "coll bad parameter", c->xp.segment_size, c->xp.segments_ahead, c->xp.threshold_us,
                  c->xp.variance_factor, c->xp.backoff_ms);
        c->priority = -1; /* never selected */
    }
    if (OMPI_MPI_STATE_INIT_STARTED == ompi_mpi_state) { /* not in ompi_info */
        const rttcc_mca_setting_t shared[] = {{"coll_rttcc_priority", (uint64_t) c->priority},
                                              {"coll_rttcc_min_bytes", c->min_bytes}};
        (void) rttcc_mca_publish_settings(&c->super.collm_version, shared, 2);
    }
    return OMPI_SUCCESS;
}

static int rttcc_close(void)
{
    mca_coll_rttcc_component_t *c = &mca_coll_rttcc_component;
    rttcc_mca_forget_settings(&c->super.collm_version);
    if (NULL != c->hub) {
        rttcc_exchange_hub_destroy(c->hub);
        c->hub = NULL;
    }
    opal_output_close(c->output);
    c->output = -1;
    return OMPI_SUCCESS;
}

/* Attaches the exchanges' hub to the process engine (btl_rttcc's under
 * pml/ob1, mtl_rttcc's under pml/cm).  MPI_Init calls this after the PML
 * and BTLs started and before the modex that lets peers reach us, so no
 * peer's ready-to-receive message can come before the hub listens. */
static int rttcc_init_query(bool enable_progress_threads, bool enable_mpi_threads)
{
    mca_coll_rttcc_component_t *c = &mca_coll_rttcc_component;
    rttcc_engine_t *engine = rttcc_mca_process_engine();
    int rc;
    (void) enable_progress_threads;
    (void) enable_mpi_threads;
    if (NULL == engine || NULL != c->hub) {
        return OMPI_SUCCESS; /* no rttcc engine here: comm_query declines */
    }
    rc = rttcc_exchange_hub_create(engine, RTTCC_TAG_COLL, &c->hub);
    if (RTTCC_OK != rc) {
        opal_output_verbose(1, c->output, "coll:rttcc: cannot attach to the process engine (code %d)", rc);
        c->hub = NULL;
    }
    return OMPI_SUCCESS;
}
