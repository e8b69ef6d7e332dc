/* What Resize's inference rule shares with its kernel: the attributes and
 * the output geometry. */
#ifndef ONYX_IR_SCHEMAS_RESIZE_H
#define ONYX_IR_SCHEMAS_RESIZE_H

#include <stdbool.h>
#include "ir/schema.h"

typedef enum rs_mode { RS_NEAREST, RS_LINEAR, RS_CUBIC } rs_mode;
typedef enum rs_ctm {
    CT_HALF_PIXEL,
    CT_HALF_PIXEL_SYMMETRIC,
    CT_PYTORCH_HALF_PIXEL,
    CT_ALIGN_CORNERS,
    CT_ASYMMETRIC,
    CT_TF_HALF_PIXEL_FOR_NN,
    CT_TF_CROP_AND_RESIZE,
} rs_ctm;
typedef enum rs_nearest { NM_ROUND_PREFER_FLOOR, NM_ROUND_PREFER_CEIL, NM_FLOOR, NM_CEIL, NM_LEGACY } rs_nearest;
typedef enum rs_policy { KA_STRETCH, KA_NOT_LARGER, KA_NOT_SMALLER } rs_policy;

typedef struct rs_params {
    rs_mode mode;
    rs_ctm ctm;
    rs_nearest nearest;
    rs_policy policy;
    double cubic_a, extrapolation;
    bool exclude_outside, antialias;
    bool legacy;                  /* Resize-10 / Upsample */
    int n_axes;                   /* axes that roi/scales/sizes refer to */
    int axes[ONYX_MAX_RANK];
} rs_params;

/* Geometry of one axis. */
typedef struct rs_axis {
    int64_t in, out;
    double scale;                 /* as the reference uses it in coordinates */
    double width;                 /* fractional output length, scale * in */
    double roi0, roi1;            /* tf_crop_and_resize region (normalised) */
    bool resized;                 /* one of the axes */
} rs_axis;

/* Scales, sizes and roi as read from the inputs (or attributes). */
typedef struct rs_request {
    bool has_scales, has_sizes, has_roi;
    double scales[ONYX_MAX_RANK];
    int64_t sizes[ONYX_MAX_RANK];
    double roi[2 * ONYX_MAX_RANK];
} rs_request;


onyx_status *onyx_resize_rs_upsample_request(const onyx_node *node, const onyx_value *const *in,
                                        size_t n_in, int opset, int rank, rs_request *rq);
onyx_status *onyx_resize_rs_parse(const onyx_node *node, int opset, int rank, rs_params *p);
bool onyx_resize_rs_is_upsample(const onyx_node *node);
onyx_status *onyx_resize_rs_geometry(const rs_params *p, const rs_request *rq, int rank,
                                const int64_t *in_dims, rs_axis *ax);
onyx_status *onyx_resize_rs_resize_request(const onyx_value *const *in, size_t n_in, int opset,
                                      const rs_params *p, rs_request *rq);

#endif
