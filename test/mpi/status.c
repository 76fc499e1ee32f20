/* What receives and probes write into an MPI_Status (MPI 3.1, 3.2.5, 3.8):
 * the source (a rank of the communicator used, here one whose ranks run
 * backwards), the tag and the count of the message; never the MPI_ERROR
 * field, which only calls completing several requests set (3.7.5: then a
 * truncated receive's is MPI_ERR_TRUNCATE and the call returns
 * MPI_ERR_IN_STATUS); a truncated receive keeps the bytes that fit;
 * MPI_ANY_TAG matches no message of Open MPI's collectives (negative tags);
 * and over an intercommunicator the source is a rank of the remote group.
 * World rank 1 sends, world rank 0 receives; other ranks only join in. */
#include "mpitest.h"

#define UNTOUCHED 4242 /* MPI_ERROR before each call: it must stay */

static const size_t sizes[] = {0, 100, 200000}; /* eager, eager, rendezvous */
#define NSIZES (sizeof sizes / sizeof sizes[0])

enum { PROBE, IPROBE, MPROBE, IMPROBE, RECV, MODES };
enum { RECEIVER = 0, SENDER = 1, BYSTANDER = 2 }; /* world ranks 0, 1, the others */

static void reset(MPI_Status *st)
{
    st->MPI_SOURCE = -7;
    st->MPI_TAG = -7;
    st->MPI_ERROR = UNTOUCHED;
}

static void expect(const char *what, const MPI_Status *st, int src, int tag, size_t count)
{
    int n;
    MPI_Get_count(st, MPI_BYTE, &n);
    if (st->MPI_SOURCE != src || st->MPI_TAG != tag) {
        fprintf(stderr, "status: %s gave source %d tag %d, expected %d %d\n", what, st->MPI_SOURCE, st->MPI_TAG, src,
                tag);
        mt_fail("status", "wrong source or tag (%zu, %zu)", (size_t) src, (size_t) tag);
    }
    if ((size_t) n != count) {
        mt_fail("status", "count %zu, expected %zu", (size_t) n, count);
    }
    if (UNTOUCHED != st->MPI_ERROR) {
        fprintf(stderr, "status: %s wrote MPI_ERROR\n", what);
        mt_fail("status", "MPI_ERROR became %zu (a single-status call must leave it, %zu)", (size_t) st->MPI_ERROR,
                UNTOUCHED);
    }
}

/* Each way of receiving a message of every size, the status checked. */
static void receive_modes(int sender, MPI_Comm rev, int src)
{
    unsigned char *buf = mt_alloc(200000);
    for (int mode = 0; mode < MODES; ++mode) {
        for (size_t k = 0; k < NSIZES; ++k) {
            int tag = mode * 10 + (int) k, flag = 0;
            size_t s = sizes[k];
            if (sender) {
                mt_fill(buf, s, 1, 0, tag);
                MPI_Send(buf, (int) s, MPI_BYTE, src, tag, rev);
                continue;
            }
            MPI_Status st, got;
            MPI_Message msg = MPI_MESSAGE_NULL;
            reset(&st);
            reset(&got);
            switch (mode) {
            case PROBE:
                MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, rev, &st);
                expect("MPI_Probe", &st, src, tag, s);
                break;
            case IPROBE:
                while (!flag) {
                    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, rev, &flag, &st);
                }
                expect("MPI_Iprobe", &st, src, tag, s);
                break;
            case MPROBE:
                MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, rev, &msg, &st);
                expect("MPI_Mprobe", &st, src, tag, s);
                break;
            case IMPROBE:
                while (!flag) {
                    MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, rev, &flag, &msg, &st);
                }
                expect("MPI_Improbe", &st, src, tag, s);
                break;
            }
            memset(buf, 0, s);
            if (MPI_MESSAGE_NULL != msg) {
                MPI_Mrecv(buf, (int) s, MPI_BYTE, &msg, &got);
                expect("MPI_Mrecv", &got, src, tag, s);
            } else {
                MPI_Recv(buf, (int) s, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, rev, &got);
                expect("MPI_Recv", &got, src, tag, s);
            }
            mt_check("status", buf, s, 1, 0, tag);
        }
    }
    free(buf);
}

/* Truncation: completed together, each status has its own error (Open MPI's
 * MPI_Waitall stops at the first failed request and marks those not yet
 * complete MPI_ERR_PENDING: they are waited for alone) and the count of
 * bytes that fit; alone (MPI_Wait, MPI_Mrecv), the call returns it. */
static void truncation(int sender, MPI_Comm rev, int src)
{
    /* The first four complete together (the last has no room at all), the fifth by MPI_Mrecv. */
    static const size_t sent[] = {1000, 300000, 64, 200000, 200000}, room[] = {500, 100000, 64, 0, 1000};
    enum { TOGETHER = 4, ALL = 5 };
    unsigned char *buf[ALL];
    for (int k = 0; k < ALL; ++k) {
        buf[k] = mt_alloc(sent[k]);
    }
    if (sender) {
        for (int k = 0; k < ALL; ++k) {
            mt_fill(buf[k], sent[k], 1, 0, 100 + k);
            MPI_Send(buf[k], (int) sent[k], MPI_BYTE, src, 100 + k, rev);
        }
    } else {
        MPI_Request r[TOGETHER];
        MPI_Status st[TOGETHER], one;
        MPI_Message msg;
        int rc, cls, n;
        for (int k = 0; k < TOGETHER; ++k) {
            MPI_Irecv(buf[k], (int) room[k], MPI_BYTE, src, 100 + k, rev, &r[k]);
        }
        rc = MPI_Waitall(TOGETHER, r, st);
        if (MPI_ERR_IN_STATUS != rc) {
            mt_fail("status", "MPI_Waitall with truncated receives returned %zu, not MPI_ERR_IN_STATUS (%zu)",
                    (size_t) rc, MPI_ERR_IN_STATUS);
        }
        for (int k = 0; k < TOGETHER; ++k) {
            if (MPI_ERR_PENDING == st[k].MPI_ERROR) { /* not complete yet when another failed: alone now */
                reset(&one);
                rc = MPI_Wait(&r[k], &one);
                if (UNTOUCHED != one.MPI_ERROR) {
                    mt_fail("status", "MPI_Wait wrote MPI_ERROR %zu (%zu)", (size_t) one.MPI_ERROR, UNTOUCHED);
                }
                one.MPI_ERROR = rc;
                st[k] = one;
            }
            MPI_Error_class(st[k].MPI_ERROR, &cls);
            MPI_Get_count(&st[k], MPI_BYTE, &n);
            if (cls != (sent[k] > room[k] ? MPI_ERR_TRUNCATE : MPI_SUCCESS) || (size_t) n != room[k]) {
                mt_fail("status", "receive %zu of Waitall: wrong error class or count %zu", (size_t) k, (size_t) n);
            }
            mt_check("status", buf[k], room[k], 1, 0, 100 + k);
        }
        MPI_Mprobe(src, 100 + TOGETHER, rev, &msg, &one);
        reset(&one);
        rc = MPI_Mrecv(buf[TOGETHER], (int) room[TOGETHER], MPI_BYTE, &msg, &one);
        MPI_Error_class(rc, &cls);
        MPI_Get_count(&one, MPI_BYTE, &n);
        if (MPI_ERR_TRUNCATE != cls || UNTOUCHED != one.MPI_ERROR || (size_t) n != room[TOGETHER]) {
            mt_fail("status", "truncating MPI_Mrecv: class %zu, count %zu", (size_t) cls, (size_t) n);
        }
        mt_check("status", buf[TOGETHER], room[TOGETHER], 1, 0, 100 + TOGETHER);
    }
    for (int k = 0; k < ALL; ++k) {
        free(buf[k]);
    }
}

/* A broadcast's message (negative tag) waits unexpected ahead of two user
 * messages: wildcard probes and receives see only the user's. */
static void internal_tags(int role, MPI_Comm rev, int src, int root)
{
    unsigned char b[64], c[8] = {0};
    MPI_Status st;
    MPI_Message msg;
    int flag = 0;
    if (BYSTANDER == role) {
        MPI_Bcast(c, sizeof c, MPI_BYTE, root, rev);
        return;
    }
    if (SENDER == role) {
        mt_fill(c, sizeof c, 1, 0, 99);
        MPI_Bcast(c, sizeof c, MPI_BYTE, root, rev);
        for (int k = 0; k < 3; ++k) {
            mt_fill(b, sizeof b, 1, 0, 200 + k);
            MPI_Send(b, sizeof b, MPI_BYTE, src, 200 + k, rev);
        }
        return;
    }
    MPI_Recv(b, sizeof b, MPI_BYTE, src, 200, rev, MPI_STATUS_IGNORE); /* the broadcast's came first */
    while (!flag) {
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, rev, &flag, &st);
    }
    reset(&st);
    MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, rev, &st);
    expect("MPI_Probe(MPI_ANY_TAG)", &st, src, 201, sizeof b);
    MPI_Mprobe(src, MPI_ANY_TAG, rev, &msg, &st);
    MPI_Mrecv(b, sizeof b, MPI_BYTE, &msg, &st);
    mt_check("status", b, sizeof b, 1, 0, 201);
    reset(&st);
    MPI_Recv(b, sizeof b, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, rev, &st);
    expect("MPI_Recv(MPI_ANY_TAG)", &st, src, 202, sizeof b);
    mt_check("status", b, sizeof b, 1, 0, 202);
    MPI_Bcast(c, sizeof c, MPI_BYTE, root, rev);
    mt_check("status", c, sizeof c, 1, 0, 99);
}

/* Over an intercommunicator the source is the sender's rank in the remote
 * group (0 here: each side is a group of one, while the sender is world rank 1). */
static void intercomm(int role)
{
    unsigned char b[100];
    MPI_Comm self, inter;
    MPI_Status st;
    MPI_Comm_split(MPI_COMM_WORLD, BYSTANDER == role ? MPI_UNDEFINED : role, 0, &self);
    if (BYSTANDER == role) {
        return;
    }
    MPI_Intercomm_create(self, 0, MPI_COMM_WORLD, 1 - role, 300, &inter);
    if (SENDER == role) {
        mt_fill(b, sizeof b, 1, 0, 301);
        MPI_Send(b, sizeof b, MPI_BYTE, 0, 301, inter);
    } else {
        reset(&st);
        MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, inter, &st);
        expect("MPI_Probe on an intercommunicator", &st, 0, 301, sizeof b);
        reset(&st);
        MPI_Recv(b, sizeof b, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, inter, &st);
        expect("MPI_Recv on an intercommunicator", &st, 0, 301, sizeof b);
        mt_check("status", b, sizeof b, 1, 0, 301);
    }
    MPI_Comm_free(&inter);
    MPI_Comm_free(&self);
}

int main(int argc, char **argv)
{
    int rank, n;
    MPI_Comm rev;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_split(MPI_COMM_WORLD, 0, n - rank, &rev); /* rev rank = n - 1 - world rank */
    MPI_Comm_set_errhandler(rev, MPI_ERRORS_RETURN);
    int role = rank > 1 ? BYSTANDER : rank, other = n - 1 - (1 - rank); /* the other one's rev rank */
    if (BYSTANDER != role) {
        receive_modes(SENDER == role, rev, other);
        truncation(SENDER == role, rev, other);
    }
    internal_tags(role, rev, other, n - 2);
    intercomm(role);
    MPI_Comm_free(&rev);
    mt_pass("status");
    MPI_Finalize();
    return 0;
}
