/* Scale/zero-point choice and float -> 8-bit conversion of constants. */
#include "quantize/quant_params.h"

#include <math.h>
#include <string.h>

onyx_qrange onyx_quant_range(int qtype, bool reduce_range, bool symmetric) {
    if (qtype == ONYX_INT8) {
        if (reduce_range) return (onyx_qrange){-64, 64, symmetric};
        return symmetric ? (onyx_qrange){-127, 127, true} : (onyx_qrange){-128, 127, false};
    }
    return reduce_range ? (onyx_qrange){0, 127, symmetric} : (onyx_qrange){0, 255, symmetric};
}

void onyx_quant_scale_zp(float rmin, float rmax, onyx_qrange r, float *scale, int *zp) {
    if (!isfinite(rmin)) rmin = 0;
    if (!isfinite(rmax)) rmax = 0;
    rmin = fminf(rmin, 0.0f);
    rmax = fmaxf(rmax, 0.0f);
    double span = r.qmax - r.qmin;
    if (r.symmetric) {
        double absmax = fmax(fabs(rmin), fabs(rmax));
        double s = 2.0 * absmax / span;
        *scale = s > 0 ? (float)s : 1.0f;
        *zp = (r.qmax + r.qmin + 1) / 2; /* 0 for int8, 128 for uint8 */
        if (r.qmin < 0) *zp = 0;
        return;
    }
    double s = ((double)rmax - rmin) / span;
    if (!(s > 0)) {
        *scale = 1.0f;
        *zp = r.qmin < 0 ? 0 : r.qmin;
        return;
    }
    double z = nearbyint(r.qmin - rmin / s);
    *scale = (float)s;
    *zp = (int)fmin(fmax(z, r.qmin), r.qmax);
}

/* Element i of a float tensor whose data may be unaligned (borrowed from
 * the file mapping). */
static inline float load_f32(const onyx_value *w, size_t i) {
    float f;
    memcpy(&f, (const uint8_t *)w->data + i * sizeof f, sizeof f);
    return f;
}

static inline int quant_one(float x, float scale, int zp, onyx_qrange r) {
    float q = nearbyintf(x / scale) + (float)zp;
    if (!(q >= (float)r.qmin)) q = (float)r.qmin; /* also NaN */
    if (q > (float)r.qmax) q = (float)r.qmax;
    return (int)q;
}

void onyx_qtensor_free(onyx_qtensor *t) {
    onyx_value_destroy(t->q);
    onyx_value_destroy(t->scale);
    onyx_value_destroy(t->zp);
    memset(t, 0, sizeof *t);
}

onyx_status *onyx_quant_tensor(const onyx_value *w, int axis, int qtype, bool reduce_range, bool symmetric,
                               onyx_qtensor *out) {
    memset(out, 0, sizeof *out);
    if (w->kind != ONYX_VALUE_TENSOR || w->dtype != ONYX_FLOAT)
        return ONYX_INVALID_ARG("only float tensors are quantised");
    if (axis >= w->rank) return ONYX_INVALID_ARG("quantisation axis %d outside rank %d", axis, w->rank);
    /* [outer, channels, inner] view of w around the axis */
    int64_t channels = axis < 0 ? 1 : w->dims[axis], inner = 1;
    for (int d = axis + 1; axis >= 0 && d < w->rank; d++) inner *= w->dims[d];
    int64_t outer = channels && inner ? w->numel / (channels * inner) : 0;
    if (axis < 0) inner = w->numel, outer = 1;
    int64_t cdims[1] = {channels};
    int crank = axis < 0 ? 0 : 1;
    onyx_status *st = onyx_tensor_new(qtype, w->rank, w->dims, &out->q);
    if (!st) st = onyx_tensor_new(ONYX_FLOAT, crank, cdims, &out->scale);
    if (!st) st = onyx_tensor_new(qtype, crank, cdims, &out->zp);
    if (st) {
        onyx_qtensor_free(out);
        return st;
    }
    onyx_qrange r = onyx_quant_range(qtype, reduce_range, symmetric);
    float *scales = out->scale->data;
    for (int64_t c = 0; c < channels; c++) {
        float lo = 0, hi = 0;
        for (int64_t o = 0; o < outer; o++)
            for (int64_t i = 0; i < inner; i++) {
                float x = load_f32(w, (size_t)((o * channels + c) * inner + i));
                if (x < lo) lo = x;
                if (x > hi) hi = x;
            }
        int zp;
        onyx_quant_scale_zp(lo, hi, r, &scales[c], &zp);
        if (qtype == ONYX_INT8) ((int8_t *)out->zp->data)[c] = (int8_t)zp;
        else ((uint8_t *)out->zp->data)[c] = (uint8_t)zp;
        for (int64_t o = 0; o < outer; o++)
            for (int64_t i = 0; i < inner; i++) {
                size_t k = (size_t)((o * channels + c) * inner + i);
                int q = quant_one(load_f32(w, k), scales[c], zp, r);
                if (qtype == ONYX_INT8) ((int8_t *)out->q->data)[k] = (int8_t)q;
                else ((uint8_t *)out->q->data)[k] = (uint8_t)q;
            }
    }
    return NULL;
}
