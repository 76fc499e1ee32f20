/* The RTT table outside the engine: MPI_T performance variables bound to a
 * communicator (one value per rank of it, the rank's row as seen from this
 * process) and the btl_rttcc_rtt_dump files written at finalize. */
#include <stdio.h>

#include "btl_rttcc.h"

#include "ompi/communicator/communicator.h"
#include "ompi/group/group.h"
#include "opal/mca/base/mca_base_pvar.h"
#include "opal/util/output.h"
#include "opal/util/proc.h"

/* One table column exported through MPI_T. */
typedef struct rtt_pvar {
    const char *name; /* after btl_rttcc_ */
    const char *help;
    bool is_double;   /* microseconds or segments (double), else a count (unsigned long) */
    double (*value)(const rttcc_rtt_row_t *row);
} rtt_pvar_t;

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

static const rtt_pvar_t rtt_pvars[] = {
    {"rtt_srtt", "Smoothed RTT to each rank of the communicator, microseconds (0: no sample yet)", true, srtt_us},
    {"rtt_rttvar", "RTT variation (RFC 6298 RTTVAR) to each rank, microseconds", true, rttvar_us},
    {"rtt_min", "Smallest RTT sample to each rank, microseconds", true, min_us},
    {"rtt_max", "Largest RTT sample to each rank, microseconds", true, max_us},
    {"rtt_owd_fwd", "One-way delay to each rank, microseconds (0: unknown in this clock domain)", true, owd_fwd_us},
    {"rtt_owd_rev", "One-way delay from each rank, microseconds (0: unknown)", true, owd_rev_us},
    {"rtt_clock_offset", "Each rank's clock minus ours, microseconds (0: unknown)", true, offset_us},
    {"rtt_cwnd", "Congestion window towards each rank, segments (0: btl_rttcc_cc is none)", true, cwnd},
    {"rtt_losses", "Segments lost (timeouts, fast retransmits) and probes lost, per rank", false, losses},
    {"rtt_retransmits", "Segments retransmitted to each rank", false, retransmits},
    {"rtt_samples", "RTT samples taken from data ACKs of each rank", false, samples},
    {"rtt_probe_samples", "RTT samples taken from probe replies of each rank", false, probe_samples},
};

/* Binding to a communicator: one value per rank. */
static int rtt_notify(struct mca_base_pvar_t *pvar, mca_base_pvar_event_t event, void *obj, int *count)
{
    if (MCA_BASE_PVAR_HANDLE_BIND == event) {
        *count = ompi_comm_size((ompi_communicator_t *) obj); /* the MPI layer passes the communicator itself */
    }
    return OPAL_SUCCESS;
}

static int rtt_read(const struct mca_base_pvar_t *pvar, void *value, void *obj)
{
    const rtt_pvar_t *column = (const rtt_pvar_t *) pvar->ctx;
    ompi_communicator_t *comm = (ompi_communicator_t *) obj;
    rttcc_engine_t *engine = mca_btl_rttcc_pvar_engine();
    int n = ompi_comm_size(comm);

    for (int i = 0; i < n; ++i) {
        opal_process_name_t name = ompi_group_get_proc_name(comm->c_remote_group, i);
        rttcc_rtt_row_t row;
        double v = 0;
        if (NULL != engine && RTTCC_OK == rttcc_engine_rtt_row(engine, name.vpid, &row)) {
            v = column->value(&row);
        }
        if (column->is_double) {
            ((double *) value)[i] = v;
        } else {
            ((unsigned long *) value)[i] = (unsigned long) v;
        }
    }
    return OPAL_SUCCESS;
}

int mca_btl_rttcc_register_rtt_pvars(void)
{
    const mca_base_component_t *c = &mca_btl_rttcc_component.super.btl_version;
    for (size_t i = 0; i < sizeof rtt_pvars / sizeof rtt_pvars[0]; ++i) {
        const rtt_pvar_t *p = &rtt_pvars[i];
        (void) mca_base_component_pvar_register(
            c, p->name, p->help, OPAL_INFO_LVL_4, MCA_BASE_PVAR_CLASS_GENERIC,
            p->is_double ? MCA_BASE_VAR_TYPE_DOUBLE : MCA_BASE_VAR_TYPE_UNSIGNED_LONG, NULL,
            MCA_BASE_VAR_BIND_MPI_COMM, MCA_BASE_PVAR_FLAG_READONLY | MCA_BASE_PVAR_FLAG_CONTINUOUS,
            rtt_read, NULL, rtt_notify, (void *) p);
    }
    return OPAL_SUCCESS;
}

/* btl_rttcc_rtt_dump: this process's table as PATH.<rank>.csv / .json. */
void mca_btl_rttcc_dump_rtt(mca_btl_rttcc_module_t *m)
{
    const char *prefix = m->rtt_dump;
    char err[512];

    if (NULL == prefix || '\0' == *prefix) {
        return;
    }
    opal_output_verbose(10, mca_btl_rttcc_component.output, "btl:rttcc: writing the RTT table to %s.%u.{csv,json}",
                        prefix, OPAL_PROC_MY_NAME.vpid);
    if (RTTCC_OK != rttcc_engine_dump_rtt(m->engine, prefix, OPAL_PROC_MY_NAME.vpid,
                                          opal_process_info.nodename, err, sizeof err)) {
        mca_btl_rttcc_show_help(false, "rtt dump failed", opal_process_info.nodename,
                                OPAL_NAME_PRINT(OPAL_PROC_MY_NAME), err);
    }
}
