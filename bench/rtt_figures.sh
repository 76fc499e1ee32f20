#!/usr/bin/env bash
# The RTT table's own figures on one host (loopback), RUNS alternating runs
# of each variant, medians:
#   1. timestamping overhead: 8-byte latency with timestamp=kernel against
#      timestamp=user (and btl/tcp in the same run);
#   2. RTT accuracy: the table's idle minimum RTT (probes only, ranks
#      spinning in MPI) against a raw UDP ping-pong round trip on the same path;
#   3. the RTT heatmap of an 8-rank run (PNG and matrix into OUTDIR).
#
#   bench/rtt_figures.sh [-runs N] [-out OUTDIR]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
runs=7 out=""
while (($#)); do
    case $1 in
        -runs) runs=$2; shift 2 ;;
        -out) out=$2; shift 2 ;;
        *) echo "usage: $0 [-runs N] [-out OUTDIR]" >&2; exit 2 ;;
    esac
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out=${out:-$work}
mkdir -p "$out"
mpicc -O2 -o "$work/rttcc_bench" "$top/bench/rttcc_bench.c"
mpicc -O2 -o "$work/rtt_table" "$top/test/mpi/rtt_table.c"
gcc -O2 -o "$work/udp_pingpong" "$top/tools/udp_pingpong.c" -lsodium
launch=(mpirun --allow-run-as-root --oversubscribe --mca pml ob1 --mca btl_rttcc_if_include lo
        --mca btl_tcp_if_include lo)

median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
lat8() {  # lat8 BTL [args]: 8-byte one-way latency, us
    local btl=$1
    shift
    "${launch[@]}" -np 2 --mca btl "$btl,self" "$@" "$work/rttcc_bench" -max 8 -reps 5 2>/dev/null | awk '$1 == 8 { print $2 }'
}
idle_min() {  # idle_min SOURCE: the median over ranks/peers of the table's min RTT, us
    rm -f "$work"/idle.*
    "${launch[@]}" -np 2 --mca btl rttcc,self --mca btl_rttcc_timestamp "$1" --mca btl_rttcc_probe_enable 1 \
        --mca btl_rttcc_probe_interval_us 1000 --mca btl_rttcc_probe_startup_delay_ms 0 --mca btl_rttcc_probe_max_rate 1000 \
        --mca btl_rttcc_rtt_dump "$work/idle" "$work/rtt_table" -idle 2 -spin >/dev/null 2>&1
    awk -F, 'FNR > 2 { print $5 }' "$work"/idle.*.csv | median
}
for ((r = 0; r < runs; ++r)); do
    lat8 rttcc --mca btl_rttcc_timestamp user >>"$work/lat.user"
    lat8 rttcc --mca btl_rttcc_timestamp kernel >>"$work/lat.kernel"
    lat8 tcp >>"$work/lat.tcp"
    idle_min user >>"$work/min.user"
    idle_min kernel >>"$work/min.kernel"
    "$work/udp_pingpong" 8 20000 3 | awk '{ print 2 * $2 }' >>"$work/raw"  # one-way -> round trip
done
lu=$(median <"$work/lat.user") lk=$(median <"$work/lat.kernel") lt=$(median <"$work/lat.tcp")
mu=$(median <"$work/min.user") mk=$(median <"$work/min.kernel") raw=$(median <"$work/raw")
echo "# medians of $runs alternating runs, 2 ranks on one host (loopback)"
echo "1. timestamping overhead, 8-byte one-way latency (rttcc_bench -reps 5)"
printf '   timestamp=user   %8.2f us\n   timestamp=kernel %8.2f us   overhead %+.1f%%\n   btl/tcp          %8.2f us   tcp/rttcc(kernel) = %s\n' \
    "$lu" "$lk" "$(awk -v a="$lk" -v b="$lu" 'BEGIN { print 100 * (a / b - 1) }')" "$lt" "$(ratio "$lt" "$lk")"
echo "2. RTT accuracy: idle table min RTT (probes every 1 ms, 2 s, ranks spinning) vs raw UDP round trip"
printf '   raw UDP ping-pong round trip (tools/udp_pingpong)  %8.2f us\n' "$raw"
printf '   table min RTT, timestamp=user                     %8.2f us   table/raw = %s\n' "$mu" "$(ratio "$mu" "$raw")"
printf '   table min RTT, timestamp=kernel                   %8.2f us   table/raw = %s (kernel to kernel: no user space)\n' "$mk" "$(ratio "$mk" "$raw")"
echo "3. RTT heatmap of an 8-rank run (probes all_pairs every 5 ms, data between all pairs)"
rm -f "$out"/rtt8.*
"${launch[@]}" -np 8 --mca btl rttcc,self --mca btl_rttcc_probe_enable 1 --mca btl_rttcc_probe_strategy all_pairs \
    --mca btl_rttcc_probe_interval_us 5000 --mca btl_rttcc_probe_startup_delay_ms 0 \
    --mca btl_rttcc_rtt_dump "$out/rtt8" "$work/rtt_table" >/dev/null 2>&1
"$top/tools/rtt_heatmap" --metric min_rtt_us --png "$out/rtt8-heatmap.png" --matrix "$out/rtt8-matrix.csv" \
    --title "8 ranks, one host" "$out/rtt8" | sed 's/^/   /'
echo "   heatmap: $out/rtt8-heatmap.png"
