#!/usr/bin/env bash
# MPI correctness over btl rttcc on one host: every test verifies its data;
# each run pins the transport (--mca btl rttcc,self: no vader, no tcp) and
# rttcc's counters prove it carried every rank's traffic.  The cm plan runs
# the point-to-point tests and coll_rttcc under pml/cm over mtl_rttcc.
#
#   test/mpi/run.sh [test ...]     BTL=tcp,self to run the same tests over tcp
#   SELFTEST=1 test/mpi/run.sh     corrupts one received byte: every test must fail
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
btl=${BTL:-rttcc,self}
scratch_dir mpi

# name:np values[:program arguments[:extra mpirun arguments[:exit N:text]]]
# (with `exit N`, the job must end with status N, and its output hold the text: an abort path; the
# extra mpirun arguments may hold ':', as in --map-by ppr:1:node: all before the last ":exit N:" is theirs)
ofi="-x RTTCC_OFI_PROVIDER=udp --mca btl_rttcc_wire ofi"
plan=(
    "pingpong:2"
    "pingpong:4:-max 4194304"
    "storm:2 3 4 8"
    "anysource:3 8"
    "ssend:2 4"
    "probe:2 5"
    "datatypes:2 4"
    "incast:4 8"
    "thread_multiple:2 4"
    "collectives:2 3 4 5 8"
    "mpit:2 4"
    "mpit:2 4:-gets"
    "mpit:2:-no-gets:--mca btl_rttcc_flags send,inplace"
    # a sender computing outside MPI serves its large message (RGET) all the same; without get it does not
    "rget_progress:2 4:-busy 3 -within 1.5"
    "rget_progress:2:-busy 2 -after 1.5:--mca btl_rttcc_flags send,inplace"
    # a receiver that computes in stretches longer than rttcc_agent_idle_ms and polls in between: MPI_Iprobe
    # finds each message at its next poll (the liveness agent kept it; with rttcc_agent_keep_mb 0 it is found
    # only once the receiver stays in MPI), and a posted receive polled with MPI_Test has its 4 MiB rendezvous
    # done within 4 polls (the agent lands the puts; kept unacknowledged, 32 credits of 64 KiB a poll, it is not)
    "poll_progress:2 4"
    "poll_progress:2:-poll test -polls 4:--mca btl_rttcc_send_credits 32"
    "rtt_table:2 4"
    # the parameters by their old names (deprecated synonyms), their new names, their btl_rttcc_ names:
    "rtt_table:3:-idle 1:--mca btl_rttcc_probe_enable 1 --mca btl_rttcc_probe_interval 2000 --mca btl_rttcc_probe_startup_delay 0"
    "rtt_table:3:-idle 1 -outside:--mca rttcc_probe_enable 1 --mca rttcc_probe_interval_us 2000 --mca rttcc_probe_startup_delay_ms 0"
    "rtt_table:3:-idle 1 -outside -threads:--mca btl_rttcc_probe_enable 1 --mca btl_rttcc_probe_interval_us 2000 --mca btl_rttcc_probe_startup_delay_ms 0"
    "pingpong:2:-max 4194304:--mca btl_rttcc_cc aimd"
    "storm:4::--mca btl_rttcc_cc timely"
    "collectives:4::--mca btl_rttcc_cc swift"
    "storm:3::$ofi"
    "pingpong:2:-max 2097152:$ofi"
    "collectives:4::$ofi"
    "alltoall:2 3 4:-expect-rttcc"
    "alltoall:8:-max 131072 -rounds 8 -expect-rttcc"
    "alltoall:5:-max 262144 -expect-rttcc:--mca coll_rttcc_policy linear"
    "alltoall:5:-max 262144 -expect-rttcc:--mca coll_rttcc_policy greedy"
    "alltoall:5:-max 262144 -expect-rttcc:--mca coll_rttcc_policy threshold"
    "alltoall:5:-max 262144 -expect-rttcc:--mca coll_rttcc_policy balanced"
    "alltoall:5:-max 262144 -expect-rttcc:--mca coll_rttcc_policy adaptive"
    "alltoall:4:-max 262144 -expect-rttcc:--mca coll_rttcc_segment_size 4096"
    "alltoall:6:-max 262144 -rounds 2 -expect-rttcc:--mca coll_rttcc_max_grants 1 --mca coll_rttcc_max_concurrent 1"
    "alltoall:4:-max 262144 -expect-rttcc:--mca coll_rttcc_max_grants 0 --mca coll_rttcc_max_concurrent 0"
    "alltoall:3:-max 65536 -rounds 0 -errors -expect-rttcc"
    "alltoall:3:-max 65536 -rounds 0 -errors -expect-rttcc:--mca coll_rttcc_eager_limit 0"
    # without MPI_Alltoallv's own check, which returns on the rank whose block to itself mismatches alone
    "alltoall:3 4:-max 65536 -rounds 0 -errors -expect-rttcc:--mca mpi_param_check 0"
    "alltoall:4:-max 262144 -rounds 4 -expect-rttcc:--mca coll_rttcc_eager_limit 0"
    "alltoall:5:-max 262144 -rounds 4 -expect-rttcc:--mca coll_rttcc_eager_total 8192 --mca coll_rttcc_min_bytes 0"
    "alltoall:4:-max 262144 -rounds 4 -expect-rttcc:--mca coll_rttcc_eager_limit 1048576 --mca coll_rttcc_eager_total 1073741824"
    "alltoall:4:-max 262144:--mca coll_rttcc_min_bytes 65536"
    "p2p_edges:2 3"
    "coll_bench:4:-sizes 1K,64K -iters 3 -warmup 1"
    "coll_bench:4 5:-sizes 64K -iters 3 -warmup 1 -through 1"
    "coll_bench:4:-sizes 64K -iters 3 -warmup 1 -across 2"
    # bench/compare.sh's and perf_table.sh's benchmark: one pair, bibw, two pairs at once (mbw_mr)
    "rttcc_bench:2:-max 262144 -reps 1"
    "rttcc_bench:2 4:-max 65536 -reps 1 -bibw"
    # bench/osc_compare.sh's benchmark, over osc_rttcc (test/osc/ has the one-sided tests)
    "osc_bench:2:-scale 0.02 -max 256K:--mca osc rttcc"
    "osc_bench:2:-scale 0.02 -max 64K -win create -tests put,get,acc,fop,cas -sync flush,fence,pscw,lock:--mca osc rttcc"
    "osc_bench:4:-tests alltoall -sizes 1K,64K -iters 3 -warmup 1:--mca osc rttcc"
)
# pml/cm over mtl_rttcc (BTL=tcp,self runs leave these out)
cm_plan=(
    "pingpong:2 4:-max 4194304"
    "rttcc_bench:2 4:-max 65536 -reps 1 -bibw"
    "storm:2 8"
    "anysource:3 8"
    "ssend:2 4"
    "probe:2 5"
    "datatypes:2 4"
    "incast:8"
    "thread_multiple:4"
    "collectives:3 5"
    "p2p_edges:2 3"
    "p2p_edges:2::--mca mtl_rttcc_eager_limit 0"
    "status:2 3"
    "mpit:2 4:-component mtl_rttcc"
    "cancel:2 4"
    "cancel:2::--mca mtl_rttcc_eager_limit 0"
    "cancel:2::--mca mtl_rttcc_fault_reorder 500000 --mca mtl_rttcc_fault_drop 100000"
    "probe:3::--mca mtl_rttcc_eager_limit 0"
    "poll_progress:2 4"
    "poll_progress:2:-poll test -polls 4:--mca mtl_rttcc_send_credits 32"
    # erroneous programs mtl_rttcc tolerates: messages to a receiver that freed their communicator
    "comm_free:2 3"
    # a sender computing outside MPI: its engine serves the receiver's gets of a large message
    "rget_progress:2 4:-busy 3 -within 1.5"
    # the engine refuses some sends and SKIPs' first tries (shim/refuse_send.c): the messages after them still come;
    # and forged SKIPs (a duplicate, far behind, far ahead) change nothing
    "refused_send:2 3::-x LD_PRELOAD=$build/refuse_send.so"
    "refused_send:2:-threads 4 -forged:-x LD_PRELOAD=$build/refuse_send.so -x REFUSE_SEND_FORGE=1 --mca mtl_rttcc_fault_reorder 500000 --mca mtl_rttcc_fault_drop 100000"
    # forged FINs (another exposure, too many bytes) before a rendezvous read (shim/forge_fin.c): dropped, the send
    # waits for the real one
    "pingpong:2:-max 1048576:-x LD_PRELOAD=$build/forge_fin.so"
    # messages of several gets (the engine's largest message is 4 MiB): 8 MiB - 1, 8 MiB, 8 MiB + 1
    "pingpong:2:-max 9437184"
    # mtl_rttcc_skip.c's abort paths (OMPI_ERR_OUT_OF_RESOURCE: status 254): every SKIP refused, one owed at
    # finalize, and one whose receiver waits for a message behind it while its sender waits in MPI_Finalize;
    # and the 65th SKIP owed with no memory to note it
    "refused_send:2:-owe 1:-x LD_PRELOAD=$build/refuse_send.so -x REFUSE_SEND_SKIPS=all:exit 254:that rttcc's engine has refused"
    "refused_send:2:-owe 1 -then-send:-x LD_PRELOAD=$build/refuse_send.so -x REFUSE_SEND_SKIPS=all:exit 254:that rttcc's engine has refused"
    "refused_send:2:-owe 65:-x LD_PRELOAD=$build/refuse_send.so -x REFUSE_SEND_SKIPS=all -x REFUSE_SEND_NOMEM=1:exit 254:could not allocate memory to note that process"
    # but not SKIPs refused over more than 500 ms with the process computing outside MPI in between (status 0)
    "refused_send:2:-owe 1 -pause 300:-x LD_PRELOAD=$build/refuse_send.so -x REFUSE_SEND_SKIPS=5:exit 0:rank 1 computed between refused SKIPs"
    "storm:4::--mca mtl_rttcc_eager_limit 1048576"
    "pingpong:2:-max 4194304:--mca mtl_rttcc_cc timely"
    "alltoall:3 5:-max 262144 -expect-rttcc"
    "alltoall:3:-max 65536 -rounds 0 -errors -expect-rttcc"
)
selected=("$@")

# The tests, and the benchmarks behind bench/coll_table.sh, osc_compare.sh and perf_table.sh (whose data checks
# and coll_bench's bound the plan runs too).
for src in "$here"/*.c "$here/../../bench/coll_bench.c" "$here/../../bench/osc_bench.c" "$here/../../bench/rttcc_bench.c"; do
    mpicc -O2 -Wall -Wextra -Werror -o "$build/mt_$(basename "$src" .c)" "$src" -lpthread -lm ||
        { echo "FAIL build $src"; echo "0 passed, 1 failed"; exit 1; }
done

for shim in refuse_send forge_fin; do
    cc -shared -fPIC -O2 -Wall -Wextra -Werror -I"$here/../../include" -o "$build/$shim.so" \
        "$here/shim/$shim.c" -ldl -lpthread || { echo "FAIL build shim/$shim.c"; echo "0 passed, 1 failed"; exit 1; }
done

ob1_stack="--mca pml ob1 --mca btl $btl --mca btl_rttcc_if_include lo --mca btl_tcp_if_include lo --mca btl_rttcc_stats 1"
cm_stack="--mca pml cm --mca mtl rttcc --mca btl self --mca mtl_rttcc_if_include lo --mca mtl_rttcc_stats 1"

run_one() {  # run_one NAME NP ARGS EXTRA STACK [STATUS TEXT]
    local name=$1 np=$2 args=$3 extra=$4 stack=$5 status=${6:-} text=${7:-} out="$build/out" start rc secs why="" label=""
    [ "$stack" = "$cm_stack" ] && label="pml cm: "
    start=$(date +%s.%N)
    # shellcheck disable=SC2086
    timeout -k 5 "${TEST_TIMEOUT:-180}" mpirun --allow-run-as-root --oversubscribe -np "$np" \
        $stack --mca op ^avx $extra "$build/mt_$name" $args >"$out" 2>&1
    rc=$?
    secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    if [ -n "${SELFTEST:-}" ]; then
        if [ $rc -ne 0 ] && grep -q "^FAIL " "$out"; then
            ok "$label$name np=$np: corruption detected (${secs}s)"
        else
            bad "$label$name np=$np: corruption NOT detected (rc=$rc)"
        fi
        return
    fi
    if [ -n "$status" ]; then  # an abort path
        [ $rc -eq "$status" ] || why="exit code $rc, not $status"
        [ -z "$why" ] && ! grep -qF "$text" "$out" && why="no \"$text\" in the output"
    elif [ $rc -ne 0 ]; then
        why="exit code $rc"
    elif ! grep -q "^PASS $name" "$out"; then
        why="no PASS line"
    fi
    if [ -z "$why" ] && [ -z "$status" ] && { [[ $btl == *rttcc* ]] || [ -n "$label" ]; }; then
        why=$(rttcc_stats_ok "$out" "$np") || true
    fi
    if [ -z "$why" ]; then
        ok "$label$name np=$np $args ${extra:+[$extra] }(${secs}s, retx=$(stats_sum "$out" retx))"
    else
        bad "$label$name np=$np $args ${extra:+[$extra] }: $why"
    fi
}

# Over another BTL: no coll_rttcc to expect, and no -errors (ob1 over tcp
# hangs on a truncated large receive, a case alltoall -errors provokes).
without_rttcc_args() {
    local w out=()
    for w in $1; do
        [[ $w == -expect-rttcc || $w == -errors || $w == -gets || $w == -no-gets || $w == -within ]] || out+=("$w")
    done
    echo "${out[*]}"
}

run_plan() {  # run_plan STACK ENTRY...
    local stack=$1 entry name nps args rest extra status text np
    shift
    for entry in "$@"; do
        IFS=: read -r name nps args rest <<<"$entry"
        extra=$rest status="" text=""
        if [[ $rest =~ ^(.*):exit\ ([0-9]+):(.*)$ ]]; then
            extra=${BASH_REMATCH[1]} status=${BASH_REMATCH[2]} text=${BASH_REMATCH[3]}
        fi
        [ -n "${SELFTEST:-}" ] && [ -n "$status" ] && continue  # it corrupts no data
        [[ $btl == *rttcc* ]] || args=$(without_rttcc_args "${args:-}")
        if ((${#selected[@]})) && [[ " ${selected[*]} " != *" $name "* ]]; then
            continue
        fi
        for np in $nps; do
            run_one "$name" "$np" "${args:-}" "${extra:-}" "$stack" "${status:-}" "${text:-}"
            [ -n "${SELFTEST:-}" ] && break
        done
    done
}

[ -n "${SELFTEST:-}" ] && export RTTCC_MPITEST_CORRUPT=1
run_plan "$ob1_stack" "${plan[@]}"
[[ $btl == *rttcc* ]] && run_plan "$cm_stack" "${cm_plan[@]}"
summary
