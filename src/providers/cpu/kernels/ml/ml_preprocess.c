/* ai.onnx.ml preprocessing and conversion operators: Scaler, Normalizer,
 * Binarizer, Imputer, OneHotEncoder, LabelEncoder (opsets 1, 2 and 4),
 * CategoryMapper, ArrayFeatureExtractor, FeatureVectorizer, DictVectorizer,
 * CastMap and ZipMap.
 *
 * Lookups (label, category and one-hot tables, map keys) go through one
 * sorted key table with binary search. Semantics follow ONNX Runtime where
 * the specification leaves room (the layout of [N, F] inputs, duplicate
 * keys, CastMap's "0.f" string padding), and the specification where ONNX
 * Runtime departs from it:
 *   - LabelEncoder opset 2 compares float keys bit for bit and keeps the
 *     first of repeated keys; opset 4 matches any NaN to a NaN key and
 *     keeps the last of repeated keys.
 *   - Binarizer maps NaN to 0 and its threshold defaults to 0.
 * Maps are values whose items[0] is the keys tensor and items[1] the
 * values, as a tensor or as a sequence of one-element tensors (the form a
 * MapProto decodes to); ZipMap produces the tensor form. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "providers/cpu/kernels/ml/ml_common.h"

/* ------------------------------------------------------------------ key table */

typedef enum key_kind {
    KEY_STR,   /* byte strings */
    KEY_INT,   /* integers as int64 */
    KEY_REAL,  /* floats by value; every NaN equals every NaN */
    KEY_BITS,  /* floats by bit pattern */
} key_kind;

typedef struct ml_key {
    union {
        int64_t i;
        double d;
        uint64_t u;
    } v;
    const char *s;
    size_t len;
    size_t idx;    /* position in the attribute the key came from */
} ml_key;

typedef struct key_table {
    key_kind kind;
    ml_key *keys;
    size_t n;
} key_table;

static int key_cmp(key_kind kind, const ml_key *a, const ml_key *b) {
    switch (kind) {
    case KEY_STR: {
        size_t m = a->len < b->len ? a->len : b->len;
        int c = m ? memcmp(a->s, b->s, m) : 0;
        if (c) return c;
        return a->len < b->len ? -1 : a->len > b->len;
    }
    case KEY_INT: return a->v.i < b->v.i ? -1 : a->v.i > b->v.i;
    case KEY_BITS: return a->v.u < b->v.u ? -1 : a->v.u > b->v.u;
    case KEY_REAL: {
        bool na = isnan(a->v.d), nb = isnan(b->v.d);
        if (na || nb) return na - nb;
        return a->v.d < b->v.d ? -1 : a->v.d > b->v.d;
    }
    }
    return 0;
}

static _Thread_local key_kind sort_kind;

static int key_sort_cmp(const void *pa, const void *pb) {
    const ml_key *a = pa, *b = pb;
    int c = key_cmp(sort_kind, a, b);
    if (c) return c;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* Sort the n keys (owned by t from now on) and keep one of each run of
 * equal keys: the last given when last_wins, else the first. */
static void key_table_build(key_table *t, key_kind kind, ml_key *keys, size_t n, bool last_wins) {
    sort_kind = kind;
    qsort(keys, n, sizeof *keys, key_sort_cmp);
    size_t out = 0;
    for (size_t i = 0; i < n; i++) {
        if (out && !key_cmp(kind, &keys[out - 1], &keys[i])) {
            if (last_wins) keys[out - 1] = keys[i];
            continue;
        }
        keys[out++] = keys[i];
    }
    t->kind = kind;
    t->keys = keys;
    t->n = out;
}

/* Position (ml_key.idx) of the key equal to probe, or -1. */
static int64_t key_find(const key_table *t, const ml_key *probe) {
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (key_cmp(t->kind, &t->keys[mid], probe) < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo < t->n && !key_cmp(t->kind, &t->keys[lo], probe) ? (int64_t)t->keys[lo].idx : -1;
}

static ml_key *keys_alloc(size_t n) { return calloc(n ? n : 1, sizeof(ml_key)); }

/* Keys from attribute strings / ints. */
static ml_key *keys_from_bytes(const onyx_bytes *b, size_t n) {
    ml_key *k = keys_alloc(n);
    for (size_t i = 0; k && i < n; i++) k[i] = (ml_key){.s = (const char *)b[i].ptr, .len = b[i].len, .idx = i};
    return k;
}
static ml_key *keys_from_ints(const int64_t *v, size_t n) {
    ml_key *k = keys_alloc(n);
    for (size_t i = 0; k && i < n; i++) k[i] = (ml_key){.v.i = v[i], .idx = i};
    return k;
}

/* Key kind and probe of element i of a tensor of type dt (bits: floats
 * compare by bit pattern). */
static key_kind key_kind_of(int dt, bool bits) {
    if (dt == ONYX_STRING) return KEY_STR;
    if (dt == ONYX_FLOAT || dt == ONYX_DOUBLE) return bits ? KEY_BITS : KEY_REAL;
    return KEY_INT;
}

static ml_key key_probe(const onyx_value *x, int64_t i, key_kind kind) {
    ml_key k = {0};
    if (kind == KEY_STR) {
        const onyx_string *s = &((const onyx_string *)x->data)[i];
        k.s = s->data;
        k.len = s->data ? s->len : 0;
    } else if (kind == KEY_BITS) {
        uint32_t u;
        memcpy(&u, (const float *)x->data + i, sizeof u);
        k.v.u = u;
    } else if (kind == KEY_REAL) {
        k.v.d = onyx_load_as_double(x->dtype, x->data, i);
    } else {
        k.v.i = onyx_load_as_int64(x->dtype, x->data, i);
    }
    return k;
}

static void plain_state_free(void *p) { free(p); }

/* --------------------------------------------------------------- shared bits */

#define ML_FOR_NUM_TYPES(X) X(float, FLOAT) X(double, DOUBLE) X(int32_t, INT32) X(int64_t, INT64)

static onyx_status *require_input(onyx_kernel_ctx *ctx, const char *op, uint64_t types,
                                  const onyx_value **out) {
    const onyx_value *x = ctx->n_in ? ctx->in[0] : NULL;
    if (!onyx_is_tensor(x)) return ONYX_INVALID_ARG("%s: input X must be a tensor", op);
    if (!(types & ONYX_T(x->dtype)))
        return ONYX_INVALID_ARG("%s: input X has unsupported type %s", op, onyx_dtype_name(x->dtype));
    *out = x;
    return NULL;
}

/* ONNX Runtime's feature stride of an [N, F] (or [F]) input: dims[1], or
 * dims[0] for one dimension. */
static onyx_status *feature_stride(const onyx_value *x, const char *op, int64_t *stride) {
    if (x->rank < 1) return ONYX_INVALID_ARG("%s: input X must have at least one dimension", op);
    *stride = x->rank == 1 ? x->dims[0] : x->dims[1];
    return NULL;
}

/* --------------------------------------------------------------------- Scaler */

typedef struct scaler_state {
    float *scale, *offset;
    size_t n_scale, n_offset;
} scaler_state;

static void scaler_free(void *p) {
    scaler_state *s = p;
    if (!s) return;
    free(s->scale);
    free(s->offset);
    free(s);
}

static onyx_status *scaler_init(const onyx_kernel_info *info, void **state) {
    scaler_state *s = calloc(1, sizeof *s);
    if (!s) return ONYX_OOM();
    onyx_status *st = ml_attr_floats_copy(info->node, "scale", &s->scale, &s->n_scale);
    if (!st) st = ml_attr_floats_copy(info->node, "offset", &s->offset, &s->n_offset);
    if (st) {
        scaler_free(s);
        return st;
    }
    *state = s;
    return NULL;
}

/* y = (x - offset[f]) * scale[f]: double arithmetic for double input, float
 * otherwise (as ONNX Runtime's promotions give). */
#define SCALER_LOOP(T, NAME)                                                                     \
    static void scaler_##NAME(const scaler_state *s, const T *x, float *y, int64_t n, int64_t stride) { \
        for (int64_t i = 0; i < n; i++) {                                                        \
            int64_t f = stride > 0 ? i % stride : 0;                                             \
            float off = !s->n_offset ? 0 : s->offset[s->n_offset == 1 ? 0 : f];                  \
            float sc = !s->n_scale ? 1 : s->scale[s->n_scale == 1 ? 0 : f];                      \
            if (ONYX_##NAME == ONYX_DOUBLE) y[i] = (float)(((double)x[i] - off) * sc);           \
            else y[i] = ((float)x[i] - off) * sc;                                                \
        }                                                                                        \
    }
ML_FOR_NUM_TYPES(SCALER_LOOP)

static onyx_status *scaler_compute(onyx_kernel_ctx *ctx) {
    const scaler_state *s = ctx->state;
    const onyx_value *x = NULL;
    int64_t stride = 0;
    ONYX_TRY(require_input(ctx, "Scaler", ML_T_NUM_IN, &x));
    ONYX_TRY(feature_stride(x, "Scaler", &stride));
    if ((s->n_scale > 1 && (int64_t)s->n_scale != stride) ||
        (s->n_offset > 1 && (int64_t)s->n_offset != stride))
        return ONYX_INVALID_ARG("Scaler: scale (%zu values) and offset (%zu values) must have 1 or "
                                "%lld (features) values", s->n_scale, s->n_offset, (long long)stride);
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, ONYX_FLOAT, x->rank, x->dims, &y));
    switch (x->dtype) {
#define SCALER_CASE(T, NAME) \
    case ONYX_##NAME: scaler_##NAME(s, x->data, y->data, x->numel, stride); break;
        ML_FOR_NUM_TYPES(SCALER_CASE)
    }
    return NULL;
}

/* ----------------------------------------------------------------- Normalizer */

enum { NORM_MAX, NORM_L1, NORM_L2 };

static onyx_status *normalizer_init(const onyx_kernel_info *info, void **state) {
    const char *s = onyx_attr_string(info->node, "norm", "MAX");
    int *mode = malloc(sizeof *mode);
    if (!mode) return ONYX_OOM();
    if (!strcmp(s, "MAX")) *mode = NORM_MAX;
    else if (!strcmp(s, "L1")) *mode = NORM_L1;
    else if (!strcmp(s, "L2")) *mode = NORM_L2;
    else {
        free(mode);
        return ONYX_INVALID_MODEL("Normalizer: norm is '%s'; expected MAX, L1 or L2", s);
    }
    *state = mode;
    return NULL;
}

/* One row of c values (as doubles in v) normalised into y, in float. */
static void normalize_row(int mode, const double *v, float *y, int64_t c) {
    float d = 0;
    if (mode == NORM_MAX) {
        d = -FLT_MAX;
        for (int64_t i = 0; i < c; i++) d = fmaxf(d, (float)v[i]);
    } else {
        for (int64_t i = 0; i < c; i++) d += mode == NORM_L1 ? (float)fabs(v[i]) : (float)(v[i] * v[i]);
    }
    for (int64_t i = 0; i < c; i++) {
        float x = (float)v[i];
        if (d == 0) y[i] = x;
        else if (mode == NORM_L2) y[i] = (x < 0 ? -1 : 1) * sqrtf((float)(v[i] * v[i]) / d);
        else y[i] = x / d;
    }
}

static onyx_status *normalizer_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x = NULL;
    ONYX_TRY(require_input(ctx, "Normalizer", ML_T_NUM_IN, &x));
    int64_t n = 0, c = 0;
    ONYX_TRY(ml_rows_cols(x, "Normalizer", &n, &c));
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, ONYX_FLOAT, x->rank, x->dims, &y));
    double *row = malloc((size_t)(c ? c : 1) * sizeof *row);
    if (!row) return ONYX_OOM();
    for (int64_t r = 0; r < n; r++) {
        for (int64_t i = 0; i < c; i++) row[i] = onyx_load_as_double(x->dtype, x->data, r * c + i);
        normalize_row(*(const int *)ctx->state, row, (float *)y->data + r * c, c);
    }
    free(row);
    return NULL;
}

/* ------------------------------------------------------------------ Binarizer */

#define BINARIZE_LOOP(T, NAME)                                                         \
    static void binarize_##NAME(const T *x, T *y, int64_t n, double threshold) {       \
        for (int64_t i = 0; i < n; i++) y[i] = (double)x[i] > threshold ? (T)1 : (T)0;   \
    }
ML_FOR_NUM_TYPES(BINARIZE_LOOP)

static onyx_status *binarizer_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x = NULL;
    ONYX_TRY(require_input(ctx, "Binarizer", ML_T_NUM_IN, &x));
    double threshold = onyx_attr_float(ctx->node, "threshold", 0.0f);
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, x->dtype, x->rank, x->dims, &y));
    switch (x->dtype) {
#define BINARIZE_CASE(T, NAME) \
    case ONYX_##NAME: binarize_##NAME(x->data, y->data, x->numel, threshold); break;
        ML_FOR_NUM_TYPES(BINARIZE_CASE)
    }
    return NULL;
}

/* -------------------------------------------------------------------- Imputer */

/* Replace x == replaced (or NaN when replaced is NaN) by imputed[f], or by
 * imputed[0] when there is not one value per feature. Integers compare and
 * impute exactly (imputed_value_int64s), floats through double. */
typedef struct impute_args {
    int64_t n, stride;
    double rep_d;
    int64_t rep_i;
    const double *imp_d;
    const int64_t *imp_i;
    size_t n_imp;
} impute_args;

#define IMPUTE_LOOP(T, NAME)                                                                   \
    static void impute_##NAME(const T *x, T *y, const impute_args *a) {                        \
        bool is_int = ONYX_##NAME == ONYX_INT32 || ONYX_##NAME == ONYX_INT64;                  \
        bool nan_rep = isnan(a->rep_d);                                                        \
        bool per_feature = a->stride > 0 && a->n_imp == (size_t)a->stride;                     \
        for (int64_t i = 0; i < a->n; i++) {                                                   \
            size_t k = per_feature ? (size_t)(i % a->stride) : 0;                              \
            bool hit = is_int ? (int64_t)x[i] == a->rep_i                                       \
                              : (nan_rep && isnan((double)x[i])) || (double)x[i] == a->rep_d;   \
            y[i] = !hit ? x[i] : is_int ? (T)a->imp_i[k] : (T)a->imp_d[k];                      \
        }                                                                                      \
    }
ML_FOR_NUM_TYPES(IMPUTE_LOOP)

static onyx_status *imputer_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x = NULL;
    impute_args a = {0};
    ONYX_TRY(require_input(ctx, "Imputer", ML_T_NUM_IN, &x));
    ONYX_TRY(feature_stride(x, "Imputer", &a.stride));
    a.n = x->numel;
    bool is_float = x->dtype == ONYX_FLOAT || x->dtype == ONYX_DOUBLE;
    const float *f = NULL;
    if (is_float) {
        f = onyx_attr_floats(ctx->node, "imputed_value_floats", &a.n_imp);
        a.rep_d = onyx_attr_float(ctx->node, "replaced_value_float", 0.0f);
    } else {
        a.imp_i = onyx_attr_ints(ctx->node, "imputed_value_int64s", &a.n_imp);
        a.rep_i = onyx_attr_int(ctx->node, "replaced_value_int64", 0);
    }
    if (!a.n_imp)
        return ONYX_INVALID_MODEL("Imputer: %s input needs attribute %s", onyx_dtype_name(x->dtype),
                                  is_float ? "imputed_value_floats" : "imputed_value_int64s");
    double *imp = NULL;
    if (is_float) {
        if (!(imp = malloc(a.n_imp * sizeof *imp))) return ONYX_OOM();
        for (size_t i = 0; i < a.n_imp; i++) imp[i] = f[i];
        a.imp_d = imp;
    }
    onyx_value *y = NULL;
    onyx_status *st = onyx_kernel_output(ctx, 0, x->dtype, x->rank, x->dims, &y);
    if (!st) {
        switch (x->dtype) {
#define IMPUTE_CASE(T, NAME) \
    case ONYX_##NAME: impute_##NAME(x->data, y->data, &a); break;
            ML_FOR_NUM_TYPES(IMPUTE_CASE)
        }
    }
    free(imp);
    return st;
}

/* -------------------------------------------------------------- OneHotEncoder */

typedef struct onehot_state {
    key_table cats;     /* KEY_STR or KEY_INT */
    size_t n_cats;
    bool zeros;
} onehot_state;

static void onehot_free(void *p) {
    onehot_state *s = p;
    if (!s) return;
    free(s->cats.keys);
    free(s);
}

static onyx_status *onehot_init(const onyx_kernel_info *info, void **state) {
    size_t ni, ns;
    const int64_t *ints = onyx_attr_ints(info->node, "cats_int64s", &ni);
    const onyx_bytes *strs = ml_attr_strings(info->node, "cats_strings", &ns);
    if ((ni && ns) || (!ni && !ns))
        return ONYX_INVALID_MODEL("OneHotEncoder: exactly one of cats_int64s and cats_strings must be given");
    onehot_state *s = calloc(1, sizeof *s);
    ml_key *keys = ni ? keys_from_ints(ints, ni) : keys_from_bytes(strs, ns);
    if (!s || !keys) {
        free(s);
        free(keys);
        return ONYX_OOM();
    }
    key_table_build(&s->cats, ni ? KEY_INT : KEY_STR, keys, ni ? ni : ns, true);
    s->n_cats = ni ? ni : ns;
    s->zeros = onyx_attr_int(info->node, "zeros", 1) != 0;
    *state = s;
    return NULL;
}

/* Category of element i, or -1: numbers are truncated to int64 first. */
static int64_t onehot_category(const onehot_state *s, const onyx_value *x, int64_t i) {
    ml_key k = {0};
    if (x->dtype == ONYX_STRING) {
        if (s->cats.kind != KEY_STR) return -1;
        k = key_probe(x, i, KEY_STR);
    } else {
        if (s->cats.kind != KEY_INT) return -1;
        if (x->dtype == ONYX_FLOAT || x->dtype == ONYX_DOUBLE) {
            double d = onyx_load_as_double(x->dtype, x->data, i);
            if (!(d > -9.2e18 && d < 9.2e18)) return -1;
            k.v.i = (int64_t)d;
        } else {
            k.v.i = onyx_load_as_int64(x->dtype, x->data, i);
        }
    }
    return key_find(&s->cats, &k);
}

static onyx_status *onehot_compute(onyx_kernel_ctx *ctx) {
    const onehot_state *s = ctx->state;
    const onyx_value *x = NULL;
    ONYX_TRY(require_input(ctx, "OneHotEncoder", ML_T_NUM_IN | ONYX_T(ONYX_STRING), &x));
    if (x->rank >= ONYX_MAX_RANK)
        return ONYX_INVALID_ARG("OneHotEncoder: input rank %d is too large", (int)x->rank);
    int64_t dims[ONYX_MAX_RANK];
    memcpy(dims, x->dims, (size_t)x->rank * sizeof *dims);
    dims[x->rank] = (int64_t)s->n_cats;
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, ONYX_FLOAT, x->rank + 1, dims, &y));
    float *out = y->data;
    memset(out, 0, y->nbytes);
    for (int64_t i = 0; i < x->numel; i++) {
        int64_t c = onehot_category(s, x, i);
        if (c >= 0) out[i * (int64_t)s->n_cats + c] = 1.0f;
        else if (!s->zeros)
            return ONYX_INVALID_ARG("OneHotEncoder: element %lld is not a known category and zeros is 0",
                                    (long long)i);
    }
    return NULL;
}

/* ---------------------------------------------------------------- LabelEncoder */

/* A typed column of values (the outputs of a mapping) plus its default at
 * index n: numbers as bytes of the output type, strings as (ptr, len). */
typedef struct value_column {
    int dtype;
    size_t n, es;
    uint8_t *bytes;
    const char **s;
    size_t *len;
} value_column;

static void column_free(value_column *c) {
    free(c->bytes);
    free(c->s);
    free(c->len);
}

static onyx_status *column_alloc(value_column *c, int dtype, size_t n) {
    c->dtype = dtype;
    c->n = n;
    if (dtype == ONYX_STRING) {
        c->s = calloc(n + 1, sizeof *c->s);
        c->len = calloc(n + 1, sizeof *c->len);
        return c->s && c->len ? NULL : ONYX_OOM();
    }
    c->es = onyx_dtype(dtype)->bits / 8;
    c->bytes = calloc(n + 1, c->es);
    return c->bytes ? NULL : ONYX_OOM();
}

static void column_set_num(value_column *c, size_t i, double d, int64_t v, bool is_int) {
    void *p = c->bytes + i * c->es;
    if (onyx_dtype(c->dtype)->is_float) onyx_store_from_double(c->dtype, p, 0, is_int ? (double)v : d);
    else onyx_store_from_int64(c->dtype, p, 0, is_int ? v : (int64_t)d);
}

/* Write entry i of the column into element j of y. */
static inline bool column_put(const value_column *c, size_t i, onyx_value *y, int64_t j) {
    if (c->dtype == ONYX_STRING)
        return ml_str_set(&((onyx_string *)y->data)[j], c->s[i] ? c->s[i] : "", c->len[i]);
    memcpy((uint8_t *)y->data + (size_t)j * c->es, c->bytes + i * c->es, c->es);
    return true;
}

typedef struct le_state {
    int version;             /* 1, 2 or 4 (opsets 2-3 behave as 2) */
    int in_type;             /* element type the keys require */
    key_table keys;
    value_column vals;       /* n values + default */
    /* opset 1: both directions over classes_strings */
    const onyx_bytes *classes;
    size_t n_classes;
    int64_t default_int;
    const char *default_str;
    onyx_value *held[3];     /* tensor attributes the tables point into */
} le_state;

static void le_free(void *p) {
    le_state *s = p;
    if (!s) return;
    free(s->keys.keys);
    column_free(&s->vals);
    for (int i = 0; i < 3; i++) onyx_value_destroy(s->held[i]);
    free(s);
}

static onyx_status *le_init_v1(const onyx_kernel_info *info, le_state *s) {
    s->classes = ml_attr_strings(info->node, "classes_strings", &s->n_classes);
    s->default_int = onyx_attr_int(info->node, "default_int64", -1);
    s->default_str = onyx_attr_string(info->node, "default_string", "_Unused");
    ml_key *k = keys_from_bytes(s->classes, s->n_classes);
    if (!k) return ONYX_OOM();
    key_table_build(&s->keys, KEY_STR, k, s->n_classes, true);
    return NULL;
}

/* Which of name_strings / name_int64s / name_floats / name_tensor is
 * given: its element type, count and data (attribute or held tensor). */
typedef struct le_list {
    int dtype;
    size_t n;
    const onyx_bytes *strs;
    const int64_t *ints;
    const float *floats;
    const onyx_value *t;
} le_list;

static onyx_status *le_list_read(const onyx_kernel_info *info, le_state *s, const char *what,
                                 int hold, le_list *l) {
    char name[32];
    size_t ns, ni, nf;
    memset(l, 0, sizeof *l);
    snprintf(name, sizeof name, "%s_strings", what);
    l->strs = ml_attr_strings(info->node, name, &ns);
    snprintf(name, sizeof name, "%s_int64s", what);
    l->ints = onyx_attr_ints(info->node, name, &ni);
    snprintf(name, sizeof name, "%s_floats", what);
    l->floats = onyx_attr_floats(info->node, name, &nf);
    snprintf(name, sizeof name, "%s_tensor", what);
    const onyx_attr_proto *ta = s->version >= 4 ? onyx_node_attr(info->node, name) : NULL;
    int given = (ns > 0) + (ni > 0) + (nf > 0) + (ta != NULL);
    if (given > 1) return ONYX_INVALID_MODEL("LabelEncoder: more than one %s_* attribute is given", what);
    if (ta) {
        onyx_value *t;
        ONYX_TRY(onyx_attr_tensor(info->node, info->model, name, &t));
        s->held[hold] = t;
        static const uint64_t ok = ONYX_T(ONYX_STRING) | ONYX_T(ONYX_INT64) | ONYX_T(ONYX_FLOAT) |
                                   ONYX_T(ONYX_INT32) | ONYX_T(ONYX_INT16) | ONYX_T(ONYX_DOUBLE);
        if (!(ok & ONYX_T(t->dtype)))
            return ONYX_INVALID_MODEL("LabelEncoder: %s has unsupported type %s", name,
                                      onyx_dtype_name(t->dtype));
        l->t = t;
        l->dtype = t->dtype;
        l->n = (size_t)t->numel;
    } else if (ns) {
        l->dtype = ONYX_STRING, l->n = ns;
    } else if (ni) {
        l->dtype = ONYX_INT64, l->n = ni;
    } else if (nf) {
        l->dtype = ONYX_FLOAT, l->n = nf;
    } else {
        /* an empty list: the type of the attribute that is present, if any */
        snprintf(name, sizeof name, "%s_strings", what);
        l->dtype = onyx_node_attr(info->node, name) ? ONYX_STRING : 0;
        snprintf(name, sizeof name, "%s_int64s", what);
        if (onyx_node_attr(info->node, name)) l->dtype = ONYX_INT64;
        snprintf(name, sizeof name, "%s_floats", what);
        if (onyx_node_attr(info->node, name)) l->dtype = ONYX_FLOAT;
        if (!l->dtype) return ONYX_INVALID_MODEL("LabelEncoder: no %s_* attribute is given", what);
    }
    return NULL;
}

/* Element i of a list as a key, string or number. */
static void le_list_get(const le_list *l, size_t i, const char **s, size_t *len, double *d, int64_t *v) {
    if (l->t) {
        if (l->dtype == ONYX_STRING) {
            const onyx_string *os = &((const onyx_string *)l->t->data)[i];
            *s = os->data ? os->data : "";
            *len = os->data ? os->len : 0;
        } else {
            *d = onyx_load_as_double(l->dtype, l->t->data, (int64_t)i);
            *v = onyx_load_as_int64(l->dtype, l->t->data, (int64_t)i);
        }
    } else if (l->strs) {
        *s = (const char *)l->strs[i].ptr;
        *len = l->strs[i].len;
    } else if (l->ints) {
        *v = l->ints[i];
        *d = (double)l->ints[i];
    } else {
        *d = l->floats[i];
    }
}

/* The default value (index n of the column). */
static onyx_status *le_default(const onyx_kernel_info *info, le_state *s) {
    value_column *c = &s->vals;
    const onyx_attr_proto *ta = s->version >= 4 ? onyx_node_attr(info->node, "default_tensor") : NULL;
    if (ta) {
        onyx_value *t;
        ONYX_TRY(onyx_attr_tensor(info->node, info->model, "default_tensor", &t));
        s->held[2] = t;
        if (t->numel < 1) return ONYX_INVALID_MODEL("LabelEncoder: default_tensor is empty");
        if ((t->dtype == ONYX_STRING) != (c->dtype == ONYX_STRING))
            return ONYX_INVALID_MODEL("LabelEncoder: default_tensor of type %s for %s values",
                                      onyx_dtype_name(t->dtype), onyx_dtype_name(c->dtype));
        if (c->dtype == ONYX_STRING) {
            const onyx_string *os = t->data;
            c->s[c->n] = os->data ? os->data : "";
            c->len[c->n] = os->data ? os->len : 0;
        } else {
            column_set_num(c, c->n, onyx_load_as_double(t->dtype, t->data, 0),
                           onyx_load_as_int64(t->dtype, t->data, 0), !onyx_dtype(t->dtype)->is_float);
        }
        return NULL;
    }
    if (c->dtype == ONYX_STRING) {
        c->s[c->n] = onyx_attr_string(info->node, "default_string", "_Unused");
        c->len[c->n] = strlen(c->s[c->n]);
    } else if (onyx_dtype(c->dtype)->is_float) {
        column_set_num(c, c->n, onyx_attr_float(info->node, "default_float", -0.0f), 0, false);
    } else {
        column_set_num(c, c->n, 0, onyx_attr_int(info->node, "default_int64", -1), true);
    }
    return NULL;
}

static onyx_status *le_init_map(const onyx_kernel_info *info, le_state *s) {
    le_list kl, vl;
    ONYX_TRY(le_list_read(info, s, "keys", 0, &kl));
    ONYX_TRY(le_list_read(info, s, "values", 1, &vl));
    if (kl.n != vl.n)
        return ONYX_INVALID_MODEL("LabelEncoder: %zu keys but %zu values", kl.n, vl.n);
    s->in_type = kl.dtype;
    ONYX_TRY(column_alloc(&s->vals, vl.dtype, vl.n));
    key_kind kind = key_kind_of(kl.dtype, s->version < 4);
    ml_key *keys = keys_alloc(kl.n);
    if (!keys) return ONYX_OOM();
    for (size_t i = 0; i < kl.n; i++) {
        const char *str = NULL;
        size_t len = 0;
        double d = 0;
        int64_t v = 0;
        le_list_get(&kl, i, &str, &len, &d, &v);
        keys[i] = (ml_key){.s = str, .len = len, .idx = i};
        if (kind == KEY_INT) keys[i].v.i = v;
        else if (kind == KEY_REAL) keys[i].v.d = d;
        else if (kind == KEY_BITS) {
            float f = (float)d;
            uint32_t u;
            memcpy(&u, &f, sizeof u);
            keys[i].v.u = u;
        }
        str = NULL, len = 0, d = 0, v = 0;
        le_list_get(&vl, i, &str, &len, &d, &v);
        if (vl.dtype == ONYX_STRING) {
            s->vals.s[i] = str;
            s->vals.len[i] = len;
        } else {
            column_set_num(&s->vals, i, d, v, !onyx_dtype(vl.dtype)->is_float);
        }
    }
    key_table_build(&s->keys, kind, keys, kl.n, s->version >= 4);
    return le_default(info, s);
}

static onyx_status *le_init(const onyx_kernel_info *info, void **state) {
    le_state *s = calloc(1, sizeof *s);
    if (!s) return ONYX_OOM();
    s->version = info->opset <= 1 ? 1 : info->opset < 4 ? 2 : 4;
    onyx_status *st = s->version == 1 ? le_init_v1(info, s) : le_init_map(info, s);
    if (st) {
        le_free(s);
        return st;
    }
    *state = s;
    return NULL;
}

static onyx_status *le_compute_v1(const le_state *s, onyx_kernel_ctx *ctx, const onyx_value *x) {
    onyx_value *y;
    if (x->dtype == ONYX_STRING) {
        ONYX_TRY(onyx_kernel_output(ctx, 0, ONYX_INT64, x->rank, x->dims, &y));
        for (int64_t i = 0; i < x->numel; i++) {
            ml_key k = key_probe(x, i, KEY_STR);
            int64_t idx = key_find(&s->keys, &k);
            ((int64_t *)y->data)[i] = idx >= 0 ? idx : s->default_int;
        }
        return NULL;
    }
    ONYX_TRY(onyx_kernel_output(ctx, 0, ONYX_STRING, x->rank, x->dims, &y));
    for (int64_t i = 0; i < x->numel; i++) {
        int64_t v = ((const int64_t *)x->data)[i];
        const char *str = s->default_str;
        size_t len = strlen(str);
        if (v >= 0 && (uint64_t)v < s->n_classes) {
            str = (const char *)s->classes[v].ptr;
            len = s->classes[v].len;
        }
        if (!ml_str_set(&((onyx_string *)y->data)[i], str, len)) return ONYX_OOM();
    }
    return NULL;
}

static onyx_status *le_compute(onyx_kernel_ctx *ctx) {
    const le_state *s = ctx->state;
    const onyx_value *x = ctx->n_in ? ctx->in[0] : NULL;
    if (!onyx_is_tensor(x)) return ONYX_INVALID_ARG("LabelEncoder: input X must be a tensor");
    if (s->version == 1) {
        if (x->dtype != ONYX_STRING && x->dtype != ONYX_INT64)
            return ONYX_INVALID_ARG("LabelEncoder: input X has type %s; expected string or int64",
                                    onyx_dtype_name(x->dtype));
        return le_compute_v1(s, ctx, x);
    }
    if (x->dtype != s->in_type)
        return ONYX_INVALID_ARG("LabelEncoder: input X has type %s but the keys are %s",
                                onyx_dtype_name(x->dtype), onyx_dtype_name(s->in_type));
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, s->vals.dtype, x->rank, x->dims, &y));
    for (int64_t i = 0; i < x->numel; i++) {
        ml_key k = key_probe(x, i, s->keys.kind);
        int64_t idx = key_find(&s->keys, &k);
        if (!column_put(&s->vals, idx >= 0 ? (size_t)idx : s->vals.n, y, i)) return ONYX_OOM();
    }
    return NULL;
}

/* Output type of a LabelEncoder from its attributes and input type. */
/* ------------------------------------------------------------- CategoryMapper */

typedef struct catmap_state {
    key_table by_str, by_int;
    const onyx_bytes *strs;
    const int64_t *ints;
    int64_t default_int;
    const char *default_str;
} catmap_state;

static void catmap_free(void *p) {
    catmap_state *s = p;
    if (!s) return;
    free(s->by_str.keys);
    free(s->by_int.keys);
    free(s);
}

static onyx_status *catmap_init(const onyx_kernel_info *info, void **state) {
    size_t ni, ns;
    const int64_t *ints = onyx_attr_ints(info->node, "cats_int64s", &ni);
    const onyx_bytes *strs = ml_attr_strings(info->node, "cats_strings", &ns);
    if (ni != ns)
        return ONYX_INVALID_MODEL("CategoryMapper: cats_int64s has %zu values, cats_strings %zu", ni, ns);
    catmap_state *s = calloc(1, sizeof *s);
    ml_key *ks = keys_from_bytes(strs, ns), *ki = keys_from_ints(ints, ni);
    if (!s || !ks || !ki) {
        free(s);
        free(ks);
        free(ki);
        return ONYX_OOM();
    }
    key_table_build(&s->by_str, KEY_STR, ks, ns, true);
    key_table_build(&s->by_int, KEY_INT, ki, ni, true);
    s->strs = strs;
    s->ints = ints;
    s->default_int = onyx_attr_int(info->node, "default_int64", -1);
    s->default_str = onyx_attr_string(info->node, "default_string", "_Unused");
    *state = s;
    return NULL;
}

static onyx_status *catmap_compute(onyx_kernel_ctx *ctx) {
    const catmap_state *s = ctx->state;
    const onyx_value *x = NULL;
    ONYX_TRY(require_input(ctx, "CategoryMapper", ONYX_T(ONYX_STRING) | ONYX_T(ONYX_INT64), &x));
    onyx_value *y;
    bool to_int = x->dtype == ONYX_STRING;
    ONYX_TRY(onyx_kernel_output(ctx, 0, to_int ? ONYX_INT64 : ONYX_STRING, x->rank, x->dims, &y));
    for (int64_t i = 0; i < x->numel; i++) {
        ml_key k = key_probe(x, i, to_int ? KEY_STR : KEY_INT);
        int64_t idx = key_find(to_int ? &s->by_str : &s->by_int, &k);
        if (to_int) {
            ((int64_t *)y->data)[i] = idx >= 0 ? s->ints[idx] : s->default_int;
            continue;
        }
        const char *str = idx >= 0 ? (const char *)s->strs[idx].ptr : s->default_str;
        size_t len = idx >= 0 ? s->strs[idx].len : strlen(s->default_str);
        if (!ml_str_set(&((onyx_string *)y->data)[i], str, len)) return ONYX_OOM();
    }
    return NULL;
}

/* ------------------------------------------------------- ArrayFeatureExtractor */

static onyx_status *afe_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x = ctx->n_in ? ctx->in[0] : NULL, *ix = ctx->n_in > 1 ? ctx->in[1] : NULL;
    if (!onyx_is_tensor(x) || !onyx_is_tensor(ix))
        return ONYX_INVALID_ARG("ArrayFeatureExtractor: inputs X and Y must be tensors");
    if (x->rank < 1) return ONYX_INVALID_ARG("ArrayFeatureExtractor: input X must have at least one dimension");
    if (ix->dtype != ONYX_INT64 && ix->dtype != ONYX_INT32)
        return ONYX_INVALID_ARG("ArrayFeatureExtractor: indices Y have type %s; expected int64",
                                onyx_dtype_name(ix->dtype));
    const onyx_dtype_info *di = onyx_dtype(x->dtype);
    if (x->dtype != ONYX_STRING && (di->bits < 8 || di->bits % 8))
        return ONYX_INVALID_ARG("ArrayFeatureExtractor: input type %s is not supported",
                                onyx_dtype_name(x->dtype));
    int64_t stride = x->dims[x->rank - 1], k = ix->numel;
    if (k == 0) return ONYX_INVALID_ARG("ArrayFeatureExtractor: indices Y are empty");
    for (int64_t j = 0; j < k; j++) {
        int64_t v = onyx_load_as_int64(ix->dtype, ix->data, j);
        if (v < 0 || v >= stride)
            return ONYX_INVALID_ARG("ArrayFeatureExtractor: index Y[%lld] = %lld is out of range [0, %lld)",
                                    (long long)j, (long long)v, (long long)stride);
    }
    int64_t dims[ONYX_MAX_RANK];
    int rank = x->rank == 1 ? 2 : x->rank;
    if (x->rank == 1) dims[0] = 1;
    else memcpy(dims, x->dims, (size_t)x->rank * sizeof *dims);
    dims[rank - 1] = k;
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, x->dtype, rank, dims, &y));
    int64_t rows = stride ? x->numel / stride : 0;
    size_t es = x->dtype == ONYX_STRING ? sizeof(onyx_string) : di->bits / 8;
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t j = 0; j < k; j++) {
            int64_t src = r * stride + onyx_load_as_int64(ix->dtype, ix->data, j), dst = r * k + j;
            if (x->dtype != ONYX_STRING) {
                memcpy((uint8_t *)y->data + (size_t)dst * es, (const uint8_t *)x->data + (size_t)src * es, es);
                continue;
            }
            const onyx_string *s = &((const onyx_string *)x->data)[src];
            if (!ml_str_set(&((onyx_string *)y->data)[dst], s->data ? s->data : "", s->data ? s->len : 0))
                return ONYX_OOM();
        }
    }
    return NULL;
}

/* ----------------------------------------------------------- FeatureVectorizer */

static onyx_status *fv_compute(onyx_kernel_ctx *ctx) {
    size_t nd;
    const int64_t *sizes = onyx_attr_ints(ctx->node, "inputdimensions", &nd);
    if (nd != ctx->n_in)
        return ONYX_INVALID_ARG("FeatureVectorizer: %zu inputs but inputdimensions has %zu values",
                                ctx->n_in, nd);
    int64_t total = 0, n = 1;
    for (size_t i = 0; i < nd; i++) {
        const onyx_value *x = ctx->in[i];
        if (!onyx_is_tensor(x) || !ml_is_numeric_input(x->dtype) || x->rank < 1)
            return ONYX_INVALID_ARG("FeatureVectorizer: input %zu must be a float, double, int32 or "
                                    "int64 tensor of rank 1 or more", i);
        if (sizes[i] < 0 || onyx_add_overflow_i64(total, sizes[i], &total))
            return ONYX_INVALID_MODEL("FeatureVectorizer: inputdimensions[%zu] is %lld", i,
                                      (long long)sizes[i]);
    }
    if (nd && ctx->in[0]->rank > 1) n = ctx->in[0]->dims[0];
    int64_t dims[2] = {n, total};
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, ONYX_FLOAT, 2, dims, &y));
    float *out = y->data;
    memset(out, 0, y->nbytes);
    int64_t offset = 0;
    for (size_t i = 0; i < nd; i++) {
        const onyx_value *x = ctx->in[i];
        int64_t rows = x->rank == 1 ? 1 : x->dims[0];
        int64_t width = rows ? x->numel / rows : 0, take = width < sizes[i] ? width : sizes[i];
        for (int64_t r = 0; r < rows && r < n; r++)
            for (int64_t c = 0; c < take; c++)
                out[r * total + offset + c] = (float)onyx_load_as_double(x->dtype, x->data, r * width + c);
        offset += sizes[i];
    }
    return NULL;
}

/* ---------------------------------------------------------------------- maps */

/* A map input: keys tensor and values (a tensor, or a sequence of
 * one-element tensors), with n entries of value type vtype. */
typedef struct map_view {
    const onyx_value *keys;
    const onyx_value *vals;
    int64_t n;
    int vtype;
} map_view;

static onyx_status *map_open(const onyx_value *m, const char *op, map_view *v) {
    if (!m || m->kind != ONYX_VALUE_MAP || m->n_items < 2 || !onyx_is_tensor(m->items[0]) || !m->items[1])
        return ONYX_INVALID_ARG("%s: input X must be a map", op);
    v->keys = m->items[0];
    v->vals = m->items[1];
    v->n = v->keys->numel;
    if (v->keys->dtype != ONYX_STRING && v->keys->dtype != ONYX_INT64)
        return ONYX_INVALID_ARG("%s: map keys have type %s; expected string or int64", op,
                                onyx_dtype_name(v->keys->dtype));
    if (onyx_is_tensor(v->vals)) {
        v->vtype = v->vals->dtype;
        if (v->vals->numel != v->n)
            return ONYX_INVALID_ARG("%s: map has %lld keys but %lld values", op, (long long)v->n,
                                    (long long)v->vals->numel);
    } else if (v->vals->kind == ONYX_VALUE_SEQUENCE) {
        if ((int64_t)v->vals->n_items != v->n)
            return ONYX_INVALID_ARG("%s: map has %lld keys but %zu values", op, (long long)v->n,
                                    v->vals->n_items);
        v->vtype = v->n ? v->vals->items[0]->dtype : v->vals->dtype;
        for (int64_t i = 0; i < v->n; i++) {
            const onyx_value *e = v->vals->items[i];
            if (!onyx_is_tensor(e) || e->numel != 1 || e->dtype != v->vtype)
                return ONYX_INVALID_ARG("%s: map value %lld is not a single %s", op, (long long)i,
                                        onyx_dtype_name(v->vtype));
        }
    } else {
        return ONYX_INVALID_ARG("%s: map values must be a tensor or a sequence", op);
    }
    if (v->vtype != ONYX_STRING && !ml_is_numeric_input(v->vtype))
        return ONYX_INVALID_ARG("%s: map values have unsupported type %s", op, onyx_dtype_name(v->vtype));
    return NULL;
}

/* Tensor and element index holding value i. */
static const onyx_value *map_value(const map_view *v, int64_t i, int64_t *at) {
    if (onyx_is_tensor(v->vals)) {
        *at = i;
        return v->vals;
    }
    *at = 0;
    return v->vals->items[i];
}

/* Index of the map keys, last duplicate winning (a later entry replaces an
 * earlier one, as inserting into a dictionary does). */
static onyx_status *map_index(const map_view *v, key_table *t) {
    key_kind kind = v->keys->dtype == ONYX_STRING ? KEY_STR : KEY_INT;
    ml_key *keys = keys_alloc((size_t)v->n);
    if (!keys) return ONYX_OOM();
    for (int64_t i = 0; i < v->n; i++) {
        keys[i] = key_probe(v->keys, i, kind);
        keys[i].idx = (size_t)i;
    }
    key_table_build(t, kind, keys, (size_t)v->n, true);
    return NULL;
}

/* Copy map value i into element j of y (same type). */
static bool map_copy_value(const map_view *v, int64_t i, onyx_value *y, int64_t j) {
    int64_t at;
    const onyx_value *t = map_value(v, i, &at);
    if (y->dtype == ONYX_STRING) {
        const onyx_string *s = &((const onyx_string *)t->data)[at];
        return ml_str_set(&((onyx_string *)y->data)[j], s->data ? s->data : "", s->data ? s->len : 0);
    }
    size_t es = onyx_dtype(y->dtype)->bits / 8;
    memcpy((uint8_t *)y->data + (size_t)j * es, (const uint8_t *)t->data + (size_t)at * es, es);
    return true;
}

/* -------------------------------------------------------------- DictVectorizer */

static onyx_status *dv_compute(onyx_kernel_ctx *ctx) {
    map_view v;
    ONYX_TRY(map_open(ctx->n_in ? ctx->in[0] : NULL, "DictVectorizer", &v));
    size_t ns, ni;
    const onyx_bytes *svoc = ml_attr_strings(ctx->node, "string_vocabulary", &ns);
    const int64_t *ivoc = onyx_attr_ints(ctx->node, "int64_vocabulary", &ni);
    bool str_keys = v.keys->dtype == ONYX_STRING;
    size_t nv = str_keys ? ns : ni;
    const char *vocab = str_keys ? "string_vocabulary" : "int64_vocabulary";
    if (!nv && !onyx_node_attr(ctx->node, vocab))
        return ONYX_INVALID_MODEL("DictVectorizer: %s keys need attribute %s",
                                  str_keys ? "string" : "int64", vocab);
    key_table t;
    ONYX_TRY(map_index(&v, &t));
    int64_t dims[2] = {1, (int64_t)nv};
    onyx_value *y;
    onyx_status *st = onyx_kernel_output(ctx, 0, v.vtype, 2, dims, &y);
    if (!st && v.vtype != ONYX_STRING) memset(y->data, 0, y->nbytes);
    for (size_t i = 0; !st && i < nv; i++) {
        ml_key k = str_keys ? (ml_key){.s = (const char *)svoc[i].ptr, .len = svoc[i].len}
                            : (ml_key){.v.i = ivoc[i]};
        int64_t at = key_find(&t, &k);
        if (at >= 0 && !map_copy_value(&v, at, y, (int64_t)i)) st = ONYX_OOM();
        if (!st && at < 0 && v.vtype == ONYX_STRING && !ml_str_set(&((onyx_string *)y->data)[i], "", 0))
            st = ONYX_OOM();
    }
    free(t.keys);
    return st;
}

/* --------------------------------------------------------------------- CastMap */

enum { CAST_FLOAT, CAST_STRING, CAST_INT64 };

typedef struct castmap_state {
    int to;
    bool sparse;
    int64_t max_map;
} castmap_state;

static onyx_status *castmap_init(const onyx_kernel_info *info, void **state) {
    const char *to = onyx_attr_string(info->node, "cast_to", "TO_FLOAT");
    const char *form = onyx_attr_string(info->node, "map_form", "DENSE");
    castmap_state *s = calloc(1, sizeof *s);
    if (!s) return ONYX_OOM();
    onyx_status *st = NULL;
    if (!strcmp(to, "TO_FLOAT")) s->to = CAST_FLOAT;
    else if (!strcmp(to, "TO_STRING")) s->to = CAST_STRING;
    else if (!strcmp(to, "TO_INT64")) s->to = CAST_INT64;
    else st = ONYX_INVALID_MODEL("CastMap: cast_to is '%s'; expected TO_FLOAT, TO_STRING or TO_INT64", to);
    if (!strcmp(form, "SPARSE")) s->sparse = true;
    else if (!st && strcmp(form, "DENSE"))
        st = ONYX_INVALID_MODEL("CastMap: map_form is '%s'; expected DENSE or SPARSE", form);
    s->max_map = onyx_attr_int(info->node, "max_map", 1);
    if (!st && s->sparse && (s->max_map < 0 || s->max_map > INT32_MAX))
        st = ONYX_INVALID_MODEL("CastMap: max_map is %lld", (long long)s->max_map);
    if (st) {
        free(s);
        return st;
    }
    *state = s;
    return NULL;
}

/* Convert map value i to the output type into element j of y. */
static onyx_status *castmap_value(const map_view *v, int64_t i, onyx_value *y, int64_t j) {
    int64_t at;
    const onyx_value *t = map_value(v, i, &at);
    if (v->vtype == ONYX_STRING) {
        const onyx_string *s = &((const onyx_string *)t->data)[at];
        const char *str = s->data ? s->data : "";
        if (y->dtype == ONYX_STRING)
            return ml_str_set(&((onyx_string *)y->data)[j], str, s->data ? s->len : 0) ? NULL : ONYX_OOM();
        char *end;
        errno = 0;
        if (y->dtype == ONYX_FLOAT) ((float *)y->data)[j] = strtof(str, &end);
        else ((int64_t *)y->data)[j] = strtoll(str, &end, 10);
        if (end == str || errno == ERANGE)
            return ONYX_INVALID_ARG("CastMap: map value '%s' is not a valid %s", str,
                                    onyx_dtype_name(y->dtype));
        return NULL;
    }
    double d = onyx_load_as_double(t->dtype, t->data, at);
    if (y->dtype == ONYX_FLOAT) {
        ((float *)y->data)[j] = (float)d;
    } else if (y->dtype == ONYX_INT64) {
        if (!(d > -9.2e18 && d < 9.2e18))
            return ONYX_INVALID_ARG("CastMap: map value %g does not fit int64", d);
        ((int64_t *)y->data)[j] = (int64_t)(float)d;
    } else {
        char buf[64];
        int len = snprintf(buf, sizeof buf, "%f", (double)(float)d);
        if (!ml_str_set(&((onyx_string *)y->data)[j], buf, (size_t)len)) return ONYX_OOM();
    }
    return NULL;
}

static onyx_status *castmap_pad(onyx_value *y, int64_t j) {
    if (y->dtype == ONYX_FLOAT) ((float *)y->data)[j] = 0;
    else if (y->dtype == ONYX_INT64) ((int64_t *)y->data)[j] = 0;
    else if (!ml_str_set(&((onyx_string *)y->data)[j], "0.f", 3)) return ONYX_OOM();
    return NULL;
}

static onyx_status *castmap_compute(onyx_kernel_ctx *ctx) {
    const castmap_state *s = ctx->state;
    map_view v;
    ONYX_TRY(map_open(ctx->n_in ? ctx->in[0] : NULL, "CastMap", &v));
    if (v.keys->dtype != ONYX_INT64) return ONYX_INVALID_ARG("CastMap: map keys must be int64");
    if (v.vtype != ONYX_STRING && v.vtype != ONYX_FLOAT)
        return ONYX_INVALID_ARG("CastMap: map values have type %s; expected string or float",
                                onyx_dtype_name(v.vtype));
    key_table t;
    ONYX_TRY(map_index(&v, &t)); /* sorted by key: the output order */
    static const int types[] = {ONYX_FLOAT, ONYX_STRING, ONYX_INT64};
    int64_t dims[2] = {1, s->sparse ? s->max_map : (int64_t)t.n};
    onyx_value *y;
    onyx_status *st = NULL;
    if (s->sparse && t.n && t.keys[0].v.i < 0)
        st = ONYX_INVALID_ARG("CastMap: key %lld is negative; SPARSE needs keys >= 0",
                              (long long)t.keys[0].v.i);
    if (!st) st = onyx_kernel_output(ctx, 0, types[s->to], 2, dims, &y);
    size_t next = 0;
    for (int64_t j = 0; !st && j < dims[1]; j++) {
        if (!s->sparse) {
            st = castmap_value(&v, (int64_t)t.keys[j].idx, y, j);
        } else if (next < t.n && t.keys[next].v.i == j) {
            st = castmap_value(&v, (int64_t)t.keys[next++].idx, y, j);
        } else {
            st = castmap_pad(y, j);
        }
    }
    free(t.keys);
    return st;
}

/* ---------------------------------------------------------------------- ZipMap */

/* ZipMap's keys: one entry per distinct label, the last column of a
 * repeated label giving its value (ONNX Runtime builds a std::map). */
typedef struct zipmap_state {
    ml_labels labels;
    size_t n_keys;
    size_t *key_label;  /* label index of each key (first occurrence) */
    size_t *key_col;    /* column read for each key (last occurrence) */
} zipmap_state;

static void zipmap_free(void *p) {
    zipmap_state *s = p;
    if (!s) return;
    free(s->key_label);
    free(s->key_col);
    free(s);
}

static onyx_status *zipmap_init(const onyx_kernel_info *info, void **state) {
    zipmap_state *s = calloc(1, sizeof *s);
    if (!s) return ONYX_OOM();
    onyx_status *st = ml_read_labels(info->node, "classlabels_int64s", &s->labels);
    if (!st && !s->labels.n)
        st = ONYX_INVALID_MODEL("ZipMap: classlabels_strings or classlabels_int64s is required");
    size_t n = s->labels.n;
    ml_key *keys = st                 ? NULL
                   : s->labels.strings ? keys_from_bytes(s->labels.strs, n)
                                       : keys_from_ints(s->labels.ints, n);
    if (!st && !keys) st = ONYX_OOM();
    if (!st) {
        s->key_label = malloc(n * sizeof *s->key_label);
        s->key_col = malloc(n * sizeof *s->key_col);
        if (!s->key_label || !s->key_col) st = ONYX_OOM();
    }
    if (!st) {
        key_table first, last;
        ml_key *copy = keys_alloc(n);
        if (!copy) st = ONYX_OOM();
        else {
            memcpy(copy, keys, n * sizeof *keys);
            key_kind kind = s->labels.strings ? KEY_STR : KEY_INT;
            key_table_build(&first, kind, keys, n, false);
            keys = NULL;
            key_table_build(&last, kind, copy, n, true);
            /* keys in label order of their first occurrence */
            for (size_t i = 0; i < n; i++) {
                const onyx_bytes *b = s->labels.strings ? &s->labels.strs[i] : NULL;
                ml_key probe = b ? (ml_key){.s = (const char *)b->ptr, .len = b->len}
                                 : (ml_key){.v.i = s->labels.ints[i]};
                if ((size_t)key_find(&first, &probe) != i) continue;
                s->key_label[s->n_keys] = i;
                s->key_col[s->n_keys++] = (size_t)key_find(&last, &probe);
            }
            free(first.keys);
            free(last.keys);
        }
    }
    free(keys);
    if (st) {
        zipmap_free(s);
        return st;
    }
    *state = s;
    return NULL;
}

static onyx_status *zipmap_row(const zipmap_state *s, const float *row, onyx_value **out) {
    int kt = ml_label_dtype(&s->labels);
    int64_t n = (int64_t)s->n_keys;
    onyx_value *map = onyx_value_new_empty(ONYX_VALUE_MAP), *keys = NULL, *vals = NULL;
    if (!map) return ONYX_OOM();
    map->dtype = (uint8_t)kt;
    onyx_status *st = onyx_tensor_new(kt, 1, &n, &keys);
    if (!st) st = onyx_sequence_append(map, keys);
    if (!st) st = onyx_tensor_new(ONYX_FLOAT, 1, &n, &vals);
    if (!st) st = onyx_sequence_append(map, vals);
    for (int64_t i = 0; !st && i < n; i++) {
        st = ml_put_label(keys, i, &s->labels, s->key_label[i]);
        ((float *)vals->data)[i] = row[s->key_col[i]];
    }
    if (st) {
        onyx_value_destroy(map);
        return st;
    }
    *out = map;
    return NULL;
}

static onyx_status *zipmap_compute(onyx_kernel_ctx *ctx) {
    const zipmap_state *s = ctx->state;
    const onyx_value *x = ctx->n_in ? ctx->in[0] : NULL;
    int64_t n = 0, c = 0;
    ONYX_TRY(ml_rows_cols(x, "ZipMap", &n, &c));
    if (x->dtype != ONYX_FLOAT)
        return ONYX_INVALID_ARG("ZipMap: input X has type %s; expected float", onyx_dtype_name(x->dtype));
    if (c != (int64_t)s->labels.n)
        return ONYX_INVALID_ARG("ZipMap: input has %lld columns for %zu class labels", (long long)c,
                                s->labels.n);
    onyx_value *seq = onyx_value_new_empty(ONYX_VALUE_SEQUENCE);
    if (!seq) return ONYX_OOM();
    seq->dtype = (uint8_t)ml_label_dtype(&s->labels);
    onyx_status *st = NULL;
    for (int64_t r = 0; !st && r < n; r++) {
        onyx_value *map = NULL;
        st = zipmap_row(s, (const float *)x->data + r * c, &map);
        if (!st) st = onyx_sequence_append(seq, map);
    }
    if (st) {
        onyx_value_destroy(seq);
        return st;
    }
    return onyx_kernel_set_output(ctx, 0, seq);
}

/* ---------------------------------------------------------------------- table */

const onyx_op_def onyx_ops_ml_preprocess[] = {
    {ML_DOMAIN, "Scaler", 1, ONYX_OPSET_LATEST, ML_T_NUM_IN, 0, scaler_init, scaler_free,
     scaler_compute},
    {ML_DOMAIN, "Normalizer", 1, ONYX_OPSET_LATEST, ML_T_NUM_IN, 0, normalizer_init,
     plain_state_free, normalizer_compute},
    {ML_DOMAIN, "Binarizer", 1, ONYX_OPSET_LATEST, ML_T_NUM_IN, 0, NULL, NULL, binarizer_compute},
    {ML_DOMAIN, "Imputer", 1, ONYX_OPSET_LATEST, ML_T_NUM_IN, 0, NULL, NULL, imputer_compute},
    {ML_DOMAIN, "OneHotEncoder", 1, ONYX_OPSET_LATEST, ML_T_NUM_IN | ONYX_T(ONYX_STRING), 0,
     onehot_init, onehot_free, onehot_compute},
    /* one implementation; init reads the opset: 1 (classes_strings), 2-3, 4 (tensor attributes) */
    {ML_DOMAIN, "LabelEncoder", 1, 1, 0, 0, le_init, le_free, le_compute},
    {ML_DOMAIN, "LabelEncoder", 2, 3, 0, 0, le_init, le_free, le_compute},
    {ML_DOMAIN, "LabelEncoder", 4, ONYX_OPSET_LATEST, 0, 0, le_init, le_free, le_compute},
    {ML_DOMAIN, "CategoryMapper", 1, ONYX_OPSET_LATEST, ONYX_T(ONYX_STRING) | ONYX_T(ONYX_INT64), 0,
     catmap_init, catmap_free, catmap_compute},
    {ML_DOMAIN, "ArrayFeatureExtractor", 1, ONYX_OPSET_LATEST, 0, 0, NULL, NULL, afe_compute},
    {ML_DOMAIN, "FeatureVectorizer", 1, ONYX_OPSET_LATEST, 0, 0, NULL, NULL, fv_compute},
    {ML_DOMAIN, "DictVectorizer", 1, ONYX_OPSET_LATEST, 0, 0, NULL, NULL, dv_compute},
    {ML_DOMAIN, "CastMap", 1, ONYX_OPSET_LATEST, 0, 0, castmap_init, plain_state_free,
     castmap_compute},
    {ML_DOMAIN, "ZipMap", 1, ONYX_OPSET_LATEST, ONYX_T(ONYX_FLOAT), 0, zipmap_init, zipmap_free,
     zipmap_compute},
    {0},};
