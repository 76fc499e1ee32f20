/* The MPI_T performance variables of the engine a component opens: one
 * counter per engine statistic (<component>_segs_tx, ...) and the RTT table,
 * bound to a communicator (<component>_rtt_srtt: one value per rank of it,
 * that rank's row as seen from this process).  Each component's variables
 * read its own engine; they read zeros while it has none. */
#include "ompi_config.h"

#include "glue.h"

#include "ompi/communicator/communicator.h"
#include "ompi/group/group.h"
#include "opal/mca/base/mca_base_pvar.h"

enum {
#define RTTCC_STAT_INDEX(name, help) STAT_##name,
    RTTCC_STATS(RTTCC_STAT_INDEX)
#undef RTTCC_STAT_INDEX
    STAT_COUNT
};

static const size_t stat_offsets[STAT_COUNT] = {
#define RTTCC_STAT_OFFSET(name, help) offsetof(rttcc_stats_t, name),
    RTTCC_STATS(RTTCC_STAT_OFFSET)
#undef RTTCC_STAT_OFFSET
};

/* One column of the RTT table. */
typedef struct rtt_column {
    const char *name; /* after <component>_ */
    const char *help;
    bool is_double;   /* microseconds or segments (double), else a count (unsigned long) */
    double (*value)(const rttcc_rtt_row_t *row);
} rtt_column_t;

static double srtt_us(const rttcc_rtt_row_t *r) { return r->srtt_ns / 1e3; }
static double rttvar_us(const rttcc_rtt_row_t *r) { return r->rttvar_ns / 1e3; }
static double min_us(const rttcc_rtt_row_t *r) { return r->min_ns / 1e3; }
static double max_us(const rttcc_rtt_row_t *r) { return r->max_ns / 1e3; }
static double owd_fwd_us(const rttcc_rtt_row_t *r) { return (r->flags & RTTCC_ROW_OWD) ? r->owd_fwd_ns / 1e3 : 0; }
static double owd_rev_us(const rttcc_rtt_row_t *r) { return (r->flags & RTTCC_ROW_OWD) ? r->owd_rev_ns / 1e3 : 0; }
static double offset_us(const rttcc_rtt_row_t *r) { return (r->flags & RTTCC_ROW_OFFSET) ? r->clock_offset_ns / 1e3 : 0; }
static double cwnd(const rttcc_rtt_row_t *r) { return r->cwnd; }
static double losses(const rttcc_rtt_row_t *r) { return (double) r->losses; }
static double retransmits(const rttcc_rtt_row_t *r) { return (double) r->retransmits; }
static double samples(const rttcc_rtt_row_t *r) { return (double) r->samples; }
static double probe_samples(const rttcc_rtt_row_t *r) { return (double) r->probe_samples; }

static const rtt_column_t rtt_columns[] = {
    {"rtt_srtt", "Smoothed RTT to each rank of the communicator, microseconds (0: no sample yet)", true, srtt_us},
    {"rtt_rttvar", "RTT variation (RFC 6298 RTTVAR) to each rank, microseconds", true, rttvar_us},
    {"rtt_min", "Smallest RTT sample to each rank, microseconds", true, min_us},
    {"rtt_max", "Largest RTT sample to each rank, microseconds", true, max_us},
    {"rtt_owd_fwd", "One-way delay to each rank, microseconds (0: unknown in this clock domain)", true, owd_fwd_us},
    {"rtt_owd_rev", "One-way delay from each rank, microseconds (0: unknown)", true, owd_rev_us},
    {"rtt_clock_offset", "Each rank's clock minus ours, microseconds (0: unknown)", true, offset_us},
    {"rtt_cwnd", "Congestion window towards each rank, segments (0: rttcc_cc is none)", true, cwnd},
    {"rtt_losses", "Segments lost (timeouts, fast retransmits) and probes lost, per rank", false, losses},
    {"rtt_retransmits", "Segments retransmitted to each rank", false, retransmits},
    {"rtt_samples", "RTT samples taken from data ACKs of each rank", false, samples},
    {"rtt_probe_samples", "RTT samples taken from probe replies of each rank", false, probe_samples},
};
enum { RTT_COLUMNS = sizeof rtt_columns / sizeof rtt_columns[0] };

/* What a variable reads: which component's engine, and which field. */
typedef struct pvar_ctx {
    const mca_base_component_t *component;
    size_t stat_offset;         /* counters */
    const rtt_column_t *column; /* RTT table */
} pvar_ctx_t;

/* Two components host engines (btl_rttcc, mtl_rttcc); ompi_info may
 * register them again after a close. */
enum { MAX_HOSTS = 4 };
static pvar_ctx_t contexts[MAX_HOSTS][STAT_COUNT + RTT_COLUMNS];
static int hosts;

static int read_counter(const struct mca_base_pvar_t *pvar, void *value, void *obj)
{
    const pvar_ctx_t *ctx = (const pvar_ctx_t *) pvar->ctx;
    rttcc_engine_t *engine = rttcc_mca_engine_of(ctx->component);
    rttcc_stats_t s = {0};
    (void) obj;
    if (NULL != engine) {
        rttcc_engine_stats(engine, &s);
    }
    *(unsigned long *) value = (unsigned long) *(const uint64_t *) ((const char *) &s + ctx->stat_offset);
    return OPAL_SUCCESS;
}

/* Bound to a communicator: one value per rank. */
static int rtt_notify(struct mca_base_pvar_t *pvar, mca_base_pvar_event_t event, void *obj, int *count)
{
    (void) pvar;
    if (MCA_BASE_PVAR_HANDLE_BIND == event) {
        /* the MPI layer passes the communicator itself; one value per rank of its remote
         * group (an intracommunicator's is its own group) */
        *count = ompi_group_size(((ompi_communicator_t *) obj)->c_remote_group);
    }
    return OPAL_SUCCESS;
}

static int rtt_read(const struct mca_base_pvar_t *pvar, void *value, void *obj)
{
    const pvar_ctx_t *ctx = (const pvar_ctx_t *) pvar->ctx;
    ompi_communicator_t *comm = (ompi_communicator_t *) obj;
    rttcc_engine_t *engine = rttcc_mca_engine_of(ctx->component);
    int n = ompi_group_size(comm->c_remote_group); /* an intercommunicator's other side */

    for (int i = 0; i < n; ++i) {
        opal_process_name_t name = ompi_group_get_proc_name(comm->c_remote_group, i);
        rttcc_rtt_row_t row;
        double v = 0;
        if (NULL != engine && RTTCC_OK == rttcc_engine_rtt_row(engine, name.vpid, &row)) {
            v = ctx->column->value(&row);
        }
        if (ctx->column->is_double) {
            ((double *) value)[i] = v;
        } else {
            ((unsigned long *) value)[i] = (unsigned long) v;
        }
    }
    return OPAL_SUCCESS;
}

int rttcc_mca_register_pvars(const mca_base_component_t *c)
{
    const char *stat_help[STAT_COUNT] = {
#define RTTCC_STAT_HELP(name, help) help,
        RTTCC_STATS(RTTCC_STAT_HELP)
#undef RTTCC_STAT_HELP
    };
    const char *stat_name[STAT_COUNT] = {
#define RTTCC_STAT_NAME(name, help) #name,
        RTTCC_STATS(RTTCC_STAT_NAME)
#undef RTTCC_STAT_NAME
    };
    int host = 0;
    pvar_ctx_t *ctx;

    while (host < hosts && contexts[host][0].component != c) {
        ++host; /* a component registered again (after a close) reuses its contexts */
    }
    if (host == MAX_HOSTS) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    hosts += host == hosts;
    ctx = contexts[host];
    for (int i = 0; i < STAT_COUNT; ++i, ++ctx) {
        *ctx = (pvar_ctx_t){.component = c, .stat_offset = stat_offsets[i]};
        (void) mca_base_component_pvar_register(c, stat_name[i], stat_help[i], OPAL_INFO_LVL_4,
                                                MCA_BASE_PVAR_CLASS_COUNTER, MCA_BASE_VAR_TYPE_UNSIGNED_LONG, NULL,
                                                MCA_BASE_VAR_BIND_NO_OBJECT,
                                                MCA_BASE_PVAR_FLAG_READONLY | MCA_BASE_PVAR_FLAG_CONTINUOUS,
                                                read_counter, NULL, NULL, ctx);
    }
    for (int i = 0; i < RTT_COLUMNS; ++i, ++ctx) {
        const rtt_column_t *col = &rtt_columns[i];
        *ctx = (pvar_ctx_t){.component = c, .column = col};
        (void) mca_base_component_pvar_register(
            c, col->name, col->help, OPAL_INFO_LVL_4, MCA_BASE_PVAR_CLASS_GENERIC,
            col->is_double ? MCA_BASE_VAR_TYPE_DOUBLE : MCA_BASE_VAR_TYPE_UNSIGNED_LONG, NULL,
            MCA_BASE_VAR_BIND_MPI_COMM, MCA_BASE_PVAR_FLAG_READONLY | MCA_BASE_PVAR_FLAG_CONTINUOUS, rtt_read, NULL,
            rtt_notify, ctx);
    }
    return OPAL_SUCCESS;
}

/* A component counter's MPI_T read: the pvar's context is the counter. */
static int read_component_counter(const struct mca_base_pvar_t *pvar, void *value, void *obj)
{
    (void) obj;
    *(unsigned long *) value = (unsigned long) *(volatile int64_t *) pvar->ctx;
    return OPAL_SUCCESS;
}

int rttcc_mca_register_counter(const mca_base_component_t *component, const char *name, const char *help,
                               volatile int64_t *counter)
{
    int rc = mca_base_component_pvar_register(component, name, help, OPAL_INFO_LVL_4, MCA_BASE_PVAR_CLASS_COUNTER,
                                              MCA_BASE_VAR_TYPE_UNSIGNED_LONG, NULL, MCA_BASE_VAR_BIND_NO_OBJECT,
                                              MCA_BASE_PVAR_FLAG_READONLY | MCA_BASE_PVAR_FLAG_CONTINUOUS,
                                              read_component_counter, NULL, NULL, (void *) counter);
    return rc < 0 ? rc : OPAL_SUCCESS;
}
