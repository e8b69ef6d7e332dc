/* The CPU dispatch table (platform.h): feature detection and the tables
 * (generic everywhere; AVX2 and AVX-512 on x86-64, NEON on ARM64). */
#include "providers/cpu/platform.h"

#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "providers/cpu/gemm/gemm_kernel.h"
#include "providers/cpu/gemm/igemm.h"
#include "providers/cpu/kernels/contrib/nbits.h"
#include "providers/cpu/kernels/nchwc/nchwc_conv.h"
#include "providers/cpu/kernels/nn_isa.h"

_Atomic(const onyx_cpu_table *) onyx_cpu_current;

/* The baseline table's SGEMM: portable C, or on WebAssembly the SIMD128
 * kernel (SIMD128 is a build flag there, not a run-time choice). */
#ifdef ONYX_GEMM_WASM_SIMD
#define BASELINE_GEMM onyx_gemm_isa_wasm_simd
#else
#define BASELINE_GEMM onyx_gemm_isa_generic
#endif

#ifndef ONYX_NCHWC_GENERIC_TILE  /* NULL in a minimal build without the blocked layout */
#define ONYX_NCHWC_GENERIC_TILE onyx_nchwc_tile_generic
#endif
#define GENERIC_TILE {ONYX_NCHWC_GENERIC_TILE, {8, 8, 8, 6, 4, 4, 4, 4}}

static const onyx_cpu_table tables[ONYX_CPU_ISA_COUNT] = {
    /* the portable tile takes any shape; the layout pass stays off */
    [ONYX_CPU_GENERIC] = {ONYX_CPU_GENERIC, "generic", &BASELINE_GEMM, 0,
                          {GENERIC_TILE, GENERIC_TILE, GENERIC_TILE}, {16, 32, 100, 9},
                          &onyx_nbits_isa_generic},
#if defined(ONYX_GEMM_X86) && ONYX_CPU_ISA_BUILT(1)
    /* 8-channel blocks: one ymm per output block, 12 accumulators of the 16
     * ymm (1 x 8, 2 x 6, 3 x 4 blocks x pixels); groups of 4 to 8 blocks
     * run as passes of 2 blocks x 6 pixels (the weights stream from L2 at
     * half the rate of 4 x 3, nchwc_conv_avx2.c). The 16-channel tile (two ymm
     * per block, 2 x 2 x 3) runs graphs laid out with 16. The
     * direct tile runs near the FMA peak, so Winograd wins only from 128
     * channels and 6x6 outputs (1.1-1.35x there, 0.8x at 64 channels) */
    [ONYX_CPU_AVX2] = {ONYX_CPU_AVX2, "avx2", &onyx_gemm_isa_avx2, 8,
                       {{NULL, {0}}, {onyx_nchwc_tile_avx2_b8, {8, 6, 4, 6, 6, 6, 6, 6}}, {onyx_nchwc_tile_avx2, {6, 3, 3, 3}}},
                       {128, 128, 36, 36}, &onyx_nbits_isa_avx2},
#endif
#if defined(ONYX_GEMM_X86) && ONYX_CPU_ISA_BUILT(2)
    /* 24 accumulators of 32 zmm at most (4 x 6, 3 x 8); 8-channel blocks
     * run the AVX2 tile */
    [ONYX_CPU_AVX512] = {ONYX_CPU_AVX512, "avx512", &onyx_gemm_isa_avx512, 16,
                         {{NULL, {0}}, {NULL, {0}}, {onyx_nchwc_tile_avx512, {8, 8, 8, 6}}}, {16, 32, 100, 9},
                         &onyx_nbits_isa_avx512},
#endif
#ifdef ONYX_GEMM_NEON
    /* the 8 x 12 SGEMM tile (24 of the 32 q registers), and the blocked
     * layout's NEON tile for blocks of 4 (one q register a block; up to 24
     * accumulators, nchwc_conv_neon.c). The layout pass stays off by
     * default (block 0): the blocked path is not yet measured against
     * im2col + NEON SGEMM on ARM64 hardware; graphs laid out with blocks of
     * 4 elsewhere, and the unit tests, run it */
    [ONYX_CPU_NEON] = {ONYX_CPU_NEON, "neon", &onyx_gemm_isa_neon, 0,
                       {{onyx_nchwc_tile_neon, {8, 8, 6, 5, 4, 3, 3, 2}}, GENERIC_TILE, GENERIC_TILE},
                       {16, 32, 100, 9},
                       &onyx_nbits_isa_generic, &onyx_nn_isa_neon},
#endif
};

static const char *const names[ONYX_CPU_ISA_COUNT] = {"generic", "avx2", "avx512", "neon"};

static _Atomic int detected = -1;
static _Atomic unsigned features;
static _Atomic int forced_block = -1;   /* -1: not read from the environment yet; 0: the table's */
static _Atomic int forced_u8s8_exact = -1;   /* -1: not read from the environment yet */
static _Atomic(const char *) source = "detected";

#if defined(ONYX_GEMM_NEON) && defined(__linux__)
/* Linux's HWCAP bits (asm/hwcap.h), spelled out so older headers build. */
#define HWCAP_BIT_ASIMD (1UL << 1)
#define HWCAP_BIT_ASIMDDP (1UL << 20)
#define HWCAP2_BIT_I8MM (1UL << 13)
#endif

#ifdef ONYX_GEMM_X86
#include <cpuid.h>
/* The x86 ISA from CPUID and the register state the OS saves (XGETBV), read
 * directly rather than through __builtin_cpu_supports, whose libgcc
 * feature table (about 9 KB) would be the largest thing in a minimal build.
 * The same checks: AVX2 and FMA with ymm state; the kernels use AVX-512 F
 * (and gcc's 512-bit loops DQ, BW, VL: every AVX-512 server and client core
 * has the four) with opmask and zmm state. */
static int detect_x86(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return ONYX_CPU_GENERIC;
    const unsigned fma = 1u << 12, osxsave = 1u << 27, avx = 1u << 28;
    if ((c & (fma | osxsave | avx)) != (fma | osxsave | avx)) return ONYX_CPU_GENERIC;
    unsigned xlo, xhi;
    __asm__("xgetbv" : "=a"(xlo), "=d"(xhi) : "c"(0));
    (void)xhi;
    if ((xlo & 0x6) != 0x6) return ONYX_CPU_GENERIC; /* xmm and ymm state */
    if (__get_cpuid_max(0, NULL) < 7) return ONYX_CPU_GENERIC;
    __cpuid_count(7, 0, a, b, c, d);
    if (!(b & (1u << 5))) return ONYX_CPU_GENERIC; /* AVX2 */
    const unsigned f = 1u << 16, dq = 1u << 17, bw = 1u << 30, vl = 1u << 31;
    if ((b & (f | dq | bw | vl)) == (f | dq | bw | vl) && (xlo & 0xe0) == 0xe0) /* opmask, zmm state */
        return ONYX_CPU_AVX512;
    return ONYX_CPU_AVX2;
}
#endif

/* The best ISA and the optional features, read once. */
static int detect(unsigned *feat) {
    int v = ONYX_CPU_GENERIC;
    *feat = 0;
#ifdef ONYX_GEMM_X86
    v = detect_x86();
#ifdef ONYX_ISA_ONLY
    v = v >= ONYX_ISA_ONLY ? ONYX_ISA_ONLY : ONYX_CPU_GENERIC;   /* the x86 ISAs nest */
#endif
#elif defined(ONYX_GEMM_NEON)
#ifdef __linux__
    unsigned long hw = getauxval(AT_HWCAP), hw2 = getauxval(AT_HWCAP2);
    if (hw & HWCAP_BIT_ASIMD) v = ONYX_CPU_NEON;
    if (hw & HWCAP_BIT_ASIMDDP) *feat |= ONYX_CPU_FEAT_DOTPROD;
    if (hw2 & HWCAP2_BIT_I8MM) *feat |= ONYX_CPU_FEAT_I8MM;
#else
    v = ONYX_CPU_NEON;   /* Advanced SIMD is part of every ARMv8-A core */
#endif
#endif
    return v;
}

onyx_cpu_isa onyx_cpu_detected(void) {
    int v = atomic_load_explicit(&detected, memory_order_acquire);
    if (v >= 0) return (onyx_cpu_isa)v;
    unsigned feat;
    v = detect(&feat);
    atomic_store_explicit(&features, feat, memory_order_relaxed);
    atomic_store_explicit(&detected, v, memory_order_release);
    return (onyx_cpu_isa)v;
}

bool onyx_cpu_supports(onyx_cpu_isa isa) {
    onyx_cpu_isa best = onyx_cpu_detected();
    if (isa == ONYX_CPU_GENERIC || isa == best) return true;
    if (!ONYX_CPU_ISA_BUILT(isa)) return false;
    /* the x86 ISAs nest (AVX-512 cores have AVX2); NEON stands alone */
    return best == ONYX_CPU_AVX512 && isa == ONYX_CPU_AVX2;
}

unsigned onyx_cpu_features(void) {
    (void)onyx_cpu_detected();
    return atomic_load_explicit(&features, memory_order_relaxed);
}

const char *onyx_cpu_feature_names(void) {
    static const char *const combos[4] = {"", "dotprod", "i8mm", "dotprod i8mm"};
    return combos[onyx_cpu_features() & 3];
}

bool onyx_cpu_isa_parse(const char *name, onyx_cpu_isa *out) {
    if (!name) return false;
    for (int i = 0; i < ONYX_CPU_ISA_COUNT; i++)
        if (!strcmp(name, names[i])) {
            *out = (onyx_cpu_isa)i;
            return true;
        }
    if (!strcmp(name, "avx512f")) {   /* the SGEMM kernel's old name */
        *out = ONYX_CPU_AVX512;
        return true;
    }
    return false;
}

const char *onyx_cpu_isa_name(onyx_cpu_isa isa) {
    return (unsigned)isa < ONYX_CPU_ISA_COUNT ? names[isa] : "unknown";
}

/* A whole entry of ONYX_CPU_DISABLE's comma list (read on each call: the
 * callers cache what they derive from it; sgemm_bf16.c reports unknown
 * names; kept small for minimal builds). */
bool onyx_cpu_disabled(const char *feature) {
    const size_t n = strlen(feature);
    for (const char *p = getenv("ONYX_CPU_DISABLE"); p && *p; p += *p == ',') {
        if (!strncmp(p, feature, n) && (p[n] == ',' || !p[n])) return true;
        p += strcspn(p, ",");
    }
    return false;
}

const onyx_cpu_table *onyx_cpu_init(void) {
    onyx_cpu_isa isa = onyx_cpu_detected();
    const char *env = getenv("ONYX_ISA");
    const char *why = "detected";
    if (env && *env) {
        onyx_cpu_isa want;
        if (!onyx_cpu_isa_parse(env, &want))
            fprintf(stderr, "onyx: ONYX_ISA=%s is not one of avx512, avx2, neon, generic; using %s\n", env,
                    names[isa]);
        else if (!onyx_cpu_supports(want))
            fprintf(stderr, "onyx: ONYX_ISA=%s: this CPU lacks it; using %s\n", env, names[isa]);
        else {
            isa = want;
            why = "ONYX_ISA";
        }
    }
    const onyx_cpu_table *t = &tables[isa];
    const onyx_cpu_table *expected = NULL;
    /* a racing first call computes the same table */
    if (atomic_compare_exchange_strong(&onyx_cpu_current, &expected, t)) atomic_store(&source, why);
    return atomic_load(&onyx_cpu_current);
}

bool onyx_cpu_force_isa(const char *name) {
    onyx_cpu_isa isa;
    if (!onyx_cpu_isa_parse(name, &isa) || !onyx_cpu_supports(isa)) return false;
    atomic_store_explicit(&onyx_cpu_current, &tables[isa], memory_order_release);
    atomic_store(&source, "forced");
    return true;
}

/* VNNI feature bits (CPUID leaf 7): clang's __builtin_cpu_supports lacks
 * "avxvnni". The OS state for ymm/zmm is implied by the table's ISA. */
#ifdef ONYX_GEMM_X86
static bool cpu_has_vnni(bool zmm) {
    unsigned a, b, c, d;
    if (__get_cpuid_max(0, NULL) < 7) return false;
    if (zmm) return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (c & (1u << 11)); /* AVX512_VNNI */
    return __get_cpuid_count(7, 1, &a, &b, &c, &d) && (a & (1u << 4));           /* AVX_VNNI */
}

/* AVX512_VBMI (CPUID 7.0 ECX bit 1: byte permutes; Ice Lake, Sapphire
 * Rapids, Zen 4, not Skylake-X) */
static bool cpu_has_vbmi(void) {
    unsigned a, b, c, d;
    return __get_cpuid_max(0, NULL) >= 7 && __get_cpuid_count(7, 0, &a, &b, &c, &d) && (c & (1u << 1));
}

/* AMX-TILE and AMX-INT8 (CPUID 7.0 EDX bits 24, 25), and Linux's permission
 * to use the tile data state (arch_prctl ARCH_REQ_XCOMP_PERM, once per
 * process; refused on kernels before 5.16 or where the OS disables it). */
#if defined(__x86_64__) && defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
static bool cpu_has_amx(void) {
    unsigned a, b, c, d;
    if (onyx_cpu_disabled("amx") || __get_cpuid_max(0, NULL) < 7 || !__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
    if (!(d & (1u << 24)) || !(d & (1u << 25))) return false;
    return syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XFEATURE_XTILEDATA */) == 0;
}
#else
static bool cpu_has_amx(void) { return false; }
#endif
#endif

/* bit 0: AVX512-VNNI, bit 1: AVX-VNNI, bit 2: AMX-INT8 (usable), bit 3:
 * AVX512-VBMI. Read once: CPUID traps to the hypervisor in a VM (tens of
 * microseconds), so kernels must not ask per call. */
static int cpu_int8_features(void) {
    static _Atomic int features = -1;
    int v = atomic_load_explicit(&features, memory_order_relaxed);
#ifdef ONYX_GEMM_X86
    if (v < 0) {
        v = (cpu_has_vnni(true) ? 1 : 0) | (cpu_has_vnni(false) ? 2 : 0);
        if ((v & 1) && cpu_has_amx()) v |= 4;
        if (cpu_has_vbmi()) v |= 8;
        atomic_store_explicit(&features, v, memory_order_relaxed);
    }
#endif
    return v < 0 ? 0 : v;
}

bool onyx_cpu_has_vnni(onyx_cpu_isa isa) {
#ifdef ONYX_GEMM_X86
    if (isa == ONYX_CPU_AVX512) return cpu_int8_features() & 1;
    if (isa == ONYX_CPU_AVX2) return cpu_int8_features() & 2;
#endif
    (void)isa;
    return false;
}

bool onyx_cpu_has_vbmi(void) { return cpu_int8_features() & 8; }

const struct onyx_igemm_isa *onyx_cpu_igemm(void) {
#ifdef ONYX_GEMM_X86
    int v = cpu_int8_features();
    switch (onyx_cpu()->isa) {
    case ONYX_CPU_AVX512:
#if defined(__x86_64__)
        if (v & 4) return &onyx_igemm_isa_amx;
#endif
        if (v & 1) return &onyx_igemm_isa_avx512vnni;
        return (v & 2) ? &onyx_igemm_isa_avxvnni : &onyx_igemm_isa_avx2;
    case ONYX_CPU_AVX2: return (v & 2) ? &onyx_igemm_isa_avxvnni : &onyx_igemm_isa_avx2;
    default: break;
    }
#endif
#if defined(ONYX_GEMM_NEON) && defined(__aarch64__)
    if (onyx_cpu()->isa == ONYX_CPU_NEON && (onyx_cpu_features() & ONYX_CPU_FEAT_DOTPROD))
        return &onyx_igemm_isa_neon_dot;
#endif
    return &onyx_igemm_isa_generic;
}

const struct onyx_igemm_isa *const *onyx_cpu_igemm_paths(size_t *count) {
    static const struct onyx_igemm_isa *paths[5];
    size_t n = 0;
#ifdef ONYX_GEMM_X86
    onyx_cpu_isa isa = onyx_cpu_detected();
    int v = cpu_int8_features();
#if defined(__x86_64__)
    if (isa >= ONYX_CPU_AVX512 && (v & 4)) paths[n++] = &onyx_igemm_isa_amx;
#endif
    if (isa >= ONYX_CPU_AVX512 && (v & 1)) paths[n++] = &onyx_igemm_isa_avx512vnni;
    if (isa >= ONYX_CPU_AVX2 && (v & 2)) paths[n++] = &onyx_igemm_isa_avxvnni;
    if (isa >= ONYX_CPU_AVX2) paths[n++] = &onyx_igemm_isa_avx2;
#endif
#if defined(ONYX_GEMM_NEON) && defined(__aarch64__)
    if (onyx_cpu_detected() == ONYX_CPU_NEON && (onyx_cpu_features() & ONYX_CPU_FEAT_DOTPROD))
        paths[n++] = &onyx_igemm_isa_neon_dot;
#endif
    paths[n++] = &onyx_igemm_isa_generic;
    *count = n;
    return paths;
}

const char *onyx_cpu_isa_source(void) {
    (void)onyx_cpu();
    return atomic_load(&source);
}

bool onyx_cpu_force_nchwc_block(int block) {
    if (block != 0 && block != 4 && block != 8 && block != 16) return false;
    atomic_store(&forced_block, block);
    return true;
}

int onyx_cpu_nchwc_block(void) {
    int f = atomic_load(&forced_block);
    if (f < 0) {
        const char *env = getenv("ONYX_NCHWC_BLOCK");
        f = 0;
        if (env && *env && !onyx_cpu_force_nchwc_block(atoi(env)))
            fprintf(stderr, "onyx: ONYX_NCHWC_BLOCK=%s is not one of 4, 8, 16; using the CPU's\n", env);
        else if (env && *env)
            f = atoi(env);
        int expected = -1;
        atomic_compare_exchange_strong(&forced_block, &expected, f);
        f = atomic_load(&forced_block);
    }
    const onyx_cpu_table *t = onyx_cpu();
    /* NEON's blocked kernels are tested but not timed on ARM64 hardware:
     * the layout is off there unless forced (an opt-in, as ONNX Runtime's
     * onnxruntime_USE_ARM_NEON_NCHWC build option); elsewhere a forced
     * block applies only where the table has a fast blocked path */
    if (t->isa == ONYX_CPU_NEON) return f;
    return t->nchwc_block && f ? f : t->nchwc_block;
}

void onyx_cpu_force_u8s8_exact(int exact) { atomic_store(&forced_u8s8_exact, exact < 0 ? -1 : exact != 0); }

bool onyx_cpu_u8s8_exact(void) {
    int f = atomic_load(&forced_u8s8_exact);
    if (f < 0) {
        const char *env = getenv("ONYX_U8S8");
        f = env && !strcmp(env, "exact");
        if (env && *env && !f && strcmp(env, "saturate"))
            fprintf(stderr, "onyx: ONYX_U8S8=%s is not one of exact, saturate; using saturate\n", env);
        int expected = -1;
        atomic_compare_exchange_strong(&forced_u8s8_exact, &expected, f);
        f = atomic_load(&forced_u8s8_exact);
    }
    return f == 1;
}

const onyx_cpu_nchwc_tile *onyx_cpu_nchwc_tile_for(int block) {
    const int k = onyx_cpu_block_kind(block);
    for (int isa = (int)onyx_cpu()->isa; isa > ONYX_CPU_GENERIC; isa--)
        if (tables[isa].nchwc_tiles[k].fn) return &tables[isa].nchwc_tiles[k];
    return &tables[ONYX_CPU_GENERIC].nchwc_tiles[k];
}
