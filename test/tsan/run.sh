#!/usr/bin/env bash
# The engine's unit tests under ThreadSanitizer, with the engine locked as
# under MPI_THREAD_MULTIPLE (RTTCC_TEST_THREAD_SAFE) and, in the liveness
# agent's tests, a second thread in every engine: any data race it reports
# fails the test.  Builds its own copy of the engine (the sources the
# Makefile lists) with -fsanitize=thread.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=$(mktemp -d /tmp/rttcc-tsan.XXXXXX)
trap 'rm -rf "$out"' EXIT
passed=0
failed=0

sources=$(make -s -C "$top" print-engine-sources) && tests=$(make -s -C "$top" print-engine-tests) ||
    { echo "FAIL tsan: run ./configure in $top first"; echo "0 passed, 1 failed"; exit 1; }
flags=(-std=c++17 -O1 -g -fsanitize=thread -I"$top/include" -I"$top/common" -I"$top/test/unit" $(pkg-config --cflags cmocka libsodium))
libs=($(pkg-config --libs cmocka libsodium) -lpthread)
if pkg-config --exists libfabric; then
    flags+=(-DRTTCC_HAVE_OFI $(pkg-config --cflags libfabric))
    libs+=($(pkg-config --libs libfabric))
fi
objs=()
for src in $sources; do
    obj="$out/$(echo "${src%.cc}" | tr / _).o"
    g++ "${flags[@]}" -c "$top/$src" -o "$obj" || { echo "FAIL tsan: build $src"; echo "0 passed, 1 failed"; exit 1; }
    objs+=("$obj")
done
for t in $tests; do
    name=$(echo "${t#test/unit/}" | tr / _)
    case $name in
        engine_test_engine*|*_test_exchange|engine_test_mac) ;;  # the ones with engines (and threads)
        *) continue ;;
    esac
    # its own link flags, as test/Makefile.inc gives them (test_engine_nomem's --wrap=malloc)
    # (make's own variables in it, such as $(AM_LDFLAGS), are left out)
    read -ra extra <<<"$(sed -n "s|^$(echo "$t" | tr / _)_LDFLAGS = ||p" "$top/test/Makefile.inc" | sed 's/\$([A-Z_]*)//g')"
    if ! g++ "${flags[@]}" "$top/$t.cc" "${objs[@]}" "${libs[@]}" "${extra[@]}" -o "$out/$name"; then
        echo "FAIL tsan: build $name"
        failed=$((failed + 1))
        continue
    fi
    if RTTCC_TEST_THREAD_SAFE=1 TSAN_OPTIONS="halt_on_error=1 exitcode=66" "$out/$name" >"$out/$name.log" 2>&1; then
        echo "ok $name under ThreadSanitizer, engines locked ($(grep -c '^\[       OK \]' "$out/$name.log") tests)"
        passed=$((passed + 1))
    else
        echo "FAIL $name under ThreadSanitizer"
        grep -A25 -E "WARNING: ThreadSanitizer|FAILED|ERROR" "$out/$name.log" | head -60
        failed=$((failed + 1))
    fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
