/* The 8-bit operators that keep quantised CNNs in integers between their
 * convolutions (the QDQ fusion and the channels-last layout pass write
 * them; ONNX Runtime's com.microsoft schemas):
 *
 *   NhwcMaxPool(x uint8|int8, N x H x W x C): MaxPool's attributes on a
 *     channels-last tensor. Max commutes with the monotone requantisation,
 *     so DequantizeLinear -> MaxPool -> QuantizeLinear with one scale and
 *     zero point is MaxPool on the bytes, exactly.
 *   QLinearConcat(y_scale, y_zero_point, (x, x_scale, x_zero_point)...):
 *     Concat of 8-bit tensors into y's quantisation; an input with y's
 *     scale and zero point is copied, any other goes through a 256-entry
 *     table of QuantizeLinear(DequantizeLinear(byte)), computed as the
 *     float graph computes it, so the fused graph gives the unfused one's
 *     bytes. Any axis, so NCHW (axis 1) and NHWC (axis 3) alike. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "providers/cpu/kernel.h"
#include "ir/pool_geom.h"
#include "providers/cpu/kernels/quant/qlinear_nhwc.h"
#include "providers/cpu/platform.h"
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define MS "com.microsoft"
#define Q8 (ONYX_T(ONYX_UINT8) | ONYX_T(ONYX_INT8))

/* ------------------------------------------------------------ NhwcMaxPool */

typedef struct nmp_job {
    const onyx_pool_geom *g;
    const uint8_t *x;
    uint8_t *y;
    int64_t C, OH;
    bool s8;
} nmp_job;

/* y = the bytewise max of the taps, 16 bytes at a time in a register
 * (SSE2), the tail byte by byte; int8 compares with the sign bit flipped
 * (then as unsigned). */
static void qmax_taps_generic(const uint8_t *const *tap, size_t nt, uint8_t *y, size_t c, bool s8) {
    size_t e = 0;
#if defined(__SSE2__)
    const __m128i flip = _mm_set1_epi8(s8 ? (char)0x80 : 0);
    for (; e + 16 <= c; e += 16) {
        __m128i m = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(tap[0] + e)), flip);
        for (size_t t = 1; t < nt; t++)
            m = _mm_max_epu8(m, _mm_xor_si128(_mm_loadu_si128((const __m128i *)(tap[t] + e)), flip));
        _mm_storeu_si128((__m128i *)(y + e), _mm_xor_si128(m, flip));
    }
#endif
    for (; e < c; e++) {
        uint8_t m = tap[0][e];
        for (size_t t = 1; t < nt; t++) {
            uint8_t v = tap[t][e];
            if (s8 ? (int8_t)v > (int8_t)m : v > m) m = v;
        }
        y[e] = m;
    }
}

onyx_qmax_taps_fn onyx_qmax_taps(void) {
#if defined(__x86_64__)
    if (onyx_cpu()->isa == ONYX_CPU_AVX512 && onyx_qmax_taps_avx512) return onyx_qmax_taps_avx512;
#endif
    return qmax_taps_generic;
}

#define NMP_TAPS 64 /* taps per call; a larger window folds y in as a tap */

static void nmp_range(void *arg, size_t begin, size_t end) {
    const nmp_job *j = arg;
    const onyx_pool_geom *g = j->g;
    const int64_t H = g->in[0], W = g->in[1], OW = g->out[1], C = j->C;
    const onyx_qmax_taps_fn max_taps = onyx_qmax_taps();
    const uint8_t *tap[NMP_TAPS];
    for (size_t u = begin; u < end; u++) {
        int64_t n = (int64_t)u / j->OH, oh = (int64_t)u % j->OH;
        const uint8_t *xn = j->x + n * H * W * C;
        onyx_pool_tap th = onyx_pool_tap_of(g, 0, oh);
        for (int64_t ow = 0; ow < OW; ow++) {
            uint8_t *yo = j->y + ((n * j->OH + oh) * OW + ow) * C;
            onyx_pool_tap tw = onyx_pool_tap_of(g, 1, ow);
            size_t nt = 0;
            for (int64_t a = th.j0; a < th.j1; a++) {
                int64_t ih = th.start + a * g->d[0];
                for (int64_t b = tw.j0; b < tw.j1; b++) {
                    if (nt == NMP_TAPS) {
                        max_taps(tap, nt, yo, (size_t)C, j->s8);
                        tap[0] = yo;
                        nt = 1;
                    }
                    tap[nt++] = xn + (ih * W + tw.start + b * g->d[1]) * C;
                }
            }
            if (nt) max_taps(tap, nt, yo, (size_t)C, j->s8);
            else memset(yo, j->s8 ? 0x80 : 0, (size_t)C); /* the type's minimum (no window is empty: pads < kernel) */
        }
    }
}

static onyx_status *nhwc_max_pool_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *X = ctx->n_in > 0 ? ctx->in[0] : NULL;
    if (!onyx_is_tensor(X) || (X->dtype != ONYX_UINT8 && X->dtype != ONYX_INT8) || X->rank != 4) {
        char sx[200];
        return ONYX_INVALID_ARG("NhwcMaxPool: x %s must be a 4-D uint8 or int8 tensor (N, H, W, C)",
                                X ? onyx_shape_str(X->dims, X->rank, sx, sizeof sx) : "(absent)");
    }
    if (ctx->n_out > 1 && ctx->out_used && ctx->out_used[1])
        return ONYX_NOT_IMPLEMENTED("NhwcMaxPool: the Indices output");
    onyx_pool_geom g;
    int64_t in[2] = {X->dims[1], X->dims[2]};
    ONYX_TRY(onyx_pool_geometry(ctx->node, "NhwcMaxPool", 2, in, true, true, &g));
    int64_t dims[4] = {X->dims[0], g.out[0], g.out[1], X->dims[3]};
    onyx_value *Y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, X->dtype, 4, dims, &Y));
    if (Y->numel == 0) return NULL;
    nmp_job j = {&g, X->data, Y->data, X->dims[3], g.out[0], X->dtype == ONYX_INT8};
    size_t per = (size_t)(g.out[1] * X->dims[3] * g.k[0] * g.k[1]);
    onyx_parallel_for(ctx->tp, (size_t)(X->dims[0] * g.out[0]), per >= 16384 ? 1 : 16384 / (per ? per : 1), nmp_range, &j);
    return NULL;
}

/* ------------------------------------------------------------ QLinearConcat */

static onyx_status *scale_of(const onyx_value *v, const char *what, size_t k, float *out) {
    if (!onyx_is_tensor(v) || v->dtype != ONYX_FLOAT || v->numel != 1)
        return ONYX_INVALID_ARG("QLinearConcat: %s (input %zu) must be one float (per-tensor scales only)", what, k);
    memcpy(out, v->data, 4);
    if (!(*out > 0) || !isfinite(*out))
        return ONYX_INVALID_ARG("QLinearConcat: %s (input %zu) = %g is not positive and finite", what, k, *out);
    return NULL;
}

static onyx_status *zero_point_of(const onyx_value *v, int dtype, const char *what, size_t k, int32_t *out) {
    if (!onyx_is_tensor(v) || v->dtype != dtype || v->numel != 1)
        return ONYX_INVALID_ARG("QLinearConcat: %s (input %zu) must be one value of the tensors' 8-bit type", what, k);
    *out = dtype == ONYX_INT8 ? ((const int8_t *)v->data)[0] : ((const uint8_t *)v->data)[0];
    return NULL;
}

/* table[b] = QuantizeLinear(DequantizeLinear(b, sx, zx), sy, zy) as the
 * float operators compute it. */
static void requant_table(bool s8, float sx, int32_t zx, float sy, int32_t zy, uint8_t *table) {
    const float lo = s8 ? -128.0f : 0.0f, hi = s8 ? 127.0f : 255.0f;
    for (int b = 0; b < 256; b++) {
        int32_t q = s8 ? (int8_t)b : b;
        float x = (float)(q - zx) * sx;
        float v = nearbyintf(x / sy) + (float)zy;
        v = v < lo ? lo : (v > hi ? hi : v);
        table[b] = s8 ? (uint8_t)(int8_t)v : (uint8_t)v;
    }
}

/* One input's slices into y: outer index o's chunk bytes go at dst + o *
 * row, copied or through the requantisation table. */
typedef struct qcat_job {
    const uint8_t *src;
    uint8_t *dst;
    int64_t chunk, row;
    const uint8_t *table;   /* NULL: a plain copy (y's scale and zero point) */
    onyx_qcat_rows_fn rows;
} qcat_job;

static void qcat_rows_generic(const uint8_t *src, size_t chunk, uint8_t *dst, size_t ld, size_t rows,
                              const uint8_t *table) {
    for (size_t o = 0; o < rows; o++) {
        const uint8_t *s = src + o * chunk;
        uint8_t *d = dst + o * ld;
        if (!table) memcpy(d, s, chunk);
        else for (size_t e = 0; e < chunk; e++) d[e] = table[s[e]];
    }
}

onyx_qcat_rows_fn onyx_qcat_rows(void) {
#if defined(__x86_64__)
    if (onyx_cpu()->isa == ONYX_CPU_AVX512 && onyx_qcat_rows_avx512vbmi && onyx_cpu_has_vbmi())
        return onyx_qcat_rows_avx512vbmi;
#endif
    return qcat_rows_generic;
}

static void qcat_range(void *arg, size_t begin, size_t end) {
    const qcat_job *j = arg;
    j->rows(j->src + (int64_t)begin * j->chunk, (size_t)j->chunk, j->dst + (int64_t)begin * j->row, (size_t)j->row,
            end - begin, j->table);
}

static onyx_status *qlinear_concat_compute(onyx_kernel_ctx *ctx) {
    if (ctx->n_in < 5 || (ctx->n_in - 2) % 3)
        return ONYX_INVALID_ARG("QLinearConcat: takes y_scale, y_zero_point and then (x, x_scale, x_zero_point) "
                                "triples; got %zu inputs", ctx->n_in);
    const size_t n = (ctx->n_in - 2) / 3;
    const onyx_value *X0 = ctx->in[2];
    if (!onyx_is_tensor(X0) || (X0->dtype != ONYX_UINT8 && X0->dtype != ONYX_INT8) || X0->rank < 1)
        return ONYX_INVALID_ARG("QLinearConcat: the first tensor (input 2) must be uint8 or int8 of rank >= 1");
    const int dt = X0->dtype, r = X0->rank;
    int64_t axis = onyx_attr_int(ctx->node, "axis", 0);
    if (axis < -r || axis >= r)
        return ONYX_INVALID_ARG("QLinearConcat: axis %lld is out of range for rank %d", (long long)axis, r);
    if (axis < 0) axis += r;
    float sy;
    int32_t zy;
    ONYX_TRY(scale_of(ctx->in[0], "y_scale", 0, &sy));
    ONYX_TRY(zero_point_of(ctx->in[1], dt, "y_zero_point", 1, &zy));
    int64_t dims[ONYX_MAX_RANK];
    memcpy(dims, X0->dims, sizeof(int64_t) * (size_t)r);
    dims[axis] = 0;
    for (size_t i = 0; i < n; i++) {
        const onyx_value *X = ctx->in[2 + 3 * i];
        if (!onyx_is_tensor(X) || X->dtype != dt || X->rank != r)
            return ONYX_INVALID_ARG("QLinearConcat: tensor %zu (input %zu) must have the first one's type and rank", i,
                                    2 + 3 * i);
        for (int d = 0; d < r; d++)
            if (d != axis && X->dims[d] != X0->dims[d]) {
                char a[200], b[200];
                return ONYX_INVALID_ARG("QLinearConcat: tensor %zu %s and tensor 0 %s differ off the axis %lld", i,
                                        onyx_shape_str(X->dims, r, a, sizeof a),
                                        onyx_shape_str(X0->dims, r, b, sizeof b), (long long)axis);
            }
        dims[axis] += X->dims[axis];
    }
    onyx_value *Y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, dt, r, dims, &Y));
    if (Y->numel == 0) return NULL;
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; d++) outer *= dims[d];
    for (int d = axis + 1; d < r; d++) inner *= dims[d];
    const int64_t row = dims[axis] * inner;   /* bytes of y per outer index */
    int64_t at = 0;
    for (size_t i = 0; i < n; i++) {
        const onyx_value *X = ctx->in[2 + 3 * i];
        float sx;
        int32_t zx;
        ONYX_TRY(scale_of(ctx->in[3 + 3 * i], "x_scale", 3 + 3 * i, &sx));
        ONYX_TRY(zero_point_of(ctx->in[4 + 3 * i], dt, "x_zero_point", 4 + 3 * i, &zx));
        const int64_t chunk = X->dims[axis] * inner;
        uint8_t table[256];
        qcat_job j = {X->data, (uint8_t *)Y->data + at, chunk, row, NULL, onyx_qcat_rows()};
        if (sx != sy || zx != zy) {
            requant_table(dt == ONYX_INT8, sx, zx, sy, zy, table);
            j.table = table;
        }
        /* slices of at least ~16 KB per work item */
        onyx_parallel_for(ctx->tp, (size_t)outer, (size_t)(16384 / (chunk > 0 ? chunk : 1) + 1), qcat_range, &j);
        at += chunk;
    }
    return NULL;
}

const onyx_op_def onyx_ops_qlinear_nhwc[] = {
    {MS, "NhwcMaxPool", 1, ONYX_OPSET_LATEST, Q8, 0, NULL, NULL, nhwc_max_pool_compute},
    {MS, "QLinearConcat", 1, ONYX_OPSET_LATEST, Q8, 2, NULL, NULL, qlinear_concat_compute},
    {0},};
