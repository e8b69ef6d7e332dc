/* Shape helpers shared by the operators' inference rules (ir/schemas/)
 * and the kernels of every provider. */
#include <stdlib.h>
#include <string.h>
#include "ir/shape_util.h"

onyx_status *onyx_broadcast_shapes(const int64_t *a, int ra, const int64_t *b, int rb,
                                   int64_t *out, int *rout) {
    int r = ra > rb ? ra : rb;
    if (r > ONYX_MAX_RANK) return ONYX_INVALID_ARG("broadcast rank %d exceeds %d", r, ONYX_MAX_RANK);
    for (int i = 0; i < r; i++) {
        int64_t da = i < r - ra ? 1 : a[i - (r - ra)];
        int64_t db = i < r - rb ? 1 : b[i - (r - rb)];
        if (da == db || db == 1) out[i] = da;
        else if (da == 1) out[i] = db;
        else {
            char sa[200], sb[200];
            return ONYX_INVALID_ARG("shapes %s and %s cannot be broadcast (axis %d: %lld vs %lld)",
                                    onyx_shape_str(a, ra, sa, sizeof sa),
                                    onyx_shape_str(b, rb, sb, sizeof sb), i, (long long)da,
                                    (long long)db);
        }
    }
    *rout = r;
    return NULL;
}

onyx_status *onyx_normalize_axis(int64_t axis, int rank, int *out) {
    int64_t lo = -(int64_t)rank, hi = rank;
    if (axis < lo || axis >= hi)
        return ONYX_INVALID_ARG("axis %lld is out of range [%lld, %lld] for rank %d", (long long)axis,
                                (long long)lo, (long long)(hi - 1), rank);
    *out = (int)(axis < 0 ? axis + rank : axis);
    return NULL;
}

void onyx_strides(const int64_t *dims, int rank, int64_t *strides) {
    int64_t s = 1;
    for (int i = rank - 1; i >= 0; i--) {
        strides[i] = s;
        s *= dims[i];
    }
}

onyx_status *onyx_read_int_tensor(const onyx_value *v, int64_t **vals, int64_t *count) {
    if (!onyx_is_tensor(v)) return ONYX_INVALID_ARG("expected an integer tensor");
    if (v->dtype != ONYX_INT64 && v->dtype != ONYX_INT32)
        return ONYX_INVALID_ARG("expected an int32 or int64 tensor, got %s", onyx_dtype_name(v->dtype));
    int64_t n = v->numel;
    int64_t *out = malloc(((size_t)n + 1) * sizeof *out);
    if (!out) return ONYX_OOM();
    for (int64_t i = 0; i < n; i++)
        out[i] = v->dtype == ONYX_INT64 ? ((const int64_t *)v->data)[i] : ((const int32_t *)v->data)[i];
    *vals = out;
    *count = n;
    return NULL;
}

onyx_status *onyx_infer_same_as_input0(onyx_infer_ctx *ctx) {
    if (ctx->n_in == 0 || !ctx->in[0]) return NULL;
    for (size_t i = 0; i < ctx->n_out; i++) ctx->out[i] = *ctx->in[0];
    return NULL;
}
