/* Extra element conversions next to core/dtype.h (implemented in
 * core/dtype.c): direct rounding from double (no double rounding through
 * float), E8M0 rounding modes, and float->integer conversions that are
 * defined for every input. Used by the Cast and elementwise kernels. */
#ifndef ONYX_CORE_DTYPE_EXT_H
#define ONYX_CORE_DTYPE_EXT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "core/dtype.h"

static inline uint32_t onyx_f32_as_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float onyx_bits_as_f32(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* c ? a : b as mask arithmetic: gcc keeps a ?: next to float operations as
 * a branch, which stops vectorisation. */
static inline uint32_t onyx_select_u32(int c, uint32_t a, uint32_t b) {
    uint32_t m = (uint32_t)0 - (uint32_t)(c != 0);
    return (a & m) | (b & ~m);
}

/* float16 <-> float32, exact and branch-free (selects, no jumps) so loops
 * over them vectorise; onyx_f16_to_f32/onyx_f32_to_f16 are these. */
static inline float onyx_f16_to_f32_inline(uint16_t h) {
    uint32_t em = (uint32_t)(h & 0x7fff) << 13; /* exponent and mantissa, float-aligned */
    uint32_t exp = em & 0x0f800000;
    uint32_t normal = em + (112u << 23);         /* rebias 15 -> 127 */
    uint32_t infnan = em + (224u << 23);         /* exponent 31 -> 255, payload kept */
    /* zero/subnormal: m * 2^-24 == (1.m with exponent -14) - 2^-14, exact */
    uint32_t sub = onyx_f32_as_bits(onyx_bits_as_f32(em + (113u << 23)) - 0x1p-14f);
    uint32_t r = onyx_select_u32(exp == 0x0f800000, infnan, normal);
    r = onyx_select_u32(exp == 0, sub, r);
    return onyx_bits_as_f32(r | ((uint32_t)(h & 0x8000) << 16));
}

/* Round to nearest even. Subnormal results come from one float addition
 * that aligns the 10 mantissa bits at the bottom of a float (the FPU
 * rounds); normal ones from the usual add-and-truncate; NaN stays NaN
 * (quiet, payload kept like numpy); >= 65520 overflows to Inf. */
static inline uint16_t onyx_f32_to_f16_inline(float f) {
    uint32_t u = onyx_f32_as_bits(f);
    uint32_t sign = (u >> 16) & 0x8000;
    u &= 0x7fffffff;
    const uint32_t magic = 126u << 23; /* 0.5: its ulp is 2^-24, the f16 subnormal step */
    uint32_t sub = onyx_f32_as_bits(onyx_bits_as_f32(u) + onyx_bits_as_f32(magic)) - magic;
    uint32_t normal = (u + ((uint32_t)(15 - 127) << 23) + 0xfff + ((u >> 13) & 1)) >> 13;
    uint32_t nan = 0x7e00 | ((u >> 13) & 0x3ff);
    uint32_t r = onyx_select_u32(u < (113u << 23), sub, normal);
    r = onyx_select_u32(u >= (143u << 23), 0x7c00, r); /* >= 65536 (and Inf) */
    r = onyx_select_u32(u > 0x7f800000, nan, r);
    return (uint16_t)(r | sign);
}

static inline float onyx_bf16_to_f32_inline(uint16_t b) {
    return onyx_bits_as_f32((uint32_t)b << 16);
}

/* Round to nearest even; overflow carries into the exponent and gives Inf;
 * NaN keeps its sign and becomes quiet. */
static inline uint16_t onyx_f32_to_bf16_inline(float f) {
    uint32_t u = onyx_f32_as_bits(f);
    uint32_t rounded = (u + 0x7fff + ((u >> 16) & 1)) >> 16;
    uint32_t nan = (u >> 16) | 0x40;
    return (uint16_t)onyx_select_u32((u & 0x7fffffff) > 0x7f800000, nan, rounded);
}

double onyx_f8_to_f64(int dtype, uint8_t v);
uint8_t onyx_f64_to_f8(int dtype, double x, bool saturate);
uint8_t onyx_f64_to_f4(double x, bool saturate);
uint16_t onyx_f64_to_f16(double x);
uint16_t onyx_f64_to_bf16(double x);

/* E8M0 rounding modes of the Cast attribute round_mode. */
enum { ONYX_E8M0_ROUND_UP = 0, ONYX_E8M0_ROUND_DOWN = 1, ONYX_E8M0_ROUND_NEAREST = 2 };
uint8_t onyx_f32_to_e8m0(float f, bool saturate, int round_mode);

/* C leaves out-of-range float->int conversion undefined (and UBSan traps
 * on it); ONNX leaves the value undefined too. In-range values truncate
 * toward zero; NaN and out-of-range give INT64_MIN, what x86 produces. */
static inline int64_t onyx_f64_to_i64_safe(double v) {
    if (v >= -0x1p63 && v < 0x1p63) return (int64_t)v;
    return INT64_MIN;
}

/* uint64 targets: [2^63, 2^64) converts exactly, negatives wrap like numpy. */
static inline uint64_t onyx_f64_to_u64_safe(double v) {
    if (v >= 0x1p63 && v < 0x1p64) return (uint64_t)v;
    return (uint64_t)onyx_f64_to_i64_safe(v);
}

#endif
