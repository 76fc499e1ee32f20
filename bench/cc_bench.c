/*
 * cc_bench: congestion towards one host, seen from the application and from
 * rttcc's RTT table.
 *
 *   mpirun-tb -np 4 --mca btl rttcc,self ./cc_bench -shaped HOST [-t SECONDS]
 *       [-warm SECONDS] [-size BYTES] [-window N] [-gap_us US] [-nap_us US]
 *       [-ping_nap_us US]
 *
 * Roles, by host name (MPI_Get_processor_name; mpirun-tb maps one rank per
 * host in turn, so with 3 hosts rank 1 is on the second host):
 *   sink      the lowest rank on HOST: receives every stream, answers pings;
 *   pinger    rank 0 (must be off HOST): ping-pongs 8-byte messages with the
 *             sink for the whole run, and after every 8th also pings each
 *             rank off HOST once (reference pings: same load, unshaped path);
 *   streamers every other rank off HOST: keep `window` messages of `size`
 *             bytes (Isend, default 4 x 1 MiB) in flight to the sink for `t`
 *             seconds (default 4), then send one last message;
 *   other ranks on HOST wait (they are neither pinged nor streamed to).
 * Every message is verified: stream messages carry a pattern of source,
 * message number and offset, pings their number; a mismatch prints FAIL and
 * aborts.  RTTCC_MPITEST_CORRUPT=1 flips one received byte (self-test).
 *
 * Measured from `warm` seconds (default 1: start-up and slow start left
 * out) to `t`:
 *   MBps        stream bytes completed at the sink in that span, over it;
 *   p50/p99/max round trips of the pings to the sink, us (application level:
 *               independent of rttcc's estimator; queueing on the shaped link
 *               both ways plus both ranks' reaction time);
 *   ref_p50     the same for the reference pings (the reaction-time floor);
 *   srtt_*      btl_rttcc_rtt_srtt bound to MPI_COMM_WORLD, read through MPI_T
 *               by the pinger while the load is still on: the sink's entry,
 *               the median over the peers off HOST, and every entry;
 *   stream_*    each streamer's own srtt, cwnd and losses towards the sink
 *               (its row of the table, read just before its load ends).
 * The srtt and stream values are nan without rttcc (e.g. btl tcp).
 *
 * Every rank shares the machine's cores (the testbed's hosts are namespaces),
 * so waiting ranks do not spin: streamers and the sink nap `nap_us` (100)
 * when a poll finds nothing and the pinger `ping_nap_us` (10) between polls
 * for a pong, with a 1 us timer slack.  Spinning ranks starve the sink and
 * the pinger: the reference pings then take milliseconds and rttcc's ACKs
 * come late enough to fire retransmission timeouts.
 *
 * One line, from rank 0:
 *   cc_bench MBps=.. ping_n=.. p50_us=.. p99_us=.. max_us=.. ref_n=..
 *            ref_p50_us=.. srtt_shaped_us=.. srtt_others_us=.. srtt_us=r0,r1,..
 *            stream_srtt_us=.. stream_cwnd=.. stream_losses=..
 */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

enum { TAG_DATA = 1, TAG_LAST = 2, TAG_PING = 3, TAG_PONG = 4, TAG_STOP = 5, TAG_RESULT = 90 };
enum { MAX_WINDOW = 64, REF_EVERY = 8, PINGER = 0 };

typedef struct opts {
    const char *shaped; /* host name of the shaped host */
    double t;           /* seconds of load */
    double warm;        /* seconds left out at the start */
    size_t size;        /* bytes per stream message, a multiple of 8 */
    int window;         /* stream messages in flight per streamer */
    int gap_us;         /* pause between pings, microseconds */
    int nap_us;         /* streamers and sink sleep this long when a poll finds nothing */
    int ping_nap_us;    /* the pinger sleeps this long between polls for a pong */
} opts_t;

static void fail(const char *what, long a, long b)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fprintf(stderr, "FAIL cc_bench on rank %d: %s (%ld, %ld)\n", rank, what, a, b);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 3);
}

static void nap(int us)
{
    if (us > 0) {
        usleep((useconds_t) us);
    }
}

/* Word `i` of stream message `k` from rank `src`. */
static inline uint64_t word(int src, uint64_t k, uint64_t i)
{
    return ((uint64_t) src << 56) ^ (k << 32) ^ (i * 0x9E3779B97F4A7C15ull);
}

static void fill(uint64_t *buf, size_t words, int src, uint64_t k)
{
    for (size_t i = 0; i < words; ++i) {
        buf[i] = word(src, k, i);
    }
}

static void check(uint64_t *buf, size_t words, int src, uint64_t k)
{
    static int corrupt = -1;
    if (corrupt < 0) {
        corrupt = NULL != getenv("RTTCC_MPITEST_CORRUPT");
    }
    if (corrupt) {
        ((unsigned char *) buf)[words * 4] ^= 0x40;
    }
    for (size_t i = 0; i < words; ++i) {
        if (buf[i] != word(src, k, i)) {
            fail("stream message corrupt at (message, word)", (long) k, (long) i);
        }
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

/* The q-quantile (0..1) of n sorted values, nearest rank; nan if none. */
static double quantile(const double *v, int n, double q)
{
    if (n <= 0) {
        return NAN;
    }
    int i = (int) ceil(q * n) - 1;
    return v[i < 0 ? 0 : i >= n ? n - 1 : i];
}

/* One column of rttcc's RTT table bound to MPI_COMM_WORLD, into v[0..n) as
 * doubles; 0 (v untouched) when there is no such variable (no rttcc). */
static int read_column(const char *name, double *v, int n)
{
    int index, count, ok;
    MPI_T_pvar_session session;
    MPI_T_pvar_handle handle;
    MPI_Comm comm = MPI_COMM_WORLD;
    MPI_Datatype type;

    if (MPI_SUCCESS != MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_GENERIC, &index) ||
        MPI_SUCCESS != MPI_T_pvar_get_info(index, NULL, NULL, NULL, NULL, &type, NULL, NULL, NULL, NULL, NULL,
                                           NULL, NULL) ||
        MPI_SUCCESS != MPI_T_pvar_session_create(&session)) {
        return 0;
    }
    ok = MPI_SUCCESS == MPI_T_pvar_handle_alloc(session, index, &comm, &handle, &count) && count == n;
    if (ok) {
        if (MPI_DOUBLE == type) {
            ok = MPI_SUCCESS == MPI_T_pvar_read(session, handle, v);
        } else { /* counts: unsigned long */
            unsigned long *u = calloc(n, sizeof *u);
            ok = MPI_SUCCESS == MPI_T_pvar_read(session, handle, u);
            for (int i = 0; ok && i < n; ++i) {
                v[i] = (double) u[i];
            }
            free(u);
        }
        MPI_T_pvar_handle_free(session, &handle);
    }
    MPI_T_pvar_session_free(&session);
    return ok;
}

/* A ping (or the stop) completed on *req with status st: answers it and
 * posts the next receive.  Returns 0 once the pinger said stop. */
static int serve_ping(const MPI_Status *st, uint64_t *ping, MPI_Request *req)
{
    if (TAG_STOP == st->MPI_TAG) {
        return 0;
    }
    MPI_Send(ping, 1, MPI_UINT64_T, PINGER, TAG_PONG, MPI_COMM_WORLD);
    MPI_Irecv(ping, 1, MPI_UINT64_T, PINGER, MPI_ANY_TAG, MPI_COMM_WORLD, req);
    return 1;
}

/* Streamer: `window` messages in flight to the sink until t0 + t, then one
 * TAG_LAST message; answers reference pings until the pinger stops.  Puts
 * its own row towards the sink (srtt, cwnd, losses) in row[] just before
 * its load ends. */
static void streamer(const opts_t *o, int rank, int n, int sink, double t0, double row[3])
{
    static const char *columns[3] = {"btl_rttcc_rtt_srtt", "btl_rttcc_rtt_cwnd", "btl_rttcc_rtt_losses"};
    const size_t words = o->size / 8;
    const double end = t0 + o->t;
    uint64_t *buf[MAX_WINDOW], k = 0, ping;
    MPI_Request req[MAX_WINDOW + 1]; /* the window, then the ping receive */
    int pinging = 1, sent_last = 0, in_flight = 0, have_row = 0;

    for (int w = 0; w < o->window; ++w) {
        buf[w] = malloc(words * 8);
        req[w] = MPI_REQUEST_NULL;
    }
    MPI_Irecv(&ping, 1, MPI_UINT64_T, PINGER, MPI_ANY_TAG, MPI_COMM_WORLD, &req[o->window]);
    while (pinging || !sent_last || in_flight) {
        if (!have_row && MPI_Wtime() >= end - 0.05) {
            double *col = calloc(n, sizeof *col);
            for (int c = 0; c < 3; ++c) {
                row[c] = read_column(columns[c], col, n) ? col[sink] : NAN;
            }
            free(col);
            have_row = 1;
        }
        for (int w = 0; w < o->window && !sent_last; ++w) {
            if (MPI_REQUEST_NULL == req[w]) {
                sent_last = MPI_Wtime() >= end;
                fill(buf[w], words, rank, k++);
                MPI_Isend(buf[w], (int) o->size, MPI_BYTE, sink, sent_last ? TAG_LAST : TAG_DATA, MPI_COMM_WORLD,
                          &req[w]);
                ++in_flight;
            }
        }
        int index, flag;
        MPI_Status st;
        MPI_Testany(o->window + 1, req, &index, &flag, &st);
        if (!flag || MPI_UNDEFINED == index) {
            nap(o->nap_us);
        } else if (index == o->window) {
            pinging = serve_ping(&st, &ping, &req[o->window]);
        } else {
            --in_flight;
        }
    }
    for (int w = 0; w < o->window; ++w) {
        free(buf[w]);
    }
}

/* One stream receive at the sink. */
typedef struct slot {
    uint64_t *buf;
    int src;    /* streamer */
    uint64_t k; /* message number it was posted for (a source's messages match in order) */
} slot_t;

/* Cancels the receives posted to `src` past its last message, number `last`
 * (a source's messages match its receives in posting order, so none of
 * those can match any more). */
static void cancel_past(slot_t *slots, MPI_Request *req, int nslots, int src, uint64_t last)
{
    for (int i = 0; i < nslots; ++i) {
        if (slots[i].src == src && slots[i].k > last && MPI_REQUEST_NULL != req[i]) {
            MPI_Status st;
            int cancelled;
            MPI_Cancel(&req[i]);
            MPI_Wait(&req[i], &st);
            MPI_Test_cancelled(&st, &cancelled);
            if (!cancelled) {
                fail("a message arrived after the last one (from, number)", src, (long) slots[i].k);
            }
        }
    }
}

/* Sink: `window` receives posted per streamer; verifies and counts what
 * completes; answers pings.  A streamer is done when its TAG_LAST message
 * and every one before it completed (they may complete out of order).
 * Returns MB/s over [t0 + warm, t0 + t]. */
static double sink(const opts_t *o, int n, const int *is_streamer, double t0)
{
    const size_t words = o->size / 8;
    int nslots = 0, streams_open = 0, pinging = 1, s = 0;
    for (int r = 0; r < n; ++r) {
        streams_open += is_streamer[r];
    }
    nslots = streams_open * o->window;
    slot_t *slots = calloc(nslots, sizeof *slots);
    MPI_Request *req = calloc(nslots + 1, sizeof *req); /* the slots, then the ping receive */
    uint64_t *next_k = calloc(n, sizeof *next_k), *done = calloc(n, sizeof *done), ping;
    uint64_t *last = calloc(n, sizeof *last); /* number of a streamer's TAG_LAST message, UINT64_MAX until seen */
    double bytes = 0, first_t = 0, last_t = 0;

    for (int r = 0; r < n; ++r) {
        last[r] = UINT64_MAX;
        for (int w = 0; is_streamer[r] && w < o->window; ++w, ++s) {
            slots[s] = (slot_t){malloc(words * 8), r, next_k[r]++};
            MPI_Irecv(slots[s].buf, (int) o->size, MPI_BYTE, r, MPI_ANY_TAG, MPI_COMM_WORLD, &req[s]);
        }
    }
    MPI_Irecv(&ping, 1, MPI_UINT64_T, PINGER, MPI_ANY_TAG, MPI_COMM_WORLD, &req[nslots]);
    while (streams_open || pinging) {
        int index, flag, count;
        MPI_Status st;
        MPI_Testany(nslots + 1, req, &index, &flag, &st);
        if (!flag || MPI_UNDEFINED == index) {
            nap(o->nap_us);
            continue;
        }
        if (index == nslots) {
            pinging = serve_ping(&st, &ping, &req[nslots]);
            continue;
        }
        slot_t *sl = &slots[index];
        const int src = sl->src;
        MPI_Get_count(&st, MPI_BYTE, &count);
        if ((size_t) count != o->size) {
            fail("stream message of the wrong size (bytes, expected)", count, (long) o->size);
        }
        check(sl->buf, words, src, sl->k);
        const double now = MPI_Wtime();
        if (now >= t0 + o->warm && now <= t0 + o->t) {
            if (0 == first_t) {
                first_t = now; /* the span starts at the first completion in it */
            } else {
                bytes += (double) o->size;
            }
            last_t = now;
        }
        if (TAG_LAST == st.MPI_TAG) {
            last[src] = sl->k;
            cancel_past(slots, req, nslots, src, sl->k);
        }
        if (last[src] == UINT64_MAX) {
            sl->k = next_k[src]++;
            MPI_Irecv(sl->buf, (int) o->size, MPI_BYTE, src, MPI_ANY_TAG, MPI_COMM_WORLD, &req[index]);
        }
        if (++done[src] == last[src] + 1) {
            --streams_open;
        }
    }
    for (int i = 0; i < nslots; ++i) {
        free(slots[i].buf);
    }
    free(slots);
    free(req);
    free(next_k);
    free(done);
    free(last);
    return last_t > first_t ? bytes / (last_t - first_t) / 1e6 : 0;
}

/* A rank on the shaped host that is not the sink: waits for the stop. */
static void bystander(void)
{
    uint64_t ping;
    MPI_Request req;
    MPI_Status st;
    MPI_Irecv(&ping, 1, MPI_UINT64_T, PINGER, MPI_ANY_TAG, MPI_COMM_WORLD, &req);
    for (int going = 1; going;) {
        int flag;
        MPI_Test(&req, &flag, &st);
        if (flag) {
            going = serve_ping(&st, &ping, &req);
        } else {
            nap(1000);
        }
    }
}

/* One verified 8-byte round trip to `peer`, microseconds. */
static double ping_us(int peer, uint64_t seq, int nap_us)
{
    uint64_t out = seq, in = 0;
    MPI_Request req;
    int done = 0;
    const double t = MPI_Wtime();
    MPI_Irecv(&in, 1, MPI_UINT64_T, peer, TAG_PONG, MPI_COMM_WORLD, &req);
    MPI_Send(&out, 1, MPI_UINT64_T, peer, TAG_PING, MPI_COMM_WORLD);
    for (MPI_Test(&req, &done, MPI_STATUS_IGNORE); !done; MPI_Test(&req, &done, MPI_STATUS_IGNORE)) {
        nap(nap_us);
    }
    const double us = (MPI_Wtime() - t) * 1e6;
    if (in != seq) {
        fail("pong carries the wrong number (got, sent)", (long) in, (long) seq);
    }
    return us;
}

static double median(double *v, int n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n ? (n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2])) : NAN;
}

/* Pinger: pings until shortly before the load ends, reads the RTT table,
 * stops everyone and prints the line with what the sink and the streamers
 * send back. */
static void pinger(const opts_t *o, int n, int the_sink, const int *shaped, const int *is_streamer, double t0)
{
    const int cap = (int) (o->t * 1e6 / (o->gap_us + 20)) + 16;
    double *rtt = malloc(cap * sizeof *rtt), *ref = malloc(cap * sizeof *ref);
    double *srtt = calloc(n, sizeof *srtt), *others = calloc(n, sizeof *others), v;
    int np = 0, nref = 0, no = 0;
    uint64_t seq = 1;

    for (double now = MPI_Wtime(); now < t0 + o->t - 0.1; now = MPI_Wtime()) {
        const double us = ping_us(the_sink, seq++, o->ping_nap_us);
        if (now >= t0 + o->warm && np < cap) {
            rtt[np++] = us;
        }
        const int with_refs = 0 == seq % REF_EVERY;
        for (int r = 1; with_refs && r < n; ++r) {
            if (!shaped[r]) {
                const double u = ping_us(r, seq++, o->ping_nap_us);
                if (now >= t0 + o->warm && nref < cap) {
                    ref[nref++] = u;
                }
            }
        }
        nap(o->gap_us);
    }
    const int have_srtt = read_column("btl_rttcc_rtt_srtt", srtt, n); /* the load is still on */
    const uint64_t stop = UINT64_MAX;
    for (int r = 1; r < n; ++r) {
        MPI_Send(&stop, 1, MPI_UINT64_T, r, TAG_STOP, MPI_COMM_WORLD);
    }
    for (int r = 1; r < n; ++r) {
        if (!shaped[r]) {
            others[no++] = srtt[r];
        }
    }
    qsort(rtt, np, sizeof *rtt, cmp_double);
    qsort(ref, nref, sizeof *ref, cmp_double);
    MPI_Recv(&v, 1, MPI_DOUBLE, the_sink, TAG_RESULT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("cc_bench MBps=%.2f ping_n=%d p50_us=%.0f p99_us=%.0f max_us=%.0f ref_n=%d ref_p50_us=%.0f", v, np,
           quantile(rtt, np, 0.5), quantile(rtt, np, 0.99), quantile(rtt, np, 1.0), nref, quantile(ref, nref, 0.5));
    if (have_srtt) {
        printf(" srtt_shaped_us=%.1f srtt_others_us=%.1f srtt_us=", srtt[the_sink], median(others, no));
        for (int r = 0; r < n; ++r) {
            printf("%s%.1f", r ? "," : "", srtt[r]);
        }
    } else {
        printf(" srtt_shaped_us=nan srtt_others_us=nan srtt_us=nan");
    }
    static const char *keys[3] = {"stream_srtt_us", "stream_cwnd", "stream_losses"};
    for (int c = 0; c < 3; ++c) {
        printf(" %s=", keys[c]);
        for (int r = 1, first = 1; r < n; ++r) {
            if (is_streamer[r]) {
                MPI_Recv(&v, 1, MPI_DOUBLE, r, TAG_RESULT + 1 + c, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                printf("%s%.1f", first ? "" : ",", v);
                first = 0;
            }
        }
    }
    printf("\n");
    fflush(stdout);
    free(rtt);
    free(ref);
    free(srtt);
    free(others);
}

static void parse(opts_t *o, int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];
        if (0 == strcmp(k, "-shaped")) {
            o->shaped = v;
        } else if (0 == strcmp(k, "-t")) {
            o->t = atof(v);
        } else if (0 == strcmp(k, "-warm")) {
            o->warm = atof(v);
        } else if (0 == strcmp(k, "-size")) {
            o->size = strtoull(v, NULL, 0);
        } else if (0 == strcmp(k, "-window")) {
            o->window = atoi(v);
        } else if (0 == strcmp(k, "-gap_us")) {
            o->gap_us = atoi(v);
        } else if (0 == strcmp(k, "-nap_us")) {
            o->nap_us = atoi(v);
        } else if (0 == strcmp(k, "-ping_nap_us")) {
            o->ping_nap_us = atoi(v);
        }
    }
}

int main(int argc, char **argv)
{
    opts_t o = {NULL, 4.0, 1.0, 1u << 20, 4, 200, 100, 10};
    int provided, rank, n, len, the_sink = -1, streamers = 0;

    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    parse(&o, argc, argv);

    /* Who is on the shaped host. */
    char name[MPI_MAX_PROCESSOR_NAME] = {0}, *names = malloc((size_t) n * MPI_MAX_PROCESSOR_NAME);
    MPI_Get_processor_name(name, &len);
    MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, MPI_COMM_WORLD);
    int *shaped = calloc(n, sizeof *shaped), *is_streamer = calloc(n, sizeof *is_streamer);
    for (int r = 0; r < n && o.shaped; ++r) {
        shaped[r] = 0 == strcmp(names + (size_t) r * MPI_MAX_PROCESSOR_NAME, o.shaped);
        if (shaped[r] && the_sink < 0) {
            the_sink = r;
        }
    }
    for (int r = 1; r < n; ++r) {
        is_streamer[r] = !shaped[r];
        streamers += is_streamer[r];
    }
    if (!o.shaped || the_sink <= 0 || 0 == streamers || o.window < 1 || o.window > MAX_WINDOW || o.size < 8 ||
        o.size % 8 || o.size > (1u << 30) || o.warm < 0 || o.t < o.warm + 0.5 || o.gap_us < 0) {
        if (0 == rank) {
            fprintf(stderr, "usage: cc_bench -shaped HOST [-t S] [-warm S (t - warm >= 0.5)] [-size BYTES (n * 8)]"
                            " [-window 1..64] [-gap_us US] [-nap_us US] [-ping_nap_us US]\n"
                            "  rank 0 off HOST, a rank on it and another off it (rank 0 is on %s)\n", names);
        }
        MPI_Finalize();
        return 1;
    }

    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0); /* naps of microseconds, not the default 50 us slack */
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    if (PINGER == rank) {
        pinger(&o, n, the_sink, shaped, is_streamer, t0);
    } else if (rank == the_sink) {
        const double mbps = sink(&o, n, is_streamer, t0);
        MPI_Send(&mbps, 1, MPI_DOUBLE, PINGER, TAG_RESULT, MPI_COMM_WORLD);
    } else if (is_streamer[rank]) {
        double row[3] = {NAN, NAN, NAN};
        streamer(&o, rank, n, the_sink, t0, row);
        for (int c = 0; c < 3; ++c) {
            MPI_Send(&row[c], 1, MPI_DOUBLE, PINGER, TAG_RESULT + 1 + c, MPI_COMM_WORLD);
        }
    } else {
        bystander();
    }
    free(names);
    free(shaped);
    free(is_streamer);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_T_finalize(); /* before MPI_Finalize: 4.1.4 crashes the other way round */
    MPI_Finalize();
    return 0;
}
