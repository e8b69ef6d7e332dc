/* The CUDA execution provider's plugin table: device start-up, options,
 * memory (the stream-ordered pool is the device arena; pinned staging
 * buffers for copies), claims and kernel dispatch over the operator
 * families. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include "cuda_common.h"

const onyx_host_api *cu_host;
cu_device cu_dev;

static pthread_mutex_t cu_lock;
static pthread_once_t lock_once = PTHREAD_ONCE_INIT;
static bool started;
static char start_error[512];

static void init_lock(void) {
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&cu_lock, &a);
}

struct locked {
    locked() { pthread_mutex_lock(&cu_lock); }
    ~locked() { pthread_mutex_unlock(&cu_lock); }
};

void cu_lock_take(void) { pthread_mutex_lock(&cu_lock); }
void cu_lock_drop(void) { pthread_mutex_unlock(&cu_lock); }

/* ---------------------------------------------------------------- start */

static bool start_device(int id) {
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        bool no_driver = e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice;
        snprintf(start_error, sizeof start_error, "no usable CUDA device%s (cudaGetDeviceCount: %s)",
                 no_driver ? ": this machine has no NVIDIA GPU or driver" : "",
                 e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        return false;
    }
    if (id < 0 || id >= count) {
        snprintf(start_error, sizeof start_error, "device_id %d out of range: %d CUDA device%s", id, count,
                 count == 1 ? "" : "s");
        return false;
    }
    cudaDeviceProp prop;
    if ((e = cudaSetDevice(id)) != cudaSuccess || (e = cudaGetDeviceProperties(&prop, id)) != cudaSuccess ||
        (e = cudaStreamCreateWithFlags(&cu_dev.stream, cudaStreamNonBlocking)) != cudaSuccess) {
        snprintf(start_error, sizeof start_error, "CUDA device %d: %s", id, cudaGetErrorString(e));
        return false;
    }
    /* the default pool keeps freed memory for reuse: a device arena */
    cudaMemPool_t pool;
    if (cudaDeviceGetDefaultMemPool(&pool, id) == cudaSuccess) {
        uint64_t keep = UINT64_MAX;
        cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
    }
    if (cublasCreate(&cu_dev.blas) != CUBLAS_STATUS_SUCCESS) {
        snprintf(start_error, sizeof start_error, "cuBLAS could not start (cublasCreate)");
        return false;
    }
    cublasSetStream(cu_dev.blas, cu_dev.stream);
    cu_dev.math = CUBLAS_DEFAULT_MATH;
    cublasSetMathMode(cu_dev.blas, cu_dev.math);
    if (cudnnCreate(&cu_dev.dnn) != CUDNN_STATUS_SUCCESS) {
        cu_dev.dnn = NULL;
        cu_host->log(ONYX_EP_LOG_WARNING, "cuda provider: cuDNN could not start: Conv and pooling run on the CPU");
    } else {
        cudnnSetStream(cu_dev.dnn, cu_dev.stream);
    }
    if (cudaHostAlloc((void **)&cu_dev.bad_index, sizeof(int), cudaHostAllocMapped) != cudaSuccess) {
        snprintf(start_error, sizeof start_error, "cudaHostAlloc of the error flag failed");
        return false;
    }
    *cu_dev.bad_index = 0;
    cu_dev.id = id;
    snprintf(cu_dev.name, sizeof cu_dev.name, "cuda:%d %s (sm_%d%d, %.0f GiB)", id, prop.name, prop.major,
             prop.minor, (double)prop.totalGlobalMem / (1 << 30));
    return true;
}

static void *staging;
static size_t staging_bytes;
static cudaEvent_t staging_ready, chunk_done[2];

/* The device state lives while any session's provider does (live_providers
 * counts them): the last one gone hands back the handles, the pinned
 * buffers and the pool's memory, so a process that ends its sessions holds
 * nothing on the GPU, and the next session starts the device afresh. */
static int live_providers;

static void stop_device(void) {
    cudaStreamSynchronize(cu_dev.stream);
    if (cu_dev.dnn) cudnnDestroy(cu_dev.dnn);
    cublasDestroy(cu_dev.blas);
    if (staging) cudaFreeHost(staging);
    if (staging_ready) cudaEventDestroy(staging_ready);
    for (int h = 0; h < 2; h++)
        if (chunk_done[h]) cudaEventDestroy(chunk_done[h]);
    staging = NULL;
    staging_bytes = 0;
    staging_ready = chunk_done[0] = chunk_done[1] = NULL;
    cudaFreeHost(cu_dev.bad_index);
    cudaStreamDestroy(cu_dev.stream);
    cudaMemPool_t pool;
    if (cudaDeviceGetDefaultMemPool(&pool, cu_dev.id) == cudaSuccess) cudaMemPoolTrimTo(pool, 0);
    memset(&cu_dev, 0, sizeof cu_dev);
    started = false;
}

typedef struct cu_provider {
    int device_id;
    cublasMath_t math;   /* option use_tf32: this session's float32 matrix math */
    cu_graph *graph;     /* option cuda_graph = 1 (graph.cu), else NULL */
} cu_provider;

/* The device is shared; the math mode is the calling session's. Called
 * under the lock before anything that runs or plans cuBLAS/cuDNN work. */
static void use_math_of(void *p) {
    cublasMath_t m = p ? ((cu_provider *)p)->math : CUBLAS_DEFAULT_MATH;
    if (m != cu_dev.math) {
        cu_dev.math = m;
        cublasSetMathMode(cu_dev.blas, m);
    }
}

static onyx_status *cu_create(const onyx_host_api *host, const char *const *keys, const char *const *values,
                              size_t n, void **out) {
    cu_host = host;
    pthread_once(&lock_once, init_lock);
    int id = 0;
    bool tf32 = false, graph = false;
    for (size_t i = 0; i < n; i++) {
        char *end;
        if (!strcmp(keys[i], "device_id")) {
            long v = strtol(values[i], &end, 10);
            if (*end || end == values[i] || v < 0 || v > 64)
                return host->error(ONYX_ERR_INVALID_ARGUMENT, "cuda provider: device_id must be an integer in [0, 64], got '%s'",
                                   values[i]);
            id = (int)v;
        } else if (!strcmp(keys[i], "use_tf32")) {
            if (strcmp(values[i], "0") && strcmp(values[i], "1"))
                return host->error(ONYX_ERR_INVALID_ARGUMENT, "cuda provider: use_tf32 must be 0 or 1, got '%s'", values[i]);
            tf32 = values[i][0] == '1';
        } else if (!strcmp(keys[i], "cuda_graph")) {
            if (strcmp(values[i], "0") && strcmp(values[i], "1"))
                return host->error(ONYX_ERR_INVALID_ARGUMENT, "cuda provider: cuda_graph must be 0 or 1, got '%s'", values[i]);
            graph = values[i][0] == '1';
        } else {
            return host->error(ONYX_ERR_INVALID_ARGUMENT,
                               "cuda provider: unknown option '%s' (known: device_id, use_tf32, cuda_graph)", keys[i]);
        }
    }
    locked l;
    if (!started && !start_error[0]) started = start_device(id);
    if (!started) return host->error(ONYX_ERR_FAIL, "%s", start_error);
    if (id != cu_dev.id)
        return host->error(ONYX_ERR_INVALID_ARGUMENT, "cuda provider: this process already runs on device %d, not %d",
                           cu_dev.id, id);
    cu_provider *p = (cu_provider *)calloc(1, sizeof *p);
    if (!p) return host->error(ONYX_ERR_OUT_OF_MEMORY, "cuda provider: out of memory");
    p->device_id = id;
    p->math = tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH;
    if (graph) {
        onyx_status *st = cu_graph_create(&p->graph);
        if (st) {
            free(p);
            if (!live_providers) stop_device();
            return st;
        }
    }
    live_providers++;
    *out = p;
    return NULL;
}

static void cu_destroy(void *p) {
    cu_graph_destroy(((cu_provider *)p)->graph);
    locked l;
    cudaStreamSynchronize(cu_dev.stream);
    free(p);
    if (--live_providers == 0 && started) stop_device();
}

static const char *cu_device_name(void *p) { return cu_dev.name; }

/* ---------------------------------------------------------------- memory */

static cu_graph *graph_of(void *p) { return p ? ((cu_provider *)p)->graph : NULL; }

static void *cu_alloc(void *p, size_t n) {
    locked l;
    void *d = NULL;
    if (cu_graph_alloc(graph_of(p), n, &d)) return d;
    return cudaMallocAsync(&d, n, cu_dev.stream) == cudaSuccess ? d : NULL;
}

static void cu_free(void *p, void *ptr) {
    if (!ptr) return;
    locked l;
    if (cu_graph_keeps(graph_of(p), ptr)) return;
    cudaFreeAsync(ptr, cu_dev.stream);
}

void *cu_scratch(size_t n) { return cu_alloc(NULL, n ? n : 1); }
void cu_scratch_free(void *p) { cu_free(NULL, p); }

/* Pinned staging (declared with the device state above): host bytes go
 * through it so copies run at full speed and asynchronously; `ready` says
 * when the last upload has left it. */

static onyx_status *staging_reserve(size_t n) {
    if (!staging_ready) CU_TRY(cudaEventCreateWithFlags(&staging_ready, cudaEventDisableTiming));
    CU_TRY(cudaEventSynchronize(staging_ready));
    if (n <= staging_bytes) return NULL;
    if (staging) cudaFreeHost(staging);
    staging = NULL;
    staging_bytes = 0;
    size_t want = n < ((size_t)1 << 20) ? (size_t)1 << 20 : n;
    CU_TRY(cudaHostAlloc(&staging, want, cudaHostAllocDefault));
    staging_bytes = want;
    return NULL;
}

onyx_status *cu_check_bad_index(void) {
    if (!*cu_dev.bad_index) return NULL;
    *cu_dev.bad_index = 0;
    return cu_host->error(ONYX_ERR_INVALID_ARGUMENT,
                          "cuda provider: an index input (Gather) was out of range; the result was computed with "
                          "zeros in its place and is discarded");
}

/* Device to host through the staging buffer, returning when all of it has
 * arrived. Large copies go in chunks through the buffer's two halves, so
 * the host copies one chunk out while the next crosses the bus (a language
 * model's logits are hundreds of MB at batch 8). */
static onyx_status *copy_to_host(cudaStream_t s, char *dst, const char *src, size_t n) {
    const size_t chunk = (size_t)8 << 20;
    if (n <= chunk) {
        CU_TRY_STATUS(staging_reserve(n));
        CU_TRY(cudaMemcpyAsync(staging, src, n, cudaMemcpyDeviceToHost, s));
        CU_TRY(cudaStreamSynchronize(s));
        memcpy(dst, staging, n);
        return NULL;
    }
    CU_TRY_STATUS(staging_reserve(2 * chunk));
    for (int h = 0; h < 2; h++)
        if (!chunk_done[h]) CU_TRY(cudaEventCreateWithFlags(&chunk_done[h], cudaEventDisableTiming));
    char *half[2] = {(char *)staging, (char *)staging + chunk};
    size_t issued = 0, copied = 0;
    for (int h = 0; h < 2 && issued < n; h++) {
        size_t len = n - issued < chunk ? n - issued : chunk;
        CU_TRY(cudaMemcpyAsync(half[h], src + issued, len, cudaMemcpyDeviceToHost, s));
        CU_TRY(cudaEventRecord(chunk_done[h], s));
        issued += len;
    }
    for (int h = 0; copied < n; h ^= 1) {
        CU_TRY(cudaEventSynchronize(chunk_done[h]));
        size_t len = n - copied < chunk ? n - copied : chunk;
        memcpy(dst + copied, half[h], len);
        copied += len;
        if (issued < n) {
            size_t next = n - issued < chunk ? n - issued : chunk;
            CU_TRY(cudaMemcpyAsync(half[h], src + issued, next, cudaMemcpyDeviceToHost, s));
            CU_TRY(cudaEventRecord(chunk_done[h], s));
            issued += next;
        }
    }
    return NULL;
}

static onyx_status *cu_copy(void *p, void *dst, const void *src, size_t n, onyx_ep_copy_kind kind) {
    locked l;
    cudaStream_t s = cu_dev.stream;
    CU_TRY_STATUS(cu_graph_check_copy(graph_of(p), kind));
    if (kind == ONYX_EP_DEVICE_TO_DEVICE) {
        CU_TRY(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, s));
        return NULL;
    }
    CU_TRY_STATUS(staging_reserve(n));
    if (kind == ONYX_EP_HOST_TO_DEVICE) {
        memcpy(staging, src, n);
        CU_TRY(cudaMemcpyAsync(dst, staging, n, cudaMemcpyHostToDevice, s));
        CU_TRY(cudaEventRecord(staging_ready, s));
        return NULL;
    }
    CU_TRY_STATUS(copy_to_host(s, (char *)dst, (const char *)src, n));
    return cu_check_bad_index();
}

/* ---------------------------------------------------------------- claims */

static const cu_op *const families[] = {cu_ops_elementwise, cu_ops_nn, cu_ops_blas, cu_ops_dnn, cu_ops_tensor,
                                        cu_ops_resize};

static const cu_op *find_op(const onyx_ep_node *n) {
    const char *d = cu_host->node_domain(n), *t = cu_host->node_op_type(n);
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
        for (const cu_op *o = families[f]; o->op_type; o++)
            if (!strcmp(o->domain, d) && !strcmp(o->op_type, t)) return o;
    return NULL;
}

static int cu_claim(void *p, const onyx_ep_node *n) {
    const cu_op *o = find_op(n);
    /* no rank above what the kernels index */
    for (size_t k = 0; o && k < cu_host->node_input_count(n); k++)
        if (cu_in_rank(n, k) > CU_MAX_RANK) return 0;
    for (size_t k = 0; o && k < cu_host->node_output_count(n); k++) {
        int32_t dt, rank;
        int64_t dims[ONYX_EP_MAX_RANK];
        if (cu_host->node_output_type(n, k, &dt, &rank, dims) && rank > CU_MAX_RANK) return 0;
    }
    return o && o->claim(n);
}

static uint64_t cu_host_inputs(void *p, const onyx_ep_node *n) {
    const cu_op *o = find_op(n);
    return o ? o->host_inputs : 0;
}

typedef struct cu_kernel {
    const cu_op *op;
    void *state;
} cu_kernel;

static onyx_status *cu_create_kernel(void *p, const onyx_ep_node *n, void **out) {
    const cu_op *o = find_op(n);
    if (!o) return cu_host->error(ONYX_ERR_NOT_IMPLEMENTED, "cuda provider: no kernel for %s", cu_host->node_op_type(n));
    cu_kernel *k = (cu_kernel *)calloc(1, sizeof *k);
    if (!k) return cu_host->error(ONYX_ERR_OUT_OF_MEMORY, "cuda provider: out of memory");
    k->op = o;
    if (o->create) {
        locked l;
        use_math_of(p);
        onyx_status *st = o->create(n, &k->state);
        if (st) {
            free(k);
            return st;
        }
    }
    *out = k;
    return NULL;
}

static onyx_status *cu_compute(void *p, void *kv, onyx_ep_ctx *ctx) {
    cu_kernel *k = (cu_kernel *)kv;
    locked l;
    use_math_of(p);
    cu_call c = {ctx, cu_dev.stream, NULL};
    cu_graph *g = graph_of(p);
    bool replayed = false;
    CU_TRY_STATUS(cu_graph_compute(g, &c, &replayed));
    if (replayed) return NULL;
    onyx_status *st = k->op->compute(&c, k->state);
    if (!st) {
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess)
            st = cu_host->error(ONYX_ERR_RUNTIME, "cuda: %s: %s", k->op->op_type, cudaGetErrorString(e));
    }
    return cu_graph_after_call(g, st);
}

static void cu_free_kernel(void *p, void *kv) {
    cu_kernel *k = (cu_kernel *)kv;
    if (!k) return;
    free(k->state); /* states are single blocks; device-side state is never kept */
    free(k);
}

/* The run pair (interface 2.1): only a session with cuda_graph = 1 has
 * anything to do per run. */
static onyx_status *cu_begin_run(void *p, const onyx_ep_run_info *run, void **state) {
    cu_graph *g = graph_of(p);
    *state = g;
    return g ? cu_graph_begin(g, run) : NULL;
}

static onyx_status *cu_end_run(void *p, void *state, int failed) {
    return state ? cu_graph_end((cu_graph *)state, failed) : NULL;
}

static const onyx_ep_plugin plugin = {
    ONYX_PROVIDER_API_VERSION,
    sizeof(onyx_ep_plugin),
    "cuda",
    cu_create,
    cu_destroy,
    cu_device_name,
    cu_alloc,
    cu_free,
    cu_copy,
    cu_claim,
    NULL, /* get_capability: node by node */
    cu_host_inputs,
    cu_create_kernel,
    NULL, /* compile */
    cu_compute,
    cu_free_kernel,
    cu_begin_run,
    cu_end_run,
};

extern "C" ONYX_EP_EXPORT const onyx_ep_plugin *onyx_provider_plugin(uint32_t host_api_version) {
    (void)host_api_version;
    return &plugin;
}

/* ---------------------------------------------------------------- helpers */

onyx_status *cu_need(cu_call *c, size_t k, int32_t dtype, onyx_ep_tensor *t) {
    if (!cu_in(c, k, t)) return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "input %zu is missing", k);
    if (dtype && t->dtype != dtype)
        return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "input %zu has element type %d, expected %d", k, t->dtype, dtype);
    if (t->rank > CU_MAX_RANK)
        return cu_host->error(ONYX_ERR_NOT_IMPLEMENTED, "input %zu has rank %d; the CUDA kernels take up to %d", k, t->rank,
                              CU_MAX_RANK);
    return NULL;
}

onyx_status *cu_need_float_or_half(cu_call *c, size_t k, int32_t like, onyx_ep_tensor *t) {
    CU_TRY_STATUS(cu_need(c, k, like, t));
    if (t->dtype != ONYX_FLOAT && t->dtype != ONYX_FLOAT16)
        return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "input %zu: float or float16 expected, got type %d", k, t->dtype);
    return NULL;
}

int cu_in_type(const onyx_ep_node *n, size_t k, int32_t dtype) {
    int32_t dt, rank;
    int64_t dims[ONYX_EP_MAX_RANK];
    return cu_host->node_input_name(n, k) && cu_host->node_input_type(n, k, &dt, &rank, dims) && (!dtype || dt == dtype);
}

int cu_out_type(const onyx_ep_node *n, size_t k, int32_t dtype) {
    int32_t dt, rank;
    int64_t dims[ONYX_EP_MAX_RANK];
    return cu_host->node_output_name(n, k) && cu_host->node_output_type(n, k, &dt, &rank, dims) && (!dtype || dt == dtype);
}

int cu_all_float(const onyx_ep_node *n) {
    for (size_t k = 0; k < cu_host->node_input_count(n); k++)
        if (cu_host->node_input_name(n, k) && !cu_in_type(n, k, ONYX_FLOAT)) return 0;
    for (size_t k = 0; k < cu_host->node_output_count(n); k++)
        if (cu_host->node_output_name(n, k) && !cu_out_type(n, k, ONYX_FLOAT)) return 0;
    return 1;
}

int32_t cu_all_float_or_half(const onyx_ep_node *n) {
    if (cu_all_float(n)) return ONYX_FLOAT;
    for (size_t k = 0; k < cu_host->node_input_count(n); k++)
        if (cu_host->node_input_name(n, k) && !cu_in_type(n, k, ONYX_FLOAT16)) return 0;
    for (size_t k = 0; k < cu_host->node_output_count(n); k++)
        if (cu_host->node_output_name(n, k) && !cu_out_type(n, k, ONYX_FLOAT16)) return 0;
    return ONYX_FLOAT16;
}

int cu_has_input(const onyx_ep_node *n, size_t k) {
    return k < cu_host->node_input_count(n) && cu_host->node_input_name(n, k);
}
int cu_has_output(const onyx_ep_node *n, size_t k) {
    return k < cu_host->node_output_count(n) && cu_host->node_output_name(n, k);
}

int64_t cu_attr_int(const onyx_ep_node *n, const char *name, int64_t def) {
    int64_t v;
    return cu_host->attr_int(n, name, &v) ? v : def;
}
float cu_attr_float(const onyx_ep_node *n, const char *name, float def) {
    float v;
    return cu_host->attr_float(n, name, &v) ? v : def;
}
const char *cu_attr_string(const onyx_ep_node *n, const char *name, const char *def) {
    const char *v;
    return cu_host->attr_string(n, name, &v) ? v : def;
}

int cu_in_rank(const onyx_ep_node *n, size_t k) {
    int32_t dt, rank;
    int64_t dims[ONYX_EP_MAX_RANK];
    return cu_host->node_input_type(n, k, &dt, &rank, dims) ? rank : -1;
}

onyx_status *cu_host_ints(const onyx_ep_tensor *t, int64_t *out, size_t max, size_t *count) {
    if (!t->on_host || (t->dtype != ONYX_INT64 && t->dtype != ONYX_INT32) || t->numel < 0 || (size_t)t->numel > max)
        return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "expected at most %zu int32/int64 values in host memory", max);
    for (int64_t i = 0; i < t->numel; i++)
        out[i] = t->dtype == ONYX_INT64 ? ((const int64_t *)t->data)[i] : ((const int32_t *)t->data)[i];
    *count = (size_t)t->numel;
    return NULL;
}

int cu_const_ints(const onyx_ep_node *n, size_t k, int64_t *out, size_t max, size_t *count) {
    onyx_ep_tensor t;
    if (!cu_host->node_input_constant(n, k, &t)) return 0;
    onyx_status *st = cu_host_ints(&t, out, max, count);
    if (st) {
        cu_host->status_free(st);
        return 0;
    }
    return 1;
}

onyx_status *cu_broadcast(int n, const onyx_ep_tensor *const *in, cu_strides *s, int64_t *numel) {
    int rank = 0;
    for (int i = 0; i < n; i++) rank = in[i]->rank > rank ? in[i]->rank : rank;
    if (rank > CU_MAX_RANK)
        return cu_host->error(ONYX_ERR_NOT_IMPLEMENTED, "rank %d; the CUDA kernels take up to %d", rank, CU_MAX_RANK);
    memset(s, 0, sizeof *s);
    s->rank = rank;
    for (int d = 0; d < rank; d++) {
        int64_t dim = 1;
        for (int i = 0; i < n; i++) {
            int id = d - (rank - in[i]->rank);
            int64_t v = id >= 0 ? in[i]->dims[id] : 1;
            if (v != 1 && dim != 1 && v != dim)
                return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "shapes do not broadcast: axis %d is %lld and %lld", d,
                                      (long long)dim, (long long)v);
            if (v != 1) dim = v;
        }
        s->dims[d] = dim;
    }
    for (int i = 0; i < n; i++) {
        int64_t st = 1;
        for (int d = rank - 1; d >= 0; d--) {
            int id = d - (rank - in[i]->rank);
            int64_t v = id >= 0 ? in[i]->dims[id] : 1;
            s->str[i][d] = v == 1 ? 0 : st;
            st *= v;
        }
    }
    int64_t total = 1;
    for (int d = 0; d < rank; d++) total *= s->dims[d];
    *numel = total;
    return NULL;
}
