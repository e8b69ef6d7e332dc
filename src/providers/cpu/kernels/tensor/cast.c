/* Cast (opsets 1..25+) and CastLike (15+).
 *
 * Three paths:
 *   - plain -> plain (float, double, the 8 integer types, bool): one direct
 *     loop per type pair, generated from a type list, with the Cast rules
 *     (float -> int truncates, out of range is defined here to avoid UB;
 *     int -> int keeps the low bits; anything -> bool is x != 0);
 *     float16 <-> float32 go through the F16C / AVX-512 conversions of
 *     providers/cpu/gemm/sgemm_half.h where the dispatch table has them;
 *   - everything else numeric (float16, bfloat16, float8, float4, the
 *     packed int4/int2 types): blocks of elements are widened to double
 *     (or to int64 when both sides are integers, so no precision is lost)
 *     and narrowed into the destination;
 *   - strings: parsed with strtod/strtoll, or formatted the way numpy
 *     prints the value (shortest repr that reads back to the same value).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/dtype_ext.h"
#include "providers/cpu/kernel.h"
#include "ir/schemas/cast.h"
#include "providers/cpu/kernels/minimal_keep.h"
#include "providers/cpu/kernels/math/elementwise_impl.h"
#include "providers/cpu/gemm/sgemm_half.h"

/* Elements per parallel block: a multiple of 4 so packed sub-byte outputs
 * never share a byte between two threads. */
#define CAST_BLOCK 4096
/* Elements widened at a time on the generic path. */
#define CAST_CHUNK 256

/* ------------------------------------------------------------ plain types */

/* Conversion rules by element kind: F float (float/double), I integer (as
 * source also uint64), U uint64 destination, B bool, H float16, BF
 * bfloat16 (both read as float: LD_H/LD_BF). */
#define CVT_F_F(DT, x) ((DT)(x))
#define CVT_F_I(DT, x) ((DT)onyx_f64_to_i64_safe((double)(x)))
#define CVT_F_U(DT, x) ((DT)onyx_f64_to_u64_safe((double)(x)))
#define CVT_F_B(DT, x) ((DT)((x) != 0))
#define CVT_F_H(DT, x) _Generic((x), float: onyx_f32_to_f16_inline, default: onyx_f64_to_f16)(x)
#define CVT_F_BF(DT, x) _Generic((x), float: onyx_f32_to_bf16_inline, default: onyx_f64_to_bf16)(x)
#define CVT_I_F(DT, x) ((DT)(x))
#define CVT_I_I(DT, x) ((DT)(x))
#define CVT_I_U(DT, x) ((DT)(x))
#define CVT_I_B(DT, x) ((DT)((x) != 0))
#define CVT_I_H(DT, x) onyx_f64_to_f16((double)(x))
#define CVT_I_BF(DT, x) onyx_f64_to_bf16((double)(x))
#define CVT_B_F(DT, x) ((DT)((x) != 0))
#define CVT_B_I(DT, x) ((DT)((x) != 0))
#define CVT_B_U(DT, x) ((DT)((x) != 0))
#define CVT_B_B(DT, x) ((DT)((x) != 0))
#define CVT_B_H(DT, x) ((DT)((x) != 0 ? 0x3c00 : 0))
#define CVT_B_BF(DT, x) ((DT)((x) != 0 ? 0x3f80 : 0))

#define LD(x) (x)
#define LD_H(x) onyx_f16_to_f32_inline(x)
#define LD_BF(x) onyx_bf16_to_f32_inline(x)

/* (C type, dtype, loader, kind as source, kind as destination). Two copies
 * of the list because a macro cannot expand itself. */
#define PLAIN_TYPES_A(X, ...)                                    \
    X(float, ONYX_FLOAT, LD, F, F, __VA_ARGS__)                  \
    X(double, ONYX_DOUBLE, LD, F, F, __VA_ARGS__)                \
    X(uint16_t, ONYX_FLOAT16, LD_H, F, H, __VA_ARGS__)           \
    X(uint16_t, ONYX_BFLOAT16, LD_BF, F, BF, __VA_ARGS__)        \
    X(int8_t, ONYX_INT8, LD, I, I, __VA_ARGS__)                  \
    X(int16_t, ONYX_INT16, LD, I, I, __VA_ARGS__)                \
    X(int32_t, ONYX_INT32, LD, I, I, __VA_ARGS__)                \
    X(int64_t, ONYX_INT64, LD, I, I, __VA_ARGS__)                \
    X(uint8_t, ONYX_UINT8, LD, I, I, __VA_ARGS__)                \
    X(uint16_t, ONYX_UINT16, LD, I, I, __VA_ARGS__)              \
    X(uint32_t, ONYX_UINT32, LD, I, I, __VA_ARGS__)              \
    X(uint64_t, ONYX_UINT64, LD, I, U, __VA_ARGS__)              \
    X(uint8_t, ONYX_BOOL, LD, B, B, __VA_ARGS__)
#define PLAIN_TYPES_B(X, ...)                                    \
    X(float, ONYX_FLOAT, LD, F, F, __VA_ARGS__)                  \
    X(double, ONYX_DOUBLE, LD, F, F, __VA_ARGS__)                \
    X(uint16_t, ONYX_FLOAT16, LD_H, F, H, __VA_ARGS__)           \
    X(uint16_t, ONYX_BFLOAT16, LD_BF, F, BF, __VA_ARGS__)        \
    X(int8_t, ONYX_INT8, LD, I, I, __VA_ARGS__)                  \
    X(int16_t, ONYX_INT16, LD, I, I, __VA_ARGS__)                \
    X(int32_t, ONYX_INT32, LD, I, I, __VA_ARGS__)                \
    X(int64_t, ONYX_INT64, LD, I, I, __VA_ARGS__)                \
    X(uint8_t, ONYX_UINT8, LD, I, I, __VA_ARGS__)                \
    X(uint16_t, ONYX_UINT16, LD, I, I, __VA_ARGS__)              \
    X(uint32_t, ONYX_UINT32, LD, I, I, __VA_ARGS__)              \
    X(uint64_t, ONYX_UINT64, LD, I, U, __VA_ARGS__)              \
    X(uint8_t, ONYX_BOOL, LD, B, B, __VA_ARGS__)

typedef void (*plain_cast_fn)(const void *src, void *dst, int64_t n);

/* One loop per (source, destination) pair, over restrict parameters so it
 * vectorises where the conversion allows. */
#define PLAIN_PAIR(DT, DDT, DLD, DSK, DDK, ST, SDT, SLD, SSK, SDK)                        \
    static void cast_##SDT##_to_##DDT##_loop(const ST *restrict s, DT *restrict d,        \
                                             size_t n) {                                  \
        EW_LOOP(n, d[i] = CVT_##SSK##_##DDK(DT, SLD(s[i])));                              \
    }                                                                                     \
    static void cast_##SDT##_to_##DDT(const void *src, void *dst, int64_t n) {            \
        cast_##SDT##_to_##DDT##_loop(src, dst, (size_t)n);                                \
    }
#define PLAIN_ROW(ST, SDT, SLD, SSK, SDK, ...) PLAIN_TYPES_B(PLAIN_PAIR, ST, SDT, SLD, SSK, SDK)
PLAIN_TYPES_A(PLAIN_ROW, ~)

/* A minimal build without Cast/CastLike (scripts/minimal_build.py) casts
 * only for the elementwise kernels, to and from their float compute type:
 * it keeps those loops; the other pairs take the generic path (same
 * values), and their loops are not compiled in. */
#if defined(ONYX_MINIMAL_BUILD) && !defined(ONYX_MINIMAL_KEEPS_Cast) && !defined(ONYX_MINIMAL_KEEPS_CastLike)
#define PLAIN_TO_FLOAT(T, DT, ...) [DT] = ONYX_TYPE_FN(DT, cast_##DT##_to_ONYX_FLOAT),
#define PLAIN_FROM_FLOAT(T, DT, ...) [DT] = ONYX_TYPE_FN(DT, cast_ONYX_FLOAT_to_##DT),
static const plain_cast_fn plain_to_float[ONYX_DTYPE_COUNT] = {PLAIN_TYPES_A(PLAIN_TO_FLOAT, ~)};
static const plain_cast_fn plain_from_float[ONYX_DTYPE_COUNT] = {PLAIN_TYPES_A(PLAIN_FROM_FLOAT, ~)};
static plain_cast_fn plain_cast_of(int sdt, int ddt) {
    return ddt == ONYX_FLOAT ? plain_to_float[sdt] : sdt == ONYX_FLOAT ? plain_from_float[ddt] : NULL;
}
#ifdef ONYX_MINIMAL_TYPES
/* With float and at most one other element type (ONYX_MINIMAL_TYPES), all
 * with direct loops, every pair of kept types has its loop above: the
 * widen-and-narrow path is not compiled in. */
#define PLAIN_BIT(T, DT, ...) | ONYX_T(DT)
#define CAST_KEPT_OTHERS ((ONYX_MINIMAL_TYPES) & ~ONYX_T(ONYX_FLOAT))
#define CAST_NEEDS_GENERIC \
    (((ONYX_MINIMAL_TYPES) & ~(0 PLAIN_TYPES_A(PLAIN_BIT, ~))) || (CAST_KEPT_OTHERS & (CAST_KEPT_OTHERS - 1)))
#endif
#else
#define PLAIN_ENTRY(DT, DDT, DLD, DSK, DDK, ST, SDT, SLD, SSK, SDK) [DDT] = cast_##SDT##_to_##DDT,
#define PLAIN_TABLE_ROW(ST, SDT, SLD, SSK, SDK, ...) \
    [SDT] = {PLAIN_TYPES_B(PLAIN_ENTRY, ST, SDT, SLD, SSK, SDK)},
static const plain_cast_fn plain_casts[ONYX_DTYPE_COUNT][ONYX_DTYPE_COUNT] = {
    PLAIN_TYPES_A(PLAIN_TABLE_ROW, ~)};
static plain_cast_fn plain_cast_of(int sdt, int ddt) { return plain_casts[sdt][ddt]; }
#endif

/* ------------------------------------------------------- type predicates */

/* Integer-valued types whose values are exact in int64 (bool included). */
static bool is_integral(int dt) { return onyx_dtype(dt)->is_integer || dt == ONYX_BOOL; }

static bool is_f8(int dt) {
    return dt == ONYX_FLOAT8E4M3FN || dt == ONYX_FLOAT8E4M3FNUZ || dt == ONYX_FLOAT8E5M2 ||
           dt == ONYX_FLOAT8E5M2FNUZ || dt == ONYX_FLOAT8E8M0;
}

/* ------------------------------------------------ widen to double / int64 */

static inline unsigned nibble_at(const uint8_t *p, int bits, int64_t i) {
    int per = 8 / bits;
    return (p[i / per] >> ((i % per) * bits)) & ((1u << bits) - 1);
}

static inline int64_t sext(unsigned v, int bits) {
    unsigned top = 1u << (bits - 1);
    return (int64_t)(v ^ top) - (int64_t)top;
}

/* src elements [off, off+n) -> double */
static void widen_f64(int dt, const void *src, int64_t off, int n, double *out) {
    switch (dt) {
#define WIDEN_PLAIN(T, DT, LOAD, SK, DK, ...)                                    \
    case DT: {                                                                   \
        const T *s = (const T *)src + off;                                       \
        for (int i = 0; i < n; i++) out[i] = CVT_##SK##_F(double, LOAD(s[i]));   \
        return;                                                                  \
    }
        PLAIN_TYPES_A(WIDEN_PLAIN, ~)
#undef WIDEN_PLAIN
    case ONYX_FLOAT4E2M1:
        for (int i = 0; i < n; i++) out[i] = onyx_f4_to_f32((uint8_t)nibble_at(src, 4, off + i));
        return;
    case ONYX_UINT4:
    case ONYX_UINT2: {
        int bits = onyx_dtype(dt)->bits;
        for (int i = 0; i < n; i++) out[i] = nibble_at(src, bits, off + i);
        return;
    }
    case ONYX_INT4:
    case ONYX_INT2: {
        int bits = onyx_dtype(dt)->bits;
        for (int i = 0; i < n; i++) out[i] = (double)sext(nibble_at(src, bits, off + i), bits);
        return;
    }
    default: /* float8 */
        for (int i = 0; i < n; i++) out[i] = onyx_f8_to_f64(dt, ((const uint8_t *)src)[off + i]);
        return;
    }
}

/* integral src elements [off, off+n) -> int64 (uint64 keeps its bits) */
static void widen_i64(int dt, const void *src, int64_t off, int n, int64_t *out) {
    switch (dt) {
#define WIDEN_INT(T, DT)                                                         \
    case DT: {                                                                   \
        const T *s = (const T *)src + off;                                       \
        for (int i = 0; i < n; i++) out[i] = (int64_t)s[i];                      \
        return;                                                                  \
    }
        WIDEN_INT(int8_t, ONYX_INT8)
        WIDEN_INT(int16_t, ONYX_INT16)
        WIDEN_INT(int32_t, ONYX_INT32)
        WIDEN_INT(int64_t, ONYX_INT64)
        WIDEN_INT(uint8_t, ONYX_UINT8)
        WIDEN_INT(uint16_t, ONYX_UINT16)
        WIDEN_INT(uint32_t, ONYX_UINT32)
        WIDEN_INT(uint64_t, ONYX_UINT64)
#undef WIDEN_INT
    case ONYX_BOOL: {
        const uint8_t *s = (const uint8_t *)src + off;
        for (int i = 0; i < n; i++) out[i] = s[i] != 0;
        return;
    }
    case ONYX_UINT4:
    case ONYX_UINT2: {
        int bits = onyx_dtype(dt)->bits;
        for (int i = 0; i < n; i++) out[i] = nibble_at(src, bits, off + i);
        return;
    }
    case ONYX_INT4:
    case ONYX_INT2: {
        int bits = onyx_dtype(dt)->bits;
        for (int i = 0; i < n; i++) out[i] = sext(nibble_at(src, bits, off + i), bits);
        return;
    }
    default: /* not integral: callers never ask */
        memset(out, 0, sizeof *out * (size_t)n);
        return;
    }
}

/* ---------------------------------------------- narrow from double / int64 */

/* Write packed sub-byte codes for elements [off, off+n); off is a multiple
 * of the elements per byte, so each byte is written whole, starting with
 * its first element (padding bits of a last partial byte become 0). */
static void pack_codes(uint8_t *dst, int bits, int64_t off, int n, const uint8_t *codes) {
    int per = 8 / bits;
    unsigned mask = (1u << bits) - 1;
    for (int i = 0; i < n; i++) {
        int64_t e = off + i;
        unsigned shift = (unsigned)(e % per) * (unsigned)bits;
        unsigned v = (codes[i] & mask) << shift;
        if (shift == 0) dst[e / per] = (uint8_t)v;
        else dst[e / per] |= (uint8_t)v;
    }
}

typedef struct cast_opts {
    bool saturate;
    int round_mode;
} cast_opts;

static void narrow_f64(int dt, const double *in, int n, void *dst, int64_t off,
                       const cast_opts *o) {
    switch (dt) {
#define NARROW_PLAIN(T, DT, LOAD, SK, DK, ...)                                   \
    case DT: {                                                                   \
        T *d = (T *)dst + off;                                                   \
        for (int i = 0; i < n; i++) d[i] = CVT_F_##DK(T, in[i]);                 \
        return;                                                                  \
    }
        PLAIN_TYPES_A(NARROW_PLAIN, ~)
#undef NARROW_PLAIN
    case ONYX_FLOAT8E8M0: {
        /* rounding is defined on the float32 bit pattern */
        uint8_t *d = (uint8_t *)dst + off;
        for (int i = 0; i < n; i++) d[i] = onyx_f32_to_e8m0((float)in[i], o->saturate, o->round_mode);
        return;
    }
    default: break;
    }
    uint8_t codes[CAST_CHUNK];
    if (is_f8(dt)) {
        uint8_t *d = (uint8_t *)dst + off;
        for (int i = 0; i < n; i++) d[i] = onyx_f64_to_f8(dt, in[i], o->saturate);
        return;
    }
    if (dt == ONYX_FLOAT4E2M1) {
        for (int i = 0; i < n; i++) codes[i] = onyx_f64_to_f4(in[i], o->saturate);
    } else if (onyx_dtype(dt)->is_integer && onyx_dtype(dt)->bits < 8) {
        /* int4/uint4/int2/uint2: truncate, keep the low bits */
        for (int i = 0; i < n; i++) codes[i] = (uint8_t)onyx_f64_to_i64_safe(in[i]);
    } else {
        return; /* strings, complex: not numbers Cast converts */
    }
    pack_codes(dst, onyx_dtype(dt)->bits, off, n, codes);
}

/* integral destination from int64 (low bits kept) */
static void narrow_i64(int dt, const int64_t *in, int n, void *dst, int64_t off) {
    switch (dt) {
#define NARROW_INT(T, DT)                                                        \
    case DT: {                                                                   \
        T *d = (T *)dst + off;                                                   \
        for (int i = 0; i < n; i++) d[i] = (T)in[i];                             \
        return;                                                                  \
    }
        NARROW_INT(int8_t, ONYX_INT8)
        NARROW_INT(int16_t, ONYX_INT16)
        NARROW_INT(int32_t, ONYX_INT32)
        NARROW_INT(int64_t, ONYX_INT64)
        NARROW_INT(uint8_t, ONYX_UINT8)
        NARROW_INT(uint16_t, ONYX_UINT16)
        NARROW_INT(uint32_t, ONYX_UINT32)
        NARROW_INT(uint64_t, ONYX_UINT64)
#undef NARROW_INT
    case ONYX_BOOL: {
        uint8_t *d = (uint8_t *)dst + off;
        for (int i = 0; i < n; i++) d[i] = in[i] != 0;
        return;
    }
    case ONYX_UINT4:
    case ONYX_INT4:
    case ONYX_UINT2:
    case ONYX_INT2: {
        uint8_t codes[CAST_CHUNK];
        for (int i = 0; i < n; i++) codes[i] = (uint8_t)in[i];
        pack_codes(dst, onyx_dtype(dt)->bits, off, n, codes);
        return;
    }
    default: return; /* not integral: callers never ask */
    }
}

/* ------------------------------------------------------------ the driver */

typedef struct cast_job {
    int sdt, ddt;
    const void *src;
    void *dst;
    int64_t n;
    cast_opts opts;
} cast_job;

static void cast_range(const cast_job *j, int64_t begin, int64_t end) {
    /* float16 <-> float32: F16C / AVX-512 conversions where the dispatch
     * table has them (same results as the loops below) */
    if (ONYX_KEEPS_TYPE(ONYX_FLOAT16) && j->sdt == ONYX_FLOAT16 && j->ddt == ONYX_FLOAT) {
        onyx_half_to_float((const char *)j->src + begin * 2, (size_t)(end - begin), (float *)j->dst + begin);
        return;
    }
    if (ONYX_KEEPS_TYPE(ONYX_FLOAT16) && j->sdt == ONYX_FLOAT && j->ddt == ONYX_FLOAT16) {
        onyx_half_narrow((const float *)j->src + begin, (size_t)(end - begin), (uint16_t *)j->dst + begin);
        return;
    }
    const plain_cast_fn plain = plain_cast_of(j->sdt, j->ddt);
    if (plain) {
        size_t ss = onyx_dtype(j->sdt)->bits / 8, ds = onyx_dtype(j->ddt)->bits / 8;
        plain((const char *)j->src + begin * ss, (char *)j->dst + begin * ds, end - begin);
        return;
    }
#ifdef CAST_NEEDS_GENERIC
    if (!CAST_NEEDS_GENERIC) return;
#endif
    bool ints = is_integral(j->sdt) && is_integral(j->ddt);
    for (int64_t i = begin; i < end; i += CAST_CHUNK) {
        int n = (int)(end - i < CAST_CHUNK ? end - i : CAST_CHUNK);
        if (ints) {
            int64_t tmp[CAST_CHUNK];
            widen_i64(j->sdt, j->src, i, n, tmp);
            narrow_i64(j->ddt, tmp, n, j->dst, i);
        } else {
            double tmp[CAST_CHUNK];
            widen_f64(j->sdt, j->src, i, n, tmp);
            narrow_f64(j->ddt, tmp, n, j->dst, i, &j->opts);
        }
    }
}

static void cast_blocks(void *arg, size_t b0, size_t b1) {
    const cast_job *j = arg;
    int64_t begin = (int64_t)b0 * CAST_BLOCK;
    int64_t end = (int64_t)b1 * CAST_BLOCK;
    if (end > j->n) end = j->n;
    cast_range(j, begin, end);
}

void onyx_cast_elements(int src_dtype, const void *src, int dst_dtype, void *dst, int64_t n,
                        bool saturate, int round_mode, onyx_threadpool *tp) {
    if (n <= 0 || !onyx_cast_supported(src_dtype) || !onyx_cast_supported(dst_dtype) ||
        src_dtype == ONYX_STRING || dst_dtype == ONYX_STRING)
        return;
    if (src_dtype == dst_dtype) {
        size_t bytes = 0;
        if (onyx_dtype_nbytes(src_dtype, n, &bytes)) memcpy(dst, src, bytes);
        return;
    }
    cast_job job = {src_dtype, dst_dtype, src, dst, n, {saturate, round_mode}};
    size_t blocks = (size_t)((n + CAST_BLOCK - 1) / CAST_BLOCK);
    onyx_parallel_for(tp, blocks, ONYX_EW_GRAIN / CAST_BLOCK, cast_blocks, &job);
}

/* --------------------------------------------------------------- strings */

/* Copy of s with a NUL terminator; NULL on OOM. */
static char *dup_bytes(const char *s, size_t len) {
    char *p = malloc(len + 1);
    if (!p) return NULL;
    if (len) memcpy(p, s, len);
    p[len] = 0;
    return p;
}

static onyx_status *set_string(onyx_string *dst, const char *s, size_t len) {
    char *p = dup_bytes(s, len);
    if (!p) return ONYX_OOM();
    free(dst->data);
    dst->data = p;
    dst->len = len;
    return NULL;
}

/* The string as a C string (strings may hold NULs or lack a terminator
 * when built by hand), trimmed of surrounding blanks, in buf when it fits. */
static const char *string_text(const onyx_string *s, char *buf, size_t cap, char **heap) {
    const char *p = s->data ? s->data : "";
    size_t len = s->data ? s->len : 0;
    while (len && isspace((unsigned char)*p)) p++, len--;
    while (len && isspace((unsigned char)p[len - 1])) len--;
    *heap = NULL;
    if (len < cap) {
        memcpy(buf, p, len);
        buf[len] = 0;
        return buf;
    }
    *heap = dup_bytes(p, len);
    return *heap;
}

static onyx_status *bad_string(const onyx_string *s, int64_t i, int dt) {
    int len = s->len > 64 ? 64 : (int)s->len;
    return ONYX_INVALID_ARG("input string %lld ('%.*s%s') is not a %s number", (long long)i, len,
                            s->data ? s->data : "", s->len > 64 ? "..." : "", onyx_dtype_name(dt));
}

/* Parse as a double: plain and scientific notation, INF/+INF/-INF/NaN in
 * any case (strtod accepts all of them). */
static bool parse_double(const char *t, double *out) {
    if (!*t) return false;
    char *end;
    errno = 0;
    double v = strtod(t, &end);
    if (*end) return false;
    *out = v; /* ERANGE still gives the correctly rounded +-HUGE_VAL or 0 */
    return true;
}

/* Parse for an integer destination: exact as an integer when it is one,
 * else as a float truncated toward zero ("100.5" -> 100). */
static bool parse_int(const char *t, bool is_unsigned, int64_t *out) {
    if (!*t) return false;
    char *end;
    errno = 0;
    if (is_unsigned && *t != '-') {
        unsigned long long u = strtoull(t, &end, 10);
        if (!*end && errno != ERANGE) {
            *out = (int64_t)u;
            return true;
        }
    } else {
        long long v = strtoll(t, &end, 10);
        if (!*end && errno != ERANGE) {
            *out = v;
            return true;
        }
    }
    double d;
    if (!parse_double(t, &d)) return false;
    *out = is_unsigned ? (int64_t)onyx_f64_to_u64_safe(d) : onyx_f64_to_i64_safe(d);
    return true;
}

static onyx_status *strings_to_numbers(const onyx_string *s, int ddt, void *dst, int64_t n,
                                       const cast_opts *o) {
    bool ints = is_integral(ddt) && ddt != ONYX_BOOL;
    bool is_unsigned = ints && !onyx_dtype(ddt)->is_signed;
    for (int64_t i0 = 0; i0 < n; i0 += CAST_CHUNK) {
        int cnt = (int)(n - i0 < CAST_CHUNK ? n - i0 : CAST_CHUNK);
        int64_t iv[CAST_CHUNK];
        double dv[CAST_CHUNK];
        for (int k = 0; k < cnt; k++) {
            char buf[128], *heap;
            const char *t = string_text(&s[i0 + k], buf, sizeof buf, &heap);
            if (!t) return ONYX_OOM();
            bool ok;
            if (ints) {
                ok = parse_int(t, is_unsigned, &iv[k]);
            } else if (ddt == ONYX_BOOL && (!strcasecmp(t, "true") || !strcasecmp(t, "false"))) {
                dv[k] = !strcasecmp(t, "true");
                ok = true;
            } else {
                ok = parse_double(t, &dv[k]);
            }
            free(heap);
            if (!ok) return bad_string(&s[i0 + k], i0 + k, ddt);
        }
        if (ints) narrow_i64(ddt, iv, cnt, dst, i0);
        else narrow_f64(ddt, dv, cnt, dst, i0, o);
    }
    return NULL;
}

/* True if v, written with `digits` significant digits, reads back to the
 * same value of type dt. */
static bool reads_back(int dt, double v, const char *text) {
    double r = strtod(text, NULL);
    switch (dt) {
    case ONYX_DOUBLE: return r == v;
    case ONYX_FLOAT: return (float)r == (float)v;
    case ONYX_FLOAT16: return onyx_f64_to_f16(r) == onyx_f64_to_f16(v);
    case ONYX_BFLOAT16: return onyx_f64_to_bf16(r) == onyx_f64_to_bf16(v);
    case ONYX_FLOAT4E2M1: return onyx_f64_to_f4(r, true) == onyx_f64_to_f4(v, true);
    default: return onyx_f64_to_f8(dt, r, true) == onyx_f64_to_f8(dt, v, true);
    }
}

/* numpy's str() of a float scalar: the shortest digits that read back,
 * positional when 1e-4 <= |v| < 1e16 (with ".0" for whole numbers),
 * scientific otherwise ("1e-05", "2.5e+20"). */
static void format_float(int dt, double v, char *out, size_t cap) {
    if (isnan(v)) {
        snprintf(out, cap, "nan");
        return;
    }
    if (isinf(v)) {
        snprintf(out, cap, v < 0 ? "-inf" : "inf");
        return;
    }
    if (v == 0) {
        snprintf(out, cap, signbit(v) ? "-0.0" : "0.0");
        return;
    }
    char sci[40];
    for (int p = 1; p <= 17; p++) {
        snprintf(sci, sizeof sci, "%.*e", p - 1, v);
        if (reads_back(dt, v, sci)) break;
    }
    /* split "-d.ddde+XX" into sign, digits and exponent */
    const char *q = sci;
    bool neg = *q == '-';
    if (neg) q++;
    char digits[24];
    int nd = 0;
    for (; *q && *q != 'e'; q++)
        if (isdigit((unsigned char)*q) && nd < 23) digits[nd++] = *q;
    while (nd > 1 && digits[nd - 1] == '0') nd--; /* %.*e may pad */
    digits[nd] = 0;
    int exp10 = *q == 'e' ? atoi(q + 1) : 0;
    double a = fabs(v);
    char body[64];
    size_t b = 0;
    if (a >= 1e-4 && a < 1e16) {
        if (exp10 >= 0) {
            for (int k = 0; k <= exp10; k++) body[b++] = k < nd ? digits[k] : '0';
            body[b++] = '.';
            if (nd > exp10 + 1)
                for (int k = exp10 + 1; k < nd; k++) body[b++] = digits[k];
            else
                body[b++] = '0';
        } else {
            body[b++] = '0';
            body[b++] = '.';
            for (int k = 0; k < -exp10 - 1; k++) body[b++] = '0';
            for (int k = 0; k < nd; k++) body[b++] = digits[k];
        }
        body[b] = 0;
    } else {
        body[b++] = digits[0];
        if (nd > 1) {
            body[b++] = '.';
            for (int k = 1; k < nd; k++) body[b++] = digits[k];
        }
        snprintf(body + b, sizeof body - b, "e%c%02d", exp10 < 0 ? '-' : '+', abs(exp10));
    }
    snprintf(out, cap, "%s%s", neg ? "-" : "", body);
}

static onyx_status *numbers_to_strings(int sdt, const void *src, onyx_string *d, int64_t n) {
    bool ints = is_integral(sdt) && sdt != ONYX_BOOL;
    for (int64_t i0 = 0; i0 < n; i0 += CAST_CHUNK) {
        int cnt = (int)(n - i0 < CAST_CHUNK ? n - i0 : CAST_CHUNK);
        int64_t iv[CAST_CHUNK];
        double dv[CAST_CHUNK];
        if (ints) widen_i64(sdt, src, i0, cnt, iv);
        else widen_f64(sdt, src, i0, cnt, dv);
        for (int k = 0; k < cnt; k++) {
            char text[64];
            if (sdt == ONYX_UINT64) snprintf(text, sizeof text, "%llu", (unsigned long long)iv[k]);
            else if (ints) snprintf(text, sizeof text, "%lld", (long long)iv[k]);
            else if (sdt == ONYX_BOOL) snprintf(text, sizeof text, "%s", dv[k] ? "True" : "False");
            else format_float(sdt, dv[k], text, sizeof text);
            ONYX_TRY(set_string(&d[i0 + k], text, strlen(text)));
        }
    }
    return NULL;
}

/* ---------------------------------------------------------------- kernel */

static onyx_status *parse_round_mode(const onyx_kernel_ctx *ctx, int *mode) {
    const char *rm = onyx_attr_string(ctx->node, "round_mode", "up");
    if (!strcmp(rm, "up")) *mode = ONYX_E8M0_ROUND_UP;
    else if (!strcmp(rm, "down")) *mode = ONYX_E8M0_ROUND_DOWN;
    else if (!strcmp(rm, "nearest")) *mode = ONYX_E8M0_ROUND_NEAREST;
    else
        return ONYX_INVALID_ARG("attribute round_mode is '%s'; expected 'up', 'down' or 'nearest'",
                                rm);
    return NULL;
}

static onyx_status *cast_run(onyx_kernel_ctx *ctx, int to) {
    const onyx_value *x = ctx->n_in ? ctx->in[0] : NULL;
    if (!onyx_is_tensor(x)) return ONYX_INVALID_ARG("input 0 (input) must be a tensor");
    if (!onyx_cast_supported(x->dtype))
        return ONYX_INVALID_ARG("cannot cast from element type %s", onyx_dtype_name(x->dtype));
    if (!onyx_cast_supported(to))
        return ONYX_INVALID_ARG("cannot cast to element type %d (%s)", to, onyx_dtype_name(to));
    cast_opts o = {onyx_attr_int(ctx->node, "saturate", 1) != 0, ONYX_E8M0_ROUND_UP};
    ONYX_TRY(parse_round_mode(ctx, &o.round_mode));
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, to, x->rank, x->dims, &y));
    int64_t n = x->numel;
    if (n == 0) return NULL;
    if (!x->data || !y->data) return ONYX_RUNTIME_ERROR("Cast: tensor without data");
    if (x->dtype == ONYX_STRING && to == ONYX_STRING) {
        const onyx_string *s = x->data;
        onyx_string *d = y->data;
        for (int64_t i = 0; i < n; i++)
            ONYX_TRY(set_string(&d[i], s[i].data ? s[i].data : "", s[i].data ? s[i].len : 0));
        return NULL;
    }
    if (x->dtype == ONYX_STRING) return strings_to_numbers(x->data, to, y->data, n, &o);
    if (to == ONYX_STRING) return numbers_to_strings(x->dtype, x->data, y->data, n);
    onyx_cast_elements(x->dtype, x->data, to, y->data, n, o.saturate, o.round_mode, ctx->tp);
    return NULL;
}

static onyx_status *cast_compute(onyx_kernel_ctx *ctx) {
    int to;
    ONYX_TRY(onyx_cast_cast_target(ctx->node, &to));
    return cast_run(ctx, to);
}

static onyx_status *castlike_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *t = ctx->n_in > 1 ? ctx->in[1] : NULL;
    if (!onyx_is_tensor(t)) return ONYX_INVALID_ARG("input 1 (target_type) must be a tensor");
    return cast_run(ctx, t->dtype);
}

#define CAST_TYPES_1 (ONYX_T_NUMERIC & ~ONYX_T(ONYX_BFLOAT16)) | ONYX_T(ONYX_BOOL)
#define CAST_TYPES_ALL (ONYX_T_ALL & ~(ONYX_T(ONYX_COMPLEX64) | ONYX_T(ONYX_COMPLEX128)))

const onyx_op_def onyx_ops_cast[] = {
    {"", "Cast", 1, 5, CAST_TYPES_1, 0, NULL, NULL, cast_compute},
    {"", "Cast", 6, ONYX_OPSET_LATEST, CAST_TYPES_ALL, 0, NULL, NULL, cast_compute},
    {"", "CastLike", 15, ONYX_OPSET_LATEST, CAST_TYPES_ALL, 0, NULL, NULL, castlike_compute},
    {0},};
