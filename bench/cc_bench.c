/*
 * cc_bench: congestion towards one host, seen from the application and from
 * rttcc's RTT table.
 *
 *   mpirun-tb -np 4 ./cc_bench -shaped HOST [-t SECONDS] [-warm SECONDS]
 *             [-size BYTES] [-window N] [-gap_us US]
 *
 * Roles (by host name, MPI_Get_processor_name; mpirun-tb maps one rank per
 * host in turn, so rank 1 is on the second host):
 *   sink     the lowest rank on HOST: receives every stream, answers pings;
 *   pinger   rank 0 (must not be on HOST): ping-pongs 8-byte messages with
 *            the sink for the whole run, and every 8th ping also pings each
 *            rank off HOST once (reference pings, same load, unshaped path);
 *   streamer every other rank off HOST: keeps `window` messages of `size`
 *            bytes (Isend) in flight to the sink for `t` seconds;
 *   other ranks on HOST only answer reference pings... and are not pinged
 *            (their path is the shaped one).
 * Every message is verified (a pattern of source, message number and
 * offset; pings carry their number); a mismatch prints FAIL and aborts.
 *
 * Measured from `warm` seconds after the start to `t` (the start-up, slow
 * start included, is left out):
 *   MB/s at the sink (bytes of the messages completed in that span, over it),
 *   p50/p99/max of the ping round trips to the sink (us), p50 of the
 *   reference pings, and, read through MPI_T on the pinger just before the
 *   load ends, btl_rttcc_rtt_srtt bound to MPI_COMM_WORLD (all peers), plus
 *   each streamer's own srtt/cwnd/losses towards the sink (nan without rttcc).
 * One line, from rank 0:
 *   cc_bench MBps=.. ping_n=.. p50_us=.. p99_us=.. max_us=.. ref_p50_us=..
 *            srtt_shaped_us=.. srtt_others_us=.. (median) srtt_us=r0,r1,..
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

enum { TAG_DATA = 1, TAG_LAST = 2, TAG_PING = 3, TAG_PONG = 4, TAG_STOP = 5 };
enum { MAX_WINDOW = 64, REF_EVERY = 8 };

typedef struct opts {
    const char *shaped; /* host name of the shaped host */
    double t;           /* seconds of load */
    double warm;        /* seconds left out at the start */
    size_t size;        /* bytes per stream message */
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

static void check(const uint64_t *buf, size_t words, int src, uint64_t k)
{
    for (size_t i = 0; i < words; ++i) {
        if (buf[i] != word(src, k, i)) {
            fail("stream message corrupt at word (message, word)", (long) k, (long) i);
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

/* One rttcc RTT-table column bound to MPI_COMM_WORLD into v[0..n): false
 * (v untouched) without rttcc (btl/tcp runs). */
static int read_column(const char *name, double *v, int n)
{
    int index, count;
    MPI_T_pvar_session session;
    MPI_T_pvar_handle handle;
    MPI_Comm comm = MPI_COMM_WORLD;

    if (MPI_SUCCESS != MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_GENERIC, &index)) {
        return 0;
    }
    if (MPI_SUCCESS != MPI_T_pvar_session_create(&session)) {
        return 0;
    }
    int ok = MPI_SUCCESS == MPI_T_pvar_handle_alloc(session, index, &comm, &handle, &count) && count == n;
    if (ok) {
        MPI_Datatype type;
        MPI_T_pvar_get_info(index, NULL, NULL, NULL, NULL, &type, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
        if (MPI_DOUBLE == type) {
            ok = MPI_SUCCESS == MPI_T_pvar_read(session, handle, v);
        } else {
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

/* Answers a ping that completed on `req` (8 bytes in *slot) and re-posts it.
 * Returns 0 once the pinger said stop. */
static int answer_ping(MPI_Request *req, uint64_t *slot, int pinger)
{
    MPI_Status st;
    MPI_Wait(req, &st);
    if (TAG_STOP == st.MPI_TAG) {
        return 0;
    }
    MPI_Send(slot, 1, MPI_UINT64_T, pinger, TAG_PONG, MPI_COMM_WORLD);
    MPI_Irecv(slot, 1, MPI_UINT64_T, pinger, MPI_ANY_TAG, MPI_COMM_WORLD, req);
    return 1;
}

/* Streamer: `window` messages in flight to the sink until `end`, then one
 * TAG_LAST message; answers reference pings until the pinger stops.  Reads
 * its own row towards the sink (srtt, cwnd, losses) just before `end`. */
static void streamer(const opts_t *o, int rank, int n, int sink, int pinger, double t0, double row[3])
{
    const size_t words = o->size / 8;
    uint64_t *buf[MAX_WINDOW];
    MPI_Request req[MAX_WINDOW + 1];
    uint64_t k = 0, ping;
    int pinging = 1, sent_last = 0, in_flight = 0, read = 0;

    for (int w = 0; w < o->window; ++w) {
        buf[w] = malloc(words * 8);
        req[w] = MPI_REQUEST_NULL;
    }
    MPI_Irecv(&ping, 1, MPI_UINT64_T, pinger, MPI_ANY_TAG, MPI_COMM_WORLD, &req[o->window]);
    const double end = t0 + o->t;
    while (pinging || !sent_last || in_flight) {
        const double now = MPI_Wtime();
        if (!read && now >= end - 0.05) {
            double *col = calloc(n, sizeof *col);
            const char *names[3] = {"btl_rttcc_rtt_srtt", "btl_rttcc_rtt_cwnd", "btl_rttcc_rtt_losses"};
            for (int c = 0; c < 3; ++c) {
                row[c] = read_column(names[c], col, n) ? col[sink] : NAN;
            }
            free(col);
            read = 1;
        }
        for (int w = 0; w < o->window && !sent_last; ++w) {
            if (MPI_REQUEST_NULL != req[w]) {
                continue;
            }
            const int last = MPI_Wtime() >= end;
            fill(buf[w], words, rank, k);
            MPI_Isend(buf[w], (int) o->size, MPI_BYTE, sink, last ? TAG_LAST : TAG_DATA, MPI_COMM_WORLD, &req[w]);
            ++k;
            ++in_flight;
            sent_last = last;
        }
        int index, flag;
        MPI_Status st;
        MPI_Testany(o->window + 1, req, &index, &flag, &st);
        if (!flag || MPI_UNDEFINED == index) {
            if (o->nap_us > 0) {
                usleep(o->nap_us);
            }
            continue;
        }
        if (index == o->window) {
            pinging = TAG_STOP != st.MPI_TAG;
            if (pinging) {
                MPI_Send(&ping, 1, MPI_UINT64_T, pinger, TAG_PONG, MPI_COMM_WORLD);
                MPI_Irecv(&ping, 1, MPI_UINT64_T, pinger, MPI_ANY_TAG, MPI_COMM_WORLD, &req[o->window]);
            }
        } else {
            --in_flight;
        }
    }
    for (int w = 0; w < o->window; ++w) {
        free(buf[w]);
    }
}

/* One stream receive slot at the sink. */
typedef struct slot {
    uint64_t *buf;
    int src;    /* streamer */
    uint64_t k; /* message number it was posted for */
} slot_t;

/* Sink: `window` receives posted per streamer; verifies and counts what
 * completes; answers pings.  Returns MB/s over [t0 + warm, t0 + t]. */
static double sink(const opts_t *o, int n, const int *is_streamer, int pinger, double t0)
{
    const size_t words = o->size / 8;
    int nstreamers = 0;
    for (int r = 0; r < n; ++r) {
        nstreamers += is_streamer[r];
    }
    const int nslots = nstreamers * o->window;
    slot_t *slots = calloc(nslots + 1, sizeof *slots);
    MPI_Request *req = calloc(nslots + 1, sizeof *req);
    uint64_t *next_k = calloc(n, sizeof *next_k);
    int *open = calloc(n, sizeof *open); /* streamer has not sent TAG_LAST yet */
    uint64_t ping;
    int s = 0, streams_open = nstreamers, pinging = 1;
    double bytes = 0, first = 0, last = 0;

    for (int r = 0; r < n; ++r) {
        open[r] = is_streamer[r];
        for (int w = 0; is_streamer[r] && w < o->window; ++w, ++s) {
            slots[s].buf = malloc(words * 8);
            slots[s].src = r;
            slots[s].k = next_k[r]++;
            MPI_Irecv(slots[s].buf, (int) o->size, MPI_BYTE, r, MPI_ANY_TAG, MPI_COMM_WORLD, &req[s]);
        }
    }
    MPI_Irecv(&ping, 1, MPI_UINT64_T, pinger, MPI_ANY_TAG, MPI_COMM_WORLD, &req[nslots]);
    while (streams_open || pinging) {
        int index, flag;
        MPI_Status st;
        MPI_Testany(nslots + 1, req, &index, &flag, &st);
        if (!flag || MPI_UNDEFINED == index) {
            if (o->nap_us > 0) {
                usleep(o->nap_us);
            }
            continue;
        }
        if (index == nslots) {
            pinging = TAG_STOP != st.MPI_TAG;
            if (pinging) {
                MPI_Send(&ping, 1, MPI_UINT64_T, pinger, TAG_PONG, MPI_COMM_WORLD);
                MPI_Irecv(&ping, 1, MPI_UINT64_T, pinger, MPI_ANY_TAG, MPI_COMM_WORLD, &req[nslots]);
            }
            continue;
        }
        slot_t *sl = &slots[index];
        int count;
        MPI_Get_count(&st, MPI_BYTE, &count);
        if ((size_t) count != o->size) {
            fail("stream message of the wrong size (bytes, expected)", count, (long) o->size);
        }
        check(sl->buf, words, sl->src, sl->k);
        const double now = MPI_Wtime();
        if (now >= t0 + o->warm && now <= t0 + o->t) {
            if (0 == first) {
                first = now; /* the span starts at the first completion in it */
            } else {
                bytes += (double) o->size;
            }
            last = now;
        }
        if (TAG_LAST == st.MPI_TAG) {
            open[sl->src] = 0;
            --streams_open;
        }
        if (open[sl->src]) {
            sl->k = next_k[sl->src]++;
            MPI_Irecv(sl->buf, (int) o->size, MPI_BYTE, sl->src, MPI_ANY_TAG, MPI_COMM_WORLD, &req[index]);
        }
        if (!streams_open) {
            /* receives posted past the last message: cancel them */
            for (int i = 0; i < nslots; ++i) {
                if (MPI_REQUEST_NULL != req[i]) {
                    int cancelled;
                    MPI_Cancel(&req[i]);
                    MPI_Wait(&req[i], &st);
                    MPI_Test_cancelled(&st, &cancelled);
                    if (!cancelled) {
                        fail("a message arrived after the last one (slot, from)", i, slots[i].src);
                    }
                }
            }
        }
    }
    for (int i = 0; i < nslots; ++i) {
        free(slots[i].buf);
    }
    free(slots);
    free(req);
    free(next_k);
    free(open);
    return last > first ? bytes / (last - first) / 1e6 : 0;
}

/* Other ranks on the shaped host: idle until the pinger stops. */
static void bystander(int pinger)
{
    uint64_t ping;
    MPI_Request req;
    MPI_Irecv(&ping, 1, MPI_UINT64_T, pinger, MPI_ANY_TAG, MPI_COMM_WORLD, &req);
    while (answer_ping(&req, &ping, pinger)) {
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
        if (nap_us > 0) {
            usleep(nap_us);
        }
    }
    const double us = (MPI_Wtime() - t) * 1e6;
    if (in != seq) {
        fail("pong carries the wrong number (got, sent)", (long) in, (long) seq);
    }
    return us;
}

int main(int argc, char **argv)
{
    opts_t o = {NULL, 4.0, 1.0, 1u << 20, 4, 200, 0, 0};
    int provided, rank, n;

    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    for (int i = 1; i + 1 < argc; i += 2) {
        if (0 == strcmp(argv[i], "-shaped")) {
            o.shaped = argv[i + 1];
        } else if (0 == strcmp(argv[i], "-t")) {
            o.t = atof(argv[i + 1]);
        } else if (0 == strcmp(argv[i], "-warm")) {
            o.warm = atof(argv[i + 1]);
        } else if (0 == strcmp(argv[i], "-size")) {
            o.size = strtoull(argv[i + 1], NULL, 0);
        } else if (0 == strcmp(argv[i], "-window")) {
            o.window = atoi(argv[i + 1]);
        } else if (0 == strcmp(argv[i], "-gap_us")) {
            o.gap_us = atoi(argv[i + 1]);
        } else if (0 == strcmp(argv[i], "-nap_us")) {
            o.nap_us = atoi(argv[i + 1]);
        } else if (0 == strcmp(argv[i], "-ping_nap_us")) {
            o.ping_nap_us = atoi(argv[i + 1]);
        }
    }

    /* Who is on the shaped host. */
    char name[MPI_MAX_PROCESSOR_NAME], *names = malloc((size_t) n * MPI_MAX_PROCESSOR_NAME);
    int len;
    memset(name, 0, sizeof name);
    MPI_Get_processor_name(name, &len);
    MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, MPI_COMM_WORLD);
    int *shaped = calloc(n, sizeof *shaped), *is_streamer = calloc(n, sizeof *is_streamer), the_sink = -1;
    for (int r = 0; r < n && o.shaped; ++r) {
        shaped[r] = 0 == strcmp(names + (size_t) r * MPI_MAX_PROCESSOR_NAME, o.shaped);
        if (shaped[r] && the_sink < 0) {
            the_sink = r;
        }
    }
    for (int r = 1; r < n; ++r) {
        is_streamer[r] = !shaped[r];
    }
    int streamers = 0;
    for (int r = 0; r < n; ++r) {
        streamers += is_streamer[r];
    }
    if (!o.shaped || the_sink <= 0 || shaped[0] || 0 == streamers || o.window < 1 || o.window > MAX_WINDOW ||
        o.size < 8 || o.size % 8 || o.size > (1u << 30) || o.t <= o.warm + 0.2 || o.warm < 0) {
        if (0 == rank) {
            fprintf(stderr, "usage: cc_bench -shaped HOST [-t S] [-warm S] [-size BYTES (8k)] [-window 1..64]"
                            " [-gap_us US]\n  rank 0 must be off HOST, some rank on it, another rank off it"
                            " (host of rank 0: %s)\n", names);
        }
        MPI_Finalize();
        return 1;
    }

    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0); /* naps of microseconds, not the default 50 us slack */
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    double mbps = 0, row[3] = {NAN, NAN, NAN};
    if (rank == the_sink) {
        mbps = sink(&o, n, is_streamer, 0, t0);
    } else if (is_streamer[rank]) {
        streamer(&o, rank, n, the_sink, 0, t0, row);
    } else if (0 != rank) {
        bystander(0);
    } else {
        /* the pinger */
        int cap = (int) (o.t * 1e6 / (o.gap_us + 50)) + 16, np = 0, nref = 0;
        double *rtt = malloc(cap * sizeof *rtt), *ref = malloc(cap * sizeof *ref);
        double *srtt = calloc(n, sizeof *srtt);
        int have_srtt = 0;
        uint64_t seq = 1;
        for (double now = MPI_Wtime(); now < t0 + o.t - 0.1; now = MPI_Wtime()) {
            const double us = ping_us(the_sink, seq++, o.ping_nap_us);
            if (now >= t0 + o.warm && np < cap) {
                rtt[np++] = us;
            }
            if (0 == seq % REF_EVERY) {
                for (int r = 1; r < n; ++r) {
                    if (!shaped[r]) {
                        const double u = ping_us(r, seq++, o.ping_nap_us);
                        if (now >= t0 + o.warm && nref < cap) {
                            ref[nref++] = u;
                        }
                    }
                }
            }
            if (o.gap_us > 0) {
                usleep(o.gap_us);
            }
        }
        have_srtt = read_column("btl_rttcc_rtt_srtt", srtt, n); /* while the load is still on */
        const uint64_t stop = UINT64_MAX;
        for (int r = 1; r < n; ++r) {
            MPI_Send(&stop, 1, MPI_UINT64_T, r, TAG_STOP, MPI_COMM_WORLD);
        }
        qsort(rtt, np, sizeof *rtt, cmp_double);
        qsort(ref, nref, sizeof *ref, cmp_double);

        /* median of the others' srtt: every peer off the shaped host */
        double others[256];
        int no = 0;
        for (int r = 1; r < n && no < 256; ++r) {
            if (!shaped[r] && srtt[r] > 0) {
                others[no++] = srtt[r];
            }
        }
        qsort(others, no, sizeof *others, cmp_double);
        const double others_med = no ? (no % 2 ? others[no / 2] : 0.5 * (others[no / 2 - 1] + others[no / 2])) : NAN;

        double got_mbps;
        MPI_Status st;
        MPI_Recv(&got_mbps, 1, MPI_DOUBLE, the_sink, 90, MPI_COMM_WORLD, &st);
        printf("cc_bench MBps=%.2f ping_n=%d p50_us=%.0f p99_us=%.0f max_us=%.0f ref_n=%d ref_p50_us=%.0f",
               got_mbps, np, quantile(rtt, np, 0.5), quantile(rtt, np, 0.99), quantile(rtt, np, 1.0), nref,
               quantile(ref, nref, 0.5));
        if (have_srtt) {
            printf(" srtt_shaped_us=%.1f srtt_others_us=%.1f srtt_us=", srtt[the_sink], others_med);
            for (int r = 0; r < n; ++r) {
                printf("%s%.1f", r ? "," : "", srtt[r]);
            }
        } else {
            printf(" srtt_shaped_us=nan srtt_others_us=nan srtt_us=nan");
        }
        const char *keys[3] = {"stream_srtt_us", "stream_cwnd", "stream_losses"};
        for (int c = 0; c < 3; ++c) {
            printf(" %s=", keys[c]);
            int first = 1;
            for (int r = 1; r < n; ++r) {
                if (is_streamer[r]) {
                    double v;
                    MPI_Recv(&v, 1, MPI_DOUBLE, r, 91 + c, MPI_COMM_WORLD, &st);
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
    }
    if (rank == the_sink) {
        MPI_Send(&mbps, 1, MPI_DOUBLE, 0, 90, MPI_COMM_WORLD);
    }
    if (is_streamer[rank]) {
        for (int c = 0; c < 3; ++c) {
            MPI_Send(&row[c], 1, MPI_DOUBLE, 0, 91 + c, MPI_COMM_WORLD);
        }
    }
    free(names);
    free(shaped);
    free(is_streamer);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_T_finalize(); /* before MPI_Finalize: 4.1.4 crashes the other way round */
    MPI_Finalize();
    return 0;
}
