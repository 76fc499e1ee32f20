/*
 * osc_rttcc: MPI one-sided communication over the rttcc engine.
 *
 * A window exposes its memory to each peer once (rttcc_rma_expose), so a
 * put is one engine put with no handshake; gets, accumulates, atomics,
 * locks and the regions of dynamic windows are requests the target's
 * engine serves (include/rttcc/rma.h), also while the target computes
 * outside MPI.  Replies land in grants this process makes for them; the
 * component is the engine's client of RTTCC_TAG_OSC.
 *
 *   osc_rttcc_component.c  parameters, counters, selection, the engine's callbacks
 *   osc_rttcc_window.c     window creation (create, allocate, dynamic), attach, detach, free
 *   osc_rttcc_ops.c        put, get, accumulate, fetching ops and their request forms
 *   osc_rttcc_sync.c       fence, PSCW, locks, flushes: epochs and completion
 *   osc_rttcc_schedule.c   an epoch's large puts, queued per target, released in RTT order
 *   osc_rttcc_types.c      datatypes and ops as the engine's codes; a type's contiguous runs
 */
#ifndef MCA_OSC_RTTCC_H
#define MCA_OSC_RTTCC_H

#include "ompi_config.h"

#include "mpi.h"
#include "ompi/communicator/communicator.h"
#include "ompi/datatype/ompi_datatype.h"
#include "ompi/group/group.h"
#include "ompi/mca/osc/osc.h"
#include "ompi/request/request.h"
#include "ompi/win/win.h"
#include "opal/class/opal_hash_table.h"
#include "opal/threads/mutex.h"

#include "rttcc/engine.h"
#include "rttcc/rma.h"
#include "rttcc/schedule.h"
#include "rttcc/tags.h"

BEGIN_C_DECLS

/* Counters exported as MPI_T performance variables (osc_rttcc_<name>). */
#define MCA_OSC_RTTCC_COUNTERS(X)                                                       \
    X(puts, "MPI_Put and MPI_Rput calls")                                               \
    X(gets, "MPI_Get and MPI_Rget calls")                                               \
    X(accumulates, "accumulate calls: MPI_Accumulate, MPI_Get_accumulate, MPI_Fetch_and_op, their request forms") \
    X(atomics, "MPI_Compare_and_swap calls")                                            \
    X(bytes_put, "bytes put (puts and accumulates)")                                    \
    X(bytes_got, "bytes read (gets and fetching accumulates)")                          \
    X(epochs, "epochs closed: fences, PSCW completions, unlocks")                        \
    X(queued, "operations queued for their epoch's RTT schedule")                         \
    X(rounds, "schedules run: rounds releasing an epoch's queued operations")            \
    X(deferrals, "targets the schedule set aside because their RTT was too high")         \
    X(forced, "targets started although not eligible (reorder window, backoff, idle)")    \
    X(overflows, "rounds run before the epoch's end: queue_bytes were queued")            \
    X(posted, "puts, gets and accumulates sent in batches with the others to their target (post_bytes)") \
    X(lock_waits, "locks of this process's own window that found it taken and waited")       \
    X(lazy_locks, "lock epochs whose lock, operations and unlock went as one request (lazy_lock)") \
    X(lazy_locks_taken, "lazy locks taken before their unlock: an operation or flush needed the lock held")

typedef struct mca_osc_rttcc_counters_t {
#define MCA_OSC_RTTCC_COUNTER_FIELD(name, help) volatile int64_t name;
    MCA_OSC_RTTCC_COUNTERS(MCA_OSC_RTTCC_COUNTER_FIELD)
#undef MCA_OSC_RTTCC_COUNTER_FIELD
} mca_osc_rttcc_counters_t;

struct mca_osc_rttcc_module_t;

typedef struct mca_osc_rttcc_component_t {
    ompi_osc_base_component_t super;
    int priority;                /* osc_rttcc_priority */
    int verbose;                 /* osc_rttcc_verbose */
    int output;                  /* opal_output stream */
    rttcc_schedule_params_t sched; /* osc_rttcc_policy and the scheduler's tunables */
    size_t eager_bytes;          /* operations smaller than this are issued at once, unscheduled */
    size_t post_bytes;           /* puts and accumulates up to this go in a batch (rttcc_rma_post) */
    size_t post_most;            /* the largest piece a batch takes: the engine's largest message less a request's headers */
    bool lazy_lock;              /* MPI_Win_lock asks for nothing: the lock goes with the epoch's batch */
    size_t queue_bytes;          /* most bytes a window keeps queued for its schedule */
    rttcc_engine_t *engine;      /* the process engine we are a client of, NULL if none */
    opal_mutex_t lock;           /* everything below, and every module's state */
    opal_hash_table_t replies;   /* reply key -> osc_rttcc_op_t awaiting it */
    struct osc_rttcc_op_t *spare_ops; /* finished operations kept for reuse: a put costs no malloc */
    int nspare_ops;
    opal_list_t modules;         /* windows alive, by their communicator's id for messages */
    struct osc_rttcc_lazy_t *lazy; /* the lazy locks now open: their engine peer's batch is held */
    int nlazy, lazy_cap;
    mca_osc_rttcc_counters_t counters;
} mca_osc_rttcc_component_t;

OMPI_MODULE_DECLSPEC extern mca_osc_rttcc_component_t mca_osc_rttcc_component;

/* A put or accumulate waiting for its target's turn in the schedule; it
 * holds one of its operation's pending pieces. */
typedef struct osc_rttcc_piece_t {
    struct osc_rttcc_op_t *op;
    uint32_t key;
    uint64_t offset;
    void *data;
    size_t len;
    int rop, rtype;       /* an accumulate's codes; rop < 0: a put */
} osc_rttcc_piece_t;

/* What this process knows of one rank of a window. */
typedef struct osc_rttcc_peer_t {
    uint32_t index;       /* the engine's index of it */
    uint32_t key;         /* its exposure to us (0: none, e.g. size 0); dynamic: its window by address */
    uint64_t size;        /* its window's bytes */
    int disp_unit;
    uint32_t window;      /* its engine window number (locks, lookups) */
    int lock;             /* MPI_LOCK_SHARED/EXCLUSIVE held on it by an MPI_Win_lock, else 0 */
    bool lock_nocheck;    /* ... with MPI_MODE_NOCHECK: no lock was asked for */
    bool lock_lazy;       /* ... not asked for yet: it goes with the batch at unlock (osc_rttcc_lock_now) */
    volatile bool lock_taking; /* ... being taken by one thread (osc_rttcc_lock_now) */
    bool in_access;       /* in the PSCW access group of the current start */
    bool access_copied;   /* ... a piece without a reply above post_bytes was copied to it since (first_access_copy) */
    uint32_t unfinished;  /* operations to it not complete here (replies, zero-copy sends) */
    bool dirty;           /* sent something since its last flush */
    uint32_t posts;       /* MPI_Win_post messages from it not yet used by a start */
    bool dead;            /* its engine declared it dead: nothing more comes from it */
    osc_rttcc_piece_t *queue;   /* pieces waiting for the schedule, in order */
    int nqueue, cap_queue;
    int queued_accs;      /* accumulates among them */
    uint64_t queued_bytes;
    rttcc_rma_region_t *regions; /* dynamic windows: its regions we looked up this epoch (range checks) */
    int nregions, cap_regions;
} osc_rttcc_peer_t;

/* One region of ours attached to a dynamic window. */
typedef struct osc_rttcc_region_t {
    void *base;
    size_t len;
    uint32_t *keys;       /* its exposure per rank (0 for self) */
} osc_rttcc_region_t;

/* The members of a PSCW group as communicator ranks, kept (and the group
 * retained, so its address names it) while the same group comes back:
 * an epoch loop translates its group once, not at every start. */
typedef struct osc_rttcc_group_t {
    ompi_group_t *group;
    int *ranks;
    struct osc_rttcc_flush_t *flushes; /* an access group's: one a member, MPI_Win_complete's */
    int n;
} osc_rttcc_group_t;

typedef struct mca_osc_rttcc_module_t {
    ompi_osc_base_module_t super;
    opal_list_item_t item;          /* in the component's modules (once listed) */
    bool listed;
    ompi_communicator_t *comm;      /* our duplicate of the window's communicator */
    uint32_t cid;                   /* its id: names the window in our messages */
    int rank, size;
    int flavor;
    void *base;
    size_t len;
    int disp_unit;
    void *allocated;                /* MPI_Win_allocate's memory, ours to free */
    uint32_t window;                /* our engine window number (its lock table) */
    uint32_t *exposures;            /* our exposure per rank (0 for self) */
    osc_rttcc_peer_t *peers;        /* by rank */
    osc_rttcc_region_t *regions;    /* dynamic windows: attached regions */
    int nregions;
    bool no_locks;                  /* info no_locks: nobody locks it */
    /* epochs */
    bool fence;                     /* a fence opened an access epoch (no MPI_MODE_NOSUCCEED) */
    bool pscw_access;               /* between MPI_Win_start and MPI_Win_complete ... */
    osc_rttcc_group_t access;       /* ... with this group (kept after) */
    bool pscw_exposure;             /* between MPI_Win_post and MPI_Win_wait/test ... */
    osc_rttcc_group_t exposure;     /* ... with this group (kept after) */
    uint32_t completes;             /* MPI_Win_complete messages in for the current post */
    uint32_t fences;                /* fences of a two-rank window this process made ... */
    uint32_t peer_fences;           /* ... and FENCE messages its peer sent */
    uint32_t dead;                  /* ranks its engine declared dead (peers[r].dead) */
    int locks;                      /* targets locked by MPI_Win_lock */
    bool lock_all;                  /* between MPI_Win_lock_all and MPI_Win_unlock_all */
    bool lock_all_nocheck;
    uint32_t unfinished;            /* operations not complete here, all targets */
    uint64_t queued_bytes;          /* in the peers' queues */
    rttcc_schedule_t *schedule;     /* orders the release of the queues (NULL: no queueing) */
    uint32_t *engine_peers;         /* by rank, for the schedule */
    uint64_t *round_bytes;          /* by rank: a round's queued bytes */
} mca_osc_rttcc_module_t;

#define OSC_RTTCC_MODULE(win) ((mca_osc_rttcc_module_t *) (win)->w_osc_module)

/* What an operation waits for: pieces still in flight (zero-copy sends to
 * be acknowledged, replies to land); when none is left it finishes
 * (unpacks a staged result, frees its stage, completes its request). */
typedef struct osc_rttcc_op_t {
    int kind;                       /* OSC_RTTCC_COOKIE_OP (engine cookies name ops or flushes) */
    mca_osc_rttcc_module_t *module;
    int target;
    int pending;                    /* pieces in flight */
    int status;                     /* first error of a piece, else OMPI_SUCCESS */
    void *stage;                    /* the packed origin, freed at the end */
    void *landing;                  /* where a staged result landed: unpacked at the end, then freed */
    void *result;                   /* ... into this ... */
    int result_count;
    ompi_datatype_t *result_dt;     /* ... with this type (retained), NULL: nothing to unpack */
    ompi_request_t *request;        /* the MPI request to complete, if any */
    volatile bool *done;            /* set at the end, if not NULL (waits on lock and lookup replies) */
    int *status_out;                /* ... and the status copied here, if not NULL */
    struct osc_rttcc_op_t *next_spare; /* in the component's spare_ops, once finished */
} osc_rttcc_op_t;

/* A flush waiting for the engine. */
typedef struct osc_rttcc_flush_t {
    int kind;                       /* OSC_RTTCC_COOKIE_FLUSH */
    volatile bool done;
    int status;
} osc_rttcc_flush_t;

enum { OSC_RTTCC_COOKIE_OP = 1, OSC_RTTCC_COOKIE_FLUSH = 2 };

/* Messages between modules (RTTCC_TAG_OSC). */
enum { OSC_RTTCC_MSG_POST = 1, OSC_RTTCC_MSG_COMPLETE = 2, OSC_RTTCC_MSG_FENCE = 3 };
typedef struct osc_rttcc_msg_t {
    uint32_t kind;
    uint32_t cid;                   /* the window's communicator id */
    int32_t rank;                   /* the sender's rank in it */
} osc_rttcc_msg_t;

/* osc_rttcc_window.c */
int osc_rttcc_window_select(struct ompi_win_t *win, void **base, size_t size, int disp_unit,
                            struct ompi_communicator_t *comm, struct opal_info_t *info, int flavor, int *model);
int osc_rttcc_attach(struct ompi_win_t *win, void *base, size_t len);
int osc_rttcc_detach(struct ompi_win_t *win, const void *base);
int osc_rttcc_free(struct ompi_win_t *win);
mca_osc_rttcc_module_t *osc_rttcc_module_of(uint32_t cid);

/* osc_rttcc_ops.c */
int osc_rttcc_put(const void *origin, int ocount, ompi_datatype_t *odt, int target, ptrdiff_t disp, int tcount,
                  ompi_datatype_t *tdt, struct ompi_win_t *win);
int osc_rttcc_get(void *origin, int ocount, ompi_datatype_t *odt, int target, ptrdiff_t disp, int tcount,
                  ompi_datatype_t *tdt, struct ompi_win_t *win);
int osc_rttcc_accumulate(const void *origin, int ocount, ompi_datatype_t *odt, int target, ptrdiff_t disp,
                         int tcount, ompi_datatype_t *tdt, struct ompi_op_t *op, struct ompi_win_t *win);
int osc_rttcc_get_accumulate(const void *origin, int ocount, ompi_datatype_t *odt, void *result, int rcount,
                             ompi_datatype_t *rdt, int target, ptrdiff_t disp, int tcount, ompi_datatype_t *tdt,
                             struct ompi_op_t *op, struct ompi_win_t *win);
int osc_rttcc_fetch_and_op(const void *origin, void *result, ompi_datatype_t *dt, int target, ptrdiff_t disp,
                           struct ompi_op_t *op, struct ompi_win_t *win);
int osc_rttcc_compare_and_swap(const void *origin, const void *compare, void *result, ompi_datatype_t *dt,
                               int target, ptrdiff_t disp, struct ompi_win_t *win);
int osc_rttcc_rput(const void *origin, int ocount, ompi_datatype_t *odt, int target, ptrdiff_t disp, int tcount,
                   ompi_datatype_t *tdt, struct ompi_win_t *win, ompi_request_t **request);
int osc_rttcc_rget(void *origin, int ocount, ompi_datatype_t *odt, int target, ptrdiff_t disp, int tcount,
                   ompi_datatype_t *tdt, struct ompi_win_t *win, ompi_request_t **request);
int osc_rttcc_raccumulate(const void *origin, int ocount, ompi_datatype_t *odt, int target, ptrdiff_t disp,
                          int tcount, ompi_datatype_t *tdt, struct ompi_op_t *op, struct ompi_win_t *win,
                          ompi_request_t **request);
int osc_rttcc_rget_accumulate(const void *origin, int ocount, ompi_datatype_t *odt, void *result, int rcount,
                              ompi_datatype_t *rdt, int target, ptrdiff_t disp, int tcount, ompi_datatype_t *tdt,
                              struct ompi_op_t *op, struct ompi_win_t *win, ompi_request_t **request);
/* An operation's piece is done (a zero-copy send acknowledged, a reply landed); under the component lock. */
void osc_rttcc_op_piece_done(osc_rttcc_op_t *op, int status);
/* Asks the target's engine for its window lock; *granted is set when it is
 * held or the request failed (*status: why).  with_batch: a lazy lock's
 * end (rttcc_rma_lock_batch): *granted is set once the target applied the
 * held batch under the lock and let it go, at once if nothing was posted. */
int osc_rttcc_request_lock(mca_osc_rttcc_module_t *m, int target, int exclusive, bool with_batch,
                           volatile bool *granted, int *status, uint8_t *landing);
/* A lazy lock's batch, and a PSCW epoch's first piece to a target, take
 * pieces up to this (osc_rttcc_post_limit; the engine's batch, 64 KiB with
 * its headers, refuses what does not fit). */
#define OSC_RTTCC_LAZY_PIECE ((size_t) 60 * 1024)

/* A lazy lock that holds its engine peer's batch. */
typedef struct osc_rttcc_lazy_t {
    struct mca_osc_rttcc_module_t *m;
    int target;
} osc_rttcc_lazy_t;

/* Another window's operation to the same process cannot join a held batch
 * (it would travel, and be refused, under that window's lock): the lazy
 * locks held there by other windows, or other targets' epochs, are taken
 * first (osc_rttcc_lock_now). */
int osc_rttcc_lazy_conflicts(struct mca_osc_rttcc_module_t *m, int target);
/* A lazy lock of `target` (MPI_Win_lock asked for nothing yet) is taken
 * now, and waited for: an operation that cannot wait in its batch, or a
 * flush, needs it held.  OMPI_SUCCESS at once if there is none. */
int osc_rttcc_lock_now(mca_osc_rttcc_module_t *m, int target);
/* The operation waiting for the reply into grant `key`, taken out of the
 * replies table; NULL if none (under the component lock). */
osc_rttcc_op_t *osc_rttcc_reply_take(uint32_t key);
/* Every operation waiting for a reply from engine peer `index` fails (it
 * died); returns how many replies it gave up.  Under the component lock. */
size_t osc_rttcc_fail_replies(uint32_t index);
/* ... those of one window's operations to one target only (m not NULL). */
size_t osc_rttcc_fail_replies_of(uint32_t index, const mca_osc_rttcc_module_t *m, int target);

/* osc_rttcc_sync.c */
int osc_rttcc_fence(int assert, struct ompi_win_t *win);
int osc_rttcc_start(struct ompi_group_t *group, int assert, struct ompi_win_t *win);
int osc_rttcc_complete(struct ompi_win_t *win);
int osc_rttcc_post(struct ompi_group_t *group, int assert, struct ompi_win_t *win);
int osc_rttcc_wait(struct ompi_win_t *win);
int osc_rttcc_test(struct ompi_win_t *win, int *flag);
int osc_rttcc_lock(int lock_type, int target, int assert, struct ompi_win_t *win);
int osc_rttcc_unlock(int target, struct ompi_win_t *win);
int osc_rttcc_lock_all(int assert, struct ompi_win_t *win);
int osc_rttcc_unlock_all(struct ompi_win_t *win);
int osc_rttcc_sync(struct ompi_win_t *win);
int osc_rttcc_flush(int target, struct ompi_win_t *win);
int osc_rttcc_flush_all(struct ompi_win_t *win);
int osc_rttcc_flush_local(int target, struct ompi_win_t *win);
int osc_rttcc_flush_local_all(struct ompi_win_t *win);
/* Engine peer `index` died: every window's rank on it is marked (under the component lock). */
void osc_rttcc_peer_died(uint32_t index);
/* A message of another module (post, complete) arrived; under the component lock. */
void osc_rttcc_take_message(const osc_rttcc_msg_t *m);
/* Lets a PSCW group kept by a window go (osc_rttcc_sync.c). */
void osc_rttcc_group_forget(osc_rttcc_group_t *g);
/* May this process access `target` now (an epoch is open towards it)? */
bool osc_rttcc_in_epoch(const mca_osc_rttcc_module_t *m, int target);

/* osc_rttcc_schedule.c */
/* Should an operation of `bytes` to `target` wait for the schedule? */
bool osc_rttcc_schedules(const mca_osc_rttcc_module_t *m, int target, size_t bytes);
/* Queues a piece (under the component lock); the piece holds one of op's pending pieces. */
int osc_rttcc_queue(mca_osc_rttcc_module_t *m, int target, const osc_rttcc_piece_t *piece);
/* Releases every queue in the schedule's order and waits until each target's
 * operations are complete here (not under the lock). */
int osc_rttcc_release(mca_osc_rttcc_module_t *m);
/* Releases one target's queue at once (not under the lock). */
void osc_rttcc_release_target(mca_osc_rttcc_module_t *m, int target);
/* ... if it holds an accumulate: called before an accumulate that is not
 * queued, so that one origin's accumulates are applied in order (not under the lock). */
void osc_rttcc_release_accumulates(mca_osc_rttcc_module_t *m, int target);
/* Sends a queued piece (under the component lock): ops.c's engine calls. */
void osc_rttcc_send_piece(const osc_rttcc_piece_t *piece, uint32_t peer);

/* osc_rttcc_types.c */
/* The engine's type code of a predefined datatype, -1 if it has none. */
int osc_rttcc_type_code(ompi_datatype_t *dt);
/* The engine's op code of a predefined op, -1 if it has none. */
int osc_rttcc_op_code(struct ompi_op_t *op);
/* Calls fn(ctx, offset, len) for each contiguous run of `count` elements of
 * `dt` laid out from offset `at`, in order; stops at the first non-success. */
typedef int (*osc_rttcc_run_fn)(void *ctx, ptrdiff_t offset, size_t len);
int osc_rttcc_runs(ompi_datatype_t *dt, int count, ptrdiff_t at, osc_rttcc_run_fn fn, void *ctx);
/* Packs `count` elements of `dt` at `buf` into `to` (their packed size). */
int osc_rttcc_pack(const void *buf, int count, ompi_datatype_t *dt, void *to, size_t len);
int osc_rttcc_unpack(void *buf, int count, ompi_datatype_t *dt, const void *from, size_t len);

/* Waits, progressing, until *flag is set (read under no lock). */
void osc_rttcc_wait_for(volatile bool *flag);

END_C_DECLS
#endif
