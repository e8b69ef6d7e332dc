/* Convolution and pooling on the GPU through cuDNN: Conv and
 * com.microsoft FusedConv (bias, sum input Z and activation applied after
 * cuDNN's convolution, in one pass), ConvTranspose, MaxPool and
 * AveragePool. 2-D (NCHW), symmetric explicit padding; float32 and float16
 * tensors (float16 accumulates in float32: cuDNN's pseudo-half
 * configuration, tensor-core math allowed). The convolution algorithm is
 * chosen once per input shape (cuDNN's heuristics) and cached in the
 * kernel. */
#include "cuda_common.h"

typedef struct conv_state {
    int64_t pads[4], strides[2], dil[2], group;
    cu_activation act;
    /* algorithm cache: the shapes it was chosen for */
    int64_t xdims[4], wdims[4];
    cudnnConvolutionFwdAlgo_t algo;
    cudnnMathType_t math;
    size_t ws_bytes;
    int have_algo;
} conv_state;

/* a 2-D window op's attributes: kernel from the weights or kernel_shape */
static int window_attrs_ok(const onyx_ep_node *n, int64_t *pads, int64_t *strides, int64_t *dil) {
    const char *ap = cu_attr_string(n, "auto_pad", "NOTSET");
    if (strcmp(ap, "NOTSET") && strcmp(ap, "VALID")) return 0;
    const int64_t *v;
    size_t nv;
    pads[0] = pads[1] = pads[2] = pads[3] = 0;
    strides[0] = strides[1] = dil[0] = dil[1] = 1;
    if (!strcmp(ap, "NOTSET") && cu_host->attr_ints(n, "pads", &v, &nv)) {
        if (nv != 4 || v[0] != v[2] || v[1] != v[3]) return 0; /* cuDNN pads symmetrically */
        memcpy(pads, v, 4 * sizeof *v);
    }
    if (cu_host->attr_ints(n, "strides", &v, &nv)) {
        if (nv != 2) return 0;
        strides[0] = v[0], strides[1] = v[1];
    }
    if (cu_host->attr_ints(n, "dilations", &v, &nv)) {
        if (nv != 2) return 0;
        dil[0] = v[0], dil[1] = v[1];
    }
    return strides[0] > 0 && strides[1] > 0 && dil[0] > 0 && dil[1] > 0 && pads[0] >= 0 && pads[1] >= 0;
}

/* cuDNN's element type for ours (float or float16) */
static cudnnDataType_t dnn_type(int32_t dt) { return dt == ONYX_FLOAT16 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT; }

/* the math a convolution may use: strict float32 (FMA) for float32 unless
 * TF32 was asked for; tensor cores for float16 */
static cudnnMathType_t dnn_math(int32_t dt) {
    return dt == ONYX_FLOAT16 || cu_dev.math != CUBLAS_DEFAULT_MATH ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH;
}

static int claim_conv(const onyx_ep_node *n) {
    int64_t p[4], s[2], d[2];
    cu_activation act;
    return cu_dev.dnn && cu_all_float_or_half(n) && cu_in_rank(n, 0) == 4 && cu_in_rank(n, 1) == 4 && window_attrs_ok(n, p, s, d) &&
           cu_parse_activation(n, &act);
}

static onyx_status *conv_create(const onyx_ep_node *n, void **out) {
    conv_state *s = (conv_state *)calloc(1, sizeof *s);
    if (!s) return cu_host->error(ONYX_ERR_OUT_OF_MEMORY, "out of memory");
    window_attrs_ok(n, s->pads, s->strides, s->dil);
    s->group = cu_attr_int(n, "group", 1);
    cu_parse_activation(n, &s->act);
    *out = s;
    return NULL;
}

static int64_t out_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil) {
    int64_t span = (k - 1) * dil + 1;
    return in + 2 * pad < span ? -1 : (in + 2 * pad - span) / stride + 1;
}

/* descriptors of one call, destroyed together */
struct dnn_descs {
    cudnnTensorDescriptor_t x = NULL, y = NULL;
    cudnnFilterDescriptor_t w = NULL;
    cudnnConvolutionDescriptor_t conv = NULL;
    cudnnPoolingDescriptor_t pool = NULL;
    ~dnn_descs() {
        if (x) cudnnDestroyTensorDescriptor(x);
        if (y) cudnnDestroyTensorDescriptor(y);
        if (w) cudnnDestroyFilterDescriptor(w);
        if (conv) cudnnDestroyConvolutionDescriptor(conv);
        if (pool) cudnnDestroyPoolingDescriptor(pool);
    }
};

/* The first of cuDNN's ranked algorithms that succeeded, needs at most
 * 1 GiB of workspace and uses the wanted math; failing that, the first
 * that succeeded and fits; -1 if none. */
template <typename Perf>
static int first_usable(const Perf *perf, int found, cudnnMathType_t want) {
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < found; i++)
            if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= ((size_t)1 << 30) &&
                (pass || perf[i].mathType == want))
                return i;
    return -1;
}

/* Was the cached algorithm chosen for these shapes? Else remember them. */
static bool cached_for(int64_t *xdims, int64_t *wdims, int *have, const onyx_ep_tensor &x, const onyx_ep_tensor &w) {
    if (*have && !memcmp(xdims, x.dims, 4 * sizeof *xdims) && !memcmp(wdims, w.dims, 4 * sizeof *wdims)) return true;
    memcpy(xdims, x.dims, 4 * sizeof *xdims);
    memcpy(wdims, w.dims, 4 * sizeof *wdims);
    *have = 0;
    return false;
}

static onyx_status *pick_algo(conv_state *s, dnn_descs &d, const onyx_ep_tensor &x, const onyx_ep_tensor &w) {
    if (cached_for(s->xdims, s->wdims, &s->have_algo, x, w)) return NULL;
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int found = 0;
    CUDNN_TRY(cudnnGetConvolutionForwardAlgorithm_v7(cu_dev.dnn, d.x, d.w, d.conv, d.y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                                                     &found, perf));
    int pick = first_usable(perf, found, dnn_math(x.dtype));
    if (pick < 0) return cu_host->error(ONYX_ERR_NOT_IMPLEMENTED, "cudnn: no convolution algorithm for this shape");
    s->algo = perf[pick].algo;
    s->math = perf[pick].mathType;
    CUDNN_TRY(cudnnGetConvolutionForwardWorkspaceSize(cu_dev.dnn, d.x, d.w, d.conv, d.y, s->algo, &s->ws_bytes));
    s->have_algo = 1;
    return NULL;
}

static onyx_status *conv_compute(cu_call *c, void *sv) {
    conv_state *s = (conv_state *)sv;
    onyx_ep_tensor x, w, b, z, y;
    CU_TRY_STATUS(cu_need_float_or_half(c, 0, 0, &x));
    CU_TRY_STATUS(cu_need(c, 1, x.dtype, &w));
    if (x.rank != 4 || w.rank != 4) return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "Conv: X and W must be 4-D");
    int64_t N = x.dims[0], C = x.dims[1], M = w.dims[0];
    if (s->group < 1 || C % s->group || M % s->group || w.dims[1] * s->group != C)
        return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "Conv: W (%lld, %lld, ...) does not fit %lld channels in %lld groups",
                              (long long)M, (long long)w.dims[1], (long long)C, (long long)s->group);
    int64_t oh = out_size(x.dims[2], w.dims[2], s->pads[0], s->strides[0], s->dil[0]);
    int64_t ow = out_size(x.dims[3], w.dims[3], s->pads[1], s->strides[1], s->dil[1]);
    if (oh < 1 || ow < 1) return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "Conv: the kernel is larger than the padded input");
    const void *pb = NULL, *pz = NULL;
    if (cu_in(c, 2, &b)) {
        if (b.dtype != x.dtype || b.numel != M)
            return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "Conv: B must hold %lld values of X's type", (long long)M);
        pb = b.data;
    }
    int64_t ydims[4] = {N, M, oh, ow};
    if (cu_in(c, 3, &z)) {
        if (z.dtype != x.dtype || z.rank != 4 || memcmp(z.dims, ydims, sizeof ydims))
            return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "FusedConv: Z must have the output's shape and type");
        pz = z.data;
    }
    CU_TRY_STATUS(cu_out(c, 0, x.dtype, 4, ydims, &y));
    if (!y.numel) return NULL;
    for (int i = 0; i < 4; i++)
        if (x.dims[i] > INT32_MAX || w.dims[i] > INT32_MAX)
            return cu_host->error(ONYX_ERR_NOT_IMPLEMENTED, "Conv: dimensions beyond 32 bits");
    dnn_descs d;
    CUDNN_TRY(cudnnCreateTensorDescriptor(&d.x));
    CUDNN_TRY(cudnnCreateTensorDescriptor(&d.y));
    CUDNN_TRY(cudnnCreateFilterDescriptor(&d.w));
    CUDNN_TRY(cudnnCreateConvolutionDescriptor(&d.conv));
    cudnnDataType_t dt = dnn_type(x.dtype);
    CUDNN_TRY(cudnnSetTensor4dDescriptor(d.x, CUDNN_TENSOR_NCHW, dt, (int)N, (int)C, (int)x.dims[2], (int)x.dims[3]));
    CUDNN_TRY(cudnnSetFilter4dDescriptor(d.w, dt, CUDNN_TENSOR_NCHW, (int)M, (int)w.dims[1], (int)w.dims[2],
                                         (int)w.dims[3]));
    /* float16 tensors accumulate in float32 (pseudo-half) */
    CUDNN_TRY(cudnnSetConvolution2dDescriptor(d.conv, (int)s->pads[0], (int)s->pads[1], (int)s->strides[0],
                                              (int)s->strides[1], (int)s->dil[0], (int)s->dil[1],
                                              CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    CUDNN_TRY(cudnnSetConvolutionGroupCount(d.conv, (int)s->group));
    CUDNN_TRY(cudnnSetConvolutionMathType(d.conv, dnn_math(x.dtype)));
    CUDNN_TRY(cudnnSetTensor4dDescriptor(d.y, CUDNN_TENSOR_NCHW, dt, (int)N, (int)M, (int)oh, (int)ow));
    CU_TRY_STATUS(pick_algo(s, d, x, w));
    CUDNN_TRY(cudnnSetConvolutionMathType(d.conv, s->math));
    void *ws = s->ws_bytes ? cu_scratch(s->ws_bytes) : NULL;
    if (s->ws_bytes && !ws) return cu_host->error(ONYX_ERR_OUT_OF_MEMORY, "cuda: out of device memory for a Conv workspace");
    const float one = 1.f, zero = 0.f;
    cudnnStatus_t e = cudnnConvolutionForward(cu_dev.dnn, &one, d.x, x.data, d.w, w.data, d.conv, s->algo, ws,
                                              s->ws_bytes, &zero, d.y, y.data);
    cu_scratch_free(ws);
    if (e != CUDNN_STATUS_SUCCESS)
        return cu_host->error(ONYX_ERR_RUNTIME, "cudnn: cudnnConvolutionForward failed: %s", cudnnGetErrorString(e));
    if (x.dtype == ONYX_FLOAT16)
        return cu_bias_act(c->s, (__half *)y.data, y.numel, (const __half *)pb, M, oh * ow, (const __half *)pz, s->act);
    return cu_bias_act(c->s, (float *)y.data, y.numel, (const float *)pb, M, oh * ow, (const float *)pz, s->act);
}

/* ---------------------------------------------------------------- ConvTranspose */

/* ConvTranspose is the gradient of a convolution with respect to its input:
 * cuDNN's backward-data pass with X as the forward output and W (C, M/group,
 * kH, kW) as the forward filter. Output size per axis: stride (in - 1) +
 * output_padding + (k - 1) dilation + 1 - 2 pad. */
typedef struct convt_state {
    int64_t pads[4], strides[2], dil[2], out_pad[2], group;
    int64_t xdims[4], wdims[4];  /* the shapes the algorithm was chosen for */
    cudnnConvolutionBwdDataAlgo_t algo;
    cudnnMathType_t math;
    size_t ws_bytes;
    int have_algo;
} convt_state;

static int convt_out_pad(const onyx_ep_node *n, const int64_t *strides, int64_t *op) {
    const int64_t *v;
    size_t nv;
    op[0] = op[1] = 0;
    if (cu_host->attr_ints(n, "output_padding", &v, &nv)) {
        if (nv != 2) return 0;
        op[0] = v[0], op[1] = v[1];
    }
    /* cuDNN derives the input size back from the output: only paddings
     * below the stride are unambiguous */
    return op[0] >= 0 && op[1] >= 0 && op[0] < strides[0] && op[1] < strides[1];
}

static int claim_convt(const onyx_ep_node *n) {
    int64_t p[4], s[2], d[2], op[2];
    const int64_t *v;
    size_t nv;
    /* output_shape asks for pads computed per run: left to the CPU */
    return cu_dev.dnn && cu_all_float_or_half(n) && cu_in_rank(n, 0) == 4 && cu_in_rank(n, 1) == 4 &&
           window_attrs_ok(n, p, s, d) && convt_out_pad(n, s, op) && !cu_host->attr_ints(n, "output_shape", &v, &nv);
}

static onyx_status *convt_create(const onyx_ep_node *n, void **out) {
    convt_state *s = (convt_state *)calloc(1, sizeof *s);
    if (!s) return cu_host->error(ONYX_ERR_OUT_OF_MEMORY, "out of memory");
    window_attrs_ok(n, s->pads, s->strides, s->dil);
    convt_out_pad(n, s->strides, s->out_pad);
    s->group = cu_attr_int(n, "group", 1);
    *out = s;
    return NULL;
}

static onyx_status *pick_bwd_algo(convt_state *s, dnn_descs &d, const onyx_ep_tensor &x, const onyx_ep_tensor &w) {
    if (cached_for(s->xdims, s->wdims, &s->have_algo, x, w)) return NULL;
    cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    int found = 0;
    /* backward data: filter, dy (our X), conv, dx (our Y) */
    CUDNN_TRY(cudnnGetConvolutionBackwardDataAlgorithm_v7(cu_dev.dnn, d.w, d.x, d.conv, d.y,
                                                          CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &found, perf));
    int pick = first_usable(perf, found, dnn_math(x.dtype));
    if (pick < 0) return cu_host->error(ONYX_ERR_NOT_IMPLEMENTED, "cudnn: no ConvTranspose algorithm for this shape");
    s->algo = perf[pick].algo;
    s->math = perf[pick].mathType;
    CUDNN_TRY(cudnnGetConvolutionBackwardDataWorkspaceSize(cu_dev.dnn, d.w, d.x, d.conv, d.y, s->algo, &s->ws_bytes));
    s->have_algo = 1;
    return NULL;
}

static onyx_status *convt_compute(cu_call *c, void *sv) {
    convt_state *s = (convt_state *)sv;
    onyx_ep_tensor x, w, b, y;
    CU_TRY_STATUS(cu_need_float_or_half(c, 0, 0, &x));
    CU_TRY_STATUS(cu_need(c, 1, x.dtype, &w));
    if (x.rank != 4 || w.rank != 4) return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "ConvTranspose: X and W must be 4-D");
    int64_t N = x.dims[0], C = x.dims[1], G = s->group;
    if (G < 1 || C % G || w.dims[0] != C)
        return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "ConvTranspose: W (%lld, ...) does not fit %lld channels in %lld groups",
                              (long long)w.dims[0], (long long)C, (long long)G);
    int64_t M = w.dims[1] * G, o[2];
    for (int a = 0; a < 2; a++)
        o[a] = s->strides[a] * (x.dims[2 + a] - 1) + s->out_pad[a] + (w.dims[2 + a] - 1) * s->dil[a] + 1 - 2 * s->pads[a];
    if (o[0] < 1 || o[1] < 1)
        return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "ConvTranspose: the padding is larger than the output");
    const void *pb = NULL;
    if (cu_in(c, 2, &b)) {
        if (b.dtype != x.dtype || b.numel != M)
            return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "ConvTranspose: B must hold %lld values of X's type",
                                  (long long)M);
        pb = b.data;
    }
    int64_t ydims[4] = {N, M, o[0], o[1]};
    CU_TRY_STATUS(cu_out(c, 0, x.dtype, 4, ydims, &y));
    if (!y.numel) return NULL;
    for (int i = 0; i < 4; i++)
        if (x.dims[i] > INT32_MAX || w.dims[i] > INT32_MAX || ydims[i] > INT32_MAX)
            return cu_host->error(ONYX_ERR_NOT_IMPLEMENTED, "ConvTranspose: dimensions beyond 32 bits");
    if (!x.numel) { /* an empty input spreads nothing: the output is its bias */
        CU_TRY(cudaMemsetAsync(y.data, 0, y.nbytes, c->s));
    } else {
        dnn_descs d;
        cudnnDataType_t dt = dnn_type(x.dtype);
        CUDNN_TRY(cudnnCreateTensorDescriptor(&d.x));
        CUDNN_TRY(cudnnCreateTensorDescriptor(&d.y));
        CUDNN_TRY(cudnnCreateFilterDescriptor(&d.w));
        CUDNN_TRY(cudnnCreateConvolutionDescriptor(&d.conv));
        CUDNN_TRY(cudnnSetTensor4dDescriptor(d.x, CUDNN_TENSOR_NCHW, dt, (int)N, (int)C, (int)x.dims[2], (int)x.dims[3]));
        CUDNN_TRY(cudnnSetFilter4dDescriptor(d.w, dt, CUDNN_TENSOR_NCHW, (int)C, (int)w.dims[1], (int)w.dims[2],
                                             (int)w.dims[3]));
        CUDNN_TRY(cudnnSetConvolution2dDescriptor(d.conv, (int)s->pads[0], (int)s->pads[1], (int)s->strides[0],
                                                  (int)s->strides[1], (int)s->dil[0], (int)s->dil[1],
                                                  CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
        CUDNN_TRY(cudnnSetConvolutionGroupCount(d.conv, (int)G));
        CUDNN_TRY(cudnnSetConvolutionMathType(d.conv, dnn_math(x.dtype)));
        CUDNN_TRY(cudnnSetTensor4dDescriptor(d.y, CUDNN_TENSOR_NCHW, dt, (int)N, (int)M, (int)o[0], (int)o[1]));
        CU_TRY_STATUS(pick_bwd_algo(s, d, x, w));
        CUDNN_TRY(cudnnSetConvolutionMathType(d.conv, s->math));
        void *ws = s->ws_bytes ? cu_scratch(s->ws_bytes) : NULL;
        if (s->ws_bytes && !ws)
            return cu_host->error(ONYX_ERR_OUT_OF_MEMORY, "cuda: out of device memory for a ConvTranspose workspace");
        const float one = 1.f, zero = 0.f;
        cudnnStatus_t e = cudnnConvolutionBackwardData(cu_dev.dnn, &one, d.w, w.data, d.x, x.data, d.conv, s->algo, ws,
                                                       s->ws_bytes, &zero, d.y, y.data);
        cu_scratch_free(ws);
        if (e != CUDNN_STATUS_SUCCESS)
            return cu_host->error(ONYX_ERR_RUNTIME, "cudnn: cudnnConvolutionBackwardData failed: %s", cudnnGetErrorString(e));
    }
    cu_activation none = {CU_ACT_NONE, 0, 0};
    if (x.dtype == ONYX_FLOAT16)
        return cu_bias_act(c->s, (__half *)y.data, y.numel, (const __half *)pb, M, o[0] * o[1], NULL, none);
    return cu_bias_act(c->s, (float *)y.data, y.numel, (const float *)pb, M, o[0] * o[1], NULL, none);
}

/* ---------------------------------------------------------------- pooling */

typedef struct pool_state {
    int64_t k[2], pads[4], strides[2], dil[2];
    int max, count_pad;
} pool_state;

static int claim_pool(const onyx_ep_node *n) {
    int64_t p[4], s[2], d[2];
    const int64_t *k;
    size_t nk;
    return cu_dev.dnn && cu_all_float_or_half(n) && cu_in_rank(n, 0) == 4 && !cu_has_output(n, 1) &&
           !cu_attr_int(n, "ceil_mode", 0) && !cu_attr_int(n, "storage_order", 0) && window_attrs_ok(n, p, s, d) &&
           d[0] == 1 && d[1] == 1 && cu_host->attr_ints(n, "kernel_shape", &k, &nk) && nk == 2;
}

static onyx_status *pool_create(const onyx_ep_node *n, void **out) {
    pool_state *s = (pool_state *)calloc(1, sizeof *s);
    if (!s) return cu_host->error(ONYX_ERR_OUT_OF_MEMORY, "out of memory");
    window_attrs_ok(n, s->pads, s->strides, s->dil);
    const int64_t *k;
    size_t nk;
    cu_host->attr_ints(n, "kernel_shape", &k, &nk);
    s->k[0] = k[0], s->k[1] = k[1];
    s->max = !strcmp(cu_host->node_op_type(n), "MaxPool");
    s->count_pad = (int)cu_attr_int(n, "count_include_pad", 0);
    *out = s;
    return NULL;
}

static onyx_status *pool_compute(cu_call *c, void *sv) {
    const pool_state *s = (const pool_state *)sv;
    onyx_ep_tensor x, y;
    CU_TRY_STATUS(cu_need_float_or_half(c, 0, 0, &x));
    if (x.rank != 4) return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "pooling: X must be 4-D");
    int64_t oh = out_size(x.dims[2], s->k[0], s->pads[0], s->strides[0], 1);
    int64_t ow = out_size(x.dims[3], s->k[1], s->pads[1], s->strides[1], 1);
    if (oh < 1 || ow < 1) return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "pooling: the window is larger than the padded input");
    int64_t ydims[4] = {x.dims[0], x.dims[1], oh, ow};
    CU_TRY_STATUS(cu_out(c, 0, x.dtype, 4, ydims, &y));
    if (!y.numel) return NULL;
    dnn_descs d;
    CUDNN_TRY(cudnnCreateTensorDescriptor(&d.x));
    CUDNN_TRY(cudnnCreateTensorDescriptor(&d.y));
    CUDNN_TRY(cudnnCreatePoolingDescriptor(&d.pool));
    cudnnDataType_t dt = dnn_type(x.dtype);
    CUDNN_TRY(cudnnSetTensor4dDescriptor(d.x, CUDNN_TENSOR_NCHW, dt, (int)x.dims[0], (int)x.dims[1], (int)x.dims[2],
                                         (int)x.dims[3]));
    CUDNN_TRY(cudnnSetTensor4dDescriptor(d.y, CUDNN_TENSOR_NCHW, dt, (int)x.dims[0], (int)x.dims[1], (int)oh, (int)ow));
    cudnnPoolingMode_t mode = s->max ? CUDNN_POOLING_MAX_DETERMINISTIC
                                     : s->count_pad ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
                                                    : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
    CUDNN_TRY(cudnnSetPooling2dDescriptor(d.pool, mode, CUDNN_PROPAGATE_NAN, (int)s->k[0], (int)s->k[1], (int)s->pads[0],
                                          (int)s->pads[1], (int)s->strides[0], (int)s->strides[1]));
    const float one = 1.f, zero = 0.f;
    CUDNN_TRY(cudnnPoolingForward(cu_dev.dnn, d.pool, &one, d.x, x.data, &zero, d.y, y.data));
    return NULL;
}

const cu_op cu_ops_dnn[] = {
    {"", "Conv", claim_conv, conv_create, conv_compute, 0},
    {"com.microsoft", "FusedConv", claim_conv, conv_create, conv_compute, 0},
    {"", "ConvTranspose", claim_convt, convt_create, convt_compute, 0},
    {"", "MaxPool", claim_pool, pool_create, pool_compute, 0},
    {"", "AveragePool", claim_pool, pool_create, pool_compute, 0},
    {NULL, NULL, NULL, NULL, NULL, 0},
};
