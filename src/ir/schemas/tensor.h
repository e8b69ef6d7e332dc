/* Shape helpers of the tensor rules that its kernels share. */
#ifndef ONYX_IR_SCHEMAS_TENSOR_H
#define ONYX_IR_SCHEMAS_TENSOR_H

#include "ir/schema.h"

onyx_status *onyx_tensor_unsqueeze_dims(const int64_t *in, int rank, const int64_t *axes, size_t n,
                                   int64_t *out, int *out_rank);
onyx_status *onyx_tensor_read_perm(const onyx_node *node, int rank, int *perm);
onyx_status *onyx_tensor_flatten_axis(int opset, int64_t axis, int rank, int *out);

#endif
