/* Internals shared by the blocked-layout reorder, pool and depthwise
 * kernels (nchwc_reorder.c, nchwc_pool.c, nchwc_depthwise.c). The contract
 * with the rest of the provider is nchwc.h; this header adds the ISA
 * dispatch (from the CPU table, platform.h), the reorder entry points used by the
 * op table in nchwc_pool.c, and the 16-lane vector helpers.
 *
 * One pixel of a channel block is 16 or 8 floats: one AVX-512 or AVX2
 * register (blocks of 4 run on quarters everywhere). The hot
 * loops are written once on GNU vector types and compiled three times
 * (NCHWC_MULTIVERSION): with target("avx512f") on 16-float vectors, one
 * zmm register each, with target("avx2,fma") on 8-float halves (ymm), and
 * for the baseline ISA (the portable fallback) on 4-float quarters. */
#ifndef ONYX_CPU_NCHWC_IMPL_H
#define ONYX_CPU_NCHWC_IMPL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "providers/cpu/gemm/gemm.h"
#include "providers/cpu/kernel.h"
#include "providers/cpu/platform.h"

/* ---- reorder ops (nchwc_reorder.c), listed in nchwc_pool.c's table; their
 * rules in ir/schemas/nchwc_pool.c ---- */

onyx_status *onyx_nchwc_reorder_input_compute(onyx_kernel_ctx *ctx);
onyx_status *onyx_nchwc_reorder_output_compute(onyx_kernel_ctx *ctx);

/* ---- lane vectors ---- */

/* One pixel of a 16-channel block (16 lanes), a half (8) and a quarter of
 * one (4 lanes): the AVX-512 variants work on whole pixels, the AVX2 ones
 * on halves (a whole pixel of an 8-channel block), the baseline ones on
 * quarters, the width of its 16-byte registers (a 64-byte vector would live on the
 * stack there, and its comparisons would go lane by lane). The hot inner
 * functions are macros instantiated for both types. */
typedef float nchwc_v16 __attribute__((vector_size(64), aligned(4)));
typedef int32_t nchwc_v16i __attribute__((vector_size(64), aligned(4)));
typedef float nchwc_v8 __attribute__((vector_size(32), aligned(4)));
typedef int32_t nchwc_v8i __attribute__((vector_size(32), aligned(4)));
typedef float nchwc_v4 __attribute__((vector_size(16), aligned(4)));
typedef int32_t nchwc_v4i __attribute__((vector_size(16), aligned(4)));

#define NCHWC_INLINE static inline __attribute__((always_inline))

/* Helpers on a vector type VT (nchwc_v16, nchwc_v8 or nchwc_v4). They are macros: a
 * 64-byte vector passed by value changes the ABI without AVX-512, which
 * gcc warns about and clang rejects. */
#define VLOAD(VT, p) ({ VT v_l_; memcpy(&v_l_, (p), sizeof v_l_); v_l_; })
#define VSTORE(VT, p, v)                  \
    do {                                  \
        VT v_s_ = (v);                    \
        memcpy((p), &v_s_, sizeof v_s_);  \
    } while (0)
#define VSET1(VT, s) ((VT){0} + (float)(s))
/* lanes where p < q take r, the others s (NaN compares false) */
#define VLT_SEL(VT, p, q, r, s)                                             \
    ({                                                                      \
        VT##i v_m_ = (p) < (q);                                             \
        (VT)((v_m_ & (VT##i)(r)) | (~v_m_ & (VT##i)(s)));                   \
    })
/* max that keeps the accumulator when x is NaN (as a compare-and-take loop) */
#define VMAX(VT, acc, x) ({ VT v_a_ = (acc), v_x_ = (x); VLT_SEL(VT, v_a_, v_x_, v_x_, v_a_); })

/* The fused activation (an onyx_gemm_activation kind). NaN stays NaN for
 * every kind, as in the GEMM epilogue. */
#define VACT(VT, v, act)                                                    \
    ({                                                                      \
        VT v_v_ = (v), v_0_ = VSET1(VT, 0.0f);                              \
        switch ((act)->kind) {                                              \
        case ONYX_GEMM_ACT_RELU: v_v_ = VLT_SEL(VT, v_v_, v_0_, v_0_, v_v_); break; \
        case ONYX_GEMM_ACT_CLIP: {                                          \
            VT v_lo_ = VSET1(VT, (act)->a), v_hi_ = VSET1(VT, (act)->b);    \
            v_v_ = VLT_SEL(VT, v_v_, v_lo_, v_lo_, v_v_);                   \
            v_v_ = VLT_SEL(VT, v_hi_, v_v_, v_hi_, v_v_);                   \
            break;                                                          \
        }                                                                   \
        case ONYX_GEMM_ACT_LEAKY_RELU:                                      \
            v_v_ = VLT_SEL(VT, v_v_, v_0_, v_v_ * (act)->a, v_v_);          \
            break;                                                          \
        default: break;                                                     \
        }                                                                   \
        v_v_;                                                               \
    })

/* Pixels (output vectors) a kernel keeps in flight: 8 accumulators plus
 * the inputs and weights they share fit the 32 zmm (or 16 xmm) registers. */
#define NCHWC_NB 8

/* NCHWC_MULTIVERSION(name, (params), (args), { body }): a static void
 * function compiled for AVX-512F, for AVX2 + FMA and for the baseline, and
 * a dispatcher `name` that follows the CPU table's ISA (platform.h). In the
 * body the constant int nchwc_vl says how many lanes a register holds (16,
 * 8, 4): pass it down and cover a pixel's blk lanes with NCHWC_LANES. Other
 * targets get one plain definition. */
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define NCHWC_HAVE_AVX512_BUILD 1
#define NCHWC_MULTIVERSION(name, PARAMS, ARGS, ...)                         \
    __attribute__((target("avx512f"))) static void name##_avx512 PARAMS {  \
        __attribute__((unused)) const int nchwc_vl = 16;                   \
        __VA_ARGS__                                                         \
    }                                                                       \
    __attribute__((target("avx2,fma"))) static void name##_avx2 PARAMS {   \
        __attribute__((unused)) const int nchwc_vl = 8;                    \
        __VA_ARGS__                                                         \
    }                                                                       \
    static void name##_base PARAMS {                                        \
        __attribute__((unused)) const int nchwc_vl = 4;                    \
        __VA_ARGS__                                                         \
    }                                                                       \
    static void name PARAMS {                                               \
        onyx_cpu_isa isa_ = onyx_cpu()->isa;                                \
        if (ONYX_CPU_ISA_BUILT(2) && isa_ == ONYX_CPU_AVX512) name##_avx512 ARGS; \
        else if (ONYX_CPU_ISA_BUILT(1) && isa_ == ONYX_CPU_AVX2) name##_avx2 ARGS; \
        else name##_base ARGS;                                              \
    }
/* NCHWC_MULTIVERSION_BLOCKS(name, (params), (args), blk, BODY): the same
 * for a body that depends on the block size blk (an expression of the
 * params, 4, 8 or 16): BODY(B) is a macro calling an always-inline body
 * with B the block as a constant, so each clone gets straight-line code
 * for the blocks it runs: AVX-512 for 16, AVX2 for 16 and 8 (blocks of
 * 8 also on AVX-512 CPUs: an AVX2 ymm is a whole pixel), the baseline
 * (4-lane quarters, blk at run time) for everything else, blocks of 4
 * included. Three clones of one body each would triple the code. */
#define NCHWC_MULTIVERSION_BLOCKS(name, PARAMS, ARGS, BLK, BODY)            \
    __attribute__((target("avx512f"))) static void name##_avx512 PARAMS {  \
        __attribute__((unused)) const int nchwc_vl = 16;                   \
        BODY(16);                                                           \
    }                                                                       \
    __attribute__((target("avx2,fma"))) static void name##_avx2 PARAMS {   \
        __attribute__((unused)) const int nchwc_vl = 8;                    \
        if ((BLK) == 16) BODY(16);                                          \
        else BODY(8);                                                       \
    }                                                                       \
    static void name##_base PARAMS {                                        \
        __attribute__((unused)) const int nchwc_vl = 4;                    \
        BODY(BLK);                                                          \
    }                                                                       \
    static void name PARAMS {                                               \
        onyx_cpu_isa isa_ = onyx_cpu()->isa;                                \
        const int blk_ = (int)(BLK);                                        \
        if (ONYX_CPU_ISA_BUILT(2) && isa_ == ONYX_CPU_AVX512 && blk_ == 16) \
            name##_avx512 ARGS;                                             \
        else if (ONYX_CPU_ISA_BUILT(1) && isa_ >= ONYX_CPU_AVX2 &&          \
                 (blk_ == 16 || blk_ == 8))                                 \
            name##_avx2 ARGS;                                               \
        else name##_base ARGS;                                              \
    }
#else
#define NCHWC_HAVE_AVX512_BUILD 0
#define NCHWC_MULTIVERSION(name, PARAMS, ARGS, ...)                         \
    static void name PARAMS {                                               \
        __attribute__((unused)) const int nchwc_vl = 4;                    \
        __VA_ARGS__                                                         \
    }
#define NCHWC_MULTIVERSION_BLOCKS(name, PARAMS, ARGS, BLK, BODY)            \
    static void name PARAMS {                                               \
        __attribute__((unused)) const int nchwc_vl = 4;                    \
        BODY(BLK);                                                          \
    }
#endif

/* CALL(VT, lane) for the vectors of at most vl lanes that cover a pixel's
 * blk lanes (4, 8 or 16): one nchwc_v16 for 16 on AVX-512, nchwc_v8
 * halves for 16 on AVX2 and for 8 on both, nchwc_v4 quarters for 4 and on
 * the baseline. */
#define NCHWC_LANES(vl, blk, CALL)                                                     \
    do {                                                                               \
        if ((vl) == 16 && (blk) == 16) {                                               \
            CALL(nchwc_v16, 0);                                                        \
        } else if ((vl) >= 8 && (blk) % 8 == 0) {                                      \
            for (int nchwc_h_ = 0; nchwc_h_ < (blk); nchwc_h_ += 8)                    \
                CALL(nchwc_v8, nchwc_h_);                                              \
        } else {                                                                       \
            for (int nchwc_q_ = 0; nchwc_q_ < (blk); nchwc_q_ += 4)                    \
                CALL(nchwc_v4, nchwc_q_);                                              \
        }                                                                              \
    } while (0)

/* Chunk of rows/pixels per parallel task: at least this many floats
 * written, so a task outweighs the hand-off. */
#define NCHWC_TASK_FLOATS 16384

#endif
