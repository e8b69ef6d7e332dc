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

void tk_type_shaped(onyx_type *out, int dtype, int rank, const int64_t *dims) {
    tk_type_tensor(out, dtype, rank);
    for (int i = 0; dims && i < rank && i < ONYX_MAX_RANK; i++) out->dims[i] = dims[i];
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

onyx_status *tk_broadcast_fold(int *rank, int64_t *dims, const onyx_type *t) {
    int r = *rank > t->rank ? *rank : t->rank;
    int64_t out[ONYX_MAX_RANK];
    for (int d = 0; d < r; d++) {
        int ra = d - (r - *rank), rb = d - (r - t->rank);
        int64_t a = ra >= 0 ? dims[ra] : 1, b = rb >= 0 ? t->dims[rb] : 1;
        if (b == 1 || a == b) out[d] = a;
        else if (a == 1) out[d] = b;
        else if (onyx_dim_known(a) && onyx_dim_known(b))
            return ONYX_INVALID_MODEL("input shapes cannot be broadcast (axis %d: %lld vs %lld)", d,
                                      (long long)a, (long long)b);
        else if (onyx_dim_known(a) || onyx_dim_known(b)) out[d] = onyx_dim_known(a) ? a : b;
        else out[d] = ONYX_DIM_UNKNOWN; /* two different symbols, or unknown */
    }
    *rank = r;
    memcpy(dims, out, sizeof(int64_t) * (size_t)r);
    return NULL;
}

onyx_status *tk_infer_matmul(const onyx_type *a, const onyx_type *b, bool ta, bool tb, onyx_type *out) {
    out->kind = ONYX_VALUE_TENSOR;
    out->rank = -1;
    if (!a || !b || a->rank < 1 || b->rank < 1) return NULL;   /* unknown (or invalid: reported at run time) */
    int na = a->rank > 2 ? a->rank - 2 : 0, nb = b->rank > 2 ? b->rank - 2 : 0;
    int n = na > nb ? na : nb, r = 0;
    if (n + 2 > ONYX_MAX_RANK) return NULL;
    for (int i = 0; i < n; i++) {
        int ka = i - (n - na), kb = i - (n - nb);
        int64_t da = ka >= 0 ? a->dims[ka] : 1, db = kb >= 0 ? b->dims[kb] : 1;
        if (da == 1) out->dims[r++] = db;
        else if (db == 1 || da == db) out->dims[r++] = da;
        else if (onyx_dim_known(da) && onyx_dim_known(db))
            return ONYX_INVALID_ARG("batch dims %lld and %lld cannot be broadcast", (long long)da, (long long)db);
        else out->dims[r++] = ONYX_DIM_UNKNOWN;
    }
    if (a->rank > 1) out->dims[r++] = a->dims[a->rank - (ta ? 1 : 2)];
    if (b->rank > 1) out->dims[r++] = b->dims[b->rank - (tb ? 2 : 1)];
    out->rank = r;
    return NULL;
}
