#!/usr/bin/env bash
# Builds every fuzz target (test/fuzz/fuzz_*.cc) with clang (libFuzzer +
# ASan + UBSan), runs each from its seed corpus (corpus/<target>/, written by
# make_corpus.py) for a bounded time, then replays every saved crash input
# (regressions/<target>/*) once.  FUZZ_SECONDS overrides each target's time
# (fuzz_engine 45 s, the others 15 s), FUZZ_RUNS bounds the inputs too,
# FUZZ_TARGETS picks targets by name.  A crash prints the input in hex: keep
# it in regressions/<target>/ once fixed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
runs=${FUZZ_RUNS:-100000000}
targets=${FUZZ_TARGETS:-$(cd "$here" && ls fuzz_*.cc | sed 's/\.cc$//')}
passed=0 failed=0

if ! command -v clang++ >/dev/null; then
    echo "FAIL fuzz: clang++ is missing (Debian package clang)"
    echo "0 passed, 1 failed"
    exit 1
fi
sources=$(make -s -C "$top" print-engine-sources | tr ' ' '\n' | grep -v ofi_wire) ||
    { echo "FAIL fuzz: run ./configure in $top first"; echo "0 passed, 1 failed"; exit 1; }
flags=(-std=c++17 -O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
       -I"$top/include" -I"$top/common" -I"$top/test/unit")
# The engine once, shared by the targets (two compilers at a time).
objs=()
for s in $sources; do
    o="$out/$(echo "${s%.cc}" | tr / _).o"
    clang++ "${flags[@]}" -c "$top/$s" -o "$o" &
    objs+=("$o")
    while [ "$(jobs -rp | wc -l)" -ge 2 ]; do wait -n; done
done
wait

for t in $targets; do
    clang++ "${flags[@]}" -fsanitize=fuzzer "$here/$t.cc" "${objs[@]}" -lsodium -o "$out/$t"
    mkdir -p "$out/corpus-$t"
    cp "$here/corpus/$t"/* "$out/corpus-$t/" 2>/dev/null || true
    # fuzz_engine's and fuzz_exchange's programs are slow to run and need length: full length at once
    case $t in
        fuzz_engine) seconds=${FUZZ_SECONDS:-45} opts=(-max_len=384 -len_control=0) ;;
        fuzz_exchange) seconds=${FUZZ_SECONDS:-15} opts=(-max_len=384 -len_control=0) ;;
        *) seconds=${FUZZ_SECONDS:-15} opts=(-max_len=512) ;;
    esac
    if "$out/$t" -runs="$runs" -max_total_time="$seconds" "${opts[@]}" -seed=1 -print_final_stats=1 \
        -artifact_prefix="$out/" "$out/corpus-$t" >"$out/$t.log" 2>&1; then
        execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$t.log")
        rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$out/$t.log")
        echo "ok $t ($execs inputs, $rate exec/s, $(grep -o 'cov: [0-9]*' "$out/$t.log" | tail -1))"
        passed=$((passed + 1))
    else
        grep -B5 -A30 -E "ERROR|runtime error|deadly" "$out/$t.log" | head -60
        for c in "$out"/crash-* "$out"/timeout-* "$out"/oom-*; do
            [ -e "$c" ] && echo "input: $(basename "$c") $(xxd -p "$c" | tr -d '\n' | head -c 400)"
        done
        echo "FAIL $t"
        failed=$((failed + 1))
    fi
    # Crash inputs kept as regression tests: each must run clean.
    for r in "$here/regressions/$t"/*; do
        [ -e "$r" ] || continue
        if "$out/$t" "$r" >"$out/replay.log" 2>&1; then
            echo "ok $t replays regressions/$t/$(basename "$r")"
            passed=$((passed + 1))
        else
            grep -A20 -E "ERROR|runtime error|deadly" "$out/replay.log" | head -30
            echo "FAIL $t replays regressions/$t/$(basename "$r")"
            failed=$((failed + 1))
        fi
    done
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
