/*
 * The Open MPI side every rttcc component shares (glue/, built into
 * libmca_common_rttcc with the engine): the engine's MCA variables, its
 * help texts, engine creation and wire-up through the modex, the engine's
 * MPI_T variables and its finalize reports.  Include opal_config.h (or
 * ompi_config.h) first.
 */
#ifndef RTTCC_MCA_H
#define RTTCC_MCA_H

#include <stdarg.h>
#include <stdbool.h>

#include "opal/mca/base/base.h"
#include "opal/util/proc.h"

#include "rttcc/config.h"
#include "rttcc/engine.h"

BEGIN_C_DECLS
#pragma GCC visibility push(default)

/* ---------------------------------------------------------------- parameters */

/* Registers the engine's parameters, once per process, as rttcc_<name>
 * (RTTCC_PARAMS), and <component>_<name> synonyms for `component`
 * (btl_rttcc_window, mtl_rttcc_window, ...), and its own MPI_T variables
 * for the engine it will open (<component>_segs_tx, _rtt_srtt, ...). */
int rttcc_mca_register(const mca_base_component_t *component);

/* The values of the engine's parameters (after rttcc_mca_register). */
const rttcc_config_t *rttcc_mca_config(void);

/* The scheduler policies (RTTCC_SCHED_*, rttcc/exchange.h) as an MCA enum
 * called `name`, for a component's policy variable; the caller releases it
 * (OBJ_RELEASE) once registered. */
mca_base_var_enum_t *rttcc_mca_policy_enum(const char *name);

/* A component's own MPI_T counter: a continuous read-only pvar <component>_<name>
 * that reads *counter. */
int rttcc_mca_register_counter(const mca_base_component_t *component, const char *name, const char *help,
                               volatile int64_t *counter);

/* ---------------------------------------------------------------- help texts */

/* A topic of help-rttcc.txt on stderr.  `once_per_node`: only the node's
 * first local rank prints (the same words from every process add nothing). */
void rttcc_mca_show_help(bool once_per_node, const char *topic, ...);

/* ---------------------------------------------------------------- engines */

/* Opens `component`'s engine from the parameters (with `max_message` bytes
 * per message, 0 = the default) and publishes its address in the modex.
 * On failure says why (help text) and returns an OPAL error code. */
int rttcc_mca_engine_open(const mca_base_component_t *component, const rttcc_callbacks_t *callbacks,
                          bool mpi_threads, uint32_t max_message, int output, rttcc_engine_t **out);

/* At finalize: the last ACKs out (bounded wait), the rttcc-stats lines and
 * the RTT table dump if asked for, then the engine is destroyed. */
void rttcc_mca_engine_close(rttcc_engine_t *engine);

/* Makes process `name` a peer of `engine` from the address the engine's
 * component published, unless it is one already (any thread).
 * OPAL_ERR_NOT_FOUND, quietly, if it published none (it runs no such
 * engine); otherwise says why not (help text "unreachable process"). */
int rttcc_mca_engine_add_peer(rttcc_engine_t *engine, const opal_process_name_t *name);

/* The engine point-to-point traffic runs on: mtl_rttcc's while it lives
 * (pml/cm), else btl_rttcc's (pml/ob1); NULL if neither runs. */
rttcc_engine_t *rttcc_mca_process_engine(void);

/* The process engine's index for process `name` (its vpid), made a peer
 * first if need be; false, quietly, if it cannot be reached through it. */
bool rttcc_mca_reach(const opal_process_name_t *name, uint32_t *index);

/* A peer of `engine` was declared dead: the "peer dead" help text. */
void rttcc_mca_report_dead_peer(rttcc_engine_t *engine, uint32_t peer, const char *why);

/* ---------------------------------------------------------------- settings processes share */

/* A setting the processes of a communicator must share for a component
 * to serve it (one that decides whether, or how, it serves a call): its
 * parameter's name and value. */
#define RTTCC_MCA_MAX_SETTINGS 4
typedef struct {
    const char *name;
    uint64_t value;
} rttcc_mca_setting_t;

/* Publishes `component`'s settings in the modex; at component open, which
 * MPI_Init runs before its modex.  Outside an MPI process (ompi_info) it
 * does nothing and says OPAL_ERR_BAD_PARAM. */
int rttcc_mca_publish_settings(const mca_base_component_t *component, const rttcc_mca_setting_t *settings, int n);

/* At component close. */
void rttcc_mca_forget_settings(const mca_base_component_t *component);

/* True if process `name` published the same settings of `component` as
 * this process.  Else false (the same answer on both sides), and once per
 * process and component the "settings differ" help text names the setting,
 * or says that process does not run the component, and `where` (the
 * communicator or window being declined). */
bool rttcc_mca_same_settings(const mca_base_component_t *component, const opal_process_name_t *name,
                             const char *where);

#pragma GCC visibility pop
END_C_DECLS
#endif
