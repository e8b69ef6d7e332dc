/* The CPU dispatch table: every decision that depends on the instruction
 * set is read from here. The CPU's features are detected once; the table of
 * the best instruction set it supports is then in use, unless a lower one
 * is forced (ONYX_ISA=avx512|avx2|generic on x86-64, neon|generic on ARM64,
 * in the environment, the session
 * config entry "session.onyx.cpu_isa", or onyx_cpu_force_isa in tests).
 *
 * A table holds the SGEMM micro-kernel, the blocked-layout block size (0:
 * no fast blocked path, the layout pass leaves the graph alone; 16 channels
 * on AVX-512, one zmm, 8 on AVX2, one ymm) and the direct-convolution tiles
 * of that layout per block size (a graph's nodes record the block they were
 * laid out with, so a graph built under one table runs on another). The vectorised loops written once
 * on GNU vectors and compiled per ISA (NN_MULTIVERSION in nn_math.h,
 * NCHWC_MULTIVERSION in nchwc_impl.h) pick their clone from `isa`.
 *
 * Forcing swaps one pointer atomically, so a kernel sees either the old or
 * the new table; it is process-wide (one CPU, one table), and blocked
 * graphs built under one block size keep running on any table because
 * every blocked kernel has a portable fallback. */
#ifndef ONYX_CPU_PLATFORM_H
#define ONYX_CPU_PLATFORM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

typedef enum onyx_cpu_isa {
    ONYX_CPU_GENERIC = 0,   /* x86-64 baseline (SSE2) or any other target: portable C */
    ONYX_CPU_AVX2 = 1,      /* AVX2 + FMA, 16 ymm registers */
    ONYX_CPU_AVX512 = 2,    /* AVX-512 F, DQ, BW, VL: 32 zmm registers */
    ONYX_CPU_NEON = 3,      /* ARM64 Advanced SIMD: 32 q registers of 4 floats */
} onyx_cpu_isa;

#define ONYX_CPU_ISA_COUNT 4

/* A minimal build for one instruction set (cmake -DONYX_MINIMAL_ISA=avx2,
 * cmake/minimal_build.cmake) defines ONYX_ISA_ONLY to its number: only that
 * ISA's kernels and the portable ones are compiled in, and a CPU without it
 * runs the portable ones. ONYX_CPU_ISA_BUILT(isa): whether `isa`'s kernels
 * are in this build (a constant, in #if too with a number). */
#ifdef ONYX_ISA_ONLY
#define ONYX_CPU_ISA_BUILT(isa) ((isa) == 0 || (isa) == ONYX_ISA_ONLY)
#else
#define ONYX_CPU_ISA_BUILT(isa) 1
#endif

/* Optional instructions within an ISA, detected at run time (on ARM64 from
 * getauxval's HWCAP/HWCAP2): for the integer kernels that can use them. */
enum {
    ONYX_CPU_FEAT_DOTPROD = 1 << 0,   /* ARM64 SDOT/UDOT (asimddp) */
    ONYX_CPU_FEAT_I8MM = 1 << 1,      /* ARM64 SMMLA/USDOT (i8mm) */
};

struct onyx_gemm_isa;
struct onyx_nbits_isa;
struct onyx_nn_isa;
struct onyx_nchwc_kparams;

typedef void (*onyx_cpu_nchwc_tile_fn)(const struct onyx_nchwc_kparams *kp, const float *const *xp, int npix,
                                       float *y, const float *z);

/* The register tile of the blocked direct convolution (and Winograd's
 * products): the function and the most pixels it takes per call for a group
 * of nob = 1..8 output blocks (ONYX_NCHWC_MAX_NOB; 4 at most for blocks
 * of 16 channels). */
typedef struct onyx_cpu_nchwc_tile {
    onyx_cpu_nchwc_tile_fn fn;
    unsigned char pixels[8];
} onyx_cpu_nchwc_tile;

/* The block sizes a table has tiles for: 4, 8 and 16 channels (index
 * onyx_cpu_block_kind). */
#define ONYX_CPU_NCHWC_BLOCK_KINDS 3
static inline int onyx_cpu_block_kind(int block) { return block == 4 ? 0 : block == 8 ? 1 : 2; }

/* When Winograd F(2x2, 3x3) beats the direct tile (measured with
 * `test_nchwc_conv bench wino` per ISA): both channel counts at least
 * min_channels; below full_channels the output needs min_pixels_small
 * pixels, else min_pixels. */
typedef struct onyx_cpu_wino_rule {
    int min_channels, full_channels, min_pixels_small, min_pixels;
} onyx_cpu_wino_rule;

typedef struct onyx_cpu_table {
    onyx_cpu_isa isa;
    const char *name;                   /* "avx512", "avx2", "generic" (what ONYX_ISA takes) */
    const struct onyx_gemm_isa *gemm;   /* SGEMM micro-kernel and its register tile */
    int nchwc_block;                    /* channels per block of the blocked layout; 0: layout pass off */
    /* direct convolution tiles per block kind (4, 8, 16 channels); fn NULL:
     * none of this ISA (onyx_cpu_nchwc_tile_for falls back) */
    onyx_cpu_nchwc_tile nchwc_tiles[ONYX_CPU_NCHWC_BLOCK_KINDS];
    onyx_cpu_wino_rule wino;            /* where the blocked layout's Winograd runs */
    const struct onyx_nbits_isa *nbits; /* MatMulNBits 4/8-bit weight micro-kernels */
    /* hand-written activation/Softmax/normalisation/depthwise kernels
     * (kernels/nn_isa.h); NULL: the portable loops of nn_math.h */
    const struct onyx_nn_isa *nn;
} onyx_cpu_table;

extern _Atomic(const onyx_cpu_table *) onyx_cpu_current;
const onyx_cpu_table *onyx_cpu_init(void);

/* The table in use (detected on the first call). */
static inline const onyx_cpu_table *onyx_cpu(void) {
    const onyx_cpu_table *t = atomic_load_explicit(&onyx_cpu_current, memory_order_acquire);
    return t ? t : onyx_cpu_init();
}

/* Whether the CPU has 8-bit dot products (AVX512-VNNI for the avx512
 * table, AVX-VNNI for avx2), for the int8 kernels of the table in use. */
bool onyx_cpu_has_vnni(onyx_cpu_isa isa);
/* Whether this x86-64 CPU has AVX512-VBMI byte permutes (false elsewhere). */
bool onyx_cpu_has_vbmi(void);
/* The best instruction set of this CPU. */
onyx_cpu_isa onyx_cpu_detected(void);
/* Whether this CPU runs the kernels of `isa` (generic: always; the x86 ones
 * only on x86-64, neon only on ARM64). */
bool onyx_cpu_supports(onyx_cpu_isa isa);
/* ONYX_CPU_FEAT_* bits of this CPU, and their names ("dotprod i8mm", "" for none). */
unsigned onyx_cpu_features(void);
const char *onyx_cpu_feature_names(void);
/* The ISA of a name ("avx512" or "avx512f", "avx2", "neon", "generic"); false for
 * an unknown name. */
bool onyx_cpu_isa_parse(const char *name, onyx_cpu_isa *out);
const char *onyx_cpu_isa_name(onyx_cpu_isa isa);
/* Use the table of `name`. False (and no change) for an unknown name or an
 * ISA this CPU lacks. Kernels already running finish on the old table. */
bool onyx_cpu_force_isa(const char *name);
/* The integer GEMM micro-kernel (gemm/igemm.h) of the table in use: on the
 * avx512 table AMX tiles where the CPU and OS allow them, else VPDPBUSD on
 * zmm where the CPU has AVX512-VNNI, on the avx2
 * table VPDPBUSD on ymm where it has AVX-VNNI, else VPMADDUBSW (AVX2);
 * portable C on the generic table. */
struct onyx_igemm_isa;
const struct onyx_igemm_isa *onyx_cpu_igemm(void);
/* Every integer GEMM path this CPU can run, best first (tests force each). */
const struct onyx_igemm_isa *const *onyx_cpu_igemm_paths(size_t *count);
/* CPU extensions named in ONYX_CPU_DISABLE (comma-separated: "amx",
 * "avx512bf16") are treated as absent, so a CPU with them runs the paths of
 * CPUs without (AMX off: what AMD Zen 4 runs). Other names are ignored
 * (reported on stderr when bf16 fast-math is first checked). */
bool onyx_cpu_disabled(const char *feature);
/* Why the table in use is what it is: "detected", "ONYX_ISA", "forced". */
const char *onyx_cpu_isa_source(void);

/* The block size the layout pass uses: the table's, unless another was
 * forced (ONYX_NCHWC_BLOCK=4|8|16 in the environment, or
 * onyx_cpu_force_nchwc_block for tests and benchmarks); 0 where the table
 * has no fast blocked path. NEON: 0 unless forced (the layout is opt-in
 * there until it is timed on ARM64 hardware). */
int onyx_cpu_nchwc_block(void);
/* Force blocks of 4, 8 or 16 channels; 0 returns to the table's. False
 * (and no change) for another value. */
bool onyx_cpu_force_nchwc_block(int block);
/* Whether int8 weights (with uint8 A) take the exact int16 step of the
 * AVX2 integer GEMM instead of ONNX Runtime's saturating U8S8 one
 * (igemm_avx2.c): ONYX_U8S8=exact in the environment (read once; "" or
 * "saturate" keep the default), or onyx_cpu_force_u8s8_exact for tests
 * (1 exact, 0 saturating, -1 back to the environment). Read when B is
 * packed (onyx_igemm_b.s8_weights). */
bool onyx_cpu_u8s8_exact(void);
void onyx_cpu_force_u8s8_exact(int exact);
/* The fastest tile for blocks of `block` channels on the table in use: its
 * own, else the first lower ISA's that has one, else the portable tile. */
const onyx_cpu_nchwc_tile *onyx_cpu_nchwc_tile_for(int block);

#endif
