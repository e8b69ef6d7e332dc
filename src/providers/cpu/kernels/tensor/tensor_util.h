/* Private helpers of the data-movement kernel families (in tensor/:
 * reshape, slice, gather, constants): element views that hide strings and packed sub-byte types,
 * a strided N-d copy engine, index/attribute readers and inference helpers.
 * Not a contract for other families. */
#ifndef ONYX_CPU_TENSOR_UTIL_H
#define ONYX_CPU_TENSOR_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "providers/cpu/kernel.h"
#include "ir/infer_kit.h"

/* ------------------------------------------------------------ element views */

/* A tensor's elements as equal-sized byte cells. Sub-byte types (int4,
 * uint4, float4, int2, uint2) are unpacked to one code per byte in a
 * temporary buffer so that every data-movement routine can treat them as
 * 1-byte elements; outputs are packed back by tk_view_commit. Strings are
 * cells of onyx_string that must be deep-copied (tk_cells_copy). */
typedef struct tk_view {
    uint8_t *p; /* first element (may be NULL when n == 0) */
    size_t es;  /* bytes per element in this view */
    int dtype;
    uint8_t bits; /* storage bits of dtype (8 * es unless sub-byte) */
    bool str;     /* elements are onyx_string */
    bool tmp;     /* p is a temporary unpacked buffer owned by the view */
    int64_t n;    /* element count */
} tk_view;

onyx_status *tk_view_in(const onyx_value *v, tk_view *out);
onyx_status *tk_view_out(onyx_value *v, tk_view *out);
/* Pack a temporary output view into v and release it. */
void tk_view_commit(tk_view *view, onyx_value *v);
void tk_view_release(tk_view *view);
/* Common epilogue: release src, commit or release dst, return st. */
onyx_status *tk_view_finish(tk_view *src, tk_view *dst, onyx_value *y, onyx_status *st);

/* Raw packed access to sub-byte element i (bits = 1, 2 or 4). */
static inline uint8_t tk_get_packed(const uint8_t *p, int64_t i, unsigned bits) {
    uint64_t bit = (uint64_t)i * bits;
    return (uint8_t)((p[bit >> 3] >> (bit & 7)) & ((1u << bits) - 1));
}
static inline void tk_set_packed(uint8_t *p, int64_t i, unsigned bits, uint8_t code) {
    uint64_t bit = (uint64_t)i * bits;
    unsigned mask = ((1u << bits) - 1) << (bit & 7);
    p[bit >> 3] = (uint8_t)((p[bit >> 3] & ~mask) | ((unsigned)(code << (bit & 7)) & mask));
}

/* Copy n cells (strings deep-copied; destination strings are freed first). */
bool tk_string_assign(onyx_string *dst, const onyx_string *src);
onyx_status *tk_cells_copy(const tk_view *v, void *dst, const void *src, int64_t n);
/* Fill n cells with copies of one cell. */
onyx_status *tk_cells_fill(const tk_view *v, void *dst, const void *cell, int64_t n);

/* ---------------------------------------------------------- N-d copy engine */

#define TK_MAX_ND (2 * ONYX_MAX_RANK + 2)

/* Outputs smaller than this are produced on the calling thread: waking
 * pool workers costs more than splitting a memory-bound copy saves. */
#define TK_PAR_MIN_BYTES (1 << 20)

/* dst[sum i_k * dst[k]] = src[sum i_k * src[k]] over the box dims, strides in
 * elements (src strides may be negative or 0 for broadcasting). */
typedef struct tk_plan {
    int rank;
    int64_t dims[TK_MAX_ND];
    int64_t src[TK_MAX_ND];
    int64_t dst[TK_MAX_ND];
} tk_plan;

/* Run a plan: merges contiguous dims, copies contiguous runs with memcpy,
 * fills broadcast runs, transposes in cache blocks when the innermost source
 * and destination axes differ, and splits big copies across tp. view gives
 * the element size and string-ness. dst/src point at the box's first
 * element. */
onyx_status *tk_copy(onyx_threadpool *tp, const tk_view *view, tk_plan *plan, void *dst,
                     const void *src);
/* Copy a dense tensor whose dims are `dims` read through src strides into a
 * dense row-major destination (a permutation, broadcast or strided view). */
onyx_status *tk_copy_view(onyx_threadpool *tp, const tk_view *view, int rank, const int64_t *dims,
                          const int64_t *src_strides, void *dst, const void *src);
/* memcpy split across the pool when large. */
void tk_memcpy(onyx_threadpool *tp, void *dst, const void *src, size_t n);

/* ------------------------------------------------------------------ inputs */

static inline const onyx_value *tk_in(const onyx_kernel_ctx *ctx, size_t i) {
    return i < ctx->n_in ? ctx->in[i] : NULL;
}
/* Required tensor input i; `what` names it in messages. */
onyx_status *tk_tensor_in(const onyx_kernel_ctx *ctx, size_t i, const char *what,
                          const onyx_value **out);
/* Optional tensor input: NULL when omitted; error when not a tensor. */
onyx_status *tk_opt_tensor_in(const onyx_kernel_ctx *ctx, size_t i, const char *what,
                              const onyx_value **out);

/* A scalar or single-element integer tensor. */
onyx_status *tk_read_scalar_int(const onyx_value *v, const char *what, int64_t *out);
/* Check an index tensor's type and report the first index outside
 * [-dim, dim) naming its position; normalised copies go to out (may be
 * NULL to only check). */
onyx_status *tk_check_indices(const onyx_value *idx, const char *what, int64_t dim,
                              const char *dim_desc, int64_t *out);


/* Byte size of one element for POD dtypes in views (1 for sub-byte views). */
size_t tk_cell_size(int dtype);


/* Shape helpers */
/* Product of dims[lo, hi); saturates at INT64_MAX (a tensor with a 0 dim
 * may have other dims whose product overflows). */
static inline int64_t tk_numel(const int64_t *dims, int lo, int hi) {
    int64_t n = 1;
    for (int i = lo; i < hi; i++)
        if (__builtin_mul_overflow(n, dims[i], &n)) return INT64_MAX;
    return n;
}
const char *tk_shape(const onyx_value *v, char *buf, size_t len);

#endif
