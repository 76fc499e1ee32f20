/* Component: MCA variables and MPI_T counters, selection, init (the
 * engine, through the glue).  The MTL runs an engine of its own: under
 * pml/cm Open MPI may start btl_rttcc too (for one-sided), with its own. */

#include "mtl_rttcc.h"

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
    /* Copied when alone and laid out as datagrams (send_copy_max).  Across
     * veth hosts (6 alternating runs) 192 KiB took 144.8 us eager against
     * 176.6 by rendezvous.  256 KiB: 60-71 us eager against 74-85 (3
     * alternating runs, testbed), 39-43 against 45-47 on one host; 512 KiB
     * gained nothing (123-132 us either way). */
    .eager_limit = 256 * 1024,
};

static void var(const char *name, const char *help, int level, int *storage)
{
    (void) mca_base_component_var_register(&mca_mtl_rttcc_component.super.mtl_version, name, help,
                                           MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, (mca_base_var_info_lvl_t) level,
                                           MCA_BASE_VAR_SCOPE_READONLY, storage);
}

static int rttcc_register(void)
{
    mca_mtl_rttcc_component_t *c = &mca_mtl_rttcc_component;

    int rc = rttcc_mca_register(&c->super.mtl_version);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    var("priority", "Selection priority of mtl_rttcc among the MTLs (pml/cm); select it with --mca pml cm "
        "--mca mtl rttcc", OPAL_INFO_LVL_6, &c->priority);
    var("verbose", "Verbosity of mtl_rttcc's output stream (10 = setup, 50 = every message's protocol)",
        OPAL_INFO_LVL_9, &c->verbose);
    var("eager_limit", "Messages up to this many bytes go with their match header and are copied out on "
        "match; larger ones wait for the receive, which reads them straight into its buffer (rendezvous)",
        OPAL_INFO_LVL_5, &c->eager_limit);
    var("held_max", "Most messages of one sender kept while an earlier one of its messages has not arrived "
        "(MPI order); all senders together four times as many; more ends the job with an error "
        "(0: 16 x rttcc_window)", OPAL_INFO_LVL_6, &c->held_max);
    return mca_mtl_rttcc_register_pvars();
}

int mca_mtl_rttcc_register_pvars(void)
{
    const mca_base_component_t *v = &mca_mtl_rttcc_component.super.mtl_version;
#define MTL_RTTCC_PVAR(name, help) \
    (void) rttcc_mca_register_counter(v, #name, help, &mca_mtl_rttcc_component.counters.name);
    MCA_MTL_RTTCC_COUNTERS(MTL_RTTCC_PVAR)
#undef MTL_RTTCC_PVAR
    return OMPI_SUCCESS;
}

static int rttcc_open(void)
{
    mca_mtl_rttcc_component.output = opal_output_open(NULL);
    opal_output_set_verbosity(mca_mtl_rttcc_component.output, mca_mtl_rttcc_component.verbose);
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

static mca_mtl_base_module_t *rttcc_init(bool enable_progress_threads, bool enable_mpi_threads)
{
    mca_mtl_rttcc_module_t *m = &ompi_mtl_rttcc;
    rttcc_callbacks_t cbs = {0};

    if (mca_mtl_rttcc_component.eager_limit < 0 ||
        mca_mtl_rttcc_component.eager_limit + sizeof(mtl_rttcc_match_hdr_t) > rttcc_mca_config()->max_message) {
        rttcc_mca_show_help(true, "mtl bad eager limit", opal_process_info.nodename,
                            mca_mtl_rttcc_component.eager_limit);
        return NULL;
    }
    if (rttcc_mca_config()->inline_max < sizeof(mtl_rttcc_match_hdr_t)) { /* RTS, replies: copied */
        rttcc_mca_show_help(true, "mtl bad inline max", opal_process_info.nodename,
                            rttcc_mca_config()->inline_max, (int) sizeof(mtl_rttcc_match_hdr_t));
        return NULL;
    }
    m->eager_limit = (size_t) mca_mtl_rttcc_component.eager_limit;
    m->self = OPAL_PROC_MY_NAME.vpid;
    mca_mtl_rttcc_callbacks(&cbs, m);
    if (OMPI_SUCCESS != rttcc_mca_engine_open(&mca_mtl_rttcc_component.super.mtl_version, &cbs, enable_mpi_threads,
                                              0, mca_mtl_rttcc_component.output, &m->engine)) {
        return NULL;
    }
    m->get_size = rttcc_engine_max_message(m->engine);
    if (OMPI_SUCCESS != mca_mtl_rttcc_module_init(m)) {
        rttcc_mca_engine_close(m->engine);
        m->engine = NULL;
        return NULL;
    }
    opal_progress_register(mca_mtl_rttcc_progress);
    return &m->super;
}
