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
 *     list names Gradient: a model with one is refused. */
#ifdef ONYX_MINIMAL_BUILD
#include <string.h>
#include "core/status.h"
#include "ir/gradient.h"
#include "ir/save_model.h"
#include "providers/cpu/gemm/sgemm_bf16.h"
#include "providers/cpu/kernels/nchwc/nchwc_conv_bf16.h"
#include "providers/provider.h"

#define NOT_IN_MINIMAL "is not in this minimal build (docs/build_options.md): build without ONYX_OPS_CONFIG / " \
                       "ONYX_OPS_FROM_MODELS"

onyx_status *onyx_provider_load(const char *path, const char *const *keys, const char *const *values, size_t n,
                                onyx_provider **out) {
    (void)keys, (void)values, (void)n, (void)out;
    return onyx_error(ONYX_ERR_NOT_IMPLEMENTED, "execution provider library %s could not start: loading "
                      "provider libraries " NOT_IN_MINIMAL, path ? path : "(null)");
}

onyx_status *onyx_graph_save(const onyx_graph *g, const onyx_model *m, const char *path,
                             size_t external_threshold) {
    (void)g, (void)m, (void)external_threshold;
    return onyx_error(ONYX_ERR_NOT_IMPLEMENTED, "writing %s: saving models " NOT_IN_MINIMAL,
                      path ? path : "(null)");
}

bool onyx_bf16_amx_usable(void) { return false; }
bool onyx_bf16_fastmath_available(void) { return false; }
bool onyx_bf16_pack_mode(bool on) { return (void)on, false; }
bool onyx_bf16_pack_mode_on(void) { return false; }

onyx_status *onyx_bf16_pack_b(const onyx_bf16_isa *isa, bool transB, size_t K, size_t N, const float *B,
                              size_t ldb, onyx_bf16_mat **out) {
    (void)isa, (void)transB, (void)K, (void)N, (void)B, (void)ldb, (void)out;
    return ONYX_NOT_IMPLEMENTED("bfloat16 fast-math " NOT_IN_MINIMAL);
}

void onyx_bf16_mat_free(onyx_bf16_mat *m) { (void)m; }

onyx_status *onyx_bf16_gemm(const onyx_bf16_isa *isa, size_t M, float alpha, const float *A, size_t lda,
                            bool transA, const onyx_bf16_mat *B, float beta, float *C, size_t ldc,
                            const onyx_gemm_epilogue *ep, onyx_threadpool *tp) {
    (void)isa, (void)M, (void)alpha, (void)A, (void)lda, (void)transA, (void)B, (void)beta, (void)C, (void)ldc,
        (void)ep, (void)tp;
    return ONYX_NOT_IMPLEMENTED("bfloat16 fast-math " NOT_IN_MINIMAL);
}

const onyx_nchwc_bf16_kernel *onyx_nchwc_bf16_pick(int blk) { return (void)blk, NULL; }
void onyx_nchwc_bf16_free(onyx_nchwc_bf16_w *w) { (void)w; }
onyx_status *onyx_nchwc_bf16_pack(const float *w, const int64_t wdims[4], onyx_nchwc_bf16_w **out) {
    (void)w, (void)wdims, (void)out;
    return ONYX_NOT_IMPLEMENTED("bfloat16 fast-math " NOT_IN_MINIMAL);
}
onyx_status *onyx_nchwc_bf16_conv(const onyx_nchwc_bf16_kernel *k, const onyx_nchwc_geom *g, const float *x,
                                  const onyx_nchwc_bf16_w *w, const float *bias, const float *z, float *y,
                                  const onyx_nchwc_act *act, onyx_threadpool *tp) {
    (void)k, (void)g, (void)x, (void)w, (void)bias, (void)z, (void)y, (void)act, (void)tp;
    return ONYX_NOT_IMPLEMENTED("bfloat16 fast-math " NOT_IN_MINIMAL);
}

#ifndef ONYX_MINIMAL_KEEPS_GRADIENT
onyx_status *onyx_expand_gradients(onyx_graph *g) {
    for (size_t i = 0; i < g->n_nodes; i++)
        if (!g->nodes[i].dead && !strcmp(g->nodes[i].op_type, "Gradient") &&
            !strcmp(g->nodes[i].domain, "ai.onnx.preview.training"))
            return onyx_error(ONYX_ERR_NOT_IMPLEMENTED, "node #%zu: operator Gradient (domain "
                              "ai.onnx.preview.training) " NOT_IN_MINIMAL " or with Gradient in the operator list",
                              i);
    return NULL;
}
#endif

#else
typedef int onyx_minimal_omitted_unused; /* ISO C wants a declaration in every file */
#endif
