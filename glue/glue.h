/*
 * What the glue's files share among themselves (hidden: the components see
 * include/rttcc/mca.h only).
 */
#ifndef RTTCC_GLUE_H
#define RTTCC_GLUE_H

#include <stddef.h>
#include <stdint.h>

#include "rttcc/mca.h"

/* mca_params.c: the parameters once, and `component`'s synonyms. */
int rttcc_mca_register_params(const mca_base_component_t *component);
/* The job's key, which every datagram carries: the same for every process
 * of the job (mpirun's jobid, mixed so neighbouring jobids differ widely).
 * A cheap filter of other jobs' datagrams; the MAC keeps forgeries out. */
uint32_t rttcc_mca_job_key(void);

/* mca_pvars.c: `component`'s MPI_T variables over the engine it opens. */
int rttcc_mca_register_pvars(const mca_base_component_t *component);

/* mca_engine.c: the engine `component` opened, or NULL. */
rttcc_engine_t *rttcc_mca_engine_of(const mca_base_component_t *component);

/* mca_stats.c: the rttcc-stats lines of an engine, peers below `npeers`. */
void rttcc_mca_print_stats(rttcc_engine_t *engine, uint32_t self, size_t npeers);

#endif
