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

/* A registration (btl_rttcc_rdma.c), as ob1 carries it to the peer in its
 * RGET header (as bytes). */
struct mca_btl_base_registration_handle_t {
    uint64_t base; /* address of the registered memory in its process */
    uint64_t len;  /* bytes registered */
    uint32_t key;  /* exposure to the peer (0: registered for local writes only) */
    uint32_t pad;
};

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
    uint32_t window;                             /* the engine RMA window its registrations expose */
    struct rttcc_get_t *gets;                    /* gets in flight (btl_rttcc_rdma.c) */
    opal_mutex_t gets_lock;                      /* guards gets when MPI threads are on */
} mca_btl_rttcc_module_t;

/* The component's MPI_T counters (btl_rttcc_<name>), beside the engine's. */
#define MCA_BTL_RTTCC_COUNTERS(X)                                                        \
    X(rdma_gets, "gets of ob1's RGET protocol: messages above the eager limit read from the sender") \
    X(rdma_get_bytes, "bytes those gets read")

typedef struct mca_btl_rttcc_component_t {
    mca_btl_base_component_3_0_0_t super;
    int verbose;                    /* btl_rttcc_verbose */
    int output;                     /* opal_output stream */
    mca_btl_rttcc_module_t *module; /* the single module, once initialized */
    struct {
#define BTL_RTTCC_COUNTER_FIELD(name, help) volatile int64_t name;
        MCA_BTL_RTTCC_COUNTERS(BTL_RTTCC_COUNTER_FIELD)
#undef BTL_RTTCC_COUNTER_FIELD
    } counters;
} mca_btl_rttcc_component_t;

#define BTL_RTTCC_COUNT(name, n) OPAL_THREAD_ADD_FETCH64(&mca_btl_rttcc_component.counters.name, (n))

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

/* btl_rttcc_rdma.c: btl_get (ob1's RGET) over engine exposures and gets */
int mca_btl_rttcc_rdma_init(mca_btl_rttcc_module_t *module);
/* Closes the RMA window and forgets the gets still tracked (the engine
 * still open: a late reply finds none); fini, once the engine is closed
 * and no reply can land, destroys their lock. */
void mca_btl_rttcc_rdma_close(mca_btl_rttcc_module_t *module);
void mca_btl_rttcc_rdma_fini(mca_btl_rttcc_module_t *module);
struct mca_btl_base_registration_handle_t *mca_btl_rttcc_register_mem(struct mca_btl_base_module_t *btl,
                                                                      struct mca_btl_base_endpoint_t *ep,
                                                                      void *base, size_t size, uint32_t flags);
int mca_btl_rttcc_deregister_mem(struct mca_btl_base_module_t *btl, struct mca_btl_base_registration_handle_t *h);
int mca_btl_rttcc_get(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep, void *local_address,
                      uint64_t remote_address, struct mca_btl_base_registration_handle_t *local_handle,
                      struct mca_btl_base_registration_handle_t *remote_handle, size_t size, int flags,
                      int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata);
void mca_btl_rttcc_on_put(void *user, uint32_t peer, uint32_t key, uint64_t offset, size_t len, uint8_t tag);
void mca_btl_rttcc_fail_gets(mca_btl_rttcc_module_t *module, uint32_t peer);

END_C_DECLS
#endif
