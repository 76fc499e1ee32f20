#!/usr/bin/env bash
# Builds the receive-path fuzzer with clang (libFuzzer + ASan + UBSan) and
# runs a bounded number of iterations.  FUZZ_RUNS overrides the count.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
runs=${FUZZ_RUNS:-40000}

if ! command -v clang++ >/dev/null; then
    echo "FAIL fuzz: clang++ is missing (Debian package clang)"
    echo "0 passed, 1 failed"
    exit 1
fi
sources=$(make -s -C "$top" print-engine-sources | tr ' ' '\n' | grep -v ofi_wire) ||
    { echo "FAIL fuzz: run ./configure in $top first"; echo "0 passed, 1 failed"; exit 1; }
# shellcheck disable=SC2046
clang++ -std=c++17 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -I"$top/common" -I"$top/test/unit" "$here/fuzz_rx.cc" $(printf "$top/%s " $sources) -lsodium -o "$out/fuzz_rx"
mkdir -p "$out/corpus"
cp "$here"/corpus/* "$out/corpus/" 2>/dev/null || true
if "$out/fuzz_rx" -runs="$runs" -max_len=1024 -max_total_time=120 -seed=1 -print_final_stats=1 "$out/corpus" >"$out/log" 2>&1; then
    echo "ok fuzz_rx ($(sed -n 's/^stat::number_of_executed_units: *//p' "$out/log") inputs, $(grep -o 'cov: [0-9]*' "$out/log" | tail -1))"
    echo "1 passed, 0 failed"
else
    grep -B5 -A30 -E "ERROR|runtime error|deadly" "$out/log" | head -60
    echo "FAIL fuzz_rx"
    echo "0 passed, 1 failed"
    exit 1
fi
