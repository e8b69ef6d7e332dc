/* com.microsoft activations that the graph optimiser's fusions produce,
 * with ONNX Runtime's semantics (so optimised models saved by onyx load in
 * ONNX Runtime and give the same results):
 *
 *   Gelu(X)            Y = 0.5 X (1 + erf(X / sqrt(2)))
 *   BiasGelu(A, B)     Gelu(A + B), B 1-D of A's last dimension
 *   FastGelu(X[, B])   Y = 0.5 V (1 + tanh(0.7978845608 V + 0.0356774081 V^3)),
 *                      V = X (+ B)
 *
 * float runs vectorised (gemm/gemm_gelu.c: a branch-free erf, nn_tanhf); float16 and
 * bfloat16 compute in float row by row; double uses libm. The work is split
 * into rows (the bias length, or fixed chunks without a bias) run on the
 * thread pool. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "providers/cpu/gemm/gemm.h"
#include "providers/cpu/kernel.h"
#include "providers/cpu/kernels/nn_isa.h"
#include "providers/cpu/kernels/nn_math.h"

#define GELU_SQRT1_2 0.70710678118654752440
#define FAST_GELU_A 0.7978845608028654    /* sqrt(2 / pi) */
#define FAST_GELU_B 0.035677408136300125  /* 0.044715 * sqrt(2 / pi) */

typedef enum fz_kind { FZ_GELU, FZ_FAST_GELU } fz_kind;

/* One float row: y = f(x (+ b)), the loops the SGEMM's GELU store uses. */
static void fz_row_float(fz_kind kind, const float *x, const float *b, float *y, size_t n) {
    onyx_gemm_gelu(kind == FZ_FAST_GELU, x, n, b, y, n, 1, n);
}

/* A float row on the dispatch table's hand-written Gelu (ARM64 NEON, the
 * same erf and tanh approximations) where it has one, else the loop above. */
static void fz_row(fz_kind kind, const float *x, const float *b, float *y, size_t n) {
    const onyx_nn_isa *nn = onyx_cpu_nn();
    if (nn) nn->gelu(x, b, y, n, kind == FZ_FAST_GELU);
    else fz_row_float(kind, x, b, y, n);
}

static void fz_row_double(fz_kind kind, const double *restrict x, const double *restrict b,
                          double *restrict y, size_t n) {
    for (size_t i = 0; i < n; i++) {
        double v = x[i] + (b ? b[i] : 0.0);
        if (kind == FZ_GELU) y[i] = 0.5 * v * (1.0 + erf(v * GELU_SQRT1_2));
        else y[i] = 0.5 * v * (1.0 + tanh(v * (FAST_GELU_A + FAST_GELU_B * v * v)));
    }
}

/* Rows of this many elements when there is no bias. */
#define FZ_CHUNK 4096

typedef struct fz_job {
    fz_kind kind;
    int dtype;
    size_t n, row;          /* total elements; row length (bias length or FZ_CHUNK) */
    const void *x;
    void *y;
    const float *bf;        /* bias as float (float family) or NULL */
    const double *bd;       /* bias as double or NULL */
    int failed;
} fz_job;

static void fz_rows(void *arg, size_t begin, size_t end) {
    fz_job *j = arg;
    bool convert = nn_needs_conversion(j->dtype);
    float *buf = NULL;
    if (convert && !(buf = malloc(2 * j->row * sizeof *buf))) {
        __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    for (size_t r = begin; r < end; r++) {
        size_t off = r * j->row, len = j->n - off < j->row ? j->n - off : j->row;
        if (j->dtype == ONYX_DOUBLE) {
            fz_row_double(j->kind, (const double *)j->x + off, j->bd, (double *)j->y + off, len);
        } else if (!convert) {
            fz_row(j->kind, (const float *)j->x + off, j->bf, (float *)j->y + off, len);
        } else {
            nn_load_f32(j->dtype, j->x, off, len, buf);
            fz_row(j->kind, buf, j->bf, buf + j->row, len);
            nn_store_f32(j->dtype, j->y, off, len, buf + j->row);
        }
    }
    free(buf);
}

/* The bias (input 1), if any: a 1-D tensor of X's element type whose length
 * is X's last dimension. */
static onyx_status *fz_check_bias(const onyx_value *x, const onyx_value *b, bool required) {
    if (!b) return required ? ONYX_INVALID_ARG("input B (bias) is required") : NULL;
    if (!onyx_is_tensor(b) || b->dtype != x->dtype)
        return ONYX_INVALID_ARG("bias must be a tensor of the input's element type %s",
                                onyx_dtype_name(x->dtype));
    char sx[200], sb[200];
    if (b->rank != 1 || x->rank < 1 || b->dims[0] != x->dims[x->rank - 1] || b->dims[0] == 0)
        return ONYX_INVALID_ARG("bias %s must be 1-D with the input's last dimension (input %s)",
                                onyx_shape_str(b->dims, b->rank, sb, sizeof sb),
                                onyx_shape_str(x->dims, x->rank, sx, sizeof sx));
    return NULL;
}

static onyx_status *fz_run(onyx_kernel_ctx *ctx, fz_kind kind, bool bias_required) {
    const onyx_value *x = ctx->n_in ? ctx->in[0] : NULL, *b = ctx->n_in > 1 ? ctx->in[1] : NULL;
    ONYX_TRY(nn_check_float_input(x, "X"));
    ONYX_TRY(fz_check_bias(x, b, bias_required));
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, x->dtype, x->rank, x->dims, &y));
    if (x->numel == 0) return NULL;
    fz_job j = {.kind = kind, .dtype = x->dtype, .n = (size_t)x->numel, .row = b ? (size_t)b->numel : FZ_CHUNK,
                .x = x->data, .y = y->data};
    float *bf = NULL;
    if (b && x->dtype == ONYX_DOUBLE) {
        j.bd = b->data;
    } else if (b) {
        if (!(bf = nn_tensor_to_f32(b))) return ONYX_OOM();
        j.bf = bf;
    }
    size_t rows = (j.n + j.row - 1) / j.row;
    if (j.n < NN_PARALLEL_MIN) fz_rows(&j, 0, rows);
    else onyx_parallel_for(ctx->tp, rows, nn_grain(j.row, NN_PARALLEL_MIN / 4), fz_rows, &j);
    free(bf);
    return j.failed ? ONYX_OOM() : NULL;
}

static onyx_status *gelu_compute(onyx_kernel_ctx *ctx) { return fz_run(ctx, FZ_GELU, false); }
static onyx_status *bias_gelu_compute(onyx_kernel_ctx *ctx) { return fz_run(ctx, FZ_GELU, true); }
static onyx_status *fast_gelu_compute(onyx_kernel_ctx *ctx) { return fz_run(ctx, FZ_FAST_GELU, false); }

#define F4 (ONYX_T(ONYX_FLOAT) | ONYX_T(ONYX_DOUBLE) | ONYX_T(ONYX_FLOAT16) | ONYX_T(ONYX_BFLOAT16))
#define MS(name, fn) \
    {"com.microsoft", name, 1, ONYX_OPSET_LATEST, F4, 0, NULL, NULL, fn}

const onyx_op_def onyx_ops_contrib[] = {
    MS("Gelu", gelu_compute),
    MS("BiasGelu", bias_gelu_compute),
    MS("FastGelu", fast_gelu_compute),
    {0},};
