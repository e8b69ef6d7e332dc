/* Signal processing: DFT (opset 17: axis attribute; opset 20: axis input),
 * STFT, the HannWindow / HammingWindow / BlackmanWindow generators and
 * MelWeightMatrix.
 *
 * Transforms run on the mixed-radix / Bluestein FFT of signal_fft.h, one
 * line (one signal along the axis, one STFT frame) per task of the thread
 * pool. The working precision is the one of the reference (numpy >= 2,
 * whose rounding the conformance outputs carry, to the point that a value
 * that is zero in exact arithmetic may be 1.9e-7 there): a complex signal
 * ([..., 2]) is transformed at its own precision, float for float,
 * float16 and bfloat16 (numpy's complex64), double for double; a real
 * signal ([..., 1]) in double, as numpy promotes real arrays passed to its
 * complex FFT. The inverse scales by 1/N rounded to the working precision,
 * as the reference does.
 *
 * Real input ([..., 1]) is a complex signal with zero imaginary part. The
 * one-sided forward transform (RFFT) returns bins 0 .. N/2; the one-sided
 * inverse (IRFFT) extends bins 0 .. N/2 of its input by conjugate symmetry
 * to the full spectrum and returns the real part, N = dft_length or
 * 2 * (bins - 1). */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "core/checked.h"
#include "core/dtype_ext.h"
#include "providers/cpu/kernel.h"
#include "ir/schemas/signal.h"

#define L ONYX_OPSET_LATEST
#define SIG_FLOATS (ONYX_T(ONYX_FLOAT) | ONYX_T(ONYX_DOUBLE) | ONYX_T(ONYX_FLOAT16) | ONYX_T(ONYX_BFLOAT16))

/* ------------------------------------------------------------ FFT helpers (precision-independent) */

/* exp(2 pi i idx / n) in double, reduced to the first octant so that the
 * argument of cos/sin stays small (exact symmetries, no loss near pi). */
static void fft_unit_root(size_t idx, size_t n, double *c, double *s) {
    const double ang = 0.25 * M_PI / (double)n;
    size_t x = (idx % n) << 3;   /* angle in units of pi / (4n) */
    double sign_s = 1;
    if (x >= 4 * n) {            /* lower half: conjugate of the mirror */
        x = 8 * n - x;
        sign_s = -1;
    }
    if (x < 2 * n) {
        if (x < n) {
            *c = cos((double)x * ang);
            *s = sin((double)x * ang);
        } else {
            *c = sin((double)(2 * n - x) * ang);
            *s = cos((double)(2 * n - x) * ang);
        }
    } else {
        x -= 2 * n;
        if (x < n) {
            *c = -sin((double)x * ang);
            *s = cos((double)x * ang);
        } else {
            *c = -cos((double)(2 * n - x) * ang);
            *s = sin((double)(2 * n - x) * ang);
        }
    }
    *s *= sign_s;
}

/* Factors in pass order: 8s, 4s, one 2 (moved to the front), odd primes
 * ascending. n >= 2. */
static int fft_factorize(size_t n, size_t *fct) {
    int nf = 0;
    size_t len = n;
    while ((len & 7) == 0) {
        fct[nf++] = 8;
        len >>= 3;
    }
    while ((len & 3) == 0) {
        fct[nf++] = 4;
        len >>= 2;
    }
    if ((len & 1) == 0) {
        len >>= 1;
        fct[nf++] = 2;
        size_t t = fct[0];
        fct[0] = fct[nf - 1];
        fct[nf - 1] = t;
    }
    for (size_t d = 3; d * d <= len; d += 2)
        while (len % d == 0) {
            fct[nf++] = d;
            len /= d;
        }
    if (len > 1) fct[nf++] = len;
    return nf;
}

static size_t fft_largest_prime_factor(size_t n) {
    size_t res = 1;
    while ((n & 1) == 0) {
        res = 2;
        n >>= 1;
    }
    for (size_t x = 3; x * x <= n; x += 2)
        while (n % x == 0) {
            res = x;
            n /= x;
        }
    return n > 1 ? n : res;
}

/* Operation count estimate of the mixed-radix transform (larger primes
 * cost more per element than the dedicated small radices). */
static double fft_cost(size_t n) {
    double result = 0;
    size_t len = n;
    while ((len & 1) == 0) {
        result += 2;
        len >>= 1;
    }
    for (size_t x = 3; x * x <= len; x += 2)
        while (len % x == 0) {
            result += x <= 5 ? (double)x : 1.1 * (double)x;
            len /= x;
        }
    if (len > 1) result += len <= 5 ? (double)len : 1.1 * (double)len;
    return result * (double)n;
}

/* The smallest 2-3-5-7-11-smooth number >= n. */
static size_t fft_good_size(size_t n) {
    if (n <= 12) return n;
    size_t best = 2 * n;
    for (size_t f11 = 1; f11 < best; f11 *= 11)
        for (size_t f7 = f11; f7 < best; f7 *= 7)
            for (size_t f5 = f7; f5 < best; f5 *= 5)
                for (size_t f3 = f5; f3 < best; f3 *= 3) {
                    size_t x = f3;
                    while (x < n) x *= 2;
                    if (x < best) best = x;
                }
    return best;
}

static bool fft_use_bluestein(size_t n) {
    size_t lpf = n < 50 ? 0 : fft_largest_prime_factor(n);
    if (lpf * lpf <= n) return false;
    return 1.5 * 2 * fft_cost(fft_good_size(2 * n - 1)) < fft_cost(n);
}


/* ------------------------------------------------------------ element access */

static inline double sig_load(int dtype, const void *p, int64_t i) {
    switch (dtype) {
    case ONYX_FLOAT: return ((const float *)p)[i];
    case ONYX_DOUBLE: return ((const double *)p)[i];
    case ONYX_FLOAT16: return onyx_f16_to_f32_inline(((const uint16_t *)p)[i]);
    default: return onyx_bf16_to_f32_inline(((const uint16_t *)p)[i]);
    }
}

static inline void sig_store(int dtype, void *p, int64_t i, double v) {
    switch (dtype) {
    case ONYX_FLOAT: ((float *)p)[i] = (float)v; return;
    case ONYX_DOUBLE: ((double *)p)[i] = v; return;
    case ONYX_FLOAT16: ((uint16_t *)p)[i] = onyx_f64_to_f16(v); return;
    default: ((uint16_t *)p)[i] = onyx_f64_to_bf16(v); return;
    }
}

/* A scalar integer input (int32/int64), as int64. */
static onyx_status *scalar_int(const char *op, const char *what, const onyx_value *v, int64_t *out) {
    if (!onyx_is_tensor(v) || (v->dtype != ONYX_INT32 && v->dtype != ONYX_INT64) || v->numel != 1) {
        char s[200];
        return ONYX_INVALID_ARG("%s: %s must be a scalar int32 or int64 tensor, got %s %s", op, what,
                                onyx_is_tensor(v) ? onyx_dtype_name(v->dtype) : "a non-tensor",
                                onyx_is_tensor(v) ? onyx_shape_str(v->dims, v->rank, s, sizeof s) : "");
    }
    *out = onyx_load_as_int64(v->dtype, v->data, 0);
    return NULL;
}

/* ------------------------------------------------------------ transform jobs */

/* One batch of 1-D transforms. Line t of a DFT is (outer o, inner i) with
 * elements at stride inner * channels along the axis; line t of an STFT is
 * (batch b, frame f). */
typedef struct dft_job {
    bool stft, inverse, irfft;
    size_t n_fft, lines;
    /* input */
    const void *x;
    int dtype;
    int64_t c_in, n_in, inner;          /* DFT: channels, axis length, elements after the axis */
    int64_t sig_len, step, frames;      /* STFT */
    const void *window;
    int64_t win_len;
    /* output */
    void *y;
    int64_t c_out, n_out;
    const void *plan;                   /* plan_f32 or plan_f64 */
    atomic_bool failed;
} dft_job;

/* The FFT engine and the line loops (fill, transform, emit), once per
 * working precision. */
#define FFT_REAL float
#define FFT_(name) name##_f32
#include "providers/cpu/kernels/math/signal_fft.h"
#undef FFT_
#undef FFT_REAL
#define FFT_REAL double
#define FFT_(name) name##_f64
#include "providers/cpu/kernels/math/signal_fft.h"
#undef FFT_
#undef FFT_REAL

/* Plans and runs the job's lines on the pool: in double for double data
 * and real signals, in float for complex float signals (see the top). */
static onyx_status *run_lines(dft_job *j, onyx_threadpool *tp) {
    if (j->lines == 0) return NULL;
    size_t grain = j->n_fft >= 4096 ? 1 : 4096 / j->n_fft;
    atomic_init(&j->failed, false);
    if (j->dtype == ONYX_DOUBLE || j->c_in == 1) {
        plan_f64 *pl;
        ONYX_TRY(plan_new_f64(j->n_fft, &pl));
        j->plan = pl;
        onyx_parallel_for(tp, j->lines, grain, lines_f64, j);
        plan_free_f64(pl);
    } else {
        plan_f32 *pl;
        ONYX_TRY(plan_new_f32(j->n_fft, &pl));
        j->plan = pl;
        onyx_parallel_for(tp, j->lines, grain, lines_f32, j);
        plan_free_f32(pl);
    }
    return atomic_load(&j->failed) ? ONYX_OOM() : NULL;
}

/* ------------------------------------------------------------ DFT */

/* Transform length limit: beyond this the plan tables alone would be
 * larger than any sane model's tensors. */
#define MAX_FFT_LEN (INT64_C(1) << 32)

static onyx_status *dft_axis(onyx_kernel_ctx *ctx, int rank, int *axis) {
    int64_t a = 1;
    if (ctx->opset >= 20) {
        a = -2;
        const onyx_value *av = ctx->n_in > 2 ? ctx->in[2] : NULL;
        if (av) ONYX_TRY(scalar_int("DFT", "axis", av, &a));
    } else {
        a = onyx_attr_int(ctx->node, "axis", 1);
    }
    int64_t n = a < 0 ? a + rank : a;
    if (n < 0 || n > rank - 2)
        return ONYX_INVALID_ARG("DFT: axis %lld is out of range [%d, -2] U [0, %d] for input rank %d (the last "
                                "dim holds the real and imaginary parts)", (long long)a, -rank, rank - 2, rank);
    *axis = (int)n;
    return NULL;
}

static onyx_status *dft_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *X = ctx->in[0], *len_v = ctx->n_in > 1 ? ctx->in[1] : NULL;
    char sx[200];
    if (!onyx_is_tensor(X) || !(SIG_FLOATS & ONYX_T(X->dtype)))
        return ONYX_INVALID_ARG("DFT: input must be a float, double, float16 or bfloat16 tensor");
    if (X->rank < 2 || (X->dims[X->rank - 1] != 1 && X->dims[X->rank - 1] != 2))
        return ONYX_INVALID_ARG("DFT: input %s must have rank >= 2 and a last dim of 1 (real) or 2 (complex)",
                                onyx_shape_str(X->dims, X->rank, sx, sizeof sx));
    int axis = 0;   /* (set by dft_axis; aarch64 gcc cannot tell) */
    ONYX_TRY(dft_axis(ctx, X->rank, &axis));
    dft_job j = {.x = X->data, .dtype = X->dtype, .c_in = X->dims[X->rank - 1], .n_in = X->dims[axis], .inner = 1};
    j.inverse = onyx_attr_int(ctx->node, "inverse", 0) != 0;
    bool onesided = onyx_attr_int(ctx->node, "onesided", 0) != 0;
    j.irfft = onesided && j.inverse;
    int64_t N = j.irfft ? 2 * (j.n_in - 1) : j.n_in;
    if (len_v) ONYX_TRY(scalar_int("DFT", "dft_length", len_v, &N));
    if (N < 1 || N > MAX_FFT_LEN)
        return ONYX_INVALID_ARG("DFT: %s %lld must be in [1, %lld] (input %s, axis %d)",
                                len_v ? "dft_length" : j.irfft ? "the default length 2 * (bins - 1)" : "the axis length",
                                (long long)N, (long long)MAX_FFT_LEN, onyx_shape_str(X->dims, X->rank, sx, sizeof sx),
                                axis);
    j.n_fft = (size_t)N;
    j.n_out = onesided && !j.inverse ? N / 2 + 1 : N;
    j.c_out = j.irfft ? 1 : 2;
    int64_t dims[ONYX_MAX_RANK], outer = 1, numel;
    memcpy(dims, X->dims, sizeof(int64_t) * (size_t)X->rank);
    dims[axis] = j.n_out;
    dims[X->rank - 1] = j.c_out;
    for (int d = 0; d < axis; d++) outer *= X->dims[d];                 /* <= numel of X */
    for (int d = axis + 1; d < X->rank - 1; d++) j.inner *= X->dims[d];
    ONYX_TRY(onyx_shape_numel(dims, X->rank, &numel));
    if (numel > ONYX_MAX_TENSOR_ELEMENTS) return ONYX_INVALID_ARG("DFT: output is too large");
    onyx_value *Y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, X->dtype, X->rank, dims, &Y));
    j.y = Y->data;
    j.lines = numel ? (size_t)(outer * j.inner) : 0;
    return run_lines(&j, ctx->tp);
}

/* ------------------------------------------------------------ STFT */

static onyx_status *stft_compute(onyx_kernel_ctx *ctx) {
    const char *op = "STFT";
    const onyx_value *S = ctx->in[0], *step_v = ctx->n_in > 1 ? ctx->in[1] : NULL;
    const onyx_value *W = ctx->n_in > 2 ? ctx->in[2] : NULL, *len_v = ctx->n_in > 3 ? ctx->in[3] : NULL;
    char ss[200], sw[200];
    if (!onyx_is_tensor(S) || !(SIG_FLOATS & ONYX_T(S->dtype)))
        return ONYX_INVALID_ARG("%s: signal must be a float, double, float16 or bfloat16 tensor", op);
    if (S->rank != 3 || (S->dims[2] != 1 && S->dims[2] != 2))
        return ONYX_INVALID_ARG("%s: signal %s must have shape [batch, length, 1 or 2]", op,
                                onyx_shape_str(S->dims, S->rank, ss, sizeof ss));
    dft_job j = {.stft = true, .x = S->data, .dtype = S->dtype, .c_in = S->dims[2], .sig_len = S->dims[1], .c_out = 2};
    if (!step_v) return ONYX_INVALID_ARG("%s: frame_step is required", op);
    ONYX_TRY(scalar_int(op, "frame_step", step_v, &j.step));
    if (j.step < 1) return ONYX_INVALID_ARG("%s: frame_step %lld must be >= 1", op, (long long)j.step);
    if (W) {
        if (!onyx_is_tensor(W) || W->rank != 1 || W->dtype != S->dtype)
            return ONYX_INVALID_ARG("%s: window must be a 1-D %s tensor like the signal, got %s %s", op,
                                    onyx_dtype_name(S->dtype), onyx_is_tensor(W) ? onyx_dtype_name(W->dtype) : "?",
                                    onyx_is_tensor(W) ? onyx_shape_str(W->dims, W->rank, sw, sizeof sw) : "");
        j.window = W->data;
    }
    int64_t N = W ? W->dims[0] : j.sig_len;
    if (len_v) ONYX_TRY(scalar_int(op, "frame_length", len_v, &N));
    j.win_len = W ? W->dims[0] : N;
    if (N < 1 || N > MAX_FFT_LEN || N > j.sig_len)
        return ONYX_INVALID_ARG("%s: frame length %lld must be in [1, %lld] (the signal length of %s)", op,
                                (long long)N, (long long)j.sig_len, onyx_shape_str(S->dims, S->rank, ss, sizeof ss));
    bool onesided = onyx_attr_int(ctx->node, "onesided", 1) != 0;
    j.n_fft = (size_t)N;
    j.n_out = onesided ? N / 2 + 1 : N;
    j.frames = (j.sig_len - N) / j.step + 1;
    int64_t dims[4] = {S->dims[0], j.frames, j.n_out, 2}, numel;
    ONYX_TRY(onyx_shape_numel(dims, 4, &numel));
    if (numel > ONYX_MAX_TENSOR_ELEMENTS) return ONYX_INVALID_ARG("%s: output is too large", op);
    onyx_value *Y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, S->dtype, 4, dims, &Y));
    j.y = Y->data;
    j.lines = numel ? (size_t)(S->dims[0] * j.frames) : 0;
    return run_lines(&j, ctx->tp);
}

/* ------------------------------------------------------------ window functions */

#define WINDOW_TYPES \
    (ONYX_T_INTS | ONYX_T(ONYX_FLOAT) | ONYX_T(ONYX_DOUBLE) | ONYX_T(ONYX_FLOAT16) | ONYX_T(ONYX_BFLOAT16))

/* w[k] = a0 - a1 cos(2 pi k / N) + a2 cos(4 pi k / N), N = size (periodic)
 * or size - 1 (symmetric), in double, then converted (integer types
 * truncate, as the function's final Cast does). A symmetric window of one
 * point is [1], as in numpy and torch (the formula would divide by 0). */
static onyx_status *window_compute(onyx_kernel_ctx *ctx, const char *op, double a0, double a1, double a2) {
    int64_t size;
    ONYX_TRY(scalar_int(op, "size", ctx->in[0], &size));
    if (size < 0 || size > ONYX_MAX_TENSOR_ELEMENTS)
        return ONYX_INVALID_ARG("%s: size %lld must be in [0, %lld]", op, (long long)size,
                                (long long)ONYX_MAX_TENSOR_ELEMENTS);
    int dt = 0;
    ONYX_TRY(onyx_signal_output_datatype(op, ctx->node, &dt));
    bool periodic = onyx_attr_int(ctx->node, "periodic", 1) != 0;
    onyx_value *Y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, dt, 1, &size, &Y));
    const double N = (double)(periodic ? size : size - 1);
    for (int64_t k = 0; k < size; k++) {
        double v = 1.0;
        if (N > 0) {
            double t = 2.0 * M_PI * (double)k / N;
            v = a0 - a1 * cos(t) + a2 * cos(2.0 * t);
        }
        onyx_store_from_double(dt, Y->data, k, v);
    }
    return NULL;
}

static onyx_status *hann_compute(onyx_kernel_ctx *ctx) { return window_compute(ctx, "HannWindow", 0.5, 0.5, 0); }
static onyx_status *hamming_compute(onyx_kernel_ctx *ctx) {
    return window_compute(ctx, "HammingWindow", 25.0 / 46.0, 21.0 / 46.0, 0);
}
static onyx_status *blackman_compute(onyx_kernel_ctx *ctx) {
    return window_compute(ctx, "BlackmanWindow", 0.42, 0.5, 0.08);
}

/* ------------------------------------------------------------ MelWeightMatrix */

/* x rounded to the precision of a float dtype. */
static double round_to(int dtype, double x) {
    switch (dtype) {
    case ONYX_FLOAT: return (float)x;
    case ONYX_FLOAT16: return onyx_f16_to_f32_inline(onyx_f64_to_f16(x));
    case ONYX_BFLOAT16: return onyx_bf16_to_f32_inline(onyx_f64_to_bf16(x));
    default: return x;
    }
}

/* Python's float floor division a // b (numpy's divmod algorithm): exact
 * where a / b rounds up to an integer. */
static double py_floordiv(double a, double b) {
    double mod = fmod(a, b);
    double div = (a - mod) / b;
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1.0;
    if (div == 0) return copysign(0.0, a / b);
    double fl = floor(div);
    return div - fl > 0.5 ? fl + 1.0 : fl;
}

/* 2595 log10(1 + hz / 700) at the precision of the edge type. */
static double hz_to_mel(int dt, double hz) {
    return round_to(dt, 2595.0 * round_to(dt, log10(round_to(dt, 1.0 + round_to(dt, hz / 700.0)))));
}

/* Triangular filters between num_mel_bins + 2 points equally spaced on
 * the mel scale, each point mapped to its DFT bin floor((dft_length + 1)
 * hz / sample_rate); the arithmetic follows the reference (mel edges at
 * the edges' precision, the rest in double). Filter taps that fall
 * outside the num_spectrogram_bins rows are dropped. */
static onyx_status *mel_compute(onyx_kernel_ctx *ctx) {
    const char *op = "MelWeightMatrix";
    int64_t nmel, dftlen, rate;
    for (int i = 0; i < 5; i++)
        if (i >= (int)ctx->n_in || !ctx->in[i]) return ONYX_INVALID_ARG("%s: all five inputs are required", op);
    ONYX_TRY(scalar_int(op, "num_mel_bins", ctx->in[0], &nmel));
    ONYX_TRY(scalar_int(op, "dft_length", ctx->in[1], &dftlen));
    ONYX_TRY(scalar_int(op, "sample_rate", ctx->in[2], &rate));
    const onyx_value *lo_v = ctx->in[3], *hi_v = ctx->in[4];
    if (!onyx_is_tensor(lo_v) || !onyx_is_tensor(hi_v) || lo_v->numel != 1 || hi_v->numel != 1 ||
        !(SIG_FLOATS & ONYX_T(lo_v->dtype)) || hi_v->dtype != lo_v->dtype)
        return ONYX_INVALID_ARG("%s: lower_edge_hertz and upper_edge_hertz must be float scalars of one type", op);
    if (nmel < 0 || nmel > (INT64_C(1) << 24) || dftlen < 1 || dftlen > MAX_FFT_LEN || rate < 1)
        return ONYX_INVALID_ARG("%s: num_mel_bins %lld, dft_length %lld and sample_rate %lld are out of range", op,
                                (long long)nmel, (long long)dftlen, (long long)rate);
    int dt = 0;
    ONYX_TRY(onyx_signal_output_datatype(op, ctx->node, &dt));
    const int64_t nspec = dftlen / 2 + 1;
    int64_t dims[2] = {nspec, nmel}, numel;
    ONYX_TRY(onyx_shape_numel(dims, 2, &numel));
    if (numel > ONYX_MAX_TENSOR_ELEMENTS) return ONYX_INVALID_ARG("%s: output is too large", op);
    onyx_value *Y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, dt, 2, dims, &Y));
    double *w = calloc((size_t)(numel ? numel : 1), sizeof *w);
    int64_t *bin = malloc((size_t)(nmel + 2) * sizeof *bin);
    if (!w || !bin) {
        free(w);
        free(bin);
        return ONYX_OOM();
    }
    const int et = lo_v->dtype;
    const double low = hz_to_mel(et, sig_load(et, lo_v->data, 0)), high = hz_to_mel(et, sig_load(et, hi_v->data, 0));
    const double step = round_to(et, round_to(et, high - low) / (double)(nmel + 2));
    for (int64_t i = 0; i < nmel + 2; i++) {
        double hz = 700.0 * (pow(10.0, ((double)i * step + low) / 2595.0) - 1.0);
        double b = py_floordiv((double)(dftlen + 1) * hz, (double)rate);
        bin[i] = b >= 0x1p62 ? INT64_C(1) << 62 : b <= -0x1p62 ? -(INT64_C(1) << 62) : (isnan(b) ? 0 : (int64_t)b);
    }
    for (int64_t i = 0; i < nmel; i++) {
        int64_t l = bin[i], c = bin[i + 1], r = bin[i + 2];
        if (c == l) {
            if (c >= 0 && c < nspec) w[c * nmel + i] = 1.0;
        } else {
            for (int64_t k = l < 0 ? 0 : l; k <= c && k < nspec; k++)
                w[k * nmel + i] = (double)(k - l) / (double)(c - l);
        }
        if (r > c)
            for (int64_t k = c < 0 ? 0 : c; k < r && k < nspec; k++) w[k * nmel + i] = (double)(r - k) / (double)(r - c);
    }
    for (int64_t k = 0; k < numel; k++) onyx_store_from_double(dt, Y->data, k, w[k]);
    free(w);
    free(bin);
    return NULL;
}

/* ------------------------------------------------------------ registration */

const onyx_op_def onyx_ops_signal[] = {
    {"", "DFT", 17, 19, SIG_FLOATS, 0, NULL, NULL, dft_compute},
    {"", "DFT", 20, L, SIG_FLOATS, 0, NULL, NULL, dft_compute},
    {"", "STFT", 17, L, SIG_FLOATS, 0, NULL, NULL, stft_compute},
    {"", "HannWindow", 17, L, ONYX_T(ONYX_INT32) | ONYX_T(ONYX_INT64), 0, NULL, NULL, hann_compute},
    {"", "HammingWindow", 17, L, ONYX_T(ONYX_INT32) | ONYX_T(ONYX_INT64), 0, NULL, NULL, hamming_compute},
    {"", "BlackmanWindow", 17, L, ONYX_T(ONYX_INT32) | ONYX_T(ONYX_INT64), 0, NULL, NULL, blackman_compute},
    {"", "MelWeightMatrix", 17, L, ONYX_T(ONYX_INT32) | ONYX_T(ONYX_INT64), 0, NULL, NULL, mel_compute},
    {0},};
