/* Small readers shared by the inference rules (ir/schemas/) and the tensor
 * kernels (their tensor_util.h includes this): integer tensors, axes, and
 * what a rule sees of its inputs. */
#ifndef ONYX_IR_INFER_KIT_H
#define ONYX_IR_INFER_KIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "core/status.h"
#include "core/value.h"
#include "ir/infer.h"

static inline bool tk_is_index_type(int dtype) {
    return dtype == ONYX_INT32 || dtype == ONYX_INT64;
}
/* Element i of an int32/int64 tensor (caller checked the type). */
static inline int64_t tk_index_at(const onyx_value *v, int64_t i) {
    return v->dtype == ONYX_INT64 ? ((const int64_t *)v->data)[i]
                                  : (int64_t)((const int32_t *)v->data)[i];
}
/* A 1-D (or scalar when allow_scalar) int32/int64 tensor of at most max
 * values, copied into vals. */
onyx_status *tk_read_ints(const onyx_value *v, const char *what, bool allow_scalar, int64_t *vals,
                          size_t max, size_t *count);

/* Normalise axes (in [-rank, rank)) into out, rejecting duplicates. */
onyx_status *tk_normalize_axes(const int64_t *axes, size_t n, int rank, const char *what, int *out);


/* out = tensor of dtype with rank (dims unknown; rank -1 = unknown). */
void tk_type_tensor(onyx_type *out, int dtype, int rank);
/* The same with dims (rank values; unknown where dims is NULL). */
void tk_type_shaped(onyx_type *out, int dtype, int rank, const int64_t *dims);
/* Up to ONYX_MAX_RANK values of a 1-D or scalar int32/int64 constant;
 * false when it is not one (inference then knows less, it does not fail). */
bool tk_infer_ints(const onyx_value *v, int64_t *vals, size_t *n);
/* Constant integer input of an inference context (NULL when not constant). */
const onyx_value *tk_infer_const(const onyx_infer_ctx *ctx, size_t i);
static inline const onyx_type *tk_infer_in(const onyx_infer_ctx *ctx, size_t i) {
    return i < ctx->n_in ? ctx->in[i] : NULL;
}
/* Element type of input i (0 when absent or unknown). */
static inline int tk_in_dtype(const onyx_infer_ctx *ctx, size_t i) {
    const onyx_type *t = tk_infer_in(ctx, i);
    return t ? t->dtype : 0;
}
/* Whether the input has a known tensor type with known rank. */
static inline bool tk_has_rank(const onyx_type *t) {
    return t && t->kind == ONYX_VALUE_TENSOR && t->rank >= 0 && t->rank <= ONYX_MAX_RANK;
}

/* Fold static shape t into a running broadcast (rank, dims), numpy's rule:
 * a symbolic dim stays when the other side is 1 or the same symbol, and a
 * known dim > 1 wins over a symbolic one (the symbol must be 1 or equal to
 * it). An error only for two different known dims. */
onyx_status *tk_broadcast_fold(int *rank, int64_t *dims, const onyx_type *t);
/* MatMul's output shape into out (its dtype is the caller's): numpy matmul,
 * the batch dims broadcast and a 1-D operand's axis dropped; ta / tb read A
 * or B (rank >= 2) transposed (FusedMatMul). Rank unknown when an operand's
 * is; an error when two known batch dims cannot broadcast. */
onyx_status *tk_infer_matmul(const onyx_type *a, const onyx_type *b, bool ta, bool tb, onyx_type *out);

#endif
