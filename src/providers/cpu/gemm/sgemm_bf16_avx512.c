/* AVX512-BF16 micro-kernel of the bfloat16 fast-math GEMM (sgemm_bf16.h):
 * an 8 x 48 tile of C in 24 zmm accumulators; per pair of K steps one
 * 32-bit broadcast of each row's two A values and three loads of 32
 * interleaved B values feed 24 VDPBF16PS, each 32 multiply-adds. Every
 * (rows, vectors) combination is compiled from one always-inline body.
 * The A panel is row-major (each row's pairs contiguous, as AMX's), so it
 * is packed with vector conversions (row_convert) rather than one element
 * at a time: a tile's rows of A are packed again for each tile of columns,
 * and scalar packing cost as much as the products at BERT's shapes. */
#include "providers/cpu/gemm/sgemm_bf16.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define MR 8
#define NV 3
#define VL 16
#define NR (NV * VL)
#define TARGET __attribute__((target("avx512f,avx512bf16")))
#define INLINE TARGET static inline __attribute__((always_inline))

INLINE void store(const onyx_bf16_kargs *ka, float *c, __m512 acc, __mmask16 m) {
    __m512 x = ka->alpha == 1.0f ? acc : _mm512_mul_ps(acc, _mm512_set1_ps(ka->alpha));
    if (!ka->first) x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(m, c));
    else if (ka->load_c) x = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, c), _mm512_set1_ps(ka->beta), x);
    _mm512_mask_storeu_ps(c, m, x);
}

#define DECL_ROW(i) __m512 c##i##0 = z, c##i##1 = z, c##i##2 = z;
#define DP_ROW(i)                                                                  \
    if ((i) < mr) {                                                                \
        const __m512bh ai = (__m512bh)_mm512_set1_epi32((int)a[(i) * kp + p]);     \
        c##i##0 = _mm512_dpbf16_ps(c##i##0, ai, b0);                               \
        if (nv > 1) c##i##1 = _mm512_dpbf16_ps(c##i##1, ai, b1);                   \
        if (nv > 2) c##i##2 = _mm512_dpbf16_ps(c##i##2, ai, b2);                   \
    }
#define STORE_ROW(i)                                                               \
    if ((i) < mr) {                                                                \
        float *crow = ka->c + (size_t)(i) * ka->ldc;                               \
        store(ka, crow, c##i##0, mask_of(ka->nr, 0));                              \
        if (nv > 1) store(ka, crow + VL, c##i##1, mask_of(ka->nr, 1));             \
        if (nv > 2) store(ka, crow + 2 * VL, c##i##2, mask_of(ka->nr, 2));         \
    }
#define ALL_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)

/* Lanes of vector v that hold columns < nr. */
static inline __mmask16 mask_of(size_t nr, size_t v) {
    if (nr >= (v + 1) * VL) return 0xffff;
    if (nr <= v * VL) return 0;
    return (__mmask16)((1u << (nr - v * VL)) - 1u);
}

INLINE void kernel_body(const onyx_bf16_kargs *ka, const size_t mr, const size_t nv) {
    const __m512 z = _mm512_setzero_ps();
    ALL_ROWS(DECL_ROW)
    const uint32_t *a = ka->a;   /* row i's pair p at a[i * kp + p] */
    const uint16_t *b = ka->b;
    const size_t kp = ka->kp;
    for (size_t p = 0; p < kp; p++) {
        const __m512bh b0 = (__m512bh)_mm512_loadu_si512(b);
        const __m512bh b1 = nv > 1 ? (__m512bh)_mm512_loadu_si512(b + 2 * VL) : (__m512bh)z;
        const __m512bh b2 = nv > 2 ? (__m512bh)_mm512_loadu_si512(b + 4 * VL) : (__m512bh)z;
        ALL_ROWS(DP_ROW)
        b += 2 * NR;
    }
    ALL_ROWS(STORE_ROW)
}

typedef void (*kernel_fn)(const onyx_bf16_kargs *);
#define INST(mr, nv) TARGET static void k_##mr##_##nv(const onyx_bf16_kargs *ka) { kernel_body(ka, mr, nv); }
#define INST_ROWS(mr) INST(mr, 1) INST(mr, 2) INST(mr, 3)
INST_ROWS(1) INST_ROWS(2) INST_ROWS(3) INST_ROWS(4) INST_ROWS(5) INST_ROWS(6) INST_ROWS(7) INST_ROWS(8)
#define TABLE_ROW(mr) {k_##mr##_1, k_##mr##_2, k_##mr##_3},
static const kernel_fn kernels[MR][NV] = {
    TABLE_ROW(1) TABLE_ROW(2) TABLE_ROW(3) TABLE_ROW(4) TABLE_ROW(5) TABLE_ROW(6) TABLE_ROW(7) TABLE_ROW(8)
};

static void kernel_avx512bf16(const onyx_bf16_kargs *ka) {
    size_t nv = (ka->nr + VL - 1) / VL;
    kernels[ka->mr - 1][nv - 1](ka);
}

/* n floats -> pairs of bfloat16 (round to nearest even), zero-padded to
 * `pairs` pairs. */
TARGET void onyx_bf16_row_convert_avx512(const float *src, size_t n, uint32_t *dst, size_t pairs) {
    size_t k = 0;
    for (; k + 32 <= n; k += 32) {
        __m512bh v = _mm512_cvtne2ps_pbh(_mm512_loadu_ps(src + k + 16), _mm512_loadu_ps(src + k));
        _mm512_storeu_si512(dst + k / 2, (__m512i)v);
    }
    for (; k < 2 * pairs; k += 32) {   /* the tail and the zero padding, masked */
        size_t left = k < n ? n - k : 0;
        __mmask16 lo = (__mmask16)(left >= 16 ? 0xffff : (1u << left) - 1u);
        __mmask16 hi = (__mmask16)(left >= 32 ? 0xffff : left > 16 ? (1u << (left - 16)) - 1u : 0);
        __m512bh v = _mm512_cvtne2ps_pbh(_mm512_maskz_loadu_ps(hi, src + k + 16), _mm512_maskz_loadu_ps(lo, src + k));
        size_t room = (2 * pairs - k) / 2;   /* pairs left to write */
        _mm512_mask_storeu_epi32(dst + k / 2, (__mmask16)(room >= 16 ? 0xffff : (1u << room) - 1u), (__m512i)v);
    }
}

const onyx_bf16_isa onyx_bf16_isa_avx512 = {"avx512bf16", MR, NR, 2, true, kernel_avx512bf16, NULL, NULL,
                                            onyx_bf16_row_convert_avx512};

#endif
