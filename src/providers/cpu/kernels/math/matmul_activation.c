/* ai.onyx MatMulActivation(A, W[, bias]), made by the optimiser's
 * matmul_activation_fusion (level all, sessions without a device provider)
 * from MatMul followed by com.microsoft Gelu, BiasGelu or FastGelu:
 *
 *   Y = act(A W + bias)   A (..., K) float, W (K, N) float, bias (N)
 *   activation "Gelu" (0.5 x (1 + erf(x / sqrt 2))) or "FastGelu" (tanh form)
 *
 * One SGEMM: the bias and the GELU on each block of Y right after its store
 * (gemm.h, onyx_gemm_post_fn), while the block is in L2,
 * instead of a second pass over the whole (tokens x N) output.
 * A constant W is packed once in init (the session then frees its bytes);
 * a half-stored W (float16 bytes under a float32 value, a float16 model's
 * weight kept in 16 bits by optimizer/passes_half.c) is packed in float16
 * and widened block by block as the GEMM runs (sgemm_half.h). */
#include <stdlib.h>
#include <string.h>
#include "providers/cpu/gemm/gemm.h"
#include "providers/cpu/kernel.h"

typedef struct mma_state {
    onyx_gemm_post_fn act;
    int64_t K, N;
    onyx_packed_mat *w;   /* NULL: W is not constant, used in place */
} mma_state;

static void mma_state_free(void *p) {
    mma_state *s = p;
    if (!s) return;
    onyx_packed_mat_free(s->w);
    free(s);
}

static onyx_status *mma_activation(const onyx_node *node, onyx_gemm_post_fn *act) {
    const char *name = onyx_attr_string(node, "activation", "");
    if (!strcmp(name, "Gelu")) *act = onyx_gemm_post_gelu;
    else if (!strcmp(name, "FastGelu")) *act = onyx_gemm_post_fast_gelu;
    else return ONYX_INVALID_ARG("activation '%s' is not supported (Gelu, FastGelu)", name);
    return NULL;
}

static onyx_status *mma_init(const onyx_kernel_info *info, void **state) {
    *state = NULL;
    mma_state *s = calloc(1, sizeof *s);
    if (!s) return ONYX_OOM();
    onyx_status *st = mma_activation(info->node, &s->act);
    const onyx_value *w = info->n_in > 1 && info->const_in ? info->const_in[1] : NULL;
    bool half = onyx_is_tensor(w) && w->dtype == ONYX_FLOAT16 && info->in_types && info->in_types[1] &&
                info->in_types[1]->dtype == ONYX_FLOAT;
    if (!st && onyx_is_tensor(w) && (w->dtype == ONYX_FLOAT || half) && w->rank == 2 && w->numel > 0) {
        s->K = w->dims[0];
        s->N = w->dims[1];
        size_t K = (size_t)s->K, N = (size_t)s->N;
        st = half ? onyx_sgemm_pack_b_half(info->pack, false, K, N, w->data, N, &s->w)
                  : onyx_sgemm_pack_b(info->pack, false, K, N, w->data, N, &s->w);
    }
    if (st) {
        mma_state_free(s);
        return st;
    }
    *state = s;
    return NULL;
}

static onyx_status *mma_compute(onyx_kernel_ctx *ctx) {
    const mma_state *s = ctx->state;
    const onyx_value *a = ctx->n_in > 0 ? ctx->in[0] : NULL, *w = ctx->n_in > 1 ? ctx->in[1] : NULL;
    const onyx_value *b = ctx->n_in > 2 ? ctx->in[2] : NULL;
    char sa[200], sw[200];
    if (!onyx_is_tensor(a) || a->dtype != ONYX_FLOAT || a->rank < 1)
        return ONYX_INVALID_ARG("A must be a float tensor of rank >= 1");
    /* float16 bytes only for the half-stored W that init packed */
    bool w_type = onyx_is_tensor(w) && (w->dtype == ONYX_FLOAT || (w->dtype == ONYX_FLOAT16 && s && s->w));
    if (!w_type || w->rank != 2 || w->dims[0] != a->dims[a->rank - 1])
        return ONYX_INVALID_ARG("W must be a 2-D float tensor (K, N) with K = A's last dimension: A %s, W %s",
                                onyx_shape_str(a->dims, a->rank, sa, sizeof sa),
                                onyx_shape_str(w ? w->dims : NULL, w ? w->rank : 0, sw, sizeof sw));
    int64_t K = w->dims[0], N = w->dims[1];
    if (b && (!onyx_is_tensor(b) || b->dtype != ONYX_FLOAT || b->rank != 1 || b->dims[0] != N))
        return ONYX_INVALID_ARG("bias must be a 1-D float tensor of %lld values (W's columns)", (long long)N);
    onyx_gemm_post_fn act;
    if (s) act = s->act;
    else ONYX_TRY(mma_activation(ctx->node, &act));
    int64_t dims[ONYX_MAX_RANK];
    memcpy(dims, a->dims, (size_t)a->rank * sizeof *dims);
    dims[a->rank - 1] = N;
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, ONYX_FLOAT, a->rank, dims, &y));
    size_t M = K ? (size_t)(a->numel / K) : (size_t)(y->numel / (N ? N : 1));
    if (y->numel == 0) return NULL;
    const onyx_packed_mat *pw = s && s->w && s->K == K && s->N == N ? s->w : NULL;
    bool in_gemm = onyx_sgemm_post_runs((size_t)K, 1.0f, pw);
    onyx_gemm_epilogue ep = {.bias_kind = b ? ONYX_GEMM_BIAS_COL : ONYX_GEMM_BIAS_NONE,
                             .bias = b ? b->data : NULL, .post = in_gemm ? act : NULL};
    onyx_gemm_operand ao = {.data = a->data, .ld = (size_t)K}, wo = {.data = w->data, .ld = (size_t)N};
    if (pw) wo = (onyx_gemm_operand){.packed = pw};
    ONYX_TRY(onyx_sgemm_ex(M, (size_t)N, (size_t)K, 1.0f, &ao, &wo, 0.0f, y->data, (size_t)N, &ep, ctx->tp));
    if (!in_gemm) act(NULL, y->data, (size_t)N, M, (size_t)N);   /* over Y, the bias in already */
    return NULL;
}

/* With W packed, compute reads only its shape. */
static bool mma_consumes(const void *state, size_t k) {
    const mma_state *s = state;
    return s && s->w && k == 1;
}

const onyx_op_def onyx_ops_matmul_activation[] = {
    {"ai.onyx", "MatMulActivation", 1, ONYX_OPSET_LATEST, ONYX_T(ONYX_FLOAT), 0, mma_init, mma_state_free,
     mma_compute, mma_consumes},
    {0},
};
