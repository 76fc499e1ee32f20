/*
 * mtl_rttcc: MPI point-to-point over the rttcc engine, behind pml/cm.
 *
 * The engine carries messages reliably but not in order; this layer adds
 * MPI matching (include/rttcc/matcher.h, which restores each sender's order)
 * and two protocols:
 *
 *   eager (<= eager_limit)  EAGER{hdr, data} -------------------------> match, copy out
 *   rendezvous (larger)     expose the data to the receiver alone
 *                           RTS{hdr, key} ---------------------------> match, grant the
 *                                                                      landing room per piece
 *                           engine serves <--- get(key, off, reply)    (<= the engine's max
 *                           the gets        --- reply lands in place -> message each)
 *                           revoke, done <----------------- FIN{sid}   all landed: done
 *
 * The receiver reads the message (rttcc/rma.h): the sender's engine serves
 * its gets, or its liveness agent while its application computes outside
 * MPI, so a large message reaches its receiver whatever the sender does.
 * A synchronous eager send also waits for a SYNC_ACK sent on match; a
 * rendezvous send is matched by the time its FIN comes.  Messages to this
 * process itself skip the engine (always eager, copied).  Until then either
 * may be cancelled (mtl_rttcc_cancel.c): CANCEL{sid, cid, seq} asks the
 * receiver, which answers CANCELLED{sid} if the message was not matched.
 * A receiver answers CANCELLED unasked too, for a message it drops
 * unreceived (malformed, or from a process that is not the rank it
 * claims): its sequence number is spent all the same, in its turn.
 *
 * A message the engine refuses (no memory) fails, but has taken its
 * sequence number: its receiver, which waits for that number, is owed
 * SKIP{seq}, sent from progress until the engine takes it
 * (mtl_rttcc_skip.c), and passes over the number in its turn.  A peer
 * declared dead is owed nothing.
 *
 * Locking: one mutex guards the matcher and the tables below.  It is never
 * held while completing a request (completions call into the PML), nor,
 * to keep it short, while sending through the engine.
 */
#ifndef MCA_MTL_RTTCC_H
#define MCA_MTL_RTTCC_H

#include "ompi_config.h"

#include "ompi/mca/mtl/mtl.h"
#include "opal/class/opal_hash_table.h"
#include "opal/class/opal_pointer_array.h"
#include "opal/threads/mutex.h"

#include "rttcc/matcher.h"
#include "rttcc/mca.h"
#include "rttcc/tags.h"

BEGIN_C_DECLS

/* Context ids we accept (as pml/ob1's 16 bits): the matcher's queues are
 * indexed by them. */
#define MTL_RTTCC_MAX_CID 65535

enum {
    MTL_RTTCC_EAGER = 1,
    MTL_RTTCC_RTS = 2,
    MTL_RTTCC_FIN = 3,
    MTL_RTTCC_SYNC_ACK = 4,
    MTL_RTTCC_CANCEL = 5,
    MTL_RTTCC_CANCELLED = 6,
    MTL_RTTCC_SKIP = 7
};
#define MTL_RTTCC_FLAG_SYNC 0x1 /* EAGER: answer with SYNC_ACK on match */

/* EAGER (followed by its data) and RTS: a message to be matched. */
typedef struct mtl_rttcc_match_hdr_t {
    uint8_t type;
    uint8_t flags;
    uint16_t reserved;
    uint32_t cid;  /* communicator's context id */
    int32_t src;   /* sender's rank in it */
    int32_t tag;
    uint32_t seq;  /* sender's sequence number towards this process */
    uint32_t sid;  /* sender's request slot (RTS, synchronous EAGER) */
    uint64_t len;  /* message bytes */
    uint32_t key;  /* RTS: the sender's exposure of the data to the receiver */
    uint32_t reserved2;
} mtl_rttcc_match_hdr_t;

/* FIN, SYNC_ACK and CANCELLED: the receiver's answer about the sender's slot `sid`. */
typedef struct mtl_rttcc_reply_hdr_t {
    uint8_t type;
    uint8_t reserved[3];
    uint32_t sid;
    uint32_t key;      /* FIN: the exposure it read (the RTS's key) */
    uint32_t reserved2;
    uint64_t accepted; /* FIN: bytes read (less than len: truncated; 0: none, or the receive failed) */
} mtl_rttcc_reply_hdr_t;

/* CANCEL: the sender asks to take back its message `seq` (slot `sid`). */
typedef struct mtl_rttcc_cancel_hdr_t {
    uint8_t type;
    uint8_t reserved[3];
    uint32_t sid;
    uint32_t cid;
    uint32_t seq;
} mtl_rttcc_cancel_hdr_t;

/* SKIP: the sender's message `seq` will never come (its engine refused it). */
typedef struct mtl_rttcc_skip_hdr_t {
    uint8_t type;
    uint8_t reserved[3];
    uint32_t seq;
} mtl_rttcc_skip_hdr_t;

/* A SKIP owed to process `peer`. */
typedef struct mtl_rttcc_owed_t {
    uint32_t peer;
    uint32_t seq;
} mtl_rttcc_owed_t;

/* What this process knows of a context id (pml/cm's add_comm, del_comm). */
typedef struct mtl_rttcc_comm_t {
    struct ompi_communicator_t *comm; /* while it lives here */
    bool freed;                       /* freed here, and no communicator took the id since */
} mtl_rttcc_comm_t;

/* MPI_T counters of the MTL. */
#define MCA_MTL_RTTCC_COUNTERS(X)                                                  \
    X(eager_sends, "messages sent eagerly (data with the match header)")           \
    X(rndv_sends, "messages sent by rendezvous (read by their receiver from the sender's memory)") \
    X(self_sends, "messages to this process itself")                               \
    X(unexpected, "messages that arrived before their receive was posted")         \
    X(out_of_order, "messages that arrived ahead of an earlier one of their sender") \
    X(truncated, "receives whose message was larger than their buffer")            \
    X(cancelled, "requests cancelled (receives not matched yet, sends their receiver had not matched)") \
    X(bad_messages, "malformed or unsolicited messages dropped")                   \
    X(stale, "messages dropped unreceived because their communicator was freed here") \
    X(skips_sent, "sequence numbers of messages the engine refused, given up to their receivers (SKIP)") \
    X(skips_received, "sequence numbers passed over: their sender's engine refused the message (SKIP)")

typedef struct mca_mtl_rttcc_counters_t {
#define MCA_MTL_RTTCC_COUNTER_FIELD(name, help) volatile int64_t name;
    MCA_MTL_RTTCC_COUNTERS(MCA_MTL_RTTCC_COUNTER_FIELD)
#undef MCA_MTL_RTTCC_COUNTER_FIELD
} mca_mtl_rttcc_counters_t;

typedef struct mca_mtl_rttcc_module_t {
    mca_mtl_base_module_t super;
    rttcc_engine_t *engine;
    uint32_t self;               /* this process's engine index (its vpid) */
    size_t eager_limit;          /* mtl_rttcc_eager_limit */
    size_t get_size;             /* largest get: the engine's largest message */
    uint32_t window;             /* RMA window of the rendezvous sends' exposures */
    opal_mutex_t lock;           /* the matcher and the tables below */
    rttcc_matcher_t *matcher;
    size_t held_max;             /* arrivals it holds from one sender (all: 4x) */
    uint32_t *tx_seq;            /* next sequence number towards each peer */
    size_t num_tx_seq;
    mtl_rttcc_comm_t *comms;     /* by context id */
    size_t num_comms;
    opal_pointer_array_t slots;  /* sends waiting for a FIN or SYNC_ACK, by sid */
    opal_hash_table_t landing;   /* rendezvous receives by the grant key of a get's reply */
    opal_hash_table_t cancelled; /* (peer << 32 | seq) of messages cancelled before their turn came */
    mtl_rttcc_owed_t *owed;      /* SKIPs owed, with room kept for those being sent */
    size_t num_owed;             /* (also read without the lock: nothing owed is the rule) */
    size_t sending_skips, max_owed;
    double skips_refused_since;  /* ms (CLOCK_MONOTONIC) of the first of the SKIP refusals in a row, 0: none */
    double skips_refused_last;   /* ms of the latest of them (a longer pause than MTL_RTTCC_SKIP_GAP_MS restarts the row) */
} mca_mtl_rttcc_module_t;

typedef struct mca_mtl_rttcc_component_t {
    mca_mtl_base_component_2_0_0_t super;
    int priority;
    int verbose;
    int output;
    int eager_limit;
    int held_max;                /* mtl_rttcc_held_max (0: 16 x window) */
    mca_mtl_rttcc_counters_t counters;
} mca_mtl_rttcc_component_t;

OMPI_MODULE_DECLSPEC extern mca_mtl_rttcc_component_t mca_mtl_rttcc_component;
extern mca_mtl_rttcc_module_t ompi_mtl_rttcc;

/* One request of the PML (the space it reserves after ompi_request_t). */
typedef struct mca_mtl_rttcc_request_t {
    mca_mtl_request_t super;
    rttcc_match_item_t match;        /* receives: the posted entry */
    bool is_send;
    uint32_t peer;                   /* engine index of the other side */
    struct opal_convertor_t *convertor;
    void *buf;                       /* sends: packed data; receives: rendezvous landing room */
    size_t buf_len;
    bool buf_owned;                  /* buf was allocated here */
    volatile int32_t pending;        /* sends: completions owed (engine sends, a reply);
                                      * receives: gets not landed (under the lock) */
    int error;                       /* MPI error to complete with */
    mtl_rttcc_match_hdr_t hdr;       /* sends: stays put while a zero-copy send is in flight;
                                      * receives: the RTS being read (its sid and key) */
    /* sends */
    int sid;                         /* slot while waiting for a reply, -1 if none */
    uint8_t awaits;                  /* MTL_RTTCC_FIN or _SYNC_ACK while in its slot */
    bool cancelling;                 /* a CANCEL went for it */
    uint32_t key;                    /* exposure of buf to the receiver (rendezvous), 0 if none */
    /* receives */
    size_t accepted, landed;         /* rendezvous bytes read, and landed */
    size_t msg_len;
    int32_t msg_src, msg_tag;
} mca_mtl_rttcc_request_t;

/* An arrival nobody has asked for yet (or one ahead of its turn). */
typedef struct mtl_rttcc_arrival_t {
    rttcc_match_item_t match;        /* first: the matcher hands back its address */
    mtl_rttcc_match_hdr_t hdr;
    struct mca_mtl_rttcc_request_t *self_send; /* a send to self, completed on match when synchronous */
    bool malformed;                  /* dropped in its turn (no payload kept) */
    unsigned char payload[];
} mtl_rttcc_arrival_t;

#define MTL_RTTCC_COUNT(name) OPAL_THREAD_ADD_FETCH64(&mca_mtl_rttcc_component.counters.name, 1)

/* What the MTL keeps for each process it reaches, in
 * proc->proc_endpoints[OMPI_PROC_ENDPOINT_TAG_MTL]. */
typedef struct mca_mtl_rttcc_endpoint_t {
    uint32_t index; /* the engine's name for the process (its vpid) */
} mca_mtl_rttcc_endpoint_t;

/* mtl_rttcc_component.c */
int mca_mtl_rttcc_register_pvars(void);

/* mtl_rttcc_module.c: add/del procs, finalize, engine callbacks */
int mca_mtl_rttcc_module_init(mca_mtl_rttcc_module_t *m);
void mca_mtl_rttcc_callbacks(rttcc_callbacks_t *cbs, mca_mtl_rttcc_module_t *m);
struct ompi_proc_t;
mca_mtl_rttcc_endpoint_t *mca_mtl_rttcc_endpoint(mca_mtl_rttcc_module_t *m, struct ompi_proc_t *proc);
int mca_mtl_rttcc_progress(void);
int mca_mtl_rttcc_send_control(mca_mtl_rttcc_module_t *m, uint32_t peer, const mtl_rttcc_reply_hdr_t *reply);

/* mtl_rttcc_send.c */
int mca_mtl_rttcc_send(struct mca_mtl_base_module_t *mtl, struct ompi_communicator_t *comm, int dest, int tag,
                       struct opal_convertor_t *convertor, mca_pml_base_send_mode_t mode);
int mca_mtl_rttcc_isend(struct mca_mtl_base_module_t *mtl, struct ompi_communicator_t *comm, int dest, int tag,
                        struct opal_convertor_t *convertor, mca_pml_base_send_mode_t mode, bool blocking,
                        mca_mtl_request_t *mtl_request);
void mca_mtl_rttcc_send_done(mca_mtl_rttcc_request_t *req, int status);
void mca_mtl_rttcc_on_reply(mca_mtl_rttcc_module_t *m, uint32_t peer, const mtl_rttcc_reply_hdr_t *reply);

/* mtl_rttcc_recv.c */
int mca_mtl_rttcc_irecv(struct mca_mtl_base_module_t *mtl, struct ompi_communicator_t *comm, int src, int tag,
                        struct opal_convertor_t *convertor, mca_mtl_request_t *mtl_request);
int mca_mtl_rttcc_iprobe(struct mca_mtl_base_module_t *mtl, struct ompi_communicator_t *comm, int src, int tag,
                         int *flag, struct ompi_status_public_t *status);
int mca_mtl_rttcc_improbe(struct mca_mtl_base_module_t *mtl, struct ompi_communicator_t *comm, int src, int tag,
                          int *matched, struct ompi_message_t **message, struct ompi_status_public_t *status);
int mca_mtl_rttcc_imrecv(struct mca_mtl_base_module_t *mtl, struct opal_convertor_t *convertor,
                         struct ompi_message_t **message, mca_mtl_request_t *mtl_request);
/* A matchable message from `peer`, or a SKIP (its number, passed over in
 * its turn); `data` is EAGER's payload.  A malformed
 * one (or one from a process that is not the rank it claims) is dropped
 * in its turn, and answered if its sender waits for an answer. */
void mca_mtl_rttcc_on_arrival(mca_mtl_rttcc_module_t *m, uint32_t peer, const mtl_rttcc_match_hdr_t *hdr,
                              const void *data, mca_mtl_rttcc_request_t *self_send, bool malformed);
/* The reply of a rendezvous get landed whole in grant `key`. */
void mca_mtl_rttcc_on_put(mca_mtl_rttcc_module_t *m, uint32_t peer, uint32_t key, size_t len);
void mca_mtl_rttcc_free_arrivals(mca_mtl_rttcc_module_t *m);
/* Communicator `cid` was freed here: the messages nobody received on it
 * are dropped, and so are those that come for it until another takes its id. */
void mca_mtl_rttcc_comm_freed(mca_mtl_rttcc_module_t *m, uint32_t cid);

/* mtl_rttcc_skip.c */
int mca_mtl_rttcc_skips_init(mca_mtl_rttcc_module_t *m);
void mca_mtl_rttcc_skips_fini(mca_mtl_rttcc_module_t *m);
/* The engine refused message `seq` to `peer`: a SKIP is owed for it. */
void mca_mtl_rttcc_owe_skip(mca_mtl_rttcc_module_t *m, uint32_t peer, uint32_t seq);
/* Progress: the SKIPs owed go, until the engine refuses one; refused too
 * long, the job ends. */
void mca_mtl_rttcc_send_skips(mca_mtl_rttcc_module_t *m);
/* Finalize: the SKIPs still owed go, or (refused for a while) the job ends. */
void mca_mtl_rttcc_flush_skips(mca_mtl_rttcc_module_t *m);
void mca_mtl_rttcc_on_skip(mca_mtl_rttcc_module_t *m, uint32_t peer, const mtl_rttcc_skip_hdr_t *skip);

/* mtl_rttcc_cancel.c */
int mca_mtl_rttcc_cancel(struct mca_mtl_base_module_t *mtl, mca_mtl_request_t *mtl_request, int flag);
/* A sender's CANCEL. */
void mca_mtl_rttcc_on_cancel(mca_mtl_rttcc_module_t *m, uint32_t peer, const mtl_rttcc_cancel_hdr_t *c);
/* Called with the lock held for a message whose turn came: true (and it
 * is forgotten) if its sender cancelled it before. */
bool mca_mtl_rttcc_drop_cancelled(mca_mtl_rttcc_module_t *m, uint32_t peer, uint32_t seq);

END_C_DECLS
#endif
