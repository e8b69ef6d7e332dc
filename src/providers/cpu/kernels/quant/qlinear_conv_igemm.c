/* QLinearConv on the integer GEMM (gemm/igemm.h), for the convolutions of
 * quantised CNNs (the QDQ fusion in optimizer/passes_fusion_qdq.c writes
 * them): 2-D, uint8 x, weights and every scale and zero point constant.
 *
 * Group 1: the weights are packed once at load as B[K][M] with K ordered
 * (kernel row, kernel column, channel), the channel fastest. Per image, x
 * is transposed to channels-last (HW x C bytes), so one output position's
 * patch is kernel_h x kernel_w runs of C contiguous bytes: the im2col row
 * is a few memcpys (none at all for a 1x1 stride-1 convolution, whose A is
 * the transposed image itself). The GEMM's store adds the int32 bias (a
 * per-column term with the zero-point corrections), multiplies by
 * x_scale * w_scale[m] / y_scale and saturates to 8 bits, while the tile
 * is in registers; the [positions x M] result is transposed back to NCHW.
 * VPDPBUSD wants the unsigned operand to be the activations, hence the
 * channels-last A rather than the weights as A.
 *
 * Depthwise (group == C == M, at most 256 taps): each output channel is
 * one small 2-D convolution of one input plane; a direct loop accumulates
 * rows in float (exact: integers below 2^24; the weights with their zero
 * point removed) and requantises each row.
 *
 * channels_last (com.microsoft QLinearConv, written by the layout pass
 * optimizer/passes_layout_qnhwc.c between quantised ops): x and y are
 * N x H x W x C already, so the transposes go; depthwise runs on the
 * channels-last micro-kernels of qdw_nhwc.h (channels as vector lanes).
 *
 * Requantisation multiplies in float (the reference multiplies in double):
 * a product within a float rounding of .5 can round the other way, one
 * unit of y; ONNX Runtime's integer kernels do the same. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "core/checked.h"
#include "providers/cpu/gemm/gemm.h"
#include "providers/cpu/gemm/igemm.h"
#include "providers/cpu/kernels/quant/qdw_nhwc.h"
#include "providers/cpu/kernels/quant/qlinear_conv.h"
#include "providers/cpu/kernels/tensor/transpose_bytes.h"
#include "providers/cpu/platform.h"
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

typedef struct qconv_fast {
    bool depthwise;
    bool nhwc;                  /* channels_last: x, y are N x H x W x C */
    int ydt;                    /* ONYX_UINT8 or ONYX_INT8 */
    int32_t xzp, yzp;
    int64_t M, C, kh, kw;
    int64_t wdims[4];           /* w's shape, for the geometry (the bytes are released) */
    onyx_igemm_b b;             /* group 1: B[(i, j, c)][m] */
    int16_t *dw;                /* depthwise NCHW: [m][i][j], w - w_zero_point */
    float *dwf;                 /* depthwise channels-last: [i][j][Cp], w - w_zero_point */
    int64_t Cp;                 /* M rounded up to ONYX_QDW_CHANNEL_PAD (mult, bias are that long) */
    float *mult;                /* per m: x_scale * w_scale[m] / y_scale */
    int32_t *bias;              /* per m (0 when absent) */
} qconv_fast;

void onyx_qconv_igemm_free(void *p) {
    qconv_fast *s = p;
    if (!s) return;
    onyx_igemm_b_free(&s->b);
    free(s->dw);
    free(s->dwf);
    free(s->mult);
    free(s->bias);
    free(s);
}

/* w (3), w_zero_point (5) and B (8) live in the state. */
bool onyx_qconv_igemm_consumes(const void *state, size_t k) { return state && (k == 3 || k == 5 || k == 8); }

static const onyx_value *const_in(const onyx_kernel_info *info, size_t k) {
    return info->const_in && k < info->n_in ? info->const_in[k] : NULL;
}

static bool given(const onyx_kernel_info *info, size_t k) { return k < info->n_in && info->in_types[k]; }

/* A constant of `count` or 1 values of type dt. */
static bool const_of(const onyx_value *v, int dt, int64_t count) {
    return v && onyx_is_tensor(v) && v->dtype == dt && (v->numel == 1 || v->numel == count) && v->rank <= 1;
}

static float f32_at(const onyx_value *v, int64_t i) {
    float f;
    memcpy(&f, (const uint8_t *)v->data + 4 * (v->numel == 1 ? 0 : i), 4);
    return f;
}

/* Whether node is QLinearConv with channels_last = 1 (com.microsoft's). */
static int32_t q8_at(const onyx_value *v, int64_t i) {
    if (!v) return 0;
    int64_t k = v->numel == 1 ? 0 : i;
    return v->dtype == ONYX_INT8 ? ((const int8_t *)v->data)[k] : ((const uint8_t *)v->data)[k];
}

/* Whether the node fits the integer path (every parameter constant and
 * well formed: anything else is left to the reference path, which reports
 * what is wrong). */
static bool fits(const onyx_kernel_info *info) {
    if (info->n_in < 8 || !given(info, 0) || info->in_types[0]->dtype != ONYX_UINT8 || info->in_types[0]->rank != 4)
        return false;
    const onyx_value *xs = const_in(info, 1), *xz = const_in(info, 2), *w = const_in(info, 3);
    const onyx_value *ws = const_in(info, 4), *wz = const_in(info, 5), *ys = const_in(info, 6), *yz = const_in(info, 7);
    if (!w || !onyx_is_tensor(w) || w->rank != 4 || (w->dtype != ONYX_INT8 && w->dtype != ONYX_UINT8)) return false;
    int64_t M = w->dims[0];
    if (M < 1 || w->dims[1] < 1 || w->dims[2] < 1 || w->dims[3] < 1 || !const_of(xs, ONYX_FLOAT, 1) || !const_of(ys, ONYX_FLOAT, 1) || !const_of(ws, ONYX_FLOAT, M))
        return false;
    if ((given(info, 2) && !const_of(xz, ONYX_UINT8, 1)) || (given(info, 5) && !const_of(wz, w->dtype, M)) ||
        (given(info, 7) && !(const_of(yz, ONYX_UINT8, 1) || const_of(yz, ONYX_INT8, 1))))
        return false;
    if (info->n_in > 8 && given(info, 8)) {
        const onyx_value *b = const_in(info, 8);
        if (!b || !onyx_is_tensor(b) || b->dtype != ONYX_INT32 || b->rank != 1 || b->numel != M) return false;
    }
    if (!(f32_at(xs, 0) > 0) || !(f32_at(ys, 0) > 0) || !isfinite(f32_at(xs, 0)) || !isfinite(f32_at(ys, 0)))
        return false;
    int64_t group = onyx_attr_int(info->node, "group", 1);
    bool dw = group > 1 && w->dims[1] == 1 && group == M && w->dims[2] * w->dims[3] <= 256; /* exact float sums */
    return group == 1 || dw;
}

/* B[(i * kw + j) * C + c][m] = w[m][c][i][j], packed with w's zero points. */
static onyx_status *pack_weights(const onyx_value *w, const onyx_value *wz, qconv_fast *s) {
    const int64_t M = s->M, C = s->C, kk = s->kh * s->kw, K = C * kk;
    uint8_t *t = malloc((size_t)(K * M));
    if (!t) return ONYX_OOM();
    const uint8_t *src = w->data;
    /* in blocks of 64 filters: each (c, q) then writes one run of 64 bytes,
     * where m outermost wrote every byte to another line (ResNet-50 int8's
     * 25 M weights: 40 % of its load) */
    for (int64_t m0 = 0; m0 < M; m0 += 64) {
        const int64_t m1 = M - m0 < 64 ? M : m0 + 64;
        for (int64_t c = 0; c < C; c++)
            for (int64_t q = 0; q < kk; q++) {
                uint8_t *row = t + (q * C + c) * M;
                for (int64_t m = m0; m < m1; m++) row[m] = src[(m * C + c) * kk + q];
            }
    }
    uint8_t *zb = NULL;
    if (wz) {
        zb = malloc(M > 0 ? (size_t)M : 1); /* (the bound also keeps GCC's size range check quiet) */
        for (int64_t m = 0; zb && m < M; m++) zb[m] = ((const uint8_t *)wz->data)[wz->numel == 1 ? 0 : m];
    }
    /* A kernel larger than 1 x 1 always goes through im2col, whose rows are
     * zero-padded to the packed K (conv_gemm): K may then round up to the
     * in-use kernel's fast-path multiple (AMX: 64; SqueezeNet's 3 x 3 on 16,
     * 32 and 48 channels, K = 144, 288, 432, fell back to VNNI for every
     * block) when that adds at most half of K again in zeros */
    const onyx_igemm_isa *isa = onyx_cpu_igemm();
    size_t align = isa->k_align && kk > 1 ? isa->k_align : 4, k4 = ((size_t)K + 3) & ~(size_t)3;
    if ((((size_t)K + align - 1) & ~(align - 1)) * 2 > k4 * 3) align = 4;
    onyx_status *st = wz && !zb ? ONYX_OOM()
                                : onyx_igemm_pack_b_aligned(t, w->dtype == ONYX_INT8, (size_t)K, (size_t)M, (size_t)M,
                                                            zb, zb ? (size_t)M : 0, align, &s->b);
    free(t);
    free(zb);
    return st;
}

static onyx_status *depthwise_weights(const onyx_value *w, const onyx_value *wz, qconv_fast *s) {
    const int64_t kk = s->kh * s->kw;
    if (s->nhwc) {   /* [tap][Cp] floats, zero in the padding channels */
        if (!(s->dwf = calloc((size_t)(kk * s->Cp), sizeof *s->dwf))) return ONYX_OOM();
        for (int64_t m = 0; m < s->M; m++)
            for (int64_t q = 0; q < kk; q++) {
                int32_t v = w->dtype == ONYX_INT8 ? ((const int8_t *)w->data)[m * kk + q]
                                                  : ((const uint8_t *)w->data)[m * kk + q];
                s->dwf[q * s->Cp + m] = (float)(v - q8_at(wz, m));
            }
        return NULL;
    }
    if (!(s->dw = malloc((size_t)(s->M * kk) * sizeof *s->dw))) return ONYX_OOM();
    for (int64_t m = 0; m < s->M; m++)
        for (int64_t q = 0; q < kk; q++) {
            int32_t v = w->dtype == ONYX_INT8 ? ((const int8_t *)w->data)[m * kk + q]
                                              : ((const uint8_t *)w->data)[m * kk + q];
            s->dw[m * kk + q] = (int16_t)(v - q8_at(wz, m));
        }
    return NULL;
}

onyx_status *onyx_qconv_igemm_init(const onyx_kernel_info *info, void **state) {
    *state = NULL;
    if (!fits(info)) return NULL;
    const onyx_value *xs = const_in(info, 1), *xz = const_in(info, 2), *w = const_in(info, 3);
    const onyx_value *ws = const_in(info, 4), *wz = const_in(info, 5), *ys = const_in(info, 6), *yz = const_in(info, 7);
    const onyx_value *b = info->n_in > 8 ? const_in(info, 8) : NULL;
    qconv_fast *s = calloc(1, sizeof *s);
    if (!s) return ONYX_OOM();
    s->M = w->dims[0];
    s->kh = w->dims[2];
    s->kw = w->dims[3];
    s->depthwise = onyx_attr_int(info->node, "group", 1) > 1;
    s->nhwc = onyx_qconv_channels_last(info->node);
    s->Cp = (s->M + ONYX_QDW_CHANNEL_PAD - 1) / ONYX_QDW_CHANNEL_PAD * ONYX_QDW_CHANNEL_PAD;
    s->C = s->depthwise ? s->M : w->dims[1];
    memcpy(s->wdims, w->dims, sizeof s->wdims);
    s->xzp = q8_at(xz, 0);
    s->yzp = q8_at(yz, 0);
    s->ydt = yz ? yz->dtype : ONYX_UINT8;
    s->mult = calloc((size_t)s->Cp, sizeof *s->mult);
    s->bias = calloc((size_t)s->Cp, sizeof *s->bias);
    onyx_status *st = !s->mult || !s->bias ? ONYX_OOM() : NULL;
    for (int64_t m = 0; !st && m < s->M; m++) {
        float p = f32_at(xs, 0) * f32_at(ws, m); /* as the reference: the product, then the quotient, in float */
        s->mult[m] = p / f32_at(ys, 0);
        if (b) memcpy(&s->bias[m], (const uint8_t *)b->data + 4 * m, 4);
    }
    if (!st) st = s->depthwise ? depthwise_weights(w, wz, s) : pack_weights(w, wz, s);
    if (st) {
        onyx_qconv_igemm_free(s);
        return st;
    }
    *state = s;
    return NULL;
}

/* ------------------------------------------------------------ group 1 */

typedef struct im2col_job {
    const conv_geom *g;
    const uint8_t *xt;   /* H*W x C */
    uint8_t *col;        /* out positions x ld */
    size_t ld;
    uint8_t pad;         /* x's zero point: (pad - zp) = 0 */
} im2col_job;

/* n bytes from src to dst without a library call for the short runs of
 * few channels (a 3 x 3 kernel row on 3 channels is 9 bytes; libc's
 * memcpy and memset were half of MobileNetV2's first convolution): two
 * overlapping fixed-size moves cover any n from 4 to 32. */
static inline void copy_run(uint8_t *dst, const uint8_t *src, size_t n) {
    if (n > 32) {
        memcpy(dst, src, n);
    } else if (n >= 16) {
        memcpy(dst, src, 16);
        memcpy(dst + n - 16, src + n - 16, 16);
    } else if (n >= 8) {
        memcpy(dst, src, 8);
        memcpy(dst + n - 8, src + n - 8, 8);
    } else if (n >= 4) {
        memcpy(dst, src, 4);
        memcpy(dst + n - 4, src + n - 4, 4);
    } else {
        for (size_t i = 0; i < n; i++) dst[i] = src[i];
    }
}

static inline void fill_run(uint8_t *dst, uint8_t v, size_t n) {
    if (n > 16) {
        memset(dst, v, n);
        return;
    }
    for (size_t i = 0; i < n; i++) dst[i] = v;
}

static void im2col_range(void *arg, size_t begin, size_t end) {
    const im2col_job *j = arg;
    const conv_geom *g = j->g;
    const int64_t C = g->C, H = g->in[0], W = g->in[1], OW = g->out[1];
    for (size_t p = begin; p < end; p++) {
        int64_t oh = (int64_t)p / OW, ow = (int64_t)p % OW;
        uint8_t *row = j->col + p * j->ld;
        for (int64_t i = 0; i < g->k[0]; i++) {
            int64_t ih = oh * g->s[0] - g->pb[0] + i * g->d[0];
            int64_t iw0 = ow * g->s[1] - g->pb[1];
            if (g->d[1] == 1 && ih >= 0 && ih < H && iw0 >= 0 && iw0 + g->k[1] <= W) {
                /* a kernel row inside the image: one run of kw * C bytes */
                copy_run(row, j->xt + (ih * W + iw0) * C, (size_t)(g->k[1] * C));
                row += g->k[1] * C;
                continue;
            }
            for (int64_t k = 0; k < g->k[1]; k++, row += C) {
                int64_t iw = ow * g->s[1] - g->pb[1] + k * g->d[1];
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) fill_run(row, j->pad, (size_t)C);
                else copy_run(row, j->xt + (ih * W + iw) * C, (size_t)C);
            }
        }
        fill_run(row, 0, j->ld - (size_t)g->K);
    }
}

static bool is_pointwise(const conv_geom *g) {
    return g->k[0] == 1 && g->k[1] == 1 && g->s[0] == 1 && g->s[1] == 1 && g->pb[0] == 0 && g->pb[1] == 0 &&
           g->out[0] == g->in[0] && g->out[1] == g->in[1];
}

static onyx_status *conv_gemm(const qconv_fast *s, const conv_geom *g, const uint8_t *x, uint8_t *y,
                              onyx_threadpool *tp) {
    const size_t HW = (size_t)g->in_size, P = (size_t)g->out_size, C = (size_t)g->C, M = (size_t)g->M;
    const bool pw = is_pointwise(g);
    /* im2col rows as long as the packed weights' (kp: K rounded up to the
     * kernel's step), which is what the GEMM reads (a.padded) */
    const size_t ld = s->b.kp;
    /* channels-last: x and y are the GEMM's A and C as they are */
    /* the im2col rows in this thread's scratch (slot 2; a fresh allocation per call faulted in up to
     * megabytes each time) */
    bool col_heap = false;
    uint8_t *xt = s->nhwc ? NULL : onyx_alloc(HW * C + 64),
            *col = pw ? NULL : (uint8_t *)onyx_scratch_acquire(2, (P * ld + 64 + 3) / 4, &col_heap);
    uint8_t *yt = s->nhwc ? NULL : onyx_alloc(P * M + 64);
    onyx_status *st = (!s->nhwc && (!xt || !yt)) || (!pw && !col) ? ONYX_OOM() : NULL;
    onyx_igemm_out o = {.kind = s->ydt == ONYX_INT8 ? ONYX_IGEMM_OUT_S8 : ONYX_IGEMM_OUT_U8, .c = yt, .ldc = M,
                        .scale = 1.0f, .scale_col = s->mult, .zy = s->yzp, .bias_i32 = s->bias};
    for (int64_t n = 0; !st && n < g->N; n++) {
        const uint8_t *xn = x + (size_t)n * C * HW;
        if (s->nhwc) o.c = y + (size_t)n * M * P;
        else onyx_transpose_bytes(xn, C, HW, xt, tp);
        const uint8_t *xa = s->nhwc ? xn : xt;
        onyx_igemm_a a = {.data = xa, .lda = C, .za = s->xzp};
        if (!pw) {
            im2col_job j = {g, xa, col, ld, (uint8_t)s->xzp};
            size_t grain = 4096 / (ld ? ld : 1) + 1;
            onyx_parallel_for(tp, P, grain, im2col_range, &j);
            a = (onyx_igemm_a){.data = col, .lda = ld, .za = s->xzp, .padded = true};
        }
        st = onyx_igemm(&a, P, &s->b, &o, tp);
        if (!st && !s->nhwc) onyx_transpose_bytes(yt, P, M, y + (size_t)n * M * P, tp);
    }
    onyx_free(xt);
    if (col) onyx_scratch_release((float *)col, col_heap);
    onyx_free(yt);
    return st;
}

/* ------------------------------------------------------------ depthwise */

typedef struct dw_job {
    const qconv_fast *s;
    const conv_geom *g;
    const uint8_t *x;
    uint8_t *y;
} dw_job;

/* Round half to even (the default rounding mode) by adding and subtracting
 * 1.5 * 2^23, inline where nearbyintf is a library call; beyond 2^22 the
 * value saturates anyway. */
static inline float round_even(float v) {
    v = v < 0x1p22f ? v : 0x1p22f;
    v = v > -0x1p22f ? v : -0x1p22f;
    return (v + 0x1.8p23f) - 0x1.8p23f;
}

static inline uint8_t requant(int32_t acc, float mult, int32_t zy, bool u8) {
    float v = round_even((float)acc * mult) + (float)zy;
    float lo = u8 ? 0.0f : -128.0f, hi = u8 ? 255.0f : 127.0f;
    v = v < lo ? lo : (v > hi ? hi : v);
    return u8 ? (uint8_t)(int)v : (uint8_t)(int8_t)(int)v;
}

/* One output row of channel m: acc[ow] = sum over taps of (x - zp) w, in
 * float: every product and partial sum is an integer below 2^24 (at most
 * 256 taps of 255 x 255, see fits), so the sums are exact. xc is the
 * channel's plane as floats minus the zero point. Stride-1 and stride-2
 * rows go 4 outputs at a time on SSE2 (the x86-64 baseline). */
static void dw_row(const dw_job *j, int64_t m, const float *xc, int64_t oh, float *acc) {
    const conv_geom *g = j->g;
    const qconv_fast *s = j->s;
    const int64_t H = g->in[0], W = g->in[1], OW = g->out[1], sw = g->s[1];
    for (int64_t ow = 0; ow < OW; ow++) acc[ow] = 0.0f;
    const int16_t *wm = s->dw + m * s->kh * s->kw;
    for (int64_t i = 0; i < g->k[0]; i++) {
        int64_t ih = oh * g->s[0] - g->pb[0] + i * g->d[0];
        if (ih < 0 || ih >= H) continue; /* padding: x - zp = 0 */
        const float *xr = xc + ih * W;
        for (int64_t k = 0; k < g->k[1]; k++) {
            const float w = wm[i * s->kw + k];
            int64_t off = k * g->d[1] - g->pb[1];
            /* ow whose iw = ow * sw + off lies in [0, W) */
            int64_t lo = off >= 0 ? 0 : (-off + sw - 1) / sw;
            int64_t hi = W - 1 - off < 0 ? -1 : (W - 1 - off) / sw;
            if (hi > OW - 1) hi = OW - 1;
            int64_t ow = lo;
            if (sw == 1) {
#if defined(__SSE2__)
                const float *src = xr + off;
                const __m128 wv = _mm_set1_ps(w);
                for (; ow + 4 <= hi + 1; ow += 4)
                    _mm_storeu_ps(acc + ow, _mm_add_ps(_mm_loadu_ps(acc + ow), _mm_mul_ps(_mm_loadu_ps(src + ow), wv)));
#endif
            } else if (sw == 2) {
#if defined(__SSE2__)
                /* the even elements of 8: the last load may read one float past the
                 * row (the next row, or the row buffer after the plane), unused */
                const float *src = xr + off;
                const __m128 wv = _mm_set1_ps(w);
                for (; ow + 4 <= hi + 1; ow += 4) {
                    __m128 e = _mm_shuffle_ps(_mm_loadu_ps(src + 2 * ow), _mm_loadu_ps(src + 2 * ow + 4),
                                              _MM_SHUFFLE(2, 0, 2, 0));
                    _mm_storeu_ps(acc + ow, _mm_add_ps(_mm_loadu_ps(acc + ow), _mm_mul_ps(e, wv)));
                }
#endif
            }
            for (; ow <= hi; ow++) acc[ow] += xr[ow * sw + off] * w;
        }
    }
}

/* x - zp as floats, 16 at a time on SSE2. */
static void widen_plane(const uint8_t *x, int64_t n, float zp, float *out) {
    int64_t p = 0;
#if defined(__SSE2__)
    const __m128 z = _mm_set1_ps(zp);
    const __m128i zero = _mm_setzero_si128();
    for (; p + 16 <= n; p += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(x + p));
        __m128i w[2] = {_mm_unpacklo_epi8(v, zero), _mm_unpackhi_epi8(v, zero)};
        for (int h = 0; h < 2; h++) {
            _mm_storeu_ps(out + p + 8 * h, _mm_sub_ps(_mm_cvtepi32_ps(_mm_unpacklo_epi16(w[h], zero)), z));
            _mm_storeu_ps(out + p + 8 * h + 4, _mm_sub_ps(_mm_cvtepi32_ps(_mm_unpackhi_epi16(w[h], zero)), z));
        }
    }
#endif
    for (; p < n; p++) out[p] = (float)x[p] - zp;
}

/* y[0..n) from the exact float sums, 4 at a time on SSE2 with the same
 * arithmetic as requant (int32 sum plus bias, times mult, round half to
 * even, plus zy, saturated); returns the count done (the rest: requant). */
static int64_t requant_row(const float *acc, int64_t n, int32_t bias, float mult, int32_t zy, bool u8, uint8_t *y) {
    int64_t i = 0;
#if defined(__SSE2__)
    const __m128i b = _mm_set1_epi32(bias), z = _mm_set1_epi32(zy);
    const __m128 mv = _mm_set1_ps(mult), lo = _mm_set1_ps(-0x1p22f), hi = _mm_set1_ps(0x1p22f);
    for (; i + 4 <= n; i += 4) {
        __m128i a = _mm_add_epi32(_mm_cvttps_epi32(_mm_loadu_ps(acc + i)), b);
        __m128 v = _mm_min_ps(_mm_max_ps(_mm_mul_ps(_mm_cvtepi32_ps(a), mv), lo), hi);
        __m128i q = _mm_add_epi32(_mm_cvtps_epi32(v), z);
        __m128i w = _mm_packs_epi32(q, q);
        __m128i r = u8 ? _mm_packus_epi16(w, w) : _mm_packs_epi16(w, w);
        int32_t four = _mm_cvtsi128_si32(r);
        memcpy(y + i, &four, 4);
    }
#endif
    return i;
}

static void dw_range(void *arg, size_t begin, size_t end) {
    const dw_job *j = arg;
    const conv_geom *g = j->g;
    const int64_t OH = g->out[0], OW = g->out[1];
    float *xf = malloc((size_t)(g->in_size + OW) * sizeof *xf);
    if (!xf) return; /* the caller's preflight allocation of the same size succeeded */
    float *acc = xf + g->in_size;
    const bool u8 = j->s->ydt != ONYX_INT8;
    for (size_t u = begin; u < end; u++) {
        int64_t n = (int64_t)u / g->M, m = (int64_t)u % g->M;
        const uint8_t *xc = j->x + (n * g->C + m) * g->in_size;
        widen_plane(xc, g->in_size, (float)j->s->xzp, xf);
        uint8_t *yc = j->y + (n * g->M + m) * g->out_size;
        const float mult = j->s->mult[m];
        const int32_t bias = j->s->bias[m];
        for (int64_t oh = 0; oh < OH; oh++) {
            dw_row(j, m, xf, oh, acc);
            int64_t ow = requant_row(acc, OW, bias, mult, j->s->yzp, u8, yc + oh * OW);
            for (; ow < OW; ow++)
                yc[oh * OW + ow] = requant((int32_t)((uint32_t)(int32_t)acc[ow] + (uint32_t)bias), mult, j->s->yzp, u8);
        }
    }
    free(xf);
}

static onyx_status *conv_depthwise(const qconv_fast *s, const conv_geom *g, const uint8_t *x, uint8_t *y,
                                   onyx_threadpool *tp) {
    /* each worker's plane and row buffers: fail here, not in a worker */
    void *probe = malloc((size_t)(g->in_size + g->out[1]) * sizeof(float));
    if (!probe) return ONYX_OOM();
    free(probe);
    dw_job j = {s, g, x, y};
    size_t per = (size_t)(g->out_size * g->k_size);
    onyx_parallel_for(tp, (size_t)(g->N * g->M), per >= 16384 ? 1 : 16384 / (per ? per : 1), dw_range, &j);
    return NULL;
}

/* ------------------------------------------------------------ depthwise, channels-last */

typedef struct dwl_job {
    onyx_qdw_geom geom;    /* all but the block's channels (C, Cp: set per block) */
    onyx_qdw_params params;
    const onyx_qdw_isa *isa;
    const conv_geom *g;
    const uint8_t *x;
    uint8_t *y;
    int32_t xzp;
    int64_t Wp, slots;     /* widened row width (with the padding columns), rows kept */
    int64_t rows;          /* output rows of all images: N * OH */
    int64_t cb;            /* channels per block (the ISA's, a multiple of ONYX_QDW_LANE_PAD) */
    atomic_bool failed;    /* a worker's scratch could not be allocated */
} dwl_job;

/* Work items [begin, end): item u is output row u % rows (of image
 * (u % rows) / OH) of channel block u / rows. Blocks of channels (64 on
 * AVX-512) keep a widened row small, and give the many channels of small
 * images (7x7x960) to all threads in chunks that share no widened row:
 * splitting rows alone would widen each boundary's rows twice.
 * The widened input rows are kept in a ring of `slots` rows, enough for
 * one output row's window plus the stride, so each input row is widened
 * about once per range. The ring is this thread's scratch: only its
 * padding columns are zeroed here, widen writes the rest. */
static void dwl_range(void *arg, size_t begin, size_t end) {
    dwl_job *j = arg;
    const conv_geom *g = j->g;
    const int64_t H = g->in[0], W = g->in[1], C = g->C, OH = g->out[0];
    const size_t row_floats = (size_t)(j->Wp * j->cb);   /* j->cb: a multiple of 16 */
    const float *rows[ONYX_QDW_MAX_TAPS];   /* kh <= kh * kw <= 256 (fits) */
    bool heap;
    /* the ring, then its slots' tags (the input row each holds) */
    float *ring = onyx_scratch_acquire(1, (size_t)j->slots * (row_floats + 2), &heap);
    if (!ring) {
        atomic_store(&j->failed, true);
        return;
    }
    int64_t *tag = (int64_t *)(ring + (size_t)j->slots * row_floats);   /* row_floats: a multiple of 64 */
    int64_t image = -1, block = -1;
    onyx_qdw_geom geom = j->geom;
    onyx_qdw_params params = j->params;
    for (size_t u = begin; u < end; u++) {
        int64_t b = (int64_t)u / j->rows, r = (int64_t)u % j->rows, n = r / OH, oh = r % OH;
        if (b != block) {
            const int64_t c0 = b * j->cb;
            geom.C = C - c0 < j->cb ? C - c0 : j->cb;
            geom.Cp = (geom.C + ONYX_QDW_LANE_PAD - 1) / ONYX_QDW_LANE_PAD * ONYX_QDW_LANE_PAD;
            params.w = j->params.w + c0;
            params.bias = j->params.bias + c0;
            params.mult = j->params.mult + c0;
            for (int64_t k = 0; k < j->slots; k++) {   /* the padding columns: x - zp = 0 there */
                float *slot = ring + (size_t)k * row_floats;
                memset(slot, 0, (size_t)(g->pb[1] * geom.Cp) * sizeof *slot);
                memset(slot + (g->pb[1] + W) * geom.Cp, 0, (size_t)((j->Wp - g->pb[1] - W) * geom.Cp) * sizeof *slot);
            }
            block = b;
            image = -1;
        }
        if (n != image) {
            for (int64_t k = 0; k < j->slots; k++) tag[k] = -1;
            image = n;
        }
        const uint8_t *xn = j->x + n * H * W * C + b * j->cb;
        for (int64_t i = 0; i < g->k[0]; i++) {
            int64_t ih = oh * g->s[0] - g->pb[0] + i * g->d[0];
            if (ih < 0 || ih >= H) {
                rows[i] = NULL;
                continue;
            }
            int64_t k = ih % j->slots;
            float *slot = ring + (size_t)k * row_floats;
            if (tag[k] != ih) {
                j->isa->widen(xn + ih * W * C, W, C, geom.C, geom.Cp, j->xzp, slot + g->pb[1] * geom.Cp);
                tag[k] = ih;
            }
            rows[i] = slot;
        }
        j->isa->row(&geom, &params, rows, j->y + (n * OH + oh) * g->out[1] * g->M + b * j->cb);
    }
    onyx_scratch_release(ring, heap);
}

static onyx_status *conv_depthwise_nhwc(const qconv_fast *s, const conv_geom *g, const uint8_t *x, uint8_t *y,
                                        onyx_threadpool *tp) {
    int64_t need = (g->out[1] - 1) * g->s[1] + (g->k[1] - 1) * g->d[1] + 1;   /* columns the taps reach */
    dwl_job j = {.geom = {.OW = g->out[1], .kh = g->k[0], .kw = g->k[1], .sw = g->s[1], .dw = g->d[1],
                          .wt = s->Cp, .ys = g->M},
                 .params = {s->dwf, s->bias, s->mult, s->yzp, s->ydt != ONYX_INT8},
                 .isa = onyx_qdw(), .g = g, .x = x, .y = y, .xzp = s->xzp,
                 .Wp = g->in[1] + g->pb[1] > need ? g->in[1] + g->pb[1] : need,
                 .slots = (g->k[0] - 1) * g->d[0] + 1 + g->s[0], .rows = g->N * g->out[0]};
    j.cb = j.isa->block;
    atomic_init(&j.failed, false);
    size_t floats;
    if (__builtin_mul_overflow((size_t)(j.slots * j.Wp), (size_t)j.cb + 2, &floats)) return ONYX_OOM();
    const int64_t blocks = (g->C + j.cb - 1) / j.cb;
    const int64_t bc = g->C < j.cb ? g->C : j.cb;
    size_t per = (size_t)(g->out[1] * bc * g->k_size);
    onyx_parallel_for(tp, (size_t)(blocks * j.rows), per >= 16384 ? 1 : 16384 / (per ? per : 1), dwl_range, &j);
    return atomic_load(&j.failed) ? ONYX_OOM() : NULL;
}

/* ------------------------------------------------------------ run */

onyx_status *onyx_qconv_igemm_run(onyx_kernel_ctx *ctx) {
    const qconv_fast *s = ctx->state;
    const onyx_value *X = ctx->in[0];
    if (!onyx_is_tensor(X) || X->dtype != ONYX_UINT8 || X->rank != 4 || X->dims[s->nhwc ? 3 : 1] != s->C) {
        char sx[200];
        return ONYX_INVALID_ARG("QLinearConv: x %s must be uint8 of shape %s", X ? onyx_shape_str(X->dims, X->rank, sx, sizeof sx) : "(absent)",
                                s->nhwc ? "(N, H, W, C) (channels_last)" : "(N, C, H, W)");
    }
    onyx_value wv = {.kind = ONYX_VALUE_TENSOR, .rank = 4};
    memcpy(wv.dims, s->wdims, sizeof s->wdims);
    onyx_value xv = *X;   /* the geometry reads x as N, C, H, W */
    if (s->nhwc) {
        xv.dims[1] = X->dims[3];
        xv.dims[2] = X->dims[1];
        xv.dims[3] = X->dims[2];
    }
    conv_geom g;
    ONYX_TRY(onyx_conv_geometry(ctx->node, xv.dims, xv.rank, wv.dims, wv.rank, false, &g));
    int64_t dims[4] = {g.N, g.M, g.out[0], g.out[1]};
    if (s->nhwc) {
        dims[1] = g.out[0];
        dims[2] = g.out[1];
        dims[3] = g.M;
    }
    onyx_value *Y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, s->ydt, 4, dims, &Y));
    if (Y->numel == 0) return NULL;
    if (s->depthwise)
        return s->nhwc ? conv_depthwise_nhwc(s, &g, X->data, Y->data, ctx->tp)
                       : conv_depthwise(s, &g, X->data, Y->data, ctx->tp);
    return conv_gemm(s, &g, X->data, Y->data, ctx->tp);
}
