#!/usr/bin/env bash
# Latency and bandwidth of btl rttcc against btl tcp in the same run, plus a
# raw UDP ping-pong on the same path: RUNS alternating runs of each, medians
# per size, ratios.  Extra arguments go to mpirun (e.g. a testbed hostfile).
#
#   bench/compare.sh [-runs N] [-max BYTES] [-testbed] [-cm] [-yield] [-np N]
#                    [-bibw] [-raw FILE] [-- mpirun args]
#
# -testbed: between two namespace hosts of a testbed that is up
# (contrib/testbed/testbed up 2), over veth, instead of loopback.
# -cm: rttcc through pml cm and mtl_rttcc instead of pml ob1 and btl_rttcc.
# -yield: both transports with mpi_yield_when_idle 1, as Open MPI sets it on
# an oversubscribed node.
# -np N: N ranks in pairs 0-1, 2-3, ... that run at once (osu_mbw_mr);
# -bibw: both ranks of a pair send at once (osu_bibw).
# -testbed: from 2 KiB up, each size is also ping-ponged over plain UDP at
# MTU 1500 with GSO and GRO (udp_pingpong -gso, no engine): the floor of any
# UDP transport on that path.  A size whose floor is above 0.9x tcp's
# latency (issue 18's target) is marked "bound".  Each size is also
# ping-ponged as signed datagrams (udp_pingpong -signed: a 72-byte header
# signed with SipHash-2-4 per datagram, staged, checked and copied into
# place, and nothing else): the floor of any transport that authenticates
# every datagram as rttcc does; a size whose signed floor is above 0.9x
# tcp's latency is marked "signed bound".
# -raw FILE: also write "bytes rttcc_us tcp_us rttcc_MBps tcp_MBps" lines
# (the medians) and "# udp US" to FILE, for bench/perf_table.sh.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
runs=5 max=4194304 iface=lo testbed="" stack=ob1 np=2 raw="" bench_args=() extra=()
while (($#)); do
    case $1 in
        -runs) runs=$2; shift 2 ;;
        -max) max=$2; shift 2 ;;
        -testbed) testbed=1 iface=$("$top/contrib/testbed/testbed" subnet); shift ;;
        -cm) stack=cm; shift ;;
        -yield) extra+=(--mca mpi_yield_when_idle 1); shift ;;
        -np) np=$2; shift 2 ;;
        -bibw) bench_args+=(-bibw); shift ;;
        -raw) raw=$2; shift 2 ;;
        --) shift; break ;;
        *) sed -n '2,/^set -euo pipefail/{/^set/!p}' "$0" >&2; exit 2 ;;
    esac
done
extra+=("$@")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mpicc -O2 -o "$work/rttcc_bench" "$top/bench/rttcc_bench.c"
gcc -O2 -o "$work/udp_pingpong" "$top/tools/udp_pingpong.c" -lsodium
libdir=$(mpicc --showme:libdirs | awk '{ print $1 }')
gcc -O2 -I"$top/include" -o "$work/engine_pingpong" "$top/tools/engine_pingpong.c" \
    -L"$libdir" -lmca_common_rttcc -Wl,-rpath,"$libdir"

launch=(mpirun --allow-run-as-root --oversubscribe --mca btl_rttcc_if_include "$iface"
        --mca mtl_rttcc_if_include "$iface" --mca btl_tcp_if_include "$iface")
[ -n "$testbed" ] && launch=("$top/contrib/testbed/mpirun-tb")  # sets the interfaces itself
bench() {  # bench BTL OUT
    local how=(--mca pml ob1 --mca btl "$1,self")
    [ "$1" = rttcc ] && [ "$stack" = cm ] && how=(--mca pml cm --mca mtl rttcc --mca btl self)
    "${launch[@]}" -np "$np" "${how[@]}" "${extra[@]}" \
        "$work/rttcc_bench" -max "$max" -reps 3 "${bench_args[@]}" 2>/dev/null | grep -v '^#' >"$2"
}
# libfabric's own ping-pong over its udp provider on the same path: prints usec/xfer.
fi_pp() {
    command -v fi_pingpong >/dev/null || { echo nan; return; }
    local server=() client=() peer=127.0.0.1
    if [ -n "$testbed" ]; then
        local p=${RTTCC_TB_PREFIX:-rttcc}
        server=(ip netns exec "$p-h2") client=(ip netns exec "$p-h1") peer=${iface%.0/24}.2
    fi
    "${server[@]}" timeout 30 fi_pingpong -p udp -e dgram -S 8 -I 20000 >/dev/null 2>&1 &
    sleep 0.5
    "${client[@]}" timeout 30 fi_pingpong -p udp -e dgram -S 8 -I 20000 "$peer" 2>/dev/null | awk '$1 == 8 { print $7 }'
    wait
}
for ((r = 0; r < runs; ++r)); do
    bench rttcc "$work/rttcc.$r"
    bench tcp "$work/tcp.$r"
    if [ -n "$testbed" ]; then  # between the same two namespace hosts
        p=${RTTCC_TB_PREFIX:-rttcc} net=${iface%.0/24}
        ip netns exec "$p-h1" "$work/udp_pingpong" 8 20000 3 "$net.1" "$p-h2" "$net.2" >>"$work/udp"
        ip netns exec "$p-h1" "$work/udp_pingpong" -wire 8 20000 3 "$net.1" "$p-h2" "$net.2" >>"$work/wire"
        ip netns exec "$p-h1" "$work/engine_pingpong" 8 20000 3 "$net.1" "$p-h2" "$net.2" >>"$work/engine"
        for ((size = 2048; size <= max; size *= 2)); do  # the floor per size (fewer round trips when large)
            for floor in gso signed; do
                ip netns exec "$p-h1" "$work/udp_pingpong" -$floor "$size" $((size >= 1048576 ? 100 : size >= 131072 ? 500 : 2000)) 1 \
                    "$net.1" "$p-h2" "$net.2" >>"$work/$floor.$r" || echo "compare.sh: udp_pingpong -$floor $size failed" >&2
            done
        done
    else
        "$work/udp_pingpong" 8 20000 3 >>"$work/udp"
        "$work/udp_pingpong" -wire 8 20000 3 >>"$work/wire"
        "$work/engine_pingpong" 8 20000 3 >>"$work/engine"
    fi
    fi_pp >>"$work/fi"
done

# median of column COL for each size over the runs of one transport
medians() {
    cat "$work/$1".* | awk -v c="$2" '{ v[$1] = v[$1] " " $c } END { for (s in v) print s, v[s] }' |
        while read -r size vals; do
            printf '%s %s\n' "$size" "$(echo "$vals" | tr ' ' '\n' | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }')"
        done | sort -n
}
medians rttcc 2 >"$work/rl"; medians tcp 2 >"$work/tl"
medians rttcc 3 >"$work/rb"; medians tcp 3 >"$work/tb"
median_of() { sort -g | awk '{ a[NR] = $1 } END { print (NR ? a[int((NR + 1) / 2)] : "nan") }'; }
udp=$( [ -f "$work/udp" ] && awk '{ print $2 }' "$work/udp" | median_of || echo nan)
wire=$( [ -f "$work/wire" ] && awk '{ print $2 }' "$work/wire" | median_of || echo nan)
engine=$( [ -f "$work/engine" ] && awk '{ print $2 }' "$work/engine" | median_of || echo nan)
fi=$(median_of <"$work/fi")

echo "# medians of $runs runs each (rttcc_bench -reps 3 ${bench_args[*]}), $np ranks${extra:+ (${extra[*]})}, ${testbed:+two testbed hosts over veth, }interface $iface; rttcc via pml $stack"
printf '# %-9s %12s %12s %9s %14s %14s %9s %10s %10s %10s %10s\n' bytes rttcc_us tcp_us tcp/rttcc rttcc_MB/s tcp_MB/s rttcc/tcp floor_us floor/tcp signed_us signed/tcp
join "$work/rl" "$work/tl" | join - "$work/rb" | join - "$work/tb" | sort -n >"$work/all"
: >"$work/floor"
: >"$work/signed_floor"
compgen -G "$work/gso.*" >/dev/null && medians gso 2 >"$work/floor"
compgen -G "$work/signed.*" >/dev/null && medians signed 2 >"$work/signed_floor"
awk 'FILENAME == ARGV[1] { f[$1] = $2; next }
     FILENAME == ARGV[2] { g[$1] = $2; next }
     function cols(v, tcp) { return v != "" ? sprintf(" %10.2f %10.2f", v, v / tcp) : sprintf(" %10s %10s", "-", "-") }
     { mark = ($1 in f) && f[$1] / $3 > 0.9 ? " bound" : ($1 in g) && g[$1] / $3 > 0.9 ? " signed bound" : ""
       printf "  %-9s %12.2f %12.2f %9.2f %14.1f %14.1f %9.2f%s%s%s\n", $1, $2, $3, $3 / $2, $4, $5, ($5 > 0 ? $4 / $5 : 0),
              cols(f[$1], $3), cols(g[$1], $3), mark }' \
    "$work/floor" "$work/signed_floor" "$work/all"
r8=$(awk '$1 == 8 { print $2 }' "$work/rl")
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 > 0) printf "%.2f", a / b; else print "n/a" }'; }
echo "# raw UDP ping-pong (tools/udp_pingpong), 8 B, same path: $udp us; rttcc 8 B / raw = $(ratio "$r8" "$udp")"
echo "# the kernel as rttcc's wire uses it (udp_pingpong -wire: two sockets, receive stamps, recvmmsg), 8 B, same path: $wire us; wire / raw = $(ratio "$wire" "$udp")"
echo "# the engine alone (tools/engine_pingpong, no MPI), 8 B, same path: $engine us; engine / raw = $(ratio "$engine" "$udp"), engine / wire = $(ratio "$engine" "$wire"), rttcc / engine = $(ratio "$r8" "$engine")"
echo "# fi_pingpong -p udp -e dgram, 8 B, same path: $fi us; rttcc 8 B / fi_pingpong = $(ratio "$r8" "$fi")"
if [ -n "$raw" ]; then
    { cat "$work/all"; echo "# udp $udp"; echo "# wire $wire"; echo "# engine $engine"; } >"$raw"
fi
