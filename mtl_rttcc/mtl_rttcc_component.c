/* Component: MCA variables and MPI_T counters, selection, init (the
 * engine and its address in the modex).  The MTL runs an engine of its own,
 * tuned by the mtl_rttcc_* copies of the engine's parameters: under pml/cm
 * Open MPI may start btl_rttcc too (for one-sided), with its own. */

#include "mtl_rttcc.h"
#include "rttcc_params.h"
#include "rttcc_show_help.h"

#include "opal/mca/base/mca_base_pvar.h"
#include "opal/mca/pmix/pmix.h"
#include "opal/runtime/opal_progress.h"
#include "opal/util/output.h"
#include "opal/util/proc.h"
#include "opal/util/show_help.h"

static int rttcc_register(void);
static int rttcc_open(void);
static int rttcc_close(void);
static int rttcc_query(mca_base_module_t **module, int *priority);
static mca_mtl_base_module_t *rttcc_init(bool enable_progress_threads, bool enable_mpi_threads);

mca_mtl_rttcc_component_t mca_mtl_rttcc_component = {
    .super = {
        .mtl_version = {
            MCA_MTL_BASE_VERSION_2_0_0,
            .mca_component_name = "rttcc",
            MCA_BASE_MAKE_VERSION(component, 0, 1, 0),
            .mca_open_component = rttcc_open,
            .mca_close_component = rttcc_close,
            .mca_query_component = rttcc_query,
            .mca_register_component_params = rttcc_register,
        },
        .mtl_data = {
            .param_field = MCA_BASE_METADATA_PARAM_CHECKPOINT,
        },
        .mtl_init = rttcc_init,
    },
    .priority = 5, /* below pml/ob1's BTLs and the vendor MTLs: chosen by --mca mtl rttcc */
    .output = -1,
    .eager_limit = 65536,
};

void mca_mtl_rttcc_show_help(bool once_per_node, const char *topic, ...)
{
    va_list ap;
    va_start(ap, topic);
    rttcc_show_help_v("help-mtl-rttcc.txt", once_per_node, topic, ap);
    va_end(ap);
}

static void var(const char *name, const char *help, int level, int *storage)
{
    (void) mca_base_component_var_register(&mca_mtl_rttcc_component.super.mtl_version, name, help,
                                           MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, (mca_base_var_info_lvl_t) level,
                                           MCA_BASE_VAR_SCOPE_READONLY, storage);
}

static int rttcc_register(void)
{
    mca_mtl_rttcc_component_t *c = &mca_mtl_rttcc_component;

    rttcc_register_engine_params(&c->super.mtl_version, &c->config);
    c->config.param_prefix = "mtl_rttcc_"; /* how the engine's errors name them */
    var("priority", "Selection priority of mtl_rttcc among the MTLs (pml/cm); select it with --mca pml cm "
        "--mca mtl rttcc", OPAL_INFO_LVL_6, &c->priority);
    var("verbose", "Verbosity of mtl_rttcc's output stream (10 = setup, 50 = every message's protocol)",
        OPAL_INFO_LVL_9, &c->verbose);
    var("eager_limit", "Messages up to this many bytes go with their match header and are copied out on "
        "match; larger ones wait for the receive and are put straight into its buffer (rendezvous)",
        OPAL_INFO_LVL_5, &c->eager_limit);
    var("held_max", "Most messages of one sender kept while an earlier one of its messages has not arrived "
        "(MPI order); all senders together four times as many; more ends the job with an error "
        "(0: 16 x mtl_rttcc_window)", OPAL_INFO_LVL_6, &c->held_max);
    return mca_mtl_rttcc_register_pvars();
}

/* MPI_T read of one counter (its offset is the pvar's context). */
static int read_counter(const struct mca_base_pvar_t *pvar, void *value, void *obj)
{
    int offset = *(const int *) pvar->ctx;
    *(unsigned long *) value = (unsigned long) *(int64_t *) ((char *) &mca_mtl_rttcc_component.counters + offset);
    return OPAL_SUCCESS;
}

int mca_mtl_rttcc_register_pvars(void)
{
    static int offsets[] = {
#define MTL_RTTCC_OFFSET(name, help) (int) offsetof(mca_mtl_rttcc_counters_t, name),
        MCA_MTL_RTTCC_COUNTERS(MTL_RTTCC_OFFSET)
#undef MTL_RTTCC_OFFSET
    };
    int i = 0;
#define MTL_RTTCC_PVAR(name, help)                                                                            \
    (void) mca_base_component_pvar_register(&mca_mtl_rttcc_component.super.mtl_version, #name, help,           \
                                            OPAL_INFO_LVL_4, MCA_BASE_PVAR_CLASS_COUNTER,                      \
                                            MCA_BASE_VAR_TYPE_UNSIGNED_LONG, NULL, MCA_BASE_VAR_BIND_NO_OBJECT, \
                                            MCA_BASE_PVAR_FLAG_READONLY | MCA_BASE_PVAR_FLAG_CONTINUOUS,       \
                                            read_counter, NULL, NULL, &offsets[i++]);
    MCA_MTL_RTTCC_COUNTERS(MTL_RTTCC_PVAR)
#undef MTL_RTTCC_PVAR
    return OMPI_SUCCESS;
}

static int rttcc_open(void)
{
    mca_mtl_rttcc_component.output = opal_output_open(NULL);
    opal_output_set_verbosity(mca_mtl_rttcc_component.output, mca_mtl_rttcc_component.verbose);
    opal_show_help_add_dir(RTTCC_HELPDIR);
    return OMPI_SUCCESS;
}

static int rttcc_close(void)
{
    opal_output_close(mca_mtl_rttcc_component.output);
    mca_mtl_rttcc_component.output = -1;
    return OMPI_SUCCESS;
}

static int rttcc_query(mca_base_module_t **module, int *priority)
{
    *priority = mca_mtl_rttcc_component.priority;
    *module = (mca_base_module_t *) &ompi_mtl_rttcc.super;
    return OMPI_SUCCESS;
}

static int create_engine(mca_mtl_rttcc_module_t *m, bool mpi_threads)
{
    rttcc_config_t *cfg = &mca_mtl_rttcc_component.config;
    char err[256];
    rttcc_callbacks_t cbs = {0};
    int rc;

    cfg->thread_safe = mpi_threads;
    cfg->job_key = rttcc_job_key();
    cfg->self = OPAL_PROC_MY_NAME.vpid;
    mca_mtl_rttcc_callbacks(&cbs, m);

    rc = rttcc_engine_create(cfg, &cbs, &m->engine, err, sizeof err);
    if (RTTCC_OK != rc) {
        const char *topic = RTTCC_ERR_CLOCK == rc ? "clock domain unavailable"
                            : RTTCC_ERR_TIMESTAMP == rc ? "timestamps unavailable" : "engine failed";
        mca_mtl_rttcc_show_help(true, topic, opal_process_info.nodename, err);
        m->engine = NULL;
        return OMPI_ERROR;
    }
    /* The process's engine from now on: coll_rttcc under pml/cm puts through it. */
    rttcc_engine_promote(m->engine);
    opal_output_verbose(10, mca_mtl_rttcc_component.output, "mtl:rttcc: %s wire up, window %u, credits %u: %s",
                        rttcc_engine_wire_name(m->engine), cfg->window, cfg->send_credits,
                        rttcc_engine_notes(m->engine));
    return OMPI_SUCCESS;
}

static mca_mtl_base_module_t *rttcc_init(bool enable_progress_threads, bool enable_mpi_threads)
{
    mca_mtl_rttcc_module_t *m = &ompi_mtl_rttcc;
    char addr[256];
    int rc, len;

    if (mca_mtl_rttcc_component.eager_limit < 0 ||
        mca_mtl_rttcc_component.eager_limit + sizeof(mtl_rttcc_match_hdr_t) > mca_mtl_rttcc_component.config.max_message) {
        mca_mtl_rttcc_show_help(true, "bad eager limit", opal_process_info.nodename,
                                mca_mtl_rttcc_component.eager_limit);
        return NULL;
    }
    if (mca_mtl_rttcc_component.config.inline_max < sizeof(mtl_rttcc_match_hdr_t)) { /* RTS, CTS: copied */
        mca_mtl_rttcc_show_help(true, "bad inline max", opal_process_info.nodename,
                                mca_mtl_rttcc_component.config.inline_max, (int) sizeof(mtl_rttcc_match_hdr_t));
        return NULL;
    }
    m->eager_limit = (size_t) mca_mtl_rttcc_component.eager_limit;
    m->self = OPAL_PROC_MY_NAME.vpid;
    if (OMPI_SUCCESS != create_engine(m, enable_mpi_threads)) {
        return NULL;
    }
    m->put_size = rttcc_engine_max_message(m->engine);
    len = rttcc_engine_local_address(m->engine, addr, sizeof addr);
    if (len <= 0) {
        goto fail;
    }
    OPAL_MODEX_SEND(rc, OPAL_PMIX_GLOBAL, &mca_mtl_rttcc_component.super.mtl_version, addr, len);
    if (OPAL_SUCCESS != rc || OMPI_SUCCESS != mca_mtl_rttcc_module_init(m)) {
        goto fail;
    }
    opal_progress_register(mca_mtl_rttcc_progress);
    return &m->super;

fail:
    rttcc_engine_destroy(m->engine);
    m->engine = NULL;
    return NULL;
}
