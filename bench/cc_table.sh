#!/usr/bin/env bash
# The congestion-control table on the namespace testbed: three hosts, the
# link of the second rate-limited (htb with a short pfifo: real queueing and
# real drops), two ranks streaming 1 MiB messages towards it while a third
# ping-pongs 8-byte messages with it (bench/cc_bench.c).  For btl/tcp and
# for rttcc with cc none, aimd, timely, swift (default target) and swift
# with a target scaled to the link, RUNS alternating runs each; the table
# holds medians and ratios against cc=none and against tcp.
#
#   bench/cc_table.sh [-runs N] [-rate RATE] [-queue PACKETS] [-t SECONDS]
#                     [-swift_target_us US] [-- extra mpirun args]
#
# Columns: MB/s received at the shaped host; p50/p99 of the ping round trips
# crossing the shaped link during the load (application level, us); srtt of
# the shaped peer and median srtt of the other peers in rttcc's RTT table,
# read through MPI_T by the pinging rank (us); packets dropped by the shaped
# link's queue (testbed stats, both directions); retransmission-causing
# losses the streamers' rows report.
#
# Needs root (namespaces, tc).  Builds its own testbed (RTTCC_TB_PREFIX,
# default cctab) after clearing what an interrupted run left, and tears it
# down on exit, also on failure or interruption.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
runs=5 rate=150mbit queue=200 t=4 swift_target=""
while (($#)); do
    case $1 in
        -runs) runs=$2; shift 2 ;;
        -rate) rate=$2; shift 2 ;;
        -queue) queue=$2; shift 2 ;;
        -t) t=$2; shift 2 ;;
        -swift_target_us) swift_target=$2; shift 2 ;;
        --) shift; break ;;
        *) sed -n '2,26p' "$0" >&2; exit 2 ;;
    esac
done
extra=("$@")
export RTTCC_TB_PREFIX=${RTTCC_TB_PREFIX:-cctab}
export RTTCC_TB_DIR=${RTTCC_TB_DIR:-/tmp/$RTTCC_TB_PREFIX-testbed}
tb=$top/contrib/testbed/testbed
shaped=$RTTCC_TB_PREFIX-h2
pkill -KILL -f '/tmp/cc_table\.[A-Za-z0-9]+/cc_bench' 2>/dev/null || true  # an interrupted run's ranks
rm -rf /tmp/cc_table.*
work=$(mktemp -d /tmp/cc_table.XXXXXX)
cleanup() {
    pkill -KILL -f "$work/cc_bench" 2>/dev/null || true
    "$tb" down 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Link rate in Mbit/s, from tc syntax (150mbit, 1gbit, 500kbit).
rate_mbit=$(awk -v r="$rate" 'BEGIN { v = r + 0; u = tolower(r); sub(/^[0-9.]+/, "", u)
    print (u ~ /^g/) ? v * 1000 : (u ~ /^k/) ? v / 1000 : v }')
# Swift's target scaled to the link: two full Ethernet frames' serialisation
# (the default 50 us is less than one 1514-byte frame below ~240 Mbit/s).
[ -n "$swift_target" ] || swift_target=$(awk -v m="$rate_mbit" 'BEGIN { printf "%d", 2 * 1514 * 8 / m + 0.5 }')

mpicc -O2 -o "$work/cc_bench" "$top/bench/cc_bench.c" -lm
"$tb" down
"$tb" up 3 --slots 2 >/dev/null
# One datagram per skb at the bottleneck: with UDP GSO and TCP TSO a
# "packet" in the pfifo could be a 64 KB super-packet, making a 100-packet
# queue hold tens of milliseconds and never drop.  Segmenting in each host's
# eth0 (before the bridge) gives the shaped queue wire-sized packets, for
# rttcc and tcp alike.

# run LABEL BTL [mpirun args]: one cc_bench run over a freshly shaped link
# (shaping anew zeroes its counters); appends "LABEL key=value ..." to $work/all.
run() {
    local label=$1 btl=$2 out line drops
    shift 2
    "$tb" unshape "$shaped"
    [ "$rate" = none ] || "$tb" shape "$shaped" "$rate" "$queue"
    out=$(timeout -k 5 120 "$top/contrib/testbed/mpirun-tb" -np 4 --mca pml ob1 --mca btl "$btl,self" "$@" \
        "${extra[@]}" "$work/cc_bench" -shaped "$shaped" -t "$t" 2>&1) || true
    line=$(grep '^cc_bench ' <<<"$out" || true)
    if [ -z "$line" ]; then
        echo "# $label: run failed" >&2
        tail -n 5 <<<"$out" | sed 's/^/#   /' >&2
        return
    fi
    drops=$("$tb" stats "$shaped" | tr ' ' '\n' | awk -F= '/dropped/ { s += $2 } END { print s + 0 }')
    echo "$label ${line#cc_bench } drops=$drops" >>"$work/all"
}

# The CPU's ceiling on this path first: the link, not the CPU, must be the bottleneck.
rate_save=$rate rate=none
run calib_tcp tcp
run calib_rttcc rttcc --mca btl_rttcc_cc none
rate=$rate_save
calib() { awk -v l="$1" '$1 == l { for (i = 2; i <= NF; ++i) if ($i ~ /^MBps=/) { sub(/^MBps=/, "", $i); print $i } }' "$work/all"; }
echo "# unshaped (CPU-bound) throughput of this load: tcp $(calib calib_tcp) MB/s, rttcc $(calib calib_rttcc) MB/s;" \
     "the shaped link carries $(awk -v m="$rate_mbit" 'BEGIN { printf "%.2f", m / 8 }') MB/s"

configs=("tcp|tcp|"
         "none|rttcc|--mca btl_rttcc_cc none"
         "aimd|rttcc|--mca btl_rttcc_cc aimd"
         "timely|rttcc|--mca btl_rttcc_cc timely"
         "swift|rttcc|--mca btl_rttcc_cc swift"
         "swift@${swift_target}us|rttcc|--mca btl_rttcc_cc swift --mca btl_rttcc_swift_target_us $swift_target")
for ((r = 0; r < runs; ++r)); do
    for c in "${configs[@]}"; do
        IFS='|' read -r label btl args <<<"$c"
        # shellcheck disable=SC2086
        run "$label" "$btl" $args
    done
done

# med LABEL KEY: median of KEY over LABEL's runs (first value of a list); nan if none.
med() {
    awk -v l="$1" -v k="$2" '$1 == l { for (i = 2; i <= NF; ++i) { split($i, kv, "="); if (kv[1] == k) { split(kv[2], v, ","); print v[1] } } }' "$work/all" |
        sort -g | awk '{ a[NR] = $1 } END { if (!NR) print "nan"; else print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
# Streamers' losses and cwnd: median over runs of the sum / mean of the list.
med_list() {
    awk -v l="$1" -v k="$2" -v op="$3" '$1 == l { for (i = 2; i <= NF; ++i) { split($i, kv, "="); if (kv[1] == k) {
            n = split(kv[2], v, ","); s = 0; for (j = 1; j <= n; ++j) s += v[j]; print (op == "mean") ? s / n : s } } }' "$work/all" |
        sort -g | awk '{ a[NR] = $1 } END { if (!NR) print "nan"; else print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a != "nan" && b != "nan" && b + 0 > 0) printf "%.2f", a / b; else printf "-" }'; }
count() { awk -v l="$1" '$1 == l' "$work/all" | wc -l; }

echo "# $rate link with a $queue-packet queue into $shaped; 2 streamers (4 x 1 MiB in flight each) towards it,"
echo "# 1 pinger; ${t} s per run, the first second left out; medians of $runs alternating runs each"
echo "# (runs counted per row); ratios: /none against rttcc cc=none, /tcp against btl/tcp, same run set"
printf '%-16s %4s %7s %6s %6s %8s %6s %6s %8s %9s %9s %7s %6s %8s %6s\n' config runs MB/s /none /tcp \
    p50_us /none /tcp p99_us srtt_shp srtt_oth drops /none losses cwnd
n_mbps=$(med none MBps) t_mbps=$(med tcp MBps) n_p50=$(med none p50_us) t_p50=$(med tcp p50_us) n_drops=$(med none drops)
for c in "${configs[@]}"; do
    label=${c%%|*}
    mbps=$(med "$label" MBps) p50=$(med "$label" p50_us) drops=$(med "$label" drops)
    printf '%-16s %4s %7s %6s %6s %8s %6s %6s %8s %9s %9s %7s %6s %8s %6s\n' "$label" "$(count "$label")" "$mbps" \
        "$(ratio "$mbps" "$n_mbps")" "$(ratio "$mbps" "$t_mbps")" "$p50" "$(ratio "$p50" "$n_p50")" \
        "$(ratio "$p50" "$t_p50")" "$(med "$label" p99_us)" "$(med "$label" srtt_shaped_us)" \
        "$(med "$label" srtt_others_us)" "$drops" "$(ratio "$drops" "$n_drops")" \
        "$(med_list "$label" stream_losses sum)" "$(med_list "$label" stream_cwnd mean)"
done
echo "# reference pings to the unshaped peers (reaction-time floor of the application-level p50): $(med none ref_p50_us) us (none), $(med tcp ref_p50_us) us (tcp)"
if [ -n "${CC_TABLE_RAW:-}" ]; then
    cat "$work/all"
fi
