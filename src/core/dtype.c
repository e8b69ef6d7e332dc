/* Element types: the traits table, conversions between float32/float64 and
 * the reduced-precision float formats (float16, bfloat16, the float8 family,
 * float4), and generic element access through double/int64.
 *
 * The float8/float4 encoders share one rounding routine that works in
 * double: every source value (float, double, float16 ...) is exact there, so
 * rounding happens once, to nearest even, and the per-format tables of the
 * ONNX Cast operator (saturate / NaN / negative zero) are applied on top. */
#include "core/dtype.h"
#include "core/dtype_ext.h"

#include <math.h>
#include <string.h>

#include "core/checked.h"

#define INFO(nm, b, f, s, i) {.name = nm, .bits = b, .is_float = f, .is_signed = s, .is_integer = i}

static const onyx_dtype_info dtype_table[ONYX_DTYPE_COUNT] = {
    [ONYX_UNDEFINED] = INFO("undefined", 0, false, false, false),
    [ONYX_FLOAT] = INFO("float32", 32, true, true, false),
    [ONYX_UINT8] = INFO("uint8", 8, false, false, true),
    [ONYX_INT8] = INFO("int8", 8, false, true, true),
    [ONYX_UINT16] = INFO("uint16", 16, false, false, true),
    [ONYX_INT16] = INFO("int16", 16, false, true, true),
    [ONYX_INT32] = INFO("int32", 32, false, true, true),
    [ONYX_INT64] = INFO("int64", 64, false, true, true),
    [ONYX_STRING] = INFO("str", 8 * sizeof(onyx_string), false, false, false),
    [ONYX_BOOL] = INFO("bool", 8, false, false, false),
    [ONYX_FLOAT16] = INFO("float16", 16, true, true, false),
    [ONYX_DOUBLE] = INFO("float64", 64, true, true, false),
    [ONYX_UINT32] = INFO("uint32", 32, false, false, true),
    [ONYX_UINT64] = INFO("uint64", 64, false, false, true),
    /* complex: signed components, but not "a float" for real-valued kernels */
    [ONYX_COMPLEX64] = INFO("complex64", 64, false, true, false),
    [ONYX_COMPLEX128] = INFO("complex128", 128, false, true, false),
    [ONYX_BFLOAT16] = INFO("bfloat16", 16, true, true, false),
    [ONYX_FLOAT8E4M3FN] = INFO("float8e4m3fn", 8, true, true, false),
    [ONYX_FLOAT8E4M3FNUZ] = INFO("float8e4m3fnuz", 8, true, true, false),
    [ONYX_FLOAT8E5M2] = INFO("float8e5m2", 8, true, true, false),
    [ONYX_FLOAT8E5M2FNUZ] = INFO("float8e5m2fnuz", 8, true, true, false),
    [ONYX_UINT4] = INFO("uint4", 4, false, false, true),
    [ONYX_INT4] = INFO("int4", 4, false, true, true),
    [ONYX_FLOAT4E2M1] = INFO("float4e2m1", 4, true, true, false),
    /* E8M0 is a float with no sign bit: it cannot hold negative values */
    [ONYX_FLOAT8E8M0] = INFO("float8e8m0", 8, true, false, false),
    [ONYX_UINT2] = INFO("uint2", 2, false, false, true),
    [ONYX_INT2] = INFO("int2", 2, false, true, true),
};

const onyx_dtype_info *onyx_dtype(int dtype) {
    if (dtype < 0 || dtype >= ONYX_DTYPE_COUNT) return &dtype_table[ONYX_UNDEFINED];
    return &dtype_table[dtype];
}

bool onyx_dtype_valid(int dtype) { return onyx_dtype(dtype)->bits != 0; }

const char *onyx_dtype_name(int dtype) {
    return onyx_dtype_valid(dtype) ? dtype_table[dtype].name : "invalid";
}

bool onyx_dtype_nbytes(int dtype, int64_t numel, size_t *out) {
    const onyx_dtype_info *t = onyx_dtype(dtype);
    if (t->bits == 0 || numel < 0) return false;
    if (t->bits < 8) {
        /* packed: (numel * bits + 7) / 8 without overflowing */
        int per_byte = 8 / t->bits;
        int64_t bytes = numel / per_byte + (numel % per_byte != 0);
        if ((uint64_t)bytes > SIZE_MAX) return false;
        *out = (size_t)bytes;
        return true;
    }
    if ((uint64_t)numel > SIZE_MAX) return false;
    return !onyx_mul_overflow_size((size_t)numel, t->bits / 8, out);
}

/* ------------------------------------------------- float16 and bfloat16 */

/* The definitions are the branch-free inline versions in dtype_ext.h, so
 * conversion loops in kernels vectorise. */
float onyx_f16_to_f32(uint16_t h) { return onyx_f16_to_f32_inline(h); }
uint16_t onyx_f32_to_f16(float f) { return onyx_f32_to_f16_inline(f); }
float onyx_bf16_to_f32(uint16_t b) { return onyx_bf16_to_f32_inline(b); }
uint16_t onyx_f32_to_bf16(float f) { return onyx_f32_to_bf16_inline(f); }

/* ------------------------------------------------- small float formats */

/* A binary float format with an implicit leading bit: mbits mantissa bits,
 * exponent bias, and the largest finite magnitude. Specials are handled by
 * the callers per format. */
typedef struct minifloat {
    int mbits;
    int bias;
    double max;
} minifloat;

static const minifloat fmt_e4m3fn = {3, 7, 448.0};
static const minifloat fmt_e4m3fnuz = {3, 8, 240.0};
static const minifloat fmt_e5m2 = {2, 15, 57344.0};
static const minifloat fmt_e5m2fnuz = {2, 16, 57344.0};
static const minifloat fmt_e2m1 = {1, 1, 6.0};

/* Round a finite a >= 0 to the format (to nearest even, exponent range
 * unbounded above). Returns the magnitude code (exponent field << mbits |
 * mantissa); *value receives the rounded value so callers can detect
 * overflow (value > max). */
static unsigned minifloat_round(const minifloat *fmt, double a, double *value) {
    int emin = 1 - fmt->bias; /* exponent of the smallest normal */
    if (a == 0) {
        *value = 0;
        return 0;
    }
    int e;
    frexp(a, &e);
    int E = e - 1; /* a = 1.xxx * 2^E */
    if (E < emin) E = emin;
    double quantum = ldexp(1.0, E - fmt->mbits);
    double r = nearbyint(a / quantum); /* exact division: quantum is a power of 2 */
    *value = r * quantum;
    unsigned one = 1u << fmt->mbits;
    if (r < one) return (unsigned)r; /* subnormal (E == emin) */
    if (r >= 2 * one) { /* rounding carried into the next binade */
        E++;
        r = one;
    }
    if (E - emin + 1 > 255) return 0xffff; /* far beyond any format: caller sees *value > max */
    return ((unsigned)(E - emin + 1) << fmt->mbits) | ((unsigned)r - one);
}

static double minifloat_decode(const minifloat *fmt, unsigned code) {
    unsigned e = code >> fmt->mbits;
    unsigned m = code & ((1u << fmt->mbits) - 1);
    if (e == 0) return ldexp((double)m, 1 - fmt->bias - fmt->mbits);
    return ldexp((double)((1u << fmt->mbits) | m), (int)e - fmt->bias - fmt->mbits);
}

/* Bits of the largest finite magnitude. */
static unsigned minifloat_max_code(const minifloat *fmt) {
    double v;
    return minifloat_round(fmt, fmt->max, &v);
}

static const minifloat *f8_format(int dtype) {
    switch (dtype) {
    case ONYX_FLOAT8E4M3FN: return &fmt_e4m3fn;
    case ONYX_FLOAT8E4M3FNUZ: return &fmt_e4m3fnuz;
    case ONYX_FLOAT8E5M2: return &fmt_e5m2;
    case ONYX_FLOAT8E5M2FNUZ: return &fmt_e5m2fnuz;
    default: return NULL;
    }
}

static double e8m0_decode(uint8_t v) {
    if (v == 0xff) return NAN;
    return ldexp(1.0, (int)v - 127);
}

double onyx_f8_to_f64(int dtype, uint8_t v) {
    if (dtype == ONYX_FLOAT8E8M0) return e8m0_decode(v);
    const minifloat *fmt = f8_format(dtype);
    if (!fmt) return NAN;
    bool uz = dtype == ONYX_FLOAT8E4M3FNUZ || dtype == ONYX_FLOAT8E5M2FNUZ;
    if (uz) {
        if (v == 0x80) return NAN; /* the only NaN; no -0 */
    } else if (dtype == ONYX_FLOAT8E4M3FN) {
        if ((v & 0x7f) == 0x7f) return (v & 0x80) ? -NAN : NAN; /* no Inf */
    } else { /* E5M2: IEEE-like */
        if ((v & 0x7c) == 0x7c) {
            if (v & 0x03) return (v & 0x80) ? -NAN : NAN;
            return (v & 0x80) ? -INFINITY : INFINITY;
        }
    }
    double m = minifloat_decode(fmt, v & 0x7f);
    return (v & 0x80) ? -m : m;
}

float onyx_f8_to_f32(int dtype, uint8_t v) { return (float)onyx_f8_to_f64(dtype, v); }

/* E8M0 from the float32 bit pattern, as the ONNX reference does: the value
 * is the biased float32 exponent, rounded by the mantissa. round_mode:
 * 0 = up, 1 = down, 2 = nearest (ties up). Sign is ignored (undefined in
 * the spec for negative inputs). */
uint8_t onyx_f32_to_e8m0(float f, bool saturate, int round_mode) {
    uint32_t u = onyx_f32_as_bits(f);
    uint32_t exponent = (u >> 23) & 0xff;
    uint32_t mant = u & 0x7fffff;
    if (exponent == 0xff) /* Inf saturates to the largest value; NaN stays NaN */
        return (mant == 0 && saturate) ? 0xfe : 0xff;
    if (exponent == 0) {
        /* zero or a float32 subnormal, below 2^-126: the candidates are
         * 2^-127 (code 0) and 2^-126 (code 1); values below 2^-127 (zero
         * included) are below the smallest E8M0 value */
        if (mant < 0x400000) return saturate ? 0x00 : 0xff;
        if (mant == 0x400000) return 0x00;
        if (round_mode == ONYX_E8M0_ROUND_UP) return 0x01;
        if (round_mode == ONYX_E8M0_ROUND_NEAREST) return mant >= 0x600000 ? 0x01 : 0x00;
        return 0x00;
    }
    bool round_up = false;
    if (round_mode == ONYX_E8M0_ROUND_UP) {
        round_up = mant != 0;
    } else if (round_mode == ONYX_E8M0_ROUND_NEAREST) {
        round_up = (mant & 0x400000) != 0; /* mantissa >= 1.5: nearer 2^(e+1); ties up */
    }
    if (round_up) {
        if (exponent == 0xfe) return saturate ? 0xfe : 0xff;
        exponent++;
    }
    return (uint8_t)exponent;
}

/* Float8 from double. NaN keeps its sign where the format has a signed NaN;
 * the FNUZ formats have one NaN (0x80) and no negative zero. */
uint8_t onyx_f64_to_f8(int dtype, double x, bool saturate) {
    if (dtype == ONYX_FLOAT8E8M0) return onyx_f32_to_e8m0((float)x, saturate, ONYX_E8M0_ROUND_UP);
    const minifloat *fmt = f8_format(dtype);
    if (!fmt) return 0;
    bool uz = dtype == ONYX_FLOAT8E4M3FNUZ || dtype == ONYX_FLOAT8E5M2FNUZ;
    bool e5m2 = dtype == ONYX_FLOAT8E5M2;
    uint8_t sign = signbit(x) ? 0x80 : 0;
    if (isnan(x)) {
        if (uz) return 0x80;
        return sign | (e5m2 ? 0x7e : 0x7f);
    }
    double value = INFINITY;
    unsigned code = isinf(x) ? 0xffff : minifloat_round(fmt, fabs(x), &value);
    if (value > fmt->max) {
        if (saturate) return sign | (uint8_t)minifloat_max_code(fmt);
        if (uz) return 0x80;
        if (e5m2) return sign | 0x7c; /* Inf */
        return sign | 0x7f;           /* E4M3FN: NaN with the sign */
    }
    if (code == 0 && uz) return 0; /* no negative zero */
    return sign | (uint8_t)code;
}

uint8_t onyx_f32_to_f8(int dtype, float f, bool saturate) {
    return onyx_f64_to_f8(dtype, (double)f, saturate);
}

/* ---------------------------------------------------------- float4 e2m1 */

float onyx_f4_to_f32(uint8_t nibble) {
    double m = minifloat_decode(&fmt_e2m1, nibble & 0x7);
    return (float)((nibble & 0x8) ? -m : m);
}

/* The format has neither Inf nor NaN, so out-of-range values always
 * saturate to +-6 (saturate is accepted for symmetry with float8). NaN maps
 * to 0x8 (-0), as the reference implementation (ml_dtypes) does. */
uint8_t onyx_f64_to_f4(double x, bool saturate) {
    (void)saturate;
    if (isnan(x)) return 0x8;
    uint8_t sign = signbit(x) ? 0x8 : 0;
    if (isinf(x)) return sign | 0x7;
    double value;
    unsigned code = minifloat_round(&fmt_e2m1, fabs(x), &value);
    if (value > fmt_e2m1.max) code = 0x7;
    return sign | (uint8_t)code;
}

uint8_t onyx_f32_to_f4(float f, bool saturate) { return onyx_f64_to_f4((double)f, saturate); }

/* ------------------------------------------- double -> float16/bfloat16 */

/* Direct rounding from double (no double rounding through float). */
static const minifloat fmt_f16 = {10, 15, 65504.0};
static const minifloat fmt_bf16 = {7, 127, 0x1.fep127};

static uint16_t f64_to_half_like(const minifloat *fmt, unsigned exp_all_ones, double x) {
    uint16_t sign = signbit(x) ? 0x8000 : 0;
    unsigned inf_code = exp_all_ones << fmt->mbits;
    if (isnan(x)) return sign | (uint16_t)(inf_code | (1u << (fmt->mbits - 1)));
    if (isinf(x)) return sign | (uint16_t)inf_code;
    double value;
    unsigned code = minifloat_round(fmt, fabs(x), &value);
    if (value > fmt->max) return sign | (uint16_t)inf_code;
    return sign | (uint16_t)code;
}

uint16_t onyx_f64_to_f16(double x) { return f64_to_half_like(&fmt_f16, 0x1f, x); }
uint16_t onyx_f64_to_bf16(double x) { return f64_to_half_like(&fmt_bf16, 0xff, x); }

/* ------------------------------------------------------ sub-byte access */

static inline unsigned subbyte_get(const void *data, int bits, int64_t idx) {
    const uint8_t *p = data;
    int per_byte = 8 / bits;
    unsigned shift = (unsigned)(idx % per_byte) * (unsigned)bits;
    return (p[idx / per_byte] >> shift) & ((1u << bits) - 1);
}

static inline void subbyte_set(void *data, int bits, int64_t idx, unsigned v) {
    uint8_t *p = data;
    int per_byte = 8 / bits;
    unsigned shift = (unsigned)(idx % per_byte) * (unsigned)bits;
    unsigned mask = ((1u << bits) - 1) << shift;
    p[idx / per_byte] = (uint8_t)((p[idx / per_byte] & ~mask) | ((v << shift) & mask));
}

static inline int64_t sign_extend(unsigned v, int bits) {
    unsigned top = 1u << (bits - 1);
    return (int64_t)(v ^ top) - (int64_t)top;
}

/* ------------------------------------------------------ generic access */

double onyx_load_as_double(int dtype, const void *data, int64_t idx) {
    switch (dtype) {
    case ONYX_FLOAT: return ((const float *)data)[idx];
    case ONYX_DOUBLE: return ((const double *)data)[idx];
    case ONYX_FLOAT16: return onyx_f16_to_f32(((const uint16_t *)data)[idx]);
    case ONYX_BFLOAT16: return onyx_bf16_to_f32(((const uint16_t *)data)[idx]);
    case ONYX_FLOAT8E4M3FN:
    case ONYX_FLOAT8E4M3FNUZ:
    case ONYX_FLOAT8E5M2:
    case ONYX_FLOAT8E5M2FNUZ:
    case ONYX_FLOAT8E8M0: return onyx_f8_to_f64(dtype, ((const uint8_t *)data)[idx]);
    case ONYX_FLOAT4E2M1: return onyx_f4_to_f32((uint8_t)subbyte_get(data, 4, idx));
    case ONYX_UINT64: return (double)((const uint64_t *)data)[idx];
    case ONYX_COMPLEX64: return ((const float *)data)[2 * idx];   /* real part */
    case ONYX_COMPLEX128: return ((const double *)data)[2 * idx]; /* real part */
    case ONYX_UINT8: case ONYX_INT8: case ONYX_UINT16: case ONYX_INT16: case ONYX_INT32:
    case ONYX_INT64: case ONYX_UINT32: case ONYX_BOOL: case ONYX_UINT4: case ONYX_INT4:
    case ONYX_UINT2: case ONYX_INT2:
        return (double)onyx_load_as_int64(dtype, data, idx);
    default: return NAN; /* strings, invalid types */
    }
}

int64_t onyx_load_as_int64(int dtype, const void *data, int64_t idx) {
    switch (dtype) {
    case ONYX_UINT8: return ((const uint8_t *)data)[idx];
    case ONYX_INT8: return ((const int8_t *)data)[idx];
    case ONYX_UINT16: return ((const uint16_t *)data)[idx];
    case ONYX_INT16: return ((const int16_t *)data)[idx];
    case ONYX_INT32: return ((const int32_t *)data)[idx];
    case ONYX_INT64: return ((const int64_t *)data)[idx];
    case ONYX_UINT32: return ((const uint32_t *)data)[idx];
    case ONYX_UINT64: return (int64_t)((const uint64_t *)data)[idx]; /* two's complement bits */
    case ONYX_BOOL: return ((const uint8_t *)data)[idx] != 0;
    case ONYX_UINT4: return subbyte_get(data, 4, idx);
    case ONYX_INT4: return sign_extend(subbyte_get(data, 4, idx), 4);
    case ONYX_UINT2: return subbyte_get(data, 2, idx);
    case ONYX_INT2: return sign_extend(subbyte_get(data, 2, idx), 2);
    case ONYX_FLOAT: case ONYX_DOUBLE: case ONYX_FLOAT16: case ONYX_BFLOAT16:
    case ONYX_FLOAT8E4M3FN: case ONYX_FLOAT8E4M3FNUZ: case ONYX_FLOAT8E5M2:
    case ONYX_FLOAT8E5M2FNUZ: case ONYX_FLOAT8E8M0: case ONYX_FLOAT4E2M1:
    case ONYX_COMPLEX64: case ONYX_COMPLEX128:
        return onyx_f64_to_i64_safe(onyx_load_as_double(dtype, data, idx));
    default: return 0; /* strings, invalid types */
    }
}

void onyx_store_from_double(int dtype, void *data, int64_t idx, double v) {
    switch (dtype) {
    case ONYX_FLOAT: ((float *)data)[idx] = (float)v; return;
    case ONYX_DOUBLE: ((double *)data)[idx] = v; return;
    case ONYX_FLOAT16: ((uint16_t *)data)[idx] = onyx_f64_to_f16(v); return;
    case ONYX_BFLOAT16: ((uint16_t *)data)[idx] = onyx_f64_to_bf16(v); return;
    case ONYX_FLOAT8E4M3FN:
    case ONYX_FLOAT8E4M3FNUZ:
    case ONYX_FLOAT8E5M2:
    case ONYX_FLOAT8E5M2FNUZ:
    case ONYX_FLOAT8E8M0: ((uint8_t *)data)[idx] = onyx_f64_to_f8(dtype, v, true); return;
    case ONYX_FLOAT4E2M1: subbyte_set(data, 4, idx, onyx_f64_to_f4(v, true)); return;
    case ONYX_BOOL: ((uint8_t *)data)[idx] = v != 0; return; /* NaN -> true */
    case ONYX_UINT64: ((uint64_t *)data)[idx] = onyx_f64_to_u64_safe(v); return;
    case ONYX_COMPLEX64:
        ((float *)data)[2 * idx] = (float)v;
        ((float *)data)[2 * idx + 1] = 0;
        return;
    case ONYX_COMPLEX128:
        ((double *)data)[2 * idx] = v;
        ((double *)data)[2 * idx + 1] = 0;
        return;
    case ONYX_UINT8: case ONYX_INT8: case ONYX_UINT16: case ONYX_INT16: case ONYX_INT32:
    case ONYX_INT64: case ONYX_UINT32: case ONYX_UINT4: case ONYX_INT4: case ONYX_UINT2:
    case ONYX_INT2:
        onyx_store_from_int64(dtype, data, idx, onyx_f64_to_i64_safe(v));
        return;
    default: return; /* strings, invalid types */
    }
}

void onyx_store_from_int64(int dtype, void *data, int64_t idx, int64_t v) {
    /* integer targets keep the low bits (two's complement), as the Cast spec says */
    switch (dtype) {
    case ONYX_UINT8: ((uint8_t *)data)[idx] = (uint8_t)v; return;
    case ONYX_INT8: ((int8_t *)data)[idx] = (int8_t)v; return;
    case ONYX_UINT16: ((uint16_t *)data)[idx] = (uint16_t)v; return;
    case ONYX_INT16: ((int16_t *)data)[idx] = (int16_t)v; return;
    case ONYX_INT32: ((int32_t *)data)[idx] = (int32_t)v; return;
    case ONYX_INT64: ((int64_t *)data)[idx] = v; return;
    case ONYX_UINT32: ((uint32_t *)data)[idx] = (uint32_t)v; return;
    case ONYX_UINT64: ((uint64_t *)data)[idx] = (uint64_t)v; return;
    case ONYX_BOOL: ((uint8_t *)data)[idx] = v != 0; return;
    case ONYX_UINT4:
    case ONYX_INT4: subbyte_set(data, 4, idx, (unsigned)(v & 0xf)); return;
    case ONYX_UINT2:
    case ONYX_INT2: subbyte_set(data, 2, idx, (unsigned)(v & 0x3)); return;
    case ONYX_FLOAT: case ONYX_DOUBLE: case ONYX_FLOAT16: case ONYX_BFLOAT16:
    case ONYX_FLOAT8E4M3FN: case ONYX_FLOAT8E4M3FNUZ: case ONYX_FLOAT8E5M2:
    case ONYX_FLOAT8E5M2FNUZ: case ONYX_FLOAT8E8M0: case ONYX_FLOAT4E2M1:
    case ONYX_COMPLEX64: case ONYX_COMPLEX128:
        onyx_store_from_double(dtype, data, idx, (double)v);
        return;
    default: return; /* strings, invalid types */
    }
}
