/* AVX512-BF16 tile of the bfloat16 blocked convolution (nchwc_conv_bf16.h),
 * for CPUs with VDPBF16PS but no AMX (AMD Zen 4, or ONYX_CPU_DISABLE=amx):
 * the 32-pixel x 32-channel tile runs in chunks of up to 11 pixels, each
 * chunk's 11 x 2 zmm accumulators held for the whole of K. Per pair of K
 * values two 64-byte loads of B (16 outputs x 2 values each, the packed
 * weights' layout) and one 32-bit broadcast of each pixel's pair (the band's
 * A rows) feed two VDPBF16PS per pixel, 32 multiply-adds each. A pixel's
 * pair j of step s is A's 32-bit word at s * 1024 + i * 32 + 2j (bfloat16
 * units), B's 16 outputs of pair j at s * 1024 + j * 64 (+ 32 for outputs
 * 16..31). Where VDPBF16PS issues at the rate of float32 FMA (expected on
 * Zen 4) the tile does twice the float32 kernel's multiply-adds per cycle;
 * Intel issues it at half that rate (measured on Sapphire Rapids: 0.47x of
 * float32), so Intel cores use AMX or keep float32 (sgemm_bf16.c).
 *
 * The accumulators go to a local 32 x 32 buffer and then to the blocked
 * output with bias, Z and the activation (onyx_nchwc_bf16_store_avx512,
 * shared with the AMX tile). */
#include "providers/cpu/kernels/nchwc/nchwc_conv_bf16.h"

#if defined(__x86_64__)
#include <immintrin.h>
#include <string.h>
#include "providers/cpu/gemm/gemm.h"

#define TARGET __attribute__((target("avx512f,avx512bf16")))
#define INLINE TARGET static inline __attribute__((always_inline))
#define T ONYX_NCHWC_BF16_TILE
#define CHUNK 11   /* pixels per chunk: 22 accumulators, 2 B vectors */

TARGET void onyx_nchwc_bf16_convert32_avx512(const float *lo, const float *hi, uint16_t *dst) {
    __m512 h = hi ? _mm512_loadu_ps(hi) : _mm512_setzero_ps();
    _mm512_storeu_si512(dst, (__m512i)_mm512_cvtne2ps_pbh(h, _mm512_loadu_ps(lo)));
}

/* act(x) as onyx_gemm_act_scalar (NaN passes through Relu and Clip's bounds
 * as there: max/min return their second operand on NaN). */
INLINE __m512 activate(__m512 x, const onyx_nchwc_act *act) {
    switch (act->kind) {
    case ONYX_GEMM_ACT_RELU: return _mm512_max_ps(_mm512_setzero_ps(), x);
    case ONYX_GEMM_ACT_CLIP: return _mm512_min_ps(_mm512_set1_ps(act->b), _mm512_max_ps(_mm512_set1_ps(act->a), x));
    case ONYX_GEMM_ACT_LEAKY_RELU: {
        __mmask16 neg = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ);
        return _mm512_mask_mul_ps(x, neg, x, _mm512_set1_ps(act->a));
    }
    default: return x;
    }
}

TARGET void onyx_nchwc_bf16_store_avx512(const float *acc, const onyx_nchwc_bf16_out *out) {
    for (int v = 0; v < 2; v++) {
        if (!out->y[v]) continue;
        const __m512 bias = out->bias[v] ? _mm512_loadu_ps(out->bias[v]) : _mm512_setzero_ps();
        for (int i = 0; i < out->npix; i++) {
            __m512 x = _mm512_add_ps(_mm512_load_ps(acc + i * T + v * 16), bias);
            if (out->z[v]) x = _mm512_add_ps(x, _mm512_loadu_ps(out->z[v] + i * 16));
            _mm512_storeu_ps(out->y[v] + i * 16, activate(x, &out->act));
        }
    }
}

#define DECL(r) __m512 c##r##0 = z, c##r##1 = z;
#define DP(r)                                                                        \
    if ((r) < rows) {                                                                \
        uint32_t w;                                                                  \
        memcpy(&w, ap + (r) * T, sizeof w);                                          \
        const __m512bh ar = (__m512bh)_mm512_set1_epi32((int)w);                     \
        c##r##0 = _mm512_dpbf16_ps(c##r##0, ar, b0);                                 \
        c##r##1 = _mm512_dpbf16_ps(c##r##1, ar, b1);                                 \
    }
#define STORE(r)                                                                     \
    if ((r) < rows) {                                                                \
        _mm512_store_ps(acc + (r) * T, c##r##0);                                     \
        _mm512_store_ps(acc + (r) * T + 16, c##r##1);                                \
    }
#define ALL(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10)

/* acc rows [0, rows) = A rows (a: the chunk's first pixel) . B over K */
INLINE void chunk_body(const uint16_t *a, const uint16_t *b, int64_t steps, float *acc, const int rows) {
    const __m512 z = _mm512_setzero_ps();
    ALL(DECL)
    for (int64_t s = 0; s < steps; s++, a += T * T, b += T * T)
        for (int j = 0; j < T / 2; j++) {
            const __m512bh b0 = (__m512bh)_mm512_loadu_si512(b + j * 2 * T);
            const __m512bh b1 = (__m512bh)_mm512_loadu_si512(b + j * 2 * T + T);
            const uint16_t *ap = a + 2 * j;
            ALL(DP)
        }
    ALL(STORE)
}

typedef void (*chunk_fn)(const uint16_t *, const uint16_t *, int64_t, float *);
#define INST(r) \
    TARGET static void chunk_##r(const uint16_t *a, const uint16_t *b, int64_t s, float *c) { chunk_body(a, b, s, c, r); }
INST(1) INST(2) INST(3) INST(4) INST(5) INST(6) INST(7) INST(8) INST(9) INST(10) INST(11)
static const chunk_fn chunks[CHUNK] = {chunk_1, chunk_2, chunk_3, chunk_4,  chunk_5, chunk_6,
                                       chunk_7, chunk_8, chunk_9, chunk_10, chunk_11};

TARGET static void tile_avx512(const uint16_t *a, const uint16_t *b, int64_t steps, const onyx_nchwc_bf16_out *out) {
    float acc[T * T] __attribute__((aligned(64)));
    /* even chunks: 32 pixels are 11 + 11 + 10 */
    const int n = (out->npix + CHUNK - 1) / CHUNK, per = (out->npix + n - 1) / n;
    for (int i = 0; i < out->npix; i += per) {
        const int rows = out->npix - i < per ? out->npix - i : per;
        chunks[rows - 1](a + i * T, b, steps, acc + i * T);
    }
    onyx_nchwc_bf16_store_avx512(acc, out);
}

const onyx_nchwc_bf16_kernel onyx_nchwc_bf16_avx512 = {"avx512bf16", NULL, NULL, tile_avx512,
                                                       onyx_nchwc_bf16_convert32_avx512};

#else
typedef int onyx_nchwc_bf16_avx512_unused; /* ISO C wants a declaration in every file */
#endif
