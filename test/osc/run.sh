#!/usr/bin/env bash
# MPI one-sided correctness on one host (issue 16): every operation under
# every synchronization mode, derived datatypes, every accumulate op and
# type, many windows at once, a computing passive target, bursts whose
# origin computes before it flushes, threads, errors;
# every program checks every byte it moves.  Each run pins the one-sided
# component (--mca osc $OSC: osc_rttcc by default, never osc/sm behind its
# back) and the transport (--mca btl rttcc,self); over rttcc its counters
# must show that it carried every rank's traffic.  The cm plan runs under
# pml/cm over mtl_rttcc.
#
#   test/osc/run.sh [test ...]              tests by name (ops, datatypes, accumulate, ...)
#   OSC=pt2pt BTL=tcp,self test/osc/run.sh  Open MPI's osc/pt2pt over btl/tcp (what validates the tests)
#   OSC=sm test/osc/run.sh                  osc/sm: MPI_Win_allocate only (-flavor allocate is added)
#   PML="ob1 cm"                            the plans to run (cm only over rttcc: the default with BTL=rttcc,...)
#   SELFTEST=1 test/osc/run.sh              corrupts one received byte: every test must fail
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../mpi/lib.sh"
osc=${OSC:-rttcc}
btl=${BTL:-rttcc,self}
if [[ $btl == *rttcc* ]]; then pmls=${PML:-ob1 cm}; else pmls=${PML:-ob1}; fi
scratch_dir osc

# name:np values[:program arguments[:extra mpirun arguments[:osc components that cannot run it]]]
#
# What Open MPI 4.1.4's own components cannot do (their gaps, not the tests'; each
# case is kept for osc_rttcc):
#   pt2pt  Get_accumulate with a non-contiguous datatype of more than ~7 KB: wrong
#          data at the target or a double free in ompi_osc_pt2pt_process_receive;
#          MAXLOC/MINLOC on double_int, long_int, short_int, long_double_int
#          ("datatype is currently unsupported", then an abort); no
#          MPI_THREAD_MULTIPLE; no range checks (a put beyond the window writes
#          past it); no asynchronous progress (a computing target stalls every
#          origin: passive runs without -expect-progress); MPI_Rput in a fence
#          epoch is not refused.
#   sm     MPI_Win_allocate only; hangs in the second PSCW epoch with MPI_MODE_NOCHECK;
#          no range or epoch checks on puts and flushes.
errors_detected="unlock_unlocked,unlock_all_unlocked,lock_twice,complete_unstarted"
unsupported_pairs="double_int,long_int,short_int,long_double_int"
no_nocheck="fence,fence_assert,pscw,pscw_test,lock_excl,lock_shared,lock_all,flush,flush_all,flush_local,flush_local_all,win_sync"
plan=(
    "ops:2:-sizes 1,7,64,1000,65536 -sync $no_nocheck"
    "ops:2:-sizes 1048579,4M -ops put,get,acc,gacc,rput,rget -sync fence,pscw,lock_excl,flush,flush_local_all"
    "ops:3:-sizes 1,4096 -sync $no_nocheck"
    "ops:2 3:-sizes 1,7,1000,65536 -sync pscw_nocheck::sm"
    # pieces above post_bytes in PSCW epochs: ops cuts each transfer in three,
    # of 61440 bytes (the first is copied: an accumulate's into the batch, a put's
    # by the engine) and of 61441 (none is)
    "ops:2:-sizes 184320,184323 -ops put,acc -sync pscw,pscw_test"
    # a post_bytes above the engine's largest message: larger puts go alone (they were MPI_ERR_ARG)
    "ops:2:-sizes 6291456 -ops put,acc -sync fence,flush:--mca osc_rttcc_post_bytes 16777216:pt2pt,sm"
    "ops:4:-targets all -sizes 1,4096,65536 -sync $no_nocheck"
    "ops:8:-targets all -sizes 64,4096 -flavor allocate -sync fence,pscw,lock_shared,lock_all,flush_all,flush_local,win_sync"
    "ops:5:-sizes 7,100000 -flavor dynamic -sync $no_nocheck"
    "datatypes:2:-elements 24"
    "datatypes:3:-elements 98304 -ops put,get,acc -flavor create,dynamic -layouts unsigned,vector,subarray"
    "datatypes:3:-elements 4800 -ops put,get,acc -flavor create,dynamic -layouts indexed,struct,resized,struct_mixed,struct_spread"
    # the epoch schedule's paths: every put queued (eager_bytes 0), rounds forced by a small queue_bytes, each policy
    "ops:4:-targets all -sizes 1,4096,65536 -sync fence,pscw,lock_all:--mca osc_rttcc_eager_bytes 0 --mca osc_rttcc_queue_bytes 16384 --mca osc_rttcc_policy linear --mca osc_rttcc_verbose 30::pt2pt,sm"
    "ops:5:-targets all -sizes 100000 -ops put,acc -sync fence,pscw,lock_all:--mca osc_rttcc_eager_bytes 1024 --mca osc_rttcc_policy balanced --mca osc_rttcc_max_concurrent 2 --mca osc_rttcc_verbose 30::pt2pt,sm"
    # small puts, gets and accumulates each alone (the other ops lines batch them: rma_batches must count)
    "ops:3:-sizes 1,7,1000,4096 -sync fence,pscw,lock_excl,lock_shared,lock_all,flush,flush_local:--mca osc_rttcc_post_bytes 0::pt2pt,sm"
    "datatypes:3:-elements 2400,98304 -ops gacc -flavor allocate -layouts unsigned,vector,indexed_block,subarray::pt2pt"
    "datatypes:4:-elements 24,2400 -ops put,get,acc -sync lock -flavor allocate"
    "accumulate:2:-types ^$unsupported_pairs -flavor create,allocate,dynamic"
    "accumulate:4:-types ^$unsupported_pairs"
    "accumulate:8:-types ^$unsupported_pairs -iters 10 -phases concurrent,counter"
    # every accumulate held for the epoch's schedule (eager_bytes 0) and a fetch behind it
    "accumulate:3:-types int,double -phases ordering:--mca osc_rttcc_eager_bytes 0:pt2pt,sm"
    "accumulate:4:-types $unsupported_pairs -flavor create,allocate,dynamic::pt2pt"
    "windows:2 3 5"
    "windows:8:-loop 100"
    # a target writes its window as its epoch ends, while large gets from it may still be on their way
    "epochs:2 3:-iters 4::sm"
    "passive:2:-busy 2 -flavor create,allocate,dynamic -expect-progress 1"
    # dynamic memory detached and attached again inside one lock_all epoch
    "reattach:3:-rounds 30::sm"
    # ... more often than any table of detached regions would remember, also through drops, duplicates, reordering
    "churn:2 3:-churn 300 -rounds 2::sm"
    "churn:3:-churn 1000 -rounds 1:--mca btl_rttcc_fault_drop 20000 --mca btl_rttcc_fault_dup 30000 --mca btl_rttcc_fault_reorder 30000:pt2pt,sm"
    # large messages (the BTL's get) inside passive-target epochs, also with the
    # eager limit lowered so that gets are small enough to join a batch
    "mixed:2 3:-flavor create,allocate,dynamic::sm"
    "mixed:2:-bytes 16384,65536:--mca btl_rttcc_eager_limit 4096 --mca btl_rttcc_rndv_eager_limit 4096:sm"
    # bursts of medium puts and accumulates (some wait for company), then computation before the flush
    "bursts:2 3:-bytes 16K -puts 8 -rounds 3 -compute 0.2"
    "passive:5:-busy 3 -iters 50 -expect-progress 1"
    # locks asked for at MPI_Win_lock, as before osc_rttcc_lazy_lock
    "passive:3:-busy 1 -iters 30 -expect-progress 1:--mca osc_rttcc_lazy_lock 0:pt2pt,sm"
    "ops:2:-sizes 1,7,1000,65536 -sync lock_excl,lock_shared:--mca osc_rttcc_lazy_lock 0:pt2pt,sm"
    "threads:2 3:-flavor create,allocate,dynamic::pt2pt"
    "threads:4:-threads 8 -iters 20::pt2pt"
    "errors:2 4:-cases $errors_detected"
    "errors:3:-cases no_epoch,flush_unlocked::sm"
    "errors:3:-cases range_put,range_get,range_acc,range_dynamic,rput_in_fence,foreign_group,count_mismatch::pt2pt,sm"
)
# pml/cm over mtl_rttcc
cm_plan=(
    "ops:2:-sizes 1,7,1000,65536 -sync $no_nocheck"
    "ops:2:-sizes 1048579 -ops put,get,acc,rget -sync fence,lock_excl,flush,flush_local_all"
    "ops:3:-targets all -sizes 64,4096 -flavor dynamic -sync $no_nocheck"
    "datatypes:2:-elements 24,2400 -ops put,get,acc -flavor allocate"
    "accumulate:3:-types ^$unsupported_pairs"
    "windows:3"
    "epochs:2:-bytes 4M -iters 3::sm"
    "passive:3:-busy 2 -iters 50 -expect-progress 1"
    "bursts:2:-flavor allocate -compute 0.2"
    "threads:2:::pt2pt"
    "errors:2:-cases $errors_detected"
    "reattach:2:-rounds 12"
    "churn:2:-churn 300"
    "mixed:2"
)
selected=("$@")

for src in "$here"/*.c; do
    mpicc -O2 -Wall -Wextra -Werror -o "$build/ot_$(basename "$src" .c)" "$src" -lpthread ||
        { echo "FAIL build $src"; echo "0 passed, 1 failed"; exit 1; }
done

common="--mca osc $osc --mca op ^avx"
ob1_stack="--mca pml ob1 --mca btl $btl --mca btl_rttcc_if_include lo --mca btl_tcp_if_include lo --mca btl_rttcc_stats 1"
cm_stack="--mca pml cm --mca mtl rttcc --mca btl self --mca mtl_rttcc_if_include lo --mca mtl_rttcc_stats 1"

run_one() {  # run_one NAME NP ARGS EXTRA STACK
    local name=$1 np=$2 args=$3 extra=$4 stack=$5 out="$build/out" start rc secs why="" label=""
    [ "$stack" = "$cm_stack" ] && label="pml cm: "
    start=$(date +%s.%N)
    # shellcheck disable=SC2086
    timeout -k 5 "${TEST_TIMEOUT:-180}" mpirun --allow-run-as-root --oversubscribe -np "$np" \
        $stack $common $extra "$build/ot_$name" $args >"$out" 2>&1
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
    [ $rc -eq 124 ] && why="timed out"
    [ -z "$why" ] && [ $rc -ne 0 ] && why="exit code $rc"
    [ -z "$why" ] && ! grep -q "^PASS $name" "$out" && why="no PASS line"
    # a line that asks for the schedule's verbose output must show rounds were run
    [ -z "$why" ] && [[ $extra == *osc_rttcc_verbose\ 30* ]] && ! grep -q "the epoch's schedule" "$out" &&
        why="no epoch was scheduled (osc_rttcc_verbose 30 printed no schedule)"
    if [ -z "$why" ] && { [[ $btl == *rttcc* ]] || [ -n "$label" ]; }; then
        why=$(rttcc_stats_ok "$out" "$np") || true
    fi
    # osc_rttcc posts small puts, gets and accumulates into batches unless told not to
    if [ -z "$why" ] && [ "$osc" = rttcc ] && [ -z "$label" ] && [ "$name" = ops ]; then
        if [[ $extra == *osc_rttcc_post_bytes\ 0* ]]; then
            [ "$(stats_sum "$out" rma_posted)" -eq 0 ] || why="puts were posted into batches with post_bytes 0"
        elif [[ $args == *-sizes\ 184320,184323\ * ]]; then  # every piece is above post_bytes
            # one copy per target and epoch, in the rounds of 61440-byte pieces only
            # (half the rounds: both sizes run the same rounds): an accumulate's
            # posted into the batch, a put's copied by the engine
            local rounds posted copied
            rounds=$(sed -n 's/^ops: \([0-9]*\) rounds.*/\1/p' "$out" | head -n 1)
            posted=$(stats_sum "$out" rma_posted) copied=$(stats_sum "$out" puts_copied)
            [ "$posted" -gt 0 ] && [ "$copied" -gt 0 ] && [ $((posted + copied)) -eq $((np * ${rounds:-0} / 2)) ] ||
                why="$posted pieces posted and $copied puts copied in ${rounds:-?} PSCW rounds of $np ranks: the first piece of at most 60 KiB to a target in each epoch is copied, and only it"
        elif [[ $args != *-sizes\ 1048579* && $args != *-sizes\ 100000* && $args != *-sizes\ 6291456* ]]; then
            [ "$(stats_sum "$out" rma_batches)" -gt 0 ] || why="no batch was sent: small puts and accumulates each went alone"
        fi
    fi
    # a line with injected faults must have met them
    if [ -z "$why" ] && [[ $extra == *fault_drop* ]]; then
        [ "$(stats_sum "$out" retx)" -gt 0 ] && [ "$(stats_sum "$out" dup_segs)" -gt 0 ] ||
            why="no segment was resent or duplicated under injected faults"
    fi
    # a burst's puts and accumulates behind its first wait for company in the engine
    if [ -z "$why" ] && [ "$osc" = rttcc ] && [ "$name" = bursts ]; then
        [ "$(stats_sum "$out" sends_waited)" -gt 0 ] || why="no put or accumulate of a burst waited for the next (sends_waited 0)"
    fi
    if [ -z "$why" ]; then
        ok "$label$name np=$np $args ${extra:+[$extra] }(${secs}s)"
    else
        bad "$label$name np=$np $args ${extra:+[$extra] }: $why"
    fi
}

# The arguments as the component in use can take them: osc/pt2pt has no
# asynchronous progress (no -expect-progress), osc/sm only MPI_Win_allocate.
osc_args() {
    local w skip=0 out=()
    for w in $1; do
        if ((skip)); then skip=0; continue; fi
        if [[ $osc == pt2pt && $w == -expect-progress ]] || [[ $osc == sm && $w == -flavor ]]; then
            skip=1
            continue
        fi
        out+=("$w")
    done
    [ "$osc" = sm ] && out+=(-flavor allocate)
    echo "${out[*]}"
}

run_plan() {  # run_plan STACK ENTRY...
    local stack=$1 entry name nps args extra not_with np
    shift
    for entry in "$@"; do
        IFS=: read -r name nps args extra not_with <<<"$entry"
        if ((${#selected[@]})) && [[ " ${selected[*]} " != *" $name "* ]]; then
            continue
        fi
        if [[ ,${not_with:-}, == *",$osc,"* ]]; then
            echo "skip $name np=${nps// /,} ${args:-}: osc/$osc cannot (see the notes at the plan)"
            continue
        fi
        args=$(osc_args "${args:-}")
        for np in $nps; do
            run_one "$name" "$np" "$args" "${extra:-}" "$stack"
            [ -n "${SELFTEST:-}" ] && break
        done
    done
}

[ -n "${SELFTEST:-}" ] && export RTTCC_MPITEST_CORRUPT=1
start_all=$(date +%s)
[[ " $pmls " == *" ob1 "* ]] && run_plan "$ob1_stack" "${plan[@]}"
[[ " $pmls " == *" cm "* ]] && run_plan "$cm_stack" "${cm_plan[@]}"
echo "osc $osc, btl $btl, pml ${pmls}: $(($(date +%s) - start_all)) s"
summary
