/* Layer-normalisation operators that the graph optimiser's fusions produce,
 * with ONNX Runtime's semantics:
 *
 *   LayerNormalization (ai.onnx, opsets 1-16)  ONNX Runtime registers the
 *       opset-17 operator in the ai.onnx domain at version 1, so fused
 *       models of older opsets stay loadable there; same semantics as 17.
 *   SimplifiedLayerNormalization (ai.onnx)     RMS normalisation:
 *       Y = X / sqrt(mean(X^2) + epsilon) * scale.
 *   com.microsoft SkipLayerNormalization       LN(input + skip (+ bias)),
 *       optionally also returning the sum (input_skip_bias_sum).
 *   com.microsoft SkipSimplifiedLayerNormalization  the RMS variant.
 *   com.microsoft EmbedLayerNormalization      LN(word[ids] + position[pos]
 *       (+ segment[seg])), with mask_index and embedding_sum outputs.
 *
 * Rows of the normalised size are independent and run on the thread pool.
 * float computes two-pass (mean, then squared deviations) in vectorised
 * loops; float16/bfloat16 compute in float; double in double. Mean and
 * inverse standard deviation outputs are float (stash_type 1). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "providers/cpu/kernel.h"
#include "ir/schemas/contrib_norm.h"
#include "providers/cpu/kernels/nn_isa.h"
#include "providers/cpu/kernels/nn_math.h"
#include "providers/cpu/kernels/table_rows.h"

/* ------------------------------------------------------------ row kernels */

/* y = (x - mean) * inv * g (+ b) with mean = 0 when !center (RMS);
 * stats[0] = mean, stats[1] = inv. */
#define NORM_ROW_BODY(T)                                                          \
    {                                                                             \
        T mean = center ? nn_sum_##T(x, n) / (T)n : (T)0;                         \
        T var = nn_sumsq_dev_##T(x, n, mean) / (T)n;                              \
        T inv = (T)1 / NN_SQRT(var + eps);                                        \
        if (b) NN_LOOP(i, n, y[i] = (x[i] - mean) * inv * g[i] + b[i]);           \
        else NN_LOOP(i, n, y[i] = (x[i] - mean) * inv * g[i]);                    \
        stats[0] = mean;                                                          \
        stats[1] = inv;                                                           \
    }

/* s = a + k (+ bias): the residual sum of the skip variants. */
#define SKIP_SUM_BODY(T)                                                          \
    {                                                                             \
        if (bias) NN_LOOP(i, n, s[i] = a[i] + k[i] + bias[i]);                    \
        else NN_LOOP(i, n, s[i] = a[i] + k[i]);                                   \
    }

NN_MULTIVERSION(norm_row_float, (bool center, const float *restrict x, const float *restrict g,
                                 const float *restrict b, float *restrict y, size_t n, float eps,
                                 float *stats),
                (center, x, g, b, y, n, eps, stats), NORM_ROW_BODY(float))
NN_MULTIVERSION(skip_sum_float, (const float *restrict a, const float *restrict k, const float *restrict bias,
                                 float *restrict s, size_t n),
                (a, k, bias, s, n), SKIP_SUM_BODY(float))
static void norm_row_double(bool center, const double *restrict x, const double *restrict g,
                            const double *restrict b, double *restrict y, size_t n, double eps,
                            double *stats) NORM_ROW_BODY(double)
static void skip_sum_double(const double *restrict a, const double *restrict k, const double *restrict bias,
                            double *restrict s, size_t n) SKIP_SUM_BODY(double)

/* ------------------------------------------------------------ row driver */

typedef struct norm_job {
    int dtype;
    bool center;
    double eps;
    size_t rows, n;
    const void *x, *skip;       /* skip: NULL for the plain norms */
    /* skip variants: input and skip rows of output row r, numpy-broadcast
     * over the leading dims (strides 0 on broadcast axes) */
    int lead;
    int64_t odims[ONYX_MAX_RANK], xstr[ONYX_MAX_RANK], kstr[ONYX_MAX_RANK];
    const void *g, *b, *bias;   /* float arrays (float family) or double arrays */
    void *y, *sum;              /* sum: the input_skip_bias_sum output or NULL */
    float *mean, *inv;          /* statistics outputs or NULL */
    int failed;
} norm_job;

/* Element offsets of the input and skip rows of output row r. */
static void norm_row_offsets(const norm_job *j, size_t r, size_t *xo, size_t *ko) {
    if (!j->skip) {
        *xo = r * j->n;
        *ko = 0;
        return;
    }
    int64_t xi = 0, ki = 0, t = (int64_t)r;
    for (int d = j->lead - 1; d >= 0; d--) {
        int64_t c = t % j->odims[d];
        t /= j->odims[d];
        xi += c * j->xstr[d];
        ki += c * j->kstr[d];
    }
    *xo = (size_t)xi * j->n;
    *ko = (size_t)ki * j->n;
}

/* Rows of the double type: no conversion. */
static void norm_rows_double(norm_job *j, size_t begin, size_t end, double *scratch) {
    const double *g = j->g, *b = j->b, *bias = j->bias;
    for (size_t r = begin; r < end; r++) {
        size_t xo, ko;
        norm_row_offsets(j, r, &xo, &ko);
        const double *x = (const double *)j->x + xo;
        double *y = (double *)j->y + r * j->n, st[2];
        if (j->skip) {
            double *s = j->sum ? (double *)j->sum + r * j->n : scratch;
            skip_sum_double(x, (const double *)j->skip + ko, bias, s, j->n);
            x = s;
        }
        norm_row_double(j->center, x, g, b, y, j->n, j->eps, st);
        if (j->mean) j->mean[r] = (float)st[0];
        if (j->inv) j->inv[r] = (float)st[1];
    }
}

/* Rows of float, float16 or bfloat16 (the latter two through scratch), on
 * the dispatch table's hand-written rows where it has them (ARM64 NEON). */
static void norm_rows_float(norm_job *j, size_t begin, size_t end, float *scratch) {
    const onyx_nn_isa *nn = onyx_cpu_nn();
    bool convert = nn_needs_conversion(j->dtype);
    size_t n = j->n;
    float *xs = scratch, *ks = scratch + n, *ys = scratch + 2 * n, *ss = scratch + 3 * n;
    for (size_t r = begin; r < end; r++) {
        size_t off = r * n, xo, ko;
        norm_row_offsets(j, r, &xo, &ko);
        const float *x = nn_in_span_float(j->dtype, j->x, xo, n, xs);
        float *y = nn_out_span_float(j->dtype, j->y, off, ys), st[2];
        if (j->skip) {
            const float *k = nn_in_span_float(j->dtype, j->skip, ko, n, ks);
            float *s = j->sum && !convert ? (float *)j->sum + off : ss;
            if (nn) nn->skip_sum(x, k, j->bias, s, n);
            else skip_sum_float(x, k, j->bias, s, n);
            if (j->sum && convert) nn_store_f32(j->dtype, j->sum, off, n, s);
            x = s;
        }
        if (nn) nn->norm_row(j->center, x, j->g, j->b, y, n, (float)j->eps, st);
        else norm_row_float(j->center, x, j->g, j->b, y, n, (float)j->eps, st);
        nn_out_done_float(j->dtype, j->y, off, n, y);
        if (j->mean) j->mean[r] = st[0];
        if (j->inv) j->inv[r] = st[1];
    }
}

static void norm_rows(void *arg, size_t begin, size_t end) {
    norm_job *j = arg;
    size_t es = j->dtype == ONYX_DOUBLE ? sizeof(double) : sizeof(float);
    void *scratch = malloc(4 * (j->n ? j->n : 1) * es);
    if (!scratch) {
        __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    if (j->dtype == ONYX_DOUBLE) norm_rows_double(j, begin, end, scratch);
    else norm_rows_float(j, begin, end, scratch);
    free(scratch);
}

static onyx_status *norm_run_job(norm_job *j, onyx_threadpool *tp) {
    if (j->n == 0) {
        /* statistics of empty rows are undefined */
        for (size_t r = 0; r < j->rows; r++) {
            if (j->mean) j->mean[r] = NAN;
            if (j->inv) j->inv[r] = NAN;
        }
        return NULL;
    }
    size_t total = j->rows * j->n;
    if (total < NN_PARALLEL_MIN) norm_rows(j, 0, j->rows);
    else onyx_parallel_for(tp, j->rows, nn_grain(j->n, NN_PARALLEL_MIN / 4), norm_rows, j);
    return j->failed ? ONYX_OOM() : NULL;
}

/* ------------------------------------------------------------ parameters */

/* A parameter tensor (scale, bias, ...) of x's type with exactly n
 * elements, as the compute type: float (converted copy in *own for
 * float16/bfloat16) or the double data itself. */
static onyx_status *norm_param(const onyx_value *p, const onyx_value *x, size_t n, const char *what,
                               const void **data, float **own) {
    *data = NULL;
    *own = NULL;
    if (!p) return NULL;
    char sp[200];
    if (!onyx_is_tensor(p) || p->dtype != x->dtype)
        return ONYX_INVALID_ARG("%s must be a tensor of the input's element type %s", what, onyx_dtype_name(x->dtype));
    if ((size_t)p->numel != n)
        return ONYX_INVALID_ARG("%s %s must have %zu elements (the normalised size)", what,
                                onyx_shape_str(p->dims, p->rank, sp, sizeof sp), n);
    if (!nn_needs_conversion(x->dtype)) {
        *data = p->data;
        return NULL;
    }
    if (!(*own = nn_tensor_to_f32(p))) return ONYX_OOM();
    *data = *own;
    return NULL;
}

/* Statistics output k: X's dims before `axis`, 1 from there on, float. */
static onyx_status *norm_stat_output(onyx_kernel_ctx *ctx, size_t k, const onyx_value *x, int axis, float **out) {
    *out = NULL;
    if (k >= ctx->n_out || !ctx->out_used[k]) return NULL;
    int64_t dims[ONYX_MAX_RANK];
    for (int i = 0; i < x->rank; i++) dims[i] = i < axis ? x->dims[i] : 1;
    onyx_value *v;
    ONYX_TRY(onyx_kernel_output(ctx, k, ONYX_FLOAT, x->rank, dims, &v));
    *out = v->data;
    return NULL;
}

/* ------------------------------------------------------------ operators */

static const onyx_value *opt_in(const onyx_kernel_ctx *ctx, int i) {
    return i >= 0 && (size_t)i < ctx->n_in ? ctx->in[i] : NULL;
}

/* Skip (input 1) of a skip variant: the same last dimension as the input;
 * the leading dims of both broadcast (numpy rules) to the output's, as the
 * Add this operator replaces did. (ONNX Runtime itself accepts a skip of
 * the input's shape, or (1, S, H) / (S, H) for input (B, S, H).) */
static onyx_status *norm_broadcast_skip(const onyx_value *x, const onyx_value *k, norm_job *j, int64_t *odims,
                                        int *orank) {
    char sx[200], sk[200];
    if (!onyx_is_tensor(k) || k->dtype != x->dtype)
        return ONYX_INVALID_ARG("skip must be a tensor of the input's element type %s", onyx_dtype_name(x->dtype));
    if (k->rank < 1 || k->dims[k->rank - 1] != x->dims[x->rank - 1])
        return ONYX_INVALID_ARG("skip %s must have the input's last dimension (input %s)",
                                onyx_shape_str(k->dims, k->rank, sk, sizeof sk),
                                onyx_shape_str(x->dims, x->rank, sx, sizeof sx));
    int lead;
    onyx_status *st = onyx_broadcast_shapes(x->dims, x->rank - 1, k->dims, k->rank - 1, odims, &lead);
    if (st) return onyx_error_wrap(st, "input %s and skip %s: ", onyx_shape_str(x->dims, x->rank, sx, sizeof sx),
                                   onyx_shape_str(k->dims, k->rank, sk, sizeof sk));
    if (lead + 1 > ONYX_MAX_RANK) return ONYX_INVALID_ARG("rank too large");
    j->lead = lead;
    int64_t xrun = 1, krun = 1;
    for (int d = lead - 1; d >= 0; d--) {
        int xd = d - (lead - (x->rank - 1)), kd = d - (lead - (k->rank - 1));
        int64_t xs = xd >= 0 ? x->dims[xd] : 1, ks = kd >= 0 ? k->dims[kd] : 1;
        j->odims[d] = odims[d];
        j->xstr[d] = xs == 1 ? 0 : xrun;
        j->kstr[d] = ks == 1 ? 0 : krun;
        xrun *= xs;
        krun *= ks;
    }
    odims[lead] = x->dims[x->rank - 1];
    *orank = lead + 1;
    return NULL;
}

static onyx_status *norm_compute(onyx_kernel_ctx *ctx, const norm_spec *sp) {
    const onyx_value *x = ctx->n_in ? ctx->in[0] : NULL;
    ONYX_TRY(nn_check_float_input(x, "X"));
    norm_job j = {.dtype = x->dtype, .center = sp->center, .x = x->data,
                  .eps = onyx_attr_float(ctx->node, "epsilon", sp->default_eps)};
    /* output shape: X's, or the broadcast of input and skip */
    int64_t odims[ONYX_MAX_RANK];
    int orank = x->rank, axis = x->rank - 1;
    memcpy(odims, x->dims, sizeof(int64_t) * (size_t)x->rank);
    if (!sp->skip) {
        ONYX_TRY(onyx_normalize_axis(onyx_attr_int(ctx->node, "axis", -1), x->rank, &axis));
    } else {
        if (x->rank < 2) return ONYX_INVALID_ARG("input must have rank >= 2, got %d", x->rank);
        ONYX_TRY(norm_broadcast_skip(x, opt_in(ctx, 1), &j, odims, &orank));
        axis = orank - 1;
        j.skip = ctx->in[1]->data;
    }
    j.rows = 1;
    j.n = 1;
    for (int i = 0; i < orank; i++) {
        if (i < axis) j.rows *= (size_t)odims[i];
        else j.n *= (size_t)odims[i];
    }
    if (!opt_in(ctx, sp->gamma)) return ONYX_INVALID_ARG("the scale (gamma) input is required");
    float *own[3] = {NULL, NULL, NULL};
    onyx_status *st = norm_param(opt_in(ctx, sp->gamma), x, j.n, "scale", &j.g, &own[0]);
    if (!st) st = norm_param(opt_in(ctx, sp->beta), x, j.n, "bias (beta)", &j.b, &own[1]);
    if (!st) st = norm_param(opt_in(ctx, sp->bias), x, j.n, "skip bias", &j.bias, &own[2]);
    onyx_value *y, out_shape = {.rank = orank};
    memcpy(out_shape.dims, odims, sizeof(int64_t) * (size_t)orank);
    if (!st) st = onyx_kernel_output(ctx, 0, x->dtype, orank, odims, &y);
    if (!st) j.y = y->data;
    if (!st && sp->sum_out >= 0 && (size_t)sp->sum_out < ctx->n_out && ctx->out_used[sp->sum_out]) {
        onyx_value *s;
        st = onyx_kernel_output(ctx, (size_t)sp->sum_out, x->dtype, orank, odims, &s);
        if (!st) j.sum = s->data;
    }
    if (!st && sp->mean_out >= 0) st = norm_stat_output(ctx, (size_t)sp->mean_out, &out_shape, axis, &j.mean);
    if (!st && sp->inv_out >= 0) st = norm_stat_output(ctx, (size_t)sp->inv_out, &out_shape, axis, &j.inv);
    if (!st) st = norm_run_job(&j, ctx->tp);
    for (int i = 0; i < 3; i++) free(own[i]);
    return st;
}

static onyx_status *ln_compute(onyx_kernel_ctx *ctx) { return norm_compute(ctx, &LN_SPEC); }
static onyx_status *sln_compute(onyx_kernel_ctx *ctx) { return norm_compute(ctx, &SLN_SPEC); }
static onyx_status *skip_ln_compute(onyx_kernel_ctx *ctx) { return norm_compute(ctx, &SKIP_LN_SPEC); }
static onyx_status *skip_sln_compute(onyx_kernel_ctx *ctx) { return norm_compute(ctx, &SKIP_SLN_SPEC); }

/* numpy broadcast of two static shapes, dims unknown where not derivable */
/* ------------------------------------------------------------ EmbedLayerNormalization */

/* Element i of an int32 or int64 index tensor. */
static int64_t emb_index(const onyx_value *v, size_t i) {
    return v->dtype == ONYX_INT32 ? ((const int32_t *)v->data)[i] : ((const int64_t *)v->data)[i];
}

static int64_t emb_wrap(int64_t i, const onyx_value *table) {
    return i < 0 && table ? i + table->dims[0] : i;
}

static onyx_status *emb_check_ids(const onyx_value *v, const char *what, int64_t B, int64_t S, bool allow_b1) {
    char s[200];
    if (!onyx_is_tensor(v) || (v->dtype != ONYX_INT32 && v->dtype != ONYX_INT64))
        return ONYX_INVALID_ARG("%s must be an int32 tensor", what);
    if (v->rank != 2 || v->dims[1] != S || !(v->dims[0] == B || (allow_b1 && v->dims[0] == 1)))
        return ONYX_INVALID_ARG("%s %s must have shape (batch_size, sequence_length) = (%lld, %lld)", what,
                                onyx_shape_str(v->dims, v->rank, s, sizeof s), (long long)B, (long long)S);
    return NULL;
}

/* Tables are float or float16 each (a float model's float16-stored
 * tables, optimizer/passes_half.c): rows are converted as they are read. */
static onyx_status *emb_check_table(const onyx_value *v, const char *what, int64_t H) {
    char s[200];
    if (!onyx_is_tensor(v) || (v->dtype != ONYX_FLOAT && v->dtype != ONYX_FLOAT16))
        return ONYX_INVALID_ARG("%s must be a float or float16 tensor", what);
    if (v->rank != 2 || v->dims[1] != H || v->dims[0] < 1)
        return ONYX_INVALID_ARG("%s %s must be 2-D (rows, hidden_size %lld)", what,
                                onyx_shape_str(v->dims, v->rank, s, sizeof s), (long long)H);
    return NULL;
}

typedef struct emb_job {
    const onyx_value *ids, *seg_ids, *pos_ids, *word, *pos, *seg;
    onyx_table_rows *word_rows;   /* the word table's row copier, or NULL */
    int64_t S, H;
    const float *g, *b;        /* gamma, beta as float */
    float eps;
    void *y, *sum;             /* outputs (sum may be NULL) */
    int dtype;                 /* their element type */
    int failed;                /* 1: out of memory, 2: index out of range */
} emb_job;

/* Row r of an embedding table as float (converted into buf for float16,
 * copied there when the table is a misaligned view of the model file),
 * through the table's row copier where it has one (table_rows.h). */
static const float *emb_row(const onyx_value *t, onyx_table_rows *rows, int64_t r, int64_t H, float *buf) {
    const void *p = onyx_table_rows_get(rows, t, (size_t)r);
    if (t->dtype == ONYX_FLOAT && (uintptr_t)p % sizeof(float)) {
        memcpy(buf, p, (size_t)H * sizeof(float));
        return buf;
    }
    return nn_in_span_float(t->dtype, p, 0, (size_t)H, buf);
}

static void emb_tokens(void *arg, size_t begin, size_t end) {
    emb_job *j = arg;
    size_t H = (size_t)j->H;
    float *buf = malloc(5 * H * sizeof *buf);
    if (!buf) {
        __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    float *wb = buf, *pb = buf + H, *sb = buf + 2 * H, *s = buf + 3 * H, *ys = buf + 4 * H;
    int dtype = j->dtype;
    for (size_t t = begin; t < end; t++) {
        int64_t si = (int64_t)t % j->S;
        /* negative indices count from the end, as in the Gathers this
         * operator replaces (ONNX Runtime's kernel rejects them) */
        int64_t wid = emb_wrap(emb_index(j->ids, t), j->word);
        int64_t pid = !j->pos_ids ? si : emb_wrap(emb_index(j->pos_ids, j->pos_ids->dims[0] == 1 ? (size_t)si : t), j->pos);
        int64_t gid = j->seg_ids ? emb_wrap(emb_index(j->seg_ids, t), j->seg) : 0;
        if (wid < 0 || wid >= j->word->dims[0] || pid < 0 || pid >= j->pos->dims[0] ||
            (j->seg && (gid < 0 || gid >= j->seg->dims[0]))) {
            __atomic_store_n(&j->failed, 2, __ATOMIC_RELAXED);
            break;
        }
        const float *w = emb_row(j->word, j->word_rows, wid, j->H, wb), *p = emb_row(j->pos, NULL, pid, j->H, pb);
        float *sum = j->sum && dtype == ONYX_FLOAT ? (float *)j->sum + t * H : s;
        if (j->seg) {
            const float *g = emb_row(j->seg, NULL, gid, j->H, sb);
            skip_sum_float(w, p, g, sum, H);
        } else {
            skip_sum_float(w, p, NULL, sum, H);
        }
        if (j->sum && dtype != ONYX_FLOAT) nn_store_f32(dtype, j->sum, t * H, H, sum);
        float *y = nn_out_span_float(dtype, j->y, t * H, ys), st[2];
        norm_row_float(true, sum, j->g, j->b, y, H, j->eps, st);
        nn_out_done_float(dtype, j->y, t * H, H, y);
    }
    free(buf);
}

static onyx_status *embed_ln_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *ids = opt_in(ctx, 0), *seg_ids = opt_in(ctx, 1), *word = opt_in(ctx, 2),
                     *pos = opt_in(ctx, 3), *seg = opt_in(ctx, 4), *gamma = opt_in(ctx, 5), *beta = opt_in(ctx, 6),
                     *mask = opt_in(ctx, 7), *pos_ids = opt_in(ctx, 8);
    if (!onyx_is_tensor(ids) || ids->rank != 2) return ONYX_INVALID_ARG("input_ids must be a 2-D tensor");
    int64_t B = ids->dims[0], S = ids->dims[1];
    ONYX_TRY(emb_check_ids(ids, "input_ids", B, S, false));
    if (!onyx_is_tensor(word) || (word->dtype != ONYX_FLOAT && word->dtype != ONYX_FLOAT16) || word->rank != 2)
        return ONYX_INVALID_ARG("word_embedding must be a 2-D float or float16 tensor");
    int64_t H = word->dims[1];
    ONYX_TRY(emb_check_table(pos, "position_embedding", H));
    if (seg_ids || seg) {
        if (!seg_ids || !seg) return ONYX_INVALID_ARG("segment_ids and segment_embedding must be given together");
        ONYX_TRY(emb_check_ids(seg_ids, "segment_ids", B, S, false));
        ONYX_TRY(emb_check_table(seg, "segment_embedding", H));
    }
    if (mask) ONYX_TRY(emb_check_ids(mask, "mask", B, S, false));
    if (pos_ids) ONYX_TRY(emb_check_ids(pos_ids, "position_ids", B, S, true));
    if (!gamma || !beta) return ONYX_INVALID_ARG("gamma and beta are required");
    /* the outputs have gamma's type: float with float16-stored float tables */
    const onyx_value *ref = onyx_is_tensor(gamma) && gamma->dtype == ONYX_FLOAT ? gamma : word;
    const void *g = NULL, *b = NULL;
    float *gown = NULL, *bown = NULL;
    onyx_status *st = norm_param(gamma, ref, (size_t)H, "gamma", &g, &gown);
    if (!st) st = norm_param(beta, ref, (size_t)H, "beta", &b, &bown);
    int64_t dims[3] = {B, S, H};
    onyx_value *y = NULL, *sum = NULL, *mi = NULL;
    if (!st) st = onyx_kernel_output(ctx, 0, ref->dtype, 3, dims, &y);
    if (!st && ctx->n_out > 1 && ctx->out_used[1]) st = onyx_kernel_output(ctx, 1, ONYX_INT32, 1, &B, &mi);
    if (!st && ctx->n_out > 2 && ctx->out_used[2]) st = onyx_kernel_output(ctx, 2, ref->dtype, 3, dims, &sum);
    if (!st && mi) {
        /* mask_index: the number of ones in each row of the mask (0 without one) */
        int32_t *m = mi->data;
        for (int64_t bi = 0; bi < B; bi++) {
            int32_t c = 0;
            for (int64_t s = 0; mask && s < S; s++) c += emb_index(mask, (size_t)(bi * S + s)) == 1;
            m[bi] = c;
        }
    }
    if (!st && H > 0 && B * S > 0) {
        emb_job j = {.ids = ids, .seg_ids = seg_ids, .pos_ids = pos_ids, .word = word, .word_rows = ctx->state,
                     .pos = pos, .seg = seg,
                     .S = S, .H = H, .g = g, .b = b, .eps = onyx_attr_float(ctx->node, "epsilon", 1e-12f),
                     .y = y->data, .sum = sum ? sum->data : NULL, .dtype = ref->dtype};
        size_t tokens = (size_t)(B * S);
        if (tokens * (size_t)H < NN_PARALLEL_MIN) emb_tokens(&j, 0, tokens);
        else onyx_parallel_for(ctx->tp, tokens, nn_grain((size_t)H, NN_PARALLEL_MIN / 4), emb_tokens, &j);
        if (j.failed == 1) st = ONYX_OOM();
        else if (j.failed == 2)
            st = ONYX_INVALID_ARG("an input, segment or position id is out of range of its embedding table "
                                  "(word %lld, position %lld, segment %lld rows)",
                                  (long long)word->dims[0], (long long)pos->dims[0], (long long)(seg ? seg->dims[0] : 0));
    }
    free(gown);
    free(bown);
    return st;
}

/* A word table mapped from external data gets a row copier (the position
 * and segment tables are small). */
static onyx_status *embed_ln_init(const onyx_kernel_info *info, void **state) {
    *state = NULL;
    const onyx_value *word = info->const_in && info->n_in > 2 ? info->const_in[2] : NULL;
    return onyx_table_rows_new(word, (onyx_table_rows **)state);
}

static void embed_ln_free(void *state) { onyx_table_rows_free(state); }

/* ------------------------------------------------------------ registration */

#define F4 (ONYX_T(ONYX_FLOAT) | ONYX_T(ONYX_DOUBLE) | ONYX_T(ONYX_FLOAT16) | ONYX_T(ONYX_BFLOAT16))
#define F3 (ONYX_T(ONYX_FLOAT) | ONYX_T(ONYX_FLOAT16) | ONYX_T(ONYX_BFLOAT16))
#define L ONYX_OPSET_LATEST

const onyx_op_def onyx_ops_contrib_norm[] = {
    {"", "LayerNormalization", 1, 16, F4, 0, NULL, NULL, ln_compute},
    {"", "SimplifiedLayerNormalization", 1, L, F4, 0, NULL, NULL, sln_compute},
    {"com.microsoft", "SkipLayerNormalization", 1, L, F3, 0, NULL, NULL, skip_ln_compute},
    {"com.microsoft", "SkipSimplifiedLayerNormalization", 1, L, F3, 0, NULL, NULL, skip_sln_compute},
    {"com.microsoft", "EmbedLayerNormalization", 1, L, 0, 0, embed_ln_init, embed_ln_free, embed_ln_compute},
    {0},};
