/* Linear quantization: QuantizeLinear, DequantizeLinear (every opset from
 * 10 to the latest) and DynamicQuantizeLinear.
 *
 * Granularity comes from the scale's shape: one value (per tensor), a 1-D
 * tensor as long as the quantized axis (per axis), or the input's shape
 * with the axis divided into blocks of block_size (blocked). Zero points
 * have the scale's shape. The element loop walks runs of elements that
 * share one parameter (per tensor, per axis) or whose parameters are
 * consecutive (blocked, or per axis on the last axis), so the parameter
 * index costs one division per run, not per element.
 *
 * Quantization divides in the precision of the scale's type (or of the
 * `precision` attribute), rounds half to even and saturates for the integer
 * types; float8 and float4 outputs round to nearest even and saturate as
 * Cast does. float x, float scale and an 8-bit output (the QDQ hot path) run
 * in float; everything else in double with the quotient rounded to the
 * precision type first. Work is split in chunks of a multiple of 8
 * elements, so packed 4-bit and 2-bit outputs never share a byte between
 * threads. */
#include <math.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/checked.h"
#include "core/dtype_ext.h"
#include "providers/cpu/kernel.h"
#include "providers/cpu/kernels/nn_math.h"

#define L ONYX_OPSET_LATEST
#define T_(x) ONYX_T(ONYX_##x)
#define F8_TYPES (T_(FLOAT8E4M3FN) | T_(FLOAT8E4M3FNUZ) | T_(FLOAT8E5M2) | T_(FLOAT8E5M2FNUZ))
#define F_TYPES (T_(FLOAT) | T_(FLOAT16) | T_(BFLOAT16))

/* Elements per work item of the parallel loop (a multiple of 8). */
#define Q_CHUNK 8192
/* Elements converted at once through the double buffers. */
#define Q_SPAN 256

/* ------------------------------------------------------------ type tables */

/* The element types one version allows: x, the scale, and the quantized
 * side (QuantizeLinear's y and zero point, DequantizeLinear's x). */
typedef struct q_types {
    int since;
    uint64_t x, scale, q;
} q_types;

/* Quantized types by the version that added them. */
#define Q10 (T_(INT8) | T_(UINT8))
#define Q19 (Q10 | F8_TYPES)
#define Q21 (Q19 | T_(INT16) | T_(UINT16) | T_(INT4) | T_(UINT4))
#define Q23 (Q21 | T_(FLOAT4E2M1))
#define Q25 (Q23 | T_(INT2) | T_(UINT2))
#define X10 (T_(FLOAT) | T_(INT32))
#define X19 (F_TYPES | T_(INT32))

static const q_types quant_types[] = {
    {10, X10, T_(FLOAT), Q10},
    {19, X19, X19, Q19},
    {21, X19, X19, Q21},
    {23, X19, X19, Q23},
    {24, X19, X19 | T_(FLOAT8E8M0), Q23},
    {25, X19, X19 | T_(FLOAT8E8M0), Q25},
};

/* For DequantizeLinear `q` types x, and `scale` also gives the output
 * types before output_dtype (opset 23). */
static const q_types dequant_types[] = {
    {10, 0, T_(FLOAT), Q10 | T_(INT32)},
    {19, 0, F_TYPES, Q19 | T_(INT32)},
    {21, 0, F_TYPES, Q21 | T_(INT32)},
    {23, 0, F_TYPES, Q23 | T_(INT32)},
    {24, 0, F_TYPES | T_(FLOAT8E8M0), Q23 | T_(INT32)},
    {25, 0, F_TYPES | T_(FLOAT8E8M0), Q25 | T_(INT32)},
};

static const q_types *types_for(const q_types *table, size_t n, int opset) {
    const q_types *t = &table[0];
    for (size_t i = 0; i < n; i++)
        if (opset >= table[i].since) t = &table[i];
    return t;
}

static bool has_type(uint64_t mask, int dtype) { return dtype > 0 && dtype < 64 && (mask & ONYX_T(dtype)); }

static onyx_status *check_type(const char *op, const char *what, int dtype, uint64_t allowed, int opset) {
    if (has_type(allowed, dtype)) return NULL;
    char list[600] = "";
    size_t used = 0;
    for (int t = 1; t < 64; t++)
        if (allowed & ONYX_T(t)) {
            int n = snprintf(list + used, sizeof list - used, "%s%s", used ? ", " : "", onyx_dtype_name(t));
            if (n < 0 || (size_t)n >= sizeof list - used) break;
            used += (size_t)n;
        }
    return ONYX_INVALID_ARG("%s (opset %d): %s has element type %s; allowed: %s", op, opset, what,
                            onyx_dtype_name(dtype), list);
}

/* Integer saturation range of a quantized type; false for float types. */
static bool int_range(int dtype, double *lo, double *hi) {
    switch (dtype) {
    case ONYX_INT8: *lo = -128; *hi = 127; return true;
    case ONYX_UINT8: *lo = 0; *hi = 255; return true;
    case ONYX_INT16: *lo = -32768; *hi = 32767; return true;
    case ONYX_UINT16: *lo = 0; *hi = 65535; return true;
    case ONYX_INT4: *lo = -8; *hi = 7; return true;
    case ONYX_UINT4: *lo = 0; *hi = 15; return true;
    case ONYX_INT2: *lo = -2; *hi = 1; return true;
    case ONYX_UINT2: *lo = 0; *hi = 3; return true;
    default: return false;
    }
}

/* ------------------------------------------------------------ granularity */

enum { GRAN_TENSOR, GRAN_AXIS, GRAN_BLOCK };

typedef struct q_layout {
    int gran;
    int64_t D;       /* length of the quantized axis */
    int64_t inner;   /* elements after the axis */
    int64_t B, S;    /* block size and blocks along the axis (GRAN_BLOCK) */
} q_layout;

static onyx_status *layout_of(const char *op, const onyx_value *x, const onyx_value *scale, int64_t axis_attr,
                              int64_t block_size, q_layout *lay) {
    memset(lay, 0, sizeof *lay);
    char sx[200], ss[200];
    if (block_size < 0)
        return ONYX_INVALID_ARG("%s: block_size %lld must be >= 0", op, (long long)block_size);
    if (scale->numel == 1) {    /* one value, whatever its rank: per tensor */
        lay->gran = GRAN_TENSOR;
        return NULL;
    }
    int axis;
    onyx_status *st = onyx_normalize_axis(axis_attr, x->rank, &axis);
    if (st)
        return onyx_error_wrap(st, "%s: scale %s is not a scalar, so axis applies to x %s: ", op,
                               onyx_shape_str(scale->dims, scale->rank, ss, sizeof ss),
                               onyx_shape_str(x->dims, x->rank, sx, sizeof sx));
    lay->D = x->dims[axis];
    lay->inner = 1;
    for (int i = axis + 1; i < x->rank; i++)
        if (onyx_mul_overflow_i64(lay->inner, x->dims[i], &lay->inner))
            return ONYX_INVALID_ARG("%s: x %s is too large", op, onyx_shape_str(x->dims, x->rank, sx, sizeof sx));
    if (block_size == 0) {
        if (scale->rank != 1 || scale->dims[0] != lay->D)
            return ONYX_INVALID_ARG("%s: scale %s must be a scalar or a 1-D tensor of %lld values (axis %d of x "
                                    "%s); blocked quantization needs block_size", op,
                                    onyx_shape_str(scale->dims, scale->rank, ss, sizeof ss), (long long)lay->D,
                                    axis, onyx_shape_str(x->dims, x->rank, sx, sizeof sx));
        lay->gran = GRAN_AXIS;
        return NULL;
    }
    lay->gran = GRAN_BLOCK;
    lay->B = block_size;
    lay->S = lay->D / block_size + (lay->D % block_size != 0);
    bool ok = scale->rank == x->rank;
    for (int i = 0; ok && i < x->rank; i++) ok = scale->dims[i] == (i == axis ? lay->S : x->dims[i]);
    if (!ok)
        return ONYX_INVALID_ARG("%s: blocked scale %s does not fit x %s with axis %d and block_size %lld: "
                                "expected x's shape with dim %d = ceil(%lld / %lld) = %lld", op,
                                onyx_shape_str(scale->dims, scale->rank, ss, sizeof ss),
                                onyx_shape_str(x->dims, x->rank, sx, sizeof sx), axis, (long long)block_size,
                                axis, (long long)lay->D, (long long)block_size, (long long)lay->S);
    return NULL;
}

/* The zero point must have the scale's shape. */
static onyx_status *check_zp_shape(const char *op, const char *what, const onyx_value *zp,
                                   const onyx_value *scale) {
    if (!zp) return NULL;
    bool same = zp->numel == scale->numel;
    if (same && zp->numel != 1) {
        same = zp->rank == scale->rank;
        for (int i = 0; same && i < zp->rank; i++) same = zp->dims[i] == scale->dims[i];
    }
    if (same) return NULL;
    char sz[200], ss[200];
    return ONYX_INVALID_ARG("%s: %s %s must have the shape of the scale %s", op, what,
                            onyx_shape_str(zp->dims, zp->rank, sz, sizeof sz),
                            onyx_shape_str(scale->dims, scale->rank, ss, sizeof ss));
}

/* One run of elements [i, i + len) whose parameters are p, p + step, ...
 * (step 0 or 1), clipped to end. */
static void next_run(const q_layout *lay, int64_t i, int64_t end, int64_t *len, int64_t *p, int *step) {
    int64_t left = end - i;
    switch (lay->gran) {
    case GRAN_TENSOR:
        *len = left;
        *p = 0;
        *step = 0;
        return;
    case GRAN_AXIS:
        if (lay->inner == 1) {    /* the last axis: parameters follow the elements */
            *p = i % lay->D;
            *len = lay->D - *p;
            *step = 1;
        } else {
            int64_t j = i % lay->inner;
            *p = (i / lay->inner) % lay->D;
            *len = lay->inner - j;
            *step = 0;
        }
        break;
    default: {
        int64_t j = i % lay->inner, row = i / lay->inner;
        int64_t o = row / lay->D, a = row % lay->D;
        *p = (o * lay->S + a / lay->B) * lay->inner + j;
        *len = lay->inner - j;
        *step = 1;
        break;
    }
    }
    if (*len > left) *len = left;
}

/* Parameter values as doubles (scales and zero points are small). */
static onyx_status *params_as_double(const onyx_value *v, double fallback, int64_t n, double **out) {
    double *d = malloc((size_t)(n > 0 ? n : 1) * sizeof *d);
    if (!d) return ONYX_OOM();
    for (int64_t i = 0; i < n; i++) d[i] = v ? onyx_load_as_double(v->dtype, v->data, v->numel == 1 ? 0 : i) : fallback;
    *out = d;
    return NULL;
}

/* ------------------------------------------------------------ element conversion */

/* n elements of data starting at index i as doubles. */
static void load_span(int dtype, const void *data, int64_t i, size_t n, double *out) {
    switch (dtype) {
    case ONYX_FLOAT:
        for (size_t k = 0; k < n; k++) out[k] = ((const float *)data)[i + (int64_t)k];
        return;
    case ONYX_INT8:
        for (size_t k = 0; k < n; k++) out[k] = ((const int8_t *)data)[i + (int64_t)k];
        return;
    case ONYX_UINT8:
        for (size_t k = 0; k < n; k++) out[k] = ((const uint8_t *)data)[i + (int64_t)k];
        return;
    case ONYX_INT32:
        for (size_t k = 0; k < n; k++) out[k] = ((const int32_t *)data)[i + (int64_t)k];
        return;
    case ONYX_FLOAT16:
        for (size_t k = 0; k < n; k++) out[k] = onyx_f16_to_f32_inline(((const uint16_t *)data)[i + (int64_t)k]);
        return;
    default:
        for (size_t k = 0; k < n; k++) out[k] = onyx_load_as_double(dtype, data, i + (int64_t)k);
        return;
    }
}

/* v rounded to the precision of dtype (float, float16, bfloat16, double). */
static inline double round_to(int dtype, double v) {
    switch (dtype) {
    case ONYX_FLOAT: return (float)v;
    case ONYX_FLOAT16: return onyx_f16_to_f32_inline(onyx_f64_to_f16(v));
    case ONYX_BFLOAT16: return onyx_bf16_to_f32_inline(onyx_f64_to_bf16(v));
    default: return v;
    }
}

/* Round half to even for |v| < 2^23 by the add-and-subtract trick (no
 * SSE4.1 needed, so the loop vectorises on the baseline ISA); larger
 * values are integers already and NaN passes through. */
static inline float rint_f32(float v) {
    const float magic = 0x1.8p23f;
    float r = (v + magic) - magic;
    return fabsf(v) < 0x1p23f ? r : v;
}

/* ------------------------------------------------------------ QuantizeLinear */

typedef struct quant_job {
    const onyx_value *x;
    void *y;
    int ydt, prec;
    bool saturate, is_int;
    double lo, hi;
    q_layout lay;
    const double *scale, *zp;
    int64_t numel;
} quant_job;

#if defined(__SSE2__)
/* y[0..n) = saturate(rint(x / s) + z), 16 at a time; returns the count
 * done. The quotient is clamped to +-1e9 first (NaN to the low end, as
 * below), then rounded half to even by the conversion: the scalar loop's
 * result for every input. */
static int64_t quant_f32_q8_sse2(const float *x, int64_t n, float s, int32_t z, bool s8, uint8_t *y) {
    const __m128 sv = _mm_set1_ps(s), lo = _mm_set1_ps(-1e9f), hi = _mm_set1_ps(1e9f);
    const __m128i zv = _mm_set1_epi32(z);
    int64_t k = 0;
    for (; k + 16 <= n; k += 16) {
        __m128i q[4];
        for (int v = 0; v < 4; v++) {
            __m128 t = _mm_div_ps(_mm_loadu_ps(x + k + 4 * v), sv);
            t = _mm_min_ps(_mm_max_ps(t, lo), hi);   /* max(NaN, lo) is lo */
            q[v] = _mm_add_epi32(_mm_cvtps_epi32(t), zv);
        }
        __m128i a = _mm_packs_epi32(q[0], q[1]), b = _mm_packs_epi32(q[2], q[3]);
        _mm_storeu_si128((__m128i *)(y + k), s8 ? _mm_packs_epi16(a, b) : _mm_packus_epi16(a, b));
    }
    return k;
}
#endif

/* float x, float precision, per-run parameters, int8/uint8 output. */
static void quant_run_f32_q8(const quant_job *j, int64_t i, int64_t len, int64_t p, int step) {
    const float *x = (const float *)j->x->data + i;
    const float lo = (float)j->lo, hi = (float)j->hi;
    if (step == 0) {
        const float s = (float)j->scale[p], z = (float)j->zp[p];
#if defined(__SSE2__)
        /* the default rounding mode (the conversion's) is the one rint_f32 assumes */
        int64_t done = quant_f32_q8_sse2(x, len, s, (int32_t)z, j->ydt == ONYX_INT8, (uint8_t *)j->y + i);
        x += done;
        i += done;
        len -= done;
#endif
        if (j->ydt == ONYX_INT8) {
            int8_t *y = (int8_t *)j->y + i;
            for (int64_t k = 0; k < len; k++) {
                float v = rint_f32(x[k] / s) + z;
                v = v > lo ? v : lo;   /* NaN saturates low, like the reference */
                y[k] = (int8_t)(v < hi ? v : hi);
            }
        } else {
            uint8_t *y = (uint8_t *)j->y + i;
            for (int64_t k = 0; k < len; k++) {
                float v = rint_f32(x[k] / s) + z;
                v = v > lo ? v : lo;
                y[k] = (uint8_t)(v < hi ? v : hi);
            }
        }
        return;
    }
    for (int64_t k = 0; k < len; k++) {
        float v = rint_f32(x[k] / (float)j->scale[p + k]) + (float)j->zp[p + k];
        v = v > lo ? v : lo;
        v = v < hi ? v : hi;
        if (j->ydt == ONYX_INT8) ((int8_t *)j->y)[i + k] = (int8_t)v;
        else ((uint8_t *)j->y)[i + k] = (uint8_t)v;
    }
}

/* Any types, through double. */
static void quant_run_generic(const quant_job *j, int64_t i, int64_t len, int64_t p, int step) {
    double buf[Q_SPAN];
    for (int64_t done = 0; done < len;) {
        size_t n = (size_t)(len - done < Q_SPAN ? len - done : Q_SPAN);
        load_span(j->x->dtype, j->x->data, i + done, n, buf);
        for (size_t k = 0; k < n; k++) {
            int64_t pk = p + (int64_t)step * (done + (int64_t)k), idx = i + done + (int64_t)k;
            double q = round_to(j->prec, buf[k] / j->scale[pk]);
            if (j->is_int) {
                double v = nearbyint(q) + j->zp[pk];
                v = v > j->lo ? v : j->lo;
                v = v < j->hi ? v : j->hi;
                onyx_store_from_int64(j->ydt, j->y, idx, (int64_t)v);
            } else {
                double v = j->zp[pk] != 0 ? round_to(j->prec, q + j->zp[pk]) : q;
                if (j->ydt == ONYX_FLOAT4E2M1) onyx_store_from_double(j->ydt, j->y, idx, v);
                else ((uint8_t *)j->y)[idx] = onyx_f64_to_f8(j->ydt, v, j->saturate);
            }
        }
        done += (int64_t)n;
    }
}

static void quant_chunks(void *arg, size_t begin, size_t end) {
    const quant_job *j = arg;
    int64_t lo = (int64_t)begin * Q_CHUNK, hi = (int64_t)end * Q_CHUNK;
    if (hi > j->numel) hi = j->numel;
    bool fast = j->x->dtype == ONYX_FLOAT && j->prec == ONYX_FLOAT &&
                (j->ydt == ONYX_INT8 || j->ydt == ONYX_UINT8);
    for (int64_t i = lo; i < hi;) {
        int64_t len, p;
        int step;
        next_run(&j->lay, i, hi, &len, &p, &step);
        if (fast) quant_run_f32_q8(j, i, len, p, step);
        else quant_run_generic(j, i, len, p, step);
        i += len;
    }
}

static size_t n_chunks(int64_t numel) { return (size_t)(numel / Q_CHUNK + (numel % Q_CHUNK != 0)); }

/* Output type: output_dtype, else the zero point's type, else uint8. */
static onyx_status *quant_output_type(const onyx_node *node, int opset, const onyx_value *zp, int *out) {
    int64_t odt = opset >= 21 ? onyx_attr_int(node, "output_dtype", 0) : 0;
    if (odt < 0 || odt >= 64)
        return ONYX_INVALID_ARG("QuantizeLinear: output_dtype %lld is not an element type", (long long)odt);
    if (zp && odt && odt != zp->dtype)
        return ONYX_INVALID_ARG("QuantizeLinear: output_dtype %s differs from the zero point's type %s",
                                onyx_dtype_name((int)odt), onyx_dtype_name(zp->dtype));
    *out = zp ? zp->dtype : odt ? (int)odt : ONYX_UINT8;
    return NULL;
}

/* Precision of the division: the precision attribute, else the scale's
 * type (double for int32 scales, whose division is exact there; float for
 * float8e8m0 powers of two). */
static onyx_status *quant_precision(const onyx_node *node, int opset, int scale_dt, int *prec) {
    int64_t p = opset >= 23 ? onyx_attr_int(node, "precision", 0) : 0;
    if (p) {
        if (p != ONYX_FLOAT && p != ONYX_FLOAT16 && p != ONYX_BFLOAT16 && p != ONYX_DOUBLE)
            return ONYX_INVALID_ARG("QuantizeLinear: precision %lld must be float, float16, bfloat16 or double",
                                    (long long)p);
        *prec = (int)p;
        return NULL;
    }
    if (scale_dt == ONYX_INT32) *prec = ONYX_DOUBLE;
    else if (scale_dt == ONYX_FLOAT8E8M0) *prec = ONYX_FLOAT;
    else *prec = scale_dt;
    return NULL;
}

static onyx_status *check_tensor(const char *op, const char *what, const onyx_value *v) {
    if (!onyx_is_tensor(v)) return ONYX_INVALID_ARG("%s: %s must be a tensor", op, what);
    return NULL;
}

static onyx_status *quantize_compute(onyx_kernel_ctx *ctx) {
    const char *op = "QuantizeLinear";
    const onyx_value *x = ctx->in[0], *scale = ctx->n_in > 1 ? ctx->in[1] : NULL;
    const onyx_value *zp = ctx->n_in > 2 ? ctx->in[2] : NULL;
    ONYX_TRY(check_tensor(op, "x", x));
    ONYX_TRY(check_tensor(op, "y_scale", scale));
    if (zp) ONYX_TRY(check_tensor(op, "y_zero_point", zp));
    const q_types *tt = types_for(quant_types, sizeof quant_types / sizeof quant_types[0], ctx->opset);
    ONYX_TRY(check_type(op, "x", x->dtype, tt->x, ctx->opset));
    ONYX_TRY(check_type(op, "y_scale", scale->dtype, tt->scale, ctx->opset));
    int ydt = 0, prec = 0;
    ONYX_TRY(quant_output_type(ctx->node, ctx->opset, zp, &ydt));
    ONYX_TRY(check_type(op, "the output (y_zero_point / output_dtype)", ydt, tt->q, ctx->opset));
    ONYX_TRY(quant_precision(ctx->node, ctx->opset, scale->dtype, &prec));
    quant_job j = {.x = x, .ydt = ydt, .prec = prec, .numel = x->numel};
    j.saturate = onyx_attr_int(ctx->node, "saturate", 1) != 0;
    j.is_int = int_range(ydt, &j.lo, &j.hi);
    int64_t block = ctx->opset >= 21 ? onyx_attr_int(ctx->node, "block_size", 0) : 0;
    ONYX_TRY(layout_of(op, x, scale, onyx_attr_int(ctx->node, "axis", 1), block, &j.lay));
    ONYX_TRY(check_zp_shape(op, "y_zero_point", zp, scale));
    onyx_value *Y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, ydt, x->rank, x->dims, &Y));
    if (onyx_dtype(ydt)->bits < 8) memset(Y->data, 0, Y->nbytes);   /* defined padding bits */
    j.y = Y->data;
    double *sd = NULL, *zd = NULL;
    onyx_status *st = params_as_double(scale, 1.0, scale->numel, &sd);
    if (!st) st = params_as_double(zp, 0.0, scale->numel, &zd);
    if (!st) {
        j.scale = sd;
        j.zp = zd;
        onyx_parallel_for(ctx->tp, n_chunks(x->numel), 1, quant_chunks, &j);
    }
    free(sd);
    free(zd);
    return st;
}

/* ------------------------------------------------------------ DequantizeLinear */

typedef struct dequant_job {
    const onyx_value *x;
    void *y;
    int ydt;
    q_layout lay;
    const double *scale, *zp;
    int64_t numel;
} dequant_job;

/* (x - z) * s for n int8 or uint8 values of one scale, compiled per ISA
 * (NN_MULTIVERSION) in blocks gcc vectorises: as a scalar loop SqueezeNet
 * int8's last DequantizeLinear (169,000 values) took 1.1 ns a value. The
 * same two operations per value, so the same bits on every path. */
NN_MULTIVERSION(dequant_span_q8, (const void *restrict x, bool s8, float z, float s, float *restrict y, size_t n),
                (x, s8, z, s, y, n), {
                    const int8_t *restrict xs = x;
                    const uint8_t *restrict xu = x;
                    if (s8) NN_LOOP(k, n, y[k] = ((float)xs[k] - z) * s);
                    else NN_LOOP(k, n, y[k] = ((float)xu[k] - z) * s);
                })

/* int8/uint8 x to float: (x - zp) * s is exact before the one rounding of
 * the float multiply, as in double. */
static void dequant_run_q8_f32(const dequant_job *j, int64_t i, int64_t len, int64_t p, int step) {
    float *y = (float *)j->y + i;
    const bool s8 = j->x->dtype == ONYX_INT8;
    const int8_t *xs = (const int8_t *)j->x->data + i;
    const uint8_t *xu = (const uint8_t *)j->x->data + i;
    if (step == 0) {
        dequant_span_q8((const uint8_t *)j->x->data + i, s8, (float)j->zp[p], (float)j->scale[p], y, (size_t)len);
        return;
    }
    for (int64_t k = 0; k < len; k++)
        y[k] = ((s8 ? (float)xs[k] : (float)xu[k]) - (float)j->zp[p + k]) * (float)j->scale[p + k];
}

static void dequant_run_generic(const dequant_job *j, int64_t i, int64_t len, int64_t p, int step) {
    double buf[Q_SPAN];
    for (int64_t done = 0; done < len;) {
        size_t n = (size_t)(len - done < Q_SPAN ? len - done : Q_SPAN);
        load_span(j->x->dtype, j->x->data, i + done, n, buf);
        for (size_t k = 0; k < n; k++) {
            int64_t pk = p + (int64_t)step * (done + (int64_t)k);
            onyx_store_from_double(j->ydt, j->y, i + done + (int64_t)k, (buf[k] - j->zp[pk]) * j->scale[pk]);
        }
        done += (int64_t)n;
    }
}

static void dequant_chunks(void *arg, size_t begin, size_t end) {
    const dequant_job *j = arg;
    int64_t lo = (int64_t)begin * Q_CHUNK, hi = (int64_t)end * Q_CHUNK;
    if (hi > j->numel) hi = j->numel;
    bool fast = (j->x->dtype == ONYX_INT8 || j->x->dtype == ONYX_UINT8) && j->ydt == ONYX_FLOAT;
    for (int64_t i = lo; i < hi;) {
        int64_t len, p;
        int step;
        next_run(&j->lay, i, hi, &len, &p, &step);
        if (fast) dequant_run_q8_f32(j, i, len, p, step);
        else dequant_run_generic(j, i, len, p, step);
        i += len;
    }
}

/* Output type: float before opset 19, then the scale's type, and from
 * opset 23 output_dtype when given. */
static onyx_status *dequant_output_type(const onyx_node *node, int opset, int scale_dt, int *out) {
    int64_t odt = opset >= 23 ? onyx_attr_int(node, "output_dtype", 0) : 0;
    if (odt) {
        if (odt != ONYX_FLOAT && odt != ONYX_FLOAT16 && odt != ONYX_BFLOAT16)
            return ONYX_INVALID_ARG("DequantizeLinear: output_dtype %lld must be float, float16 or bfloat16",
                                    (long long)odt);
        *out = (int)odt;
        return NULL;
    }
    if (scale_dt == ONYX_FLOAT8E8M0)
        return ONYX_INVALID_ARG("DequantizeLinear: a float8e8m0 scale needs output_dtype (float, float16 or "
                                "bfloat16)");
    *out = opset >= 19 ? scale_dt : ONYX_FLOAT;
    return NULL;
}

static onyx_status *dequantize_compute(onyx_kernel_ctx *ctx) {
    const char *op = "DequantizeLinear";
    const onyx_value *x = ctx->in[0], *scale = ctx->n_in > 1 ? ctx->in[1] : NULL;
    const onyx_value *zp = ctx->n_in > 2 ? ctx->in[2] : NULL;
    ONYX_TRY(check_tensor(op, "x", x));
    ONYX_TRY(check_tensor(op, "x_scale", scale));
    if (zp) ONYX_TRY(check_tensor(op, "x_zero_point", zp));
    const q_types *tt = types_for(dequant_types, sizeof dequant_types / sizeof dequant_types[0], ctx->opset);
    ONYX_TRY(check_type(op, "x", x->dtype, tt->q, ctx->opset));
    ONYX_TRY(check_type(op, "x_scale", scale->dtype, tt->scale, ctx->opset));
    if (zp && zp->dtype != x->dtype)
        return ONYX_INVALID_ARG("%s: x_zero_point is %s but x is %s; they must match", op,
                                onyx_dtype_name(zp->dtype), onyx_dtype_name(x->dtype));
    dequant_job j = {.x = x, .numel = x->numel};
    ONYX_TRY(dequant_output_type(ctx->node, ctx->opset, scale->dtype, &j.ydt));
    int64_t block = ctx->opset >= 21 ? onyx_attr_int(ctx->node, "block_size", 0) : 0;
    ONYX_TRY(layout_of(op, x, scale, onyx_attr_int(ctx->node, "axis", 1), block, &j.lay));
    ONYX_TRY(check_zp_shape(op, "x_zero_point", zp, scale));
    onyx_value *Y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, j.ydt, x->rank, x->dims, &Y));
    j.y = Y->data;
    double *sd = NULL, *zd = NULL;
    onyx_status *st = params_as_double(scale, 1.0, scale->numel, &sd);
    if (!st) st = params_as_double(zp, 0.0, scale->numel, &zd);
    if (!st) {
        j.scale = sd;
        j.zp = zd;
        onyx_parallel_for(ctx->tp, n_chunks(x->numel), 1, dequant_chunks, &j);
    }
    free(sd);
    free(zd);
    return st;
}

/* ------------------------------------------------------------ DynamicQuantizeLinear */

/* The function body's arithmetic in float: scale = (max(0, max x) -
 * min(0, min x)) / 255, zero point = round(clip(-min / scale, 0, 255)).
 * An all-zero input gives scale 0 and zero point 0 (the formula would
 * divide 0 by 0). NaN elements are ignored by the min/max. */
static onyx_status *dynamic_quantize_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x = ctx->in[0];
    if (!onyx_is_tensor(x) || x->dtype != ONYX_FLOAT)
        return ONYX_INVALID_ARG("DynamicQuantizeLinear: x must be a float tensor");
    const float *xd = x->data;
    float mn = 0.0f, mx = 0.0f;
    for (int64_t i = 0; i < x->numel; i++) {
        mn = xd[i] < mn ? xd[i] : mn;
        mx = xd[i] > mx ? xd[i] : mx;
    }
    float scale = (mx - mn) / 255.0f, zpf = 0.0f;
    if (scale != 0.0f && isfinite(scale)) {
        zpf = 0.0f - mn / scale;
        zpf = zpf < 0.0f ? 0.0f : (zpf > 255.0f ? 255.0f : zpf);
        zpf = rint_f32(zpf);
    }
    onyx_value *Y, *S, *Z;
    ONYX_TRY(onyx_kernel_output(ctx, 0, ONYX_UINT8, x->rank, x->dims, &Y));
    ONYX_TRY(onyx_kernel_output(ctx, 1, ONYX_FLOAT, 0, NULL, &S));
    ONYX_TRY(onyx_kernel_output(ctx, 2, ONYX_UINT8, 0, NULL, &Z));
    *(float *)S->data = scale;
    *(uint8_t *)Z->data = (uint8_t)zpf;
    if (scale == 0.0f || !isfinite(scale)) {   /* nothing to spread: every element is the zero point */
        memset(Y->data, (int)zpf, (size_t)x->numel);
        return NULL;
    }
    double sd = scale, zd = zpf;
    quant_job j = {.x = x, .y = Y->data, .ydt = ONYX_UINT8, .prec = ONYX_FLOAT, .is_int = true,
                   .lo = 0, .hi = 255, .scale = &sd, .zp = &zd, .numel = x->numel};
    j.lay.gran = GRAN_TENSOR;
    onyx_parallel_for(ctx->tp, n_chunks(x->numel), 1, quant_chunks, &j);
    return NULL;
}

/* ------------------------------------------------------------ registration */

/* The entries split the versions by the type of x; compute checks the
 * scale, zero point and output types against the tables above. */
#define QUANT(since, until, xt) {"", "QuantizeLinear", since, until, xt, 0, NULL, NULL, quantize_compute}
#define DEQUANT(since, until, xt) \
    {"", "DequantizeLinear", since, until, xt, 0, NULL, NULL, dequantize_compute}

const onyx_op_def onyx_ops_quantize[] = {
    QUANT(10, 18, X10),
    QUANT(19, L, X19),
    DEQUANT(10, 18, Q10 | T_(INT32)),
    DEQUANT(19, 20, Q19 | T_(INT32)),
    DEQUANT(21, 22, Q21 | T_(INT32)),
    DEQUANT(23, 24, Q23 | T_(INT32)),
    DEQUANT(25, L, Q25 | T_(INT32)),
    {"", "DynamicQuantizeLinear", 11, L, ONYX_T(ONYX_FLOAT), 0, NULL, NULL, dynamic_quantize_compute},
    {0},};
