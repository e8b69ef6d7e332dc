/* Data-movement kernels, part 2: windows over a tensor. Slice, Pad,
 * CenterCropPad, Trilu, ReverseSequence and Compress, through the element
 * views and copy engine of tensor_util. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "providers/cpu/kernel.h"
#include "ir/schemas/tensor_slice.h"
#include "providers/cpu/kernels/tensor/tensor_util.h"

/* Views of input x and output y, released by tk_view_finish. */
static onyx_status *open_views(const onyx_value *x, onyx_value *y, tk_view *vs, tk_view *vd) {
    ONYX_TRY(tk_view_in(x, vs));
    onyx_status *st = tk_view_out(y, vd);
    if (st) tk_view_release(vs);
    return st;
}

/* A "zero" cell of the view's element type (empty string for strings). */
typedef union cell {
    uint8_t bytes[16];
    onyx_string str;
} cell;

static const char empty_string[1] = "";

static void zero_cell(const tk_view *v, cell *c) {
    memset(c, 0, sizeof *c);
    if (v->str) c->str.data = (char *)empty_string;
}

/* ------------------------------------------------------------------- Slice */



static onyx_status *slice_read(onyx_kernel_ctx *ctx, slice_spec *s) {
    memset(s, 0, sizeof *s);
    size_t ns, ne, na = 0, nt = 0;
    if (ctx->opset < 10) {
        const int64_t *a = onyx_attr_ints(ctx->node, "starts", &ns);
        const int64_t *b = onyx_attr_ints(ctx->node, "ends", &ne);
        const int64_t *c = onyx_attr_ints(ctx->node, "axes", &na);
        if (!a || !b) return ONYX_INVALID_ARG("attributes 'starts' and 'ends' are required");
        if (ns > ONYX_MAX_RANK || ne > ONYX_MAX_RANK || na > ONYX_MAX_RANK)
            return ONYX_INVALID_ARG("starts/ends/axes have more than %d values", ONYX_MAX_RANK);
        memcpy(s->starts, a, ns * sizeof *a);
        memcpy(s->ends, b, ne * sizeof *b);
        if (c) memcpy(s->axes, c, na * sizeof *c);
        s->has_axes = c != NULL;
    } else {
        const onyx_value *st, *en, *ax, *sp;
        ONYX_TRY(tk_tensor_in(ctx, 1, "starts", &st));
        ONYX_TRY(tk_tensor_in(ctx, 2, "ends", &en));
        ONYX_TRY(tk_opt_tensor_in(ctx, 3, "axes", &ax));
        ONYX_TRY(tk_opt_tensor_in(ctx, 4, "steps", &sp));
        ONYX_TRY(tk_read_ints(st, "input 1 (starts)", false, s->starts, ONYX_MAX_RANK, &ns));
        ONYX_TRY(tk_read_ints(en, "input 2 (ends)", false, s->ends, ONYX_MAX_RANK, &ne));
        if (ax) ONYX_TRY(tk_read_ints(ax, "input 3 (axes)", false, s->axes, ONYX_MAX_RANK, &na));
        if (sp) ONYX_TRY(tk_read_ints(sp, "input 4 (steps)", false, s->steps, ONYX_MAX_RANK, &nt));
        s->has_axes = ax != NULL;
        s->has_steps = sp != NULL;
    }
    if (ns != ne) return ONYX_INVALID_ARG("starts has %zu values but ends has %zu", ns, ne);
    if (s->has_axes && na != ns)
        return ONYX_INVALID_ARG("axes has %zu values but starts has %zu", na, ns);
    if (s->has_steps && nt != ns)
        return ONYX_INVALID_ARG("steps has %zu values but starts has %zu", nt, ns);
    s->n = ns;
    return NULL;
}

/* Per-axis first index, count and step for the input dims. */
static onyx_status *slice_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x;
    ONYX_TRY(tk_tensor_in(ctx, 0, "data", &x));
    slice_spec s;
    ONYX_TRY(slice_read(ctx, &s));
    int64_t first[ONYX_MAX_RANK], count[ONYX_MAX_RANK], step[ONYX_MAX_RANK];
    ONYX_TRY(onyx_tensor_slice_slice_plan(&s, x->dims, x->rank, first, count, step));
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, x->dtype, x->rank, count, &y));
    if (y->numel == 0) return NULL;
    int64_t strides[ONYX_MAX_RANK], src[ONYX_MAX_RANK], base = 0;
    onyx_strides(x->dims, x->rank, strides);
    for (int k = 0; k < x->rank; k++) {
        base += first[k] * strides[k];
        /* a single element needs no stride (and a huge step would overflow) */
        src[k] = count[k] > 1 ? strides[k] * step[k] : 0;
    }
    tk_view vs, vd;
    ONYX_TRY(open_views(x, y, &vs, &vd));
    onyx_status *st =
        tk_copy_view(ctx->tp, &vs, x->rank, count, src, vd.p, vs.p + base * (int64_t)vs.es);
    return tk_view_finish(&vs, &vd, y, st);
}

/* --------------------------------------------------------------------- Pad */

enum { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE, PAD_WRAP };

typedef struct pad_job {
    const tk_view *vs, *vd;
    int rank, mode;
    const int64_t *in_dims, *out_dims, *before;
    int64_t in_strides[ONYX_MAX_RANK];
    const void *fill; /* constant cell */
    onyx_status *err; /* strings only (single-threaded) */
} pad_job;

/* Source index for position j (relative to the source start) on an axis of
 * size d, or -1 for the constant. */
static int64_t pad_source(int mode, int64_t j, int64_t d) {
    if (j >= 0 && j < d) return j;
    switch (mode) {
    case PAD_EDGE: return j < 0 ? 0 : d - 1;
    case PAD_WRAP: {
        int64_t m = j % d;
        return m < 0 ? m + d : m;
    }
    case PAD_REFLECT: {
        if (d == 1) return 0;
        int64_t period = 2 * (d - 1), m = j % period;
        if (m < 0) m += period;
        return m < d ? m : period - m;
    }
    default: return -1;
    }
}

/* One output row (all dims but the last fixed by row index r). */
static onyx_status *pad_row(const pad_job *j, int64_t r) {
    int last = j->rank - 1;
    int64_t n = j->out_dims[last], d = j->in_dims[last], b = j->before[last];
    size_t es = j->vs->es;
    uint8_t *dst = j->vd->p + r * n * (int64_t)es;
    int64_t src_off = 0;
    bool constant_row = false;
    for (int k = last - 1; k >= 0; k--) {
        int64_t i = r % j->out_dims[k];
        r /= j->out_dims[k];
        int64_t s = pad_source(j->mode, i - j->before[k], j->in_dims[k]);
        if (s < 0)
            constant_row = true;
        else
            src_off += s * j->in_strides[k];
    }
    if (constant_row) return tk_cells_fill(j->vd, dst, j->fill, n);
    const uint8_t *src = j->vs->p + src_off * (int64_t)es;
    /* the part of the row that maps straight onto the source row */
    int64_t lo = onyx_tensor_slice_clamp64(b, 0, n), hi = onyx_tensor_slice_clamp64(b > INT64_MAX - d ? n : b + d, lo, n);
    for (int64_t i = 0; i < lo; i++) {
        int64_t s = pad_source(j->mode, i - b, d);
        ONYX_TRY(s < 0 ? tk_cells_fill(j->vd, dst + i * (int64_t)es, j->fill, 1)
                       : tk_cells_copy(j->vd, dst + i * (int64_t)es, src + s * (int64_t)es, 1));
    }
    ONYX_TRY(tk_cells_copy(j->vd, dst + lo * (int64_t)es, src + (lo - b) * (int64_t)es, hi - lo));
    for (int64_t i = hi; i < n; i++) {
        int64_t s = pad_source(j->mode, i - b, d);
        ONYX_TRY(s < 0 ? tk_cells_fill(j->vd, dst + i * (int64_t)es, j->fill, 1)
                       : tk_cells_copy(j->vd, dst + i * (int64_t)es, src + s * (int64_t)es, 1));
    }
    return NULL;
}

static void pad_rows(void *arg, size_t begin, size_t end) {
    pad_job *j = arg;
    for (size_t r = begin; r < end; r++) {
        onyx_status *st = pad_row(j, (int64_t)r);
        if (st) { /* only strings can fail, and they run on one thread */
            if (!j->err)
                j->err = st;
            else
                onyx_status_free(st);
            return;
        }
    }
}

static onyx_status *pad_mode(const onyx_node *node, int *mode) {
    const char *m = onyx_attr_string(node, "mode", "constant");
    static const char *names[] = {"constant", "reflect", "edge", "wrap"};
    for (int i = 0; i < 4; i++)
        if (!strcmp(m, names[i])) {
            *mode = i;
            return NULL;
        }
    return ONYX_INVALID_ARG("mode '%s' must be constant, reflect, edge or wrap", m);
}

/* pads for every axis: before[k], after[k]. */
static onyx_status *pad_amounts(onyx_kernel_ctx *ctx, int rank, int64_t *before, int64_t *after) {
    int64_t pads[2 * ONYX_MAX_RANK], axes_raw[ONYX_MAX_RANK];
    size_t np = 0, na = (size_t)rank;
    int axes[ONYX_MAX_RANK];
    for (int k = 0; k < rank; k++) axes[k] = k;
    if (ctx->opset < 11) {
        const char *name = ctx->opset < 2 ? "paddings" : "pads";
        const int64_t *a = onyx_attr_ints(ctx->node, name, &np);
        if (!a) return ONYX_INVALID_ARG("attribute '%s' is required", name);
        if (np > 2 * ONYX_MAX_RANK)
            return ONYX_INVALID_ARG("'%s' has too many values (%zu)", name, np);
        memcpy(pads, a, np * sizeof *a);
    } else {
        const onyx_value *p, *ax;
        ONYX_TRY(tk_tensor_in(ctx, 1, "pads", &p));
        ONYX_TRY(tk_read_ints(p, "input 1 (pads)", false, pads, 2 * ONYX_MAX_RANK, &np));
        ONYX_TRY(tk_opt_tensor_in(ctx, 3, "axes", &ax));
        if (ax && ctx->opset >= 18) {
            ONYX_TRY(tk_read_ints(ax, "input 3 (axes)", false, axes_raw, ONYX_MAX_RANK, &na));
            ONYX_TRY(tk_normalize_axes(axes_raw, na, rank, "axes", axes));
        }
    }
    if (np != 2 * na)
        return ONYX_INVALID_ARG("pads has %zu values, expected %zu (2 per padded axis)", np,
                                2 * na);
    for (int k = 0; k < rank; k++) before[k] = after[k] = 0;
    for (size_t i = 0; i < na; i++) {
        before[axes[i]] = pads[i];
        after[axes[i]] = pads[na + i];
    }
    return NULL;
}

/* The fill cell for constant mode. */
static onyx_status *pad_fill(onyx_kernel_ctx *ctx, const onyx_value *x, const tk_view *vs,
                             cell *c) {
    zero_cell(vs, c);
    if (ctx->opset < 11) {
        if (vs->str) return NULL;
        float v = onyx_attr_float(ctx->node, "value", 0.0f);
        uint8_t packed[16] = {0};
        onyx_store_from_double(x->dtype, packed, 0, v);
        if (vs->bits < 8)
            c->bytes[0] = tk_get_packed(packed, 0, vs->bits);
        else
            memcpy(c->bytes, packed, vs->es);
        return NULL;
    }
    const onyx_value *v;
    ONYX_TRY(tk_opt_tensor_in(ctx, 2, "constant_value", &v));
    if (!v || v->numel == 0) return NULL;
    if (v->dtype != x->dtype)
        return ONYX_INVALID_ARG("constant_value has type %s, data has %s",
                                onyx_dtype_name(v->dtype), onyx_dtype_name(x->dtype));
    if (v->numel != 1 || !v->data) return ONYX_INVALID_ARG("constant_value must hold one value");
    if (vs->str)
        c->str = *(const onyx_string *)v->data;
    else if (vs->bits < 8)
        c->bytes[0] = tk_get_packed(v->data, 0, vs->bits);
    else
        memcpy(c->bytes, v->data, vs->es);
    return NULL;
}

static onyx_status *pad_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x;
    ONYX_TRY(tk_tensor_in(ctx, 0, "data", &x));
    int mode = PAD_CONSTANT;
    ONYX_TRY(pad_mode(ctx->node, &mode));
    int64_t before[ONYX_MAX_RANK], after[ONYX_MAX_RANK], dims[ONYX_MAX_RANK];
    ONYX_TRY(pad_amounts(ctx, x->rank, before, after));
    for (int k = 0; k < x->rank; k++) {
        if (onyx_add_overflow_i64(x->dims[k], before[k], &dims[k]) ||
            onyx_add_overflow_i64(dims[k], after[k], &dims[k]) || dims[k] < 0)
            return ONYX_INVALID_ARG("axis %d: size %" PRId64 " padded by %" PRId64 " and %" PRId64
                                    " is invalid",
                                    k, x->dims[k], before[k], after[k]);
        if (mode != PAD_CONSTANT && x->dims[k] == 0 && dims[k] > 0)
            return ONYX_INVALID_ARG("axis %d is empty and cannot be padded in %s mode", k,
                                    onyx_attr_string(ctx->node, "mode", ""));
    }
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, x->dtype, x->rank, dims, &y));
    if (y->numel == 0) return NULL;
    tk_view vs, vd;
    ONYX_TRY(open_views(x, y, &vs, &vd));
    cell fill;
    onyx_status *st = pad_fill(ctx, x, &vs, &fill);
    if (st) return tk_view_finish(&vs, &vd, y, st);
    if (x->rank == 0) {
        st = tk_cells_copy(&vs, vd.p, vs.p, 1);
        return tk_view_finish(&vs, &vd, y, st);
    }
    pad_job j = {.vs = &vs,
                 .vd = &vd,
                 .rank = x->rank,
                 .mode = mode,
                 .in_dims = x->dims,
                 .out_dims = dims,
                 .before = before,
                 .fill = &fill};
    onyx_strides(x->dims, x->rank, j.in_strides);
    int64_t rows = tk_numel(dims, 0, x->rank - 1);
    if (vs.str || y->nbytes < TK_PAR_MIN_BYTES)
        pad_rows(&j, 0, (size_t)rows);
    else
        onyx_parallel_for(ctx->tp, (size_t)rows,
                          1 + (size_t)((16 << 10) / (dims[x->rank - 1] * (int64_t)vs.es + 1)),
                          pad_rows, &j);
    return tk_view_finish(&vs, &vd, y, j.err);
}

/* ----------------------------------------------------------- CenterCropPad */

static onyx_status *center_crop_pad_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x, *s;
    ONYX_TRY(tk_tensor_in(ctx, 0, "input_data", &x));
    ONYX_TRY(tk_tensor_in(ctx, 1, "shape", &s));
    int64_t shape[ONYX_MAX_RANK];
    size_t n;
    ONYX_TRY(tk_read_ints(s, "input 1 (shape)", false, shape, ONYX_MAX_RANK, &n));
    int axes[ONYX_MAX_RANK];
    size_t na;
    const int64_t *a = onyx_attr_ints(ctx->node, "axes", &na);
    if (a) {
        if (na > ONYX_MAX_RANK) return ONYX_INVALID_ARG("axes has too many values (%zu)", na);
        ONYX_TRY(tk_normalize_axes(a, na, x->rank, "axes", axes));
    } else {
        na = (size_t)x->rank;
        for (int k = 0; k < x->rank; k++) axes[k] = k;
    }
    if (n != na) return ONYX_INVALID_ARG("shape has %zu values for %zu axes", n, na);
    int64_t dims[ONYX_MAX_RANK], src_off[ONYX_MAX_RANK] = {0}, dst_off[ONYX_MAX_RANK] = {0},
                                 len[ONYX_MAX_RANK];
    memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
    memcpy(len, x->dims, sizeof(int64_t) * (size_t)x->rank);
    bool padded = false;
    for (size_t i = 0; i < na; i++) {
        int k = axes[i];
        int64_t d = x->dims[k], t = shape[i];
        if (t < 0) return ONYX_INVALID_ARG("shape[%zu] = %" PRId64 " is negative", i, t);
        dims[k] = t;
        if (d >= t) {
            src_off[k] = (d - t) / 2; /* crop window starts rounded down */
            len[k] = t;
        } else {
            dst_off[k] = (t - d) / 2; /* the odd extra pad goes to the end */
            len[k] = d;
            padded = true;
        }
    }
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, x->dtype, x->rank, dims, &y));
    if (y->numel == 0) return NULL;
    tk_view vs, vd;
    ONYX_TRY(open_views(x, y, &vs, &vd));
    onyx_status *st = NULL;
    if (padded) {
        cell zero;
        zero_cell(&vs, &zero);
        st = tk_cells_fill(&vd, vd.p, &zero, vd.n);
    }
    int64_t in_strides[ONYX_MAX_RANK], out_strides[ONYX_MAX_RANK], sb = 0, db = 0;
    onyx_strides(x->dims, x->rank, in_strides);
    onyx_strides(dims, x->rank, out_strides);
    tk_plan p = {.rank = x->rank};
    for (int k = 0; k < x->rank; k++) {
        sb += src_off[k] * in_strides[k];
        db += dst_off[k] * out_strides[k];
        p.dims[k] = len[k];
        p.src[k] = in_strides[k];
        p.dst[k] = out_strides[k];
    }
    if (!st) st = tk_copy(ctx->tp, &vs, &p, vd.p + db * (int64_t)vd.es, vs.p + sb * (int64_t)vs.es);
    return tk_view_finish(&vs, &vd, y, st);
}

/* ------------------------------------------------------------------- Trilu */

static onyx_status *trilu_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x, *kv;
    ONYX_TRY(tk_tensor_in(ctx, 0, "input", &x));
    ONYX_TRY(tk_opt_tensor_in(ctx, 1, "k", &kv));
    if (x->rank < 2) {
        char sb[128];
        return ONYX_INVALID_ARG("input must have rank >= 2, got %s", tk_shape(x, sb, sizeof sb));
    }
    int64_t k = 0;
    if (kv) ONYX_TRY(tk_read_scalar_int(kv, "input 1 (k)", &k));
    bool upper = onyx_attr_int(ctx->node, "upper", 1) != 0;
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, x->dtype, x->rank, x->dims, &y));
    if (y->numel == 0) return NULL;
    int64_t rows = x->dims[x->rank - 2], cols = x->dims[x->rank - 1];
    int64_t mats = tk_numel(x->dims, 0, x->rank - 2);
    /* keep |k| small enough that row + k cannot overflow */
    k = onyx_tensor_slice_clamp64(k, -rows - cols - 1, rows + cols + 1);
    tk_view vs, vd;
    ONYX_TRY(open_views(x, y, &vs, &vd));
    cell zero;
    zero_cell(&vs, &zero);
    size_t es = vs.es;
    onyx_status *st = NULL;
    for (int64_t m = 0; m < mats && !st; m++) {
        for (int64_t i = 0; i < rows && !st; i++) {
            int64_t off = (m * rows + i) * cols;
            uint8_t *d = vd.p + off * (int64_t)es;
            const uint8_t *s = vs.p + off * (int64_t)es;
            /* upper keeps columns j >= i + k, lower keeps j <= i + k */
            int64_t lo = upper ? onyx_tensor_slice_clamp64(i + k, 0, cols) : 0;
            int64_t hi = upper ? cols : onyx_tensor_slice_clamp64(i + k + 1, 0, cols);
            st = tk_cells_fill(&vd, d, &zero, lo);
            if (!st) st = tk_cells_copy(&vd, d + lo * (int64_t)es, s + lo * (int64_t)es, hi - lo);
            if (!st) st = tk_cells_fill(&vd, d + hi * (int64_t)es, &zero, cols - hi);
        }
    }
    return tk_view_finish(&vs, &vd, y, st);
}

/* --------------------------------------------------------- ReverseSequence */

static onyx_status *reverse_sequence_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x, *lens;
    ONYX_TRY(tk_tensor_in(ctx, 0, "input", &x));
    ONYX_TRY(tk_tensor_in(ctx, 1, "sequence_lens", &lens));
    int64_t ta = onyx_attr_int(ctx->node, "time_axis", 0),
            ba = onyx_attr_int(ctx->node, "batch_axis", 1);
    if (x->rank < 2) return ONYX_INVALID_ARG("input must have rank >= 2, got rank %d", x->rank);
    if (!((ta == 0 && ba == 1) || (ta == 1 && ba == 0)))
        return ONYX_INVALID_ARG("time_axis (%" PRId64 ") and batch_axis (%" PRId64
                                ") must be 0 and 1 in some order",
                                ta, ba);
    int64_t steps = x->dims[ta], batch = x->dims[ba];
    if (!tk_is_index_type(lens->dtype) || lens->rank != 1 || lens->dims[0] != batch) {
        char sb[128];
        return ONYX_INVALID_ARG("sequence_lens must be an int64 tensor of shape [%" PRId64
                                "], got %s %s",
                                batch, onyx_dtype_name(lens->dtype), tk_shape(lens, sb, sizeof sb));
    }
    for (int64_t b = 0; b < batch; b++) {
        int64_t l = tk_index_at(lens, b);
        if (l < 0 || l > steps)
            return ONYX_INVALID_ARG("sequence_lens[%" PRId64 "] = %" PRId64
                                    " is out of range [0, %" PRId64 "]",
                                    b, l, steps);
    }
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, x->dtype, x->rank, x->dims, &y));
    if (y->numel == 0) return NULL;
    int64_t inner = tk_numel(x->dims, 2, x->rank);
    tk_view vs, vd;
    ONYX_TRY(open_views(x, y, &vs, &vd));
    size_t es = vs.es;
    onyx_status *st = NULL;
    for (int64_t b = 0; b < batch && !st; b++) {
        int64_t l = tk_index_at(lens, b);
        for (int64_t t = 0; t < steps && !st; t++) {
            int64_t from = t < l ? l - 1 - t : t;
            int64_t d = ta == 0 ? t * batch + b : b * steps + t;
            int64_t s = ta == 0 ? from * batch + b : b * steps + from;
            st = tk_cells_copy(&vs, vd.p + d * inner * (int64_t)es, vs.p + s * inner * (int64_t)es,
                               inner);
        }
    }
    return tk_view_finish(&vs, &vd, y, st);
}

/* ---------------------------------------------------------------- Compress */

static onyx_status *compress_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x, *c;
    ONYX_TRY(tk_tensor_in(ctx, 0, "input", &x));
    ONYX_TRY(tk_tensor_in(ctx, 1, "condition", &c));
    if (c->dtype != ONYX_BOOL || c->rank != 1 || (c->numel && !c->data)) {
        char sb[128];
        return ONYX_INVALID_ARG("condition must be a 1-D bool tensor, got %s %s",
                                onyx_dtype_name(c->dtype), tk_shape(c, sb, sizeof sb));
    }
    const onyx_attr_proto *axis_attr = onyx_node_attr(ctx->node, "axis");
    int axis = -1;
    if (axis_attr) {
        if (x->rank < 1) return ONYX_INVALID_ARG("input must have rank >= 1 when axis is given");
        ONYX_TRY(onyx_normalize_axis(axis_attr->i, x->rank, &axis));
    }
    int64_t span = axis < 0 ? x->numel : x->dims[axis];
    const uint8_t *cond = c->data;
    int64_t kept = 0;
    for (int64_t i = 0; i < c->numel; i++) {
        if (!cond[i]) continue;
        if (i >= span)
            return ONYX_INVALID_ARG(
                "condition[%" PRId64 "] is true but the selected axis has size %" PRId64, i, span);
        kept++;
    }
    int64_t dims[ONYX_MAX_RANK];
    int rank = axis < 0 ? 1 : x->rank;
    if (axis < 0)
        dims[0] = kept;
    else {
        memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
        dims[axis] = kept;
    }
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, x->dtype, rank, dims, &y));
    if (y->numel == 0) return NULL;
    int64_t outer = axis < 0 ? 1 : tk_numel(x->dims, 0, axis);
    int64_t inner = axis < 0 ? 1 : tk_numel(x->dims, axis + 1, x->rank);
    tk_view vs, vd;
    ONYX_TRY(open_views(x, y, &vs, &vd));
    size_t es = vs.es;
    onyx_status *st = NULL;
    uint8_t *d = vd.p;
    int64_t limit = c->numel < span ? c->numel : span;
    for (int64_t o = 0; o < outer && !st; o++) {
        for (int64_t i = 0; i < limit && !st; i++) {
            if (!cond[i]) continue;
            st = tk_cells_copy(&vs, d, vs.p + (o * span + i) * inner * (int64_t)es, inner);
            d += inner * (int64_t)es;
        }
    }
    return tk_view_finish(&vs, &vd, y, st);
}

/* ------------------------------------------------------------------- table */

#define DEF(op, since, until, types, fn)                                                      \
    { "", op, since, until, types, 0, NULL, NULL, fn}

const onyx_op_def onyx_ops_tensor_slice[] = {
    DEF("Slice", 1, ONYX_OPSET_LATEST, ONYX_T_ALL, slice_compute),
    DEF("Pad", 1, ONYX_OPSET_LATEST, ONYX_T_ALL, pad_compute),
    DEF("CenterCropPad", 18, ONYX_OPSET_LATEST, ONYX_T_ALL, center_crop_pad_compute),
    DEF("Trilu", 14, ONYX_OPSET_LATEST, ONYX_T_ALL, trilu_compute),
    DEF("ReverseSequence", 10, ONYX_OPSET_LATEST, ONYX_T_ALL, reverse_sequence_compute),
    DEF("Compress", 9, ONYX_OPSET_LATEST, ONYX_T_ALL, compress_compute),
    {0},};
