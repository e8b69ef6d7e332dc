/* Elementwise operators: arithmetic (Add, Sub, Mul, Div, Pow, Mod), unary
 * math (Neg, Abs, Sqrt, Exp, Log, Erf, trigonometry, rounding ...),
 * comparisons, logical and bitwise operators, Where, and the variadic Sum,
 * Max, Min, Mean.
 *
 * Structure
 *   - Every operator is an expression of x (and y) written once and
 *     instantiated per C type by the type-list macros below, giving one
 *     "row" function per (operator, type) and a table indexed by dtype.
 *   - A row processes n output elements whose inputs are each either
 *     contiguous (stride 1) or one broadcast value (stride 0), so the
 *     common cases (same shapes, a scalar operand, a suffix broadcast
 *     such as a bias over the last axis) are a single flat loop the
 *     compiler vectorises.
 *   - A broadcast plan (ew_plan) collapses the output shape into as few
 *     dimensions as possible (adjacent axes with the same broadcast pattern
 *     merge), and walks any range of output elements row by row; large
 *     outputs are split across the thread pool in ranges of >= 16K.
 *   - float16/bfloat16 (and float8 for IsNaN/IsInf) are computed in float:
 *     each row's inputs are converted in small chunks on the stack and the
 *     result rounded back, so no tensor-sized temporaries are needed.
 *   - Opset < 7 binary operators use the old unidirectional broadcast
 *     (attributes broadcast/axis) via an equivalent aligned shape for B.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype_ext.h"
#include "providers/cpu/kernel.h"
#include "providers/cpu/kernels/minimal_keep.h"
#include "providers/cpu/kernels/math/elementwise_impl.h"
#include "providers/cpu/kernels/nn_math.h"

#define EW_MAX_IN 3

/* ------------------------------------------------------------ row types */

typedef struct ew_row_args {
    const void *in[EW_MAX_IN];
    int64_t s[EW_MAX_IN]; /* element stride of each input in the row: 0 or 1 */
    void *params;
} ew_row_args;

/* n output elements; inputs per args */
typedef void (*ew_row_fn)(void *out, const ew_row_args *a, int64_t n);
/* n contiguous elements */
typedef void (*ew_unary_fn)(void *out, const void *x, int64_t n);

/* Branch-free select for floats: gcc does not if-convert a float ?: in a
 * loop under -ftrapping-math, and the branch stops vectorisation. */
static inline float ew_self(int c, float a, float b) {
    uint32_t ua, ub, m = (uint32_t)0 - (uint32_t)(c != 0);
    memcpy(&ua, &a, 4);
    memcpy(&ub, &b, 4);
    ua = (ua & m) | (ub & ~m);
    memcpy(&a, &ua, 4);
    return a;
}
static inline double ew_seld(int c, double a, double b) {
    uint64_t ua, ub, m = (uint64_t)0 - (uint64_t)(c != 0);
    memcpy(&ua, &a, 8);
    memcpy(&ub, &b, 8);
    ua = (ua & m) | (ub & ~m);
    memcpy(&a, &ua, 8);
    return a;
}
#define EW_FSEL(c, a, b) _Generic((a), float: ew_self, default: ew_seld)((c), (a), (b))
/* libm function for the type of x: EW_M(sqrt, x) is sqrtf(x) for float */
#define EW_M(fn, x) _Generic((x), float: fn##f, default: fn)(x)
#define EW_M2(fn, x, y) _Generic((x), float: fn##f, default: fn)((x), (y))

/* Binary row: TA x, TB y -> TO. T and UT name the input type and its
 * wrap-around arithmetic type (unsigned, at least int-sized) for EXPR.
 * The loops live in helpers whose pointers are restrict parameters: gcc
 * only trusts restrict there, and needs it to vectorise without runtime
 * alias checks (which its -O2 cost model does not allow). */
#define EW_BINARY_ROW(NAME, TA, TB, TO, UTA, EXPR)                                     \
    static inline void NAME##_vv(TO *restrict o, const TA *restrict pa,                \
                                 const TB *restrict pb, size_t n) {                    \
        typedef TA T __attribute__((unused));                                          \
        typedef UTA UT __attribute__((unused));                                        \
        EW_LOOP(n, const TA x = pa[i]; const TB y = pb[i]; (void)x; (void)y; o[i] = (EXPR)); \
    }                                                                                  \
    static inline void NAME##_sv(TO *restrict o, const TA x, const TB *restrict pb,    \
                                 size_t n) {                                           \
        typedef TA T __attribute__((unused));                                          \
        typedef UTA UT __attribute__((unused));                                        \
        (void)x;                                                                       \
        EW_LOOP(n, const TB y = pb[i]; (void)y; o[i] = (EXPR));                        \
    }                                                                                  \
    static inline void NAME##_vs(TO *restrict o, const TA *restrict pa, const TB y,    \
                                 size_t n) {                                           \
        typedef TA T __attribute__((unused));                                          \
        typedef UTA UT __attribute__((unused));                                        \
        (void)y;                                                                       \
        EW_LOOP(n, const TA x = pa[i]; (void)x; o[i] = (EXPR));                        \
    }                                                                                  \
    static void NAME(void *out, const ew_row_args *a, int64_t n) {                     \
        if (a->s[0] && a->s[1]) {                                                      \
            NAME##_vv(out, a->in[0], a->in[1], (size_t)n);                             \
        } else if (a->s[1]) {                                                          \
            NAME##_sv(out, *(const TA *)a->in[0], a->in[1], (size_t)n);                \
        } else if (a->s[0]) {                                                          \
            NAME##_vs(out, a->in[0], *(const TB *)a->in[1], (size_t)n);                \
        } else { /* both broadcast: one value */                                       \
            TO v;                                                                      \
            NAME##_vs(&v, a->in[0], *(const TB *)a->in[1], 1);                         \
            TO *o = out;                                                               \
            for (int64_t i = 0; i < n; i++) o[i] = v;                                  \
        }                                                                              \
    }

#define EW_UNARY_ROW(NAME, TA, TO, UTA, EXPR)                                          \
    static void NAME##_v(TO *restrict o, const TA *restrict px, size_t n) {            \
        typedef TA T __attribute__((unused));                                          \
        typedef UTA UT __attribute__((unused));                                        \
        EW_LOOP(n, const TA x = px[i]; o[i] = (EXPR));                                 \
    }                                                                                  \
    static void NAME(void *out, const void *in, int64_t n) { NAME##_v(out, in, (size_t)n); }

/* In-place accumulation for the variadic operators: o = EXPR(o, y), the
 * output being the running result (never an input of the node, so it
 * cannot alias y). */
#define EW_ACC_ROW(NAME, TA, UTA, EXPR)                                                \
    static void NAME##_av(TA *restrict o, const TA *restrict pb, size_t n) {           \
        typedef TA T __attribute__((unused));                                          \
        typedef UTA UT __attribute__((unused));                                        \
        EW_LOOP(n, const TA x = o[i]; const TA y = pb[i]; o[i] = (EXPR));              \
    }                                                                                  \
    static void NAME##_as(TA *restrict o, const TA y, size_t n) {                      \
        typedef TA T __attribute__((unused));                                          \
        typedef UTA UT __attribute__((unused));                                        \
        EW_LOOP(n, const TA x = o[i]; o[i] = (EXPR));                                  \
    }                                                                                  \
    static void NAME(void *out, const ew_row_args *a, int64_t n) {                     \
        if (a->s[1]) NAME##_av(out, a->in[1], (size_t)n);                              \
        else NAME##_as(out, *(const TA *)a->in[1], (size_t)n);                         \
    }

/* Type lists: X(C type, suffix, dtype, wrap type, ...) */
#define EW_FLOATS(X, ...)                                  \
    X(float, f32, ONYX_FLOAT, float, __VA_ARGS__)          \
    X(double, f64, ONYX_DOUBLE, double, __VA_ARGS__)
#define EW_SINTS(X, ...)                                   \
    X(int8_t, i8, ONYX_INT8, uint32_t, __VA_ARGS__)        \
    X(int16_t, i16, ONYX_INT16, uint32_t, __VA_ARGS__)     \
    X(int32_t, i32, ONYX_INT32, uint32_t, __VA_ARGS__)     \
    X(int64_t, i64, ONYX_INT64, uint64_t, __VA_ARGS__)
#define EW_UINTS(X, ...)                                   \
    X(uint8_t, u8, ONYX_UINT8, uint32_t, __VA_ARGS__)      \
    X(uint16_t, u16, ONYX_UINT16, uint32_t, __VA_ARGS__)   \
    X(uint32_t, u32, ONYX_UINT32, uint32_t, __VA_ARGS__)   \
    X(uint64_t, u64, ONYX_UINT64, uint64_t, __VA_ARGS__)
#define EW_BOOLS(X, ...) X(uint8_t, b8, ONYX_BOOL, uint32_t, __VA_ARGS__)
#define EW_INTS(X, ...) EW_SINTS(X, __VA_ARGS__) EW_UINTS(X, __VA_ARGS__)
#define EW_NUMS(X, ...) EW_FLOATS(X, __VA_ARGS__) EW_INTS(X, __VA_ARGS__)

#define DEF_BIN(T_, sfx, DT, UT_, op, EXPR) EW_BINARY_ROW(op##_##sfx, T_, T_, T_, UT_, EXPR)
#define DEF_CMP(T_, sfx, DT, UT_, op, EXPR) EW_BINARY_ROW(op##_##sfx, T_, T_, uint8_t, UT_, EXPR)
#define DEF_UN(T_, sfx, DT, UT_, op, EXPR) EW_UNARY_ROW(op##_##sfx, T_, T_, UT_, EXPR)
#define DEF_ACC(T_, sfx, DT, UT_, op, EXPR) EW_ACC_ROW(op##_##sfx, T_, UT_, EXPR)
#define DEF_UN_BOOL(T_, sfx, DT, UT_, op, EXPR) EW_UNARY_ROW(op##_##sfx, T_, uint8_t, UT_, EXPR)
#define ROW_ENTRY(T_, sfx, DT, UT_, op, ...) [DT] = ONYX_TYPE_FN(DT, op##_##sfx),

/* ------------------------------------------------------- binary rows */

/* Integer arithmetic wraps (two's complement) instead of overflowing,
 * which would be undefined in C: compute in the unsigned type UT. */
#define WRAP(op) (T)((UT)x op (UT)y)

EW_NUMS(DEF_BIN, add, WRAP(+))
EW_NUMS(DEF_BIN, sub, WRAP(-))
EW_NUMS(DEF_BIN, mul, WRAP(*))
EW_FLOATS(DEF_BIN, div, x / y)
/* zero divisors are rejected before the rows run; INT_MIN / -1 wraps */
EW_SINTS(DEF_BIN, div, y == -1 ? (T)(0 - (UT)x) : (T)(x / y))
EW_UINTS(DEF_BIN, div, x / y)
static const ew_row_fn add_rows[ONYX_DTYPE_COUNT] = {EW_NUMS(ROW_ENTRY, add)};
EW_NUMS(DEF_ACC, acc_add, WRAP(+))
static const ew_row_fn acc_add_rows[ONYX_DTYPE_COUNT] = {EW_NUMS(ROW_ENTRY, acc_add)};
static const ew_row_fn sub_rows[ONYX_DTYPE_COUNT] = {EW_NUMS(ROW_ENTRY, sub)};
static const ew_row_fn mul_rows[ONYX_DTYPE_COUNT] = {EW_NUMS(ROW_ENTRY, mul)};
static const ew_row_fn div_rows[ONYX_DTYPE_COUNT] = {EW_NUMS(ROW_ENTRY, div)};

/* Mod: fmod=1 is C's remainder (sign of the dividend), fmod=0 is Python's
 * (sign of the divisor). */
static inline float ew_pymodf(float x, float y) {
    float r = fmodf(x, y);
    return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r;
}
static inline double ew_pymod(double x, double y) {
    double r = fmod(x, y);
    return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r;
}
#define INT_FMOD (y == -1 ? (T)0 : (T)(x % y))
#define INT_PYMOD ({ T r_ = INT_FMOD; (r_ != 0 && ((r_ < 0) != (y < 0))) ? (T)(r_ + y) : r_; })
EW_FLOATS(DEF_BIN, fmod, EW_M2(fmod, x, y))
EW_SINTS(DEF_BIN, fmod, INT_FMOD)
EW_UINTS(DEF_BIN, fmod, (T)(x % y))
EW_FLOATS(DEF_BIN, pymod, EW_M2(ew_pymod, x, y))
EW_SINTS(DEF_BIN, pymod, INT_PYMOD)
EW_UINTS(DEF_BIN, pymod, (T)(x % y))
static const ew_row_fn fmod_rows[ONYX_DTYPE_COUNT] = {EW_NUMS(ROW_ENTRY, fmod)};
static const ew_row_fn pymod_rows[ONYX_DTYPE_COUNT] = {EW_NUMS(ROW_ENTRY, pymod)};

/* Max/Min propagate NaN (as numpy's maximum/minimum do) */
EW_FLOATS(DEF_BIN, max, EW_FSEL(x > y || x != x, x, y))
EW_INTS(DEF_BIN, max, x > y ? x : y)
EW_FLOATS(DEF_BIN, min, EW_FSEL(x < y || x != x, x, y))
EW_INTS(DEF_BIN, min, x < y ? x : y)
static const ew_row_fn max_rows[ONYX_DTYPE_COUNT] = {EW_NUMS(ROW_ENTRY, max)};
static const ew_row_fn min_rows[ONYX_DTYPE_COUNT] = {EW_NUMS(ROW_ENTRY, min)};
EW_FLOATS(DEF_ACC, acc_max, EW_FSEL(x > y || x != x, x, y))
EW_INTS(DEF_ACC, acc_max, x > y ? x : y)
EW_FLOATS(DEF_ACC, acc_min, EW_FSEL(x < y || x != x, x, y))
EW_INTS(DEF_ACC, acc_min, x < y ? x : y)
static const ew_row_fn acc_max_rows[ONYX_DTYPE_COUNT] = {EW_NUMS(ROW_ENTRY, acc_max)};
static const ew_row_fn acc_min_rows[ONYX_DTYPE_COUNT] = {EW_NUMS(ROW_ENTRY, acc_min)};

/* comparisons (bool compares as 0/1 bytes) */
EW_NUMS(DEF_CMP, eq, x == y)
EW_BOOLS(DEF_CMP, eq, (x != 0) == (y != 0))
EW_NUMS(DEF_CMP, lt, x < y)
EW_BOOLS(DEF_CMP, lt, (x != 0) < (y != 0))
EW_NUMS(DEF_CMP, gt, x > y)
EW_BOOLS(DEF_CMP, gt, (x != 0) > (y != 0))
EW_NUMS(DEF_CMP, le, x <= y)
EW_BOOLS(DEF_CMP, le, (x != 0) <= (y != 0))
EW_NUMS(DEF_CMP, ge, x >= y)
EW_BOOLS(DEF_CMP, ge, (x != 0) >= (y != 0))

static void eq_str(void *out_, const ew_row_args *a, int64_t n) {
    uint8_t *o = out_;
    const onyx_string *x = a->in[0], *y = a->in[1];
    for (int64_t i = 0; i < n; i++) {
        const onyx_string *p = &x[i * a->s[0]], *q = &y[i * a->s[1]];
        size_t lp = p->data ? p->len : 0, lq = q->data ? q->len : 0;
        o[i] = lp == lq && (lp == 0 || memcmp(p->data, q->data, lp) == 0);
    }
}

static const ew_row_fn eq_rows[ONYX_DTYPE_COUNT] = {
    EW_NUMS(ROW_ENTRY, eq) EW_BOOLS(ROW_ENTRY, eq)[ONYX_STRING] = eq_str};
static const ew_row_fn lt_rows[ONYX_DTYPE_COUNT] = {EW_NUMS(ROW_ENTRY, lt) EW_BOOLS(ROW_ENTRY, lt)};
static const ew_row_fn gt_rows[ONYX_DTYPE_COUNT] = {EW_NUMS(ROW_ENTRY, gt) EW_BOOLS(ROW_ENTRY, gt)};
static const ew_row_fn le_rows[ONYX_DTYPE_COUNT] = {EW_NUMS(ROW_ENTRY, le) EW_BOOLS(ROW_ENTRY, le)};
static const ew_row_fn ge_rows[ONYX_DTYPE_COUNT] = {EW_NUMS(ROW_ENTRY, ge) EW_BOOLS(ROW_ENTRY, ge)};

/* logical (bool) */
EW_BOOLS(DEF_BIN, and, (T)((x != 0) & (y != 0)))
EW_BOOLS(DEF_BIN, or, (T)((x != 0) | (y != 0)))
EW_BOOLS(DEF_BIN, xor, (T)((x != 0) ^ (y != 0)))
static const ew_row_fn and_rows[ONYX_DTYPE_COUNT] = {EW_BOOLS(ROW_ENTRY, and)};
static const ew_row_fn or_rows[ONYX_DTYPE_COUNT] = {EW_BOOLS(ROW_ENTRY, or)};
static const ew_row_fn xor_rows[ONYX_DTYPE_COUNT] = {EW_BOOLS(ROW_ENTRY, xor)};

/* bitwise (integers) */
EW_INTS(DEF_BIN, band, (T)(x & y))
EW_INTS(DEF_BIN, bor, (T)(x | y))
EW_INTS(DEF_BIN, bxor, (T)(x ^ y))
static const ew_row_fn band_rows[ONYX_DTYPE_COUNT] = {EW_INTS(ROW_ENTRY, band)};
static const ew_row_fn bor_rows[ONYX_DTYPE_COUNT] = {EW_INTS(ROW_ENTRY, bor)};
static const ew_row_fn bxor_rows[ONYX_DTYPE_COUNT] = {EW_INTS(ROW_ENTRY, bxor)};

/* BitShift (unsigned): shifting by the width or more gives 0 (C would be
 * undefined) */
#define SHIFT_OK (y < (T)(sizeof(T) * 8))
EW_UINTS(DEF_BIN, shl, SHIFT_OK ? (T)((UT)x << (y & (sizeof(T) * 8 - 1))) : (T)0)
EW_UINTS(DEF_BIN, shr, SHIFT_OK ? (T)(x >> (y & (sizeof(T) * 8 - 1))) : (T)0)
static const ew_row_fn shl_rows[ONYX_DTYPE_COUNT] = {EW_UINTS(ROW_ENTRY, shl)};
static const ew_row_fn shr_rows[ONYX_DTYPE_COUNT] = {EW_UINTS(ROW_ENTRY, shr)};

/* ------------------------------------------------------------ Pow rows */

/* Integer power with wrap-around; negative exponents give the truncated
 * integer result (0 unless |x| == 1). */
static inline int64_t ew_ipow(int64_t x, int64_t y) {
    if (y < 0) {
        if (x == 1) return 1;
        if (x == -1) return (y & 1) ? -1 : 1;
        return 0;
    }
    uint64_t r = 1, b = (uint64_t)x;
    uint64_t e = (uint64_t)y;
    while (e) {
        if (e & 1) r *= b;
        b *= b;
        e >>= 1;
    }
    return (int64_t)r;
}

EW_FLOATS(DEF_BIN, pow, EW_M2(pow, x, y))
EW_BINARY_ROW(pow_i32_i64, int32_t, int64_t, int32_t, uint32_t, (int32_t)ew_ipow(x, y))
EW_BINARY_ROW(pow_i64_i64, int64_t, int64_t, int64_t, uint64_t, ew_ipow(x, y))
EW_BINARY_ROW(pow_i32_f64, int32_t, double, int32_t, uint32_t,
              (int32_t)onyx_f64_to_i64_safe(pow((double)x, y)))
EW_BINARY_ROW(pow_i64_f64, int64_t, double, int64_t, uint64_t,
              onyx_f64_to_i64_safe(pow((double)x, y)))
/* a constant exponent of 2 or 3 (x^2 in layer norms, x^3 in GELU) is a
 * product the compiler vectorises */
EW_FLOATS(DEF_BIN, pow2, x * x)
EW_FLOATS(DEF_BIN, pow3, x * x * x)
EW_FLOATS(DEF_BIN, pow1, x)
static const ew_row_fn pow_float_rows[ONYX_DTYPE_COUNT] = {EW_FLOATS(ROW_ENTRY, pow)};

/* ------------------------------------------------------------ unary rows */

/* exp for float: nn_math.h's branch-free polynomial (libm's expf is a call
 * per element), shared with Sigmoid, Softmax and the activations */
static inline float ew_expf(float x) { return nn_expf(x); }
static inline double ew_exp(double x) { return exp(x); }

/* erf for float: nn_math.h's rational approximation, shared with Gelu */
static inline float ew_erff(float x) { return nn_erff(x); }
static inline double ew_erf(double x) { return erf(x); }

EW_FLOATS(DEF_UN, neg, -x)
EW_SINTS(DEF_UN, neg, (T)(0 - (UT)x))
EW_FLOATS(DEF_UN, abs, EW_M(fabs, x))
EW_SINTS(DEF_UN, abs, x < 0 ? (T)(0 - (UT)x) : x)
EW_UINTS(DEF_UN, abs, x)
EW_FLOATS(DEF_UN, recip, (T)1 / x)
EW_FLOATS(DEF_UN, sqrt, EW_M(sqrt, x))
EW_FLOATS(DEF_UN, exp, EW_M(ew_exp, x))
EW_FLOATS(DEF_UN, log, EW_M(log, x))
EW_FLOATS(DEF_UN, floor, EW_M(floor, x))
EW_FLOATS(DEF_UN, ceil, EW_M(ceil, x))
EW_FLOATS(DEF_UN, round, EW_M(nearbyint, x)) /* half to even in the default rounding mode */
EW_FLOATS(DEF_UN, sign, x > 0 ? (T)1 : (x < 0 ? (T)-1 : x)) /* 0 and NaN map to themselves */
EW_SINTS(DEF_UN, sign, (T)((x > 0) - (x < 0)))
EW_UINTS(DEF_UN, sign, (T)(x > 0))
EW_FLOATS(DEF_UN, erf, EW_M(ew_erf, x))
EW_INTS(DEF_UN, erf, (T)erf((double)x)) /* Erf-9 allows integers; |erf| <= 1 */
EW_FLOATS(DEF_UN, sin, EW_M(sin, x))
EW_FLOATS(DEF_UN, cos, EW_M(cos, x))
EW_FLOATS(DEF_UN, tan, EW_M(tan, x))
EW_FLOATS(DEF_UN, asin, EW_M(asin, x))
EW_FLOATS(DEF_UN, acos, EW_M(acos, x))
EW_FLOATS(DEF_UN, atan, EW_M(atan, x))
EW_FLOATS(DEF_UN, sinh, EW_M(sinh, x))
EW_FLOATS(DEF_UN, cosh, EW_M(cosh, x))
EW_FLOATS(DEF_UN, asinh, EW_M(asinh, x))
EW_FLOATS(DEF_UN, acosh, EW_M(acosh, x))
EW_FLOATS(DEF_UN, atanh, EW_M(atanh, x))
EW_BOOLS(DEF_UN, not, (T)(x == 0))
EW_INTS(DEF_UN, bnot, (T)~x)
EW_FLOATS(DEF_UN_BOOL, isnan, x != x)
EW_FLOATS(DEF_UN_BOOL, isinf, x == (T)INFINITY || x == -(T)INFINITY)
EW_FLOATS(DEF_UN_BOOL, isposinf, x == (T)INFINITY)
EW_FLOATS(DEF_UN_BOOL, isneginf, x == -(T)INFINITY)
EW_FLOATS(DEF_UN_BOOL, isnone, (x == x) & 0)

#define UTABLE(name, LIST) \
    static const ew_unary_fn name##_urows[ONYX_DTYPE_COUNT] = {LIST(ROW_ENTRY, name)};
#define FLOATS_AND_SINTS(X, ...) EW_FLOATS(X, __VA_ARGS__) EW_SINTS(X, __VA_ARGS__)
UTABLE(neg, FLOATS_AND_SINTS)
UTABLE(abs, EW_NUMS)
UTABLE(recip, EW_FLOATS)
UTABLE(sqrt, EW_FLOATS)
UTABLE(exp, EW_FLOATS)
UTABLE(log, EW_FLOATS)
UTABLE(floor, EW_FLOATS)
UTABLE(ceil, EW_FLOATS)
UTABLE(round, EW_FLOATS)
UTABLE(sign, EW_NUMS)
UTABLE(erf, EW_NUMS)
UTABLE(sin, EW_FLOATS)
UTABLE(cos, EW_FLOATS)
UTABLE(tan, EW_FLOATS)
UTABLE(asin, EW_FLOATS)
UTABLE(acos, EW_FLOATS)
UTABLE(atan, EW_FLOATS)
UTABLE(sinh, EW_FLOATS)
UTABLE(cosh, EW_FLOATS)
UTABLE(asinh, EW_FLOATS)
UTABLE(acosh, EW_FLOATS)
UTABLE(atanh, EW_FLOATS)
UTABLE(not, EW_BOOLS)
UTABLE(bnot, EW_INTS)
UTABLE(isnan, EW_FLOATS)
UTABLE(isinf, EW_FLOATS)
UTABLE(isposinf, EW_FLOATS)
UTABLE(isneginf, EW_FLOATS)
UTABLE(isnone, EW_FLOATS)

/* ------------------------------------------------------------ Where rows */

typedef struct ew_u128 {
    uint64_t lo, hi;
} ew_u128;
/* c ? a : b without a branch (a random condition mispredicts half the
 * time) for the integer element carriers; a struct copy for 16 bytes */
#define PICK_BITS(T, c, a, b) (T)((b) ^ (((a) ^ (b)) & ((T)0 - (T)((c) != 0))))
#define PICK_COPY(T, c, a, b) ((c) ? (a) : (b))

#define WHERE_ROW(NAME, T, PICK)                                                         \
    static void NAME##_vvv(T *restrict o, const uint8_t *restrict c, const T *restrict x, \
                           const T *restrict y, size_t n) {                            \
        EW_LOOP(n, o[i] = PICK(T, c[i], x[i], y[i]));                                  \
    }                                                                                  \
    static void NAME(void *out, const ew_row_args *a, int64_t n) {                     \
        const int64_t sc = a->s[0], sx = a->s[1], sy = a->s[2];                        \
        if (sc && sx && sy) {                                                          \
            NAME##_vvv(out, a->in[0], a->in[1], a->in[2], (size_t)n);                  \
            return;                                                                    \
        }                                                                              \
        T *o = out;                                                                    \
        const uint8_t *c = a->in[0];                                                   \
        const T *x = a->in[1], *y = a->in[2];                                          \
        for (int64_t i = 0; i < n; i++) o[i] = PICK(T, c[i * sc], x[i * sx], y[i * sy]); \
    }
WHERE_ROW(where_1, uint8_t, PICK_BITS)
WHERE_ROW(where_2, uint16_t, PICK_BITS)
WHERE_ROW(where_4, uint32_t, PICK_BITS)
WHERE_ROW(where_8, uint64_t, PICK_BITS)
WHERE_ROW(where_16, ew_u128, PICK_COPY)

/* Strings are copied; an allocation failure is flagged in params. */
static void where_str(void *out_, const ew_row_args *a, int64_t n) {
    onyx_string *o = out_;
    const uint8_t *c = a->in[0];
    const onyx_string *x = a->in[1], *y = a->in[2];
    bool *failed = a->params;
    for (int64_t i = 0; i < n; i++) {
        const onyx_string *s = c[i * a->s[0]] ? &x[i * a->s[1]] : &y[i * a->s[2]];
        size_t len = s->data ? s->len : 0;
        char *p = malloc(len + 1);
        if (!p) {
            *failed = true;
            return;
        }
        if (len) memcpy(p, s->data, len);
        p[len] = 0;
        free(o[i].data);
        o[i].data = p;
        o[i].len = len;
    }
}

/* ------------------------------------------------------- broadcast plan */

typedef struct ew_plan {
    int rank; /* >= 1 */
    int n_in;
    int64_t numel;
    int64_t dims[ONYX_MAX_RANK];
    int64_t strides[EW_MAX_IN][ONYX_MAX_RANK]; /* element strides, 0 = broadcast */
} ew_plan;

/* Inputs are aligned to the right of the output shape (numpy). Axes of
 * size 1 are dropped and neighbours whose strides continue each other in
 * every input merge, so equal shapes become one flat axis. */
static void plan_build(ew_plan *p, const int64_t *odims, int orank, int n_in,
                       const int64_t *const *idims, const int *iranks) {
    int64_t cstride[EW_MAX_IN][ONYX_MAX_RANK];
    for (int k = 0; k < n_in; k++) {
        int64_t s = 1;
        for (int d = iranks[k] - 1; d >= 0; d--) {
            cstride[k][d] = s;
            s *= idims[k][d];
        }
    }
    p->n_in = n_in;
    p->rank = 0;
    p->numel = 1;
    for (int d = orank - 1; d >= 0; d--) {
        int64_t size = odims[d];
        p->numel *= size;
        if (size == 1) continue;
        int64_t st[EW_MAX_IN];
        for (int k = 0; k < n_in; k++) {
            int kd = d - (orank - iranks[k]);
            st[k] = (kd < 0 || idims[k][kd] == 1) ? 0 : cstride[k][kd];
        }
        int j = p->rank - 1;
        bool merge = j >= 0;
        for (int k = 0; k < n_in && merge; k++) merge = st[k] == p->strides[k][j] * p->dims[j];
        if (merge) {
            p->dims[j] *= size;
            continue;
        }
        j = p->rank++;
        p->dims[j] = size;
        for (int k = 0; k < n_in; k++) p->strides[k][j] = st[k];
    }
    if (p->rank == 0) { /* a single element */
        p->rank = 1;
        p->dims[0] = 1;
        for (int k = 0; k < n_in; k++) p->strides[k][0] = 1;
    }
    /* collected innermost first: reverse to row-major order */
    for (int a = 0, b = p->rank - 1; a < b; a++, b--) {
        int64_t t = p->dims[a];
        p->dims[a] = p->dims[b];
        p->dims[b] = t;
        for (int k = 0; k < n_in; k++) {
            t = p->strides[k][a];
            p->strides[k][a] = p->strides[k][b];
            p->strides[k][b] = t;
        }
    }
}

typedef struct ew_job {
    const ew_plan *plan;
    ew_row_fn row;
    const void *in[EW_MAX_IN];
    size_t in_size[EW_MAX_IN]; /* bytes per element */
    void *out;
    size_t out_size;
    void *params;
} ew_job;

/* Output elements [begin, end), row by row along the innermost axis. */
static void plan_run(const ew_job *j, int64_t begin, int64_t end) {
    const ew_plan *p = j->plan;
    int r = p->rank, n_in = p->n_in;
    int64_t idx[ONYX_MAX_RANK], off[EW_MAX_IN] = {0};
    int64_t rem = begin;
    for (int d = r - 1; d >= 0; d--) {
        idx[d] = rem % p->dims[d];
        rem /= p->dims[d];
        for (int k = 0; k < n_in; k++) off[k] += idx[d] * p->strides[k][d];
    }
    ew_row_args a = {.params = j->params};
    for (int k = 0; k < n_in; k++) a.s[k] = p->strides[k][r - 1];
    const int64_t inner = p->dims[r - 1];
    for (int64_t pos = begin; pos < end;) {
        int64_t n = inner - idx[r - 1];
        if (n > end - pos) n = end - pos;
        for (int k = 0; k < n_in; k++)
            a.in[k] = (const char *)j->in[k] + off[k] * (int64_t)j->in_size[k];
        j->row((char *)j->out + pos * (int64_t)j->out_size, &a, n);
        pos += n;
        if (pos >= end) break;
        /* the row reached the end of the inner axis: carry into the outer ones */
        for (int k = 0; k < n_in; k++) off[k] -= idx[r - 1] * p->strides[k][r - 1];
        idx[r - 1] = 0;
        for (int d = r - 2; d >= 0; d--) {
            idx[d]++;
            for (int k = 0; k < n_in; k++) off[k] += p->strides[k][d];
            if (idx[d] < p->dims[d]) break;
            for (int k = 0; k < n_in; k++) off[k] -= p->dims[d] * p->strides[k][d];
            idx[d] = 0;
        }
    }
}

static void plan_range(void *arg, size_t begin, size_t end) {
    plan_run(arg, (int64_t)begin, (int64_t)end);
}

static void job_execute(onyx_threadpool *tp, const ew_job *j) {
    onyx_parallel_for(tp, (size_t)j->plan->numel, ONYX_EW_GRAIN, plan_range, (void *)j);
}

/* ----------------------------------------------------------- utilities */

static size_t elem_size(int dtype) { return onyx_dtype(dtype)->bits / 8; }

static bool is_half(int dt) { return dt == ONYX_FLOAT16 || dt == ONYX_BFLOAT16; }

static bool is_f8(int dt) {
    return dt == ONYX_FLOAT8E4M3FN || dt == ONYX_FLOAT8E4M3FNUZ || dt == ONYX_FLOAT8E5M2 ||
           dt == ONYX_FLOAT8E5M2FNUZ;
}

/* The type a table computes dtype in: itself, or float for the reduced
 * precision floats. 0 if unsupported. */
static int pick_type(int dtype, bool has_own, bool has_float, bool allow_f8) {
    if (has_own) return dtype;
    if ((is_half(dtype) || (allow_f8 && is_f8(dtype))) && has_float) return ONYX_FLOAT;
    return 0;
}
#define TABLE_TYPE(table, dt, allow_f8)                                                   \
    pick_type((dt), (dt) > 0 && (dt) < ONYX_DTYPE_COUNT && (table)[(dt)] != NULL,         \
              (table)[ONYX_FLOAT] != NULL, (allow_f8))

static onyx_status *get_input(const onyx_kernel_ctx *ctx, size_t i, const char *name,
                              const onyx_value **out) {
    const onyx_value *v = i < ctx->n_in ? ctx->in[i] : NULL;
    if (!v) return ONYX_INVALID_ARG("input %zu (%s) is missing", i, name);
    if (!onyx_is_tensor(v)) return ONYX_INVALID_ARG("input %zu (%s) must be a tensor", i, name);
    if (v->numel > 0 && !v->data) return ONYX_INVALID_ARG("input %zu (%s) has no data", i, name);
    *out = v;
    return NULL;
}

static onyx_status *unsupported_type(const onyx_kernel_ctx *ctx, size_t i, const char *name,
                                     int dtype) {
    return ONYX_NOT_IMPLEMENTED("input %zu (%s): element type %s is not supported by %s", i, name,
                                onyx_dtype_name(dtype), ctx->node ? ctx->node->op_type : "this op");
}

static onyx_status *same_type(const onyx_value *a, size_t ia, const char *na,
                              const onyx_value *b, size_t ib, const char *nb) {
    if (a->dtype == b->dtype) return NULL;
    return ONYX_INVALID_ARG("input %zu (%s) is %s but input %zu (%s) is %s", ib, nb,
                            onyx_dtype_name(b->dtype), ia, na, onyx_dtype_name(a->dtype));
}

/* Integer division/modulo: a zero divisor is an error, not a crash. */
static onyx_status *check_no_zero(const onyx_value *b, size_t idx, const char *name) {
    size_t es = elem_size(b->dtype);
    const uint8_t *p = b->data;
    for (int64_t i = 0; i < b->numel; i++) {
        bool zero = true;
        for (size_t k = 0; k < es && zero; k++) zero = p[(size_t)i * es + k] == 0;
        if (zero)
            return ONYX_INVALID_ARG("input %zu (%s) holds 0 at element %lld: integer division by zero",
                                    idx, name, (long long)i);
    }
    return NULL;
}

/* Temporary buffers released together. */
typedef struct ew_temps {
    void *p[8];
    int n;
} ew_temps;

static void temps_free(ew_temps *t) {
    for (int i = 0; i < t->n; i++) onyx_free(t->p[i]);
    t->n = 0;
}

static onyx_status *temp_alloc(ew_temps *t, int dtype, int64_t numel, void **out) {
    size_t bytes;
    if (t->n >= (int)(sizeof t->p / sizeof t->p[0])) return ONYX_RUNTIME_ERROR("too many temporaries");
    if (!onyx_dtype_nbytes(dtype, numel, &bytes)) return ONYX_INVALID_ARG("temporary size overflows");
    void *p = onyx_alloc(bytes ? bytes : 1);
    if (!p) return onyx_error(ONYX_ERR_OUT_OF_MEMORY, "out of memory allocating %zu bytes", bytes);
    t->p[t->n++] = p;
    *out = p;
    return NULL;
}

/* Rows over types the row function does not read directly (float16 in a
 * float row, an int32 exponent in an int64 Pow row): each row is converted
 * in chunks on the stack, so no tensor-sized temporary (and its page
 * faults) is needed. Inputs and outputs here are never sub-byte types. */
#define CONV_CHUNK 512

typedef struct conv_row {
    ew_row_fn row;
    void *params; /* the inner row's */
    int n_in;
    int in_dt[EW_MAX_IN], in_cdt[EW_MAX_IN];
    int out_dt, out_cdt;
} conv_row;

static void conv_row_run(void *out, const ew_row_args *a, int64_t n) {
    const conv_row *c = a->params;
    _Alignas(64) unsigned char ibuf[EW_MAX_IN][CONV_CHUNK * 8];
    _Alignas(64) unsigned char obuf[CONV_CHUNK * 8];
    const size_t osz = elem_size(c->out_dt);
    for (int64_t i0 = 0; i0 < n; i0 += CONV_CHUNK) {
        int64_t m = n - i0 < CONV_CHUNK ? n - i0 : CONV_CHUNK;
        ew_row_args b = {.params = c->params};
        for (int k = 0; k < c->n_in; k++) {
            int64_t skip = a->s[k] ? i0 * (int64_t)elem_size(c->in_dt[k]) : 0;
            const char *src = (const char *)a->in[k] + skip;
            b.s[k] = a->s[k];
            b.in[k] = src;
            if (c->in_dt[k] != c->in_cdt[k]) {
                onyx_cast_elements(c->in_dt[k], src, c->in_cdt[k], ibuf[k], a->s[k] ? m : 1, true,
                                   ONYX_E8M0_ROUND_UP, NULL);
                b.in[k] = ibuf[k];
            }
        }
        char *dst = (char *)out + i0 * (int64_t)osz;
        if (c->out_dt == c->out_cdt) {
            c->row(dst, &b, m);
        } else {
            c->row(obuf, &b, m);
            onyx_cast_elements(c->out_cdt, obuf, c->out_dt, dst, m, true, ONYX_E8M0_ROUND_UP, NULL);
        }
    }
}

/* Run `row` over the broadcast of the inputs into y. in_cdt[k] is the type
 * the row reads input k as (converted when it differs); out_cdt the type it
 * writes (rounded into y's type when it differs). */
static onyx_status *ew_exec(onyx_kernel_ctx *ctx, ew_row_fn row, int n_in,
                            const onyx_value *const *ins, const int *in_cdt,
                            const int64_t *const *shapes, const int *ranks, onyx_value *y,
                            int out_cdt, void *params, bool parallel) {
    if (y->numel == 0) return NULL;
    ew_plan plan;
    plan_build(&plan, y->dims, y->rank, n_in, shapes, ranks);
    ew_job job = {.plan = &plan, .row = row, .params = params, .out = y->data,
                  .out_size = elem_size(y->dtype)};
    conv_row conv = {.row = row, .params = params, .n_in = n_in, .out_dt = y->dtype, .out_cdt = out_cdt};
    bool convert = out_cdt != y->dtype;
    for (int k = 0; k < n_in; k++) {
        job.in[k] = ins[k]->data;
        job.in_size[k] = elem_size(ins[k]->dtype);
        conv.in_dt[k] = ins[k]->dtype;
        conv.in_cdt[k] = in_cdt[k];
        convert |= in_cdt[k] != ins[k]->dtype;
    }
    if (convert) {
        job.row = conv_row_run;
        job.params = &conv;
    }
    job_execute(parallel ? ctx->tp : NULL, &job);
    return NULL;
}

/* ------------------------------------------------------- binary driver */

/* Opset < 7: with broadcast=1, B broadcasts to A, its dims matching A's
 * starting at `axis` (default: aligned to the end). Returns B's shape
 * aligned to A's rank so the numpy machinery applies. */
static onyx_status *legacy_b_shape(const onyx_kernel_ctx *ctx, const onyx_value *a,
                                   const onyx_value *b, int64_t *bdims, int *brank,
                                   bool *legacy) {
    *legacy = false;
    *brank = b->rank;
    memcpy(bdims, b->dims, sizeof(int64_t) * (size_t)b->rank);
    if (ctx->opset >= 7 || !onyx_attr_int(ctx->node, "broadcast", 0)) return NULL;
    int ra = a->rank, rb = b->rank;
    char sa[200], sb[200];
    if (rb > ra)
        return ONYX_INVALID_ARG("broadcast=1: input 1 (B) shape %s has more axes than "
                                "input 0 (A) shape %s",
                                onyx_shape_str(b->dims, rb, sb, sizeof sb),
                                onyx_shape_str(a->dims, ra, sa, sizeof sa));
    int64_t axis = onyx_attr_int(ctx->node, "axis", ra - rb);
    if (axis < 0) axis += ra;
    if (axis < 0 || axis + rb > ra)
        return ONYX_INVALID_ARG("broadcast=1: axis %lld does not fit input 1 (B) shape %s "
                                "into input 0 (A) shape %s",
                                (long long)onyx_attr_int(ctx->node, "axis", ra - rb),
                                onyx_shape_str(b->dims, rb, sb, sizeof sb),
                                onyx_shape_str(a->dims, ra, sa, sizeof sa));
    for (int i = 0; i < ra; i++) bdims[i] = 1;
    for (int j = 0; j < rb; j++) {
        int64_t d = b->dims[j];
        if (d != 1 && d != a->dims[axis + j])
            return ONYX_INVALID_ARG("broadcast=1: input 1 (B) shape %s does not match "
                                    "input 0 (A) shape %s at axis %lld",
                                    onyx_shape_str(b->dims, rb, sb, sizeof sb),
                                    onyx_shape_str(a->dims, ra, sa, sizeof sa), (long long)(axis + j));
        bdims[axis + j] = d;
    }
    *brank = ra;
    *legacy = true;
    return NULL;
}

typedef struct binop {
    const ew_row_fn *rows;
    bool bool_out;  /* comparisons: output is bool */
    bool int_div;   /* integer division/modulo: reject zero divisors */
    const char *names[2]; /* the inputs' names in the spec, for messages */
} binop;

/* Inputs A, B and the output, with broadcasting resolved. */
typedef struct bin_shapes {
    const onyx_value *a, *b;
    int64_t bdims[ONYX_MAX_RANK];
    int brank;
    int64_t odims[ONYX_MAX_RANK];
    int orank;
} bin_shapes;

static onyx_status *binary_shapes(const onyx_kernel_ctx *ctx, const char *const *names,
                                  bin_shapes *s) {
    ONYX_TRY(get_input(ctx, 0, names[0], &s->a));
    ONYX_TRY(get_input(ctx, 1, names[1], &s->b));
    bool legacy;
    ONYX_TRY(legacy_b_shape(ctx, s->a, s->b, s->bdims, &s->brank, &legacy));
    ONYX_TRY(onyx_broadcast_shapes(s->a->dims, s->a->rank, s->bdims, s->brank, s->odims, &s->orank));
    if (legacy && (s->orank != s->a->rank ||
                   memcmp(s->odims, s->a->dims, sizeof(int64_t) * (size_t)s->orank) != 0))
        return ONYX_INVALID_ARG("broadcast=1: input 1 (B) must broadcast to the shape of input 0 (A)");
    return NULL;
}

static onyx_status *binary_run(onyx_kernel_ctx *ctx, const binop *op) {
    bin_shapes s;
    ONYX_TRY(binary_shapes(ctx, op->names, &s));
    ONYX_TRY(same_type(s.a, 0, op->names[0], s.b, 1, op->names[1]));
    int cdt = TABLE_TYPE(op->rows, s.a->dtype, false);
    if (!cdt) return unsupported_type(ctx, 0, op->names[0], s.a->dtype);
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, op->bool_out ? ONYX_BOOL : s.a->dtype, s.orank, s.odims, &y));
    if (y->numel == 0) return NULL;
    if (op->int_div && onyx_dtype(cdt)->is_integer) ONYX_TRY(check_no_zero(s.b, 1, op->names[1]));
    const onyx_value *ins[2] = {s.a, s.b};
    int in_cdt[2] = {cdt, cdt};
    const int64_t *shapes[2] = {s.a->dims, s.bdims};
    int ranks[2] = {s.a->rank, s.brank};
    return ew_exec(ctx, op->rows[cdt], 2, ins, in_cdt, shapes, ranks, y,
                   op->bool_out ? ONYX_BOOL : cdt, NULL, true);
}

#define BINARY_OP(fn, ROWS, BOOL_OUT, INT_DIV)                      \
    static onyx_status *fn(onyx_kernel_ctx *ctx) {                  \
        static const binop op = {ROWS, BOOL_OUT, INT_DIV, {"A", "B"}}; \
        return binary_run(ctx, &op);                                \
    }
BINARY_OP(add_compute, add_rows, false, false)
BINARY_OP(sub_compute, sub_rows, false, false)
BINARY_OP(mul_compute, mul_rows, false, false)
BINARY_OP(div_compute, div_rows, false, true)
BINARY_OP(equal_compute, eq_rows, true, false)
BINARY_OP(less_compute, lt_rows, true, false)
BINARY_OP(greater_compute, gt_rows, true, false)
BINARY_OP(less_equal_compute, le_rows, true, false)
BINARY_OP(greater_equal_compute, ge_rows, true, false)
BINARY_OP(and_compute, and_rows, false, false)
BINARY_OP(or_compute, or_rows, false, false)
BINARY_OP(xor_compute, xor_rows, false, false)
BINARY_OP(bitwise_and_compute, band_rows, false, false)
BINARY_OP(bitwise_or_compute, bor_rows, false, false)
BINARY_OP(bitwise_xor_compute, bxor_rows, false, false)

static onyx_status *mod_compute(onyx_kernel_ctx *ctx) {
    static const binop fmod_op = {fmod_rows, false, true, {"A", "B"}};
    static const binop pymod_op = {pymod_rows, false, true, {"A", "B"}};
    return binary_run(ctx, onyx_attr_int(ctx->node, "fmod", 0) ? &fmod_op : &pymod_op);
}

static onyx_status *bitshift_compute(onyx_kernel_ctx *ctx) {
    static const binop left = {shl_rows, false, false, {"X", "Y"}};
    static const binop right = {shr_rows, false, false, {"X", "Y"}};
    const char *dir = onyx_attr_string(ctx->node, "direction", "");
    if (!strcmp(dir, "LEFT")) return binary_run(ctx, &left);
    if (!strcmp(dir, "RIGHT")) return binary_run(ctx, &right);
    return ONYX_INVALID_ARG("attribute direction is '%s'; expected 'LEFT' or 'RIGHT'", dir);
}

/* ------------------------------------------------------------------ Pow */

/* Exponent value when B is a single element, else NAN. */
static double scalar_value(const onyx_value *b) {
    if (b->numel != 1) return NAN;
    return onyx_load_as_double(b->dtype, b->data, 0);
}

static onyx_status *pow_compute(onyx_kernel_ctx *ctx) {
    static const char *const names[2] = {"X", "Y"};
    bin_shapes s;
    ONYX_TRY(binary_shapes(ctx, names, &s));
    int bt = s.a->dtype, et = s.b->dtype;
    const onyx_dtype_info *ei = onyx_dtype(et);
    if (!(ei->is_integer || ei->is_float) || ei->bits < 8 || is_f8(et) || et == ONYX_FLOAT8E8M0)
        return unsupported_type(ctx, 1, "Y", et);
    ew_row_fn row;
    int base_cdt, exp_cdt;
    if (bt == ONYX_FLOAT || bt == ONYX_DOUBLE || is_half(bt)) {
        base_cdt = exp_cdt = bt == ONYX_DOUBLE ? ONYX_DOUBLE : ONYX_FLOAT;
        row = pow_float_rows[base_cdt];
        double e = scalar_value(s.b);
        if (e == 2) row = base_cdt == ONYX_FLOAT ? pow2_f32 : pow2_f64;
        else if (e == 3) row = base_cdt == ONYX_FLOAT ? pow3_f32 : pow3_f64;
        else if (e == 1) row = base_cdt == ONYX_FLOAT ? pow1_f32 : pow1_f64;
    } else if (bt == ONYX_INT32 || bt == ONYX_INT64) {
        base_cdt = bt;
        exp_cdt = ei->is_integer ? ONYX_INT64 : ONYX_DOUBLE;
        if (bt == ONYX_INT32) row = ei->is_integer ? pow_i32_i64 : pow_i32_f64;
        else row = ei->is_integer ? pow_i64_i64 : pow_i64_f64;
    } else {
        return unsupported_type(ctx, 0, "X", bt);
    }
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, bt, s.orank, s.odims, &y));
    const onyx_value *ins[2] = {s.a, s.b};
    int in_cdt[2] = {base_cdt, exp_cdt};
    const int64_t *shapes[2] = {s.a->dims, s.bdims};
    int ranks[2] = {s.a->rank, s.brank};
    return ew_exec(ctx, row, 2, ins, in_cdt, shapes, ranks, y, base_cdt, NULL, true);
}

/* ---------------------------------------------------------------- unary */

typedef struct unary_job {
    ew_unary_fn fn;
    const void *x;
    void *y;
    int x_dt, cdt, out_cdt, y_dt; /* types of x, of the row's input and output, of y */
} unary_job;

static void unary_range(void *arg, size_t begin, size_t end) {
    const unary_job *j = arg;
    size_t xs = elem_size(j->x_dt), ys = elem_size(j->y_dt);
    const char *x = (const char *)j->x + begin * xs;
    char *y = (char *)j->y + begin * ys;
    size_t n = end - begin;
    if (j->x_dt == j->cdt && j->y_dt == j->out_cdt) {
        j->fn(y, x, (int64_t)n);
        return;
    }
    /* reduced-precision input: convert in chunks on the stack */
    _Alignas(64) unsigned char ibuf[CONV_CHUNK * 8], obuf[CONV_CHUNK * 8];
    for (size_t i0 = 0; i0 < n; i0 += CONV_CHUNK) {
        size_t m = n - i0 < CONV_CHUNK ? n - i0 : CONV_CHUNK;
        const void *in = x + i0 * xs;
        if (j->x_dt != j->cdt) {
            onyx_cast_elements(j->x_dt, in, j->cdt, ibuf, (int64_t)m, true, ONYX_E8M0_ROUND_UP, NULL);
            in = ibuf;
        }
        if (j->y_dt == j->out_cdt) {
            j->fn(y + i0 * ys, in, (int64_t)m);
        } else {
            j->fn(obuf, in, (int64_t)m);
            onyx_cast_elements(j->out_cdt, obuf, j->y_dt, y + i0 * ys, (int64_t)m, true,
                               ONYX_E8M0_ROUND_UP, NULL);
        }
    }
}

/* y = fn(x) elementwise; bool_out for predicates (IsNaN, IsInf). */
static onyx_status *unary_run(onyx_kernel_ctx *ctx, const ew_unary_fn *table, bool bool_out) {
    const onyx_value *x;
    ONYX_TRY(get_input(ctx, 0, "X", &x));
    int cdt = TABLE_TYPE(table, x->dtype, bool_out);
    if (!cdt) return unsupported_type(ctx, 0, "X", x->dtype);
    int odt = bool_out ? ONYX_BOOL : x->dtype, out_cdt = bool_out ? ONYX_BOOL : cdt;
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, odt, x->rank, x->dims, &y));
    if (x->numel == 0) return NULL;
    unary_job job = {table[cdt], x->data, y->data, x->dtype, cdt, out_cdt, odt};
    onyx_parallel_for(ctx->tp, (size_t)x->numel, ONYX_EW_GRAIN, unary_range, &job);
    return NULL;
}

#define UNARY_OP(fn, name, BOOL_OUT) \
    static onyx_status *fn(onyx_kernel_ctx *ctx) { return unary_run(ctx, name##_urows, BOOL_OUT); }
UNARY_OP(neg_compute, neg, false)
UNARY_OP(abs_compute, abs, false)
UNARY_OP(reciprocal_compute, recip, false)
UNARY_OP(sqrt_compute, sqrt, false)
UNARY_OP(exp_compute, exp, false)
UNARY_OP(log_compute, log, false)
UNARY_OP(floor_compute, floor, false)
UNARY_OP(ceil_compute, ceil, false)
UNARY_OP(round_compute, round, false)
UNARY_OP(sign_compute, sign, false)
UNARY_OP(erf_compute, erf, false)
UNARY_OP(sin_compute, sin, false)
UNARY_OP(cos_compute, cos, false)
UNARY_OP(tan_compute, tan, false)
UNARY_OP(asin_compute, asin, false)
UNARY_OP(acos_compute, acos, false)
UNARY_OP(atan_compute, atan, false)
UNARY_OP(sinh_compute, sinh, false)
UNARY_OP(cosh_compute, cosh, false)
UNARY_OP(asinh_compute, asinh, false)
UNARY_OP(acosh_compute, acosh, false)
UNARY_OP(atanh_compute, atanh, false)
UNARY_OP(not_compute, not, false)
UNARY_OP(bitwise_not_compute, bnot, false)
UNARY_OP(isnan_compute, isnan, true)

static onyx_status *isinf_compute(onyx_kernel_ctx *ctx) {
    bool neg = onyx_attr_int(ctx->node, "detect_negative", 1) != 0;
    bool pos = onyx_attr_int(ctx->node, "detect_positive", 1) != 0;
    const ew_unary_fn *t = neg && pos ? isinf_urows : pos ? isposinf_urows
                         : neg        ? isneginf_urows : isnone_urows;
    return unary_run(ctx, t, true);
}

/* -------------------------------------------------------------- variadic */

/* Sum, Max, Min, Mean: the first two inputs combine into the output (in
 * the broadcast shape), every further input is folded into it in place;
 * Mean then divides by the count. */
typedef struct variadic_op {
    const ew_row_fn *rows;     /* out = in0 op in1 */
    const ew_row_fn *acc_rows; /* out = out op in_k */
    bool mean;
} variadic_op;

EW_FLOATS(DEF_ACC, acc_div, x / y)
static const ew_row_fn acc_div_rows[ONYX_DTYPE_COUNT] = {EW_FLOATS(ROW_ENTRY, acc_div)};

/* acc (cdt, shape odims) = acc_row(acc, src broadcast), src read as cdt
 * (converted row by row when its own type differs) */
static void fold_into(onyx_kernel_ctx *ctx, ew_row_fn row, int cdt, void *acc,
                      const int64_t *odims, int orank, int src_dt, const void *src,
                      const int64_t *sdims, int srank) {
    const int64_t *shapes[2] = {odims, sdims};
    int ranks[2] = {orank, srank};
    ew_plan plan;
    plan_build(&plan, odims, orank, 2, shapes, ranks);
    ew_job job = {.plan = &plan, .row = row, .in = {acc, src},
                  .in_size = {elem_size(cdt), elem_size(src_dt)}, .out = acc,
                  .out_size = elem_size(cdt)};
    conv_row conv = {.row = row, .n_in = 2, .in_dt = {cdt, src_dt}, .in_cdt = {cdt, cdt},
                     .out_dt = cdt, .out_cdt = cdt};
    if (src_dt != cdt) {
        job.row = conv_row_run;
        job.params = &conv;
    }
    job_execute(ctx->tp, &job);
}

static onyx_status *variadic_run(onyx_kernel_ctx *ctx, const variadic_op *op) {
    size_t n = ctx->n_in;
    if (n == 0) return ONYX_INVALID_ARG("needs at least one input");
    const onyx_value *first;
    ONYX_TRY(get_input(ctx, 0, "data_0", &first));
    int64_t odims[ONYX_MAX_RANK];
    int orank = first->rank;
    memcpy(odims, first->dims, sizeof(int64_t) * (size_t)orank);
    for (size_t i = 1; i < n; i++) {
        const onyx_value *v;
        char name[32];
        snprintf(name, sizeof name, "data_%zu", i);
        ONYX_TRY(get_input(ctx, i, name, &v));
        ONYX_TRY(same_type(first, 0, "data_0", v, i, name));
        int64_t tmp[ONYX_MAX_RANK];
        int trank;
        ONYX_TRY(onyx_broadcast_shapes(odims, orank, v->dims, v->rank, tmp, &trank));
        memcpy(odims, tmp, sizeof(int64_t) * (size_t)trank);
        orank = trank;
    }
    int dt = first->dtype;
    int cdt = TABLE_TYPE(op->rows, dt, false);
    if (!cdt) return unsupported_type(ctx, 0, "data_0", dt);
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, dt, orank, odims, &y));
    if (y->numel == 0) return NULL;
    if (n == 1) { /* the broadcast shape of one input is its own */
        memcpy(y->data, first->data, y->nbytes < first->nbytes ? y->nbytes : first->nbytes);
        return NULL;
    }
    ew_temps t = {.n = 0};
    void *dst = y->data;
    onyx_status *st = cdt != dt ? temp_alloc(&t, cdt, y->numel, &dst) : NULL;
    if (!st) {
        const onyx_value *ins[2] = {first, ctx->in[1]};
        int in_cdt[2] = {cdt, cdt};
        const int64_t *shapes[2] = {first->dims, ctx->in[1]->dims};
        int ranks[2] = {first->rank, ctx->in[1]->rank};
        /* y's type may differ (float16 computed in float): run into dst */
        onyx_value tmp = *y;
        tmp.dtype = (uint8_t)cdt;
        tmp.data = dst;
        st = ew_exec(ctx, op->rows[cdt], 2, ins, in_cdt, shapes, ranks, &tmp, cdt, NULL, true);
    }
    for (size_t k = 2; k < n && !st; k++) {
        const onyx_value *vk = ctx->in[k];
        fold_into(ctx, op->acc_rows[cdt], cdt, dst, odims, orank, vk->dtype, vk->data, vk->dims,
                  vk->rank);
    }
    if (!st && op->mean) {
        double count = (double)n;
        fold_into(ctx, acc_div_rows[cdt], cdt, dst, odims, orank, ONYX_DOUBLE, &count, NULL, 0);
    }
    if (!st && cdt != dt)
        onyx_cast_elements(cdt, dst, dt, y->data, y->numel, true, ONYX_E8M0_ROUND_UP, ctx->tp);
    temps_free(&t);
    return st;
}

static onyx_status *sum_compute(onyx_kernel_ctx *ctx) {
    static const variadic_op op = {add_rows, acc_add_rows, false};
    return variadic_run(ctx, &op);
}
static onyx_status *max_compute(onyx_kernel_ctx *ctx) {
    static const variadic_op op = {max_rows, acc_max_rows, false};
    return variadic_run(ctx, &op);
}
static onyx_status *min_compute(onyx_kernel_ctx *ctx) {
    static const variadic_op op = {min_rows, acc_min_rows, false};
    return variadic_run(ctx, &op);
}
static onyx_status *mean_compute(onyx_kernel_ctx *ctx) {
    static const ew_row_fn mean_rows[ONYX_DTYPE_COUNT] = {EW_FLOATS(ROW_ENTRY, add)};
    static const variadic_op op = {mean_rows, acc_add_rows, true};
    return variadic_run(ctx, &op);
}

/* ----------------------------------------------------------------- Where */

static onyx_status *where_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *c, *x, *yv;
    ONYX_TRY(get_input(ctx, 0, "condition", &c));
    ONYX_TRY(get_input(ctx, 1, "X", &x));
    ONYX_TRY(get_input(ctx, 2, "Y", &yv));
    if (c->dtype != ONYX_BOOL)
        return ONYX_INVALID_ARG("input 0 (condition) must be bool, got %s",
                                onyx_dtype_name(c->dtype));
    ONYX_TRY(same_type(x, 1, "X", yv, 2, "Y"));
    int dt = x->dtype;
    ew_row_fn row = NULL;
    if (dt == ONYX_STRING) row = where_str;
    else if (onyx_dtype(dt)->bits >= 8) {
        switch (elem_size(dt)) {
        case 1: row = where_1; break;
        case 2: row = where_2; break;
        case 4: row = where_4; break;
        case 8: row = where_8; break;
        case 16: row = where_16; break;
        default: break;
        }
    }
    if (!row) return unsupported_type(ctx, 1, "X", dt);
    int64_t tmp[ONYX_MAX_RANK], odims[ONYX_MAX_RANK];
    int trank, orank;
    ONYX_TRY(onyx_broadcast_shapes(c->dims, c->rank, x->dims, x->rank, tmp, &trank));
    ONYX_TRY(onyx_broadcast_shapes(tmp, trank, yv->dims, yv->rank, odims, &orank));
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, dt, orank, odims, &y));
    const onyx_value *ins[3] = {c, x, yv};
    int in_cdt[3] = {ONYX_BOOL, dt, dt};
    const int64_t *shapes[3] = {c->dims, x->dims, yv->dims};
    int ranks[3] = {c->rank, x->rank, yv->rank};
    bool failed = false;
    /* strings allocate: run them on this thread so the failure flag is simple */
    ONYX_TRY(ew_exec(ctx, row, 3, ins, in_cdt, shapes, ranks, y, dt, &failed, dt != ONYX_STRING));
    return failed ? ONYX_OOM() : NULL;
}

/* ----------------------------------------------------------------- table */

#define T_F3 (ONYX_T(ONYX_FLOAT) | ONYX_T(ONYX_DOUBLE) | ONYX_T(ONYX_FLOAT16))
#define T_FL ONYX_T_FLOATS
#define T_NUM ONYX_T_NUMERIC
#define T_BOOL ONYX_T(ONYX_BOOL)
#define T_F8 (ONYX_T(ONYX_FLOAT8E4M3FN) | ONYX_T(ONYX_FLOAT8E4M3FNUZ) | ONYX_T(ONYX_FLOAT8E5M2) | \
              ONYX_T(ONYX_FLOAT8E5M2FNUZ))
#define T_WHERE (ONYX_T_NUMERIC | ONYX_T(ONYX_BOOL) | ONYX_T(ONYX_STRING) | ONYX_T(ONYX_COMPLEX64) | \
                 ONYX_T(ONYX_COMPLEX128) | T_F8)
#define LATEST ONYX_OPSET_LATEST
#define SAME onyx_infer_same_as_input0

#define OP(name, since, until, types, tin, compute) \
    {"", name, since, until, types, tin, NULL, NULL, compute}

const onyx_op_def onyx_ops_elementwise[] = {
    /* arithmetic: opset < 7 uses the legacy broadcast attributes */
    OP("Add", 1, 6, T_NUM, 0, add_compute),
    OP("Add", 7, LATEST, T_NUM, 0, add_compute),
    OP("Sub", 1, 6, T_NUM, 0, sub_compute),
    OP("Sub", 7, LATEST, T_NUM, 0, sub_compute),
    OP("Mul", 1, 6, T_NUM, 0, mul_compute),
    OP("Mul", 7, LATEST, T_NUM, 0, mul_compute),
    OP("Div", 1, 6, T_NUM, 0, div_compute),
    OP("Div", 7, LATEST, T_NUM, 0, div_compute),
    OP("Pow", 1, 6, T_FL, 0, pow_compute),
    OP("Pow", 7, LATEST, T_FL | ONYX_T(ONYX_INT32) | ONYX_T(ONYX_INT64), 0, pow_compute),
    OP("Mod", 10, LATEST, T_NUM, 0, mod_compute),
    /* unary */
    OP("Neg", 1, LATEST, T_FL | ONYX_T_SINTS, 0, neg_compute),
    OP("Abs", 1, LATEST, T_NUM, 0, abs_compute),
    OP("Reciprocal", 1, LATEST, T_FL, 0, reciprocal_compute),
    OP("Sqrt", 1, LATEST, T_FL, 0, sqrt_compute),
    OP("Exp", 1, LATEST, T_FL, 0, exp_compute),
    OP("Log", 1, LATEST, T_FL, 0, log_compute),
    OP("Floor", 1, LATEST, T_FL, 0, floor_compute),
    OP("Ceil", 1, LATEST, T_FL, 0, ceil_compute),
    OP("Round", 11, LATEST, T_FL, 0, round_compute),
    OP("Sign", 9, LATEST, T_NUM, 0, sign_compute),
    OP("Erf", 9, 12, T_NUM, 0, erf_compute),
    OP("Erf", 13, LATEST, T_FL, 0, erf_compute),
    OP("Sin", 7, LATEST, T_FL, 0, sin_compute),
    OP("Cos", 7, LATEST, T_FL, 0, cos_compute),
    OP("Tan", 7, LATEST, T_FL, 0, tan_compute),
    OP("Asin", 7, LATEST, T_FL, 0, asin_compute),
    OP("Acos", 7, LATEST, T_FL, 0, acos_compute),
    OP("Atan", 7, LATEST, T_FL, 0, atan_compute),
    OP("Sinh", 9, LATEST, T_FL, 0, sinh_compute),
    OP("Cosh", 9, LATEST, T_FL, 0, cosh_compute),
    OP("Asinh", 9, LATEST, T_FL, 0, asinh_compute),
    OP("Acosh", 9, LATEST, T_FL, 0, acosh_compute),
    OP("Atanh", 9, LATEST, T_FL, 0, atanh_compute),
    OP("IsNaN", 9, LATEST, T_FL | T_F8, 0, isnan_compute),
    OP("IsInf", 10, LATEST, T_FL | T_F8, 0, isinf_compute),
    /* comparisons */
    OP("Equal", 1, 6, T_NUM | T_BOOL, 0, equal_compute),
    OP("Equal", 7, LATEST, T_NUM | T_BOOL | ONYX_T(ONYX_STRING), 0, equal_compute),
    OP("Less", 1, 6, T_NUM, 0, less_compute),
    OP("Less", 7, LATEST, T_NUM, 0, less_compute),
    OP("Greater", 1, 6, T_NUM, 0, greater_compute),
    OP("Greater", 7, LATEST, T_NUM, 0, greater_compute),
    OP("LessOrEqual", 12, LATEST, T_NUM, 0, less_equal_compute),
    OP("GreaterOrEqual", 12, LATEST, T_NUM, 0, greater_equal_compute),
    /* logical and bitwise */
    OP("Not", 1, LATEST, T_BOOL, 0, not_compute),
    OP("And", 1, 6, T_BOOL, 0, and_compute),
    OP("And", 7, LATEST, T_BOOL, 0, and_compute),
    OP("Or", 1, 6, T_BOOL, 0, or_compute),
    OP("Or", 7, LATEST, T_BOOL, 0, or_compute),
    OP("Xor", 1, 6, T_BOOL, 0, xor_compute),
    OP("Xor", 7, LATEST, T_BOOL, 0, xor_compute),
    OP("BitShift", 11, LATEST, ONYX_T_UINTS, 0, bitshift_compute),
    OP("BitwiseAnd", 18, LATEST, ONYX_T_INTS, 0, bitwise_and_compute),
    OP("BitwiseOr", 18, LATEST, ONYX_T_INTS, 0, bitwise_or_compute),
    OP("BitwiseXor", 18, LATEST, ONYX_T_INTS, 0, bitwise_xor_compute),
    OP("BitwiseNot", 18, LATEST, ONYX_T_INTS, 0, bitwise_not_compute),
    /* selection and variadic */
    OP("Where", 9, LATEST, T_WHERE, 1, where_compute),
    OP("Sum", 1, LATEST, T_FL | ONYX_T_INTS, 0, sum_compute),
    OP("Max", 1, LATEST, T_NUM, 0, max_compute),
    OP("Min", 1, LATEST, T_NUM, 0, min_compute),
    OP("Mean", 1, LATEST, T_FL, 0, mean_compute),
    {0},};
