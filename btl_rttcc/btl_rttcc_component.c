/* Component: open/close/register, init (creates the engine and publishes
 * its address), progress. */
#include <string.h>

#include "btl_rttcc.h"
#include "btl_rttcc_frag.h"
#include "rttcc_params.h"

#include "opal/mca/btl/base/base.h"
#include "opal/mca/pmix/pmix.h"
#include "opal/util/output.h"
#include "opal/util/proc.h"
#include "opal/util/show_help.h"

static int rttcc_component_register(void);
static int rttcc_component_open(void);
static int rttcc_component_close(void);
static mca_btl_base_module_t **rttcc_component_init(int *num_btls, bool progress_threads,
                                                    bool mpi_threads);
static int rttcc_component_progress(void);

mca_btl_rttcc_component_t mca_btl_rttcc_component = {
    .super = {
        .btl_version = {
            MCA_BTL_DEFAULT_VERSION("rttcc"),
            .mca_open_component = rttcc_component_open,
            .mca_close_component = rttcc_component_close,
            .mca_register_component_params = rttcc_component_register,
        },
        .btl_data = {
            .param_field = MCA_BASE_METADATA_PARAM_CHECKPOINT,
        },
        .btl_init = rttcc_component_init,
        .btl_progress = rttcc_component_progress,
    },
    .output = -1,
};

static int rttcc_component_register(void)
{
    int rc = mca_btl_rttcc_register_params();
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    rc = mca_btl_rttcc_register_pvars();
    return OPAL_SUCCESS == rc ? mca_btl_rttcc_register_rtt_pvars() : rc;
}

static int rttcc_component_open(void)
{
    mca_btl_rttcc_component.output = opal_output_open(NULL);
    opal_output_set_verbosity(mca_btl_rttcc_component.output, mca_btl_rttcc_component.verbose);
    opal_show_help_add_dir(RTTCC_HELPDIR);
    return OPAL_SUCCESS;
}

static int rttcc_component_close(void)
{
    opal_output_close(mca_btl_rttcc_component.output);
    mca_btl_rttcc_component.output = -1;
    return OPAL_SUCCESS;
}

static mca_btl_base_module_t **rttcc_component_init(int *num_btls, bool progress_threads,
                                                    bool mpi_threads)
{
    mca_btl_rttcc_module_t *module;
    mca_btl_base_module_t **modules;
    rttcc_config_t *cfg = &mca_btl_rttcc_component.config;
    rttcc_callbacks_t cbs;
    char err[256], addr[256];
    int rc, len;

    *num_btls = 0;
    module = malloc(sizeof *module);
    modules = malloc(sizeof *modules);
    if (NULL == module || NULL == modules) {
        free(module);
        free(modules);
        return NULL;
    }
    *module = mca_btl_rttcc_module_template;

    /* Open MPI's own progress thread never calls BTL progress (we do not set
     * MCA_BTL_FLAGS_BTL_PROGRESS_THREAD_ENABLED): only MPI threads need locks. */
    cfg->thread_safe = mpi_threads;
    cfg->job_key = rttcc_job_key();
    cfg->self = OPAL_PROC_MY_NAME.vpid;
    cfg->max_message = (uint32_t) module->super.btl_max_send_size;
    if (module->super.btl_eager_limit > cfg->max_message) {
        cfg->max_message = (uint32_t) module->super.btl_eager_limit;
    }
    cbs.user = module;
    cbs.on_recv = mca_btl_rttcc_on_recv;
    cbs.on_send_done = mca_btl_rttcc_on_send_done;
    cbs.on_peer_dead = mca_btl_rttcc_on_peer_dead;
    cbs.on_unknown_peer = mca_btl_rttcc_on_unknown_peer;
    cbs.on_put = NULL; /* the BTL exposes no memory; coll_rttcc will */

    rc = rttcc_engine_create(cfg, &cbs, &module->engine, err, sizeof err);
    if (RTTCC_OK != rc) {
        const char *topic = RTTCC_ERR_CLOCK == rc ? "clock domain unavailable"
                            : RTTCC_ERR_TIMESTAMP == rc ? "timestamps unavailable" : "engine failed";
        mca_btl_rttcc_show_help(true, topic, opal_process_info.nodename, err);
        goto fail;
    }
    opal_output_verbose(10, mca_btl_rttcc_component.output, "btl:rttcc: %s",
                        rttcc_engine_notes(module->engine));
    len = rttcc_engine_local_address(module->engine, addr, sizeof addr);
    OPAL_MODEX_SEND(rc, OPAL_PMIX_GLOBAL, &mca_btl_rttcc_component.super.btl_version, addr, len);
    if (OPAL_SUCCESS != rc || OPAL_SUCCESS != mca_btl_rttcc_module_init(module)) {
        goto fail;
    }
    opal_output_verbose(10, mca_btl_rttcc_component.output,
                        "btl:rttcc: %s wire up, window %u, credits %u, threads %s",
                        rttcc_engine_wire_name(module->engine), cfg->window, cfg->send_credits,
                        cfg->thread_safe ? "locked" : "single");
    if (NULL != cfg->rtt_dump && '\0' != cfg->rtt_dump[0]) {
        module->rtt_dump = strdup(cfg->rtt_dump);
    }
    mca_btl_rttcc_component.module = module;
    modules[0] = &module->super;
    *num_btls = 1;
    return modules;

fail:
    if (NULL != module->engine) {
        rttcc_engine_destroy(module->engine);
    }
    free(module);
    free(modules);
    return NULL;
}

static int rttcc_component_progress(void)
{
    mca_btl_rttcc_module_t *module = mca_btl_rttcc_component.module;
    return NULL == module ? 0 : rttcc_engine_progress(module->engine);
}
