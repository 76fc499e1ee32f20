#!/bin/sh
# rank1_setting.sh NAME VALUE PROGRAM [ARGS]: runs PROGRAM with the MCA
# parameter NAME set to VALUE in rank 1 only (ranks started with different
# settings).
name=$1 value=$2
shift 2
if [ "${OMPI_COMM_WORLD_RANK:-}" = 1 ]; then
    export "OMPI_MCA_$name=$value"
fi
exec "$@"
