#!/usr/bin/env bash
# rttcc_sim, the tool: an incast of real engines in virtual time finishes
# with every byte verified, never beats its line, shares it fairly (Jain's
# index), is the same run for the same seed, runs its engines' timers when
# due (a polled run finds none missed) and so reaches 1000 senders in
# seconds, shows congestion control cutting the drops of an uncontrolled
# incast; an alltoall by each algorithm ends verified and no sooner than
# its line bound, on one switch, on a fat tree with a hot uplink, with a
# flood (whose drops are its own) and in the testbed's scenarios a-d; a
# packet-level job the machine cannot hold, a link under a byte a second
# and an unfinished run are each reported for what they are; the flow
# level agrees with the packet level at 64 ranks and reaches 4096;
# cc_table.sh's shaped link shows AIMD's fewer drops and shorter pings,
# and copied messages finish there too; the scheduler's cost grows as log
# P and a peer's memory stays small; bad options are rejected with exit
# status 2.  (The fabric's exact answers and the packet-level engines are
# unit tests: test/unit/sim/.)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tool="$here/../../rttcc_sim"
source "$here/../mpi/lib.sh"  # scratch_dir, ok, bad, summary
scratch_dir sim

run() {  # run ARGS...: stdout in $build/out, stderr in $build/err, status in $rc
    "$tool" "$@" >"$build/out" 2>"$build/err"
    rc=$?
}
col() {  # col NAME: that column of the last CSV line of $build/out (header from -header)
    awk -F, -v n="$1" 'NR == 1 { for (i = 1; i <= NF; ++i) if ($i == n) c = i; next } { v = $c } END { print v }' "$build/out"
}

[ -x "$tool" ] || { bad "rttcc_sim not built ($tool)"; summary; exit; }

run incast -header -senders 4 -bytes 65536 -cc aimd
if [ "$rc" -eq 0 ] && [ "$(col finished)" = 1 ] && [ "$(col corrupt_bytes)" = 0 ] &&
    awk -v g="$(col goodput_of_line)" 'BEGIN { exit !(g > 0 && g <= 1) }'; then
    ok "incast 4 x 64 KiB (aimd): finished, verified, goodput $(col goodput_of_line) of the line"
else
    bad "incast 4 x 64 KiB (aimd): rc=$rc $(tail -n 1 "$build/out")"
fi

# Jain's index over the senders' rates, each from the receiver's last byte
# of it: 4 x 64 KiB (messages the engine copies, whose send completes at
# once) through a queue that drops nothing share the link fairly.
run incast -header -senders 4 -bytes 65536 -queue 1000
if [ "$rc" -eq 0 ] && awk -v j="$(col jain)" 'BEGIN { exit !(j >= 0.9 && j <= 1) }'; then
    ok "incast 4 x 64 KiB without drops: Jain's index $(col jain)"
else
    bad "incast 4 x 64 KiB without drops: rc=$rc, Jain's index $(col jain) (want 0.9 to 1)"
fi

run incast -header -senders 1 -bytes 1048576 -queue 1000
g=$(col goodput_of_line)
if [ "$rc" -eq 0 ] && awk -v g="$g" 'BEGIN { exit !(g >= 0.8 && g <= 1) }'; then
    ok "one sender, no congestion: goodput $g of the line (frames and headers take the rest)"
else
    bad "one sender, no congestion: rc=$rc goodput $g (want 0.8 to 1)"
fi

run incast -header -senders 6 -bytes 131072 -queue 24 -cc swift -seed 5
first=$(tail -n 1 "$build/out" | cut -d, -f1-17)
run incast -header -senders 6 -bytes 131072 -queue 24 -cc swift -seed 5
second=$(tail -n 1 "$build/out" | cut -d, -f1-17)
if [ "$rc" -eq 0 ] && [ -n "$first" ] && [ "$first" = "$second" ]; then
    ok "same seed, same run: $first"
else
    bad "same seed, different runs: '$first' vs '$second'"
fi

# -jitter: the seed draws each sender's start; the same seed gives the same
# run, another seed another run.
jittered() { run incast -header -senders 6 -bytes 131072 -queue 24 -cc swift -jitter 2000 -seed "$1"; tail -n 1 "$build/out" | cut -d, -f8-16; }
j1=$(jittered 1) j1again=$(jittered 1) j2=$(jittered 2)
if [ -n "$j1" ] && [ "$j1" = "$j1again" ] && [ "$j1" != "$j2" ]; then
    ok "-jitter 2000: seed 1 twice gives '$j1', seed 2 '$j2'"
else
    bad "-jitter 2000: seed 1 '$j1' then '$j1again', seed 2 '$j2'"
fi

# Engines are progressed when their timers are due, not every tick: a
# polled run (every engine every 5 us, as an application spinning in MPI)
# must find no timed work the schedule did not foresee, and the event-driven
# run must be the far cheaper one.  Without next_due's retransmission
# timers, the polled run reports late passes and fails (checked).
run incast -header -senders 300 -bytes 65536 -cc aimd -poll 1
polled_events=$(col events) polled_late=$(col late_passes) polled_rc=$rc
run incast -header -senders 300 -bytes 65536 -cc aimd
if [ "$polled_rc" -eq 0 ] && [ "$rc" -eq 0 ] && [ "$polled_late" = 0 ] && [ "$(col late_passes)" = 0 ] &&
    [ "$(col corrupt_bytes)" = 0 ] && [ "$(col events)" -lt $((polled_events / 10)) ]; then
    ok "300-sender incast: no timer missed when polled every 5 us; $(col events) events against $polled_events polled"
else
    bad "timers and polling: polled rc=$polled_rc late=$polled_late events=$polled_events; event-driven rc=$rc $(tail -n 1 "$build/out")"
fi

# Only timeouts back off a segment's RTO: a fast or RACK resend that is
# lost again waits one RTO, not one per loss found (161 ms with that, 16 ms
# without; the engine's own unit test is test_engine_rack's).
run incast -header -senders 100 -bytes 65536 -cc aimd
if [ "$rc" -eq 0 ] && awk -v c="$(col completion_us)" 'BEGIN { exit !(c > 0 && c < 40000) }'; then
    ok "100-sender incast (aimd): $(col completion_us) us, under 40 ms"
else
    bad "100-sender incast (aimd): rc=$rc, $(col completion_us) us (over 40 ms: resends back off their timeouts?)"
fi

run incast -header -senders 1000 -bytes 65536 -cc aimd
if [ "$rc" -eq 0 ] && [ "$(col finished)" = 1 ] && [ "$(col corrupt_bytes)" = 0 ]; then
    ok "1000-sender incast (aimd) verified: $(col completion_us) us of virtual time, $(col events) events"
else
    bad "1000-sender incast: rc=$rc $(tail -n 1 "$build/out") $(tail -n 2 "$build/err")"
fi

run incast -header -senders 8 -bytes 262144 -queue 32 -cc none
none_drops=$(col drops)
run incast -header -senders 8 -bytes 262144 -queue 32 -cc aimd
aimd_drops=$(col drops)
if [ "$rc" -eq 0 ] && [ -n "$none_drops" ] && [ -n "$aimd_drops" ] && [ "$aimd_drops" -lt "$none_drops" ]; then
    ok "8-sender incast into a 32-packet queue: $none_drops drops without congestion control, $aimd_drops with aimd"
else
    bad "congestion control did not cut the drops: none $none_drops, aimd $aimd_drops"
fi

for algo in rttcc pairwise linear bruck; do
    run alltoall -header -ranks 8 -block 65536 -algo "$algo"
    b=$(col of_bound)
    if [ "$rc" -eq 0 ] && [ "$(col finished)" = 1 ] && [ "$(col corrupt_bytes)" = 0 ] &&
        awk -v b="$b" 'BEGIN { exit !(b >= 1 && b < 4) }'; then
        ok "alltoall 8 x 64 KiB ($algo): verified, $(col completion_us) us, $b of the line bound"
    else
        bad "alltoall 8 x 64 KiB ($algo): rc=$rc $(tail -n 1 "$build/out")"
    fi
done

# Its line bound is the hot uplink's (the blocks ECMP lays on it, at its
# rate), far above the host links' 786.4 us.
run alltoall -header -ranks 16 -block 65536 -topo fat_tree -per_leaf 4 -spines 2 -hot 4 -policy threshold
if [ "$rc" -eq 0 ] && [ "$(col finished)" = 1 ] && [ "$(col corrupt_bytes)" = 0 ] &&
    awk -v r="$(col of_bound)" -v b="$(col line_bound_us)" 'BEGIN { exit !(r >= 1 && b > 2 * 786.4) }'; then
    ok "alltoall on a fat tree with a hot uplink (threshold): verified, $(col completion_us) us, $(col of_bound) of the hot link's bound $(col line_bound_us) us"
else
    bad "alltoall on a fat tree with a hot uplink: rc=$rc $(tail -n 1 "$build/out")"
fi

# coll_rttcc's eager cut at scale: 32 ranks' 64 KiB blocks are scheduled
# (eager_total 1 MiB / 31 peers), within 1.3x of the hot uplink's bound;
# sent eagerly (eager_total 16 MiB, the old default) every rank's blocks
# left at once: 1.61x and drops.
run alltoall -header -ranks 32 -block 65536 -topo fat_tree -per_leaf 8 -spines 4 -hot 4 -eager_total 16777216
eager_ratio=$(col of_bound)
run alltoall -header -ranks 32 -block 65536 -topo fat_tree -per_leaf 8 -spines 4 -hot 4
if [ "$rc" -eq 0 ] && awk -v r="$(col of_bound)" -v e="$eager_ratio" 'BEGIN { exit !(r > 0 && r <= 1.3 && e > 1.3) }'; then
    ok "32-rank alltoall, 64 KiB blocks, hot uplink: $(col of_bound)x its bound with coll_rttcc's defaults, ${eager_ratio}x all eager"
else
    bad "32-rank alltoall at coll_rttcc's defaults: rc=$rc $(col of_bound)x its bound (want <= 1.3), all eager ${eager_ratio}x"
fi

# At packet level memory grows as ranks^2 (about 6 KB a pair of ranks and
# the blocks' copies): a job this machine cannot hold is refused up front,
# naming its estimate and the flow level, not built until it is out of
# memory (20000 ranks: about 2.5 TB).
(ulimit -v 2000000; timeout 60 "$tool" alltoall -ranks 20000 -block 1) >"$build/out" 2>"$build/err"
rc=$?
if [ "$rc" -eq 2 ] && grep -q 'needs about .* GB.*-level flow' "$build/err"; then
    ok "alltoall -ranks 20000 at packet level refused: $(head -n 1 "$build/err")"
else
    bad "alltoall -ranks 20000 at packet level: rc=$rc, want 2 and the estimate: $(head -n 1 "$build/err")"
fi

# A link below a byte a second (1 Mbit/s at 1/10^6: 1 bit/s) is slow, not a
# division by zero (SIGFPE, exit 136): the run ends unfinished at its limit.
run alltoall -header -ranks 2 -block 1000 -gbit 0.001 -hot 1000000 -limit 100
if [ "$rc" -eq 1 ] && [ "$(col finished)" = 0 ]; then
    ok "alltoall over a 1 bit/s link: not finished within 100 ms, exit 1"
else
    bad "alltoall over a 1 bit/s link: rc=$rc (136: SIGFPE) $(tail -n 1 "$build/err")"
fi

# The median of an even number of alltoalls is the mean of the middle two:
# of two, their mean.
run alltoall -header -ranks 8 -block 65536 -iters 2
if [ "$rc" -eq 0 ] && [ "$(col iters)" = 2 ] && [ "$(col completion_us)" = "$(col mean_us)" ]; then
    ok "the median of 2 alltoalls is their mean: $(col completion_us) us"
else
    bad "the median of 2 alltoalls: rc=$rc, $(col completion_us) us against their mean $(col mean_us)"
fi

# A run that ran out of time says so, not that its missing blocks were corrupt.
run alltoall -ranks 4 -hot 1000000 -limit 100
if [ "$rc" -eq 1 ] && grep -q 'not finished within 100 ms' "$build/err" && ! grep -q corrupt "$build/err"; then
    ok "an alltoall past its -limit: '$(tail -n 1 "$build/err")'"
else
    bad "an alltoall past its -limit: rc=$rc, '$(tail -n 1 "$build/err")'"
fi

# A transient hotspot: a flooder in the last leaf sends rank 0 8 Gbit/s for
# 2 ms in every 4: the alltoall takes longer than without it, verified.
run alltoall -header -ranks 16 -block 65536 -topo fat_tree -per_leaf 4 -spines 2 -iters 4
calm=$(col completion_us)
run alltoall -header -ranks 16 -block 65536 -topo fat_tree -per_leaf 4 -spines 2 -iters 4 -hotspot 8000 \
    -flood_on 0.002 -flood_off 0.002
if [ "$rc" -eq 0 ] && [ "$(col corrupt_bytes)" = 0 ] &&
    awk -v c="$calm" -v h="$(col completion_us)" 'BEGIN { exit !(c > 0 && h > 1.2 * c) }'; then
    ok "a transient hotspot slows a fat tree's alltoall: $(col completion_us) us against $calm without it"
else
    bad "transient hotspot: rc=$rc, $(col completion_us) us against $calm without it"
fi

# With a flood the line bound stays a lower bound: the flood-free one (a
# flood loses its share of a full queue, so the alltoall can get more than
# the link less the flood's mean: that "bound" was 0.33 of the completion
# here).  The flood-adjusted figure is an estimate (flood_est_us: the
# flood's mean at its framed rate), infinite for a flood at the link's rate.
for level in packet flow; do
    run alltoall -header -ranks 8 -block 65536 -hotspot 9000 -flood_off 0 -flood_on 100 -level "$level"
    if [ "$rc" -eq 0 ] && awk -v r="$(col of_bound)" -v b="$(col line_bound_us)" -v e="$(col flood_est_us)" \
        'BEGIN { exit !(r >= 1 && e > b) }'; then
        ok "$level level, a 9 Gbit/s flood into rank 0: $(col of_bound) of the flood-free bound, estimate $(col flood_est_us) us"
    else
        bad "$level level, a 9 Gbit/s flood into rank 0: rc=$rc, of_bound $(col of_bound), estimate '$(col flood_est_us)' us"
    fi
done
run alltoall -header -ranks 8 -block 65536 -hotspot 10000 -flood_off 0 -flood_on 100 -level flow
if [ "$(col flood_est_us)" = inf ] && awk -v r="$(col of_bound)" 'BEGIN { exit !(r >= 1) }'; then
    ok "flow level, a flood at the link's rate: estimate inf, $(col of_bound) of the flood-free bound"
else
    bad "flow level, a flood at the link's rate: rc=$rc, estimate '$(col flood_est_us)', of_bound $(col of_bound)"
fi

# drops counts the alltoall's packets; a flood's own (here its NIC's: 20
# Gbit/s into a 10 Gbit/s link) are flood_drops.
run alltoall -header -ranks 4 -block 65536 -hotspot 20000 -flood_on 100 -flood_off 0 -iters 3
if [ "$rc" -eq 0 ] && awk -v d="$(col drops)" -v f="$(col flood_drops)" 'BEGIN { exit !(f >= 1000 && d < 100) }'; then
    ok "a flood's drops are its own: the alltoall's $(col drops), the flood's $(col flood_drops)"
else
    bad "a flood's drops: rc=$rc, drops $(col drops), flood_drops '$(col flood_drops)'"
fi

# The flow level against the packet level on the same fat tree (64 ranks,
# a hot uplink): within 10% for coll_rttcc, and the same line bound within
# 2%.  Tuned's pairwise may be up to 20% faster at flow level: each of its
# steps waits for its slowest flow, and the flow level spreads flows evenly
# over the spines where the packet level hashes some onto one (0.84 measured).
for algo in rttcc pairwise; do
    lo=0.9
    [ "$algo" = pairwise ] && lo=0.8
    run alltoall -header -ranks 64 -block 65536 -topo fat_tree -per_leaf 8 -spines 4 -hot 4 -algo "$algo"
    packet=$(col completion_us) packet_bound=$(col line_bound_us)
    run alltoall -header -ranks 64 -block 65536 -topo fat_tree -per_leaf 8 -spines 4 -hot 4 -algo "$algo" -level flow
    if [ "$rc" -eq 0 ] && [ "$(col level)" = flow ] && [ "$(col finished)" = 1 ] &&
        awk -v p="$packet" -v f="$(col completion_us)" -v pb="$packet_bound" -v fb="$(col line_bound_us)" -v lo="$lo" \
            'BEGIN { r = f / p; q = fb / pb; exit !(p > 0 && r >= lo && r <= 1.1 && q >= 0.98 && q <= 1.02) }'; then
        ok "flow level, 64 ranks, hot uplink ($algo): $(col completion_us) us against the packet level's $packet"
    else
        bad "flow level, 64 ranks, hot uplink ($algo): rc=$rc $(col completion_us) us against the packet level's $packet (bounds $(col line_bound_us), $packet_bound)"
    fi
done

# The flow level does not model paced grants (coll_rttcc's max_grants, in
# force with cc none): it says so then, and only then.
run alltoall -ranks 32 -level flow -cc none
none_rc=$rc none_warned=$(grep -c 'does not model paced grants' "$build/err")
run alltoall -ranks 32 -level flow -cc aimd
if [ "$none_rc" -eq 0 ] && [ "$none_warned" = 1 ] && [ "$rc" -eq 0 ] && ! grep -q 'paced grants' "$build/err"; then
    ok "flow level with cc none warns that it does not model paced grants; with aimd it does not"
else
    bad "flow level and paced grants: cc none rc=$none_rc warned=$none_warned; aimd rc=$rc '$(head -n 1 "$build/err")'"
fi

# The flow level where the packet level cannot go: 4096 ranks, each policy
# and tuned's pairwise, no sooner than the hot uplink's bound and within 1.3x.
for algo in "rttcc -policy adaptive" "rttcc -policy linear" pairwise; do
    # shellcheck disable=SC2086
    run alltoall -header -ranks 4096 -block 65536 -topo fat_tree -per_leaf 8 -spines 4 -hot 4 -level flow -algo $algo
    if [ "$rc" -eq 0 ] && [ "$(col finished)" = 1 ] && [ "$(col classes)" = 2 ] &&
        awk -v r="$(col of_bound)" 'BEGIN { exit !(r >= 1 && r <= 1.3) }'; then
        ok "flow level, 4096 ranks, hot uplink ($algo): $(col of_bound) of the bound, $(col events) steps in $(col wall_s) s"
    else
        bad "flow level, 4096 ranks ($algo): rc=$rc $(tail -n 1 "$build/out") $(tail -n 1 "$build/err")"
    fi
done

# coll_table.sh's testbed scenarios, 4 ranks of 256 KiB blocks, 3
# alltoalls each: verified, and no faster than their bottleneck allows
# (d's: without its flood); d's flood (on for the whole run) slows what a, its links without
# the flood, takes.
for tb in a b c d; do
    run alltoall -header -ranks 4 -block 262144 -testbed "$tb" -iters 3 -flood_on 10
    [ "$tb" = a ] && tb_a=$(col completion_us)
    [ "$tb" = d ] && tb_d=$(col completion_us)
    if [ "$rc" -eq 0 ] && [ "$(col iters)" = 3 ] && [ "$(col corrupt_bytes)" = 0 ] &&
        awk -v r="$(col of_bound)" 'BEGIN { exit !(r >= 1) }'; then
        ok "testbed scenario $tb: 3 alltoalls verified, median $(col completion_us) us, $(col of_bound) of its line bound"
    else
        bad "testbed scenario $tb: rc=$rc $(tail -n 1 "$build/out") $(tail -n 2 "$build/err")"
    fi
done
if awk -v a="$tb_a" -v d="$tb_d" 'BEGIN { exit !(a > 0 && d > 1.2 * a) }'; then
    ok "scenario d's flood slows the alltoall: $tb_d us against $tb_a without it"
else
    bad "scenario d's flood did not slow the alltoall: $tb_d us against $tb_a"
fi

# Validation against the testbed (test/sim/validation.csv: figures
# measured there by bench/sim_validate.sh): each is met within 15%.
while IFS=, read -r scen block config measured; do
    case $scen in '#'* | scenario | '') continue ;; esac
    run alltoall -header -ranks 4 -block "$block" -testbed "$scen" -algo rttcc -policy "${config#rttcc:}" -iters 5
    if [ "$rc" -eq 0 ] && awk -v x="$(col completion_us)" -v m="$measured" 'BEGIN { r = x / m; exit !(r >= 0.85 && r <= 1.15) }'; then
        ok "validation: scenario $scen, $block-byte blocks, $config: $(col completion_us) us simulated, $measured measured"
    else
        bad "validation: scenario $scen, $block-byte blocks, $config: rc=$rc, $(col completion_us) us simulated against $measured measured (outside 15%)"
    fi
done <"$here/validation.csv"

# bench/cc_table.sh's run (rttcc_sim shaped): 2 streamers into a sink behind
# 150 Mbit/s with a 200-frame queue, a pinger beside them.  The link is
# never beaten (18.75 MB/s); AIMD fills 80% of it, drops nothing where cc
# none drops, and keeps the pings' p50 below none's.
run shaped -header -cc none
none_p50=$(col p50_us) none_drops=$(col drops)
run shaped -header -cc aimd
if [ "$rc" -eq 0 ] && [ "$(col finished)" = 1 ] && [ "$(col corrupt_bytes)" = 0 ] && [ "$(col drops)" = 0 ] &&
    [ "$none_drops" -gt 0 ] && awk -v m="$(col mbps)" -v a="$(col p50_us)" -v n="$none_p50" \
        'BEGIN { exit !(m >= 0.8 * 18.75 && m <= 18.75 && a < n) }'; then
    ok "shaped link: aimd $(col mbps) MB/s, ping p50 $(col p50_us) us, no drops; none: p50 $none_p50 us, $none_drops drops"
else
    bad "shaped link: rc=$rc $(tail -n 1 "$build/out"); none: p50 $none_p50 us, $none_drops drops"
fi

# Messages small enough for the engine to copy (RTTCC_DONE at once) stay in
# the window until the sink has them: the streamers keep -window in flight,
# and the run ends (counting local completion, they sent forever at one
# virtual instant).
for bytes in 1 8192; do
    # at most 60 s and 2 GB (without the fix it runs on, growing)
    (ulimit -v 2000000; timeout 60 "$tool" shaped -header -time 1.1 -from 1 -bytes "$bytes") >"$build/out" 2>"$build/err"
    rc=$?
    if [ "$rc" -eq 0 ] && [ "$(col finished)" = 1 ] && awk -v m="$(col mbps)" 'BEGIN { exit !(m > 0 && m <= 18.75) }'; then
        ok "shaped link, copied $bytes-byte messages: finished, $(col mbps) MB/s"
    else
        bad "shaped link, copied $bytes-byte messages: rc=$rc (124: still running after 60 s, 134: out of its 2 GB) $(tail -n 1 "$build/out")"
    fi
done

# ... and against the testbed (test/sim/validation_shaped.csv, measured by
# bench/cc_table.sh): each cell's MB/s within 15%.
while IFS=, read -r cc target measured; do
    case $cc in '#'* | cc | '') continue ;; esac
    run shaped -header -cc "$cc" -swift_target_us "$target"
    if [ "$rc" -eq 0 ] && awk -v x="$(col mbps)" -v m="$measured" 'BEGIN { r = x / m; exit !(r >= 0.85 && r <= 1.15) }'; then
        ok "validation: shaped link, cc $cc (swift target $target us): $(col mbps) MB/s simulated, $measured measured"
    else
        bad "validation: shaped link, cc $cc: rc=$rc, $(col mbps) MB/s simulated against $measured measured (outside 15%)"
    fi
done <"$here/validation_shaped.csv"

# The PeerScheduler's cost grows as log P: heap entries placed per pick at
# 65536 peers at most 1.6x those at 4096 (log4: 8 against 6; a scan per pick
# would be 16x).  Each policy starts every peer but self once.  One engine
# knowing 65535 peers holds about its idle peer's memory per peer.
for policy in greedy balanced adaptive; do
    run scale -header -peers 4096 -policy "$policy"
    small=$(col heap_ops_per_pick) small_picks=$(col picks)
    run scale -header -peers 65536 -policy "$policy"
    if [ "$rc" -eq 0 ] && [ "$small_picks" = 4095 ] && [ "$(col picks)" = 65535 ] &&
        awk -v a="$small" -v b="$(col heap_ops_per_pick)" 'BEGIN { exit !(a > 0 && b <= 1.6 * a) }'; then
        ok "scheduler ($policy): $small heap ops per pick at 4096 peers, $(col heap_ops_per_pick) at 65536"
    else
        bad "scheduler ($policy): rc=$rc heap ops per pick $small -> $(col heap_ops_per_pick), picks $small_picks, $(col picks)"
    fi
done
if [ "$(col idle_peer_bytes)" -lt 2184 ] && awk -v m="$(col heap_bytes_per_peer)" 'BEGIN { exit !(m > 0 && m < 4096) }'; then
    ok "an engine knowing $(col peers_known) peers: $(col heap_bytes_per_peer) heap bytes per peer (idle peer $(col idle_peer_bytes))"
else
    bad "peer memory: idle peer $(col idle_peer_bytes) bytes, $(col heap_bytes_per_peer) heap bytes per peer"
fi

# -warm 1: the senders first exchange a message each (RTT samples); the incast's times count from its own start.
run incast -header -senders 4 -bytes 262144 -queue 1000 -cc aimd
cold=$(col completion_us)
run incast -header -senders 4 -bytes 262144 -queue 1000 -cc aimd -warm 1
warm=$(col completion_us)
if [ "$rc" -eq 0 ] && [ "$(col warm)" = 1 ] && [ "$(col finished)" = 1 ] && [ "$(col corrupt_bytes)" = 0 ] &&
    awk -v c="$cold" -v w="$warm" 'BEGIN { exit !(c > 0 && w > 0.98 * c && w < 1.02 * c) }'; then
    ok "a warm incast without drops takes what a cold one takes, from its own start: $warm against $cold us"
else
    bad "warm incast: rc=$rc, $warm us against a cold $cold us: $(tail -n 1 "$build/out")"
fi

# tools/rttcc_sim_sweep: every run in one CSV, a PNG per column; a run that fails is said and left out.
sweep="$here/../../tools/rttcc_sim_sweep"
"$sweep" -sim "$tool" -out "$build/sweep" -values "2 4" -series_values "none aimd" -y completion_us,drops \
    -logy completion_us -- incast -bytes 65536 -queue 16 >"$build/out" 2>"$build/err"
rc=$?
rows=$(($(wc -l <"$build/sweep/sweep.csv" 2>/dev/null || echo 1) - 1))
pngs=0
for p in completion_us drops; do
    [ "$(head -c 4 "$build/sweep/$p.png" 2>/dev/null | tail -c 3)" = PNG ] && pngs=$((pngs + 1))
done
if [ "$rc" -eq 0 ] && [ "$rows" -eq 4 ] && [ "$pngs" -eq 2 ] &&
    [ "$(awk -F, 'NR > 1 && $4 == "aimd" && $2 == 4 { print $8 }' "$build/sweep/sweep.csv")" = 1 ]; then
    ok "rttcc_sim_sweep: 2 x 2 incasts in one CSV, completion and drops drawn"
else
    bad "rttcc_sim_sweep: rc=$rc, $rows rows, $pngs PNGs: $(tail -n 2 "$build/err")"
fi
"$sweep" -sim "$tool" -out "$build/sweep2" -values "2 0" -series_values aimd -y drops -- incast >"$build/out" 2>"$build/err"
rc=$?
if [ "$rc" -eq 1 ] && grep -q 'senders 0 failed' "$build/err" && [ "$(wc -l <"$build/sweep2/sweep.csv")" -eq 2 ]; then
    ok "rttcc_sim_sweep: a run that fails is reported and left out (exit 1)"
else
    bad "rttcc_sim_sweep with a failing run: rc=$rc $(tail -n 1 "$build/err")"
fi

for args in "incast -cc reno" "incast -senders 0" "incast -gbit" "alltoall -algo tuned" "alltoall -topo ring" \
    "ring" "incast -queue x" "scale -peers 1" "incast -warm 2" "alltoall -testbed e" \
    "alltoall -ranks 3 -testbed c" "incast -rto_jitter 101" "alltoall -iters 0" "alltoall -level fluid" \
    "alltoall -level flow -algo bruck" "alltoall -level flow -topo fat_tree -ranks 60 -per_leaf 8" \
    "alltoall -level flow -testbed b" "alltoall -ranks 65537" "shaped -from 5" "shaped -rate 0" \
    "alltoall -level flow -ranks 16 -dt 1e9" "alltoall -algo bruck -ranks 2 -block 67108864"; do
    # shellcheck disable=SC2086
    run $args
    if [ "$rc" -eq 2 ] && grep -q '^usage: rttcc_sim' "$build/err"; then
        ok "rejects '$args' (exit 2, usage)"
    else
        bad "'$args': rc=$rc, want 2 with usage"
    fi
done

summary
