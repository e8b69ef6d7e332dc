/* Row-wise neural-network operators on the GPU: Softmax/LogSoftmax,
 * LayerNormalization, com.microsoft SkipLayerNormalization,
 * BatchNormalization (inference), GlobalAveragePool and ReduceMean/ReduceSum
 * over trailing axes, and com.microsoft Attention (QKV projection through
 * cuBLAS, masked softmax here). One thread block per row; float32. */
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

__global__ void k_softmax(const float *x, float *y, int64_t n, int log) {
    const float *xr = x + blockIdx.x * n;
    float *yr = y + blockIdx.x * n;
    float m = -INFINITY;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) m = fmaxf(m, xr[i]);
    m = block_max(m);
    float s = 0.f;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) s += expf(xr[i] - m);
    s = block_sum(s);
    if (log) {
        float ls = logf(s);
        for (int64_t i = threadIdx.x; i < n; i += blockDim.x) yr[i] = xr[i] - m - ls;
    } else {
        float inv = 1.f / s;
        for (int64_t i = threadIdx.x; i < n; i += blockDim.x) yr[i] = expf(xr[i] - m) * inv;
    }
}

onyx_status *cu_softmax_rows(cudaStream_t s, const float *x, float *y, int64_t rows, int64_t n, bool log) {
    if (rows <= 0 || n <= 0) return NULL;
    if (rows > INT32_MAX) return cu_host->error(ONYX_ERR_NOT_IMPLEMENTED, "softmax over %lld rows", (long long)rows);
    k_softmax<<<(unsigned)rows, ROW_THREADS, 0, s>>>(x, y, n, log);
    CU_LAUNCHED();
    return NULL;
}

/* axis must be the last one: opset 13's single axis, or the older
 * flattening at axis, which is the same thing when axis = rank - 1 */
static int claim_softmax(const onyx_ep_node *n) {
    int r = cu_in_rank(n, 0);
    if (!cu_all_float(n) || r < 1) return 0;
    int64_t axis = cu_attr_int(n, "axis", cu_host->node_opset(n) >= 13 ? -1 : 1);
    return axis == -1 || axis == r - 1;
}

static onyx_status *softmax_common(cu_call *c, bool log) {
    onyx_ep_tensor x, y;
    CU_TRY_STATUS(cu_need(c, 0, ONYX_FLOAT, &x));
    if (x.rank < 1) return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "Softmax needs rank >= 1");
    CU_TRY_STATUS(cu_out(c, 0, ONYX_FLOAT, x.rank, x.dims, &y));
    int64_t n = x.dims[x.rank - 1];
    return n ? cu_softmax_rows(c->s, (const float *)x.data, (float *)y.data, x.numel / n, n, log) : NULL;
}
static onyx_status *softmax_compute(cu_call *c, void *st) { return softmax_common(c, false); }
static onyx_status *logsoftmax_compute(cu_call *c, void *st) { return softmax_common(c, true); }

/* ---------------------------------------------------------------- layer norms */

/* v = x (+ skip (+ bias)); y = (v - mean) / sqrt(var + eps) * g (+ b);
 * sum (SkipLayerNormalization's 4th output) = v */
__global__ void k_layernorm(const float *x, const float *skip, int64_t skip_rows, const float *bias, const float *g,
                            const float *b, float *y, float *sum, int64_t n, float eps) {
    int64_t row = blockIdx.x;
    const float *xr = x + row * n;
    const float *kr = skip ? skip + (row % skip_rows) * n : NULL;
    float s = 0.f;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
        float v = xr[i] + (kr ? kr[i] : 0.f) + (bias ? bias[i] : 0.f);
        s += v;
    }
    float mean = block_sum(s) / (float)n;
    float q = 0.f;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
        float v = xr[i] + (kr ? kr[i] : 0.f) + (bias ? bias[i] : 0.f) - mean;
        q += v * v;
    }
    float rstd = rsqrtf(block_sum(q) / (float)n + eps);
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
        float v = xr[i] + (kr ? kr[i] : 0.f) + (bias ? bias[i] : 0.f);
        if (sum) sum[row * n + i] = v;
        y[row * n + i] = (v - mean) * rstd * g[i] + (b ? b[i] : 0.f);
    }
}

typedef struct norm_state {
    float eps;
    int axis;
} norm_state;

static int claim_layernorm(const onyx_ep_node *n) {
    return cu_all_float(n) && !cu_has_output(n, 1) && !cu_has_output(n, 2) && cu_has_input(n, 1);
}

static onyx_status *layernorm_create(const onyx_ep_node *n, void **out) {
    norm_state *s = (norm_state *)calloc(1, sizeof *s);
    if (!s) return cu_host->error(ONYX_ERR_OUT_OF_MEMORY, "out of memory");
    s->eps = cu_attr_float(n, "epsilon", 1e-5f);
    s->axis = (int)cu_attr_int(n, "axis", -1);
    *out = s;
    return NULL;
}

static onyx_status *row_param(cu_call *c, size_t k, int64_t n, const float **p, const char *what) {
    onyx_ep_tensor t;
    *p = NULL;
    if (!cu_in(c, k, &t)) return NULL;
    if (t.dtype != ONYX_FLOAT || t.numel != n)
        return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "%s must hold %lld floats (the normalised size), got %lld", what,
                              (long long)n, (long long)t.numel);
    *p = (const float *)t.data;
    return NULL;
}

static onyx_status *layernorm_compute(cu_call *c, void *sv) {
    const norm_state *s = (const norm_state *)sv;
    onyx_ep_tensor x, y;
    CU_TRY_STATUS(cu_need(c, 0, ONYX_FLOAT, &x));
    int axis = s->axis < 0 ? s->axis + x.rank : s->axis;
    if (axis < 0 || axis >= x.rank)
        return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "axis %d out of range for rank %d", s->axis, x.rank);
    int64_t n = 1;
    for (int d = axis; d < x.rank; d++) n *= x.dims[d];
    const float *g, *b;
    CU_TRY_STATUS(row_param(c, 1, n, &g, "Scale"));
    CU_TRY_STATUS(row_param(c, 2, n, &b, "B"));
    if (!g) return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "Scale is missing");
    CU_TRY_STATUS(cu_out(c, 0, ONYX_FLOAT, x.rank, x.dims, &y));
    if (!x.numel) return NULL;
    k_layernorm<<<(unsigned)(x.numel / n), ROW_THREADS, 0, c->s>>>((const float *)x.data, NULL, 1, NULL, g, b,
                                                                   (float *)y.data, NULL, n, s->eps);
    CU_LAUNCHED();
    return NULL;
}

static int claim_skip_layernorm(const onyx_ep_node *n) {
    return cu_all_float(n) && !cu_has_output(n, 1) && !cu_has_output(n, 2) && cu_has_input(n, 2);
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
    CU_TRY_STATUS(cu_need(c, 0, ONYX_FLOAT, &x));
    CU_TRY_STATUS(cu_need(c, 1, ONYX_FLOAT, &k));
    if (x.rank < 1) return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "input needs rank >= 1");
    int64_t n = x.dims[x.rank - 1];
    /* skip is the input's shape, or a suffix of it that repeats ((1, S, H) or (S, H)) */
    bool suffix = k.rank <= x.rank && k.numel > 0 && n > 0 && x.numel % k.numel == 0;
    for (int d = 1; suffix && d <= k.rank; d++)
        suffix = k.dims[k.rank - d] == x.dims[x.rank - d] || (d == k.rank && k.dims[0] == 1);
    if (!suffix)
        return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "skip must have the input's shape or a trailing part of it");
    const float *g, *b, *bias;
    CU_TRY_STATUS(row_param(c, 2, n, &g, "gamma"));
    CU_TRY_STATUS(row_param(c, 3, n, &b, "beta"));
    CU_TRY_STATUS(row_param(c, 4, n, &bias, "bias"));
    CU_TRY_STATUS(cu_out(c, 0, ONYX_FLOAT, x.rank, x.dims, &y));
    float *psum = NULL;
    if (cu_host->ctx_output_used(c->ctx, 3)) {
        CU_TRY_STATUS(cu_out(c, 3, ONYX_FLOAT, x.rank, x.dims, &sum));
        psum = (float *)sum.data;
    }
    if (!x.numel) return NULL;
    k_layernorm<<<(unsigned)(x.numel / n), ROW_THREADS, 0, c->s>>>((const float *)x.data, (const float *)k.data,
                                                                   k.numel / n, bias, g, b, (float *)y.data, psum, n,
                                                                   s->eps);
    CU_LAUNCHED();
    return NULL;
}

/* ---------------------------------------------------------------- BatchNormalization */

__global__ void k_batchnorm(const float *x, float *y, int64_t total, int64_t C, int64_t inner, const float *scale,
                            const float *bias, const float *mean, const float *var, float eps) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
        int64_t c = (i / inner) % C;
        y[i] = (x[i] - mean[c]) * rsqrtf(var[c] + eps) * scale[c] + bias[c];
    }
}

static int claim_batchnorm(const onyx_ep_node *n) {
    return cu_all_float(n) && !cu_attr_int(n, "training_mode", 0) && !cu_has_output(n, 1) && !cu_has_output(n, 2) &&
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
    CU_TRY_STATUS(cu_need(c, 0, ONYX_FLOAT, &x));
    if (x.rank < 2) return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "X needs rank >= 2 (N, C, ...)");
    int64_t C = x.dims[1], inner = 1;
    for (int d = 2; d < x.rank; d++) inner *= x.dims[d];
    for (int k = 0; k < 4; k++) {
        CU_TRY_STATUS(cu_need(c, (size_t)k + 1, ONYX_FLOAT, &p[k]));
        if (p[k].numel != C)
            return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "input %d must hold C = %lld values, got %lld", k + 1,
                                  (long long)C, (long long)p[k].numel);
    }
    CU_TRY_STATUS(cu_out(c, 0, ONYX_FLOAT, x.rank, x.dims, &y));
    if (!x.numel) return NULL;
    int64_t blocks = (x.numel + 255) / 256;
    k_batchnorm<<<(unsigned)(blocks > 65535 * 8 ? 65535 * 8 : blocks), 256, 0, c->s>>>(
        (const float *)x.data, (float *)y.data, x.numel, C, inner, (const float *)p[0].data, (const float *)p[1].data,
        (const float *)p[2].data, (const float *)p[3].data, *(const float *)st);
    CU_LAUNCHED();
    return NULL;
}

/* ---------------------------------------------------------------- reductions */

__global__ void k_reduce_rows(const float *x, float *y, int64_t n, float scale) {
    const float *xr = x + blockIdx.x * n;
    float s = 0.f;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) s += xr[i];
    s = block_sum(s);
    if (threadIdx.x == 0) y[blockIdx.x] = s * scale;
}

static int claim_gap(const onyx_ep_node *n) { return cu_all_float(n) && cu_in_rank(n, 0) >= 3; }

static onyx_status *gap_compute(cu_call *c, void *st) {
    onyx_ep_tensor x, y;
    CU_TRY_STATUS(cu_need(c, 0, ONYX_FLOAT, &x));
    if (x.rank < 3) return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "X needs rank >= 3");
    int64_t dims[CU_MAX_RANK], inner = 1;
    for (int d = 0; d < x.rank; d++) {
        dims[d] = d < 2 ? x.dims[d] : 1;
        if (d >= 2) inner *= x.dims[d];
    }
    CU_TRY_STATUS(cu_out(c, 0, ONYX_FLOAT, x.rank, dims, &y));
    int64_t rows = x.dims[0] * x.dims[1];
    if (!rows) return NULL;
    if (!inner) return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "empty spatial dimensions");
    k_reduce_rows<<<(unsigned)rows, ROW_THREADS, 0, c->s>>>((const float *)x.data, (float *)y.data, inner,
                                                           1.f / (float)inner);
    CU_LAUNCHED();
    return NULL;
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
    if (!cu_all_float(n) || r < 1 || !reduce_axes(n, axes, &na) || !na) return 0;
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
    CU_TRY_STATUS(cu_need(c, 0, ONYX_FLOAT, &x));
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
    CU_TRY_STATUS(cu_out(c, 0, ONYX_FLOAT, rank, dims, &y));
    if (!rows) return NULL;
    if (!n) return cu_host->error(ONYX_ERR_NOT_IMPLEMENTED, "reduction over an empty axis");
    k_reduce_rows<<<(unsigned)rows, ROW_THREADS, 0, c->s>>>((const float *)x.data, (float *)y.data, n,
                                                           s->mean ? 1.f / (float)n : 1.f);
    CU_LAUNCHED();
    return NULL;
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
    /* no past state, present output, attention bias or rotary embedding */
    if (!cu_in_type(n, 0, ONYX_FLOAT) || !cu_in_type(n, 1, ONYX_FLOAT) || cu_in_rank(n, 0) != 3) return 0;
    if (cu_has_input(n, 2) && !cu_in_type(n, 2, ONYX_FLOAT)) return 0;
    if (cu_has_input(n, 3) && !cu_in_type(n, 3, ONYX_INT32)) return 0;
    /* no past state (4, 6); an attention bias (5) must be 4-D float */
    for (size_t k = 4; k < cu_host->node_input_count(n); k++)
        if (cu_has_input(n, k) && (k != 5 || !cu_in_type(n, 5, ONYX_FLOAT) || cu_in_rank(n, 5) != 4)) return 0;
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

static onyx_status *attention_compute(cu_call *c, void *sv) {
    const attn_state *s = (const attn_state *)sv;
    onyx_ep_tensor x, w, bias, mask, y;
    CU_TRY_STATUS(cu_need(c, 0, ONYX_FLOAT, &x));
    CU_TRY_STATUS(cu_need(c, 1, ONYX_FLOAT, &w));
    if (x.rank != 3 || w.rank != 2 || w.dims[0] != x.dims[2])
        return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "input must be (B, S, hidden) and weights (hidden, 3 x hidden)");
    int64_t B = x.dims[0], S = x.dims[1], T = S, din = x.dims[2], total = w.dims[1], N = s->heads;
    int64_t dq = s->qkv[0] ? s->qkv[0] : total / 3, dk = s->qkv[1] ? s->qkv[1] : total / 3,
            dv = s->qkv[2] ? s->qkv[2] : total / 3;
    if (dq <= 0 || dk != dq || dv <= 0 || dq + dk + dv != total || dq % N || dv % N)
        return cu_host->error(ONYX_ERR_INVALID_ARGUMENT,
                              "hidden sizes (%lld, %lld, %lld) must be positive, Q and K equal, sum to %lld and divide "
                              "by num_heads %lld",
                              (long long)dq, (long long)dk, (long long)dv, (long long)total, (long long)N);
    int64_t hq = dq / N, hv = dv / N;
    const float *pb = NULL;
    if (cu_in(c, 2, &bias)) {
        if (bias.dtype != ONYX_FLOAT || bias.numel != total)
            return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "bias must hold %lld floats", (long long)total);
        pb = (const float *)bias.data;
    }
    int kind;
    bool has_mask = cu_in(c, 3, &mask);
    if (has_mask && mask.dtype != ONYX_INT32) return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "mask_index must be int32");
    CU_TRY_STATUS(attention_mask(has_mask ? &mask : NULL, B, S, T, &kind));
    attn_bias ab = {NULL, {0, 0, 0, 0}};
    onyx_ep_tensor abt;
    if (cu_in(c, 5, &abt)) {
        int64_t full[4] = {B, N, S, T}, run = 1;
        if (abt.dtype != ONYX_FLOAT || abt.rank != 4)
            return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "attention_bias must be a 4-D float tensor");
        for (int d = 3; d >= 0; d--) {
            if (abt.dims[d] != 1 && abt.dims[d] != full[d])
                return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "attention_bias does not broadcast to (B, N, S, T)");
            ab.str[d] = abt.dims[d] == 1 ? 0 : run;
            run *= abt.dims[d];
        }
        ab.p = (const float *)abt.data;
    }
    int64_t ydims[3] = {B, S, dv};
    CU_TRY_STATUS(cu_out(c, 0, ONYX_FLOAT, 3, ydims, &y));
    if (!B || !S) return NULL;
    size_t qkv_bytes = (size_t)(B * S * total) * sizeof(float), sc_bytes = (size_t)(B * N * S * T) * sizeof(float);
    float *qkv = (float *)cu_scratch(qkv_bytes + sc_bytes);
    if (!qkv) return cu_host->error(ONYX_ERR_OUT_OF_MEMORY, "cuda: out of device memory for attention scratch");
    float *scores = qkv + B * S * total;
    onyx_status *st = cu_gemm(false, false, B * S, total, din, 1.f, (const float *)x.data, din, 0,
                              (const float *)w.data, total, 0, 0.f, qkv, total, 0, 1);
    cu_activation none = {CU_ACT_NONE, 0, 0};
    if (!st && pb) st = cu_bias_act(c->s, qkv, B * S * total, pb, total, 1, NULL, none);
    float scale = s->scale != 0.f ? s->scale : 1.f / sqrtf((float)hq);
    /* per batch: heads are a strided batch (stride hq within a row of qkv) */
    for (int64_t b = 0; !st && b < B; b++) {
        const float *q = qkv + b * S * total, *k = q + dq;
        st = cu_gemm(false, true, S, T, hq, scale, q, total, hq, k, total, hq, 0.f, scores + b * N * S * T, T, S * T, N);
    }
    if (!st) {
        k_attn_softmax<<<(unsigned)(B * N * S), 256, 0, c->s>>>(scores, N, S, T, kind,
                                                                has_mask ? (const int *)mask.data : NULL,
                                                                has_mask ? mask.dims[0] : 1, B, s->filter, s->causal, ab);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) st = cu_host->error(ONYX_ERR_RUNTIME, "cuda: attention softmax: %s", cudaGetErrorString(e));
    }
    for (int64_t b = 0; !st && b < B; b++) {
        const float *v = qkv + b * S * total + dq + dk;
        st = cu_gemm(false, false, S, hv, T, 1.f, scores + b * N * S * T, T, S * T, v, total, hv, 0.f,
                     (float *)y.data + b * S * dv, dv, hv, N);
    }
    cu_scratch_free(qkv);
    return st;
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
