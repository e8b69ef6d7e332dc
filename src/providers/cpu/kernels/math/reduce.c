/* Reductions: ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/SumSquare,
 * ArgMax and ArgMin.
 *
 * Each Reduce* op is (element map, combine, finish): e.g. ReduceL2 is
 * (x^2, +, sqrt). The input's dims are grouped into alternating runs of
 * kept and reduced dims (size-1 dims dropped, neighbours with the same role
 * merged), so any axes set becomes rows of the innermost run: either a
 * contiguous row folded into one output (innermost reduced) or a row added
 * elementwise into a slice of outputs (innermost kept). Both are
 * vectorisable loops; an odometer over the outer runs picks the output.
 *
 * Accumulators: double for float types (float16/bfloat16 converted to
 * float first) and for the integer ops whose result is not an integer
 * operation (Mean, L2, LogSum, LogSumExp); the native type, wrapping like
 * two's complement, for integer Sum/Prod/L1/SumSquare/Max/Min (bool as
 * uint8 for Max/Min).
 * Reducing an empty set gives the combine's identity run through finish:
 * 0, 1, -inf/+inf (type min/max for integers), NaN for Mean, -inf for the
 * logarithms. ReduceLogSumExp first reduces the maximum and shifts by it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "providers/cpu/kernel.h"
#include "providers/cpu/kernels/minimal_keep.h"
#include "providers/cpu/kernels/nn_math.h"

typedef enum red_pre { PRE_ID, PRE_ABS, PRE_SQ, PRE_EXP } red_pre;
typedef enum red_comb { COMB_ADD, COMB_MUL, COMB_MAX, COMB_MIN } red_comb;
typedef enum red_post { POST_NONE, POST_MEAN, POST_SQRT, POST_LOG, POST_LOGSHIFT } red_post;

typedef struct red_op {
    red_pre pre;
    red_comb comb;
    red_post post;
    int axes_input_since;     /* opset from which axes is an input instead of an attribute */
} red_op;

/* acc = comb(acc, fold of pre(x[0..n))) for one output (row), or
 * acc[k] = comb(acc[k], pre(x[k])) for n outputs (vec). shift: the
 * LogSumExp shift(s), or NULL. */
typedef void (*red_fn)(void *acc, const void *x, size_t n, const void *shift);

typedef struct red_kit {
    red_fn row, vec;
} red_kit;

/* ------------------------------------------------- float / double kernels */

#define F_ID(v, s) (v)
#define F_ABS(v, s) NN_FABS(v)
#define F_SQ(v, s) ((v) * (v))
#define F_EXP(v, s) NN_EXP((v) - (s))
#define C_ADD(a, b) ((a) + (b))
#define C_MUL(a, b) ((a) * (b))
#define C_MAX(a, b) NN_SEL((b) > (a), (b), (a))
#define C_MIN(a, b) NN_SEL((b) < (a), (b), (a))

/* x elements of type XT folded into double accumulators: float data keeps
 * double-precision sums (the reference sums float32 pairwise; NN_VL float
 * lanes would drift on long rows with cancellation). */
#define FRED(XT, name, PRE, COMB, IDENT)                                                 \
    static void row_##name##_##XT(void *accp, const void *xp, size_t n, const void *shp) {\
        double *acc = accp;                                                              \
        const XT *restrict x = xp;                                                       \
        const XT s = shp ? (XT) * (const double *)shp : (XT)0;                           \
        (void)s;                                                                         \
        double lane[NN_VL];                                                              \
        for (size_t j = 0; j < NN_VL; j++) lane[j] = (IDENT);                            \
        size_t i = 0;                                                                    \
        for (; i + NN_VL <= n; i += NN_VL)                                               \
            for (size_t j = 0; j < NN_VL; j++)                                           \
                lane[j] = COMB(lane[j], (double)PRE(x[i + j], s));                       \
        double r = *acc;                                                                 \
        for (size_t j = 0; j < NN_VL; j++) r = COMB(r, lane[j]);                         \
        for (; i < n; i++) r = COMB(r, (double)PRE(x[i], s));                            \
        *acc = r;                                                                        \
    }                                                                                    \
    static void vec_##name##_##XT(void *accp, const void *xp, size_t n, const void *shp) {\
        double *restrict acc = accp;                                                     \
        const XT *restrict x = xp;                                                       \
        const double *restrict s = shp;                                                  \
        (void)s;                                                                         \
        NN_LOOP(k, n, acc[k] = COMB(acc[k], (double)PRE(x[k], (XT)s[k])));               \
    }

#define FKIT(T)                                                        \
    FRED(T, id_add, F_ID, C_ADD, 0)                                    \
    FRED(T, abs_add, F_ABS, C_ADD, 0)                                  \
    FRED(T, sq_add, F_SQ, C_ADD, 0)                                    \
    FRED(T, exp_add, F_EXP, C_ADD, 0)                                  \
    FRED(T, id_mul, F_ID, C_MUL, 1)                                    \
    FRED(T, id_max, F_ID, C_MAX, -INFINITY)                            \
    FRED(T, id_min, F_ID, C_MIN, INFINITY)                             \
    static bool kit_##T(red_pre pre, red_comb comb, red_kit *k) {      \
        switch (comb * 4 + pre) {                                      \
        case COMB_ADD * 4 + PRE_ID: *k = (red_kit){row_id_add_##T, vec_id_add_##T}; return true;   \
        case COMB_ADD * 4 + PRE_ABS: *k = (red_kit){row_abs_add_##T, vec_abs_add_##T}; return true; \
        case COMB_ADD * 4 + PRE_SQ: *k = (red_kit){row_sq_add_##T, vec_sq_add_##T}; return true;   \
        case COMB_ADD * 4 + PRE_EXP: *k = (red_kit){row_exp_add_##T, vec_exp_add_##T}; return true; \
        case COMB_MUL * 4 + PRE_ID: *k = (red_kit){row_id_mul_##T, vec_id_mul_##T}; return true;   \
        case COMB_MAX * 4 + PRE_ID: *k = (red_kit){row_id_max_##T, vec_id_max_##T}; return true;   \
        case COMB_MIN * 4 + PRE_ID: *k = (red_kit){row_id_min_##T, vec_id_min_##T}; return true;   \
        default: return false;                                         \
        }                                                              \
    }
FKIT(float)
FKIT(double)

/* ------------------------------------------------------- integer kernels */

/* (C type, dtype, lowest, highest, negative test) */
#define RED_INT_TYPES(X)                                            \
    X(int8_t, ONYX_INT8, INT8_MIN, INT8_MAX, SNEG)                  \
    X(uint8_t, ONYX_UINT8, 0, UINT8_MAX, UNEG)                      \
    X(int16_t, ONYX_INT16, INT16_MIN, INT16_MAX, SNEG)              \
    X(uint16_t, ONYX_UINT16, 0, UINT16_MAX, UNEG)                   \
    X(int32_t, ONYX_INT32, INT32_MIN, INT32_MAX, SNEG)              \
    X(uint32_t, ONYX_UINT32, 0, UINT32_MAX, UNEG)                   \
    X(int64_t, ONYX_INT64, INT64_MIN, INT64_MAX, SNEG)              \
    X(uint64_t, ONYX_UINT64, 0, UINT64_MAX, UNEG)
#define SNEG(v) ((v) < 0)
#define UNEG(v) ((void)(v), 0)

/* Arithmetic through uint64_t wraps instead of overflowing (signed
 * overflow is undefined, and small types promote to int). */
#define IRED(T, name, PRE, COMB)                                                         \
    static void row_##name##_##T(void *accp, const void *xp, size_t n, const void *shp) {\
        (void)shp;                                                                       \
        T *acc = accp;                                                                   \
        const T *x = xp;                                                                 \
        T r = *acc;                                                                      \
        for (size_t i = 0; i < n; i++) r = COMB(T, r, PRE(T, x[i]));                     \
        *acc = r;                                                                        \
    }                                                                                    \
    static void vec_##name##_##T(void *accp, const void *xp, size_t n, const void *shp) {\
        (void)shp;                                                                       \
        T *restrict acc = accp;                                                          \
        const T *restrict x = xp;                                                        \
        for (size_t k = 0; k < n; k++) acc[k] = COMB(T, acc[k], PRE(T, x[k]));           \
    }
#define I_ID(T, v) (v)
#define I_ABS_S(T, v) ((v) < 0 ? (T)(0 - (uint64_t)(v)) : (v))
#define I_SQ(T, v) ((T)((uint64_t)(v) * (uint64_t)(v)))
#define I_ADD(T, a, b) ((T)((uint64_t)(a) + (uint64_t)(b)))
#define I_MUL(T, a, b) ((T)((uint64_t)(a) * (uint64_t)(b)))
#define I_MAX(T, a, b) ((b) > (a) ? (b) : (a))
#define I_MIN(T, a, b) ((b) < (a) ? (b) : (a))

#define IKIT(T, DT, LO, HI, NEG)                                                    \
    IRED(T, id_add, I_ID, I_ADD)                                                    \
    IRED(T, abs_add, IKIT_ABS_##NEG, I_ADD)                                         \
    IRED(T, sq_add, I_SQ, I_ADD)                                                    \
    IRED(T, id_mul, I_ID, I_MUL)                                                    \
    IRED(T, id_max, I_ID, I_MAX)                                                    \
    IRED(T, id_min, I_ID, I_MIN)
#define IKIT_ABS_SNEG I_ABS_S
#define IKIT_ABS_UNEG I_ID
RED_INT_TYPES(IKIT)

static bool kit_int(int dtype, red_pre pre, red_comb comb, red_kit *k) {
    switch (dtype) {
#define CASE(T, DT, LO, HI, NEG)                                                              \
    case DT:                                                                                  \
        switch (comb * 4 + pre) {                                                             \
        case COMB_ADD * 4 + PRE_ID: *k = (red_kit){row_id_add_##T, vec_id_add_##T}; return true;   \
        case COMB_ADD * 4 + PRE_ABS: *k = (red_kit){row_abs_add_##T, vec_abs_add_##T}; return true; \
        case COMB_ADD * 4 + PRE_SQ: *k = (red_kit){row_sq_add_##T, vec_sq_add_##T}; return true;   \
        case COMB_MUL * 4 + PRE_ID: *k = (red_kit){row_id_mul_##T, vec_id_mul_##T}; return true;   \
        case COMB_MAX * 4 + PRE_ID: *k = (red_kit){row_id_max_##T, vec_id_max_##T}; return true;   \
        case COMB_MIN * 4 + PRE_ID: *k = (red_kit){row_id_min_##T, vec_id_min_##T}; return true;   \
        default: return false;                                                                \
        }
        RED_INT_TYPES(CASE)
#undef CASE
    default: return false;
    }
}

/* Fill n accumulators of an integer type with the combine's identity. */
static void int_identity(int dtype, red_comb comb, void *acc, size_t n) {
    switch (dtype) {
#define CASE(T, DT, LO, HI, NEG)                                                  \
    case DT: {                                                                    \
        T v = comb == COMB_MUL ? (T)1 : comb == COMB_MAX ? (T)(LO)                \
            : comb == COMB_MIN ? (T)(HI) : (T)0;                                  \
        for (size_t i = 0; i < n; i++) ((T *)acc)[i] = v;                         \
        break;                                                                    \
    }
        RED_INT_TYPES(CASE)
#undef CASE
    default: break;
    }
}

/* ------------------------------------------------------------------- plan */

typedef struct red_plan {
    int ng;                              /* runs of kept / reduced dims */
    int64_t gsize[ONYX_MAX_RANK];
    bool gred[ONYX_MAX_RANK];
    int64_t gostride[ONYX_MAX_RANK];     /* output stride of kept runs, 0 for reduced */
    size_t inner;                        /* elements in the innermost run (a row) */
    bool inner_red;
    size_t rows;                         /* numel / inner */
    size_t out_n;
    double count;                        /* elements folded into each output */
} red_plan;

static void plan_make(const onyx_value *x, const bool *reduced, red_plan *P) {
    memset(P, 0, sizeof *P);
    P->count = 1;
    for (int i = 0; i < x->rank; i++) {
        int64_t d = x->dims[i];
        if (reduced[i]) P->count *= (double)d;
        if (d == 1) continue;
        if (P->ng > 0 && P->gred[P->ng - 1] == reduced[i]) {
            P->gsize[P->ng - 1] *= d;
            continue;
        }
        P->gsize[P->ng] = d;
        P->gred[P->ng] = reduced[i];
        P->ng++;
    }
    if (P->ng == 0) {
        P->ng = 1;
        P->gsize[0] = 1;
        P->gred[0] = false;
    }
    int64_t s = 1;
    for (int g = P->ng - 1; g >= 0; g--) {
        P->gostride[g] = P->gred[g] ? 0 : s;
        if (!P->gred[g]) s *= P->gsize[g];
    }
    P->out_n = (size_t)s;
    P->inner = (size_t)P->gsize[P->ng - 1];
    P->inner_red = P->gred[P->ng - 1];
    P->rows = P->inner ? (size_t)x->numel / P->inner : 0;
}

/* ----------------------------------------------------------------- driver */

enum { CONV_NONE, CONV_F32, CONV_F64 };
#define RED_CHUNK 2048

typedef struct red_job {
    const red_plan *P;
    red_kit kit;
    size_t xes, aes;         /* element sizes of the (converted) data and the accumulators */
    int dtype, conv;
    const void *x;
    char *acc;
    const char *shift;       /* per-output shift (compute type) or NULL */
    size_t rows_per_unit;
    int failed;
} red_job;

/* Rows [r0, r1) in order; output base from the odometer over the outer runs. */
static void red_units(void *arg, size_t begin, size_t end) {
    red_job *j = arg;
    const red_plan *P = j->P;
    size_t r0 = begin * j->rows_per_unit, r1 = end * j->rows_per_unit;
    if (r1 > P->rows) r1 = P->rows;
    if (r0 >= r1) return;
    void *buf = NULL;
    if (j->conv != CONV_NONE) {
        buf = malloc(RED_CHUNK * j->xes);
        if (!buf) {
            __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
            return;
        }
    }
    int outer = P->ng - 1;
    int64_t idx[ONYX_MAX_RANK] = {0};
    size_t rem = r0, base = 0;
    for (int g = outer - 1; g >= 0; g--) {
        idx[g] = (int64_t)(rem % (size_t)P->gsize[g]);
        rem /= (size_t)P->gsize[g];
        base += (size_t)(idx[g] * P->gostride[g]);
    }
    size_t chunk = j->conv == CONV_NONE ? P->inner : RED_CHUNK;
    for (size_t r = r0; r < r1; r++) {
        size_t xoff = r * P->inner;
        for (size_t c = 0; c < P->inner; c += chunk) {
            size_t n = P->inner - c < chunk ? P->inner - c : chunk;
            const void *xs;
            if (j->conv == CONV_F32) {
                nn_load_f32(j->dtype, j->x, xoff + c, n, buf);
                xs = buf;
            } else if (j->conv == CONV_F64) {
                for (size_t i = 0; i < n; i++)
                    ((double *)buf)[i] = onyx_load_as_double(j->dtype, j->x, (int64_t)(xoff + c + i));
                xs = buf;
            } else {
                xs = (const char *)j->x + (xoff + c) * j->xes;
            }
            if (P->inner_red) {
                j->kit.row(j->acc + base * j->aes, xs, n,
                           j->shift ? j->shift + base * j->aes : NULL);
            } else {
                j->kit.vec(j->acc + (base + c) * j->aes, xs, n,
                           j->shift ? j->shift + (base + c) * j->aes : NULL);
            }
        }
        /* advance the odometer */
        for (int g = outer - 1; g >= 0; g--) {
            base += (size_t)P->gostride[g];
            if (++idx[g] < P->gsize[g]) break;
            base -= (size_t)(P->gostride[g] * P->gsize[g]);
            idx[g] = 0;
        }
    }
    free(buf);
}

/* Run one fold of x into acc (already holding the identity). */
static onyx_status *red_fold(onyx_kernel_ctx *ctx, const red_plan *P, const onyx_value *x,
                             red_kit kit, size_t xes, size_t aes, int conv, void *acc,
                             const void *shift) {
    if (x->numel == 0 || P->rows == 0) return NULL;
    red_job job = {P, kit, xes, aes, x->dtype, conv, x->data, acc, shift, P->rows, 0};
    size_t units = 1;
    /* distinct values of the outermost run own disjoint outputs when it is kept */
    if (P->ng >= 2 && !P->gred[0] && (size_t)x->numel >= NN_PARALLEL_MIN) {
        units = (size_t)P->gsize[0];
        job.rows_per_unit = P->rows / units;
    }
    if (units == 1) red_units(&job, 0, 1);
    else onyx_parallel_for(ctx->tp, units, nn_grain((size_t)x->numel / units, NN_PARALLEL_MIN / 4),
                           red_units, &job);
    return job.failed ? ONYX_OOM() : NULL;
}

/* ---------------------------------------------------------------- Reduce* */

static onyx_status *red_axes(onyx_kernel_ctx *ctx, const red_op *op, const onyx_value *x,
                             bool *reduced, bool *noop) {
    int64_t *axes = NULL, n = 0;
    bool from_input = ctx->opset >= op->axes_input_since;
    if (from_input) {
        const onyx_value *a = ctx->n_in > 1 ? ctx->in[1] : NULL;
        if (a) {
            if (a->rank > 1) return ONYX_INVALID_ARG("input axes must be 1-D, got rank %d", a->rank);
            ONYX_TRY(onyx_read_int_tensor(a, &axes, &n));
        }
    } else {
        size_t cnt;
        const int64_t *v = onyx_attr_ints(ctx->node, "axes", &cnt);
        if (v) {
            axes = malloc((cnt + 1) * sizeof(int64_t));
            if (!axes) return ONYX_OOM();
            memcpy(axes, v, cnt * sizeof(int64_t));
            n = (int64_t)cnt;
        }
    }
    *noop = false;
    for (int i = 0; i < x->rank; i++) reduced[i] = n == 0;
    if (n == 0) {
        bool noop_attr = from_input && onyx_attr_int(ctx->node, "noop_with_empty_axes", 0) != 0;
        *noop = noop_attr;
        free(axes);
        return NULL;
    }
    onyx_status *st = NULL;
    for (int64_t i = 0; i < n && !st; i++) {
        int a;
        st = onyx_normalize_axis(axes[i], x->rank, &a);
        if (!st && reduced[a]) st = ONYX_INVALID_ARG("axes repeats axis %d", a);
        if (!st) reduced[a] = true;
    }
    free(axes);
    return st;
}

/* Finish the accumulators (double, or the native integer type) into y. */
static void red_finish(const red_op *op, const red_plan *P, bool native, void *acc,
                       const double *shift, onyx_value *y) {
    size_t n = P->out_n;
    if (native) {
        memcpy(y->data, acc, n * (onyx_dtype(y->dtype == ONYX_BOOL ? ONYX_UINT8 : y->dtype)->bits / 8));
        return;
    }
    double *a = acc;
    for (size_t i = 0; i < n; i++) {
        switch (op->post) {
        case POST_MEAN: a[i] /= P->count; break;
        case POST_SQRT: a[i] = sqrt(a[i]); break;
        case POST_LOG: a[i] = log(a[i]); break;
        case POST_LOGSHIFT: a[i] = log(a[i]) + shift[i]; break;
        default: break;
        }
    }
    if (y->dtype == ONYX_DOUBLE) memcpy(y->data, a, n * sizeof(double));
    else if (y->dtype == ONYX_FLOAT) for (size_t i = 0; i < n; i++) ((float *)y->data)[i] = (float)a[i];
    else for (size_t i = 0; i < n; i++) onyx_store_from_double(y->dtype, y->data, (int64_t)i, a[i]);
}

static onyx_status *red_run(onyx_kernel_ctx *ctx, const red_op *op) {
    const onyx_value *x = ctx->n_in ? ctx->in[0] : NULL;
    if (!onyx_is_tensor(x)) return ONYX_INVALID_ARG("input data is missing or not a tensor");
    int dt = x->dtype;
    bool is_int = dt == ONYX_BOOL || onyx_dtype(dt)->is_integer;
    if (!nn_is_float_family(dt) && !is_int)
        return ONYX_INVALID_ARG("input data has unsupported element type %s", onyx_dtype_name(dt));
    bool reduced[ONYX_MAX_RANK], noop = false;
    ONYX_TRY(red_axes(ctx, op, x, reduced, &noop));
    onyx_value *y;
    if (noop) {
        ONYX_TRY(onyx_kernel_output(ctx, 0, dt, x->rank, x->dims, &y));
        size_t nb;
        if (!onyx_dtype_nbytes(dt, x->numel, &nb)) return ONYX_INVALID_ARG("input too large");
        if (nb) memcpy(y->data, x->data, nb);
        return NULL;
    }
    bool keepdims = onyx_attr_int(ctx->node, "keepdims", 1) != 0;
    int64_t ydims[ONYX_MAX_RANK];
    int yr = 0;
    for (int i = 0; i < x->rank; i++) {
        if (!reduced[i]) ydims[yr++] = x->dims[i];
        else if (keepdims) ydims[yr++] = 1;
    }
    ONYX_TRY(onyx_kernel_output(ctx, 0, dt, yr, ydims, &y));
    red_plan P;
    plan_make(x, reduced, &P);
    if (P.out_n == 0) return NULL;

    /* data layout the kernels see, accumulator type, kernels */
    bool native = is_int && op->post == POST_NONE;
    int itype = dt == ONYX_BOOL ? ONYX_UINT8 : dt;
    int conv = CONV_NONE;
    size_t xes, aes = sizeof(double);
    red_kit kit, maxkit;
    bool ok;
    if (native) {
        xes = aes = onyx_dtype(itype)->bits / 8;
        ok = kit_int(itype, op->pre, op->comb, &kit);
    } else if (dt == ONYX_DOUBLE || is_int) {
        conv = is_int ? CONV_F64 : CONV_NONE;
        xes = sizeof(double);
        ok = kit_double(op->pre, op->comb, &kit);
        kit_double(PRE_ID, COMB_MAX, &maxkit);
    } else {
        conv = nn_needs_conversion(dt) ? CONV_F32 : CONV_NONE;
        xes = sizeof(float);
        ok = kit_float(op->pre, op->comb, &kit);
        kit_float(PRE_ID, COMB_MAX, &maxkit);
    }
    if (!ok) return ONYX_NOT_IMPLEMENTED("reduction not available for element type %s", onyx_dtype_name(dt));
    char *acc = malloc((P.out_n + 1) * aes);
    double *shift = NULL;
    if (!acc) return ONYX_OOM();
    onyx_status *st = NULL;
    if (op->pre == PRE_EXP && !native) {
        /* LogSumExp: shift by the maximum (0 where it is not finite) */
        shift = malloc((P.out_n + 1) * sizeof(double));
        if (!shift) {
            st = ONYX_OOM();
            goto done;
        }
        for (size_t i = 0; i < P.out_n; i++) shift[i] = -INFINITY;
        if ((st = red_fold(ctx, &P, x, maxkit, xes, aes, conv, shift, NULL))) goto done;
        for (size_t i = 0; i < P.out_n; i++)
            if (!isfinite(shift[i])) shift[i] = 0;
    }
    if (native) {
        int_identity(itype, op->comb, acc, P.out_n);
        if (dt == ONYX_BOOL && op->comb == COMB_MIN) memset(acc, 1, P.out_n);  /* all of nothing is true */
    } else {
        double ident = op->comb == COMB_MUL ? 1.0 : op->comb == COMB_MAX ? -INFINITY
                     : op->comb == COMB_MIN ? INFINITY : 0.0;
        for (size_t i = 0; i < P.out_n; i++) ((double *)acc)[i] = ident;
    }
    if ((st = red_fold(ctx, &P, x, kit, xes, aes, conv, acc, shift))) goto done;
    red_finish(op, &P, native, acc, shift, y);
done:
    free(acc);
    free(shift);
    return st;
}

static const red_op RED_SUM = {PRE_ID, COMB_ADD, POST_NONE, 13};
static const red_op RED_MEAN = {PRE_ID, COMB_ADD, POST_MEAN, 18};
static const red_op RED_MAX = {PRE_ID, COMB_MAX, POST_NONE, 18};
static const red_op RED_MIN = {PRE_ID, COMB_MIN, POST_NONE, 18};
static const red_op RED_PROD = {PRE_ID, COMB_MUL, POST_NONE, 18};
static const red_op RED_L1 = {PRE_ABS, COMB_ADD, POST_NONE, 18};
static const red_op RED_L2 = {PRE_SQ, COMB_ADD, POST_SQRT, 18};
static const red_op RED_LOGSUM = {PRE_ID, COMB_ADD, POST_LOG, 18};
static const red_op RED_LOGSUMEXP = {PRE_EXP, COMB_ADD, POST_LOGSHIFT, 18};
static const red_op RED_SUMSQ = {PRE_SQ, COMB_ADD, POST_NONE, 18};

#define RED_COMPUTE(fn, op) \
    static onyx_status *fn(onyx_kernel_ctx *ctx) { return red_run(ctx, &op); }
RED_COMPUTE(reduce_sum_compute, RED_SUM)
RED_COMPUTE(reduce_mean_compute, RED_MEAN)
RED_COMPUTE(reduce_max_compute, RED_MAX)
RED_COMPUTE(reduce_min_compute, RED_MIN)
RED_COMPUTE(reduce_prod_compute, RED_PROD)
RED_COMPUTE(reduce_l1_compute, RED_L1)
RED_COMPUTE(reduce_l2_compute, RED_L2)
RED_COMPUTE(reduce_log_sum_compute, RED_LOGSUM)
RED_COMPUTE(reduce_log_sum_exp_compute, RED_LOGSUMEXP)
RED_COMPUTE(reduce_sum_square_compute, RED_SUMSQ)

/* Output shape when the axes are known (attribute or constant input). */
/* --------------------------------------------------------- ArgMax/ArgMin */

/* Index of the first (or last) maximum / minimum along len with stride inner. */
#define ARG_IMPL(T)                                                                        \
    static void arg_##T(const T *restrict x, int64_t *restrict y, size_t outer, size_t len, \
                        size_t inner, bool is_max, bool last) {                            \
        for (size_t o = 0; o < outer; o++)                                                 \
            for (size_t k = 0; k < inner; k++) {                                           \
                const T *xs = x + o * len * inner + k;                                     \
                size_t at = 0;                                                             \
                T best = xs[0];                                                            \
                for (size_t j = 1; j < len; j++) {                                         \
                    T v = xs[j * inner];                                                   \
                    bool better = is_max ? (last ? v >= best : v > best)                   \
                                         : (last ? v <= best : v < best);                  \
                    if (better) {                                                          \
                        best = v;                                                          \
                        at = j;                                                            \
                    }                                                                      \
                }                                                                          \
                y[o * inner + k] = (int64_t)at;                                            \
            }                                                                              \
    }
ARG_IMPL(float)
ARG_IMPL(double)
#define ARG_INT(T, DT, LO, HI, NEG) ARG_IMPL(T)
RED_INT_TYPES(ARG_INT)

static onyx_status *arg_run(onyx_kernel_ctx *ctx, bool is_max) {
    const onyx_value *x = ctx->n_in ? ctx->in[0] : NULL;
    if (!onyx_is_tensor(x)) return ONYX_INVALID_ARG("input data is missing or not a tensor");
    int dt = x->dtype;
    ONYX_CHECK_KEPT_TYPE(dt, "data");
    if (!nn_is_float_family(dt) && !onyx_dtype(dt)->is_integer)
        return ONYX_INVALID_ARG("input data has unsupported element type %s", onyx_dtype_name(dt));
    if (x->rank == 0) return ONYX_INVALID_ARG("input data must have rank >= 1");
    int axis;
    ONYX_TRY(onyx_normalize_axis(onyx_attr_int(ctx->node, "axis", 0), x->rank, &axis));
    bool keepdims = onyx_attr_int(ctx->node, "keepdims", 1) != 0;
    bool last = ctx->opset >= 12 && onyx_attr_int(ctx->node, "select_last_index", 0) != 0;
    size_t outer = 1, len = (size_t)x->dims[axis], inner = 1;
    int64_t ydims[ONYX_MAX_RANK];
    int yr = 0;
    for (int i = 0; i < x->rank; i++) {
        if (i < axis) outer *= (size_t)x->dims[i];
        if (i > axis) inner *= (size_t)x->dims[i];
        if (i != axis) ydims[yr++] = x->dims[i];
        else if (keepdims) ydims[yr++] = 1;
    }
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, ONYX_INT64, yr, ydims, &y));
    if (outer * inner == 0) return NULL;
    if (len == 0) return ONYX_INVALID_ARG("cannot take %s over axis %d of size 0", is_max ? "ArgMax" : "ArgMin", axis);
    switch (dt) {
    case ONYX_FLOAT: arg_float(x->data, y->data, outer, len, inner, is_max, last); break;
    case ONYX_DOUBLE:
        if (ONYX_KEEPS_TYPE(ONYX_DOUBLE)) arg_double(x->data, y->data, outer, len, inner, is_max, last);
        break;
#define CASE(T, DT, LO, HI, NEG) \
    case DT: if (ONYX_KEEPS_TYPE(DT)) arg_##T(x->data, y->data, outer, len, inner, is_max, last); break;
        RED_INT_TYPES(CASE)
#undef CASE
    default: {
        if (!ONYX_KEEPS_HALVES) break;   /* the registry refused them */
        float *tmp = nn_tensor_to_f32(x);
        if (!tmp) return ONYX_OOM();
        arg_float(tmp, y->data, outer, len, inner, is_max, last);
        free(tmp);
    }
    }
    return NULL;
}

static onyx_status *argmax_compute(onyx_kernel_ctx *ctx) { return arg_run(ctx, true); }
static onyx_status *argmin_compute(onyx_kernel_ctx *ctx) { return arg_run(ctx, false); }

/* ------------------------------------------------------------------ table */

#define L ONYX_OPSET_LATEST
#define F3 (ONYX_T(ONYX_FLOAT) | ONYX_T(ONYX_DOUBLE) | ONYX_T(ONYX_FLOAT16))
#define BF ONYX_T(ONYX_BFLOAT16)
#define RI (ONYX_T(ONYX_INT32) | ONYX_T(ONYX_INT64) | ONYX_T(ONYX_UINT32) | ONYX_T(ONYX_UINT64))
#define I8 (ONYX_T(ONYX_INT8) | ONYX_T(ONYX_UINT8))
#define R1 (F3 | RI)           /* opset 1..12 */
#define R13 (F3 | BF | RI)     /* 13+ */
#define OP(name, from, to, types, fn) {"", name, from, to, types, 0, NULL, NULL, fn}
/* the eight ops that share the 1 / 11 / 13 / 18 history */
#define RED_FAMILY(name, fn)                  \
    OP(name, 1, 12, R1, fn),                  \
    OP(name, 13, L, R13, fn)

const onyx_op_def onyx_ops_reduce[] = {
    RED_FAMILY("ReduceSum", reduce_sum_compute),
    RED_FAMILY("ReduceMean", reduce_mean_compute),
    RED_FAMILY("ReduceProd", reduce_prod_compute),
    RED_FAMILY("ReduceL1", reduce_l1_compute),
    RED_FAMILY("ReduceL2", reduce_l2_compute),
    RED_FAMILY("ReduceLogSum", reduce_log_sum_compute),
    RED_FAMILY("ReduceLogSumExp", reduce_log_sum_exp_compute),
    RED_FAMILY("ReduceSumSquare", reduce_sum_square_compute),
    OP("ReduceMax", 1, 11, R1, reduce_max_compute),
    OP("ReduceMax", 12, 12, R1 | I8, reduce_max_compute),
    OP("ReduceMax", 13, 19, R13 | I8, reduce_max_compute),
    OP("ReduceMax", 20, L, R13 | I8 | ONYX_T(ONYX_BOOL), reduce_max_compute),
    OP("ReduceMin", 1, 11, R1, reduce_min_compute),
    OP("ReduceMin", 12, 12, R1 | I8, reduce_min_compute),
    OP("ReduceMin", 13, 19, R13 | I8, reduce_min_compute),
    OP("ReduceMin", 20, L, R13 | I8 | ONYX_T(ONYX_BOOL), reduce_min_compute),
    OP("ArgMax", 1, 12, F3 | ONYX_T_INTS, argmax_compute),
    OP("ArgMax", 13, L, F3 | BF | ONYX_T_INTS, argmax_compute),
    OP("ArgMin", 1, 12, F3 | ONYX_T_INTS, argmin_compute),
    OP("ArgMin", 13, L, F3 | BF | ONYX_T_INTS, argmin_compute),
    {0},};
