#!/usr/bin/env bash
# The RTT table on one host, end to end: the finalize dump of every rank
# (CSV and JSON) is populated and plausible and tools/rtt_heatmap draws it;
# timestamp=kernel gives kernel-sourced samples and timestamp=user user ones;
# one host's clock offset is estimated as 0 within its bound; PTP auto falls
# back cleanly while ptp_enable=yes, ptp_require_sync and timestamp=nic fail
# with their help text; ompi_info lists every parameter and table variable.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
source "$top/test/mpi/lib.sh"
scratch_dir rtt
mpicc -O2 -Wall -Wextra -Werror -o "$build/rtt_table" "$top/test/mpi/rtt_table.c" ||
    { echo "FAIL build"; echo "0 passed, 1 failed"; exit 1; }

run() {  # run NP [mpirun args...]: rtt_table over rttcc, output in $build/out
    local np=$1
    shift
    timeout -k 5 120 mpirun --allow-run-as-root --oversubscribe -np "$np" --mca pml ob1 \
        --mca btl rttcc,self --mca btl_rttcc_if_include lo "$@" "$build/rtt_table" >"$build/out" 2>&1
}

# check_dump PREFIX NP SOURCE: every rank's CSV has NP-1 plausible rows of SOURCE.
check_dump() {
    local prefix=$1 np=$2 source=$3 r
    for ((r = 0; r < np; ++r)); do
        [ -s "$prefix.$r.csv" ] && [ -s "$prefix.$r.json" ] || { echo "rank $r wrote no dump"; return 1; }
        python3 -m json.tool "$prefix.$r.json" >/dev/null || { echo "rank $r: JSON does not parse"; return 1; }
        awk -F, -v np="$np" -v src="$source" -v r="$r" '
            NR == 1 { if ($0 !~ "timestamp_source=" src) { print "rank " r ": header says " $0; bad = 1 } next }
            NR == 2 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
            { rows++
              s = $col["srtt_us"]; mn = $col["min_rtt_us"]; mx = $col["max_rtt_us"]
              if ($col["samples"] <= 0 || !(mn > 0 && mn <= s && s <= mx && mx < 1e6) || $col["rtt_source"] != src) {
                  print "rank " r " peer " $col["peer"] ": implausible row " $0; bad = 1 }
              off = $col["clock_offset_us"]; bound = $col["offset_bound_us"]
              if (off == "" || (off < 0 ? -off : off) > bound + 5) { print "rank " r " peer " $col["peer"] ": offset " off " beyond its bound " bound; bad = 1 } }
            END { if (rows != np - 1) { print "rank " r ": " rows " rows for " np - 1 " peers"; bad = 1 } exit bad }' \
            "$prefix.$r.csv" || return 1
    done
}

# 1. Dumps from 4 ranks with kernel stamps, and the heatmap of them.
if run 4 --mca btl_rttcc_timestamp kernel --mca btl_rttcc_rtt_dump "$build/k" && grep -q '^PASS rtt_table' "$build/out" &&
   why=$(check_dump "$build/k" 4 kernel); then
    ok "timestamp=kernel: 4 dumps, every row kernel-sourced, min <= srtt <= max, offset 0 within its bound"
else
    bad "timestamp=kernel dumps: ${why:-run failed}"
fi
if "$top/tools/rtt_heatmap" --png "$build/k.png" --matrix "$build/k.matrix" "$build/k" >"$build/out" 2>&1 &&
   grep -q '4 ranks, 12/12 cells known' "$build/out" && [ -s "$build/k.png" ]; then
    ok "rtt_heatmap: 4x4 matrix, 12/12 cells, heatmap drawn"
else
    bad "rtt_heatmap on the dumps"
fi

# 2. User clock only.
if run 3 --mca btl_rttcc_timestamp user --mca btl_rttcc_rtt_dump "$build/u" && why=$(check_dump "$build/u" 3 user); then
    ok "timestamp=user: user-sourced samples"
else
    bad "timestamp=user dumps: ${why:-run failed}"
fi

# 3. PTP: auto falls back and says so; yes and require_sync refuse with help text.
if run 2 --mca btl_rttcc_ptp_enable auto --mca btl_rttcc_verbose 10 && grep -q '^PASS rtt_table' "$build/out" &&
   grep -q 'ptp_enable=auto: cannot open PTP clock /dev/ptp0' "$build/out"; then
    ok "ptp_enable=auto: falls back to CLOCK_REALTIME and says why"
else
    bad "ptp_enable=auto fallback"
fi
expect_refusal() {  # expect_refusal WHAT TEXT [mpirun args...]
    local what=$1 text=$2
    shift 2
    if ! run 2 "$@" && grep -q "$text" "$build/out" && ! grep -q '^PASS' "$build/out"; then
        ok "$what: refused with its help text"
    else
        bad "$what: expected a failed job and '$text'"
    fi
}
expect_refusal "ptp_enable=yes without a PTP clock" "could not set up the clock it was asked to use" \
    --mca btl_rttcc_ptp_enable yes
expect_refusal "ptp_require_sync on an unsynchronised clock" "could not set up the clock it was asked to use" \
    --mca btl_rttcc_ptp_enable no --mca btl_rttcc_ptp_require_sync 1
expect_refusal "timestamp=nic on loopback" "could not get the timestamps it was asked for" \
    --mca btl_rttcc_timestamp nic
expect_refusal "a bad congestion-control setting" "rttcc_initial_cwnd must be at most rttcc_max_cwnd" \
    --mca btl_rttcc_initial_cwnd 500 --mca btl_rttcc_max_cwnd 100

# 4. ompi_info lists the parameters and the table's performance variables.
missing=$(ompi_info_missing btl rttcc "timestamp timestamp_interval_us ptp_enable ptp_require_sync ptp_clock_device \
    ptp_max_offset_ns cc initial_cwnd max_cwnd timely_tlow_us swift_target_us probe_enable probe_interval_us probe_msg_size \
    probe_strategy probe_startup_delay_ms probe_max_rate agent agent_idle_ms rtt_dump rtt_alpha rtt_beta min_rto_us" \
    "rtt_srtt rtt_rttvar rtt_min rtt_owd_fwd rtt_cwnd rtt_losses rtt_samples")
if [ -z "$missing" ]; then ok "ompi_info lists every RTT parameter and table variable"; else bad "ompi_info lacks:$missing"; fi

summary
