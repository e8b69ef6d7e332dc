/* Resize (opset 11 and later) on the GPU: nearest and linear (N-linear over
 * the resized axes) for float32 and float16, with the coordinate modes
 * half_pixel, half_pixel_symmetric, pytorch_half_pixel, align_corners and
 * asymmetric and every nearest_mode. The coordinates follow the ONNX
 * reference as the CPU kernel does (vision/resize.c): computed in double,
 * split into a base index and a fraction in (0, 1], taps clamped to the
 * edge. Scales or sizes are read on the host (host_inputs); cubic,
 * antialiasing, axes, keep_aspect_ratio_policy other than stretch,
 * tf_crop_and_resize and exclude_outside are left to the CPU. */
#include <math.h>
#include "cuda_common.h"

#define THREADS 256

enum { CT_HALF_PIXEL, CT_PYTORCH_HALF_PIXEL, CT_ALIGN_CORNERS, CT_ASYMMETRIC, CT_HALF_PIXEL_SYMMETRIC };
enum { NM_ROUND_PREFER_FLOOR, NM_ROUND_PREFER_CEIL, NM_FLOOR, NM_CEIL };

typedef struct resize_state {
    int linear, ctm, nearest;
} resize_state;

/* One call's geometry, passed by value to the kernel. */
typedef struct rs_geom {
    int rank, linear, ctm, nearest;
    int64_t in[CU_MAX_RANK], out[CU_MAX_RANK], in_str[CU_MAX_RANK];
    double scale[CU_MAX_RANK], width[CU_MAX_RANK]; /* width: scale x in, the fractional output length */
    unsigned char resized[CU_MAX_RANK];
} rs_geom;

static int ctm_code(const char *s) {
    if (!strcmp(s, "half_pixel")) return CT_HALF_PIXEL;
    if (!strcmp(s, "pytorch_half_pixel")) return CT_PYTORCH_HALF_PIXEL;
    if (!strcmp(s, "align_corners")) return CT_ALIGN_CORNERS;
    if (!strcmp(s, "asymmetric")) return CT_ASYMMETRIC;
    if (!strcmp(s, "half_pixel_symmetric")) return CT_HALF_PIXEL_SYMMETRIC;
    return -1;
}

static int nearest_code(const char *s) {
    if (!strcmp(s, "round_prefer_floor")) return NM_ROUND_PREFER_FLOOR;
    if (!strcmp(s, "round_prefer_ceil")) return NM_ROUND_PREFER_CEIL;
    if (!strcmp(s, "floor")) return NM_FLOOR;
    if (!strcmp(s, "ceil")) return NM_CEIL;
    return -1;
}

static int claim_resize(const onyx_ep_node *n) {
    const char *mode = cu_attr_string(n, "mode", "nearest");
    const int64_t *axes;
    size_t na;
    int r = cu_in_rank(n, 0);
    if (cu_host->node_opset(n) < 11 || r < 1 || r > CU_MAX_RANK) return 0;
    if (!cu_in_type(n, 0, 0) || !cu_out_type(n, 0, 0)) return 0;
    /* float32 or float16 data; roi/scales/sizes of any type, read on the host */
    int32_t dt, rank;
    int64_t dims[ONYX_EP_MAX_RANK];
    cu_host->node_input_type(n, 0, &dt, &rank, dims);
    if (dt != ONYX_FLOAT && dt != ONYX_FLOAT16) return 0;
    if (!cu_out_type(n, 0, dt)) return 0;
    return (!strcmp(mode, "nearest") || !strcmp(mode, "linear")) &&
           ctm_code(cu_attr_string(n, "coordinate_transformation_mode", "half_pixel")) >= 0 &&
           nearest_code(cu_attr_string(n, "nearest_mode", "round_prefer_floor")) >= 0 &&
           !cu_attr_int(n, "antialias", 0) && !cu_attr_int(n, "exclude_outside", 0) &&
           !strcmp(cu_attr_string(n, "keep_aspect_ratio_policy", "stretch"), "stretch") &&
           !cu_host->attr_ints(n, "axes", &axes, &na);
}

static onyx_status *resize_create(const onyx_ep_node *n, void **out) {
    resize_state *s = (resize_state *)calloc(1, sizeof *s);
    if (!s) return cu_host->error(ONYX_ERR_OUT_OF_MEMORY, "out of memory");
    s->linear = !strcmp(cu_attr_string(n, "mode", "nearest"), "linear");
    s->ctm = ctm_code(cu_attr_string(n, "coordinate_transformation_mode", "half_pixel"));
    s->nearest = nearest_code(cu_attr_string(n, "nearest_mode", "round_prefer_floor"));
    *out = s;
    return NULL;
}

__device__ double rs_coord(const rs_geom &g, int d, int64_t o) {
    double x = (double)o, s = g.scale[d], in = (double)g.in[d], w = g.width[d];
    switch (g.ctm) {
    case CT_HALF_PIXEL: return (x + 0.5) / s - 0.5;
    case CT_HALF_PIXEL_SYMMETRIC: {
        double adjustment = (double)g.out[d] / w;
        return in / 2 * (1 - adjustment) + (x + 0.5) / s - 0.5;
    }
    case CT_PYTORCH_HALF_PIXEL: return w == 1 ? -0.5 : (x + 0.5) / s - 0.5;
    case CT_ALIGN_CORNERS: return w == 1 ? 0 : x * (in - 1) / (w - 1);
    default: return x / s;
    }
}

__device__ __forceinline__ int64_t rs_clamp(int64_t i, int64_t n) { return i < 0 ? 0 : i >= n ? n - 1 : i; }

/* x = base + t with t in (0, 1] (a whole number is the previous base + 1) */
__device__ void rs_split(double x, int64_t *base, double *t) {
    if (!(fabs(x) < 0x1p52)) x = x != x ? 0 : copysign(0x1p52, x);
    double fl = floor(x);
    *t = x - fl;
    *base = (int64_t)fl;
    if (*t == 0) {
        *t = 1;
        *base -= 1;
    }
}

__device__ int64_t rs_nearest(int mode, int64_t base, double t) {
    if (t == 1) return base + 1;
    switch (mode) {
    case NM_ROUND_PREFER_FLOOR: return t <= 0.5 ? base : base + 1;
    case NM_ROUND_PREFER_CEIL: return t < 0.5 ? base : base + 1;
    case NM_FLOOR: return base;
    default: return base + 1;
    }
}

template <typename T>
__global__ void k_resize(const T *x, T *y, int64_t n, rs_geom g) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        int64_t lo[CU_MAX_RANK], hi[CU_MAX_RANK];
        float w[CU_MAX_RANK];
        int64_t rem = i;
        for (int d = g.rank - 1; d >= 0; d--) {
            int64_t o = rem % g.out[d];
            rem /= g.out[d];
            lo[d] = hi[d] = o;
            w[d] = 0.f;
            if (!g.resized[d]) continue;
            int64_t base;
            double t;
            rs_split(rs_coord(g, d, o), &base, &t);
            if (g.linear) {
                lo[d] = rs_clamp(base, g.in[d]);
                hi[d] = rs_clamp(base + 1, g.in[d]);
                w[d] = (float)t;
            } else {
                lo[d] = hi[d] = rs_clamp(rs_nearest(g.nearest, base, t), g.in[d]);
            }
        }
        if (!g.linear) {
            int64_t off = 0;
            for (int d = 0; d < g.rank; d++) off += lo[d] * g.in_str[d];
            y[i] = x[off];
            continue;
        }
        /* the 2^k corners of the k resized axes */
        int ax[CU_MAX_RANK], k = 0;
        for (int d = 0; d < g.rank; d++)
            if (g.resized[d]) ax[k++] = d;
        int64_t base_off = 0;
        for (int d = 0; d < g.rank; d++)
            if (!g.resized[d]) base_off += lo[d] * g.in_str[d];
        float acc = 0.f;
        for (int c = 0; c < (1 << k); c++) {
            float wt = 1.f;
            int64_t off = base_off;
            for (int j = 0; j < k; j++) {
                int d = ax[j];
                bool up = (c >> j) & 1;
                wt *= up ? w[d] : 1.f - w[d];
                off += (up ? hi[d] : lo[d]) * g.in_str[d];
            }
            if (wt != 0.f) acc += wt * cu_ld(&x[off]);
        }
        cu_st(&y[i], acc);
    }
}

/* scales (float) or sizes (int64) from the host inputs: out dims and scales */
static onyx_status *resize_geometry(cu_call *c, const onyx_ep_tensor &x, rs_geom *g) {
    onyx_ep_tensor sc, sz;
    bool has_scales = cu_in(c, 2, &sc) && sc.numel > 0, has_sizes = cu_in(c, 3, &sz) && sz.numel > 0;
    if (has_scales == has_sizes)
        return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "Resize: exactly one of scales and sizes must be given");
    const onyx_ep_tensor &t = has_scales ? sc : sz;
    if (!t.on_host || t.numel != x.rank)
        return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "Resize: %s must hold %d values (one per axis)",
                              has_scales ? "scales" : "sizes", x.rank);
    if (has_scales && t.dtype != ONYX_FLOAT)
        return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "Resize: scales must be float");
    if (has_sizes && t.dtype != ONYX_INT64)
        return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "Resize: sizes must be int64");
    g->rank = x.rank;
    int64_t str = 1;
    for (int d = x.rank - 1; d >= 0; d--) {
        g->in_str[d] = str;
        str *= x.dims[d];
    }
    for (int d = 0; d < x.rank; d++) {
        int64_t in = x.dims[d];
        g->in[d] = in;
        if (has_scales) {
            double s = ((const float *)t.data)[d];
            if (!(s > 0) || !isfinite(s))
                return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "Resize: scales[%d] = %g must be positive and finite", d, s);
            double o = floor(s * (double)in);
            if (!(o < 0x1p40)) return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "Resize: scales[%d] makes the axis too long", d);
            g->scale[d] = s;
            g->out[d] = (int64_t)o;
        } else {
            int64_t o = ((const int64_t *)t.data)[d];
            if (o < 0 || o > ((int64_t)1 << 40))
                return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "Resize: sizes[%d] = %lld is out of range", d, (long long)o);
            g->out[d] = o;
            g->scale[d] = in > 0 ? (double)o / (double)in : 1;
        }
        g->width[d] = g->scale[d] * (double)in;
        g->resized[d] = g->scale[d] != 1 || g->out[d] != in;
    }
    return NULL;
}

static onyx_status *resize_compute(cu_call *c, void *sv) {
    const resize_state *s = (const resize_state *)sv;
    onyx_ep_tensor x, y;
    CU_TRY_STATUS(cu_need_float_or_half(c, 0, 0, &x));
    if (x.rank < 1 || x.rank > CU_MAX_RANK)
        return cu_host->error(ONYX_ERR_NOT_IMPLEMENTED, "Resize: rank %d (the CUDA kernel takes 1 to %d)", x.rank,
                              CU_MAX_RANK);
    rs_geom g;
    memset(&g, 0, sizeof g);
    g.linear = s->linear, g.ctm = s->ctm, g.nearest = s->nearest;
    CU_TRY_STATUS(resize_geometry(c, x, &g));
    CU_TRY_STATUS(cu_out(c, 0, x.dtype, x.rank, g.out, &y));
    if (!y.numel) return NULL;
    if (!x.numel) return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "Resize: an empty input cannot fill a non-empty output");
    int64_t b = (y.numel + THREADS - 1) / THREADS;
    unsigned blocks = (unsigned)(b > 65535 * 8 ? 65535 * 8 : b);
    if (x.dtype == ONYX_FLOAT16)
        k_resize<__half><<<blocks, THREADS, 0, c->s>>>((const __half *)x.data, (__half *)y.data, y.numel, g);
    else
        k_resize<float><<<blocks, THREADS, 0, c->s>>>((const float *)x.data, (float *)y.data, y.numel, g);
    CU_LAUNCHED();
    return NULL;
}

/* roi (1), scales (2) and sizes (3) are read on the host */
const cu_op cu_ops_resize[] = {
    {"", "Resize", claim_resize, resize_create, resize_compute, 0xe},
    {NULL, NULL, NULL, NULL, NULL, 0},
};
