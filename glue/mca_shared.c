/* Settings the processes of a communicator must share for a component to
 * serve it (coll_rttcc's, osc_rttcc's).  Each process decides alone
 * whether it serves a communicator or a window; if the processes of one
 * decided differently (a rank started with another priority, another
 * coll_rttcc_min_bytes, or with the component left out), the collective
 * or the window would hang.  So each process publishes those settings in
 * the modex when its component opens, and a component serves only
 * communicators whose every process published the same: the same answer
 * on every rank, from the same data.  (Not covered: a process whose
 * component fails after the modex, out of memory attaching to the engine,
 * declines alone.) */
#include "opal_config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glue.h"

#include "opal/mca/pmix/pmix.h"
#include "opal/util/proc.h"

enum {
    kMaxComponents = 4,
    kVerdictUnknown = 0, /* verdict[vpid]: not looked up yet */
    kVerdictSame = 1,
    kVerdictAbsent = 2,   /* published nothing: it does not run the component */
    kVerdictDiffers = 3,  /* + the index of the first setting that differs */
};

typedef struct {
    const mca_base_component_t *component;
    int n;
    char names[RTTCC_MCA_MAX_SETTINGS][64];
    uint64_t values[RTTCC_MCA_MAX_SETTINGS];
    uint8_t *verdict; /* per vpid of this job, grown as vpids come */
    uint32_t nverdicts;
    bool warned;      /* the help text is said once per process and component */
} published_t;

static published_t published[kMaxComponents];
static pthread_mutex_t published_lock = PTHREAD_MUTEX_INITIALIZER;

/* The settings travel as 64-bit big-endian words. */
static void put_word(uint8_t *at, uint64_t v)
{
    for (int i = 7; i >= 0; --i, v >>= 8) {
        at[i] = (uint8_t) v;
    }
}
static uint64_t get_word(const uint8_t *at)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) {
        v = v << 8 | at[i];
    }
    return v;
}

static published_t *find_locked(const mca_base_component_t *component)
{
    for (int i = 0; i < kMaxComponents; ++i) {
        if (published[i].component == component) {
            return &published[i];
        }
    }
    return NULL;
}

int rttcc_mca_publish_settings(const mca_base_component_t *component, const rttcc_mca_setting_t *settings, int n)
{
    uint8_t blob[8 * RTTCC_MCA_MAX_SETTINGS];
    published_t *p;
    int rc;

    if (n < 1 || n > RTTCC_MCA_MAX_SETTINGS || NULL == opal_pmix.put) {
        return OPAL_ERR_BAD_PARAM;
    }
    pthread_mutex_lock(&published_lock);
    p = find_locked(component);
    if (NULL == p) {
        p = find_locked(NULL);
    }
    if (NULL == p) {
        pthread_mutex_unlock(&published_lock);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    free(p->verdict);
    memset(p, 0, sizeof *p);
    p->component = component;
    p->n = n;
    for (int i = 0; i < n; ++i) {
        snprintf(p->names[i], sizeof p->names[i], "%s", settings[i].name);
        p->values[i] = settings[i].value;
        put_word(blob + 8 * i, settings[i].value);
    }
    pthread_mutex_unlock(&published_lock);
    OPAL_MODEX_SEND(rc, OPAL_PMIX_GLOBAL, component, blob, 8 * (size_t) n);
    return rc;
}

void rttcc_mca_forget_settings(const mca_base_component_t *component)
{
    pthread_mutex_lock(&published_lock);
    published_t *p = find_locked(component);
    if (NULL != p) {
        free(p->verdict);
        memset(p, 0, sizeof *p);
    }
    pthread_mutex_unlock(&published_lock);
}

/* What process `name` published, compared with ours (p's lock not held:
 * the modex lookup may take a while; two threads may both look, alike). */
static uint8_t look_up(const published_t *p, const opal_process_name_t *name)
{
    opal_process_name_t peer = *name;
    uint8_t *blob = NULL;
    size_t size = 0;
    char *key = mca_base_component_to_string(p->component);
    int rc;

    if (NULL == key) {
        return kVerdictAbsent;
    }
    OPAL_MODEX_RECV_STRING(rc, key, &peer, &blob, &size);
    free(key);
    if (OPAL_SUCCESS != rc || NULL == blob) {
        return kVerdictAbsent;
    }
    uint8_t verdict = kVerdictSame;
    if (size != 8 * (size_t) p->n) {
        verdict = kVerdictDiffers; /* another rttcc version: its first setting is "the settings" */
    } else {
        for (int i = 0; i < p->n; ++i) {
            if (get_word(blob + 8 * i) != p->values[i]) {
                verdict = (uint8_t) (kVerdictDiffers + i);
                break;
            }
        }
    }
    free(blob);
    return verdict;
}

/* The verdict on `vpid` (lock held), kVerdictUnknown if there is none yet. */
static uint8_t verdict_locked(const published_t *p, uint32_t vpid)
{
    return vpid < p->nverdicts ? p->verdict[vpid] : kVerdictUnknown;
}

static void keep_verdict_locked(published_t *p, uint32_t vpid, uint8_t verdict)
{
    if (vpid >= p->nverdicts) {
        uint32_t n = p->nverdicts ? p->nverdicts : 64;
        while (n <= vpid && n < UINT32_MAX / 2) {
            n *= 2;
        }
        uint8_t *grown = n > vpid ? realloc(p->verdict, n) : NULL;
        if (NULL == grown) {
            return; /* looked up again next time */
        }
        memset(grown + p->nverdicts, kVerdictUnknown, n - p->nverdicts);
        p->verdict = grown;
        p->nverdicts = n;
    }
    p->verdict[vpid] = verdict;
}

bool rttcc_mca_same_settings(const mca_base_component_t *component, const opal_process_name_t *name,
                             const char *where)
{
    published_t copy;
    pthread_mutex_lock(&published_lock);
    published_t *p = find_locked(component);
    if (NULL == p || name->jobid != OPAL_PROC_MY_NAME.jobid) {
        pthread_mutex_unlock(&published_lock);
        return false;
    }
    uint8_t verdict = verdict_locked(p, name->vpid);
    if (kVerdictSame == verdict) {
        pthread_mutex_unlock(&published_lock);
        return true;
    }
    copy = *p;
    pthread_mutex_unlock(&published_lock);
    if (kVerdictUnknown == verdict) {
        verdict = look_up(&copy, name);
        pthread_mutex_lock(&published_lock);
        if (p->component == component) {
            keep_verdict_locked(p, name->vpid, verdict);
        }
        pthread_mutex_unlock(&published_lock);
        if (kVerdictSame == verdict) {
            return true;
        }
    }
    pthread_mutex_lock(&published_lock);
    const bool say = p->component == component && !p->warned;
    if (say) {
        p->warned = true;
    }
    pthread_mutex_unlock(&published_lock);
    if (say) {
        char what[160];
        const char *framework = component->mca_type_name, *self = component->mca_component_name;
        if (kVerdictAbsent == verdict) {
            snprintf(what, sizeof what, "it does not run %s_%s", framework, self);
        } else {
            const int i = verdict - kVerdictDiffers;
            snprintf(what, sizeof what, "its %s differs from this process's (%lld here)", copy.names[i],
                     (long long) copy.values[i]);
        }
        rttcc_mca_show_help(false, "settings differ", framework, self, opal_process_info.nodename,
                            OPAL_NAME_PRINT(OPAL_PROC_MY_NAME), where, OPAL_NAME_PRINT(*name), what, framework, self);
    }
    return false;
}
