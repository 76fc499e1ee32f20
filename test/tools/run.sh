#!/usr/bin/env bash
# tools/rtt_heatmap: merges synthetic per-rank RTT tables (4 ranks, rank 2's
# row and column 5x slower) into the right matrix, text and CSV; draws a PNG
# heatmap with gnuplot (missing gnuplot is a failure: install gnuplot-nox);
# reads JSON-only dumps alike; rejects bad input with exit status 2.
# tools/udp_pingpong (the floors bench/compare.sh holds rttcc against): each
# mode brings its message back intact over loopback (the tool checks every
# byte) and prints "BYTES US"; a bad size is refused with exit status 2.
# tools/syscall_timeline.so and tools/timeline_summary: the calls of both
# processes of a ping-pong are recorded and summarized.
# tools/engine_cost, built against the installed engine: two engines cut a
# message into Ethernet-sized segments, deliver it intact (checked byte for byte)
# and print its cost; a bad size is refused with exit status 2.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tool="$here/../../tools/rtt_heatmap"
dir=$(mktemp -d /tmp/rttcc-tools.XXXXXX)
trap 'rm -rf "$dir"' EXIT
trap 'exit 130' INT TERM

passed=0
failed=0
ok() { echo "ok $1"; passed=$((passed + 1)); }
bad() {  # shows the tail of the last run's stderr
    echo "FAIL $1"
    [ -s "$dir/err" ] && tail -n 5 "$dir/err" | sed 's/^/    /'
    failed=$((failed + 1))
}
check() {  # check WHAT COMMAND...: ok when COMMAND succeeds
    local what=$1
    shift
    if "$@"; then ok "$what"; else bad "$what"; fi
}
exited() { [ "$rc" -eq "$1" ]; }
run() {  # run ARGS...: the tool's stdout in $dir/out, stderr in $dir/err, status in $rc
    "$tool" "$@" >"$dir/out" 2>"$dir/err"
    rc=$?
}

header=rank,peer,srtt_us,rttvar_us,min_rtt_us,max_rtt_us,latest_rtt_us,samples,probe_samples,owd_fwd_us,owd_rev_us,clock_offset_us,offset_bound_us,losses,retransmits,cwnd,bytes_tx,bytes_rx,last_update_ms,rtt_source

# write_ranks PREFIX csv|json: 4 rank files; srtt(r,p) = 20 + r + p/10 us,
# times 5 when r or p is 2; rank 3 knows no one-way delays.
write_ranks() {
    local prefix=$1 format=$2 r
    for r in 0 1 2 3; do
        awk -v r="$r" -v format="$format" -v header="$header" 'BEGIN {
            if (format == "csv") {
                printf "# rttcc rtt table rank=%d host=node%d timestamp_source=kernel clock_domain=realtime_estimated units=us\n%s\n", r, r, header
            } else {
                printf "{\"rank\":%d,\"host\":\"node%d\",\"timestamp_source\":\"kernel\",\"clock_domain\":\"realtime_estimated\",\"units\":{\"time\":\"us\",\"bytes\":\"B\"},\"peers\":[", r, r
            }
            n = 0
            for (p = 0; p < 4; ++p) {
                if (p == r) continue
                srtt = (20 + r + p / 10) * ((r == 2 || p == 2) ? 5 : 1)
                owd = (r == 3) ? "" : sprintf("%.3f", srtt / 2)
                if (format == "csv") {
                    printf "%d,%d,%.3f,3.100,%.3f,%.3f,%.3f,1234,10,%s,%s,-0.500,9.100,0,%d,12.000,1048576,1048576,1532.100,kernel\n",
                        r, p, srtt, srtt * 0.8, srtt * 3, srtt, owd, owd, r + p
                } else {
                    if (owd == "") owd = "null"
                    printf "%s{\"peer\":%d,\"srtt_us\":%.3f,\"rttvar_us\":3.1,\"min_rtt_us\":%.3f,\"max_rtt_us\":%.3f,\"latest_rtt_us\":%.3f,\"samples\":1234,\"probe_samples\":10,\"owd_fwd_us\":%s,\"owd_rev_us\":%s,\"clock_offset_us\":-0.5,\"offset_bound_us\":9.1,\"losses\":0,\"retransmits\":%d,\"cwnd\":12.0,\"bytes_tx\":1048576,\"bytes_rx\":1048576,\"last_update_ms\":1532.1,\"rtt_source\":\"kernel\"}",
                        (n++ ? "," : ""), p, srtt, srtt * 0.8, srtt * 3, srtt, owd, owd, r + p
                }
            }
            if (format == "json") print "]}"
        }' >"$prefix.$r.$format"
    done
}

cell() {  # cell RANK PEER: that cell of the printed matrix in $dir/out
    awk -v r="$1" -v p="$2" '$1 == "rank\\peer" { on = 1; next } on && $1 == r { print $(p + 2); exit }' "$dir/out"
}
cells_are() {  # cells_are "RANK PEER VALUE"...: every cell printed as given
    local spec r p want got
    for spec in "$@"; do
        read -r r p want <<<"$spec"
        got=$(cell "$r" "$p")
        [ "$got" = "$want" ] || { echo "    cell $r,$p: expected $want, printed '$got'" >&2; return 1; }
    done
}
summary_has() { tail -n 1 "$dir/out" | grep -qF -- "$1"; }


# 1. The matrix from the CSV dumps, printed and written as CSV.
mkdir "$dir/csv" "$dir/json"
write_ranks "$dir/csv/rtt" csv
write_ranks "$dir/json/rtt" json
run --matrix "$dir/matrix.csv" "$dir/csv/rtt"
check "runs on a PREFIX of CSV dumps (exit 0)" exited 0
check "printed cells (fast, slow row and column, diagonal)" \
    cells_are "0 1 20.100" "1 0 21.000" "0 2 101.000" "2 0 110.000" "3 2 116.000" "2 3 111.500" "1 1 -" "2 2 -"
check "summary: ranks and known cells" summary_has "4 ranks, 12/12 cells known"
check "summary: min/median/max" summary_has "srtt_us min 20.100, median 62.050, max 116.000 us"
check "summary: slowest pairs" summary_has "slowest (rank->peer): 3->2 116.000, 2->3 111.500, 2->1 110.500"
cat >"$dir/expected.csv" <<'EOF'
rank,0,1,2,3
0,,20.1,101,20.3
1,21,,106,21.3
2,110,110.5,,111.5
3,23,23.1,116,
EOF
check "matrix CSV" cmp -s "$dir/expected.csv" "$dir/matrix.csv"

run --metric owd_fwd_us "$dir/csv/rtt.0.csv" "$dir/csv/rtt.1.csv" "$dir/csv/rtt.2.csv" "$dir/csv/rtt.3.csv"
if exited 0 && cells_are "0 2 50.500" "3 0 -" "3 2 -" && summary_has "4 ranks, 9/12 cells known"; then
    ok "unknown cells (owd_fwd_us, rank 3 has none) from a file list"
else
    bad "unknown cells (owd_fwd_us, rank 3 has none) from a file list"
fi
run --metric retransmits "$dir/csv/rtt"
if exited 0 && cells_are "1 3 4" "3 2 5" && summary_has "highest (rank->peer): 2->3 5, 3->2 5, 1->3 4"; then
    ok "count metric (retransmits) printed as integers"
else
    bad "count metric (retransmits) printed as integers"
fi

# 2. JSON-only dumps give the same matrix.
run "$dir/csv/rtt"
cp "$dir/out" "$dir/out.csv"
run "$dir/json/rtt"
check "JSON-only PREFIX: exit 0" exited 0
check "JSON-only PREFIX: same output as from the CSVs" cmp -s "$dir/out.csv" "$dir/out"
run --metric owd_fwd_us "$dir"/json/rtt.*.json
if exited 0 && cells_are "0 2 50.500" "3 1 -"; then
    ok "JSON file list: nulls are unknown cells"
else
    bad "JSON file list: nulls are unknown cells"
fi

# 3. The heatmap.
have() { command -v "$1" >/dev/null; }
check "gnuplot installed (Debian package gnuplot-nox)" have gnuplot
run --png "$dir/map.png" --title "4 ranks, rank 2 slow" "$dir/csv/rtt"
check "--png exits 0" exited 0
check "PNG written" [ -f "$dir/map.png" ]
magic=$(head -c 8 "$dir/map.png" 2>/dev/null | od -An -tx1 | tr -d ' \n')
check "PNG magic bytes ($magic)" [ "$magic" = 89504e470d0a1a0a ]
size=$(stat -c %s "$dir/map.png" 2>/dev/null || echo 0)
check "PNG size > 2 KB ($size bytes)" [ "$size" -gt 2048 ]
python=$(python3 -c 'import sys; print(sys.executable)')
PATH=/nonexistent "$python" "$tool" --png "$dir/none.png" "$dir/csv/rtt" >"$dir/out" 2>"$dir/err"
rc=$?
check "no gnuplot: exit 3" exited 3
check "no gnuplot: the message names gnuplot-nox" grep -q gnuplot-nox "$dir/err"

# 4. Bad input: exit status 2 with a message and no traceback.
fails_with() {  # fails_with WHAT MESSAGE ARGS...: exit 2, MESSAGE on stderr, no traceback
    local what=$1 message=$2
    shift 2
    run "$@"
    if [ "$rc" -eq 2 ] && grep -qF -- "$message" "$dir/err" && ! grep -q Traceback "$dir/err"; then
        ok "$what: exit 2, '$(head -n 1 "$dir/err" | sed "s|$dir/||g")'"
    else
        bad "$what (exit $rc)"
    fi
}
broken() {  # broken NAME: a fresh copy of the CSV dumps in $dir/NAME
    rm -rf "${dir:?}/$1"
    cp -r "$dir/csv" "$dir/$1"
}
fails_with "missing file" "no such file" "$dir/csv/rtt.0.csv" "$dir/csv/rtt.9.csv"
fails_with "missing PREFIX" "no such file" "$dir/nothing/rtt"
broken number
sed -i '3s/^1,0,21.000,/1,0,21.0x0,/' "$dir/number/rtt.1.csv"
fails_with "bad number" "rtt.1.csv:3: srtt_us: not a number: '21.0x0'" "$dir/number/rtt"
broken dup
row=$(sed -n 3p "$dir/dup/rtt.2.csv")
echo "$row" >>"$dir/dup/rtt.2.csv"
fails_with "duplicate row" "duplicate row for rank 2 peer 0" "$dir/dup/rtt"
broken header
sed -i '2s/,rtt_source$//; 3,$s/,kernel$//' "$dir/header/rtt.3.csv"
fails_with "inconsistent headers" "columns differ" "$dir/header/rtt"
sed 's/"srtt_us":21.000/"srtt_us":"fast"/' "$dir/json/rtt.1.json" >"$dir/bad.json"
fails_with "non-numeric JSON value" "srtt_us: not a number: 'fast'" "$dir/json/rtt.0.json" "$dir/bad.json"

# udp_pingpong: plain, -wire, and -gso and -signed with a message of 100000 bytes (68 and 72 datagrams, the
# last short); a tool that lost or misplaced a byte exits 1.
pingpong="$dir/udp_pingpong"
if gcc -O2 -o "$pingpong" "$here/../../tools/udp_pingpong.c" -lsodium 2>"$dir/err"; then
    for mode in "8" "-wire 8" "-gso 100000" "-signed 100000"; do
        # shellcheck disable=SC2086  # the mode is its words
        "$pingpong" $mode 200 3 >"$dir/out" 2>"$dir/err"
        rc=$?
        bytes=${mode##* }
        check "udp_pingpong $mode: the message came back intact and its latency is printed" \
            awk -v b="$bytes" -v rc="$rc" 'NR == 1 && $1 == b && $2 > 0 && rc == 0 { ok = 1 } END { exit !ok }' "$dir/out"
    done
    "$pingpong" -gso 0 >"$dir/out" 2>"$dir/err"
    rc=$?
    check "udp_pingpong -gso 0: exit 2 with usage" eval '[ "$rc" -eq 2 ] && grep -q usage "$dir/err"'
else
    bad "udp_pingpong builds"
fi

# syscall_timeline.so under udp_pingpong: both processes (the echo side is a
# fork) write their calls, 220 sends and 220 receives each at least (200
# round trips and the warm-up); timeline_summary reads them, and finds the
# GSO groups of a -gso run; an empty directory is refused with exit status 2.
timeline="$dir/syscall_timeline.so"
summary="$here/../../tools/timeline_summary"
if gcc -O2 -shared -fPIC -o "$timeline" "$here/../../tools/syscall_timeline.c" -ldl 2>"$dir/err" && [ -x "$pingpong" ]; then
    mkdir -p "$dir/tl" "$dir/tl-gso" "$dir/tl-empty"
    LD_PRELOAD="$timeline" RTTCC_TIMELINE_DIR="$dir/tl" "$pingpong" -wire 8 200 1 >"$dir/out" 2>"$dir/err"
    timelines_ok() {  # two files, each with 220 sends and 220 receives of 8 bytes, none ending before it began
        [ "$(ls "$dir"/tl/timeline.* | wc -l)" -eq 2 ] || return 1
        for f in "$dir"/tl/timeline.*; do
            awk '$3 == "S" { s++ } $3 == "R" && $6 == 8 { r++ } $2 < $1 { bad = 1 }
                 END { exit !(s >= 220 && r >= 220 && !bad) }' "$f" || return 1
        done
    }
    check "syscall_timeline: two processes, each with its sends and receives" timelines_ok
    "$summary" "$dir/tl" >"$dir/out" 2>"$dir/err"
    check "timeline_summary: a line per process with its sends and turnaround" \
        awk '/sends \(median [0-9.]+ us\), [0-9]+ receives, 0 error-queue reads, median turnaround [0-9.]+ us/ { n++ } END { exit n != 2 }' "$dir/out"
    LD_PRELOAD="$timeline" RTTCC_TIMELINE_DIR="$dir/tl-gso" "$pingpong" -gso 100000 20 1 >"$dir/out" 2>"$dir/err"
    "$summary" "$dir/tl-gso" --window 60000 --events 10 >"$dir/out" 2>"$dir/err"
    check "timeline_summary --window: the merged timeline around a 64 KiB GSO send" \
        awk '$4 == "S" && $7 >= 60000 && $1 == "0.0" { ok = 1 } END { exit !ok }' "$dir/out"
    "$summary" "$dir/tl-empty" >"$dir/out" 2>"$dir/err"
    rc=$?
    check "timeline_summary on a directory without timelines: exit 2" eval '[ "$rc" -eq 2 ] && grep -q "no timeline" "$dir/err"'
else
    bad "syscall_timeline builds"
fi

# engine_cost: 100000 bytes at an Ethernet MTU are about 70 segments.
cost="$dir/engine_cost"
libdir=$(mpicc --showme:libdirs)
if gcc -O2 -I"$here/../../include" -o "$cost" "$here/../../tools/engine_cost.c" -L"$libdir" -lmca_common_rttcc \
    -Wl,-rpath,"$libdir" 2>"$dir/err"; then
    RTTCC_DATA_MTU=1500 "$cost" 100000 50 3 >"$dir/out" 2>"$dir/err"
    rc=$?
    check "engine_cost 100000: about 70 segments delivered intact, their cost printed" \
        awk -v rc="$rc" 'NR == 2 && $1 == 100000 && $2 >= 60 && $2 <= 80 && $3 > 0 && rc == 0 { ok = 1 } END { exit !ok }' "$dir/out"
    "$cost" 0 >"$dir/out" 2>"$dir/err"
    rc=$?
    check "engine_cost 0: exit 2 with usage" eval '[ "$rc" -eq 2 ] && grep -q usage "$dir/err"'
else
    bad "engine_cost builds against the installed engine"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
