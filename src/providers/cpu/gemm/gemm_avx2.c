/* AVX2+FMA SGEMM micro-kernel: a 6 x 16 register tile of C (12 ymm
 * accumulators, 2 B vectors and the A broadcast in the 16 ymm registers),
 * the classic Haswell shape. Every (rows, vectors, masked) combination is
 * compiled from one generic always-inline body. */
#include "providers/cpu/gemm/gemm_kernel.h"
#include "providers/cpu/gemm/gemm.h"

#ifdef ONYX_GEMM_X86
#include <immintrin.h>

#define MR 6
#define NV 2
#define VL 8
#define TARGET __attribute__((target("avx2,fma")))
#define INLINE TARGET static inline __attribute__((always_inline))

INLINE void store_vec(const onyx_gemm_kargs *ka, float *c, __m256 x, __m256i m, bool full,
                      size_t i, size_t v) {
    if (ka->alpha != 1.0f) x = _mm256_mul_ps(x, _mm256_set1_ps(ka->alpha));
    if (ka->load_c) {
        __m256 old = full ? _mm256_loadu_ps(c) : _mm256_maskload_ps(c, m);
        x = ka->beta == 1.0f ? _mm256_add_ps(x, old)
                             : _mm256_fmadd_ps(old, _mm256_set1_ps(ka->beta), x);
    }
    if (ka->last) {
        if (ka->bias_row) x = _mm256_add_ps(x, _mm256_set1_ps(ka->bias_row[i]));
        if (ka->bias_col) {
            const float *bc = ka->bias_col + VL * v;
            x = _mm256_add_ps(x, full ? _mm256_loadu_ps(bc) : _mm256_maskload_ps(bc, m));
        }
        const __m256 z = _mm256_setzero_ps();
        switch (ka->act) {
        case ONYX_GEMM_ACT_RELU: x = _mm256_max_ps(z, x); break;  /* NaN stays NaN */
        case ONYX_GEMM_ACT_CLIP:
            x = _mm256_min_ps(_mm256_set1_ps(ka->act_b), _mm256_max_ps(_mm256_set1_ps(ka->act_a), x));
            break;
        case ONYX_GEMM_ACT_LEAKY_RELU:
            x = _mm256_blendv_ps(x, _mm256_mul_ps(x, _mm256_set1_ps(ka->act_a)),
                                 _mm256_cmp_ps(x, z, _CMP_LT_OQ));
            break;
        default: break;
        }
    }
    if (full) _mm256_storeu_ps(c, x);
    else _mm256_maskstore_ps(c, m, x);
}

/* One accumulator per vector of the tile. Every element of C sums K in one
 * order, step by step into one accumulator, whatever tile it lands in: a row must come out
 * bit for bit the same in any batch (a model server batching requests) and
 * a column the same in any column tile (a layer whose output columns have
 * equal weights gives exactly equal outputs, as the model zoo's light models
 * expect through a softmax over huge logits), test_gemm's
 * test_invariance. Earlier kernels gave tiles of fewer than 8 vectors up to
 * 4 sets, summed at the end, against the 4-cycle FMA latency; those tiles
 * (the short last panel, the last columns, single rows) now wait on it. */
/* The general store of a tile spilled to acc (alpha, beta, bias, activation). */
TARGET __attribute__((noinline)) static void store_tile(const onyx_gemm_kargs *k, const __m256 acc[MR][NV],
                                                        size_t nv, bool masked, __m256i mask) {
    for (size_t i = 0; i < k->mr; i++)
        for (size_t v = 0; v < nv; v++)
            store_vec(k, k->c + i * k->ldc + VL * v, acc[i][v], mask, !(masked && v == nv - 1), i, v);
}

#define DECL_ROW(i) __m256 c##i##0 = z, c##i##1 = z;
#define LOAD_B(v) ((masked && (v) == nv - 1) ? _mm256_maskload_ps(b + VL * (v), mask) \
                                              : _mm256_loadu_ps(b + VL * (v)))
#define FMA_ROW(i)                                              \
    if ((i) < mr) {                                             \
        const __m256 ai = _mm256_broadcast_ss(a + (i));         \
        c##i##0 = _mm256_fmadd_ps(ai, b0, c##i##0);             \
        if (nv > 1) c##i##1 = _mm256_fmadd_ps(ai, b1, c##i##1); \
    }
#define STEP                                                    \
    {                                                           \
        const __m256 b0 = LOAD_B(0);                            \
        const __m256 b1 = nv > 1 ? LOAD_B(1) : z;               \
        FMA_ROW(0) FMA_ROW(1) FMA_ROW(2) FMA_ROW(3) FMA_ROW(4) FMA_ROW(5) \
        a += MR;                                                \
        b += ldb;                                               \
    }
#define PLAIN_V(i, v)                                                                     \
    if ((v) < nv) {                                                                       \
        const bool full = !(masked && (v) == nv - 1);                                     \
        float *cv = crow + VL * (v);                                                      \
        __m256 x = c##i##v;                                                               \
        if (load_c) x = _mm256_add_ps(x, full ? _mm256_loadu_ps(cv) : _mm256_maskload_ps(cv, mask)); \
        if (bcol) x = _mm256_add_ps(x, (v) ? bias1 : bias0);                               \
        if (full) _mm256_storeu_ps(cv, x);                                                \
        else _mm256_maskstore_ps(cv, mask, x);                                            \
    }
#define PLAIN_ROW(i)                                  \
    if ((i) < mr) {                                   \
        float *crow = c + (size_t)(i) * ldc;          \
        PLAIN_V(i, 0) PLAIN_V(i, 1)                   \
    }
#define SPILL_ROW(i)                 \
    if ((i) < mr) {                  \
        acc[i][0] = c##i##0;         \
        acc[i][1] = c##i##1;         \
    }
#define ALL_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5)

/* Four steps of the full packed tile in assembly, the twelve accumulators
 * pinned to ymm0-11 (the compiler picks them: ymm12-15 are clobbered).
 * Compiled from C, GCC 12 kept only 9 of the 12 in registers across the
 * unrolled steps (it hoists the next step's loads): three went through the
 * stack every 4 steps, a store-to-load forward in their dependency chains
 * that held the kernel near 70% of the FMA peak on Zen 3. Same FMAs in the
 * same order per element as STEP, so the results are bit for bit the
 * same. */
#if defined(__GNUC__) && !defined(ONYX_MINIMAL_SIZE)
/* row i of step S, its broadcast in ymm R (14 and 15 in turn) */
#define ASM_ROW(S, i, R)                                                \
    "vbroadcastss 24*" #S "+4*" #i "(%[a]), %%ymm" #R "\n\t"          \
    "vfmadd231ps %%ymm12, %%ymm" #R ", %[c" #i "0]\n\t"               \
    "vfmadd231ps %%ymm13, %%ymm" #R ", %[c" #i "1]\n\t"
#define ASM_STEP(S)                                                     \
    "vmovups 64*" #S "(%[b]), %%ymm12\n\t"                            \
    "vmovups 64*" #S "+32(%[b]), %%ymm13\n\t"                         \
    ASM_ROW(S, 0, 14) ASM_ROW(S, 1, 15) ASM_ROW(S, 2, 14)               \
    ASM_ROW(S, 3, 15) ASM_ROW(S, 4, 14) ASM_ROW(S, 5, 15)
#define STEPS4_ASM                                                                          \
    __asm__(ASM_STEP(0) ASM_STEP(1) ASM_STEP(2) ASM_STEP(3)                                 \
            : [c00] "+x"(c00), [c01] "+x"(c01), [c10] "+x"(c10), [c11] "+x"(c11),           \
              [c20] "+x"(c20), [c21] "+x"(c21), [c30] "+x"(c30), [c31] "+x"(c31),           \
              [c40] "+x"(c40), [c41] "+x"(c41), [c50] "+x"(c50), [c51] "+x"(c51)            \
            : [a] "r"(a), [b] "r"(b), "m"(*(const float(*)[4 * MR])a),                      \
              "m"(*(const float(*)[4 * NV * VL])b)                                          \
            : "xmm12", "xmm13", "xmm14", "xmm15");
#endif

INLINE void kernel_body(const onyx_gemm_kargs *ka, const size_t mr, const size_t nv,
                        const bool masked, const bool packed) {
    const __m256 z = _mm256_setzero_ps();
    ALL_ROWS(DECL_ROW)
    const int tail = (int)(ka->nr - (nv - 1) * VL);   /* 1..8 */
    const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(tail),
                                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    const float *a = ka->a, *b = ka->b;
    /* packed: B is a zero-padded strip (ldb == NR), so the unrolled steps
     * below address it with constant offsets */
    const size_t ldb = packed ? NV * VL : ka->ldb;
    /* C rows are ldc apart, which the hardware prefetchers do not follow:
     * the tile's C (read back on every K block after the first) starts
     * coming in now instead of stalling the store after the loop */
#ifndef ONYX_MINIMAL_SIZE
    if (packed && ka->load_c)
        for (size_t i = 0; i < mr; i++) {
            _mm_prefetch((const char *)(ka->c + i * ka->ldc), _MM_HINT_T0);
            _mm_prefetch((const char *)(ka->c + i * ka->ldc + 15), _MM_HINT_T0);
        }
#endif
    size_t p = ka->kc;
    /* the next B strip's lines for this call (strip_pf): one per loop
     * iteration from the start, so they arrive spread over the call
     * rather than in a burst before it */
    const char *pf = ka->pf;
    size_t pf_lines = ka->pf_lines;
#define PF_NEXT                                            \
    if (pf_lines) {                                        \
        _mm_prefetch(pf, _MM_HINT_T1);                     \
        pf += 64;                                          \
        pf_lines--;                                        \
    }
    /* 4 steps per iteration: the loop's pointer and counter updates compete
     * with the FMAs for ports 0 and 1 (only in the full tile: the edge
     * tiles are few, and the unrolled copy costs library size; not at all in
     * minimal builds, whose one tile body serves every shape) */
#ifndef ONYX_MINIMAL_SIZE
    if (packed)
        for (; p >= 4; p -= 4) {
            PF_NEXT
#ifdef STEPS4_ASM
            STEPS4_ASM
            a += 4 * MR;
            b += 4 * NV * VL;
#else
            STEP
            STEP
            STEP
            STEP
#endif
        }
#endif
    for (; p; p--) {
        PF_NEXT
        STEP
    }
#undef PF_NEXT
    /* C (+)= the tile inline in the common case (alpha 1, beta 0 or 1, no
     * bias or activation yet; the full packed tile also with a column bias,
     * the QKV projection's last K block); anything else out of line, one
     * copy for all the kernels. The sums are in store_vec's order. Minimal
     * builds store every tile out of line: store_vec does the same adds in
     * the same order, so the results are the same. */
#ifndef ONYX_MINIMAL_SIZE
    const float *const bcol = packed && ka->last ? ka->bias_col : NULL;
    if (ka->alpha == 1.0f && (!ka->load_c || ka->beta == 1.0f) &&
        (!ka->last || (!ka->bias_row && (!ka->bias_col || bcol) && ka->act == ONYX_GEMM_ACT_NONE))) {
        /* read once: the stores to C could alias *ka */
        const bool load_c = ka->load_c;
        float *const c = ka->c;
        const size_t ldc = ka->ldc;
        const __m256 bias0 = bcol ? _mm256_loadu_ps(bcol) : z, bias1 = bcol ? _mm256_loadu_ps(bcol + VL) : z;
        ALL_ROWS(PLAIN_ROW)
    } else
#endif
    {
        __m256 acc[MR][NV];
        ALL_ROWS(SPILL_ROW)
        store_tile(ka, acc, nv, masked, mask);
    }
}

typedef void (*kernel_fn)(const onyx_gemm_kargs *);
#define INST(mr, nv, mk) \
    TARGET static void k_##mr##_##nv##_##mk(const onyx_gemm_kargs *ka) { kernel_body(ka, mr, nv, mk, false); }
#define INST_ROWS(mr) INST(mr, 1, 0) INST(mr, 1, 1) INST(mr, 2, 0) INST(mr, 2, 1)
INST_ROWS(1) INST_ROWS(2) INST_ROWS(3) INST_ROWS(4) INST_ROWS(5) INST_ROWS(6)
#define TABLE_ROW(mr) {{k_##mr##_1_0, k_##mr##_1_1}, {k_##mr##_2_0, k_##mr##_2_1}},
static const kernel_fn kernels[MR][NV][2] = {
    TABLE_ROW(1) TABLE_ROW(2) TABLE_ROW(3) TABLE_ROW(4) TABLE_ROW(5) TABLE_ROW(6)
};

/* The tile nearly every call of a large GEMM runs: all rows, a whole
 * packed strip. */
TARGET static void k_full_packed(const onyx_gemm_kargs *ka) { kernel_body(ka, MR, NV, false, true); }

static void kernel_avx2(const onyx_gemm_kargs *ka) {
    if (ka->mr == MR && ka->nr == NV * VL && ka->ldb == NV * VL) {
        k_full_packed(ka);
        return;
    }
    size_t nv = (ka->nr + VL - 1) / VL;
    kernels[ka->mr - 1][nv - 1][ka->nr % VL != 0](ka);
}

/* r[c] = column c of the 8 x 8 block r[0..7] (the classic
 * unpack/shuffle/permute sequence). */
INLINE void transpose8x8(__m256 r[8]) {
    __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
    __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
    __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
    __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
    __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    r[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
    r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
    r[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
    r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
    r[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
    r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
    r[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
    r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

/* 8 x 8 blocks transposed in registers, the columns past the last whole
 * block one by one. */
TARGET void onyx_gemm_transpose8_avx2(const float *src, size_t ld, size_t n, float *dst, size_t dst_ld) {
    size_t c = 0;
    for (; c + 8 <= n; c += 8) {
        __m256 r[8];
        for (int i = 0; i < 8; i++) r[i] = _mm256_loadu_ps(src + i * ld + c);
        transpose8x8(r);
        for (int i = 0; i < 8; i++) _mm256_storeu_ps(dst + (c + i) * dst_ld, r[i]);
    }
    for (; c < n; c++)
        for (size_t r = 0; r < 8; r++) dst[c * dst_ld + r] = src[r * ld + c];
}

/* A panel of MR = 6 rows, 8 steps at a time: in each 128-bit lane (steps
 * p..p+3 low, p+4..p+7 high) rows 0-3 go through a 4 x 4 transpose and
 * rows 4-5 through one unpack, then shuffles interleave them into the
 * lane's 24 output floats (4 steps x 6 rows) and the two lanes' halves are
 * stored as 6 whole vectors. Half the shuffles of an 8 x 8 transpose with
 * two zero rows, and no overlapping stores across cache lines: about 2x
 * faster on Zen 3 (0.15 against 0.29 ns a float, hot). */
TARGET static void pack_a6_avx2(const float *src, size_t ld, size_t kc, float *dst) {
    size_t p = 0;
    for (; p + 8 <= kc; p += 8) {
        const __m256 a0 = _mm256_loadu_ps(src + p), a1 = _mm256_loadu_ps(src + ld + p);
        const __m256 a2 = _mm256_loadu_ps(src + 2 * ld + p), a3 = _mm256_loadu_ps(src + 3 * ld + p);
        const __m256 a4 = _mm256_loadu_ps(src + 4 * ld + p), a5 = _mm256_loadu_ps(src + 5 * ld + p);
        /* per lane, step s = 0..3 of it: rows 0-3 in c_s */
        const __m256 t0 = _mm256_unpacklo_ps(a0, a1), t1 = _mm256_unpackhi_ps(a0, a1);
        const __m256 t2 = _mm256_unpacklo_ps(a2, a3), t3 = _mm256_unpackhi_ps(a2, a3);
        const __m256 c0 = _mm256_shuffle_ps(t0, t2, 0x44), c1 = _mm256_shuffle_ps(t0, t2, 0xEE);
        const __m256 c2 = _mm256_shuffle_ps(t1, t3, 0x44), c3 = _mm256_shuffle_ps(t1, t3, 0xEE);
        /* rows 4-5: (s0 r4, s0 r5, s1 r4, s1 r5) and the same for s2, s3 */
        const __m256 t4 = _mm256_unpacklo_ps(a4, a5), t5 = _mm256_unpackhi_ps(a4, a5);
        /* the lane's output, 4 floats at a time: c0 | s0 r4-5, s1 r0-1 | s1 r2-3, s1 r4-5 | c2 | ... */
        const __m256 o0 = _mm256_shuffle_ps(t4, c1, 0x44), o1 = _mm256_shuffle_ps(c1, t4, 0xEE);
        const __m256 o2 = _mm256_shuffle_ps(t5, c3, 0x44), o3 = _mm256_shuffle_ps(c3, t5, 0xEE);
        float *d = dst + p * MR;
        _mm256_storeu_ps(d, _mm256_permute2f128_ps(c0, o0, 0x20));
        _mm256_storeu_ps(d + 8, _mm256_permute2f128_ps(o1, c2, 0x20));
        _mm256_storeu_ps(d + 16, _mm256_permute2f128_ps(o2, o3, 0x20));
        _mm256_storeu_ps(d + 24, _mm256_permute2f128_ps(c0, o0, 0x31));
        _mm256_storeu_ps(d + 32, _mm256_permute2f128_ps(o1, c2, 0x31));
        _mm256_storeu_ps(d + 40, _mm256_permute2f128_ps(o2, o3, 0x31));
    }
    for (; p < kc; p++)
        for (size_t i = 0; i < MR; i++) dst[p * MR + i] = src[i * ld + p];
}

/* A KC x 16 strip is 16 KiB: it stays in L1 while 32 panels of A (192 rows,
 * 192 KiB at KC 256) stream from L2, so per step the kernel reads 24 bytes
 * of A from L2 instead of 64 of B (measured 10-20% faster on the BERT and
 * GPT-2 shapes than one panel against the whole B block). */
const onyx_gemm_isa onyx_gemm_isa_avx2 = {.name = "avx2", .mr = MR, .nr = NV * VL, .kernel = kernel_avx2,
                                          .transpose8 = onyx_gemm_transpose8_avx2, .a_panels = 32,
                                          .pack_a = pack_a6_avx2, .strip_pf = true};

#endif
