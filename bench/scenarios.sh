# shellcheck shell=bash disable=SC2154  # the caller sets the knobs (below)
# Sourced by bench/coll_table.sh and bench/osc_compare.sh: the testbed
# scenarios a-d that coll_table.sh describes (its header has what each is).
# The caller sets, before calling any of these:
#   top                  the source tree
#   RTTCC_TB_PREFIX      (exported) the testbed's prefix, its own per script
#   work                 a scratch directory holding udp_flood (bench/udp_flood.c)
#   fast slow link queue flood flood_on flood_off   the scenarios' knobs
tb=$top/contrib/testbed/testbed
flood_pid=""

# Processes left in the testbed's namespaces (ranks, daemons, the flooder of
# an interrupted run), then the namespaces and links themselves.
clear_testbed() {
    local ns
    for ns in $(ip netns list | awk -v p="^$RTTCC_TB_PREFIX-h[0-9]+$" '$1 ~ p { print $1 }'); do
        ip netns pids "$ns" 2>/dev/null | xargs -r kill -KILL 2>/dev/null || true
    done
    "$tb" down 2>/dev/null || true
    rm -rf /tmp/ompi."$RTTCC_TB_PREFIX"-h[0-9]*   # Open MPI session directories of killed daemons
}

# The hosts' first three octets.
subnet3() { local s; s=$("$tb" subnet); echo "${s%.0/24}"; }

# The testbed scenario S runs on.
setup() {
    case $1 in
        a | b) "$tb" up 4 >/dev/null ;;
        c) "$tb" up 4 --groups 2 >/dev/null ;;
        d) "$tb" up 6 >/dev/null ;;   # h5 floods; h6 is the free run's sink
    esac
}

# Before every run: S's shaping anew (so the drop counters are the run's own).
# With a second argument "free", S without its bottleneck: h2 at -fast in b,
# the groups' join link unshaped in c, and in d the same links (flood_start
# free sends the flood to h6 instead).
reshape() {
    local h p=$RTTCC_TB_PREFIX free=${2:-}
    case $1 in
        a) ;;
        b) for h in 1 2 3 4; do
               "$tb" unshape "$p-h$h"
               "$tb" shape "$p-h$h" "$([ "$h" = 2 ] && [ -z "$free" ] && echo "$slow" || echo "$fast")" "$queue"
           done ;;
        c | d) for h in 1 2 3 4 $([ "$1" = d ] && echo 6); do
               "$tb" unshape "$p-h$h"
               "$tb" shape "$p-h$h" "$fast" "$queue"
           done
           if [ "$1" = c ]; then
               "$tb" unshape-link 2
               [ -n "$free" ] || "$tb" shape-link 2 "$link" "$queue"
           fi ;;
    esac
}

# Scenario d's background flood from h5 towards h2, until flood_stop; with a
# second argument "free", towards h6 instead, which holds no rank and whose
# link is shaped as h2's: the same path through the kernel, so the same CPU
# (on two cores with four busy ranks that CPU is what holds the flood back:
# it sends about half its rate), but across no rank's link.
flood_start() {
    [ "$1" = d ] || return 0
    local dst
    dst=$(subnet3).$([ "${2:-}" = free ] && echo 6 || echo 2)
    ip netns exec "$RTTCC_TB_PREFIX-h5" "$work/udp_flood" -dst "$dst" -rate "$flood" -on "$flood_on" \
        -off "$flood_off" >"$work/flood" 2>&1 &
    flood_pid=$!
}
# Before every run: S's shaping anew and its flood; with "free", S without
# its bottleneck (reshape and flood_start free).
start_run() {
    reshape "$@"
    flood_start "$@"
}

# Stops the flood (if any) and appends its report to file $1.
flood_stop() {
    [ -n "$flood_pid" ] || return 0
    kill "$flood_pid" 2>/dev/null || true
    wait "$flood_pid" 2>/dev/null || true
    flood_pid=""
    cat "$work/flood" >>"$1"
}

# Packets dropped by the scenario's bottleneck queue(s) in the run, both directions.
drops() {
    local s
    case $1 in
        a) echo 0; return ;;
        b | d) s=$("$tb" stats "$RTTCC_TB_PREFIX-h2") ;;
        c) s=$("$tb" stats-link 2) ;;
    esac
    tr ' ' '\n' <<<"$s" | awk -F= '/dropped/ { n += $2 } END { print n + 0 }'
}

describe() {
    case $1 in
        a) echo "a: homogeneous, unshaped veth links" ;;
        b) echo "b: h2's link at $slow, h1,h3,h4 at $fast, $queue-packet queues" ;;
        c) echo "c: groups {h1,h2} and {h3,h4} joined by one $link link, hosts at $fast, $queue-packet queues" ;;
        d) echo "d: hosts at $fast, $queue-packet queues; h5 floods h2 with UDP at $flood Mbit/s, ${flood_on} s on / ${flood_off} s off" ;;
    esac
}

# A tc rate (100mbit, 1gbit, 500kbit, 200000bit) in bit/s.
bits_per_s() {
    awk -v r="$1" 'BEGIN { n = r + 0; u = tolower(r); sub(/^[0-9.]+/, "", u)
                          f = (u == "kbit") ? 1e3 : (u == "mbit") ? 1e6 : (u == "gbit") ? 1e9 : 1; print n * f }'
}
# The rate of scenario S's bottleneck (bit/s), for the line bound; 0 in a.
neck_rate() {
    case $1 in
        b) bits_per_s "$slow" ;;
        c) bits_per_s "$link" ;;
        d) awk -v f="$(bits_per_s "$fast")" -v m="$flood" -v on="$flood_on" -v off="$flood_off" \
               'BEGIN { print f - m * 1e6 * on / (on + off) }' ;;
        *) echo 0 ;;
    esac
}

# The bound's coll_bench arguments in scenario S (none in a: no bottleneck).
bound_args() {
    case $1 in
        b | d) echo "-through 1" ;;
        c) echo "-across 2" ;;
    esac
}
