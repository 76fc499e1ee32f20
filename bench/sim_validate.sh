#!/usr/bin/env bash
# rttcc_sim against the testbed (issue 17, point 2): runs bench/coll_table.sh
# on scenarios b, c and d (or reads one of its runs: -from DIR), then
# rttcc_sim's alltoall on the same scenarios with the same knobs, and sets
# them side by side for every (scenario, block size, config) measured:
# the testbed's median over runs of the max over ranks (the median over
# iterations in b and c, their average in d, as coll_table's table), the
# simulation's (the median over -iters alltoalls in b and c, the mean over
# -window seconds of virtual time in d, so that d sees the flood's on and
# off periods), their ratio and whether it is within 15%.
#
#   bench/sim_validate.sh [-runs N] [-sizes 256K,1M,4M] [-configs C,..] [-scenarios b,c,d]
#                         [-iters N] [-from DIR] [-out DIR] [-- coll_table.sh options [-- mpirun args]]
#
# Configs: rttcc:POLICY (rttcc_sim -algo rttcc -policy POLICY),
# tuned:alg1 (linear), tuned:alg2 (pairwise), tuned:alg3 (bruck: Open MPI's
# modified Bruck), tuned:default (what tuned's fixed rules pick for 4 ranks:
# linear below 512 KiB and from 1 MiB, pairwise between).  Default:
# rttcc:adaptive,tuned:alg1,tuned:alg2.  The knobs -fast, -slow, -link,
# -queue, -flood, -flood_on, -flood_off and -window among the coll_table.sh
# options go to both (with -from, give those of that run).
#
# The model charges no CPU time and its links have 1 us of propagation
# delay; the testbed's hosts are namespaces on two cores whose stack costs
# tens of microseconds per datagram, with four ranks and
# mpi_yield_when_idle.  Large blocks on shaped links are where the two
# should agree.  Output: DIR/validate.md (default
# bench/results/sim_validate-DATE-TIME), and the coll_table run in DIR/coll.
# Exits 1 if a run of either failed, 2 on bad usage.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
sim=$top/rttcc_sim
runs=3 sizes=256K,1M,4M configs=rttcc:adaptive,tuned:alg1,tuned:alg2 scenarios=b,c,d iters=5 from="" out=""
while (($#)); do
    case $1 in
        -runs) runs=$2; shift 2 ;;
        -sizes) sizes=$2; shift 2 ;;
        -configs) configs=$2; shift 2 ;;
        -scenarios) scenarios=$2; shift 2 ;;
        -iters) iters=$2; shift 2 ;;
        -from) from=$2; shift 2 ;;
        -out) out=$2; shift 2 ;;
        --) shift; break ;;
        *) sed -n '2,/^set -uo pipefail/{/^set/!p}' "$0" >&2; exit 2 ;;
    esac
done
coll_args=("$@")
[ -x "$sim" ] || { echo "sim_validate.sh: build rttcc_sim first ($sim)" >&2; exit 2; }

# The knobs, as coll_table.sh's defaults unless its options say otherwise.
fast=500 slow=100 link=200 queue=100 flood=300 flood_on=1 flood_off=1 window=2
mbit() { local v=${1,,}; v=${v%mbit}; [[ $v == *gbit ]] && v=$((${v%gbit} * 1000)); echo "$v"; }
for ((i = 0; i < ${#coll_args[@]}; ++i)); do
    v=${coll_args[i + 1]:-}
    case ${coll_args[i]} in
        -fast) fast=$(mbit "$v") ;;
        -slow) slow=$(mbit "$v") ;;
        -link) link=$(mbit "$v") ;;
        -queue) queue=$v ;;
        -flood) flood=$v ;;
        -flood_on) flood_on=$v ;;
        -flood_off) flood_off=$v ;;
        -window) window=$v ;;
    esac
done

[ -n "$out" ] || out=$top/bench/results/sim_validate-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out" || exit 2
failed=0
if [ -z "$from" ]; then
    from=$out/coll
    "$top/bench/coll_table.sh" -runs "$runs" -scenarios "$scenarios" -sizes "$sizes" \
        -configs "$configs" -out "$from" "${coll_args[@]}" >"$out/coll_table.log" 2>&1 || failed=1
fi

bytes_of() { local s=${1^^}; case $s in *K) echo $((${s%K} * 1024)) ;; *M) echo $((${s%M} * 1048576)) ;; *) echo "$s" ;; esac; }
sim_algo() {  # sim_algo CONFIG BYTES: rttcc_sim's -algo (and -policy) for a coll_table config
    case $1 in
        rttcc:*) echo "-algo rttcc -policy ${1#rttcc:}" ;;
        tuned:alg1) echo "-algo linear" ;;
        tuned:alg2) echo "-algo pairwise" ;;
        tuned:alg3) echo "-algo bruck" ;;
        tuned:default) if [ "$2" -ge 524288 ] && [ "$2" -lt 1048576 ]; then echo "-algo pairwise"; else echo "-algo linear"; fi ;;
        *) echo "" ;;
    esac
}

{
    echo "# sim_validate.sh $(date -u +%FT%TZ): testbed run $from; rttcc_sim alltoall -ranks 4 -testbed S" \
         "-fast $fast -slow $slow -link $link -queue $queue -flood $flood -flood_on $flood_on" \
         "-flood_off $flood_off (b, c: -iters $iters; d: -time $window)"
    echo
    echo "| scenario | bytes | config | testbed ms | rttcc_sim ms | sim/testbed | within 15% |"
    echo "|---|---:|---|---:|---:|---:|---|"
} >"$out/validate.md"
for s in ${scenarios//,/ }; do
    all=$from/$s.all
    [ -f "$all" ] || { echo "sim_validate.sh: no $all" >&2; failed=1; continue; }
    col=4; [ "$s" = d ] && col=6   # max_us, or avg_max_us in d (coll_table's table)
    for size in ${sizes//,/ }; do
        b=$(bytes_of "$size")
        for c in ${configs//,/ }; do
            measured=$(awk -v l="$c" -v b="$b" -v col="$col" '$1 == l && $2 == "alltoall" && $3 == b { v[++n] = $col }
                END { if (!n) exit; for (i = 2; i <= n; ++i) for (j = i; j > 1 && v[j - 1] > v[j]; --j) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
                      printf "%.1f", (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }' "$all")
            algo=$(sim_algo "$c" "$b")
            if [ -z "$measured" ] || [ -z "$algo" ]; then continue; fi
            more=(-iters "$iters")
            [ "$s" = d ] && more=(-iters 1 -time "$window")
            # shellcheck disable=SC2086
            if ! line=$("$sim" alltoall -header -ranks 4 -block "$b" -testbed "$s" $algo -fast "$fast" -slow "$slow" \
                -link "$link" -queue "$queue" -flood "$flood" -flood_on "$flood_on" -flood_off "$flood_off" \
                "${more[@]}" 2>>"$out/sim.err"); then
                failed=1
                echo "sim_validate.sh: rttcc_sim failed for $s $size $c" >&2
                continue
            fi
            echo "$line" | tail -n 1 >>"$out/sim.csv"
            simulated=$(echo "$line" | awk -F, -v d="$s" 'NR == 1 { for (i = 1; i <= NF; ++i) c[$i] = i; next }
                { printf "%.1f", (d == "d") ? $c["mean_us"] : $c["completion_us"] }')
            awk -v s="$s" -v b="$size" -v c="$c" -v m="$measured" -v x="$simulated" 'BEGIN {
                r = x / m; printf "| %s | %s | %s | %.1f | %.1f | %.2f | %s |\n", s, b, c, m / 1000, x / 1000, r,
                (r >= 0.85 && r <= 1.15) ? "yes" : "no" }' >>"$out/validate.md"
        done
    done
done
cat "$out/validate.md"
exit "$failed"
