/* Pooling window geometry (pool_geom.h), for pool.c and nchwc_pool.c. */
#include "ir/pool_geom.h"
#include <string.h>
#include "core/checked.h"

onyx_status *onyx_pool_read_ints(const onyx_node *node, const char *op, const char *name, size_t want, int64_t def,
                                 int64_t min, int64_t *out, bool required) {
    const onyx_attr_proto *a = onyx_node_attr(node, name);
    if (!a || (a->type == ONYX_ATTR_INTS && a->n_ints == 0)) {
        if (required) return ONYX_INVALID_ARG("%s: attribute %s is required (%zu values)", op, name, want);
        for (size_t i = 0; i < want; i++) out[i] = def;
        return NULL;
    }
    if (a->type != ONYX_ATTR_INTS) return ONYX_INVALID_ARG("%s: attribute %s must be a list of ints", op, name);
    if (a->n_ints != want)
        return ONYX_INVALID_ARG("%s: attribute %s has %zu values; expected %zu", op, name, a->n_ints, want);
    for (size_t i = 0; i < want; i++) {
        int64_t v = a->ints[i];
        if (v < min || v > ONYX_POOL_MAX_PARAM)
            return ONYX_INVALID_ARG("%s: attribute %s[%zu] = %lld is out of range [%lld, %lld]", op, name, i,
                                    (long long)v, (long long)min, (long long)ONYX_POOL_MAX_PARAM);
        out[i] = v;
    }
    return NULL;
}

/* An int attribute read as a flag (absent: false). */
static onyx_status *read_flag(const onyx_node *node, const char *op, const char *name, bool *out) {
    const onyx_attr_proto *a = onyx_node_attr(node, name);
    *out = false;
    if (!a) return NULL;
    if (a->type != ONYX_ATTR_INT) return ONYX_INVALID_ARG("%s: attribute %s must be an int", op, name);
    *out = a->i != 0;
    return NULL;
}

/* The attributes that do not shape the window: checked here so that both
 * kernels refuse the same malformed nodes. */
static onyx_status *check_other_attrs(const onyx_node *node, const char *op) {
    bool unused;
    ONYX_TRY(read_flag(node, op, "count_include_pad", &unused));
    const onyx_attr_proto *so = onyx_node_attr(node, "storage_order");
    if (so && so->type != ONYX_ATTR_INT) return ONYX_INVALID_ARG("%s: attribute storage_order must be an int", op);
    if (so && so->i != 0 && so->i != 1)
        return ONYX_INVALID_ARG("%s: attribute storage_order must be 0 or 1, got %lld", op, (long long)so->i);
    return NULL;
}

typedef enum pad_mode { PAD_EXPLICIT, PAD_VALID, PAD_SAME_UPPER, PAD_SAME_LOWER } pad_mode;

static onyx_status *read_auto_pad(const onyx_node *node, const char *op, pad_mode *mode) {
    const onyx_attr_proto *a = onyx_node_attr(node, "auto_pad");
    if (a && a->type != ONYX_ATTR_STRING) return ONYX_INVALID_ARG("%s: attribute auto_pad must be a string", op);
    const char *ap = onyx_attr_string(node, "auto_pad", "NOTSET");
    if (!strcmp(ap, "NOTSET") || !ap[0]) *mode = PAD_EXPLICIT;
    else if (!strcmp(ap, "VALID")) *mode = PAD_VALID;
    else if (!strcmp(ap, "SAME_UPPER")) *mode = PAD_SAME_UPPER;
    else if (!strcmp(ap, "SAME_LOWER")) *mode = PAD_SAME_LOWER;
    else
        return ONYX_INVALID_ARG("%s: attribute auto_pad is '%s'; expected NOTSET, SAME_UPPER, SAME_LOWER or VALID",
                                op, ap);
    return NULL;
}

/* Output size and pads of spatial dim i of known size n. pads: the
 * explicit [begin..., end...] of all dims. */
static onyx_status *dim_geometry(onyx_pool_geom *g, const char *op, int i, int64_t n, pad_mode mode,
                                 const int64_t *pads, bool ceil_mode) {
    int64_t s = g->s[i];
    int64_t ek = (g->k[i] - 1) * g->d[i] + 1;   /* < 2^62: both factors <= 2^31 */
    g->in[i] = n;
    if (mode == PAD_SAME_UPPER || mode == PAD_SAME_LOWER) {
        int64_t out = n == 0 ? 0 : (n - 1) / s + 1;
        int64_t total = (out > 0 ? (out - 1) * s : 0) + ek - n;   /* (out - 1) * s < n */
        if (total < 0) total = 0;
        g->pb[i] = mode == PAD_SAME_UPPER ? total / 2 : total - total / 2;
        g->pe[i] = total - g->pb[i];
        g->out[i] = out;
        return NULL;
    }
    g->pb[i] = mode == PAD_VALID ? 0 : pads[i];
    g->pe[i] = mode == PAD_VALID ? 0 : pads[g->nsp + i];
    int64_t span;
    if (onyx_add_overflow_i64(n, g->pb[i] + g->pe[i], &span))
        return ONYX_INVALID_ARG("%s: spatial dim %d of size %lld is too large", op, i, (long long)n);
    /* a pad as large as the (dilated) kernel makes windows that lie wholly in
     * the padding (an AveragePool of nothing: NaN); ONNX Runtime refuses these */
    if (g->pb[i] >= ek || g->pe[i] >= ek)
        return ONYX_INVALID_ARG("%s: pads %lld+%lld of spatial dim %d must be smaller than the (dilated) "
                                "kernel size %lld", op, (long long)g->pb[i], (long long)g->pe[i], i, (long long)ek);
    span -= ek;
    if (span < 0)
        return ONYX_INVALID_ARG("%s: spatial dim %d: input size %lld with pads %lld+%lld is smaller than the "
                                "(dilated) kernel %lld", op, i, (long long)n, (long long)g->pb[i],
                                (long long)g->pe[i], (long long)ek);
    int64_t out = span / s + 1 + (ceil_mode && span % s != 0);
    /* a window must start inside the input or the begin padding (the last
     * start is below span + s, which may pass int64 for a huge n) */
    int64_t last_start;
    if (ceil_mode && (onyx_mul_overflow_i64(out - 1, s, &last_start) || last_start >= n + g->pb[i])) out--;
    g->out[i] = out;
    return NULL;
}

onyx_status *onyx_pool_geometry(const onyx_node *node, const char *op, int nsp, const int64_t *in,
                                 bool has_dilations, bool has_ceil, onyx_pool_geom *g) {
    if (nsp < 1 || nsp > ONYX_MAX_RANK - 2)
        return ONYX_INVALID_ARG("%s: %d spatial dims; expected 1 to %d", op, nsp, ONYX_MAX_RANK - 2);
    g->nsp = nsp;
    const size_t m = (size_t)nsp;
    int64_t pads[2 * ONYX_MAX_RANK];
    ONYX_TRY(onyx_pool_read_ints(node, op, "kernel_shape", m, 1, 1, g->k, true));
    ONYX_TRY(onyx_pool_read_ints(node, op, "strides", m, 1, 1, g->s, false));
    ONYX_TRY(onyx_pool_read_ints(node, op, "pads", 2 * m, 0, 0, pads, false));
    if (has_dilations) ONYX_TRY(onyx_pool_read_ints(node, op, "dilations", m, 1, 1, g->d, false));
    else
        for (int i = 0; i < nsp; i++) g->d[i] = 1;
    bool ceil_mode = false;
    if (has_ceil) ONYX_TRY(read_flag(node, op, "ceil_mode", &ceil_mode));
    ONYX_TRY(check_other_attrs(node, op));
    pad_mode mode = PAD_EXPLICIT;
    ONYX_TRY(read_auto_pad(node, op, &mode));
    for (int i = 0; i < nsp; i++) {
        if (!onyx_dim_known(in[i])) {
            g->in[i] = g->out[i] = ONYX_DIM_UNKNOWN;
            continue;
        }
        ONYX_TRY(dim_geometry(g, op, i, in[i], mode, pads, ceil_mode));
    }
    return NULL;
}

onyx_pool_tap onyx_pool_tap_of(const onyx_pool_geom *g, int i, int64_t o) {
    int64_t start = o * g->s[i] - g->pb[i], d = g->d[i], k = g->k[i], in = g->in[i];
    /* first j with start + j*d >= 0, end of the j with start + j*d < in */
    int64_t lo = start >= 0 ? 0 : (-start + d - 1) / d;
    int64_t hi = start >= in ? 0 : (in - 1 - start) / d + 1;
    if (hi > k) hi = k;
    if (lo > hi) lo = hi;
    /* the same within the padded range [-pb, in + pe) */
    int64_t plo = start >= -g->pb[i] ? 0 : (-g->pb[i] - start + d - 1) / d;
    int64_t lim = in + g->pe[i];
    int64_t phi = start >= lim ? 0 : (lim - 1 - start) / d + 1;
    if (phi > k) phi = k;
    return (onyx_pool_tap){start, lo, hi, phi > plo ? phi - plo : 0};
}
