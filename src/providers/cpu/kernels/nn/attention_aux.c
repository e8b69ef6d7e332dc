/* Operators around attention in transformer and state-space models:
 * RotaryEmbedding (23, and com.microsoft's), LinearAttention (27), CausalConvWithState (27),
 * SwiGLU (28) and TensorScatter (24, the KV-cache update).
 *
 * The float-family ops compute in float (double for SwiGLU on double) and
 * round once on output; float16/bfloat16 go through float buffers. Work is
 * split on the thread pool over independent rows / (batch, head) /
 * (batch, channel) items. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "core/checked.h"
#include "providers/cpu/kernel.h"
#include "providers/cpu/kernels/nn_math.h"
#include "providers/cpu/kernels/nn/rope.h"
#include "providers/cpu/kernels/tensor/tensor_util.h"

static const onyx_value *aux_in(const onyx_kernel_ctx *ctx, size_t i) {
    return i < ctx->n_in ? ctx->in[i] : NULL;
}

/* Bound the product of the non-zero dims (see attention.c): strides of a
 * tensor with a zero dim must not overflow either. */
static onyx_status *aux_dims_sane(const onyx_value *v, const char *what) {
    int64_t n = 1;
    for (int i = 0; i < v->rank; i++)
        if (v->dims[i] && (onyx_mul_overflow_i64(n, v->dims[i], &n) || n > ONYX_MAX_TENSOR_ELEMENTS))
            return ONYX_INVALID_ARG("input %s has too large dimensions", what);
    return NULL;
}

/* A float/float16/bfloat16 tensor input (double too when allow_double). */
static onyx_status *aux_float_in(const onyx_value *v, const char *what, bool allow_double) {
    if (!onyx_is_tensor(v)) return ONYX_INVALID_ARG("input %s is missing or not a tensor", what);
    if (!nn_is_float_family(v->dtype) || (!allow_double && v->dtype == ONYX_DOUBLE))
        return ONYX_INVALID_ARG("input %s has unsupported element type %s", what, onyx_dtype_name(v->dtype));
    return aux_dims_sane(v, what);
}

static onyx_status *aux_same_type(const onyx_value *v, const onyx_value *ref, const char *what,
                                  const char *ref_what) {
    if (v->dtype != ref->dtype)
        return ONYX_INVALID_ARG("input %s has element type %s, but %s has %s", what,
                                onyx_dtype_name(v->dtype), ref_what, onyx_dtype_name(ref->dtype));
    return NULL;
}

/* Whole tensor as floats (malloc'd). */
static onyx_status *aux_to_f32(const onyx_value *v, float **out) {
    *out = nn_tensor_to_f32(v);
    return *out ? NULL : ONYX_OOM();
}

/* ================================================== RotaryEmbedding */

typedef struct rope_job {
    int dtype;
    const void *x;
    void *y;
    const float *cos, *sin; /* [rows of half values], indexed by row_of */
    const int64_t *pos;     /* [B*S] or NULL (caches are [B|1, S|1, half]) */
    int64_t B, S, H, D, rd;
    bool is3d, interleaved;
    int64_t cs_b, cs_s; /* cache row strides (in rows) when pos is NULL */
    int failed;
} rope_job;

/* Rotate one head vector x (D floats) into y. */
static void rope_row(const rope_job *j, const float *x, float *y, const float *c, const float *s) {
    onyx_rope_rotate(x, y, c, s, j->rd, j->interleaved);
    memcpy(y + j->rd, x + j->rd, (size_t)(j->D - j->rd) * sizeof(float));
}

/* Items are (b, s, h) in that order. */
static void rope_items(void *arg, size_t begin, size_t end) {
    rope_job *j = arg;
    float *buf = malloc(2 * (size_t)(j->D ? j->D : 1) * sizeof(float));
    if (!buf) {
        __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    int64_t half = j->rd / 2;
    for (size_t it = begin; it < end; it++) {
        int64_t h = (int64_t)it % j->H, bs = (int64_t)it / j->H, s = bs % j->S, b = bs / j->S;
        size_t off =
            j->is3d ? (size_t)((bs * j->H + h) * j->D) : (size_t)(((b * j->H + h) * j->S + s) * j->D);
        int64_t crow = j->pos ? j->pos[bs] : b * j->cs_b + s * j->cs_s;
        const float *x = nn_in_span_float(j->dtype, j->x, off, (size_t)j->D, buf);
        float *y = nn_out_span_float(j->dtype, j->y, off, buf + j->D);
        rope_row(j, x, y, j->cos + crow * half, j->sin + crow * half);
        nn_out_done_float(j->dtype, j->y, off, (size_t)j->D, buf + j->D);
    }
    free(buf);
}

static onyx_status *rope_check_caches(const onyx_value *cos, const onyx_value *sin, const onyx_value *pos,
                                      rope_job *j, int64_t **pos_out) {
    char b1[96], b2[96];
    int64_t half = j->rd / 2;
    if (!onyx_shape_equal(cos, sin))
        return ONYX_INVALID_ARG("cos_cache %s and sin_cache %s must have the same shape",
                                onyx_shape_str(cos->dims, cos->rank, b1, sizeof b1),
                                onyx_shape_str(sin->dims, sin->rank, b2, sizeof b2));
    if (pos) {
        if (!onyx_is_tensor(pos) || (pos->dtype != ONYX_INT64 && pos->dtype != ONYX_INT32))
            return ONYX_INVALID_ARG("position_ids must be an int64 tensor");
        if (pos->rank != 2 || pos->dims[0] != j->B || pos->dims[1] != j->S)
            return ONYX_INVALID_ARG("position_ids shape %s must be [%lld, %lld]",
                                    onyx_shape_str(pos->dims, pos->rank, b1, sizeof b1), (long long)j->B,
                                    (long long)j->S);
        if (cos->rank != 2 || cos->dims[1] != half)
            return ONYX_INVALID_ARG("with position_ids, cos_cache %s must be [max_position, %lld]",
                                    onyx_shape_str(cos->dims, cos->rank, b1, sizeof b1), (long long)half);
        int64_t n;
        ONYX_TRY(onyx_read_int_tensor(pos, pos_out, &n));
        for (int64_t i = 0; i < n; i++)
            if ((*pos_out)[i] < 0 || (*pos_out)[i] >= cos->dims[0])
                return ONYX_INVALID_ARG("position_ids[%lld] = %lld is outside [0, %lld)", (long long)i,
                                        (long long)(*pos_out)[i], (long long)cos->dims[0]);
        return NULL;
    }
    if (cos->rank != 3 || (cos->dims[0] != j->B && cos->dims[0] != 1) ||
        (cos->dims[1] != j->S && cos->dims[1] != 1) || cos->dims[2] != half)
        return ONYX_INVALID_ARG("without position_ids, cos_cache %s must be [%lld, %lld, %lld]",
                                onyx_shape_str(cos->dims, cos->rank, b1, sizeof b1), (long long)j->B,
                                (long long)j->S, (long long)half);
    j->cs_s = cos->dims[1] == 1 ? 0 : 1;
    j->cs_b = cos->dims[0] == 1 ? 0 : cos->dims[1];
    return NULL;
}

static onyx_status *rope_setup(onyx_kernel_ctx *ctx, const onyx_value *x, rope_job *j) {
    char b1[96];
    j->interleaved = onyx_attr_int(ctx->node, "interleaved", 0) != 0;
    if (x->rank == 4) {
        j->B = x->dims[0], j->H = x->dims[1], j->S = x->dims[2], j->D = x->dims[3];
    } else if (x->rank == 3) {
        int64_t heads = onyx_attr_int(ctx->node, "num_heads", 0);
        if (heads <= 0 || x->dims[2] % heads)
            return ONYX_INVALID_ARG("3-D input %s needs num_heads (got %lld) dividing its hidden size",
                                    onyx_shape_str(x->dims, 3, b1, sizeof b1), (long long)heads);
        j->B = x->dims[0], j->S = x->dims[1], j->H = heads, j->D = x->dims[2] / heads;
        j->is3d = true;
    } else {
        return ONYX_INVALID_ARG("input must be 3-D or 4-D, got %s",
                                onyx_shape_str(x->dims, x->rank, b1, sizeof b1));
    }
    j->rd = onyx_attr_int(ctx->node, "rotary_embedding_dim", 0);
    if (j->rd == 0) j->rd = j->D;
    if (j->rd < 0 || j->rd > j->D || j->rd % 2)
        return ONYX_INVALID_ARG("rotary_embedding_dim %lld must be even and in [0, head_size %lld]",
                                (long long)j->rd, (long long)j->D);
    return NULL;
}

/* Rotate x into output 0 once the job's shape and positions are known. */
static onyx_status *rope_run(onyx_kernel_ctx *ctx, const onyx_value *x, const onyx_value *cos,
                             const onyx_value *sin, rope_job *jp, const int64_t *pos_vals) {
    rope_job j = *jp;
    onyx_value *y = NULL;
    onyx_status *st = onyx_kernel_output(ctx, 0, x->dtype, x->rank, x->dims, &y);
    /* float caches are read in place (a copy of the whole [max_position,
     * half] table per call cost more than the rotation of a decode step);
     * other types, or a float table misaligned in the file, are widened */
    float *c = NULL, *s = NULL;
    bool direct = cos->dtype == ONYX_FLOAT && sin->dtype == ONYX_FLOAT && !((uintptr_t)cos->data % sizeof(float)) &&
                  !((uintptr_t)sin->data % sizeof(float));
    if (!st && y->numel && !direct) st = aux_to_f32(cos, &c);
    if (!st && y->numel && !direct) st = aux_to_f32(sin, &s);
    if (!st && y->numel) {
        j.x = x->data, j.y = y->data, j.pos = pos_vals;
        j.cos = direct ? cos->data : c;
        j.sin = direct ? sin->data : s;
        size_t rows = (size_t)(j.B * j.S * j.H);
        if ((size_t)x->numel < NN_PARALLEL_MIN)
            rope_items(&j, 0, rows);
        else
            onyx_parallel_for(ctx->tp, rows, nn_grain((size_t)j.D, NN_PARALLEL_MIN / 4), rope_items, &j);
        if (j.failed) st = ONYX_OOM();
    }
    free(c);
    free(s);
    return st;
}

/* input, cos_cache and sin_cache: float tensors of one element type */
static onyx_status *rope_check_tensors(const onyx_value *x, const onyx_value *cos, const onyx_value *sin) {
    ONYX_TRY(aux_float_in(x, "input", false));
    ONYX_TRY(aux_float_in(cos, "cos_cache", false));
    ONYX_TRY(aux_float_in(sin, "sin_cache", false));
    ONYX_TRY(aux_same_type(cos, x, "cos_cache", "input"));
    ONYX_TRY(aux_same_type(sin, x, "sin_cache", "input"));
    return NULL;
}

static onyx_status *rope_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x = aux_in(ctx, 0), *cos = aux_in(ctx, 1), *sin = aux_in(ctx, 2), *pos = aux_in(ctx, 3);
    ONYX_TRY(rope_check_tensors(x, cos, sin));
    if (pos) ONYX_TRY(aux_dims_sane(pos, "position_ids"));
    rope_job j;
    memset(&j, 0, sizeof j);
    j.dtype = x->dtype;
    ONYX_TRY(rope_setup(ctx, x, &j));
    int64_t *pos_vals = NULL;
    onyx_status *st = rope_check_caches(cos, sin, pos, &j, &pos_vals);
    if (!st) st = rope_run(ctx, x, cos, sin, &j, pos_vals);
    free(pos_vals);
    return st;
}

/* com.microsoft RotaryEmbedding: inputs (input, position_ids, cos_cache,
 * sin_cache); position_ids is [B, S] or one offset (positions offset + s);
 * a 3-D input without num_heads takes its head size from the caches. */
static onyx_status *rope_ms_positions(const onyx_value *pos, const onyx_value *cos, const rope_job *j,
                                      int64_t **out) {
    char b1[96];
    int64_t n, *p = NULL, rows = cos->dims[0];
    ONYX_TRY(onyx_read_int_tensor(pos, &p, &n));
    int64_t *all = n == 1 ? malloc((size_t)(j->B * j->S + 1) * sizeof *all) : p;
    if (!all) {
        free(p);
        return ONYX_OOM();
    }
    if (n == 1) {
        for (int64_t i = 0; i < j->B * j->S; i++) all[i] = p[0] + i % j->S;
        free(p);
    } else if (n != j->B * j->S || pos->rank != 2) {
        free(all);
        return ONYX_INVALID_ARG("position_ids %s must be [1] or [%lld, %lld]",
                                onyx_shape_str(pos->dims, pos->rank, b1, sizeof b1), (long long)j->B, (long long)j->S);
    }
    for (int64_t i = 0; i < j->B * j->S; i++)
        if (all[i] < 0 || all[i] >= rows) {
            onyx_status *st = ONYX_INVALID_ARG("position %lld (of position_ids) is outside the cos/sin caches' "
                                               "[0, %lld)", (long long)all[i], (long long)rows);
            free(all);
            return st;
        }
    *out = all;
    return NULL;
}

static onyx_status *rope_ms_compute(onyx_kernel_ctx *ctx) {
    char b1[96];
    const onyx_value *x = aux_in(ctx, 0), *pos = aux_in(ctx, 1), *cos = aux_in(ctx, 2), *sin = aux_in(ctx, 3);
    ONYX_TRY(rope_check_tensors(x, cos, sin));
    if (!onyx_is_tensor(pos)) return ONYX_INVALID_ARG("input position_ids is missing");
    if (cos->rank != 2 || !onyx_shape_equal(cos, sin) || cos->dims[1] <= 0)
        return ONYX_INVALID_ARG("cos_cache %s and sin_cache must be [max_sequence_length, rotary_dim / 2] alike",
                                onyx_shape_str(cos->dims, cos->rank, b1, sizeof b1));
    rope_job j;
    memset(&j, 0, sizeof j);
    j.dtype = x->dtype;
    j.interleaved = onyx_attr_int(ctx->node, "interleaved", 0) != 0;
    int64_t heads = onyx_attr_int(ctx->node, "num_heads", 0), rd = onyx_attr_int(ctx->node, "rotary_embedding_dim", 0);
    if (x->rank == 4) {
        j.B = x->dims[0], j.H = x->dims[1], j.S = x->dims[2], j.D = x->dims[3];
    } else if (x->rank == 3) {
        int64_t hidden = x->dims[2], head = heads > 0 ? (hidden % heads ? 0 : hidden / heads) : 2 * cos->dims[1];
        if (head <= 0 || hidden % head)
            return ONYX_INVALID_ARG("3-D input %s: hidden size is not a multiple of the head size %lld",
                                    onyx_shape_str(x->dims, 3, b1, sizeof b1), (long long)head);
        j.B = x->dims[0], j.S = x->dims[1], j.H = hidden / head, j.D = head, j.is3d = true;
    } else {
        return ONYX_INVALID_ARG("input must be 3-D or 4-D, got %s", onyx_shape_str(x->dims, x->rank, b1, sizeof b1));
    }
    j.rd = rd > 0 ? rd : j.D;
    if (j.rd > j.D || j.rd % 2 || cos->dims[1] != j.rd / 2)
        return ONYX_INVALID_ARG("rotary dimension %lld must be even, at most the head size %lld, and twice the "
                                "caches' width %lld", (long long)j.rd, (long long)j.D, (long long)cos->dims[1]);
    int64_t *pos_vals = NULL;
    ONYX_TRY(rope_ms_positions(pos, cos, &j, &pos_vals));
    onyx_status *st = rope_run(ctx, x, cos, sin, &j, pos_vals);
    free(pos_vals);
    return st;
}

/* ================================================== LinearAttention */

enum { LA_LINEAR, LA_GATED, LA_DELTA, LA_GATED_DELTA };

typedef struct la_job {
    int rule;
    int64_t B, T, Hq, Hkv, dk, dv, group;
    float scale;
    const float *q, *k, *v, *decay, *beta, *past;
    int64_t decay_w, beta_w; /* last-dim widths of decay / beta */
    float *out, *state;      /* [B, T, Hq*dv], [B, Hkv, dk, dv] */
    int failed;
} la_job;

/* One token's state update for (b, g): S (dk x dv). */
static void la_step(const la_job *j, float *S, const float *k, const float *v, const float *decay, float beta,
                    float *r) {
    int64_t dk = j->dk, dv = j->dv;
    if (j->rule == LA_GATED || j->rule == LA_GATED_DELTA) {
        for (int64_t i = 0; i < dk; i++) {
            float e = expf(j->decay_w == j->Hkv ? decay[0] : decay[i]);
            float *row = S + i * dv;
            NN_LOOP(c, (size_t)dv, row[c] *= e);
        }
    }
    const float *w = v; /* what is written: v, or beta * (v - S^T k) */
    if (j->rule == LA_DELTA || j->rule == LA_GATED_DELTA) {
        memset(r, 0, (size_t)dv * sizeof(float));
        for (int64_t i = 0; i < dk; i++) {
            const float *row = S + i * dv;
            float ki = k[i];
            NN_LOOP(c, (size_t)dv, r[c] += ki * row[c]);
        }
        NN_LOOP(c, (size_t)dv, r[c] = beta * (v[c] - r[c]));
        w = r;
    }
    for (int64_t i = 0; i < dk; i++) {
        float *row = S + i * dv;
        float ki = k[i];
        NN_LOOP(c, (size_t)dv, row[c] += ki * w[c]);
    }
}

/* Items are (b, g): one recurrent state each, shared by its query heads. */
static void la_items(void *arg, size_t begin, size_t end) {
    la_job *j = arg;
    float *r = malloc((size_t)(j->dv ? j->dv : 1) * sizeof(float));
    if (!r) {
        __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    int64_t dk = j->dk, dv = j->dv;
    for (size_t it = begin; it < end; it++) {
        int64_t b = (int64_t)it / j->Hkv, g = (int64_t)it % j->Hkv;
        float *S = j->state + it * (size_t)(dk * dv);
        if (j->past)
            memcpy(S, j->past + it * (size_t)(dk * dv), (size_t)(dk * dv) * sizeof(float));
        else
            memset(S, 0, (size_t)(dk * dv) * sizeof(float));
        for (int64_t t = 0; t < j->T; t++) {
            int64_t bt = b * j->T + t;
            const float *k = j->k + (bt * j->Hkv + g) * dk, *v = j->v + (bt * j->Hkv + g) * dv;
            const float *decay =
                j->decay ? j->decay + bt * j->decay_w + (j->decay_w == j->Hkv ? g : g * dk) : NULL;
            float beta = j->beta ? j->beta[bt * j->beta_w + (j->beta_w == 1 ? 0 : g)] : 0.0f;
            la_step(j, S, k, v, decay, beta, r);
            for (int64_t h = g * j->group; h < (g + 1) * j->group; h++) {
                const float *q = j->q + (bt * j->Hq + h) * dk;
                float *o = j->out + (bt * j->Hq + h) * dv;
                memset(o, 0, (size_t)dv * sizeof(float));
                for (int64_t i = 0; i < dk; i++) {
                    const float *row = S + i * dv;
                    float qi = q[i] * j->scale;
                    NN_LOOP(c, (size_t)dv, o[c] += qi * row[c]);
                }
            }
        }
    }
    free(r);
}

static onyx_status *la_rule(const onyx_node *n, int *rule) {
    const char *s = onyx_attr_string(n, "update_rule", "gated_delta");
    static const char *const names[] = {"linear", "gated", "delta", "gated_delta"};
    for (int i = 0; i < 4; i++)
        if (!strcmp(s, names[i])) {
            *rule = i;
            return NULL;
        }
    return ONYX_INVALID_ARG("update_rule '%s' is not one of linear, gated, delta, gated_delta", s);
}

/* A [B, T, width] input whose width is one of the allowed values. */
static onyx_status *la_check_btw(const onyx_value *v, const char *what, const la_job *j, int64_t w1,
                                 int64_t w2) {
    char b1[96];
    if (v->rank != 3 || v->dims[0] != j->B || v->dims[1] != j->T || (v->dims[2] != w1 && v->dims[2] != w2))
        return ONYX_INVALID_ARG("%s shape %s must be [%lld, %lld, %lld]%s", what,
                                onyx_shape_str(v->dims, v->rank, b1, sizeof b1), (long long)j->B,
                                (long long)j->T, (long long)w1, w1 == w2 ? "" : " (or per-head)");
    return NULL;
}

static onyx_status *la_setup(onyx_kernel_ctx *ctx, la_job *j) {
    const onyx_value *q = ctx->in[0], *k = ctx->in[1], *v = ctx->in[2];
    const onyx_value *past = aux_in(ctx, 3), *decay = aux_in(ctx, 4), *beta = aux_in(ctx, 5);
    char b1[96];
    ONYX_TRY(la_rule(ctx->node, &j->rule));
    j->Hq = onyx_attr_int(ctx->node, "q_num_heads", 0);
    j->Hkv = onyx_attr_int(ctx->node, "kv_num_heads", 0);
    if (j->Hq <= 0 || j->Hkv <= 0 || j->Hq % j->Hkv)
        return ONYX_INVALID_ARG("q_num_heads (%lld) must be a positive multiple of kv_num_heads (%lld)",
                                (long long)j->Hq, (long long)j->Hkv);
    j->group = j->Hq / j->Hkv;
    if (q->rank != 3 || q->dims[2] % j->Hq)
        return ONYX_INVALID_ARG("query shape %s must be [B, T, q_num_heads * d_k]",
                                onyx_shape_str(q->dims, q->rank, b1, sizeof b1));
    j->B = q->dims[0], j->T = q->dims[1], j->dk = q->dims[2] / j->Hq;
    if (v->rank != 3 || v->dims[2] % j->Hkv)
        return ONYX_INVALID_ARG("value shape %s must be [B, T, kv_num_heads * d_v]",
                                onyx_shape_str(v->dims, v->rank, b1, sizeof b1));
    j->dv = v->dims[2] / j->Hkv;
    ONYX_TRY(la_check_btw(k, "key", j, j->Hkv * j->dk, j->Hkv * j->dk));
    ONYX_TRY(la_check_btw(v, "value", j, j->Hkv * j->dv, j->Hkv * j->dv));
    bool gated = j->rule == LA_GATED || j->rule == LA_GATED_DELTA;
    bool delta = j->rule == LA_DELTA || j->rule == LA_GATED_DELTA;
    if (gated && !decay)
        return ONYX_INVALID_ARG("update_rule '%s' needs the decay input",
                                gated && delta ? "gated_delta" : "gated");
    if (delta && !beta)
        return ONYX_INVALID_ARG("update_rule '%s' needs the beta input", gated ? "gated_delta" : "delta");
    if (gated) ONYX_TRY(la_check_btw(decay, "decay", j, j->Hkv * j->dk, j->Hkv));
    if (delta) ONYX_TRY(la_check_btw(beta, "beta", j, j->Hkv, 1));
    j->decay_w = gated ? decay->dims[2] : 0;
    j->beta_w = delta ? beta->dims[2] : 0;
    if (past && (past->rank != 4 || past->dims[0] != j->B || past->dims[1] != j->Hkv ||
                 past->dims[2] != j->dk || past->dims[3] != j->dv))
        return ONYX_INVALID_ARG("past_state shape %s must be [%lld, %lld, %lld, %lld]",
                                onyx_shape_str(past->dims, past->rank, b1, sizeof b1), (long long)j->B,
                                (long long)j->Hkv, (long long)j->dk, (long long)j->dv);
    float scale = onyx_attr_float(ctx->node, "scale", 0.0f);
    j->scale = scale != 0.0f ? scale : (j->dk > 0 ? 1.0f / sqrtf((float)j->dk) : 1.0f);
    return NULL;
}

typedef struct la_bufs {
    float *q, *k, *v, *decay, *beta, *past, *out, *state;
} la_bufs;

static onyx_status *la_run(onyx_kernel_ctx *ctx, la_job *j, la_bufs *f) {
    const onyx_value *q = ctx->in[0], *k = ctx->in[1], *v = ctx->in[2], *past = aux_in(ctx, 3);
    int64_t hidden, n_state;
    if (onyx_mul_overflow_i64(j->Hq, j->dv, &hidden)) return ONYX_INVALID_ARG("output hidden size overflows");
    int64_t odims[3] = {j->B, j->T, hidden}, sdims[4] = {j->B, j->Hkv, j->dk, j->dv};
    ONYX_TRY(onyx_shape_numel(sdims, 4, &n_state));
    onyx_value *out, *state = NULL;
    ONYX_TRY(onyx_kernel_output(ctx, 0, q->dtype, 3, odims, &out));
    if (ctx->n_out > 1 && ctx->out_used[1])
        ONYX_TRY(onyx_kernel_output(ctx, 1, past ? past->dtype : q->dtype, 4, sdims, &state));
    if (out->numel == 0 && n_state == 0) return NULL;
    ONYX_TRY(aux_to_f32(q, &f->q));
    ONYX_TRY(aux_to_f32(k, &f->k));
    ONYX_TRY(aux_to_f32(v, &f->v));
    if (j->decay_w) ONYX_TRY(aux_to_f32(ctx->in[4], &f->decay));
    if (j->beta_w) ONYX_TRY(aux_to_f32(ctx->in[5], &f->beta));
    if (past) ONYX_TRY(aux_to_f32(past, &f->past));
    f->out = malloc((size_t)(out->numel ? out->numel : 1) * sizeof(float));
    f->state = malloc((size_t)(n_state ? n_state : 1) * sizeof(float));
    if (!f->out || !f->state) return ONYX_OOM();
    j->q = f->q, j->k = f->k, j->v = f->v, j->decay = f->decay, j->beta = f->beta, j->past = f->past;
    j->out = f->out, j->state = f->state;
    size_t items = (size_t)(j->B * j->Hkv);
    size_t cost = (size_t)j->T * (size_t)j->dk * (size_t)j->dv * (size_t)(j->group + 3);
    onyx_parallel_for(ctx->tp, items, nn_grain(cost, NN_PARALLEL_MIN), la_items, j);
    if (j->failed) return ONYX_OOM();
    nn_store_f32(out->dtype, out->data, 0, (size_t)out->numel, f->out);
    if (state) nn_store_f32(state->dtype, state->data, 0, (size_t)state->numel, f->state);
    return NULL;
}

static onyx_status *la_compute(onyx_kernel_ctx *ctx) {
    static const char *const names[] = {"query", "key", "value", "past_state", "decay", "beta"};
    if (ctx->n_in < 3) return ONYX_INVALID_ARG("LinearAttention needs query, key and value");
    for (size_t i = 0; i < 6; i++) {
        const onyx_value *v = aux_in(ctx, i);
        if (i < 3 || v) ONYX_TRY(aux_float_in(v, names[i], false));
        if (v && i != 3) ONYX_TRY(aux_same_type(v, ctx->in[0], names[i], "query"));
    }
    la_job j;
    memset(&j, 0, sizeof j);
    ONYX_TRY(la_setup(ctx, &j));
    la_bufs f;
    memset(&f, 0, sizeof f);
    onyx_status *st = la_run(ctx, &j, &f);
    free(f.q), free(f.k), free(f.v), free(f.decay), free(f.beta), free(f.past), free(f.out), free(f.state);
    return st;
}

/* ============================================== CausalConvWithState */

typedef struct cc_job {
    int64_t B, C, L, K;
    bool silu;
    const float *x, *w, *bias, *past;
    float *y, *present; /* present may be NULL */
    int failed;
} cc_job;

static void cc_items(void *arg, size_t begin, size_t end) {
    cc_job *j = arg;
    int64_t keep = j->K - 1, len = keep + j->L;
    float *pad = malloc((size_t)(len ? len : 1) * sizeof(float));
    if (!pad) {
        __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    for (size_t it = begin; it < end; it++) {
        int64_t c = (int64_t)it % j->C;
        /* the padded sequence: carried state (or zeros), then this input */
        if (j->past)
            memcpy(pad, j->past + it * (size_t)keep, (size_t)keep * sizeof(float));
        else
            memset(pad, 0, (size_t)keep * sizeof(float));
        memcpy(pad + keep, j->x + it * (size_t)j->L, (size_t)j->L * sizeof(float));
        const float *w = j->w + c * j->K;
        float b = j->bias ? j->bias[c] : 0.0f;
        float *y = j->y + it * (size_t)j->L;
        for (int64_t t = 0; t < j->L; t++) {
            float acc = b;
            for (int64_t k = 0; k < j->K; k++) acc += w[k] * pad[t + k];
            y[t] = j->silu ? acc * nn_sigmoidf(acc) : acc;
        }
        if (j->present) memcpy(j->present + it * (size_t)keep, pad + j->L, (size_t)keep * sizeof(float));
    }
    free(pad);
}

static onyx_status *cc_setup(onyx_kernel_ctx *ctx, cc_job *j) {
    const onyx_value *x = ctx->in[0], *w = ctx->in[1], *bias = aux_in(ctx, 2), *past = aux_in(ctx, 3);
    char b1[96], b2[96];
    const char *act = onyx_attr_string(ctx->node, "activation", "none");
    if (!strcmp(act, "silu") || !strcmp(act, "swish"))
        j->silu = true;
    else if (strcmp(act, "none"))
        return ONYX_INVALID_ARG("activation '%s' is not one of silu, swish, none", act);
    if (x->rank != 3)
        return ONYX_INVALID_ARG("input shape %s must be [batch, channels, length]",
                                onyx_shape_str(x->dims, x->rank, b1, sizeof b1));
    j->B = x->dims[0], j->C = x->dims[1], j->L = x->dims[2];
    if (w->rank != 3 || w->dims[0] != j->C || w->dims[1] != 1 || w->dims[2] < 1)
        return ONYX_INVALID_ARG("weight shape %s must be [%lld, 1, k] with k >= 1",
                                onyx_shape_str(w->dims, w->rank, b1, sizeof b1), (long long)j->C);
    j->K = w->dims[2];
    if (bias && (bias->rank != 1 || bias->dims[0] != j->C))
        return ONYX_INVALID_ARG("bias shape %s must be [%lld]",
                                onyx_shape_str(bias->dims, bias->rank, b1, sizeof b1), (long long)j->C);
    if (past &&
        (past->rank != 3 || past->dims[0] != j->B || past->dims[1] != j->C || past->dims[2] != j->K - 1))
        return ONYX_INVALID_ARG("past_state shape %s must be [%lld, %lld, %lld] for input %s",
                                onyx_shape_str(past->dims, past->rank, b1, sizeof b1), (long long)j->B,
                                (long long)j->C, (long long)(j->K - 1),
                                onyx_shape_str(x->dims, 3, b2, sizeof b2));
    return NULL;
}

static onyx_status *cc_compute(onyx_kernel_ctx *ctx) {
    static const char *const names[] = {"input", "weight", "bias", "past_state"};
    if (ctx->n_in < 2) return ONYX_INVALID_ARG("CausalConvWithState needs input and weight");
    for (size_t i = 0; i < 4; i++) {
        const onyx_value *v = aux_in(ctx, i);
        if (i < 2 || v) ONYX_TRY(aux_float_in(v, names[i], false));
        if (v) ONYX_TRY(aux_same_type(v, ctx->in[0], names[i], "input"));
    }
    cc_job j;
    memset(&j, 0, sizeof j);
    ONYX_TRY(cc_setup(ctx, &j));
    const onyx_value *x = ctx->in[0];
    onyx_value *y, *present = NULL;
    int64_t pdims[3] = {j.B, j.C, j.K - 1};
    ONYX_TRY(onyx_kernel_output(ctx, 0, x->dtype, 3, x->dims, &y));
    if (ctx->n_out > 1 && ctx->out_used[1])
        ONYX_TRY(onyx_kernel_output(ctx, 1, x->dtype, 3, pdims, &present));
    if (j.B * j.C == 0) return NULL;
    float *fx = NULL, *fw = NULL, *fb = NULL, *fp = NULL, *fy = NULL, *fpres = NULL;
    onyx_status *st = aux_to_f32(x, &fx);
    if (!st) st = aux_to_f32(ctx->in[1], &fw);
    if (!st && aux_in(ctx, 2)) st = aux_to_f32(ctx->in[2], &fb);
    if (!st && aux_in(ctx, 3)) st = aux_to_f32(ctx->in[3], &fp);
    if (!st && !(fy = malloc((size_t)(y->numel ? y->numel : 1) * sizeof(float)))) st = ONYX_OOM();
    if (!st && present && !(fpres = malloc((size_t)(present->numel ? present->numel : 1) * sizeof(float))))
        st = ONYX_OOM();
    if (!st) {
        j.x = fx, j.w = fw, j.bias = fb, j.past = fp, j.y = fy, j.present = fpres;
        size_t cost = (size_t)(j.L + j.K) * (size_t)j.K;
        onyx_parallel_for(ctx->tp, (size_t)(j.B * j.C), nn_grain(cost, NN_PARALLEL_MIN), cc_items, &j);
        if (j.failed) st = ONYX_OOM();
    }
    if (!st) {
        nn_store_f32(y->dtype, y->data, 0, (size_t)y->numel, fy);
        if (present) nn_store_f32(present->dtype, present->data, 0, (size_t)present->numel, fpres);
    }
    free(fx), free(fw), free(fb), free(fp), free(fy), free(fpres);
    return st;
}

/* =========================================================== SwiGLU */

typedef struct swiglu_job {
    int dtype;
    const void *a, *b;
    void *y;
    size_t n;
    float alpha;
    int failed;
} swiglu_job;

#define SWIGLU_CHUNK 4096

/* y = a * sigmoid(alpha * a) * b */
NN_MULTIVERSION(swiglu_f32,
                (const float *restrict a, const float *restrict b, float *restrict y, size_t n, float alpha),
                (a, b, y, n, alpha), { NN_LOOP(i, n, y[i] = a[i] * nn_sigmoidf(alpha * a[i]) * b[i]); })

static void swiglu_items(void *arg, size_t begin, size_t end) {
    swiglu_job *j = arg;
    if (j->dtype == ONYX_DOUBLE) {
        const double *a = j->a, *b = j->b;
        double *y = j->y;
        for (size_t c = begin; c < end; c++)
            for (size_t i = c * SWIGLU_CHUNK; i < j->n && i < (c + 1) * SWIGLU_CHUNK; i++)
                y[i] = a[i] * nn_sigmoid((double)j->alpha * a[i]) * b[i];
        return;
    }
    float *buf = nn_needs_conversion(j->dtype) ? malloc(3 * SWIGLU_CHUNK * sizeof(float)) : NULL;
    if (nn_needs_conversion(j->dtype) && !buf) {
        __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    for (size_t c = begin; c < end; c++) {
        size_t off = c * SWIGLU_CHUNK, n = j->n - off < SWIGLU_CHUNK ? j->n - off : SWIGLU_CHUNK;
        const float *a = nn_in_span_float(j->dtype, j->a, off, n, buf);
        const float *b = nn_in_span_float(j->dtype, j->b, off, n, buf ? buf + SWIGLU_CHUNK : NULL);
        float *y = nn_out_span_float(j->dtype, j->y, off, buf ? buf + 2 * SWIGLU_CHUNK : NULL);
        swiglu_f32(a, b, y, n, j->alpha);
        nn_out_done_float(j->dtype, j->y, off, n, y);
    }
    free(buf);
}

static onyx_status *swiglu_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *a = aux_in(ctx, 0), *b = aux_in(ctx, 1);
    ONYX_TRY(aux_float_in(a, "A", true));
    ONYX_TRY(aux_float_in(b, "B", true));
    ONYX_TRY(aux_same_type(b, a, "B", "A"));
    char b1[96], b2[96];
    if (!onyx_shape_equal(a, b))
        return ONYX_INVALID_ARG("A %s and B %s must have the same shape (no broadcasting)",
                                onyx_shape_str(a->dims, a->rank, b1, sizeof b1),
                                onyx_shape_str(b->dims, b->rank, b2, sizeof b2));
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, a->dtype, a->rank, a->dims, &y));
    swiglu_job j = {
        a->dtype, a->data, b->data, y->data, (size_t)a->numel, onyx_attr_float(ctx->node, "alpha", 1.0f), 0};
    size_t chunks = (j.n + SWIGLU_CHUNK - 1) / SWIGLU_CHUNK;
    if (j.n < NN_PARALLEL_MIN)
        swiglu_items(&j, 0, chunks);
    else
        onyx_parallel_for(ctx->tp, chunks, 1, swiglu_items, &j);
    return j.failed ? ONYX_OOM() : NULL;
}

/* ==================================================== TensorScatter */

typedef struct ts_plan {
    int64_t outer, batch_div; /* prefixes (dims before axis); prefix index / batch_div = batch */
    int64_t max_seq, seq, inner;
    bool circular;
    const int64_t *wi; /* per batch, or NULL */
} ts_plan;

static onyx_status *ts_setup(const onyx_kernel_ctx *ctx, const onyx_value *past, const onyx_value *upd,
                             ts_plan *p, int *axis_out) {
    char b1[96], b2[96];
    if (past->dtype != upd->dtype)
        return ONYX_INVALID_ARG("update element type %s differs from past_cache's %s",
                                onyx_dtype_name(upd->dtype), onyx_dtype_name(past->dtype));
    int axis;
    ONYX_TRY(onyx_normalize_axis(onyx_attr_int(ctx->node, "axis", -2), past->rank, &axis));
    if (axis == 0) return ONYX_INVALID_ARG("axis must not be the batch axis 0");
    bool ok = upd->rank == past->rank && upd->dims[axis] <= past->dims[axis];
    for (int i = 0; ok && i < past->rank; i++) ok = i == axis || upd->dims[i] == past->dims[i];
    if (!ok)
        return ONYX_INVALID_ARG("update shape %s must equal past_cache shape %s except a shorter axis %d",
                                onyx_shape_str(upd->dims, upd->rank, b1, sizeof b1),
                                onyx_shape_str(past->dims, past->rank, b2, sizeof b2), axis);
    const char *mode = onyx_attr_string(ctx->node, "mode", "linear");
    if (strcmp(mode, "linear") && strcmp(mode, "circular"))
        return ONYX_INVALID_ARG("mode '%s' is not linear or circular", mode);
    p->circular = !strcmp(mode, "circular");
    p->outer = tk_numel(past->dims, 0, axis);
    p->batch_div = tk_numel(past->dims, 1, axis);
    p->max_seq = past->dims[axis];
    p->seq = upd->dims[axis];
    p->inner = tk_numel(past->dims, axis + 1, past->rank);
    *axis_out = axis;
    return NULL;
}

static onyx_status *ts_read_indices(const onyx_value *wi, const onyx_value *past, const ts_plan *p,
                                    int64_t **out) {
    char b1[96];
    if (!onyx_is_tensor(wi) || !tk_is_index_type(wi->dtype))
        return ONYX_INVALID_ARG("write_indices must be an int64 tensor");
    if (wi->rank != 1 || wi->dims[0] != past->dims[0])
        return ONYX_INVALID_ARG("write_indices shape %s must be [%lld]",
                                onyx_shape_str(wi->dims, wi->rank, b1, sizeof b1), (long long)past->dims[0]);
    int64_t n;
    ONYX_TRY(onyx_read_int_tensor(wi, out, &n));
    for (int64_t b = 0; b < n; b++) {
        int64_t w = (*out)[b];
        if (p->circular) {
            if (p->max_seq) (*out)[b] = (w % p->max_seq + p->max_seq) % p->max_seq;
        } else if (w < 0 || w > p->max_seq - p->seq) {
            /* The caller only owns the indices on success. */
            free(*out);
            *out = NULL;
            return ONYX_INVALID_ARG(
                "write_indices[%lld] = %lld: writing %lld positions needs it in [0, %lld]", (long long)b,
                (long long)w, (long long)p->seq, (long long)(p->max_seq - p->seq));
        }
    }
    return NULL;
}

static onyx_status *ts_scatter(const ts_plan *p, const tk_view *dst, const tk_view *src) {
    for (int64_t o = 0; o < p->outer; o++) {
        int64_t start = p->wi ? p->wi[o / p->batch_div] : 0;
        for (int64_t s = 0; s < p->seq; s++) {
            int64_t pos = start + s;
            if (p->circular) pos %= p->max_seq;
            uint8_t *d = dst->p + (size_t)((o * p->max_seq + pos) * p->inner) * dst->es;
            const uint8_t *u = src->p + (size_t)((o * p->seq + s) * p->inner) * src->es;
            ONYX_TRY(tk_cells_copy(dst, d, u, p->inner));
        }
    }
    return NULL;
}

static onyx_status *ts_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *past = aux_in(ctx, 0), *upd = aux_in(ctx, 1), *wi = aux_in(ctx, 2);
    if (!onyx_is_tensor(past) || !onyx_is_tensor(upd))
        return ONYX_INVALID_ARG("past_cache and update must be tensors");
    ONYX_TRY(aux_dims_sane(past, "past_cache"));
    ts_plan p;
    memset(&p, 0, sizeof p);
    int axis;
    ONYX_TRY(ts_setup(ctx, past, upd, &p, &axis));
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, past->dtype, past->rank, past->dims, &y));
    int64_t *idx = NULL;
    if (wi) ONYX_TRY(ts_read_indices(wi, past, &p, &idx));
    p.wi = idx;
    tk_view vp, vu, vy;
    onyx_status *st = tk_view_in(past, &vp);
    if (st) {
        free(idx);
        return st;
    }
    st = tk_view_in(upd, &vu);
    if (!st) {
        st = tk_view_out(y, &vy);
        if (!st) {
            st = tk_cells_copy(&vy, vy.p, vp.p, vp.n);
            if (!st && p.seq > 0 && p.inner > 0) st = ts_scatter(&p, &vy, &vu);
            tk_view_finish(NULL, &vy, y, st);
        }
        tk_view_release(&vu);
    }
    tk_view_release(&vp);
    free(idx);
    return st;
}

/* every type but the 2-bit integers */
#define TS_TYPES (ONYX_T_ALL & ~(ONYX_T(ONYX_UINT2) | ONYX_T(ONYX_INT2)))
#define F3 (ONYX_T(ONYX_FLOAT) | ONYX_T(ONYX_FLOAT16) | ONYX_T(ONYX_BFLOAT16))

const onyx_op_def onyx_ops_attention_aux[] = {
    {"", "RotaryEmbedding", 23, ONYX_OPSET_LATEST, F3, 0, NULL, NULL, rope_compute},
    {"com.microsoft", "RotaryEmbedding", 1, ONYX_OPSET_LATEST, F3, 0, NULL, NULL, rope_ms_compute},
    {"", "LinearAttention", 27, ONYX_OPSET_LATEST, F3, 0, NULL, NULL, la_compute},
    {"", "CausalConvWithState", 27, ONYX_OPSET_LATEST, F3, 0, NULL, NULL, cc_compute},
    {"", "SwiGLU", 28, ONYX_OPSET_LATEST, ONYX_T_FLOATS, 0, NULL, NULL, swiglu_compute},
    {"", "TensorScatter", 24, ONYX_OPSET_LATEST, TS_TYPES, 0, NULL, NULL, ts_compute},
    {0},};
