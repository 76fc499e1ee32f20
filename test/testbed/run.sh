#!/usr/bin/env bash
# Multi-host: the MPI tests across 3 namespace hosts over veth, then real
# loss from a rate-limited link with a short queue.  Builds its own testbed
# (prefix rttcct) and tears it down on exit, also when interrupted.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
source "$top/test/mpi/lib.sh"
export RTTCC_TB_PREFIX=rttcct RTTCC_TB_DIR=/tmp/rttcct-testbed
tb=$top/contrib/testbed/testbed
extra_cleanup() { "$tb" down; }
scratch_dir testbed

for src in "$top"/test/mpi/*.c "$top"/test/faults/exchange.c; do
    mpicc -O2 -o "$build/$(basename "$src" .c)" "$src" -lpthread || { echo "0 passed, 1 failed"; exit 1; }
done
"$tb" up 3 --slots 2 >/dev/null || { echo "FAIL testbed up"; echo "0 passed, 1 failed"; exit 1; }

tbrun() {  # tbrun NP PROGRAM [ARGS] : over rttcc, counters on
    local np=$1
    shift
    timeout -k 5 "${TEST_TIMEOUT:-180}" "$top/contrib/testbed/mpirun-tb" -np "$np" --mca pml ob1 \
        --mca btl rttcc,self --mca btl_rttcc_stats 1 --mca op ^avx "$@" >"$build/out" 2>&1
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
for t in "pingpong 3 -max 4194304" "storm 3" "anysource 6" "ssend 4" "probe 3" "datatypes 2" "incast 3" "thread_multiple 2" "collectives 6"; do
    read -r name np args <<<"$t"
    # shellcheck disable=SC2086
    if tbrun "$np" "$build/$name" $args && grep -q "^PASS $name" "$build/out" &&
       why=$(rttcc_stats_ok "$build/out" "$np"); then
        ok "$name np=$np across hosts (retx=$(stats_sum "$build/out" retx))"
    else
        bad "$name np=$np across hosts ${why:-}"
    fi
done

# 3. Real loss: h2's link at 100 Mbit/s with a 10-packet queue, both ways.
"$tb" shape rttcct-h2 100mbit 10
if tbrun 3 "$build/exchange" && grep -q '^PASS exchange' "$build/out"; then
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
"$tb" unshape rttcct-h2

# 4. Teardown leaves nothing behind.
"$tb" down
left=$(ip netns list | grep -c '^rttcct-' || true)
links=$(ip -o link show | grep -c 'rttcct-' || true)
if [ "$left" -eq 0 ] && [ "$links" -eq 0 ]; then ok "teardown left nothing"; else bad "teardown left $left namespaces, $links links"; fi

summary
