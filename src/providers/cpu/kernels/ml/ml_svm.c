/* ai.onnx.ml SVMClassifier and SVMRegressor (opset 1), with ONNX Runtime's
 * semantics (libsvm / liblinear models as exported by skl2onnx).
 *
 * Kernels K(x, v): LINEAR x.v, POLY (gamma x.v + coef0)^degree, RBF
 * exp(-gamma |x - v|^2), SIGMOID tanh(gamma x.v + coef0); kernel_params is
 * [gamma, coef0, degree]. Dot-product kernels run on the SGEMM engine, RBF
 * as explicit squared differences, all in float; rows are processed in
 * blocks so the kernel matrix stays small.
 *
 * SVMClassifier has two modes:
 *   - SVC (vectors_per_class given): one-vs-one. For classes i < j the
 *     decision is sum over the support vectors of class i of
 *     coef[j-1][v] K(x, v), plus the same over class j with coef[i][v], plus
 *     rho[pair]; a positive decision votes for i, else j. The label is the
 *     class with most votes (first on ties). Scores are the pairwise
 *     decisions, or with prob_a/prob_b the Platt-scaled pairwise
 *     probabilities combined by libsvm's multiclass_probability. With two
 *     classes and no probabilities the single decision d becomes [-d, d]
 *     (post_transform NONE) or [1 - d, d].
 *   - linear (liblinear): scores = X * coefficients^T + rho[0] per class,
 *     label of the first maximum, with ONNX Runtime's binary rule (two
 *     classes without probabilities: classlabels[1] if the top score is > 0
 *     with mixed-sign weights, or >= 0.5 with all weights non-negative).
 * SVMRegressor: sum of coef[v] K(x, v) + rho[0] (or X * coefficients +
 * rho[0] without support vectors), one column; one_class maps it to +-1.
 * ONNX Runtime ignores the regressor's post_transform, and so does this. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "providers/cpu/gemm/gemm.h"
#include "providers/cpu/kernels/ml/ml_common.h"

/* Rows whose kernel values are computed at once. */
#define SVM_BLOCK_ROWS 256

enum { K_LINEAR, K_POLY, K_RBF, K_SIGMOID };

typedef struct svm_kernel {
    int type;
    float gamma, coef0, degree;
} svm_kernel;

static onyx_status *svm_parse_kernel(const onyx_node *n, const char *op, svm_kernel *k) {
    static const char *const names[] = {"LINEAR", "POLY", "RBF", "SIGMOID"};
    const char *s = onyx_attr_string(n, "kernel_type", "LINEAR");
    k->type = -1;
    for (int i = 0; i < 4; i++)
        if (!strcmp(s, names[i])) k->type = i;
    if (k->type < 0)
        return ONYX_INVALID_MODEL("%s: kernel_type is '%s'; expected LINEAR, POLY, RBF or SIGMOID", op, s);
    size_t np;
    const float *p = onyx_attr_floats(n, "kernel_params", &np);
    k->gamma = k->coef0 = k->degree = 0;
    if (np && np < 3)
        return ONYX_INVALID_MODEL("%s: kernel_params has %zu values; expected gamma, coef0, degree",
                                  op, np);
    if (np) {
        k->gamma = p[0];
        k->coef0 = p[1];
        k->degree = p[2];
    }
    return NULL;
}

typedef struct rbf_job {
    const svm_kernel *k;
    const float *x, *v;
    int64_t nv, c;
    float *out;
} rbf_job;

static void rbf_rows(void *arg, size_t begin, size_t end) {
    const rbf_job *j = arg;
    for (size_t r = begin; r < end; r++) {
        const float *x = j->x + (int64_t)r * j->c;
        float *o = j->out + (int64_t)r * j->nv;
        for (int64_t s = 0; s < j->nv; s++) {
            const float *v = j->v + s * j->c;
            float sum = 0;
            for (int64_t f = 0; f < j->c; f++) {
                float d = x[f] - v[f];
                sum += d * d;
            }
            o[s] = expf(-j->k->gamma * sum);
        }
    }
}

/* out[rows, nv] = K(x_r, v_s) for x [rows, c] and v [nv, c]; `bias` is
 * added to the LINEAR kernel. */
static onyx_status *svm_kernel_dot(onyx_threadpool *tp, const svm_kernel *k, const float *x,
                                   int64_t rows, const float *v, int64_t nv, int64_t c, float bias,
                                   float *out) {
    if (rows == 0 || nv == 0) return NULL;
    if (k->type == K_RBF) {
        rbf_job j = {k, x, v, nv, c, out};
        size_t grain = (size_t)(nv * c > 4096 ? 1 : 4096 / (nv * c > 0 ? nv * c : 1));
        onyx_parallel_for(tp, (size_t)rows, grain, rbf_rows, &j);
        return NULL;
    }
    float alpha = k->type == K_LINEAR ? 1.0f : k->gamma;
    float add = k->type == K_LINEAR ? bias : k->coef0;
    size_t total = (size_t)(rows * nv);
    if (c == 0) memset(out, 0, total * sizeof *out);
    else
        ONYX_TRY(onyx_sgemm(false, true, (size_t)rows, (size_t)nv, (size_t)c, alpha, x, (size_t)c, v,
                            (size_t)c, 0.0f, out, (size_t)nv, tp));
    if (add != 0)
        for (size_t i = 0; i < total; i++) out[i] += add;
    if (k->type == K_POLY) {
        for (size_t i = 0; i < total; i++) {
            float o = out[i];
            out[i] = k->degree == 2 ? o * o : k->degree == 3 ? o * o * o : powf(o, k->degree);
        }
    } else if (k->type == K_SIGMOID) {
        for (size_t i = 0; i < total; i++) out[i] = tanhf(out[i]);
    }
    return NULL;
}

/* Rows, columns (which must be n_feat) and float data of input X. */
static onyx_status *svm_input(onyx_kernel_ctx *ctx, const char *op, int64_t n_feat, int64_t *n,
                              const float **x, float **owned) {
    const onyx_value *in = ctx->n_in ? ctx->in[0] : NULL;
    int64_t c = 0;
    ONYX_TRY(ml_rows_cols(in, op, n, &c));
    if (!ml_is_numeric_input(in->dtype))
        return ONYX_INVALID_ARG("%s: input X has type %s; expected float, double, int32 or int64",
                                op, onyx_dtype_name(in->dtype));
    if (c != n_feat)
        return ONYX_INVALID_ARG("%s: input X has %lld features; the model expects %lld", op,
                                (long long)c, (long long)n_feat);
    return ml_as_floats(in, x, owned);
}

/* A required float list attribute, copied. */
static onyx_status *svm_required_floats(const onyx_node *n, const char *op, const char *name,
                                        float **out, size_t *count) {
    ONYX_TRY(ml_attr_floats_copy(n, name, out, count));
    if (!*out) return ONYX_INVALID_MODEL("%s: attribute %s is required and must not be empty", op, name);
    return NULL;
}

/* -------------------------------------------------------------- SVMClassifier */

typedef struct svc_state {
    svm_kernel k;
    bool svc;               /* support-vector mode; else liblinear */
    int64_t n_class, n_vec, n_feat, n_pairs;
    int64_t *start;         /* first support vector of each class */
    const int64_t *per_class;
    float *sv, *coef, *rho, *proba, *probb;
    size_t n_sv, n_coef, n_rho, n_prob;
    bool all_positive;      /* every coefficient >= 0 */
    ml_post post;
    ml_labels labels;
} svc_state;

static void svc_free(void *p) {
    svc_state *s = p;
    if (!s) return;
    free(s->start);
    free(s->sv);
    free(s->coef);
    free(s->rho);
    free(s->proba);
    free(s->probb);
    free(s);
}

/* Support-vector layout: per-class counts, their starts and the sizes of
 * every attribute they index. */
static onyx_status *svc_check_svc(svc_state *s, size_t n_per_class) {
    const char *op = "SVMClassifier";
    if ((int64_t)n_per_class != s->n_class)
        return ONYX_INVALID_MODEL("%s: vectors_per_class has %zu entries for %lld classes", op,
                                  n_per_class, (long long)s->n_class);
    if (s->n_class < 2)
        return ONYX_INVALID_MODEL("%s: a support-vector model needs at least 2 classes", op);
    if (!(s->start = malloc((size_t)s->n_class * sizeof *s->start))) return ONYX_OOM();
    for (int64_t i = 0; i < s->n_class; i++) {
        if (s->per_class[i] < 0 || s->per_class[i] > INT32_MAX)
            return ONYX_INVALID_MODEL("%s: vectors_per_class[%lld] is %lld", op, (long long)i,
                                      (long long)s->per_class[i]);
        s->start[i] = s->n_vec;
        s->n_vec += s->per_class[i];
    }
    if (!s->n_sv || s->n_sv % (size_t)s->n_vec)
        return ONYX_INVALID_MODEL("%s: %zu support vector values do not split into %lld vectors",
                                  op, s->n_sv, (long long)s->n_vec);
    s->n_feat = (int64_t)(s->n_sv / (size_t)s->n_vec);
    int64_t need;
    if (onyx_mul_overflow_i64(s->n_class - 1, s->n_vec, &need))
        return ONYX_INVALID_MODEL("%s: too many support vectors (%lld)", op, (long long)s->n_vec);
    if ((int64_t)s->n_coef < need)
        return ONYX_INVALID_MODEL("%s: coefficients has %zu values; %lld classes and %lld support "
                                  "vectors need (classes - 1) x vectors = %lld", op, s->n_coef,
                                  (long long)s->n_class, (long long)s->n_vec, (long long)need);
    if ((int64_t)s->n_rho < s->n_pairs)
        return ONYX_INVALID_MODEL("%s: rho has %zu values; %lld class pairs need one each", op,
                                  s->n_rho, (long long)s->n_pairs);
    if (s->n_prob && (int64_t)s->n_prob < s->n_pairs)
        return ONYX_INVALID_MODEL("%s: prob_a has %zu values; %lld class pairs need one each", op,
                                  s->n_prob, (long long)s->n_pairs);
    return NULL;
}

static onyx_status *svc_setup(const onyx_kernel_info *info, svc_state *s) {
    const char *op = "SVMClassifier";
    const onyx_node *n = info->node;
    ONYX_TRY(svm_parse_kernel(n, op, &s->k));
    ONYX_TRY(ml_parse_post(n, "post_transform", &s->post));
    ONYX_TRY(ml_read_labels(n, "classlabels_ints", &s->labels));
    ONYX_TRY(svm_required_floats(n, op, "coefficients", &s->coef, &s->n_coef));
    ONYX_TRY(svm_required_floats(n, op, "rho", &s->rho, &s->n_rho));
    ONYX_TRY(ml_attr_floats_copy(n, "support_vectors", &s->sv, &s->n_sv));
    size_t na, nb;
    ONYX_TRY(ml_attr_floats_copy(n, "prob_a", &s->proba, &na));
    ONYX_TRY(ml_attr_floats_copy(n, "prob_b", &s->probb, &nb));
    if (na != nb) return ONYX_INVALID_MODEL("%s: prob_a has %zu values, prob_b %zu", op, na, nb);
    s->n_prob = na;
    if (!s->labels.n || s->labels.n > 65535)
        return ONYX_INVALID_MODEL("%s: needs 1 to 65535 classlabels_strings or classlabels_ints, has %zu",
                                  op, s->labels.n);
    s->n_class = (int64_t)s->labels.n;
    s->n_pairs = s->n_class * (s->n_class - 1) / 2;
    s->all_positive = true;
    for (size_t i = 0; i < s->n_coef; i++)
        if (s->coef[i] < 0) s->all_positive = false;
    size_t n_per_class;
    s->per_class = onyx_attr_ints(n, "vectors_per_class", &n_per_class);
    int64_t total = 0;
    for (size_t i = 0; i < n_per_class; i++) total += s->per_class[i] != 0;
    s->svc = total > 0;
    if (s->svc) return svc_check_svc(s, n_per_class);
    /* liblinear: one row of coefficients per class, the kernel is linear */
    s->k.type = K_LINEAR;
    if (s->n_coef % (size_t)s->n_class)
        return ONYX_INVALID_MODEL("%s: %zu coefficients do not split into %lld classes", op,
                                  s->n_coef, (long long)s->n_class);
    s->n_feat = (int64_t)(s->n_coef / (size_t)s->n_class);
    return NULL;
}

static onyx_status *svc_init(const onyx_kernel_info *info, void **state) {
    svc_state *s = calloc(1, sizeof *s);
    if (!s) return ONYX_OOM();
    onyx_status *st = svc_setup(info, s);
    if (st) {
        svc_free(s);
        return st;
    }
    *state = s;
    return NULL;
}

/* libsvm's pairwise coupling (Wu, Lin and Weng 2004, method 2), in float as
 * ONNX Runtime computes it: r is the k x k matrix of pairwise probabilities,
 * p receives the class probabilities; q and qp are scratch (k*k and k). */
static void svc_multiclass_probability(int64_t k, const float *r, float *p, float *q, float *qp) {
    float eps = 0.005f / (float)k;
    memset(q, 0, (size_t)(k * k) * sizeof *q);
    for (int64_t i = 0; i < k; i++) {
        p[i] = 1.0f / (float)k;
        for (int64_t j = 0; j < i; j++) {
            q[i * k + i] += r[j * k + i] * r[j * k + i];
            q[i * k + j] = q[j * k + i];
        }
        for (int64_t j = i + 1; j < k; j++) {
            q[i * k + i] += r[j * k + i] * r[j * k + i];
            q[i * k + j] = -r[j * k + i] * r[i * k + j];
        }
    }
    for (int loop = 0; loop < 100; loop++) {
        float pqp = 0;
        for (int64_t i = 0; i < k; i++) {
            qp[i] = 0;
            for (int64_t j = 0; j < k; j++) qp[i] += q[i * k + j] * p[j];
            pqp += p[i] * qp[i];
        }
        float max_error = 0;
        for (int64_t i = 0; i < k; i++) {
            float e = fabsf(qp[i] - pqp);
            if (e > max_error) max_error = e;
        }
        if (max_error < eps) break;
        for (int64_t i = 0; i < k; i++) {
            float diff = (-qp[i] + pqp) / q[i * k + i];
            p[i] += diff;
            pqp = (pqp + diff * (diff * q[i * k + i] + 2 * qp[i])) / (1 + diff) / (1 + diff);
            for (int64_t j = 0; j < k; j++) {
                qp[j] = (qp[j] + diff * q[i * k + j]) / (1 + diff);
                p[j] /= (1 + diff);
            }
        }
    }
}

/* Per-row scratch of the classifier. */
typedef struct svc_scratch {
    float *pairs;     /* n_pairs decisions */
    int64_t *votes;   /* n_class */
    float *r, *q, *qp; /* probability coupling */
    float *zrow;      /* one output row (at least 2) */
} svc_scratch;

/* One-vs-one decisions and votes of one row from its kernel values. */
static void svc_pairwise(const svc_state *s, const float *kern, svc_scratch *w) {
    int64_t v = s->n_vec, idx = 0;
    memset(w->votes, 0, (size_t)s->n_class * sizeof *w->votes);
    for (int64_t i = 0; i < s->n_class - 1; i++) {
        for (int64_t j = i + 1; j < s->n_class; j++, idx++) {
            double sum = 0;
            const float *ci = s->coef + (j - 1) * v + s->start[i];
            for (int64_t m = 0; m < s->per_class[i]; m++) sum += ci[m] * kern[s->start[i] + m];
            const float *cj = s->coef + i * v + s->start[j];
            for (int64_t m = 0; m < s->per_class[j]; m++) sum += cj[m] * kern[s->start[j] + m];
            sum += s->rho[idx];
            w->pairs[idx] = (float)sum;
            w->votes[sum > 0 ? i : j]++;
        }
    }
}

/* Platt-scaled pairwise probabilities coupled into class probabilities. */
static void svc_probabilities(const svc_state *s, svc_scratch *w, float *out) {
    int64_t k = s->n_class, idx = 0;
    memset(w->r, 0, (size_t)(k * k) * sizeof *w->r);
    for (int64_t i = 0; i < k - 1; i++) {
        for (int64_t j = i + 1; j < k; j++, idx++) {
            float p = 1 - ml_logistic(w->pairs[idx] * s->proba[idx] + s->probb[idx]);
            p = fminf(fmaxf(p, 1e-7f), 1 - 1e-7f);
            w->r[i * k + j] = p;
            w->r[j * k + i] = 1 - p;
        }
    }
    svc_multiclass_probability(k, w->r, out, w->q, w->qp);
}

/* Label index of a row: most votes (SVC) or top score (linear), with ONNX
 * Runtime's binary rule for two classes. */
static size_t svc_label_index(const svc_state *s, const float *scores, const int64_t *votes) {
    size_t best = 0;
    float max_weight = 0;
    if (s->svc) {
        for (int64_t i = 1; i < s->n_class; i++)
            if (votes[i] > votes[best]) best = (size_t)i;
    } else {
        for (int64_t i = 1; i < s->n_class; i++)
            if (scores[i] > scores[best]) best = (size_t)i;
        max_weight = scores[best];
    }
    if (s->n_pairs == 1 && !s->n_prob) {
        if (s->all_positive && max_weight >= 0.5f) return 1;
        if (max_weight > 0 && !s->all_positive) return 1;
    }
    return best;
}

static onyx_status *svc_alloc_scratch(const svc_state *s, svc_scratch *w) {
    size_t k = (size_t)s->n_class, np = (size_t)(s->n_pairs ? s->n_pairs : 1);
    size_t kk = s->svc && s->n_prob ? k * k : 1; /* coupling matrices: only with probabilities */
    w->pairs = malloc(np * sizeof *w->pairs);
    w->votes = malloc(k * sizeof *w->votes);
    w->r = malloc(kk * sizeof *w->r);
    w->q = malloc(kk * sizeof *w->q);
    w->qp = malloc(k * sizeof *w->qp);
    w->zrow = malloc((np > k ? np : k) * sizeof *w->zrow + 2 * sizeof *w->zrow);
    if (!w->pairs || !w->votes || !w->r || !w->q || !w->qp || !w->zrow) return ONYX_OOM();
    return NULL;
}

static void svc_free_scratch(svc_scratch *w) {
    free(w->pairs);
    free(w->votes);
    free(w->r);
    free(w->q);
    free(w->qp);
    free(w->zrow);
}

/* Finish one row: label and score columns (zc of them) into the outputs. */
static onyx_status *svc_row(const svc_state *s, const float *kern_or_scores, svc_scratch *w,
                            onyx_value *y, float *zout, int64_t zc, int64_t row) {
    const float *scores = kern_or_scores;
    size_t n_scores = (size_t)s->n_class;
    int second = ML_SECOND_NONE;
    memset(w->zrow, 0, (size_t)zc * sizeof *w->zrow);
    if (s->svc) {
        svc_pairwise(s, kern_or_scores, w);
        if (s->n_prob) {
            svc_probabilities(s, w, w->zrow);
        } else {
            n_scores = (size_t)s->n_pairs;
            memcpy(w->zrow, w->pairs, n_scores * sizeof *w->zrow);
            if (s->n_class <= 2) second = s->post == ML_POST_NONE ? 2 : 0;
        }
        scores = w->zrow;
    } else {
        memcpy(w->zrow, scores, n_scores * sizeof *w->zrow);
    }
    if (y) ONYX_TRY(ml_put_label(y, row, &s->labels, svc_label_index(s, scores, w->votes)));
    ml_write_scores(w->zrow, n_scores, s->post, second);
    if (zout) memcpy(zout + row * zc, w->zrow, (size_t)zc * sizeof *zout);
    return NULL;
}

static onyx_status *svc_compute(onyx_kernel_ctx *ctx) {
    const svc_state *s = ctx->state;
    int64_t n = 0;
    const float *x = NULL;
    float *owned = NULL, *kern = NULL;
    ONYX_TRY(svm_input(ctx, "SVMClassifier", s->n_feat, &n, &x, &owned));
    int64_t zc = s->svc && !s->n_prob ? (s->n_class > 2 ? s->n_pairs : 2) : s->n_class;
    int64_t width = s->svc ? s->n_vec : s->n_class;
    int64_t yd[1] = {n}, zd[2] = {n, zc};
    onyx_value *y = NULL, *z = NULL;
    svc_scratch w = {0};
    onyx_status *st = ml_output(ctx, 0, ml_label_dtype(&s->labels), 1, yd, &y);
    if (!st) st = ml_output(ctx, 1, ONYX_FLOAT, 2, zd, &z);
    if (!st) st = svc_alloc_scratch(s, &w);
    if (!st && !(kern = ml_alloc_floats(SVM_BLOCK_ROWS * width))) st = ONYX_OOM();
    for (int64_t r0 = 0; !st && r0 < n; r0 += SVM_BLOCK_ROWS) {
        int64_t rows = n - r0 < SVM_BLOCK_ROWS ? n - r0 : SVM_BLOCK_ROWS;
        const float *xb = x + r0 * s->n_feat;
        if (s->svc)
            st = svm_kernel_dot(ctx->tp, &s->k, xb, rows, s->sv, s->n_vec, s->n_feat, 0, kern);
        else
            st = svm_kernel_dot(ctx->tp, &s->k, xb, rows, s->coef, s->n_class, s->n_feat, s->rho[0], kern);
        for (int64_t i = 0; !st && i < rows; i++)
            st = svc_row(s, kern + i * width, &w, y, z ? z->data : NULL, zc, r0 + i);
    }
    svc_free_scratch(&w);
    free(kern);
    free(owned);
    return st;
}

/* --------------------------------------------------------------- SVMRegressor */

typedef struct svr_state {
    svm_kernel k;
    bool svc;
    int64_t n_vec, n_feat;
    float *sv, *coef, *rho;
    size_t n_sv, n_coef, n_rho;
    bool one_class;
} svr_state;

static void svr_free(void *p) {
    svr_state *s = p;
    if (!s) return;
    free(s->sv);
    free(s->coef);
    free(s->rho);
    free(s);
}

static onyx_status *svr_setup(const onyx_kernel_info *info, svr_state *s) {
    const char *op = "SVMRegressor";
    const onyx_node *n = info->node;
    ONYX_TRY(svm_parse_kernel(n, op, &s->k));
    ml_post post;
    ONYX_TRY(ml_parse_post(n, "post_transform", &post));
    ONYX_TRY(svm_required_floats(n, op, "coefficients", &s->coef, &s->n_coef));
    ONYX_TRY(svm_required_floats(n, op, "rho", &s->rho, &s->n_rho));
    ONYX_TRY(ml_attr_floats_copy(n, "support_vectors", &s->sv, &s->n_sv));
    s->one_class = onyx_attr_int(n, "one_class", 0) != 0;
    s->n_vec = onyx_attr_int(n, "n_supports", 0);
    if (s->n_vec < 0 || s->n_vec > INT32_MAX)
        return ONYX_INVALID_MODEL("%s: n_supports is %lld", op, (long long)s->n_vec);
    s->svc = s->n_vec > 0;
    if (!s->svc) {
        s->k.type = K_LINEAR;
        s->n_feat = (int64_t)s->n_coef;
        return NULL;
    }
    if (!s->n_sv || s->n_sv % (size_t)s->n_vec)
        return ONYX_INVALID_MODEL("%s: %zu support vector values do not split into %lld vectors",
                                  op, s->n_sv, (long long)s->n_vec);
    if ((int64_t)s->n_coef < s->n_vec)
        return ONYX_INVALID_MODEL("%s: coefficients has %zu values for %lld support vectors", op,
                                  s->n_coef, (long long)s->n_vec);
    s->n_feat = (int64_t)(s->n_sv / (size_t)s->n_vec);
    return NULL;
}

static onyx_status *svr_init(const onyx_kernel_info *info, void **state) {
    svr_state *s = calloc(1, sizeof *s);
    if (!s) return ONYX_OOM();
    onyx_status *st = svr_setup(info, s);
    if (st) {
        svr_free(s);
        return st;
    }
    *state = s;
    return NULL;
}

static onyx_status *svr_compute(onyx_kernel_ctx *ctx) {
    const svr_state *s = ctx->state;
    int64_t n = 0;
    const float *x = NULL;
    float *owned = NULL, *kern = NULL;
    ONYX_TRY(svm_input(ctx, "SVMRegressor", s->n_feat, &n, &x, &owned));
    int64_t dims[2] = {n, 1};
    onyx_value *y = NULL;
    onyx_status *st = onyx_kernel_output(ctx, 0, ONYX_FLOAT, 2, dims, &y);
    float *out = st ? NULL : y->data;
    if (!st && s->svc && !(kern = ml_alloc_floats(SVM_BLOCK_ROWS * s->n_vec))) st = ONYX_OOM();
    for (int64_t r0 = 0; !st && r0 < n; r0 += SVM_BLOCK_ROWS) {
        int64_t rows = n - r0 < SVM_BLOCK_ROWS ? n - r0 : SVM_BLOCK_ROWS;
        const float *xb = x + r0 * s->n_feat;
        if (!s->svc) {
            st = svm_kernel_dot(ctx->tp, &s->k, xb, rows, s->coef, 1, s->n_feat, s->rho[0], out + r0);
            continue;
        }
        st = svm_kernel_dot(ctx->tp, &s->k, xb, rows, s->sv, s->n_vec, s->n_feat, 0, kern);
        for (int64_t i = 0; !st && i < rows; i++) {
            float sum = 0;
            for (int64_t v = 0; v < s->n_vec; v++) sum += kern[i * s->n_vec + v] * s->coef[v];
            out[r0 + i] = sum + s->rho[0];
        }
    }
    if (!st && s->one_class)
        for (int64_t i = 0; i < n; i++) out[i] = out[i] > 0 ? 1.0f : -1.0f;
    free(kern);
    free(owned);
    return st;
}

const onyx_op_def onyx_ops_ml_svm[] = {
    {ML_DOMAIN, "SVMClassifier", 1, ONYX_OPSET_LATEST, ML_T_NUM_IN, 0, svc_init, svc_free,
     svc_compute},
    {ML_DOMAIN, "SVMRegressor", 1, ONYX_OPSET_LATEST, ML_T_NUM_IN, 0, svr_init, svr_free,
     svr_compute},
    {0},};
