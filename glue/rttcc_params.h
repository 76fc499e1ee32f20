/*
 * The engine's tunables (common/api/config.cc's table) as MCA variables of a
 * component: btl_rttcc_* or mtl_rttcc_*, whichever creates the engine.
 */
#ifndef RTTCC_PARAMS_H
#define RTTCC_PARAMS_H

#include "opal/mca/base/base.h"

#include "rttcc/config.h"

/* Fills `cfg` with the defaults and registers one variable per field. */
void rttcc_register_engine_params(const mca_base_component_t *component, rttcc_config_t *cfg);

/* The job's key, which every datagram carries: the same for every process
 * of the job (mpirun's jobid, which ORTE derives from mpirun's host and pid,
 * mixed so neighbouring jobids differ widely).  A cheap filter of other
 * jobs' datagrams, guessable by anyone: the MAC (engine's mac.h, keyed by
 * secrets from the modex) is what keeps forged datagrams out. */
uint32_t rttcc_job_key(void);

#endif
