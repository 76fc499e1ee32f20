/*
 * rttcc-stats: the engine's counters on stderr at finalize, one line for the
 * process (every field, for scripts) and one per peer it exchanged with.
 */
#ifndef RTTCC_STATS_PRINT_H
#define RTTCC_STATS_PRINT_H

#include <stddef.h>
#include <stdint.h>

#include "rttcc/engine.h"

/* Peers are the engine indices below `npeers`; unknown ones are skipped. */
void rttcc_print_stats(rttcc_engine_t *engine, uint32_t self, size_t npeers);

#endif
