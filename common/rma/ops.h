// The element-wise math of MPI accumulates: rttcc/rma.h's element types
// (RTTCC_RMA_TYPES) and ops (rttcc_rma_op_t), applied to plain memory.  Pure:
// the caller takes whatever lock makes an update atomic.
#pragma once
#include <cstddef>

#include "rttcc/rma.h"

namespace rttcc {

// Bytes of one element of `type` (0 for a code out of range).
size_t rma_type_size(int type);

// Does MPI (3.1, 5.9.2) allow `op` on `type`?
bool rma_op_valid(int op, int type);

// dst[i] = dst[i] op src[i] for `count` elements of `type`, with the old
// dst copied to `old` first when old != nullptr.  No buffer need be aligned
// (nor valid for count 0); src may be dst itself but must not overlap it
// otherwise.  RTTCC_ERR_ARG (and nothing written) for a pair rma_op_valid
// refuses, else RTTCC_OK.
int rma_apply(int op, int type, void *dst, const void *src, size_t count, void *old);

// Names for messages: "MPI_SUM", "int32" ("unknown" for a code out of range).
const char *rma_op_name(int op);
const char *rma_type_name(int type);

}  // namespace rttcc
