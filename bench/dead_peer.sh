#!/usr/bin/env bash
# How long rttcc takes to report a peer that is really gone: RUNS runs per
# case, medians.  Per case two figures: what the error itself says (the
# oldest segment's wait, or the span of the refused sends) and the wall time
# from the fault to the end of the job (mpirun's exit; for faults the
# program injects itself, from the job's start) until the error shows.
# peer_timeout is 3 s.
#
#   bench/dead_peer.sh [-runs N]        (as root: builds its own testbed)
#   ONLY=REGEX bench/dead_peer.sh       only the cases whose label matches
#
# One host: a frozen rank (SIGSTOP) and a killed one (SIGKILL: the kernel
# answers with port unreachable), btl and mtl.  Across testbed hosts: a
# frozen rank, a host whose link is deleted, a one-way black hole (the
# peer's data channel dropped, its command channel up), a path MTU below
# the data datagrams on the sender's and on the receiver's host.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
runs=5
[ "${1:-}" = -runs ] && runs=$2
export RTTCC_TB_PREFIX=rttccd RTTCC_TB_DIR=/tmp/rttccd-testbed
tb=$top/contrib/testbed/testbed
work=$(mktemp -d /tmp/rttcc-deadbench.XXXXXX)
# A deleted link leaves its host's orted unreachable: kill what mpirun cannot.
cleanup() {
    if ls "$work"/fail.* >/dev/null 2>&1; then
        keep=$(mktemp -d /tmp/dead_peer-fails.XXXXXX) && mv "$work"/fail.* "$keep"/ && echo "outputs of the runs that failed: $keep"
    fi
    pkill -KILL -f "$work/" 2>/dev/null; pkill -KILL -f "orted.*$RTTCC_TB_PREFIX-h" 2>/dev/null; "$tb" down; rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
mpicc -O2 -o "$work/silent_peer" "$top/test/faults/silent_peer.c"
mpicc -O2 -o "$work/busy_peer" "$top/test/mpi/busy_peer.c"
btl=(--mca pml ob1 --mca btl rttcc,self --mca btl_rttcc_peer_timeout_ms 3000)
mtl=(--mca pml cm --mca mtl rttcc --mca btl self --mca mtl_rttcc_peer_timeout_ms 3000)
# Each rank's output also to files its own daemon writes: a report from
# behind a cut link never reaches mpirun.
local_run=(mpirun --allow-run-as-root --oversubscribe --mca btl_rttcc_if_include lo --mca mtl_rttcc_if_include lo
           --output-filename "$work/ranks")
tb_run=("$top/contrib/testbed/mpirun-tb" --mca rtc ^hwloc --output-filename "$work/ranks")
subnet=$("$tb" subnet)

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
# The error's own figure: "no acknowledgement for X s" or "refused N ... within X s".
said() { grep -oE 'no acknowledgement for [0-9.]+ s|within [0-9.]+ s|nothing heard from it for [0-9.]+ s despite' "$1" | head -n 1 | grep -oE '[0-9.]+ s' | cut -d' ' -f1; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (!NR) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# The reports looked at: every rank's (WATCH unset) or rank WATCH's alone.
reports() {
    if [ -n "${WATCH:-}" ]; then cat "$work"/ranks/*/rank."$WATCH"/stderr 2>/dev/null
    else cat "$work/out" "$work"/ranks/*/rank.*/stderr 2>/dev/null; fi
}
reported() { reports | grep -q 'lost contact with process'; }

# case_run LABEL INJECT COMMAND...: INJECT is a function run once the ranks
# have met (busy_peer -announce) or "self"; then the job must end with the
# error.  The wall time runs until the error shows (a job whose host is cut
# off cannot end: mpirun waits for that host's daemon) or the job ends.
case_run() {
    local label=$1 inject=$2 i start t0 walls=() saids=() fails=0
    shift 2
    [[ $label =~ ${ONLY:-.} ]] || return 0
    for ((i = 0; i < runs; ++i)); do
        start=$(now)
        rm -rf "$work/ranks"
        timeout -k 5 60 "$@" >"$work/out" 2>&1 &
        local job=$!
        t0=$start
        if [ "$inject" != self ]; then
            for _ in $(seq 600); do grep -q '^busy_peer: started' "$work/out" && break; sleep 0.1; done
            sleep 0.5
            t0=$(now)
            "$inject" on
        fi
        while kill -0 $job 2>/dev/null && ! reported; do sleep 0.05; done
        walls+=("$(since "$t0")")
        sleep 0.5
        pkill -KILL -f "$work/" 2>/dev/null
        wait $job 2>/dev/null
        [ "$inject" != self ] && "$inject" off
        if reported && ! grep -q '^PASS' "$work/out"; then
            saids+=("$(reports | said /dev/stdin)")
        else
            fails=$((fails + 1))
            cat "$work/out" "$work"/ranks/*/rank.*/std* >"$work/fail.${label// /_}.$i" 2>/dev/null
        fi
    done
    printf '%-44s %8s %8s   %d/%d reported\n' "$label" \
        "$(printf '%s\n' "${saids[@]}" | median)" "$(printf '%s\n' "${walls[@]}" | median)" $((runs - fails)) "$runs"
}

mtu_h1() { if [ "$1" = on ]; then "$tb" mtu rttccd-h1 1100; else "$tb" mtu rttccd-h1 1500; fi; }
mtu_h2() { if [ "$1" = on ]; then "$tb" mtu rttccd-h2 1100; else "$tb" mtu rttccd-h2 1500; fi; }
# The peer's data channel: the higher-numbered of its two rttcc sockets.
black_hole() {
    if [ "$1" = on ]; then
        local pid port
        pid=$(pgrep -f "$work/busy_peer" | while read -r p; do
            ip netns identify "$p" 2>/dev/null | grep -qx rttccd-h2 && echo "$p"; done | head -n 1)
        port=$(ip netns exec rttccd-h2 ss -u -a -n -p 2>/dev/null | grep "pid=$pid," | grep -F " ${subnet%.*}." |
               awk '{ split($4, a, ":"); split($0, f, "fd="); print f[2] + 0, a[2] }' | sort -n | tail -n 1 | cut -d' ' -f2)
        # Its own class with a queue of 0 packets: every datagram to the port is dropped.
        tc qdisc add dev rttccd-v2 root handle 1: htb default 1
        tc class add dev rttccd-v2 parent 1: classid 1:1 htb rate 10gbit quantum 1514
        tc class add dev rttccd-v2 parent 1: classid 1:2 htb rate 10gbit quantum 1514
        tc qdisc add dev rttccd-v2 parent 1:2 handle 20: pfifo limit 0
        tc filter add dev rttccd-v2 parent 1: protocol ip u32 match ip protocol 17 0xff match ip dport "$port" 0xffff flowid 1:2
    else
        tc qdisc del dev rttccd-v2 root 2>/dev/null
    fi
}
delete_link() {
    if [ "$1" = on ]; then
        ip link del rttccd-v2
    else
        pkill -KILL -f "$work/" 2>/dev/null
        pkill -KILL -f "orted.*$RTTCC_TB_PREFIX-h" 2>/dev/null
        "$tb" down >/dev/null 2>&1
        "$tb" up 2 --slots 2 >/dev/null
    fi
}

printf '%-44s %8s %8s\n' "case (median of $runs)" "said s" "wall s"
case_run "frozen, one host, btl" self "${local_run[@]}" -np 2 "${btl[@]}" "$work/silent_peer"
case_run "frozen, one host, mtl" self "${local_run[@]}" -np 2 "${mtl[@]}" "$work/silent_peer"
case_run "killed, one host, btl" self "${local_run[@]}" -np 3 "${btl[@]}" "$work/silent_peer" kill
case_run "killed, one host, mtl" self "${local_run[@]}" -np 3 "${mtl[@]}" "$work/silent_peer" kill

"$tb" down >/dev/null 2>&1
"$tb" up 2 --slots 2 >/dev/null || { echo "testbed up failed"; exit 1; }
case_run "frozen, across hosts, btl" self "${tb_run[@]}" -np 2 "${btl[@]}" "$work/silent_peer"
busy=("$work/busy_peer" -when after -busy 0.001 -rounds 100000 -size 65536 -announce 1)
case_run "link deleted, first report (the cut-off rank), btl" delete_link "${tb_run[@]}" -np 2 "${btl[@]}" "${busy[@]}"
WATCH=0 case_run "link deleted, the other rank, btl" delete_link "${tb_run[@]}" -np 2 "${btl[@]}" "${busy[@]}"
case_run "data channel black hole, across hosts, btl" black_hole "${tb_run[@]}" -np 2 "${btl[@]}" "${busy[@]}"
case_run "path MTU 1100 at the sender, btl" mtu_h1 "${tb_run[@]}" -np 2 "${btl[@]}" "${busy[@]}"
case_run "path MTU 1100 at the receiver, btl" mtu_h2 "${tb_run[@]}" -np 2 "${btl[@]}" "${busy[@]}"
