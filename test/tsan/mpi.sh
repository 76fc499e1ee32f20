#!/usr/bin/env bash
# The MPI tests that run rttcc on more than one thread, under
# ThreadSanitizer: application threads under MPI_THREAD_MULTIPLE (btl and
# mtl), and the liveness agent's thread beside a rank that computes outside
# MPI.  rttcc's components and engine are built with -fsanitize=thread into
# a scratch prefix and loaded ahead of the installed ones
# (mca_base_component_path); libtsan is preloaded into the uninstrumented
# Open MPI, whose own accesses are not checked (ignore_noninstrumented_modules)
# and whose lock-free internals are suppressed (openmpi.supp).  Any report
# fails the test; the loader's log proves the instrumented components were
# the ones loaded.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
source "$top/test/mpi/lib.sh"
scratch_dir tsan-mpi

tsan=$(gcc -print-file-name=libtsan.so)
tsan=$(readlink -f "$tsan")
installed=$(cd "$top" && make -s print-componentdir 2>/dev/null) ||
    { echo "FAIL tsan-mpi: run ./configure in $top first"; echo "0 passed, 1 failed"; exit 1; }

# A copy of the sources (the tree here is configured for the normal build).
mkdir -p "$build/src"
(cd "$top" && git ls-files -z | xargs -0 tar -cf -) | tar -C "$build/src" -xf - ||
    { echo "FAIL tsan-mpi: copy the sources"; echo "0 passed, 1 failed"; exit 1; }
flags="-O1 -g -fsanitize=thread"
if ! (cd "$build/src" && autoreconf -fi && ./configure --prefix="$build/prefix" CFLAGS="$flags" \
          CXXFLAGS="$flags -Wno-tsan" LDFLAGS=-fsanitize=thread LIBS=-ltsan && make -j2 && make install) \
        >"$build/build.log" 2>&1; then
    tail -n 30 "$build/build.log"
    echo "FAIL tsan-mpi: build with -fsanitize=thread"
    echo "0 passed, 1 failed"
    exit 1
fi
for p in thread_multiple busy_peer; do
    mpicc -O1 -g -o "$build/$p" "$top/test/mpi/$p.c" -lpthread || { echo "0 passed, 1 failed"; exit 1; }
done

# tsan_run LABEL NP PROGRAM-AND-ARGS... (MPIRUN-ARGS before "--")
tsan_run() {
    local label=$1 np=$2 name=$3 args=() prog=()
    shift 3
    while (($#)) && [ "$1" != -- ]; do args+=("$1"); shift; done
    shift
    prog=("$@")
    rm -f "$build"/ld.* "$build"/tsan.*
    timeout -k 5 300 mpirun --allow-run-as-root --oversubscribe -np "$np" \
        --mca mca_base_component_path "$build/prefix/lib/openmpi:$installed" \
        -x LD_PRELOAD="$tsan" -x TSAN_OPTIONS="log_path=$build/tsan exitcode=66 ignore_noninstrumented_modules=1 suppressions=$here/openmpi.supp" \
        -x LD_DEBUG=files -x LD_DEBUG_OUTPUT="$build/ld" --mca op ^avx "${args[@]}" "${prog[@]}" >"$build/out" 2>&1
    local rc=$? reports loaded
    reports=$(cat "$build"/tsan.* 2>/dev/null | grep -c 'WARNING: ThreadSanitizer')
    loaded=$(grep -l "file=$build/prefix/lib/openmpi/mca_${label}_rttcc.so" "$build"/ld.* 2>/dev/null | wc -l)
    if [ "$rc" -eq 0 ] && grep -q "^PASS $name" "$build/out" && [ "$reports" -eq 0 ] && [ "$loaded" -ge "$np" ]; then
        ok "$name over ${label}_rttcc under ThreadSanitizer (${args[*]}): no reports, instrumented $label in $loaded processes"
    else
        bad "$name over ${label}_rttcc under ThreadSanitizer (${args[*]}): exit $rc, $reports reports, instrumented $label in $loaded of $np processes"
        cat "$build"/tsan.* 2>/dev/null | grep -A30 'WARNING: ThreadSanitizer' | head -n 80 | sed 's/^/    /'
    fi
}

btl=(--mca pml ob1 --mca btl rttcc,self)
mtl=(--mca pml cm --mca mtl rttcc --mca btl self)
tsan_run btl 2 thread_multiple "${btl[@]}" -- "$build/thread_multiple"
tsan_run mtl 2 thread_multiple "${mtl[@]}" -- "$build/thread_multiple"
# The agent works beside the computing rank: quiet passes, BUSY, resume.
tsan_run btl 2 busy_peer "${btl[@]}" --mca btl_rttcc_peer_timeout_ms 1000 -- \
    "$build/busy_peer" -when inflight -size 1048576 -busy 2 -count 4
tsan_run mtl 2 busy_peer "${mtl[@]}" --mca mtl_rttcc_peer_timeout_ms 1000 -- \
    "$build/busy_peer" -when before -size 1048576 -busy 2
summary
