/* The engine's parameter table registered as MCA variables. */
#include <stdlib.h>
#include <string.h>

#include "rttcc_params.h"

#include "opal/mca/base/mca_base_var.h"
#include "opal/mca/base/mca_base_var_enum.h"
#include "opal/util/proc.h"

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

static void register_engine_param(const mca_base_component_t *c, rttcc_config_t *cfg, const rttcc_param_t *p)
{
    void *storage = (char *) cfg + p->offset;
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

void rttcc_register_engine_params(const mca_base_component_t *component, rttcc_config_t *cfg)
{
    size_t n;
    const rttcc_param_t *table = rttcc_config_params(&n);

    rttcc_config_defaults(cfg);
    for (size_t i = 0; i < n; ++i) {
        register_engine_param(component, cfg, &table[i]);
    }
}

uint32_t rttcc_job_key(void)
{
    uint64_t x = OPAL_PROC_MY_NAME.jobid;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (uint32_t) x ^ 0x52545443u;
}
