/* com.microsoft Attention and MultiHeadAttention (ONNX Runtime's
 * semantics), the operators the graph optimiser's attention fusion produces
 * for BERT- and GPT-2-style attention. Attention (self-attention with the
 * input projection):
 *
 *   QKV = input (B, S, D_in) x weights (D_in, Dq + Dk + Dv) + bias
 *   per batch b and head h (head sizes Dq/N and Dv/N):
 *     P = softmax(scale * Q_bh K_bh^T + mask + attention_bias)   (S x S)
 *     output[b, :, h] = P V_bh
 *
 * mask_index (int32): (B) end positions, (2B) end and start positions,
 * (B, T) or (B, S, T) raw masks where values > 0 attend and others add
 * mask_filter_value; (1, 1) / (B, 1) is a dummy mask; a (1, T) mask serves
 * every batch (ONNX Runtime requires (B, T)). unidirectional = 1
 * masks keys after the query (with the lowest float, as ONNX Runtime).
 * attention_bias is added to the scores; it may broadcast on every axis.
 * past/present (key-value cache) and rotary embedding are not supported.
 *
 * MultiHeadAttention takes Q (B, S, D), K (B, L, D) and V (B, L, Dv) already
 * projected (optionally plus a bias), for cross-attention and projections
 * that are not constant; key_padding_mask takes the mask_index forms. With
 * past_key/past_value (B, N, P, head size) the keys are the past ones then
 * the new ones: present_key/present_value (B, N, P + L, head size) hold that
 * concatenation and the attention runs over it (T = P + L; unidirectional
 * masks from the query's position P + s). Buffer sharing
 * (past_sequence_length), cache_indirection and the qk output are not
 * supported.
 *
 * The projection is one SGEMM with the constant weights packed in init and
 * the bias in the GEMM's store; the heads then run in parallel, reading Q,
 * K and V in place from the projection (leading dimension Dq + Dk + Dv) and
 * writing straight into the output layout, so nothing is transposed. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "providers/cpu/gemm/gemm.h"
#include "providers/cpu/kernel.h"
#include "providers/cpu/kernels/math/linalg.h"
#include "providers/cpu/kernels/nn_math.h"

typedef struct attn_state {
    int64_t din, total;
    onyx_packed_mat *w;
} attn_state;

static void attn_state_free(void *p) {
    attn_state *s = p;
    if (!s) return;
    onyx_packed_mat_free(s->w);
    free(s);
}

static onyx_status *attn_init(const onyx_kernel_info *info, void **state) {
    *state = NULL;
    const onyx_value *w = info->n_in > 1 && info->const_in ? info->const_in[1] : NULL;
    if (!onyx_is_tensor(w) || w->rank != 2 || w->numel == 0) return NULL;
    /* float, or float16 bytes of a float value (a half-stored weight, packed in float16) */
    bool half = w->dtype == ONYX_FLOAT16 && info->in_types && info->in_types[1] && info->in_types[1]->dtype == ONYX_FLOAT;
    if (w->dtype != ONYX_FLOAT && !half) return NULL;
    attn_state *s = calloc(1, sizeof *s);
    if (!s) return ONYX_OOM();
    s->din = w->dims[0];
    s->total = w->dims[1];
    onyx_status *st = half ? onyx_sgemm_pack_b_half(info->pack, false, (size_t)s->din, (size_t)s->total, w->data, (size_t)s->total, &s->w)
                           : onyx_sgemm_pack_b(info->pack, false, (size_t)s->din, (size_t)s->total, w->data, (size_t)s->total, &s->w);
    if (st) {
        free(s);
        return st;
    }
    *state = s;
    return NULL;
}

/* ------------------------------------------------------------ parameters */

typedef enum attn_mask_kind {
    MASK_NONE,
    MASK_END,        /* (B): keys >= end are masked */
    MASK_END_START,  /* (2B): keys >= end or < start are masked */
    MASK_KEY,        /* (B, T) raw */
    MASK_FULL,       /* (B, S, T) raw */
} attn_mask_kind;

typedef struct attn_params {
    int64_t B, S, T, din, N, dq, dk, dv, hq, hv, total;
    int64_t L, P;                     /* MultiHeadAttention: new keys, past keys (T = P + L) */
    /* Q, K, V of batch 0, their per-batch strides and row strides (elements) */
    const float *q, *k, *v;
    int64_t q_bstride, k_bstride, v_bstride, ldq, ldk, ldv;
    int64_t k_hstride, v_hstride;     /* head offsets in K and V: hq and hv, or a head's whole rows (BNSH) */
    float scale, filter;
    bool causal;
    attn_mask_kind mask;
    const onyx_value *mask_v;
    const onyx_value *abias;          /* attention_bias (4-D) or NULL */
    int64_t ab_str[4];                /* its element strides, 0 on broadcast axes */
} attn_params;

static int64_t mask_at(const onyx_value *m, size_t i) {
    return m->dtype == ONYX_INT32 ? ((const int32_t *)m->data)[i] : ((const int64_t *)m->data)[i];
}

static onyx_status *attn_check_mask(const onyx_value *m, attn_params *p) {
    char s[200];
    p->mask = MASK_NONE;
    p->mask_v = m;
    if (!m) return NULL;
    if (!onyx_is_tensor(m) || (m->dtype != ONYX_INT32 && m->dtype != ONYX_INT64))
        return ONYX_INVALID_ARG("mask_index must be an int32 tensor");
    const int64_t *d = m->dims;
    if (m->rank == 1 && d[0] == p->B) p->mask = MASK_END;
    else if (m->rank == 1 && d[0] == 2 * p->B) p->mask = MASK_END_START;
    else if (m->rank == 2 && (d[0] == 1 || d[0] == p->B) && d[1] == 1 && p->T != 1) p->mask = MASK_NONE;  /* dummy */
    else if (m->rank == 2 && (d[0] == p->B || d[0] == 1) && d[1] == p->T) p->mask = MASK_KEY;
    else if (m->rank == 3 && d[0] == p->B && d[1] == p->S && d[2] == p->T) p->mask = MASK_FULL;
    else if (m->rank == 4) return ONYX_NOT_IMPLEMENTED("4-D mask_index is not supported");
    else
        return ONYX_INVALID_ARG("mask_index %s must be (B), (2B), (B, T) or (B, S, T) with B=%lld, S=%lld, T=%lld",
                                onyx_shape_str(d, m->rank, s, sizeof s), (long long)p->B, (long long)p->S,
                                (long long)p->T);
    return NULL;
}

static onyx_status *attn_check_bias4(const onyx_value *ab, attn_params *p) {
    p->abias = NULL;
    if (!ab) return NULL;
    char s[200];
    int64_t full[4] = {p->B, p->N, p->S, p->T};
    if (!onyx_is_tensor(ab) || ab->dtype != ONYX_FLOAT || ab->rank != 4)
        return ONYX_INVALID_ARG("attention_bias must be a 4-D float tensor");
    int64_t run = 1;
    for (int i = 3; i >= 0; i--) {
        if (ab->dims[i] != 1 && ab->dims[i] != full[i])
            return ONYX_INVALID_ARG("attention_bias %s does not broadcast to (B, N, S, T) = (%lld, %lld, %lld, %lld)",
                                    onyx_shape_str(ab->dims, 4, s, sizeof s), (long long)full[0],
                                    (long long)full[1], (long long)full[2], (long long)full[3]);
        p->ab_str[i] = ab->dims[i] == 1 ? 0 : run;
        run *= ab->dims[i];
    }
    p->abias = ab;
    return NULL;
}

static onyx_status *attn_params_of(onyx_kernel_ctx *ctx, attn_params *p) {
    const onyx_value *x = ctx->in[0], *w = ctx->n_in > 1 ? ctx->in[1] : NULL, *b = ctx->n_in > 2 ? ctx->in[2] : NULL;
    char sx[200], sw[200];
    memset(p, 0, sizeof *p);
    if (!onyx_is_tensor(x) || x->dtype != ONYX_FLOAT || x->rank != 3)
        return ONYX_INVALID_ARG("input must be a 3-D float tensor (batch_size, sequence_length, hidden)");
    /* a float16 weight only as the packed copy of a half-stored one (attn_init) */
    const attn_state *ast = ctx->state;
    bool half_w = onyx_is_tensor(w) && w->dtype == ONYX_FLOAT16 && w->rank == 2 && ast && ast->din == w->dims[0] &&
                  ast->total == w->dims[1];
    if (!onyx_is_tensor(w) || (w->dtype != ONYX_FLOAT && !half_w) || w->rank != 2 || w->dims[0] != x->dims[2])
        return ONYX_INVALID_ARG("weights must be a 2-D float tensor (%lld, 3 x hidden), got %s for input %s",
                                (long long)x->dims[2], onyx_shape_str(w ? w->dims : NULL, w ? w->rank : 0, sw, sizeof sw),
                                onyx_shape_str(x->dims, x->rank, sx, sizeof sx));
    p->B = x->dims[0];
    p->S = p->T = x->dims[1];
    p->din = x->dims[2];
    p->total = w->dims[1];
    p->N = onyx_attr_int(ctx->node, "num_heads", 0);
    if (p->N <= 0) return ONYX_INVALID_ARG("num_heads must be positive, got %lld", (long long)p->N);
    size_t nq;
    const int64_t *q = onyx_attr_ints(ctx->node, "qkv_hidden_sizes", &nq);
    if (q && nq != 3) return ONYX_INVALID_ARG("qkv_hidden_sizes must have 3 values, got %zu", nq);
    p->dq = q ? q[0] : p->total / 3;
    p->dk = q ? q[1] : p->total / 3;
    p->dv = q ? q[2] : p->total / 3;
    if (p->dq <= 0 || p->dk != p->dq || p->dv <= 0 || p->dq + p->dk + p->dv != p->total || p->dq % p->N ||
        p->dv % p->N)
        return ONYX_INVALID_ARG("weights %s: hidden sizes (%lld, %lld, %lld) must be positive, Q and K equal, sum to "
                                "%lld and divide by num_heads %lld",
                                onyx_shape_str(w->dims, w->rank, sw, sizeof sw), (long long)p->dq, (long long)p->dk,
                                (long long)p->dv, (long long)p->total, (long long)p->N);
    p->hq = p->dq / p->N;
    p->hv = p->dv / p->N;
    if (b && (!onyx_is_tensor(b) || b->dtype != ONYX_FLOAT || b->rank != 1 || b->dims[0] != p->total))
        return ONYX_INVALID_ARG("bias must be a 1-D float tensor of %lld values", (long long)p->total);
    if (ctx->n_in > 4 && ctx->in[4]) return ONYX_NOT_IMPLEMENTED("past state is not supported");
    if (ctx->n_in > 6 && ctx->in[6]) return ONYX_NOT_IMPLEMENTED("past_sequence_length is not supported");
    if (ctx->n_out > 1 && ctx->out_used[1]) return ONYX_NOT_IMPLEMENTED("the present state output is not supported");
    if (onyx_attr_int(ctx->node, "do_rotary", 0)) return ONYX_NOT_IMPLEMENTED("do_rotary is not supported");
    float scale = onyx_attr_float(ctx->node, "scale", 0.0f);
    p->scale = scale != 0.0f ? scale : 1.0f / sqrtf((float)p->hq);
    p->filter = onyx_attr_float(ctx->node, "mask_filter_value", -10000.0f);
    p->causal = onyx_attr_int(ctx->node, "unidirectional", 0) != 0;
    ONYX_TRY(attn_check_mask(ctx->n_in > 3 ? ctx->in[3] : NULL, p));
    return attn_check_bias4(ctx->n_in > 5 ? ctx->in[5] : NULL, p);
}

/* ------------------------------------------------------------ heads */

/* In-place softmax of a row, vectorised like kernels/nn/softmax.c. */
NN_MULTIVERSION(attn_softmax_row, (float *restrict x, size_t n), (x, n), {
    float lane[NN_VL];
    size_t i = 0;
    float m = x[0];
    if (n >= NN_VL) {
        for (size_t j = 0; j < NN_VL; j++) lane[j] = x[j];
        for (i = NN_VL; i + NN_VL <= n; i += NN_VL)
            for (size_t j = 0; j < NN_VL; j++) lane[j] = nn_self(x[i + j] > lane[j], x[i + j], lane[j]);
        m = lane[0];
        for (size_t j = 1; j < NN_VL; j++) m = lane[j] > m ? lane[j] : m;
    }
    for (; i < n; i++) m = x[i] > m ? x[i] : m;
    for (size_t j = 0; j < NN_VL; j++) lane[j] = 0;
    for (i = 0; i + NN_VL <= n; i += NN_VL)
        for (size_t j = 0; j < NN_VL; j++) {
            float e = nn_expf(x[i + j] - m);
            x[i + j] = e;
            lane[j] += e;
        }
    float s = 0;
    for (size_t j = 0; j < NN_VL; j++) s += lane[j];
    for (; i < n; i++) {
        float e = nn_expf(x[i] - m);
        x[i] = e;
        s += e;
    }
    float inv = 1.0f / s;
    NN_LOOP(k, n, x[k] *= inv);
})

NN_MULTIVERSION(attn_add_row, (float *restrict x, const float *restrict a, size_t n), (x, a, n),
                { NN_LOOP(i, n, x[i] += a[i]); })

typedef struct attn_job {
    const attn_params *p;
    const float *keymask;      /* (B, T) additive, or NULL */
    float *y;                  /* (B, S, Dv) */
    la_error err;
} attn_job;

/* The additive mask value of a (B, S, T) raw mask. */
static float full_mask(const attn_params *p, int64_t b, int64_t i, int64_t t) {
    return mask_at(p->mask_v, (size_t)((b * p->S + i) * p->T + t)) > 0 ? 0.0f : p->filter;
}

/* Scores of query row i of (b, h) over its first n keys (the ones its row
 * block computed): mask and bias on the first lim <= n, softmax over them,
 * the rest 0 (keys past lim are masked, see attn_key_limit). */
static void attn_finish_row(const attn_job *j, int64_t b, int64_t h, int64_t i, float *row, float *tmp,
                            size_t n, size_t lim) {
    const attn_params *p = j->p;
    if (j->keymask) attn_add_row(row, j->keymask + b * p->T, lim);
    if (p->mask == MASK_FULL)
        for (size_t t = 0; t < lim; t++) row[t] += full_mask(p, b, i, (int64_t)t);
    if (p->abias) {
        const float *ab = (const float *)p->abias->data + b * p->ab_str[0] + h * p->ab_str[1] + i * p->ab_str[2];
        if (p->ab_str[3] == 1) {
            attn_add_row(row, ab, lim);
        } else {
            for (size_t t = 0; t < lim; t++) tmp[t] = ab[0];
            attn_add_row(row, tmp, lim);
        }
    }
    /* causal: query i sees the keys up to its own position, counted from
     * the end (keys before the first query are past context); with fewer
     * keys than queries the first rows see none (all masked, as ONNX
     * Runtime: a uniform row) */
    if (p->causal) {
        int64_t first = i + 1 + (p->T - p->S);
        for (size_t t = first > 0 ? (size_t)first : 0; t < lim; t++) row[t] = -FLT_MAX;
    }
    attn_softmax_row(row, lim);
    if (n > lim) memset(row + lim, 0, (n - lim) * sizeof *row);
}

/* An additive attention_bias at or below this masks its key: exp of the
 * score underflows to exactly 0 next to any score within ~9,900 of the
 * row's largest (-10000 is the masked value of BERT and GPT-2 exports and
 * ONNX Runtime's default mask_filter_value; causal masks use the lowest
 * float). */
#define ATTN_MASKED_BIAS -10000.0f

/* Keys [lim, T) of query row i contribute exactly 0 to its softmax: past
 * its causal limit, or a run of masked attention_bias values at the end
 * of its row. Those keys need no score, no exp and no product with V.
 * A row with every key masked keeps T (ONNX Runtime's uniform row). */
static size_t attn_key_limit(const attn_params *p, int64_t b, int64_t h, int64_t i) {
    size_t lim = (size_t)p->T;
    if (p->causal) {
        int64_t c = i + 1 + (p->T - p->S);
        if (c < 1) return lim;   /* every key masked */
        if (c < p->T) lim = (size_t)c;
    }
    if (p->abias && p->ab_str[3] == 1) {
        const float *ab = (const float *)p->abias->data + b * p->ab_str[0] + h * p->ab_str[1] + i * p->ab_str[2];
        size_t t = lim;
        while (t > 0 && ab[t - 1] <= ATTN_MASKED_BIAS) t--;
        if (t > 0) lim = t;
    }
    return lim;
}

/* Query rows per block when keys are skipped: each block computes the keys
 * up to its rows' largest limit (a causal 128 x 128 head: 56% of the full
 * products with blocks of 16). */
#define ATTN_ROW_BLOCK 16

static onyx_status *attn_head(attn_job *j, int64_t bh, float *scores, float *tmp, size_t *lims) {
    const attn_params *p = j->p;
    int64_t b = bh / p->N, h = bh % p->N;
    size_t S = (size_t)p->S, T = (size_t)p->T;
    const float *q = p->q + b * p->q_bstride + h * p->hq, *k = p->k + b * p->k_bstride + h * p->k_hstride,
                *v = p->v + b * p->v_bstride + h * p->v_hstride;
    bool skips = false;
    for (size_t i = 0; i < S; i++) skips |= (lims[i] = attn_key_limit(p, b, h, (int64_t)i)) < T;
    float *out = j->y + b * p->S * p->dv + h * p->hv;
    size_t rb = skips ? ATTN_ROW_BLOCK : S;
    for (size_t r0 = 0; r0 < S; r0 += rb) {
        size_t rows = S - r0 < rb ? S - r0 : rb, n = 0;
        for (size_t i = r0; i < r0 + rows; i++) n = lims[i] > n ? lims[i] : n;
        float *sc = scores + r0 * T;
        ONYX_TRY(onyx_sgemm(false, true, rows, n, (size_t)p->hq, p->scale, q + r0 * p->ldq, (size_t)p->ldq, k,
                            (size_t)p->ldk, 0.0f, sc, T, NULL));
        for (size_t i = r0; i < r0 + rows; i++)
            attn_finish_row(j, b, h, (int64_t)i, scores + i * T, tmp, n, lims[i]);
        ONYX_TRY(onyx_sgemm(false, false, rows, (size_t)p->hv, n, 1.0f, sc, T, v, (size_t)p->ldv, 0.0f,
                            out + r0 * p->dv, (size_t)p->dv, NULL));
    }
    return NULL;
}

static void attn_heads(void *arg, size_t begin, size_t end) {
    attn_job *j = arg;
    size_t T = (size_t)j->p->T;
    size_t S = (size_t)j->p->S;
    float *scores = onyx_alloc((S * T + T + 1) * sizeof *scores);
    size_t *lims = malloc((S ? S : 1) * sizeof *lims);
    if (!scores || !lims) {
        onyx_free(scores);
        free(lims);
        la_error_set(&j->err, ONYX_OOM());
        return;
    }
    float *tmp = scores + S * T;
    for (size_t bh = begin; bh < end && !la_error_any(&j->err); bh++)
        la_error_set(&j->err, attn_head(j, (int64_t)bh, scores, tmp, lims));
    onyx_free(scores);
    free(lims);
}

/* Additive (B, T) key mask of the 1-D and 2-D mask_index forms. */
static float *attn_key_mask(const attn_params *p) {
    size_t n = (size_t)(p->B * p->T);
    float *m = onyx_alloc((n ? n : 1) * sizeof *m);
    if (!m) return NULL;
    for (int64_t b = 0; b < p->B; b++)
        for (int64_t t = 0; t < p->T; t++) {
            bool keep = true;
            /* a (1, T) key mask serves every batch (as the additive mask it replaces broadcast) */
            if (p->mask == MASK_KEY) keep = mask_at(p->mask_v, (size_t)((p->mask_v->dims[0] == 1 ? 0 : b) * p->T + t)) > 0;
            else if (p->mask == MASK_END || p->mask == MASK_END_START) keep = t < mask_at(p->mask_v, (size_t)b);
            if (p->mask == MASK_END_START) keep = keep && t >= mask_at(p->mask_v, (size_t)(p->B + b));
            m[b * p->T + t] = keep ? 0.0f : p->filter;
        }
    return m;
}

/* ------------------------------------------------------------ compute */

static onyx_status *attn_project(onyx_kernel_ctx *ctx, const attn_params *p, float *qkv) {
    const onyx_value *x = ctx->in[0], *w = ctx->in[1], *b = ctx->n_in > 2 ? ctx->in[2] : NULL;
    const attn_state *st = ctx->state;
    size_t M = (size_t)(p->B * p->S), N = (size_t)p->total, K = (size_t)p->din;
    onyx_gemm_epilogue ep = {.bias_kind = b ? ONYX_GEMM_BIAS_COL : ONYX_GEMM_BIAS_NONE, .bias = b ? b->data : NULL};
    if (st && st->din == p->din && st->total == p->total)
        return onyx_sgemm_packed(false, M, 1.0f, x->data, K, st->w, 0.0f, qkv, N, &ep, ctx->tp);
    onyx_gemm_operand a = {.data = x->data, .ld = K}, bo = {.data = w->data, .ld = N};
    return onyx_sgemm_ex(M, N, K, 1.0f, &a, &bo, 0.0f, qkv, N, &ep, ctx->tp);
}

/* Size checks shared by both operators: B S x total, S x (T + 1). */
static onyx_status *attn_check_sizes(const attn_params *p, int64_t total) {
    size_t n, m;
    if (onyx_mul_overflow_size((size_t)(p->B * p->S), (size_t)total, &n) || n > SIZE_MAX / sizeof(float) ||
        onyx_mul_overflow_size((size_t)p->S, (size_t)p->T + 1, &m) || m > SIZE_MAX / sizeof(float))
        return ONYX_INVALID_ARG("inputs (batch %lld, sequences %lld and %lld) are too large", (long long)p->B,
                                (long long)p->S, (long long)p->T);
    return NULL;
}

/* The heads, in parallel, once Q, K and V are in place. */
static onyx_status *attn_run_heads(onyx_kernel_ctx *ctx, const attn_params *p, float *y) {
    float *keymask = NULL;
    if ((p->mask == MASK_KEY || p->mask == MASK_END || p->mask == MASK_END_START) && !(keymask = attn_key_mask(p)))
        return ONYX_OOM();
    attn_job j = {.p = p, .keymask = keymask, .y = y};
    atomic_init(&j.err.st, NULL);
    onyx_parallel_for(ctx->tp, (size_t)(p->B * p->N), 1, attn_heads, &j);
    onyx_free(keymask);
    return la_error_take(&j.err);
}

static onyx_status *attn_compute(onyx_kernel_ctx *ctx) {
    attn_params p;
    ONYX_TRY(attn_params_of(ctx, &p));
    ONYX_TRY(attn_check_sizes(&p, p.total));
    int64_t dims[3] = {p.B, p.S, p.dv};
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, ONYX_FLOAT, 3, dims, &y));
    if (p.B == 0 || p.S == 0) return NULL;
    float *qkv = onyx_alloc((size_t)(p.B * p.S * p.total) * sizeof *qkv);
    if (!qkv) return ONYX_OOM();
    onyx_status *st = attn_project(ctx, &p, qkv);
    p.q = qkv;
    p.k = qkv + p.dq;
    p.v = qkv + p.dq + p.dk;
    p.q_bstride = p.k_bstride = p.v_bstride = p.S * p.total;
    p.ldq = p.ldk = p.ldv = p.total;
    p.k_hstride = p.hq;
    p.v_hstride = p.hv;
    if (!st) st = attn_run_heads(ctx, &p, y->data);
    onyx_free(qkv);
    return st;
}

/* ------------------------------------------------------------ MultiHeadAttention */

/* past_key (B, N, P, hq) and past_value (B, N, P, hv): T becomes P + L. */
static onyx_status *mha_check_past(const onyx_kernel_ctx *ctx, attn_params *p) {
    char s1[200], s2[200];
    const onyx_value *pk = ctx->n_in > 6 ? ctx->in[6] : NULL, *pv = ctx->n_in > 7 ? ctx->in[7] : NULL;
    p->P = 0;
    if (!pk && !pv) return NULL;
    if (!onyx_is_tensor(pk) || !onyx_is_tensor(pv) || pk->dtype != ONYX_FLOAT || pv->dtype != ONYX_FLOAT ||
        pk->rank != 4 || pv->rank != 4 || pk->dims[0] != p->B || pv->dims[0] != p->B || pk->dims[1] != p->N ||
        pv->dims[1] != p->N || pk->dims[2] != pv->dims[2] || pk->dims[3] != p->hq || pv->dims[3] != p->hv)
        return ONYX_INVALID_ARG("past_key %s and past_value %s must be float (B=%lld, num_heads=%lld, P, %lld) and "
                                "(B, num_heads, P, %lld), given together",
                                pk ? onyx_shape_str(pk->dims, pk->rank, s1, sizeof s1) : "(missing)",
                                pv ? onyx_shape_str(pv->dims, pv->rank, s2, sizeof s2) : "(missing)", (long long)p->B,
                                (long long)p->N, (long long)p->hq, (long long)p->hv);
    p->P = pk->dims[2];
    p->T = p->P + p->L;
    return NULL;
}

/* query (B, S, D), key (B, L, D), value (B, L, Dv), optional bias
 * (D + D + Dv) added to each, optional past_key/past_value; the packed
 * forms are not supported. */
static onyx_status *mha_params_of(onyx_kernel_ctx *ctx, attn_params *p) {
    const onyx_value *q = ctx->in[0], *k = ctx->n_in > 1 ? ctx->in[1] : NULL, *v = ctx->n_in > 2 ? ctx->in[2] : NULL;
    const onyx_value *b = ctx->n_in > 3 ? ctx->in[3] : NULL;
    char sq[200], sk[200], sv[200];
    memset(p, 0, sizeof *p);
    if (!onyx_is_tensor(q) || q->dtype != ONYX_FLOAT || q->rank != 3)
        return ONYX_INVALID_ARG("query must be a 3-D float tensor (batch_size, sequence_length, hidden_size)");
    if (!onyx_is_tensor(k) || !onyx_is_tensor(v) || k->rank != 3 || v->rank != 3)
        return ONYX_NOT_IMPLEMENTED("only 3-D key and value inputs are supported (no packed or past-state forms)");
    if (k->dtype != ONYX_FLOAT || v->dtype != ONYX_FLOAT || k->dims[0] != q->dims[0] || v->dims[0] != q->dims[0] ||
        k->dims[2] != q->dims[2] || v->dims[1] != k->dims[1])
        return ONYX_INVALID_ARG("query %s, key %s and value %s must be float (B, S, D), (B, T, D) and (B, T, Dv)",
                                onyx_shape_str(q->dims, 3, sq, sizeof sq), onyx_shape_str(k->dims, 3, sk, sizeof sk),
                                onyx_shape_str(v->dims, 3, sv, sizeof sv));
    p->B = q->dims[0];
    p->S = q->dims[1];
    p->T = k->dims[1];
    p->L = k->dims[1];
    p->dq = p->dk = q->dims[2];
    p->dv = v->dims[2];
    p->N = onyx_attr_int(ctx->node, "num_heads", 0);
    if (p->N <= 0 || p->dq % p->N || p->dv % p->N || p->dq == 0)
        return ONYX_INVALID_ARG("num_heads %lld must be positive and divide the hidden sizes %lld and %lld",
                                (long long)p->N, (long long)p->dq, (long long)p->dv);
    p->hq = p->dq / p->N;
    p->hv = p->dv / p->N;
    if (b && (!onyx_is_tensor(b) || b->dtype != ONYX_FLOAT || b->rank != 1 || b->dims[0] != 2 * p->dq + p->dv))
        return ONYX_INVALID_ARG("bias must be a 1-D float tensor of %lld values", (long long)(2 * p->dq + p->dv));
    ONYX_TRY(mha_check_past(ctx, p));
    for (size_t i = 8; i < ctx->n_in; i++)
        if (ctx->in[i])
            return ONYX_NOT_IMPLEMENTED("%s is not supported", i == 8 ? "past_sequence_length (buffer sharing)"
                                                                       : "cache_indirection");
    if (ctx->n_out > 3 && ctx->out_used[3]) return ONYX_NOT_IMPLEMENTED("the qk output is not supported");
    float scale = onyx_attr_float(ctx->node, "scale", 0.0f);
    p->scale = scale != 0.0f ? scale : 1.0f / sqrtf((float)p->hq);
    p->filter = onyx_attr_float(ctx->node, "mask_filter_value", -10000.0f);
    p->causal = onyx_attr_int(ctx->node, "unidirectional", 0) != 0;
    ONYX_TRY(attn_check_mask(ctx->n_in > 4 ? ctx->in[4] : NULL, p));
    return attn_check_bias4(ctx->n_in > 5 ? ctx->in[5] : NULL, p);
}

/* x + bias[off .. off + d) on every row, into a new buffer. */
static float *mha_add_bias(const onyx_value *x, const float *bias, int64_t d) {
    size_t n = (size_t)x->numel;
    float *out = onyx_alloc((n ? n : 1) * sizeof *out);
    if (!out) return NULL;
    const float *src = x->data;
    for (size_t r = 0; r < n / (size_t)d; r++)
        for (int64_t c = 0; c < d; c++) out[r * (size_t)d + (size_t)c] = src[r * (size_t)d + (size_t)c] + bias[c];
    return out;
}

/* One of present_key/present_value (B, N, P + L, head): past rows, then the
 * new ones (x, bias added), taken from the (B, L, N * head) layout. */
static void mha_concat(const attn_params *p, const float *past, const float *x, int64_t hd, float *out) {
    for (int64_t b = 0; b < p->B; b++)
        for (int64_t h = 0; h < p->N; h++) {
            float *o = out + (b * p->N + h) * p->T * hd;
            if (p->P) memcpy(o, past + (b * p->N + h) * p->P * hd, (size_t)(p->P * hd) * sizeof(float));
            for (int64_t t = 0; t < p->L; t++)
                memcpy(o + (p->P + t) * hd, x + (b * p->L + t) * p->N * hd + h * hd, (size_t)hd * sizeof(float));
        }
}

/* With past or present outputs: build present K/V (outputs 1 and 2, or own
 * buffers in cache[] when the graph does not read them) and attend over
 * them (BNSH: a head's rows are contiguous). */
static onyx_status *mha_present(onyx_kernel_ctx *ctx, attn_params *p, float *cache[2]) {
    bool want_k = ctx->n_out > 1 && ctx->out_used[1], want_v = ctx->n_out > 2 && ctx->out_used[2];
    if (!p->P && !want_k && !want_v) return NULL;
    float *dst[2];
    int64_t hd[2] = {p->hq, p->hv};
    for (int i = 0; i < 2; i++) {
        int64_t dims[4] = {p->B, p->N, p->T, hd[i]};
        onyx_value *out = NULL;
        if (i == 0 ? want_k : want_v) {
            ONYX_TRY(onyx_kernel_output(ctx, (size_t)(1 + i), ONYX_FLOAT, 4, dims, &out));
            dst[i] = out->data;
        } else {
            size_t n = (size_t)(p->B * p->N * p->T * hd[i]);
            if (!(cache[i] = dst[i] = onyx_alloc((n ? n : 1) * sizeof(float)))) return ONYX_OOM();
        }
        const onyx_value *past = ctx->n_in > (size_t)(6 + i) ? ctx->in[6 + i] : NULL;
        mha_concat(p, past ? past->data : NULL, i == 0 ? p->k : p->v, hd[i], dst[i]);
    }
    p->k = dst[0], p->v = dst[1];
    p->k_bstride = p->N * p->T * p->hq, p->v_bstride = p->N * p->T * p->hv;
    p->ldk = p->hq, p->ldv = p->hv;
    p->k_hstride = p->T * p->hq, p->v_hstride = p->T * p->hv;
    return NULL;
}

static onyx_status *mha_compute(onyx_kernel_ctx *ctx) {
    attn_params p;
    ONYX_TRY(mha_params_of(ctx, &p));
    ONYX_TRY(attn_check_sizes(&p, p.dq));
    int64_t dims[3] = {p.B, p.S, p.dv};
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, ONYX_FLOAT, 3, dims, &y));
    if (p.B == 0 || p.S == 0) return NULL;
    const onyx_value *q = ctx->in[0], *k = ctx->in[1], *v = ctx->in[2], *b = ctx->n_in > 3 ? ctx->in[3] : NULL;
    float *own[3] = {NULL, NULL, NULL};
    onyx_status *st = NULL;
    if (b) {
        const float *bias = b->data;
        own[0] = mha_add_bias(q, bias, p.dq);
        own[1] = mha_add_bias(k, bias + p.dq, p.dk);
        own[2] = mha_add_bias(v, bias + 2 * p.dq, p.dv);
        if (!own[0] || !own[1] || !own[2]) st = ONYX_OOM();
    }
    p.q = own[0] ? own[0] : q->data;
    p.k = own[1] ? own[1] : k->data;
    p.v = own[2] ? own[2] : v->data;
    p.q_bstride = p.S * p.dq;
    p.k_bstride = p.T * p.dk;
    p.v_bstride = p.T * p.dv;
    p.ldq = p.dq;
    p.ldk = p.dk;
    p.ldv = p.dv;
    p.k_hstride = p.hq;
    p.v_hstride = p.hv;
    float *cache[2] = {NULL, NULL};
    if (!st) st = mha_present(ctx, &p, cache);
    if (!st && p.T > 0) st = attn_run_heads(ctx, &p, y->data);
    else if (!st) memset(y->data, 0, (size_t)y->numel * sizeof(float));
    for (int i = 0; i < 3; i++) onyx_free(own[i]);
    onyx_free(cache[0]);
    onyx_free(cache[1]);
    return st;
}

/* With the weights packed, compute reads only their shape (see attn_project). */
static bool attn_consumes(const void *state, size_t k) { return state && k == 1; }

const onyx_op_def onyx_ops_contrib_attention[] = {
    {"com.microsoft", "Attention", 1, ONYX_OPSET_LATEST, ONYX_T(ONYX_FLOAT), 0, attn_init, attn_state_free,
     attn_compute, attn_consumes},
    {"com.microsoft", "MultiHeadAttention", 1, ONYX_OPSET_LATEST, ONYX_T(ONYX_FLOAT), 0, NULL, NULL, mha_compute},
    {0},};
