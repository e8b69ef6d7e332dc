/* The CPU provider's kernel interface. An operator implementation is an
 * onyx_op_def: which (domain, op type, opset range, element types) it
 * covers, and the functions that run it. Families of operators live one per
 * file under kernels/ and export a table listed in kernels/families.h.
 *
 * Contract for a compute function:
 *   - Inputs: ctx->in[i] (NULL when an optional input is omitted or i >=
 *     n_in). Never write to inputs.
 *   - Outputs: obtain each with onyx_kernel_output(), which allocates the
 *     buffer (from the run's planned arena) with the shape you give. Every
 *     output that the node declares (ctx->out_used[i]) must be produced.
 *   - Validate everything (ranks, shapes, types, attribute values, index
 *     ranges) and return an error status describing the problem; the
 *     executor prefixes the node name and op. Never crash on bad input.
 *   - State from init is shared by concurrent runs: read only in compute.
 */
#ifndef ONYX_CPU_KERNEL_H
#define ONYX_CPU_KERNEL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "core/status.h"
#include "core/threadpool.h"
#include "core/value.h"
#include "ir/graph.h"
#include "ir/infer.h"
#include "providers/kernel_ctx.h"

/* What init sees: the node, static input types and constant inputs (values
 * of initializers, NULL where the input is computed). Used to parse
 * attributes once and to pre-pack constant weights. */
typedef struct onyx_kernel_info {
    const onyx_node *node;
    const onyx_model *model;
    int opset;
    size_t n_in, n_out;
    const onyx_type *const *in_types;       /* NULL for omitted */
    const onyx_value *const *const_in;      /* NULL where not constant */
    const onyx_kernel_host *host;           /* the session's services, or NULL (constant folding) */
    const onyx_pack_ctx *pack;              /* how to pack constant weights (pool, bfloat16), or NULL */
} onyx_kernel_info;

typedef struct onyx_op_def {
    const char *domain;       /* "" = ai.onnx, "ai.onnx.ml", "com.microsoft", ... */
    const char *op_type;
    int since_version;        /* first opset covered (inclusive) */
    int until_version;        /* last opset covered (inclusive); ONYX_OPSET_LATEST for open */
    uint64_t types;           /* allowed element types of input type_input (bit 1<<dtype);
                                 0 = any (the kernel checks) */
    int type_input;           /* index of the input whose type `types` constrains */
    onyx_status *(*init)(const onyx_kernel_info *info, void **state);  /* optional */
    void (*free_state)(void *state);                                    /* optional */
    onyx_status *(*compute)(onyx_kernel_ctx *ctx);
    onyx_infer_fn infer;      /* optional: the op schema's rule (ir/infer.h) */
    /* Optional: true if the state made by init holds everything compute
     * needs of constant input k (e.g. pre-packed weights), so compute never
     * reads that input's data. The session then frees the constant's bytes
     * (only its shape stays), so weights are not held twice. */
    bool (*consumes_const_input)(const void *state, size_t k);
} onyx_op_def;

#define ONYX_OPSET_LATEST INT_MAX

/* Type masks for op_def.types */
#define ONYX_T(dt) (UINT64_C(1) << (dt))
#define ONYX_T_FLOATS (ONYX_T(ONYX_FLOAT) | ONYX_T(ONYX_DOUBLE) | ONYX_T(ONYX_FLOAT16) | ONYX_T(ONYX_BFLOAT16))
#define ONYX_T_SINTS (ONYX_T(ONYX_INT8) | ONYX_T(ONYX_INT16) | ONYX_T(ONYX_INT32) | ONYX_T(ONYX_INT64))
#define ONYX_T_UINTS (ONYX_T(ONYX_UINT8) | ONYX_T(ONYX_UINT16) | ONYX_T(ONYX_UINT32) | ONYX_T(ONYX_UINT64))
#define ONYX_T_INTS (ONYX_T_SINTS | ONYX_T_UINTS)
#define ONYX_T_NUMERIC (ONYX_T_FLOATS | ONYX_T_INTS)
#define ONYX_T_ALL_POD (ONYX_T_NUMERIC | ONYX_T(ONYX_BOOL) | ONYX_T(ONYX_COMPLEX64) | ONYX_T(ONYX_COMPLEX128) \
    | ONYX_T(ONYX_FLOAT8E4M3FN) | ONYX_T(ONYX_FLOAT8E4M3FNUZ) | ONYX_T(ONYX_FLOAT8E5M2) \
    | ONYX_T(ONYX_FLOAT8E5M2FNUZ) | ONYX_T(ONYX_FLOAT8E8M0) | ONYX_T(ONYX_UINT4) | ONYX_T(ONYX_INT4) \
    | ONYX_T(ONYX_FLOAT4E2M1) | ONYX_T(ONYX_UINT2) | ONYX_T(ONYX_INT2))
#define ONYX_T_ALL (ONYX_T_ALL_POD | ONYX_T(ONYX_STRING))

/* ---- registry ---- */

/* The kernel for a node, given its domain/op/opset and the element type of
 * its constraining input (0 if unknown). NULL if none. */
const onyx_op_def *onyx_cpu_find_kernel(const char *domain, const char *op_type, int opset,
                                        int dtype);
/* True if some kernel exists for (domain, op) at any version: used to tell
 * "unknown operator" from "operator not supported at this opset/type". */
bool onyx_cpu_has_op(const char *domain, const char *op_type);
/* Iterate all registered defs (support table, docs). */
size_t onyx_cpu_kernel_count(void);
const onyx_op_def *onyx_cpu_kernel_at(size_t i);

/* ---- helpers shared by kernels (kernels/common.c) ---- */

/* Numpy-style multidirectional broadcast of two shapes into out (rank =
 * max). Error if incompatible. */
onyx_status *onyx_broadcast_shapes(const int64_t *a, int ra, const int64_t *b, int rb,
                                   int64_t *out, int *rout);
/* Normalise an axis in [-rank, rank) to [0, rank); error otherwise. */
onyx_status *onyx_normalize_axis(int64_t axis, int rank, int *out);
/* Row-major strides for dims (elements). */
void onyx_strides(const int64_t *dims, int rank, int64_t *strides);
/* Read an integer tensor (int32/int64) as int64 values into a malloc'd array. */
onyx_status *onyx_read_int_tensor(const onyx_value *v, int64_t **vals, int64_t *count);
/* Default inference rule: every output has the type and shape of input 0. */
onyx_status *onyx_infer_same_as_input0(onyx_infer_ctx *ctx);

#endif
