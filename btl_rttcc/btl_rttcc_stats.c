/* Counters: MPI_T performance variables (one per engine counter) and the
 * rttcc-stats line printed at finalize when btl_rttcc_stats is set. */
#include <stdio.h>

#include "btl_rttcc.h"

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
    mca_btl_rttcc_module_t *m = mca_btl_rttcc_component.module;
    rttcc_stats_t s = {0};
    if (NULL != m) {
        rttcc_engine_stats(m->engine, &s);
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

/* One line of "key=value" counters, leaving out zeros when `skip_zero`,
 * then the peer's round trips when `rtt` is given. */
static void print_line(const char *prefix, const rttcc_stats_t *s, bool skip_zero, const rttcc_rtt_row_t *rtt)
{
    char line[2048];
    int n = snprintf(line, sizeof line, "%s", prefix);
    if (NULL != rtt) {
        n += snprintf(line + n, sizeof line - n,
                      " srtt_us=%.1f rttvar_us=%.1f min_rtt_us=%.1f max_rtt_us=%.1f rtt_samples=%llu"
                      " probe_samples=%llu rto_us=%.0f cwnd=%.1f rtt_source=%s",
                      rtt->srtt_ns / 1e3, rtt->rttvar_ns / 1e3, rtt->min_ns / 1e3, rtt->max_ns / 1e3,
                      (unsigned long long) rtt->samples, (unsigned long long) rtt->probe_samples,
                      rtt->rto_ns / 1e3, rtt->cwnd, rttcc_timestamp_source_name(rtt->rtt_source));
    }
#define RTTCC_STAT_PRINT(name, help)                                                  \
    if (n < (int) sizeof line && !(skip_zero && 0 == s->name)) {                      \
        n += snprintf(line + n, sizeof line - n, " %s=%llu", #name,                   \
                      (unsigned long long) s->name);                                  \
    }
    RTTCC_STATS(RTTCC_STAT_PRINT)
#undef RTTCC_STAT_PRINT
    fprintf(stderr, "%s\n", line);
}

/* btl_rttcc_stats: the process's counters (every field, for scripts), then
 * one line per peer it exchanged with (non-zero fields). */
void mca_btl_rttcc_print_stats(mca_btl_rttcc_module_t *m)
{
    rttcc_stats_t s;
    char prefix[64];

    if (!mca_btl_rttcc_component.config.stats) {
        return;
    }
    rttcc_engine_stats(m->engine, &s);
    snprintf(prefix, sizeof prefix, "rttcc-stats rank=%u", OPAL_PROC_MY_NAME.vpid);
    print_line(prefix, &s, false, NULL);
    for (size_t i = 0; i < m->num_endpoints; ++i) {
        rttcc_rtt_row_t rtt;
        if (NULL == m->endpoints[i] || RTTCC_OK != rttcc_engine_peer_stats(m->engine, (uint32_t) i, &s) ||
            RTTCC_OK != rttcc_engine_rtt_row(m->engine, (uint32_t) i, &rtt) ||
            0 == s.segs_tx + s.segs_rx + s.probes_tx + s.probes_answered) {
            continue;
        }
        snprintf(prefix, sizeof prefix, "rttcc-peer rank=%u peer=%zu", OPAL_PROC_MY_NAME.vpid, i);
        print_line(prefix, &s, true, &rtt);
    }
    fflush(stderr);
}
