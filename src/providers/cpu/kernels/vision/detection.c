/* Detection heads: RoiAlign (10, 16, 22) and NonMaxSuppression (10, 11).
 * (MaxRoiPool lives in pool.c.)
 *
 * RoiAlign follows the ONNX reference / onnxruntime: each output bin
 * averages (or takes the max of) a grid of bilinear samples; the sample
 * positions and weights depend only on the RoI, so they are computed once
 * per RoI and reused for every channel. "max" mode is onnxruntime's: the
 * largest weighted corner value of each sample, maximised over the samples
 * of the bin. RoiAlign-10 has no coordinate_transformation_mode and
 * behaves as output_half_pixel (no -0.5 shift).
 *
 * NonMaxSuppression: per (batch, class), the candidates above
 * score_threshold (strictly) sorted by score, highest first and lower box
 * index first among equal scores; a candidate is kept unless its IoU with
 * an already kept box is strictly greater than iou_threshold; at most
 * max_output_boxes_per_class are kept. The output lists [batch, class, box]
 * in batch, class, then selection order. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "providers/cpu/kernel.h"
#include "providers/cpu/kernels/vision/spatial_util.h"

/* ================================================================= RoiAlign */

/* A sampling grid per bin larger than this (per axis) is refused: it can
 * only come from an absurd RoI, and would otherwise mean unbounded work. */
#define RA_MAX_GRID (1 << 16)
#define RA_MAX_SAMPLES (INT64_C(1) << 28)

typedef struct ra_params {
    bool max_mode, half_pixel;
    int64_t oh, ow, sampling_ratio;
    double scale;
} ra_params;

/* One bilinear sample: four plane offsets and weights. */
typedef struct ra_sample {
    int64_t pos[4];
    double w[4];
} ra_sample;

static onyx_status *ra_parse(const onyx_node *node, int opset, ra_params *p) {
    const char *mode = onyx_attr_string(node, "mode", "avg");
    if (!strcmp(mode, "avg")) p->max_mode = false;
    else if (!strcmp(mode, "max")) p->max_mode = true;
    else return ONYX_INVALID_ARG("attribute mode is '%s'; expected avg or max", mode);
    p->half_pixel = false;
    if (opset >= 16) {
        const char *ctm = onyx_attr_string(node, "coordinate_transformation_mode", "half_pixel");
        if (!strcmp(ctm, "half_pixel")) p->half_pixel = true;
        else if (strcmp(ctm, "output_half_pixel"))
            return ONYX_INVALID_ARG("attribute coordinate_transformation_mode is '%s'; expected half_pixel or output_half_pixel", ctm);
    }
    p->oh = onyx_attr_int(node, "output_height", 1);
    p->ow = onyx_attr_int(node, "output_width", 1);
    p->sampling_ratio = onyx_attr_int(node, "sampling_ratio", 0);
    p->scale = onyx_attr_float(node, "spatial_scale", 1.0f);
    if (p->oh < 1 || p->ow < 1 || p->oh > RA_MAX_GRID || p->ow > RA_MAX_GRID)
        return ONYX_INVALID_ARG("attributes output_height/output_width (%lld, %lld) must be in [1, %d]",
                                (long long)p->oh, (long long)p->ow, RA_MAX_GRID);
    if (p->sampling_ratio < 0 || p->sampling_ratio > RA_MAX_GRID)
        return ONYX_INVALID_ARG("attribute sampling_ratio = %lld is out of range [0, %d]",
                                (long long)p->sampling_ratio, RA_MAX_GRID);
    if (!isfinite(p->scale)) return ONYX_INVALID_ARG("attribute spatial_scale must be finite");
    return NULL;
}

/* Bilinear sample at (y, x) of an H x W plane (the reference's rules:
 * outside [-1, H] x [-1, W] contributes nothing, else clamp to the edge). */
static void ra_sample_at(double y, double x, int64_t H, int64_t W, ra_sample *s) {
    if (y < -1.0 || y > (double)H || x < -1.0 || x > (double)W) {
        memset(s, 0, sizeof *s);
        return;
    }
    if (y < 0) y = 0;
    if (x < 0) x = 0;
    int64_t y0 = (int64_t)y, x0 = (int64_t)x, y1, x1;
    if (y0 >= H - 1) y1 = y0 = H - 1, y = (double)y0;
    else y1 = y0 + 1;
    if (x0 >= W - 1) x1 = x0 = W - 1, x = (double)x0;
    else x1 = x0 + 1;
    double ly = y - (double)y0, lx = x - (double)x0, hy = 1 - ly, hx = 1 - lx;
    s->pos[0] = y0 * W + x0;
    s->pos[1] = y0 * W + x1;
    s->pos[2] = y1 * W + x0;
    s->pos[3] = y1 * W + x1;
    s->w[0] = hy * hx;
    s->w[1] = hy * lx;
    s->w[2] = ly * hx;
    s->w[3] = ly * lx;
}

/* Geometry of one RoI: bin sizes and the sample grid per bin. */
typedef struct ra_roi {
    double y0, x0, bin_h, bin_w;
    int64_t grid_h, grid_w;   /* may be <= 0: no samples */
    double count;
} ra_roi;

static onyx_status *ra_roi_geometry(const ra_params *p, const double box[4], int64_t r, ra_roi *g) {
    double off = p->half_pixel ? 0.5 : 0.0;
    for (int k = 0; k < 4; k++)
        if (!isfinite(box[k])) return ONYX_INVALID_ARG("RoI %lld has a non-finite coordinate", (long long)r);
    double x0 = box[0] * p->scale - off, y0 = box[1] * p->scale - off;
    double x1 = box[2] * p->scale - off, y1 = box[3] * p->scale - off;
    double rw = x1 - x0, rh = y1 - y0;
    if (!p->half_pixel) {   /* force malformed RoIs to be 1x1 */
        if (rw < 1) rw = 1;
        if (rh < 1) rh = 1;
    }
    g->y0 = y0;
    g->x0 = x0;
    g->bin_h = rh / (double)p->oh;
    g->bin_w = rw / (double)p->ow;
    double gh = p->sampling_ratio > 0 ? (double)p->sampling_ratio : ceil(rh / (double)p->oh);
    double gw = p->sampling_ratio > 0 ? (double)p->sampling_ratio : ceil(rw / (double)p->ow);
    if (!(gh <= RA_MAX_GRID && gw <= RA_MAX_GRID) || !isfinite(gh) || !isfinite(gw))
        return ONYX_INVALID_ARG("RoI %lld is too large for its feature map (%g x %g samples per bin)",
                                (long long)r, gh, gw);
    g->grid_h = (int64_t)gh;
    g->grid_w = (int64_t)gw;
    int64_t c = g->grid_h * g->grid_w;
    g->count = (double)(c > 1 ? c : 1);
    return NULL;
}

static onyx_status *ra_check(const onyx_value *x, const onyx_value *rois, const onyx_value *bi) {
    char a[200];
    if (!su_is_float_family(x->dtype))
        return ONYX_INVALID_ARG("input X must be a float tensor, got %s", onyx_dtype_name(x->dtype));
    if (x->rank != 4) return ONYX_INVALID_ARG("input X must be 4-D (N, C, H, W), got shape %s", su_shape(x, a, sizeof a));
    if (rois->dtype != x->dtype)
        return ONYX_INVALID_ARG("input rois must have the element type of X (%s), got %s",
                                onyx_dtype_name(x->dtype), onyx_dtype_name(rois->dtype));
    if (rois->rank != 2 || rois->dims[1] != 4)
        return ONYX_INVALID_ARG("input rois must have shape (num_rois, 4), got %s", su_shape(rois, a, sizeof a));
    if (bi->dtype != ONYX_INT64 && bi->dtype != ONYX_INT32)
        return ONYX_INVALID_ARG("input batch_indices must be an int64 tensor, got %s", onyx_dtype_name(bi->dtype));
    if (bi->rank != 1 || bi->dims[0] != rois->dims[0])
        return ONYX_INVALID_ARG("input batch_indices must have shape (%lld), got %s", (long long)rois->dims[0],
                                su_shape(bi, a, sizeof a));
    for (int64_t r = 0; r < bi->numel; r++) {
        int64_t b = onyx_load_as_int64(bi->dtype, bi->data, r);
        if (b < 0 || b >= x->dims[0])
            return ONYX_INVALID_ARG("batch_indices[%lld] = %lld is out of range [0, %lld)", (long long)r,
                                    (long long)b, (long long)x->dims[0]);
    }
    return NULL;
}

/* The samples of RoI r (total = oh * ow * grid_h * grid_w of them, in bin
 * order) into smp, growing it as needed. */
static onyx_status *ra_samples(const ra_params *p, const ra_roi *g, int64_t H, int64_t W,
                               ra_sample **smp, size_t *cap, int64_t *total) {
    int64_t gh = g->grid_h > 0 ? g->grid_h : 0, gw = g->grid_w > 0 ? g->grid_w : 0;
    *total = H * W == 0 ? 0 : p->oh * p->ow * gh * gw;   /* each factor <= 2^16 */
    if (*total > RA_MAX_SAMPLES)
        return ONYX_INVALID_ARG("a RoI needs %lld samples; at most %lld are allowed", (long long)*total,
                                (long long)RA_MAX_SAMPLES);
    if ((size_t)*total > *cap) {
        ra_sample *n = realloc(*smp, (size_t)*total * sizeof **smp);
        if (!n) return ONYX_OOM();
        *smp = n;
        *cap = (size_t)*total;
    }
    ra_sample *s = *smp;
    for (int64_t ph = 0; ph < p->oh && *total; ph++)
        for (int64_t pw = 0; pw < p->ow; pw++)
            for (int64_t iy = 0; iy < gh; iy++) {
                double yy = g->y0 + (double)ph * g->bin_h + ((double)iy + 0.5) * g->bin_h / (double)g->grid_h;
                for (int64_t ix = 0; ix < gw; ix++) {
                    double xx = g->x0 + (double)pw * g->bin_w + ((double)ix + 0.5) * g->bin_w / (double)g->grid_w;
                    ra_sample_at(yy, xx, H, W, s++);
                }
            }
    return NULL;
}

typedef struct ra_job {
    const ra_params *p;
    const onyx_value *x, *rois, *bi;
    const void *xw;          /* X in the working type */
    void *yw;                /* Y in the working type */
    _Atomic(onyx_status *) st;
} ra_job;

static void ra_fail(ra_job *j, onyx_status *st) {
    onyx_status *none = NULL;
    if (!atomic_compare_exchange_strong(&j->st, &none, st)) onyx_status_free(st);
}

/* RoIs [begin, end): avg or max pooling of bilinear samples, in the
 * working type W (float for the float types, double for double). */
#define RA_DEFINE(W, NAME)                                                                     \
    static void ra_range_##NAME(void *arg, size_t begin, size_t end) {                         \
        ra_job *j = arg;                                                                       \
        const ra_params *p = j->p;                                                             \
        int64_t C = j->x->dims[1], H = j->x->dims[2], Wd = j->x->dims[3], bins = p->oh * p->ow; \
        ra_sample *smp = NULL;                                                                 \
        size_t cap = 0;                                                                        \
        for (size_t r = begin; r < end && !atomic_load(&j->st); r++) {                         \
            double box[4];                                                                     \
            for (int k = 0; k < 4; k++)                                                        \
                box[k] = onyx_load_as_double(j->rois->dtype, j->rois->data, (int64_t)r * 4 + k); \
            ra_roi g;                                                                          \
            int64_t total = 0;                                                                 \
            onyx_status *st = ra_roi_geometry(p, box, (int64_t)r, &g);                         \
            if (!st) st = ra_samples(p, &g, H, Wd, &smp, &cap, &total);                        \
            if (st) {                                                                          \
                ra_fail(j, st);                                                                \
                break;                                                                         \
            }                                                                                  \
            int64_t per_bin = total / bins, n = onyx_load_as_int64(j->bi->dtype, j->bi->data, (int64_t)r); \
            for (int64_t c = 0; c < C; c++) {                                                  \
                const W *xc = (const W *)j->xw + (n * C + c) * H * Wd;                         \
                W *yc = (W *)j->yw + ((int64_t)r * C + c) * bins;                              \
                for (int64_t b = 0; b < bins; b++) {                                           \
                    const ra_sample *s = smp + b * per_bin;                                    \
                    double v = 0;                                                              \
                    for (int64_t k = 0; k < per_bin; k++) {                                    \
                        const ra_sample *q = &s[k];                                            \
                        if (p->max_mode) {                                                     \
                            double m = q->w[0] * (double)xc[q->pos[0]];                        \
                            for (int t = 1; t < 4; t++) m = fmax(m, q->w[t] * (double)xc[q->pos[t]]); \
                            v = k == 0 ? m : fmax(v, m);                                       \
                        } else {                                                               \
                            for (int t = 0; t < 4; t++) v += q->w[t] * (double)xc[q->pos[t]];  \
                        }                                                                      \
                    }                                                                          \
                    yc[b] = (W)(p->max_mode ? v : v / g.count);                                \
                }                                                                              \
            }                                                                                  \
        }                                                                                      \
        free(smp);                                                                             \
    }
RA_DEFINE(float, f32)
RA_DEFINE(double, f64)

static onyx_status *roi_align_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x = NULL, *rois = NULL, *bi = NULL;
    ONYX_TRY(su_tensor_in(ctx, 0, "X", &x));
    ONYX_TRY(su_tensor_in(ctx, 1, "rois", &rois));
    ONYX_TRY(su_tensor_in(ctx, 2, "batch_indices", &bi));
    ra_params p = {0};
    ONYX_TRY(ra_parse(ctx->node, ctx->opset, &p));
    ONYX_TRY(ra_check(x, rois, bi));
    int64_t ydims[4] = {rois->dims[0], x->dims[1], p.oh, p.ow};
    ONYX_TRY(su_check_shape(ydims, 4, "output"));
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, x->dtype, 4, ydims, &y));
    if (y->numel == 0) return NULL;
    ra_job job = {.p = &p, .x = x, .rois = rois, .bi = bi, .xw = x->data, .yw = y->data};
    atomic_init(&job.st, NULL);
    bool dbl = x->dtype == ONYX_DOUBLE, conv = x->dtype != ONYX_FLOAT && !dbl;
    float *xb = NULL, *yb = NULL;
    if (conv) {   /* float16 / bfloat16 through float */
        xb = su_tensor_f32(x);
        yb = malloc((size_t)y->numel * sizeof *yb);
        if (!xb || !yb) {
            free(xb);
            free(yb);
            return ONYX_OOM();
        }
        job.xw = xb;
        job.yw = yb;
    }
    size_t cost = (size_t)(x->dims[1] * p.oh * p.ow * 4 + 1);
    onyx_parallel_for(ctx->tp, (size_t)rois->dims[0], cost >= 65536 ? 1 : 65536 / cost,
                      dbl ? ra_range_f64 : ra_range_f32, &job);
    onyx_status *st = atomic_load(&job.st);
    if (conv && !st) su_store_f32(x->dtype, y->data, 0, (size_t)y->numel, yb);
    free(xb);
    free(yb);
    return st;
}

/* ======================================================== NonMaxSuppression */

typedef struct nms_cand {
    float score;
    int64_t idx;
} nms_cand;

/* Highest score first, then lower index (scores are never NaN here, so
 * this is a strict weak order). */
static int nms_cmp(const void *pa, const void *pb) {
    const nms_cand *a = pa, *b = pb;
    if (a->score != b->score) return a->score > b->score ? -1 : 1;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* A box as (ymin, xmin, ymax, xmax). */
typedef struct nms_box { float y0, x0, y1, x1; } nms_box;

static nms_box nms_load_box(const onyx_value *boxes, int64_t at, bool center) {
    float v[4];
    for (int k = 0; k < 4; k++) v[k] = (float)onyx_load_as_double(boxes->dtype, boxes->data, at + k);
    nms_box b;
    if (center) {   /* (x_center, y_center, width, height) */
        float hw = v[2] / 2, hh = v[3] / 2;
        b.x0 = v[0] - hw;
        b.x1 = v[0] + hw;
        b.y0 = v[1] - hh;
        b.y1 = v[1] + hh;
    } else {        /* any two opposite corners (y1, x1, y2, x2) */
        b.y0 = fminf(v[0], v[2]);
        b.y1 = fmaxf(v[0], v[2]);
        b.x0 = fminf(v[1], v[3]);
        b.x1 = fmaxf(v[1], v[3]);
    }
    return b;
}

/* Whether a and b overlap with IoU strictly above the threshold. */
static bool nms_suppress(const nms_box *a, const nms_box *b, float iou_threshold) {
    float ix0 = fmaxf(a->x0, b->x0), ix1 = fminf(a->x1, b->x1);
    if (!(ix1 > ix0)) return false;
    float iy0 = fmaxf(a->y0, b->y0), iy1 = fminf(a->y1, b->y1);
    if (!(iy1 > iy0)) return false;
    float inter = (ix1 - ix0) * (iy1 - iy0);
    float area_a = (a->x1 - a->x0) * (a->y1 - a->y0), area_b = (b->x1 - b->x0) * (b->y1 - b->y0);
    float uni = area_a + area_b - inter;
    if (!(inter > 0) || !(area_a > 0) || !(area_b > 0) || !(uni > 0)) return false;
    return inter / uni > iou_threshold;
}

/* Optional scalar input (a scalar or 1-element tensor); *present = false
 * when omitted or empty. */
static onyx_status *nms_scalar(const onyx_value *v, const char *what, bool want_int, double *out, bool *present) {
    *present = false;
    if (!v || v->numel == 0) return NULL;
    if (v->numel != 1) return ONYX_INVALID_ARG("input %s must hold one value, got %lld", what, (long long)v->numel);
    if (want_int ? (v->dtype != ONYX_INT64 && v->dtype != ONYX_INT32) : !su_is_float_family(v->dtype))
        return ONYX_INVALID_ARG("input %s has element type %s; expected %s", what, onyx_dtype_name(v->dtype),
                                want_int ? "int64" : "float");
    *out = want_int ? (double)onyx_load_as_int64(v->dtype, v->data, 0) : onyx_load_as_double(v->dtype, v->data, 0);
    *present = true;
    return NULL;
}

typedef struct nms_out {
    int64_t *v;       /* triples */
    size_t n, cap;    /* triples */
} nms_out;

static bool nms_push(nms_out *o, int64_t b, int64_t c, int64_t i) {
    if (o->n == o->cap) {
        size_t cap = o->cap ? 2 * o->cap : 64;
        int64_t *v = realloc(o->v, cap * 3 * sizeof *v);
        if (!v) return false;
        o->v = v;
        o->cap = cap;
    }
    o->v[3 * o->n] = b;
    o->v[3 * o->n + 1] = c;
    o->v[3 * o->n + 2] = i;
    o->n++;
    return true;
}

typedef struct nms_params {
    int64_t max_out;
    float iou, score;
    bool has_score, center;
} nms_params;

/* Select the boxes of one (batch, class) and append them to out. */
static onyx_status *nms_class(const nms_params *p, const onyx_value *boxes, const onyx_value *scores,
                              int64_t b, int64_t c, int64_t nb, int64_t nc, nms_cand *cand,
                              nms_box *kept, nms_out *out) {
    int64_t n = 0, base = (b * nc + c) * nb;
    for (int64_t i = 0; i < nb; i++) {
        float s = (float)onyx_load_as_double(scores->dtype, scores->data, base + i);
        if (s != s) continue;   /* NaN scores never rank */
        if (p->has_score && !(s > p->score)) continue;
        cand[n++] = (nms_cand){s, i};
    }
    qsort(cand, (size_t)n, sizeof *cand, nms_cmp);
    int64_t n_kept = 0;
    for (int64_t k = 0; k < n && n_kept < p->max_out; k++) {
        nms_box bx = nms_load_box(boxes, (b * nb + cand[k].idx) * 4, p->center);
        bool keep = true;
        for (int64_t j = 0; j < n_kept && keep; j++) keep = !nms_suppress(&bx, &kept[j], p->iou);
        if (!keep) continue;
        kept[n_kept++] = bx;
        if (!nms_push(out, b, c, cand[k].idx)) return ONYX_OOM();
    }
    return NULL;
}

static onyx_status *nms_inputs(onyx_kernel_ctx *ctx, const onyx_value **boxes, const onyx_value **scores,
                               nms_params *p) {
    char a[200], b[200];
    ONYX_TRY(su_tensor_in(ctx, 0, "boxes", boxes));
    ONYX_TRY(su_tensor_in(ctx, 1, "scores", scores));
    const onyx_value *mo = NULL, *iou = NULL, *st = NULL;
    ONYX_TRY(su_opt_tensor_in(ctx, 2, "max_output_boxes_per_class", &mo));
    ONYX_TRY(su_opt_tensor_in(ctx, 3, "iou_threshold", &iou));
    ONYX_TRY(su_opt_tensor_in(ctx, 4, "score_threshold", &st));
    const onyx_value *bx = *boxes, *sc = *scores;
    if (!su_is_float_family(bx->dtype) || !su_is_float_family(sc->dtype))
        return ONYX_INVALID_ARG("inputs boxes and scores must be float tensors");
    if (bx->rank != 3 || bx->dims[2] != 4)
        return ONYX_INVALID_ARG("input boxes must have shape (num_batches, num_boxes, 4), got %s", su_shape(bx, a, sizeof a));
    if (sc->rank != 3 || sc->dims[0] != bx->dims[0] || sc->dims[2] != bx->dims[1])
        return ONYX_INVALID_ARG("input scores has shape %s; expected (%lld, num_classes, %lld) for boxes of shape %s",
                                su_shape(sc, a, sizeof a), (long long)bx->dims[0], (long long)bx->dims[1],
                                su_shape(bx, b, sizeof b));
    int64_t cpb = onyx_attr_int(ctx->node, "center_point_box", 0);
    if (cpb != 0 && cpb != 1) return ONYX_INVALID_ARG("attribute center_point_box = %lld; expected 0 or 1", (long long)cpb);
    p->center = cpb == 1;
    double v = 0;
    bool present;
    ONYX_TRY(nms_scalar(mo, "max_output_boxes_per_class", true, &v, &present));
    p->max_out = !present || !(v > 0) ? 0 : v >= 0x1p62 ? INT64_C(1) << 62 : (int64_t)v;
    ONYX_TRY(nms_scalar(iou, "iou_threshold", false, &v, &present));
    p->iou = present ? (float)v : 0.0f;
    ONYX_TRY(nms_scalar(st, "score_threshold", false, &v, &present));
    p->score = (float)v;
    p->has_score = present;
    return NULL;
}

static onyx_status *nms_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *boxes = NULL, *scores = NULL;
    nms_params p = {0};
    ONYX_TRY(nms_inputs(ctx, &boxes, &scores, &p));
    int64_t nbatch = boxes->dims[0], nb = boxes->dims[1], nc = scores->dims[1];
    nms_out out = {0};
    onyx_status *st = NULL;
    if (p.max_out > 0 && nb > 0) {
        nms_cand *cand = malloc((size_t)nb * sizeof *cand);
        nms_box *kept = malloc((size_t)nb * sizeof *kept);
        if (!cand || !kept) st = ONYX_OOM();
        for (int64_t b = 0; b < nbatch && !st; b++)
            for (int64_t c = 0; c < nc && !st; c++)
                st = nms_class(&p, boxes, scores, b, c, nb, nc, cand, kept, &out);
        free(cand);
        free(kept);
    }
    onyx_value *y = NULL;
    int64_t ydims[2] = {(int64_t)out.n, 3};
    if (!st) st = onyx_kernel_output(ctx, 0, ONYX_INT64, 2, ydims, &y);
    if (!st && out.n) memcpy(y->data, out.v, out.n * 3 * sizeof(int64_t));
    free(out.v);
    return st;
}

/* ===================================================================== table */

#define F3 (ONYX_T(ONYX_FLOAT) | ONYX_T(ONYX_DOUBLE) | ONYX_T(ONYX_FLOAT16))
#define F4 (F3 | ONYX_T(ONYX_BFLOAT16))
#define L ONYX_OPSET_LATEST
#define OP(name, from, to, types, fn) {"", name, from, to, types, 0, NULL, NULL, fn}

const onyx_op_def onyx_ops_detection[] = {
    OP("RoiAlign", 10, 21, F3, roi_align_compute),
    OP("RoiAlign", 22, L, F4, roi_align_compute),
    OP("NonMaxSuppression", 10, L, ONYX_T(ONYX_FLOAT), nms_compute),
    {0},};
