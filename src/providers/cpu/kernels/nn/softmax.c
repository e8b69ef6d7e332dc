/* Softmax, LogSoftmax and Hardmax.
 *
 * Opset < 13 coerces the input to 2-D at `axis` (default 1) and normalises
 * each row of prod(dims[axis:]) elements; opset >= 13 normalises along the
 * single axis `axis` (default -1). Both come down to "slabs": one outer
 * index covering len x inner contiguous elements, reduced along len with
 * stride inner (inner == 1 for the common last-axis case, a plain row).
 *
 * float16/bfloat16 are converted to float slab by slab; double computes in
 * double. The float row kernel (attention scores in BERT/GPT-2) uses the
 * vectorisable nn_expf and lane-wise partial results. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "providers/cpu/kernel.h"
#include "providers/cpu/kernels/minimal_keep.h"
#include "providers/cpu/kernels/nn_isa.h"
#include "providers/cpu/kernels/nn_math.h"

typedef enum sm_kind { SM_SOFTMAX, SM_LOG_SOFTMAX, SM_HARDMAX } sm_kind;

/* Whether a slab of `kind` is Hardmax / Softmax (else LogSoftmax), as
 * constants where a minimal build left the other operators out. */
#define SM_IS_HARDMAX(kind) (ONYX_KEEPS_OP(Hardmax) && (kind) == SM_HARDMAX)
#define SM_IS_SOFTMAX(kind) (!ONYX_KEEPS_OP(LogSoftmax) || (kind) == SM_SOFTMAX)

/* ------------------------------------------------------------ row kernels */

/* Max of a row with NN_VL independent lanes (vectorisable without
 * reassociation). NaN is not skipped: comparisons with it are false, so a
 * NaN row element poisons the exp sum below, as in the reference. */
#define SM_ROW_MAX(T)                                                          \
    NN_INLINE T sm_row_max_##T(const T *restrict x, size_t n) {                   \
        T lane[NN_VL];                                                         \
        size_t i = 0;                                                          \
        T m = x[0];                                                            \
        if (n >= NN_VL) {                                                      \
            for (size_t j = 0; j < NN_VL; j++) lane[j] = x[j];                 \
            for (i = NN_VL; i + NN_VL <= n; i += NN_VL)                        \
                for (size_t j = 0; j < NN_VL; j++)                             \
                    lane[j] = NN_SEL(x[i + j] > lane[j], x[i + j], lane[j]);   \
            m = lane[0];                                                       \
            for (size_t j = 1; j < NN_VL; j++) m = lane[j] > m ? lane[j] : m;  \
        }                                                                      \
        for (; i < n; i++) m = x[i] > m ? x[i] : m;                            \
        return m;                                                              \
    }

/* y = exp(x - m); returns the sum of y. */
#define SM_ROW_EXP(T)                                                                   \
    NN_INLINE T sm_row_exp_##T(const T *restrict x, T *restrict y, size_t n, T m) {        \
        T lane[NN_VL];                                                                  \
        for (size_t j = 0; j < NN_VL; j++) lane[j] = 0;                                 \
        size_t i = 0;                                                                   \
        for (; i + NN_VL <= n; i += NN_VL)                                              \
            for (size_t j = 0; j < NN_VL; j++) {                                        \
                T e = NN_EXP(x[i + j] - m);                                             \
                y[i + j] = e;                                                           \
                lane[j] += e;                                                           \
            }                                                                           \
        T s = 0;                                                                        \
        for (size_t j = 0; j < NN_VL; j++) s += lane[j];                                \
        for (; i < n; i++) {                                                            \
            T e = NN_EXP(x[i] - m);                                                     \
            y[i] = e;                                                                   \
            s += e;                                                                     \
        }                                                                               \
        return s;                                                                       \
    }

/* sum of exp(x - m) without storing */
#define SM_ROW_EXPSUM(T)                                                                \
    NN_INLINE T sm_row_expsum_##T(const T *restrict x, size_t n, T m) {                    \
        T lane[NN_VL];                                                                  \
        for (size_t j = 0; j < NN_VL; j++) lane[j] = 0;                                 \
        size_t i = 0;                                                                   \
        for (; i + NN_VL <= n; i += NN_VL)                                              \
            for (size_t j = 0; j < NN_VL; j++) lane[j] += NN_EXP(x[i + j] - m);         \
        T s = 0;                                                                        \
        for (size_t j = 0; j < NN_VL; j++) s += lane[j];                                \
        for (; i < n; i++) s += NN_EXP(x[i] - m);                                       \
        return s;                                                                       \
    }

#define SM_ROW_BODY(T)                                                                  \
    {                                                                                   \
        if (n == 0) return;                                                             \
        T m = sm_row_max_##T(x, n);                                                     \
        if (SM_IS_HARDMAX(kind)) {                                                      \
            size_t at = 0;                                                              \
            for (size_t i = 1; i < n; i++)                                              \
                if (x[i] > x[at]) at = i;                                               \
            memset(y, 0, n * sizeof(T));                                                \
            y[at] = 1;                                                                  \
        } else if (SM_IS_SOFTMAX(kind)) {                                               \
            T s = sm_row_exp_##T(x, y, n, m);                                           \
            T inv = (T)1 / s;                                                           \
            NN_LOOP(i, n, y[i] *= inv);                                                 \
        } else {                                                                        \
            T shift = m + NN_LOG(sm_row_expsum_##T(x, n, m));                           \
            NN_LOOP(i, n, y[i] = x[i] - shift);                                         \
        }                                                                               \
    }
#define SM_ROW(T)                                                                       \
    SM_ROW_MAX(T)                                                                       \
    SM_ROW_EXP(T)                                                                       \
    SM_ROW_EXPSUM(T)

SM_ROW(float)
SM_ROW(double)
NN_MULTIVERSION(sm_row_float, (sm_kind kind, const float *restrict x, float *restrict y, size_t n),
                (kind, x, y, n), SM_ROW_BODY(float))
static void sm_row_double(sm_kind kind, const double *restrict x, double *restrict y, size_t n)
    SM_ROW_BODY(double)

/* -------------------------------------------------------- strided slabs */

/* A slab of len rows of `inner` elements, normalised along len; work holds
 * 2*inner scratch values (running max / sum or argmax). */
#define SM_SLAB_BODY(T)                                                                   \
    {                                                                                     \
        if (len == 0) return;                                                             \
        T *m = work, *s = work + inner;                                                   \
        if (SM_IS_HARDMAX(kind)) {                                                        \
            /* one-hot at the first maximum of each column */                             \
            memset(y, 0, len * inner * sizeof(T));                                        \
            for (size_t k = 0; k < inner; k++) {                                          \
                size_t at = 0;                                                            \
                for (size_t j = 1; j < len; j++)                                          \
                    if (x[j * inner + k] > x[at * inner + k]) at = j;                     \
                y[at * inner + k] = 1;                                                    \
            }                                                                             \
            return;                                                                       \
        }                                                                                 \
        memcpy(m, x, inner * sizeof(T));                                                  \
        NN_LOOP(k, inner, s[k] = 0);                                                      \
        for (size_t j = 1; j < len; j++) {                                                \
            const T *xj = x + j * inner;                                                  \
            NN_LOOP(k, inner, m[k] = NN_SEL(xj[k] > m[k], xj[k], m[k]));                  \
        }                                                                                 \
        for (size_t j = 0; j < len; j++) {                                                \
            const T *xj = x + j * inner;                                                  \
            T *yj = y + j * inner;                                                        \
            if (SM_IS_SOFTMAX(kind))                                                      \
                NN_LOOP(k, inner, T e = NN_EXP(xj[k] - m[k]); yj[k] = e; s[k] += e);      \
            else                                                                          \
                NN_LOOP(k, inner, s[k] += NN_EXP(xj[k] - m[k]));                          \
        }                                                                                 \
        if (SM_IS_SOFTMAX(kind)) {                                                        \
            NN_LOOP(k, inner, s[k] = (T)1 / s[k]);                                        \
            for (size_t j = 0; j < len; j++) {                                            \
                T *yj = y + j * inner;                                                    \
                NN_LOOP(k, inner, yj[k] *= s[k]);                                         \
            }                                                                             \
        } else {                                                                          \
            for (size_t k = 0; k < inner; k++) s[k] = m[k] + NN_LOG(s[k]);                \
            for (size_t j = 0; j < len; j++) {                                            \
                const T *xj = x + j * inner;                                              \
                T *yj = y + j * inner;                                                    \
                NN_LOOP(k, inner, yj[k] = xj[k] - s[k]);                                  \
            }                                                                             \
        }                                                                                 \
    }

NN_MULTIVERSION(sm_slab_float, (sm_kind kind, const float *restrict x, float *restrict y, size_t len,
                                size_t inner, float *restrict work),
                (kind, x, y, len, inner, work), SM_SLAB_BODY(float))
static void sm_slab_double(sm_kind kind, const double *restrict x, double *restrict y, size_t len,
                           size_t inner, double *restrict work) SM_SLAB_BODY(double)

/* --------------------------------------------------------------- driver */

typedef struct sm_job {
    sm_kind kind;
    int dtype;
    size_t len, inner;      /* slab geometry; slab = len * inner elements */
    const void *x;
    void *y;
    int failed;             /* set when a worker could not get scratch memory */
} sm_job;

static void sm_slabs(void *arg, size_t begin, size_t end) {
    sm_job *j = arg;
    size_t slab = j->len * j->inner;
    bool convert = ONYX_KEEPS_HALVES && j->dtype != ONYX_FLOAT && j->dtype != ONYX_DOUBLE;
    size_t es = j->dtype == ONYX_DOUBLE ? sizeof(double) : sizeof(float);
    const onyx_nn_isa *nn = onyx_cpu_nn();   /* hand-written Softmax rows (ARM64 NEON) or NULL */
    size_t need = (j->inner > 1 ? 2 * j->inner : 0) + (convert ? 2 * slab : 0);
    void *work = NULL;
    if (need) {
        work = malloc(need * es);
        if (!work) {
            __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
            return;
        }
    }
    for (size_t o = begin; o < end; o++) {
        size_t off = o * slab;
        if (ONYX_KEEPS_TYPE(ONYX_DOUBLE) && j->dtype == ONYX_DOUBLE) {
            const double *x = (const double *)j->x + off;
            double *y = (double *)j->y + off;
            if (j->inner == 1) sm_row_double(j->kind, x, y, j->len);
            else sm_slab_double(j->kind, x, y, j->len, j->inner, work);
            continue;
        }
        const float *x = (const float *)j->x + off;
        float *y = (float *)j->y + off;
        float *scratch = work;
        if (convert) {
            float *xin = (float *)work + (j->inner > 1 ? 2 * j->inner : 0);
            nn_load_f32(j->dtype, j->x, off, slab, xin);
            x = xin;
            y = xin + slab;
        }
        if (j->inner == 1 && nn && j->kind == SM_SOFTMAX) nn->softmax_row(x, y, j->len);
        else if (j->inner == 1) sm_row_float(j->kind, x, y, j->len);
        else sm_slab_float(j->kind, x, y, j->len, j->inner, scratch);
        if (convert) nn_store_f32(j->dtype, j->y, off, slab, y);
    }
    free(work);
}

static onyx_status *sm_run(onyx_kernel_ctx *ctx, sm_kind kind) {
    const onyx_value *x = ctx->n_in ? ctx->in[0] : NULL;
    ONYX_TRY(nn_check_float_input(x, "input"));
    int r = x->rank;
    int64_t axis_attr = onyx_attr_int(ctx->node, "axis", ctx->opset < 13 ? 1 : -1);
    size_t outer = 1, len = 1, inner = 1;
    if (ctx->opset < 13) {
        /* coerce to 2-D [prod(dims[:axis]), prod(dims[axis:])]; axis == rank is allowed */
        if (axis_attr < -(int64_t)r || axis_attr > r)
            return ONYX_INVALID_ARG("axis %lld is out of range [%d, %d] for rank %d",
                                    (long long)axis_attr, -r, r, r);
        int axis = (int)(axis_attr < 0 ? axis_attr + r : axis_attr);
        for (int i = 0; i < r; i++) {
            if (i < axis) outer *= (size_t)x->dims[i];
            else len *= (size_t)x->dims[i];
        }
    } else {
        if (r == 0) return ONYX_INVALID_ARG("input must have rank >= 1");
        int axis;
        ONYX_TRY(onyx_normalize_axis(axis_attr, r, &axis));
        for (int i = 0; i < r; i++) {
            if (i < axis) outer *= (size_t)x->dims[i];
            else if (i == axis) len = (size_t)x->dims[i];
            else inner *= (size_t)x->dims[i];
        }
    }
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, x->dtype, x->rank, x->dims, &y));
    if (x->numel == 0) return NULL;
    sm_job job = {kind, x->dtype, len, inner, x->data, y->data, 0};
    size_t slab = len * inner;
    if ((size_t)x->numel < NN_PARALLEL_MIN / 4) sm_slabs(&job, 0, outer);
    else onyx_parallel_for(ctx->tp, outer, nn_grain(slab, NN_PARALLEL_MIN / 8), sm_slabs, &job);
    if (job.failed) return ONYX_OOM();
    return NULL;
}

static onyx_status *softmax_compute(onyx_kernel_ctx *ctx) { return sm_run(ctx, SM_SOFTMAX); }
static onyx_status *log_softmax_compute(onyx_kernel_ctx *ctx) { return sm_run(ctx, SM_LOG_SOFTMAX); }
static onyx_status *hardmax_compute(onyx_kernel_ctx *ctx) { return sm_run(ctx, SM_HARDMAX); }

#define F3 (ONYX_T(ONYX_FLOAT) | ONYX_T(ONYX_DOUBLE) | ONYX_T(ONYX_FLOAT16))
#define F4 (F3 | ONYX_T(ONYX_BFLOAT16))
#define OP(name, from, to, types, fn) \
    {"", name, from, to, types, 0, NULL, NULL, fn}

const onyx_op_def onyx_ops_softmax[] = {
    OP("Softmax", 1, 12, F3, softmax_compute),
    OP("Softmax", 13, ONYX_OPSET_LATEST, F4, softmax_compute),
    OP("LogSoftmax", 1, 12, F3, log_softmax_compute),
    OP("LogSoftmax", 13, ONYX_OPSET_LATEST, F4, log_softmax_compute),
    OP("Hardmax", 1, 12, F3, hardmax_compute),
    OP("Hardmax", 13, ONYX_OPSET_LATEST, F4, hardmax_compute),
    {0},};
