#!/usr/bin/env bash
# Multi-host: the MPI tests across 3 namespace hosts over veth, then real
# loss from a rate-limited link with a short queue, then congestion control
# on such a link (the RTT table sees it; aimd and swift beat none), liveness,
# and last a jumbo-frame (MTU 9000) fabric.  Builds its own testbed (prefix
# rttcct) and tears it down on exit, also when interrupted.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
source "$top/test/mpi/lib.sh"
export RTTCC_TB_PREFIX=rttcct RTTCC_TB_DIR=/tmp/rttcct-testbed
tb=$top/contrib/testbed/testbed
extra_cleanup() { pkill -KILL -f "orted.*rttcct-h" 2>/dev/null; "$tb" down; }
scratch_dir testbed

for src in "$top"/test/mpi/*.c "$top"/test/faults/exchange.c; do
    mpicc -O2 -o "$build/$(basename "$src" .c)" "$src" -lpthread || { echo "0 passed, 1 failed"; exit 1; }
done
"$tb" up 3 --slots 2 >/dev/null || { echo "FAIL testbed up"; echo "0 passed, 1 failed"; exit 1; }

tbrun() {  # tbrun NP PROGRAM [ARGS] : over rttcc, counters on (STACK=cm: pml cm over mtl_rttcc)
    local np=$1 stack=(--mca pml ob1 --mca btl rttcc,self --mca btl_rttcc_stats 1)
    shift
    [ "${STACK:-}" = cm ] && stack=(--mca pml cm --mca mtl rttcc --mca btl self --mca mtl_rttcc_stats 1)
    timeout -k 5 "${TEST_TIMEOUT:-180}" "$top/contrib/testbed/mpirun-tb" -np "$np" "${stack[@]}" \
        --mca op ^avx "$@" >"$build/out" 2>&1
}

# 1. Three different hosts: each rank's hostname is its namespace.
if tbrun 3 "$build/collectives" && grep -q '^PASS collectives' "$build/out"; then
    hosts=$(grep -c '^rttcc-stats' "$build/out")
    names=$(timeout 30 "$top/contrib/testbed/mpirun-tb" -np 3 hostname 2>/dev/null | sort -u | tr '\n' ' ')
    if [ "$hosts" -eq 3 ] && [ "$(wc -w <<<"$names")" -eq 3 ]; then
        ok "collectives across 3 hosts ($names)"
    else
        bad "ranks did not land on 3 hosts: $names"
    fi
else
    bad "collectives across 3 hosts"
fi

# 2. The MPI tests across the hosts.
for t in "pingpong 3 -max 4194304" "storm 3" "anysource 6" "ssend 4" "probe 3" "datatypes 2" "incast 3" "thread_multiple 2" "collectives 6" \
         "alltoall 3 -max 1048576 -expect-rttcc" "alltoall 6 -max 262144 -rounds 2 -expect-rttcc"; do
    read -r name np args <<<"$t"
    # shellcheck disable=SC2086
    if tbrun "$np" "$build/$name" $args && grep -q "^PASS $name" "$build/out" &&
       why=$(rttcc_stats_ok "$build/out" "$np"); then
        ok "$name np=$np across hosts (retx=$(stats_sum "$build/out" retx))"
    else
        bad "$name np=$np across hosts ${why:-}"
    fi
done

# 2b. pml cm over mtl_rttcc across the hosts.
for t in "pingpong 3 -max 4194304" "p2p_edges 3" "probe 3" "alltoall 3 -max 1048576 -expect-rttcc"; do
    read -r name np args <<<"$t"
    # shellcheck disable=SC2086
    if STACK=cm tbrun "$np" "$build/$name" $args && grep -q "^PASS $name" "$build/out" &&
       why=$(rttcc_stats_ok "$build/out" "$np"); then
        ok "pml cm: $name np=$np across hosts (retx=$(stats_sum "$build/out" retx))"
    else
        bad "pml cm: $name np=$np across hosts ${why:-}"
    fi
done

# 3. Real loss: h2's link at 100 Mbit/s with a 10-datagram queue, both ways.
#    With congestion control (aimd): without any, two senders flooding
#    128 segments each into a 15 KB queue lose 9 datagrams in 10 and the
#    exchange crawls (congestion collapse, what cc is for).
"$tb" shape rttcct-h2 100mbit 10
if tbrun 3 --mca btl_rttcc_cc aimd "$build/exchange" && grep -q '^PASS exchange' "$build/out"; then
    retx=$(stats_sum "$build/out" retx)
    drops=$("$tb" stats rttcct-h2 | tr ' ' '\n' | awk -F= '/dropped/ { s += $2 } END { print s + 0 }')
    if [ "$retx" -gt 0 ] && [ "$drops" -gt 0 ]; then
        ok "shaped link: data intact through $drops queue drops, retx=$retx"
    else
        bad "shaped link: expected drops and retransmissions (drops=$drops retx=$retx)"
    fi
else
    bad "exchange over a shaped link"
fi
if STACK=cm tbrun 3 --mca mtl_rttcc_cc aimd "$build/exchange" && grep -q '^PASS exchange' "$build/out" &&
   [ "$(stats_sum "$build/out" retx)" -gt 0 ]; then
    ok "pml cm: shaped link: data intact, retx=$(stats_sum "$build/out" retx)"
else
    bad "pml cm: exchange over a shaped link"
fi
# coll_rttcc through the same lossy link: every policy's puts get repaired.
for policy in linear greedy threshold balanced adaptive; do
    if tbrun 3 --mca btl_rttcc_cc aimd --mca coll_rttcc_policy $policy "$build/alltoall" -max 262144 -rounds 1 \
            -expect-rttcc && grep -q '^PASS alltoall' "$build/out"; then
        ok "alltoall ($policy) over the shaped link: data intact, retx=$(stats_sum "$build/out" retx)"
    else
        bad "alltoall ($policy) over the shaped link"
    fi
done
"$tb" unshape rttcct-h2

# 4. Congestion towards one host (bench/cc_bench.c): h2's link at 150 Mbit/s
#    with a 200-packet queue (16 ms; the two streams could put 512 segments
#    in flight, so without congestion control it overflows).  Ranks on
#    h1 and h3 stream 1 MiB messages to h2 while rank 0 (h1) ping-pongs
#    8-byte messages with it, for 3 s, data verified.  Alternating runs of
#    cc none, aimd and swift (with a target of two frames' serialisation on
#    this link: the default 50 us is less than one; RTTCC_TB_SWIFT_TARGET_US
#    overrides it); medians over RTTCC_TB_CC_RUNS (3) runs each.
#    RTTCC_TB_CC_MCA adds MCA arguments to the aimd and swift runs.
mpicc -O2 -o "$build/cc_bench" "$top/bench/cc_bench.c" -lm || bad "cc_bench does not build"
cc_runs=${RTTCC_TB_CC_RUNS:-3}
swift_target=${RTTCC_TB_SWIFT_TARGET_US:-161}
: >"$build/cc"
for ((r = 0; r < cc_runs; ++r)); do
    for cc in none aimd swift; do
        "$tb" unshape rttcct-h2
        "$tb" shape rttcct-h2 150mbit 200  # anew: zeroes its counters
        args=(--mca btl_rttcc_cc "$cc")
        [ "$cc" = swift ] && args+=(--mca btl_rttcc_swift_target_us "$swift_target")
        # shellcheck disable=SC2206
        [ "$cc" != none ] && args+=(${RTTCC_TB_CC_MCA:-})
        timeout -k 5 60 "$top/contrib/testbed/mpirun-tb" -np 4 --mca pml ob1 --mca btl rttcc,self "${args[@]}" \
            "$build/cc_bench" -shaped rttcct-h2 -t 3 >"$build/out" 2>&1
        line=$(grep '^cc_bench ' "$build/out") || { bad "cc_bench cc=$cc run $r"; continue; }
        drops=$("$tb" stats rttcct-h2 | tr ' ' '\n' | awk -F= '/dropped/ { s += $2 } END { print s + 0 }')
        echo "$cc ${line#cc_bench } drops=$drops" >>"$build/cc"
    done
done
"$tb" unshape rttcct-h2
# cc_med CC KEY: median of KEY over CC's runs ("nan" without any).
cc_med() {
    awk -v c="$1" -v k="$2" '$1 == c { for (i = 2; i <= NF; ++i) { split($i, kv, "="); if (kv[1] == k) print kv[2] } }' "$build/cc" |
        sort -g | awk '{ a[NR] = $1 } END { if (!NR) print "nan"; else print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
cc_report() { echo "$1: MB/s $(cc_med "$1" MBps), ping p50 $(cc_med "$1" p50_us) us, drops $(cc_med "$1" drops)"; }
# (A) the pinging rank's table during the load: h2's srtt over the median of
#     the other peers' srtt, median over every run, at least 3.
ratios=$(awk '{ for (i = 2; i <= NF; ++i) { split($i, kv, "="); v[kv[1]] = kv[2] }
                printf "%.1f\n", (v["srtt_others_us"] > 0 ? v["srtt_shaped_us"] / v["srtt_others_us"] : 0) }' "$build/cc" | sort -g)
ratio=$(awk '{ a[NR] = $1 } END { print NR ? a[int((NR + 1) / 2)] : 0 }' <<<"$ratios")
if awk -v r="$ratio" 'BEGIN { exit !(r >= 3) }'; then
    ok "RTT table under load: shaped peer's srtt / others' srtt = ${ratio} (median; each run: $(tr '\n' ' ' <<<"$ratios"))"
else
    bad "RTT table under load: shaped peer's srtt only ${ratio}x the others' (wanted >= 3): $(tr '\n' ';' <"$build/cc")"
fi
# (B) against none: fewer drops, a shorter queue (the pings' p50) and at
#     least 80% of its throughput.  With selective ACKs none keeps the 200-
#     packet queue full at line rate (17.8 MB/s, p50 15.8 ms, 2820 drops);
#     aimd holds it near 1.2 ms at 96% of that, swift near 0.6 ms at 86%:
#     the throughput a delay target gives up on a link this slow.
for cc in aimd swift; do
    if awk -v d="$(cc_med "$cc" drops)" -v nd="$(cc_med none drops)" -v p="$(cc_med "$cc" p50_us)" \
           -v np="$(cc_med none p50_us)" -v m="$(cc_med "$cc" MBps)" -v nm="$(cc_med none MBps)" \
           'function num(x) { return x ~ /^[0-9.]+$/ }
            BEGIN { exit !(num(d) && num(nd) && num(p) && num(np) && num(m) && num(nm) &&
                           d < nd && p < np && m >= 0.8 * nm) }'; then
        ok "cc=$cc on a congested link: $(cc_report "$cc") vs $(cc_report none)"
    else
        bad "cc=$cc on a congested link: wanted fewer drops, a lower ping p50 and >= 80% of the throughput: $(cc_report "$cc") vs $(cc_report none)"
    fi
done

# 5. Liveness across hosts.  A rank that computes outside MPI (rank 1, on
#    h2) for 2.5 times the peer timeout is alive, over btl and mtl rttcc.
#    Then a path MTU below the data datagrams: once the ranks are up, h1's
#    (then h2's) bridge port takes frames of 1100 bytes at most (command datagrams
#    pass, 1500-byte data frames are dropped both ways; the testbed sends
#    GSO super-packets as single frames meanwhile, as a NIC would) while rank 0's
#    1 MiB message to rank 1 is under way; rttcc must end the job with its
#    error within the peer timeout (3 s) plus slack.
for stack in ob1 cm; do
    prefix=btl_rttcc label=""
    [ $stack = cm ] && prefix=mtl_rttcc label="pml cm: "
    for when_size in "before 1048576" "inflight 1000"; do
        read -r when size <<<"$when_size"
        if STACK=$stack tbrun 2 --mca ${prefix}_peer_timeout_ms 2000 "$build/busy_peer" -when "$when" -size "$size" -busy 5 &&
           grep -q '^PASS busy_peer' "$build/out" && [ "$(stats_sum "$build/out" busy_rx)" -gt 0 ]; then
            ok "${label}busy rank across hosts ($when, $size bytes, 5 s): alive (busy_rx=$(stats_sum "$build/out" busy_rx))"
        else
            bad "${label}busy rank across hosts ($when, $size bytes, 5 s)"
        fi
    done
done
# The lowered port on the sender's host (h1) refuses its datagrams at once
# (ENOBUFS from the veth), on the receiver's host (h2) the bridge drops them.
for host in h1 h2; do
    start=$(date +%s.%N)
    TEST_TIMEOUT=40 tbrun 2 --mca btl_rttcc_peer_timeout_ms 3000 "$build/busy_peer" -when before -size 1048576 -busy 3 &
    run=$!
    sleep 1.5
    "$tb" mtu rttcct-$host 1100
    wait $run
    secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    "$tb" mtu rttcct-$host 1500
    if grep -q 'lost contact with process' "$build/out" && ! grep -q '^PASS busy_peer' "$build/out" &&
       awk -v s="$secs" 'BEGIN { exit !(s < 20) }'; then
        ok "path MTU below the data datagrams at $host: the job ended with rttcc's error in ${secs}s (peer timeout 3 s): $(grep -o 'no acknowledgement for.*' "$build/out" | head -n 1 | cut -c1-150)"
    else
        bad "path MTU below the data datagrams at $host (${secs}s)"
    fi
done

# A host whose link is deleted while two ranks ping-pong: the rank cut off
# cannot report (its daemon is behind the same link), so the other must,
# though it owes nothing while it waits for the reply: liveness probes.
# mpirun then waits for the lost daemon forever (and may never relay the
# report: it is read from rank 0's own stderr, --output-filename, which its
# local daemon writes): the test ends it.  Last, since h2 is gone for good.
(TEST_TIMEOUT=60 tbrun 2 --output-filename "$build/ranks" --mca btl_rttcc_peer_timeout_ms 3000 "$build/busy_peer" \
    -when after -busy 0.001 -rounds 1000000 -size 65536 -announce 1) &
run=$!
for _ in $(seq 600); do grep -q '^busy_peer: started' "$build/out" 2>/dev/null && break; sleep 0.1; done
sleep 0.5
start=$(date +%s.%N)
ip link del rttcct-v2
while kill -0 $run 2>/dev/null && ! grep -qs 'lost contact with process' "$build"/ranks/*/rank.0/stderr; do sleep 0.05; done
secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
sleep 0.5
pkill -KILL -f "$build/busy_peer" 2>/dev/null
pkill -KILL -f "orted.*rttcct-h" 2>/dev/null
pkill -KILL -P $run 2>/dev/null
wait $run 2>/dev/null
if report=$(grep -hoE '(no acknowledgement for|nothing heard from it for) .*' "$build"/ranks/*/rank.0/stderr) &&
   awk -v s="$secs" 'BEGIN { exit !(s < 10) }'; then
    ok "link of a host deleted: rank 0 reported it in ${secs}s (peer timeout 3 s): ${report:0:100}"
else
    bad "link of a host deleted (${secs}s)"
fi

# 6. A jumbo-frame fabric (every link at MTU 9000): rttcc's data datagrams
# grow to the path's MTU (from the interface, without being told), and the
# data stays right.
"$tb" up 2 --mtu 9000 >/dev/null
if tbrun 2 "$build/pingpong" -max 4194304 && grep -q '^PASS pingpong' "$build/out" &&
   per_seg=$(awk -v b="$(stats_sum "$build/out" bytes_tx)" -v s="$(stats_sum "$build/out" segs_tx)" \
       'BEGIN { if (s > 0) printf "%d", b / s }') && [ "${per_seg:-0}" -gt 4000 ]; then
    ok "pingpong np=2 across hosts on a 9000-byte MTU fabric ($per_seg bytes per segment)"
else
    bad "pingpong np=2 across hosts on a 9000-byte MTU fabric (${per_seg:-?} bytes per segment)"
fi

# 7. Teardown leaves nothing behind.
"$tb" down
left=$(ip netns list | grep -c '^rttcct-' || true)
links=$(ip -o link show | grep -c 'rttcct-' || true)
if [ "$left" -eq 0 ] && [ "$links" -eq 0 ]; then ok "teardown left nothing"; else bad "teardown left $left namespaces, $links links"; fi

summary
