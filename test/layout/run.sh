#!/usr/bin/env bash
# The house rules of docs/design.md's map, checked on the built tree and the
# installed components:
#   - components include only their own headers, include/rttcc/ and Open
#     MPI's; the engine (common/) includes no Open MPI header;
#   - each public header of include/rttcc/ is header-only or pairs with
#     common/api/<name>.cc;
#   - libmca_common_rttcc exports only rttcc_*, each component only its
#     component structure, and no component carries engine code of its own;
#   - the engine's parameters are registered once: ompi_info lists every one
#     under btl rttcc and mtl rttcc as a synonym of rttcc_<name>, and the old
#     names as deprecated synonyms.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
passed=0
failed=0
ok() { echo "ok $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1"; [ -n "${2:-}" ] && echo "$2" | head -n 10 | sed 's/^/    /'; failed=$((failed + 1)); }
cd "$top" || exit 1

# ---------------------------------------------------------------- includes
components=(btl_rttcc mtl_rttcc coll_rttcc)
for c in "${components[@]}"; do
    stray=$(grep -Hn '^#include "' "$c"/*.[ch] | grep -v -E '#include "('"$c"'[a-z_]*\.h|rttcc/[a-z_]+\.h|(opal|ompi)/[^"]+|(opal|ompi)_config\.h|mpi\.h)"')
    if [ -z "$stray" ]; then ok "$c includes its own headers, rttcc/ and Open MPI's only"; else bad "$c reaches elsewhere" "$stray"; fi
done
stray=$(grep -rHn -E '^#include [<"](opal|ompi|mpi)[/._]' common include/rttcc --include='*.h' --include='*.cc' | grep -v '^include/rttcc/mca.h:')
if [ -z "$stray" ]; then ok "the engine (common/, include/rttcc/ but mca.h) includes no Open MPI header"; else bad "Open MPI headers in the engine" "$stray"; fi

# Inside common/, includes run down the floors of the map only:
# api > engine, exchange, matcher > cc, rma, wire > clock > util.
declare -A floor=([util]=0 [clock]=1 [cc]=2 [rma]=2 [wire]=2 [engine]=3 [exchange]=4 [matcher]=4 [api]=5)
upward=""
for d in "${!floor[@]}"; do
    while IFS= read -r line; do
        to=$(sed -E 's|.*#include "([a-z]+)/.*|\1|' <<<"$line")
        [ -n "${floor[$to]:-}" ] || continue
        if [ "$to" != "$d" ] && [ "${floor[$to]}" -ge "${floor[$d]}" ]; then upward="$upward"$'\n'"$line"; fi
    done < <(grep -Hn '^#include "[a-z]*/' common/"$d"/*)
done
if [ -z "$upward" ]; then ok "common/'s folders include only folders below them"; else bad "includes up or across" "$upward"; fi

# ---------------------------------------------------------------- pairing
unpaired=""
for h in include/rttcc/*.h; do
    name=$(basename "$h" .h)
    case $name in
        tags | handoff)  # header-only: no rttcc_ function that is not static inline
            grep -E '^[a-z].*\brttcc_[a-z_]+\(' "$h" | grep -qv '^static inline' &&
                unpaired="$unpaired $h(declares functions)" ;;
        mca) ;;                                                                                # glue/, Open MPI side
        *) [ -f "common/api/$name.cc" ] || unpaired="$unpaired $h" ;;
    esac
done
if [ -z "$unpaired" ]; then ok "every public header pairs with common/api/<name>.cc or is header-only"; else bad "unpaired:$unpaired"; fi

# ---------------------------------------------------------------- symbols
lib=.libs/libmca_common_rttcc.so
if [ ! -f "$lib" ]; then
    bad "no $lib: build first (make)"
else
    extra=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -v '^rttcc_')
    if [ -z "$extra" ]; then ok "libmca_common_rttcc exports rttcc_* only ($(nm -D --defined-only "$lib" | wc -l) symbols)"
    else bad "libmca_common_rttcc exports more than rttcc_*" "$extra"; fi
    for c in btl mtl coll; do
        so=.libs/mca_${c}_rttcc.so
        extra=$(nm -D --defined-only "$so" | awk '{print $3}' | grep -v -E "^(mca_${c}_rttcc_component|_init|_fini)$")
        engine=$(nm -C --defined-only "$so" | grep -c 'rttcc::')
        if [ -z "$extra" ] && [ "$engine" -eq 0 ]; then ok "mca_${c}_rttcc exports its component only and holds no engine code"
        else bad "mca_${c}_rttcc: exports [$extra], $engine engine symbols"; fi
    done
fi

# ---------------------------------------------------------------- parameters
names=$(printf '#include "rttcc/config.h"\n#define N(name, ...) PARAM name\nRTTCC_PARAMS(N)\n' |
        cpp -P -I include - | tr ' ' '\n' | grep -A1 '^PARAM$' | grep -v -E '^(PARAM|--)$')
count=$(echo "$names" | wc -w)
for fw in btl mtl; do
    info=$(ompi_info --param "$fw" rttcc --level 9 2>&1)
    missing=""
    for n in $names; do
        grep -q "parameter \"${fw}_rttcc_$n\" .*synonym of: rttcc_$n)" <<<"$info" || missing="$missing $n"
    done
    for old in probe_interval probe_startup_delay ptp_max_offset; do
        grep -q "parameter \"${fw}_rttcc_$old\" .*synonym of: rttcc_${old}_" <<<"$info" || missing="$missing $old(old name)"
    done
    if [ "$count" -gt 50 ] && [ -z "$missing" ]; then
        ok "ompi_info --param $fw rttcc: the $count engine parameters, each a synonym of rttcc_<name>, and the old names"
    else
        bad "ompi_info --param $fw rttcc (of $count):$missing"
    fi
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
