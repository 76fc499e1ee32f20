/*
 * btl_rttcc: the thin Open MPI glue over the rttcc engine (common/).
 * The engine does the protocol; this layer maps BTL descriptors, tags and
 * procs onto it.  What it shares with mtl_rttcc (parameters, engine
 * creation, wire-up, MPI_T, help texts) is in glue/ (rttcc/mca.h).
 */
#ifndef MCA_BTL_RTTCC_H
#define MCA_BTL_RTTCC_H

#include "opal_config.h"

#include "opal/class/opal_free_list.h"
#include "opal/threads/mutex.h"
#include "opal/mca/btl/btl.h"
#include "opal/util/proc.h"

#include "rttcc/mca.h"

BEGIN_C_DECLS

/* One per reachable peer process. */
struct mca_btl_base_endpoint_t {
    opal_proc_t *proc; /* the peer */
    uint32_t index;    /* the engine's name for it (its vpid) */
};
typedef struct mca_btl_base_endpoint_t mca_btl_rttcc_endpoint_t;

/* A descriptor free list and the buffer size of its descriptors. */
typedef struct mca_btl_rttcc_frag_list_t {
    opal_free_list_t list;
    size_t buf_size;
} mca_btl_rttcc_frag_list_t;

typedef struct mca_btl_rttcc_module_t {
    mca_btl_base_module_t super;
    rttcc_engine_t *engine;                      /* the protocol engine */
    mca_btl_rttcc_frag_list_t eager_frags;       /* descriptors with eager_limit bytes */
    mca_btl_rttcc_frag_list_t max_frags;         /* descriptors with max_send_size bytes */
    mca_btl_rttcc_endpoint_t **endpoints;        /* by vpid, NULL if unknown */
    size_t num_endpoints;                        /* size of endpoints */
    opal_mutex_t endpoints_lock;                 /* guards endpoints when MPI threads are on */
    mca_btl_base_module_error_cb_fn_t error_cb;  /* registered by the PML */
    size_t inline_max;                           /* rttcc_inline_max: sends up to it are copied */
} mca_btl_rttcc_module_t;

typedef struct mca_btl_rttcc_component_t {
    mca_btl_base_component_3_0_0_t super;
    int verbose;                    /* btl_rttcc_verbose */
    int output;                     /* opal_output stream */
    mca_btl_rttcc_module_t *module; /* the single module, once initialized */
} mca_btl_rttcc_component_t;

OPAL_MODULE_DECLSPEC extern mca_btl_rttcc_component_t mca_btl_rttcc_component;
extern mca_btl_rttcc_module_t mca_btl_rttcc_module_template;

/* btl_rttcc_params.c */
int mca_btl_rttcc_register_params(void);

/* btl_rttcc_module.c */
int mca_btl_rttcc_module_init(mca_btl_rttcc_module_t *module);
void mca_btl_rttcc_on_recv(void *user, uint32_t peer, uint8_t tag, const void *data, size_t len);
void mca_btl_rttcc_on_send_done(void *user, void *cookie, int status);
void mca_btl_rttcc_on_peer_dead(void *user, uint32_t peer, const char *why);
void mca_btl_rttcc_on_unknown_peer(void *user, uint32_t peer);

END_C_DECLS
#endif
