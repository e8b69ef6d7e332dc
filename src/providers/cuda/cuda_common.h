/* The CUDA execution provider's internals, shared by its operator families.
 * The provider is a plugin (include/onyx_provider.h): it sees onyx only
 * through the host-services table `cu_host`.
 *
 * One process-wide device context (device, stream, cuBLAS and cuDNN
 * handles) serves every session: handles are costly to create, and every
 * kernel, allocation (stream-ordered pool: the device arena) and copy is
 * queued on the one stream, so device memory is reused in stream order and
 * only copies back to the host wait. Calls into the provider hold
 * cu_lock (recursive), since cuBLAS/cuDNN handles are not thread-safe. */
#ifndef ONYX_CUDA_COMMON_H
#define ONYX_CUDA_COMMON_H

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <stdint.h>
#include <string.h>
#include "onyx_provider.h"

extern const onyx_host_api *cu_host;

typedef struct cu_device {
    int id;
    cudaStream_t stream;
    cublasHandle_t blas;
    cudnnHandle_t dnn;          /* NULL when cuDNN could not start: no Conv/pool claims */
    cublasMath_t math;          /* CUBLAS_DEFAULT_MATH, or TF32 when asked for */
    int *bad_index;             /* mapped pinned flag: a kernel saw an out-of-range index */
    char name[320];
} cu_device;

extern cu_device cu_dev;

/* Run `call`; on failure return an error naming it and CUDA's message. */
#define CU_TRY(call)                                                                          \
    do {                                                                                      \
        cudaError_t cu_e_ = (call);                                                           \
        if (cu_e_ != cudaSuccess)                                                             \
            return cu_host->error(ONYX_ERR_RUNTIME, "cuda: %s failed: %s", #call,             \
                                  cudaGetErrorString(cu_e_));                                 \
    } while (0)
#define CUBLAS_TRY(call)                                                                      \
    do {                                                                                      \
        cublasStatus_t cb_e_ = (call);                                                        \
        if (cb_e_ != CUBLAS_STATUS_SUCCESS)                                                   \
            return cu_host->error(ONYX_ERR_RUNTIME, "cublas: %s failed: %s", #call,           \
                                  cublasGetStatusString(cb_e_));                              \
    } while (0)
#define CUDNN_TRY(call)                                                                       \
    do {                                                                                      \
        cudnnStatus_t dn_e_ = (call);                                                         \
        if (dn_e_ != CUDNN_STATUS_SUCCESS)                                                    \
            return cu_host->error(ONYX_ERR_RUNTIME, "cudnn: %s failed: %s", #call,            \
                                  cudnnGetErrorString(dn_e_));                                \
    } while (0)
#define CU_TRY_STATUS(expr)                                                                   \
    do {                                                                                      \
        onyx_status *st_ = (expr);                                                            \
        if (st_) return st_;                                                                  \
    } while (0)
/* the last launch's error */
#define CU_LAUNCHED() CU_TRY(cudaGetLastError())

struct cu_graph;

/* A kernel call: the host's context plus inputs. */
typedef struct cu_call {
    onyx_ep_ctx *ctx;
    cudaStream_t s;
    struct cu_graph *capture;   /* the session's CUDA graph while a capture records outputs, else NULL */
} cu_call;

/* Note output k of a call being captured (graph.cu). */
void cu_graph_note_output(struct cu_graph *g, size_t k, int32_t dtype, int32_t rank, const int64_t *dims,
                          const void *data);

/* The input k (0 = omitted). */
static inline int cu_in(cu_call *c, size_t k, onyx_ep_tensor *t) { return cu_host->ctx_input(c->ctx, k, t); }
static inline onyx_status *cu_out(cu_call *c, size_t k, int32_t dtype, int32_t rank, const int64_t *dims,
                                  onyx_ep_tensor *t) {
    onyx_status *st = cu_host->ctx_output(c->ctx, k, dtype, rank, dims, t);
    if (!st && c->capture) cu_graph_note_output(c->capture, k, dtype, rank, dims, t->data);
    return st;
}

/* ---- CUDA graph capture (graph.cu; option cuda_graph = 1) ---- */

/* The process-wide lock of every call into the provider (recursive). */
void cu_lock_take(void);
void cu_lock_drop(void);
/* A session's graph state, or NULL when its option is off. */
onyx_status *cu_graph_create(struct cu_graph **out);
void cu_graph_destroy(struct cu_graph *g);
onyx_status *cu_graph_begin(struct cu_graph *g, const onyx_ep_run_info *run);
onyx_status *cu_graph_end(struct cu_graph *g, int failed);
/* alloc/free of the session's device memory during and after graph runs:
 * true when the graph took the call (*out set, or the pointer kept) */
bool cu_graph_alloc(struct cu_graph *g, size_t n, void **out);
bool cu_graph_keeps(struct cu_graph *g, void *ptr);
/* an error when the graph's run may not make this copy (host <-> device) */
onyx_status *cu_graph_check_copy(struct cu_graph *g, onyx_ep_copy_kind kind);
/* The call as the graph's run wants it: *done when replayed (outputs placed,
 * nothing launched); else c->capture is set while capturing. */
onyx_status *cu_graph_compute(struct cu_graph *g, cu_call *c, bool *done);
/* after a call that ran: an error the graph noted (an allocation that
 * differs from the warm-up run's) */
onyx_status *cu_graph_after_call(struct cu_graph *g, onyx_status *st);
/* the mapped error flag of index kernels, checked after a synchronised run */
onyx_status *cu_check_bad_index(void);
/* Required input k, of element type dtype (0 = any), or an error. */
onyx_status *cu_need(cu_call *c, size_t k, int32_t dtype, onyx_ep_tensor *t);
/* Required input k of type float or float16 (and of type like, if not 0). */
onyx_status *cu_need_float_or_half(cu_call *c, size_t k, int32_t like, onyx_ep_tensor *t);

/* Device scratch memory in stream order. */
void *cu_scratch(size_t nbytes);
void cu_scratch_free(void *p);

/* ---- operator families ---- */

typedef struct cu_op {
    const char *domain;           /* "" for ai.onnx */
    const char *op_type;
    /* may the provider run this node? (types, attributes, static shapes) */
    int (*claim)(const onyx_ep_node *n);
    /* parse attributes and constant inputs into *state (NULL state is fine) */
    onyx_status *(*create)(const onyx_ep_node *n, void **state);
    onyx_status *(*compute)(cu_call *c, void *state);
    uint64_t host_inputs;         /* inputs read on the host (shape, axes...) */
} cu_op;

extern const cu_op cu_ops_elementwise[];
extern const cu_op cu_ops_nn[];
extern const cu_op cu_ops_blas[];
extern const cu_op cu_ops_dnn[];
extern const cu_op cu_ops_tensor[];
extern const cu_op cu_ops_resize[];

/* ---- claim helpers (node types from the graph's static types) ---- */

/* input/output k exists, is a tensor of type dtype (0: any known type) */
int cu_in_type(const onyx_ep_node *n, size_t k, int32_t dtype);
int cu_out_type(const onyx_ep_node *n, size_t k, int32_t dtype);
/* every present input and output is float */
int cu_all_float(const onyx_ep_node *n);
/* every present input and output is float, or every one is float16:
 * the element type (ONYX_FLOAT / ONYX_FLOAT16), else 0 */
int32_t cu_all_float_or_half(const onyx_ep_node *n);
/* float16 loads and stores: kernels templated on the element type compute
 * in float and read/write T */
__device__ __forceinline__ float cu_ld(const float *p) { return *p; }
__device__ __forceinline__ float cu_ld(const __half *p) { return __half2float(*p); }
__device__ __forceinline__ void cu_st(float *p, float v) { *p = v; }
__device__ __forceinline__ void cu_st(__half *p, float v) { *p = __float2half(v); }
int cu_has_input(const onyx_ep_node *n, size_t k);
int cu_has_output(const onyx_ep_node *n, size_t k);
int64_t cu_attr_int(const onyx_ep_node *n, const char *name, int64_t def);
float cu_attr_float(const onyx_ep_node *n, const char *name, float def);
const char *cu_attr_string(const onyx_ep_node *n, const char *name, const char *def);
/* static rank of input k, -1 if unknown */
int cu_in_rank(const onyx_ep_node *n, size_t k);
/* a constant input's int64/int32 values into out (max n), count; 0 if not constant */
int cu_const_ints(const onyx_ep_node *n, size_t k, int64_t *out, size_t max, size_t *count);
/* host tensor ints (host_inputs) */
onyx_status *cu_host_ints(const onyx_ep_tensor *t, int64_t *out, size_t max, size_t *count);

/* ---- shared device routines ---- */

#define CU_MAX_RANK 8

typedef struct cu_strides {
    int rank;
    int64_t dims[CU_MAX_RANK];    /* output dims */
    int64_t str[3][CU_MAX_RANK];  /* element strides of up to 3 inputs (0 on broadcast axes) */
} cu_strides;

/* numpy broadcast of n inputs into out dims; error if incompatible or too high a rank */
onyx_status *cu_broadcast(int n, const onyx_ep_tensor *const *in, cu_strides *s, int64_t *numel);

/* activations shared by the elementwise ops and the fused ones */
typedef enum cu_act {
    CU_ACT_NONE, CU_ACT_RELU, CU_ACT_SIGMOID, CU_ACT_TANH, CU_ACT_LEAKY, CU_ACT_CLIP, CU_ACT_HARDSIGMOID,
    CU_ACT_GELU, CU_ACT_GELU_TANH,
} cu_act;
typedef struct cu_activation {
    cu_act kind;
    float a, b;
} cu_activation;
/* "activation"/"activation_params" of FusedConv, FusedGemm: 0 if unsupported */
int cu_parse_activation(const onyx_ep_node *n, cu_activation *act);
/* y[i] = act(y[i] + bias[(i / inner) % channels] + (z ? z[i] : 0)); bias/z may be NULL */
onyx_status *cu_bias_act(cudaStream_t s, float *y, int64_t n, const float *bias, int64_t channels, int64_t inner,
                         const float *z, cu_activation act);
/* float16 <-> float32 copies of n values on stream s (scratch for kernels
 * that compute in float32) */
onyx_status *cu_widen_half(cudaStream_t s, const __half *x, float *y, int64_t n);
onyx_status *cu_narrow_float(cudaStream_t s, const float *x, __half *y, int64_t n);
/* the same epilogue on float16 data (float16 Conv) */
onyx_status *cu_bias_act(cudaStream_t s, __half *y, int64_t n, const __half *bias, int64_t channels, int64_t inner,
                         const __half *z, cu_activation act);
/* row-major GEMM through cuBLAS, batched with strides (batch 1: plain) */
onyx_status *cu_gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const float *A, int64_t lda,
                     int64_t sa, const float *B, int64_t ldb, int64_t sb, float beta, float *C, int64_t ldc, int64_t sc,
                     int64_t batch);
/* softmax over rows of n (log: log-softmax) */
onyx_status *cu_softmax_rows(cudaStream_t s, const float *x, float *y, int64_t rows, int64_t n, bool log);

#endif
