/* Private helpers shared by the dense linear algebra kernels (matmul.c,
 * conv.c): float16/bfloat16 <-> float conversion of whole tensors, the
 * first error of a parallel loop, and the int8 zero-point helpers. */
#ifndef ONYX_CPU_KERNELS_LINALG_H
#define ONYX_CPU_KERNELS_LINALG_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "core/checked.h"
#include "core/dtype.h"
#include "core/status.h"
#include "core/value.h"

/* numpy.matmul shapes: A [..., M, K] times B [..., K, N] with broadcast batch
 * dims (1-D operands promoted), op() transposing the last two dims of a
 * rank >= 2 operand when ta/tb. Shared by MatMul, FusedMatMul and the
 * integer/quantized matmuls (linalg.c). */
typedef struct la_mm_shape {
    bool ta, tb;                             /* effective transposes (false for 1-D operands) */
    int64_t M, N, K;
    int nb;                                  /* batch rank of the output */
    int64_t bdims[ONYX_MAX_RANK];
    int64_t a_str[ONYX_MAX_RANK];            /* A matrix index step per batch dim (0: broadcast) */
    int64_t b_str[ONYX_MAX_RANK];
    int64_t batches, a_mats, b_mats;
    int rank;                                /* output shape */
    int64_t dims[ONYX_MAX_RANK];
} la_mm_shape;

/* op names the operator in error messages. */
onyx_status *la_matmul_shape(const char *op, const int64_t *a, int ra, const int64_t *b, int rb, bool ta,
                             bool tb, la_mm_shape *s);

/* Matrix indices of A and B for output batch t. */
static inline void la_mm_batch_index(const la_mm_shape *s, int64_t t, int64_t *ia, int64_t *ib) {
    int64_t a = 0, b = 0;
    for (int i = s->nb - 1; i >= 0; i--) {
        int64_t c = t % s->bdims[i];
        t /= s->bdims[i];
        a += c * s->a_str[i];
        b += c * s->b_str[i];
    }
    *ia = a;
    *ib = b;
}

/* float, float16 or bfloat16: the types computed through SGEMM. */
static inline bool la_is_f32_family(int dtype) {
    return dtype == ONYX_FLOAT || dtype == ONYX_FLOAT16 || dtype == ONYX_BFLOAT16;
}

static inline void la_to_f32(int dtype, const void *src, float *dst, size_t n) {
    const uint16_t *h = src;
    if (dtype == ONYX_FLOAT) memcpy(dst, src, n * sizeof(float));
    else if (dtype == ONYX_FLOAT16) for (size_t i = 0; i < n; i++) dst[i] = onyx_f16_to_f32(h[i]);
    else for (size_t i = 0; i < n; i++) dst[i] = onyx_bf16_to_f32(h[i]);
}

static inline void la_from_f32(int dtype, const float *src, void *dst, size_t n) {
    uint16_t *h = dst;
    if (dtype == ONYX_FLOAT) memcpy(dst, src, n * sizeof(float));
    else if (dtype == ONYX_FLOAT16) for (size_t i = 0; i < n; i++) h[i] = onyx_f32_to_f16(src[i]);
    else for (size_t i = 0; i < n; i++) h[i] = onyx_f32_to_bf16(src[i]);
}

/* The elements of a float-family tensor as floats: the tensor's own data
 * for float, otherwise a converted copy left in *owned (onyx_free it). */
static inline onyx_status *la_float_view(const onyx_value *v, const float **data, float **owned) {
    *owned = NULL;
    if (v->dtype == ONYX_FLOAT) {
        *data = v->data;
        return NULL;
    }
    size_t n = (size_t)v->numel;
    float *buf = onyx_alloc((n ? n : 1) * sizeof(float));
    if (!buf) return ONYX_OOM();
    la_to_f32(v->dtype, v->data, buf, n);
    *data = *owned = buf;
    return NULL;
}

/* The first error of the tasks of a parallel loop; later ones are dropped. */
typedef struct la_error {
    _Atomic(onyx_status *) st;
} la_error;

static inline void la_error_set(la_error *e, onyx_status *st) {
    if (!st) return;
    onyx_status *expected = NULL;
    if (!atomic_compare_exchange_strong(&e->st, &expected, st)) onyx_status_free(st);
}

static inline bool la_error_any(la_error *e) { return atomic_load(&e->st) != NULL; }
static inline onyx_status *la_error_take(la_error *e) { return atomic_exchange(&e->st, NULL); }

/* Element i of an int8/uint8 tensor's data as int32. */
static inline int32_t la_load_q8(int dtype, const void *data, size_t i) {
    return dtype == ONYX_INT8 ? ((const int8_t *)data)[i] : ((const uint8_t *)data)[i];
}

struct onyx_packed_mat;
struct onyx_threadpool;
/* Y = alpha op(A) op(B) in float for every batch of s (SGEMM). packed[ib],
 * when packed is not NULL, is the pre-packed op(B) of B's matrix ib (B is
 * then not read). One tall GEMM when every batch shares B and A is laid
 * out like Y; small batches in parallel; otherwise one threaded GEMM per
 * batch. Shared by MatMul and FusedMatMul. (linalg.c) */
onyx_status *la_matmul_f32(const la_mm_shape *s, float alpha, const float *A, const float *B, float *Y,
                           struct onyx_packed_mat *const *packed, struct onyx_threadpool *tp);

#endif
