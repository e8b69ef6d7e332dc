/* AVX-512F SGEMM micro-kernel: an MR x (NV * 16) register tile of C, fed by
 * one broadcast of A and NV vector loads of B per step. 8 x 48 keeps 24
 * accumulators, 3 B vectors and the broadcast in the 32 zmm registers, and
 * 8 rows divide the channel counts and sequence lengths of common models.
 * Every (rows, vectors, masked) combination is compiled from one generic
 * always-inline body so edge tiles run at full speed too. */
#include "providers/cpu/gemm/gemm_kernel.h"
#include "providers/cpu/gemm/gemm.h"

#ifdef ONYX_GEMM_X86
#include <immintrin.h>

#define MR 8
#define NV 3
#define VL 16
#define TARGET __attribute__((target("avx512f")))
#define INLINE TARGET static inline __attribute__((always_inline))

/* C[i, 16v..] <- epilogue(x); `full` vectors use plain loads and stores. */
INLINE void store_vec(const onyx_gemm_kargs *ka, float *c, __m512 x, __mmask16 m, bool full,
                      size_t i, size_t v) {
    if (ka->alpha != 1.0f) x = _mm512_mul_ps(x, _mm512_set1_ps(ka->alpha));
    if (ka->load_c) {
        __m512 old = full ? _mm512_loadu_ps(c) : _mm512_maskz_loadu_ps(m, c);
        x = ka->beta == 1.0f ? _mm512_add_ps(x, old)
                             : _mm512_fmadd_ps(old, _mm512_set1_ps(ka->beta), x);
    }
    if (ka->last) {
        if (ka->bias_row) x = _mm512_add_ps(x, _mm512_set1_ps(ka->bias_row[i]));
        if (ka->bias_col) {
            const float *bc = ka->bias_col + VL * v;
            x = _mm512_add_ps(x, full ? _mm512_loadu_ps(bc) : _mm512_maskz_loadu_ps(m, bc));
        }
        const __m512 z = _mm512_setzero_ps();
        switch (ka->act) {
        case ONYX_GEMM_ACT_RELU: x = _mm512_max_ps(z, x); break;  /* NaN stays NaN */
        case ONYX_GEMM_ACT_CLIP:
            x = _mm512_min_ps(_mm512_set1_ps(ka->act_b), _mm512_max_ps(_mm512_set1_ps(ka->act_a), x));
            break;
        case ONYX_GEMM_ACT_LEAKY_RELU:
            x = _mm512_mask_mul_ps(x, _mm512_cmp_ps_mask(x, z, _CMP_LT_OQ), x,
                                   _mm512_set1_ps(ka->act_a));
            break;
        default: break;
        }
    }
    if (full) _mm512_storeu_ps(c, x);
    else _mm512_mask_storeu_ps(c, m, x);
}

/* Accumulator c<row><vector>; unused ones are removed by the compiler. */
#define DECL_ROW(i) __m512 c##i##0 = z, c##i##1 = z, c##i##2 = z;
#define LOAD_B(v) ((masked && (v) == nv - 1) ? _mm512_maskz_loadu_ps(mask, b + VL * (v)) \
                                              : _mm512_loadu_ps(b + VL * (v)))
#define FMA_ROW(i)                                                      \
    if ((i) < mr) {                                                     \
        const __m512 ai = _mm512_set1_ps(a[i]);                         \
        c##i##0 = _mm512_fmadd_ps(ai, b0, c##i##0);                     \
        if (nv > 1) c##i##1 = _mm512_fmadd_ps(ai, b1, c##i##1);         \
        if (nv > 2) c##i##2 = _mm512_fmadd_ps(ai, b2, c##i##2);         \
    }
#define STORE_V(i, v)                                                              \
    if ((v) < nv) store_vec(ka, crow + VL * (v), c##i##v, mask, !(masked && (v) == nv - 1), \
                            (i), (v));
#define STORE_ROW(i)                                  \
    if ((i) < mr) {                                   \
        float *crow = ka->c + (size_t)(i) * ka->ldc;  \
        STORE_V(i, 0) STORE_V(i, 1) STORE_V(i, 2)     \
    }
#define ALL_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)

INLINE void kernel_body(const onyx_gemm_kargs *ka, const size_t mr, const size_t nv,
                        const bool masked) {
    const __m512 z = _mm512_setzero_ps();
    ALL_ROWS(DECL_ROW)
    const unsigned tail = (unsigned)(ka->nr - (nv - 1) * VL);   /* 1..16 */
    const __mmask16 mask = (__mmask16)((1u << tail) - 1u);
    const float *a = ka->a, *b = ka->b;
    const size_t ldb = ka->ldb;
    /* the tile of C is stored (and maybe read) after the loop: start
     * fetching its lines now */
    for (size_t i = 0; i < mr; i++)
        for (size_t v = 0; v < nv; v++) _mm_prefetch((const char *)(ka->c + i * ka->ldc + VL * v), _MM_HINT_T0);
    /* only the full tile prefetches: edge tiles are rare, and the extra
     * loop in each of the 48 variants would cost 8 KB of library */
    const char *pf = ka->pf;
    size_t pf_lines = mr == MR && nv == NV && !masked ? ka->pf_lines : 0;
    for (size_t p = ka->kc; p; p--) {
        if (pf_lines && (p & 1)) {
            _mm_prefetch(pf, _MM_HINT_T1);
            pf += 64;
            pf_lines--;
        }
        const __m512 b0 = LOAD_B(0);
        const __m512 b1 = nv > 1 ? LOAD_B(1) : z;
        const __m512 b2 = nv > 2 ? LOAD_B(2) : z;
        ALL_ROWS(FMA_ROW)
        a += MR;
        b += ldb;
    }
    ALL_ROWS(STORE_ROW)
}

typedef void (*kernel_fn)(const onyx_gemm_kargs *);
#define INST(mr, nv, mk) \
    TARGET static void k_##mr##_##nv##_##mk(const onyx_gemm_kargs *ka) { kernel_body(ka, mr, nv, mk); }
#define INST_ROWS(mr) INST(mr, 1, 0) INST(mr, 1, 1) INST(mr, 2, 0) INST(mr, 2, 1) INST(mr, 3, 0) INST(mr, 3, 1)
INST_ROWS(1) INST_ROWS(2) INST_ROWS(3) INST_ROWS(4) INST_ROWS(5) INST_ROWS(6) INST_ROWS(7) INST_ROWS(8)
#define TABLE_ROW(mr) \
    {{k_##mr##_1_0, k_##mr##_1_1}, {k_##mr##_2_0, k_##mr##_2_1}, {k_##mr##_3_0, k_##mr##_3_1}},
static const kernel_fn kernels[MR][NV][2] = {
    TABLE_ROW(1) TABLE_ROW(2) TABLE_ROW(3) TABLE_ROW(4) TABLE_ROW(5) TABLE_ROW(6) TABLE_ROW(7) TABLE_ROW(8)
};

static void kernel_avx512(const onyx_gemm_kargs *ka) {
    size_t nv = (ka->nr + VL - 1) / VL;
    kernels[ka->mr - 1][nv - 1][ka->nr % VL != 0](ka);
}

/* AVX-512F implies AVX2, whose 8 x 8 transpose serves the packing. */
/* strip_k 128: a 128 x 48 strip is 24 KiB, half of a 48 KiB L1, so the A
 * panels streaming past it do not evict it (a 256-step strip is all of L1). */
const onyx_gemm_isa onyx_gemm_isa_avx512 = {.name = "avx512f", .mr = MR, .nr = NV * VL, .kernel = kernel_avx512,
                                            .transpose8 = onyx_gemm_transpose8_avx2, .strip_k = 128};

#endif
