/* Engines of this process: creation from the parameters, wire-up through
 * the modex, the process engine coll_rttcc puts through, finalize. */
#include "opal_config.h"

#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "glue.h"

#include "ompi/proc/proc.h"
#include "opal/mca/pmix/pmix.h"
#include "opal/util/output.h"

/* One engine a component opened.  At most the BTL's and the MTL's live. */
typedef struct opened {
    rttcc_engine_t *engine;
    const mca_base_component_t *owner;
    char kind[8];   /* "BTL", "MTL": how help texts name the owner */
    int output;     /* the owner's verbose stream */
    bool stats;     /* rttcc_stats, as at open */
    char *rtt_dump; /* rttcc_rtt_dump, copied (MCA strings are gone by finalize) */
} opened_t;

enum { MAX_ENGINES = 4 };
static opened_t engines[MAX_ENGINES];
static pthread_mutex_t engines_lock = PTHREAD_MUTEX_INITIALIZER;

/* The entry of `engine`; with NULL, a free one. */
static opened_t *find_locked(const rttcc_engine_t *engine)
{
    for (int i = 0; i < MAX_ENGINES; ++i) {
        if (engines[i].engine == engine) {
            return &engines[i];
        }
    }
    return NULL;
}

static const char *topic_of(int rc)
{
    return RTTCC_ERR_CLOCK == rc       ? "clock domain unavailable"
           : RTTCC_ERR_TIMESTAMP == rc ? "timestamps unavailable"
                                       : "engine failed";
}

/* Creates the engine; on failure says why, once per node. */
static rttcc_engine_t *create(const char *kind, const rttcc_callbacks_t *callbacks, bool mpi_threads,
                              uint32_t max_message)
{
    rttcc_config_t cfg = *rttcc_mca_config();
    rttcc_engine_t *engine = NULL;
    char err[256];
    int rc;

    cfg.thread_safe = mpi_threads; /* Open MPI's own progress thread never calls ours: MPI threads need locks */
    cfg.job_key = rttcc_mca_job_key();
    cfg.self = OPAL_PROC_MY_NAME.vpid;
    if (0 != max_message) {
        cfg.max_message = max_message;
    }
    rc = rttcc_engine_create(&cfg, callbacks, &engine, err, sizeof err);
    if (RTTCC_OK != rc) {
        rttcc_mca_show_help(true, topic_of(rc), kind, opal_process_info.nodename, err);
        return NULL;
    }
    return engine;
}

int rttcc_mca_engine_open(const mca_base_component_t *component, const rttcc_callbacks_t *callbacks,
                          bool mpi_threads, uint32_t max_message, int output, rttcc_engine_t **out)
{
    const rttcc_config_t *cfg = rttcc_mca_config();
    opened_t entry = {.owner = component, .output = output, .stats = cfg->stats};
    char addr[256];
    int rc, len;

    for (size_t i = 0; i + 1 < sizeof entry.kind && component->mca_type_name[i]; ++i) {
        entry.kind[i] = (char) toupper((unsigned char) component->mca_type_name[i]);
    }
    *out = NULL;
    entry.engine = create(entry.kind, callbacks, mpi_threads, max_message);
    if (NULL == entry.engine) {
        return OPAL_ERROR;
    }
    len = rttcc_engine_local_address(entry.engine, addr, sizeof addr);
    rc = OPAL_ERR_OUT_OF_RESOURCE;
    if (len > 0) {
        OPAL_MODEX_SEND(rc, OPAL_PMIX_GLOBAL, component, addr, len);
    }
    if (NULL != cfg->rtt_dump && '\0' != cfg->rtt_dump[0]) {
        entry.rtt_dump = strdup(cfg->rtt_dump);
    }
    pthread_mutex_lock(&engines_lock);
    opened_t *slot = OPAL_SUCCESS == rc ? find_locked(NULL) : NULL;
    if (NULL != slot) {
        *slot = entry;
    }
    pthread_mutex_unlock(&engines_lock);
    if (NULL == slot) {
        free(entry.rtt_dump);
        rttcc_engine_destroy(entry.engine);
        return OPAL_SUCCESS == rc ? OPAL_ERR_OUT_OF_RESOURCE : rc;
    }
    opal_output_verbose(10, output, "%s:%s: %s wire up, window %u, credits %u, threads %s: %s",
                        component->mca_type_name, component->mca_component_name,
                        rttcc_engine_wire_name(entry.engine), cfg->window, cfg->send_credits,
                        mpi_threads ? "locked" : "single", rttcc_engine_notes(entry.engine));
    *out = entry.engine;
    return OPAL_SUCCESS;
}

void rttcc_mca_engine_close(rttcc_engine_t *engine)
{
    opened_t entry = {0};
    char err[512];

    if (NULL == engine) {
        return;
    }
    pthread_mutex_lock(&engines_lock);
    opened_t *slot = find_locked(engine);
    if (NULL != slot) {
        entry = *slot;
        memset(slot, 0, sizeof *slot);
    }
    pthread_mutex_unlock(&engines_lock);
    if (NULL == slot) {
        return;
    }
    /* Let the last ACKs out and wait (bounded) for ours: peers may be finalizing too. */
    int left = rttcc_engine_drain(engine, 500);
    if (0 != left) {
        opal_output_verbose(1, entry.output,
                            "%s:%s: %d segments still unacknowledged after 500 ms at finalize "
                            "(a peer finished first and its last ACK was lost, or it is gone)",
                            entry.owner->mca_type_name, entry.owner->mca_component_name, left);
    }
    if (entry.stats) {
        rttcc_mca_print_stats(engine, OPAL_PROC_MY_NAME.vpid, (size_t) ompi_proc_world_size());
    }
    if (NULL != entry.rtt_dump) {
        opal_output_verbose(10, entry.output, "rttcc: writing the RTT table to %s.%u.{csv,json}", entry.rtt_dump,
                            OPAL_PROC_MY_NAME.vpid);
        if (RTTCC_OK != rttcc_engine_dump_rtt(engine, entry.rtt_dump, OPAL_PROC_MY_NAME.vpid,
                                              opal_process_info.nodename, err, sizeof err)) {
            rttcc_mca_show_help(false, "rtt dump failed", entry.kind, opal_process_info.nodename,
                                OPAL_NAME_PRINT(OPAL_PROC_MY_NAME), err);
        }
        free(entry.rtt_dump);
    }
    rttcc_engine_destroy(engine);
}

rttcc_engine_t *rttcc_mca_engine_of(const mca_base_component_t *component)
{
    rttcc_engine_t *engine = NULL;
    pthread_mutex_lock(&engines_lock);
    for (int i = 0; i < MAX_ENGINES && NULL == engine; ++i) {
        if (engines[i].owner == component) {
            engine = engines[i].engine;
        }
    }
    pthread_mutex_unlock(&engines_lock);
    return engine;
}

rttcc_engine_t *rttcc_mca_process_engine(void)
{
    rttcc_engine_t *engine = NULL;
    pthread_mutex_lock(&engines_lock);
    for (int i = 0; i < MAX_ENGINES; ++i) {
        if (NULL != engines[i].engine && (NULL == engine || 0 == strcmp(engines[i].kind, "MTL"))) {
            engine = engines[i].engine;
        }
    }
    pthread_mutex_unlock(&engines_lock);
    return engine;
}

/* Adds process `name` to `engine` unless it is a peer already; on failure
 * writes why into `why`. */
static int add_peer(rttcc_engine_t *engine, const opal_process_name_t *name, char *why, size_t cap)
{
    const mca_base_component_t *owner = NULL;
    opal_process_name_t peer = *name;
    void *addr = NULL;
    size_t size = 0;
    int rc;

    if (name->jobid != OPAL_PROC_MY_NAME.jobid) {
        snprintf(why, cap, "it belongs to another job");
        return OPAL_ERR_UNREACH;
    }
    if (name->vpid == OPAL_PROC_MY_NAME.vpid || 0 != rttcc_engine_peer_segment_size(engine, name->vpid)) {
        return OPAL_SUCCESS;
    }
    pthread_mutex_lock(&engines_lock);
    opened_t *slot = NULL != engine ? find_locked(engine) : NULL;
    owner = NULL != slot ? slot->owner : NULL;
    pthread_mutex_unlock(&engines_lock);
    if (NULL == owner) {
        snprintf(why, cap, "its engine is closed");
        return OPAL_ERR_UNREACH;
    }
    OPAL_MODEX_RECV(rc, owner, &peer, &addr, &size);
    if (OPAL_SUCCESS != rc) {
        snprintf(why, cap, "it published no %s_%s address", owner->mca_type_name, owner->mca_component_name);
        return OPAL_ERR_NOT_FOUND;
    }
    rc = rttcc_engine_add_peer(engine, name->vpid, addr, size, why, cap);
    free(addr);
    /* Another thread may have added it meanwhile: the engine refused the second add. */
    return RTTCC_OK == rc || 0 != rttcc_engine_peer_segment_size(engine, name->vpid) ? OPAL_SUCCESS
                                                                                    : OPAL_ERR_UNREACH;
}

int rttcc_mca_engine_add_peer(rttcc_engine_t *engine, const opal_process_name_t *name)
{
    char why[256];
    int rc = add_peer(engine, name, why, sizeof why);
    if (OPAL_SUCCESS != rc && OPAL_ERR_NOT_FOUND != rc) {
        rttcc_mca_show_help(false, "unreachable process", opal_process_info.nodename, OPAL_NAME_PRINT(*name),
                            why);
    }
    return rc;
}

bool rttcc_mca_reach(const opal_process_name_t *name, uint32_t *index)
{
    rttcc_engine_t *engine = rttcc_mca_process_engine();
    char why[256];
    if (NULL == engine || OPAL_SUCCESS != add_peer(engine, name, why, sizeof why)) {
        return false;
    }
    *index = name->vpid;
    return true;
}

void rttcc_mca_report_dead_peer(rttcc_engine_t *engine, uint32_t peer, const char *why)
{
    opal_process_name_t name = OPAL_PROC_MY_NAME;
    char kind[8] = "";
    opal_proc_t *proc;
    char *host;

    pthread_mutex_lock(&engines_lock);
    opened_t *slot = find_locked(engine);
    if (NULL != slot) {
        memcpy(kind, slot->kind, sizeof kind);
    }
    pthread_mutex_unlock(&engines_lock);
    name.vpid = peer;
    proc = opal_proc_for_name(name);
    host = NULL != proc ? opal_get_proc_hostname(proc) : NULL;
    rttcc_mca_show_help(false, "peer dead", kind, opal_process_info.nodename, OPAL_NAME_PRINT(OPAL_PROC_MY_NAME),
                        OPAL_NAME_PRINT(name), NULL != host ? host : "an unknown host", why);
}
