/* Row-wise neural-network operators on the GPU: Softmax/LogSoftmax,
 * LayerNormalization, com.microsoft SkipLayerNormalization,
 * BatchNormalization (inference), GlobalAveragePool and ReduceMean/ReduceSum
 * over trailing axes, and com.microsoft Attention (QKV projection through
 * cuBLAS, masked softmax here). One thread block per row; float32 and
 * float16 (computed in float: cu_ld/cu_st; Attention widens float16 to
 * float32 scratch around its float32 path). */
#include <float.h>
#include <math.h>
#include "cuda_common.h"

#define ROW_THREADS 256

/* A reduction over the block; all threads get the result. */
struct op_sum {
    __device__ float operator()(float a, float b) const { return a + b; }
    static constexpr float identity = 0.f;
};
struct op_max {
    __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
    static constexpr float identity = -INFINITY;
};

template <typename Op>
__device__ float block_reduce(float v) {
    __shared__ float part[32];
    __shared__ float total;
    Op op;
    for (int o = 16; o; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        float w = threadIdx.x < (blockDim.x + 31) / 32 ? part[threadIdx.x] : Op::identity;
        for (int o = 16; o; o >>= 1) w = op(w, __shfl_xor_sync(0xffffffffu, w, o));
        if (threadIdx.x == 0) total = w;
    }
    __syncthreads();
    float r = total;
    __syncthreads();
    return r;
}

__device__ float block_sum(float v) { return block_reduce<op_sum>(v); }
__device__ float block_max(float v) { return block_reduce<op_max>(v); }

/* ---------------------------------------------------------------- softmax */

template <typename T>
__global__ void k_softmax(const T *x, T *y, int64_t n, int log) {
    const T *xr = x + blockIdx.x * n;
    T *yr = y + blockIdx.x * n;
    float m = -INFINITY;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) m = fmaxf(m, cu_ld(&xr[i]));
    m = block_max(m);
    float s = 0.f;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) s += expf(cu_ld(&xr[i]) - m);
    s = block_sum(s);
    if (log) {
        float ls = logf(s);
        for (int64_t i = threadIdx.x; i < n; i += blockDim.x) cu_st(&yr[i], cu_ld(&xr[i]) - m - ls);
    } else {
        float inv = 1.f / s;
        for (int64_t i = threadIdx.x; i < n; i += blockDim.x) cu_st(&yr[i], expf(cu_ld(&xr[i]) - m) * inv);
    }
}

template <typename T>
static onyx_status *softmax_rows(cudaStream_t s, const T *x, T *y, int64_t rows, int64_t n, bool log) {
    if (rows <= 0 || n <= 0) return NULL;
    if (rows > INT32_MAX) return cu_host->error(ONYX_ERR_NOT_IMPLEMENTED, "softmax over %lld rows", (long long)rows);
    k_softmax<T><<<(unsigned)rows, ROW_THREADS, 0, s>>>(x, y, n, log);
    CU_LAUNCHED();
    return NULL;
}

onyx_status *cu_softmax_rows(cudaStream_t s, const float *x, float *y, int64_t rows, int64_t n, bool log) {
    return softmax_rows<float>(s, x, y, rows, n, log);
}

/* axis must be the last one: opset 13's single axis, or the older
 * flattening at axis, which is the same thing when axis = rank - 1 */
static int claim_softmax(const onyx_ep_node *n) {
    int r = cu_in_rank(n, 0);
    if (!cu_all_float_or_half(n) || r < 1) return 0;
    int64_t axis = cu_attr_int(n, "axis", cu_host->node_opset(n) >= 13 ? -1 : 1);
    return axis == -1 || axis == r - 1;
}

static onyx_status *softmax_common(cu_call *c, bool log) {
    onyx_ep_tensor x, y;
    CU_TRY_STATUS(cu_need_float_or_half(c, 0, 0, &x));
    if (x.rank < 1) return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "Softmax needs rank >= 1");
    CU_TRY_STATUS(cu_out(c, 0, x.dtype, x.rank, x.dims, &y));
    int64_t n = x.dims[x.rank - 1];
    if (!n) return NULL;
    if (x.dtype == ONYX_FLOAT16)
        return softmax_rows<__half>(c->s, (const __half *)x.data, (__half *)y.data, x.numel / n, n, log);
    return softmax_rows<float>(c->s, (const float *)x.data, (float *)y.data, x.numel / n, n, log);
}
static onyx_status *softmax_compute(cu_call *c, void *st) { return softmax_common(c, false); }
static onyx_status *logsoftmax_compute(cu_call *c, void *st) { return softmax_common(c, true); }

/* ---------------------------------------------------------------- layer norms */

/* v = x (+ skip (+ bias)); y = (v - mean) / sqrt(var + eps) * g (+ b);
 * sum (SkipLayerNormalization's 4th output) = v */
template <typename T>
__device__ __forceinline__ float ln_input(const T *xr, const T *kr, const T *bias, int64_t i) {
    return cu_ld(&xr[i]) + (kr ? cu_ld(&kr[i]) : 0.f) + (bias ? cu_ld(&bias[i]) : 0.f);
}

template <typename T>
__global__ void k_layernorm(const T *x, const T *skip, int64_t skip_rows, const T *bias, const T *g, const T *b, T *y,
                            T *sum, int64_t n, float eps) {
    int64_t row = blockIdx.x;
    const T *xr = x + row * n;
    const T *kr = skip ? skip + (row % skip_rows) * n : NULL;
    float s = 0.f;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) s += ln_input(xr, kr, bias, i);
    float mean = block_sum(s) / (float)n;
    float q = 0.f;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
        float v = ln_input(xr, kr, bias, i) - mean;
        q += v * v;
    }
    float rstd = rsqrtf(block_sum(q) / (float)n + eps);
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
        float v = ln_input(xr, kr, bias, i);
        if (sum) cu_st(&sum[row * n + i], v);
        cu_st(&y[row * n + i], (v - mean) * rstd * cu_ld(&g[i]) + (b ? cu_ld(&b[i]) : 0.f));
    }
}

/* one launch for either element type; pointers are device data of type dt */
static onyx_status *layernorm_rows(cudaStream_t st, int32_t dt, int64_t rows, const void *x, const void *skip,
                                   int64_t skip_rows, const void *bias, const void *g, const void *b, void *y, void *sum,
                                   int64_t n, float eps) {
    if (rows <= 0) return NULL;
    if (rows > INT32_MAX) return cu_host->error(ONYX_ERR_NOT_IMPLEMENTED, "normalisation over %lld rows", (long long)rows);
    if (dt == ONYX_FLOAT16)
        k_layernorm<__half><<<(unsigned)rows, ROW_THREADS, 0, st>>>(
            (const __half *)x, (const __half *)skip, skip_rows, (const __half *)bias, (const __half *)g,
            (const __half *)b, (__half *)y, (__half *)sum, n, eps);
    else
        k_layernorm<float><<<(unsigned)rows, ROW_THREADS, 0, st>>>((const float *)x, (const float *)skip, skip_rows,
                                                                  (const float *)bias, (const float *)g,
                                                                  (const float *)b, (float *)y, (float *)sum, n, eps);
    CU_LAUNCHED();
    return NULL;
}

typedef struct norm_state {
    float eps;
    int axis;
} norm_state;

static int claim_layernorm(const onyx_ep_node *n) {
    return cu_all_float_or_half(n) && !cu_has_output(n, 1) && !cu_has_output(n, 2) && cu_has_input(n, 1);
}

static onyx_status *layernorm_create(const onyx_ep_node *n, void **out) {
    norm_state *s = (norm_state *)calloc(1, sizeof *s);
    if (!s) return cu_host->error(ONYX_ERR_OUT_OF_MEMORY, "out of memory");
    s->eps = cu_attr_float(n, "epsilon", 1e-5f);
    s->axis = (int)cu_attr_int(n, "axis", -1);
    *out = s;
    return NULL;
}

/* optional input k: n values of element type dt (the input's), or NULL */
static onyx_status *row_param(cu_call *c, size_t k, int32_t dt, int64_t n, const void **p, const char *what) {
    onyx_ep_tensor t;
    *p = NULL;
    if (!cu_in(c, k, &t)) return NULL;
    if (t.dtype != dt || t.numel != n)
        return cu_host->error(ONYX_ERR_INVALID_ARGUMENT,
                              "%s must hold %lld values (the normalised size) of the input's type %d, got %lld of type %d",
                              what, (long long)n, dt, (long long)t.numel, t.dtype);
    *p = t.data;
    return NULL;
}

static onyx_status *layernorm_compute(cu_call *c, void *sv) {
    const norm_state *s = (const norm_state *)sv;
    onyx_ep_tensor x, y;
    CU_TRY_STATUS(cu_need_float_or_half(c, 0, 0, &x));
    int axis = s->axis < 0 ? s->axis + x.rank : s->axis;
    if (axis < 0 || axis >= x.rank)
        return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "axis %d out of range for rank %d", s->axis, x.rank);
    int64_t n = 1;
    for (int d = axis; d < x.rank; d++) n *= x.dims[d];
    const void *g, *b;
    CU_TRY_STATUS(row_param(c, 1, x.dtype, n, &g, "Scale"));
    CU_TRY_STATUS(row_param(c, 2, x.dtype, n, &b, "B"));
    if (!g) return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "Scale is missing");
    CU_TRY_STATUS(cu_out(c, 0, x.dtype, x.rank, x.dims, &y));
    if (!x.numel) return NULL;
    if (!n) return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "LayerNormalization over an empty axis");
    return layernorm_rows(c->s, x.dtype, x.numel / n, x.data, NULL, 1, NULL, g, b, y.data, NULL, n, s->eps);
}

static int claim_skip_layernorm(const onyx_ep_node *n) {
    return cu_all_float_or_half(n) && !cu_has_output(n, 1) && !cu_has_output(n, 2) && cu_has_input(n, 2);
}

static onyx_status *skip_layernorm_create(const onyx_ep_node *n, void **out) {
    norm_state *s = (norm_state *)calloc(1, sizeof *s);
    if (!s) return cu_host->error(ONYX_ERR_OUT_OF_MEMORY, "out of memory");
    s->eps = cu_attr_float(n, "epsilon", 1e-12f);
    *out = s;
    return NULL;
}

static onyx_status *skip_layernorm_compute(cu_call *c, void *sv) {
    const norm_state *s = (const norm_state *)sv;
    onyx_ep_tensor x, k, y, sum;
    CU_TRY_STATUS(cu_need_float_or_half(c, 0, 0, &x));
    CU_TRY_STATUS(cu_need(c, 1, x.dtype, &k));
    if (x.rank < 1) return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "input needs rank >= 1");
    int64_t n = x.dims[x.rank - 1];
    /* skip is the input's shape, or a suffix of it that repeats ((1, S, H) or (S, H)) */
    bool suffix = k.rank <= x.rank && k.numel > 0 && n > 0 && x.numel % k.numel == 0;
    for (int d = 1; suffix && d <= k.rank; d++)
        suffix = k.dims[k.rank - d] == x.dims[x.rank - d] || (d == k.rank && k.dims[0] == 1);
    if (!suffix)
        return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "skip must have the input's shape or a trailing part of it");
    const void *g, *b, *bias;
    CU_TRY_STATUS(row_param(c, 2, x.dtype, n, &g, "gamma"));
    CU_TRY_STATUS(row_param(c, 3, x.dtype, n, &b, "beta"));
    CU_TRY_STATUS(row_param(c, 4, x.dtype, n, &bias, "bias"));
    if (!g) return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "gamma is missing");
    CU_TRY_STATUS(cu_out(c, 0, x.dtype, x.rank, x.dims, &y));
    void *psum = NULL;
    if (cu_host->ctx_output_used(c->ctx, 3)) {
        CU_TRY_STATUS(cu_out(c, 3, x.dtype, x.rank, x.dims, &sum));
        psum = sum.data;
    }
    if (!x.numel) return NULL;
    return layernorm_rows(c->s, x.dtype, x.numel / n, x.data, k.data, k.numel / n, bias, g, b, y.data, psum, n, s->eps);
}

/* ---------------------------------------------------------------- BatchNormalization */

template <typename T>
__global__ void k_batchnorm(const T *x, T *y, int64_t total, int64_t C, int64_t inner, const T *scale, const T *bias,
                            const T *mean, const T *var, float eps) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
        int64_t c = (i / inner) % C;
        cu_st(&y[i], (cu_ld(&x[i]) - cu_ld(&mean[c])) * rsqrtf(cu_ld(&var[c]) + eps) * cu_ld(&scale[c]) +
                         cu_ld(&bias[c]));
    }
}

static int claim_batchnorm(const onyx_ep_node *n) {
    return cu_all_float_or_half(n) && !cu_attr_int(n, "training_mode", 0) && !cu_has_output(n, 1) && !cu_has_output(n, 2) &&
           cu_host->node_input_count(n) == 5;
}

static onyx_status *batchnorm_create(const onyx_ep_node *n, void **out) {
    float *eps = (float *)malloc(sizeof *eps);
    if (!eps) return cu_host->error(ONYX_ERR_OUT_OF_MEMORY, "out of memory");
    *eps = cu_attr_float(n, "epsilon", 1e-5f);
    *out = eps;
    return NULL;
}

static onyx_status *batchnorm_compute(cu_call *c, void *st) {
    onyx_ep_tensor x, y, p[4];
    CU_TRY_STATUS(cu_need_float_or_half(c, 0, 0, &x));
    if (x.rank < 2) return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "X needs rank >= 2 (N, C, ...)");
    int64_t C = x.dims[1], inner = 1;
    for (int d = 2; d < x.rank; d++) inner *= x.dims[d];
    for (int k = 0; k < 4; k++) {
        CU_TRY_STATUS(cu_need(c, (size_t)k + 1, x.dtype, &p[k]));
        if (p[k].numel != C)
            return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "input %d must hold C = %lld values, got %lld", k + 1,
                                  (long long)C, (long long)p[k].numel);
    }
    CU_TRY_STATUS(cu_out(c, 0, x.dtype, x.rank, x.dims, &y));
    if (!x.numel) return NULL;
    int64_t blocks = (x.numel + 255) / 256;
    unsigned grid = (unsigned)(blocks > 65535 * 8 ? 65535 * 8 : blocks);
    float eps = *(const float *)st;
    if (x.dtype == ONYX_FLOAT16)
        k_batchnorm<__half><<<grid, 256, 0, c->s>>>((const __half *)x.data, (__half *)y.data, x.numel, C, inner,
                                                    (const __half *)p[0].data, (const __half *)p[1].data,
                                                    (const __half *)p[2].data, (const __half *)p[3].data, eps);
    else
        k_batchnorm<float><<<grid, 256, 0, c->s>>>((const float *)x.data, (float *)y.data, x.numel, C, inner,
                                                   (const float *)p[0].data, (const float *)p[1].data,
                                                   (const float *)p[2].data, (const float *)p[3].data, eps);
    CU_LAUNCHED();
    return NULL;
}

/* ---------------------------------------------------------------- reductions */

template <typename T>
__global__ void k_reduce_rows(const T *x, T *y, int64_t n, float scale) {
    const T *xr = x + blockIdx.x * n;
    float s = 0.f;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) s += cu_ld(&xr[i]);
    s = block_sum(s);
    if (threadIdx.x == 0) cu_st(&y[blockIdx.x], s * scale);
}

/* y[r] = scale * sum of row r (n values) of x, for rows rows of type dt */
static onyx_status *reduce_rows(cudaStream_t st, int32_t dt, const void *x, void *y, int64_t rows, int64_t n,
                                float scale) {
    if (rows > INT32_MAX) return cu_host->error(ONYX_ERR_NOT_IMPLEMENTED, "reduction over %lld rows", (long long)rows);
    if (dt == ONYX_FLOAT16)
        k_reduce_rows<__half><<<(unsigned)rows, ROW_THREADS, 0, st>>>((const __half *)x, (__half *)y, n, scale);
    else
        k_reduce_rows<float><<<(unsigned)rows, ROW_THREADS, 0, st>>>((const float *)x, (float *)y, n, scale);
    CU_LAUNCHED();
    return NULL;
}

static int claim_gap(const onyx_ep_node *n) { return cu_all_float_or_half(n) && cu_in_rank(n, 0) >= 3; }

static onyx_status *gap_compute(cu_call *c, void *st) {
    onyx_ep_tensor x, y;
    CU_TRY_STATUS(cu_need_float_or_half(c, 0, 0, &x));
    if (x.rank < 3) return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "X needs rank >= 3");
    int64_t dims[CU_MAX_RANK], inner = 1;
    for (int d = 0; d < x.rank; d++) {
        dims[d] = d < 2 ? x.dims[d] : 1;
        if (d >= 2) inner *= x.dims[d];
    }
    CU_TRY_STATUS(cu_out(c, 0, x.dtype, x.rank, dims, &y));
    int64_t rows = x.dims[0] * x.dims[1];
    if (!rows) return NULL;
    if (!inner) return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "empty spatial dimensions");
    return reduce_rows(c->s, x.dtype, x.data, y.data, rows, inner, 1.f / (float)inner);
}

/* ReduceMean/ReduceSum whose axes are the trailing ones (constant) */
typedef struct reduce_state {
    int mean, keepdims;
    size_t n_axes;
    int64_t axes[CU_MAX_RANK];
} reduce_state;

static int reduce_axes(const onyx_ep_node *n, int64_t *axes, size_t *count) {
    const int64_t *a;
    size_t na;
    if (cu_host->attr_ints(n, "axes", &a, &na)) {
        if (na > CU_MAX_RANK) return 0;
        memcpy(axes, a, na * sizeof *a);
        *count = na;
        return 1;
    }
    if (cu_has_input(n, 1)) return cu_const_ints(n, 1, axes, CU_MAX_RANK, count);
    return 0; /* all axes, or noop_with_empty_axes: left to the CPU */
}

static int claim_reduce(const onyx_ep_node *n) {
    int64_t axes[CU_MAX_RANK];
    size_t na;
    int r = cu_in_rank(n, 0);
    /* the data and the result float or float16 alike; axes (input 1) are int64 */
    int32_t dt = cu_in_type(n, 0, ONYX_FLOAT) ? ONYX_FLOAT : cu_in_type(n, 0, ONYX_FLOAT16) ? ONYX_FLOAT16 : 0;
    if (!dt || !cu_out_type(n, 0, dt) || r < 1 || !reduce_axes(n, axes, &na) || !na) return 0;
    /* trailing and distinct: the set {r-na, ..., r-1} */
    unsigned seen = 0;
    for (size_t i = 0; i < na; i++) {
        int64_t a = axes[i] < 0 ? axes[i] + r : axes[i];
        if (a < r - (int64_t)na || a >= r || (seen >> a & 1)) return 0;
        seen |= 1u << a;
    }
    return 1;
}

static onyx_status *reduce_create(const onyx_ep_node *n, void **out) {
    reduce_state *s = (reduce_state *)calloc(1, sizeof *s);
    if (!s) return cu_host->error(ONYX_ERR_OUT_OF_MEMORY, "out of memory");
    s->mean = !strcmp(cu_host->node_op_type(n), "ReduceMean");
    s->keepdims = (int)cu_attr_int(n, "keepdims", 1);
    reduce_axes(n, s->axes, &s->n_axes);
    *out = s;
    return NULL;
}

static onyx_status *reduce_compute(cu_call *c, void *sv) {
    const reduce_state *s = (const reduce_state *)sv;
    onyx_ep_tensor x, y;
    CU_TRY_STATUS(cu_need_float_or_half(c, 0, 0, &x));
    int keep = x.rank - (int)s->n_axes;
    if (keep < 0) return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "more axes than the input's rank %d", x.rank);
    int64_t dims[CU_MAX_RANK], rows = 1, n = 1;
    int rank = 0;
    for (int d = 0; d < x.rank; d++) {
        if (d < keep) rows *= x.dims[d], dims[rank++] = x.dims[d];
        else {
            n *= x.dims[d];
            if (s->keepdims) dims[rank++] = 1;
        }
    }
    CU_TRY_STATUS(cu_out(c, 0, x.dtype, rank, dims, &y));
    if (!rows) return NULL;
    if (!n) return cu_host->error(ONYX_ERR_NOT_IMPLEMENTED, "reduction over an empty axis");
    return reduce_rows(c->s, x.dtype, x.data, y.data, rows, n, s->mean ? 1.f / (float)n : 1.f);
}

/* ---------------------------------------------------------------- Attention */

enum { MASK_NONE, MASK_KEY, MASK_END, MASK_END_START, MASK_FULL };

/* scores (B, N, S, T) rows: mask, causality, softmax, in place */
typedef struct attn_bias {
    const float *p;          /* (B, N, S, T) broadcast, or NULL */
    int64_t str[4];
} attn_bias;

__global__ void k_attn_softmax(float *scores, int64_t N, int64_t S, int64_t T, int mask, const int *m, int64_t m_b0,
                               int64_t B, float filter, int causal, attn_bias ab) {
    int64_t row = blockIdx.x;
    int64_t i = row % S, b = row / S / N, h = (row / S) % N;
    const float *abr = ab.p ? ab.p + b * ab.str[0] + h * ab.str[1] + i * ab.str[2] : NULL;
    float *r = scores + row * T;
    float mx = -INFINITY;
    for (int64_t t = threadIdx.x; t < T; t += blockDim.x) {
        float v = r[t];
        bool keep = true;
        if (mask == MASK_KEY) keep = m[(m_b0 == 1 ? 0 : b) * T + t] > 0;
        else if (mask == MASK_END) keep = t < m[b];
        else if (mask == MASK_END_START) keep = t < m[b] && t >= m[B + b];
        else if (mask == MASK_FULL) keep = m[(b * S + i) * T + t] > 0;
        if (!keep) v += filter;
        if (abr) v += abr[t * ab.str[3]];
        if (causal && t >= i + 1 + (T - S)) v = -FLT_MAX;
        r[t] = v;
        mx = fmaxf(mx, v);
    }
    mx = block_max(mx);
    float s = 0.f;
    for (int64_t t = threadIdx.x; t < T; t += blockDim.x) {
        float e = expf(r[t] - mx);
        r[t] = e;
        s += e;
    }
    float inv = 1.f / block_sum(s);
    for (int64_t t = threadIdx.x; t < T; t += blockDim.x) r[t] *= inv;
}

typedef struct attn_state {
    int64_t heads;
    int64_t qkv[3];     /* 0: equal thirds */
    float scale, filter;
    int causal;
} attn_state;

static int claim_attention(const onyx_ep_node *n) {
    /* no past state, present output or rotary embedding; float32 or
     * float16 throughout (the mask is int32) */
    int32_t t = cu_in_type(n, 0, ONYX_FLOAT) ? ONYX_FLOAT : cu_in_type(n, 0, ONYX_FLOAT16) ? ONYX_FLOAT16 : 0;
    if (!t || !cu_in_type(n, 1, t) || cu_in_rank(n, 0) != 3) return 0;
    /* the output is of the input's type (when inference knows it) */
    int32_t odt, orank;
    int64_t odims[ONYX_EP_MAX_RANK];
    if (cu_host->node_output_type(n, 0, &odt, &orank, odims) && odt != t) return 0;
    if (cu_has_input(n, 2) && !cu_in_type(n, 2, t)) return 0;
    if (cu_has_input(n, 3) && !cu_in_type(n, 3, ONYX_INT32)) return 0;
    /* no past state (4, 6); an attention bias (5) must be 4-D of the input's type */
    for (size_t k = 4; k < cu_host->node_input_count(n); k++)
        if (cu_has_input(n, k) && (k != 5 || !cu_in_type(n, 5, t) || cu_in_rank(n, 5) != 4)) return 0;
    if (cu_has_output(n, 1) || cu_attr_int(n, "do_rotary", 0) || cu_attr_int(n, "past_present_share_buffer", 0)) return 0;
    return cu_attr_int(n, "num_heads", 0) > 0;
}

static onyx_status *attention_create(const onyx_ep_node *n, void **out) {
    attn_state *s = (attn_state *)calloc(1, sizeof *s);
    if (!s) return cu_host->error(ONYX_ERR_OUT_OF_MEMORY, "out of memory");
    s->heads = cu_attr_int(n, "num_heads", 0);
    const int64_t *q;
    size_t nq;
    if (cu_host->attr_ints(n, "qkv_hidden_sizes", &q, &nq)) {
        if (nq != 3) {
            free(s);
            return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "qkv_hidden_sizes must have 3 values, got %zu", nq);
        }
        memcpy(s->qkv, q, sizeof s->qkv);
    }
    s->scale = cu_attr_float(n, "scale", 0.f);
    s->filter = cu_attr_float(n, "mask_filter_value", -10000.f);
    s->causal = cu_attr_int(n, "unidirectional", 0) != 0;
    *out = s;
    return NULL;
}

static onyx_status *attention_mask(const onyx_ep_tensor *m, int64_t B, int64_t S, int64_t T, int *kind) {
    *kind = MASK_NONE;
    if (!m) return NULL;
    const int64_t *d = m->dims;
    if (m->rank == 1 && d[0] == B) *kind = MASK_END;
    else if (m->rank == 1 && d[0] == 2 * B) *kind = MASK_END_START;
    else if (m->rank == 2 && (d[0] == 1 || d[0] == B) && d[1] == 1 && T != 1) *kind = MASK_NONE;
    else if (m->rank == 2 && (d[0] == B || d[0] == 1) && d[1] == T) *kind = MASK_KEY;
    else if (m->rank == 3 && d[0] == B && d[1] == S && d[2] == T) *kind = MASK_FULL;
    else
        return cu_host->error(ONYX_ERR_INVALID_ARGUMENT,
                              "mask_index must be (B), (2B), (B, T) or (B, S, T) with B=%lld, S=%lld, T=%lld",
                              (long long)B, (long long)S, (long long)T);
    return NULL;
}

/* The sizes of one Attention call, checked against its inputs. */
typedef struct attn_dims {
    int64_t B, S, T, din, total, N, dq, dk, dv, hq, hv;
} attn_dims;

/* The float32 computation: QKV = x W (+ bias), scores = scale Q K^T
 * (+ mask, bias, causality), softmax, y = scores V; per batch, the heads as
 * a strided batch of cuBLAS. */
static onyx_status *attention_run(cudaStream_t cs, const attn_state *s, const attn_dims &a, const float *x,
                                  const float *w, const float *pb, int kind, const onyx_ep_tensor *mask,
                                  attn_bias ab, float *y) {
    int64_t B = a.B, S = a.S, T = a.T, N = a.N, total = a.total;
    size_t qkv_bytes = (size_t)(B * S * total) * sizeof(float), sc_bytes = (size_t)(B * N * S * T) * sizeof(float);
    float *qkv = (float *)cu_scratch(qkv_bytes + sc_bytes);
    if (!qkv) return cu_host->error(ONYX_ERR_OUT_OF_MEMORY, "cuda: out of device memory for attention scratch");
    float *scores = qkv + B * S * total;
    onyx_status *st = cu_gemm(false, false, B * S, total, a.din, 1.f, x, a.din, 0, w, total, 0, 0.f, qkv, total, 0, 1);
    cu_activation none = {CU_ACT_NONE, 0, 0};
    if (!st && pb) st = cu_bias_act(cs, qkv, B * S * total, pb, total, 1, NULL, none);
    float scale = s->scale != 0.f ? s->scale : 1.f / sqrtf((float)a.hq);
    for (int64_t b = 0; !st && b < B; b++) {
        const float *q = qkv + b * S * total, *k = q + a.dq;
        st = cu_gemm(false, true, S, T, a.hq, scale, q, total, a.hq, k, total, a.hq, 0.f, scores + b * N * S * T, T,
                     S * T, N);
    }
    if (!st) {
        k_attn_softmax<<<(unsigned)(B * N * S), 256, 0, cs>>>(scores, N, S, T, kind, mask ? (const int *)mask->data : NULL,
                                                             mask ? mask->dims[0] : 1, B, s->filter, s->causal, ab);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) st = cu_host->error(ONYX_ERR_RUNTIME, "cuda: attention softmax: %s", cudaGetErrorString(e));
    }
    for (int64_t b = 0; !st && b < B; b++) {
        const float *v = qkv + b * S * total + a.dq + a.dk;
        st = cu_gemm(false, false, S, a.hv, T, 1.f, scores + b * N * S * T, T, S * T, v, total, a.hv, 0.f,
                     y + b * S * a.dv, a.dv, a.hv, N);
    }
    cu_scratch_free(qkv);
    return st;
}

/* float16 Attention: the float16 inputs widened into float32 scratch, the
 * float32 path, the output narrowed back (cuBLAS in float32 keeps the
 * score sums exact enough for long rows). */
static onyx_status *attention_run_half(cudaStream_t cs, const attn_state *s, const attn_dims &a, const onyx_ep_tensor &x,
                                       const onyx_ep_tensor &w, const onyx_ep_tensor *bias, int kind,
                                       const onyx_ep_tensor *mask, const onyx_ep_tensor *abt, attn_bias ab, void *y) {
    int64_t ny = a.B * a.S * a.dv, nb = bias ? bias->numel : 0, nab = abt ? abt->numel : 0;
    int64_t total = x.numel + w.numel + nb + nab + ny;
    float *f = (float *)cu_scratch((size_t)total * sizeof(float));
    if (!f) return cu_host->error(ONYX_ERR_OUT_OF_MEMORY, "cuda: out of device memory for float16 attention scratch");
    float *xf = f, *wf = xf + x.numel, *bf = wf + w.numel, *abf = bf + nb, *yf = abf + nab;
    onyx_status *st = cu_widen_half(cs, (const __half *)x.data, xf, x.numel);
    if (!st) st = cu_widen_half(cs, (const __half *)w.data, wf, w.numel);
    if (!st && bias) st = cu_widen_half(cs, (const __half *)bias->data, bf, nb);
    if (!st && abt) {
        st = cu_widen_half(cs, (const __half *)abt->data, abf, nab);
        ab.p = abf;
    }
    if (!st) st = attention_run(cs, s, a, xf, wf, bias ? bf : NULL, kind, mask, ab, yf);
    if (!st) st = cu_narrow_float(cs, yf, (__half *)y, ny);
    cu_scratch_free(f);
    return st;
}

static onyx_status *attention_compute(cu_call *c, void *sv) {
    const attn_state *s = (const attn_state *)sv;
    onyx_ep_tensor x, w, bias, mask, y;
    CU_TRY_STATUS(cu_need_float_or_half(c, 0, 0, &x));
    CU_TRY_STATUS(cu_need(c, 1, x.dtype, &w));
    if (x.rank != 3 || w.rank != 2 || w.dims[0] != x.dims[2])
        return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "input must be (B, S, hidden) and weights (hidden, 3 x hidden)");
    attn_dims a;
    a.B = x.dims[0], a.S = x.dims[1], a.T = a.S, a.din = x.dims[2], a.total = w.dims[1], a.N = s->heads;
    a.dq = s->qkv[0] ? s->qkv[0] : a.total / 3, a.dk = s->qkv[1] ? s->qkv[1] : a.total / 3,
    a.dv = s->qkv[2] ? s->qkv[2] : a.total / 3;
    if (a.dq <= 0 || a.dk != a.dq || a.dv <= 0 || a.dq + a.dk + a.dv != a.total || a.dq % a.N || a.dv % a.N)
        return cu_host->error(ONYX_ERR_INVALID_ARGUMENT,
                              "hidden sizes (%lld, %lld, %lld) must be positive, Q and K equal, sum to %lld and divide "
                              "by num_heads %lld",
                              (long long)a.dq, (long long)a.dk, (long long)a.dv, (long long)a.total, (long long)a.N);
    a.hq = a.dq / a.N, a.hv = a.dv / a.N;
    bool has_bias = cu_in(c, 2, &bias);
    if (has_bias && (bias.dtype != x.dtype || bias.numel != a.total))
        return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "bias must hold %lld values of the input's type",
                              (long long)a.total);
    int kind;
    bool has_mask = cu_in(c, 3, &mask);
    if (has_mask && mask.dtype != ONYX_INT32) return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "mask_index must be int32");
    CU_TRY_STATUS(attention_mask(has_mask ? &mask : NULL, a.B, a.S, a.T, &kind));
    attn_bias ab = {NULL, {0, 0, 0, 0}};
    onyx_ep_tensor abt;
    bool has_ab = cu_in(c, 5, &abt);
    if (has_ab) {
        int64_t full[4] = {a.B, a.N, a.S, a.T}, run = 1;
        if (abt.dtype != x.dtype || abt.rank != 4)
            return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "attention_bias must be 4-D, of the input's type");
        for (int d = 3; d >= 0; d--) {
            if (abt.dims[d] != 1 && abt.dims[d] != full[d])
                return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "attention_bias does not broadcast to (B, N, S, T)");
            ab.str[d] = abt.dims[d] == 1 ? 0 : run;
            run *= abt.dims[d];
        }
        ab.p = (const float *)abt.data;
    }
    int64_t ydims[3] = {a.B, a.S, a.dv};
    CU_TRY_STATUS(cu_out(c, 0, x.dtype, 3, ydims, &y));
    if (!a.B || !a.S) return NULL;
    const onyx_ep_tensor *pm = has_mask ? &mask : NULL;
    if (x.dtype == ONYX_FLOAT16)
        return attention_run_half(c->s, s, a, x, w, has_bias ? &bias : NULL, kind, pm, has_ab ? &abt : NULL, ab, y.data);
    return attention_run(c->s, s, a, (const float *)x.data, (const float *)w.data,
                         has_bias ? (const float *)bias.data : NULL, kind, pm, ab, (float *)y.data);
}

/* ---------------------------------------------------------------- table */

const cu_op cu_ops_nn[] = {
    {"", "Softmax", claim_softmax, NULL, softmax_compute, 0},
    {"", "LogSoftmax", claim_softmax, NULL, logsoftmax_compute, 0},
    {"", "LayerNormalization", claim_layernorm, layernorm_create, layernorm_compute, 0},
    {"com.microsoft", "SkipLayerNormalization", claim_skip_layernorm, skip_layernorm_create, skip_layernorm_compute, 0},
    {"", "BatchNormalization", claim_batchnorm, batchnorm_create, batchnorm_compute, 0},
    {"", "GlobalAveragePool", claim_gap, NULL, gap_compute, 0},
    {"", "ReduceMean", claim_reduce, reduce_create, reduce_compute, 2},
    {"", "ReduceSum", claim_reduce, reduce_create, reduce_compute, 2},
    {"com.microsoft", "Attention", claim_attention, attention_create, attention_compute, 0},
    {NULL, NULL, NULL, NULL, NULL, 0},
};
