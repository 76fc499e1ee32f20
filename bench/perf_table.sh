#!/usr/bin/env bash
# Issue 18's tables from one command: rttcc against btl/tcp at every size,
# for btl_rttcc (pml ob1) and mtl_rttcc (pml cm), on one host (loopback) and
# between two testbed hosts, with and without mpi_yield_when_idle, with the
# targets checked; osu_bibw- and osu_mbw_mr-style aggregate bandwidth; and
# the loss table (the engine's own drop injection against lossless runs in
# the same window).
#
#   bench/perf_table.sh [-runs N] [-where loopback,testbed] [-stack btl,mtl]
#                       [-parts pt2pt,pairs,loss] [-out DIR]
#
# Every figure is a median of N (default 3) alternating runs of rttcc_bench
# (-reps 3) made by bench/compare.sh; ratios are rttcc / tcp for latency
# (below 1 is better) and for bandwidth (above 1 is better).  Targets:
# latency <= 0.8x tcp up to 1 KiB and <= 0.9x at every size, bandwidth
# >= 1.2x tcp from 1 KiB, 8 B latency <= 1.10x the raw UDP ping-pong on the
# same path (the 8 B latency is also given against udp_pingpong -wire: the
# kernel as rttcc's wire uses it, the floor of this design), bibw and mbw_mr >= 1.0x tcp; at 1% drop 8 B latency <= 2x and
# 4 MiB bandwidth >= 0.7x of lossless, at 0.1% within 10%.
#
# Needs root for the testbed (namespaces); builds its own (prefix rttccq)
# and takes it down at the end, also after a failure or an interrupt.
# The tables go to stdout and DIR/tables.md; per-size tables to DIR/*.txt.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
runs=3 wheres=loopback,testbed stacks=btl,mtl parts=pt2pt,pairs,loss out=""
while (($#)); do
    case $1 in
        -runs) runs=$2; shift 2 ;;
        -where) wheres=$2; shift 2 ;;
        -stack) stacks=$2; shift 2 ;;
        -parts) parts=$2; shift 2 ;;
        -out) out=$2; shift 2 ;;
        *) sed -n '2,/^set -euo pipefail/{/^set/!p}' "$0" >&2; exit 2 ;;
    esac
done
[ -n "$out" ] || out=$top/bench/results/perf_table-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
has() { [[ ",$1," == *",$2,"* ]]; }

export RTTCC_TB_PREFIX=rttccq RTTCC_TB_DIR=/tmp/rttccq-testbed
tb=$top/contrib/testbed/testbed
source "$top/bench/scenarios.sh"
work=$(mktemp -d)
cleanup() {
    rm -rf "$work"
    if has "$wheres" testbed; then clear_testbed; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
if has "$wheres" testbed; then
    [ "$(id -u)" -eq 0 ] || { echo "perf_table.sh: the testbed needs root" >&2; exit 2; }
    exec 9>/tmp/rttccq-perf_table.lock
    flock -n 9 || { echo "perf_table.sh: another run holds /tmp/rttccq-perf_table.lock" >&2; exit 2; }
    clear_testbed
    "$tb" up 2 >/dev/null
fi
where_args() { [ "$1" = testbed ] && echo -testbed; true; }
stack_args() { [ "$1" = mtl ] && echo -cm; true; }

# compare NAME ARGS...: one bench/compare.sh run, its table in NAME.txt and medians in NAME.dat.
compare() {
    local name=$1
    shift
    echo "# $name: bench/compare.sh -runs $runs $*" >&2
    "$top/bench/compare.sh" -runs "$runs" -raw "$out/$name.dat" "$@" >"$out/$name.txt"
}

# band_row KIND LABEL DAT: DAT's markdown row, KIND lat, bw or pairs: its ratios in size bands, the sizes off target.
band_row() {
    awk -v kind="$1" -v label="$2" '
        /^#/ { if ($2 == "udp") udp = $3; if ($2 == "wire") wire = $3; next }
        {
            size = $1; lat = $2 / $3; bw = ($5 > 0 ? $4 / $5 : 0)
            band = size <= 1024 ? 1 : size <= 262144 ? 2 : 3
            r = kind == "lat" ? lat : bw
            if (kind != "lat" && size == 0) next
            if (!(band in lo) || r < lo[band]) lo[band] = r
            if (!(band in hi) || r > hi[band]) hi[band] = r
            if (kind == "lat" && (r > 0.9 || (size <= 1024 && r > 0.8))) off = off " " size
            if (kind == "bw" && size >= 1024 && r < 1.2) off = off " " size
            if (kind == "pairs" && size >= 1024 && r < 1.0) off = off " " size
            if (size == 8) us8 = $2
        }
        END {
            printf "| %s |", label
            for (b = 1; b <= 3; ++b) printf (b in lo) ? " %.2f - %.2f |" : " n/a |", lo[b], hi[b]
            if (kind == "lat") printf (udp > 0 ? " %.2f |" : " n/a |"), us8 / udp
            if (kind == "lat") printf (wire > 0 ? " %.2f |" : " n/a |"), us8 / wire
            printf " %s |\n", off == "" ? "none" : off
        }' "$3"
}

tables=$out/tables.md
: >"$tables"
note() { echo "$*" | tee -a "$tables"; }
note "# perf_table.sh: medians of $runs alternating runs, $(date -u +%Y-%m-%dT%H:%MZ), $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown)"

if has "$parts" pt2pt; then
    for where in ${wheres//,/ }; do
        for stack in ${stacks//,/ }; do
            for y in off on; do
                compare "pt2pt-$where-$stack-yield_$y" $(where_args "$where") $(stack_args "$stack") \
                    $([ "$y" = on ] && echo -yield)
            done
        done
    done
    note ""
    note "## Latency, rttcc / tcp (target <= 0.8 to 1 KiB, <= 0.9 everywhere; 8 B / raw UDP <= 1.10)"
    note "| config | 0 B - 1 KiB | 2 KiB - 256 KiB | 512 KiB - 4 MiB | 8 B / raw UDP | 8 B / wire floor | sizes off target |"
    note "|---|---|---|---|---|---|---|"
    for f in "$out"/pt2pt-*.dat; do band_row lat "$(basename "$f" .dat | sed 's/^pt2pt-//')" "$f" | tee -a "$tables"; done
    note ""
    note "## Bandwidth, rttcc / tcp (target >= 1.2 from 1 KiB)"
    note "| config | 1 B - 1 KiB | 2 KiB - 256 KiB | 512 KiB - 4 MiB | sizes off target |"
    note "|---|---|---|---|---|"
    for f in "$out"/pt2pt-*.dat; do band_row bw "$(basename "$f" .dat | sed 's/^pt2pt-//')" "$f" | tee -a "$tables"; done
fi

if has "$parts" pairs; then
    for where in ${wheres//,/ }; do
        for stack in ${stacks//,/ }; do
            compare "bibw-$where-$stack" $(where_args "$where") $(stack_args "$stack") -bibw
            compare "mbw_mr-$where-$stack" $(where_args "$where") $(stack_args "$stack") -np 4
        done
    done
    note ""
    note "## Aggregate bandwidth, rttcc / tcp: bibw (2 ranks, both send) and mbw_mr (4 ranks, 2 pairs) (target >= 1.0 from 1 KiB)"
    note "| config | 1 B - 1 KiB | 2 KiB - 256 KiB | 512 KiB - 4 MiB | sizes off target |"
    note "|---|---|---|---|---|"
    for f in "$out"/bibw-*.dat "$out"/mbw_mr-*.dat; do band_row pairs "$(basename "$f" .dat)" "$f" | tee -a "$tables"; done
fi

if has "$parts" loss; then
    mpicc -O2 -o "$work/rttcc_bench" "$top/bench/rttcc_bench.c"
    note ""
    note "## Loss: the engine's drop injection (rttcc_fault_drop, per million) against lossless, same window"
    note "(target: 0.1% drop within 10% of lossless; 1% drop: 8 B latency <= 2x, 4 MiB bandwidth >= 0.7x)"
    note "| config | drop | 8 B us | 8 B / lossless | 64 KiB us | 64 KiB / lossless | 4 MiB MB/s | 4 MiB / lossless | on target |"
    note "|---|---|---|---|---|---|---|---|---|"
    for where in ${wheres//,/ }; do
        for stack in ${stacks//,/ }; do
            launch=(mpirun --allow-run-as-root --oversubscribe --mca rttcc_if_include lo)
            [ "$where" = testbed ] && launch=("$top/contrib/testbed/mpirun-tb")
            how=(--mca pml ob1 --mca btl rttcc,self)
            [ "$stack" = mtl ] && how=(--mca pml cm --mca mtl rttcc --mca btl self)
            name=loss-$where-$stack
            : >"$out/$name.raw"
            for ((r = 0; r < runs; ++r)); do
                for d in 0 1000 10000; do
                    "${launch[@]}" -np 2 "${how[@]}" --mca rttcc_fault_drop "$d" "$work/rttcc_bench" -max 4194304 -reps 3 \
                        2>/dev/null | awk -v d="$d" '!/^#/ { print d, $0 }' >>"$out/$name.raw"
                done
            done
            awk -v label="$where-$stack" '
                function median(list,   n, a, i, j, t) {
                    n = split(list, a, " ")
                    for (i = 2; i <= n; ++i) for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; --j) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
                    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
                }
                $2 == 8 { l8[$1] = l8[$1] " " $3 }
                $2 == 65536 { l64[$1] = l64[$1] " " $3 }
                $2 == 4194304 { b4[$1] = b4[$1] " " $4 }
                END {
                    L = median(l8[0]); M = median(l64[0]); B = median(b4[0])
                    for (d = 0; d <= 10000; d = d ? d * 10 : 1000) {
                        l = median(l8[d]); m = median(l64[d]); b = median(b4[d])
                        ok = d == 0 ? "-" : d == 1000 ? (l <= 1.1 * L && b >= 0.9 * B ? "yes" : "no") \
                                                      : (l <= 2 * L && b >= 0.7 * B ? "yes" : "no")
                        printf "| %s | %.1f%% | %.2f | %.2f | %.2f | %.2f | %.0f | %.2f | %s |\n",
                            label, d / 1e4, l, l / L, m, m / M, b, b / B, ok
                    }
                }' "$out/$name.raw" | tee -a "$tables"
        done
    done
fi
echo "# tables in $tables; per-size tables in $out" >&2
