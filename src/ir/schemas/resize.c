/* Inference rules of the operators of providers/cpu/kernels/vision/resize.c (the kernels run them). */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "ir/schema.h"
#include "ir/schemas/spatial_infer.h"
#include "ir/schemas/resize.h"

typedef struct rs_name { const char *name; int value; } rs_name;

static const rs_name mode_names[] = {
    {"nearest", RS_NEAREST}, {"linear", RS_LINEAR}, {"cubic", RS_CUBIC},
    {"bilinear", RS_LINEAR},   /* Upsample-1 spelling */
};
static const rs_name ctm_names[] = {
    {"half_pixel", CT_HALF_PIXEL},
    {"half_pixel_symmetric", CT_HALF_PIXEL_SYMMETRIC},
    {"pytorch_half_pixel", CT_PYTORCH_HALF_PIXEL},
    {"align_corners", CT_ALIGN_CORNERS},
    {"asymmetric", CT_ASYMMETRIC},
    {"tf_half_pixel_for_nn", CT_TF_HALF_PIXEL_FOR_NN},   /* Resize-11 only; harmless later */
    {"tf_crop_and_resize", CT_TF_CROP_AND_RESIZE},
};
static const rs_name nearest_names[] = {
    {"round_prefer_floor", NM_ROUND_PREFER_FLOOR},
    {"round_prefer_ceil", NM_ROUND_PREFER_CEIL},
    {"floor", NM_FLOOR},
    {"ceil", NM_CEIL},
};
static const rs_name policy_names[] = {
    {"stretch", KA_STRETCH}, {"not_larger", KA_NOT_LARGER}, {"not_smaller", KA_NOT_SMALLER},
};
#define RS_COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Attributes of the node for an input of the given rank. */

#define L ONYX_SCHEMA_LATEST
#define RS_MAX_LEN 0x1p62
#define RS_COUNT(a) (sizeof(a) / sizeof((a)[0]))

static onyx_status *rs_enum(const onyx_node *node, const char *attr, const char *def,
                            const rs_name *names, size_t n, int *out) {
    const char *v = onyx_attr_string(node, attr, def);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v, names[i].name)) {
            *out = names[i].value;
            return NULL;
        }
    char allowed[256] = "";
    for (size_t i = 0; i < n; i++) {
        strncat(allowed, i ? ", " : "", sizeof allowed - strlen(allowed) - 1);
        strncat(allowed, names[i].name, sizeof allowed - strlen(allowed) - 1);
    }
    return ONYX_INVALID_ARG("attribute %s is '%s'; expected one of %s", attr, v, allowed);
}
bool onyx_resize_rs_is_upsample(const onyx_node *node) { return !strcmp(node->op_type, "Upsample"); }
onyx_status *onyx_resize_rs_parse(const onyx_node *node, int opset, int rank, rs_params *p) {
    memset(p, 0, sizeof *p);
    int v;
    ONYX_TRY(rs_enum(node, "mode", "nearest", mode_names, RS_COUNT(mode_names), &v));
    p->mode = (rs_mode)v;
    p->legacy = onyx_resize_rs_is_upsample(node) || opset < 11;
    if (p->legacy) {
        if (p->mode == RS_CUBIC)
            return ONYX_INVALID_ARG("attribute mode 'cubic' needs Resize from opset 11");
        p->ctm = CT_ASYMMETRIC;
        p->nearest = NM_LEGACY;
    } else {
        ONYX_TRY(rs_enum(node, "coordinate_transformation_mode", "half_pixel", ctm_names,
                         RS_COUNT(ctm_names), &v));
        p->ctm = (rs_ctm)v;
        ONYX_TRY(rs_enum(node, "nearest_mode", "round_prefer_floor", nearest_names,
                         RS_COUNT(nearest_names), &v));
        p->nearest = (rs_nearest)v;
        p->cubic_a = onyx_attr_float(node, "cubic_coeff_a", -0.75f);
        p->exclude_outside = onyx_attr_int(node, "exclude_outside", 0) != 0;
        p->extrapolation = onyx_attr_float(node, "extrapolation_value", 0.0f);
        if (!isfinite(p->cubic_a)) return ONYX_INVALID_ARG("attribute cubic_coeff_a must be finite");
    }
    p->n_axes = rank;
    for (int i = 0; i < rank; i++) p->axes[i] = i;
    if (!p->legacy && opset >= 18) {
        p->antialias = onyx_attr_int(node, "antialias", 0) != 0;
        ONYX_TRY(rs_enum(node, "keep_aspect_ratio_policy", "stretch", policy_names,
                         RS_COUNT(policy_names), &v));
        p->policy = (rs_policy)v;
        size_t n;
        const int64_t *axes = onyx_attr_ints(node, "axes", &n);
        if (axes) {
            if (n > (size_t)rank)
                return ONYX_INVALID_ARG("attribute axes has %zu values for an input of rank %d", n, rank);
            bool seen[ONYX_MAX_RANK] = {false};
            for (size_t i = 0; i < n; i++) {
                int a;
                ONYX_TRY(onyx_normalize_axis(axes[i], rank, &a));
                if (seen[a]) return ONYX_INVALID_ARG("attribute axes repeats axis %lld", (long long)axes[i]);
                seen[a] = true;
                p->axes[i] = a;
            }
            p->n_axes = (int)n;
        }
    }
    return NULL;
}
/* scales (is_roi false) or roi. The spec types scales as tensor(float) in
 * every Resize and Upsample version (ONNX Runtime refuses another type when
 * it loads the model), and roi as float16, float or double. */
static onyx_status *rs_read_floats(const onyx_value *v, bool is_roi, int want, double *out) {
    const char *what = is_roi ? "roi" : "scales";
    const int dt = v->dtype;
    if (is_roi ? dt != ONYX_FLOAT && dt != ONYX_FLOAT16 && dt != ONYX_DOUBLE : dt != ONYX_FLOAT)
        return ONYX_INVALID_ARG("input %s must be a %s tensor, got %s", what,
                                is_roi ? "float16, float or double" : "float (float32, in every version)",
                                onyx_dtype_name(dt));
    if (v->rank > 1) return ONYX_INVALID_ARG("input %s must be 1-D, got rank %d", what, v->rank);
    if (v->numel != want)
        return ONYX_INVALID_ARG("input %s has %lld values; expected %d", what, (long long)v->numel, want);
    for (int i = 0; i < want; i++) out[i] = onyx_load_as_double(v->dtype, v->data, i);
    return NULL;
}
/* sizes: tensor(int64) in every Resize version (ONNX Runtime refuses int32 at load). */
static onyx_status *rs_read_sizes(const onyx_value *v, int want, int64_t *out) {
    if (v->dtype != ONYX_INT64)
        return ONYX_INVALID_ARG("input sizes must be an int64 tensor, got %s", onyx_dtype_name(v->dtype));
    if (v->rank > 1) return ONYX_INVALID_ARG("input sizes must be 1-D, got rank %d", v->rank);
    if (v->numel != want)
        return ONYX_INVALID_ARG("input sizes has %lld values; expected %d", (long long)v->numel, want);
    for (int i = 0; i < want; i++) {
        out[i] = onyx_load_as_int64(v->dtype, v->data, i);
        if (out[i] < 0) return ONYX_INVALID_ARG("input sizes[%d] = %lld is negative", i, (long long)out[i]);
    }
    return NULL;
}
/* Scales/sizes/roi of a Resize node: input positions differ by version, and
 * an empty tensor counts as omitted (Resize-11 requires scales to be given
 * as an empty tensor when sizes is used). */
onyx_status *onyx_resize_rs_resize_request(const onyx_value *const *in, size_t n_in, int opset,
                                      const rs_params *p, rs_request *rq) {
    memset(rq, 0, sizeof *rq);
    const onyx_value *roi = NULL, *scales, *sizes = NULL;
    if (opset < 11) {
        scales = n_in > 1 ? in[1] : NULL;
    } else {
        roi = n_in > 1 ? in[1] : NULL;
        scales = n_in > 2 ? in[2] : NULL;
        sizes = n_in > 3 ? in[3] : NULL;
    }
    if (roi && roi->numel == 0) roi = NULL;
    if (scales && scales->numel == 0) scales = NULL;
    if (sizes && sizes->numel == 0) sizes = NULL;
    if (scales && sizes) return ONYX_INVALID_ARG("only one of the inputs scales and sizes may be given");
    if (!scales && !sizes) return ONYX_INVALID_ARG("one of the inputs scales and sizes must be given");
    if (scales) {
        ONYX_TRY(rs_read_floats(scales, false, p->n_axes, rq->scales));
        rq->has_scales = true;
    } else {
        ONYX_TRY(rs_read_sizes(sizes, p->n_axes, rq->sizes));
        rq->has_sizes = true;
    }
    if (roi && p->ctm == CT_TF_CROP_AND_RESIZE) {
        ONYX_TRY(rs_read_floats(roi, true, 2 * p->n_axes, rq->roi));
        rq->has_roi = true;
    }
    return NULL;
}
/* Upsample: scales from the attributes (1: height_scale/width_scale of a
 * 4-D input, 7: scales) or from input 1 (9). */
onyx_status *onyx_resize_rs_upsample_request(const onyx_node *node, const onyx_value *const *in,
                                        size_t n_in, int opset, int rank, rs_request *rq) {
    memset(rq, 0, sizeof *rq);
    rq->has_scales = true;
    if (opset >= 9) {
        const onyx_value *s = n_in > 1 ? in[1] : NULL;
        if (!onyx_is_tensor(s)) return ONYX_INVALID_ARG("input 1 (scales) is missing");
        return rs_read_floats(s, false, rank, rq->scales);
    }
    if (opset >= 7) {
        size_t n;
        const float *s = onyx_attr_floats(node, "scales", &n);
        if (!s) return ONYX_INVALID_ARG("attribute scales is required");
        if (n != (size_t)rank)
            return ONYX_INVALID_ARG("attribute scales has %zu values for an input of rank %d", n, rank);
        for (int i = 0; i < rank; i++) rq->scales[i] = s[i];
        return NULL;
    }
    if (rank != 4) return ONYX_INVALID_ARG("Upsample-1 needs a 4-D input, got rank %d", rank);
    if (!onyx_node_attr(node, "height_scale") || !onyx_node_attr(node, "width_scale"))
        return ONYX_INVALID_ARG("attributes height_scale and width_scale are required");
    rq->scales[0] = rq->scales[1] = 1;
    rq->scales[2] = onyx_attr_float(node, "height_scale", 1);
    rq->scales[3] = onyx_attr_float(node, "width_scale", 1);
    return NULL;
}
/* Output lengths and scales of every axis. in_dims may hold unknown dims
 * (< 0, shape inference): those axes get out = -1. */
onyx_status *onyx_resize_rs_geometry(const rs_params *p, const rs_request *rq, int rank,
                                const int64_t *in_dims, rs_axis *ax) {
    for (int d = 0; d < rank; d++)
        ax[d] = (rs_axis){.in = in_dims[d], .out = in_dims[d], .scale = 1, .roi0 = 0, .roi1 = 1};
    double common = 0;
    bool have_common = false;
    for (int i = 0; i < p->n_axes; i++) {
        rs_axis *a = &ax[p->axes[i]];
        a->resized = true;
        if (rq->has_roi) {
            a->roi0 = rq->roi[i];
            a->roi1 = rq->roi[p->n_axes + i];
        }
        if (rq->has_scales) {
            double s = rq->scales[i];
            if (!(s > 0) || !isfinite(s))
                return ONYX_INVALID_ARG("scales[%d] = %g; scales must be positive and finite", i, s);
            a->scale = s;
            if (a->in >= 0) {
                double o = floor(s * (double)a->in);
                if (!(o < RS_MAX_LEN))
                    return ONYX_INVALID_ARG("scales[%d] = %g makes axis %d too long", i, s, p->axes[i]);
                a->out = (int64_t)o;
            } else {
                a->out = -1;
            }
        } else if (p->policy == KA_STRETCH) {
            a->out = rq->sizes[i];
            a->scale = a->in > 0 ? (double)rq->sizes[i] / (double)a->in : 1;
        } else if (a->in > 0) {
            double s = (double)rq->sizes[i] / (double)a->in;
            if (!have_common || (p->policy == KA_NOT_LARGER ? s < common : s > common)) common = s;
            have_common = true;
        }
    }
    if (rq->has_sizes && p->policy != KA_STRETCH) {
        /* one unknown length (shape inference) leaves the common scale unknown */
        bool unknown = false;
        for (int i = 0; i < p->n_axes; i++) unknown = unknown || ax[p->axes[i]].in < 0;
        for (int i = 0; i < p->n_axes; i++) {
            rs_axis *a = &ax[p->axes[i]];
            if (unknown) {
                a->out = -1;
                continue;
            }
            if (!have_common) {   /* every resized axis is empty */
                a->out = 0;
                continue;
            }
            double o = floor(common * (double)a->in + 0.5);   /* round half up */
            if (!(o < RS_MAX_LEN)) return ONYX_INVALID_ARG("sizes make axis %d too long", p->axes[i]);
            a->out = (int64_t)o;
            a->scale = common;
        }
    }
    for (int d = 0; d < rank; d++) ax[d].width = ax[d].scale * (double)ax[d].in;
    return NULL;
}
/* Output shape when the scales/sizes (and the input dims they touch) are
 * known at load time; otherwise the rank only. */
static onyx_status *resize_infer(onyx_infer_ctx *ctx) {
    const onyx_type *t = su_infer_in(ctx, 0);
    if (!t) return NULL;
    su_type_tensor(&ctx->out[0], t->dtype, su_has_rank(t) ? t->rank : -1);
    if (!su_has_rank(t)) return NULL;
    const onyx_value *cin[4] = {NULL};
    for (size_t i = 1; i < 4 && i < ctx->n_in; i++) {
        cin[i] = su_infer_const(ctx, i);
        if (!cin[i] && ctx->in[i]) return NULL;   /* a computed scales/sizes/roi */
    }
    rs_params p;
    rs_request rq;
    onyx_status *st = onyx_resize_rs_parse(ctx->node, ctx->opset, t->rank, &p);
    if (!st)
        st = onyx_resize_rs_is_upsample(ctx->node)
                 ? onyx_resize_rs_upsample_request(ctx->node, cin, ctx->n_in, ctx->opset, t->rank, &rq)
                 : onyx_resize_rs_resize_request(cin, ctx->n_in, ctx->opset, &p, &rq);
    rs_axis ax[ONYX_MAX_RANK];
    int64_t dims[ONYX_MAX_RANK];
    for (int d = 0; d < t->rank; d++) dims[d] = onyx_dim_known(t->dims[d]) ? t->dims[d] : -1;
    if (!st) st = onyx_resize_rs_geometry(&p, &rq, t->rank, dims, ax);
    if (st) {
        onyx_status_free(st);   /* the kernel reports it with the actual values */
        return NULL;
    }
    for (int d = 0; d < t->rank; d++)
        ctx->out[0].dims[d] = !ax[d].resized ? t->dims[d] : ax[d].out >= 0 ? ax[d].out : ONYX_DIM_UNKNOWN;
    return NULL;
}

const onyx_schema_def onyx_schemas_resize[] = {
    {"", "Resize", 10, L, resize_infer},
    {"", "Upsample", 1, 9, resize_infer},
    {0},
};
