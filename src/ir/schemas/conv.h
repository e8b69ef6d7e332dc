/* What the convolutions' inference rules share with their kernels (nn/conv.c,
 * nchwc/nchwc_conv.c, quant/qlinear.c, quant/qlinear_conv_igemm.c): the
 * attribute readers and the geometry. */
#ifndef ONYX_IR_SCHEMAS_CONV_H
#define ONYX_IR_SCHEMAS_CONV_H

#include <stdbool.h>
#include <stdint.h>
#include "ir/schema.h"

/* Conv's auto_pad and ints attributes, read as the plain Conv reads them.
 * auto_pad: one of ONYX_CONV_PAD_*, error for another string; ints: exactly
 * count values, each >= min (def each when absent). */
enum { ONYX_CONV_PAD_NOTSET, ONYX_CONV_PAD_SAME_UPPER, ONYX_CONV_PAD_SAME_LOWER, ONYX_CONV_PAD_VALID };
onyx_status *onyx_conv_read_auto_pad(const onyx_node *node, int *mode);
onyx_status *onyx_conv_read_ints(const onyx_node *node, const char *name, int count, int64_t def, int64_t min,
                                 int64_t *out);

typedef struct conv_geom {
    int nd;                       /* spatial dims */
    int64_t N, C, M, G, Cg, Mg;   /* batch, in/out channels, groups, per group */
    int64_t in[ONYX_MAX_RANK], k[ONYX_MAX_RANK], out[ONYX_MAX_RANK];
    int64_t pb[ONYX_MAX_RANK], pe[ONYX_MAX_RANK];         /* pads at the start and end (ConvTranspose may go negative) */
    int64_t s[ONYX_MAX_RANK], d[ONYX_MAX_RANK];           /* strides, dilations */
    int64_t in_size, out_size, k_size;
    int64_t K;                    /* Cg * k_size: one row of a group's weights */
    int64_t istr[ONYX_MAX_RANK], ostr[ONYX_MAX_RANK];     /* element strides of the spatial dims */
} conv_geom;

/* The steps of the geometry: channels, groups, kernel, strides and
 * dilations from x, w and the attributes (W is (M, C/G, k...) for Conv and
 * (C, M/G, k...) for ConvTranspose); then the pads and output sizes (Conv's
 * or ConvTranspose's rule); then the sizes, strides and size bounds. Errors
 * name the offending attribute or shape. */
onyx_status *onyx_conv_conv_channels(const onyx_node *node, const int64_t *x, int xr, const int64_t *w, int wr,
                                  bool transpose, conv_geom *g);
onyx_status *onyx_conv_conv_spatial(const onyx_node *node, conv_geom *g);
onyx_status *onyx_conv_convt_spatial(const onyx_node *node, conv_geom *g);
onyx_status *onyx_conv_sizes(conv_geom *g);
/* All three, for a kernel with the real shapes. */
onyx_status *onyx_conv_geometry(const onyx_node *node, const int64_t *x, int xr, const int64_t *w, int wr,
                                bool transpose, conv_geom *g);
/* (N, M, out...): the output's dims. */
void onyx_conv_out_dims(const conv_geom *g, int64_t *dims);
/* The inference rule's part: y's rank and dims (batch copied, the rest when
 * x's spatial dims and w are known); y's kind and dtype are the caller's.
 * A geometry error is returned for the caller to report or drop. */
onyx_status *onyx_conv_infer_shape(const onyx_node *node, const onyx_type *x, const onyx_type *w, bool transpose,
                                   onyx_type *y);

#endif
