#!/usr/bin/env bash
# Faults: injected drops, duplicates, reordering and truncation must leave
# every byte intact (with retransmissions counted); a frozen peer must end
# the job with rttcc's error within a bounded time; an unusable setting must
# give rttcc's show_help message and let MPI fall back or fail cleanly.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../mpi/lib.sh"
scratch_dir faults

mpicc -O2 -Wall -o "$build/exchange" "$here/exchange.c" &&
mpicc -O2 -Wall -o "$build/alltoall" "$here/../mpi/alltoall.c" -lpthread &&
mpicc -O2 -Wall -o "$build/silent_peer" "$here/silent_peer.c" &&
mpicc -O2 -Wall -o "$build/busy_peer" "$here/../mpi/busy_peer.c" &&
mpicc -O2 -Wall -o "$build/victim" "$here/victim.c" &&
g++ -std=c++17 -O2 -Wall -I"$here/../../common" -o "$build/spoof" "$here/spoof.cc" &&
mpicc -O2 -Wall -o "$build/p2p_edges" "$here/../mpi/p2p_edges.c" &&
mpicc -O2 -Wall -o "$build/ops" "$here/../osc/ops.c" -lpthread || { echo "0 passed, 1 failed"; exit 1; }

mpi() {  # mpi NP TIMEOUT args...
    local np=$1 limit=$2
    shift 2
    timeout -k 5 "$limit" mpirun --allow-run-as-root --oversubscribe -np "$np" --mca pml "${PML:-ob1}" \
        --mca op ^avx "$@"
}
export OMPI_MCA_btl_rttcc_if_include=lo  # loopback only; a command-line value overrides it
export OMPI_MCA_mtl_rttcc_if_include=lo
cm="--mca mtl rttcc --mca btl self"  # with PML=cm: mtl_rttcc alone


# 1. Injected faults (per million datagrams sent).
declare -A faults=(
    [drop]="--mca btl_rttcc_fault_drop 20000"
    [duplicate]="--mca btl_rttcc_fault_dup 30000"
    [reorder]="--mca btl_rttcc_fault_reorder 30000"
    [truncate]="--mca btl_rttcc_fault_truncate 20000"
    [all]="--mca btl_rttcc_fault_drop 10000 --mca btl_rttcc_fault_dup 10000 --mca btl_rttcc_fault_reorder 10000 --mca btl_rttcc_fault_truncate 10000"
)
declare -A evidence=([drop]=retx [duplicate]=dup_segs [reorder]=segs_ooo [truncate]=drop_malformed [all]=retx)
for name in drop duplicate reorder truncate all; do
    # shellcheck disable=SC2086
    if mpi 3 120 --mca btl rttcc,self --mca btl_rttcc_stats 1 ${faults[$name]} \
            --mca btl_rttcc_retrans_timeout_us 5000 "$build/exchange" >"$build/out" 2>&1 &&
       grep -q '^PASS exchange' "$build/out"; then
        n=$(stats_sum "$build/out" "${evidence[$name]}")
        if [ "$(grep -c '^rttcc-stats' "$build/out")" -eq 3 ] && [ "$n" -gt 0 ]; then
            ok "fault $name: data intact, ${evidence[$name]}=$n"
        else
            bad "fault $name: no evidence the fault was injected (${evidence[$name]}=$n)"
        fi
    else
        bad "fault $name"
    fi
done

# 1b. coll_rttcc's puts and ready-to-receive messages under drops: every
#     byte where it belongs, the loss seen and repaired.
for grants in 0 1; do
    if mpi 4 120 --mca btl rttcc,self --mca btl_rttcc_stats 1 --mca btl_rttcc_fault_drop 20000 \
            --mca btl_rttcc_retrans_timeout_us 5000 --mca coll_rttcc_max_grants $grants \
            "$build/alltoall" -max 262144 -rounds 2 -expect-rttcc >"$build/out" 2>&1 &&
       grep -q '^PASS alltoall' "$build/out" && [ "$(stats_sum "$build/out" retx)" -gt 0 ]; then
        ok "fault drop under coll_rttcc (max_grants $grants): data intact, retx=$(stats_sum "$build/out" retx)"
    else
        bad "fault drop under coll_rttcc (max_grants $grants)"
    fi
done

# 1c. The same faults under pml/cm.
declare -A cm_evidence=([drop]=retx [duplicate]=dup_segs [reorder]=segs_ooo [all]=retx)
for name in drop duplicate reorder all; do
    # shellcheck disable=SC2086
    if PML=cm mpi 3 120 $cm --mca mtl_rttcc_stats 1 ${faults[$name]//btl_rttcc/mtl_rttcc} \
            --mca mtl_rttcc_retrans_timeout_us 5000 "$build/exchange" >"$build/out" 2>&1 &&
       grep -q '^PASS exchange' "$build/out"; then
        # shellcheck disable=SC2086
        n=$(stats_sum "$build/out" ${cm_evidence[$name]})
        if [ "$(grep -c '^rttcc-stats' "$build/out")" -eq 3 ] && [ "$n" -gt 0 ]; then
            ok "pml cm: fault $name: data intact, ${cm_evidence[$name]% *}=$n"
        else
            bad "pml cm: fault $name: no evidence the fault was injected (${cm_evidence[$name]% *}=$n)"
        fi
    else
        bad "pml cm: fault $name"
    fi
done

# 1d. Under pml/cm a 1 MiB eager message on the data channel is overtaken
#     by the 64-byte one sent after it on the command channel: mtl_rttcc
#     must hold the small one back (out_of_order) and hand both on in order.
if PML=cm mpi 2 120 $cm --mca mtl_rttcc_stats 1 --mca mtl_rttcc_eager_limit 1048576 \
        --mca mtl_rttcc_fault_reorder 30000 "$build/p2p_edges" >"$build/out" 2>&1 &&
   grep -q '^PASS p2p_edges' "$build/out" && [ "$(stats_sum "$build/out" out_of_order mtl)" -gt 0 ]; then
    ok "pml cm: overtaken messages handed on in the sender's order (out_of_order=$(stats_sum "$build/out" out_of_order mtl))"
else
    bad "pml cm: overtaken messages (out_of_order=$(stats_sum "$build/out" out_of_order mtl))"
fi

# 2. A peer that stops answering (frozen, or killed): the job must end with
# an error naming the problem within the peer timeout (3 s) plus slack.
# Once rttcc has said why and every rank has ended, the job is over: Open
# MPI 4.1.4's mpirun sometimes hangs then (in a futex, its ranks left as
# zombies it never reaps; seen in CI and reproduced by hand, about one run in
# ten).  Ten seconds after the error with no rank alive, mpirun is killed
# and the line says so; a rank still alive (stopped, or stuck in MPI) fails.
peer_loss() {  # peer_loss WHAT NP MESSAGE-REGEX [silent_peer argument]
    local what=$1 np=$2 expect=$3 start rc secs pid said="" note=""
    start=$(date +%s)
    # shellcheck disable=SC2086
    mpi "$np" 60 ${STACK:---mca btl rttcc,self --mca btl_rttcc_peer_timeout_ms 3000} "$build/silent_peer" ${4:-} \
        >"$build/out" 2>&1 &
    pid=$!
    while kill -0 "$pid" 2>/dev/null; do
        [ -z "$said" ] && grep -qE "$expect" "$build/out" && said=$(date +%s)
        if [ -n "$said" ] && [ -z "$note" ] && [ $(($(date +%s) - said)) -ge 10 ] &&
            ! ps -C silent_peer -o stat= | grep -qv '^Z'; then
            pkill -KILL -f "mpirun .*$build/silent_peer" && note=" (its ranks had ended; mpirun hung in its teardown and was killed)"
        fi
        sleep 0.2
    done
    wait "$pid"
    rc=$?
    secs=$(($(date +%s) - start))
    if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -qE "$expect" "$build/out" && [ $secs -le 30 ]; then
        ok "$what peer: the job ended with its error in ${secs}s$note"
    else
        bad "$what peer (rc=$rc after ${secs}s)"
    fi
}
peer_loss frozen 2 'lost contact with process'
peer_loss killed 3 'lost contact with process|exited on signal 9' kill
PML=cm STACK="$cm --mca mtl_rttcc_peer_timeout_ms 3000" peer_loss "pml cm: frozen" 2 'rttcc MTL .* lost contact with process'
# osc_rttcc hears of the death before the BTL or MTL ends the job: the gets
# waiting on the frozen rank give up their replies (osc_rttcc_fail_replies).
osc="--mca osc rttcc --mca osc_rttcc_verbose 10"
STACK="--mca btl rttcc,self --mca btl_rttcc_peer_timeout_ms 3000 $osc" \
    peer_loss "osc: gets from a frozen" 2 'peer 1 dead .*: [1-9][0-9]* awaited replies given up' get
PML=cm STACK="$cm --mca mtl_rttcc_peer_timeout_ms 3000 $osc" \
    peer_loss "osc, pml cm: gets from a frozen" 2 'peer 1 dead .*: [1-9][0-9]* awaited replies given up' get
# A two-rank fence waits for the frozen rank's FENCE: progress goes on, and
# the death ends the job (the BTL's error, or the fence's).
STACK="--mca btl rttcc,self --mca btl_rttcc_peer_timeout_ms 3000 $osc" \
    peer_loss "osc: a fence with a frozen" 2 'lost contact with process|a fence with a dead peer failed' fence

# 2b. A rank that computes outside MPI is alive.  Rank 1 of busy_peer
#     computes (no MPI call) after its receive, before it, or with messages
#     in flight towards it, for 2.5 times the peer timeout; the job must end
#     with every byte right, and the counters must show the liveness agent
#     answering for rank 1 (agent_passes) and, where data reached rank 1
#     while it computed, rank 0 hearing BUSY instead of declaring it dead.
busy_peer() {  # busy_peer LABEL PREFIX WHEN SIZE BUSY-SECONDS MPIRUN-ARGS...
    local label=$1 prefix=$2 when=$3 size=$4 busy=$5 passes heard
    shift 5
    mpi 2 120 "$@" --mca "${prefix}_stats" 1 "$build/busy_peer" -when "$when" -size "$size" -busy "$busy" -count 4 \
        >"$build/out" 2>&1
    passes=$(stats_sum "$build/out" agent_passes)
    heard=$(stats_sum "$build/out" busy_rx)
    if grep -q '^PASS busy_peer' "$build/out" && [ "$passes" -gt 0 ] && { [ "$when" = after ] || [ "$heard" -gt 0 ]; }; then
        ok "${label}busy peer ($when, $size bytes, ${busy}s): alive, data intact (agent_passes=$passes busy_rx=$heard)"
    else
        bad "${label}busy peer ($when, $size bytes, ${busy}s) (agent_passes=$passes busy_rx=$heard)"
    fi
}
for when_size in "after 64" "before 64" "after 1048576" "before 1048576" "inflight 1048576" "inflight 1000"; do
    # shellcheck disable=SC2086
    busy_peer "" btl_rttcc $when_size 5 --mca btl rttcc,self --mca btl_rttcc_peer_timeout_ms 2000
    # shellcheck disable=SC2086
    PML=cm busy_peer "pml cm: " mtl_rttcc $when_size 5 $cm --mca mtl_rttcc_peer_timeout_ms 2000
done
busy_peer "mpi_yield_when_idle: " btl_rttcc inflight 1048576 5 --mca btl rttcc,self --mca btl_rttcc_peer_timeout_ms 2000 \
    --mca mpi_yield_when_idle 1
# The report's case with every default (peer timeout 15 s): 20 s of computing.
busy_peer "defaults: " btl_rttcc after 64 20 --mca btl rttcc,self
# shellcheck disable=SC2086
PML=cm busy_peer "pml cm, defaults: " mtl_rttcc before 1048576 20 $cm

# 2c. Without the agent the same busy rank is taken for dead: the check
#     above can fail.
mpi 2 60 --mca btl rttcc,self --mca btl_rttcc_peer_timeout_ms 2000 --mca btl_rttcc_agent 0 "$build/busy_peer" \
    -when before -size 64 -busy 5 >"$build/out" 2>&1
if grep -q 'lost contact with process' "$build/out" && ! grep -q '^PASS busy_peer' "$build/out"; then
    ok "agent 0: a rank busy for longer than the peer timeout is declared dead (what the agent prevents)"
else
    bad "agent 0: the busy rank was not declared dead"
fi

# 2d. Forged datagrams (spoof.cc): while ranks 0 and 1 exchange verified
#     messages (victim.c), an attacker with raw sockets sends every kind of
#     rttcc datagram at rank 1's ports from rank 0's address and ports, with
#     a guessed job key, and with the real one and live sequence numbers
#     read off the wire.  Nothing forged may be delivered, complete a send
#     or stall one (the job passes, every byte checked), every forgery must
#     be counted as a drop (a wrong MAC where it got that far), and rank 1's
#     memory must not grow with them (each forged chunk names a 1 MiB message).
udp_ports() {  # udp_ports PID: its UDP ports, comma-separated
    ss -uanp | awk -v p="pid=$1," 'index($0, p) { n = split($4, a, ":"); print a[n] }' | sort -n | paste -sd, -
}
forge_at_job() {  # forge_at_job JOB-KEY-MODE COUNT
    local mode=$1 count=$2 run pid0 pid1 sent drops auth rss
    mpi 2 120 --mca btl rttcc,self --mca btl_rttcc_stats 1 "$build/victim" -seconds 6 >"$build/out" 2>&1 &
    run=$!
    for _ in $(seq 200); do
        [ "$(grep -c '^victim rank [01] pid' "$build/out")" -eq 2 ] && break
        sleep 0.1
    done
    pid0=$(awk '/^victim rank 0 pid/ { print $5 }' "$build/out")
    pid1=$(awk '/^victim rank 1 pid/ { print $5 }' "$build/out")
    "$build/spoof" -to "127.0.0.1:$(udp_ports "$pid1")" -from "127.0.0.1:$(udp_ports "$pid0")" -src 0 \
        -job-key "$mode" -count "$count" >"$build/spoof.out" 2>&1
    wait $run
    grep '^rttcc-stats rank=1 ' "$build/out" >"$build/rank1" || true
    sent=$(awk '/^spoof: sent/ { print $3 }' "$build/spoof.out")
    drops=$(stats_sum "$build/rank1" drops)
    auth=$(stats_sum "$build/rank1" drop_auth)
    rss=$(awk '/^victim rank 1 rss_kb/ { print $6 - $4 }' "$build/out")
    if grep -q '^PASS victim' "$build/out" && [ "${sent:-0}" -gt 0 ] && [ "$drops" -ge "$sent" ] &&
       { [ "$mode" = guess ] || [ "$auth" -ge $((sent / 2)) ]; } && [ "${rss:-999999}" -lt 65536 ]; then
        ok "forged datagrams (job key: $mode): job intact, $sent forgeries, rank 1 dropped $drops (drop_auth=$auth), RSS +${rss} KiB"
    else
        bad "forged datagrams (job key: $mode): sent=${sent:-?} drops=$drops drop_auth=$auth rss=+${rss:-?} KiB $(cat "$build/spoof.out")"
    fi
}
forge_at_job guess 500
forge_at_job sniff 1000

# 3. Unusable settings: rttcc's message, then a clean failure or a fallback.
for setting in "btl_rttcc_if_include 10.255.0.0/16" "btl_rttcc_if_include 1.2.3.4/40" "btl_rttcc_window 1000"; do
    # shellcheck disable=SC2086
    mpi 2 60 --mca btl rttcc,tcp,self --mca btl_tcp_if_include lo --mca ${setting% *} ${setting#* } \
        "$build/exchange" >"$build/out" 2>&1
    rc=$?
    if [ $rc -eq 0 ] && grep -q 'The rttcc BTL could not start' "$build/out" && grep -q '^PASS exchange' "$build/out"; then
        ok "bad setting '$setting': rttcc explained and stepped aside, tcp carried the job"
    else
        bad "bad setting '$setting' (rc=$rc)"
    fi
done
mpi 2 60 --mca btl rttcc,self --mca btl_rttcc_if_include 10.255.0.0/16 "$build/exchange" >"$build/out" 2>&1
rc=$?
if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q 'The rttcc BTL could not start' "$build/out"; then
    ok "bad setting without fallback: clean failure (rc=$rc)"
else
    bad "bad setting without fallback (rc=$rc)"
fi

# Ranks started with settings that cannot work together: rank 1's auth, or
# its largest message, differs.  Every rank must say which setting, and the
# job must end at MPI_Init, never hang.
for setting in "btl_rttcc_auth none:rttcc_auth is header here but none there" \
               "btl_rttcc_max_send_size 262144:the largest message is"; do
    IFS=: read -r param explained <<<"$setting"
    # shellcheck disable=SC2086
    mpi 2 60 --mca btl rttcc,self "$here/rank1_setting.sh" $param -- "$build/exchange" >"$build/out" 2>&1
    rc=$?
    if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "$explained" "$build/out" && ! grep -q '^PASS' "$build/out"; then
        ok "rank 1 with '$param': rttcc named the setting, clean failure (rc=$rc)"
    else
        bad "rank 1 with '$param' (rc=$rc)"
    fi
done
PML=cm mpi 2 60 $cm "$here/rank1_setting.sh" mtl_rttcc_auth full -- "$build/exchange" >"$build/out" 2>&1
rc=$?
if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "rttcc_auth is header here but full there" "$build/out"; then
    ok "pml cm: rank 1 with 'mtl_rttcc_auth full': the MTL named the setting, clean failure (rc=$rc)"
else
    bad "pml cm: rank 1 with 'mtl_rttcc_auth full' (rc=$rc)"
fi

# Ranks started with settings that can work together: rank 1 runs the
# engine with other ones (each of its own choice); rank 1 runs coll_rttcc
# or osc_rttcc with a setting that decides whether they serve a call, or
# leaves them out.  Every rank must then make the same choice (before, the
# others served MPI_COMM_WORLD's alltoalls and windows while rank 1 did
# not, and every rank hung), say why, and verify its data.
engine_own="window 4096 data_mtu 9000 cc swift timestamp none agent 0 udp_offload 0 ack_every 1 send_credits 8"
for pml_args in "ob1:btl_rttcc:--mca btl rttcc,self" "cm:mtl_rttcc:$cm"; do
    IFS=: read -r pml prefix args <<<"$pml_args"
    # shellcheck disable=SC2086
    PML=$pml mpi 3 90 $args --mca ${prefix}_stats 1 "$here/rank1_setting.sh" $(printf "${prefix}_%s %s " $engine_own) -- \
        "$build/exchange" >"$build/out" 2>&1
    rc=$?
    if [ $rc -eq 0 ] && grep -q '^PASS' "$build/out" && rttcc_stats_ok "$build/out" 3 >/dev/null; then
        ok "pml $pml: rank 1 with its own engine settings ($engine_own): data intact, rttcc carried it"
    else
        bad "pml $pml: rank 1 with its own engine settings (rc=$rc)"
    fi
done
deciding=("coll_rttcc_min_bytes 65536|its coll_rttcc_min_bytes differs|coll/tuned|alltoall -max 262144 -rounds 1"
          "coll_rttcc_priority 5|its coll_rttcc_priority differs|coll/tuned|alltoall -max 262144 -rounds 1"
          "coll basic,tuned,libnbc,self|it does not run coll_rttcc|coll/tuned|alltoall -max 262144 -rounds 1"
          "osc_rttcc_priority 5|its osc_rttcc_priority differs|osc/pt2pt|ops -targets all -sizes 1,65536 -sync fence,lock_all,flush"
          "osc pt2pt,sm|it does not run osc_rttcc|osc/pt2pt|ops -targets all -sizes 1,65536 -sync fence,lock_all,flush")
for setting in "${deciding[@]}"; do
    IFS='|' read -r param explained served program <<<"$setting"
    # shellcheck disable=SC2086
    mpi 3 90 --mca btl rttcc,self --mca osc rttcc,pt2pt,sm "$here/rank1_setting.sh" ${param%% *} "${param#* }" -- \
        "$build/"$program >"$build/out" 2>&1
    rc=$?
    if [ $rc -eq 0 ] && grep -q "^PASS ${program%% *}" "$build/out" && [ "$(grep -c "$explained" "$build/out")" -ge 2 ]; then
        ok "rank 1 with '$param': every rank left MPI_COMM_WORLD's calls to $served and said why, data intact"
    else
        bad "rank 1 with '$param' (rc=$rc)"
    fi
done

# The engine's own checks, its parameters set through their mtl_rttcc_
# names: the texts name them rttcc_<name>, which every name leads to.
for setting in "mtl_rttcc_if_include 10.255.0.0/16:no up IPv4 interface matches rttcc_if_include=10.255.0.0/16" \
               "mtl_rttcc_window 1000:rttcc_window must be a power of two" \
               "mtl_rttcc_inline_max 16:rttcc_inline_max on host .* is 16"; do
    IFS=: read -r param explained <<<"$setting"
    note=""
    for attempt in 1 2 3 4 5 6 7 8; do
        # shellcheck disable=SC2086
        PML=cm mpi 2 60 $cm --mca $param "$build/exchange" >"$build/out" 2>&1
        rc=$?
        # Once, in a CI run of stop 12, all three runs printed only pml cm's
        # refusal and no word from rttcc, as if the MTL's component had not
        # been found; it did not recur in the 7 runs after it.  In stop 32's
        # last CI run the MTL's text was lost in Open MPI 4.1.4's own
        # forwarding ("ORTE_ERROR_LOG: Out of resource in file
        # ../../../orte/util/show_help.c at line 501"); the two CI runs
        # before passed.  In stop 49's it was lost so twice in a row (line
        # 507), and 1 of 12 runs by hand logged that error ("Data unpack had
        # inadequate space", line 513): the ranks exit while mpirun still
        # reads their help messages.  Then run again, up to eight times, and
        # say so: an MTL that loads and explains badly, or not at all,
        # still fails every time.  (Stop 51: 2 of 6 runs by hand lost it,
        # and under load all 4 attempts of one suite run did.)
        grep -q rttcc "$build/out" && ! grep -q "ORTE_ERROR_LOG: .*show_help.c" "$build/out" && break
        note=" (attempt $attempt found no word from rttcc, or Open MPI lost it: $(tr '\n' ' ' <"$build/out" | cut -c1-160))"
    done
    if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "$explained" "$build/out"; then
        ok "pml cm: bad setting '$param': the MTL explained, clean failure (rc=$rc)$note"
    else
        bad "pml cm: bad setting '$param' (rc=$rc)"
    fi
done

# 4. coll_rttcc: a parameter out of range is explained, and coll/tuned
#    serves the collectives instead (coll_rttcc counted no call).
mpi 3 60 --mca btl rttcc,self --mca coll_rttcc_segment_size 0 "$build/alltoall" -max 65536 -rounds 1 -v >"$build/out" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q "coll_rttcc's parameters are out of range" "$build/out" && grep -q '^PASS alltoall' "$build/out" &&
   ! grep -q 'coll_rttcc_calls=[1-9]' "$build/out"; then
    ok "bad coll_rttcc setting: explained, coll/tuned carried the collectives"
else
    bad "bad coll_rttcc setting (rc=$rc)"
fi
# 5. btl_rttcc: fragment limits it cannot take (0 is "unlimited" to ob1,
#    which ran past a fragment's buffer; 4 GiB was cut to 32 bits) are
#    explained, and btl/tcp carries the job instead.
for bad_limit in "btl_rttcc_max_send_size 0" "btl_rttcc_max_send_size 4294967296" "btl_rttcc_eager_limit 16"; do
    # shellcheck disable=SC2086
    mpi 2 60 --mca btl rttcc,tcp,self --mca btl_tcp_if_include lo --mca $bad_limit "$build/p2p_edges" >"$build/out" 2>&1
    rc=$?
    if [ $rc -eq 0 ] && grep -q "btl_rttcc's fragment limits on host .* are out of range" "$build/out" &&
       grep -q '^PASS p2p_edges' "$build/out"; then
        ok "bad btl_rttcc limit '$bad_limit': explained, btl/tcp carried the job"
    else
        bad "bad btl_rttcc limit '$bad_limit' (rc=$rc)"
    fi
done
missing=$(ompi_info_missing coll rttcc "priority verbose policy threshold_us variance_factor max_concurrent \
    reorder_window backoff_ms segment_size segments_ahead max_grants min_bytes" \
    "calls deferrals forced rtr_waits puts bytes delegated")
if [ -z "$missing" ]; then ok "ompi_info lists every coll_rttcc parameter and counter"; else bad "ompi_info lacks:$missing"; fi
missing=$(ompi_info_missing mtl rttcc "priority verbose eager_limit if_include cc window stats rtt_dump" \
    "eager_sends rndv_sends self_sends unexpected out_of_order truncated cancelled bad_messages stale skips_sent \
    skips_received")
if [ -z "$missing" ]; then ok "ompi_info lists mtl_rttcc's parameters and counters"; else bad "ompi_info lacks:$missing"; fi

summary
