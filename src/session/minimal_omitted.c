/* What a minimal build (cmake/minimal_build.cmake, docs/build_options.md)
 * leaves out besides kernels: the features a model's plan never needs, each
 * replaced by an entry point that says it is not in this build. Their
 * sources (named in minimal_build.cmake, ONYX_MINIMAL_OMITTED_SOURCES) are
 * not compiled there, and this file is compiled only there (with
 * ONYX_MINIMAL_BUILD); in every other build it is empty.
 *
 *   provider plugins (providers/plugin.c, dlopen of libonyx_provider_*.so):
 *     the session logs the error and runs the nodes on the CPU, as for a
 *     missing library (or fails with disable_provider_fallback);
 *   saving a model (ir/save_model.c, format/encode.c): optimized_model_filepath
 *     fails the session;
 *   bfloat16 fast-math (gemm/sgemm_bf16*.c, nchwc/nchwc_conv_bf16*.c): never available, so
 *     session.enable_bf16_fastmath is ignored with its log line;
 *   the Gradient operator's expansion (ir/gradient.c), unless the operator
 *     list names Gradient: a model with one is refused;
 *   profiling (session/profiler.c): a session that asks for it gets a
 *     profiler that records nothing, and ending the profile says why;
 *   I/O binding (session/io_binding.c): creating a binding fails, so the
 *     other entry points only ever see NULL (device tensors stay);
 *   the partitioner (session/partition.c): device providers come only from
 *     provider libraries, so every provider here runs on the host and there
 *     is nothing to group or copy;
 *   what only device providers use (session/run_providers.c,
 *     session/outer_copies.c): no provider here has a per-run pair or a
 *     device to copy outer values to;
 *   the body runner of control-flow kernels (session/subgraph.c), when no
 *     kept kernel has a graph attribute (ONYX_MINIMAL_OMITS_subgraphs);
 *   the constructors of sequences, maps and optionals (core/value_compose.c),
 *     when no kept kernel takes or makes one (ONYX_MINIMAL_OMITS_composite_values):
 *     nothing in such a build could read them;
 *   the inlining of model-local functions (ir/function_inline.c), when the
 *     operator list's features line names no local_functions: a node that
 *     calls one is refused. (Sparse tensors likewise: format/tensor_proto.c.) */
#ifdef ONYX_MINIMAL_BUILD
#include <string.h>
#include <time.h>
#include "onyx.h"
#include "core/status.h"
#include "core/value.h"
#include "ir/gradient.h"
#include "ir/save_model.h"
#include "providers/cpu/gemm/sgemm_bf16.h"
#include "providers/cpu/kernels/nchwc/nchwc_conv_bf16.h"
#include "providers/provider.h"
#include "ir/function_inline.h"
#include "session/partition.h"
#include "session/profiler.h"
#include "session/session.h"
#include "session/subgraph.h"

/* the advice each error ends with, stored once ("%s" in NOT_IN_MINIMAL) */
#define NOT_IN_MINIMAL "is not in this minimal build%s"
static const char rebuild[] = " (docs/build_options.md): build without ONYX_OPS_CONFIG / ONYX_OPS_FROM_MODELS";

onyx_status *onyx_provider_load(const char *path, const char *const *keys, const char *const *values, size_t n,
                                onyx_provider **out) {
    (void)keys, (void)values, (void)n, (void)out;
    return onyx_error(ONYX_ERR_NOT_IMPLEMENTED, "execution provider library %s could not start: loading "
                      "provider libraries " NOT_IN_MINIMAL, path ? path : "(null)", rebuild);
}

onyx_status *onyx_graph_save(const onyx_graph *g, const onyx_model *m, const char *path,
                             size_t external_threshold) {
    (void)g, (void)m, (void)external_threshold;
    return onyx_error(ONYX_ERR_NOT_IMPLEMENTED, "writing %s: saving models " NOT_IN_MINIMAL,
                      path ? path : "(null)", rebuild);
}

bool onyx_bf16_amx_usable(void) { return false; }
bool onyx_bf16_fastmath_available(void) { return false; }
onyx_bf16_path onyx_bf16_path_here(const char **why) {
    if (why) *why = "bfloat16 fast-math is not in this minimal build";
    return ONYX_BF16_OFF;
}

onyx_status *onyx_bf16_pack_b(const onyx_bf16_isa *isa, onyx_threadpool *pool, bool transB, size_t K, size_t N,
                              const float *B, size_t ldb, onyx_bf16_mat **out) {
    (void)isa, (void)pool, (void)transB, (void)K, (void)N, (void)B, (void)ldb, (void)out;
    return ONYX_NOT_IMPLEMENTED("bfloat16 fast-math " NOT_IN_MINIMAL, rebuild);
}

void onyx_bf16_mat_free(onyx_bf16_mat *m) { (void)m; }

onyx_status *onyx_bf16_gemm(const onyx_bf16_isa *isa, size_t M, float alpha, const float *A, size_t lda,
                            bool transA, const onyx_bf16_mat *B, float beta, float *C, size_t ldc,
                            const onyx_gemm_epilogue *ep, onyx_threadpool *tp) {
    (void)isa, (void)M, (void)alpha, (void)A, (void)lda, (void)transA, (void)B, (void)beta, (void)C, (void)ldc,
        (void)ep, (void)tp;
    return ONYX_NOT_IMPLEMENTED("bfloat16 fast-math " NOT_IN_MINIMAL, rebuild);
}

const onyx_nchwc_bf16_kernel *onyx_nchwc_bf16_pick(const onyx_pack_ctx *pk, int blk) {
    return (void)pk, (void)blk, NULL;
}
void onyx_nchwc_bf16_free(onyx_nchwc_bf16_w *w) { (void)w; }
onyx_status *onyx_nchwc_bf16_pack(onyx_threadpool *pool, const float *w, const int64_t wdims[4],
                                  onyx_nchwc_bf16_w **out) {
    (void)pool, (void)w, (void)wdims, (void)out;
    return ONYX_NOT_IMPLEMENTED("bfloat16 fast-math " NOT_IN_MINIMAL, rebuild);
}
onyx_status *onyx_nchwc_bf16_conv(const onyx_nchwc_bf16_kernel *k, const onyx_nchwc_geom *g, const float *x,
                                  const onyx_nchwc_bf16_w *w, const float *bias, const float *z, float *y,
                                  const onyx_nchwc_act *act, onyx_threadpool *tp) {
    (void)k, (void)g, (void)x, (void)w, (void)bias, (void)z, (void)y, (void)act, (void)tp;
    return ONYX_NOT_IMPLEMENTED("bfloat16 fast-math " NOT_IN_MINIMAL, rebuild);
}

#ifndef ONYX_MINIMAL_KEEPS_GRADIENT
onyx_status *onyx_expand_gradients(onyx_graph *g) {
    for (size_t i = 0; i < g->n_nodes; i++)
        if (!g->nodes[i].dead && !strcmp(g->nodes[i].op_type, "Gradient") &&
            !strcmp(g->nodes[i].domain, "ai.onnx.preview.training"))
            return onyx_error(ONYX_ERR_NOT_IMPLEMENTED, "node #%zu: operator Gradient (domain "
                              "ai.onnx.preview.training) " NOT_IN_MINIMAL " or with Gradient in the operator list",
                              i, rebuild);
    return NULL;
}
#endif

static onyx_profiler records_nothing;
onyx_profiler *onyx_profiler_create(const char *path) { return (void)path, &records_nothing; }
void onyx_profiler_free(onyx_profiler *p) { (void)p; }
void onyx_profiler_session_event(onyx_profiler *p, const char *name, int64_t start_ns, int64_t end_ns) {
    (void)p, (void)name, (void)start_ns, (void)end_ns;
}
void onyx_profiler_node_event(onyx_profiler *p, const onyx_node *n, const char *provider,
                              const onyx_value *const *in, onyx_value *const *out, int64_t start_ns,
                              int64_t end_ns) {
    (void)p, (void)n, (void)provider, (void)in, (void)out, (void)start_ns, (void)end_ns;
}
onyx_status *onyx_profiler_write(onyx_profiler *p, const char **path_out) {
    (void)p;
    if (path_out) *path_out = NULL;
    return ONYX_NOT_IMPLEMENTED("profiling " NOT_IN_MINIMAL, rebuild);
}
/* (the run timeouts read this clock too) */
int64_t onyx_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

onyx_status *onyx_io_binding_create(onyx_session *s, onyx_io_binding **out) {
    (void)s;
    if (out) *out = NULL;
    return ONYX_NOT_IMPLEMENTED("I/O binding " NOT_IN_MINIMAL, rebuild);
}
/* a binding never exists here: the rest take the NULL that create left */
static onyx_status *no_binding(void) { return ONYX_INVALID_ARG("the I/O binding is NULL (I/O binding " NOT_IN_MINIMAL ")", rebuild); }
void onyx_io_binding_free(onyx_io_binding *b) { (void)b; }
void onyx_io_binding_clear_inputs(onyx_io_binding *b) { (void)b; }
void onyx_io_binding_clear_outputs(onyx_io_binding *b) { (void)b; }
onyx_status *onyx_io_binding_bind_input(onyx_io_binding *b, const char *name, const onyx_value *value) {
    return (void)b, (void)name, (void)value, no_binding();
}
onyx_status *onyx_io_binding_bind_output(onyx_io_binding *b, const char *name, onyx_value *value) {
    return (void)b, (void)name, (void)value, no_binding();
}
onyx_status *onyx_io_binding_bind_output_to_device(onyx_io_binding *b, const char *name, const char *provider) {
    return (void)b, (void)name, (void)provider, no_binding();
}
onyx_status *onyx_session_run_with_binding(onyx_session *s, const onyx_run_options *run_opts, onyx_io_binding *b) {
    return (void)s, (void)run_opts, (void)b, no_binding();
}
size_t onyx_io_binding_output_count(const onyx_io_binding *b) { return (void)b, 0; }

onyx_status *onyx_run_begin_providers(const onyx_session *s, const onyx_run_state *rs, const onyx_run_hooks *hooks,
                                      onyx_run_pair *pair) {
    return (void)s, (void)rs, (void)hooks, (void)pair, NULL;
}
onyx_status *onyx_run_end_providers(const onyx_session *s, onyx_run_pair *pair, onyx_status *st) {
    return (void)s, (void)pair, st;
}
onyx_status *onyx_plan_find_outer_copies(onyx_plan *plan) { return (void)plan, NULL; }
bool onyx_outer_copy_reuse(onyx_run_state *rs, size_t i, const onyx_value *src) {
    return (void)rs, (void)i, (void)src, false;
}
void onyx_outer_copy_keep(onyx_run_state *rs, size_t i, const onyx_value *src) { (void)rs, (void)i, (void)src; }
void onyx_outer_copies_free(onyx_run_state *rs) { (void)rs; }
const char *onyx_io_binding_output_name(const onyx_io_binding *b, size_t i) { return (void)b, (void)i, NULL; }
onyx_value *onyx_io_binding_output(onyx_io_binding *b, size_t i) { return (void)b, (void)i, NULL; }

onyx_status *onyx_partition(onyx_graph *g, onyx_provider *const *prov, size_t n_prov,
                            onyx_partition_report *rep) {
    (void)g;
    memset(rep, 0, sizeof *rep);
    for (size_t p = 0; p < n_prov; p++)
        if (prov[p]->device)
            return onyx_error(ONYX_ERR_NOT_IMPLEMENTED, "execution provider '%s' runs on a device: partitioning "
                              "for devices " NOT_IN_MINIMAL, prov[p]->name, rebuild);
    return NULL;
}
/* no constant is ever copied to a device here */
void onyx_partition_release_device_constants(onyx_graph *g) { (void)g; }

#ifdef ONYX_MINIMAL_OMITS_subgraphs
onyx_status *onyx_body_create(const onyx_kernel_host *h, const onyx_graph *g, onyx_body **out) {
    (void)h, (void)g;
    if (out) *out = NULL;
    return ONYX_NOT_IMPLEMENTED("graph attributes (If, Loop, Scan bodies) are not in this minimal build: add "
                                "their operators to its list");
}
void onyx_body_free(onyx_body *b) { (void)b; }
onyx_status *onyx_body_run(const onyx_body *b, onyx_kernel_ctx *ctx, const onyx_value *const *inputs,
                           size_t n_inputs, onyx_value *const *provided, onyx_value **outputs) {
    (void)b, (void)ctx, (void)inputs, (void)n_inputs, (void)provided, (void)outputs;
    return ONYX_NOT_IMPLEMENTED("graph attributes are not in this minimal build");
}
#endif

#ifdef ONYX_MINIMAL_OMITS_local_functions
onyx_status *onyx_inline_functions(const onyx_model *m, const onyx_graph_proto *gp,
                                   struct onyx_arena *arena, onyx_inlined_nodes *out) {
    (void)arena;
    for (size_t i = 0; i < gp->n_nodes; i++) {
        const onyx_node_proto *np = &gp->nodes[i];
        for (size_t f = 0; f < m->n_functions; f++) {
            const onyx_function_proto *fn = &m->functions[f];
            if (fn->name && np->op_type && !strcmp(fn->name, np->op_type) &&
                !strcmp(fn->domain ? fn->domain : "", np->domain ? np->domain : ""))
                return onyx_error(ONYX_ERR_NOT_IMPLEMENTED, "node #%zu calls the model-local function %s: "
                                  "model-local functions are not in this minimal build (none of its operator "
                                  "list's models has one; docs/build_options.md)", i, fn->name);
        }
    }
    *out = (onyx_inlined_nodes){gp->nodes, NULL, gp->n_nodes}; /* no call: the nodes as they are */
    return NULL;
}
#endif

#ifdef ONYX_MINIMAL_OMITS_composite_values
#define NO_COMPOSITES "sequences, maps and optionals are not in this minimal build: its operator list names " \
                      "no operator that takes or makes one"
/* they take ownership of what they are given, on failure too */
onyx_status *onyx_sequence_create(onyx_value *const *items, size_t n, onyx_value **out) {
    for (size_t i = 0; items && i < n; i++) onyx_value_destroy(items[i]);
    if (out) *out = NULL;
    return ONYX_NOT_IMPLEMENTED(NO_COMPOSITES);
}
onyx_status *onyx_map_create(onyx_value *keys, onyx_value *values, onyx_value **out) {
    onyx_value_destroy(keys);
    onyx_value_destroy(values);
    if (out) *out = NULL;
    return ONYX_NOT_IMPLEMENTED(NO_COMPOSITES);
}
onyx_status *onyx_optional_create(onyx_value *item, onyx_element_type elem_type, onyx_value **out) {
    (void)elem_type;
    onyx_value_destroy(item);
    if (out) *out = NULL;
    return ONYX_NOT_IMPLEMENTED(NO_COMPOSITES);
}
const onyx_value *onyx_map_keys(const onyx_value *map) { return (void)map, NULL; }
const onyx_value *onyx_map_values(const onyx_value *map) { return (void)map, NULL; }
#endif

#else
typedef int onyx_minimal_omitted_unused; /* ISO C wants a declaration in every file */
#endif
