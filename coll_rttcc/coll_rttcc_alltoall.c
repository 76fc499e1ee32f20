/* MPI_Alltoall and MPI_Alltoallv: lay the blocks out for the exchange
 * (straight from the user's buffers when the datatypes are contiguous,
 * packed into staging memory otherwise or for MPI_IN_PLACE), run it, and
 * unpack what landed in staging memory. */
#include <stdlib.h>
#include <string.h>

#include "coll_rttcc.h"

#include "ompi/datatype/ompi_datatype.h"
#include "opal/datatype/opal_convertor.h"
#include "opal/runtime/opal_progress.h"
#include "opal/util/output.h"

/* One direction of a call: alltoall gives one count (displacement r *
 * count), alltoallv a count and a displacement per rank. */
typedef struct side_t {
    char *buf;
    struct ompi_datatype_t *dtype;
    const int *counts; /* NULL: every rank has `count` */
    const int *displs;
    int count;
    size_t size;       /* bytes of one element */
    ptrdiff_t extent, true_lb;
} side_t;

static void side_init(side_t *s, const void *buf, struct ompi_datatype_t *dtype, int count, const int *counts,
                      const int *displs)
{
    ptrdiff_t lb, true_extent;
    s->buf = (char *) buf;
    s->dtype = dtype;
    s->count = count;
    s->counts = counts;
    s->displs = displs;
    ompi_datatype_type_size(dtype, &s->size);
    ompi_datatype_get_extent(dtype, &lb, &s->extent);
    ompi_datatype_get_true_extent(dtype, &s->true_lb, &true_extent);
}

static inline int side_count(const side_t *s, int r)
{
    return NULL != s->counts ? s->counts[r] : s->count;
}

static inline char *side_block(const side_t *s, int r)
{
    ptrdiff_t displ = NULL != s->counts ? s->displs[r] : (ptrdiff_t) r * s->count;
    return s->buf + displ * s->extent;
}

static inline size_t side_bytes(const side_t *s, int r)
{
    return (size_t) side_count(s, r) * s->size;
}

/* Whether every non-empty block of the side is one contiguous run of bytes. */
static bool side_contiguous(const side_t *s, int nranks)
{
    for (int r = 0; r < nranks; ++r) {
        if (side_count(s, r) > 0 && !ompi_datatype_is_contiguous_memory_layout(s->dtype, side_count(s, r))) {
            return false;
        }
    }
    return true;
}

static void *stage(void **buf, size_t *size, size_t need)
{
    if (need > *size) {
        void *p = realloc(*buf, need);
        if (NULL == p) {
            return NULL;
        }
        *buf = p;
        *size = need;
    }
    return *buf;
}

/* Packs (or unpacks) `count` elements at `user` to (from) `bytes` bytes at `packed`. */
static int convert(struct ompi_datatype_t *dtype, int count, char *user, void *packed, size_t bytes, bool pack)
{
    opal_convertor_t conv;
    struct iovec iov = {packed, bytes};
    uint32_t iov_count = 1;
    size_t max_data = bytes;
    int rc;

    OBJ_CONSTRUCT(&conv, opal_convertor_t);
    rc = pack ? opal_convertor_copy_and_prepare_for_send(ompi_mpi_local_convertor, &dtype->super, count, user, 0,
                                                         &conv)
              : opal_convertor_copy_and_prepare_for_recv(ompi_mpi_local_convertor, &dtype->super, count, user, 0,
                                                         &conv);
    if (OPAL_SUCCESS == rc) {
        rc = pack ? opal_convertor_pack(&conv, &iov, &iov_count, &max_data)
                  : opal_convertor_unpack(&conv, &iov, &iov_count, &max_data);
        rc = rc < 0 || max_data != bytes ? OMPI_ERROR : OMPI_SUCCESS;
    }
    OBJ_DESTRUCT(&conv);
    return rc;
}

/* The blocks to put: straight from the user's buffer, or packed. */
static int lay_out_sends(mca_coll_rttcc_module_t *m, const side_t *s, int nranks, int me, bool copy)
{
    size_t total = 0, at = 0;
    char *packed;
    if (!copy && side_contiguous(s, nranks)) {
        for (int r = 0; r < nranks; ++r) {
            m->peers[r].send = side_block(s, r) + s->true_lb;
            m->peers[r].send_len = r == me ? 0 : side_bytes(s, r);
        }
        return OMPI_SUCCESS;
    }
    for (int r = 0; r < nranks; ++r) {
        total += r == me ? 0 : side_bytes(s, r);
    }
    if (NULL == (packed = stage(&m->send_stage, &m->send_stage_size, total ? total : 1))) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    for (int r = 0; r < nranks; ++r) {
        size_t bytes = r == me ? 0 : side_bytes(s, r);
        m->peers[r].send = packed + at;
        m->peers[r].send_len = bytes;
        if (bytes && OMPI_SUCCESS != convert(s->dtype, side_count(s, r), side_block(s, r), packed + at, bytes, true)) {
            return OMPI_ERROR;
        }
        at += bytes;
    }
    return OMPI_SUCCESS;
}

/* Where the peers' blocks land: the user's buffer (the span of its blocks)
 * when contiguous, else staging memory that unpack_landed() spreads out.
 * *staged says which. */
static int lay_out_receives(mca_coll_rttcc_module_t *m, const side_t *s, int nranks, int me, void **land,
                            size_t *land_len, bool *staged)
{
    char *lo = NULL, *hi = NULL;
    size_t at = 0;
    *staged = !side_contiguous(s, nranks);
    if (!*staged) {
        for (int r = 0; r < nranks; ++r) {
            char *b = side_block(s, r) + s->true_lb;
            if (r == me || 0 == side_bytes(s, r)) {
                continue;
            }
            lo = NULL == lo || b < lo ? b : lo;
            hi = NULL == hi || b + side_bytes(s, r) > hi ? b + side_bytes(s, r) : hi;
        }
        for (int r = 0; r < nranks; ++r) {
            m->peers[r].recv_len = r == me ? 0 : side_bytes(s, r);
            m->peers[r].recv_offset = m->peers[r].recv_len ? (uint64_t) (side_block(s, r) + s->true_lb - lo) : 0;
        }
        *land = lo;
        *land_len = (size_t) (hi - lo);
        return OMPI_SUCCESS;
    }
    for (int r = 0; r < nranks; ++r) {
        m->peers[r].recv_len = r == me ? 0 : side_bytes(s, r);
        m->peers[r].recv_offset = at;
        at += m->peers[r].recv_len;
    }
    *land = stage(&m->recv_stage, &m->recv_stage_size, at ? at : 1);
    *land_len = at;
    return NULL == *land ? OMPI_ERR_OUT_OF_RESOURCE : OMPI_SUCCESS;
}

/* A rank that cannot lay its blocks out still takes part, with nothing to
 * send or receive: its peers finish instead of waiting for its RTRs (those
 * with a block to or from it with MPI_ERR_TRUNCATE). */
static void lay_out_nothing(mca_coll_rttcc_module_t *m, int nranks)
{
    for (int r = 0; r < nranks; ++r) {
        m->peers[r].send = NULL;
        m->peers[r].send_len = m->peers[r].recv_offset = m->peers[r].recv_len = 0;
    }
}

/* The block to itself: sizes that differ are MPI_ERR_TRUNCATE, as between
 * peers (ompi_datatype_sndrcv calls a block shorter than its room a
 * success, and a block into 0 bytes of room went unchecked). */
static int copy_self(const side_t *send, const side_t *recv, int me)
{
    if (side_bytes(send, me) != side_bytes(recv, me)) {
        return MPI_ERR_TRUNCATE;
    }
    if (0 == side_bytes(recv, me)) {
        return MPI_SUCCESS;
    }
    return ompi_datatype_sndrcv(side_block(send, me), side_count(send, me), send->dtype, side_block(recv, me),
                                side_count(recv, me), recv->dtype);
}

static int unpack_landed(mca_coll_rttcc_module_t *m, const side_t *s, int nranks, int me)
{
    for (int r = 0; r < nranks; ++r) {
        size_t bytes = m->peers[r].recv_len;
        if (r != me && bytes &&
            OMPI_SUCCESS != convert(s->dtype, side_count(s, r), side_block(s, r),
                                    (char *) m->recv_stage + m->peers[r].recv_offset, bytes, false)) {
            return OMPI_ERROR;
        }
    }
    return OMPI_SUCCESS;
}

static int mpi_error_of(int rc)
{
    switch (rc) {
    case RTTCC_DONE:
        return MPI_SUCCESS;
    case RTTCC_ERR_TRUNCATE:
        return MPI_ERR_TRUNCATE;
    case RTTCC_ERR_UNREACH:
        return OMPI_ERR_UNREACH;
    default:
        return MPI_ERR_INTERN;
    }
}

static void report(mca_coll_rttcc_module_t *m, struct ompi_communicator_t *comm, const char *op, int rc)
{
    mca_coll_rttcc_component_t *c = &mca_coll_rttcc_component;
    rttcc_exchange_summary_t sum;
    rttcc_exchange_summary(m->exchange, &sum);
    OPAL_THREAD_ADD_FETCH64(&c->counters.calls, 1);
    OPAL_THREAD_ADD_FETCH64(&c->counters.deferrals, (int64_t) sum.deferrals);
    OPAL_THREAD_ADD_FETCH64(&c->counters.forced, (int64_t) sum.forced);
    OPAL_THREAD_ADD_FETCH64(&c->counters.rtr_waits, (int64_t) sum.rtr_waits);
    OPAL_THREAD_ADD_FETCH64(&c->counters.puts, (int64_t) sum.puts);
    OPAL_THREAD_ADD_FETCH64(&c->counters.eager, (int64_t) sum.eager);
    OPAL_THREAD_ADD_FETCH64(&c->counters.bytes, (int64_t) sum.bytes);
    if (c->verbose < 10) {
        return;
    }
    opal_output_verbose(10, c->output,
                        "coll:rttcc: %s on %s call %llu rank %d/%d policy %s: %llu puts, %llu eager, %llu bytes, %.1f us, "
                        "deferrals %llu, forced %llu, rtr_waits %llu, at most %llu peers at once, result %d",
                        op, comm->c_name, (unsigned long long) m->seq - 1, ompi_comm_rank(comm),
                        ompi_comm_size(comm), rttcc_sched_policy_name(c->xp.policy), (unsigned long long) sum.puts,
                        (unsigned long long) sum.eager,
                        (unsigned long long) sum.bytes, sum.elapsed_ns / 1e3, (unsigned long long) sum.deferrals,
                        (unsigned long long) sum.forced, (unsigned long long) sum.rtr_waits,
                        (unsigned long long) sum.max_active, rc);
    if (c->verbose >= 30) {
        char *text = rttcc_exchange_schedule_text(m->exchange);
        if (NULL != text) {
            opal_output_verbose(30, c->output, "coll:rttcc: schedule of %s call %llu on rank %d:\n%s", op,
                                (unsigned long long) m->seq - 1, ompi_comm_rank(comm), text);
            free(text);
        }
    }
}

/* One call, both directions described; `in_place`: the send side is the
 * receive side, which the landing blocks overwrite, so it is packed first.
 * An error of this rank alone (its layout, its block to itself) is returned
 * after the exchange: its peers never wait for it. */
static int run(mca_coll_rttcc_module_t *m, struct ompi_communicator_t *comm, const side_t *send,
               const side_t *recv, bool in_place, const char *op)
{
    int nranks = ompi_comm_size(comm), me = ompi_comm_rank(comm), rc, local;
    void *land = NULL;
    size_t land_len = 0;
    bool staged = false;

    local = lay_out_sends(m, in_place ? recv : send, nranks, me, in_place);
    if (OMPI_SUCCESS == local) {
        local = lay_out_receives(m, recv, nranks, me, &land, &land_len, &staged);
    }
    if (OMPI_SUCCESS != local) {
        lay_out_nothing(m, nranks);
        land = NULL;
        land_len = 0;
    } else if (!in_place) {
        local = copy_self(send, recv, me);
    }
    rc = rttcc_exchange_begin(m->exchange, ompi_comm_get_cid(comm), m->seq++, (uint32_t) me, (uint32_t) nranks,
                              m->peers, land, land_len);
    if (RTTCC_OK != rc) {
        /* Out of memory, or no grant for its landing area: this rank cannot
         * take part, and its peers wait for its RTRs. */
        opal_output_verbose(1, mca_coll_rttcc_component.output, "coll:rttcc: %s on %s could not begin (code %d)",
                            op, comm->c_name, rc);
        return MPI_ERR_INTERN;
    }
    while (RTTCC_OK == (rc = rttcc_exchange_progress(m->exchange))) {
        opal_progress();
    }
    report(m, comm, op, rc);
    if (OMPI_SUCCESS != local) {
        return local;
    }
    if (RTTCC_DONE == rc && staged) {
        return unpack_landed(m, recv, nranks, me);
    }
    return mpi_error_of(rc);
}

int mca_coll_rttcc_alltoall(const void *sbuf, int scount, struct ompi_datatype_t *sdtype, void *rbuf, int rcount,
                            struct ompi_datatype_t *rdtype, struct ompi_communicator_t *comm,
                            mca_coll_base_module_t *module)
{
    mca_coll_rttcc_module_t *m = (mca_coll_rttcc_module_t *) module;
    bool in_place = MPI_IN_PLACE == sbuf;
    side_t send, recv;

    side_init(&recv, rbuf, rdtype, rcount, NULL, NULL);
    if (in_place) {
        send = recv;
    } else {
        side_init(&send, sbuf, sdtype, scount, NULL, NULL);
    }
    /* Every rank moves blocks of the same size, so every rank delegates alike. */
    if (side_bytes(&recv, 0) < mca_coll_rttcc_component.min_bytes) {
        OPAL_THREAD_ADD_FETCH64(&mca_coll_rttcc_component.counters.delegated, 1);
        return m->prev_alltoall(sbuf, scount, sdtype, rbuf, rcount, rdtype, comm, m->prev_alltoall_module);
    }
    return run(m, comm, &send, &recv, in_place, "alltoall");
}

int mca_coll_rttcc_alltoallv(const void *sbuf, const int *scounts, const int *sdisps, struct ompi_datatype_t *sdtype,
                             void *rbuf, const int *rcounts, const int *rdisps, struct ompi_datatype_t *rdtype,
                             struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    mca_coll_rttcc_module_t *m = (mca_coll_rttcc_module_t *) module;
    bool in_place = MPI_IN_PLACE == sbuf;
    side_t send, recv;

    /* No size-based delegation here: block sizes differ between ranks,
     * which could then disagree on who serves the call. */
    side_init(&recv, rbuf, rdtype, 0, rcounts, rdisps);
    if (in_place) {
        send = recv;
    } else {
        side_init(&send, sbuf, sdtype, 0, scounts, sdisps);
    }
    return run(m, comm, &send, &recv, in_place, "alltoallv");
}
