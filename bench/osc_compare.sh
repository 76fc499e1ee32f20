#!/usr/bin/env bash
# MPI one-sided communication across namespace testbed hosts (issue 16,
# point 7): osc_rttcc against osc/pt2pt over btl/tcp (and osc/ucx over
# pml/ucx with TCP) in one run, RUNS alternating runs of every config, the
# medians over the runs and their ratios as markdown tables
# (bench/osc_bench.c measures and checks the data).
#
#   bench/osc_compare.sh [-runs N] [-configs "C C .."] [-hosts N] [-scale F]
#                        [-tests LIST] [-sync LIST] [-max BYTES] [-bw_window W]
#                        [-metric p50|avg] [-ref C] [-mtu BYTES] [-quick] [-out DIR] [-- extra mpirun args]
#   bench/osc_compare.sh -alltoall [-runs N] [-configs ..] [-scenarios b,d] [-sizes 1K,64K,..]
#                        [-iters N] [-budget S] [-window S] [-queue P] [-fast RATE] [-slow RATE]
#                        [-flood MBIT] [-flood_on S] [-flood_off S] [-quick] [-out DIR] [-- ...]
#
# Configs (-configs, else $CONFIGS, else "rttcc pt2pt-tcp ucx-tcp"), each
# run in turn within a run (so drifts hit all alike):
#   rttcc        --mca pml ob1 --mca btl rttcc,self --mca osc rttcc
#   pt2pt-tcp    --mca pml ob1 --mca btl tcp,self --mca osc pt2pt
#   pt2pt-rttcc  --mca pml ob1 --mca btl rttcc,self --mca osc pt2pt
#   ucx-tcp      --mca pml ucx --mca osc ucx --mca opal_common_ucx_tls any
#                --mca opal_common_ucx_devices any -x UCX_TLS=tcp,self
#                -x UCX_NET_DEVICES=eth0 (without the two "any", pml/ucx and
#                osc/ucx decline when no InfiniBand transport is there)
# Naming the osc component turns it on: Debian's openmpi-mca-params.conf has
# osc = ^ucx,pt2pt and pml = ^ucx.  A config whose components ompi_info does
# not list is skipped with a note (osc_rttcc until it is installed).
#
# Default mode: osc_bench's latency tests (put, get, acc, fop, cas; flush
# and fence; pscw and lock on request: -sync flush,fence,pscw,lock) and bandwidth tests (put_bw, get_bw; acc_bw on request) from rank 0 on h1 to rank
# 1 on h2 (-hosts: 2 unshaped hosts), 8 B to -max (4 MiB).  Two tables: per
# (test, sync, bytes) each config's median over the runs of the per-run
# latency (-metric p50: the median iteration; avg: the timed span over the
# iterations, as osu reports; the other in parentheses) or bandwidth (MB/s),
# the ratio (by -metric) of every config to -ref (pt2pt-tcp), and rttcc's
# verdict against the issue's targets: latency <= 0.7x, bandwidth >= 1.5x
# of the reference.  p50 by default: on this shared two-core machine a
# run's average of 8-byte puts over tcp swung from 20 to 52 us between
# sessions while its median iteration stayed at 15-20 us; the average in
# parentheses shows whether a config stalls now and then.  -mtu: the
# testbed's links at that MTU (1500; 9000 for a jumbo-frame fabric).  Beside
# the tables, the raw UDP round trip and stream rate between the same hosts,
# and (MTU 1500) the signed floor per size from 2 KiB (udp_pingpong -signed,
# as compare.sh): a latency cell that even signed datagrams cannot bring to
# 0.7x is marked "signed bound".
#
# -alltoall: osc_bench's alltoall written as MPI_Put in a fence epoch, on
# coll_table.sh's scenarios (b: one slow host, d: a background flood; 4
# hosts, one rank each; bench/scenarios.sh, knobs as coll_table.sh's),
# beside MPI_Alltoall over coll_rttcc (coll_bench, btl rttcc, coll_rttcc's
# defaults) and coll_table's bound (coll_bench -through 1 over btl rttcc:
# the blocks that cross h2's link alone, all at once) and free (put:rttcc
# in the scenario without its bottleneck, coll_table's free: the cost of
# the whole exchange on this machine, which no order of the puts removes).
# Configs: put:C for each C above, coll:rttcc, bound and free; every one with
# --mca mpi_yield_when_idle 1 (4 ranks share two cores).  Table per
# scenario: the max over ranks (median over iterations in b, average in d,
# as coll_table), median over runs; put/coll is put:rttcc's over
# coll:rttcc's, put/bnd over the higher of bound and free; the target
# within 10% (<= 1.10).
#
# -quick: one run at -scale 0.1, alltoall sizes 1K,64K,1M with 5 iterations,
# 1 s budget and window, flood 0.5 s on/off: a smoke test, no figures.
# Raw outputs, the parsed results and the tables go to -out
# (bench/results/osc_compare-DATE-TIME).
#
# Exits 1 if any run failed (its results are left out), 2 on bad usage.
# Needs root (namespaces, tc).  Builds its own testbed (prefix rttcco),
# after clearing what an interrupted run left, and tears it down on exit,
# also on failure or interruption.  One osc_compare.sh at a time (a lock).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
runs=5 configs_wanted=${CONFIGS:-} hosts=2 scale=1 tests=put,get,acc,fop,cas,put_bw,get_bw sync=flush,fence
max=4M bw_window=32 metric=p50 ref=pt2pt-tcp mode=latency out="" timeout_s=900 mtu=1500
scenarios=b,d sizes=1K,4K,16K,64K,256K,1M,4M iters=20 warmup=2 budget=2 window=2
queue=100 fast=500mbit slow=100mbit link=200mbit flood=300 flood_on=1 flood_off=1
for a in "$@"; do   # -quick first: options given with it override its settings
    [ "$a" = -- ] && break
    if [ "$a" = -quick ]; then
        runs=1 scale=0.1 sizes=1K,64K,1M iters=5 warmup=1 budget=1 window=1 flood_on=0.5 flood_off=0.5 timeout_s=300
    fi
done
while (($#)); do
    case $1 in
        -runs) runs=$2; shift 2 ;;
        -configs) configs_wanted=$2; shift 2 ;;
        -hosts) hosts=$2; shift 2 ;;
        -scale) scale=$2; shift 2 ;;
        -tests) tests=$2; shift 2 ;;
        -sync) sync=$2; shift 2 ;;
        -max) max=$2; shift 2 ;;
        -bw_window) bw_window=$2; shift 2 ;;
        -metric) metric=$2; shift 2 ;;
        -ref) ref=$2; shift 2 ;;
        -mtu) mtu=$2; shift 2 ;;
        -alltoall) mode=alltoall; shift ;;
        -scenarios) scenarios=$2; shift 2 ;;
        -sizes) sizes=$2; shift 2 ;;
        -iters) iters=$2; shift 2 ;;
        -budget) budget=$2; shift 2 ;;
        -window) window=$2; shift 2 ;;
        -queue) queue=$2; shift 2 ;;
        -fast) fast=$2; shift 2 ;;
        -slow) slow=$2; shift 2 ;;
        -flood) flood=$2; shift 2 ;;
        -flood_on) flood_on=$2; shift 2 ;;
        -flood_off) flood_off=$2; shift 2 ;;
        -quick) shift ;;
        -out) out=$2; shift 2 ;;
        --) shift; break ;;
        *) sed -n '2,/^set -euo pipefail/{/^set/!p}' "$0" >&2; exit 2 ;;
    esac
done
extra=("$@")
[ "$metric" = avg ] || [ "$metric" = p50 ] || { echo "osc_compare.sh: -metric avg or p50" >&2; exit 2; }
max_bytes=$(numfmt --from=iec "${max^^}" 2>/dev/null) || { echo "osc_compare.sh: -max BYTES (4194304, 64K, 4M)" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "osc_compare.sh: needs root (namespaces, tc)" >&2; exit 2; }

export RTTCC_TB_PREFIX=rttcco RTTCC_TB_DIR=/tmp/rttcco-testbed
exec 9>/tmp/rttcco-osc_compare.lock
flock -n 9 || { echo "osc_compare.sh: another run holds /tmp/rttcco-osc_compare.lock" >&2; exit 2; }
work=$(mktemp -d /tmp/osc_compare.XXXXXX)
source "$top/bench/scenarios.sh"
mpirun_pid=""
cleanup() {
    if [ -n "$flood_pid" ]; then kill "$flood_pid" 2>/dev/null || true; fi
    if [ -n "$mpirun_pid" ]; then kill "$mpirun_pid" 2>/dev/null || true; fi   # timeout passes it on to mpirun
    clear_testbed
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
clear_testbed

[ -n "$out" ] || out=$top/bench/results/osc_compare-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out/raw"
: >"$out/runs"
mpicc -O2 -o "$work/osc_bench" "$top/bench/osc_bench.c" -lm
gcc -O2 -o "$work/udp_pingpong" "$top/tools/udp_pingpong.c" -lsodium
gcc -O2 -o "$work/udp_stream" "$top/tools/udp_stream.c"
if [ "$mode" = alltoall ]; then
    mpicc -O2 -o "$work/coll_bench" "$top/bench/coll_bench.c" -lm
    gcc -O2 -o "$work/udp_flood" "$top/bench/udp_flood.c"
fi

# The configs: their mpirun arguments, and the components each needs.
declare -A config_args config_needs
config_args[rttcc]="--mca pml ob1 --mca btl rttcc,self --mca osc rttcc"
config_needs[rttcc]="btl:rttcc osc:rttcc"
config_args[pt2pt-tcp]="--mca pml ob1 --mca btl tcp,self --mca osc pt2pt"
config_needs[pt2pt-tcp]="btl:tcp osc:pt2pt"
config_args[pt2pt-rttcc]="--mca pml ob1 --mca btl rttcc,self --mca osc pt2pt"
config_needs[pt2pt-rttcc]="btl:rttcc osc:pt2pt"
config_args[ucx-tcp]="--mca pml ucx --mca osc ucx --mca opal_common_ucx_tls any --mca opal_common_ucx_devices any
    -x UCX_TLS=tcp,self -x UCX_NET_DEVICES=eth0"
config_needs[ucx-tcp]="pml:ucx osc:ucx"
config_args[coll:rttcc]="--mca pml ob1 --mca btl rttcc,self"
config_needs[coll:rttcc]="btl:rttcc coll:rttcc"
config_args[bound]="--mca pml ob1 --mca btl rttcc,self --mca coll ^rttcc"
config_needs[bound]="btl:rttcc"
config_args[free]=${config_args[rttcc]}
config_needs[free]=${config_needs[rttcc]}
components=$(ompi_info | awk '$1 == "MCA" { sub(/:$/, "", $2); print $2 ":" $3 }')
# available C: whether ompi_info lists every component C needs (prints the first it lacks).
available() {
    local n
    for n in ${config_needs[$1]}; do
        grep -qx "$n" <<<"$components" || { echo "$n"; return 1; }
    done
}

osc_configs=() skipped=""
osc_names=" rttcc pt2pt-tcp pt2pt-rttcc ucx-tcp "
for c in ${configs_wanted:-rttcc pt2pt-tcp ucx-tcp}; do
    [[ $osc_names == *" $c "* ]] || { echo "osc_compare.sh: no config '$c' (one of:$osc_names)" >&2; exit 2; }
    if lacks=$(available "$c"); then osc_configs+=("$c"); else skipped+="# $c: skipped, ompi_info lists no $lacks"$'\n'; fi
done
configs=()
if [ "$mode" = latency ]; then
    configs=("${osc_configs[@]}")
else
    for c in "${osc_configs[@]}"; do configs+=("put:$c"); done
    for c in coll:rttcc bound free; do
        if lacks=$(available "$c"); then configs+=("$c"); else skipped+="# $c: skipped, ompi_info lists no $lacks"$'\n'; fi
    done
fi
((${#configs[@]})) || { echo "osc_compare.sh: no config left to run" >&2; exit 2; }

# run LABEL RAW NP ARGS PROGRAM...: one mpirun on the testbed, its output in RAW; the run line in $out/runs.
run() {
    local label=$1 raw=$2 np=$3 args=$4 rc=0 t0 load
    shift 4
    t0=$(date +%s) load=$(cut -d' ' -f1 /proc/loadavg)
    # shellcheck disable=SC2086
    timeout -k 5 "$timeout_s" "$top/contrib/testbed/mpirun-tb" -np "$np" $args "${extra[@]}" "$@" >"$raw" 2>&1 &
    mpirun_pid=$!
    wait "$mpirun_pid" || rc=$?
    mpirun_pid=""
    echo "# run $(basename "$raw" .out) $label rc=$rc seconds=$(($(date +%s) - t0)) load=$load" | tee -a "$raw" >>"$out/runs"
    if [ "$rc" -ne 0 ] || ! grep -Eq '^PASS (osc|coll)_bench' "$raw"; then
        echo "# $(basename "$raw" .out): failed (rc=$rc), see $raw" >&2
        grep -E 'FAIL|rror' "$raw" | head -n 4 | sed 's/^/#   /' >&2 || true
        return 1
    fi
}

# lat_table KIND(lat|bw): the markdown table of $out/lat.all ("config test sync bytes us p50_us MBps" lines).
lat_table() {
    local kind=$1
    awk -v kind="$kind" -v metric="$metric" -v labels="${configs[*]}" -v ref="$ref" -v window="$bw_window" \
        -v rtt="$(median_of "$out/udp")" -v wire_rtt="$(median_of "$out/wire")" -v stream="$(median_of "$out/udp_stream")" \
        -v signed_file="$out/signed" '
        function med(key,   n, a, i, j, t) {
            n = split(vals[key], a, " ")
            for (i = 2; i <= n; ++i) for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; --j) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
            return n ? ((n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2) : ""
        }
        function human(b) { return (b >= 1048576 && b % 1048576 == 0) ? (b / 1048576) "M" : (b >= 1024 && b % 1024 == 0) ? (b / 1024) "K" : b }
        BEGIN {
            split("put get acc fop cas put_bw get_bw acc_bw", order, " "); for (i in order) rank[order[i]] = i
            while ((getline line < signed_file) > 0) { split(line, f, " "); vals["signed@" f[1]] = vals["signed@" f[1]] " " f[2] }
        }
        (kind == "bw") == ($2 ~ /_bw$/) {
            row = $2 " " $3 " " $4
            v = (kind == "bw") ? $7 : (metric == "p50" ? $6 : $5)
            vals[$1 "@" row] = vals[$1 "@" row] " " v
            vals["other:" $1 "@" row] = vals["other:" $1 "@" row] " " (metric == "p50" ? $5 : $6)
            if (!(row in seen)) { seen[row] = 1; rows[++nr] = row }
        }
        END {
            nl = split(labels, L, " ")
            unit = (kind == "bw") ? "MB/s" : "us"
            printf "| test | sync | bytes |"
            other = (metric == "p50") ? "avg" : "p50"
            for (i = 1; i <= nl; ++i) printf " %s %s |", L[i], (kind == "bw") ? unit : unit " " metric " (" other ")"
            for (i = 1; i <= nl; ++i) if (L[i] != ref) printf " %s/%s |", L[i], ref
            has_rttcc = 0; for (i = 1; i <= nl; ++i) if (L[i] == "rttcc") has_rttcc = 1
            if (has_rttcc) printf " target |"
            printf "\n|---|---|---:|"
            for (i = 1; i <= nl; ++i) printf "---:|"
            for (i = 1; i <= nl; ++i) if (L[i] != ref) printf "---:|"
            if (has_rttcc) printf "---|"
            printf "\n"
            # rows in test order, then flush, fence, pscw, then by size
            sync_rank["flush"] = 1; sync_rank["fence"] = 2; sync_rank["pscw"] = 3; sync_rank["lock"] = 4
            for (i = 2; i <= nr; ++i) for (j = i; j > 1 && later(rows[j - 1], rows[j]); --j) { t = rows[j]; rows[j] = rows[j - 1]; rows[j - 1] = t }
            for (k = 1; k <= nr; ++k) {
                split(rows[k], f, " ")
                printf "| %s | %s | %s |", f[1], f[2], human(f[3])
                r = med(ref "@" rows[k])
                for (i = 1; i <= nl; ++i) {
                    m[i] = med(L[i] "@" rows[k])
                    if (m[i] == "") printf " - |"
                    else if (kind == "bw") printf " %.1f |", m[i]
                    else printf " %.2f (%.2f) |", m[i], med("other:" L[i] "@" rows[k])
                }
                for (i = 1; i <= nl; ++i) if (L[i] != ref) printf " %s |", (m[i] == "" || r + 0 <= 0) ? "-" : sprintf("%.2f", m[i] / r)
                if (has_rttcc) {
                    q = ""
                    for (i = 1; i <= nl; ++i) if (L[i] == "rttcc") q = (m[i] == "" || r + 0 <= 0) ? "" : m[i] / r
                    printf " %s |", (q == "") ? "-" : verdict(q, f[2], f[3], r)
                }
                printf "\n"
            }
        }
        # The best any transport on raw UDP could do for this cell (round trips
        # of rt us and the bytes at the raw stream rate), as a ratio to ref.
        function floor_ratio(rt, sync, bytes, ref_v,   xfer) {
            if (rt + 0 <= 0) return ""
            xfer = (stream + 0 > 0) ? bytes / stream : 0  # MB/s = bytes/us
            if (kind == "bw") return (window * bytes / (rt + window * xfer)) / ref_v
            return (rt + xfer) / ref_v
        }
        # The signed floor of a latency cell: its bytes one way as
        # udp_pingpong -signed carries them, and a small answer back (the
        # flush ACK, the request of a get, a PSCW post) as the kernel carries
        # it for the wire rttcc uses (half the -wire round trip).
        function signed_ratio(bytes, ref_v,   data) {
            if (kind == "bw" || wire_rtt + 0 <= 0) return ""
            data = med("signed@" bytes)
            return data == "" ? "" : (data + wire_rtt / 2) / ref_v
        }
        function meets(x) { return kind == "bw" ? x >= 1.5 : x <= 0.7 }
        # ok; or MISS with the floors: "bound" when even raw UDP (udp_pingpong,
        # udp_stream) cannot meet the target, "signed bound" when signed
        # datagrams (udp_pingpong -signed) cannot, "wire floor" when the kernel as
        # rttcc uses it (udp_pingpong -wire) cannot.
        function verdict(q, sync, bytes, ref_v,   raw, wire, sgn) {
            if (meets(q)) return "ok"
            raw = floor_ratio(rtt, sync, bytes, ref_v)
            wire = floor_ratio(wire_rtt, sync, bytes, ref_v)
            sgn = signed_ratio(bytes, ref_v)
            if (raw != "" && !meets(raw)) return sprintf("bound (raw UDP floor %.2f)", raw)
            if (sgn != "" && !meets(sgn)) return sprintf("signed bound (signed floor %.2f, raw %.2f)", sgn, raw)
            if (wire != "" && !meets(wire)) return sprintf("MISS; wire floor %.2f, raw %.2f", wire, raw)
            return raw == "" ? "MISS" : sprintf("MISS; raw UDP floor %.2f", raw)
        }
        function later(a, b,   x, y) {
            split(a, x, " "); split(b, y, " ")
            if (x[1] != y[1]) return rank[x[1]] > rank[y[1]]
            if (x[2] != y[2]) return sync_rank[x[2]] > sync_rank[y[2]]
            return x[3] + 0 > y[3] + 0
        }' "$out/lat.all"
}

# a2a_table S: the markdown table of $out/a2a.S.all ("label bytes max_us avg_max_us" lines).
a2a_table() {
    local s=$1 col=3
    [ "$s" = d ] && col=4
    awk -v col="$col" -v labels="${configs[*]}" '
        function med(key,   n, a, i, j, t) {
            n = split(vals[key], a, " ")
            for (i = 2; i <= n; ++i) for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; --j) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
            return n ? ((n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2) : ""
        }
        function human(b) { return (b >= 1048576 && b % 1048576 == 0) ? (b / 1048576) "M" : (b >= 1024 && b % 1024 == 0) ? (b / 1024) "K" : b }
        { vals[$1 "@" $2] = vals[$1 "@" $2] " " $col; sizes[$2] = 1 }
        END {
            nl = split(labels, L, " ")
            printf "| bytes |"
            for (i = 1; i <= nl; ++i) printf " %s us |", L[i]
            printf " put/coll | put/bnd | target |\n|---:|"
            for (i = 1; i <= nl; ++i) printf "---:|"
            printf "---:|---:|---|\n"
            ns = 0; for (b in sizes) S[++ns] = b + 0
            for (i = 2; i <= ns; ++i) for (j = i; j > 1 && S[j - 1] > S[j]; --j) { t = S[j]; S[j] = S[j - 1]; S[j - 1] = t }
            for (k = 1; k <= ns; ++k) {
                printf "| %s |", human(S[k])
                for (i = 1; i <= nl; ++i) { m = med(L[i] "@" S[k]); v[L[i]] = m; printf " %s |", (m == "") ? "-" : sprintf("%.0f", m) }
                p = v["put:rttcc"]; c = v["coll:rttcc"]; b = (v["free"] + 0 > v["bound"] + 0) ? v["free"] : v["bound"]
                rc = (p != "" && c + 0 > 0) ? p / c : ""; rb = (p != "" && b + 0 > 0) ? p / b : ""
                printf " %s | %s | %s |\n", (rc == "") ? "-" : sprintf("%.2f", rc), (rb == "") ? "-" : sprintf("%.2f", rb),
                       (rc == "" || rb == "") ? "-" : (rc <= 1.10 && rb <= 1.10 ? "ok" : "MISS")
            }
        }' "$out/a2a.$s.all"
}

# The run lines of $out/runs: failures and seconds per config.
footer() {
    awk -v scope="$1" '$2 == "run" && index($3, scope) == 1 {
            for (i = 5; i <= NF; ++i) { split($i, kv, "="); v[kv[1]] = kv[2] }
            t[$4] += v["seconds"]; n[$4]++; ld[++nl] = v["load"] + 0
            if ("drops" in v) d[$4] = d[$4] " " v["drops"]
            if (v["rc"] != 0) failed = failed " " $3 "(rc=" v["rc"] ")"
            delete v
        }
        END {
            printf "# mpirun seconds per config:"; for (c in t) printf " %s %d (%d runs)", c, t[c], n[c]; printf "\n"
            if (length(d)) { printf "# drops at the bottleneck per run:"; for (c in d) printf " %s:%s", c, substr(d[c], 2); printf "\n" }
            for (i = 2; i <= nl; ++i) for (j = i; j > 1 && ld[j - 1] > ld[j]; --j) { x = ld[j]; ld[j] = ld[j - 1]; ld[j - 1] = x }
            if (nl) printf "# 1-min load average at the runs'"'"' starts: min %.1f, median %.1f, max %.1f\n", ld[1], ld[int((nl + 1) / 2)], ld[nl]
            if (failed != "") printf "# FAILED runs (left out of the tables):%s\n", failed
        }' "$out/runs"
}

t_start=$(date +%s)
{
    echo "# osc_compare.sh $(date -u +%FT%TZ) on $(uname -n), mode $mode: $runs run(s), configs: ${configs[*]}"
    for c in "${configs[@]}"; do echo "#   $c: $(tr -s ' \n' ' ' <<<"${config_args[${c#put:}]}")"; done
    echo "# extra mpirun args: ${extra[*]:-none}"
    printf '%s' "$skipped"
} | tee "$out/summary.txt"

if [ "$mode" = latency ]; then
    median_of() { sort -g "$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }  # a file of numbers
    "$tb" up "$hosts" --mtu "$mtu" >/dev/null
    : >"$out/lat.all"
    : >"$out/udp"
    : >"$out/wire"
    : >"$out/udp_stream"
    : >"$out/signed"
    net=$("$tb" subnet)
    net=${net%.0/24}
    for ((r = 1; r <= runs; ++r)); do
        # the floor of any latency: a raw UDP datagram each way between the same two hosts
        ip netns exec "$RTTCC_TB_PREFIX-h1" "$work/udp_pingpong" 8 20000 3 "$net.1" "$RTTCC_TB_PREFIX-h2" "$net.2" |
            awk '{ print 2 * $2 }' >>"$out/udp"
        # and of this design: the kernel as rttcc's wire uses it (two sockets, receive stamps, recvmmsg)
        ip netns exec "$RTTCC_TB_PREFIX-h1" "$work/udp_pingpong" -wire 8 20000 3 "$net.1" "$RTTCC_TB_PREFIX-h2" "$net.2" |
            awk '{ print 2 * $2 }' >>"$out/wire"
        # the ceiling of any bandwidth, and the pace at which a latency cell's bytes can cross at
        # best: raw UDP with the kernel's offloads (GSO, GRO) between them, sending from and
        # landing in 128 MiB of memory (not a buffer in cache)
        ip netns exec "$RTTCC_TB_PREFIX-h1" "$work/udp_stream" $((mtu - 28)) 2 "$net.1" "$RTTCC_TB_PREFIX-h2" "$net.2" \
            gso span=$((128 << 20)) |
            awk '{ for (i = 2; i <= NF; ++i) { split($i, kv, "="); if (kv[1] == "MBps") print kv[2] } }' >>"$out/udp_stream"
        # and what any transport that signs every datagram pays, per size from 2 KiB as compare.sh
        # (udp_pingpong -signed: a signed 72-byte header a datagram of at most 1400 bytes, GSO and
        # GRO, so at MTU 1500 only; below 2 KiB the -wire floor is the one that holds)
        for ((size = 2048; size <= max_bytes && mtu == 1500; size *= 2)); do
            ip netns exec "$RTTCC_TB_PREFIX-h1" "$work/udp_pingpong" -signed "$size" \
                $((size >= 1048576 ? 100 : size >= 131072 ? 500 : 2000)) 1 "$net.1" "$RTTCC_TB_PREFIX-h2" "$net.2" \
                >>"$out/signed" || echo "osc_compare.sh: udp_pingpong -signed $size failed" >&2
        done
        for c in "${configs[@]}"; do
            echo "# [$(($(date +%s) - t_start)) s] run $r/$runs $c" >&2
            raw=$out/raw/lat.$r.$c.out
            run "$c" "$raw" 2 "${config_args[$c]}" "$work/osc_bench" -tests "$tests" -sync "$sync" -max "$max" \
                -window "$bw_window" -scale "$scale" || continue
            awk -v c="$c" '$1 == "RESULT" { for (i = 2; i <= NF; ++i) { split($i, kv, "="); v[kv[1]] = kv[2] }
                                            print c, v["test"], v["sync"], v["bytes"], v["us"], (v["p50_us"] == "" ? v["us"] : v["p50_us"]), v["MBps"] }' \
                "$raw" >>"$out/lat.all"
        done
    done
    clear_testbed
    {
        echo
        if [[ ,$tests, =~ ,(put|get|acc|fop|cas), ]]; then
            echo "## Latency, rank 0 on $RTTCC_TB_PREFIX-h1 to rank 1 on $RTTCC_TB_PREFIX-h2 (unshaped veth, MTU $mtu): median over runs" \
                 "of the $([ "$metric" = avg ] && echo "timed span over the iterations (osu's average)" || echo "median iteration")" \
                 "per run, us"
            echo
            lat_table lat
            echo
        fi
        if [ -s "$out/udp" ]; then
            echo "Raw UDP round trip between the same hosts (tools/udp_pingpong, 8 B, busy-polled, median of" \
                 "$(wc -l <"$out/udp") runs): $(median_of "$out/udp") us.  It is the floor of put/acc + flush (a datagram each way)" \
                 "and of get, fop and cas + flush, of a fence or a PSCW epoch between two ranks (the origin learns that the target has its data)," \
                 "and of a lock epoch (a lazy lock travels with the epoch's operations and its unlock)." \
                 "The kernel as rttcc's wire uses it (udp_pingpong -wire: two sockets, receive stamps, recvmmsg):" \
                 "$(median_of "$out/wire") us.  A cell's floor adds its bytes at the raw stream rate below;" \
                 "\"bound\" marks a target that even raw UDP cannot meet."
            echo
        fi
        if [ -s "$out/signed" ]; then
            echo "Signed floor (tools/udp_pingpong -signed, one-way, median of $runs runs a size): each datagram a 72-byte" \
                 "header signed as rttcc_auth=header signs it and at most 1400 bytes, staged by the sender, checked and copied" \
                 "into place by the receiver, and nothing else (no ACKs, windows or resends), from 2 KiB.  A cell's signed floor" \
                 "is its bytes one way so, and a small answer back as the kernel carries it for rttcc (half the -wire round trip)." \
                 "\"signed bound\" marks a target that no transport signing every datagram meets here."
            echo
        fi
        if [[ ,$tests, == *_bw,* ]]; then
            echo "## Bandwidth (MTU $mtu), windows of $bw_window ops and one MPI_Win_flush: median over runs, MB/s (10^6 B/s)"
            echo
            lat_table bw
            echo
        fi
        if [ -s "$out/udp_stream" ]; then
            echo "Raw UDP stream between the same hosts (tools/udp_stream, $((mtu - 28))-byte datagrams with GSO and GRO," \
                 "from and into 128 MiB of memory, median of $(wc -l <"$out/udp_stream") runs):" \
                 "$(median_of "$out/udp_stream") MB/s, what one UDP flow moves here."
            echo
        fi
        footer lat.
    } | tee -a "$out/summary.txt"
else
    a2a_args=(-sizes "$sizes" -iters "$iters" -warmup "$warmup" -budget "$budget")
    for s in ${scenarios//,/ }; do
        case $s in a | b | c | d) ;; *) echo "osc_compare.sh: no scenario '$s'" >&2; exit 2 ;; esac
        setup "$s"
        : >"$out/a2a.$s.all"
        for ((r = 1; r <= runs; ++r)); do
            for c in "${configs[@]}"; do
                echo "# [$(($(date +%s) - t_start)) s] scenario $s run $r/$runs $c" >&2
                raw=$out/raw/$s.$r.${c//:/_}.out
                more=()
                [ "$s" = d ] && more=(-time "$window")
                case $c in
                    put:*) prog=("$work/osc_bench" -tests alltoall) ;;
                    coll:rttcc) prog=("$work/coll_bench" -ops alltoall) ;;
                    bound) [ "$s" = a ] && continue
                           # shellcheck disable=SC2207
                           prog=("$work/coll_bench" -ops alltoall $(bound_args "$s")) ;;
                    free) [ "$s" = a ] && continue
                          prog=("$work/osc_bench" -tests alltoall) ;;
                esac
                start_run "$s" "$([ "$c" = free ] && echo free)"
                ok=1
                run "$c" "$raw" 4 "${config_args[${c#put:}]} --mca mpi_yield_when_idle 1" "${prog[@]}" "${a2a_args[@]}" \
                    "${more[@]}" || ok=""
                flood_stop "$raw"
                sed -i "\$s/\$/ drops=$(drops "$s")/" "$out/runs"
                [ -n "$ok" ] || continue
                awk -v c="$c" '$1 == "RESULT" { for (i = 2; i <= NF; ++i) { split($i, kv, "="); v[kv[1]] = kv[2] }
                                                print c, v["bytes"], v["max_us"], v["avg_max_us"] }' "$raw" >>"$out/a2a.$s.all"
            done
        done
        clear_testbed
        {
            echo
            echo "## $(describe "$s")"
            echo "# alltoall, max over ranks, $([ "$s" = d ] && echo "average over iterations (>= $window s a size)" ||
                echo "median over iterations"), median over runs, us"
            echo
            a2a_table "$s"
            echo
            footer "$s."
        } | tee -a "$out/summary.txt"
    done
fi
echo "# total $(($(date +%s) - t_start)) s; raw outputs in $out/raw, tables in $out/summary.txt" | tee -a "$out/summary.txt"
! grep -q ' rc=[1-9]' "$out/runs"   # a failed run fails the script
