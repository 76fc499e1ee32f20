#!/bin/sh
# rank1_setting.sh NAME VALUE [NAME VALUE ...] -- PROGRAM [ARGS]: runs
# PROGRAM with each MCA parameter NAME set to VALUE in rank 1 only (ranks
# started with different settings).
while [ "$#" -ge 2 ] && [ "$1" != -- ]; do
    if [ "${OMPI_COMM_WORLD_RANK:-}" = 1 ]; then
        export "OMPI_MCA_$1=$2"
    fi
    shift 2
done
[ "${1:-}" = -- ] || { echo "usage: rank1_setting.sh NAME VALUE [NAME VALUE ...] -- PROGRAM [ARGS]" >&2; exit 2; }
shift
exec "$@"
