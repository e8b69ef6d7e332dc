/* com.microsoft QLinearAdd (ONNX Runtime's contrib operator):
 *
 *   C = saturate(round((A - A_zp) * A_scale / C_scale + (B - B_zp) * B_scale / C_scale) + C_zp)
 *
 * uint8 or int8, per-tensor scales and zero points; B of A's shape or one
 * value (other broadcasts are refused by name). The arithmetic is float, as
 * ONNX Runtime's: the two scale ratios once, then a multiply-add per element,
 * round half to even. The QDQ fusion (optimizer/passes_fusion_qdq.c) writes it
 * for DequantizeLinear x2 -> Add [-> Relu] -> QuantizeLinear, the residual
 * connections of quantised CNNs. */
#include <math.h>
#include <string.h>
#include "providers/cpu/kernel.h"

#define MS "com.microsoft"
#define Q8 (ONYX_T(ONYX_INT8) | ONYX_T(ONYX_UINT8))
#define CHUNK 16384 /* elements per parallel work item */

typedef struct qadd_job {
    const uint8_t *a, *b;
    uint8_t *c;
    bool s8, b_scalar;
    float ra, rb, za, zb, zc, lo, hi;
    size_t n;
} qadd_job;

/* Round half to even for |v| < 2^22 by adding and subtracting 1.5 * 2^23
 * (vectorises on the baseline ISA; larger values saturate anyway). */
static inline float rint_small(float v) {
    const float magic = 0x1.8p23f;
    v = v < 0x1p22f ? v : 0x1p22f;
    v = v > -0x1p22f ? v : -0x1p22f;
    return (v + magic) - magic;
}

#if defined(__SSE2__)
/* SSE2 is the x86-64 baseline: no dispatch needed. */
#include <emmintrin.h>

/* x[0..16) as floats minus the zero point. */
static inline void widen16(const uint8_t *x, bool s8, float zp, float *out) {
    __m128i v = _mm_loadu_si128((const __m128i *)x), w[2];
    if (s8) {
        w[0] = _mm_srai_epi16(_mm_unpacklo_epi8(v, v), 8);
        w[1] = _mm_srai_epi16(_mm_unpackhi_epi8(v, v), 8);
    } else {
        w[0] = _mm_unpacklo_epi8(v, _mm_setzero_si128());
        w[1] = _mm_unpackhi_epi8(v, _mm_setzero_si128());
    }
    const __m128 z = _mm_set1_ps(zp);
    for (int h = 0; h < 2; h++) {
        __m128i lo = _mm_srai_epi32(_mm_unpacklo_epi16(w[h], w[h]), 16);
        __m128i hi = _mm_srai_epi32(_mm_unpackhi_epi16(w[h], w[h]), 16);
        _mm_storeu_ps(out + 8 * h, _mm_sub_ps(_mm_cvtepi32_ps(lo), z));
        _mm_storeu_ps(out + 8 * h + 4, _mm_sub_ps(_mm_cvtepi32_ps(hi), z));
    }
}

/* 16 sums to 8 bits: rounded half to even (the MXCSR default), plus the
 * zero point, saturated; NaN goes low (MAXPS returns its second operand). */
static inline void narrow16(const float *v, const qadd_job *j, uint8_t *c) {
    const __m128 lo = _mm_set1_ps(j->lo - j->zc), hi = _mm_set1_ps(j->hi - j->zc);
    const __m128i zc = _mm_set1_epi32((int32_t)j->zc);
    __m128i q[4];
    for (int k = 0; k < 4; k++) {
        __m128 x = _mm_min_ps(_mm_max_ps(_mm_loadu_ps(v + 4 * k), lo), hi);
        q[k] = _mm_add_epi32(_mm_cvtps_epi32(x), zc);
    }
    __m128i w0 = _mm_packs_epi32(q[0], q[1]), w1 = _mm_packs_epi32(q[2], q[3]);
    _mm_storeu_si128((__m128i *)c, j->s8 ? _mm_packs_epi16(w0, w1) : _mm_packus_epi16(w0, w1));
}
#else
static inline void widen16(const uint8_t *x, bool s8, float zp, float *out) {
    for (int k = 0; k < 16; k++) out[k] = (s8 ? (float)(int8_t)x[k] : (float)x[k]) - zp;
}

static inline void narrow16(const float *v, const qadd_job *j, uint8_t *c) {
    for (int k = 0; k < 16; k++) {
        float r = rint_small(v[k]) + j->zc;
        r = r > j->lo ? r : j->lo; /* NaN saturates low */
        r = r < j->hi ? r : j->hi;
        c[k] = j->s8 ? (uint8_t)(int8_t)(int)r : (uint8_t)(int)r;
    }
}
#endif

/* Blocks of 16 with fixed trip counts and no branch inside, so the
 * compiler's cheapest vectoriser takes the loops; the tail goes through a
 * zero-padded block. */
static void qadd_range(void *arg, size_t begin, size_t end) {
    const qadd_job *j = arg;
    size_t i = begin * CHUNK, stop = end * CHUNK < j->n ? end * CHUNK : j->n;
    float va[16], vb[16], bconst = 0.0f;
    if (j->b_scalar) {
        uint8_t b16[16];
        memset(b16, j->b[0], 16);
        widen16(b16, j->s8, j->zb, vb);
        bconst = vb[0] * j->rb;
    }
    for (; i < stop; i += 16) {
        uint8_t ta[16], tb[16], tc[16];
        size_t len = stop - i < 16 ? stop - i : 16;
        const uint8_t *a = j->a + i, *b = j->b_scalar ? NULL : j->b + i;
        if (len < 16) { /* the tail */
            memset(ta, 0, 16);
            memcpy(ta, a, len);
            a = ta;
            if (b) {
                memset(tb, 0, 16);
                memcpy(tb, b, len);
                b = tb;
            }
        }
        widen16(a, j->s8, j->za, va);
        if (b) {
            widen16(b, j->s8, j->zb, vb);
            for (int k = 0; k < 16; k++) va[k] = va[k] * j->ra + vb[k] * j->rb;
        } else {
            for (int k = 0; k < 16; k++) va[k] = va[k] * j->ra + bconst;
        }
        narrow16(va, j, len < 16 ? tc : j->c + i);
        if (len < 16) memcpy(j->c + i, tc, len);
    }
}

/* A per-tensor float scale (one positive finite value). */
static onyx_status *scale_of(const onyx_value *v, const char *what, float *out) {
    if (!onyx_is_tensor(v) || v->dtype != ONYX_FLOAT || v->numel != 1)
        return ONYX_INVALID_ARG("QLinearAdd: %s must be one float (per-tensor scales only)", what);
    memcpy(out, v->data, 4);
    if (!(*out > 0) || !isfinite(*out)) return ONYX_INVALID_ARG("QLinearAdd: %s = %g is not positive", what, *out);
    return NULL;
}

/* A zero point of x's type (one value), or absent (0). */
static onyx_status *zero_point_of(const onyx_value *v, int dtype, const char *what, float *out) {
    *out = 0.0f;
    if (!v) return NULL;
    if (!onyx_is_tensor(v) || v->dtype != dtype || v->numel != 1)
        return ONYX_INVALID_ARG("QLinearAdd: %s must be one value of A's type", what);
    *out = dtype == ONYX_INT8 ? (float)((const int8_t *)v->data)[0] : (float)((const uint8_t *)v->data)[0];
    return NULL;
}

static const onyx_value *in_at(const onyx_kernel_ctx *ctx, size_t k) { return k < ctx->n_in ? ctx->in[k] : NULL; }

static onyx_status *qlinear_add_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *A = in_at(ctx, 0), *B = in_at(ctx, 3);
    if (!onyx_is_tensor(A) || (A->dtype != ONYX_UINT8 && A->dtype != ONYX_INT8))
        return ONYX_INVALID_ARG("QLinearAdd: A must be a uint8 or int8 tensor");
    if (!onyx_is_tensor(B) || B->dtype != A->dtype) return ONYX_INVALID_ARG("QLinearAdd: B must have A's type");
    bool same = B->rank == A->rank && !memcmp(B->dims, A->dims, sizeof(int64_t) * (size_t)A->rank);
    if (!same && B->numel != 1) {
        char sa[200], sb[200];
        return ONYX_NOT_IMPLEMENTED("QLinearAdd: broadcasting B %s to A %s (B must have A's shape or one value)",
                                    onyx_shape_str(B->dims, B->rank, sb, sizeof sb),
                                    onyx_shape_str(A->dims, A->rank, sa, sizeof sa));
    }
    qadd_job j = {.a = A->data, .b = B->data, .s8 = A->dtype == ONYX_INT8, .b_scalar = !same, .n = (size_t)A->numel};
    float sa, sb, sc;
    ONYX_TRY(scale_of(in_at(ctx, 1), "A_scale", &sa));
    ONYX_TRY(scale_of(in_at(ctx, 4), "B_scale", &sb));
    ONYX_TRY(scale_of(in_at(ctx, 6), "C_scale", &sc));
    ONYX_TRY(zero_point_of(in_at(ctx, 2), A->dtype, "A_zero_point", &j.za));
    ONYX_TRY(zero_point_of(in_at(ctx, 5), A->dtype, "B_zero_point", &j.zb));
    ONYX_TRY(zero_point_of(in_at(ctx, 7), A->dtype, "C_zero_point", &j.zc));
    j.ra = sa / sc;
    j.rb = sb / sc;
    j.lo = j.s8 ? -128.0f : 0.0f;
    j.hi = j.s8 ? 127.0f : 255.0f;
    onyx_value *C;
    ONYX_TRY(onyx_kernel_output(ctx, 0, A->dtype, A->rank, A->dims, &C));
    j.c = C->data;
    onyx_parallel_for(ctx->tp, (j.n + CHUNK - 1) / CHUNK, 1, qadd_range, &j);
    return NULL;
}

const onyx_op_def onyx_ops_qlinear_add[] = {
    {MS, "QLinearAdd", 1, ONYX_OPSET_LATEST, Q8, 0, NULL, NULL, qlinear_add_compute},
    {0},};
