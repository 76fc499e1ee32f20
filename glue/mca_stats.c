/* rttcc-stats: an engine's counters on stderr at finalize, one line for the
 * process (every field, for scripts) and one per peer it exchanged with. */
#include "opal_config.h"

#include <stdbool.h>
#include <stdio.h>

#include "glue.h"

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

void rttcc_mca_print_stats(rttcc_engine_t *engine, uint32_t self, size_t npeers)
{
    rttcc_stats_t s;
    char prefix[64];

    rttcc_engine_stats(engine, &s);
    snprintf(prefix, sizeof prefix, "rttcc-stats rank=%u", self);
    print_line(prefix, &s, false, NULL);
    for (size_t i = 0; i < npeers; ++i) {
        rttcc_rtt_row_t rtt;
        if (RTTCC_OK != rttcc_engine_peer_stats(engine, (uint32_t) i, &s) ||
            RTTCC_OK != rttcc_engine_rtt_row(engine, (uint32_t) i, &rtt) ||
            0 == s.segs_tx + s.segs_rx + s.probes_tx + s.probes_answered) {
            continue;
        }
        snprintf(prefix, sizeof prefix, "rttcc-peer rank=%u peer=%zu", self, i);
        print_line(prefix, &s, true, &rtt);
    }
    fflush(stderr);
}
