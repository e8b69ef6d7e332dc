/* WebAssembly SIMD128 SGEMM micro-kernel: a 4 x 8 register tile of C
 * (8 f32x4 accumulators, 2 B vectors and the A broadcast). WebAssembly has
 * no fused multiply-add in SIMD128, and the engines map a v128 to one SSE or
 * NEON register; x86-64 engines give a function about 15 of them, so a tile
 * of 8 accumulators stays in registers where 12 or 16 would spill. Every
 * (rows, vectors, masked) combination is compiled from one always-inline
 * body, as the AVX2 kernel does. Built only with -msimd128 (the WebAssembly
 * build, cmake/wasm.cmake), where platform.c's generic table uses it. */
#include "providers/cpu/gemm/gemm_kernel.h"
#include "providers/cpu/gemm/gemm.h"

#ifdef ONYX_GEMM_WASM_SIMD
#include <string.h>
#include <wasm_simd128.h>

#define MR 4
#define NV 2
#define VL 4
#define INLINE static inline __attribute__((always_inline))

/* `masked`: the B strip is unpacked (ldb != NR) and nr is not a multiple
 * of 4, so its last vector is loaded lane by lane; a packed strip is zero
 * padded and always read whole. The C stores are cut to nr either way. */

/* n < 4 floats at p, the rest zero (the last, partial vector of an
 * unpacked B row or of a bias), without reading past p[n - 1] */
INLINE v128_t load_part(const float *p, int n) {
    float t[VL] = {0};
    memcpy(t, p, (size_t)n * sizeof(float));
    return wasm_v128_load(t);
}

INLINE void store_part(float *p, v128_t x, int n) {
    float t[VL];
    wasm_v128_store(t, x);
    memcpy(p, t, (size_t)n * sizeof(float));
}

INLINE v128_t activate(const onyx_gemm_kargs *ka, v128_t x) {
    const v128_t z = wasm_f32x4_splat(0.0f);
    switch (ka->act) {
    case ONYX_GEMM_ACT_RELU:
        /* 0 where x < 0, else x: NaN fails the compare and stays NaN */
        return wasm_v128_bitselect(z, x, wasm_f32x4_lt(x, z));
    case ONYX_GEMM_ACT_CLIP: {
        const v128_t lo = wasm_f32x4_splat(ka->act_a), hi = wasm_f32x4_splat(ka->act_b);
        x = wasm_v128_bitselect(lo, x, wasm_f32x4_lt(x, lo));
        return wasm_v128_bitselect(hi, x, wasm_f32x4_gt(x, hi));
    }
    case ONYX_GEMM_ACT_LEAKY_RELU:
        return wasm_v128_bitselect(wasm_f32x4_mul(x, wasm_f32x4_splat(ka->act_a)), x, wasm_f32x4_lt(x, z));
    default: return x;
    }
}

INLINE void store_vec(const onyx_gemm_kargs *ka, float *c, v128_t x, int n, size_t i, size_t v) {
    const bool full = n == VL;
    if (ka->alpha != 1.0f) x = wasm_f32x4_mul(x, wasm_f32x4_splat(ka->alpha));
    if (ka->load_c) {
        v128_t old = full ? wasm_v128_load(c) : load_part(c, n);
        if (ka->beta != 1.0f) old = wasm_f32x4_mul(old, wasm_f32x4_splat(ka->beta));
        x = wasm_f32x4_add(x, old);
    }
    if (ka->last) {
        if (ka->bias_row) x = wasm_f32x4_add(x, wasm_f32x4_splat(ka->bias_row[i]));
        if (ka->bias_col) {
            const float *bc = ka->bias_col + VL * v;
            x = wasm_f32x4_add(x, full ? wasm_v128_load(bc) : load_part(bc, n));
        }
        x = activate(ka, x);
    }
    if (full) wasm_v128_store(c, x);
    else store_part(c, x, n);
}

#define DECL_ROW(i) v128_t c##i##0 = z, c##i##1 = z;
#define LOAD_B(v) ((masked && (v) == nv - 1) ? load_part(b + VL * (v), tail) : wasm_v128_load(b + VL * (v)))
#define MAC_ROW(i)                                                              \
    if ((i) < mr) {                                                             \
        const v128_t ai = wasm_v128_load32_splat(a + (i));                      \
        c##i##0 = wasm_f32x4_add(c##i##0, wasm_f32x4_mul(ai, b0));              \
        if (nv > 1) c##i##1 = wasm_f32x4_add(c##i##1, wasm_f32x4_mul(ai, b1));  \
    }
#define STORE_V(i, v) \
    if ((v) < nv) store_vec(ka, crow + VL * (v), c##i##v, (v) == nv - 1 ? tail : VL, (i), (v));
#define STORE_ROW(i)                                  \
    if ((i) < mr) {                                   \
        float *crow = ka->c + (size_t)(i) * ka->ldc;  \
        STORE_V(i, 0) STORE_V(i, 1)                   \
    }
#define ALL_ROWS(X) X(0) X(1) X(2) X(3)

INLINE void kernel_body(const onyx_gemm_kargs *ka, const size_t mr, const size_t nv, const bool masked) {
    const v128_t z = wasm_f32x4_splat(0.0f);
    ALL_ROWS(DECL_ROW)
    const int tail = (int)(ka->nr - (nv - 1) * VL);   /* 1..4 */
    const float *a = ka->a, *b = ka->b;
    const size_t ldb = ka->ldb;
    for (size_t p = ka->kc; p; p--) {
        const v128_t b0 = LOAD_B(0);
        const v128_t b1 = nv > 1 ? LOAD_B(1) : z;
        ALL_ROWS(MAC_ROW)
        a += MR;
        b += ldb;
    }
    ALL_ROWS(STORE_ROW)
}

typedef void (*kernel_fn)(const onyx_gemm_kargs *);
#define INST(mr, nv, mk) \
    static void k_##mr##_##nv##_##mk(const onyx_gemm_kargs *ka) { kernel_body(ka, mr, nv, mk); }
#define INST_ROWS(mr) INST(mr, 1, 0) INST(mr, 1, 1) INST(mr, 2, 0) INST(mr, 2, 1)
INST_ROWS(1) INST_ROWS(2) INST_ROWS(3) INST_ROWS(4)
#define TABLE_ROW(mr) {{k_##mr##_1_0, k_##mr##_1_1}, {k_##mr##_2_0, k_##mr##_2_1}},
static const kernel_fn kernels[MR][NV][2] = {TABLE_ROW(1) TABLE_ROW(2) TABLE_ROW(3) TABLE_ROW(4)};

/* A single column (nr == 1) of a whole panel (mr == MR), the last strip
 * of an N that is 1 past a multiple of NR (every odd square image: 13 x 13,
 * 27 x 27, 55 x 55, ...). The tile kernel would spend a 4 x 4 tile on it,
 * each row's accumulator one dependent add per step; here the panel's 4
 * rows at step p are one vector (a[p * MR ..]) times the splat of b[p], a
 * matrix-vector product with 4 partial sums over p taken in turn, so 4
 * independent adds are in flight. Same epilogue, along the column. */
static void kernel_column(const onyx_gemm_kargs *ka) {
    const v128_t z = wasm_f32x4_splat(0.0f);
    v128_t s0 = z, s1 = z, s2 = z, s3 = z;
    const float *a = ka->a, *b = ka->b;
    const size_t ldb = ka->ldb;
    size_t p = ka->kc;
    for (; p >= 4; p -= 4, a += 4 * MR, b += 4 * ldb) {
        s0 = wasm_f32x4_add(s0, wasm_f32x4_mul(wasm_v128_load(a), wasm_v128_load32_splat(b)));
        s1 = wasm_f32x4_add(s1, wasm_f32x4_mul(wasm_v128_load(a + MR), wasm_v128_load32_splat(b + ldb)));
        s2 = wasm_f32x4_add(s2, wasm_f32x4_mul(wasm_v128_load(a + 2 * MR), wasm_v128_load32_splat(b + 2 * ldb)));
        s3 = wasm_f32x4_add(s3, wasm_f32x4_mul(wasm_v128_load(a + 3 * MR), wasm_v128_load32_splat(b + 3 * ldb)));
    }
    for (; p; p--, a += MR, b += ldb)
        s0 = wasm_f32x4_add(s0, wasm_f32x4_mul(wasm_v128_load(a), wasm_v128_load32_splat(b)));
    v128_t x = wasm_f32x4_add(wasm_f32x4_add(s0, s1), wasm_f32x4_add(s2, s3));
    float *c = ka->c;
    const size_t ldc = ka->ldc;
    if (ka->alpha != 1.0f) x = wasm_f32x4_mul(x, wasm_f32x4_splat(ka->alpha));
    if (ka->load_c) {
        v128_t old = wasm_f32x4_make(c[0], c[ldc], c[2 * ldc], c[3 * ldc]);
        if (ka->beta != 1.0f) old = wasm_f32x4_mul(old, wasm_f32x4_splat(ka->beta));
        x = wasm_f32x4_add(x, old);
    }
    if (ka->last) {
        if (ka->bias_row) x = wasm_f32x4_add(x, wasm_v128_load(ka->bias_row));   /* rows 0..3 all exist */
        if (ka->bias_col) x = wasm_f32x4_add(x, wasm_v128_load32_splat(ka->bias_col));
        x = activate(ka, x);
    }
    c[0] = wasm_f32x4_extract_lane(x, 0);
    c[ldc] = wasm_f32x4_extract_lane(x, 1);
    c[2 * ldc] = wasm_f32x4_extract_lane(x, 2);
    c[3 * ldc] = wasm_f32x4_extract_lane(x, 3);
}

static void kernel_wasm_simd(const onyx_gemm_kargs *ka) {
    if (ka->nr == 1 && ka->mr == MR) {
        kernel_column(ka);
        return;
    }
    size_t nv = (ka->nr + VL - 1) / VL;
    kernels[ka->mr - 1][nv - 1][ka->nr % VL != 0 && ka->ldb != NV * VL](ka);
}

const onyx_gemm_isa onyx_gemm_isa_wasm_simd = {"wasm_simd", MR, NV * VL, kernel_wasm_simd, NULL};

#endif
