/* Shape helpers of the tensor_slice rules that its kernels share. */
#ifndef ONYX_IR_SCHEMAS_TENSOR_SLICE_H
#define ONYX_IR_SCHEMAS_TENSOR_SLICE_H

#include <stdbool.h>
#include "ir/schema.h"

typedef struct slice_spec {
    int64_t starts[ONYX_MAX_RANK], ends[ONYX_MAX_RANK], axes[ONYX_MAX_RANK], steps[ONYX_MAX_RANK];
    size_t n;
    bool has_axes, has_steps;
} slice_spec;

onyx_status *onyx_tensor_slice_slice_plan(const slice_spec *s, const int64_t *dims, int rank, int64_t *first,
                               int64_t *count, int64_t *step);
int64_t onyx_tensor_slice_clamp64(int64_t v, int64_t lo, int64_t hi);

#endif
