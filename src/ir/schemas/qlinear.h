/* What QLinearConv's inference rule shares with its kernels (qlinear.c,
 * qlinear_conv_igemm.c): the geometry. */
#ifndef ONYX_IR_SCHEMAS_QLINEAR_H
#define ONYX_IR_SCHEMAS_QLINEAR_H

#include <stdbool.h>
#include "ir/schema.h"

typedef struct qconv_geom {
    int nd;                        /* spatial dims */
    int64_t N, C, M, G, Cg, Mg;
    int64_t in[ONYX_MAX_RANK], k[ONYX_MAX_RANK], out[ONYX_MAX_RANK], pb[ONYX_MAX_RANK], s[ONYX_MAX_RANK],
        d[ONYX_MAX_RANK];
    int64_t in_size, out_size, k_size, K;   /* K = Cg * k_size: one row of a group's weights */
} qconv_geom;

/* Channels, groups and kernel from x, w and the attributes; then the pads
 * and output sizes. Errors name the offending attribute or shape. */
onyx_status *onyx_qconv_channels(const onyx_node *node, const onyx_value *X, const onyx_value *W, qconv_geom *g);
onyx_status *onyx_qconv_spatial(const onyx_node *node, qconv_geom *g);

/* com.microsoft QLinearConv with channels_last = 1: x and y are
 * N x H x W x C (only the integer path runs it). */
bool onyx_qconv_channels_last(const onyx_node *node);

#endif
