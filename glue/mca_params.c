/* The engine's parameters as MCA variables: registered once, under
 * framework-neutral names (rttcc_window), with a synonym per component that
 * hosts an engine (btl_rttcc_window, mtl_rttcc_window), as Open MPI's
 * common/ofi does.  Old names (RTTCC_PARAM_RENAMES) stay as deprecated
 * synonyms. */
#include "opal_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glue.h"
#include "rttcc/exchange.h"

#include "opal/mca/base/mca_base_var.h"
#include "opal/mca/base/mca_base_var_enum.h"

#define RTTCC_COUNT_ROW(...) +1
enum { ROWS = 0 RTTCC_PARAMS(RTTCC_COUNT_ROW) };

/* The variables' storage, on the heap and never freed: Open MPI's variable
 * system writes it (and frees its strings) until opal finalizes, after the
 * components and this library are unloaded. */
static rttcc_config_t *config;
static int var_index[ROWS]; /* by table row */

static mca_base_var_type_t var_type(rttcc_param_type_t type)
{
    switch (type) {
    case RTTCC_PARAM_UINT:
        return MCA_BASE_VAR_TYPE_UNSIGNED_INT;
    case RTTCC_PARAM_BOOL:
        return MCA_BASE_VAR_TYPE_BOOL;
    case RTTCC_PARAM_STRING:
        return MCA_BASE_VAR_TYPE_STRING;
    case RTTCC_PARAM_DOUBLE:
        return MCA_BASE_VAR_TYPE_DOUBLE;
    case RTTCC_PARAM_ENUM:
        break;
    }
    return MCA_BASE_VAR_TYPE_INT;
}

static mca_base_var_enum_t *var_enum(const rttcc_param_t *p)
{
    mca_base_var_enum_value_t values[16];
    mca_base_var_enum_t *e = NULL;
    char name[64];
    int n = 0;

    for (const rttcc_enum_value_t *v = p->values; NULL != v->name && n < 15; ++v, ++n) {
        values[n].value = v->value;
        values[n].string = v->name;
    }
    values[n].value = 0;
    values[n].string = NULL;
    snprintf(name, sizeof name, RTTCC_PARAM_PREFIX "%s", p->name);
    return OPAL_SUCCESS == mca_base_var_enum_create(name, values, &e) ? e : NULL;
}

/* The help text with what the table knows besides: "... [segments, 64..65536]". */
static void full_help(const rttcc_param_t *p, char *out, size_t cap)
{
    const char *unit = rttcc_param_unit_name(p->unit);
    char range[48];

    rttcc_param_range_text(p, range, sizeof range);
    if ('\0' == *unit && '\0' == *range) {
        snprintf(out, cap, "%s", p->help);
    } else {
        snprintf(out, cap, "%s [%s%s%s]", p->help, unit, *unit && *range ? ", " : "", range);
    }
}

static void register_once(void)
{
    size_t n;
    const rttcc_param_t *table = rttcc_config_params(&n);
    char help[2048];

    rttcc_config_defaults(config);
    for (size_t i = 0; i < n; ++i) {
        const rttcc_param_t *p = &table[i];
        mca_base_var_enum_t *e = RTTCC_PARAM_ENUM == p->type ? var_enum(p) : NULL;
        full_help(p, help, sizeof help);
        var_index[i] = mca_base_var_register("ompi", "rttcc", NULL, p->name, help, var_type(p->type), e, 0, 0,
                                             (mca_base_var_info_lvl_t) (OPAL_INFO_LVL_1 + p->info_level - 1),
                                             MCA_BASE_VAR_SCOPE_READONLY, (char *) config + p->offset);
        if (NULL != e) {
            OBJ_RELEASE(e);
        }
    }
}

/* The row of parameter `name`, or -1. */
static int row_of(const char *name)
{
    size_t n;
    const rttcc_param_t *table = rttcc_config_params(&n);
    for (size_t i = 0; i < n; ++i) {
        if (0 == strcmp(table[i].name, name)) {
            return (int) i;
        }
    }
    return -1;
}

/* `name` of the framework/component as another name of row `row`. */
static void synonym(int row, const char *project, const char *framework, const char *component, const char *name,
                    bool deprecated)
{
    if (row >= 0 && var_index[row] >= 0) {
        (void) mca_base_var_register_synonym(var_index[row], project, framework, component, name,
                                             deprecated ? MCA_BASE_VAR_SYN_FLAG_DEPRECATED : 0);
    }
}

int rttcc_mca_register_params(const mca_base_component_t *c)
{
    size_t n;
    const rttcc_param_t *table = rttcc_config_params(&n);

    if (NULL == config) {
        config = calloc(1, sizeof *config);
        if (NULL == config) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
        register_once();
#define RTTCC_OLD_NAME(old_name, new_name) synonym(row_of(#new_name), "ompi", "rttcc", NULL, #old_name, true);
        RTTCC_PARAM_RENAMES(RTTCC_OLD_NAME)
    }
    for (size_t i = 0; i < n; ++i) {
        synonym((int) i, c->mca_project_name, c->mca_type_name, c->mca_component_name, table[i].name, false);
    }
#define RTTCC_OLD_SYNONYM(old_name, new_name) \
    synonym(row_of(#new_name), c->mca_project_name, c->mca_type_name, c->mca_component_name, #old_name, true);
    RTTCC_PARAM_RENAMES(RTTCC_OLD_SYNONYM)
    return OPAL_SUCCESS;
}

const rttcc_config_t *rttcc_mca_config(void)
{
    return config;
}

uint32_t rttcc_mca_job_key(void)
{
    uint64_t x = OPAL_PROC_MY_NAME.jobid;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (uint32_t) x ^ 0x52545443u;
}

mca_base_var_enum_t *rttcc_mca_policy_enum(const char *name)
{
    mca_base_var_enum_value_t values[] = {
        {RTTCC_SCHED_LINEAR, NULL},   {RTTCC_SCHED_GREEDY, NULL}, {RTTCC_SCHED_THRESHOLD, NULL},
        {RTTCC_SCHED_BALANCED, NULL}, {RTTCC_SCHED_ADAPTIVE, NULL}, {0, NULL},
    };
    mca_base_var_enum_t *e = NULL;
    for (int i = 0; NULL == values[i].string && i < 5; ++i) {
        values[i].string = rttcc_sched_policy_name(values[i].value);
    }
    return OPAL_SUCCESS == mca_base_var_enum_create(name, values, &e) ? e : NULL;
}
