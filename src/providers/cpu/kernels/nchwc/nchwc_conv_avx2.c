/* AVX2 + FMA tiles of the NCHWc direct convolution (see nchwc_conv.h), for
 * 8-channel blocks (the AVX2 table's) and 16-channel blocks (graphs laid
 * out for AVX-512, or forced with ONYX_NCHWC_BLOCK=16).
 *
 * Both run one body over "ymm blocks" of 8 output channels: an 8-channel
 * block is one, a 16-channel block two (its halves, R = 2). A pass of nv
 * ymm blocks x npix pixels keeps nv * npix accumulators, nv weight vectors
 * and one broadcast input in the 16 ymm registers: 1 x 8, 2 x 6, 3 x 4
 * (12 + 3 + 1 = 16), 4 x 3 (12 accumulators; a weight vector becomes an
 * FMA memory operand where the registers run out). Per input lane and
 * tap: nv weight loads, npix broadcasts and nv * npix FMAs, at most about
 * 9 loads per 12 FMAs, within two load ports; 12 independent accumulators
 * cover the FMA latency (4 cycles on 2 units).
 *
 * Block 8: a tile of nob <= 3 blocks is one pass (the table's pixels: 8,
 * 6, 4 for nob = 1..3), of 4..8 blocks passes of 2 blocks x 6 pixels (the
 * last of an odd nob one block). Per 12 FMAs a 2 x 6 pass reads 64 bytes
 * of weights, a 4 x 3 pass (the shape before 2026-11-27) 128: the weights
 * of a chunk outgrow L1 and come from L2, which gives Zen 2/3 about 32
 * bytes a cycle, 21 of them taken by 4 x 3 at the FMA peak against 11 by
 * 2 x 6; the 6 broadcasts of 2 x 6 read the tile's few input lines in L1.
 * The passes of one tile also split the prefetch of the next chunk's
 * weights (kp->pf, as the AVX-512 tile does). Block 16: a tile runs in passes of at most two
 * blocks (four ymm blocks x 3 pixels, or two x 6 for one block); the
 * passes of one tile read the same inputs again (from L1) and a strided
 * part of the weight stream. Bias (first chunk), Z and the activation
 * (last chunk) are fused into the load and the store, as in the AVX-512
 * tiles. */
#include "providers/cpu/kernels/nchwc/nchwc_conv.h"

#ifdef ONYX_NCHWC_X86
#include <immintrin.h>
#include <math.h>

#define TARGET __attribute__((target("avx2,fma")))
#define INLINE TARGET static inline __attribute__((always_inline))
#if defined(__clang__)
#define UNROLL _Pragma("unroll")
#else
#define UNROLL _Pragma("GCC unroll 16")
#endif

INLINE __m256 activate(__m256 v, const onyx_nchwc_act *act) {
    const __m256 zero = _mm256_setzero_ps();
    switch (act->kind) {
    case ONYX_GEMM_ACT_RELU: return _mm256_max_ps(zero, v);   /* NaN passes (second operand) */
    case ONYX_GEMM_ACT_CLIP:
        return _mm256_min_ps(_mm256_set1_ps(act->b), _mm256_max_ps(_mm256_set1_ps(act->a), v));
    case ONYX_GEMM_ACT_LEAKY_RELU:
        return _mm256_blendv_ps(v, _mm256_mul_ps(v, _mm256_set1_ps(act->a)), _mm256_cmp_ps(v, zero, _CMP_LT_OQ));
    default: return v;
    }
}

/* Accumulators c<o><p>: ymm block o of the pass, pixel p; named variables
 * so they stay in registers, the ones beyond (NV, NPIX) removed as dead
 * code. */
#define FOR_P(X, o) X(o, 0) X(o, 1) X(o, 2) X(o, 3) X(o, 4) X(o, 5) X(o, 6) X(o, 7)
#define FOR_ALL(X) FOR_P(X, 0) FOR_P(X, 1) FOR_P(X, 2) FOR_P(X, 3)
#define FOR_O(X, p) X(0, p) X(1, p) X(2, p) X(3, p)
#define FOR_O1(X) X(0) X(1) X(2) X(3)
#define FOR_PIX1(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)

/* ymm block o (half o % R of block o / R), pixel p, in y and z */
#define AT(o, p) (((o) / R) * y_ob + 8 * R * (p) + 8 * ((o) % R))
#define DECL_X(p) const float *x##p = (p) < NPIX ? xpp[p] : xpp[0];
#define DECL_ACC(o, p) __m256 c##o##p = _mm256_setzero_ps();
#define INIT_ACC(o, p)                                                                              \
    if ((o) < NV && (p) < NPIX)                                                                     \
        c##o##p = !kp->first ? _mm256_loadu_ps(y + AT(o, p))                                        \
                  : bias     ? _mm256_loadu_ps(bias + 8 * (o))                                      \
                             : _mm256_setzero_ps();
#define LOAD_W(o) const __m256 w##o = (o) < NV ? _mm256_loadu_ps(w + 8 * (o)) : _mm256_setzero_ps();
#define FMA(o, p) if ((o) < NV) c##o##p = _mm256_fmadd_ps(w##o, xv, c##o##p);
#define PIX_STEP(p)                                             \
    if ((p) < NPIX) {                                           \
        const __m256 xv = _mm256_broadcast_ss(x##p + off + l);  \
        FOR_O(FMA, p)                                           \
    }
/* The last chunk's store with the flags in registers (read before the
 * first store, which the compiler must assume could change *kp) and
 * Relu, Clip and no activation as one min(hi, max(lo, v)): no branch per
 * accumulator. max(lo, v) keeps v where v is NaN (the second operand), as
 * activate() does; with lo = -inf, hi = +inf it is v. */
#define STORE_PLAIN(o, p) if ((o) < NV && (p) < NPIX) _mm256_storeu_ps(y + AT(o, p), c##o##p);
#define STORE_LAST(o, p)                                                            \
    if ((o) < NV && (p) < NPIX) {                                                   \
        __m256 v = c##o##p;                                                         \
        if (has_z) v = _mm256_add_ps(v, _mm256_loadu_ps(z + AT(o, p)));             \
        v = leaky ? activate(v, &act) : _mm256_min_ps(hi, _mm256_max_ps(lo, v));    \
        _mm256_storeu_ps(y + AT(o, p), v);                                          \
    }
#define STORE_ALL                                                                   \
    if (!kp->last) {                                                                \
        FOR_ALL(STORE_PLAIN)                                                        \
    } else {                                                                        \
        const onyx_nchwc_act act = kp->act;                                         \
        const bool has_z = kp->has_z, leaky = act.kind == ONYX_GEMM_ACT_LEAKY_RELU; \
        const __m256 lo = _mm256_set1_ps(act.kind == ONYX_GEMM_ACT_RELU ? 0.0f      \
                                         : act.kind == ONYX_GEMM_ACT_CLIP ? act.a   \
                                                                          : -INFINITY); \
        const __m256 hi = _mm256_set1_ps(act.kind == ONYX_GEMM_ACT_CLIP ? act.b : INFINITY); \
        FOR_ALL(STORE_LAST)                                                         \
    }

/* The lanes of one input channel (block) and tap at input offset off,
 * then PF_LINES lines of kp->pf (the next chunk's weights) into L2: a few
 * per tap, spread over the tile, so they never hold up the loads the FMAs
 * wait on (as in the AVX-512 tile). */
#define PF_LINES 4
#define LANES_STEP                                                                  \
    if (ASM_PASS) {                                                                 \
        ASM_LANES                                                                   \
    } else {                                                                        \
        UNROLL                                                                      \
        for (int l = 0; l < LANES; l++) {                                           \
            FOR_O1(LOAD_W)                                                          \
            FOR_PIX1(PIX_STEP)                                                      \
            w += w_step;                                                            \
        }                                                                           \
    }                                                                               \
    if (pf < pf_end) {                                                              \
        for (int i = 0; i < PF_LINES; i++) _mm_prefetch(pf + 64 * i, _MM_HINT_T1);  \
        pf += 64 * PF_LINES;                                                        \
    }

/* The lanes of a pass of 2 ymm blocks x 5 or 6 pixels (the passes that
 * run nearly all of a network's 1x1 and KxK FLOPs), and of 3 x 4, in assembly, the
 * accumulators pinned to ymm0-11 (the weights in ymm12-13, the broadcasts
 * in ymm14-15). Compiled from C, GCC 12 kept some of the 12 accumulators
 * and of the six input pointers on the stack across the unrolled lanes
 * (and shuffled others between registers): store-to-load forwards in the
 * accumulators' dependency chains. The pixels' pointers are loaded from
 * xpp into r8-r13 in each block (a GCC asm takes at most 30 operands, the
 * 12 accumulators count twice). Same FMAs per accumulator in the same
 * order as the C body, so the results are bit for bit the same. */
#if defined(__GNUC__)
/* pixel p's input at ADDR broadcast into ymm B, two FMAs */
#define ASM_BCAST_FMA2(ADDR, p, B)                                          \
    "vbroadcastss " ADDR ", %%ymm" #B "\n\t"                                \
    "vfmadd231ps %%ymm12, %%ymm" #B ", %[c0" #p "]\n\t"                     \
    "vfmadd231ps %%ymm13, %%ymm" #B ", %[c1" #p "]\n\t"
/* pixel p (its pointer in r<G>) of lane l */
#define ASM_PIX(l, p, G, B) ASM_BCAST_FMA2("4*" #l "(%%r" #G ",%[off],4)", p, B)
#define ASM_W                                                               \
    "vmovups (%[w]), %%ymm12\n\t"                                           \
    "vmovups 32(%[w]), %%ymm13\n\t"                                         \
    "add %[ws], %[w]\n\t"
#define ASM_LANE5(l) ASM_W ASM_PIX(l, 0, 8, 14) ASM_PIX(l, 1, 9, 15) ASM_PIX(l, 2, 10, 14) \
                     ASM_PIX(l, 3, 11, 15) ASM_PIX(l, 4, 12, 14)
#define ASM_LANE6(l) ASM_LANE5(l) ASM_PIX(l, 5, 13, 15)
#define ASM_LOAD_X5 "mov (%[xs]), %%r8\n\t" "mov 8(%[xs]), %%r9\n\t" "mov 16(%[xs]), %%r10\n\t" \
                    "mov 24(%[xs]), %%r11\n\t" "mov 32(%[xs]), %%r12\n\t"
#define ASM_LOAD_X6 ASM_LOAD_X5 "mov 40(%[xs]), %%r13\n\t"
#define ASM_LANES8(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define ASM_ACC5 [c00] "+x"(c00), [c01] "+x"(c01), [c02] "+x"(c02), [c03] "+x"(c03), [c04] "+x"(c04), \
                 [c10] "+x"(c10), [c11] "+x"(c11), [c12] "+x"(c12), [c13] "+x"(c13), [c14] "+x"(c14), \
                 [w] "+r"(w)
#define ASM_ACC6 ASM_ACC5, [c05] "+x"(c05), [c15] "+x"(c15)
#define ASM_IN [xs] "r"(xpp), [off] "r"(off), [ws] "r"(4 * w_step)
#define ASM_CLOBBER "r8", "r9", "r10", "r11", "r12", "r13", "xmm12", "xmm13", "xmm14", "xmm15", "memory"
/* 3 ymm blocks x 4 pixels (groups of 3 blocks: 24-channel outputs): the
 * weights in ymm12-14, the broadcast in ymm15 */
#define ASM_PIX3(l, p, G)                                                   \
    "vbroadcastss 4*" #l "(%%r" #G ",%[off],4), %%ymm15\n\t"                \
    "vfmadd231ps %%ymm12, %%ymm15, %[c0" #p "]\n\t"                         \
    "vfmadd231ps %%ymm13, %%ymm15, %[c1" #p "]\n\t"                         \
    "vfmadd231ps %%ymm14, %%ymm15, %[c2" #p "]\n\t"
#define ASM_LANE34(l)                                                       \
    "vmovups (%[w]), %%ymm12\n\t"                                           \
    "vmovups 32(%[w]), %%ymm13\n\t"                                         \
    "vmovups 64(%[w]), %%ymm14\n\t"                                         \
    "add %[ws], %[w]\n\t"                                                   \
    ASM_PIX3(l, 0, 8) ASM_PIX3(l, 1, 9) ASM_PIX3(l, 2, 10) ASM_PIX3(l, 3, 11)
#define ASM_LOAD_X4 "mov (%[xs]), %%r8\n\t" "mov 8(%[xs]), %%r9\n\t" "mov 16(%[xs]), %%r10\n\t" \
                    "mov 24(%[xs]), %%r11\n\t"
#define ASM_ACC34 [c00] "+x"(c00), [c01] "+x"(c01), [c02] "+x"(c02), [c03] "+x"(c03),            \
                  [c10] "+x"(c10), [c11] "+x"(c11), [c12] "+x"(c12), [c13] "+x"(c13),            \
                  [c20] "+x"(c20), [c21] "+x"(c21), [c22] "+x"(c22), [c23] "+x"(c23), [w] "+r"(w)
/* (2 x 5-6 on NCHW input, LANES 1, runs a channel's whole window: ASM_WINDOW below) */
#define ASM_PASS ((NV == 2 && R == 1 && (NPIX == 5 || NPIX == 6) && LANES == 8) || \
                  (NV == 3 && R == 1 && NPIX == 4 && (LANES == 8 || LANES == 1)))
#define ASM_LANES                                                                                         \
    if (NV == 2 && NPIX == 6) __asm__(ASM_LOAD_X6 ASM_LANES8(ASM_LANE6) : ASM_ACC6 : ASM_IN : ASM_CLOBBER); \
    if (NV == 2 && NPIX == 5) __asm__(ASM_LOAD_X5 ASM_LANES8(ASM_LANE5) : ASM_ACC5 : ASM_IN : ASM_CLOBBER); \
    if (NV == 3 && LANES == 8) __asm__(ASM_LOAD_X4 ASM_LANES8(ASM_LANE34) : ASM_ACC34 : ASM_IN : ASM_CLOBBER);            \
    if (NV == 3 && LANES == 1) __asm__(ASM_LOAD_X4 ASM_LANE34(0) : ASM_ACC34 : ASM_IN : ASM_CLOBBER);
/* The taps of plain NCHW input (the first layer: one lane per tap, so
 * per-tap blocks would reload the six pixel pointers and run the C loop
 * for every 12 FMAs): ASM_WINDOW runs all KH x KW taps of one input
 * channel, win = {weight step in bytes, floats between taps, KW, floats
 * between rows, KH}; the tap offset in rax, the taps left in the row in
 * rcx, the rows left in rdx, the row's first offset in r14. */
#define ASM_TAP_STEP(P)                                                     \
    "vmovups (%[w]), %%ymm12\n\t"                                           \
    "vmovups 32(%[w]), %%ymm13\n\t"                                         \
    "add (%[win]), %[w]\n\t"                                                \
    ASM_TAP_PIX(0, 8, 14) ASM_TAP_PIX(1, 9, 15) ASM_TAP_PIX(2, 10, 14)      \
    ASM_TAP_PIX(3, 11, 15) ASM_TAP_PIX(4, 12, 14) P                         \
    "add 8(%[win]), %%rax\n\t"                                              \
    "dec %%rcx\n\t"                                                         \
    "jnz 1b\n\t"
#define ASM_TAP_PIX(p, G, B) ASM_BCAST_FMA2("(%%r" #G ",%%rax,4)", p, B)
#define ASM_WINDOW_PASS (NV == 2 && R == 1 && (NPIX == 5 || NPIX == 6) && LANES == 1)
#define ASM_WINDOW(xc, LOADX, P, ACC)                                                                    \
    __asm__ volatile(LOADX "mov %[off], %%r14\n\t" "mov 32(%[win]), %%rdx\n\t" "2:\n\t"                 \
                     "mov %%r14, %%rax\n\t" "mov 16(%[win]), %%rcx\n\t" "1:\n\t" ASM_TAP_STEP(P)       \
                     "add 24(%[win]), %%r14\n\t" "dec %%rdx\n\t" "jnz 2b\n\t"                          \
                     : ACC : [xs] "r"(xpp), [off] "r"(xc), [win] "r"(win)                              \
                     : "rax", "rcx", "rdx", "r14", "cc", ASM_CLOBBER)
#else
#define ASM_PASS 0
#define ASM_LANES
#define ASM_WINDOW_PASS 0
#define ASM_WINDOW(xc, LOADX, P, ACC)
#endif

/* Pixel p's input x_pf floats ahead of this block's (kp->x_pf): past
 * the last block it reads nothing useful, and prefetches never fault. */
#define PF_PIX(p) if ((p) < NPIX) _mm_prefetch((const char *)(x##p + off + x_pf), _MM_HINT_T0);
#define PREFETCH_X                                                                  \
    if (x_pf) { FOR_PIX1(PF_PIX) }

/* One pass over NV ymm blocks of output channels, NPIX pixels. w, bias, y
 * and z point at the pass's first ymm block; a lane's weights are the
 * tile's nob blocks apart: 8 * NV floats when the pass is the whole tile
 * (WHOLE, a constant stride), else 8 * R * nob. 1x1 kernels loop over the
 * channels alone, 16 lanes an iteration (the loop's overhead shows at 8). */
INLINE void pass_body(const onyx_nchwc_kparams *kp, const float *const *xpp, const float *w, const float *bias,
                      float *y, const float *z, const int NV, const int NPIX, const int LANES, const int R,
                      const bool WHOLE) {
    const int64_t y_ob = kp->y_ob, w_step = WHOLE ? 8 * NV : 8 * R * (int64_t)kp->nob;
    FOR_PIX1(DECL_X)
    FOR_ALL(DECL_ACC)
    FOR_ALL(INIT_ACC)
    const char *pf = kp->pf, *const pf_end = kp->pf_end;
    const int64_t x_c = kp->x_c, x_kh = kp->x_kh, x_kw = kp->x_kw, KH = kp->kh, KW = kp->kw;
    if (LANES > 1 && KH == 1 && KW == 1) {   /* (NCHW input: the first layer, KxK) */
        int64_t c = 0, off = 0;
        const int64_t x_pf = kp->x_pf;
        if (LANES == 8)   /* two 8-lane blocks an iteration: the overhead of one per 16 lanes */
            for (; c + 2 <= kp->nc; c += 2) {
                PREFETCH_X
                LANES_STEP
                off += x_c;
                PREFETCH_X
                LANES_STEP
                off += x_c;
            }
        for (; c < kp->nc; c++, off += x_c) {
            PREFETCH_X
            LANES_STEP
        }
    } else if (ASM_WINDOW_PASS) {   /* NCHW input: a channel's whole window per asm block */
        const int64_t win[5] = {4 * w_step, x_kw, KW, x_kh, KH};
        for (int64_t c = 0, xc = 0; c < kp->nc; c++, xc += x_c) {
            if (NPIX == 6) ASM_WINDOW(xc, ASM_LOAD_X6, ASM_TAP_PIX(5, 13, 15), ASM_ACC6);
            else ASM_WINDOW(xc, ASM_LOAD_X5, , ASM_ACC5);
            for (int64_t t = 0; t < KH * KW && pf < pf_end; t++) {
                for (int i = 0; i < PF_LINES; i++) _mm_prefetch(pf + 64 * i, _MM_HINT_T1);
                pf += 64 * PF_LINES;
            }
        }
    } else {
        for (int64_t c = 0, xc = 0; c < kp->nc; c++, xc += x_c)
            for (int64_t kh = 0, xr = xc; kh < KH; kh++, xr += x_kh)
                for (int64_t kw = 0, off = xr; kw < KW; kw++, off += x_kw) { LANES_STEP }
    }
    STORE_ALL
}

typedef void (*pass_fn)(const onyx_nchwc_kparams *kp, const float *const *xp, const float *w, const float *bias,
                        float *y, const float *z);

/* p<blocked lanes or 1>_<R or 0: R = 1, a pass of a wider tile>_<NV>_<NPIX> */
#define INST(L, R, NV, NPIX)                                                                                \
    TARGET static void p##L##_##R##_##NV##_##NPIX(const onyx_nchwc_kparams *kp, const float *const *xp,    \
                                                  const float *w, const float *bias, float *y,             \
                                                  const float *z) {                                        \
        pass_body(kp, xp, w, bias, y, z, NV, NPIX, L, (R) ? (R) : 1, (R) == 1);                            \
    }
#define INST3(L, R, NV) INST(L, R, NV, 1) INST(L, R, NV, 2) INST(L, R, NV, 3)
#define INST4(L, R, NV) INST3(L, R, NV) INST(L, R, NV, 4)
#define INST6(L, R, NV) INST4(L, R, NV) INST(L, R, NV, 5) INST(L, R, NV, 6)
#define INST8(L, R, NV) INST6(L, R, NV) INST(L, R, NV, 7) INST(L, R, NV, 8)
#define INST_B8(L) INST8(L, 1, 1) INST6(L, 1, 2) INST4(L, 1, 3) INST3(L, 1, 4)
#define INST_B8_PAIRS(L) INST6(L, 0, 1) INST6(L, 0, 2)
#define INST_B16(L) INST6(L, 2, 2) INST3(L, 2, 4)
INST_B8(8)
INST_B8(1)
INST_B8_PAIRS(8)
INST_B8_PAIRS(1)
INST_B16(16)
INST_B16(1)

#define P(L, R, NV, N) p##L##_##R##_##NV##_##N
#define ROW3(L, R, NV) P(L, R, NV, 1), P(L, R, NV, 2), P(L, R, NV, 3)
#define ROW4(L, R, NV) ROW3(L, R, NV), P(L, R, NV, 4)
#define ROW6(L, R, NV) ROW4(L, R, NV), P(L, R, NV, 5), P(L, R, NV, 6)
#define ROW8(L, R, NV) ROW6(L, R, NV), P(L, R, NV, 7), P(L, R, NV, 8)
/* [blocked, NCHW][nob or passes' blocks - 1][npix - 1] */
static const pass_fn tiles8[2][4][8] = {
    {{ROW8(8, 1, 1)}, {ROW6(8, 1, 2)}, {ROW4(8, 1, 3)}, {ROW3(8, 1, 4)}},
    {{ROW8(1, 1, 1)}, {ROW6(1, 1, 2)}, {ROW4(1, 1, 3)}, {ROW3(1, 1, 4)}},
};
/* the passes of 2 (and a last 1) blocks x 6 pixels of 4..8 blocks:
 * [blocked, NCHW][blocks - 1][npix - 1] */
static const pass_fn pairs8[2][2][6] = {
    {{ROW6(8, 0, 1)}, {ROW6(8, 0, 2)}},
    {{ROW6(1, 0, 1)}, {ROW6(1, 0, 2)}},
};
static const pass_fn passes16[2][2][6] = {
    {{ROW6(16, 2, 2)}, {ROW3(16, 2, 4)}},
    {{ROW6(1, 2, 2)}, {ROW3(1, 2, 4)}},
};

/* The next tile's lines of Z, which the last chunk adds: the npix + 1
 * pixels (of `bytes`) after this tile's, in each of the nob blocks. An
 * expanding 1x1 with a residual (ResNet's 64 -> 256 on 56x56) does few
 * FMAs per output line, and Z comes from L3 in as many streams as blocks,
 * more than the hardware prefetchers follow: the tile's last loads would
 * wait on it. Issued a tile ahead, the lines arrive while this one runs.
 * With write_y, the next tile's lines of y too, for writing (PREFETCHW,
 * a no-op on CPUs before it): each 8-channel pass stores 6 lines of y that
 * are seldom in cache, and with few FMAs per output (K = 64 on 56x56) the
 * stores filled the store queue, so the next pass's first stores waited
 * (perf annotate's samples sat on them). Zen 3, AVX2, in-process A/B of 40
 * or 150 alternated runs: ResNet-50 0.95-0.97 at 1 thread, 0.96-0.99 at
 * 2; SqueezeNet 0.97-0.98; MobileNetV2 1.00-1.02 (its 1x1 layers of 64-255
 * input channels 1.00-1.03: they do not gain). Inline in the tile (which
 * takes PREFETCHW's target from its declaration below): as a call it was
 * 1.5% of ResNet-50's time. (Prefetches never fault: past the end
 * of a tensor they do nothing. The 16-channel AVX2 tile and the AVX-512
 * one, where the y lines measured no gain, do not ask.) */
#define PF_TARGET __attribute__((target("avx2,fma,prfchw")))
PF_TARGET static inline __attribute__((always_inline)) void
prefetch_next_lines(const onyx_nchwc_kparams *kp, int npix, int64_t bytes, float *y, const float *z, bool write_y) {
    const bool read_z = kp->last && kp->has_z && z;
    if (!read_z && !write_y) return;
    const uintptr_t from = (uintptr_t)npix * (uintptr_t)bytes, to = from + (uintptr_t)(npix + 1) * (uintptr_t)bytes;
    for (int o = 0; o < kp->nob; o++) {
        const uintptr_t step = (uintptr_t)o * (uintptr_t)kp->y_ob * sizeof(float);   /* (z may be NULL) */
        const uintptr_t zb = (uintptr_t)z + step, yb = (uintptr_t)y + step;
        for (uintptr_t b = from; b < to; b += 64) {
            if (read_z) _mm_prefetch((const char *)(zb + b), _MM_HINT_T0);
            if (write_y) __builtin_prefetch((const char *)(yb + b), 1, 3);
        }
    }
}

/* The tiles take PREFETCHW's target from these declarations (their
 * definitions start with `void`: scripts/minimal_build.py finds the tiles
 * by that) so that prefetch_next_lines inlines into them. */
PF_TARGET void onyx_nchwc_tile_avx2_b8(const onyx_nchwc_kparams *kp, const float *const *xp, int npix, float *y,
                                       const float *z);
PF_TARGET void onyx_nchwc_tile_avx2(const onyx_nchwc_kparams *kp, const float *const *xp, int npix, float *y,
                                    const float *z);

void onyx_nchwc_tile_avx2_b8(const onyx_nchwc_kparams *kp, const float *const *xp, int npix, float *y,
                             const float *z) {
    const int nchw = kp->lanes == 1, nob = kp->nob;
    prefetch_next_lines(kp, npix, 32, y, z, true);
    if (nob <= 3 || (nob == 4 && npix <= 3)) {
        tiles8[nchw][nob - 1][npix - 1](kp, xp, kp->w, kp->bias, y, z);
        return;
    }
    /* 4 blocks of up to 6 pixels, 5..8 blocks: passes of 2 blocks (the
     * last of an odd nob: 1), each prefetching its share of kp->pf */
    onyx_nchwc_kparams k2 = *kp;
    const int np = (nob + 1) / 2;
    const size_t pf_bytes = kp->pf && kp->pf < kp->pf_end ? (size_t)(kp->pf_end - kp->pf) : 0;
    for (int o0 = 0, i = 0; o0 < nob; o0 += 2, i++) {
        const int sob = nob - o0 >= 2 ? 2 : 1;
        if (pf_bytes) {
            k2.pf = kp->pf + (pf_bytes * (size_t)i / (size_t)np & ~(size_t)63);
            k2.pf_end = i == np - 1 ? kp->pf_end : kp->pf + (pf_bytes * (size_t)(i + 1) / (size_t)np & ~(size_t)63);
        }
        pairs8[nchw][sob - 1][npix - 1](&k2, xp, kp->w + 8 * o0, kp->bias ? kp->bias + 8 * o0 : NULL,
                                        y + o0 * kp->y_ob, z ? z + o0 * kp->y_ob : NULL);
    }
}

void onyx_nchwc_tile_avx2(const onyx_nchwc_kparams *kp, const float *const *xp, int npix, float *y,
                          const float *z) {
    const int nchw = kp->lanes == 1, nob = kp->nob;
    prefetch_next_lines(kp, npix, 64, y, z, false);
    onyx_nchwc_kparams k2 = *kp;   /* the prefetches of kp->pf in the first pass */
    for (int o0 = 0; o0 < nob; o0 += 2) {
        const int sob = nob - o0 >= 2 ? 2 : 1;
        if (o0 > 0) k2.pf = k2.pf_end = NULL;
        /* the table gives 3 pixels per tile for nob >= 2; a lone block of
         * a wider group runs the same pixels */
        passes16[nchw][sob - 1][npix - 1](&k2, xp, kp->w + 16 * o0, kp->bias ? kp->bias + 16 * o0 : NULL,
                                          y + o0 * kp->y_ob, z ? z + o0 * kp->y_ob : NULL);
    }
}

#endif
