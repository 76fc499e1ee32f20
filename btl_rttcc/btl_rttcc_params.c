/* MCA variables: one registration loop over the engine's parameter table,
 * plus the base BTL parameters and verbosity. */
#include <stdlib.h>
#include <string.h>

#include "btl_rttcc.h"

#include "opal/mca/base/mca_base_var.h"
#include "opal/mca/base/mca_base_var_enum.h"
#include "opal/mca/btl/base/base.h"

/* Builds an MCA enum from "name=value,name=value". */
static mca_base_var_enum_t *make_enum(const char *name, const char *spec)
{
    mca_base_var_enum_value_t values[16];
    char *copy = strdup(spec), *save = NULL, *item;
    int n = 0;
    mca_base_var_enum_t *e = NULL;

    for (item = strtok_r(copy, ",", &save); item && n < 15; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        if (NULL == eq) {
            continue;
        }
        *eq = '\0';
        values[n].string = strdup(item);
        values[n].value = atoi(eq + 1);
        ++n;
    }
    values[n].string = NULL;
    values[n].value = 0;
    mca_base_var_enum_create(name, values, &e);
    for (int i = 0; i < n; ++i) {
        free((char *) values[i].string);
    }
    free(copy);
    return e;
}

static void register_engine_param(const rttcc_param_t *p)
{
    mca_base_component_t *c = &mca_btl_rttcc_component.super.btl_version;
    void *storage = (char *) &mca_btl_rttcc_component.config + p->offset;
    mca_base_var_info_lvl_t level = (mca_base_var_info_lvl_t) (OPAL_INFO_LVL_1 + p->info_level - 1);
    mca_base_var_enum_t *e = NULL;
    mca_base_var_type_t type;

    switch (p->type) {
    case RTTCC_PARAM_UINT:
        type = MCA_BASE_VAR_TYPE_UNSIGNED_INT;
        break;
    case RTTCC_PARAM_BOOL:
        type = MCA_BASE_VAR_TYPE_BOOL;
        break;
    case RTTCC_PARAM_STRING:
        type = MCA_BASE_VAR_TYPE_STRING;
        break;
    case RTTCC_PARAM_DOUBLE:
        type = MCA_BASE_VAR_TYPE_DOUBLE;
        break;
    default:
        type = MCA_BASE_VAR_TYPE_INT;
        e = make_enum(p->name, p->enum_values);
        break;
    }
    (void) mca_base_component_var_register(c, p->name, p->help, type, e, 0, 0, level,
                                           MCA_BASE_VAR_SCOPE_READONLY, storage);
    if (NULL != e) {
        OBJ_RELEASE(e);
    }
}

int mca_btl_rttcc_register_params(void)
{
    mca_btl_rttcc_module_t *m = &mca_btl_rttcc_module_template;
    mca_base_component_t *c = &mca_btl_rttcc_component.super.btl_version;
    size_t n;
    const rttcc_param_t *table = rttcc_config_params(&n);

    rttcc_config_defaults(&mca_btl_rttcc_component.config);
    for (size_t i = 0; i < n; ++i) {
        register_engine_param(&table[i]);
    }

    mca_btl_rttcc_component.verbose = 0;
    (void) mca_base_component_var_register(c, "verbose",
                                           "Verbosity of btl_rttcc's output stream (0 = silent, 10 = per-peer setup, 100 = everything)",
                                           MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, OPAL_INFO_LVL_5,
                                           MCA_BASE_VAR_SCOPE_LOCAL, &mca_btl_rttcc_component.verbose);

    /* Base BTL parameters (btl_rttcc_eager_limit, _max_send_size, ...),
     * registered with our defaults. */
    m->super.btl_exclusivity = MCA_BTL_EXCLUSIVITY_LOW + 100;
    m->super.btl_eager_limit = 64 * 1024;
    m->super.btl_rndv_eager_limit = 64 * 1024;
    m->super.btl_max_send_size = 1024 * 1024;
    m->super.btl_rdma_pipeline_send_length = 1024 * 1024;
    m->super.btl_rdma_pipeline_frag_size = 1024 * 1024;
    m->super.btl_min_rdma_pipeline_size = 0;
    m->super.btl_latency = 1;
    m->super.btl_bandwidth = 10000;
    m->super.btl_flags = MCA_BTL_FLAGS_SEND | MCA_BTL_FLAGS_SEND_INPLACE;
    return mca_btl_base_param_register(c, &m->super);
}
