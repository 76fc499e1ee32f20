/*
 * coll_rttcc: MPI_Alltoall and MPI_Alltoallv as one-sided puts through the
 * rttcc engine, in the order the RTT table suggests.  The data path is the
 * engine's exchange (include/rttcc/exchange.h); this layer maps datatypes,
 * communicators and MCA parameters onto it and keeps the previously
 * selected module for everything it does not serve.
 */
#ifndef MCA_COLL_RTTCC_H
#define MCA_COLL_RTTCC_H

#include "ompi_config.h"

#include "mpi.h"
#include "ompi/communicator/communicator.h"
#include "ompi/mca/coll/coll.h"
#include "opal/threads/mutex.h"

#include "rttcc/exchange.h"
#include "rttcc/tags.h"

BEGIN_C_DECLS

/* Counters exported as MPI_T performance variables. */
#define MCA_COLL_RTTCC_COUNTERS(X)                                                    \
    X(calls, "alltoall and alltoallv calls served by coll_rttcc")                     \
    X(deferrals, "peers the scheduler set aside because their RTT was too high")     \
    X(forced, "peers started although not eligible (reorder window, backoff, idle)") \
    X(rtr_waits, "peers picked before their ready-to-receive message had come")      \
    X(puts, "puts issued")                                                            \
    X(eager, "blocks sent with the ready-to-receive message instead of put")          \
    X(bytes, "bytes put or sent with the ready-to-receive message")                   \
    X(delegated, "calls handed to the previously selected module")

typedef struct mca_coll_rttcc_counters_t {
#define MCA_COLL_RTTCC_COUNTER_FIELD(name, help) volatile int64_t name;
    MCA_COLL_RTTCC_COUNTERS(MCA_COLL_RTTCC_COUNTER_FIELD)
#undef MCA_COLL_RTTCC_COUNTER_FIELD
} mca_coll_rttcc_counters_t;

typedef struct mca_coll_rttcc_component_t {
    mca_coll_base_component_2_0_0_t super;
    int priority;                  /* coll_rttcc_priority */
    int verbose;                   /* coll_rttcc_verbose */
    int output;                    /* opal_output stream */
    rttcc_exchange_params_t xp;    /* scheduler and segment parameters */
    size_t min_bytes;              /* calls moving less per peer go to the previous module */
    rttcc_exchange_hub_t *hub;     /* the exchanges' hub on the process engine, if there is one */
    mca_coll_rttcc_counters_t counters;
} mca_coll_rttcc_component_t;

typedef struct mca_coll_rttcc_module_t {
    mca_coll_base_module_t super;
    /* The functions this module replaced, to delegate to. */
    mca_coll_base_module_alltoall_fn_t prev_alltoall;
    mca_coll_base_module_t *prev_alltoall_module;
    mca_coll_base_module_alltoallv_fn_t prev_alltoallv;
    mca_coll_base_module_t *prev_alltoallv_module;
    rttcc_exchange_t *exchange;    /* the calls' state */
    rttcc_xpeer_t *peers;          /* by rank: the engine's index of the peer (set once), the call's blocks */
    uint64_t seq;                  /* calls so far on this communicator */
    void *send_stage;              /* packed outgoing blocks (derived types, MPI_IN_PLACE) */
    size_t send_stage_size;
    void *recv_stage;              /* packed landing area (derived receive types) */
    size_t recv_stage_size;
} mca_coll_rttcc_module_t;
OBJ_CLASS_DECLARATION(mca_coll_rttcc_module_t);

OMPI_MODULE_DECLSPEC extern mca_coll_rttcc_component_t mca_coll_rttcc_component;

/* coll_rttcc_module.c */
mca_coll_base_module_t *mca_coll_rttcc_comm_query(struct ompi_communicator_t *comm, int *priority);

/* coll_rttcc_alltoall.c */
int mca_coll_rttcc_alltoall(const void *sbuf, int scount, struct ompi_datatype_t *sdtype, void *rbuf, int rcount,
                            struct ompi_datatype_t *rdtype, struct ompi_communicator_t *comm,
                            mca_coll_base_module_t *module);
int mca_coll_rttcc_alltoallv(const void *sbuf, const int *scounts, const int *sdisps, struct ompi_datatype_t *sdtype,
                             void *rbuf, const int *rcounts, const int *rdisps, struct ompi_datatype_t *rdtype,
                             struct ompi_communicator_t *comm, mca_coll_base_module_t *module);

END_C_DECLS
#endif
