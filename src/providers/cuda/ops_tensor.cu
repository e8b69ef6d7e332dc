/* Data movement on the GPU, for any element type of 1, 2, 4 or 8 bytes:
 * Transpose, Concat, Gather, Slice, Expand, Pad (constant, edge, reflect,
 * wrap), and the shape-only operators
 * (Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout at inference),
 * which copy the bytes device to device. Shape, axes and slice bounds are
 * read on the host (host_inputs). */
#include "cuda_common.h"

#define THREADS 256

static unsigned blocks_for(int64_t n) {
    int64_t b = (n + THREADS - 1) / THREADS;
    return (unsigned)(b < 1 ? 1 : b > 65535 * 8 ? 65535 * 8 : b);
}

static int elem_size(int32_t dt) {
    switch (dt) {
    case ONYX_UINT8: case ONYX_INT8: case ONYX_BOOL: return 1;
    case ONYX_UINT16: case ONYX_INT16: case ONYX_FLOAT16: case ONYX_BFLOAT16: return 2;
    case ONYX_FLOAT: case ONYX_INT32: case ONYX_UINT32: return 4;
    case ONYX_INT64: case ONYX_UINT64: case ONYX_DOUBLE: return 8;
    default: return 0;
    }
}

static int claim_movable(const onyx_ep_node *n) {
    int32_t dt, rank;
    int64_t dims[ONYX_EP_MAX_RANK];
    return cu_host->node_input_type(n, 0, &dt, &rank, dims) && elem_size(dt) > 0;
}

/* out element i <- in at sum(coord_d * str_d) over the out dims */
typedef struct gather_map {
    int rank;
    int64_t dims[CU_MAX_RANK];
    int64_t str[CU_MAX_RANK];
    int64_t base;
} gather_map;

template <typename T>
__global__ void k_strided(const T *x, T *y, int64_t n, gather_map m) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        int64_t rem = i, off = m.base;
        for (int d = m.rank - 1; d >= 0; d--) {
            off += (rem % m.dims[d]) * m.str[d];
            rem /= m.dims[d];
        }
        y[i] = x[off];
    }
}

static onyx_status *strided_copy(cudaStream_t s, const void *x, void *y, int64_t n, int es, const gather_map &m) {
    if (n <= 0) return NULL;
    switch (es) {
    case 1: k_strided<uint8_t><<<blocks_for(n), THREADS, 0, s>>>((const uint8_t *)x, (uint8_t *)y, n, m); break;
    case 2: k_strided<uint16_t><<<blocks_for(n), THREADS, 0, s>>>((const uint16_t *)x, (uint16_t *)y, n, m); break;
    case 4: k_strided<uint32_t><<<blocks_for(n), THREADS, 0, s>>>((const uint32_t *)x, (uint32_t *)y, n, m); break;
    default: k_strided<uint64_t><<<blocks_for(n), THREADS, 0, s>>>((const uint64_t *)x, (uint64_t *)y, n, m); break;
    }
    CU_LAUNCHED();
    return NULL;
}

static void row_major_strides(const int64_t *dims, int rank, int64_t *str) {
    int64_t s = 1;
    for (int d = rank - 1; d >= 0; d--) {
        str[d] = s;
        s *= dims[d];
    }
}

/* a state holding one integer attribute */
static onyx_status *int_attr_create_value(void **out, int value) {
    int *a = (int *)malloc(sizeof *a);
    if (!a) return cu_host->error(ONYX_ERR_OUT_OF_MEMORY, "out of memory");
    *a = value;
    *out = a;
    return NULL;
}

static onyx_status *int_attr_create(const onyx_ep_node *n, void **out, const char *name, int def) {
    return int_attr_create_value(out, (int)cu_attr_int(n, name, def));
}

/* ---------------------------------------------------------------- copies that keep the bytes */

static onyx_status *copy_as(cu_call *c, const onyx_ep_tensor &x, int rank, const int64_t *dims) {
    onyx_ep_tensor y;
    int64_t n = 1;
    for (int d = 0; d < rank; d++) n *= dims[d];
    if (n != x.numel)
        return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "new shape holds %lld elements, the input %lld", (long long)n,
                              (long long)x.numel);
    CU_TRY_STATUS(cu_out(c, 0, x.dtype, rank, dims, &y));
    if (x.nbytes) CU_TRY(cudaMemcpyAsync(y.data, x.data, x.nbytes, cudaMemcpyDeviceToDevice, c->s));
    return NULL;
}

static onyx_status *identity_compute(cu_call *c, void *st) {
    onyx_ep_tensor x;
    CU_TRY_STATUS(cu_need(c, 0, 0, &x));
    return copy_as(c, x, x.rank, x.dims);
}

/* inference only: no mask output, training_mode absent or a constant false */
static int claim_dropout(const onyx_ep_node *n) {
    if (!claim_movable(n) || cu_has_output(n, 1)) return 0;
    if (!cu_has_input(n, 2)) return 1;
    onyx_ep_tensor t;
    return cu_host->node_input_constant(n, 2, &t) && t.dtype == ONYX_BOOL && t.numel == 1 && !*(const bool *)t.data;
}

static onyx_status *reshape_compute(cu_call *c, void *st) {
    onyx_ep_tensor x, sh;
    CU_TRY_STATUS(cu_need(c, 0, 0, &x));
    CU_TRY_STATUS(cu_need(c, 1, 0, &sh));
    int64_t dims[ONYX_EP_MAX_RANK];
    size_t n;
    CU_TRY_STATUS(cu_host_ints(&sh, dims, CU_MAX_RANK, &n));
    int allowzero = st ? *(const int *)st : 0;
    int64_t known = 1;
    int infer = -1;
    for (size_t d = 0; d < n; d++) {
        if (dims[d] == 0 && !allowzero) {
            if ((int)d >= x.rank) return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "Reshape: 0 at axis %zu beyond the input's rank", d);
            dims[d] = x.dims[d];
        }
        if (dims[d] == -1) {
            if (infer >= 0) return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "Reshape: more than one -1");
            infer = (int)d;
        } else if (dims[d] < 0) {
            return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "Reshape: negative dimension %lld", (long long)dims[d]);
        } else {
            known *= dims[d];
        }
    }
    if (infer >= 0) {
        if (!known || x.numel % known)
            return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "Reshape: cannot infer -1 for %lld elements", (long long)x.numel);
        dims[infer] = x.numel / known;
    }
    return copy_as(c, x, (int)n, dims);
}

static onyx_status *reshape_create(const onyx_ep_node *n, void **out) { return int_attr_create(n, out, "allowzero", 0); }

static onyx_status *flatten_create(const onyx_ep_node *n, void **out) { return int_attr_create(n, out, "axis", 1); }

static onyx_status *flatten_compute(cu_call *c, void *st) {
    onyx_ep_tensor x;
    CU_TRY_STATUS(cu_need(c, 0, 0, &x));
    int axis = *(const int *)st;
    if (axis < 0) axis += x.rank;
    if (axis < 0 || axis > x.rank) return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "Flatten: axis out of range");
    int64_t dims[2] = {1, 1};
    for (int d = 0; d < x.rank; d++) dims[d >= axis] *= x.dims[d];
    return copy_as(c, x, 2, dims);
}

/* Squeeze/Unsqueeze axes: attribute (older opsets) or input 1 on the host */
typedef struct axes_state {
    size_t n;
    int64_t axes[CU_MAX_RANK];
    int from_input;
} axes_state;

static onyx_status *axes_create(const onyx_ep_node *n, void **out) {
    axes_state *s = (axes_state *)calloc(1, sizeof *s);
    if (!s) return cu_host->error(ONYX_ERR_OUT_OF_MEMORY, "out of memory");
    const int64_t *a;
    size_t na;
    if (cu_host->attr_ints(n, "axes", &a, &na) && na <= CU_MAX_RANK) {
        memcpy(s->axes, a, na * sizeof *a);
        s->n = na;
    } else {
        s->from_input = cu_has_input(n, 1);
    }
    *out = s;
    return NULL;
}

static onyx_status *read_axes(cu_call *c, const axes_state *s, int64_t *axes, size_t *n) {
    onyx_ep_tensor t;
    if (s->from_input && cu_in(c, 1, &t)) return cu_host_ints(&t, axes, CU_MAX_RANK, n);
    memcpy(axes, s->axes, s->n * sizeof *axes);
    *n = s->n;
    return NULL;
}

static onyx_status *squeeze_compute(cu_call *c, void *sv) {
    onyx_ep_tensor x;
    CU_TRY_STATUS(cu_need(c, 0, 0, &x));
    int64_t axes[CU_MAX_RANK], dims[CU_MAX_RANK];
    size_t na;
    CU_TRY_STATUS(read_axes(c, (const axes_state *)sv, axes, &na));
    unsigned drop = 0;
    for (size_t i = 0; i < na; i++) {
        int64_t a = axes[i] < 0 ? axes[i] + x.rank : axes[i];
        if (a < 0 || a >= x.rank || x.dims[a] != 1)
            return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "Squeeze: axis %lld is not a dimension of size 1", (long long)axes[i]);
        drop |= 1u << a;
    }
    int r = 0;
    for (int d = 0; d < x.rank; d++)
        if (na ? !(drop >> d & 1) : x.dims[d] != 1) dims[r++] = x.dims[d];
    return copy_as(c, x, r, dims);
}

static onyx_status *unsqueeze_compute(cu_call *c, void *sv) {
    onyx_ep_tensor x;
    CU_TRY_STATUS(cu_need(c, 0, 0, &x));
    int64_t axes[CU_MAX_RANK], dims[CU_MAX_RANK];
    size_t na;
    CU_TRY_STATUS(read_axes(c, (const axes_state *)sv, axes, &na));
    int r = x.rank + (int)na;
    if (r > CU_MAX_RANK) return cu_host->error(ONYX_ERR_NOT_IMPLEMENTED, "Unsqueeze: rank %d", r);
    unsigned add = 0;
    for (size_t i = 0; i < na; i++) {
        int64_t a = axes[i] < 0 ? axes[i] + r : axes[i];
        if (a < 0 || a >= r || (add >> a & 1))
            return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "Unsqueeze: bad or repeated axis %lld", (long long)axes[i]);
        add |= 1u << a;
    }
    for (int d = 0, k = 0; d < r; d++) dims[d] = add >> d & 1 ? 1 : x.dims[k++];
    return copy_as(c, x, r, dims);
}

/* ---------------------------------------------------------------- Transpose */

static onyx_status *transpose_create(const onyx_ep_node *n, void **out) {
    axes_state *s = (axes_state *)calloc(1, sizeof *s);
    if (!s) return cu_host->error(ONYX_ERR_OUT_OF_MEMORY, "out of memory");
    const int64_t *p;
    size_t np;
    if (cu_host->attr_ints(n, "perm", &p, &np) && np <= CU_MAX_RANK) {
        memcpy(s->axes, p, np * sizeof *p);
        s->n = np;
    }
    *out = s;
    return NULL;
}

static onyx_status *transpose_compute(cu_call *c, void *sv) {
    const axes_state *s = (const axes_state *)sv;
    onyx_ep_tensor x, y;
    CU_TRY_STATUS(cu_need(c, 0, 0, &x));
    int64_t perm[CU_MAX_RANK], xstr[CU_MAX_RANK], dims[CU_MAX_RANK];
    if (s->n && (int)s->n != x.rank)
        return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "Transpose: perm has %zu entries for rank %d", s->n, x.rank);
    unsigned seen = 0;
    for (int d = 0; d < x.rank; d++) {
        perm[d] = s->n ? s->axes[d] : x.rank - 1 - d;
        if (perm[d] < 0 || perm[d] >= x.rank || (seen >> perm[d] & 1))
            return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "Transpose: perm is not a permutation");
        seen |= 1u << perm[d];
    }
    row_major_strides(x.dims, x.rank, xstr);
    gather_map m = {x.rank, {0}, {0}, 0};
    for (int d = 0; d < x.rank; d++) {
        dims[d] = m.dims[d] = x.dims[perm[d]];
        m.str[d] = xstr[perm[d]];
    }
    CU_TRY_STATUS(cu_out(c, 0, x.dtype, x.rank, dims, &y));
    return strided_copy(c->s, x.data, y.data, x.numel, elem_size(x.dtype), m);
}

/* ---------------------------------------------------------------- Concat */

static int claim_concat(const onyx_ep_node *n) {
    for (size_t k = 0; k < cu_host->node_input_count(n); k++)
        if (!cu_has_input(n, k) || !cu_in_type(n, k, 0)) return 0;
    return claim_movable(n);
}

static onyx_status *concat_create(const onyx_ep_node *n, void **out) { return int_attr_create(n, out, "axis", 0); }

static onyx_status *concat_compute(cu_call *c, void *st) {
    size_t n_in = cu_host->ctx_input_count(c->ctx);
    onyx_ep_tensor first, y;
    CU_TRY_STATUS(cu_need(c, 0, 0, &first));
    int axis = *(const int *)st;
    if (axis < 0) axis += first.rank;
    if (axis < 0 || axis >= first.rank) return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "Concat: axis out of range");
    int64_t dims[CU_MAX_RANK];
    memcpy(dims, first.dims, (size_t)first.rank * sizeof *dims);
    dims[axis] = 0;
    for (size_t k = 0; k < n_in; k++) {
        onyx_ep_tensor t;
        CU_TRY_STATUS(cu_need(c, k, first.dtype, &t));
        if (t.rank != first.rank) return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "Concat: input %zu has another rank", k);
        for (int d = 0; d < t.rank; d++)
            if (d != axis && t.dims[d] != first.dims[d])
                return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "Concat: input %zu differs on axis %d", k, d);
        dims[axis] += t.dims[axis];
    }
    CU_TRY_STATUS(cu_out(c, 0, first.dtype, first.rank, dims, &y));
    if (!y.numel) return NULL;
    size_t es = (size_t)elem_size(first.dtype);
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; d++) outer *= dims[d];
    for (int d = axis + 1; d < first.rank; d++) inner *= dims[d];
    size_t pitch = (size_t)(dims[axis] * inner) * es, at = 0;
    for (size_t k = 0; k < n_in; k++) {
        onyx_ep_tensor t;
        cu_in(c, k, &t);
        size_t w = (size_t)(t.dims[axis] * inner) * es;
        if (w)
            CU_TRY(cudaMemcpy2DAsync((char *)y.data + at, pitch, t.data, w, w, (size_t)outer, cudaMemcpyDeviceToDevice, c->s));
        at += w;
    }
    return NULL;
}

/* ---------------------------------------------------------------- Gather */

template <typename T, typename I>
__global__ void k_gather(const T *x, const I *idx, T *y, int64_t n, int64_t nidx, int64_t axis_len, int64_t inner,
                         int *bad) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        int64_t r = i % inner, j = (i / inner) % nidx, o = i / inner / nidx;
        int64_t k = (int64_t)idx[j];
        if (k < 0) k += axis_len;
        if (k < 0 || k >= axis_len) {
            *bad = 1;
            y[i] = (T)0;
        } else {
            y[i] = x[(o * axis_len + k) * inner + r];
        }
    }
}

static int claim_gather(const onyx_ep_node *n) {
    return claim_movable(n) && (cu_in_type(n, 1, ONYX_INT64) || cu_in_type(n, 1, ONYX_INT32));
}

template <typename T>
static void launch_gather(cudaStream_t s, const void *x, const onyx_ep_tensor &idx, void *y, int64_t n, int64_t axis_len,
                          int64_t inner) {
    if (idx.dtype == ONYX_INT64)
        k_gather<T, long long><<<blocks_for(n), THREADS, 0, s>>>((const T *)x, (const long long *)idx.data, (T *)y, n,
                                                                  idx.numel, axis_len, inner, cu_dev.bad_index);
    else
        k_gather<T, int><<<blocks_for(n), THREADS, 0, s>>>((const T *)x, (const int *)idx.data, (T *)y, n, idx.numel,
                                                            axis_len, inner, cu_dev.bad_index);
}

static onyx_status *gather_compute(cu_call *c, void *st) {
    onyx_ep_tensor x, idx, y;
    CU_TRY_STATUS(cu_need(c, 0, 0, &x));
    CU_TRY_STATUS(cu_need(c, 1, 0, &idx));
    if (idx.dtype != ONYX_INT64 && idx.dtype != ONYX_INT32)
        return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "Gather: indices must be int32 or int64");
    int axis = *(const int *)st;
    if (axis < 0) axis += x.rank;
    if (axis < 0 || axis >= x.rank) return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "Gather: axis out of range");
    int rank = x.rank - 1 + idx.rank;
    if (rank > CU_MAX_RANK) return cu_host->error(ONYX_ERR_NOT_IMPLEMENTED, "Gather: output rank %d", rank);
    int64_t dims[CU_MAX_RANK], inner = 1;
    int r = 0;
    for (int d = 0; d < axis; d++) dims[r++] = x.dims[d];
    for (int d = 0; d < idx.rank; d++) dims[r++] = idx.dims[d];
    for (int d = axis + 1; d < x.rank; d++) dims[r++] = x.dims[d], inner *= x.dims[d];
    CU_TRY_STATUS(cu_out(c, 0, x.dtype, rank, dims, &y));
    if (!y.numel) return NULL;
    if (!x.dims[axis]) return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "Gather: indices into an empty axis");
    switch (elem_size(x.dtype)) {
    case 1: launch_gather<uint8_t>(c->s, x.data, idx, y.data, y.numel, x.dims[axis], inner); break;
    case 2: launch_gather<uint16_t>(c->s, x.data, idx, y.data, y.numel, x.dims[axis], inner); break;
    case 4: launch_gather<uint32_t>(c->s, x.data, idx, y.data, y.numel, x.dims[axis], inner); break;
    default: launch_gather<uint64_t>(c->s, x.data, idx, y.data, y.numel, x.dims[axis], inner); break;
    }
    CU_LAUNCHED();
    return NULL;
}

/* ---------------------------------------------------------------- Slice */

static int claim_slice(const onyx_ep_node *n) { return claim_movable(n) && cu_host->node_opset(n) >= 10; }

static onyx_status *slice_compute(cu_call *c, void *st) {
    onyx_ep_tensor x, t, y;
    CU_TRY_STATUS(cu_need(c, 0, 0, &x));
    int64_t starts[CU_MAX_RANK], ends[CU_MAX_RANK], axes[CU_MAX_RANK], steps[CU_MAX_RANK];
    size_t ns, ne, na = 0, nst = 0;
    CU_TRY_STATUS(cu_need(c, 1, 0, &t));
    CU_TRY_STATUS(cu_host_ints(&t, starts, CU_MAX_RANK, &ns));
    CU_TRY_STATUS(cu_need(c, 2, 0, &t));
    CU_TRY_STATUS(cu_host_ints(&t, ends, CU_MAX_RANK, &ne));
    if (cu_in(c, 3, &t)) CU_TRY_STATUS(cu_host_ints(&t, axes, CU_MAX_RANK, &na));
    if (cu_in(c, 4, &t)) CU_TRY_STATUS(cu_host_ints(&t, steps, CU_MAX_RANK, &nst));
    if (ne != ns || (na && na != ns) || (nst && nst != ns))
        return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "Slice: starts, ends, axes and steps differ in length");
    int64_t b[CU_MAX_RANK], step[CU_MAX_RANK], dims[CU_MAX_RANK], xstr[CU_MAX_RANK];
    for (int d = 0; d < x.rank; d++) b[d] = 0, step[d] = 1, dims[d] = x.dims[d];
    unsigned seen = 0;
    for (size_t i = 0; i < ns; i++) {
        int64_t a = na ? axes[i] : (int64_t)i;
        if (a < 0) a += x.rank;
        if (a < 0 || a >= x.rank || (seen >> a & 1))
            return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "Slice: bad or repeated axis");
        seen |= 1u << a;
        int64_t s = nst ? steps[i] : 1, len = x.dims[a], lo = starts[i], hi = ends[i];
        if (!s) return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "Slice: step 0");
        if (!len) {
            dims[a] = 0;
            b[a] = 0;
            step[a] = 1;
            continue;
        }
        if (lo < 0) lo += len;
        if (hi < 0) hi += len;
        if (s > 0) {
            lo = lo < 0 ? 0 : lo > len ? len : lo;
            hi = hi < 0 ? 0 : hi > len ? len : hi;
            dims[a] = hi > lo ? (hi - lo + s - 1) / s : 0;
        } else {
            lo = lo < 0 ? 0 : lo > len - 1 ? len - 1 : lo;
            hi = hi < -1 ? -1 : hi > len - 1 ? len - 1 : hi;
            dims[a] = lo > hi ? (lo - hi - s - 1) / -s : 0;
        }
        b[a] = lo;
        step[a] = s;
    }
    CU_TRY_STATUS(cu_out(c, 0, x.dtype, x.rank, dims, &y));
    row_major_strides(x.dims, x.rank, xstr);
    gather_map m = {x.rank, {0}, {0}, 0};
    for (int d = 0; d < x.rank; d++) {
        m.dims[d] = dims[d];
        m.str[d] = xstr[d] * step[d];
        m.base += b[d] * xstr[d];
    }
    return strided_copy(c->s, x.data, y.data, y.numel, elem_size(x.dtype), m);
}

/* ---------------------------------------------------------------- Expand */

static onyx_status *expand_compute(cu_call *c, void *st) {
    onyx_ep_tensor x, sh, y;
    CU_TRY_STATUS(cu_need(c, 0, 0, &x));
    CU_TRY_STATUS(cu_need(c, 1, 0, &sh));
    int64_t want[CU_MAX_RANK];
    size_t n;
    CU_TRY_STATUS(cu_host_ints(&sh, want, CU_MAX_RANK, &n));
    onyx_ep_tensor shape_t = x;
    shape_t.rank = (int32_t)n;
    shape_t.dims = want;
    const onyx_ep_tensor *in[2] = {&x, &shape_t};
    cu_strides s;
    int64_t total;
    CU_TRY_STATUS(cu_broadcast(2, in, &s, &total));
    CU_TRY_STATUS(cu_out(c, 0, x.dtype, s.rank, s.dims, &y));
    gather_map m = {s.rank, {0}, {0}, 0};
    for (int d = 0; d < s.rank; d++) m.dims[d] = s.dims[d], m.str[d] = s.str[0][d];
    return strided_copy(c->s, x.data, y.data, total, elem_size(x.dtype), m);
}

static onyx_status *gather_create(const onyx_ep_node *n, void **out) { return int_attr_create(n, out, "axis", 0); }

/* ---------------------------------------------------------------- Pad */

enum pad_mode { PAD_CONSTANT, PAD_EDGE, PAD_REFLECT, PAD_WRAP };

typedef struct pad_map {
    int rank, mode;
    int64_t out[CU_MAX_RANK], in[CU_MAX_RANK], begin[CU_MAX_RANK];
} pad_map;

/* the input coordinate an output coordinate c (relative to the input's
 * start) reads outside [0, n): edge clamps, reflect mirrors without
 * repeating the edge (numpy's "reflect", periodic for wide pads), wrap
 * repeats the axis */
__device__ __forceinline__ int64_t pad_source(int64_t c, int64_t n, int mode) {
    if (c >= 0 && c < n) return c;
    if (mode == PAD_EDGE) return c < 0 ? 0 : n - 1;
    if (mode == PAD_WRAP) return ((c % n) + n) % n;
    if (n == 1) return 0;
    int64_t p = 2 * (n - 1);
    c = ((c % p) + p) % p;
    return c < n ? c : p - c;
}

template <typename T>
__global__ void k_pad(const T *x, T *y, int64_t n, pad_map m, T value) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        int64_t rem = i, off = 0, stride = 1;
        bool inside = true;
        for (int d = m.rank - 1; d >= 0; d--) {
            int64_t c = rem % m.out[d] - m.begin[d];
            rem /= m.out[d];
            if (m.mode == PAD_CONSTANT) inside = inside && c >= 0 && c < m.in[d];
            else c = pad_source(c, m.in[d], m.mode);
            off += c * stride;
            stride *= m.in[d];
        }
        y[i] = inside ? x[off] : value;
    }
}

static int pad_mode_of(const onyx_ep_node *n) {
    const char *mode = cu_attr_string(n, "mode", "constant");
    return !strcmp(mode, "constant") ? PAD_CONSTANT : !strcmp(mode, "edge") ? PAD_EDGE
         : !strcmp(mode, "reflect") ? PAD_REFLECT : !strcmp(mode, "wrap") ? PAD_WRAP : -1;
}

static int claim_pad(const onyx_ep_node *n) {
    return claim_movable(n) && cu_host->node_opset(n) >= 11 && pad_mode_of(n) >= 0;
}

static onyx_status *pad_create(const onyx_ep_node *n, void **out) { return int_attr_create_value(out, pad_mode_of(n)); }

static onyx_status *pad_compute(cu_call *c, void *st) {
    onyx_ep_tensor x, t, v, y;
    CU_TRY_STATUS(cu_need(c, 0, 0, &x));
    CU_TRY_STATUS(cu_need(c, 1, 0, &t));
    int64_t pads[2 * CU_MAX_RANK], axes[CU_MAX_RANK];
    size_t np, na = 0;
    CU_TRY_STATUS(cu_host_ints(&t, pads, 2 * CU_MAX_RANK, &np));
    if (cu_in(c, 3, &t)) CU_TRY_STATUS(cu_host_ints(&t, axes, CU_MAX_RANK, &na));
    else for (int d = 0; d < x.rank; d++) axes[na++] = d;
    if (np != 2 * na) return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "Pad: %zu pads for %zu axes", np, na);
    pad_map m = {x.rank, *(const int *)st, {0}, {0}, {0}};
    int64_t end[CU_MAX_RANK] = {0};
    for (int d = 0; d < x.rank; d++) m.in[d] = x.dims[d];
    for (size_t i = 0; i < na; i++) {
        int64_t a = axes[i] < 0 ? axes[i] + x.rank : axes[i];
        if (a < 0 || a >= x.rank) return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "Pad: axis %lld out of range", (long long)axes[i]);
        m.begin[a] = pads[i];
        end[a] = pads[i + na];
    }
    for (int d = 0; d < x.rank; d++) {
        m.out[d] = x.dims[d] + m.begin[d] + end[d];
        if (m.out[d] < 0) return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "Pad: negative output dimension on axis %d", d);
        if (m.mode != PAD_CONSTANT && m.out[d] > 0 && x.dims[d] == 0)
            return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "Pad: axis %d is empty, only constant mode can pad it", d);
    }
    /* the constant: input 2 on the host, of the data's type, else zero */
    uint64_t value = 0;
    int es = elem_size(x.dtype);
    if (cu_in(c, 2, &v)) {
        if (!v.on_host || v.dtype != x.dtype || v.numel != 1)
            return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "Pad: constant_value must be one value of the data's type");
        memcpy(&value, v.data, (size_t)es);
    }
    CU_TRY_STATUS(cu_out(c, 0, x.dtype, x.rank, m.out, &y));
    if (!y.numel) return NULL;
    unsigned b = blocks_for(y.numel);
    switch (es) {
    case 1: k_pad<uint8_t><<<b, THREADS, 0, c->s>>>((const uint8_t *)x.data, (uint8_t *)y.data, y.numel, m, (uint8_t)value); break;
    case 2: k_pad<uint16_t><<<b, THREADS, 0, c->s>>>((const uint16_t *)x.data, (uint16_t *)y.data, y.numel, m, (uint16_t)value); break;
    case 4: k_pad<uint32_t><<<b, THREADS, 0, c->s>>>((const uint32_t *)x.data, (uint32_t *)y.data, y.numel, m, (uint32_t)value); break;
    default: k_pad<uint64_t><<<b, THREADS, 0, c->s>>>((const uint64_t *)x.data, (uint64_t *)y.data, y.numel, m, value); break;
    }
    CU_LAUNCHED();
    return NULL;
}

const cu_op cu_ops_tensor[] = {
    {"", "Identity", claim_movable, NULL, identity_compute, 0},
    {"", "Dropout", claim_dropout, NULL, identity_compute, 6},
    {"", "Reshape", claim_movable, reshape_create, reshape_compute, 2},
    {"", "Flatten", claim_movable, flatten_create, flatten_compute, 0},
    {"", "Squeeze", claim_movable, axes_create, squeeze_compute, 2},
    {"", "Unsqueeze", claim_movable, axes_create, unsqueeze_compute, 2},
    {"", "Transpose", claim_movable, transpose_create, transpose_compute, 0},
    {"", "Concat", claim_concat, concat_create, concat_compute, 0},
    {"", "Gather", claim_gather, gather_create, gather_compute, 0},
    {"", "Slice", claim_slice, NULL, slice_compute, 0x1e},
    {"", "Expand", claim_movable, NULL, expand_compute, 2},
    {"", "Pad", claim_pad, pad_create, pad_compute, 0xe},
    {NULL, NULL, NULL, NULL, NULL, 0},
};
