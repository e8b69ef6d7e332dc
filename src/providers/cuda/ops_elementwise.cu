/* Elementwise operators on the GPU: binary arithmetic with numpy
 * broadcasting, activations (shared with the fused Conv/Gemm epilogues),
 * the Gelu family, Clip, Where, Not and Cast. float32 and float16 data
 * (float16 is computed in float: cu_ld/cu_st). */
#include <math.h>
#include "cuda_common.h"

#define THREADS 256

static unsigned blocks_for(int64_t n) {
    int64_t b = (n + THREADS - 1) / THREADS;
    return (unsigned)(b < 1 ? 1 : b > 65535 * 8 ? 65535 * 8 : b);
}

#define GRID_LOOP(i, n) for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < (n); i += (int64_t)gridDim.x * blockDim.x)

/* offset of output element i in input k under broadcasting */
__device__ __forceinline__ int64_t bc_offset(const cu_strides &s, int k, int64_t i) {
    int64_t off = 0;
    for (int d = s.rank - 1; d >= 0; d--) {
        int64_t c = i % s.dims[d];
        i /= s.dims[d];
        off += c * s.str[k][d];
    }
    return off;
}

/* ---------------------------------------------------------------- activations */

__device__ __forceinline__ float act_apply(float x, cu_act kind, float a, float b) {
    switch (kind) {
    case CU_ACT_RELU: return x > 0.f ? x : 0.f;
    case CU_ACT_SIGMOID: return 1.f / (1.f + expf(-x));
    case CU_ACT_TANH: return tanhf(x);
    case CU_ACT_LEAKY: return x >= 0.f ? x : a * x;
    case CU_ACT_CLIP: return fminf(fmaxf(x, a), b);
    case CU_ACT_HARDSIGMOID: return fmaxf(0.f, fminf(1.f, a * x + b));
    case CU_ACT_GELU: return 0.5f * x * (1.f + erff(x * 0.70710678118654752f));
    case CU_ACT_GELU_TANH: return 0.5f * x * (1.f + tanhf(0.7978845608028654f * (x + 0.044715f * x * x * x)));
    default: return x;
    }
}

template <typename T>
__global__ void k_bias_act(T *y, int64_t n, const T *bias, int64_t channels, int64_t inner, const T *z, cu_act kind,
                           float a, float b) {
    GRID_LOOP(i, n) {
        float v = cu_ld(&y[i]);
        if (bias) v += cu_ld(&bias[(i / inner) % channels]);
        if (z) v += cu_ld(&z[i]);
        cu_st(&y[i], act_apply(v, kind, a, b));
    }
}

template <typename T>
static onyx_status *bias_act(cudaStream_t s, T *y, int64_t n, const T *bias, int64_t channels, int64_t inner, const T *z,
                             cu_activation act) {
    if (n <= 0 || (!bias && !z && act.kind == CU_ACT_NONE)) return NULL;
    k_bias_act<T><<<blocks_for(n), THREADS, 0, s>>>(y, n, bias, channels > 0 ? channels : 1, inner > 0 ? inner : 1, z,
                                                     act.kind, act.a, act.b);
    CU_LAUNCHED();
    return NULL;
}

onyx_status *cu_bias_act(cudaStream_t s, float *y, int64_t n, const float *bias, int64_t channels, int64_t inner,
                         const float *z, cu_activation act) {
    return bias_act<float>(s, y, n, bias, channels, inner, z, act);
}

onyx_status *cu_bias_act(cudaStream_t s, __half *y, int64_t n, const __half *bias, int64_t channels, int64_t inner,
                         const __half *z, cu_activation act) {
    return bias_act<__half>(s, y, n, bias, channels, inner, z, act);
}

int cu_parse_activation(const onyx_ep_node *n, cu_activation *act) {
    const char *a = cu_attr_string(n, "activation", "");
    const float *p = NULL;
    size_t np = 0;
    cu_host->attr_floats(n, "activation_params", &p, &np);
    act->a = act->b = 0;
    if (!a[0]) act->kind = CU_ACT_NONE;
    else if (!strcmp(a, "Relu")) act->kind = CU_ACT_RELU;
    else if (!strcmp(a, "Sigmoid")) act->kind = CU_ACT_SIGMOID;
    else if (!strcmp(a, "Tanh")) act->kind = CU_ACT_TANH;
    else if (!strcmp(a, "LeakyRelu")) act->kind = CU_ACT_LEAKY, act->a = np > 0 ? p[0] : 0.01f;
    else if (!strcmp(a, "Clip")) {
        if (np < 2) return 0;
        act->kind = CU_ACT_CLIP, act->a = p[0], act->b = p[1];
    } else if (!strcmp(a, "HardSigmoid")) act->kind = CU_ACT_HARDSIGMOID, act->a = np > 0 ? p[0] : 0.2f, act->b = np > 1 ? p[1] : 0.5f;
    else return 0;
    return 1;
}

/* ---------------------------------------------------------------- binary */

enum bin_op { B_ADD, B_SUB, B_MUL, B_DIV, B_POW, B_MAX, B_MIN };

__device__ __forceinline__ float bin_apply(float x, float y, int op) {
    switch (op) {
    case B_ADD: return x + y;
    case B_SUB: return x - y;
    case B_MUL: return x * y;
    case B_DIV: return x / y;
    case B_POW: return powf(x, y);
    case B_MAX: return x != x || y != y ? NAN : fmaxf(x, y);
    default: return x != x || y != y ? NAN : fminf(x, y);
    }
}

template <typename T>
__global__ void k_binary_same(const T *a, const T *b, T *y, int64_t n, int op) {
    GRID_LOOP(i, n) cu_st(&y[i], bin_apply(cu_ld(&a[i]), cu_ld(&b[i]), op));
}

/* b broadcast along rows: a[rows, cols], b[cols] (bias adds) */
template <typename T>
__global__ void k_binary_rowvec(const T *a, const T *b, T *y, int64_t n, int64_t cols, int op, int b_first) {
    GRID_LOOP(i, n) {
        float x = cu_ld(&a[i]), r = cu_ld(&b[i % cols]);
        cu_st(&y[i], b_first ? bin_apply(r, x, op) : bin_apply(x, r, op));
    }
}

template <typename T>
__global__ void k_binary_bcast(const T *a, const T *b, T *y, int64_t n, cu_strides s, int op) {
    GRID_LOOP(i, n) cu_st(&y[i], bin_apply(cu_ld(&a[bc_offset(s, 0, i)]), cu_ld(&b[bc_offset(s, 1, i)]), op));
}

static int claim_binary(const onyx_ep_node *n) { return cu_all_float_or_half(n) && cu_has_input(n, 1); }

template <typename T>
static void launch_binary(cudaStream_t st, const onyx_ep_tensor &a, const onyx_ep_tensor &b, void *y,
                          const cu_strides &s, int64_t n, int op) {
    const T *pa = (const T *)a.data, *pb = (const T *)b.data;
    T *py = (T *)y;
    int64_t cols = s.rank ? s.dims[s.rank - 1] : 1;
    if (a.numel == n && b.numel == n) {
        k_binary_same<T><<<blocks_for(n), THREADS, 0, st>>>(pa, pb, py, n, op);
    } else if (a.numel == n && b.numel == cols && (b.rank == 1 || b.numel == 1 || b.dims[b.rank - 1] == cols)) {
        k_binary_rowvec<T><<<blocks_for(n), THREADS, 0, st>>>(pa, pb, py, n, cols, op, 0);
    } else if (b.numel == n && a.numel == cols && (a.rank == 1 || a.numel == 1 || a.dims[a.rank - 1] == cols)) {
        k_binary_rowvec<T><<<blocks_for(n), THREADS, 0, st>>>(pb, pa, py, n, cols, op, 1);
    } else {
        k_binary_bcast<T><<<blocks_for(n), THREADS, 0, st>>>(pa, pb, py, n, s, op);
    }
}

/* the op travels as the state pointer's value */
static onyx_status *binary(cu_call *c, int op) {
    onyx_ep_tensor a, b, y;
    CU_TRY_STATUS(cu_need_float_or_half(c, 0, 0, &a));
    CU_TRY_STATUS(cu_need_float_or_half(c, 1, a.dtype, &b));
    const onyx_ep_tensor *in[2] = {&a, &b};
    cu_strides s;
    int64_t n;
    CU_TRY_STATUS(cu_broadcast(2, in, &s, &n));
    CU_TRY_STATUS(cu_out(c, 0, a.dtype, s.rank, s.dims, &y));
    if (!n) return NULL;
    if (a.dtype == ONYX_FLOAT16) launch_binary<__half>(c->s, a, b, y.data, s, n, op);
    else launch_binary<float>(c->s, a, b, y.data, s, n, op);
    CU_LAUNCHED();
    return NULL;
}

#define BINARY(name, op) \
    static onyx_status *name(cu_call *c, void *st) { return binary(c, op); }
BINARY(add_compute, B_ADD)
BINARY(sub_compute, B_SUB)
BINARY(mul_compute, B_MUL)
BINARY(div_compute, B_DIV)
BINARY(pow_compute, B_POW)
BINARY(max_compute, B_MAX)
BINARY(min_compute, B_MIN)

static int claim_minmax(const onyx_ep_node *n) {
    return claim_binary(n) && cu_host->node_input_count(n) == 2;
}

/* ---------------------------------------------------------------- unary */

enum un_op { U_EXP, U_LOG, U_SQRT, U_NEG, U_ABS, U_ERF, U_RECIP, U_ACT };

typedef struct unary_state {
    int op;
    cu_activation act;
    int bias_input;     /* BiasGelu, FastGelu: input 1 added first (row vector) */
} unary_state;

template <typename T>
__global__ void k_unary(const T *x, T *y, int64_t n, int op, cu_act kind, float a, float b, const T *bias,
                        int64_t cols) {
    GRID_LOOP(i, n) {
        float v = cu_ld(&x[i]);
        if (bias) v += cu_ld(&bias[i % cols]);
        switch (op) {
        case U_EXP: v = expf(v); break;
        case U_LOG: v = logf(v); break;
        case U_SQRT: v = sqrtf(v); break;
        case U_NEG: v = -v; break;
        case U_ABS: v = fabsf(v); break;
        case U_ERF: v = erff(v); break;
        case U_RECIP: v = 1.f / v; break;
        default: v = act_apply(v, kind, a, b);
        }
        cu_st(&y[i], v);
    }
}

static onyx_status *unary_compute(cu_call *c, void *sv) {
    const unary_state *u = (const unary_state *)sv;
    onyx_ep_tensor x, y, bias;
    CU_TRY_STATUS(cu_need_float_or_half(c, 0, 0, &x));
    const void *pb = NULL;
    int64_t cols = 1;
    cu_activation act = u->act;
    if (u->bias_input && cu_in(c, 1, &bias)) {
        cols = x.rank ? x.dims[x.rank - 1] : 1;
        if (bias.dtype != x.dtype || bias.numel != cols)
            return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "bias must hold %lld values of the input's type (the last axis), got %lld",
                                  (long long)cols, (long long)bias.numel);
        pb = bias.data;
    }
    if (act.kind == CU_ACT_CLIP) { /* Clip's min and max inputs (opset 11+), on the host */
        onyx_ep_tensor m;
        for (int k = 1; k <= 2; k++)
            if (cu_in(c, (size_t)k, &m)) {
                if ((m.dtype != ONYX_FLOAT && m.dtype != ONYX_FLOAT16) || m.numel != 1 || !m.on_host)
                    return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "Clip's %s must be a float scalar", k == 1 ? "min" : "max");
                (k == 1 ? act.a : act.b) = m.dtype == ONYX_FLOAT ? *(const float *)m.data
                                                                 : __half2float(*(const __half *)m.data);
            }
    }
    CU_TRY_STATUS(cu_out(c, 0, x.dtype, x.rank, x.dims, &y));
    if (!x.numel) return NULL;
    if (x.dtype == ONYX_FLOAT16)
        k_unary<__half><<<blocks_for(x.numel), THREADS, 0, c->s>>>((const __half *)x.data, (__half *)y.data, x.numel, u->op,
                                                                    act.kind, act.a, act.b, (const __half *)pb, cols);
    else
        k_unary<float><<<blocks_for(x.numel), THREADS, 0, c->s>>>((const float *)x.data, (float *)y.data, x.numel, u->op,
                                                                   act.kind, act.a, act.b, (const float *)pb, cols);
    CU_LAUNCHED();
    return NULL;
}

static onyx_status *new_unary(void **out, int op, cu_act kind, float a, float b, int bias) {
    unary_state *u = (unary_state *)calloc(1, sizeof *u);
    if (!u) return cu_host->error(ONYX_ERR_OUT_OF_MEMORY, "out of memory");
    u->op = op;
    u->act.kind = kind;
    u->act.a = a;
    u->act.b = b;
    u->bias_input = bias;
    *out = u;
    return NULL;
}

#define UNARY(name, op, kind, a, b, bias) \
    static onyx_status *name(const onyx_ep_node *n, void **out) { return new_unary(out, op, kind, a, b, bias); }
UNARY(exp_create, U_EXP, CU_ACT_NONE, 0, 0, 0)
UNARY(log_create, U_LOG, CU_ACT_NONE, 0, 0, 0)
UNARY(sqrt_create, U_SQRT, CU_ACT_NONE, 0, 0, 0)
UNARY(neg_create, U_NEG, CU_ACT_NONE, 0, 0, 0)
UNARY(abs_create, U_ABS, CU_ACT_NONE, 0, 0, 0)
UNARY(erf_create, U_ERF, CU_ACT_NONE, 0, 0, 0)
UNARY(recip_create, U_RECIP, CU_ACT_NONE, 0, 0, 0)
UNARY(relu_create, U_ACT, CU_ACT_RELU, 0, 0, 0)
UNARY(sigmoid_create, U_ACT, CU_ACT_SIGMOID, 0, 0, 0)
UNARY(tanh_create, U_ACT, CU_ACT_TANH, 0, 0, 0)
UNARY(ms_gelu_create, U_ACT, CU_ACT_GELU, 0, 0, 0)
UNARY(bias_gelu_create, U_ACT, CU_ACT_GELU, 0, 0, 1)
UNARY(fast_gelu_create, U_ACT, CU_ACT_GELU_TANH, 0, 0, 1)

static onyx_status *leaky_create(const onyx_ep_node *n, void **out) {
    return new_unary(out, U_ACT, CU_ACT_LEAKY, cu_attr_float(n, "alpha", 0.01f), 0, 0);
}
static onyx_status *hardsigmoid_create(const onyx_ep_node *n, void **out) {
    return new_unary(out, U_ACT, CU_ACT_HARDSIGMOID, cu_attr_float(n, "alpha", 0.2f), cu_attr_float(n, "beta", 0.5f), 0);
}
static onyx_status *gelu_create(const onyx_ep_node *n, void **out) {
    const char *a = cu_attr_string(n, "approximate", "none");
    return new_unary(out, U_ACT, strcmp(a, "tanh") ? CU_ACT_GELU : CU_ACT_GELU_TANH, 0, 0, 0);
}
static onyx_status *clip_create(const onyx_ep_node *n, void **out) {
    /* opset < 11: attributes; later: inputs (read at run time) */
    return new_unary(out, U_ACT, CU_ACT_CLIP, cu_attr_float(n, "min", -INFINITY), cu_attr_float(n, "max", INFINITY), 0);
}

static int claim_unary(const onyx_ep_node *n) { return cu_all_float_or_half(n) && cu_host->node_input_count(n) == 1; }
static int claim_gelu(const onyx_ep_node *n) {
    const char *a = cu_attr_string(n, "approximate", "none");
    return claim_unary(n) && (!strcmp(a, "none") || !strcmp(a, "tanh"));
}
static int claim_bias_act(const onyx_ep_node *n) { return cu_all_float_or_half(n) && cu_host->node_input_count(n) <= 2; }
static int claim_clip(const onyx_ep_node *n) { return cu_all_float_or_half(n); }

/* ---------------------------------------------------------------- Where, Not */

template <typename T>
__global__ void k_where(const bool *cnd, const T *x, const T *y, T *o, int64_t n, cu_strides s) {
    GRID_LOOP(i, n) o[i] = cnd[bc_offset(s, 0, i)] ? x[bc_offset(s, 1, i)] : y[bc_offset(s, 2, i)];
}

static int claim_where(const onyx_ep_node *n) {
    if (!cu_in_type(n, 0, ONYX_BOOL)) return 0;
    return (cu_in_type(n, 1, ONYX_FLOAT) && cu_in_type(n, 2, ONYX_FLOAT)) ||
           (cu_in_type(n, 1, ONYX_FLOAT16) && cu_in_type(n, 2, ONYX_FLOAT16));
}

static onyx_status *where_compute(cu_call *c, void *st) {
    onyx_ep_tensor cnd, x, y, o;
    CU_TRY_STATUS(cu_need(c, 0, ONYX_BOOL, &cnd));
    CU_TRY_STATUS(cu_need_float_or_half(c, 1, 0, &x));
    CU_TRY_STATUS(cu_need_float_or_half(c, 2, x.dtype, &y));
    const onyx_ep_tensor *in[3] = {&cnd, &x, &y};
    cu_strides s;
    int64_t n;
    CU_TRY_STATUS(cu_broadcast(3, in, &s, &n));
    CU_TRY_STATUS(cu_out(c, 0, x.dtype, s.rank, s.dims, &o));
    if (!n) return NULL;
    if (x.dtype == ONYX_FLOAT16)
        k_where<__half><<<blocks_for(n), THREADS, 0, c->s>>>((const bool *)cnd.data, (const __half *)x.data,
                                                              (const __half *)y.data, (__half *)o.data, n, s);
    else
        k_where<float><<<blocks_for(n), THREADS, 0, c->s>>>((const bool *)cnd.data, (const float *)x.data,
                                                             (const float *)y.data, (float *)o.data, n, s);
    CU_LAUNCHED();
    return NULL;
}

__global__ void k_not(const bool *x, bool *y, int64_t n) {
    GRID_LOOP(i, n) y[i] = !x[i];
}

static int claim_not(const onyx_ep_node *n) { return cu_in_type(n, 0, ONYX_BOOL); }

static onyx_status *not_compute(cu_call *c, void *st) {
    onyx_ep_tensor x, y;
    CU_TRY_STATUS(cu_need(c, 0, ONYX_BOOL, &x));
    CU_TRY_STATUS(cu_out(c, 0, ONYX_BOOL, x.rank, x.dims, &y));
    if (x.numel) k_not<<<blocks_for(x.numel), THREADS, 0, c->s>>>((const bool *)x.data, (bool *)y.data, x.numel);
    CU_LAUNCHED();
    return NULL;
}

/* ---------------------------------------------------------------- Cast */

template <typename S, typename D>
__global__ void k_cast(const S *x, D *y, int64_t n) {
    GRID_LOOP(i, n) y[i] = (D)x[i];
}
template <typename S>
__global__ void k_cast_bool(const S *x, bool *y, int64_t n) {
    GRID_LOOP(i, n) y[i] = x[i] != (S)0;
}
/* float16 goes through float both ways */
template <typename D>
__global__ void k_cast_from_half(const __half *x, D *y, int64_t n) {
    GRID_LOOP(i, n) y[i] = (D)__half2float(x[i]);
}
__global__ void k_cast_half_bool(const __half *x, bool *y, int64_t n) {
    GRID_LOOP(i, n) y[i] = __half2float(x[i]) != 0.f;
}
template <typename S>
__global__ void k_cast_to_half(const S *x, __half *y, int64_t n) {
    GRID_LOOP(i, n) y[i] = __float2half((float)x[i]);
}

onyx_status *cu_widen_half(cudaStream_t s, const __half *x, float *y, int64_t n) {
    if (n <= 0) return NULL;
    k_cast_from_half<float><<<blocks_for(n), THREADS, 0, s>>>(x, y, n);
    CU_LAUNCHED();
    return NULL;
}

onyx_status *cu_narrow_float(cudaStream_t s, const float *x, __half *y, int64_t n) {
    if (n <= 0) return NULL;
    k_cast_to_half<float><<<blocks_for(n), THREADS, 0, s>>>(x, y, n);
    CU_LAUNCHED();
    return NULL;
}

static bool cast_type(int32_t t) {
    return t == ONYX_FLOAT || t == ONYX_FLOAT16 || t == ONYX_INT64 || t == ONYX_INT32 || t == ONYX_BOOL;
}

static int claim_cast(const onyx_ep_node *n) {
    int32_t dt, rank;
    int64_t dims[ONYX_EP_MAX_RANK];
    if (!cu_host->node_input_type(n, 0, &dt, &rank, dims) || !cast_type(dt)) return 0;
    return cast_type((int32_t)cu_attr_int(n, "to", 0));
}

template <typename S>
static void launch_cast(cudaStream_t s, const void *x, void *y, int64_t n, int32_t to) {
    unsigned b = blocks_for(n);
    switch (to) {
    case ONYX_FLOAT16: k_cast_to_half<S><<<b, THREADS, 0, s>>>((const S *)x, (__half *)y, n); break;
    case ONYX_FLOAT: k_cast<S, float><<<b, THREADS, 0, s>>>((const S *)x, (float *)y, n); break;
    case ONYX_INT64: k_cast<S, long long><<<b, THREADS, 0, s>>>((const S *)x, (long long *)y, n); break;
    case ONYX_INT32: k_cast<S, int><<<b, THREADS, 0, s>>>((const S *)x, (int *)y, n); break;
    default: k_cast_bool<S><<<b, THREADS, 0, s>>>((const S *)x, (bool *)y, n); break;
    }
}

static onyx_status *cast_create(const onyx_ep_node *n, void **out) {
    int32_t *to = (int32_t *)malloc(sizeof *to);
    if (!to) return cu_host->error(ONYX_ERR_OUT_OF_MEMORY, "out of memory");
    *to = (int32_t)cu_attr_int(n, "to", 0);
    *out = to;
    return NULL;
}

static onyx_status *cast_compute(cu_call *c, void *st) {
    int32_t to = *(const int32_t *)st;
    onyx_ep_tensor x, y;
    CU_TRY_STATUS(cu_need(c, 0, 0, &x));
    if (!cast_type(x.dtype)) return cu_host->error(ONYX_ERR_NOT_IMPLEMENTED, "Cast from element type %d", x.dtype);
    CU_TRY_STATUS(cu_out(c, 0, to, x.rank, x.dims, &y));
    if (!x.numel) return NULL;
    if (x.dtype == to) {
        CU_TRY(cudaMemcpyAsync(y.data, x.data, x.nbytes, cudaMemcpyDeviceToDevice, c->s));
        return NULL;
    }
    unsigned b = blocks_for(x.numel);
    const __half *h = (const __half *)x.data;
    switch (x.dtype) {
    case ONYX_FLOAT16:
        if (to == ONYX_FLOAT) k_cast_from_half<float><<<b, THREADS, 0, c->s>>>(h, (float *)y.data, x.numel);
        else if (to == ONYX_INT64) k_cast_from_half<long long><<<b, THREADS, 0, c->s>>>(h, (long long *)y.data, x.numel);
        else if (to == ONYX_INT32) k_cast_from_half<int><<<b, THREADS, 0, c->s>>>(h, (int *)y.data, x.numel);
        else k_cast_half_bool<<<b, THREADS, 0, c->s>>>(h, (bool *)y.data, x.numel);
        break;
    case ONYX_FLOAT: launch_cast<float>(c->s, x.data, y.data, x.numel, to); break;
    case ONYX_INT64: launch_cast<long long>(c->s, x.data, y.data, x.numel, to); break;
    case ONYX_INT32: launch_cast<int>(c->s, x.data, y.data, x.numel, to); break;
    default: launch_cast<bool>(c->s, x.data, y.data, x.numel, to); break;
    }
    CU_LAUNCHED();
    return NULL;
}

/* ---------------------------------------------------------------- table */

#define CLIP_HOST_INPUTS ((uint64_t)6)

const cu_op cu_ops_elementwise[] = {
    {"", "Add", claim_binary, NULL, add_compute, 0},
    {"", "Sub", claim_binary, NULL, sub_compute, 0},
    {"", "Mul", claim_binary, NULL, mul_compute, 0},
    {"", "Div", claim_binary, NULL, div_compute, 0},
    {"", "Pow", claim_binary, NULL, pow_compute, 0},
    {"", "Max", claim_minmax, NULL, max_compute, 0},
    {"", "Min", claim_minmax, NULL, min_compute, 0},
    {"", "Exp", claim_unary, exp_create, unary_compute, 0},
    {"", "Log", claim_unary, log_create, unary_compute, 0},
    {"", "Sqrt", claim_unary, sqrt_create, unary_compute, 0},
    {"", "Neg", claim_unary, neg_create, unary_compute, 0},
    {"", "Abs", claim_unary, abs_create, unary_compute, 0},
    {"", "Erf", claim_unary, erf_create, unary_compute, 0},
    {"", "Reciprocal", claim_unary, recip_create, unary_compute, 0},
    {"", "Relu", claim_unary, relu_create, unary_compute, 0},
    {"", "Sigmoid", claim_unary, sigmoid_create, unary_compute, 0},
    {"", "Tanh", claim_unary, tanh_create, unary_compute, 0},
    {"", "LeakyRelu", claim_unary, leaky_create, unary_compute, 0},
    {"", "HardSigmoid", claim_unary, hardsigmoid_create, unary_compute, 0},
    {"", "Gelu", claim_gelu, gelu_create, unary_compute, 0},
    {"", "Clip", claim_clip, clip_create, unary_compute, CLIP_HOST_INPUTS},
    {"com.microsoft", "Gelu", claim_unary, ms_gelu_create, unary_compute, 0},
    {"com.microsoft", "BiasGelu", claim_bias_act, bias_gelu_create, unary_compute, 0},
    {"com.microsoft", "FastGelu", claim_bias_act, fast_gelu_create, unary_compute, 0},
    {"", "Where", claim_where, NULL, where_compute, 0},
    {"", "Not", claim_not, NULL, not_compute, 0},
    {"", "Cast", claim_cast, cast_create, cast_compute, 0},
    {NULL, NULL, NULL, NULL, NULL, 0},
};
