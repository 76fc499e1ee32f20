/*
 * What mtl_rttcc keeps for each process it reaches, in
 * proc->proc_endpoints[OMPI_PROC_ENDPOINT_TAG_MTL]: coll_rttcc reads it to
 * learn that (and as which engine peer) a process is reached under pml/cm.
 */
#ifndef MCA_MTL_RTTCC_ENDPOINT_H
#define MCA_MTL_RTTCC_ENDPOINT_H

#include <stdint.h>

#define MCA_MTL_RTTCC_ENDPOINT_MAGIC 0x72747463u /* "rttc": the endpoint is ours */

typedef struct mca_mtl_rttcc_endpoint_t {
    uint32_t magic;
    uint32_t index; /* the engine's name for the process (its vpid) */
} mca_mtl_rttcc_endpoint_t;

#endif
