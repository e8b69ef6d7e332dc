/* Private helpers of the sampling kernel families (resize.c, spatial.c,
 * detection.c): element conversion between any numeric tensor type and a
 * double working buffer (saturating on the way back, so an overshooting
 * cubic filter cannot wrap a uint8 pixel), string cell copies, the Keys
 * cubic kernel, and small input readers. Not a contract for other files. */
#ifndef ONYX_CPU_SPATIAL_UTIL_H
#define ONYX_CPU_SPATIAL_UTIL_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "core/dtype.h"
#include "core/dtype_ext.h"
#include "core/value.h"
#include "providers/cpu/kernel.h"
#include "ir/schemas/spatial_infer.h"

/* ------------------------------------------------------------ element types */

/* Complex tensors are handled as real tensors with a trailing axis of 2: the
 * scalar type of their parts, and how many scalars make one element. */
static inline int su_scalar_dtype(int dtype) {
    return dtype == ONYX_COMPLEX64 ? ONYX_FLOAT : dtype == ONYX_COMPLEX128 ? ONYX_DOUBLE : dtype;
}
static inline int su_components(int dtype) {
    return dtype == ONYX_COMPLEX64 || dtype == ONYX_COMPLEX128 ? 2 : 1;
}

/* Types whose values can be interpolated through double (every numeric
 * type, bool and complex; not strings or the 8/4/2-bit float and int
 * families, which these operators do not accept). */
static inline bool su_is_arith(int dtype) {
    switch (su_scalar_dtype(dtype)) {
    case ONYX_FLOAT: case ONYX_DOUBLE: case ONYX_FLOAT16: case ONYX_BFLOAT16:
    case ONYX_INT8: case ONYX_INT16: case ONYX_INT32: case ONYX_INT64:
    case ONYX_UINT8: case ONYX_UINT16: case ONYX_UINT32: case ONYX_UINT64: case ONYX_BOOL:
        return true;
    default:
        return false;
    }
}


/* double -> integer: truncate toward zero like numpy's astype, but saturate
 * at the type's range (NaN -> 0) instead of wrapping. */
static inline double su_sat(double v, double lo, double hi) {
    if (!(v == v)) return 0;
    return v < lo ? lo : v > hi ? hi : v;
}

/* su_load_<W>(sdt, data, off, n, dst): scalars [off, off + n) of a buffer of
 * scalar type sdt (su_scalar_dtype) converted to the working type W (f64 =
 * double, f32 = float). su_store_<W>: the way back, saturating for integer
 * targets. One definition instantiated per working type. */
#define SU_DEFINE_CONVERT(W, NAME)                                                          \
    static inline void su_load_##NAME(int sdt, const void *data, size_t off, size_t n, W *dst) { \
        switch (sdt) {                                                                      \
        SU_LOAD_CASE(ONYX_FLOAT, float, (W)v)                                               \
        SU_LOAD_CASE(ONYX_DOUBLE, double, (W)v)                                             \
        SU_LOAD_CASE(ONYX_FLOAT16, uint16_t, (W)onyx_f16_to_f32(v))                         \
        SU_LOAD_CASE(ONYX_BFLOAT16, uint16_t, (W)onyx_bf16_to_f32(v))                       \
        SU_LOAD_CASE(ONYX_INT8, int8_t, (W)v)                                               \
        SU_LOAD_CASE(ONYX_INT16, int16_t, (W)v)                                             \
        SU_LOAD_CASE(ONYX_INT32, int32_t, (W)v)                                             \
        SU_LOAD_CASE(ONYX_INT64, int64_t, (W)v)                                             \
        SU_LOAD_CASE(ONYX_UINT8, uint8_t, (W)v)                                             \
        SU_LOAD_CASE(ONYX_UINT16, uint16_t, (W)v)                                           \
        SU_LOAD_CASE(ONYX_UINT32, uint32_t, (W)v)                                           \
        SU_LOAD_CASE(ONYX_UINT64, uint64_t, (W)v)                                           \
        SU_LOAD_CASE(ONYX_BOOL, uint8_t, (W)(v != 0))                                       \
        default:                                                                            \
            for (size_t i = 0; i < n; i++) dst[i] = (W)onyx_load_as_double(sdt, data, (int64_t)(off + i)); \
        }                                                                                   \
    }                                                                                       \
    static inline void su_store_##NAME(int sdt, void *data, size_t off, size_t n, const W *src) { \
        switch (sdt) {                                                                      \
        SU_STORE_CASE(ONYX_FLOAT, float, (float)v)                                          \
        SU_STORE_CASE(ONYX_DOUBLE, double, (double)v)                                       \
        SU_STORE_CASE(ONYX_FLOAT16, uint16_t, onyx_f64_to_f16((double)v))                   \
        SU_STORE_CASE(ONYX_BFLOAT16, uint16_t, onyx_f64_to_bf16((double)v))                 \
        SU_STORE_CASE(ONYX_INT8, int8_t, su_sat(v, -128.0, 127.0))                          \
        SU_STORE_CASE(ONYX_INT16, int16_t, su_sat(v, -32768.0, 32767.0))                    \
        SU_STORE_CASE(ONYX_INT32, int32_t, su_sat(v, -2147483648.0, 2147483647.0))          \
        /* 2^63 and 2^64 do not fit the targets: saturate one step below */                 \
        SU_STORE_CASE(ONYX_INT64, int64_t, su_sat(v, -0x1p63, 0x1.fffffffffffffp62))        \
        SU_STORE_CASE(ONYX_UINT8, uint8_t, su_sat(v, 0.0, 255.0))                           \
        SU_STORE_CASE(ONYX_UINT16, uint16_t, su_sat(v, 0.0, 65535.0))                       \
        SU_STORE_CASE(ONYX_UINT32, uint32_t, su_sat(v, 0.0, 4294967295.0))                  \
        SU_STORE_CASE(ONYX_UINT64, uint64_t, su_sat(v, 0.0, 0x1.fffffffffffffp63))          \
        SU_STORE_CASE(ONYX_BOOL, uint8_t, v != 0) /* NaN -> true, as numpy */               \
        default:                                                                            \
            for (size_t i = 0; i < n; i++) onyx_store_from_double(sdt, data, (int64_t)(off + i), (double)src[i]); \
        }                                                                                   \
    }
#define SU_LOAD_CASE(DT, T, EXPR)                                            \
    case DT: {                                                               \
        const T *s_ = (const T *)data + off;                                 \
        for (size_t i_ = 0; i_ < n; i_++) {                                  \
            T v = s_[i_];                                                    \
            dst[i_] = EXPR;                                                  \
        }                                                                    \
        break;                                                               \
    }
#define SU_STORE_CASE(DT, T, EXPR)                                           \
    case DT: {                                                               \
        T *d_ = (T *)data + off;                                             \
        for (size_t i_ = 0; i_ < n; i_++) {                                  \
            double v = (double)src[i_];                                      \
            d_[i_] = (T)(EXPR);                                              \
        }                                                                    \
        break;                                                               \
    }
SU_DEFINE_CONVERT(double, f64)
SU_DEFINE_CONVERT(float, f32)
#undef SU_LOAD_CASE
#undef SU_STORE_CASE

/* A whole tensor's scalars (numel * components) as a malloc'd double array;
 * NULL on out of memory. */
static inline double *su_tensor_f64(const onyx_value *v) {
    size_t n = (size_t)v->numel * (size_t)su_components(v->dtype);
    double *out = (double *)malloc((n ? n : 1) * sizeof(double));
    if (out) su_load_f64(su_scalar_dtype(v->dtype), v->data, 0, n, out);
    return out;
}

/* The same as floats (for the float, float16 and bfloat16 kernels). */
static inline float *su_tensor_f32(const onyx_value *v) {
    size_t n = (size_t)v->numel * (size_t)su_components(v->dtype);
    float *out = (float *)malloc((n ? n : 1) * sizeof(float));
    if (out) su_load_f32(su_scalar_dtype(v->dtype), v->data, 0, n, out);
    return out;
}

/* ------------------------------------------------------------------ strings */

/* Deep copy of a string cell (dst's old contents freed). */
static inline bool su_string_copy(onyx_string *dst, const onyx_string *src) {
    size_t len = src->data ? src->len : 0;
    char *p = (char *)malloc(len + 1);
    if (!p) return false;
    if (len) memcpy(p, src->data, len);
    p[len] = 0;
    free(dst->data);
    dst->data = p;
    dst->len = len;
    return true;
}

/* --------------------------------------------------------------- filters */

/* Keys' cubic convolution kernel with parameter a, at distance x >= 0. */
static inline double su_cubic_kernel(double x, double a) {
    x = fabs(x);
    if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
    if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
    return 0;
}

/* The four Keys weights for taps floor-1 .. floor+2 at fraction t in [0, 1]
 * (the ONNX reference's formulation, valid for t = 1 too). */
static inline void su_cubic_weights(double t, double a, double w[4]) {
    double u = 1 - t;
    w[0] = ((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a;
    w[1] = ((a + 2) * t - (a + 3)) * t * t + 1;
    w[2] = ((a + 2) * u - (a + 3)) * u * u + 1;
    w[3] = ((a * (u + 1) - 5 * a) * (u + 1) + 8 * a) * (u + 1) - 4 * a;
}

/* ------------------------------------------------------------------ inputs */

static inline const onyx_value *su_in(const onyx_kernel_ctx *ctx, size_t i) {
    return i < ctx->n_in ? ctx->in[i] : NULL;
}

/* A required tensor input. */
static inline onyx_status *su_tensor_in(const onyx_kernel_ctx *ctx, size_t i, const char *what,
                                        const onyx_value **out) {
    const onyx_value *v = su_in(ctx, i);
    if (!onyx_is_tensor(v)) return ONYX_INVALID_ARG("input %zu (%s) is missing or not a tensor", i, what);
    *out = v;
    return NULL;
}

/* An optional tensor input: NULL when omitted. */
static inline onyx_status *su_opt_tensor_in(const onyx_kernel_ctx *ctx, size_t i, const char *what,
                                            const onyx_value **out) {
    const onyx_value *v = su_in(ctx, i);
    if (v && !onyx_is_tensor(v)) return ONYX_INVALID_ARG("input %zu (%s) is not a tensor", i, what);
    *out = v;
    return NULL;
}

static inline const char *su_shape(const onyx_value *v, char *buf, size_t len) {
    return onyx_shape_str(v->dims, v->rank, buf, len);
}

/* Product of dims[lo, hi) with overflow check. */
static inline onyx_status *su_numel(const int64_t *dims, int lo, int hi, int64_t *out) {
    int64_t n = 1;
    for (int i = lo; i < hi; i++)
        if (dims[i] < 0 || onyx_mul_overflow_i64(n, dims[i], &n))
            return ONYX_INVALID_ARG("shape is too large");
    *out = n;
    return NULL;
}

/* Check that a shape's element count is within the tensor limit. */
static inline onyx_status *su_check_shape(const int64_t *dims, int rank, const char *what) {
    int64_t n = 0;
    onyx_status *st = su_numel(dims, 0, rank, &n);
    if (st) onyx_status_free(st);
    if (st || n > ONYX_MAX_TENSOR_ELEMENTS) {
        char buf[200];
        return ONYX_INVALID_ARG("%s shape %s has too many elements", what,
                                onyx_shape_str(dims, rank, buf, sizeof buf));
    }
    return NULL;
}


#endif
