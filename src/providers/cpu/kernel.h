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
#include "ir/shape_util.h"
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
    /* Optional: true if the state made by init holds everything compute
     * needs of constant input k (e.g. pre-packed weights), so compute never
     * reads that input's data. The session then frees the constant's bytes
     * (only its shape stays), so weights are not held twice. */
    bool (*consumes_const_input)(const void *state, size_t k);
    /* Optional: the input whose bytes output 0 may take (provider.h's
     * output_shares_input), -1 none. */
    int (*output_shares_input)(const void *state);
} onyx_op_def;

#define ONYX_OPSET_LATEST INT_MAX


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

#endif
