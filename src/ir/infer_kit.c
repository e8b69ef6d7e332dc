/* Small readers shared by the inference rules and the tensor kernels. */
#include <inttypes.h>
#include <string.h>
#include "ir/infer_kit.h"

onyx_status *tk_read_ints(const onyx_value *v, const char *what, bool allow_scalar, int64_t *vals,
                          size_t max, size_t *count) {
    if (!onyx_is_tensor(v)) return ONYX_INVALID_ARG("%s must be a tensor", what);
    if (!tk_is_index_type(v->dtype))
        return ONYX_INVALID_ARG("%s must be an int64 (or int32) tensor, got %s", what,
                                onyx_dtype_name(v->dtype));
    if (v->rank != 1 && !(allow_scalar && v->rank == 0)) {
        char sb[128];
        return ONYX_INVALID_ARG("%s must be 1-D, got shape %s", what, onyx_shape_str(v->dims, v->rank, sb, sizeof sb));
    }
    if (v->numel > (int64_t)max)
        return ONYX_INVALID_ARG("%s has %" PRId64 " values, at most %zu are allowed", what,
                                v->numel, max);
    if (v->numel && !v->data) return ONYX_INVALID_ARG("%s has no data", what);
    for (int64_t i = 0; i < v->numel; i++) vals[i] = tk_index_at(v, i);
    *count = (size_t)v->numel;
    return NULL;
}

onyx_status *tk_normalize_axes(const int64_t *axes, size_t n, int rank, const char *what,
                               int *out) {
    bool seen[ONYX_MAX_RANK + 1] = {false};
    for (size_t i = 0; i < n; i++) {
        if (axes[i] < -(int64_t)rank || axes[i] >= rank)
            return ONYX_INVALID_ARG("%s[%zu] = %" PRId64 " is out of range [%d, %d] for rank %d",
                                    what, i, axes[i], -rank, rank - 1, rank);
        int a = (int)(axes[i] < 0 ? axes[i] + rank : axes[i]);
        if (seen[a]) return ONYX_INVALID_ARG("%s repeats axis %d", what, a);
        seen[a] = true;
        out[i] = a;
    }
    return NULL;
}


void tk_type_tensor(onyx_type *out, int dtype, int rank) {
    memset(out, 0, sizeof *out);
    out->kind = ONYX_VALUE_TENSOR;
    out->dtype = onyx_dtype_valid(dtype) ? (uint8_t)dtype : 0;  /* a file's data_type may be anything */
    out->rank = rank;
    for (int i = 0; i < ONYX_MAX_RANK; i++) out->dims[i] = ONYX_DIM_UNKNOWN;
}

bool tk_infer_ints(const onyx_value *v, int64_t *vals, size_t *n) {
    onyx_status *st = tk_read_ints(v, "value", true, vals, ONYX_MAX_RANK, n);
    bool ok = st == NULL;
    onyx_status_free(st);
    return ok;
}

const onyx_value *tk_infer_const(const onyx_infer_ctx *ctx, size_t i) {
    if (i >= ctx->n_in || !ctx->const_in) return NULL;
    const onyx_value *v = ctx->const_in[i];
    return onyx_is_tensor(v) ? v : NULL;
}
