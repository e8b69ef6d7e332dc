/* Inference rules of the operators of providers/cpu/kernels/tensor/reshape_transpose_concat.c (the kernels run them). */
#include <inttypes.h>
#include <string.h>
#include "ir/schema.h"
#include "ir/infer_kit.h"
#include "ir/schemas/tensor.h"

#define L ONYX_SCHEMA_LATEST

static void infer_copy_dims(onyx_type *out, const onyx_type *in) {
    for (int i = 0; i < in->rank; i++) out->dims[i] = in->dims[i];
}
static onyx_status *reshape_infer(onyx_infer_ctx *ctx) {
    const onyx_type *t = tk_infer_in(ctx, 0);
    tk_type_tensor(&ctx->out[0], tk_in_dtype(ctx, 0), -1);
    const onyx_value *s = tk_infer_const(ctx, 1);
    int64_t shape[ONYX_MAX_RANK];
    size_t n = 0;
    if (ctx->opset < 5) {
        size_t cnt;
        const int64_t *a = onyx_attr_ints(ctx->node, "shape", &cnt);
        if (!a || cnt > ONYX_MAX_RANK) return NULL;
        memcpy(shape, a, cnt * sizeof *a);
        n = cnt;
    } else if (!s || !tk_infer_ints(s, shape, &n)) {
        const onyx_type *st = tk_infer_in(ctx, 1);
        if (st && st->rank == 1 && st->dims[0] >= 0 && st->dims[0] <= ONYX_MAX_RANK)
            ctx->out[0].rank = (int)st->dims[0];
        return NULL;
    }
    bool allowzero = ctx->opset >= 14 && onyx_attr_int(ctx->node, "allowzero", 0) != 0;
    onyx_type *o = &ctx->out[0];
    o->rank = (int)n;
    int unknown = -1;
    int64_t known = 1;
    bool all_known = true;
    for (size_t i = 0; i < n; i++) {
        int64_t v = shape[i];
        if (v == -1) {
            unknown = (int)i;
            continue;
        }
        if (v < -1) return ONYX_INVALID_ARG("Reshape: shape[%zu] = %" PRId64 " is negative", i, v);
        if (v == 0 && !allowzero)
            v = tk_has_rank(t) && (int)i < t->rank ? t->dims[i] : ONYX_DIM_UNKNOWN;
        o->dims[i] = v;
        if (v < 0 || onyx_mul_overflow_i64(known, v, &known)) all_known = false;
    }
    if (unknown >= 0 && all_known && known > 0 && tk_has_rank(t)) {
        int64_t total = 1;
        for (int i = 0; i < t->rank; i++) {
            if (t->dims[i] < 0 || onyx_mul_overflow_i64(total, t->dims[i], &total)) return NULL;
        }
        if (total % known == 0) o->dims[unknown] = total / known;
    }
    return NULL;
}
/* ----------------------------------------------------------------- Flatten */

onyx_status *onyx_tensor_flatten_axis(int opset, int64_t axis, int rank, int *out) {
    int64_t lo = opset < 11 ? 0 : -(int64_t)rank;
    if (axis < lo || axis > rank)
        return ONYX_INVALID_ARG("axis %" PRId64 " is out of range [%" PRId64 ", %d] for rank %d",
                                axis, lo, rank, rank);
    *out = (int)(axis < 0 ? axis + rank : axis);
    return NULL;
}
static int64_t infer_product(const onyx_type *t, int lo, int hi) {
    if (hi - lo == 1) return t->dims[lo]; /* keeps a symbolic dim */
    int64_t n = 1;
    for (int i = lo; i < hi; i++)
        if (t->dims[i] < 0 || onyx_mul_overflow_i64(n, t->dims[i], &n)) return ONYX_DIM_UNKNOWN;
    return n;
}
static onyx_status *flatten_infer(onyx_infer_ctx *ctx) {
    const onyx_type *t = tk_infer_in(ctx, 0);
    tk_type_tensor(&ctx->out[0], tk_in_dtype(ctx, 0), 2);
    if (!tk_has_rank(t)) return NULL;
    int axis = 0;
    ONYX_TRY(onyx_tensor_flatten_axis(ctx->opset, onyx_attr_int(ctx->node, "axis", 1), t->rank, &axis));
    ctx->out[0].dims[0] = infer_product(t, 0, axis);
    ctx->out[0].dims[1] = infer_product(t, axis, t->rank);
    return NULL;
}
/* Squeeze's and Unsqueeze's start: output 0 gets input 0's element type,
 * rank unknown; true when input 0's rank and the axes are known (the
 * attribute before opset 13, constant input 1 from 13; *present says
 * whether any were given). */
static bool infer_axes(onyx_infer_ctx *ctx, int64_t *axes, size_t *n, bool *present) {
    tk_type_tensor(&ctx->out[0], tk_in_dtype(ctx, 0), -1);
    if (!tk_has_rank(tk_infer_in(ctx, 0))) return false;
    if (ctx->opset < 13) {
        const int64_t *a = onyx_attr_ints(ctx->node, "axes", n);
        *present = onyx_node_attr(ctx->node, "axes") != NULL;
        if (*n > ONYX_MAX_RANK) return false;
        if (*n) memcpy(axes, a, *n * sizeof *a);
        return true;
    }
    *present = tk_infer_in(ctx, 1) != NULL;
    *n = 0;
    if (!*present) return true;
    const onyx_value *c = tk_infer_const(ctx, 1);
    if (!c) return false;
    return tk_infer_ints(c, axes, n);
}
static onyx_status *squeeze_infer(onyx_infer_ctx *ctx) {
    int64_t axes[ONYX_MAX_RANK];
    size_t n;
    bool present;
    if (!infer_axes(ctx, axes, &n, &present)) return NULL;
    const onyx_type *t = ctx->in[0];
    onyx_type *o = &ctx->out[0];
    bool drop[ONYX_MAX_RANK] = {false};
    if (present && n) {
        int ax[ONYX_MAX_RANK];
        ONYX_TRY(onyx_error_wrap(tk_normalize_axes(axes, n, t->rank, "axes", ax), "Squeeze: "));
        for (size_t i = 0; i < n; i++) drop[ax[i]] = true;
    } else {
        for (int i = 0; i < t->rank; i++) {
            if (t->dims[i] < 0) return NULL; /* unknown whether it is 1 */
            drop[i] = t->dims[i] == 1;
        }
    }
    o->rank = 0;
    for (int i = 0; i < t->rank; i++)
        if (!drop[i]) o->dims[o->rank++] = t->dims[i];
    return NULL;
}
/* --------------------------------------------------------------- Unsqueeze */

onyx_status *onyx_tensor_unsqueeze_dims(const int64_t *in, int rank, const int64_t *axes, size_t n,
                                   int64_t *out, int *out_rank) {
    if (rank + n > ONYX_MAX_RANK)
        return ONYX_INVALID_ARG("output rank %zu exceeds %d", rank + n, ONYX_MAX_RANK);
    int r = rank + (int)n;
    int ax[ONYX_MAX_RANK];
    ONYX_TRY(tk_normalize_axes(axes, n, r, "axes", ax));
    bool ins[ONYX_MAX_RANK] = {false};
    for (size_t i = 0; i < n; i++) ins[ax[i]] = true;
    for (int i = 0, j = 0; i < r; i++) out[i] = ins[i] ? 1 : in[j++];
    *out_rank = r;
    return NULL;
}
static onyx_status *unsqueeze_infer(onyx_infer_ctx *ctx) {
    int64_t axes[ONYX_MAX_RANK];
    size_t n;
    bool present;
    if (!infer_axes(ctx, axes, &n, &present) || !present) return NULL;
    const onyx_type *t = ctx->in[0];
    onyx_type *o = &ctx->out[0];
    int r;
    ONYX_TRY(
        onyx_error_wrap(onyx_tensor_unsqueeze_dims(t->dims, t->rank, axes, n, o->dims, &r), "Unsqueeze: "));
    o->rank = r;
    return NULL;
}
static onyx_status *dropout_infer(onyx_infer_ctx *ctx) {
    const onyx_type *t = tk_infer_in(ctx, 0);
    if (!t) return NULL;
    ctx->out[0] = *t;
    if (ctx->n_out > 1) {
        ctx->out[1] = *t;
        if (ctx->opset >= 10) ctx->out[1].dtype = ONYX_BOOL;
    }
    return NULL;
}
/* --------------------------------------------------------------- Transpose */

onyx_status *onyx_tensor_read_perm(const onyx_node *node, int rank, int *perm) {
    size_t n;
    const int64_t *p = onyx_attr_ints(node, "perm", &n);
    if (!p) {
        for (int i = 0; i < rank; i++) perm[i] = rank - 1 - i;
        return NULL;
    }
    if ((int64_t)n != rank)
        return ONYX_INVALID_ARG("perm has %zu entries but the input has rank %d", n, rank);
    bool seen[ONYX_MAX_RANK] = {false};
    for (int i = 0; i < rank; i++) {
        int64_t a = p[i];
        if (a < -(int64_t)rank || a >= rank)
            return ONYX_INVALID_ARG("perm[%d] = %" PRId64 " is out of range [0, %d]", i, a,
                                    rank - 1);
        if (a < 0) a += rank; /* tolerated by common runtimes */
        if (seen[a]) return ONYX_INVALID_ARG("perm repeats axis %" PRId64, a);
        seen[a] = true;
        perm[i] = (int)a;
    }
    return NULL;
}
static onyx_status *transpose_infer(onyx_infer_ctx *ctx) {
    const onyx_type *t = tk_infer_in(ctx, 0);
    onyx_type *o = &ctx->out[0];
    tk_type_tensor(o, tk_in_dtype(ctx, 0), -1);
    if (!tk_has_rank(t)) return NULL;
    int perm[ONYX_MAX_RANK];
    ONYX_TRY(onyx_error_wrap(onyx_tensor_read_perm(ctx->node, t->rank, perm), "Transpose: "));
    o->rank = t->rank;
    for (int i = 0; i < t->rank; i++) o->dims[i] = t->dims[perm[i]];
    return NULL;
}
static onyx_status *d2s_infer_common(onyx_infer_ctx *ctx, bool to_space) {
    const onyx_type *t = tk_infer_in(ctx, 0);
    onyx_type *o = &ctx->out[0];
    tk_type_tensor(o, tk_in_dtype(ctx, 0), 4);
    int64_t b = onyx_attr_int(ctx->node, "blocksize", 0);
    if (!tk_has_rank(t) || t->rank != 4 || b <= 0 || b > (INT64_C(1) << 31)) return NULL;
    o->dims[0] = t->dims[0];
    for (int i = 1; i < 4; i++) {
        int64_t d = t->dims[i];
        if (d < 0) continue;
        bool grow = (i == 1) != to_space; /* C grows in SpaceToDepth, H/W in DepthToSpace */
        int64_t f = i == 1 ? b * b : b;
        if (grow) {
            if (!onyx_mul_overflow_i64(d, f, &d)) o->dims[i] = d;
        } else if (d % f == 0)
            o->dims[i] = d / f;
    }
    return NULL;
}
static onyx_status *depth_to_space_infer(onyx_infer_ctx *ctx) {
    return d2s_infer_common(ctx, true);
}
static onyx_status *space_to_depth_infer(onyx_infer_ctx *ctx) {
    return d2s_infer_common(ctx, false);
}
static onyx_status *expand_infer(onyx_infer_ctx *ctx) {
    const onyx_type *t = tk_infer_in(ctx, 0);
    onyx_type *o = &ctx->out[0];
    tk_type_tensor(o, tk_in_dtype(ctx, 0), -1);
    const onyx_value *s = tk_infer_const(ctx, 1);
    int64_t shape[ONYX_MAX_RANK];
    size_t n;
    if (!s || !tk_has_rank(t)) {
        const onyx_type *st = tk_infer_in(ctx, 1);
        if (tk_has_rank(t) && st && st->rank == 1 && st->dims[0] >= 0 &&
            st->dims[0] <= ONYX_MAX_RANK)
            o->rank = t->rank > st->dims[0] ? t->rank : (int)st->dims[0];
        return NULL;
    }
    onyx_status *err = tk_read_ints(s, "shape", false, shape, ONYX_MAX_RANK, &n);
    if (err) return onyx_error_wrap(err, "Expand: ");
    int r = t->rank > (int)n ? t->rank : (int)n;
    o->rank = r;
    for (int i = 0; i < r; i++) {
        int ki = i - (r - t->rank), ks = i - (r - (int)n);
        int64_t a = ki < 0 ? 1 : t->dims[ki], b = ks < 0 ? 1 : shape[ks];
        if (b == 1)
            o->dims[i] = a; /* copies a symbolic dim */
        else if (a == 1 || a == b)
            o->dims[i] = b;
        else if (a >= 0)
            return ONYX_INVALID_ARG("Expand: dims %" PRId64 " and %" PRId64 " do not broadcast", a,
                                    b);
        else
            o->dims[i] = b; /* unknown input dim must be 1 or b */
    }
    return NULL;
}
static onyx_status *tile_infer(onyx_infer_ctx *ctx) {
    const onyx_type *t = tk_infer_in(ctx, 0);
    onyx_type *o = &ctx->out[0];
    tk_type_tensor(o, tk_in_dtype(ctx, 0), tk_has_rank(t) ? t->rank : -1);
    const onyx_value *r = tk_infer_const(ctx, 1);
    int64_t reps[ONYX_MAX_RANK];
    size_t n;
    if (!tk_has_rank(t) || ctx->opset < 6 || !r) return NULL;
    if (!tk_infer_ints(r, reps, &n) || (int)n != t->rank) return NULL;
    for (int i = 0; i < t->rank; i++) {
        int64_t d;
        if (reps[i] == 1)
            o->dims[i] = t->dims[i];
        else if (reps[i] == 0)
            o->dims[i] = 0;
        else if (t->dims[i] >= 0 && !onyx_mul_overflow_i64(t->dims[i], reps[i], &d))
            o->dims[i] = d;
    }
    return NULL;
}
static onyx_status *concat_infer(onyx_infer_ctx *ctx) {
    const onyx_type *t0 = tk_infer_in(ctx, 0);
    onyx_type *o = &ctx->out[0];
    tk_type_tensor(o, tk_in_dtype(ctx, 0), -1);
    int rank = -1;
    for (size_t i = 0; i < ctx->n_in; i++)
        if (tk_has_rank(tk_infer_in(ctx, i))) rank = ctx->in[i]->rank;
    if (rank <= 0 || !t0) return NULL;
    int64_t axis_attr = onyx_attr_int(ctx->node, "axis", 1);
    int axis = 0;
    ONYX_TRY(onyx_error_wrap(onyx_normalize_axis(axis_attr, rank, &axis), "Concat: "));
    o->rank = rank;
    int64_t sum = 0;
    for (size_t i = 0; i < ctx->n_in; i++) {
        const onyx_type *t = tk_infer_in(ctx, i);
        if (!tk_has_rank(t)) {
            sum = -1;
            continue;
        }
        if (t->rank != rank)
            return ONYX_INVALID_ARG("Concat: input %zu has rank %d, expected %d", i, t->rank, rank);
        for (int k = 0; k < rank; k++)
            if (k != axis && o->dims[k] < 0 && t->dims[k] != ONYX_DIM_UNKNOWN)
                o->dims[k] = t->dims[k];
        if (sum >= 0 && (t->dims[axis] < 0 || onyx_add_overflow_i64(sum, t->dims[axis], &sum)))
            sum = -1;
    }
    o->dims[axis] =
        ctx->n_in == 1 ? tk_infer_in(ctx, 0)->dims[axis] : (sum >= 0 ? sum : ONYX_DIM_UNKNOWN);
    return NULL;
}
static onyx_status *split_infer(onyx_infer_ctx *ctx) {
    const onyx_type *t = tk_infer_in(ctx, 0);
    for (size_t i = 0; i < ctx->n_out; i++) {
        tk_type_tensor(&ctx->out[i], tk_in_dtype(ctx, 0), -1);
        if (tk_has_rank(t)) {
            ctx->out[i].rank = t->rank;
            infer_copy_dims(&ctx->out[i], t);
        }
    }
    if (!tk_has_rank(t) || t->rank == 0 || ctx->n_out == 0) return NULL;
    int axis = 0;
    ONYX_TRY(onyx_error_wrap(
        onyx_normalize_axis(onyx_attr_int(ctx->node, "axis", 0), t->rank, &axis), "Split: "));
    for (size_t i = 0; i < ctx->n_out; i++) ctx->out[i].dims[axis] = ONYX_DIM_UNKNOWN;
    /* sizes from a constant split input or the attribute, else equal parts */
    const onyx_value *s = ctx->opset >= 13 ? tk_infer_const(ctx, 1) : NULL;
    size_t n = 0;
    const int64_t *a = ctx->opset < 13 ? onyx_attr_ints(ctx->node, "split", &n) : NULL;
    if (a && n == ctx->n_out) {
        for (size_t i = 0; i < n; i++) ctx->out[i].dims[axis] = a[i] >= 0 ? a[i] : ONYX_DIM_UNKNOWN;
    } else if (s && tk_is_index_type(s->dtype) && s->numel == (int64_t)ctx->n_out && s->data) {
        for (size_t i = 0; i < ctx->n_out; i++) {
            int64_t v = tk_index_at(s, (int64_t)i);
            ctx->out[i].dims[axis] = v >= 0 ? v : ONYX_DIM_UNKNOWN;
        }
    } else if (!tk_infer_in(ctx, 1) && t->dims[axis] >= 0) {
        int64_t dim = t->dims[axis], parts = (int64_t)ctx->n_out;
        int64_t chunk = dim / parts + (ctx->opset >= 18 && dim % parts != 0);
        if (ctx->opset < 18 && dim % parts) return NULL;
        for (size_t i = 0; i < ctx->n_out; i++) ctx->out[i].dims[axis] = chunk;
        int64_t last = dim - chunk * (parts - 1);
        if (last >= 0) ctx->out[parts - 1].dims[axis] = last;
    }
    return NULL;
}

const onyx_schema_def onyx_schemas_tensor[] = {
    {"", "Concat", 1, L, concat_infer},
    {"", "DepthToSpace", 1, L, depth_to_space_infer},
    {"", "Dropout", 1, L, dropout_infer},
    {"", "Expand", 8, L, expand_infer},
    {"", "Flatten", 1, L, flatten_infer},
    {"", "Identity", 1, L, onyx_infer_same_as_input0},
    {"", "Reshape", 1, L, reshape_infer},
    {"", "SpaceToDepth", 1, L, space_to_depth_infer},
    {"", "Split", 1, L, split_infer},
    {"", "Squeeze", 1, L, squeeze_infer},
    {"", "Tile", 1, L, tile_infer},
    {"", "Transpose", 1, L, transpose_infer},
    {"", "Unsqueeze", 1, L, unsqueeze_infer},
    {0},
};
