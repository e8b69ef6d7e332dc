/* com.microsoft GroupQueryAttention (ContribOperators.md): causal attention
 * of num_heads query heads over kv_num_heads key/value heads with a
 * key-value cache in BNSH layout, as ONNX Runtime's CPU kernel computes it.
 *
 *   batch b has total_b = seqlens_k[b] + 1 tokens; the first prompt
 *   (sequence_length == total_sequence_length) has no past, later steps
 *   have past_b = total_b - sequence_length rows of past_key/past_value.
 *   present = past rows [0, past_b), then the step's keys/values (rotated
 *   when do_rotary), zeros to the end of the present buffer
 *   (max(past buffer length, total_sequence_length) rows).
 *   Query s of batch b sits at position past_b + s and sees the keys
 *   [max(0, p - local_window_size + 1), p] (local_window_size keys; all of
 *   [0, p] without a window); with causal = 0 it sees all total_b keys
 *   (the decoder fusion's attention_bias then carries the model's mask).
 *   scores = scale * q.k (softcap: c * tanh(score / c)), plus
 *   attention_bias; softmax (smooth_softmax / head_sink: one more logit, 0
 *   or the head's sink, in the denominator).
 *
 * Work items are (batch, key/value head): each builds its present rows,
 * then runs the group's query heads over the keys in tiles with an online
 * softmax, so the scores never exist in full and the cache is read once per
 * step for all the heads that share it (decode streams it once).
 *
 * Not supported (clear errors): quantised caches (k_scale/v_scale),
 * sliding_window_cache, q/k norm weights, qk_output. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/checked.h"
#include "providers/cpu/kernel.h"
#include "providers/cpu/kernels/nn/rope.h"
#include "providers/cpu/kernels/nn_math.h"

#define GQA_TILE 64

typedef struct gqa_job {
    int64_t B, S, N, Nkv, G, H, past_cap, present_len, total_max, rd;
    const float *q, *k, *v;          /* first token of batch 0; the head offsets are added per item */
    int64_t q_tok, kv_tok;           /* floats between consecutive tokens of q and of k/v */
    const float *past_k, *past_v;    /* [B, Nkv, past_cap, H] or NULL */
    float *pk, *pv;                  /* [B, Nkv, present_len, H] */
    const int32_t *seqlens;
    const float *cos, *sin;          /* [rows, rd / 2] when do_rotary */
    const int64_t *pos_ids;          /* [B, S] or NULL */
    bool interleaved, do_rotary, first_prompt, smooth, causal;
    bool shared;                     /* present_key/value are past_key/value's own buffers (in-place cache) */
    float scale, softcap;
    int64_t window;                  /* <= 0: none */
    const float *sink;               /* [N] or NULL */
    const float *bias;               /* [B|1, N|1, S, total_max] or NULL */
    int64_t bias_sb, bias_sn;        /* strides of b and n in bias (0 when broadcast) */
    float *out;                      /* [B, S, N * H] */
    int failed;
} gqa_job;

NN_INLINE float gqa_dot(const float *a, const float *b, int64_t n) {
    float acc[NN_VL] = {0};
    int64_t i = 0;
    for (; i + NN_VL <= n; i += NN_VL)
        for (int t = 0; t < NN_VL; t++) acc[t] += a[i + t] * b[i + t];
    float s = 0;
    for (; i < n; i++) s += a[i] * b[i];
    for (int t = 0; t < NN_VL; t++) s += acc[t];
    return s;
}

/* 8 floats (32 bytes): the vector unit of the loops below. A wider type
 * would not fit the AVX2 and baseline builds of the multiversioned code
 * (gcc lowers it through the stack there); 8 independent chains of 8 keep
 * the FMA units busy on every ISA. */
typedef float gqa_v8 __attribute__((vector_size(32), aligned(4)));

/* gqa_dot of a with the four rows b, b + ld, b + 2 ld and b + 3 ld: a
 * decode step scores key by key, and one dot's accumulator chain waits on
 * the FMA latency at every step; four keys at once keep four chains in
 * flight (in vector registers: 8 columns at a time, the tail in scalars). */
NN_INLINE void gqa_dot4(const float *a, const float *b, int64_t ld, int64_t n, float out[4]) {
    gqa_v8 c0 = {0}, c1 = {0}, c2 = {0}, c3 = {0};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const gqa_v8 x = *(const gqa_v8 *)(a + i);
        c0 += x * *(const gqa_v8 *)(b + i);
        c1 += x * *(const gqa_v8 *)(b + ld + i);
        c2 += x * *(const gqa_v8 *)(b + 2 * ld + i);
        c3 += x * *(const gqa_v8 *)(b + 3 * ld + i);
    }
    const gqa_v8 c[4] = {c0, c1, c2, c3};
    for (int r = 0; r < 4; r++) {
        float s = 0;
        for (int64_t k = i; k < n; k++) s += a[k] * b[r * ld + k];
        for (int t = 0; t < 8; t++) s += c[r][t];
        out[r] = s;
    }
}

/* Lane sums of pairs: lanes 0, 1, 4, 5 of the result hold pair sums of x,
 * lanes 2, 3, 6, 7 of y (one level of an 8 x 8 transposing reduction). A
 * macro: a function returning a 32-byte vector has no stable ABI in the
 * baseline build. (__builtin_shufflevector: gcc >= 12 and clang.) */
#define GQA_PAIRS(x, y)                                                                       \
    (__builtin_shufflevector((x), (y), 0, 2, 8, 10, 4, 6, 12, 14) +                           \
     __builtin_shufflevector((x), (y), 1, 3, 9, 11, 5, 7, 13, 15))

/* gqa_dot of a with the eight rows b + r ld (r < 8) into out[0..7]: eight
 * vector accumulators, then their horizontal sums in three levels of
 * shuffles and adds (21 vector ops; summing each accumulator lane by lane
 * took 64 dependent scalar adds, a third of a decode step's attention). */
NN_INLINE void gqa_dot8(const float *a, const float *b, int64_t ld, int64_t n, float *out) {
    gqa_v8 c[8] = {{0}};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const gqa_v8 x = *(const gqa_v8 *)(a + i);
#pragma GCC unroll 8
        for (int r = 0; r < 8; r++) c[r] += x * *(const gqa_v8 *)(b + r * ld + i);
    }
    /* rows (0, 1) and (2, 3) in pairs, then those pairs: the halves of rows
     * 0..3 in order (low halves in lanes 0..3); the same for rows 4..7; then
     * the halves added */
    gqa_v8 p01 = GQA_PAIRS(c[0], c[1]), p23 = GQA_PAIRS(c[2], c[3]), p45 = GQA_PAIRS(c[4], c[5]),
           p67 = GQA_PAIRS(c[6], c[7]);
    gqa_v8 t0 = GQA_PAIRS(p01, p23), t1 = GQA_PAIRS(p45, p67);
    *(gqa_v8 *)out = __builtin_shufflevector(t0, t1, 0, 1, 2, 3, 8, 9, 10, 11) +
                     __builtin_shufflevector(t0, t1, 4, 5, 6, 7, 12, 13, 14, 15);
    for (; i < n; i++)
        for (int r = 0; r < 8; r++) out[r] += a[i] * b[r * ld + i];
}

/* acc = acc * corr + sum over the tile's nt keys of p[t] * v[t] (rows of H
 * floats): 32 columns at a time in four vector accumulators (four
 * independent FMA chains over the keys), then 8, then one. */
NN_INLINE void gqa_accumulate(float *restrict acc, float corr, const float *restrict p, const float *restrict v,
                              int64_t nt, int64_t H) {
    int64_t i0 = 0;
    for (; i0 + 32 <= H; i0 += 32) {
        gqa_v8 *o = (gqa_v8 *)(acc + i0);
        gqa_v8 a0 = o[0] * corr, a1 = o[1] * corr, a2 = o[2] * corr, a3 = o[3] * corr;
        for (int64_t t = 0; t < nt; t++) {
            const gqa_v8 *r = (const gqa_v8 *)(v + t * H + i0);
            a0 += p[t] * r[0];
            a1 += p[t] * r[1];
            a2 += p[t] * r[2];
            a3 += p[t] * r[3];
        }
        o[0] = a0, o[1] = a1, o[2] = a2, o[3] = a3;
    }
    for (; i0 + 8 <= H; i0 += 8) {
        gqa_v8 a0 = *(gqa_v8 *)(acc + i0) * corr;
        for (int64_t t = 0; t < nt; t++) a0 += p[t] * *(const gqa_v8 *)(v + t * H + i0);
        *(gqa_v8 *)(acc + i0) = a0;
    }
    for (; i0 < H; i0++) {
        float a = acc[i0] * corr;
        for (int64_t t = 0; t < nt; t++) a += p[t] * v[t * H + i0];
        acc[i0] = a;
    }
}

/* The position of token s of batch b (rotary and causal mask). */
static int64_t gqa_past(const gqa_job *j, int64_t b) {
    return j->first_prompt ? 0 : (int64_t)j->seqlens[b] + 1 - j->S;
}

/* Present rows of (b, kv head): past rows, the step's (rotated) keys and
 * values, zeros after. A shared buffer already holds the past rows and
 * only gets the step's rows: a decode step copies no cache. */
static void gqa_present(const gqa_job *j, int64_t b, int64_t kh) {
    int64_t H = j->H, past = gqa_past(j, b);
    float *pk = j->pk + (b * j->Nkv + kh) * j->present_len * H;
    float *pv = j->pv + (b * j->Nkv + kh) * j->present_len * H;
    if (past > 0 && !j->shared) {
        const float *sk = j->past_k + (b * j->Nkv + kh) * j->past_cap * H;
        const float *sv = j->past_v + (b * j->Nkv + kh) * j->past_cap * H;
        memcpy(pk, sk, (size_t)(past * H) * sizeof(float));
        memcpy(pv, sv, (size_t)(past * H) * sizeof(float));
    }
    int64_t half = j->rd / 2;
    for (int64_t s = 0; s < j->S && past + s < j->present_len; s++) {
        const float *k = j->k + (b * j->S + s) * j->kv_tok + kh * H;
        const float *v = j->v + (b * j->S + s) * j->kv_tok + kh * H;
        float *dk = pk + (past + s) * H;
        memcpy(dk, k, (size_t)H * sizeof(float));
        memcpy(pv + (past + s) * H, v, (size_t)H * sizeof(float));
        if (j->do_rotary) {
            int64_t p = j->pos_ids ? j->pos_ids[b * j->S + s] : past + s;
            onyx_rope_rotate(k, dk, j->cos + p * half, j->sin + p * half, j->rd, j->interleaved);
        }
    }
    if (j->shared) return;   /* rows after the valid ones are never read: leave them */
    int64_t used = past + j->S < j->present_len ? past + j->S : j->present_len;
    memset(pk + used * H, 0, (size_t)((j->present_len - used) * H) * sizeof(float));
    memset(pv + used * H, 0, (size_t)((j->present_len - used) * H) * sizeof(float));
}

/* Scratch of one item: rotated queries, their running max, sum and output
 * accumulators, and one tile of scores. */
typedef struct gqa_scratch {
    float *q, *m, *l, *acc, *p;
    float *kt;   /* one tile of keys transposed: H rows of GQA_TILE (many queries only) */
} gqa_scratch;

/* A step of at least this many query rows per kv head (a prefill) scores
 * each tile of keys as a small matrix product: the tile is transposed once
 * (kt[d * GQA_TILE + t]) and every query row multiplies it with the keys
 * as vector lanes, instead of one dot product (and its horizontal sum) per
 * key. A decode step (G rows) would spend as long transposing as scoring. */
#define GQA_TILED_QUERIES 16

/* kt = the nt keys (rows of H) transposed, zero past nt. */
NN_INLINE const float *gqa_transpose_keys(const float *k, int64_t nt, int64_t H, float *kt) {
    for (int64_t d = 0; d < H; d++) {
        float *row = kt + d * GQA_TILE;
        for (int64_t t = 0; t < nt; t++) row[t] = k[t * H + d];
        for (int64_t t = nt; t < GQA_TILE; t++) row[t] = 0;
    }
    return kt;
}

/* x[t] = q . key t for the GQA_TILE keys of kt: eight vector accumulators
 * over the head dimension (one broadcast and eight FMAs per element of q). */
NN_INLINE void gqa_tile_scores(const float *q, const float *kt, int64_t H, float *x) {
    gqa_v8 c[GQA_TILE / 8] = {{0}};
    for (int64_t d = 0; d < H; d++, kt += GQA_TILE) {
        float qd = q[d];
#pragma GCC unroll 8
        for (int i = 0; i < GQA_TILE / 8; i++) c[i] += qd * *(const gqa_v8 *)(kt + 8 * i);
    }
#pragma GCC unroll 8
    for (int i = 0; i < GQA_TILE / 8; i++) *(gqa_v8 *)(x + 8 * i) = c[i];
}

/* The dot products of query row qi with the keys [a, e] of the tile
 * starting at key t0 into x[t - t0], zeros elsewhere in the tile: kt the
 * tile transposed (many queries), else the keys' rows pk (a decode step's
 * few queries: four keys at a time). */
NN_INLINE void gqa_scores(const float *q, const float *kt, const float *pk, int64_t t0, int64_t a, int64_t e,
                          int64_t H, float *x) {
    if (kt) {
        gqa_tile_scores(q, kt, H, x);
        return;
    }
    memset(x, 0, GQA_TILE * sizeof(float));
    int64_t t = a;
    for (; t + 8 <= e + 1; t += 8) gqa_dot8(q, pk + t * H, H, H, x + (t - t0));
    for (; t + 4 <= e + 1; t += 4) gqa_dot4(q, pk + t * H, H, H, x + (t - t0));
    for (; t <= e; t++) x[t - t0] = gqa_dot(q, pk + t * H, H);
}

/* Softmax weights of query row qi over the keys [a, e] of the tile starting
 * at key t0 (scores as gqa_scores gives them), for the online softmax:
 * w->p[t - t0] = exp(score - *mx) for t in [a, e] and 0 elsewhere in the
 * tile, *mx the running maximum; returns their sum. All GQA_TILE scores go
 * through fixed-length loops (they vectorise) and the keys outside [a, e]
 * are masked. */
NN_INLINE float gqa_tile_weights(const gqa_job *j, gqa_scratch *w, int64_t qi, const float *kt, const float *pk,
                                 int64_t t0, int64_t a, int64_t e, const float *bias, int64_t H, float *mx_out) {
    float *x = w->p;
    gqa_scores(w->q + qi * H, kt, pk, t0, a, e, H, x);
    const float scale = j->scale, cap = j->softcap;
    for (int t = 0; t < GQA_TILE; t++) x[t] *= scale;
    if (cap > 0)
        for (int t = 0; t < GQA_TILE; t++) x[t] = cap * nn_tanhf(x[t] / cap);
    if (bias)
        for (int64_t t = a; t <= e; t++) x[t - t0] += bias[t];
    const int lo = (int)(a - t0), hi = (int)(e - t0);
    float lane[NN_VL];
    for (int i = 0; i < NN_VL; i++) lane[i] = w->m[qi];
    for (int t0v = 0; t0v < GQA_TILE; t0v += NN_VL)
        for (int i = 0; i < NN_VL; i++) {
            float v = nn_self(t0v + i < lo || t0v + i > hi, -INFINITY, x[t0v + i]);
            lane[i] = nn_self(v > lane[i], v, lane[i]);
        }
    float mx = lane[0];
    for (int i = 1; i < NN_VL; i++) mx = lane[i] > mx ? lane[i] : mx;
    for (int t = 0; t < GQA_TILE; t++) x[t] = nn_expf(x[t] - mx);
    for (int i = 0; i < NN_VL; i++) lane[i] = 0;
    for (int t0v = 0; t0v < GQA_TILE; t0v += NN_VL)
        for (int i = 0; i < NN_VL; i++) {
            x[t0v + i] = nn_self(t0v + i < lo || t0v + i > hi, 0.0f, x[t0v + i]);
            lane[i] += x[t0v + i];
        }
    float sum = 0;
    for (int i = 0; i < NN_VL; i++) sum += lane[i];
    *mx_out = mx;
    return sum;
}

/* Online-softmax attention of the G query heads of kv head kh over the
 * present rows of batch b. */
NN_MULTIVERSION(gqa_attend, (const gqa_job *j, int64_t b, int64_t kh, gqa_scratch *w), (j, b, kh, w), {
    int64_t H = j->H, S = j->S, G = j->G, past = gqa_past(j, b), total = (int64_t)j->seqlens[b] + 1;
    int64_t half = j->rd / 2, nq = G * S;
    const float *pk = j->pk + (b * j->Nkv + kh) * j->present_len * H;
    const float *pv = j->pv + (b * j->Nkv + kh) * j->present_len * H;
    for (int64_t g = 0; g < G; g++)
        for (int64_t s = 0; s < S; s++) {
            int64_t h = kh * G + g;
            const float *q = j->q + (b * S + s) * j->q_tok + h * H;
            float *d = w->q + (g * S + s) * H;
            memcpy(d, q, (size_t)H * sizeof(float));
            if (j->do_rotary) {
                int64_t p = j->pos_ids ? j->pos_ids[b * S + s] : past + s;
                onyx_rope_rotate(q, d, j->cos + p * half, j->sin + p * half, j->rd, j->interleaved);
            }
            w->m[g * S + s] = -INFINITY;
            w->l[g * S + s] = 0;
        }
    memset(w->acc, 0, (size_t)(nq * H) * sizeof(float));
    int64_t last = j->causal && past + S - 1 < total - 1 ? past + S - 1 : total - 1;   /* the last key any query sees */
    for (int64_t t0 = 0; t0 <= last; t0 += GQA_TILE) {
        int64_t t1 = t0 + GQA_TILE <= last + 1 ? t0 + GQA_TILE : last + 1;
        const float *kt = nq >= GQA_TILED_QUERIES ? gqa_transpose_keys(pk + t0 * H, t1 - t0, H, w->kt) : NULL;
        for (int64_t g = 0; g < G; g++)
            for (int64_t s = 0; s < S; s++) {
                int64_t qi = g * S + s, pos = past + s, h = kh * G + g;
                int64_t hi = j->causal && pos < total - 1 ? pos : total - 1;
                int64_t lo = j->window > 0 && pos - j->window + 1 > 0 ? pos - j->window + 1 : 0;
                int64_t a = t0 > lo ? t0 : lo, e = t1 - 1 < hi ? t1 - 1 : hi;
                if (a > e) continue;
                const float *bias = j->bias ? j->bias + b * j->bias_sb + h * j->bias_sn + s * j->total_max : NULL;
                float mx = w->m[qi];
                const float sum = gqa_tile_weights(j, w, qi, kt, pk, t0, a, e, bias, H, &mx);
                const float *pw = w->p + (a - t0);   /* the weights of keys [a, e] */
                /* every key so far masked out by attention_bias (-inf): nothing to add, and
                 * exp(-inf - -inf) would make the row NaN */
                if (mx == -INFINITY) continue;
                float corr = nn_expf(w->m[qi] - mx);
                gqa_accumulate(w->acc + qi * H, corr, pw, pv + a * H, e - a + 1, H);
                w->l[qi] = w->l[qi] * corr + sum;
                w->m[qi] = mx;
            }
    }
    for (int64_t g = 0; g < G; g++)
        for (int64_t s = 0; s < S; s++) {
            int64_t qi = g * S + s, h = kh * G + g;
            float m = w->m[qi], l = w->l[qi], f;
            if (j->smooth || j->sink) {
                /* one more logit (0, or the head's sink) in the denominator */
                float z = j->sink ? j->sink[h] : 0.0f, top = m > z ? m : z;
                f = nn_expf(m - top) / (l * nn_expf(m - top) + nn_expf(z - top));
            } else {
                f = l > 0 ? 1.0f / l : 0.0f;
            }
            float *restrict o = j->out + (b * S + s) * j->N * H + h * H;
            const float *restrict acc = w->acc + qi * H;
            int64_t i = 0;
            for (; i + 8 <= H; i += 8) *(gqa_v8 *)(o + i) = *(const gqa_v8 *)(acc + i) * f;
            for (; i < H; i++) o[i] = acc[i] * f;
        }
})

static void gqa_items(void *arg, size_t begin, size_t end) {
    gqa_job *j = arg;
    int64_t nq = j->G * j->S;
    gqa_scratch w;
    w.q = malloc((size_t)(nq * j->H) * sizeof(float));
    w.acc = malloc((size_t)(nq * j->H) * sizeof(float));
    w.m = malloc((size_t)nq * sizeof(float));
    w.l = malloc((size_t)nq * sizeof(float));
    w.p = malloc(GQA_TILE * sizeof(float));
    w.kt = nq >= GQA_TILED_QUERIES ? malloc((size_t)(j->H * GQA_TILE) * sizeof(float)) : NULL;
    if (w.q && w.acc && w.m && w.l && w.p && (w.kt || nq < GQA_TILED_QUERIES)) {
        for (size_t it = begin; it < end; it++) {
            int64_t b = (int64_t)it / j->Nkv, kh = (int64_t)it % j->Nkv;
            gqa_present(j, b, kh);
            gqa_attend(j, b, kh, &w);
        }
    } else {
        __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
    }
    free(w.q);
    free(w.acc);
    free(w.m);
    free(w.l);
    free(w.p);
    free(w.kt);
}

/* ------------------------------------------------------------ validation */

static const onyx_value *gqa_in(const onyx_kernel_ctx *ctx, size_t i) {
    return i < ctx->n_in ? ctx->in[i] : NULL;
}

static onyx_status *gqa_float3(const onyx_value *v, const char *what) {
    if (!onyx_is_tensor(v) || v->dtype != ONYX_FLOAT || v->rank != 3)
        return ONYX_INVALID_ARG("input %s must be a 3-D float tensor", what);
    return NULL;
}

static onyx_status *gqa_attrs(const onyx_kernel_ctx *ctx, gqa_job *j) {
    const onyx_node *n = ctx->node;
    j->N = onyx_attr_int(n, "num_heads", 0);
    j->Nkv = onyx_attr_int(n, "kv_num_heads", 0);
    if (j->N <= 0 || j->Nkv <= 0 || j->N % j->Nkv || j->N > 65536)
        return ONYX_INVALID_ARG("num_heads (%lld) must be a positive multiple of kv_num_heads (%lld)",
                                (long long)j->N, (long long)j->Nkv);
    j->G = j->N / j->Nkv;
    j->window = onyx_attr_int(n, "local_window_size", -1);
    j->do_rotary = onyx_attr_int(n, "do_rotary", 0) != 0;
    j->interleaved = onyx_attr_int(n, "rotary_interleaved", 0) != 0;
    j->smooth = onyx_attr_int(n, "smooth_softmax", 0) != 0;
    j->softcap = onyx_attr_float(n, "softcap", 0.0f);
    int64_t causal = onyx_attr_int(n, "causal", 1);
    if (causal != 0 && causal != 1) return ONYX_INVALID_ARG("causal must be 0 or 1 (got %lld)", (long long)causal);
    j->causal = causal == 1;
    if (!j->causal && j->window > 0)
        return ONYX_INVALID_ARG("local_window_size %lld needs causal = 1", (long long)j->window);
    if (onyx_attr_int(n, "sliding_window_cache", 0))
        return ONYX_NOT_IMPLEMENTED("sliding_window_cache = 1 is not supported");
    if (onyx_attr_int(n, "qk_output", 0)) return ONYX_NOT_IMPLEMENTED("qk_output is not supported");
    if (j->softcap < 0) return ONYX_INVALID_ARG("softcap %g must be >= 0", (double)j->softcap);
    for (size_t i = 14; i < 18; i++)
        if (gqa_in(ctx, i))
            return ONYX_NOT_IMPLEMENTED("input %zu (%s) is not supported", i,
                                        i < 16 ? "quantised cache scales" : "q/k norm weights");
    return NULL;
}

/* query/key/value shapes: head size, token strides, packed QKV. */
static onyx_status *gqa_qkv(const onyx_kernel_ctx *ctx, gqa_job *j) {
    char b1[96];
    const onyx_value *q = gqa_in(ctx, 0), *k = gqa_in(ctx, 1), *v = gqa_in(ctx, 2);
    ONYX_TRY(gqa_float3(q, "query"));
    j->B = q->dims[0], j->S = q->dims[1];
    int64_t d = q->dims[2];
    if (!k && !v) {
        if (d % (j->N + 2 * j->Nkv))
            return ONYX_INVALID_ARG("packed QKV %s: last dimension is not a multiple of num_heads + 2 * kv_num_heads "
                                    "= %lld", onyx_shape_str(q->dims, 3, b1, sizeof b1), (long long)(j->N + 2 * j->Nkv));
        j->H = d / (j->N + 2 * j->Nkv);
        j->q = q->data;
        j->k = j->q + j->N * j->H;
        j->v = j->k + j->Nkv * j->H;
        j->q_tok = j->kv_tok = d;
        return NULL;
    }
    if (!k || !v) return ONYX_INVALID_ARG("key and value must be given together (or neither, for packed QKV)");
    ONYX_TRY(gqa_float3(k, "key"));
    ONYX_TRY(gqa_float3(v, "value"));
    if (d % j->N) return ONYX_INVALID_ARG("query hidden size %lld is not a multiple of num_heads %lld", (long long)d,
                                          (long long)j->N);
    j->H = d / j->N;
    if (!onyx_shape_equal(k, v) || k->dims[0] != j->B || k->dims[1] != j->S || k->dims[2] != j->Nkv * j->H)
        return ONYX_INVALID_ARG("key %s and value must both be [%lld, %lld, kv_num_heads * head_size = %lld]",
                                onyx_shape_str(k->dims, 3, b1, sizeof b1), (long long)j->B, (long long)j->S,
                                (long long)(j->Nkv * j->H));
    j->q = q->data, j->k = k->data, j->v = v->data;
    j->q_tok = d, j->kv_tok = j->Nkv * j->H;
    return NULL;
}

static onyx_status *gqa_past_and_lengths(const onyx_kernel_ctx *ctx, gqa_job *j) {
    char b1[96], b2[96];
    const onyx_value *pk = gqa_in(ctx, 3), *pv = gqa_in(ctx, 4), *sl = gqa_in(ctx, 5), *tl = gqa_in(ctx, 6);
    if (!!pk != !!pv) return ONYX_INVALID_ARG("past_key and past_value must be given together");
    if (pk) {
        if (!onyx_is_tensor(pk) || !onyx_is_tensor(pv) || pk->dtype != ONYX_FLOAT || pv->dtype != ONYX_FLOAT)
            return ONYX_NOT_IMPLEMENTED("past_key/past_value must be float (quantised caches are not supported)");
        if (pk->rank != 4 || !onyx_shape_equal(pk, pv) || pk->dims[0] != j->B || pk->dims[1] != j->Nkv ||
            pk->dims[3] != j->H)
            return ONYX_INVALID_ARG("past_key %s and past_value %s must both be [batch %lld, kv_num_heads %lld, "
                                    "L, head_size %lld]", onyx_shape_str(pk->dims, pk->rank, b1, sizeof b1),
                                    onyx_shape_str(pv->dims, pv->rank, b2, sizeof b2), (long long)j->B,
                                    (long long)j->Nkv, (long long)j->H);
        j->past_cap = pk->dims[2];
        j->past_k = pk->data, j->past_v = pv->data;
    }
    if (!onyx_is_tensor(sl) || sl->dtype != ONYX_INT32 || sl->numel != j->B)
        return ONYX_INVALID_ARG("seqlens_k must be an int32 tensor of batch_size (%lld) values", (long long)j->B);
    if (!onyx_is_tensor(tl) || tl->dtype != ONYX_INT32 || tl->numel != 1)
        return ONYX_INVALID_ARG("total_sequence_length must be one int32 value");
    j->total_max = ((const int32_t *)tl->data)[0];
    if (j->total_max < j->S || j->total_max > (INT64_C(1) << 31))
        return ONYX_INVALID_ARG("total_sequence_length %lld is less than the sequence length %lld",
                                (long long)j->total_max, (long long)j->S);
    j->first_prompt = j->S == j->total_max;
    j->present_len = j->past_cap > j->total_max ? j->past_cap : j->total_max;
    j->seqlens = sl->data;
    for (int64_t b = 0; b < j->B; b++) {
        int64_t total = (int64_t)j->seqlens[b] + 1;
        if (total < 1 || total > j->total_max)
            return ONYX_INVALID_ARG("seqlens_k[%lld] = %d is outside [0, total_sequence_length %lld)", (long long)b,
                                    j->seqlens[b], (long long)j->total_max);
        if (j->first_prompt) continue;
        if (total < j->S)
            return ONYX_INVALID_ARG("seqlens_k[%lld] = %d: fewer tokens than the %lld of this step", (long long)b,
                                    j->seqlens[b], (long long)j->S);
        if (total - j->S > j->past_cap)
            return ONYX_INVALID_ARG("seqlens_k[%lld] = %d needs %lld past tokens, but the cache (past_key) holds %lld",
                                    (long long)b, j->seqlens[b], (long long)(total - j->S), (long long)j->past_cap);
    }
    return NULL;
}

static onyx_status *gqa_rotary(const onyx_kernel_ctx *ctx, gqa_job *j, int64_t **pos_vals) {
    const onyx_value *cos = gqa_in(ctx, 7), *sin = gqa_in(ctx, 8), *pos = gqa_in(ctx, 9);
    j->rd = 0;
    if (!j->do_rotary) return NULL;
    if (!onyx_is_tensor(cos) || !onyx_is_tensor(sin) || cos->dtype != ONYX_FLOAT || !onyx_shape_equal(cos, sin) ||
        cos->rank != 2 || cos->dims[1] <= 0 || 2 * cos->dims[1] > j->H)
        return ONYX_INVALID_ARG("do_rotary needs float cos_cache and sin_cache of one shape [max_sequence_length, "
                                "rotary_dim / 2 <= head_size / 2 = %lld]", (long long)(j->H / 2));
    j->rd = 2 * cos->dims[1];
    j->cos = cos->data, j->sin = sin->data;
    int64_t rows = cos->dims[0];
    if (pos) {
        int64_t n;
        if (!onyx_is_tensor(pos) || pos->numel != j->B * j->S)
            return ONYX_INVALID_ARG("position_ids must hold batch_size * sequence_length values");
        ONYX_TRY(onyx_read_int_tensor(pos, pos_vals, &n));
        j->pos_ids = *pos_vals;
        for (int64_t i = 0; i < n; i++)
            if (j->pos_ids[i] < 0 || j->pos_ids[i] >= rows)
                return ONYX_INVALID_ARG("position_ids[%lld] = %lld is outside the cos/sin caches [0, %lld)",
                                        (long long)i, (long long)j->pos_ids[i], (long long)rows);
        return NULL;
    }
    for (int64_t b = 0; b < j->B; b++)
        if (gqa_past(j, b) + j->S > rows)
            return ONYX_INVALID_ARG("batch %lld reaches position %lld, beyond the cos/sin caches' %lld rows (the "
                                    "model's maximum sequence length)", (long long)b,
                                    (long long)(gqa_past(j, b) + j->S - 1), (long long)rows);
    return NULL;
}

static onyx_status *gqa_extras(const onyx_kernel_ctx *ctx, gqa_job *j) {
    char b1[96];
    const onyx_value *bias = gqa_in(ctx, 10), *sink = gqa_in(ctx, 11);
    if (bias) {
        if (!onyx_is_tensor(bias) || bias->dtype != ONYX_FLOAT || bias->rank != 4 ||
            (bias->dims[0] != 1 && bias->dims[0] != j->B) || (bias->dims[1] != 1 && bias->dims[1] != j->N) ||
            bias->dims[2] != j->S || bias->dims[3] != j->total_max)
            return ONYX_INVALID_ARG("attention_bias %s must be float [batch|1, num_heads|1, %lld, %lld]",
                                    onyx_shape_str(bias->dims, bias->rank, b1, sizeof b1), (long long)j->S,
                                    (long long)j->total_max);
        j->bias = bias->data;
        j->bias_sn = bias->dims[1] == 1 ? 0 : j->S * j->total_max;
        j->bias_sb = bias->dims[0] == 1 ? 0 : bias->dims[1] * j->S * j->total_max;
    }
    if (sink) {
        if (!onyx_is_tensor(sink) || sink->dtype != ONYX_FLOAT || sink->numel != j->N)
            return ONYX_INVALID_ARG("head_sink must be float [num_heads = %lld]", (long long)j->N);
        j->sink = sink->data;
    }
    if (j->window > 0 && j->window > j->present_len) j->window = -1;   /* wider than everything: no effect */
    return NULL;
}

static bool gqa_overlap(const void *a, size_t an, const void *b, size_t bn) {
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return an && bn && x < y + bn && y < x + an;
}

/* ONNX Runtime's shared KV buffer: the caller hands the same max-length
 * buffer in as past_key (past_value) and out as present_key (present_value)
 * (onyx_session_run_into); the step writes its rows in place. Any other
 * overlap of a present output with a past input would be read after being
 * written: refused. */
static onyx_status *gqa_sharing(const onyx_kernel_ctx *ctx, const onyx_value *pk, const onyx_value *pv,
                                gqa_job *j) {
    const onyx_value *past[2] = {gqa_in(ctx, 3), gqa_in(ctx, 4)}, *present[2] = {pk, pv};
    int same = 0;
    for (int o = 0; o < 2; o++)
        for (int i = 0; i < 2; i++) {
            if (!present[o] || !past[i] || !gqa_overlap(present[o]->data, present[o]->nbytes, past[i]->data,
                                                        past[i]->nbytes))
                continue;
            if (o != i || present[o]->data != past[i]->data || present[o]->nbytes != past[i]->nbytes)
                return ONYX_INVALID_ARG("present_%s overlaps past_%s without being the same buffer (a shared cache "
                                        "passes one max-length buffer as past_X and present_X)",
                                        o ? "value" : "key", i ? "value" : "key");
            same++;
        }
    if (same == 1)
        return ONYX_INVALID_ARG("only one of present_key/present_value shares its past buffer: share both or neither");
    j->shared = same == 2;
    return NULL;
}

static onyx_status *gqa_compute(onyx_kernel_ctx *ctx) {
    gqa_job j;
    memset(&j, 0, sizeof j);
    ONYX_TRY(gqa_attrs(ctx, &j));
    ONYX_TRY(gqa_qkv(ctx, &j));
    ONYX_TRY(gqa_past_and_lengths(ctx, &j));
    int64_t total_bytes;
    if (onyx_mul_overflow_i64(j.B * j.Nkv, j.present_len * j.H, &total_bytes) || total_bytes > ONYX_MAX_TENSOR_ELEMENTS)
        return ONYX_INVALID_ARG("present cache [%lld, %lld, %lld, %lld] is too large", (long long)j.B,
                                (long long)j.Nkv, (long long)j.present_len, (long long)j.H);
    float sc = onyx_attr_float(ctx->node, "scale", 0.0f);
    j.scale = sc != 0.0f ? sc : 1.0f / sqrtf((float)j.H);
    int64_t *pos_vals = NULL;
    onyx_status *st = gqa_rotary(ctx, &j, &pos_vals);
    if (!st) st = gqa_extras(ctx, &j);
    onyx_value *out = NULL, *pk = NULL, *pv = NULL;
    int64_t od[3] = {j.B, j.S, j.N * j.H}, pd[4] = {j.B, j.Nkv, j.present_len, j.H};
    if (!st) st = onyx_kernel_output(ctx, 0, ONYX_FLOAT, 3, od, &out);
    if (!st && ctx->n_out > 1 && ctx->out_used[1]) st = onyx_kernel_output(ctx, 1, ONYX_FLOAT, 4, pd, &pk);
    if (!st && ctx->n_out > 2 && ctx->out_used[2]) st = onyx_kernel_output(ctx, 2, ONYX_FLOAT, 4, pd, &pv);
    if (!st) st = gqa_sharing(ctx, pk, pv, &j);
    float *own_k = NULL, *own_v = NULL;   /* present rows when the graph does not read them */
    if (!st && (!pk || !pv)) {
        size_t n = (size_t)(j.B * j.Nkv * j.present_len * j.H);
        own_k = pk ? NULL : malloc(n * sizeof(float) + 1);
        own_v = pv ? NULL : malloc(n * sizeof(float) + 1);
        if ((!pk && !own_k) || (!pv && !own_v)) st = ONYX_OOM();
    }
    if (!st && out->numel) {
        j.out = out->data;
        j.pk = pk ? pk->data : own_k;
        j.pv = pv ? pv->data : own_v;
        size_t items = (size_t)(j.B * j.Nkv);
        /* small steps run inline: waking a worker costs more than ~32K multiply-adds */
        size_t work = (size_t)(j.G * j.S * j.present_len * j.H), grain = 1;
        while (grain * work < 32768 && grain < items) grain++;
        onyx_parallel_for(ctx->tp, items, grain, gqa_items, &j);
        if (j.failed) st = ONYX_OOM();
    }
    free(own_k);
    free(own_v);
    free(pos_vals);
    return st;
}

const onyx_op_def onyx_ops_contrib_gqa[] = {
    {"com.microsoft", "GroupQueryAttention", 1, ONYX_OPSET_LATEST, ONYX_T(ONYX_FLOAT), 0, NULL, NULL, gqa_compute},
    {0},};
