# Shared by the MPI test runners: running mpirun with a time limit and
# checking from rttcc's own counters that rttcc carried the traffic.

# coll_rttcc serves every block size in the tests (by default it hands
# alltoalls of blocks under 64 KiB to coll/tuned); a command line overrides it.
export OMPI_MCA_coll_rttcc_min_bytes=0

# ompi_info_missing FRAMEWORK COMPONENT "PARAMS" "PVARS": prints which of the
# component's MCA parameters and performance variables ompi_info lacks.
ompi_info_missing() {
    local info p missing=""
    info=$(ompi_info --param "$1" "$2" --level 9 2>&1)
    for p in $3; do grep -q "\"${1}_${2}_$p\"" <<<"$info" || missing="$missing $p"; done
    for p in $4; do grep -q "performance \"${1}_${2}_$p\"" <<<"$info" || missing="$missing pvar:$p"; done
    echo "$missing"
}

# rttcc_stats_ok OUTFILE NP: one rttcc-stats line per rank, each with bytes
# sent and received (so no byte between ranks went another way).
rttcc_stats_ok() {
    local out=$1 np=$2 lines
    lines=$(grep -c '^rttcc-stats ' "$out" || true)
    [ "$lines" -eq "$np" ] || { echo "expected $np rttcc-stats lines, found $lines"; return 1; }
    awk '/^rttcc-stats / {
            tx = rx = -1
            for (i = 2; i <= NF; ++i) { split($i, kv, "="); if (kv[1] == "bytes_tx") tx = kv[2]; if (kv[1] == "bytes_rx") rx = kv[2] }
            if (tx <= 0 || rx <= 0) { print "a rank moved no bytes through rttcc: " $2; bad = 1 }
         } END { exit bad }' "$out"
}

# stats_sum OUTFILE FIELD [KIND]: FIELD summed over the rttcc-stats lines
# (or the rttcc-KIND lines: rttcc-mtl has mtl_rttcc's counters).
stats_sum() {
    awk -v f="$2" -v kind="^rttcc-${3:-stats} " '$0 ~ kind { for (i = 2; i <= NF; ++i) { split($i, kv, "="); if (kv[1] == f) s += kv[2] } } END { print s + 0 }' "$1"
}

# scratch_dir NAME: sets $build to a new /tmp/rttcc-NAME.* directory that is
# removed, with every process started from it, when the script exits; first
# kills what an interrupted run of the same script left running.
scratch_dir() {
    pkill -KILL -f "/tmp/rttcc-$1\.[A-Za-z0-9]+/" 2>/dev/null || true
    rm -rf /tmp/rttcc-"$1".*
    build=$(mktemp -d "/tmp/rttcc-$1.XXXXXX")
    trap 'scratch_cleanup' EXIT
    trap 'exit 130' INT TERM
}
scratch_cleanup() {
    pkill -KILL -f "$build/" 2>/dev/null || true
    [ "$(type -t extra_cleanup)" = function ] && extra_cleanup
    rm -rf "$build"
}

# Counting results: ok TEXT, bad TEXT (shows the tail of $build/out), summary.
passed=0
failed=0
ok() { echo "ok $1"; passed=$((passed + 1)); }
bad() {
    echo "FAIL $1"
    [ -f "$build/out" ] && tail -n 15 "$build/out" | sed 's/^/    /'
    failed=$((failed + 1))
}
summary() {
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ]
}
