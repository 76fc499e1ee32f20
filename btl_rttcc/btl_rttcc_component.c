/* Component: open/close/register, init (the engine, through the glue),
 * progress. */
#include <string.h>

#include "btl_rttcc.h"
#include "btl_rttcc_frag.h"

#include "opal/mca/btl/base/base.h"
#include "opal/mca/pmix/pmix.h"
#include "opal/util/output.h"
#include "opal/util/proc.h"
#include "opal/util/show_help.h"

/* The fragment limits btl_rttcc takes: ob1's largest header fits the
 * smallest eager fragment, and a fragment is one engine message. */
static const size_t kMinEagerLimit = 256;
static const size_t kMaxMessage = (size_t) 1 << 30;

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
#define BTL_RTTCC_PVAR(name, help) \
    (void) rttcc_mca_register_counter(&mca_btl_rttcc_component.super.btl_version, #name, help, \
                                      &mca_btl_rttcc_component.counters.name);
    MCA_BTL_RTTCC_COUNTERS(BTL_RTTCC_PVAR)
#undef BTL_RTTCC_PVAR
    return OPAL_SUCCESS;
}

static int rttcc_component_open(void)
{
    mca_btl_rttcc_component.output = opal_output_open(NULL);
    opal_output_set_verbosity(mca_btl_rttcc_component.output, mca_btl_rttcc_component.verbose);
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
    rttcc_callbacks_t cbs = {0}; /* callbacks it does not set are NULL */
    size_t max_message;

    *num_btls = 0;
    module = malloc(sizeof *module);
    modules = malloc(sizeof *modules);
    if (NULL == module || NULL == modules) {
        free(module);
        free(modules);
        return NULL;
    }
    *module = mca_btl_rttcc_module_template;
    module->inline_max = rttcc_mca_config()->inline_max;
    /* Every fragment is one engine message: 0 is no "unlimited" here, and
     * a limit past the engine's largest message would be cut to 32 bits. */
    if (module->super.btl_eager_limit < kMinEagerLimit || module->super.btl_max_send_size < kMinEagerLimit ||
        module->super.btl_eager_limit > kMaxMessage || module->super.btl_max_send_size > kMaxMessage) {
        rttcc_mca_show_help(true, "btl bad limits", opal_process_info.nodename, module->super.btl_eager_limit,
                            module->super.btl_max_send_size, kMinEagerLimit, kMaxMessage);
        free(module);
        free(modules);
        return NULL;
    }
    max_message = module->super.btl_max_send_size > module->super.btl_eager_limit ? module->super.btl_max_send_size
                                                                                  : module->super.btl_eager_limit;
    if (0 == module->super.btl_get_limit || module->super.btl_get_limit > max_message) {
        module->super.btl_get_limit = max_message; /* a get's reply is one engine message */
    }
    cbs.user = module;
    cbs.on_recv = mca_btl_rttcc_on_recv;
    cbs.on_send_done = mca_btl_rttcc_on_send_done;
    cbs.on_peer_dead = mca_btl_rttcc_on_peer_dead;
    cbs.on_unknown_peer = mca_btl_rttcc_on_unknown_peer;
    cbs.on_put = mca_btl_rttcc_on_put; /* replies of its gets (coll and osc attach their own tags) */

    /* Open MPI's own progress thread never calls BTL progress (we do not set
     * MCA_BTL_FLAGS_BTL_PROGRESS_THREAD_ENABLED): only MPI threads need locks. */
    if (OPAL_SUCCESS != rttcc_mca_engine_open(&mca_btl_rttcc_component.super.btl_version, &cbs, mpi_threads,
                                              (uint32_t) max_message, mca_btl_rttcc_component.output,
                                              &module->engine)) {
        free(module);
        free(modules);
        return NULL;
    }
    if (OPAL_SUCCESS != mca_btl_rttcc_module_init(module)) {
        mca_btl_rttcc_rdma_close(module);
        rttcc_mca_engine_close(module->engine);
        mca_btl_rttcc_rdma_fini(module);
        free(module);
        free(modules);
        return NULL;
    }
    mca_btl_rttcc_component.module = module;
    modules[0] = &module->super;
    *num_btls = 1;
    return modules;
}

static int rttcc_component_progress(void)
{
    mca_btl_rttcc_module_t *module = mca_btl_rttcc_component.module;
    return NULL == module ? 0 : rttcc_engine_progress(module->engine);
}
