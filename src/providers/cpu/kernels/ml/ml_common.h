/* Private helpers of the ai.onnx.ml kernel families (ml_linear.c, ml_svm.c,
 * ml_tree.c, ml_preprocess.c): score post-transforms with ONNX Runtime's
 * exact semantics, attribute readers, input conversion and label output.
 * Not a contract for other families.
 *
 * Score post-transforms follow ONNX Runtime's ml_common.h (the reference for
 * these operators): all arithmetic in float, PROBIT through the same
 * Winitzki erfinv approximation, SOFTMAX_ZERO leaving zero scores at zero,
 * and the "second class" expansion of single-score binary classifiers. */
#ifndef ONYX_CPU_ML_COMMON_H
#define ONYX_CPU_ML_COMMON_H

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/checked.h"
#include "providers/cpu/kernel.h"
#include "ir/schemas/ml_infer.h"

#define ML_DOMAIN "ai.onnx.ml"

/* The numeric input types most ai.onnx.ml operators take. */
#define ML_T_NUM_IN (ONYX_T(ONYX_FLOAT) | ONYX_T(ONYX_DOUBLE) | ONYX_T(ONYX_INT32) | ONYX_T(ONYX_INT64))

/* ------------------------------------------------------------ post transforms */

typedef enum ml_post {
    ML_POST_NONE = 0,
    ML_POST_LOGISTIC,
    ML_POST_SOFTMAX,
    ML_POST_SOFTMAX_ZERO,
    ML_POST_PROBIT,
} ml_post;

/* The string attribute `name` (default "NONE") as a transform. */
static inline onyx_status *ml_parse_post(const onyx_node *n, const char *name, ml_post *out) {
    const char *s = onyx_attr_string(n, name, "NONE");
    static const char *const names[] = {"NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO", "PROBIT"};
    for (int i = 0; i < 5; i++)
        if (!strcmp(s, names[i])) {
            *out = (ml_post)i;
            return NULL;
        }
    return ONYX_INVALID_MODEL("attribute %s is '%s'; expected NONE, LOGISTIC, SOFTMAX, "
                              "SOFTMAX_ZERO or PROBIT", name, s);
}

static inline float ml_logistic(float v) {
    float e = 1.0f / (1.0f + expf(-fabsf(v)));
    return v < 0 ? 1.0f - e : e;
}

/* erfinv by Winitzki's approximation (a = 0.147), as ONNX Runtime computes it. */
static inline float ml_erfinv(float x) {
    float sgn = x < 0 ? -1.0f : 1.0f;
    x = (1 - x) * (1 + x);
    float lg = logf(x);
    float v = 2 / ((float)M_PI * 0.147f) + 0.5f * lg;
    float v2 = 1 / 0.147f * lg;
    float v3 = -v + sqrtf(v * v - v2);
    return sgn * sqrtf(v3);
}

static inline float ml_probit(float v) { return (float)M_SQRT2 * ml_erfinv(2 * v - 1); }

static inline void ml_softmax(float *s, size_t n) {
    float mx = -FLT_MAX, sum = 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] > mx) mx = s[i];
    for (size_t i = 0; i < n; i++) {
        s[i] = expf(s[i] - mx);
        sum += s[i];
    }
    for (size_t i = 0; i < n; i++) s[i] /= sum;
}

/* Softmax over the non-zero scores: a zero score stays zero. */
static inline void ml_softmax_zero(float *s, size_t n) {
    float mx = -FLT_MAX, sum = 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] > mx) mx = s[i];
    float exp_neg_max = expf(-mx);
    for (size_t i = 0; i < n; i++) {
        if (s[i] > 1e-7f || s[i] < -1e-7f) {
            s[i] = expf(s[i] - mx);
            sum += s[i];
        } else {
            s[i] *= exp_neg_max;
        }
    }
    for (size_t i = 0; i < n; i++) s[i] /= sum;
}

/* How a single binary score becomes two (ONNX Runtime's add_second_class):
 * ML_SECOND_NONE keeps one score; 0 and 1 write [1 - s, s]; 2 and 3 write
 * [-s, s], or [logistic(-s), logistic(s)] under LOGISTIC. */
enum { ML_SECOND_NONE = -1 };

/* Apply the transform to the n scores of one row in place. With n == 1 and
 * no PROBIT, `second` may expand the score to two: s must have room for two
 * values. Returns the number of scores written. */
static inline size_t ml_write_scores(float *s, size_t n, ml_post post, int second) {
    if (n >= 2) {
        switch (post) {
        case ML_POST_PROBIT:
            for (size_t i = 0; i < n; i++) s[i] = ml_probit(s[i]);
            break;
        case ML_POST_LOGISTIC:
            for (size_t i = 0; i < n; i++) s[i] = ml_logistic(s[i]);
            break;
        case ML_POST_SOFTMAX: ml_softmax(s, n); break;
        case ML_POST_SOFTMAX_ZERO: ml_softmax_zero(s, n); break;
        case ML_POST_NONE: break;
        }
        return n;
    }
    if (n == 0) return 0;
    if (post == ML_POST_PROBIT) {
        s[0] = ml_probit(s[0]);
        return 1;
    }
    float v = s[0];
    switch (second) {
    case 0:
    case 1:
        s[0] = 1.0f - v;
        s[1] = v;
        return 2;
    case 2:
    case 3:
        if (post == ML_POST_LOGISTIC) {
            s[0] = ml_logistic(-v);
            s[1] = ml_logistic(v);
        } else {
            s[0] = -v;
            s[1] = v;
        }
        return 2;
    default: return 1;
    }
}

/* ------------------------------------------------------------------ attributes */


/* A numeric list attribute as doubles: the FLOATS attribute `name`, or the
 * TENSOR attribute `tensor_name` (any numeric type) when that is given
 * instead (ai.onnx.ml's *_as_tensor). *vals is malloc'd (NULL when both are
 * absent, with *count = 0). Both given is an error. */
static inline onyx_status *ml_attr_reals(const onyx_node *n, const onyx_model *m,
                                         const char *name, const char *tensor_name,
                                         double **vals, size_t *count) {
    *vals = NULL;
    *count = 0;
    size_t nf;
    const float *f = onyx_attr_floats(n, name, &nf);
    const onyx_attr_proto *t = tensor_name ? onyx_node_attr(n, tensor_name) : NULL;
    if (t && t->type != ONYX_ATTR_TENSOR) t = NULL;
    if (f && nf && t)
        return ONYX_INVALID_MODEL("attributes %s and %s are both given", name, tensor_name);
    if (t) {
        onyx_value *v;
        ONYX_TRY(onyx_attr_tensor(n, m, tensor_name, &v));
        onyx_status *st = NULL;
        if (v->dtype == ONYX_STRING || !onyx_dtype_valid(v->dtype) || v->numel < 0)
            st = ONYX_INVALID_MODEL("attribute %s must be a numeric tensor", tensor_name);
        double *d = st ? NULL : malloc((size_t)(v->numel ? v->numel : 1) * sizeof *d);
        if (!st && !d) st = ONYX_OOM();
        for (int64_t i = 0; !st && i < v->numel; i++) d[i] = onyx_load_as_double(v->dtype, v->data, i);
        size_t cnt = (size_t)v->numel;
        onyx_value_destroy(v);
        if (st) {
            free(d);
            return st;
        }
        *vals = d;
        *count = cnt;
        return NULL;
    }
    if (!f || !nf) return NULL;
    double *d = malloc(nf * sizeof *d);
    if (!d) return ONYX_OOM();
    for (size_t i = 0; i < nf; i++) d[i] = f[i];
    *vals = d;
    *count = nf;
    return NULL;
}

/* Copy of a float list attribute (malloc'd; NULL when absent). */
static inline onyx_status *ml_attr_floats_copy(const onyx_node *n, const char *name, float **out,
                                               size_t *count) {
    const float *f = onyx_attr_floats(n, name, count);
    *out = NULL;
    if (!f || !*count) return NULL;
    *out = malloc(*count * sizeof **out);
    if (!*out) return ONYX_OOM();
    memcpy(*out, f, *count * sizeof **out);
    return NULL;
}

/* ---------------------------------------------------------------------- inputs */

/* The [N, C] view of a classifier/regressor input: rank 2 is [N, C], rank 1
 * is one row. Other ranks are an error naming the op. */
static inline onyx_status *ml_rows_cols(const onyx_value *x, const char *op, int64_t *n,
                                        int64_t *c) {
    if (!onyx_is_tensor(x)) return ONYX_INVALID_ARG("%s: input X must be a tensor", op);
    if (x->rank == 1) {
        *n = 1;
        *c = x->dims[0];
    } else if (x->rank == 2) {
        *n = x->dims[0];
        *c = x->dims[1];
    } else {
        char buf[128];
        return ONYX_INVALID_ARG("%s: input X must be [N, C] or [C], got shape %s", op,
                                onyx_shape_str(x->dims, x->rank, buf, sizeof buf));
    }
    return NULL;
}

static inline bool ml_is_numeric_input(int dt) {
    return dt == ONYX_FLOAT || dt == ONYX_DOUBLE || dt == ONYX_INT32 || dt == ONYX_INT64;
}

/* The elements of a numeric tensor as floats: the data itself for float
 * tensors, else a converted copy in *owned (free with free()). */
static inline onyx_status *ml_as_floats(const onyx_value *x, const float **out, float **owned) {
    *owned = NULL;
    if (x->dtype == ONYX_FLOAT) {
        *out = x->data;
        return NULL;
    }
    if (x->dtype == ONYX_STRING || !onyx_dtype_valid(x->dtype))
        return ONYX_INVALID_ARG("input of type %s is not numeric", onyx_dtype_name(x->dtype));
    float *f = malloc((size_t)(x->numel ? x->numel : 1) * sizeof *f);
    if (!f) return ONYX_OOM();
    switch (x->dtype) {
    case ONYX_DOUBLE:
        for (int64_t i = 0; i < x->numel; i++) f[i] = (float)((const double *)x->data)[i];
        break;
    case ONYX_INT64:
        for (int64_t i = 0; i < x->numel; i++) f[i] = (float)((const int64_t *)x->data)[i];
        break;
    case ONYX_INT32:
        for (int64_t i = 0; i < x->numel; i++) f[i] = (float)((const int32_t *)x->data)[i];
        break;
    default:
        for (int64_t i = 0; i < x->numel; i++) f[i] = (float)onyx_load_as_double(x->dtype, x->data, i);
    }
    *out = f;
    *owned = f;
    return NULL;
}

/* A float scratch buffer of n elements (at least one), or NULL. */
static inline float *ml_alloc_floats(int64_t n) {
    size_t bytes;
    if (n < 0 || onyx_mul_overflow_size((size_t)(n ? n : 1), sizeof(float), &bytes)) return NULL;
    return malloc(bytes);
}

/* ----------------------------------------------------------------------- strings */

/* Replace dst with a copy of the len bytes at s. */
static inline bool ml_str_set(onyx_string *dst, const char *s, size_t len) {
    char *p = malloc(len + 1);
    if (!p) return false;
    if (len) memcpy(p, s, len);
    p[len] = 0;
    free(dst->data);
    dst->data = p;
    dst->len = len;
    return true;
}

static inline bool ml_str_eq(const onyx_string *a, const char *s, size_t len) {
    return a->len == len && (!len || !memcmp(a->data, s, len));
}

/* ------------------------------------------------------------------------ labels */

/* Class labels of a classifier: classlabels_strings or the int attribute
 * `ints_name` (classlabels_ints or classlabels_int64s). */
typedef struct ml_labels {
    bool strings;
    size_t n;
    const int64_t *ints;
    const onyx_bytes *strs;
} ml_labels;

/* Read the labels; both kinds given is an error. */
static inline onyx_status *ml_read_labels(const onyx_node *node, const char *ints_name,
                                          ml_labels *l) {
    size_t ns, ni;
    l->strs = ml_attr_strings(node, "classlabels_strings", &ns);
    l->ints = onyx_attr_ints(node, ints_name, &ni);
    if (ns && ni)
        return ONYX_INVALID_MODEL("attributes classlabels_strings and %s are both given", ints_name);
    l->strings = ns > 0;
    l->n = ns ? ns : ni;
    return NULL;
}

/* The output element type of the labels. */
static inline int ml_label_dtype(const ml_labels *l) { return l->strings ? ONYX_STRING : ONYX_INT64; }

/* Write label number `idx` of l into element i of y. */
static inline onyx_status *ml_put_label(onyx_value *y, int64_t i, const ml_labels *l, size_t idx) {
    if (idx >= l->n) return ONYX_RUNTIME_ERROR("class index %zu is out of range [0, %zu)", idx, l->n);
    if (!l->strings) {
        ((int64_t *)y->data)[i] = l->ints[idx];
        return NULL;
    }
    const onyx_bytes *b = &l->strs[idx];
    return ml_str_set(&((onyx_string *)y->data)[i], (const char *)b->ptr, b->len) ? NULL : ONYX_OOM();
}

/* Write a literal label value v into element i of y: the int itself, or its
 * decimal text for string labels (ONNX Runtime's "0"/"1" fallbacks). */
static inline onyx_status *ml_put_raw_label(onyx_value *y, int64_t i, int64_t v) {
    if (y->dtype == ONYX_INT64) {
        ((int64_t *)y->data)[i] = v;
        return NULL;
    }
    char buf[24];
    int len = snprintf(buf, sizeof buf, "%lld", (long long)v);
    return ml_str_set(&((onyx_string *)y->data)[i], buf, (size_t)len) ? NULL : ONYX_OOM();
}

/* ---------------------------------------------------------------------- outputs */

/* Output i when the node wires it, else NULL (nothing allocated). */
static inline onyx_status *ml_output(onyx_kernel_ctx *ctx, size_t i, int dtype, int rank,
                                     const int64_t *dims, onyx_value **out) {
    *out = NULL;
    if (i >= ctx->n_out || !ctx->out_used[i]) return NULL;
    return onyx_kernel_output(ctx, i, dtype, rank, dims, out);
}


#endif
