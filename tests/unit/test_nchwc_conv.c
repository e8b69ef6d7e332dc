/* ai.onyx.nchwc Conv (nchwc_conv.c): the operator run through its op def
 * (init with constant W and B, then compute) on inputs reordered to the
 * blocked layout here, against a naive double convolution, on the AVX-512
 * tiles and the portable fallback, with and without the thread pool; plus
 * malformed inputs that must be errors. `test_nchwc_conv bench` prints
 * GFLOP/s on ResNet-50's layer shapes (never asserted on). */
#include <malloc.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/threadpool.h"
#include "core/value.h"
#include "ir/schema.h"
#include "providers/cpu/kernel.h"
#include "providers/cpu/platform.h"
#include "providers/cpu/kernels/nchwc/nchwc.h"
#include "providers/cpu/kernels/nchwc/nchwc_conv.h"
#include "providers/cpu/kernels/nchwc/nchwc_impl.h"
#include "providers/cpu/kernels/nchwc/nchwc_winograd.h"
#include "testlib.h"

static onyx_value *tensor(int rank, const int64_t *dims, bool random) {
    onyx_value *v = NULL;
    CHECK_OK(onyx_tensor_new(ONYX_FLOAT, rank, dims, &v));
    for (int64_t i = 0; random && v && i < v->numel; i++) ((float *)v->data)[i] = testlib_frand();
    return v;
}

/* The block size the cases run with (the op's "block" attribute). */
static int blk = 16;

/* NCHW [N,C,H,W] -> blocked [N,ceil(C/blk),H,W,blk]; padding lanes get `fill`
 * values (random when fill_random, else 0): consumers must not depend on them. */
static onyx_value *to_blocked(const onyx_value *x, bool fill_random) {
    const int64_t N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3], Cb = onyx_nchwc_blocks(C, blk);
    const int64_t dims[5] = {N, Cb, H, W, blk};
    onyx_value *y = tensor(5, dims, false);
    float *d = y->data;
    const float *s = x->data;
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < Cb * blk; c++)
            for (int64_t p = 0; p < H * W; p++)
                d[((n * Cb + c / blk) * H * W + p) * blk + c % blk] =
                    c < C ? s[(n * C + c) * H * W + p] : fill_random ? testlib_frand() : 0.0f;
    return y;
}

/* ------------------------------------------------------------ running the op */

static onyx_attr_proto attr_ints(const char *name, const int64_t *v, size_t n) {
    return (onyx_attr_proto){.name = (char *)name, .type = ONYX_ATTR_INTS, .ints = (int64_t *)v, .n_ints = n};
}
static onyx_attr_proto attr_int(const char *name, int64_t v) {
    return (onyx_attr_proto){.name = (char *)name, .type = ONYX_ATTR_INT, .i = v};
}
static onyx_attr_proto attr_str(const char *name, const char *v) {
    return (onyx_attr_proto){.name = (char *)name, .type = ONYX_ATTR_STRING,
                             .s = {.ptr = (const uint8_t *)v, .len = strlen(v)}};
}
static onyx_attr_proto attr_floats(const char *name, const float *v, size_t n) {
    return (onyx_attr_proto){.name = (char *)name, .type = ONYX_ATTR_FLOATS, .floats = (float *)v, .n_floats = n};
}

typedef struct op_run {
    const onyx_op_def *def;
    onyx_node node;
    onyx_attr_proto attrs[16];   /* the caller's and "block" */
    int32_t ids_in[4], ids_out[1];
    void *state;
} op_run;

/* X's spatial size unknown at init (a model with dynamic image sizes). */
static bool x_size_unknown;

/* Init as the session does: W (and B when b_const) constant, static input
 * types with a symbolic batch (rank unknown for X when !x_rank_known). */
static onyx_status *op_init(op_run *r, const onyx_attr_proto *attrs, size_t n_attrs, const onyx_value **in,
                            size_t n_in, bool w_const, bool b_const, bool x_rank_known) {
    memset(r, 0, sizeof *r);
    r->def = onyx_cpu_find_kernel(ONYX_NCHWC_DOMAIN, "Conv", 1, ONYX_FLOAT);
    if (!r->def) return onyx_error(ONYX_ERR_NOT_IMPLEMENTED, "no ai.onyx.nchwc Conv kernel");
    if (n_attrs >= sizeof r->attrs / sizeof r->attrs[0]) return ONYX_INVALID_ARG("too many attributes");
    if (n_attrs) memcpy(r->attrs, attrs, n_attrs * sizeof *attrs);   /* attrs may be NULL when n_attrs is 0 */
    r->attrs[n_attrs++] = attr_int("block", blk);
    r->node = (onyx_node){.name = "t", .op_type = "Conv", .domain = ONYX_NCHWC_DOMAIN, .opset = 1, .n_in = n_in,
                          .n_out = 1, .in = r->ids_in, .out = r->ids_out, .n_attrs = n_attrs, .attrs = r->attrs};
    onyx_type types[4] = {{0}};
    const onyx_type *tps[4] = {NULL};
    const onyx_value *consts[4] = {NULL};
    for (size_t i = 0; i < n_in; i++) {
        if (!in[i]) continue;
        types[i] = (onyx_type){.kind = ONYX_VALUE_TENSOR, .dtype = in[i]->dtype, .rank = in[i]->rank};
        memcpy(types[i].dims, in[i]->dims, sizeof types[i].dims);
        if (i == 0) types[i].dims[0] = ONYX_DIM_SYMBOL_BASE;
        if (i == 0 && !x_rank_known) types[i].rank = -1;
        if (i == 0 && x_size_unknown) types[i].dims[2] = types[i].dims[3] = ONYX_DIM_UNKNOWN;
        tps[i] = &types[i];
    }
    if (w_const && n_in > 1) consts[1] = in[1];
    if (b_const && n_in > 2) consts[2] = in[2];
    onyx_kernel_info info = {.node = &r->node, .opset = 1, .n_in = n_in, .n_out = 1, .in_types = tps,
                             .const_in = consts};
    return r->def->init(&info, &r->state);
}

static onyx_status *op_compute(op_run *r, const onyx_value **in, size_t n_in, onyx_threadpool *tp,
                               onyx_value **out) {
    onyx_value *outs[1] = {NULL};
    bool used[1] = {true};
    onyx_kernel_ctx ctx = {.node = &r->node, .opset = 1, .n_in = n_in, .n_out = 1, .in = in, .out = outs,
                           .out_used = used, .state = r->state, .tp = tp};
    onyx_status *st = r->def->compute(&ctx);
    if (st) onyx_value_destroy(outs[0]);
    else *out = outs[0];
    return st;
}

static void op_free(op_run *r) {
    if (r->def && r->def->free_state) r->def->free_state(r->state);
    r->state = NULL;
}

/* How init sees the inputs: B computed (not constant), X's rank unknown. */
static bool b_computed, x_rank_unknown;

/* init + compute once */
static onyx_status *run_conv(const onyx_attr_proto *attrs, size_t n_attrs, const onyx_value **in, size_t n_in,
                             onyx_threadpool *tp, onyx_value **out) {
    op_run r;
    *out = NULL;
    onyx_status *st = op_init(&r, attrs, n_attrs, in, n_in, true, !b_computed, !x_rank_unknown);
    if (!st) st = op_compute(&r, in, n_in, tp, out);
    op_free(&r);
    return st;
}

/* ------------------------------------------------------------ reference */

typedef struct conv_case {
    int64_t N, C, H, W, M, KH, KW;
    int64_t sh, sw, dh, dw;
    int64_t pads[4];          /* top, left, bottom, right */
    const char *auto_pad;     /* NULL: explicit pads */
    bool bias, z, nchw, depthwise;
    int act;                  /* onyx_gemm_activation */
    bool act_params;          /* give activation_params (else the defaults) */
    float a, b;
} conv_case;

static int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe) {
    return (in + pb + pe - ((k - 1) * d + 1)) / s + 1;
}

/* Effective pads of the case (auto_pad SAME_* computed here, independently). */
static void case_pads(const conv_case *c, int64_t *pt, int64_t *pl, int64_t *pb, int64_t *pr) {
    *pt = c->pads[0], *pl = c->pads[1], *pb = c->pads[2], *pr = c->pads[3];
    if (!c->auto_pad) return;
    if (!strcmp(c->auto_pad, "VALID")) {
        *pt = *pl = *pb = *pr = 0;
        return;
    }
    bool upper = !strcmp(c->auto_pad, "SAME_UPPER");
    int64_t in[2] = {c->H, c->W}, k[2] = {c->KH, c->KW}, s[2] = {c->sh, c->sw}, d[2] = {c->dh, c->dw}, b[2], e[2];
    for (int i = 0; i < 2; i++) {
        int64_t o = (in[i] + s[i] - 1) / s[i], total = (o - 1) * s[i] + (k[i] - 1) * d[i] + 1 - in[i];
        if (total < 0) total = 0;
        b[i] = upper ? total / 2 : total - total / 2;
        e[i] = total - b[i];
    }
    *pt = b[0], *pl = b[1], *pb = e[0], *pr = e[1];
}

static double act_ref(double v, const conv_case *c, float a, float b) {
    switch (c->act) {
    case ONYX_GEMM_ACT_RELU: return v < 0 ? 0 : v;
    case ONYX_GEMM_ACT_CLIP: return fmin(fmax(v, a), b);
    case ONYX_GEMM_ACT_LEAKY_RELU: return v < 0 ? a * v : v;
    default: return v;
    }
}

/* Compares blocked y with the double convolution of NCHW x, w, b, and NCHW z
 * (zb: the blocked z, for its padding lanes). */
static bool check_conv(const conv_case *c, const onyx_value *x, const onyx_value *w, const onyx_value *b,
                       const onyx_value *z, const onyx_value *zb, const onyx_value *y, const char *what) {
    int64_t pt, pl, pb, pr;
    case_pads(c, &pt, &pl, &pb, &pr);
    const int64_t OH = out_size(c->H, c->KH, c->sh, c->dh, pt, pb), OW = out_size(c->W, c->KW, c->sw, c->dw, pl, pr);
    const int64_t Mb = onyx_nchwc_blocks(c->M, blk), Cg = c->depthwise ? 1 : c->C;
    const float a = c->act_params ? c->a : c->act == ONYX_GEMM_ACT_LEAKY_RELU ? 0.01f : c->act == ONYX_GEMM_ACT_CLIP ? -INFINITY : 0;
    const float bb = c->act_params ? c->b : INFINITY;
    const int64_t want[5] = {c->N, Mb, OH, OW, blk};
    if (!y || y->rank != 5 || memcmp(y->dims, want, sizeof want)) {
        fprintf(stderr, "%s: wrong output shape\n", what);
        return false;
    }
    const float *xs = x->data, *ws = w->data, *yd = y->data;
    for (int64_t n = 0; n < c->N; n++)
        for (int64_t m = 0; m < Mb * blk; m++)
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++) {
                    const int64_t yi = (((n * Mb + m / blk) * OH + oh) * OW + ow) * blk + m % blk;
                    double ref = 0, mag = 0;
                    if (m < c->M) {
                        if (b) ref = mag = ((const float *)b->data)[m];
                        mag = fabs(mag);
                        for (int64_t cg = 0; cg < Cg; cg++) {
                            const int64_t ci = c->depthwise ? m : cg;
                            for (int64_t kh = 0; kh < c->KH; kh++) {
                                int64_t ih = oh * c->sh + kh * c->dh - pt;
                                if (ih < 0 || ih >= c->H) continue;
                                for (int64_t kw = 0; kw < c->KW; kw++) {
                                    int64_t iw = ow * c->sw + kw * c->dw - pl;
                                    if (iw < 0 || iw >= c->W) continue;
                                    double p = (double)xs[((n * c->C + ci) * c->H + ih) * c->W + iw] *
                                               ws[((m * Cg + cg) * c->KH + kh) * c->KW + kw];
                                    ref += p;
                                    mag += fabs(p);
                                }
                            }
                        }
                        if (z) {
                            double zv = ((const float *)z->data)[((n * c->M + m) * OH + oh) * OW + ow];
                            ref += zv;
                            mag += fabs(zv);
                        }
                    } else if (zb) {   /* padding lane: 0 + Z's lane */
                        ref = ((const float *)zb->data)[yi];
                        mag = fabs(ref);
                    }
                    ref = act_ref(ref, c, a, bb);
                    double got = yd[yi];
                    if (!(fabs(got - ref) <= 1e-4 * mag + 1e-5)) {
                        fprintf(stderr, "%s: y[n=%lld, m=%lld, %lld, %lld] = %.7g, expected %.7g\n", what,
                                (long long)n, (long long)m, (long long)oh, (long long)ow, got, ref);
                        return false;
                    }
                }
    return true;
}

/* Runs one case through the op (X blocked unless c->nchw) and checks it. */
static void run_case(const conv_case *c, onyx_threadpool *tp) {
    int64_t pt, pl, pb, pr;
    case_pads(c, &pt, &pl, &pb, &pr);
    const int64_t OH = out_size(c->H, c->KH, c->sh, c->dh, pt, pb), OW = out_size(c->W, c->KW, c->sw, c->dw, pl, pr);
    const int64_t xd[4] = {c->N, c->C, c->H, c->W}, wd[4] = {c->M, c->depthwise ? 1 : c->C, c->KH, c->KW};
    const int64_t zd[4] = {c->N, c->M, OH, OW};
    onyx_value *x = tensor(4, xd, true), *w = tensor(4, wd, true), *b = c->bias ? tensor(1, &c->M, true) : NULL;
    onyx_value *z = c->z ? tensor(4, zd, true) : NULL;
    onyx_value *xb = c->nchw ? NULL : to_blocked(x, true), *zb = z ? to_blocked(z, true) : NULL, *y = NULL;
    int64_t strides[2] = {c->sh, c->sw}, dil[2] = {c->dh, c->dw}, ks[2] = {c->KH, c->KW};
    int64_t pads[4] = {c->pads[0], c->pads[1], c->pads[2], c->pads[3]};
    float params[2] = {c->a, c->b};
    static const char *const act_names[] = {NULL, "Relu", "Clip", "LeakyRelu"};
    onyx_attr_proto attrs[8];
    size_t na = 0;
    attrs[na++] = attr_ints("strides", strides, 2);
    attrs[na++] = attr_ints("dilations", dil, 2);
    attrs[na++] = attr_ints("kernel_shape", ks, 2);
    if (c->auto_pad) attrs[na++] = attr_str("auto_pad", c->auto_pad);
    else attrs[na++] = attr_ints("pads", pads, 4);
    if (c->depthwise) attrs[na++] = attr_int("group", c->C);
    if (c->act) attrs[na++] = attr_str("activation", act_names[c->act]);
    if (c->act && c->act_params) attrs[na++] = attr_floats("activation_params", params, c->act == ONYX_GEMM_ACT_CLIP ? 2 : 1);
    const onyx_value *in[4] = {c->nchw ? x : xb, w, b, zb};
    size_t n_in = zb ? 4 : b ? 3 : 2;
    char what[300];
    snprintf(what, sizeof what,
             "%s block %d N=%lld C=%lld %lldx%lld M=%lld k=%lldx%lld s=%lld,%lld d=%lld,%lld pads=%lld,%lld,%lld,%lld%s%s%s%s "
             "act=%d%s tp=%d",
             onyx_cpu()->name, blk, (long long)c->N, (long long)c->C, (long long)c->H, (long long)c->W,
             (long long)c->M, (long long)c->KH, (long long)c->KW, (long long)c->sh, (long long)c->sw,
             (long long)c->dh, (long long)c->dw, (long long)pt, (long long)pl, (long long)pb, (long long)pr,
             c->auto_pad ? c->auto_pad : "", c->bias ? " bias" : "", c->z ? " Z" : "",
             c->nchw ? " nchw" : c->depthwise ? " depthwise" : "", c->act, c->act_params ? "(params)" : "",
             onyx_threadpool_threads(tp));
    onyx_status *st = run_conv(attrs, na, in, n_in, tp, &y);
    if (st) {
        fprintf(stderr, "%s: %s\n", what, onyx_status_message(st));
        onyx_status_free(st);
        CHECK(false);
    } else {
        CHECK(check_conv(c, x, w, b, z, zb, y, what));
    }
    onyx_value_destroy(x);
    onyx_value_destroy(w);
    onyx_value_destroy(b);
    onyx_value_destroy(z);
    onyx_value_destroy(xb);
    onyx_value_destroy(zb);
    onyx_value_destroy(y);
}

/* ------------------------------------------------------------ cases */

#define P0 {0, 0, 0, 0}
#define P1 {1, 1, 1, 1}

static void test_cases(onyx_threadpool *tp) {
    const conv_case cases[] = {
        /* 1x1 stride 1 and 2, channels not multiples of 16 */
        {.N = 1, .C = 3, .H = 5, .W = 7, .M = 17, .KH = 1, .KW = 1, .sh = 1, .sw = 1, .dh = 1, .dw = 1, .pads = P0},
        {.N = 2, .C = 17, .H = 6, .W = 6, .M = 24, .KH = 1, .KW = 1, .sh = 1, .sw = 1, .dh = 1, .dw = 1, .pads = P0,
         .bias = true},
        {.N = 1, .C = 40, .H = 9, .W = 11, .M = 40, .KH = 1, .KW = 1, .sh = 2, .sw = 2, .dh = 1, .dw = 1, .pads = P0,
         .bias = true, .act = ONYX_GEMM_ACT_RELU},
        {.N = 1, .C = 24, .H = 8, .W = 8, .M = 72, .KH = 1, .KW = 1, .sh = 2, .sw = 1, .dh = 1, .dw = 1, .pads = P0,
         .z = true},
        /* 3x3 pad 1 stride 1 and 2 */
        {.N = 1, .C = 16, .H = 8, .W = 8, .M = 16, .KH = 3, .KW = 3, .sh = 1, .sw = 1, .dh = 1, .dw = 1, .pads = P1,
         .bias = true},
        {.N = 2, .C = 17, .H = 7, .W = 9, .M = 40, .KH = 3, .KW = 3, .sh = 1, .sw = 1, .dh = 1, .dw = 1, .pads = P1,
         .bias = true, .z = true, .act = ONYX_GEMM_ACT_RELU},
        {.N = 1, .C = 24, .H = 11, .W = 10, .M = 3, .KH = 3, .KW = 3, .sh = 2, .sw = 2, .dh = 1, .dw = 1,
         .pads = P1, .act = ONYX_GEMM_ACT_LEAKY_RELU},
        {.N = 1, .C = 33, .H = 13, .W = 13, .M = 80, .KH = 3, .KW = 3, .sh = 2, .sw = 2, .dh = 1, .dw = 1,
         .pads = P1, .bias = true, .act = ONYX_GEMM_ACT_CLIP, .act_params = true, .a = -0.5f, .b = 0.7f},
        /* 7x7 stride 2 pad 3 on NCHW input (the stem) */
        {.N = 1, .C = 3, .H = 23, .W = 21, .M = 64, .KH = 7, .KW = 7, .sh = 2, .sw = 2, .dh = 1, .dw = 1,
         .pads = {3, 3, 3, 3}, .bias = true, .nchw = true, .act = ONYX_GEMM_ACT_RELU},
        {.N = 2, .C = 5, .H = 9, .W = 12, .M = 20, .KH = 3, .KW = 3, .sh = 1, .sw = 1, .dh = 1, .dw = 1,
         .pads = P1, .z = true, .nchw = true},
        {.N = 1, .C = 3, .H = 6, .W = 6, .M = 8, .KH = 1, .KW = 1, .sh = 1, .sw = 1, .dh = 1, .dw = 1,
         .pads = P0, .nchw = true, .bias = true},
        /* dilation 2, asymmetric pads, auto_pad */
        {.N = 1, .C = 20, .H = 10, .W = 12, .M = 24, .KH = 3, .KW = 3, .sh = 1, .sw = 1, .dh = 2, .dw = 2,
         .pads = {2, 2, 2, 2}, .bias = true},
        {.N = 1, .C = 16, .H = 9, .W = 8, .M = 32, .KH = 3, .KW = 2, .sh = 1, .sw = 2, .dh = 2, .dw = 1,
         .pads = {0, 1, 2, 0}, .act = ONYX_GEMM_ACT_LEAKY_RELU, .act_params = true, .a = 0.2f},
        {.N = 1, .C = 18, .H = 10, .W = 9, .M = 20, .KH = 3, .KW = 3, .sh = 2, .sw = 2, .dh = 1, .dw = 1,
         .pads = P0, .auto_pad = "SAME_UPPER", .bias = true, .z = true},
        {.N = 1, .C = 18, .H = 10, .W = 9, .M = 20, .KH = 4, .KW = 4, .sh = 2, .sw = 1, .dh = 1, .dw = 1,
         .pads = P0, .auto_pad = "SAME_LOWER", .bias = true},
        {.N = 1, .C = 7, .H = 10, .W = 9, .M = 9, .KH = 5, .KW = 3, .sh = 1, .sw = 1, .dh = 1, .dw = 1,
         .pads = P0, .auto_pad = "VALID", .act = ONYX_GEMM_ACT_CLIP},
        /* pads larger than the kernel reaches; a 1x1 input */
        {.N = 1, .C = 16, .H = 1, .W = 1, .M = 16, .KH = 3, .KW = 3, .sh = 1, .sw = 1, .dh = 1, .dw = 1,
         .pads = {3, 2, 1, 4}, .bias = true},
        /* an empty input whose padding still makes an output; Clip with min > max */
        {.N = 1, .C = 16, .H = 0, .W = 3, .M = 5, .KH = 1, .KW = 1, .sh = 1, .sw = 1, .dh = 1, .dw = 1,
         .pads = P1, .bias = true, .act = ONYX_GEMM_ACT_RELU},
        {.N = 1, .C = 3, .H = 4, .W = 3, .M = 17, .KH = 1, .KW = 1, .sh = 1, .sw = 1, .dh = 1, .dw = 1,
         .pads = P1, .bias = true, .act = ONYX_GEMM_ACT_CLIP, .act_params = true, .a = 0.5f, .b = -0.5f},
        /* large C crosses the input-channel chunks */
        {.N = 1, .C = 512, .H = 5, .W = 6, .M = 40, .KH = 3, .KW = 3, .sh = 1, .sw = 1, .dh = 1, .dw = 1,
         .pads = P1, .bias = true, .z = true, .act = ONYX_GEMM_ACT_RELU},
        {.N = 2, .C = 2048, .H = 3, .W = 3, .M = 70, .KH = 1, .KW = 1, .sh = 1, .sw = 1, .dh = 1, .dw = 1,
         .pads = P0, .bias = true, .act = ONYX_GEMM_ACT_RELU},
        /* many output blocks (groups of 4 and 3) and many pixels (bands) */
        {.N = 1, .C = 32, .H = 30, .W = 30, .M = 160, .KH = 1, .KW = 1, .sh = 1, .sw = 1, .dh = 1, .dw = 1,
         .pads = P0, .bias = true},
        {.N = 1, .C = 16, .H = 28, .W = 29, .M = 96, .KH = 3, .KW = 3, .sh = 1, .sw = 1, .dh = 1, .dw = 1,
         .pads = P1, .z = true, .act = ONYX_GEMM_ACT_RELU},
        /* weights larger than the input, several bands: items group by group
         * (1x1 stride 1 and 2, as ResNet's 14x14 stage and downsample) */
        {.N = 2, .C = 1024, .H = 9, .W = 9, .M = 136, .KH = 1, .KW = 1, .sh = 1, .sw = 1, .dh = 1, .dw = 1,
         .pads = P0, .bias = true, .act = ONYX_GEMM_ACT_RELU},
        {.N = 1, .C = 1000, .H = 17, .W = 18, .M = 130, .KH = 1, .KW = 1, .sh = 2, .sw = 2, .dh = 1, .dw = 1,
         .pads = P0, .bias = true, .z = true},
        /* weights over 1 MB: each tile prefetches a share of the next chunk's */
        {.N = 1, .C = 1024, .H = 5, .W = 5, .M = 300, .KH = 1, .KW = 1, .sh = 1, .sw = 1, .dh = 1, .dw = 1,
         .pads = P0, .bias = true, .act = ONYX_GEMM_ACT_RELU},
        {.N = 1, .C = 200, .H = 4, .W = 3, .M = 200, .KH = 3, .KW = 3, .sh = 1, .sw = 1, .dh = 1, .dw = 1,
         .pads = P1, .z = true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(&cases[i], tp);
    /* output widths 1..13 (every tile edge), with 1, 2, 3, 4 and 5 output blocks */
    for (int64_t ow = 1; ow <= 13; ow++) {
        conv_case c = {.N = 1, .C = 19, .H = 3, .W = ow, .M = 16 * (1 + ow % 5) - ow % 3, .KH = 3, .KW = 3, .sh = 1,
                       .sw = 1, .dh = 1, .dw = 1, .pads = P1, .bias = ow % 2 == 0, .z = ow % 3 == 0,
                       .act = (int)(ow % 4)};
        run_case(&c, tp);
        conv_case d = {.N = 1, .C = 5, .H = 3, .W = 2 * ow + 1, .M = 16 * (1 + ow % 4), .KH = 3, .KW = 3, .sh = 1,
                       .sw = 2, .dh = 1, .dw = 1, .pads = P0, .nchw = true};
        run_case(&d, tp);
    }
}

/* Random shapes, attributes and fusions. */
static void test_random(onyx_threadpool *tp, int count) {
    for (int i = 0; i < count; i++) {
        uint64_t r = testlib_rand_u64();
        conv_case c = {.N = 1 + (int64_t)(r % 2), .C = 1 + (int64_t)(r >> 8) % 70};
        r = testlib_rand_u64();
        c.M = 1 + (int64_t)(r >> 8) % 90;
        r = testlib_rand_u64();
        c.KH = 1 + (int64_t)(r >> 8) % 4;
        c.KW = 1 + (int64_t)(r >> 16) % 4;
        c.sh = 1 + (int64_t)(r >> 24) % 2;
        c.sw = 1 + (int64_t)(r >> 28) % 3;
        c.dh = 1 + (int64_t)(r >> 32) % 2;
        c.dw = 1 + (int64_t)(r >> 36) % 2;
        for (int k = 0; k < 4; k++) c.pads[k] = (int64_t)(r >> (40 + 3 * k)) % 3;
        r = testlib_rand_u64();
        c.H = (c.KH - 1) * c.dh + 1 + (int64_t)(r >> 8) % 12;
        c.W = (c.KW - 1) * c.dw + 1 + (int64_t)(r >> 16) % 15;
        c.bias = (r >> 30) & 1;
        c.z = (r >> 31) & 1;
        c.nchw = ((r >> 32) & 7) == 0;
        c.act = (int)((r >> 35) % 4);
        c.act_params = (r >> 38) & 1;
        c.a = -0.3f;
        c.b = 0.4f;
        if (c.act == ONYX_GEMM_ACT_LEAKY_RELU) c.a = 0.1f;
        if (((r >> 40) & 7) == 0) c.auto_pad = "SAME_UPPER";
        run_case(&c, tp);
    }
}

/* B computed at run time, X's rank unknown at init (both layouts packed),
 * NCHW input with channels across chunks. */
static void test_init_variants(onyx_threadpool *tp) {
    const conv_case cases[] = {
        {.N = 1, .C = 300, .H = 6, .W = 5, .M = 20, .KH = 3, .KW = 3, .sh = 1, .sw = 1, .dh = 1, .dw = 1,
         .pads = P1, .bias = true, .nchw = true, .act = ONYX_GEMM_ACT_RELU},
        {.N = 2, .C = 21, .H = 6, .W = 5, .M = 33, .KH = 3, .KW = 3, .sh = 1, .sw = 1, .dh = 1, .dw = 1,
         .pads = P1, .bias = true, .z = true},
        {.N = 1, .C = 5, .H = 6, .W = 5, .M = 18, .KH = 3, .KW = 3, .sh = 2, .sw = 1, .dh = 1, .dw = 1,
         .pads = P1, .bias = true, .nchw = true},
        {.N = 1, .C = 32, .H = 7, .W = 6, .M = 32, .KH = 3, .KW = 3, .sh = 1, .sw = 1, .dh = 1, .dw = 1,
         .pads = P1, .bias = true, .depthwise = true},
    };
    for (int v = 0; v < 3; v++) {
        b_computed = v == 1 || v == 2;
        x_rank_unknown = v == 2;
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(&cases[i], tp);
    }
    b_computed = x_rank_unknown = false;
}

static void test_depthwise(onyx_threadpool *tp) {
    const conv_case cases[] = {
        {.N = 1, .C = 32, .H = 9, .W = 10, .M = 32, .KH = 3, .KW = 3, .sh = 1, .sw = 1, .dh = 1, .dw = 1,
         .pads = P1, .bias = true, .depthwise = true, .act = ONYX_GEMM_ACT_CLIP, .act_params = true, .a = 0,
         .b = 6},
        {.N = 2, .C = 24, .H = 11, .W = 12, .M = 24, .KH = 3, .KW = 3, .sh = 2, .sw = 2, .dh = 1, .dw = 1,
         .pads = P1, .bias = true, .z = true, .depthwise = true},
        {.N = 1, .C = 40, .H = 14, .W = 13, .M = 40, .KH = 5, .KW = 5, .sh = 2, .sw = 2, .dh = 1, .dw = 1,
         .pads = {2, 2, 2, 2}, .depthwise = true, .act = ONYX_GEMM_ACT_RELU},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(&cases[i], tp);
}

/* Winograd F(2,3) (forced on, so small shapes take it too): odd output
 * sizes (partial tiles), pads 0/1/asymmetric, channels not multiples of
 * 16, Z and each activation, batches, many tiles (several tile blocks). */
static void test_winograd(onyx_threadpool *tp) {
    const conv_case cases[] = {
        {.N = 1, .C = 17, .H = 5, .W = 5, .M = 40, .pads = P1, .bias = true},
        {.N = 2, .C = 40, .H = 7, .W = 7, .M = 17, .pads = P1, .bias = true, .z = true, .act = ONYX_GEMM_ACT_RELU},
        {.N = 1, .C = 32, .H = 13, .W = 13, .M = 64, .pads = P1, .act = ONYX_GEMM_ACT_LEAKY_RELU, .act_params = true,
         .a = 0.2f},
        {.N = 1, .C = 24, .H = 1, .W = 9, .M = 20, .pads = P1, .bias = true, .act = ONYX_GEMM_ACT_CLIP,
         .act_params = true, .a = -0.3f, .b = 0.4f},
        {.N = 2, .C = 16, .H = 9, .W = 1, .M = 16, .pads = P1, .z = true},
        {.N = 1, .C = 20, .H = 9, .W = 8, .M = 33, .pads = P0, .bias = true, .z = true, .act = ONYX_GEMM_ACT_CLIP},
        {.N = 1, .C = 18, .H = 8, .W = 11, .M = 24, .pads = {0, 1, 2, 0}, .bias = true},
        {.N = 2, .C = 33, .H = 6, .W = 7, .M = 50, .pads = {2, 0, 1, 3}, .z = true, .act = ONYX_GEMM_ACT_RELU},
        {.N = 1, .C = 16, .H = 3, .W = 3, .M = 16, .pads = P0, .bias = true},
        {.N = 1, .C = 16, .H = 2, .W = 2, .M = 16, .pads = {3, 2, 1, 4}, .bias = true},
        {.N = 1, .C = 16, .H = 10, .W = 9, .M = 20, .auto_pad = "SAME_UPPER", .bias = true, .z = true},
        {.N = 3, .C = 72, .H = 29, .W = 31, .M = 130, .pads = P1, .bias = true, .z = true, .act = ONYX_GEMM_ACT_RELU},
        {.N = 1, .C = 300, .H = 14, .W = 14, .M = 96, .pads = P1, .bias = true, .act = ONYX_GEMM_ACT_RELU},
        {.N = 2, .C = 64, .H = 56, .W = 56, .M = 64, .pads = P1, .bias = true, .z = true, .act = ONYX_GEMM_ACT_RELU},
    };
    onyx_nchwc_wino_force(1);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        conv_case c = cases[i];
        c.KH = c.KW = 3;
        c.sh = c.sw = c.dh = c.dw = 1;
        run_case(&c, tp);
    }
    onyx_nchwc_wino_force(0);
    /* init saw X's size and packed only the Winograd weights: compute must
     * take Winograd even where the rule (here: never) says direct */
    conv_case c = {.N = 1, .C = 40, .H = 8, .W = 9, .M = 36, .KH = 3, .KW = 3, .sh = 1, .sw = 1, .dh = 1, .dw = 1,
                   .pads = P1, .bias = true, .act = ONYX_GEMM_ACT_RELU};
    const int64_t xd[4] = {1, 40, 8, 9}, wd[4] = {36, 40, 3, 3}, bd = 36;
    onyx_value *x = tensor(4, xd, true), *w = tensor(4, wd, true), *b = tensor(1, &bd, true), *y = NULL;
    onyx_value *xb = to_blocked(x, true);
    int64_t pads[4] = {1, 1, 1, 1};
    onyx_attr_proto attrs[2] = {attr_ints("pads", pads, 4), attr_str("activation", "Relu")};
    const onyx_value *in[3] = {xb, w, b};
    op_run r;
    onyx_nchwc_wino_force(1);
    CHECK_OK(op_init(&r, attrs, 2, in, 3, true, true, true));
    onyx_nchwc_wino_force(-1);
    CHECK_OK(op_compute(&r, in, 3, tp, &y));
    onyx_nchwc_wino_force(0);
    CHECK(check_conv(&c, x, w, b, NULL, NULL, y, "Winograd weights only"));
    op_free(&r);
    onyx_value *vals[] = {x, w, b, xb, y};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) onyx_value_destroy(vals[i]);
    /* U over 1 MB and under 64 output pixels (ResNet-50's 7x7 stage): direct
     * on every ISA; the same Conv at 14x14 stays Winograd */
    onyx_nchwc_geom g = {.N = 1, .C = 512, .M = 512, .blk = 16, .KH = 3, .KW = 3, .SH = 1, .SW = 1, .DH = 1, .DW = 1,
                         .IH = 7, .IW = 7, .OH = 7, .OW = 7};
    CHECK(!onyx_nchwc_wino_applies(&g, true));
    CHECK(onyx_nchwc_wino_applies(&g, false));   /* size unknown at init: both weights packed */
    g.N = -1;   /* a symbolic batch at init: maybe 1 (direct weights packed too) */
    CHECK(!onyx_nchwc_wino_applies(&g, true));
    g.N = 8;    /* a batch of 8 shares U over 392 pixels */
    CHECK(onyx_nchwc_wino_applies(&g, true));
    g.N = 1;
    g.IH = g.IW = g.OH = g.OW = 14;
    CHECK(onyx_nchwc_wino_applies(&g, true));
}

/* ------------------------------------------------------------ errors */

/* A block the kernels do not implement is an error naming it. */
static void test_block_errors(void) {
    const int64_t xd[4] = {1, 12, 5, 5}, wd[4] = {12, 12, 1, 1};
    onyx_value *x = tensor(4, xd, true), *w = tensor(4, wd, true), *y = NULL;
    const onyx_value *in[2] = {x, w};
    const int saved = blk;
    blk = 12;
    CHECK_ERR(run_conv(NULL, 0, in, 2, NULL, &y), "blocks of 12 channels");
    blk = saved;
    CHECK(!y);
    onyx_value_destroy(x);
    onyx_value_destroy(w);
}

static void test_errors(void) {
    const int64_t xd[5] = {1, 2, 5, 5, 16}, wd[4] = {8, 20, 3, 3}, bd = 8;
    onyx_value *x = tensor(5, xd, true), *w = tensor(4, wd, true), *b = tensor(1, &bd, true), *y = NULL;
    int64_t pads[4] = {1, 1, 1, 1};
    onyx_attr_proto attrs[2] = {attr_ints("pads", pads, 4)};
    const onyx_value *in[4] = {x, w, b, NULL};
    op_run r;
    /* a correct one first */
    CHECK_OK(run_conv(attrs, 1, in, 3, NULL, &y));
    onyx_value_destroy(y);
    y = NULL;
    /* W computed, not constant */
    CHECK_ERR(op_init(&r, attrs, 1, in, 3, false, false, true), "W must be constant");
    /* X rank 3 */
    const int64_t x3d[3] = {1, 2, 5};
    onyx_value *x3 = tensor(3, x3d, true);
    in[0] = x3;
    CHECK_ERR(op_init(&r, attrs, 1, in, 3, true, true, true), "rank");
    CHECK_OK(op_init(&r, attrs, 1, in, 3, true, true, false));   /* rank unknown at init: compute says no */
    CHECK_ERR(op_compute(&r, in, 3, NULL, &y), "rank 5");
    op_free(&r);
    /* X.dims[1] != ceil(C / 16) and X.dims[4] != 16 */
    const int64_t xbad[5] = {1, 3, 5, 5, 16}, xbad2[5] = {1, 2, 5, 5, 8};
    onyx_value *xb = tensor(5, xbad, true), *xb2 = tensor(5, xbad2, true);
    in[0] = xb;
    CHECK_ERR(run_conv(attrs, 1, in, 3, NULL, &y), "[N,2,H,W,16]");
    in[0] = xb2;
    CHECK_ERR(run_conv(attrs, 1, in, 3, NULL, &y), "does not fit");
    in[0] = x;
    /* group 3 (not depthwise), and group 2 where W does not divide */
    const int64_t wgd[4] = {6, 2, 3, 3};
    onyx_value *wg = tensor(4, wgd, true);
    onyx_attr_proto gattrs[2] = {attr_ints("pads", pads, 4), attr_int("group", 3)};
    in[1] = wg;
    CHECK_ERR(run_conv(gattrs, 2, in, 2, NULL, &y), "group 3");
    in[1] = w;
    /* bias of the wrong size; Z of the wrong shape */
    const int64_t bd2 = 9;
    onyx_value *b2 = tensor(1, &bd2, true);
    in[2] = b2;
    CHECK_ERR(run_conv(attrs, 1, in, 3, NULL, &y), "bias");
    in[2] = b;
    const int64_t zd[5] = {1, 1, 5, 4, 16};
    onyx_value *z = tensor(5, zd, true);
    in[3] = z;
    CHECK_ERR(run_conv(attrs, 1, in, 4, NULL, &y), "Z must be");
    in[3] = NULL;
    /* attributes: unknown activation, kernel_shape mismatch, pads count, kernel larger than the input */
    onyx_attr_proto bad1[2] = {attr_ints("pads", pads, 4), attr_str("activation", "Tanh")};
    CHECK_ERR(run_conv(bad1, 2, in, 3, NULL, &y), "Tanh");
    onyx_attr_proto bad1b[2] = {attr_ints("pads", pads, 4), attr_int("activation", 1)};
    CHECK_ERR(run_conv(bad1b, 2, in, 3, NULL, &y), "activation must be a string");
    int64_t ks[2] = {3, 5};
    onyx_attr_proto bad2[2] = {attr_ints("pads", pads, 4), attr_ints("kernel_shape", ks, 2)};
    CHECK_ERR(run_conv(bad2, 2, in, 3, NULL, &y), "kernel_shape");
    onyx_attr_proto bad3[1] = {attr_ints("pads", pads, 2)};
    CHECK_ERR(run_conv(bad3, 1, in, 3, NULL, &y), "pads");
    int64_t dil[2] = {4, 4};
    onyx_attr_proto bad4[1] = {attr_ints("dilations", dil, 2)};
    CHECK_ERR(run_conv(bad4, 1, in, 3, NULL, &y), "smaller than the dilated kernel");
    int64_t neg[2] = {0, 1};
    onyx_attr_proto bad5[1] = {attr_ints("strides", neg, 2)};
    CHECK_ERR(run_conv(bad5, 1, in, 3, NULL, &y), "strides");
    onyx_attr_proto bad6[1] = {attr_str("auto_pad", "SAME")};
    CHECK_ERR(run_conv(bad6, 1, in, 3, NULL, &y), "auto_pad");
    /* depthwise on NCHW X */
    const int64_t x4d[4] = {1, 16, 5, 5}, wdd[4] = {16, 1, 3, 3};
    onyx_value *x4 = tensor(4, x4d, true), *wdw = tensor(4, wdd, true);
    onyx_attr_proto dattrs[1] = {attr_int("group", 16)};
    const onyx_value *din[2] = {x4, wdw};
    CHECK_ERR(run_conv(dattrs, 1, din, 2, NULL, &y), "blocked X");
    /* W of rank 3 */
    const int64_t w3d[3] = {8, 20, 3};
    onyx_value *w3 = tensor(3, w3d, true);
    in[1] = w3;
    CHECK_ERR(run_conv(attrs, 1, in, 2, NULL, &y), "rank 4");
    CHECK(y == NULL);
    onyx_value *vals[] = {x, w, b, x3, xb, xb2, wg, b2, z, x4, wdw, w3};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) onyx_value_destroy(vals[i]);
}

/* Shape inference: [N, ceil(M/16), OH, OW, 16] with a symbolic N. */
static void test_infer(void) {
    const onyx_op_def *def = onyx_cpu_find_kernel(ONYX_NCHWC_DOMAIN, "Conv", 1, ONYX_FLOAT);
    onyx_infer_fn infer = onyx_schema_find(ONYX_NCHWC_DOMAIN, "Conv", 1);   /* the rule: ir/schemas */
    CHECK(def && infer && def->consumes_const_input);
    if (!def || !infer) return;
    int64_t pads[4] = {1, 1, 1, 1}, strides[2] = {2, 2};
    onyx_attr_proto attrs[2] = {attr_ints("pads", pads, 4), attr_ints("strides", strides, 2)};
    int32_t ids[4] = {0}, oid[1] = {0};
    onyx_node node = {.name = "t", .op_type = "Conv", .domain = ONYX_NCHWC_DOMAIN, .opset = 1, .n_in = 2,
                      .n_out = 1, .in = ids, .out = oid, .n_attrs = 2, .attrs = attrs};
    onyx_type x = {.kind = ONYX_VALUE_TENSOR, .dtype = ONYX_FLOAT, .rank = 5, .dims = {ONYX_DIM_SYMBOL_BASE - 3, 3, 56, 55, 16}};
    onyx_type w = {.kind = ONYX_VALUE_TENSOR, .dtype = ONYX_FLOAT, .rank = 4, .dims = {40, 40, 3, 3}};
    const onyx_type *ins[2] = {&x, &w};
    onyx_type out = {0};
    onyx_infer_ctx ic = {.node = &node, .opset = 1, .n_in = 2, .n_out = 1, .in = ins, .out = &out};
    CHECK_OK(infer(&ic));
    CHECK(out.rank == 5 && out.dims[0] == ONYX_DIM_SYMBOL_BASE - 3 && out.dims[1] == 3 && out.dims[2] == 28 &&
          out.dims[3] == 28 && out.dims[4] == 16 && out.dtype == ONYX_FLOAT);
    x.dims[2] = ONYX_DIM_UNKNOWN;
    CHECK_OK(infer(&ic));
    CHECK(out.dims[1] == 3 && out.dims[2] == ONYX_DIM_UNKNOWN && out.dims[3] == 28);
    x.dims[1] = 2;   /* ceil(40/16) = 3 */
    x.dims[2] = 56;
    CHECK_ERR(infer(&ic), "does not fit");
}

/* Init packs W and a constant B; compute runs with their data released. */
static void test_released_weights(onyx_threadpool *tp) {
    conv_case c = {.N = 1, .C = 20, .H = 6, .W = 7, .M = 18, .KH = 3, .KW = 3, .sh = 1, .sw = 1, .dh = 1, .dw = 1,
                   .pads = P1, .bias = true};
    const int64_t xd[4] = {1, 20, 6, 7}, wd[4] = {18, 20, 3, 3}, bd = 18;
    onyx_value *x = tensor(4, xd, true), *w = tensor(4, wd, true), *b = tensor(1, &bd, true), *y = NULL;
    onyx_value *xb = to_blocked(x, false), *w2 = NULL, *b2 = NULL;
    CHECK_OK(onyx_value_clone(w, &w2));
    CHECK_OK(onyx_value_clone(b, &b2));
    int64_t pads[4] = {1, 1, 1, 1};
    onyx_attr_proto attrs[1] = {attr_ints("pads", pads, 4)};
    const onyx_value *in[3] = {xb, w2, b2};
    op_run r;
    CHECK_OK(op_init(&r, attrs, 1, in, 3, true, true, true));
    CHECK(r.def->consumes_const_input(r.state, 1) && r.def->consumes_const_input(r.state, 2));
    CHECK(!r.def->consumes_const_input(r.state, 0));
    memset(w2->data, 0xff, w2->nbytes);   /* NaN: must never be read */
    memset(b2->data, 0xff, b2->nbytes);
    CHECK_OK(op_compute(&r, in, 3, tp, &y));
    CHECK(check_conv(&c, x, w, b, NULL, NULL, y, "released weights"));
    op_free(&r);
    onyx_value *vals[] = {x, w, b, xb, w2, b2, y};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) onyx_value_destroy(vals[i]);
}

/* Winograd where X's size is unknown at init: the direct weights are
 * packed, and U is made from them (W itself released) by the first run that
 * takes Winograd; runs that do not never make it. Two runs at once on a
 * fresh state both wait for the one U. */
typedef struct lazy_run {
    op_run *r;
    const onyx_value **in;
    onyx_value *y;
    onyx_status *st;
} lazy_run;

static void *lazy_run_thread(void *arg) {
    lazy_run *l = arg;
    l->st = op_compute(l->r, l->in, 3, NULL, &l->y);
    return NULL;
}

static void test_lazy_winograd(onyx_threadpool *tp) {
    conv_case c = {.N = 2, .C = 20, .H = 6, .W = 7, .M = 18, .KH = 3, .KW = 3, .sh = 1, .sw = 1, .dh = 1, .dw = 1,
                   .pads = P1, .bias = true};
    const int64_t xd[4] = {2, 20, 6, 7}, wd[4] = {18, 20, 3, 3}, bd = 18;
    onyx_value *x = tensor(4, xd, true), *w = tensor(4, wd, true), *b = tensor(1, &bd, true), *y = NULL;
    onyx_value *xb = to_blocked(x, false), *w2 = NULL;
    CHECK_OK(onyx_value_clone(w, &w2));
    int64_t pads[4] = {1, 1, 1, 1};
    onyx_attr_proto attrs[1] = {attr_ints("pads", pads, 4)};
    const onyx_value *in[3] = {xb, w2, b};
    x_size_unknown = true;
    for (int round = 0; round < 2; round++) {
        op_run r;
        onyx_nchwc_wino_force(1);   /* init: Winograd may apply, the size does not settle it */
        CHECK_OK(op_init(&r, attrs, 1, in, 3, true, true, true));
        CHECK(r.def->consumes_const_input(r.state, 1));
        memset(w2->data, 0xff, w2->nbytes);   /* NaN: W is released after init */
        onyx_nchwc_wino_force(-1);            /* a direct run first: no U needed */
        CHECK_OK(op_compute(&r, in, 3, tp, &y));
        CHECK(check_conv(&c, x, w, b, NULL, NULL, y, "lazy Winograd: direct run"));
        onyx_value_destroy(y);
        y = NULL;
        onyx_nchwc_wino_force(1);
        if (round == 0) {   /* then Winograd runs: the first makes U */
            for (int k = 0; k < 2; k++) {
                CHECK_OK(op_compute(&r, in, 3, tp, &y));
                CHECK(check_conv(&c, x, w, b, NULL, NULL, y, "lazy Winograd"));
                onyx_value_destroy(y);
                y = NULL;
            }
        } else {            /* two Winograd runs at once */
            lazy_run runs[2] = {{.r = &r, .in = in}, {.r = &r, .in = in}};
            pthread_t th[2];
            for (int k = 0; k < 2; k++) CHECK(pthread_create(&th[k], NULL, lazy_run_thread, &runs[k]) == 0);
            for (int k = 0; k < 2; k++) {
                pthread_join(th[k], NULL);
                CHECK_OK(runs[k].st);
                CHECK(check_conv(&c, x, w, b, NULL, NULL, runs[k].y, "lazy Winograd, concurrent"));
                onyx_value_destroy(runs[k].y);
            }
        }
        onyx_nchwc_wino_force(0);
        op_free(&r);
        memcpy(w2->data, w->data, w->nbytes);
    }
    x_size_unknown = false;
    onyx_value *vals[] = {x, w, b, xb, w2};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) onyx_value_destroy(vals[i]);
}

/* ------------------------------------------------------------ bench */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median GFLOP/s of repeated runs (packing once, as a session does). */
/* The bench's batch and whether it adds a Z input. */
static int64_t bench_n = 1;
static bool bench_z;

static double bench_one(int64_t C, int64_t H, int64_t M, int64_t k, int64_t s, bool nchw, onyx_threadpool *tp) {
    const int64_t p = k / 2, xd[4] = {bench_n, C, H, H}, wd[4] = {M, C, k, k};
    const int64_t OH = (H + 2 * p - k) / s + 1, zd[4] = {bench_n, M, OH, OH};
    onyx_value *x = tensor(4, xd, true), *w = tensor(4, wd, true), *b = tensor(1, &M, true), *y = NULL;
    onyx_value *xb = nchw ? NULL : to_blocked(x, false), *zn = bench_z ? tensor(4, zd, true) : NULL;
    onyx_value *z = zn ? to_blocked(zn, false) : NULL;
    int64_t pads[4] = {p, p, p, p}, st[2] = {s, s};
    onyx_attr_proto attrs[3] = {attr_ints("pads", pads, 4), attr_ints("strides", st, 2), attr_str("activation", "Relu")};
    const onyx_value *in[4] = {nchw ? x : xb, w, b, z};
    const size_t n_in = z ? 4 : 3;
    op_run r;
    CHECK_OK(op_init(&r, attrs, 3, in, n_in, true, true, true));
    const double flops = 2.0 * bench_n * M * OH * OH * C * k * k;
    /* warm-up: caches, and the clock, which ramps up over tens of ms from idle */
    for (double t0 = now_s(); now_s() - t0 < 0.15;) {
        CHECK_OK(op_compute(&r, in, n_in, tp, &y));
        onyx_value_destroy(y);
        y = NULL;
    }
    double t[15];
    int reps = 0;
    for (double total = 0; reps < 15 && (reps < 5 || total < 0.3); reps++) {
        double t0 = now_s();
        CHECK_OK(op_compute(&r, in, n_in, tp, &y));
        t[reps] = now_s() - t0;
        total += t[reps];
        onyx_value_destroy(y);
        y = NULL;
    }
    qsort(t, (size_t)reps, sizeof t[0], cmp_double);
    op_free(&r);
    onyx_value *vals[] = {x, w, b, xb, zn, z};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) onyx_value_destroy(vals[i]);
    /* ONYX_BENCH_BEST=1: the fastest run (a loaded machine's medians are
     * mostly waiting) */
    const char *best = getenv("ONYX_BENCH_BEST");
    return flops / t[best && *best == '1' ? 0 : (reps - 1) / 2] * 1e-9;
}

static void bench_list(const int64_t (*shapes)[6], size_t n, onyx_threadpool *tp) {
    for (size_t i = 0; i < n; i++) {
        const int64_t *s = shapes[i];
        printf("  C=%-5lld H=%-4lld M=%-4lld k=%lld s=%lld%s  1T %6.1f", (long long)s[0], (long long)s[1],
               (long long)s[2], (long long)s[3], (long long)s[4], s[5] ? " nchw" : "     ",
               bench_one(s[0], s[1], s[2], s[3], s[4], s[5], NULL));
        if (tp) printf("  %dT %6.1f", onyx_threadpool_threads(tp), bench_one(s[0], s[1], s[2], s[3], s[4], s[5], tp));
        printf("\n");
    }
}

static void bench(onyx_threadpool *tp) {
    static const int64_t resnet[][6] = {   /* C, H, M, k, stride, NCHW input */
        {64, 56, 64, 3, 1, 0},    {128, 28, 128, 3, 1, 0}, {256, 14, 256, 3, 1, 0}, {512, 7, 512, 3, 1, 0},
        {64, 56, 256, 1, 1, 0},   {256, 56, 64, 1, 1, 0},  {1024, 14, 256, 1, 1, 0}, {2048, 7, 512, 1, 1, 0},
        {256, 56, 512, 1, 2, 0},  {3, 224, 64, 7, 2, 1},
    };
    static const int64_t others[][6] = {   /* MobileNetV2 and SqueezeNet 1.1 (group 1 convs) */
        {3, 224, 32, 3, 2, 1},   {32, 112, 16, 1, 1, 0},  {16, 112, 96, 1, 1, 0}, {96, 56, 24, 1, 1, 0},
        {24, 56, 144, 1, 1, 0},  {144, 28, 32, 1, 1, 0},  {192, 14, 64, 1, 1, 0}, {384, 14, 96, 1, 1, 0},
        {576, 7, 160, 1, 1, 0},  {960, 7, 320, 1, 1, 0},  {320, 7, 1280, 1, 1, 0}, {3, 224, 64, 3, 2, 1},
        {64, 55, 16, 1, 1, 0},   {16, 55, 64, 3, 1, 0},   {32, 27, 128, 3, 1, 0}, {384, 13, 64, 1, 1, 0},
        {64, 13, 256, 3, 1, 0},  {512, 13, 1000, 1, 1, 0},
    };
    printf("nchwc Conv (%s), GFLOP/s, median; ResNet-50:\n", onyx_cpu()->name);
    bench_list(resnet, sizeof resnet / sizeof resnet[0], tp);
    printf("MobileNetV2 / SqueezeNet 1.1:\n");
    bench_list(others, sizeof others / sizeof others[0], tp);
}

/* 3x3 stride 1 convolutions: direct against Winograd F(2,3), effective
 * GFLOP/s (2 * N * M * OH * OW * C * 9 over the time). */
static void bench_wino(onyx_threadpool *tp) {
    static const int64_t shapes[][4] = {   /* C, H, M, N */
        {64, 56, 64, 1},  {128, 28, 128, 1}, {256, 14, 256, 1}, {512, 7, 512, 1}, {512, 7, 512, 8},
        {16, 55, 64, 1},  {32, 27, 128, 1},  {48, 13, 192, 1},  {64, 13, 256, 1}, {32, 14, 32, 1},
        {32, 7, 32, 1},   {64, 7, 64, 1},    {256, 6, 256, 1},  {256, 5, 256, 1}, {16, 28, 16, 1},
        {16, 14, 16, 1},  {16, 7, 16, 1},    {8, 14, 8, 1},     {256, 4, 256, 1}, {256, 3, 256, 1},
        {64, 4, 64, 1},   {2048, 7, 512, 1}, {64, 112, 64, 1},
    };
    printf("3x3 s1 pad 1 bias Relu (%s), effective GFLOP/s: direct | Winograd\n", onyx_cpu()->name);
    for (int zi = 0; zi < 2; zi++) {
        bench_z = zi == 1;
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
            const int64_t *s = shapes[i];
            double r[2][2];
            bench_n = s[3];
            for (int m = 0; m < 2; m++) {
                onyx_nchwc_wino_force(m == 0 ? -1 : 1);
                r[m][0] = bench_one(s[0], s[1], s[2], 3, 1, false, NULL);
                r[m][1] = bench_one(s[0], s[1], s[2], 3, 1, false, tp);
            }
            printf("  N=%lld C=%-4lld H=%-3lld M=%-4lld%s  1T %6.1f | %6.1f   2T %6.1f | %6.1f\n", (long long)s[3],
                   (long long)s[0], (long long)s[1], (long long)s[2], bench_z ? " Z" : "  ", r[0][0], r[1][0],
                   r[0][1], r[1][1]);
        }
    }
    onyx_nchwc_wino_force(0);
    bench_n = 1;
    bench_z = false;
}

/* Every case on the ISA and block in use. */
static void test_all(onyx_threadpool *tp) {
    test_cases(NULL);
    test_cases(tp);
    test_depthwise(NULL);
    test_depthwise(tp);
    test_random(NULL, 60);
    test_random(tp, 30);
    test_init_variants(tp);
    test_released_weights(tp);
    test_winograd(NULL);
    test_winograd(tp);
    test_lazy_winograd(tp);
    /* every structurally eligible case again, through Winograd */
    onyx_nchwc_wino_force(1);
    test_cases(tp);
    test_random(tp, 30);
    test_init_variants(NULL);
    test_released_weights(tp);
    onyx_nchwc_wino_force(0);
}


/* Blocks of 4 (the portable path only), and the other ISAs' blocks under the
 * sanitizers: fewer cases. */
static void test_block4(onyx_threadpool *tp) {
    test_cases(tp);
    test_depthwise(tp);
    test_random(tp, 30);
    test_winograd(tp);
}

int main(int argc, char **argv) {
    onyx_threadpool *tp = onyx_threadpool_create(2);
    if (argc > 1 && !strcmp(argv[1], "bench")) {
        /* bench [avx512|avx2|generic] | bench C H M k stride [nchw]: one shape. Freed
         * outputs are reused, not unmapped, as the executor's arena would be:
         * no page faults in the timings. */
        mallopt(M_MMAP_THRESHOLD, 32 << 20);   /* glibc's maximum */
        mallopt(M_TRIM_THRESHOLD, 1 << 30);
        if (argc == 3 && !strcmp(argv[2], "wino")) {
            bench_wino(tp);
            onyx_threadpool_free(tp);
            return 0;
        }
        if (argc == 3 && !onyx_cpu_force_isa(argv[2])) {
            fprintf(stderr, "bench: ISA '%s' unknown or not supported by this CPU\n", argv[2]);
            return 2;
        }
        /* the table's block (ONYX_NCHWC_BLOCK overrides it) */
        blk = onyx_cpu_nchwc_block() ? onyx_cpu_nchwc_block() : 16;
        printf("block %d\n", blk);
        if (argc >= 7) {
            int64_t v[5];
            for (int i = 0; i < 5; i++) v[i] = atoll(argv[2 + i]);
            bool nchw = argc > 7 && !strcmp(argv[7], "nchw");
            double one = bench_one(v[0], v[1], v[2], v[3], v[4], nchw, NULL);
            double two = bench_one(v[0], v[1], v[2], v[3], v[4], nchw, tp);
            printf("1T %.1f GFLOP/s, %dT %.1f GFLOP/s\n", one, onyx_threadpool_threads(tp), two);
        } else {
            bench(tp);
        }
        onyx_threadpool_free(tp);
        return 0;
    }
    const char *default_isa = onyx_cpu()->name;
    static const char *const isas[] = {"avx512", "avx2", "neon", "generic"};
    /* every ISA with 16- and 8-channel blocks (each ISA's own and the
     * other's: a graph laid out on one table runs on any), and blocks of 4
     * on the portable path and NEON's tile */
    static const int blocks[] = {16, 8, 4};
    for (size_t i = 0; i < sizeof isas / sizeof isas[0]; i++) {
        if (!onyx_cpu_force_isa(isas[i])) {
            printf("  %s: not supported by this CPU, skipped\n", isas[i]);
            continue;
        }
        int own = onyx_cpu_nchwc_block();
        for (size_t k = 0; k < 3; k++) {
            blk = blocks[k];
            if (blk == 4 && strcmp(isas[i], "generic") && strcmp(isas[i], "neon")) continue;
            /* Under the sanitizers (a Debug build, 10x slower) the full set
             * runs on each ISA's own block only and the shorter one on the
             * others: every ISA x block pair still runs every tile edge. */
            bool full = blk != 4 && (!TESTLIB_SANITIZED || blk == own);
            printf("  isa %s, block %d%s\n", isas[i], blk, full ? "" : " (short set)");
            if (full) test_all(tp);
            else test_block4(tp);
        }
    }
    CHECK(onyx_cpu_force_isa(default_isa));
    blk = 16;   /* the error and inference cases spell out 16-channel shapes */
    test_block_errors();
    test_errors();
    test_infer();
    onyx_threadpool_free(tp);
    return testlib_finish("test_nchwc_conv");
}
