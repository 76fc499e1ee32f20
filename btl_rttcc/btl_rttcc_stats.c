/* Counters: MPI_T performance variables (one per engine counter) and the
 * rttcc-stats lines printed at finalize when btl_rttcc_stats is set. */
#include <stdio.h>

#include "btl_rttcc.h"
#include "rttcc_stats_print.h"

#include "opal/mca/base/mca_base_pvar.h"
#include "opal/util/proc.h"

enum {
#define RTTCC_STAT_INDEX(name, help) STAT_##name,
    RTTCC_STATS(RTTCC_STAT_INDEX)
#undef RTTCC_STAT_INDEX
    STAT_COUNT
};

static int stat_offsets[STAT_COUNT] = {
#define RTTCC_STAT_OFFSET(name, help) (int) offsetof(rttcc_stats_t, name),
    RTTCC_STATS(RTTCC_STAT_OFFSET)
#undef RTTCC_STAT_OFFSET
};

/* MPI_T read of one counter; the counter's offset is the pvar's context
 * (the third argument is the bound object, unused: NO_OBJECT binding). */
static int read_counter(const struct mca_base_pvar_t *pvar, void *value, void *obj)
{
    int offset = *(const int *) pvar->ctx;
    rttcc_engine_t *engine = mca_btl_rttcc_pvar_engine();
    rttcc_stats_t s = {0};
    if (NULL != engine) {
        rttcc_engine_stats(engine, &s);
    }
    *(unsigned long *) value = (unsigned long) *(uint64_t *) ((char *) &s + offset);
    return OPAL_SUCCESS;
}

int mca_btl_rttcc_register_pvars(void)
{
    const mca_base_component_t *c = &mca_btl_rttcc_component.super.btl_version;
#define RTTCC_STAT_PVAR(name, help)                                                            \
    (void) mca_base_component_pvar_register(c, #name, help, OPAL_INFO_LVL_4,                   \
                                            MCA_BASE_PVAR_CLASS_COUNTER,                       \
                                            MCA_BASE_VAR_TYPE_UNSIGNED_LONG, NULL,             \
                                            MCA_BASE_VAR_BIND_NO_OBJECT,                       \
                                            MCA_BASE_PVAR_FLAG_READONLY |                      \
                                                MCA_BASE_PVAR_FLAG_CONTINUOUS,                 \
                                            read_counter, NULL, NULL, &stat_offsets[STAT_##name]);
    RTTCC_STATS(RTTCC_STAT_PVAR)
#undef RTTCC_STAT_PVAR
    return OPAL_SUCCESS;
}

/* btl_rttcc_stats: the counters at finalize (glue/rttcc_stats_print.c). */
void mca_btl_rttcc_print_stats(mca_btl_rttcc_module_t *m)
{
    if (mca_btl_rttcc_component.config.stats) {
        rttcc_print_stats(m->engine, OPAL_PROC_MY_NAME.vpid, m->num_endpoints);
    }
}
