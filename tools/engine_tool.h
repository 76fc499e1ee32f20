/* What tools/engine_pingpong and tools/engine_cost share: an engine made
 * with its parameters from the environment, as mpirun's --mca rttcc_<name>
 * would set them (RTTCC_AUTH=none, RTTCC_DATA_MTU=1500, ...: any
 * RTTCC_<NAME> the config knows).  Each tool is one file compiled on its own. */
#ifndef RTTCC_ENGINE_TOOL_H
#define RTTCC_ENGINE_TOOL_H

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rttcc/config.h"
#include "rttcc/engine.h"
#include "tool_buffer.h"

/* Sets one parameter from text (the way an MCA string would); false if
 * the text is not a value of it. */
static inline bool engine_tool_set_param(rttcc_config_t *c, const rttcc_param_t *p, const char *v)
{
    char *field = (char *) c + p->offset, *end = NULL;
    switch (p->type) {
    case RTTCC_PARAM_UINT: {
        const unsigned long x = strtoul(v, &end, 0);
        if (end == v || *end) return false;
        *(unsigned *) field = (unsigned) x;
        return true;
    }
    case RTTCC_PARAM_BOOL:
        *(bool *) field = !strcmp(v, "1") || !strcmp(v, "true");
        return true;
    case RTTCC_PARAM_DOUBLE:
        *(double *) field = strtod(v, &end);
        return end != v && !*end;
    case RTTCC_PARAM_STRING:
        *(const char **) field = v;
        return true;
    case RTTCC_PARAM_ENUM:
        for (const rttcc_enum_value_t *e = p->values; e && e->name; ++e)
            if (!strcmp(e->name, v)) {
                *(int *) field = e->value;
                return true;
            }
        return false;
    }
    return false;
}

/* RTTCC_<NAME>=value for each parameter of the config, as mpirun's
 * --mca rttcc_<name> would set it. */
static inline void engine_tool_config_from_env(const char *who, rttcc_config_t *c)
{
    size_t n = 0;
    const rttcc_param_t *params = rttcc_config_params(&n);
    for (size_t i = 0; i < n; ++i) {
        char name[96] = "RTTCC_";
        size_t k = strlen(name);
        for (const char *s = params[i].name; *s && k + 1 < sizeof name; ++s) name[k++] = (char) toupper(*s);
        name[k] = 0;
        const char *v = getenv(name);
        if (v && !engine_tool_set_param(c, &params[i], v)) {
            fprintf(stderr, "%s: %s=%s is not a value of rttcc_%s\n", who, name, v, params[i].name);
            exit(2);
        }
    }
}

/* An engine of process `self` of a two-process job on the interface of
 * `cidr`, its parameters from the environment, without a liveness agent
 * (the tools poll); exits with `who`'s message if it cannot be made. */
static inline rttcc_engine_t *engine_tool_make(const char *who, uint32_t self, const char *cidr,
                                               const rttcc_callbacks_t *cb)
{
    rttcc_config_t c;
    rttcc_config_defaults(&c);
    engine_tool_config_from_env(who, &c);
    c.self = self;
    c.job_key = 0x7e57;
    c.agent = false;
    c.if_include = (char *) cidr; /* read, never written */
    rttcc_engine_t *e = NULL;
    char err[256];
    if (RTTCC_OK != rttcc_engine_create(&c, cb, &e, err, sizeof err)) {
        fprintf(stderr, "%s: engine %u at %s: %s\n", who, self, cidr, err);
        exit(1);
    }
    return e;
}

#endif
