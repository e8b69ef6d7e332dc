/* Blocked-channel (NCHWc) reorders, pools and depthwise convolution
 * (kernels/nchwc/nchwc_reorder.c, nchwc_pool.c, nchwc_depthwise.c) against naive
 * NCHW references written here, on the AVX-512 and the portable paths.
 * The ops run through their registry defs with a hand-filled kernel
 * context, as the executor runs them; the depthwise rows through the
 * nchwc.h entry points the blocked Conv uses. `test_nchwc_ops bench`
 * prints single-thread timings (never asserted on). */
#include <math.h>
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
#include "providers/cpu/kernels/nchwc/nchwc_impl.h"
#include "testlib.h"

/* The block size the ops run with (their "block" attribute). */
static int64_t blk = 16;

/* ------------------------------------------------------------ helpers */

static onyx_attr_proto attr_int(const char *name, int64_t v) {
    return (onyx_attr_proto){.name = (char *)name, .type = ONYX_ATTR_INT, .i = v};
}
static onyx_attr_proto attr_ints(const char *name, const int64_t *v, size_t n) {
    return (onyx_attr_proto){.name = (char *)name, .type = ONYX_ATTR_INTS, .ints = (int64_t *)v, .n_ints = n};
}
static onyx_attr_proto attr_str(const char *name, const char *v) {
    return (onyx_attr_proto){.name = (char *)name, .type = ONYX_ATTR_STRING,
                             .s = {.ptr = (const uint8_t *)v, .len = strlen(v)}};
}

static onyx_value *new_tensor(int dtype, int rank, const int64_t *dims) {
    onyx_value *v = NULL;
    CHECK_OK(onyx_tensor_new(dtype, rank, dims, &v));
    return v;
}

static onyx_value *rand_nchw(int64_t N, int64_t C, int64_t H, int64_t W) {
    int64_t d[4] = {N, C, H, W};
    onyx_value *v = new_tensor(ONYX_FLOAT, 4, d);
    for (int64_t i = 0; v && i < v->numel; i++) ((float *)v->data)[i] = testlib_frand();
    return v;
}

/* The blocked twin of an NCHW tensor, by hand; padding lanes get `pad`. */
static onyx_value *block_by_hand(const onyx_value *x, float pad) {
    int64_t N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3], Cb = onyx_nchwc_blocks(C, blk);
    int64_t d[5] = {N, Cb, H, W, blk};
    onyx_value *y = new_tensor(ONYX_FLOAT, 5, d);
    const float *xs = x->data;
    float *ys = y->data;
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < Cb * blk; c++)
            for (int64_t p = 0; p < H * W; p++)
                ys[((n * Cb + c / blk) * H * W + p) * blk + c % blk] = c < C ? xs[(n * C + c) * H * W + p] : pad;
    return y;
}

/* Runs an ai.onyx.nchwc op through its registry def. n_out outputs are
 * declared, all wired; out[0] returned. */
static onyx_status *run_op_n(const char *op, const onyx_attr_proto *attrs, size_t n_attrs, const onyx_value **in,
                             size_t n_in, size_t n_out, onyx_value **out, onyx_threadpool *tp) {
    *out = NULL;
    const onyx_op_def *def = onyx_cpu_find_kernel(ONYX_NCHWC_DOMAIN, op, 1, ONYX_FLOAT);
    if (!def) return onyx_error(ONYX_ERR_NOT_IMPLEMENTED, "no kernel for %s", op);
    int32_t ids_in[4] = {0, 1, 2, 3}, ids_out[2] = {4, 5};
    /* the caller's attributes, and "block" unless it gave one */
    onyx_attr_proto all[16];
    if (n_attrs >= 16) return ONYX_INVALID_ARG("too many attributes");
    bool has_block = false;
    for (size_t k = 0; k < n_attrs; k++) {
        all[k] = attrs[k];
        has_block |= !strcmp(attrs[k].name, "block");
    }
    if (!has_block) all[n_attrs++] = attr_int("block", blk);
    onyx_node node = {.name = "t", .op_type = op, .domain = ONYX_NCHWC_DOMAIN, .opset = 1, .n_in = n_in,
                      .n_out = n_out, .in = ids_in, .out = ids_out, .n_attrs = n_attrs, .attrs = all};
    onyx_value *outs[2] = {NULL, NULL};
    bool used[2] = {true, true};
    onyx_kernel_ctx ctx = {.node = &node, .opset = 1, .n_in = n_in, .n_out = n_out, .in = in, .out = outs,
                           .out_used = used, .tp = tp};
    onyx_status *st = def->compute(&ctx);
    if (st || outs[0] == NULL) {
        onyx_value_destroy(outs[0]);
        onyx_value_destroy(outs[1]);
        return st ? st : onyx_error(ONYX_ERR_RUNTIME, "%s produced no output", op);
    }
    onyx_value_destroy(outs[1]);
    *out = outs[0];
    return NULL;
}

static onyx_status *run_op(const char *op, const onyx_attr_proto *attrs, size_t n_attrs, const onyx_value *x,
                           onyx_value **out, onyx_threadpool *tp) {
    const onyx_value *in[1] = {x};
    return run_op_n(op, attrs, n_attrs, in, 1, 1, out, tp);
}

/* Runs an ai.onnx op (pool.c) for cross-checks. */
static onyx_status *run_onnx(const char *op, const onyx_attr_proto *attrs, size_t n_attrs, const onyx_value *x,
                             onyx_value **out) {
    const onyx_op_def *def = onyx_cpu_find_kernel("", op, 19, ONYX_FLOAT);
    if (!def) return onyx_error(ONYX_ERR_NOT_IMPLEMENTED, "no kernel for %s", op);
    int32_t ids_in[1] = {0}, ids_out[1] = {1};
    onyx_node node = {.name = "r", .op_type = op, .domain = "", .opset = 19, .n_in = 1, .n_out = 1,
                      .in = ids_in, .out = ids_out, .n_attrs = n_attrs, .attrs = attrs};
    onyx_value *outs[1] = {NULL};
    bool used[1] = {true};
    const onyx_value *in[1] = {x};
    onyx_kernel_ctx ctx = {.node = &node, .opset = 19, .n_in = 1, .n_out = 1, .in = in, .out = outs,
                           .out_used = used};
    onyx_status *st = def->compute(&ctx);
    if (st) onyx_value_destroy(outs[0]);
    else *out = outs[0];
    return st;
}

static bool close_enough(double got, double ref) {
    if (isnan(ref) || isnan(got)) return isnan(ref) && isnan(got);
    if (isinf(ref) || isinf(got)) return got == ref;
    return fabs(got - ref) <= 1e-5 + 1e-4 * fabs(ref);
}

/* Compares blocked y (real lanes c < C) with NCHW reference ref. */
static bool check_blocked(const onyx_value *y, const double *ref, int64_t N, int64_t C, int64_t H, int64_t W,
                          const char *what) {
    int64_t Cb = onyx_nchwc_blocks(C, blk);
    if (!y || y->rank != 5 || y->dims[0] != N || y->dims[1] != Cb || y->dims[2] != H || y->dims[3] != W ||
        y->dims[4] != blk) {
        char b[200];
        fprintf(stderr, "%s: output shape %s, expected [%lld,%lld,%lld,%lld,%lld]\n", what,
                y ? onyx_shape_str(y->dims, y->rank, b, sizeof b) : "(none)", (long long)N, (long long)Cb,
                (long long)H, (long long)W, (long long)blk);
        return false;
    }
    const float *ys = y->data;
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t p = 0; p < H * W; p++) {
                double got = ys[((n * Cb + c / blk) * H * W + p) * blk + c % blk];
                double e = ref[(n * C + c) * H * W + p];
                if (!close_enough(got, e)) {
                    fprintf(stderr, "%s [%s]: n=%lld c=%lld h=%lld w=%lld: got %.9g, expected %.9g\n", what,
                            onyx_cpu()->name, (long long)n, (long long)c, (long long)(p / W),
                            (long long)(p % W), got, e);
                    return false;
                }
            }
    return true;
}

/* ------------------------------------------------------------ reorders */

static void test_reorder_roundtrip(onyx_threadpool *tp) {
    static const int64_t channels[] = {1, 3, 16, 17, 40};
    static const int64_t hw[][2] = {{1, 1}, {5, 7}, {4, 4}, {23, 29}, {3, 200}};
    for (size_t ci = 0; ci < 5; ci++)
        for (size_t si = 0; si < 5; si++) {
            int64_t N = 2, C = channels[ci], H = hw[si][0], W = hw[si][1];
            onyx_value *x = rand_nchw(N, C, H, W), *yb = NULL, *back = NULL;
            onyx_value *want = block_by_hand(x, 0.0f);
            CHECK_OK(run_op("ReorderInput", NULL, 0, x, &yb, tp));
            bool ok = yb && yb->numel == want->numel && yb->rank == 5 &&
                      !memcmp(yb->dims, want->dims, 5 * sizeof(int64_t)) &&
                      !memcmp(yb->data, want->data, (size_t)want->numel * sizeof(float));
            if (!ok) fprintf(stderr, "ReorderInput C=%lld H=%lld W=%lld [%s] differs\n", (long long)C, (long long)H,
                             (long long)W, onyx_cpu()->name);
            CHECK(ok);
            onyx_attr_proto ch = attr_int("channels", C);
            if (yb) CHECK_OK(run_op("ReorderOutput", &ch, 1, yb, &back, tp));
            ok = back && back->numel == x->numel && !memcmp(back->dims, x->dims, 4 * sizeof(int64_t)) &&
                 !memcmp(back->data, x->data, (size_t)x->numel * sizeof(float));
            if (!ok) fprintf(stderr, "ReorderOutput C=%lld H=%lld W=%lld [%s] differs\n", (long long)C, (long long)H,
                             (long long)W, onyx_cpu()->name);
            CHECK(ok);
            onyx_value_destroy(x);
            onyx_value_destroy(yb);
            onyx_value_destroy(back);
            onyx_value_destroy(want);
        }
    /* ReorderOutput ignores whatever the padding lanes hold */
    onyx_value *x = rand_nchw(1, 20, 3, 5), *back = NULL;
    onyx_value *b = block_by_hand(x, 7.5f);
    onyx_attr_proto ch = attr_int("channels", 20);
    CHECK_OK(run_op("ReorderOutput", &ch, 1, b, &back, tp));
    CHECK(back && !memcmp(back->data, x->data, (size_t)x->numel * sizeof(float)));
    onyx_value_destroy(back);
    /* empty tensors */
    onyx_value *e = rand_nchw(0, 20, 3, 5), *eb = NULL;
    CHECK_OK(run_op("ReorderInput", NULL, 0, e, &eb, tp));
    CHECK(eb && eb->numel == 0 && eb->dims[1] == onyx_nchwc_blocks(20, blk));
    onyx_value_destroy(e);
    onyx_value_destroy(eb);
    onyx_value_destroy(x);
    onyx_value_destroy(b);
}

/* ------------------------------------------------------------ pools */

typedef struct pool_case {
    const char *name;
    bool avg;
    int64_t N, C, H, W, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
    bool ceil_mode, count_pad;
    const char *auto_pad;   /* NULL: explicit pads */
} pool_case;

/* Output size and begin pad along one axis, ONNX semantics. */
static void ref_axis(const pool_case *c, int64_t in, int64_t k, int64_t s, int64_t d, int64_t p0, int64_t p1,
                     int64_t *out, int64_t *pb, int64_t *pe) {
    int64_t ek = (k - 1) * d + 1;
    if (c->auto_pad && strcmp(c->auto_pad, "VALID")) {
        *out = (in + s - 1) / s;
        int64_t total = (*out - 1) * s + ek - in;
        if (total < 0) total = 0;
        *pb = !strcmp(c->auto_pad, "SAME_UPPER") ? total / 2 : total - total / 2;
        *pe = total - *pb;
        return;
    }
    if (c->auto_pad) p0 = p1 = 0;
    *pb = p0;
    *pe = p1;
    double q = (double)(in + p0 + p1 - ek) / (double)s;
    *out = (int64_t)(c->ceil_mode ? ceil(q) : floor(q)) + 1;
    if (c->ceil_mode && (*out - 1) * s >= in + p0) (*out)--;   /* no window starting in the end padding */
}

/* Naive NCHW pooling in double. */
static double *ref_pool(const pool_case *c, const float *x, int64_t *OH, int64_t *OW) {
    int64_t pbh, peh, pbw, pew;
    ref_axis(c, c->H, c->kh, c->sh, c->dh, c->pt, c->pb, OH, &pbh, &peh);
    ref_axis(c, c->W, c->kw, c->sw, c->dw, c->pl, c->pr, OW, &pbw, &pew);
    double *r = malloc((size_t)(c->N * c->C * *OH * *OW) * sizeof(double) + 1);
    for (int64_t pl = 0; pl < c->N * c->C; pl++)
        for (int64_t oh = 0; oh < *OH; oh++)
            for (int64_t ow = 0; ow < *OW; ow++) {
                double acc = c->avg ? 0 : -INFINITY;
                int64_t inside = 0, padded = 0;
                for (int64_t i = 0; i < c->kh; i++)
                    for (int64_t j = 0; j < c->kw; j++) {
                        int64_t h = oh * c->sh - pbh + i * c->dh, w = ow * c->sw - pbw + j * c->dw;
                        if (h >= -pbh && h < c->H + peh && w >= -pbw && w < c->W + pew) padded++;
                        if (h < 0 || h >= c->H || w < 0 || w >= c->W) continue;
                        double v = x[(pl * c->H + h) * c->W + w];
                        inside++;
                        acc = c->avg ? acc + v : (v > acc ? v : acc);
                    }
                if (c->avg) acc /= (double)(c->count_pad ? padded : inside);
                r[(pl * *OH + oh) * *OW + ow] = acc;
            }
    return r;
}

static size_t pool_attrs(const pool_case *c, onyx_attr_proto *a, int64_t *buf) {
    size_t n = 0;
    buf[0] = c->kh, buf[1] = c->kw, buf[2] = c->sh, buf[3] = c->sw, buf[4] = c->dh, buf[5] = c->dw;
    buf[6] = c->pt, buf[7] = c->pl, buf[8] = c->pb, buf[9] = c->pr;
    a[n++] = attr_ints("kernel_shape", buf, 2);
    a[n++] = attr_ints("strides", buf + 2, 2);
    if (c->dh != 1 || c->dw != 1) a[n++] = attr_ints("dilations", buf + 4, 2);
    if (c->auto_pad) a[n++] = attr_str("auto_pad", c->auto_pad);
    else a[n++] = attr_ints("pads", buf + 6, 4);
    if (c->ceil_mode) a[n++] = attr_int("ceil_mode", 1);
    if (c->avg) a[n++] = attr_int("count_include_pad", c->count_pad);
    return n;
}

static void run_pool_case(const pool_case *c, onyx_threadpool *tp, bool cross_check) {
    onyx_value *x = rand_nchw(c->N, c->C, c->H, c->W);
    onyx_value *xb = block_by_hand(x, 0.0f), *y = NULL, *yo = NULL;
    int64_t OH, OW, buf[10];
    double *ref = ref_pool(c, x->data, &OH, &OW);
    onyx_attr_proto a[8];
    size_t na = pool_attrs(c, a, buf);
    const char *op = c->avg ? "AveragePool" : "MaxPool";
    onyx_status *st = run_op(op, a, na, xb, &y, tp);
    CHECK_OK(st);
    bool ok = check_blocked(y, ref, c->N, c->C, OH, OW, c->name);
    if (!ok) fprintf(stderr, "  pool case %s failed\n", c->name);
    CHECK(ok);
    if (cross_check) {   /* the NCHW kernel of pool.c agrees */
        CHECK_OK(run_onnx(op, a, na, x, &yo));
        bool same = yo && yo->numel == c->N * c->C * OH * OW;
        for (int64_t i = 0; same && i < yo->numel; i++) same = close_enough(((float *)yo->data)[i], ref[i]);
        if (!same) fprintf(stderr, "  pool case %s: reference disagrees with pool.c\n", c->name);
        CHECK(same);
    }
    free(ref);
    onyx_value_destroy(x);
    onyx_value_destroy(xb);
    onyx_value_destroy(y);
    onyx_value_destroy(yo);
}

static void test_pools(onyx_threadpool *tp) {
    static const pool_case cases[] = {
        /* name, avg, N, C, H, W, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr, ceil, count_pad, auto_pad */
        {"resnet max 3x3 s2 p1", false, 1, 64, 112, 112, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, false, false, NULL},
        {"max 3x3 s2 p1 odd", false, 2, 20, 17, 19, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, false, false, NULL},
        {"max 2x2 s2", false, 1, 40, 16, 22, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0, false, false, NULL},
        {"max 2x2 s2 odd", false, 2, 17, 9, 13, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0, false, false, NULL},
        {"squeezenet ceil 111", false, 1, 24, 111, 111, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0, true, false, NULL},
        {"squeezenet ceil 55", false, 1, 40, 55, 55, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0, true, false, NULL},
        {"ceil drops window in pad", false, 1, 3, 6, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, true, false, NULL},
        {"max dilation 2", false, 1, 18, 15, 16, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, false, false, NULL},
        {"max dilation 2x3 s2", false, 1, 5, 20, 21, 2, 3, 2, 2, 2, 3, 1, 2, 0, 1, true, false, NULL},
        {"max asym pads", false, 1, 16, 10, 12, 3, 2, 1, 2, 1, 1, 0, 1, 2, 0, false, false, NULL},
        {"max 1x1 s2", false, 1, 9, 7, 8, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, false, false, NULL},
        {"max kernel = input", false, 2, 33, 7, 7, 7, 7, 1, 1, 1, 1, 0, 0, 0, 0, false, false, NULL},
        {"max wide kernel 5x5 s1 p2", false, 1, 16, 9, 30, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, false, false, NULL},
        {"max SAME_LOWER 2x2 s2", false, 1, 7, 9, 11, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0, false, false, "SAME_LOWER"},
        {"max VALID", false, 1, 7, 9, 11, 3, 3, 2, 2, 1, 1, 5, 5, 5, 5, false, false, "VALID"},
        {"avg 3x3 s1 p1 exclude pad", true, 2, 20, 14, 15, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, false, false, NULL},
        {"avg 3x3 s1 p1 include pad", true, 2, 20, 14, 15, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, false, true, NULL},
        {"avg 2x2 s2", true, 1, 32, 28, 28, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0, false, false, NULL},
        {"avg 3x3 s2 SAME_UPPER", true, 1, 17, 13, 16, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0, false, false, "SAME_UPPER"},
        {"avg 3x3 s2 SAME_UPPER incl", true, 1, 17, 13, 16, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0, false, true, "SAME_UPPER"},
        {"avg 4x4 s1 SAME_LOWER", true, 1, 5, 6, 9, 4, 4, 1, 1, 1, 1, 0, 0, 0, 0, false, false, "SAME_LOWER"},
        {"avg ceil include pad", true, 1, 21, 10, 11, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, true, true, NULL},
        {"avg ceil exclude pad", true, 1, 21, 10, 11, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, true, false, NULL},
        {"avg dilation 2 asym", true, 1, 19, 12, 13, 3, 3, 1, 2, 2, 2, 0, 3, 2, 1, false, true, NULL},
        {"avg wide 7x7 p3", true, 1, 16, 7, 40, 7, 7, 1, 1, 1, 1, 3, 3, 3, 3, false, false, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_pool_case(&cases[i], NULL, true);
        run_pool_case(&cases[i], tp, false);   /* rows split over threads */
    }
}

static void test_global_pools(onyx_threadpool *tp) {
    static const int64_t shapes[][4] = {{1, 17, 7, 7}, {2, 40, 1, 1}, {1, 3, 13, 11}, {1, 64, 56, 56}, {3, 16, 2, 3}};
    for (size_t s = 0; s < 5; s++)
        for (int avg = 0; avg < 2; avg++) {
            int64_t N = shapes[s][0], C = shapes[s][1], H = shapes[s][2], W = shapes[s][3];
            onyx_value *x = rand_nchw(N, C, H, W), *xb = block_by_hand(x, 0.0f), *y = NULL;
            double *ref = malloc((size_t)(N * C) * sizeof(double));
            for (int64_t pl = 0; pl < N * C; pl++) {
                double acc = avg ? 0 : -INFINITY;
                for (int64_t p = 0; p < H * W; p++) {
                    double v = ((float *)x->data)[pl * H * W + p];
                    acc = avg ? acc + v : (v > acc ? v : acc);
                }
                ref[pl] = avg ? acc / (double)(H * W) : acc;
            }
            const char *op = avg ? "GlobalAveragePool" : "GlobalMaxPool";
            CHECK_OK(run_op(op, NULL, 0, xb, &y, s % 2 ? tp : NULL));
            bool ok = check_blocked(y, ref, N, C, 1, 1, op);
            if (!ok) fprintf(stderr, "  %s on [%lld,%lld,%lld,%lld] failed\n", op, (long long)N, (long long)C,
                             (long long)H, (long long)W);
            CHECK(ok);
            free(ref);
            onyx_value_destroy(x);
            onyx_value_destroy(xb);
            onyx_value_destroy(y);
        }
}

/* ------------------------------------------------------------ depthwise */

typedef struct dw_case {
    int64_t N, C, H, W, KH, KW, SH, SW, DH, DW, PT, PL, PB, PR;
    bool bias, z;
    int act;
} dw_case;

static const char *act_name(int kind) {
    static const char *const names[] = {"none", "relu", "clip", "leaky"};
    return kind >= 0 && kind < 4 ? names[kind] : "?";
}

static double act_ref(double v, const onyx_nchwc_act *a) {
    switch (a->kind) {
    case ONYX_GEMM_ACT_RELU: return v < 0 ? 0 : v;
    case ONYX_GEMM_ACT_CLIP: return v < a->a ? a->a : v > a->b ? a->b : v;
    case ONYX_GEMM_ACT_LEAKY_RELU: return v < 0 ? a->a * v : v;
    default: return v;
    }
}

/* One depthwise case: its geometry and data. */
typedef struct dw_data {
    const dw_case *c;
    onyx_nchwc_geom g;
    onyx_nchwc_act act;
    onyx_value *x, *z;   /* NCHW */
    float *w, *bias;     /* [C][KH][KW]; Cb * 16 */
} dw_data;

/* The naive output of channel ch at (n, oh, ow); mag: the sum of the
 * magnitudes of its terms, for the tolerance. */
static double ref_dw_pixel(const dw_data *d, int64_t n, int64_t ch, int64_t oh, int64_t ow, double *mag) {
    const dw_case *c = d->c;
    const float *xs = d->x->data, *zs = d->z->data;
    double acc = c->bias ? d->bias[ch] : 0;
    *mag = fabs(acc);
    for (int64_t i = 0; i < c->KH; i++)
        for (int64_t j = 0; j < c->KW; j++) {
            int64_t h = oh * c->SH - c->PT + i * c->DH, wc = ow * c->SW - c->PL + j * c->DW;
            if (h < 0 || h >= c->H || wc < 0 || wc >= c->W) continue;
            double t = (double)xs[((n * c->C + ch) * c->H + h) * c->W + wc] * d->w[(ch * c->KH + i) * c->KW + j];
            acc += t;
            *mag += fabs(t);
        }
    if (c->z) {
        acc += zs[((n * c->C + ch) * d->g.OH + oh) * d->g.OW + ow];
        *mag += 1;
    }
    return act_ref(acc, &d->act);
}

static void dw_report(const dw_data *d, int64_t n, int64_t ch, int64_t oh, int64_t ow, double got, double e) {
    const dw_case *c = d->c;
    fprintf(stderr, "depthwise [%s] C=%lld %lldx%lld k%lldx%lld s%lld,%lld d%lld,%lld pads %lld,%lld,%lld,%lld "
            "bias=%d z=%d act=%s: n=%lld c=%lld oh=%lld ow=%lld got %.9g expected %.9g\n",
            onyx_cpu()->name, (long long)c->C, (long long)c->H, (long long)c->W, (long long)c->KH,
            (long long)c->KW, (long long)c->SH, (long long)c->SW, (long long)c->DH, (long long)c->DW,
            (long long)c->PT, (long long)c->PL, (long long)c->PB, (long long)c->PR, c->bias, c->z,
            act_name(c->act), (long long)n, (long long)ch, (long long)oh, (long long)ow, got, e);
}

static void dw_setup(const dw_case *c, dw_data *d) {
    memset(d, 0, sizeof *d);
    d->c = c;
    onyx_nchwc_geom *g = &d->g;
    *g = (onyx_nchwc_geom){.N = c->N, .C = c->C, .M = c->C, .IH = c->H, .IW = c->W, .KH = c->KH, .KW = c->KW,
                           .SH = c->SH, .SW = c->SW, .DH = c->DH, .DW = c->DW, .PT = c->PT, .PL = c->PL,
                           .blk = blk};
    g->Cb = g->Mb = onyx_nchwc_blocks(c->C, blk);
    g->OH = (c->H + c->PT + c->PB - ((c->KH - 1) * c->DH + 1)) / c->SH + 1;
    g->OW = (c->W + c->PL + c->PR - ((c->KW - 1) * c->DW + 1)) / c->SW + 1;
    d->act = (onyx_nchwc_act){c->act, 0, 0};
    if (c->act == ONYX_GEMM_ACT_CLIP) d->act.a = -0.4f, d->act.b = 0.6f;
    if (c->act == ONYX_GEMM_ACT_LEAKY_RELU) d->act.a = 0.1f;
    d->x = rand_nchw(c->N, c->C, c->H, c->W);
    d->z = rand_nchw(c->N, c->C, g->OH, g->OW);
    int64_t nw = c->C * c->KH * c->KW;
    d->w = malloc((size_t)nw * sizeof(float));
    d->bias = calloc((size_t)(g->Cb * blk), sizeof(float));   /* padding lanes 0, as the Conv packs it */
    for (int64_t i = 0; i < nw; i++) d->w[i] = testlib_frand();
    for (int64_t i = 0; i < c->C; i++) d->bias[i] = testlib_frand();
}

/* Runs the case through onyx_nchwc_dw_pack / dw_rows, each block in
 * `bands` row bands, and checks every real lane against the naive
 * convolution (padding lanes: finite); false at the first difference. */
static bool run_dw_case(const dw_case *c, int bands) {
    dw_data d;
    dw_setup(c, &d);
    const onyx_nchwc_geom *g = &d.g;
    onyx_value *xb = block_by_hand(d.x, 0.0f), *zb = block_by_hand(d.z, 0.0f);
    float *packed = malloc((size_t)onyx_nchwc_dw_packed_size(g) * sizeof(float));
    onyx_nchwc_dw_pack(g, d.w, packed);
    int64_t img_out = g->Cb * g->OH * g->OW * blk, img_in = g->Cb * c->H * c->W * blk;
    float *y = malloc((size_t)(c->N * img_out + 1) * sizeof(float));
    for (int64_t i = 0; i < c->N * img_out; i++) y[i] = NAN;   /* every pixel must be written */
    for (int64_t n = 0; n < c->N; n++)
        for (int64_t cb = 0; cb < g->Cb; cb++)
            for (int b = 0; b < bands; b++)
                onyx_nchwc_dw_rows(g, (const float *)xb->data + n * img_in, packed, c->bias ? d.bias : NULL,
                                   c->z ? (const float *)zb->data + n * img_out : NULL, y + n * img_out, cb,
                                   g->OH * b / bands, g->OH * (b + 1) / bands, &d.act);
    bool ok = true;
    for (int64_t n = 0; ok && n < c->N; n++)
        for (int64_t ch = 0; ok && ch < g->Cb * blk; ch++)
            for (int64_t p = 0; ok && p < g->OH * g->OW; p++) {
                int64_t oh = p / g->OW, ow = p % g->OW;
                double got = y[n * img_out + ((ch / blk * g->OH + oh) * g->OW + ow) * blk + ch % blk], mag;
                if (ch >= c->C) {
                    ok = isfinite(got);
                    continue;
                }
                double e = ref_dw_pixel(&d, n, ch, oh, ow, &mag);
                ok = fabs(got - e) <= 1e-5 * (1 + mag);
                if (!ok) dw_report(&d, n, ch, oh, ow, got, e);
            }
    free(d.w);
    free(d.bias);
    free(packed);
    free(y);
    onyx_value_destroy(d.x);
    onyx_value_destroy(d.z);
    onyx_value_destroy(xb);
    onyx_value_destroy(zb);
    return ok;
}

static void test_depthwise(void) {
    static const dw_case cases[] = {
        /* N, C, H, W, KH, KW, SH, SW, DH, DW, PT, PL, PB, PR, bias, z, act */
        {1, 32, 20, 21, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, true, false, ONYX_GEMM_ACT_CLIP},
        {2, 24, 17, 18, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, true, false, ONYX_GEMM_ACT_RELU},
        {1, 20, 19, 19, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, true, true, ONYX_GEMM_ACT_NONE},
        {1, 40, 16, 23, 5, 5, 2, 2, 1, 1, 2, 2, 2, 2, false, false, ONYX_GEMM_ACT_LEAKY_RELU},
        {1, 16, 15, 17, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, true, false, ONYX_GEMM_ACT_NONE},
        {1, 17, 14, 20, 3, 3, 2, 2, 2, 2, 1, 2, 3, 0, true, true, ONYX_GEMM_ACT_RELU},
        {1, 5, 9, 26, 3, 3, 1, 1, 1, 1, 0, 2, 2, 0, true, false, ONYX_GEMM_ACT_NONE},
        {1, 3, 8, 30, 3, 5, 1, 3, 1, 1, 1, 0, 1, 4, false, true, ONYX_GEMM_ACT_CLIP},
        {1, 16, 6, 27, 1, 7, 1, 1, 1, 1, 0, 3, 0, 3, true, false, ONYX_GEMM_ACT_NONE},
        {1, 16, 27, 6, 7, 1, 1, 1, 1, 1, 3, 0, 3, 0, true, false, ONYX_GEMM_ACT_NONE},
        {1, 18, 1, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, true, true, ONYX_GEMM_ACT_LEAKY_RELU},
        {1, 16, 4, 4, 3, 3, 1, 1, 1, 1, 4, 4, 4, 4, true, false, ONYX_GEMM_ACT_NONE},   /* rows all padding */
        {1, 33, 7, 7, 7, 7, 1, 1, 1, 1, 0, 0, 0, 0, true, false, ONYX_GEMM_ACT_NONE},
        {1, 8, 12, 40, 3, 3, 2, 2, 1, 1, 0, 0, 1, 1, false, false, ONYX_GEMM_ACT_NONE},
        {1, 16, 10, 12, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0, true, false, ONYX_GEMM_ACT_RELU},
        {1, 16, 11, 37, 5, 5, 1, 2, 3, 1, 6, 1, 6, 3, true, true, ONYX_GEMM_ACT_CLIP},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        CHECK(run_dw_case(&cases[i], 1));
        CHECK(run_dw_case(&cases[i], 3));   /* the Conv hands out row bands */
    }
    /* widths 1..13 (interior blocks of 8 and their remainders), each
     * activation, with and without bias and z, stride 1 and 2 */
    for (int64_t W = 1; W <= 13; W++)
        for (int s = 1; s <= 2; s++) {
            dw_case c = {1, 20, 5, W, 3, 3, s, s, 1, 1, 1, 1, 1, 1, W % 2 == 0, W % 3 == 0, (int)(W % 4)};
            CHECK(run_dw_case(&c, 1));
            dw_case c5 = {1, 16, 6, W, 5, 5, s, s, 1, 1, 2, 2, 2, 2, true, W % 2 == 1, (int)((W + s) % 4)};
            CHECK(run_dw_case(&c5, 2));
            dw_case cd = {1, 17, 5, W, 3, 3, s, s, 2, 2, 2, 2, 2, 2, true, false, (int)((W + 1) % 4)};
            CHECK(run_dw_case(&cd, 1));
        }
    /* every activation on one shape */
    for (int a = 0; a < 4; a++)
        for (int bz = 0; bz < 4; bz++) {
            dw_case c = {2, 19, 9, 10, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, bz & 1, (bz & 2) != 0, a};
            CHECK(run_dw_case(&c, 2));
        }
}

/* ------------------------------------------------------------ inference */

static void test_infer(void) {
    /* the rules come from the schemas (ir/schema.h); the kernels from the CPU registry */
    onyx_infer_fn ri = onyx_schema_find(ONYX_NCHWC_DOMAIN, "ReorderInput", 1),
                  ro = onyx_schema_find(ONYX_NCHWC_DOMAIN, "ReorderOutput", 1),
                  mp = onyx_schema_find(ONYX_NCHWC_DOMAIN, "MaxPool", 1),
                  gp = onyx_schema_find(ONYX_NCHWC_DOMAIN, "GlobalAveragePool", 1);
    CHECK(ri && ro && mp && gp && onyx_schema_find(ONYX_NCHWC_DOMAIN, "AveragePool", 1) &&
          onyx_schema_find(ONYX_NCHWC_DOMAIN, "GlobalMaxPool", 1));
    CHECK(onyx_cpu_find_kernel(ONYX_NCHWC_DOMAIN, "MaxPool", 1, ONYX_FLOAT) != NULL);
    if (!ri || !ro || !mp || !gp) return;
    const int64_t S1 = ONYX_DIM_SYMBOL_BASE, S2 = ONYX_DIM_SYMBOL_BASE - 1;
    onyx_type in = {.kind = ONYX_VALUE_TENSOR, .dtype = ONYX_FLOAT, .rank = 4, .dims = {S1, 17, S2, 8}}, out;
    const onyx_type *ins[1] = {&in};
    int32_t ids[2] = {0, 1};
    onyx_node node = {.name = "i", .op_type = "ReorderInput", .domain = ONYX_NCHWC_DOMAIN, .opset = 1, .n_in = 1,
                      .n_out = 1, .in = ids, .out = ids + 1};
    onyx_infer_ctx ic = {.node = &node, .opset = 1, .n_in = 1, .n_out = 1, .in = ins, .out = &out};
    CHECK_OK(ri(&ic));
    CHECK(out.rank == 5 && out.dtype == ONYX_FLOAT && out.dims[0] == S1 && out.dims[1] == 2 && out.dims[2] == S2 &&
          out.dims[3] == 8 && out.dims[4] == 16);
    in.rank = 3;
    CHECK_ERR(ri(&ic), "4-D");
    in.rank = 4;
    in.dtype = ONYX_INT64;
    CHECK_ERR(ri(&ic), "element type");
    /* ReorderOutput */
    in = (onyx_type){.kind = ONYX_VALUE_TENSOR, .dtype = ONYX_FLOAT, .rank = 5, .dims = {S1, 2, 5, S2, 16}};
    onyx_attr_proto ch = attr_int("channels", 17);
    node.op_type = "ReorderOutput";
    node.attrs = &ch;
    node.n_attrs = 1;
    CHECK_OK(ro(&ic));
    CHECK(out.rank == 4 && out.dims[0] == S1 && out.dims[1] == 17 && out.dims[2] == 5 && out.dims[3] == S2);
    ch.i = 33;
    CHECK_ERR(ro(&ic), "does not match");
    /* MaxPool 3x3 s2 p1 on 112x112 */
    int64_t k[2] = {3, 3}, s[2] = {2, 2}, p[4] = {1, 1, 1, 1};
    onyx_attr_proto pa[3] = {attr_ints("kernel_shape", k, 2), attr_ints("strides", s, 2), attr_ints("pads", p, 4)};
    in = (onyx_type){.kind = ONYX_VALUE_TENSOR, .dtype = ONYX_FLOAT, .rank = 5, .dims = {S1, 4, 112, 111, 16}};
    node.op_type = "MaxPool";
    node.attrs = pa;
    node.n_attrs = 3;
    CHECK_OK(mp(&ic));
    CHECK(out.rank == 5 && out.dims[0] == S1 && out.dims[1] == 4 && out.dims[2] == 56 && out.dims[3] == 56 &&
          out.dims[4] == 16);
    in.dims[2] = S2;   /* unknown spatial size: unknown output size */
    CHECK_OK(mp(&ic));
    CHECK(out.rank == 5 && out.dims[2] == ONYX_DIM_UNKNOWN && out.dims[3] == 56);
    in.dims[4] = 8;
    CHECK_ERR(mp(&ic), "blocked");
    in.dims[4] = 16;
    int32_t two_out[2] = {1, 2};   /* MaxPool with its Indices output wired */
    node.out = two_out;
    node.n_out = ic.n_out = 2;
    onyx_type outs2[2];
    ic.out = outs2;
    CHECK_ERR(mp(&ic), "Indices");
    two_out[1] = -1;   /* declared but not wired: fine */
    CHECK_OK(mp(&ic));
    CHECK(outs2[0].dims[3] == 56);
    node.out = ids + 1;
    node.n_out = ic.n_out = 1;
    ic.out = &out;
    node.op_type = "GlobalAveragePool";
    node.n_attrs = 0;
    CHECK_OK(gp(&ic));
    CHECK(out.rank == 5 && out.dims[0] == S1 && out.dims[1] == 4 && out.dims[2] == 1 && out.dims[3] == 1);
}

/* ------------------------------------------------------------ bad input */

static void test_errors(void) {
    onyx_value *y = NULL;
    onyx_value *x3 = new_tensor(ONYX_FLOAT, 3, (int64_t[]){1, 2, 3});
    onyx_value *xi = new_tensor(ONYX_INT64, 4, (int64_t[]){1, 2, 3, 3});
    onyx_value *b8 = new_tensor(ONYX_FLOAT, 5, (int64_t[]){1, 2, 3, 3, 8});
    onyx_value *b4 = new_tensor(ONYX_FLOAT, 4, (int64_t[]){1, 2, 3, 16});
    onyx_value *b = new_tensor(ONYX_FLOAT, 5, (int64_t[]){1, 2, 6, 6, 16});
    onyx_value *huge = new_tensor(ONYX_FLOAT, 5, (int64_t[]){0, 1, INT64_MAX - 5, 4, 16});
    CHECK_ERR(run_op("ReorderInput", NULL, 0, x3, &y, NULL), "4-D");
    CHECK_ERR(run_op("ReorderInput", NULL, 0, xi, &y, NULL), "element type");
    CHECK_ERR(run_op("ReorderInput", NULL, 0, NULL, &y, NULL), "missing");
    onyx_attr_proto ch = attr_int("channels", 20);
    CHECK_ERR(run_op("ReorderOutput", &ch, 1, b8, &y, NULL), "blocked");
    CHECK_ERR(run_op("ReorderOutput", &ch, 1, b4, &y, NULL), "blocked");
    CHECK_ERR(run_op("ReorderOutput", NULL, 0, b, &y, NULL), "required");
    ch.i = 0;
    CHECK_ERR(run_op("ReorderOutput", &ch, 1, b, &y, NULL), ">= 1");
    ch.i = 16;
    CHECK_ERR(run_op("ReorderOutput", &ch, 1, b, &y, NULL), "does not match");
    ch.i = 33;
    CHECK_ERR(run_op("ReorderOutput", &ch, 1, b, &y, NULL), "does not match");
    onyx_attr_proto chs = attr_str("channels", "20");
    CHECK_ERR(run_op("ReorderOutput", &chs, 1, b, &y, NULL), "must be an int");
    /* the block size the layout pass records: 4, 8 or 16; and the shape
     * must be of that block */
    onyx_attr_proto blk12 = attr_int("block", 12), blk8 = attr_int("block", 8);
    CHECK_ERR(run_op("ReorderInput", &blk12, 1, b4, &y, NULL), "blocks of 12 channels");
    CHECK_ERR(run_op("GlobalMaxPool", &blk12, 1, b, &y, NULL), "blocks of 12 channels");
    CHECK_ERR(run_op("GlobalMaxPool", &blk8, 1, b, &y, NULL), "[N, C/8, H, W, 8]");
    CHECK_ERR(run_op("ReorderOutput", (onyx_attr_proto[]){ch, blk8}, 2, b, &y, NULL), "[N, C/8, H, W, 8]");

    int64_t k3[2] = {3, 3}, k1[1] = {3}, k9[2] = {9, 9}, neg[4] = {0, -1, 0, 0}, s0[2] = {0, 1}, p1[4] = {1, 1, 1, 1};
    onyx_attr_proto ks = attr_ints("kernel_shape", k3, 2);
    CHECK_ERR(run_op("MaxPool", &ks, 1, b8, &y, NULL), "blocked");
    CHECK_ERR(run_op("MaxPool", &ks, 1, b4, &y, NULL), "blocked");
    CHECK_ERR(run_op("AveragePool", &ks, 1, xi, &y, NULL), "element type");
    CHECK_ERR(run_op("MaxPool", NULL, 0, b, &y, NULL), "kernel_shape is required");
    onyx_attr_proto k1a = attr_ints("kernel_shape", k1, 1);
    CHECK_ERR(run_op("MaxPool", &k1a, 1, b, &y, NULL), "expected 2");
    onyx_attr_proto a2[2] = {ks, attr_ints("pads", neg, 4)};
    CHECK_ERR(run_op("MaxPool", a2, 2, b, &y, NULL), "pads[1]");
    a2[1] = attr_ints("strides", s0, 2);
    CHECK_ERR(run_op("AveragePool", a2, 2, b, &y, NULL), "strides[0]");
    a2[1] = attr_str("auto_pad", "SAME");
    CHECK_ERR(run_op("MaxPool", a2, 2, b, &y, NULL), "auto_pad");
    a2[1] = attr_int("storage_order", 3);
    CHECK_ERR(run_op("MaxPool", a2, 2, b, &y, NULL), "storage_order");
    a2[1] = attr_str("ceil_mode", "1");
    CHECK_ERR(run_op("MaxPool", a2, 2, b, &y, NULL), "ceil_mode");
    onyx_attr_proto k9a = attr_ints("kernel_shape", k9, 2);
    CHECK_ERR(run_op("MaxPool", &k9a, 1, b, &y, NULL), "smaller than");
    int64_t big_pads[4] = {INT64_C(1) << 31, 0, INT64_C(1) << 31, 0};
    a2[1] = attr_ints("pads", big_pads, 4);
    CHECK_ERR(run_op("MaxPool", a2, 2, huge, &y, NULL), "too large");
    a2[1] = attr_ints("pads", p1, 4);
    CHECK_OK(run_op("AveragePool", a2, 2, b, &y, NULL));
    CHECK(y && y->dims[2] == 6 && y->dims[3] == 6);
    onyx_value_destroy(y);
    y = NULL;
    /* the Indices output */
    const onyx_value *in[1] = {b};
    CHECK_ERR(run_op_n("MaxPool", &ks, 1, in, 1, 2, &y, NULL), "Indices");
    CHECK_ERR(run_op_n("GlobalMaxPool", NULL, 0, in, 1, 2, &y, NULL), "Indices");
    CHECK_ERR(run_op("GlobalAveragePool", NULL, 0, b4, &y, NULL), "blocked");
    CHECK_ERR(run_op("GlobalMaxPool", NULL, 0, xi, &y, NULL), "element type");
    /* a good call on the same input works */
    CHECK_OK(run_op("MaxPool", &ks, 1, b, &y, NULL));
    CHECK(y && y->dims[2] == 4 && y->dims[3] == 4);
    onyx_value_destroy(y);
    y = NULL;
    CHECK_OK(run_op("MaxPool", &ks, 1, huge, &y, NULL));   /* empty batch: empty output */
    CHECK(y && y->numel == 0);
    onyx_value_destroy(y);
    onyx_value *list[] = {x3, xi, b8, b4, b, huge};
    for (size_t i = 0; i < sizeof list / sizeof list[0]; i++) onyx_value_destroy(list[i]);
}

/* ------------------------------------------------------------ bench */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Best of a few repetitions of fn, in seconds. */
#define BEST_OF(reps, stmt)                                   \
    ({                                                        \
        double best_ = 1e30;                                  \
        for (int r_ = 0; r_ < (reps); r_++) {                 \
            double t0_ = now_s();                             \
            stmt;                                             \
            double t_ = now_s() - t0_;                        \
            if (t_ < best_) best_ = t_;                       \
        }                                                     \
        best_;                                                \
    })

static void bench_dw(int64_t C, int64_t H, int64_t S) {
    onyx_nchwc_geom g = {.N = 1, .C = C, .M = C, .IH = H, .IW = H, .KH = 3, .KW = 3, .SH = S, .SW = S, .DH = 1,
                         .DW = 1, .PT = 1, .PL = 1, .blk = blk};
    g.Cb = g.Mb = onyx_nchwc_blocks(C, blk);
    g.OH = (H + 2 - 3) / S + 1;
    g.OW = g.OH;
    size_t nin = (size_t)(g.Cb * H * H * blk), nout = (size_t)(g.Cb * g.OH * g.OW * blk);
    float *x = onyx_alloc(nin * 4), *y = onyx_alloc(nout * 4), *w = malloc((size_t)(C * 9) * 4);
    float *packed = malloc((size_t)onyx_nchwc_dw_packed_size(&g) * 4), *bias = calloc((size_t)g.Cb * blk, 4);
    for (size_t i = 0; i < nin; i++) x[i] = testlib_frand();
    for (int64_t i = 0; i < C * 9; i++) w[i] = testlib_frand();
    onyx_nchwc_dw_pack(&g, w, packed);
    onyx_nchwc_act act = {ONYX_GEMM_ACT_CLIP, 0, 6};
    double t = BEST_OF(20, for (int64_t cb = 0; cb < g.Cb; cb++)
                               onyx_nchwc_dw_rows(&g, x, packed, bias, NULL, y, cb, 0, g.OH, &act));
    double bytes = (double)(nin + nout) * 4;
    printf("  depthwise 3x3 s%lld p1 %lldx%lldx%lld: %8.1f us  %6.1f GB/s  %6.1f GFLOP/s\n", (long long)S,
           (long long)C, (long long)H, (long long)H, t * 1e6, bytes / t * 1e-9,
           2.0 * 9 * (double)(C * g.OH * g.OW) / t * 1e-9);
    onyx_free(x);
    onyx_free(y);
    free(w);
    free(packed);
    free(bias);
}

static void bench(void) {
    printf("nchwc kernels, one thread, isa %s\n", onyx_cpu()->name);
    bench_dw(32, 112, 1);
    bench_dw(144, 56, 1);
    bench_dw(960, 7, 1);
    bench_dw(96, 112, 2);
    onyx_value *x = rand_nchw(1, 64, 112, 112), *xb = block_by_hand(x, 0.0f), *y = NULL;
    int64_t k[2] = {3, 3}, s[2] = {2, 2}, p[4] = {1, 1, 1, 1};
    onyx_attr_proto a[3] = {attr_ints("kernel_shape", k, 2), attr_ints("strides", s, 2), attr_ints("pads", p, 4)};
    double t = BEST_OF(20, {
        onyx_status *st = run_op("MaxPool", a, 3, xb, &y, NULL);
        onyx_status_free(st);
        onyx_value_destroy(y);
    });
    printf("  MaxPool 3x3 s2 p1 64x112x112:      %8.1f us  %6.1f GB/s\n", t * 1e6,
           (double)(xb->numel + xb->numel / 4) * 4 / t * 1e-9);
    onyx_value *x2 = rand_nchw(1, 64, 56, 56), *x2b = block_by_hand(x2, 0.0f);
    t = BEST_OF(20, {
        onyx_status *st = run_op("ReorderInput", NULL, 0, x2, &y, NULL);
        onyx_status_free(st);
        onyx_value_destroy(y);
    });
    printf("  ReorderInput 64x56x56:             %8.1f us  %6.1f GB/s\n", t * 1e6, (double)x2->numel * 8 / t * 1e-9);
    onyx_attr_proto ch = attr_int("channels", 64);
    t = BEST_OF(20, {
        onyx_status *st = run_op("ReorderOutput", &ch, 1, x2b, &y, NULL);
        onyx_status_free(st);
        onyx_value_destroy(y);
    });
    printf("  ReorderOutput 64x56x56:            %8.1f us  %6.1f GB/s\n", t * 1e6, (double)x2->numel * 8 / t * 1e-9);
    onyx_value_destroy(x);
    onyx_value_destroy(xb);
    onyx_value_destroy(x2);
    onyx_value_destroy(x2b);
}

int main(int argc, char **argv) {
    bool do_bench = argc > 1 && !strcmp(argv[1], "bench");
    testlib_seed(0x2545F4914F6CDD1Dull);   /* the sequence the references were written with */
    const char *default_isa = onyx_cpu()->name;
    onyx_threadpool *tp = onyx_threadpool_create(onyx_cpu_count() > 1 ? onyx_cpu_count() : 2);
    static const char *const isas[] = {"avx512", "avx2", "neon", "generic"};
    /* blocks of 16 and 8 on every ISA, 4 on the portable path */
    static const int64_t blocks[] = {16, 8, 4};
    for (size_t i = 0; i < sizeof isas / sizeof isas[0]; i++) {
        if (!onyx_cpu_force_isa(isas[i])) {
            printf("  %s: not supported by this CPU, skipped\n", isas[i]);
            continue;
        }
        for (size_t k = 0; k < 3; k++) {
            blk = blocks[k];
            if (blk == 4 && strcmp(isas[i], "generic")) continue;
            if (do_bench) {
                printf("block %lld ", (long long)blk);
                bench();
                continue;
            }
            printf("  isa %s, block %lld\n", isas[i], (long long)blk);
            test_reorder_roundtrip(tp);
            test_pools(tp);
            test_global_pools(tp);
            test_depthwise();
        }
    }
    blk = 16;   /* the error and inference cases spell out 16-channel shapes */
    CHECK(onyx_cpu_force_isa(default_isa));
    CHECK(!onyx_cpu_force_isa("avx9000"));
    if (!do_bench) {
        test_infer();
        test_errors();
    }
    onyx_threadpool_free(tp);
    return testlib_finish("test_nchwc_ops");
}
