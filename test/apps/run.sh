#!/usr/bin/env bash
# A real application over rttcc: the HPC Challenge suite (Debian's hpcc:
# HPL, PTRANS, MPIRandomAccess, MPIFFT, DGEMM, STREAM, ping-pong and ring
# latency and bandwidth), 4 ranks on one host, so oversubscribed on a
# 2-core machine (Open MPI then turns mpi_yield_when_idle on): the traffic
# of dense linear algebra, a matrix transpose, random updates in small
# messages and an FFT's alltoalls (coll_rttcc), not a benchmark's.  Each run
# must pass hpcc's own checks (HPL's and PTRANS's residuals, RandomAccess's
# errors, the FFT's error) and rttcc must have carried every rank's bytes.
#
#   test/apps/run.sh          (needs the hpcc package; skips without it)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
source "$top/test/mpi/lib.sh"
scratch_dir apps
command -v hpcc >/dev/null || { echo "skip: hpcc is not installed (Debian package hpcc)"; echo "0 passed, 0 failed"; exit 0; }

# hpccinf N THRESHOLD: hpcc's input for an HPL of order N on a 2 x 2 grid
# (the other kernels size themselves from N); a residual above THRESHOLD
# fails HPL's and PTRANS's checks.
hpccinf() {
    cat <<EOF
HPLinpack benchmark input file
rttcc test/apps
HPL.out      output file name (if any)
8            device out (6=stdout,7=stderr,file)
1            # of problems sizes (N)
$1           Ns
1            # of NBs
80           NBs
0            PMAP process mapping (0=Row-,1=Column-major)
1            # of process grids (P x Q)
2            Ps
2            Qs
$2           threshold
1            # of panel fact
2            PFACTs (0=left, 1=Crout, 2=Right)
1            # of recursive stopping criterium
4            NBMINs (>= 1)
1            # of panels in recursion
2            NDIVs
1            # of recursive panel fact.
1            RFACTs (0=left, 1=Crout, 2=Right)
1            # of broadcast
1            BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)
1            # of lookahead depth
1            DEPTHs (>=0)
2            SWAP (0=bin-exch,1=long,2=mix)
64           swapping threshold
0            L1 in (0=transposed,1=no-transposed) form
0            U  in (0=transposed,1=no-transposed) form
1            Equilibration (0=no,1=yes)
8            memory alignment in double (> 0)
EOF
}

# checks DIR: hpcc's verdicts in DIR/hpccoutf.txt; prints what failed.
checks() {
    local f=$1/hpccoutf.txt
    [ -s "$f" ] || { echo "no hpccoutf.txt"; return 1; }
    grep -q '^End of Summary section' "$f" || { echo "hpcc did not finish its summary"; return 1; }
    grep -q '^Success=1$' "$f" || { echo "hpcc's Success is not 1"; return 1; }
    ! grep -q 'FAILED' "$f" || { echo "a residual check FAILED: $(grep -m1 FAILED "$f")"; return 1; }
    [ "$(grep -c '\.\.\.\.\.\. PASSED' "$f")" -ge 1 ] || { echo "no HPL residual PASSED"; return 1; }
    [ "$(grep -c '^WALL .* PASSED' "$f")" -ge 1 ] || { echo "no PTRANS residual PASSED"; return 1; }
    awk -F= '
        $1 == "MPIRandomAccess_Errors" || $1 == "MPIRandomAccess_LCG_Errors" { seen++; if ($2 != 0) { print $1 "=" $2; bad = 1 } }
        $1 == "MPIFFT_maxErr" { seen++; if (!($2 ~ /^[0-9.eE+-]+$/ && $2 + 0 <= 1e-10)) { print $1 "=" $2; bad = 1 } }
        END { if (seen != 3) { print "missing RandomAccess or FFT results"; bad = 1 } exit bad }' "$f"
}

# hpcc_case NAME N THRESHOLD STACK [mpirun args...]: hpcc on 4 ranks in
# $build/NAME; output in $build/out.
hpcc_case() {
    local name=$1 n=$2 threshold=$3 stack=$4
    shift 4
    local dir=$build/$name
    mkdir -p "$dir" && hpccinf "$n" "$threshold" >"$dir/hpccinf.txt"
    (cd "$dir" && timeout -k 5 300 mpirun --allow-run-as-root --oversubscribe -np 4 $stack "$@" hpcc) >"$build/out" 2>&1
}

ob1="--mca pml ob1 --mca btl rttcc,self --mca btl_rttcc_if_include lo --mca btl_rttcc_stats 1"
cm="--mca pml cm --mca mtl rttcc --mca btl self --mca mtl_rttcc_if_include lo --mca mtl_rttcc_stats 1"
fault="--mca btl_rttcc_fault_drop 10000 --mca btl_rttcc_fault_dup 10000 --mca btl_rttcc_fault_reorder 10000"

# name:N:stack:extra mpirun arguments
plan=(
    "ob1-btl:1000:$ob1:"
    "cm-mtl:1000:$cm:"
    "ob1-btl-loss:600:$ob1:$fault"
)
for entry in "${plan[@]}"; do
    IFS=: read -r name n stack extra <<<"$entry"
    t0=$SECONDS
    if ! hpcc_case "$name" "$n" 16.0 "$stack" $extra; then
        bad "hpcc $name (N=$n): mpirun failed"
    elif ! why=$(checks "$build/$name"); then
        bad "hpcc $name (N=$n): $why"
    elif ! why=$(rttcc_stats_ok "$build/out" 4); then
        bad "hpcc $name (N=$n): $why"
    elif [ -n "$extra" ] && [ "$(stats_sum "$build/out" retx)" -eq 0 ]; then
        bad "hpcc $name (N=$n): the injected drops were never repaired (no resends)"
    else
        ok "hpcc $name (N=$n): every check passed, rttcc carried every rank's bytes, $(stats_sum "$build/out" retx) resent ($((SECONDS - t0)) s)"
    fi
done

# The checks can fail: a residual threshold of 0 fails HPL's and PTRANS's.
if hpcc_case selftest 240 0.0 "$ob1" && ! why=$(checks "$build/selftest"); then
    ok "self-test: a failed residual check is noticed ($why)"
else
    bad "self-test: hpcc with threshold 0 passed the checks"
fi
summary
