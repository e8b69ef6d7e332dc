/* Shape helpers of the tensor_index rules that its kernels share. */
#ifndef ONYX_IR_SCHEMAS_TENSOR_INDEX_H
#define ONYX_IR_SCHEMAS_TENSOR_INDEX_H

#include "ir/schema.h"

onyx_status *onyx_tensor_index_gather_shape(const int64_t *dd, int r, const int64_t *id, int q, int axis,
                                 int64_t *dims, int *rank);

#endif
