#!/usr/bin/env bash
# MPI one-sided across hosts (issue 16): a subset of test/osc across 3
# namespace hosts, then the same through real loss (h2's link rate-limited
# with a short queue) and through the engine's injected drops, duplicates
# and reordering.  Builds its own testbed (prefix rttcco) and tears it down
# on exit, also when interrupted.
#
#   test/osc/testbed.sh                           osc_rttcc over btl_rttcc (and pml cm over mtl_rttcc)
#   OSC=pt2pt BTL=tcp,self test/osc/testbed.sh    Open MPI's osc/pt2pt over btl/tcp (validates the tests)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
source "$top/test/mpi/lib.sh"
export RTTCC_TB_PREFIX=rttcco RTTCC_TB_DIR=/tmp/rttcco-testbed
tb=$top/contrib/testbed/testbed
osc=${OSC:-rttcc}
btl=${BTL:-rttcc,self}
extra_cleanup() { pkill -KILL -f "orted.*rttcco-h" 2>/dev/null; "$tb" down; }
scratch_dir osc-testbed

for src in "$here"/*.c; do
    mpicc -O2 -o "$build/$(basename "$src" .c)" "$src" -lpthread || { echo "0 passed, 1 failed"; exit 1; }
done
"$tb" up 3 --slots 2 >/dev/null || { echo "FAIL testbed up"; echo "0 passed, 1 failed"; exit 1; }
start_all=$(date +%s)

over_rttcc() { [[ $btl == *rttcc* ]] || [ "${STACK:-}" = cm ]; }

# The testbed's hosts share this machine's cores: more ranks than cores is an
# oversubscribed node, where Open MPI turns mpi_yield_when_idle on by itself.
# Here it cannot see that (each host has slots), and busy-polling ranks that
# wait on a descheduled one take a timeslice per message: ops over 3 hosts on
# 2 cores took 28 s against 1.9 s yielding (tcp: 27 s against 1.4 s).
tbrun() {  # tbrun NP MPIRUN-ARGS... PROGRAM ARGS... (STACK=cm: pml cm over mtl_rttcc)
    local np=$1 stack=(--mca pml ob1 --mca btl "$btl" --mca btl_rttcc_stats 1)
    shift
    [ "${STACK:-}" = cm ] && stack=(--mca pml cm --mca mtl rttcc --mca btl self --mca mtl_rttcc_stats 1)
    [ "$np" -gt "$(nproc)" ] && stack+=(--mca mpi_yield_when_idle 1)
    timeout -k 5 "${TEST_TIMEOUT:-180}" "$top/contrib/testbed/mpirun-tb" --mca rtc ^hwloc -np "$np" "${stack[@]}" \
        --mca osc "$osc" --mca op ^avx "$@" >"$build/out" 2>&1
}

# check NAME NP LABEL: PASS line, and over rttcc a stats line of every rank with bytes both ways.
check() {
    local why=""
    grep -q "^PASS $1" "$build/out" || why="no PASS line"
    if [ -z "$why" ] && over_rttcc; then why=$(rttcc_stats_ok "$build/out" "$2") || true; fi
    if [ -z "$why" ]; then ok "$3"; else bad "$3: $why"; fi
}

# The subset: "name np args", each across the hosts.  Over osc/pt2pt the
# threads test and -expect-progress are left out (test/osc/run.sh says why).
subset=(
    "ops 3 -sizes 1,7,1000,65536,1048579 -sync fence,pscw,lock_excl,lock_all,flush,flush_local,win_sync"
    "ops 6 -targets all -sizes 8,4096 -flavor allocate,dynamic -sync fence,pscw_test,lock_shared,flush_all,flush_local_all"
    "datatypes 3 -elements 24,2400 -ops put,get,acc -flavor create,dynamic"
    "accumulate 3 -types int,unsigned_long,double,c_double_complex,c_bool,byte,2int,float_int,integer,logical"
    "accumulate 6 -phases concurrent,counter -types int64_t,double,long_double"
    "windows 3 -loop 100"
    "passive 3 -busy 3 -iters 40 -expect-progress 1"
    "bursts 3 -bytes 32K -puts 6 -compute 0.2 -flavor create,dynamic"
    "threads 3 -threads 4 -iters 20"
    "errors 3 -cases unlock_unlocked,unlock_all_unlocked,lock_twice,complete_unstarted"
)
# Through loss: moves more bytes, so that the queue overflows.
lossy=(
    "ops 3 -sizes 65536,1048579 -ops put,get,acc,gacc,rget -sync fence,lock_excl,flush,flush_local_all -flavor allocate"
    "accumulate 3 -phases concurrent,counter -types int,double"
    "passive 3 -busy 2 -iters 40 -expect-progress 1"
    "bursts 3 -bytes 16K -puts 8 -compute 0.1 -flavor allocate"
)
runnable() {  # runnable ARGS...: prints the arguments osc/$osc can take, or fails
    local out=() w skip=0
    [[ $osc == pt2pt && $1 == threads ]] && return 1
    for w in "$@"; do
        if ((skip)); then skip=0; continue; fi
        if [[ $osc == pt2pt && $w == -expect-progress ]]; then skip=1; continue; fi
        out+=("$w")
    done
    echo "${out[*]}"
}

# 1. Three different hosts: each rank's hostname is its namespace.
names=$(timeout 30 "$top/contrib/testbed/mpirun-tb" --mca rtc ^hwloc -np 3 hostname 2>/dev/null | sort -u | tr '\n' ' ')
if [ "$(wc -w <<<"$names")" -eq 3 ]; then ok "ranks on 3 hosts ($names)"; else bad "ranks did not land on 3 hosts: $names"; fi

# 2. The subset across the hosts (and under pml cm over mtl_rttcc).
for stack in ob1 cm; do
    label=""
    if [ $stack = cm ]; then
        [[ $btl == *rttcc* ]] || continue
        label="pml cm: "
    fi
    for t in "${subset[@]}"; do
        # under cm, what differs is the engine's creator: operations and a computing target say enough
        [ $stack = cm ] && [[ $t != ops* && $t != passive* ]] && continue
        # shellcheck disable=SC2086
        args=$(runnable $t) || { echo "skip $label$t: osc/$osc cannot"; continue; }
        read -r name np rest <<<"$args"
        # shellcheck disable=SC2086
        STACK=$stack tbrun "$np" "$build/$name" $rest
        check "$name" "$np" "$label$name np=$np across 3 hosts $rest"
    done
done

# 3. Real loss: h2's link at 100 Mbit/s with a 10-datagram queue, both ways
#    (over rttcc with congestion control aimd, as test/testbed does).
cc=()
[[ $btl == *rttcc* ]] && cc=(--mca btl_rttcc_cc aimd)
for t in "${lossy[@]}"; do
    # shellcheck disable=SC2086
    args=$(runnable $t) || continue
    read -r name np rest <<<"$args"
    "$tb" unshape rttcco-h2
    "$tb" shape rttcco-h2 100mbit 10
    # shellcheck disable=SC2086
    tbrun "$np" "${cc[@]}" "$build/$name" $rest
    drops=$("$tb" stats rttcco-h2 | tr ' ' '\n' | awk -F= '/dropped/ { s += $2 } END { print s + 0 }')
    evidence="queue drops=$drops"
    over_rttcc && evidence="$evidence retx=$(stats_sum "$build/out" retx)"
    if [ "$drops" -gt 0 ] || [ "$name" != ops ]; then
        check "$name" "$np" "$name np=$np through a shaped link ($evidence) $rest"
    else
        bad "$name np=$np through a shaped link: the queue dropped nothing ($evidence)"
    fi
done
"$tb" unshape rttcco-h2

# 4. The engine's injected faults (per million datagrams sent), over rttcc
#    only: every byte intact, the fault seen in the counters.
declare -A faults=(
    [drop]="rttcc_fault_drop 20000:retx"
    [duplicate]="rttcc_fault_dup 30000:dup_segs"
    [reorder]="rttcc_fault_reorder 30000:segs_ooo"
)
for stack in ob1 cm; do
    if [ $stack = ob1 ] && [[ $btl != *rttcc* ]]; then
        echo "skip injected faults: the engine's injection needs btl rttcc (BTL=$btl)"
        continue
    fi
    [ $stack = cm ] && { [[ $btl == *rttcc* ]] || continue; }
    label=""
    [ $stack = cm ] && label="pml cm: "
    for fault in drop duplicate reorder; do
        [ $stack = cm ] && [ $fault != drop ] && continue  # the faults act in the engine, the same under both
        IFS=: read -r param evidence <<<"${faults[$fault]}"
        for t in "${lossy[@]}"; do
            # shellcheck disable=SC2086
            args=$(runnable $t) || continue
            read -r name np rest <<<"$args"
            # shellcheck disable=SC2086
            STACK=$stack tbrun "$np" --mca $param --mca rttcc_retrans_timeout_us 5000 "$build/$name" $rest
            n=$(stats_sum "$build/out" "$evidence")
            if [ "$n" -gt 0 ]; then
                check "$name" "$np" "${label}injected $fault: $name np=$np intact ($evidence=$n)"
            else
                bad "${label}injected $fault: $name np=$np: no evidence of the fault ($evidence=$n)"
            fi
        done
    done
done

# 5. Two ranks on two hosts under injected drops and reordering: the fence
#    between two ranks and MPI_Win_complete send an ordered message that the
#    target holds until the data sent before it (lost, or overtaken) is in;
#    every byte must be in place when it is delivered.  (With ordered
#    messages delivered on arrival, the runs under drops failed their data
#    checks; reordering rarely puts data behind one.)
if [ "$osc" = rttcc ] && [[ $btl == *rttcc* ]]; then
    pair="ops 2 -sizes 7,65536,1048579 -ops put,get,acc,gacc -sync fence,pscw,pscw_test -flavor create,allocate"
    for stack in ob1 cm; do
        label=""
        [ $stack = cm ] && label="pml cm: "
        for fault in drop reorder; do
            IFS=: read -r param evidence <<<"${faults[$fault]}"
            read -r name np rest <<<"$pair"
            # shellcheck disable=SC2086
            STACK=$stack tbrun "$np" --map-by node --mca $param --mca rttcc_retrans_timeout_us 5000 "$build/$name" $rest
            n=$(stats_sum "$build/out" "$evidence") held=$(stats_sum "$build/out" ordered_held)
            # a drop before an ordered message holds it every few epochs; a reordering, rarely
            if [ "$n" -gt 0 ] && { [ "$held" -gt 0 ] || [ $fault = reorder ]; }; then
                check "$name" "$np" "${label}injected $fault, two hosts: $name np=$np intact ($evidence=$n ordered_held=$held)"
            else
                bad "${label}injected $fault, two hosts: $name np=$np: no evidence ($evidence=$n ordered_held=$held)"
            fi
        done
    done
fi

# 6. Teardown leaves nothing behind.
"$tb" down
left=$(ip netns list | grep -c '^rttcco-' || true)
links=$(ip -o link show | grep -c 'rttcco-' || true)
if [ "$left" -eq 0 ] && [ "$links" -eq 0 ]; then ok "teardown left nothing"; else bad "teardown left $left namespaces, $links links"; fi
echo "osc $osc, btl $btl: $(($(date +%s) - start_all)) s"
summary
