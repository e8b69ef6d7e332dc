/* Einsum (opset 12+): Einstein summation over any number of operands.
 *
 * The equation is parsed into integer labels per axis: letters a-z and A-Z,
 * and one label per ellipsis dimension (ellipses of different ranks are
 * right-aligned and broadcast, as numpy does). Operands are then contracted
 * left to right, two at a time. For a pair (A, B) every label falls in one
 * class:
 *   batch      in both, still needed (output or a later operand)
 *   contracted in both, not needed later: summed by the product
 *   left/right in one of them only, still needed
 * and labels in one operand only that are not needed later are summed away.
 * A is gathered into [batch, left, contracted] and B into [batch,
 * contracted, right] by one strided "gather and reduce" pass each (which
 * also takes diagonals of repeated labels and expands size-1 broadcasts),
 * then a batched matrix product gives [batch, left, right]. A final pass
 * gathers the last operand into the output's label order.
 *
 * Compute types: float (float, float16, bfloat16; products through the
 * SGEMM), double, and int64 for every integer type (wrapping arithmetic is
 * the same modulo 2^bits, so narrowing the result gives the exact value). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/checked.h"
#include "providers/cpu/gemm/gemm.h"
#include "providers/cpu/kernel.h"

#define ES_LETTERS 52
#define ES_MAX_LABELS (ES_LETTERS + ONYX_MAX_RANK)

/* ------------------------------------------------------------- equation */

typedef struct es_term {
    int n;                       /* axes */
    int label[ES_MAX_LABELS];
} es_term;

typedef struct es_equation {
    size_t n_in;
    es_term *in;                 /* n_in terms */
    es_term out;
    int ell;                     /* dimensions the widest ellipsis covers */
} es_equation;

static int letter_label(char c) {
    if (c >= 'a' && c <= 'z') return c - 'a';
    if (c >= 'A' && c <= 'Z') return 26 + (c - 'A');
    return -1;
}

/* The ASCII code of a letter label: the implicit output sorts by it. */
static int label_char(int l) { return l < 26 ? 'a' + l : 'A' + (l - 26); }

/* One term: letters (as labels) and at most one ellipsis, whose position
 * among the letters is *ell_at (-1 if none). Spaces are skipped. */
static onyx_status *parse_term(const char *s, size_t len, const char *what, int *letters,
                               int *n_letters, int *ell_at) {
    *n_letters = 0;
    *ell_at = -1;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c == ' ') continue;
        if (c == '.') {
            if (i + 2 >= len || s[i + 1] != '.' || s[i + 2] != '.')
                return ONYX_INVALID_ARG("equation: %s has a '.' that is not part of '...'", what);
            if (*ell_at >= 0) return ONYX_INVALID_ARG("equation: %s has more than one ellipsis", what);
            *ell_at = *n_letters;
            i += 2;
            continue;
        }
        int l = letter_label(c);
        if (l < 0) return ONYX_INVALID_ARG("equation: %s has the character '%c'; expected letters, "
                                           "'...' or spaces", what, c);
        if (*n_letters >= ES_LETTERS)
            return ONYX_INVALID_ARG("equation: %s has more than %d labels", what, ES_LETTERS);
        letters[(*n_letters)++] = l;
    }
    return NULL;
}

/* Expand a parsed term with e ellipsis dimensions into labels; ellipsis
 * label k of E is ES_LETTERS + k, right-aligned. */
static void expand_term(const int *letters, int n_letters, int ell_at, int e, int E, es_term *t) {
    t->n = 0;
    for (int i = 0; i <= n_letters; i++) {
        if (i == ell_at)
            for (int k = 0; k < e; k++) t->label[t->n++] = ES_LETTERS + (E - e) + k;
        if (i < n_letters) t->label[t->n++] = letters[i];
    }
}

typedef struct es_raw_term {
    int letters[ES_LETTERS];
    int n_letters, ell_at, ell;
} es_raw_term;

static onyx_status *parse_inputs(const char *lhs, size_t len, const onyx_kernel_ctx *ctx,
                                 es_raw_term *raw, es_equation *eq) {
    size_t k = 0, start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && lhs[i] != ',') continue;
        if (k >= ctx->n_in)
            return ONYX_INVALID_ARG("equation has more terms than the %zu inputs", ctx->n_in);
        char what[32];
        snprintf(what, sizeof what, "term %zu", k);
        es_raw_term *r = &raw[k];
        ONYX_TRY(parse_term(lhs + start, i - start, what, r->letters, &r->n_letters, &r->ell_at));
        const onyx_value *v = ctx->in[k];
        if (!onyx_is_tensor(v)) return ONYX_INVALID_ARG("input %zu is missing or not a tensor", k);
        r->ell = v->rank - r->n_letters;
        if (r->ell < 0 || (r->ell_at < 0 && r->ell != 0))
            return ONYX_INVALID_ARG("equation term %zu has %d labels%s but input %zu has rank %d", k,
                                    r->n_letters, r->ell_at >= 0 ? " and an ellipsis" : "", k,
                                    v->rank);
        if (r->ell > eq->ell) eq->ell = r->ell;
        k++;
        start = i + 1;
    }
    if (k != ctx->n_in)
        return ONYX_INVALID_ARG("equation has %zu terms but the node has %zu inputs", k, ctx->n_in);
    for (size_t i = 0; i < k; i++)
        expand_term(raw[i].letters, raw[i].n_letters, raw[i].ell_at, raw[i].ell, eq->ell, &eq->in[i]);
    return NULL;
}

/* Implicit output: the ellipsis dimensions, then the letters used exactly
 * once, in ASCII order. */
static void implicit_output(es_equation *eq) {
    int count[ES_LETTERS] = {0};
    for (size_t i = 0; i < eq->n_in; i++)
        for (int a = 0; a < eq->in[i].n; a++)
            if (eq->in[i].label[a] < ES_LETTERS) count[eq->in[i].label[a]]++;
    es_term *o = &eq->out;
    o->n = 0;
    for (int k = 0; k < eq->ell; k++) o->label[o->n++] = ES_LETTERS + k;
    for (int c = 'A'; c <= 'z'; c++) {
        int l = letter_label((char)c);
        if (l >= 0 && count[l] == 1) o->label[o->n++] = l;
    }
}

static onyx_status *explicit_output(const char *rhs, size_t len, es_equation *eq) {
    int letters[ES_LETTERS], n, ell_at;
    ONYX_TRY(parse_term(rhs, len, "the output", letters, &n, &ell_at));
    bool used[ES_MAX_LABELS] = {false};
    for (size_t i = 0; i < eq->n_in; i++)
        for (int a = 0; a < eq->in[i].n; a++) used[eq->in[i].label[a]] = true;
    bool seen[ES_LETTERS] = {false};
    for (int i = 0; i < n; i++) {
        if (seen[letters[i]])
            return ONYX_INVALID_ARG("equation: output label '%c' appears twice", label_char(letters[i]));
        if (!used[letters[i]])
            return ONYX_INVALID_ARG("equation: output label '%c' is not in any input term",
                                    label_char(letters[i]));
        seen[letters[i]] = true;
    }
    /* Without an ellipsis on the right, ellipsis dimensions are summed. */
    expand_term(letters, n, ell_at, ell_at >= 0 ? eq->ell : 0, eq->ell, &eq->out);
    return NULL;
}

static onyx_status *parse_equation(const onyx_kernel_ctx *ctx, es_equation *eq) {
    const char *s = onyx_attr_string(ctx->node, "equation", NULL);
    if (!s) return ONYX_INVALID_ARG("attribute equation is required");
    if (ctx->n_in == 0) return ONYX_INVALID_ARG("Einsum needs at least one input");
    eq->n_in = ctx->n_in;
    eq->ell = 0;
    eq->in = calloc(ctx->n_in, sizeof *eq->in);
    es_raw_term *raw = calloc(ctx->n_in, sizeof *raw);
    onyx_status *st = eq->in && raw ? NULL : ONYX_OOM();
    const char *arrow = strstr(s, "->");
    size_t lhs_len = arrow ? (size_t)(arrow - s) : strlen(s);
    if (!st) st = parse_inputs(s, lhs_len, ctx, raw, eq);
    free(raw);
    if (!st && arrow) st = explicit_output(arrow + 2, strlen(arrow + 2), eq);
    else if (!st) implicit_output(eq);
    if (!st && eq->out.n > ONYX_MAX_RANK)
        st = ONYX_INVALID_ARG("equation: output rank %d exceeds %d", eq->out.n, ONYX_MAX_RANK);
    return st;
}

/* Size of every label: equal wherever it occurs, or 1 (broadcast). Repeated
 * labels within one term (diagonals) must match exactly. */
static onyx_status *label_sizes(const onyx_kernel_ctx *ctx, const es_equation *eq, int64_t *size) {
    for (int l = 0; l < ES_MAX_LABELS; l++) size[l] = -1;
    for (size_t i = 0; i < eq->n_in; i++) {
        const onyx_value *v = ctx->in[i];
        int64_t here[ES_MAX_LABELS];
        for (int l = 0; l < ES_MAX_LABELS; l++) here[l] = -1;
        for (int a = 0; a < eq->in[i].n; a++) {
            int l = eq->in[i].label[a];
            int64_t d = v->dims[a];
            if (here[l] >= 0 && here[l] != d)
                return ONYX_INVALID_ARG("input %zu repeats a label on axes of sizes %lld and %lld", i,
                                        (long long)here[l], (long long)d);
            here[l] = d;
            if (size[l] < 0 || size[l] == 1) size[l] = d;
            else if (d != size[l] && d != 1)
                return ONYX_INVALID_ARG("input %zu axis %d has size %lld; the same label elsewhere "
                                        "has size %lld", i, a, (long long)d, (long long)size[l]);
        }
    }
    return NULL;
}

/* ------------------------------------------------------------- operands */

enum { CT_F32, CT_F64, CT_I64 };

typedef struct es_op {
    void *data;                  /* compute type, dense row-major, owned */
    int n;                       /* axes */
    int label[ES_MAX_LABELS];
    int64_t dim[ES_MAX_LABELS];
} es_op;

static size_t ct_size(int ct) { return ct == CT_F32 ? sizeof(float) : 8; }

static onyx_status *alloc_elems(int64_t n, int ct, void **out) {
    size_t bytes;
    if (n > ONYX_MAX_TENSOR_ELEMENTS || onyx_mul_overflow_size((size_t)(n ? n : 1), ct_size(ct), &bytes))
        return ONYX_INVALID_ARG("intermediate of %lld elements is too large", (long long)n);
    *out = onyx_alloc(bytes);
    return *out ? NULL : ONYX_OOM();
}

/* An input tensor converted to the compute type. */
static onyx_status *load_operand(const onyx_value *v, const es_term *t, int ct, es_op *op) {
    op->n = t->n;
    memcpy(op->label, t->label, sizeof(int) * (size_t)t->n);
    memcpy(op->dim, v->dims, sizeof(int64_t) * (size_t)t->n);
    ONYX_TRY(alloc_elems(v->numel, ct, &op->data));
    for (int64_t i = 0; i < v->numel; i++) {
        if (ct == CT_F32) ((float *)op->data)[i] = (float)onyx_load_as_double(v->dtype, v->data, i);
        else if (ct == CT_F64) ((double *)op->data)[i] = onyx_load_as_double(v->dtype, v->data, i);
        else ((int64_t *)op->data)[i] = onyx_load_as_int64(v->dtype, v->data, i);
    }
    return NULL;
}

/* Plan of a gather-and-reduce pass: out axes (global sizes, source strides;
 * stride 0 broadcasts) and summed axes (source sizes and strides). */
typedef struct es_gather {
    int n_out, n_sum;
    int64_t out_dim[ES_MAX_LABELS], out_stride[ES_MAX_LABELS];
    int64_t sum_dim[ES_MAX_LABELS], sum_stride[ES_MAX_LABELS];
    int64_t out_numel, sum_numel;
} es_gather;

/* Gather op into the label order `want` (each label once), summing labels
 * of op that are not wanted. A repeated label of op reads its diagonal (the
 * strides of its axes add up). */
static onyx_status *plan_gather(const es_op *op, const int *want, int n_want, const int64_t *size,
                                es_gather *g) {
    int64_t stride[ES_MAX_LABELS] = {0}, ldim[ES_MAX_LABELS], s = 1;
    bool has[ES_MAX_LABELS] = {false}, wanted[ES_MAX_LABELS] = {false};
    for (int a = op->n - 1; a >= 0; a--) {
        stride[op->label[a]] += s;
        ldim[op->label[a]] = op->dim[a];
        has[op->label[a]] = true;
        s *= op->dim[a];
    }
    g->n_out = n_want;
    g->out_numel = 1;
    for (int i = 0; i < n_want; i++) {
        int l = want[i];
        wanted[l] = true;
        g->out_dim[i] = size[l];
        g->out_stride[i] = has[l] && ldim[l] != 1 ? stride[l] : 0;
        if (onyx_mul_overflow_i64(g->out_numel, size[l], &g->out_numel) ||
            g->out_numel > ONYX_MAX_TENSOR_ELEMENTS)
            return ONYX_INVALID_ARG("an intermediate of this einsum is too large");
    }
    g->n_sum = 0;
    g->sum_numel = 1;
    for (int l = 0; l < ES_MAX_LABELS; l++) {
        if (!has[l] || wanted[l]) continue;
        g->sum_dim[g->n_sum] = ldim[l];
        g->sum_stride[g->n_sum++] = stride[l];
        g->sum_numel *= ldim[l];   /* bounded by op's element count */
    }
    return NULL;
}

/* Advance a multi-index over dims (last axis fastest); returns the change
 * in source offset. */
static int64_t odometer_step(int n, const int64_t *dim, const int64_t *stride, int64_t *idx) {
    int64_t delta = 0;
    for (int a = n - 1; a >= 0; a--) {
        if (++idx[a] < dim[a]) return delta + stride[a];
        delta -= stride[a] * (dim[a] - 1);
        idx[a] = 0;
    }
    return delta;
}

#define ES_DEFINE(T, CT)                                                                          \
    static void gather_##T(const es_gather *g, const T *src, T *dst) {                            \
        int64_t oidx[ES_MAX_LABELS] = {0}, off = 0;                                               \
        for (int64_t o = 0; o < g->out_numel; o++) {                                              \
            T acc = 0;                                                                            \
            int64_t sidx[ES_MAX_LABELS] = {0}, soff = 0;                                          \
            for (int64_t k = 0; k < g->sum_numel; k++) {                                          \
                acc += src[off + soff];                                                           \
                soff += odometer_step(g->n_sum, g->sum_dim, g->sum_stride, sidx);                 \
            }                                                                                     \
            dst[o] = acc;                                                                         \
            off += odometer_step(g->n_out, g->out_dim, g->out_stride, oidx);                      \
        }                                                                                         \
    }                                                                                             \
    /* c += a * b in fixed blocks of 8: the loop shape gcc -O2 vectorises */                       \
    static void axpy_##T(T *restrict c, const T *restrict b, T a, size_t n) {                     \
        size_t j = 0;                                                                             \
        for (; j + 8 <= n; j += 8)                                                                \
            for (size_t v = 0; v < 8; v++) c[j + v] += a * b[j + v];                              \
        for (; j < n; j++) c[j] += a * b[j];                                                      \
    }                                                                                             \
    /* C[nb][m][n] = A[nb][m][k] * B[nb][k][n] */                                                 \
    static onyx_status *bmm_##T(size_t nb, size_t m, size_t n, size_t k, const T *A, const T *B, \
                                T *C, onyx_threadpool *tp) {                                      \
        (void)tp;                                                                                 \
        for (size_t b = 0; b < nb; b++) {                                                         \
            const T *a = A + b * m * k, *bb = B + b * k * n;                                      \
            T *c = C + b * m * n;                                                                 \
            if (m == 0 || n == 0) continue;                                                       \
            if (CT == CT_F32 && k > 0) {                                                          \
                ONYX_TRY(onyx_sgemm(false, false, m, n, k, 1.0f, (const float *)a, k,             \
                                    (const float *)bb, n, 0.0f, (float *)c, n, tp));              \
                continue;                                                                         \
            }                                                                                     \
            for (size_t i = 0; i < m * n; i++) c[i] = 0;                                          \
            for (size_t i = 0; i < m; i++)                                                        \
                for (size_t p = 0; p < k; p++) {                                                  \
                    const T av = a[i * k + p];                                                    \
                    const T *brow = bb + p * n;                                                   \
                    axpy_##T(c + i * n, brow, av, n);                                             \
                }                                                                                 \
        }                                                                                         \
        return NULL;                                                                              \
    }

/* int64 products wrap; do them in uint64 so that wrapping is defined. */
typedef uint64_t es_u64;
ES_DEFINE(float, CT_F32)
ES_DEFINE(double, CT_F64)
ES_DEFINE(es_u64, CT_I64)

/* Gather op into labels `want` (a new dense operand). */
static onyx_status *gather_op(const es_op *op, const int *want, int n_want, const int64_t *size,
                              int ct, es_op *out) {
    es_gather g;
    ONYX_TRY(plan_gather(op, want, n_want, size, &g));
    out->n = n_want;
    for (int i = 0; i < n_want; i++) out->label[i] = want[i], out->dim[i] = size[want[i]];
    ONYX_TRY(alloc_elems(g.out_numel, ct, &out->data));
    if (ct == CT_F32) gather_float(&g, op->data, out->data);
    else if (ct == CT_F64) gather_double(&g, op->data, out->data);
    else gather_es_u64(&g, op->data, out->data);
    return NULL;
}

static bool op_has(const es_op *op, int l) {
    for (int a = 0; a < op->n; a++)
        if (op->label[a] == l) return true;
    return false;
}

static int64_t prod_sizes(const int *labels, int n, const int64_t *size) {
    int64_t p = 1;
    for (int i = 0; i < n; i++) p *= size[labels[i]];  /* bounded: gathered operands fit */
    return p;
}

/* Contract A and B; needed[l]: label l is used by the output or a later
 * operand. */
static onyx_status *contract_pair(const es_op *A, const es_op *B, const bool *needed,
                                  const int64_t *size, int ct, onyx_threadpool *tp, es_op *out) {
    int batch[ES_MAX_LABELS], left[ES_MAX_LABELS], right[ES_MAX_LABELS], con[ES_MAX_LABELS];
    int nb = 0, nl = 0, nr = 0, nc = 0;
    bool done[ES_MAX_LABELS] = {false};
    for (int a = 0; a < A->n; a++) {
        int l = A->label[a];
        if (done[l]) continue;
        done[l] = true;
        bool inb = op_has(B, l);
        if (inb && needed[l]) batch[nb++] = l;
        else if (inb) con[nc++] = l;
        else if (needed[l]) left[nl++] = l;
    }
    for (int a = 0; a < B->n; a++) {
        int l = B->label[a];
        if (done[l]) continue;
        done[l] = true;
        if (needed[l]) right[nr++] = l;
    }
    int wa[ES_MAX_LABELS], wb[ES_MAX_LABELS], wc[ES_MAX_LABELS];
    int na = 0, nbb = 0, ncc = 0;
    for (int i = 0; i < nb; i++) wa[na++] = batch[i], wb[nbb++] = batch[i], wc[ncc++] = batch[i];
    for (int i = 0; i < nl; i++) wa[na++] = left[i], wc[ncc++] = left[i];
    for (int i = 0; i < nc; i++) wa[na++] = con[i], wb[nbb++] = con[i];
    for (int i = 0; i < nr; i++) wb[nbb++] = right[i], wc[ncc++] = right[i];
    es_op ga = {0}, gb = {0};
    onyx_status *st = gather_op(A, wa, na, size, ct, &ga);
    if (!st) st = gather_op(B, wb, nbb, size, ct, &gb);
    int64_t P = prod_sizes(batch, nb, size), M = prod_sizes(left, nl, size),
            N = prod_sizes(right, nr, size), K = prod_sizes(con, nc, size), MN = 0, n_out = 0;
    if (!st && (onyx_mul_overflow_i64(M, N, &MN) || onyx_mul_overflow_i64(MN, P, &n_out)))
        st = ONYX_INVALID_ARG("an intermediate of this einsum is too large");
    if (!st) {
        out->n = ncc;
        for (int i = 0; i < ncc; i++) out->label[i] = wc[i], out->dim[i] = size[wc[i]];
        st = alloc_elems(n_out, ct, &out->data);
    }
    if (!st) {
        size_t p = (size_t)P, m = (size_t)M, n = (size_t)N, k = (size_t)K;
        if (ct == CT_F32) st = bmm_float(p, m, n, k, ga.data, gb.data, out->data, tp);
        else if (ct == CT_F64) st = bmm_double(p, m, n, k, ga.data, gb.data, out->data, tp);
        else st = bmm_es_u64(p, m, n, k, ga.data, gb.data, out->data, tp);
    }
    onyx_free(ga.data);
    onyx_free(gb.data);
    return st;
}

/* ---------------------------------------------------------------- compute */

static int compute_type(int dtype) {
    if (dtype == ONYX_DOUBLE) return CT_F64;
    if (dtype == ONYX_FLOAT || dtype == ONYX_FLOAT16 || dtype == ONYX_BFLOAT16) return CT_F32;
    return CT_I64;
}

static onyx_status *check_types(const onyx_kernel_ctx *ctx) {
    for (size_t i = 0; i < ctx->n_in; i++) {
        const onyx_value *v = ctx->in[i];
        if (!onyx_is_tensor(v)) return ONYX_INVALID_ARG("input %zu is missing or not a tensor", i);
        if (v->dtype != ctx->in[0]->dtype)
            return ONYX_INVALID_ARG("input %zu has element type %s; input 0 has %s", i,
                                    onyx_dtype_name(v->dtype), onyx_dtype_name(ctx->in[0]->dtype));
        if (!onyx_dtype(v->dtype)->is_integer && !onyx_dtype(v->dtype)->is_float)
            return ONYX_INVALID_ARG("input %zu has element type %s; Einsum takes numeric tensors", i,
                                    onyx_dtype_name(v->dtype));
    }
    return NULL;
}

static void store_result(const es_op *r, int ct, int dtype, void *dst, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        if (ct == CT_F32) onyx_store_from_double(dtype, dst, i, ((const float *)r->data)[i]);
        else if (ct == CT_F64) ((double *)dst)[i] = ((const double *)r->data)[i];
        else onyx_store_from_int64(dtype, dst, i, (int64_t)((const es_u64 *)r->data)[i]);
    }
}

/* Contract the operands left to right; *acc ends as the last operand. */
static onyx_status *contract_all(onyx_kernel_ctx *ctx, const es_equation *eq, const int64_t *size,
                                 int ct, es_op *acc) {
    ONYX_TRY(load_operand(ctx->in[0], &eq->in[0], ct, acc));
    for (size_t i = 1; i < eq->n_in; i++) {
        es_op next = {0}, res = {0};
        bool needed[ES_MAX_LABELS] = {false};
        for (int a = 0; a < eq->out.n; a++) needed[eq->out.label[a]] = true;
        for (size_t j = i + 1; j < eq->n_in; j++)
            for (int a = 0; a < eq->in[j].n; a++) needed[eq->in[j].label[a]] = true;
        onyx_status *st = load_operand(ctx->in[i], &eq->in[i], ct, &next);
        if (!st) st = contract_pair(acc, &next, needed, size, ct, ctx->tp, &res);
        onyx_free(next.data);
        onyx_free(acc->data);
        *acc = res;
        if (st) return st;
    }
    return NULL;
}

static onyx_status *einsum_compute(onyx_kernel_ctx *ctx) {
    ONYX_TRY(check_types(ctx));
    es_equation eq = {0};
    int64_t size[ES_MAX_LABELS];
    onyx_status *st = parse_equation(ctx, &eq);
    if (!st) st = label_sizes(ctx, &eq, size);
    int dtype = ctx->in[0]->dtype, ct = compute_type(dtype);
    es_op acc = {0}, result = {0};
    if (!st) st = contract_all(ctx, &eq, size, ct, &acc);
    if (!st) st = gather_op(&acc, eq.out.label, eq.out.n, size, ct, &result);
    onyx_value *y = NULL;
    int64_t dims[ONYX_MAX_RANK];
    for (int a = 0; !st && a < eq.out.n; a++) dims[a] = size[eq.out.label[a]];
    if (!st) st = onyx_kernel_output(ctx, 0, dtype, eq.out.n, dims, &y);
    if (!st) store_result(&result, ct, dtype, y->data, y->numel);
    onyx_free(acc.data);
    onyx_free(result.data);
    free(eq.in);
    return st;
}

#define NUMERIC (ONYX_T_INTS | ONYX_T(ONYX_FLOAT) | ONYX_T(ONYX_DOUBLE) | ONYX_T(ONYX_FLOAT16) | \
                 ONYX_T(ONYX_BFLOAT16))

const onyx_op_def onyx_ops_einsum[] = {
    {"", "Einsum", 12, ONYX_OPSET_LATEST, NUMERIC, 0, NULL, NULL, einsum_compute},
    {0},};
