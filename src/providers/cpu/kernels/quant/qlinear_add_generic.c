/* QLinearAdd's element loop (qlinear_add.h) on the x86-64 baseline (SSE2)
 * or portable C, and the dispatch to the wider ones. Blocks of 16 with
 * fixed trip counts and no branch inside, so the compiler vectorises the
 * arithmetic; the tail goes through a zero-padded block. */
#include "providers/cpu/kernels/quant/qlinear_add.h"

#include <string.h>
#include "providers/cpu/platform.h"

#if defined(__SSE2__)
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

/* 16 sums to 8 bits: limited to the output range less zc (NaN goes low:
 * MAXPS returns its second operand), rounded half to even (the MXCSR
 * default), plus zc. */
static inline void narrow16(const float *v, const onyx_qadd_params *p, uint8_t *c) {
    const __m128 lo = _mm_set1_ps((p->s8 ? -128.0f : 0.0f) - p->zc), hi = _mm_set1_ps((p->s8 ? 127.0f : 255.0f) - p->zc);
    const __m128i zc = _mm_set1_epi32((int32_t)p->zc);
    __m128i q[4];
    for (int k = 0; k < 4; k++) {
        __m128 x = _mm_min_ps(_mm_max_ps(_mm_loadu_ps(v + 4 * k), lo), hi);
        q[k] = _mm_add_epi32(_mm_cvtps_epi32(x), zc);
    }
    __m128i w0 = _mm_packs_epi32(q[0], q[1]), w1 = _mm_packs_epi32(q[2], q[3]);
    _mm_storeu_si128((__m128i *)c, p->s8 ? _mm_packs_epi16(w0, w1) : _mm_packus_epi16(w0, w1));
}
#else
static inline void widen16(const uint8_t *x, bool s8, float zp, float *out) {
    for (int k = 0; k < 16; k++) out[k] = (s8 ? (float)(int8_t)x[k] : (float)x[k]) - zp;
}

static inline void narrow16(const float *v, const onyx_qadd_params *p, uint8_t *c) {
    const float lo = (p->s8 ? -128.0f : 0.0f) - p->zc, hi = (p->s8 ? 127.0f : 255.0f) - p->zc;
    for (int k = 0; k < 16; k++) {
        float r = v[k] > lo ? v[k] : lo; /* NaN goes low */
        r = r < hi ? r : hi;
        r = (r + 0x1.8p23f) - 0x1.8p23f; /* round half to even: |r| <= 383 */
        int q = (int)r + (int)p->zc;
        c[k] = p->s8 ? (uint8_t)(int8_t)q : (uint8_t)q;
    }
}
#endif

/* Each product and the sum rounded on its own: volatile-free, the stores
 * to va keep the compiler from fusing them (no FMA on the baseline). */
static void qadd_generic(const onyx_qadd_params *p, const uint8_t *a, const uint8_t *b, bool b_scalar, uint8_t *c,
                         size_t n) {
    float va[16], vb[16];
    for (size_t i = 0; i < n; i += 16) {
        uint8_t ta[16], tb[16], tc[16];
        size_t len = n - i < 16 ? n - i : 16;
        const uint8_t *ai = a + i, *bi = b_scalar ? NULL : b + i;
        if (len < 16) { /* the tail */
            memset(ta, 0, 16);
            memcpy(ta, ai, len);
            ai = ta;
            if (bi) {
                memset(tb, 0, 16);
                memcpy(tb, bi, len);
                bi = tb;
            }
        }
        widen16(ai, p->s8, p->za, va);
        for (int k = 0; k < 16; k++) va[k] = va[k] * p->ra;
        if (bi) {
            widen16(bi, p->s8, p->zb, vb);
            for (int k = 0; k < 16; k++) vb[k] = vb[k] * p->rb;
            for (int k = 0; k < 16; k++) va[k] = va[k] + vb[k];
        } else {
            for (int k = 0; k < 16; k++) va[k] = va[k] + p->bconst;
        }
        narrow16(va, p, len < 16 ? tc : c + i);
        if (len < 16) memcpy(c + i, tc, len);
    }
}

const onyx_qadd_fn onyx_qadd_generic = qadd_generic;

onyx_qadd_fn onyx_qadd(void) {
#if defined(__x86_64__)
    switch (onyx_cpu()->isa) {
    case ONYX_CPU_AVX512: return onyx_qadd_avx512;
    case ONYX_CPU_AVX2: return onyx_qadd_avx2;
    default: break;
    }
#endif
    return onyx_qadd_generic;
}
