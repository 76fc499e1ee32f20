# Shared by the MPI test runners: running mpirun with a time limit and
# checking from rttcc's own counters that rttcc carried the traffic.

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

# stats_sum OUTFILE FIELD: FIELD summed over the rttcc-stats lines.
stats_sum() {
    awk -v f="$2" '/^rttcc-stats / { for (i = 2; i <= NF; ++i) { split($i, kv, "="); if (kv[1] == f) s += kv[2] } } END { print s + 0 }' "$1"
}
