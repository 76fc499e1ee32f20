/* A send the engine refuses fails, and the messages its sender sends after
 * it still come, in order: the refused one's sequence number is given up by
 * a SKIP (mtl_rttcc.h).  Run with LD_PRELOAD=refuse_send.so (shim/), which
 * has the engine refuse every mtl_rttcc message of tag REFUSED, as it does
 * when it runs out of memory, and the first try of every SKIP.  Rank 1
 * sends to rank 0 in each of -threads threads (a communicator each): eager,
 * empty, synchronous and rendezvous sends, blocking and not, refused (each
 * must fail) once or twice in a row, then a message that must come within
 * WITHIN seconds.  Rank 0 receives with MPI_ANY_TAG, so a refused message
 * that came would show.  Other ranks only join in.
 * -forged (with REFUSE_SEND_FORGE=1 for the shim): rank 1's first SKIP is
 * followed by forged ones, of which rank 0 must drop FORGED_DROPPED
 * (mtl_rttcc_bad_messages) and which must change nothing else.
 * -owe N: rank 1 only sends N refused messages, then all finalize; for the
 * abort paths of mtl_rttcc_skip.c, with the shim's REFUSE_SEND_SKIPS=all
 * (the SKIPs stay owed: finalize must end the job) and REFUSE_SEND_NOMEM=1
 * (past 64 owed the table cannot grow: the 65th refusal ends the job).
 * -then-send: rank 1 then sends rank 0 a message that rank 0 waits for,
 * held behind the SKIPs, while rank 1 waits in MPI_Finalize (the job must
 * end all the same).  run.sh checks the message and the exit status.
 * -pause MS: rank 1 then, PAUSES times, lets MPI try the SKIP (MPI_Iprobe)
 * and computes MS ms outside MPI; with REFUSE_SEND_SKIPS=<n> (each SKIP's
 * first n tries refused) the refusals span more than 500 ms, but little of
 * it trying: the job must go on (PAUSED is printed) and end with 0. */
#include <pthread.h>

#include "mpitest.h"

#define REFUSED 7007  /* shim/refuse_send.c's */
#define BIG (1 << 20) /* rendezvous */
#define MARKER 64
#define WITHIN 20.0
#define MAX_THREADS 8
#define FORGED_DROPPED 2 /* shim/refuse_send.c's duplicate and far-behind SKIPs */
#define PAUSES 4
#define PAUSED "rank 1 computed between refused SKIPs"

enum { EAGER, EMPTY, SYNC, RNDV, CASES };
static const size_t case_size[CASES] = {100, 0, 100, BIG};
#define STEPS (2 * CASES) /* each case blocking and not */

static MPI_Comm comms[MAX_THREADS];

/* Step k: case k / 2, blocking if k is odd, refused once or twice; then
 * the marker, tag k (rendezvous after a rendezvous case). */
static int step_case(int k) { return k / 2; }
static int step_blocking(int k) { return k % 2; }
static int step_refusals(int k) { return 1 + (k / 2 + k) % 2; }
static size_t marker_size(int k) { return RNDV == step_case(k) ? BIG : MARKER; }
static int marker_msg(int t, int k) { return 100 * t + k; }

/* Rank 1: one refused send; an error is what it must give. */
static void send_refused(int c, int blocking, unsigned char *buf, MPI_Comm comm)
{
    MPI_Request r;
    int rc, n = (int) case_size[c];
    if (blocking) {
        rc = SYNC == c ? MPI_Ssend(buf, n, MPI_BYTE, 0, REFUSED, comm) : MPI_Send(buf, n, MPI_BYTE, 0, REFUSED, comm);
    } else {
        rc = SYNC == c ? MPI_Issend(buf, n, MPI_BYTE, 0, REFUSED, comm, &r)
                       : MPI_Isend(buf, n, MPI_BYTE, 0, REFUSED, comm, &r);
        if (MPI_SUCCESS == rc) {
            rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
        }
    }
    if (MPI_SUCCESS == rc) {
        mt_fail("refused_send", "case %zu (blocking %zu) was not refused: is refuse_send.so preloaded?", (size_t) c,
                (size_t) blocking);
    }
}

static void sender(int t, unsigned char *buf)
{
    for (int k = 0; k < STEPS; ++k) {
        for (int i = 0; i < step_refusals(k); ++i) {
            send_refused(step_case(k), step_blocking(k), buf, comms[t]);
        }
        mt_fill(buf, marker_size(k), 1, 0, marker_msg(t, k));
        if (MPI_SUCCESS != MPI_Send(buf, (int) marker_size(k), MPI_BYTE, 0, k, comms[t])) {
            mt_fail("refused_send", "the marker of step %zu failed (thread %zu)", (size_t) k, (size_t) t);
        }
    }
}

/* Rank 0: each marker, next, within WITHIN seconds. */
static void receiver(int t, unsigned char *buf)
{
    for (int k = 0; k < STEPS; ++k) {
        MPI_Request r;
        MPI_Status st;
        double end = MPI_Wtime() + WITHIN;
        int done = 0, n;
        MPI_Irecv(buf, BIG, MPI_BYTE, 1, MPI_ANY_TAG, comms[t], &r);
        while (!done) {
            MPI_Test(&r, &done, &st);
            if (!done && MPI_Wtime() > end) {
                mt_fail("refused_send", "the message after refused step %zu did not come in %zu s", (size_t) k,
                        (size_t) WITHIN);
            }
        }
        MPI_Get_count(&st, MPI_BYTE, &n);
        if (st.MPI_TAG != k) {
            mt_fail("refused_send", "expected the marker of step %zu, got tag %zu (a refused message came?)",
                    (size_t) k, (size_t) st.MPI_TAG);
        }
        if ((size_t) n != marker_size(k)) {
            mt_fail("refused_send", "the marker had %zu bytes, not %zu", (size_t) n, marker_size(k));
        }
        mt_check("refused_send", buf, marker_size(k), 1, 0, marker_msg(t, k));
    }
}

static int rank, nthreads = 1;

/* -owe N: N refused messages from rank 1; -then-send: and one rank 0 waits
 * for; -pause MS: then pauses of MS ms outside MPI between tries. */
static void owe(int n, int then_send, int pause_ms)
{
    unsigned char byte = 0;
    for (int i = 0; i < n && 1 == rank; ++i) {
        if (MPI_SUCCESS == MPI_Send(&byte, 1, MPI_BYTE, 0, REFUSED, MPI_COMM_WORLD)) {
            mt_fail("refused_send", "refused message %zu of %zu went: is refuse_send.so preloaded?", (size_t) i,
                    (size_t) n);
        }
    }
    for (int i = 0; i < PAUSES && pause_ms > 0 && 1 == rank; ++i) {
        int flag;
        struct timespec ts = {pause_ms / 1000, (long) (pause_ms % 1000) * 1000000};
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE); /* a try */
        nanosleep(&ts, NULL);                                                              /* computing */
    }
    if (pause_ms > 0 && 1 == rank) {
        printf("%s\n", PAUSED);
        fflush(stdout);
    }
    if (then_send && 1 == rank) {
        MPI_Send(&byte, 1, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
    } else if (then_send && 0 == rank) {
        MPI_Recv(&byte, 1, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

/* MPI_T: mtl_rttcc_bad_messages, counted from the handle's start. */
typedef struct {
    MPI_T_pvar_session session;
    MPI_T_pvar_handle handle;
} counter_t;

static void bad_messages_open(counter_t *c)
{
    int index, count;
    if (MPI_SUCCESS != MPI_T_pvar_get_index("mtl_rttcc_bad_messages", MPI_T_PVAR_CLASS_COUNTER, &index)) {
        mt_fail("refused_send", "performance variable mtl_rttcc_bad_messages missing (%zu, %zu)", 0, 0);
    }
    MPI_T_pvar_session_create(&c->session);
    MPI_T_pvar_handle_alloc(c->session, index, NULL, &c->handle, &count);
}

/* Once it reached `expected` (the forged SKIPs may come last), or after
 * WITHIN seconds. */
static size_t bad_messages_close(counter_t *c, size_t expected)
{
    unsigned long value = 0;
    double end = MPI_Wtime() + WITHIN;
    int flag;
    for (;;) {
        MPI_T_pvar_read(c->session, c->handle, &value);
        if (value >= expected || MPI_Wtime() > end) {
            break;
        }
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE); /* progress */
    }
    MPI_T_pvar_handle_free(c->session, &c->handle);
    MPI_T_pvar_session_free(&c->session);
    return value;
}

static void *run(void *arg)
{
    int t = (int) (long) arg;
    unsigned char *buf = mt_alloc(BIG);
    if (1 == rank) {
        sender(t, buf);
    } else if (0 == rank) {
        receiver(t, buf);
    }
    free(buf);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided, forged = 0, owed = 0, then_send = 0, pause_ms = 0;
    pthread_t th[MAX_THREADS];
    counter_t bad;
    for (int i = 1; i < argc; ++i) {
        if (0 == strcmp(argv[i], "-threads") && i + 1 < argc) {
            nthreads = atoi(argv[i + 1]);
        } else if (0 == strcmp(argv[i], "-forged")) {
            forged = 1;
        } else if (0 == strcmp(argv[i], "-owe") && i + 1 < argc) {
            owed = atoi(argv[i + 1]);
        } else if (0 == strcmp(argv[i], "-pause") && i + 1 < argc) {
            pause_ms = atoi(argv[i + 1]);
        } else if (0 == strcmp(argv[i], "-then-send")) {
            then_send = 1;
        }
    }
    if (nthreads < 1 || nthreads > MAX_THREADS) {
        fprintf(stderr, "FAIL refused_send: -threads 1..%d\n", MAX_THREADS);
        return 2;
    }
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Init_thread(&argc, &argv, nthreads > 1 ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided);
    if (nthreads > 1 && MPI_THREAD_MULTIPLE != provided) {
        fprintf(stderr, "FAIL refused_send: MPI_THREAD_MULTIPLE not provided (%d)\n", provided);
        MPI_Abort(MPI_COMM_WORLD, 4);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (forged && 0 == rank) {
        bad_messages_open(&bad);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN); /* the dups take it */
    if (owed > 0) { /* no PASS, and no barrier: rank 0 waits for nothing of rank 1's */
        owe(owed, then_send, pause_ms);
        MPI_T_finalize();
        MPI_Finalize();
        return 0;
    }
    for (int t = 0; t < nthreads; ++t) {
        MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
    }
    for (long t = 0; t < nthreads; ++t) {
        pthread_create(&th[t], NULL, run, (void *) t);
    }
    for (int t = 0; t < nthreads; ++t) {
        pthread_join(th[t], NULL);
    }
    for (int t = 0; t < nthreads; ++t) {
        MPI_Comm_free(&comms[t]);
    }
    if (forged && 0 == rank) {
        size_t n = bad_messages_close(&bad, FORGED_DROPPED);
        if (FORGED_DROPPED != n) {
            mt_fail("refused_send", "%zu messages dropped as bad, expected the %zu forged SKIPs", n, FORGED_DROPPED);
        }
    }
    mt_pass("refused_send");
    MPI_T_finalize(); /* before MPI_Finalize: 4.1.4 crashes the other way round */
    MPI_Finalize();
    return 0;
}
