/* Convolutions: Conv, ConvTranspose, ConvInteger, QLinearConv, and
 * com.microsoft FusedConv (Conv followed by an activation), for any number
 * of spatial dims, with auto_pad, pads, strides, dilations and groups.
 *
 * float (and float16/bfloat16 through float) runs as one SGEMM per image
 * and group: W[Mg, Cg*k] x im2col(X)[Cg*k, out], with the im2col rows
 * generated on the fly inside the GEMM's packing (never materialised), a
 * plain GEMM for 1x1/stride-1/unpadded kernels, and the bias and activation
 * in the GEMM's store. Small outputs with many channels run transposed
 * (Y^T = col^T W^T) so the channels fill the vector lanes. Depthwise 2-D
 * convolutions run directly on a zero-padded copy of each channel.
 * ConvTranspose is the transposed product W^T X into a column buffer,
 * scattered back (col2im) onto the output. ConvInteger and QLinearConv run
 * through SGEMM in channel slices small enough to be exact in float; double
 * uses a direct generic loop. Constant weights are packed once in init. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/checked.h"
#include "providers/cpu/gemm/gemm.h"
#include "providers/cpu/kernel.h"
#include "ir/schemas/conv.h"
#include "providers/cpu/kernels/math/linalg.h"
#include "providers/cpu/kernels/nchwc/nchwc.h"
#include "providers/cpu/kernels/nn_isa.h"
#include "providers/cpu/kernels/nn_math.h"

#define L ONYX_OPSET_LATEST
#define F3 (ONYX_T(ONYX_FLOAT) | ONYX_T(ONYX_DOUBLE) | ONYX_T(ONYX_FLOAT16))
#define Q8 (ONYX_T(ONYX_INT8) | ONYX_T(ONYX_UINT8))
#define R ONYX_MAX_RANK

/* Below this many multiply-adds per (image, group) GEMM, the images and
 * groups run in parallel instead of splitting each GEMM. */
#define SMALL_GEMM_WORK (1 << 21)

/* ------------------------------------------------------------ geometry */

/* The geometry itself (attribute readers, pads, output sizes, bounds) is
 * shared with the inference rule and the integer convolutions
 * (ir/schemas/conv.h). */
static onyx_status *conv_geometry(const onyx_node *node, const onyx_value *X, const onyx_value *W,
                                  bool transpose, conv_geom *g) {
    return onyx_conv_geometry(node, X->dims, X->rank, W->dims, W->rank, transpose, g);
}

static onyx_status *check_bias(const onyx_value *B, const conv_geom *g, int dtype) {
    if (!B) return NULL;
    if (!onyx_is_tensor(B) || B->dtype != dtype || B->rank != 1 || B->dims[0] != g->M) {
        char sb[200];
        return ONYX_INVALID_ARG("bias B must be a 1-D %s tensor of %lld values (one per output channel), got %s %s",
                                onyx_dtype_name(dtype), (long long)g->M,
                                onyx_is_tensor(B) ? onyx_dtype_name(B->dtype) : "non-tensor",
                                onyx_is_tensor(B) ? onyx_shape_str(B->dims, B->rank, sb, sizeof sb) : "");
    }
    return NULL;
}

/* Valid range [lo, hi) of o in [0, n) with 0 <= o * s + off < in. */
static void valid_range(int64_t off, int64_t s, int64_t in, int64_t n, int64_t *lo, int64_t *hi) {
    int64_t a = off >= 0 ? 0 : (-off + s - 1) / s;
    int64_t b = in - off <= 0 ? 0 : (in - 1 - off) / s + 1;
    *lo = a < n ? a : n;
    *hi = b < n ? b : n;
    if (*hi < *lo) *hi = *lo;
}

/* Kernel offset q as coordinates. */
static void kernel_coords(const conv_geom *g, int64_t q, int64_t *kk) {
    for (int d = g->nd - 1; d >= 0; d--) {
        kk[d] = q % g->k[d];
        q /= g->k[d];
    }
}

/* ------------------------------------------------------------ implicit im2col */

typedef struct im2col_src {
    const conv_geom *g;
    const float *x;     /* the Cg channels of one image and group */
    bool shifted;       /* im2col_shifted(g) */
} im2col_src;

/* Prefetch the part of channel x that output positions with first-axis
 * coordinates [o_first, o_last] read. The rows of one channel are read by
 * its k taps in a row, a few cache lines per image row: too short for the
 * hardware prefetchers, so without this each channel starts with a burst
 * of cache misses. */
static void prefetch_channel(const conv_geom *g, const float *x, int64_t o_first, int64_t o_last) {
    int64_t i0 = o_first * g->s[0] - g->pb[0], i1 = o_last * g->s[0] - g->pb[0] + (g->k[0] - 1) * g->d[0];
    if (i0 < 0) i0 = 0;
    if (i1 >= g->in[0]) i1 = g->in[0] - 1;
    const char *p = (const char *)(x + i0 * g->istr[0]), *end = (const char *)(x + (i1 + 1) * g->istr[0]);
    for (; p < end; p += 64) __builtin_prefetch(p, 0, 3);
}

/* Row k = (channel, kernel offset) of the column matrix, columns [n0, n0+nc)
 * = output positions, written straight into the GEMM's packed strips.
 * Walks runs along the last spatial axis: zeros where the kernel tap falls
 * in the padding, a copy (strided for stride > 1) where it falls inside
 * the image. */
/* 2-D with stride 1 and the output as wide as the input (the usual
 * "same"-padded 3x3): output position q reads x[q + delta] for a constant
 * delta, so a row of the column matrix is one shifted copy of the channel
 * with the taps that fall in the padding zeroed afterwards. Built in a
 * small local buffer, then moved into the strips in one pass. */
static bool im2col_shifted(const conv_geom *g) {
    return g->nd == 2 && g->s[0] == 1 && g->s[1] == 1 && g->in[1] == g->out[1];
}

static void zero_span(float *buf, int64_t from, int64_t to) {
    if (to > from) memset(buf + from, 0, (size_t)(to - from) * sizeof(float));
}

static void shifted_piece(const conv_geom *g, const float *xc, const int64_t *kk, int64_t q0, int64_t q1,
                          float *buf) {
    const int64_t OW = g->out[1], off0 = kk[0] * g->d[0] - g->pb[0], off1 = kk[1] * g->d[1] - g->pb[1];
    const int64_t delta = off0 * g->in[1] + off1;
    int64_t lo, hi;
    valid_range(off0, 1, g->in[0], g->out[0], &lo, &hi);
    int64_t qa = lo * OW > q0 ? lo * OW : q0, qb = hi * OW < q1 ? hi * OW : q1;
    if (qa >= qb) {
        zero_span(buf, 0, q1 - q0);
        return;
    }
    int64_t cs = -delta > qa ? -delta : qa, ce = g->in_size - delta < qb ? g->in_size - delta : qb;
    if (ce < cs) ce = cs;
    zero_span(buf, 0, cs - q0);   /* rows in the padding, and reads before x */
    memcpy(buf + (cs - q0), xc + cs + delta, (size_t)(ce - cs) * sizeof(float));
    zero_span(buf, ce - q0, q1 - q0);
    valid_range(off1, 1, g->in[1], OW, &lo, &hi);
    if (lo == 0 && hi == OW) return;
    for (int64_t r = qa / OW * OW; r < qb; r += OW) {   /* columns in the padding */
        zero_span(buf, (r > qa ? r : qa) - q0, (r + lo < qb ? r + lo : qb) - q0);
        zero_span(buf, (r + hi > qa ? r + hi : qa) - q0, (r + OW < qb ? r + OW : qb) - q0);
    }
}

static void im2col_row(const void *ctx, size_t k, size_t n0, size_t nc, onyx_gemm_row_out *out) {
    const im2col_src *src = ctx;
    const conv_geom *g = src->g;
    if (src->shifted) {
        int64_t kk[R];
        kernel_coords(g, (int64_t)k % g->k_size, kk);
        const float *xc = src->x + ((int64_t)k / g->k_size) * g->in_size;
        float buf[1024];
        for (size_t q = n0; q < n0 + nc; q += 1024) {
            size_t n = n0 + nc - q < 1024 ? n0 + nc - q : 1024;
            shifted_piece(g, xc, kk, (int64_t)q, (int64_t)(q + n), buf);
            onyx_gemm_row_put(out, buf, n);
        }
        return;
    }
    const int last = g->nd - 1;
    int64_t kk[R], o[R];
    kernel_coords(g, (int64_t)k % g->k_size, kk);
    const float *xc = src->x + ((int64_t)k / g->k_size) * g->in_size;
    int64_t t = (int64_t)n0;
    for (int d = last; d >= 0; d--) {
        o[d] = t % g->out[d];
        t /= g->out[d];
    }
    if ((int64_t)k % g->k_size == 0 && (int64_t)k / g->k_size + 1 < g->Cg)
        prefetch_channel(g, xc + g->in_size, o[0], (int64_t)(n0 + nc - 1) / g->ostr[0]);
    const int64_t sl = g->s[last], offl = kk[last] * g->d[last] - g->pb[last], outl = g->out[last];
    int64_t lo, hi;
    valid_range(offl, sl, g->in[last], outl, &lo, &hi);
    for (size_t done = 0; done < nc;) {
        size_t run = (size_t)(outl - o[last]);
        if (run > nc - done) run = nc - done;
        const float *row = xc;
        bool inside = true;
        for (int d = 0; d < last; d++) {
            int64_t i = o[d] * g->s[d] + kk[d] * g->d[d] - g->pb[d];
            inside &= i >= 0 && i < g->in[d];
            row += i * g->istr[d];
        }
        int64_t a = o[last], b = a + (int64_t)run;
        if (!inside) {
            onyx_gemm_row_zero(out, run);
        } else {
            int64_t c0 = lo < a ? a : (lo > b ? b : lo);
            int64_t c1 = hi < c0 ? c0 : (hi > b ? b : hi);
            onyx_gemm_row_zero(out, (size_t)(c0 - a));
            if (sl == 1) onyx_gemm_row_put(out, row + c0 + offl, (size_t)(c1 - c0));
            else onyx_gemm_row_put_strided(out, row + c0 * sl + offl, (size_t)sl, (size_t)(c1 - c0));
            onyx_gemm_row_zero(out, (size_t)(b - c1));
        }
        done += run;
        o[last] += (int64_t)run;
        for (int d = last; d > 0 && o[d] == g->out[d]; d--) {
            o[d] = 0;
            o[d - 1]++;
        }
    }
}

/* ------------------------------------------------------------ float Conv */

typedef struct conv_state {
    bool transpose;
    bool as_b;                  /* W_g^T packed as the right operand (use_transposed) */
    int64_t wdims[R];
    int wrank;
    int64_t G;
    onyx_packed_mat **packed;   /* one per group */
} conv_state;

static void conv_state_free(void *p) {
    conv_state *st = p;
    if (!st) return;
    for (int64_t i = 0; i < st->G; i++) onyx_packed_mat_free(st->packed[i]);
    free(st->packed);
    free(st);
}

/* Packed weights from init, if they match this W. */
static const conv_state *usable_state(const conv_state *st, const onyx_value *W, const conv_geom *g) {
    if (!st || st->wrank != W->rank || st->G != g->G) return NULL;
    for (int i = 0; i < W->rank; i++)
        if (st->wdims[i] != W->dims[i]) return NULL;
    return st;
}

/* FusedConv's activation (kind: an onyx_gemm_activation), parsed by the
 * same routine as the blocked Conv's: onyx_nchwc_read_act. */
typedef onyx_nchwc_act fused_act;

typedef struct conv_job {
    const conv_geom *g;
    const float *x, *w, *bias;
    float *y;
    const conv_state *st;
    fused_act act;
    bool pointwise;
    bool transposed;         /* use_transposed() */
    onyx_threadpool *tp;     /* for each GEMM (NULL when the items are split) */
    const onyx_kernel_ctx *ctx; /* cancellation checks between items */
    la_error err;
} conv_job;

static bool is_pointwise(const conv_geom *g) {
    for (int i = 0; i < g->nd; i++)
        if (g->k[i] != 1 || g->s[i] != 1 || g->pb[i] != 0 || g->pe[i] != 0) return false;
    return true;
}

/* One input channel per group in 2-D: direct taps beat a GEMM with K = k. */
static bool is_depthwise(const conv_geom *g) { return g->Cg == 1 && g->nd == 2 && !is_pointwise(g); }

/* Fraction of the 16 vector lanes that n columns use. */
static double lane_use(int64_t n) { return (double)n / (double)((n + 15) / 16 * 16); }

/* Small outputs (the 7x7 maps at the end of ResNet: 49 positions fill 4
 * vectors 77%) waste vector lanes when the output positions are the vector
 * dimension. Computing Y^T = col^T W^T puts the channels there instead. */
static bool use_transposed(const conv_geom *g) {
    if (g->out_size > 1024 || g->Mg < 32 || is_depthwise(g)) return false;
    return lane_use(g->Mg) > lane_use(g->out_size) + 0.1;
}

/* dst[c][r] = src[r][c] for an r x c matrix, in 16 x 16 tiles so both
 * sides stay in cache. */
static void transpose_block(const float *src, int64_t rows, int64_t cols, float *dst) {
    for (int64_t r0 = 0; r0 < rows; r0 += 16)
        for (int64_t c0 = 0; c0 < cols; c0 += 16) {
            int64_t r1 = r0 + 16 < rows ? r0 + 16 : rows, c1 = c0 + 16 < cols ? c0 + 16 : cols;
            for (int64_t c = c0; c < c1; c++)
                for (int64_t r = r0; r < r1; r++) dst[c * rows + r] = src[r * cols + c];
        }
}

/* Rows [begin, end) of an explicit column matrix (O columns each). */
typedef struct col_job {
    im2col_src src;
    float *col;
    int64_t O;
} col_job;

static void col_rows(void *arg, size_t begin, size_t end) {
    col_job *cj = arg;
    for (size_t k = begin; k < end; k++) {
        onyx_gemm_row_out row = {.p = cj->col + (int64_t)k * cj->O, .room = (size_t)cj->O, .nr = (size_t)cj->O,
                                 .jump = 0};
        im2col_row(&cj->src, k, 0, (size_t)cj->O, &row);
    }
}

/* One (image, group) as T[out, Mg] = col^T W_g^T, then Y_g = T^T. */
static onyx_status *conv_item_transposed(conv_job *j, int64_t item) {
    const conv_geom *g = j->g;
    int64_t n = item / g->G, gi = item % g->G;
    const int64_t K = g->K, O = g->out_size;
    const float *x = j->x + (n * g->C + gi * g->Cg) * g->in_size;
    float *y = j->y + (n * g->M + gi * g->Mg) * O;
    bool t_heap, col_heap = false;
    float *t = onyx_scratch_acquire(1, (size_t)(O * g->Mg), &t_heap), *col = NULL;
    if (!t) return ONYX_OOM();
    onyx_gemm_operand a = {.data = x, .ld = (size_t)g->in_size, .trans = true};
    if (!j->pointwise) {
        if (!(col = onyx_scratch_acquire(2, (size_t)(K * O), &col_heap))) {
            onyx_scratch_release(t, t_heap);
            return ONYX_OOM();
        }
        col_job cj = {.src = {.g = g, .x = x, .shifted = im2col_shifted(g)}, .col = col, .O = O};
        onyx_parallel_for(j->tp, (size_t)K, 64, col_rows, &cj);
        a = (onyx_gemm_operand){.data = col, .ld = (size_t)O, .trans = true};
    }
    /* with packed weights the raw ones may be gone (w == NULL): no arithmetic on them */
    onyx_gemm_operand b = j->st ? (onyx_gemm_operand){.packed = j->st->packed[gi]}
                                : (onyx_gemm_operand){.data = j->w + gi * g->Mg * K, .ld = (size_t)K, .trans = true};
    onyx_gemm_epilogue ep = {.act = j->act.kind, .act_a = j->act.a, .act_b = j->act.b};
    if (j->bias) {
        ep.bias_kind = ONYX_GEMM_BIAS_COL;
        ep.bias = j->bias + gi * g->Mg;
    }
    onyx_status *st = onyx_sgemm_ex((size_t)O, (size_t)g->Mg, (size_t)K, 1.0f, &a, &b, 0.0f, t, (size_t)g->Mg,
                                    &ep, j->tp);
    if (!st) transpose_block(t, O, g->Mg, y);
    onyx_scratch_release(t, t_heap);
    if (col) onyx_scratch_release(col, col_heap);
    return st;
}

static onyx_status *conv_item(conv_job *j, int64_t item) {
    if (j->transposed) return conv_item_transposed(j, item);
    const conv_geom *g = j->g;
    int64_t n = item / g->G, gi = item % g->G;
    int64_t K = g->K;
    const float *x = j->x + (n * g->C + gi * g->Cg) * g->in_size;
    float *y = j->y + (n * g->M + gi * g->Mg) * g->out_size;
    onyx_gemm_operand a = j->st ? (onyx_gemm_operand){.packed = j->st->packed[gi]}
                                : (onyx_gemm_operand){.data = j->w + gi * g->Mg * K, .ld = (size_t)K};
    im2col_src src = {.g = g, .x = x, .shifted = im2col_shifted(g)};
    onyx_gemm_operand b = {.row_fn = im2col_row, .row_ctx = &src};
    if (j->pointwise) b = (onyx_gemm_operand){.data = x, .ld = (size_t)g->in_size};
    onyx_gemm_epilogue ep = {.act = j->act.kind, .act_a = j->act.a, .act_b = j->act.b};
    if (j->bias) {
        ep.bias_kind = ONYX_GEMM_BIAS_ROW;
        ep.bias = j->bias + gi * g->Mg;
    }
    return onyx_sgemm_ex((size_t)g->Mg, (size_t)g->out_size, (size_t)K, 1.0f, &a, &b, 0.0f, y,
                         (size_t)g->out_size, &ep, j->tp);
}

/* The fused activation over n values. One loop per kind, in fixed blocks
 * of 16 with a tail, the shape the compiler vectorises; NaN passes through
 * (the comparisons are false for it). Inlined into the callers' ISA clones. */
#define ACT_LOOP(y, n, EXPR)                                                     \
    do {                                                                        \
        size_t i_ = 0;                                                          \
        for (; i_ + 16 <= (n); i_ += 16)                                        \
            for (size_t e_ = 0; e_ < 16; e_++) {                                \
                float v = (y)[i_ + e_];                                         \
                (y)[i_ + e_] = (EXPR);                                          \
            }                                                                   \
        for (; i_ < (n); i_++) {                                                \
            float v = (y)[i_];                                                  \
            (y)[i_] = (EXPR);                                                   \
        }                                                                       \
    } while (0)

static inline __attribute__((always_inline)) void apply_act(float *y, size_t n, const fused_act *act) {
    const float a = act->a, b = act->b;
    switch (act->kind) {
    case ONYX_GEMM_ACT_RELU: ACT_LOOP(y, n, v < 0.0f ? 0.0f : v); break;
    case ONYX_GEMM_ACT_CLIP: ACT_LOOP(y, n, (v = v < a ? a : v, v > b ? b : v)); break;
    case ONYX_GEMM_ACT_LEAKY_RELU: ACT_LOOP(y, n, v < 0.0f ? a * v : v); break;
    default: break;
    }
}

/* Depthwise 2-D convolution (one input channel per group), direct. The
 * channel is first copied into a zero-padded plane so every output reads
 * its taps without bounds checks; outputs are accumulated in registers, 16
 * at a time, stride 2 by picking the even lanes of two loads. The
 * loops are compiled for AVX-512, AVX2 and the baseline, picked at load
 * time. */
typedef float dw_v16 __attribute__((vector_size(64), aligned(4)));
typedef int32_t dw_i16 __attribute__((vector_size(64)));
#if defined(__clang__)
#define DW_EVEN16(a, b) __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30)
#else
#define DW_EVEN16(a, b) \
    __builtin_shuffle(a, b, (dw_i16){0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30})
#endif
/* floats after the plane: a row's last vector may read up to 16 * stride + 1
 * floats past its last tap (the lanes past the row are computed, not stored) */
#define DW_SLACK 64
#define DW_MAX_PLANE ((int64_t)1 << 24)

/* Padded plane geometry: rows of IW + pads, IH + pads rows. */
static int64_t dw_plane_w(const conv_geom *g) { return g->in[1] + g->pb[1] + g->pe[1]; }
static int64_t dw_plane_h(const conv_geom *g) { return g->in[0] + g->pb[0] + g->pe[0]; }

static void dw_pad_plane(const conv_geom *g, const float *x, float *xp) {
    const int64_t PW = dw_plane_w(g), PH = dw_plane_h(g), IW = g->in[1];
    memset(xp, 0, (size_t)(g->pb[0] * PW) * sizeof(float));
    for (int64_t ih = 0; ih < g->in[0]; ih++) {
        float *row = xp + (ih + g->pb[0]) * PW;
        memset(row, 0, (size_t)g->pb[1] * sizeof(float));
        memcpy(row + g->pb[1], x + ih * IW, (size_t)IW * sizeof(float));
        memset(row + g->pb[1] + IW, 0, (size_t)g->pe[1] * sizeof(float));
    }
    const int64_t below = PH - g->pb[0] - g->in[0];   /* rows of bottom padding */
    memset(xp + (g->pb[0] + g->in[0]) * PW, 0, (size_t)(below * PW + DW_SLACK) * sizeof(float));
}

/* Outputs [ow, ow + 16) of row oh, of which the first `keep` are stored. */
#define DW_ACCUMULATE(LOAD, keep)                                      \
    do {                                                               \
        dw_v16 acc = {0};                                              \
        acc += bias;                                                   \
        for (int64_t kh = 0; kh < KH; kh++) {                          \
            const float *r = xp + (oh * s0 + kh * d0) * PW + ow * s1;  \
            for (int64_t kw = 0; kw < KW; kw++) {                      \
                const float *src = r + kw * d1;                        \
                acc += w[kh * KW + kw] * (LOAD);                       \
            }                                                          \
        }                                                              \
        memcpy(yr + ow, &acc, (size_t)(keep) * sizeof(float));         \
    } while (0)

/* Unaligned vector loads (statement expressions: a function returning a
 * vector type would change the ABI between the ISA clones). */
#define dw_load16(p) ({ dw_v16 v_; memcpy(&v_, (p), sizeof v_); v_; })

/* Compiled per ISA, picked from the CPU dispatch table (NN_MULTIVERSION). */
NN_MULTIVERSION(depthwise_plane,
                (const conv_geom *g, const float *xp, const float *w, float bias, float *y, const fused_act *act),
                (g, xp, w, bias, y, act), {
    const int64_t OH = g->out[0], OW = g->out[1], PW = dw_plane_w(g), KH = g->k[0], KW = g->k[1];
    const int64_t s0 = g->s[0], s1 = g->s[1], d0 = g->d[0], d1 = g->d[1];
    for (int64_t oh = 0; oh < OH; oh++) {
        float *yr = y + oh * OW;
        int64_t ow = 0;
        if (s1 == 1)
            for (; ow < OW; ow += 16) DW_ACCUMULATE(dw_load16(src), OW - ow < 16 ? OW - ow : 16);
        else if (s1 == 2)
            for (; ow < OW; ow += 16)
                DW_ACCUMULATE(DW_EVEN16(dw_load16(src), dw_load16(src + 16)), OW - ow < 16 ? OW - ow : 16);
        for (; ow < OW; ow++) {
            float acc = bias;
            for (int64_t kh = 0; kh < KH; kh++) {
                const float *r = xp + (oh * s0 + kh * d0) * PW + ow * s1;
                for (int64_t kw = 0; kw < KW; kw++) acc += w[kh * KW + kw] * r[kw * d1];
            }
            yr[ow] = acc;
        }
        apply_act(yr, (size_t)OW, act);
    }
})

/* Without a padded plane (absurd pads): every tap checked. */
static void depthwise_checked(const conv_geom *g, const float *x, const float *w, float bias, float *y,
                              const fused_act *act) {
    for (int64_t oh = 0; oh < g->out[0]; oh++) {
        float *yr = y + oh * g->out[1];
        for (int64_t ow = 0; ow < g->out[1]; ow++) {
            float acc = bias;
            for (int64_t kh = 0; kh < g->k[0]; kh++) {
                int64_t ih = oh * g->s[0] + kh * g->d[0] - g->pb[0];
                if (ih < 0 || ih >= g->in[0]) continue;
                for (int64_t kw = 0; kw < g->k[1]; kw++) {
                    int64_t iw = ow * g->s[1] + kw * g->d[1] - g->pb[1];
                    if (iw >= 0 && iw < g->in[1]) acc += w[kh * g->k[1] + kw] * x[ih * g->in[1] + iw];
                }
            }
            yr[ow] = acc;
        }
        apply_act(yr, (size_t)g->out[1], act);
    }
}

/* The dispatch table's hand-written 3x3 plane (ARM64 NEON: dilation 1,
 * stride 1 or 2), or NULL where it has none for this geometry. */
static const onyx_nn_isa *dw_nn_3x3(const conv_geom *g) {
    const onyx_nn_isa *nn = onyx_cpu_nn();
    if (!nn || g->k[0] != 3 || g->k[1] != 3 || g->d[0] != 1 || g->d[1] != 1 || g->s[0] != g->s[1] ||
        (g->s[0] != 1 && g->s[0] != 2))
        return NULL;
    return nn;
}

static void depthwise_range(void *arg, size_t begin, size_t end) {
    conv_job *j = arg;
    const conv_geom *g = j->g;
    int64_t plane;
    bool heap = false, fits = !onyx_mul_overflow_i64(dw_plane_w(g), dw_plane_h(g), &plane) && plane <= DW_MAX_PLANE;
    float *xp = fits ? onyx_scratch_acquire(3, (size_t)(plane + DW_SLACK), &heap) : NULL;
    const onyx_nn_isa *nn = dw_nn_3x3(g);
    for (size_t c = begin; c < end; c++) {
        int64_t n = (int64_t)c / g->M, m = (int64_t)c % g->M;
        const float *x = j->x + (n * g->C + m / g->Mg) * g->in_size, *w = j->w + m * g->k_size;
        float b = j->bias ? j->bias[m] : 0.0f, *y = j->y + (int64_t)c * g->out_size;
        if (xp) {
            if (c == begin || m % g->Mg == 0) dw_pad_plane(g, x, xp);   /* channel multiplier: reuse */
            if (nn) {
                nn->depthwise3x3(xp, (size_t)dw_plane_w(g), w, b, y, (size_t)g->out[0], (size_t)g->out[1],
                                 (int)g->s[0]);
                apply_act(y, (size_t)g->out_size, &j->act);
            } else {
                depthwise_plane(g, xp, w, b, y, &j->act);
            }
        } else {
            depthwise_checked(g, x, w, b, y, &j->act);
        }
    }
    if (xp) onyx_scratch_release(xp, heap);
}

static void conv_range(void *arg, size_t begin, size_t end) {
    conv_job *j = arg;
    for (size_t i = begin; i < end && !la_error_any(&j->err); i++) {
        onyx_status *stop = onyx_kernel_check_stop(j->ctx);
        la_error_set(&j->err, stop ? stop : conv_item(j, (int64_t)i));
    }
}

static onyx_status *conv_f32(const conv_geom *g, const float *x, const float *w, const float *bias, float *y,
                             const conv_state *st, const fused_act *act, const onyx_kernel_ctx *ctx) {
    onyx_threadpool *tp = ctx->tp;
    conv_job j = {.g = g, .x = x, .w = w, .bias = bias, .y = y, .st = st, .act = *act,
                  .pointwise = is_pointwise(g), .tp = tp, .ctx = ctx};
    atomic_init(&j.err.st, NULL);
    if (g->N == 0 || g->M == 0 || g->out_size == 0) return NULL;
    if (is_depthwise(g)) {
        onyx_parallel_for(tp, (size_t)(g->N * g->M), 1, depthwise_range, &j);
        return NULL;
    }
    /* Weights packed in init fix the orientation (the session may have
     * released W itself, see conv_consumes); either is correct for any
     * shape, and init chose from the static shape when it was known. */
    j.transposed = j.st ? j.st->as_b : use_transposed(g);
    int64_t items = g->N * g->G;
    double work = (double)g->Mg * (double)g->out_size * (double)g->Cg * (double)g->k_size;
    if (items > 1 && onyx_threadpool_threads(tp) > 1 && work < SMALL_GEMM_WORK) {
        j.tp = NULL;
        onyx_parallel_for(tp, (size_t)items, 1, conv_range, &j);
    } else {
        conv_range(&j, 0, (size_t)items);
    }
    return la_error_take(&j.err);
}

/* ------------------------------------------------------------ float ConvTranspose */

/* Scatter-add the column rows of output channel m (k_size rows of in_size)
 * onto its output plane: Y[o] += col[kk, i] for o = i * s - pb + kk * d. */
static void col2im_channel(const conv_geom *g, const float *col, float *y) {
    const int last = g->nd - 1;
    const int64_t inl = g->in[last], sl = g->s[last];
    const int64_t lines = g->in_size / inl;
    for (int64_t q = 0; q < g->k_size; q++) {
        int64_t kk[R], i[R] = {0};
        kernel_coords(g, q, kk);
        const float *row = col + q * g->in_size;
        const int64_t offl = kk[last] * g->d[last] - g->pb[last];
        /* input positions i whose output i * s + off falls inside [0, out) */
        int64_t lo, hi;
        valid_range(offl, sl, g->out[last], inl, &lo, &hi);
        for (int64_t line = 0; line < lines; line++) {
            float *yr = y;
            bool inside = true;
            for (int d = 0; d < last; d++) {
                int64_t od = i[d] * g->s[d] + kk[d] * g->d[d] - g->pb[d];
                inside &= od >= 0 && od < g->out[d];
                yr += od * g->ostr[d];
            }
            if (inside) {
                const float *xr = row + line * inl;
                for (int64_t p = lo; p < hi; p++) yr[p * sl + offl] += xr[p];
            }
            for (int d = last - 1; d >= 0; d--) {
                if (++i[d] < g->in[d]) break;
                i[d] = 0;
            }
        }
    }
}

typedef struct convt_job {
    const conv_geom *g;
    const float *col;       /* Mg * k_size rows of in_size */
    const float *bias;      /* of this group, or NULL */
    float *y;               /* this image and group: Mg planes */
    fused_act act;
} convt_job;

static void convt_channels(void *arg, size_t begin, size_t end) {
    convt_job *j = arg;
    const conv_geom *g = j->g;
    for (size_t m = begin; m < end; m++) {
        float *y = j->y + (int64_t)m * g->out_size;
        float b = j->bias ? j->bias[m] : 0.0f;
        for (int64_t o = 0; o < g->out_size; o++) y[o] = b;
        col2im_channel(g, j->col + (int64_t)m * g->k_size * g->in_size, y);
        apply_act(y, (size_t)g->out_size, &j->act);
    }
}

static onyx_status *convt_f32(const conv_geom *g, const float *x, const float *w, const float *bias, float *y,
                              const conv_state *st, const fused_act *act, onyx_threadpool *tp) {
    if (g->N == 0 || g->M == 0) return NULL;
    const int64_t rows = g->Mg * g->k_size;
    const int64_t col_n = rows * g->in_size;
    float *col = onyx_alloc((size_t)(col_n > 0 ? col_n : 1) * sizeof(float));
    if (!col) return ONYX_OOM();
    onyx_status *err = NULL;
    for (int64_t item = 0; item < g->N * g->G && !err; item++) {
        int64_t n = item / g->G, gi = item % g->G;
        /* col = W_g^T X_g: W_g is (Cg, Mg * k) row-major */
        onyx_gemm_operand a = st ? (onyx_gemm_operand){.packed = st->packed[gi]}
                                 : (onyx_gemm_operand){.data = w + gi * g->Cg * rows, .ld = (size_t)rows, .trans = true};
        onyx_gemm_operand b = {.data = x + (n * g->C + gi * g->Cg) * g->in_size, .ld = (size_t)g->in_size};
        err = onyx_sgemm_ex((size_t)rows, (size_t)g->in_size, (size_t)g->Cg, 1.0f, &a, &b, 0.0f, col,
                            (size_t)g->in_size, NULL, tp);
        if (err) break;
        convt_job j = {.g = g, .col = col, .bias = bias ? bias + gi * g->Mg : NULL,
                       .y = y + (n * g->M + gi * g->Mg) * g->out_size, .act = *act};
        onyx_parallel_for(tp, (size_t)g->Mg, 1, convt_channels, &j);
    }
    onyx_free(col);
    return err;
}

/* ------------------------------------------------------------ generic direct loops */

/* Direct convolution in U (used for double):
 * y[n, m, o] = bias[m] + sum over the group's channels and kernel taps. */
#define CONV_DIRECT(T, U)                                                                        \
    static void conv_direct_##T(const conv_geom *g, const T *x, const T *w, const T *bias, T *y) {  \
        int64_t o[R], kk[R];                                                                      \
        for (int64_t n = 0; n < g->N; n++)                                                        \
            for (int64_t m = 0; m < g->M; m++) {                                                  \
                const int64_t gi = m / g->Mg;                                                     \
                for (int64_t p = 0; p < g->out_size; p++) {                                       \
                    for (int d = 0; d < g->nd; d++) o[d] = (p / g->ostr[d]) % g->out[d];         \
                    U acc = bias ? (U)bias[m] : (U)0;                                             \
                    for (int64_t c = 0; c < g->Cg; c++) {                                         \
                        const T *xc = x + (n * g->C + gi * g->Cg + c) * g->in_size;               \
                        const T *wc = w + (m * g->Cg + c) * g->k_size;                            \
                        for (int64_t q = 0; q < g->k_size; q++) {                                 \
                            kernel_coords(g, q, kk);                                              \
                            int64_t idx = 0;                                                      \
                            bool inside = true;                                                   \
                            for (int d = 0; d < g->nd; d++) {                                     \
                                int64_t i = o[d] * g->s[d] + kk[d] * g->d[d] - g->pb[d];          \
                                inside &= i >= 0 && i < g->in[d];                                 \
                                idx += i * g->istr[d];                                            \
                            }                                                                     \
                            if (inside) acc += (U)xc[idx] * (U)wc[q];                             \
                        }                                                                         \
                    }                                                                             \
                    y[(n * g->M + m) * g->out_size + p] = (T)acc;                                 \
                }                                                                                 \
            }                                                                                     \
    }
CONV_DIRECT(double, double)

/* Direct transposed convolution (scatter) in double. */
static void convt_direct_double(const conv_geom *g, const double *x, const double *w, const double *bias,
                                double *y) {
    int64_t i[R], kk[R];
    for (int64_t n = 0; n < g->N; n++)
        for (int64_t m = 0; m < g->M; m++)
            for (int64_t p = 0; p < g->out_size; p++)
                y[(n * g->M + m) * g->out_size + p] = bias ? bias[m] : 0.0;
    for (int64_t n = 0; n < g->N; n++)
        for (int64_t c = 0; c < g->C; c++) {
            const int64_t gi = c / g->Cg;
            for (int64_t p = 0; p < g->in_size; p++) {
                for (int d = 0; d < g->nd; d++) i[d] = (p / g->istr[d]) % g->in[d];
                const double xv = x[(n * g->C + c) * g->in_size + p];
                for (int64_t mm = 0; mm < g->Mg; mm++) {
                    const int64_t m = gi * g->Mg + mm;
                    const double *wr = w + (c * g->Mg + mm) * g->k_size;
                    double *ym = y + (n * g->M + m) * g->out_size;
                    for (int64_t q = 0; q < g->k_size; q++) {
                        kernel_coords(g, q, kk);
                        int64_t idx = 0;
                        bool inside = true;
                        for (int d = 0; d < g->nd; d++) {
                            int64_t od = i[d] * g->s[d] + kk[d] * g->d[d] - g->pb[d];
                            inside &= od >= 0 && od < g->out[d];
                            idx += od * g->ostr[d];
                        }
                        if (inside) ym[idx] += xv * wr[q];
                    }
                }
            }
        }
}

/* ------------------------------------------------------------ Conv / ConvTranspose */

/* Whether compute will take the transposed path, judged from the static
 * shape of X (its batch may be symbolic; the rest must be known). */
static bool init_transposed(const onyx_kernel_info *info, const onyx_value *W) {
    const onyx_type *xt = info->n_in > 0 && info->in_types ? info->in_types[0] : NULL;
    if (!xt || xt->rank != W->rank) return false;
    int64_t xd[R];
    for (int i = 0; i < xt->rank; i++) {
        if (i > 0 && !onyx_dim_known(xt->dims[i])) return false;
        xd[i] = i == 0 ? 1 : xt->dims[i];
    }
    conv_geom g;
    onyx_status *st = onyx_conv_geometry(info->node, xd, xt->rank, W->dims, W->rank, false, &g);
    if (st) {
        onyx_status_free(st);
        return false;
    }
    return use_transposed(&g);
}

static onyx_status *conv_init_common(const onyx_kernel_info *info, void **state, bool transpose) {
    *state = NULL;
    if (info->n_in < 2 || !info->const_in || !info->const_in[1]) return NULL;
    const onyx_value *W = info->const_in[1];
    if (!onyx_is_tensor(W) || !la_is_f32_family(W->dtype) || W->rank < 3 || W->numel == 0) return NULL;
    int64_t G = onyx_attr_int(info->node, "group", 1);
    int64_t ksize = W->numel / (W->dims[0] * W->dims[1]);
    if (G < 1 || W->dims[0] % G) return NULL;    /* compute reports the error */
    if (!transpose && W->rank == 4 && W->dims[1] == 1) return NULL;   /* depthwise reads W directly */
    conv_state *st = calloc(1, sizeof *st);
    if (!st) return ONYX_OOM();
    st->transpose = transpose;
    st->wrank = W->rank;
    memcpy(st->wdims, W->dims, sizeof(int64_t) * (size_t)W->rank);
    st->packed = calloc((size_t)G, sizeof *st->packed);
    const float *w = NULL;
    float *w_own = NULL;
    onyx_status *err = st->packed ? la_float_view(W, &w, &w_own) : ONYX_OOM();
    st->as_b = !transpose && init_transposed(info, W);
    for (int64_t gi = 0; !err && gi < G; gi++, st->G++) {
        if (st->as_b) {     /* B = W_g^T: (Cg * k) x (M/G) */
            int64_t Mg = W->dims[0] / G, K = W->dims[1] * ksize;
            err = onyx_sgemm_pack_b(info->pack, true, (size_t)K, (size_t)Mg, w + gi * Mg * K, (size_t)K, &st->packed[gi]);
        } else if (!transpose) {   /* A = W_g: (M/G) x (Cg * k) */
            int64_t Mg = W->dims[0] / G, K = W->dims[1] * ksize;
            err = onyx_sgemm_pack_a(false, (size_t)Mg, (size_t)K, w + gi * Mg * K, (size_t)K, &st->packed[gi]);
        } else {            /* A = W_g^T: (Mg * k) x Cg, W_g stored Cg x (Mg * k) */
            int64_t Cg = W->dims[0] / G, rows = W->dims[1] * ksize;
            err = onyx_sgemm_pack_a(true, (size_t)rows, (size_t)Cg, w + gi * Cg * rows, (size_t)rows,
                                    &st->packed[gi]);
        }
    }
    onyx_free(w_own);
    if (err) {
        conv_state_free(st);
        return err;
    }
    *state = st;
    return NULL;
}

/* With a state, compute takes every float path from the packed weights
 * (never depthwise: init packs nothing for it), so W's data may go. */
static bool conv_consumes(const void *state, size_t k) { return state && k == 1; }

static onyx_status *conv_init(const onyx_kernel_info *info, void **state) {
    return conv_init_common(info, state, false);
}

static onyx_status *convt_init(const onyx_kernel_info *info, void **state) {
    return conv_init_common(info, state, true);
}

/* Shared by Conv, FusedConv and ConvTranspose for the float family and double. */
/* FusedConv's sum input Z: Y = act(conv(X, W) + B + Z); float, Z shaped like Y. */
static onyx_status *check_sum_input(const onyx_value *Z, const onyx_value *X, int rank, const int64_t *dims) {
    if (!Z) return NULL;
    if (!onyx_is_tensor(Z) || Z->dtype != ONYX_FLOAT || X->dtype != ONYX_FLOAT)
        return ONYX_NOT_IMPLEMENTED("FusedConv: the sum input Z is supported for float only");
    bool same = Z->rank == rank;
    for (int i = 0; same && i < rank; i++) same = Z->dims[i] == dims[i];
    if (!same) {
        char a[200], b[200];
        return ONYX_INVALID_ARG("FusedConv: Z has shape %s, the output has %s", onyx_shape_str(Z->dims, Z->rank, a, sizeof a),
                                onyx_shape_str(dims, rank, b, sizeof b));
    }
    return NULL;
}

static onyx_status *conv_compute_common(onyx_kernel_ctx *ctx, bool transpose, const onyx_value *Z) {
    const onyx_value *X = ctx->in[0], *W = ctx->n_in > 1 ? ctx->in[1] : NULL;
    const onyx_value *B = ctx->n_in > 2 ? ctx->in[2] : NULL;
    if (!onyx_is_tensor(X) || !onyx_is_tensor(W)) return ONYX_INVALID_ARG("inputs X and W must be tensors");
    if (X->dtype != W->dtype)
        return ONYX_INVALID_ARG("X is %s but W is %s; they must match", onyx_dtype_name(X->dtype),
                                onyx_dtype_name(W->dtype));
    conv_geom g;
    ONYX_TRY(conv_geometry(ctx->node, X, W, transpose, &g));
    ONYX_TRY(check_bias(B, &g, X->dtype));
    fused_act act;
    ONYX_TRY(onyx_nchwc_read_act(ctx->node, &act));
    int64_t dims[R];
    onyx_conv_out_dims(&g, dims);
    ONYX_TRY(check_sum_input(Z, X, X->rank, dims));
    /* with Z the activation comes after the sum */
    fused_act after = act;
    if (Z) act.kind = ONYX_GEMM_ACT_NONE;
    onyx_value *Y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, X->dtype, X->rank, dims, &Y));
    if (X->dtype == ONYX_DOUBLE) {
        if (act.kind != ONYX_GEMM_ACT_NONE) return ONYX_NOT_IMPLEMENTED("fused activation on double");
        if (transpose) convt_direct_double(&g, X->data, W->data, B ? B->data : NULL, Y->data);
        else conv_direct_double(&g, X->data, W->data, B ? B->data : NULL, Y->data);
        return NULL;
    }
    if (!la_is_f32_family(X->dtype))
        return ONYX_NOT_IMPLEMENTED("element type %s is not supported", onyx_dtype_name(X->dtype));
    const conv_state *st = usable_state(ctx->state, W, &g);
    if (!st && !W->data && W->numel > 0)   /* released after packing: cannot happen for a constant W */
        return ONYX_RUNTIME_ERROR("W has no data and its packed copy does not fit");
    const float *x = NULL, *w = NULL, *b = NULL;
    float *x_own = NULL, *w_own = NULL, *b_own = NULL, *y = Y->data;
    onyx_status *err = la_float_view(X, &x, &x_own);
    if (!err && (!st || is_depthwise(&g))) err = la_float_view(W, &w, &w_own);
    if (!err && B) err = la_float_view(B, &b, &b_own);
    if (!err && X->dtype != ONYX_FLOAT && !(y = onyx_alloc((size_t)(Y->numel ? Y->numel : 1) * sizeof(float))))
        err = ONYX_OOM();
    if (!err && transpose) err = convt_f32(&g, x, w, b, y, st, &act, ctx->tp);
    else if (!err) err = conv_f32(&g, x, w, b, y, st, &act, ctx);
    if (!err && Z) {
        const float *z = Z->data;
        for (int64_t i = 0; i < Y->numel; i++) y[i] += z[i];
        apply_act(y, (size_t)Y->numel, &after);
    }
    if (!err && X->dtype != ONYX_FLOAT) la_from_f32(Y->dtype, y, Y->data, (size_t)Y->numel);
    if (y != Y->data) onyx_free(y);
    onyx_free(x_own);
    onyx_free(w_own);
    onyx_free(b_own);
    return err;
}

static onyx_status *conv_compute(onyx_kernel_ctx *ctx) { return conv_compute_common(ctx, false, NULL); }

/* com.microsoft FusedConv: Conv plus `activation`, with the optional sum
 * input Z added before the activation. */
static onyx_status *fused_conv_compute(onyx_kernel_ctx *ctx) {
    return conv_compute_common(ctx, false, ctx->n_in > 3 ? ctx->in[3] : NULL);
}
static onyx_status *convt_compute(onyx_kernel_ctx *ctx) { return conv_compute_common(ctx, true, NULL); }

/* Static shape: the output dims when X's spatial dims and W are known. */
/* ConvInteger and QLinearConv live in kernels/quant/qlinear.c. */

/* ------------------------------------------------------------ registration */

const onyx_op_def onyx_ops_conv[] = {
    {"", "Conv", 1, 21, F3, 0, conv_init, conv_state_free, conv_compute, conv_consumes},
    {"", "Conv", 22, L, F3 | ONYX_T(ONYX_BFLOAT16), 0, conv_init, conv_state_free, conv_compute,
     conv_consumes},
    {"", "ConvTranspose", 1, 21, F3, 0, convt_init, conv_state_free, convt_compute, conv_consumes},
    {"", "ConvTranspose", 22, L, F3 | ONYX_T(ONYX_BFLOAT16), 0, convt_init, conv_state_free, convt_compute, conv_consumes},
    {"com.microsoft", "FusedConv", 1, L, ONYX_T(ONYX_FLOAT) | ONYX_T(ONYX_FLOAT16), 0, conv_init, conv_state_free,
     fused_conv_compute, conv_consumes},
    {0},};
