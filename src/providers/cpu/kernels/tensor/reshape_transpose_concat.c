/* Data-movement kernels, part 1: reshaping (Reshape, Flatten, Squeeze,
 * Unsqueeze, Identity, Dropout), permutations (Transpose, DepthToSpace,
 * SpaceToDepth) and replication/joining (Expand, Tile, Concat, Split).
 * Every op moves elements by size through tensor_util's views, so one code
 * path serves all element types, strings and packed sub-byte types. */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "providers/cpu/kernel.h"
#include "ir/schemas/tensor.h"
#include "providers/cpu/kernels/tensor/tensor_util.h"
#include "providers/cpu/kernels/tensor/transpose_bytes.h"

/* ------------------------------------------------------------ shared bits */

/* Output 0 = input x with a new shape and the same elements in order. */
static onyx_status *emit_reshaped(onyx_kernel_ctx *ctx, const onyx_value *x, int rank,
                                  const int64_t *dims) {
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, x->dtype, rank, dims, &y));
    if (y->numel != x->numel) {
        char a[200], b[200];
        return ONYX_INVALID_ARG(
            "cannot reshape %s (%" PRId64 " elements) to %s (%" PRId64 " elements)",
            tk_shape(x, a, sizeof a), x->numel, tk_shape(y, b, sizeof b), y->numel);
    }
    if (y->data == x->data || y->numel == 0) return NULL;
    if (x->nbytes < y->nbytes || !x->data)
        return ONYX_INVALID_ARG("input holds %zu bytes, fewer than its shape needs", x->nbytes);
    if (x->dtype == ONYX_STRING) {
        tk_view v;
        ONYX_TRY(tk_view_in(x, &v));
        return tk_cells_copy(&v, y->data, x->data, x->numel);
    }
    tk_memcpy(ctx->tp, y->data, x->data, y->nbytes);
    return NULL;
}

/* Integer list from an attribute (with a cap) into vals. */
static onyx_status *attr_ints(const onyx_node *node, const char *name, int64_t *vals, size_t max,
                              size_t *count, bool *present) {
    size_t n = 0;
    const int64_t *a = onyx_attr_ints(node, name, &n);
    *present = onyx_node_attr(node, name) != NULL;
    if (n > max)
        return ONYX_INVALID_ARG("attribute '%s' has %zu values, at most %zu are allowed", name, n,
                                max);
    if (n) memcpy(vals, a, n * sizeof *vals);
    *count = n;
    return NULL;
}

/* Axes of Squeeze/Unsqueeze: attribute before opset 13, input 1 from 13. */
static onyx_status *read_axes(onyx_kernel_ctx *ctx, int64_t *axes, size_t *n, bool *present) {
    if (ctx->opset < 13) return attr_ints(ctx->node, "axes", axes, ONYX_MAX_RANK, n, present);
    const onyx_value *a;
    ONYX_TRY(tk_opt_tensor_in(ctx, 1, "axes", &a));
    *present = a != NULL;
    *n = 0;
    return a ? tk_read_ints(a, "input 1 (axes)", true, axes, ONYX_MAX_RANK, n) : NULL;
}

/* ----------------------------------------------------------------- Reshape */

static onyx_status *reshape_target(const onyx_value *x, const int64_t *shape, size_t n,
                                   bool allowzero, int64_t *dims) {
    int unknown = -1;
    bool has_zero = false;
    int64_t known = 1;
    for (size_t i = 0; i < n; i++) {
        int64_t v = shape[i];
        if (v == -1) {
            if (unknown >= 0)
                return ONYX_INVALID_ARG("shape has more than one -1 (entries %d and %zu)", unknown,
                                        i);
            unknown = (int)i;
            continue;
        }
        if (v < -1) return ONYX_INVALID_ARG("shape[%zu] = %" PRId64 " is negative", i, v);
        if (v == 0 && !allowzero) {
            if ((int)i >= x->rank)
                return ONYX_INVALID_ARG(
                    "shape[%zu] = 0 copies input dim %zu, but the input has rank %d", i, i,
                    x->rank);
            v = x->dims[i];
        }
        if (v == 0) has_zero = true;
        dims[i] = v;
        if (onyx_mul_overflow_i64(known, v, &known) || known > ONYX_MAX_TENSOR_ELEMENTS)
            return ONYX_INVALID_ARG("shape has too many elements");
    }
    if (unknown < 0) return NULL;
    if (allowzero && has_zero)
        return ONYX_INVALID_ARG("shape has both 0 and -1 while allowzero is set");
    if (known == 0) {
        if (x->numel != 0)
            return ONYX_INVALID_ARG(
                "cannot infer the -1 dim: other dims multiply to 0 but the input has %" PRId64
                " elements",
                x->numel);
        dims[unknown] = 0;
    } else {
        if (x->numel % known)
            return ONYX_INVALID_ARG("cannot reshape %" PRId64
                                    " elements into a shape whose known dims multiply to %" PRId64,
                                    x->numel, known);
        dims[unknown] = x->numel / known;
    }
    return NULL;
}

static onyx_status *reshape_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x;
    ONYX_TRY(tk_tensor_in(ctx, 0, "data", &x));
    int64_t shape[ONYX_MAX_RANK];
    size_t n;
    if (ctx->opset < 5) {
        bool present;
        ONYX_TRY(attr_ints(ctx->node, "shape", shape, ONYX_MAX_RANK, &n, &present));
        if (!present) return ONYX_INVALID_ARG("attribute 'shape' is required");
    } else {
        const onyx_value *s;
        ONYX_TRY(tk_tensor_in(ctx, 1, "shape", &s));
        ONYX_TRY(tk_read_ints(s, "input 1 (shape)", false, shape, ONYX_MAX_RANK, &n));
    }
    bool allowzero = ctx->opset >= 14 && onyx_attr_int(ctx->node, "allowzero", 0) != 0;
    int64_t dims[ONYX_MAX_RANK];
    ONYX_TRY(reshape_target(x, shape, n, allowzero, dims));
    return emit_reshaped(ctx, x, (int)n, dims);
}

static onyx_status *flatten_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x;
    ONYX_TRY(tk_tensor_in(ctx, 0, "input", &x));
    int axis = 0;
    ONYX_TRY(onyx_tensor_flatten_axis(ctx->opset, onyx_attr_int(ctx->node, "axis", 1), x->rank, &axis));
    int64_t dims[2] = {tk_numel(x->dims, 0, axis), tk_numel(x->dims, axis, x->rank)};
    if (dims[0] == INT64_MAX || dims[1] == INT64_MAX)
        return ONYX_INVALID_ARG("flattened dims of an empty tensor overflow");
    return emit_reshaped(ctx, x, 2, dims);
}

/* ----------------------------------------------------------------- Squeeze */

static onyx_status *squeeze_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x;
    ONYX_TRY(tk_tensor_in(ctx, 0, "data", &x));
    int64_t axes[ONYX_MAX_RANK];
    size_t n;
    bool present;
    ONYX_TRY(read_axes(ctx, axes, &n, &present));
    bool drop[ONYX_MAX_RANK] = {false};
    if (present && n) {
        int ax[ONYX_MAX_RANK];
        ONYX_TRY(tk_normalize_axes(axes, n, x->rank, "axes", ax));
        for (size_t i = 0; i < n; i++) {
            if (x->dims[ax[i]] != 1)
                return ONYX_INVALID_ARG("cannot squeeze axis %d of size %" PRId64 " (must be 1)",
                                        ax[i], x->dims[ax[i]]);
            drop[ax[i]] = true;
        }
    } else {
        for (int i = 0; i < x->rank; i++) drop[i] = x->dims[i] == 1;
    }
    int64_t dims[ONYX_MAX_RANK];
    int r = 0;
    for (int i = 0; i < x->rank; i++)
        if (!drop[i]) dims[r++] = x->dims[i];
    return emit_reshaped(ctx, x, r, dims);
}

/* Axes for inference: true when known (attr, or constant input). */
static onyx_status *unsqueeze_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x;
    ONYX_TRY(tk_tensor_in(ctx, 0, "data", &x));
    int64_t axes[ONYX_MAX_RANK];
    size_t n;
    bool present;
    ONYX_TRY(read_axes(ctx, axes, &n, &present));
    if (!present) return ONYX_INVALID_ARG("axes are required");
    int64_t dims[ONYX_MAX_RANK];
    int r;
    ONYX_TRY(onyx_tensor_unsqueeze_dims(x->dims, x->rank, axes, n, dims, &r));
    return emit_reshaped(ctx, x, r, dims);
}

/* ---------------------------------------------------------------- Identity */

static onyx_status *identity_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x = tk_in(ctx, 0);
    if (!x) return ONYX_INVALID_ARG("input 0 is required but missing");
    if (x->kind == ONYX_VALUE_TENSOR) return emit_reshaped(ctx, x, x->rank, x->dims);
    onyx_value *copy;
    ONYX_TRY(onyx_value_clone(x, &copy));
    return onyx_kernel_set_output(ctx, 0, copy);
}

/* ----------------------------------------------------------------- Dropout */

/* Mersenne Twister MT19937 seeded and drawn exactly as numpy's legacy
 * RandomState (np.random.seed(seed); np.random.uniform(0, 1, n)), the
 * generator of the ONNX reference Dropout, so a seeded training-mode
 * Dropout reproduces the reference mask. */
typedef struct mt19937 {
    uint32_t key[624];
    int pos;
} mt19937;

static void mt_seed(mt19937 *mt, uint32_t seed) {
    for (int i = 0; i < 624; i++) {
        mt->key[i] = seed;
        seed = 1812433253u * (seed ^ (seed >> 30)) + (uint32_t)i + 1;
    }
    mt->pos = 624;
}

static uint32_t mt_next(mt19937 *mt) {
    if (mt->pos == 624) {
        for (int i = 0; i < 624; i++) {
            uint32_t y = (mt->key[i] & 0x80000000u) | (mt->key[(i + 1) % 624] & 0x7fffffffu);
            mt->key[i] = mt->key[(i + 397) % 624] ^ (y >> 1) ^ ((y & 1) ? 0x9908b0dfu : 0);
        }
        mt->pos = 0;
    }
    uint32_t y = mt->key[mt->pos++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    return y ^ (y >> 18);
}

/* Uniform double in [0, 1) with 53 random bits (numpy's random_sample). */
static double mt_uniform(mt19937 *mt) {
    uint32_t a = mt_next(mt) >> 5, b = mt_next(mt) >> 6;
    return (a * 67108864.0 + b) / 9007199254740992.0;
}

static onyx_status *dropout_ratio(onyx_kernel_ctx *ctx, double *ratio) {
    *ratio = 0.5;
    if (ctx->opset < 12) {
        *ratio = onyx_attr_float(ctx->node, "ratio", 0.5f);
        return NULL;
    }
    const onyx_value *r;
    ONYX_TRY(tk_opt_tensor_in(ctx, 1, "ratio", &r));
    if (!r) return NULL;
    if (r->numel != 1 || !r->data || !onyx_dtype(r->dtype)->is_float)
        return ONYX_INVALID_ARG("input 1 (ratio) must be a floating-point scalar");
    *ratio = onyx_load_as_double(r->dtype, r->data, 0);
    return NULL;
}

static onyx_status *dropout_training(onyx_kernel_ctx *ctx, bool *training) {
    *training = false;
    if (ctx->opset < 12) return NULL;
    const onyx_value *t;
    ONYX_TRY(tk_opt_tensor_in(ctx, 2, "training_mode", &t));
    if (!t) return NULL;
    if (t->dtype != ONYX_BOOL || t->numel != 1 || !t->data)
        return ONYX_INVALID_ARG("input 2 (training_mode) must be a bool scalar");
    *training = *(const uint8_t *)t->data != 0;
    return NULL;
}

/* Training mode: keep each element with probability 1-ratio and scale it
 * by 1/(1-ratio); the mask records which were kept. */
static onyx_status *dropout_random(onyx_kernel_ctx *ctx, const onyx_value *x, onyx_value *y,
                                   uint8_t *mask, double ratio) {
    static _Atomic uint32_t counter = 1;
    const onyx_attr_proto *seed_attr = onyx_node_attr(ctx->node, "seed");
    uint32_t seed = seed_attr
                        ? (uint32_t)seed_attr->i
                        : (atomic_fetch_add(&counter, 1) * 2654435761u) ^ (uint32_t)(uintptr_t)y;
    mt19937 *mt = malloc(sizeof *mt);
    if (!mt) return ONYX_OOM();
    mt_seed(mt, seed);
    double scale = 1.0 / (1.0 - ratio);
    for (int64_t i = 0; i < x->numel; i++) {
        bool keep = mt_uniform(mt) >= ratio;
        double v = keep ? onyx_load_as_double(x->dtype, x->data, i) * scale : 0.0;
        if (x->dtype == ONYX_FLOAT)
            ((float *)y->data)[i] = (float)v;
        else
            onyx_store_from_double(x->dtype, y->data, i, v);
        if (mask) mask[i] = keep;
    }
    free(mt);
    return NULL;
}

static onyx_status *dropout_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x;
    ONYX_TRY(tk_tensor_in(ctx, 0, "data", &x));
    if (!onyx_dtype(x->dtype)->is_float)
        return ONYX_INVALID_ARG("Dropout needs a floating-point input, got %s",
                                onyx_dtype_name(x->dtype));
    double ratio;
    bool training;
    ONYX_TRY(dropout_ratio(ctx, &ratio));
    ONYX_TRY(dropout_training(ctx, &training));
    if (training && !(ratio >= 0.0 && ratio < 1.0))
        return ONYX_INVALID_ARG("ratio %g is outside [0, 1)", ratio);
    bool random = training && ratio > 0.0;
    uint8_t *mask = NULL;
    bool want_mask = ctx->n_out > 1 && ctx->out_used[1];
    onyx_value *m = NULL;
    if (want_mask) {
        /* before opset 10 the mask has the input's type, from 10 it is bool */
        int mask_type = ctx->opset < 10 ? x->dtype : ONYX_BOOL;
        ONYX_TRY(onyx_kernel_output(ctx, 1, mask_type, x->rank, x->dims, &m));
        if (mask_type == ONYX_BOOL) mask = m->data;
    }
    onyx_value *y;
    if (!random) {
        ONYX_TRY(emit_reshaped(ctx, x, x->rank, x->dims));
        if (mask) memset(mask, 1, (size_t)x->numel);
    } else {
        ONYX_TRY(onyx_kernel_output(ctx, 0, x->dtype, x->rank, x->dims, &y));
        ONYX_TRY(dropout_random(ctx, x, y, mask, ratio));
    }
    if (m && !mask) {
        /* typed mask (opset < 10): ones, since only inference mode exists there */
        for (int64_t i = 0; i < x->numel; i++) onyx_store_from_double(m->dtype, m->data, i, 1.0);
    }
    return NULL;
}

/* y = x viewed with dims `in_dims` (row-major) and permuted by perm. */
static onyx_status *permute_copy(onyx_kernel_ctx *ctx, const onyx_value *x, onyx_value *y, int rank,
                                 const int64_t *in_dims, const int *perm) {
    int64_t strides[TK_MAX_ND], dims[TK_MAX_ND], src[TK_MAX_ND];
    onyx_strides(in_dims, rank, strides);
    for (int i = 0; i < rank; i++) {
        dims[i] = in_dims[perm[i]];
        src[i] = strides[perm[i]];
    }
    tk_view vs, vd;
    ONYX_TRY(tk_view_in(x, &vs));
    onyx_status *st = tk_view_out(y, &vd);
    if (st) return tk_view_finish(&vs, NULL, y, st);
    st = tk_copy_view(ctx->tp, &vs, rank, dims, src, vd.p, vs.p);
    return tk_view_finish(&vs, &vd, y, st);
}

/* 8-bit NCHW <-> NHWC (the quantised layout pass's boundaries): per image
 * one byte matrix transpose. False when x is not that case. */
static bool byte_nchw_nhwc(onyx_kernel_ctx *ctx, const onyx_value *x, onyx_value *y, const int *perm) {
    if ((x->dtype != ONYX_UINT8 && x->dtype != ONYX_INT8) || x->rank != 4 || !x->data || x->numel == 0 || perm[0] != 0)
        return false;
    size_t rows, cols, image = (size_t)(x->numel / x->dims[0]);
    if (perm[1] == 2 && perm[2] == 3 && perm[3] == 1) rows = (size_t)x->dims[1];   /* C x HW -> HW x C */
    else if (perm[1] == 3 && perm[2] == 1 && perm[3] == 2) rows = (size_t)(x->dims[1] * x->dims[2]);
    else return false;
    cols = image / rows;
    for (int64_t n = 0; n < x->dims[0]; n++)
        onyx_transpose_bytes((const uint8_t *)x->data + n * image, rows, cols, (uint8_t *)y->data + n * image, ctx->tp);
    return true;
}

static onyx_status *transpose_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x;
    ONYX_TRY(tk_tensor_in(ctx, 0, "data", &x));
    int perm[ONYX_MAX_RANK];
    ONYX_TRY(onyx_tensor_read_perm(ctx->node, x->rank, perm));
    int64_t dims[ONYX_MAX_RANK];
    for (int i = 0; i < x->rank; i++) dims[i] = x->dims[perm[i]];
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, x->dtype, x->rank, dims, &y));
    if (byte_nchw_nhwc(ctx, x, y, perm)) return NULL;
    return permute_copy(ctx, x, y, x->rank, x->dims, perm);
}

/* ---------------------------------------------------- DepthToSpace / back */

static onyx_status *block_size(const onyx_kernel_ctx *ctx, const onyx_value *x, int64_t *b) {
    if (x->rank != 4) {
        char sb[128];
        return ONYX_INVALID_ARG("input must be 4-D [N,C,H,W], got %s", tk_shape(x, sb, sizeof sb));
    }
    if (!onyx_node_attr(ctx->node, "blocksize"))
        return ONYX_INVALID_ARG("attribute 'blocksize' is required");
    *b = onyx_attr_int(ctx->node, "blocksize", 0);
    if (*b <= 0 || *b > (INT64_C(1) << 31))
        return ONYX_INVALID_ARG("blocksize %" PRId64 " must be positive", *b);
    return NULL;
}

static onyx_status *depth_to_space_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x;
    int64_t b;
    ONYX_TRY(tk_tensor_in(ctx, 0, "input", &x));
    ONYX_TRY(block_size(ctx, x, &b));
    const char *mode = ctx->opset >= 11 ? onyx_attr_string(ctx->node, "mode", "DCR") : "DCR";
    bool crd = !strcmp(mode, "CRD");
    if (!crd && strcmp(mode, "DCR")) return ONYX_INVALID_ARG("mode '%s' must be DCR or CRD", mode);
    int64_t n = x->dims[0], c = x->dims[1], h = x->dims[2], w = x->dims[3];
    if (c % (b * b))
        return ONYX_INVALID_ARG("channels %" PRId64 " are not divisible by blocksize^2 = %" PRId64,
                                c, b * b);
    int64_t oc = c / (b * b), odims[4] = {n, oc, 0, 0};
    if (onyx_mul_overflow_i64(h, b, &odims[2]) || onyx_mul_overflow_i64(w, b, &odims[3]))
        return ONYX_INVALID_ARG("output size overflows");
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, x->dtype, 4, odims, &y));
    /* DCR: [N,b,b,C',H,W] -> [N,C',H,b,W,b]; CRD: [N,C',b,b,H,W] -> same */
    int64_t dcr[6] = {n, b, b, oc, h, w}, crdv[6] = {n, oc, b, b, h, w};
    static const int p_dcr[6] = {0, 3, 4, 1, 5, 2}, p_crd[6] = {0, 1, 4, 2, 5, 3};
    return permute_copy(ctx, x, y, 6, crd ? crdv : dcr, crd ? p_crd : p_dcr);
}

static onyx_status *space_to_depth_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x;
    int64_t b;
    ONYX_TRY(tk_tensor_in(ctx, 0, "input", &x));
    ONYX_TRY(block_size(ctx, x, &b));
    int64_t n = x->dims[0], c = x->dims[1], h = x->dims[2], w = x->dims[3];
    if (h % b || w % b)
        return ONYX_INVALID_ARG("height %" PRId64 " and width %" PRId64
                                " must be divisible by blocksize %" PRId64,
                                h, w, b);
    int64_t odims[4] = {n, 0, h / b, w / b};
    if (onyx_mul_overflow_i64(c, b * b, &odims[1]))
        return ONYX_INVALID_ARG("output size overflows");
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, x->dtype, 4, odims, &y));
    /* [N,C,H/b,b,W/b,b] -> [N,b,b,C,H/b,W/b] */
    int64_t v[6] = {n, c, h / b, b, w / b, b};
    static const int perm[6] = {0, 3, 5, 1, 2, 4};
    return permute_copy(ctx, x, y, 6, v, perm);
}

/* ------------------------------------------------------------------ Expand */

static onyx_status *expand_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x, *s;
    ONYX_TRY(tk_tensor_in(ctx, 0, "input", &x));
    ONYX_TRY(tk_tensor_in(ctx, 1, "shape", &s));
    int64_t shape[ONYX_MAX_RANK], dims[ONYX_MAX_RANK];
    size_t n;
    int r;
    ONYX_TRY(tk_read_ints(s, "input 1 (shape)", false, shape, ONYX_MAX_RANK, &n));
    for (size_t i = 0; i < n; i++)
        if (shape[i] < 0)
            return ONYX_INVALID_ARG("shape[%zu] = %" PRId64 " is negative", i, shape[i]);
    ONYX_TRY(onyx_broadcast_shapes(x->dims, x->rank, shape, (int)n, dims, &r));
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, x->dtype, r, dims, &y));
    int64_t in_strides[ONYX_MAX_RANK], src[ONYX_MAX_RANK];
    onyx_strides(x->dims, x->rank, in_strides);
    for (int i = 0; i < r; i++) {
        int k = i - (r - x->rank);
        src[i] = k < 0 || x->dims[k] == 1 ? 0 : in_strides[k];
    }
    tk_view vs, vd;
    ONYX_TRY(tk_view_in(x, &vs));
    onyx_status *st = tk_view_out(y, &vd);
    if (st) return tk_view_finish(&vs, NULL, y, st);
    st = tk_copy_view(ctx->tp, &vs, r, dims, src, vd.p, vs.p);
    return tk_view_finish(&vs, &vd, y, st);
}

/* -------------------------------------------------------------------- Tile */

static onyx_status *tile_repeats(onyx_kernel_ctx *ctx, const onyx_value *x, int64_t *reps) {
    const onyx_value *r;
    ONYX_TRY(tk_tensor_in(ctx, 1, ctx->opset < 6 ? "tiles" : "repeats", &r));
    if (ctx->opset < 6) {
        /* Tile-1: scalar `tiles` copies along scalar `axis` */
        const onyx_value *a;
        int64_t tiles, axis;
        int ax;
        ONYX_TRY(tk_tensor_in(ctx, 2, "axis", &a));
        ONYX_TRY(tk_read_scalar_int(r, "input 1 (tiles)", &tiles));
        ONYX_TRY(tk_read_scalar_int(a, "input 2 (axis)", &axis));
        ONYX_TRY(onyx_normalize_axis(axis, x->rank, &ax));
        for (int i = 0; i < x->rank; i++) reps[i] = i == ax ? tiles : 1;
    } else {
        size_t n;
        ONYX_TRY(tk_read_ints(r, "input 1 (repeats)", false, reps, ONYX_MAX_RANK, &n));
        if ((int)n != x->rank)
            return ONYX_INVALID_ARG("repeats has %zu values but the input has rank %d", n, x->rank);
    }
    for (int i = 0; i < x->rank; i++)
        if (reps[i] < 0)
            return ONYX_INVALID_ARG("repeats[%d] = %" PRId64 " is negative", i, reps[i]);
    return NULL;
}

static onyx_status *tile_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x;
    ONYX_TRY(tk_tensor_in(ctx, 0, "input", &x));
    int64_t reps[ONYX_MAX_RANK], dims[ONYX_MAX_RANK];
    ONYX_TRY(tile_repeats(ctx, x, reps));
    for (int i = 0; i < x->rank; i++)
        if (onyx_mul_overflow_i64(x->dims[i], reps[i], &dims[i]))
            return ONYX_INVALID_ARG("output dim %d overflows", i);
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, x->dtype, x->rank, dims, &y));
    if (y->numel == 0) return NULL;
    /* view the output as [r0, d0, r1, d1, ...]: each repeat reads the whole
     * input axis (src stride 0 across repeats) */
    tk_plan p;
    int64_t in_strides[ONYX_MAX_RANK], out_strides[ONYX_MAX_RANK];
    onyx_strides(x->dims, x->rank, in_strides);
    onyx_strides(dims, x->rank, out_strides);
    p.rank = 2 * x->rank;
    for (int i = 0; i < x->rank; i++) {
        p.dims[2 * i] = reps[i];
        p.src[2 * i] = 0;
        p.dst[2 * i] = x->dims[i] * out_strides[i];
        p.dims[2 * i + 1] = x->dims[i];
        p.src[2 * i + 1] = in_strides[i];
        p.dst[2 * i + 1] = out_strides[i];
    }
    tk_view vs, vd;
    ONYX_TRY(tk_view_in(x, &vs));
    onyx_status *st = tk_view_out(y, &vd);
    if (st) return tk_view_finish(&vs, NULL, y, st);
    st = tk_copy(ctx->tp, &vs, &p, vd.p, vs.p);
    return tk_view_finish(&vs, &vd, y, st);
}

/* ------------------------------------------------------------------ Concat */

static onyx_status *concat_axis(const onyx_kernel_ctx *ctx, int64_t *axis) {
    const onyx_attr_proto *a = onyx_node_attr(ctx->node, "axis");
    if (!a && ctx->opset >= 4) return ONYX_INVALID_ARG("attribute 'axis' is required");
    *axis = a ? a->i : 1;
    return NULL;
}

static onyx_status *concat_compute(onyx_kernel_ctx *ctx) {
    if (ctx->n_in == 0) return ONYX_INVALID_ARG("Concat needs at least one input");
    const onyx_value *x0;
    ONYX_TRY(tk_tensor_in(ctx, 0, "inputs", &x0));
    int64_t axis_attr = 0;
    int axis = 0;
    ONYX_TRY(concat_axis(ctx, &axis_attr));
    if (x0->rank == 0)
        return ONYX_INVALID_ARG("Concat inputs must have rank >= 1 (input 0 is a scalar)");
    ONYX_TRY(onyx_normalize_axis(axis_attr, x0->rank, &axis));
    int64_t dims[ONYX_MAX_RANK];
    memcpy(dims, x0->dims, sizeof(int64_t) * (size_t)x0->rank);
    dims[axis] = 0;
    for (size_t i = 0; i < ctx->n_in; i++) {
        const onyx_value *x;
        ONYX_TRY(tk_tensor_in(ctx, i, "inputs", &x));
        char a[200], b[200];
        if (x->dtype != x0->dtype)
            return ONYX_INVALID_ARG("input %zu has type %s, input 0 has %s", i,
                                    onyx_dtype_name(x->dtype), onyx_dtype_name(x0->dtype));
        bool same = x->rank == x0->rank;
        for (int k = 0; same && k < x->rank; k++) same = k == axis || x->dims[k] == x0->dims[k];
        if (!same)
            return ONYX_INVALID_ARG(
                "input %zu has shape %s, incompatible with input 0's %s on axis %d", i,
                tk_shape(x, a, sizeof a), tk_shape(x0, b, sizeof b), axis);
        if (onyx_add_overflow_i64(dims[axis], x->dims[axis], &dims[axis]))
            return ONYX_INVALID_ARG("concatenated axis size overflows");
    }
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, x0->dtype, x0->rank, dims, &y));
    if (y->numel == 0) return NULL;
    tk_view vd;
    ONYX_TRY(tk_view_out(y, &vd));
    int64_t outer = tk_numel(dims, 0, axis), inner = tk_numel(dims, axis + 1, x0->rank);
    int64_t offset = 0;
    onyx_status *st = NULL;
    for (size_t i = 0; i < ctx->n_in && !st; i++) {
        const onyx_value *x = ctx->in[i];
        int64_t run = x->dims[axis] * inner;
        if (run == 0) continue;
        tk_view vs;
        st = tk_view_in(x, &vs);
        if (st) break;
        tk_plan p = {
            .rank = 2, .dims = {outer, run}, .src = {run, 1}, .dst = {dims[axis] * inner, 1}};
        st = tk_copy(ctx->tp, &vs, &p, vd.p + offset * (int64_t)vd.es, vs.p);
        tk_view_release(&vs);
        offset += run;
    }
    return tk_view_finish(NULL, &vd, y, st);
}

/* ------------------------------------------------------------------- Split */

#define SPLIT_MAX_OUTPUTS 4096

/* Lengths of the parts along an axis of size dim, per the node's opset. */
static onyx_status *split_lengths(onyx_kernel_ctx *ctx, int64_t dim, int64_t *len) {
    size_t n_out = ctx->n_out;
    size_t n = 0;
    bool have = false;
    int64_t *vals = len;
    if (ctx->opset < 13) {
        const int64_t *a = onyx_attr_ints(ctx->node, "split", &n);
        have = a && n;
        if (have && n == n_out) memcpy(vals, a, n * sizeof *a);
        if (!have && ctx->opset < 2 && tk_in(ctx, 1)) {
            ONYX_TRY(tk_read_ints(ctx->in[1], "input 1 (split)", false, vals, n_out, &n));
            have = true;
        }
    } else {
        const onyx_value *s;
        ONYX_TRY(tk_opt_tensor_in(ctx, 1, "split", &s));
        if (s) {
            if (s->numel != (int64_t)n_out)
                return ONYX_INVALID_ARG("split has %" PRId64 " values but the node has %zu outputs",
                                        s->numel, n_out);
            ONYX_TRY(tk_read_ints(s, "input 1 (split)", false, vals, n_out, &n));
            have = true;
        }
    }
    if (have) {
        if (n != n_out)
            return ONYX_INVALID_ARG("split has %zu values but the node has %zu outputs", n, n_out);
        int64_t sum = 0;
        for (size_t i = 0; i < n; i++) {
            if (vals[i] < 0)
                return ONYX_INVALID_ARG("split[%zu] = %" PRId64 " is negative", i, vals[i]);
            if (onyx_add_overflow_i64(sum, vals[i], &sum))
                return ONYX_INVALID_ARG("split sizes overflow");
        }
        if (sum != dim)
            return ONYX_INVALID_ARG("split sizes sum to %" PRId64 " but the axis has size %" PRId64,
                                    sum, dim);
        return NULL;
    }
    int64_t parts = (int64_t)n_out;
    if (ctx->opset >= 18) {
        const onyx_attr_proto *no = onyx_node_attr(ctx->node, "num_outputs");
        if (no && no->i != parts)
            return ONYX_INVALID_ARG("num_outputs = %" PRId64 " but the node has %zu outputs", no->i,
                                    n_out);
        /* equal chunks of ceil(dim / parts); the last one takes the rest */
        int64_t chunk = dim / parts + (dim % parts != 0);
        for (int64_t i = 0; i < parts; i++) len[i] = chunk;
        len[parts - 1] = dim - chunk * (parts - 1);
        if (len[parts - 1] < 0)
            return ONYX_INVALID_ARG("axis of size %" PRId64 " cannot be split into %" PRId64
                                    " chunks of %" PRId64,
                                    dim, parts, chunk);
        return NULL;
    }
    if (dim % parts)
        return ONYX_INVALID_ARG(
            "axis of size %" PRId64 " is not divisible into %" PRId64 " equal parts", dim, parts);
    for (int64_t i = 0; i < parts; i++) len[i] = dim / parts;
    return NULL;
}

static onyx_status *split_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x;
    ONYX_TRY(tk_tensor_in(ctx, 0, "input", &x));
    if (ctx->n_out == 0 || ctx->n_out > SPLIT_MAX_OUTPUTS)
        return ONYX_INVALID_ARG("Split needs 1 to %d outputs, the node has %zu", SPLIT_MAX_OUTPUTS,
                                ctx->n_out);
    int axis = 0;
    ONYX_TRY(onyx_normalize_axis(onyx_attr_int(ctx->node, "axis", 0), x->rank, &axis));
    int64_t *len = malloc(ctx->n_out * sizeof *len);
    if (!len) return ONYX_OOM();
    onyx_status *st = split_lengths(ctx, x->dims[axis], len);
    if (!st && x->numel == 0) { /* every part is empty too */
        for (size_t i = 0; i < ctx->n_out && !st; i++) {
            int64_t dims[ONYX_MAX_RANK];
            memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
            dims[axis] = len[i];
            onyx_value *y;
            if (ctx->out_used[i]) st = onyx_kernel_output(ctx, i, x->dtype, x->rank, dims, &y);
        }
        free(len);
        return st;
    }
    tk_view vs = {0};
    if (!st) st = tk_view_in(x, &vs);
    int64_t outer = tk_numel(x->dims, 0, axis), inner = tk_numel(x->dims, axis + 1, x->rank);
    int64_t offset = 0;
    for (size_t i = 0; i < ctx->n_out && !st; i++) {
        int64_t dims[ONYX_MAX_RANK];
        memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
        dims[axis] = len[i];
        int64_t run = len[i] * inner;
        if (!ctx->out_used[i]) {
            offset += run;
            continue;
        }
        onyx_value *y;
        tk_view vd;
        st = onyx_kernel_output(ctx, i, x->dtype, x->rank, dims, &y);
        if (st || y->numel == 0) {
            offset += run;
            continue;
        }
        st = tk_view_out(y, &vd);
        if (st) break;
        tk_plan p = {
            .rank = 2, .dims = {outer, run}, .src = {x->dims[axis] * inner, 1}, .dst = {run, 1}};
        st = tk_copy(ctx->tp, &vs, &p, vd.p, vs.p + offset * (int64_t)vs.es);
        st = tk_view_finish(NULL, &vd, y, st);
        offset += run;
    }
    tk_view_release(&vs);
    free(len);
    return st;
}

/* ------------------------------------------------------------------- table */

#define DEF(op, since, until, types, fn)                                                      \
    { "", op, since, until, types, 0, NULL, NULL, fn}

const onyx_op_def onyx_ops_tensor[] = {
    DEF("Reshape", 1, ONYX_OPSET_LATEST, ONYX_T_ALL, reshape_compute),
    DEF("Flatten", 1, ONYX_OPSET_LATEST, ONYX_T_ALL, flatten_compute),
    DEF("Squeeze", 1, ONYX_OPSET_LATEST, ONYX_T_ALL, squeeze_compute),
    DEF("Unsqueeze", 1, ONYX_OPSET_LATEST, ONYX_T_ALL, unsqueeze_compute),
    DEF("Identity", 1, ONYX_OPSET_LATEST, 0, identity_compute),
    DEF("Dropout", 1, ONYX_OPSET_LATEST,
        ONYX_T_FLOATS | ONYX_T(ONYX_FLOAT8E4M3FN) | ONYX_T(ONYX_FLOAT8E4M3FNUZ) |
            ONYX_T(ONYX_FLOAT8E5M2) | ONYX_T(ONYX_FLOAT8E5M2FNUZ),
        dropout_compute),
    DEF("Transpose", 1, ONYX_OPSET_LATEST, ONYX_T_ALL, transpose_compute),
    DEF("DepthToSpace", 1, ONYX_OPSET_LATEST, ONYX_T_ALL, depth_to_space_compute),
    DEF("SpaceToDepth", 1, ONYX_OPSET_LATEST, ONYX_T_ALL, space_to_depth_compute),
    DEF("Expand", 8, ONYX_OPSET_LATEST, ONYX_T_ALL, expand_compute),
    DEF("Tile", 1, ONYX_OPSET_LATEST, ONYX_T_ALL, tile_compute),
    DEF("Concat", 1, ONYX_OPSET_LATEST, ONYX_T_ALL, concat_compute),
    DEF("Split", 1, ONYX_OPSET_LATEST, ONYX_T_ALL, split_compute),
    {0},};
