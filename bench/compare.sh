#!/usr/bin/env bash
# Latency and bandwidth of btl rttcc against btl tcp in the same run, plus a
# raw UDP ping-pong on the same path: RUNS alternating runs of each, medians
# per size, ratios.  Extra arguments go to mpirun (e.g. a testbed hostfile).
#
#   bench/compare.sh [-runs N] [-max BYTES] [-if CIDR|NAME] [-- mpirun args]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
runs=5 max=4194304 iface=lo
while (($#)); do
    case $1 in
        -runs) runs=$2; shift 2 ;;
        -max) max=$2; shift 2 ;;
        -if) iface=$2; shift 2 ;;
        --) shift; break ;;
        *) echo "usage: $0 [-runs N] [-max BYTES] [-if CIDR|NAME] [-- mpirun args]" >&2; exit 2 ;;
    esac
done
extra=("$@")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mpicc -O2 -o "$work/rttcc_bench" "$top/bench/rttcc_bench.c"
gcc -O2 -o "$work/udp_pingpong" "$top/tools/udp_pingpong.c"

bench() {  # bench BTL OUT
    mpirun --allow-run-as-root --oversubscribe -np 2 --mca pml ob1 --mca btl "$1,self" \
        --mca btl_rttcc_if_include "$iface" --mca btl_tcp_if_include "$iface" "${extra[@]}" \
        "$work/rttcc_bench" -max "$max" -reps 3 2>/dev/null | grep -v '^#' >"$2"
}
for ((r = 0; r < runs; ++r)); do
    bench rttcc "$work/rttcc.$r"
    bench tcp "$work/tcp.$r"
    "$work/udp_pingpong" 8 20000 3 >>"$work/udp"
done

# median of column COL for each size over the runs of one transport
medians() {
    cat "$work/$1".* | awk -v c="$2" '{ v[$1] = v[$1] " " $c } END { for (s in v) print s, v[s] }' |
        while read -r size vals; do
            printf '%s %s\n' "$size" "$(echo "$vals" | tr ' ' '\n' | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }')"
        done | sort -n
}
medians rttcc 2 >"$work/rl"; medians tcp 2 >"$work/tl"
medians rttcc 3 >"$work/rb"; medians tcp 3 >"$work/tb"
udp=$(awk '{ print $2 }' "$work/udp" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')

echo "# medians of $runs runs each (rttcc_bench -reps 3), 2 ranks, interface $iface"
printf '# %-9s %12s %12s %9s %14s %14s %9s\n' bytes rttcc_us tcp_us tcp/rttcc rttcc_MB/s tcp_MB/s rttcc/tcp
join "$work/rl" "$work/tl" | join - "$work/rb" | join - "$work/tb" | sort -n |
    awk '{ printf "  %-9s %12.2f %12.2f %9.2f %14.1f %14.1f %9.2f\n", $1, $2, $3, $3 / $2, $4, $5, ($5 > 0 ? $4 / $5 : 0) }'
r8=$(awk '$1 == 8 { print $2 }' "$work/rl")
echo "# raw UDP ping-pong, 8 B, same path: $udp us; rttcc 8 B / raw UDP = $(awk -v a="$r8" -v b="$udp" 'BEGIN { printf "%.2f", a / b }')"
