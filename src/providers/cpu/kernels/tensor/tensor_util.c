/* Helpers shared by the data-movement kernels: element views, the strided
 * N-d copy engine, index readers and inference helpers (tensor_util.h). */
#include "providers/cpu/kernels/tensor/tensor_util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ element views */

static onyx_status *view_init(const onyx_value *v, tk_view *out) {
    memset(out, 0, sizeof *out);
    if (!onyx_is_tensor(v)) return ONYX_INVALID_ARG("expected a tensor value");
    out->dtype = v->dtype;
    out->n = v->numel;
    if (v->dtype == ONYX_STRING) {
        out->str = true;
        out->es = sizeof(onyx_string);
        out->bits = 8 * sizeof(onyx_string);
    } else {
        unsigned bits = onyx_dtype(v->dtype)->bits;
        if (!bits) return ONYX_NOT_IMPLEMENTED("unsupported element type %d", v->dtype);
        out->bits = (uint8_t)bits;
        out->es = bits < 8 ? 1 : bits / 8;
    }
    size_t need;
    if (!onyx_dtype_nbytes(v->dtype, v->numel, &need) || v->nbytes < need || (need && !v->data))
        return ONYX_INVALID_ARG("%s tensor holds %zu bytes, fewer than its %" PRId64
                                " elements need",
                                onyx_dtype_name(v->dtype), v->nbytes, v->numel);
    out->p = v->data;
    return NULL;
}

onyx_status *tk_view_in(const onyx_value *v, tk_view *out) {
    ONYX_TRY(view_init(v, out));
    if (out->bits >= 8 || out->n == 0) return NULL;
    uint8_t *codes = malloc((size_t)out->n);
    if (!codes) return ONYX_OOM();
    for (int64_t i = 0; i < out->n; i++) codes[i] = tk_get_packed(v->data, i, out->bits);
    out->p = codes;
    out->tmp = true;
    return NULL;
}

onyx_status *tk_view_out(onyx_value *v, tk_view *out) {
    ONYX_TRY(view_init(v, out));
    if (out->bits >= 8 || out->n == 0) return NULL;
    uint8_t *codes = calloc((size_t)out->n, 1);
    if (!codes) return ONYX_OOM();
    out->p = codes;
    out->tmp = true;
    return NULL;
}

void tk_view_commit(tk_view *view, onyx_value *v) {
    if (view->tmp) {
        memset(v->data, 0, v->nbytes);
        for (int64_t i = 0; i < view->n; i++) tk_set_packed(v->data, i, view->bits, view->p[i]);
    }
    tk_view_release(view);
}

void tk_view_release(tk_view *view) {
    if (view->tmp) free(view->p);
    view->tmp = false;
    view->p = NULL;
}

onyx_status *tk_view_finish(tk_view *src, tk_view *dst, onyx_value *y, onyx_status *st) {
    if (src) tk_view_release(src);
    if (dst) {
        if (!st)
            tk_view_commit(dst, y);
        else
            tk_view_release(dst);
    }
    return st;
}

bool tk_string_assign(onyx_string *dst, const onyx_string *src) {
    size_t len = src->data ? src->len : 0;
    char *p = malloc(len + 1);
    if (!p) return false;
    if (len) memcpy(p, src->data, len);
    p[len] = 0;
    free(dst->data);
    dst->data = p;
    dst->len = len;
    return true;
}

onyx_status *tk_cells_copy(const tk_view *v, void *dst, const void *src, int64_t n) {
    if (n <= 0) return NULL;
    if (!v->str) {
        memcpy(dst, src, (size_t)n * v->es);
        return NULL;
    }
    onyx_string *d = dst;
    const onyx_string *s = src;
    for (int64_t i = 0; i < n; i++)
        if (!tk_string_assign(&d[i], &s[i])) return ONYX_OOM();
    return NULL;
}

onyx_status *tk_cells_fill(const tk_view *v, void *dst, const void *cell, int64_t n) {
    if (n <= 0) return NULL;
    if (v->str) {
        onyx_string *d = dst;
        for (int64_t i = 0; i < n; i++)
            if (!tk_string_assign(&d[i], cell)) return ONYX_OOM();
        return NULL;
    }
    uint8_t *d = dst;
    switch (v->es) {
    case 1: memset(d, *(const uint8_t *)cell, (size_t)n); break;
    case 2: {
        uint16_t c;
        memcpy(&c, cell, 2);
        for (int64_t i = 0; i < n; i++) ((uint16_t *)d)[i] = c;
        break;
    }
    case 4: {
        uint32_t c;
        memcpy(&c, cell, 4);
        for (int64_t i = 0; i < n; i++) ((uint32_t *)d)[i] = c;
        break;
    }
    case 8: {
        uint64_t c;
        memcpy(&c, cell, 8);
        for (int64_t i = 0; i < n; i++) ((uint64_t *)d)[i] = c;
        break;
    }
    default:
        for (int64_t i = 0; i < n; i++) memcpy(d + (size_t)i * v->es, cell, v->es);
    }
    return NULL;
}

size_t tk_cell_size(int dtype) {
    if (dtype == ONYX_STRING) return sizeof(onyx_string);
    unsigned bits = onyx_dtype(dtype)->bits;
    return bits < 8 ? 1 : bits / 8;
}

/* ---------------------------------------------------------- N-d copy engine */

/* Small typed cell types so the inner loops move whole words. */
typedef struct {
    uint64_t a, b;
} tk_u128;

enum { MODE_RUN, MODE_FILL, MODE_STRIDED, MODE_BLOCK };

#define TK_BLOCK 16              /* transpose tile edge (elements) */
#define TK_UNIT_BYTES (64 << 10) /* target bytes per parallel work unit */

typedef struct copy_job {
    const tk_plan *p;
    int outer; /* number of leading dims walked by the odometer */
    int mode;
    size_t es;
    uint8_t *dst;
    const uint8_t *src;
    int64_t n;     /* inner extent (last dim) */
    int64_t chunk; /* inner elements per unit (RUN/FILL/STRIDED), rows per unit (BLOCK) */
    int64_t per;   /* units per outer position */
    /* BLOCK mode: the two inner dims are [A (src stride 1), B (dst stride 1)] */
    int64_t a_n, a_dst, b_src;
} copy_job;

static bool stride_mergeable(int64_t outer_stride, int64_t inner_stride, int64_t inner_dim) {
    int64_t prod;
    return !__builtin_mul_overflow(inner_stride, inner_dim, &prod) && prod == outer_stride;
}

/* Drop unit dims and merge dims that are contiguous in both src and dst. */
static void plan_simplify(tk_plan *p) {
    int r = 0;
    for (int k = 0; k < p->rank; k++) {
        if (p->dims[k] == 1) continue;
        p->dims[r] = p->dims[k];
        p->src[r] = p->src[k];
        p->dst[r] = p->dst[k];
        r++;
    }
    int m = 0;
    for (int k = 0; k < r; k++) {
        if (m > 0 && stride_mergeable(p->src[m - 1], p->src[k], p->dims[k]) &&
            stride_mergeable(p->dst[m - 1], p->dst[k], p->dims[k])) {
            p->dims[m - 1] *= p->dims[k];
            p->src[m - 1] = p->src[k];
            p->dst[m - 1] = p->dst[k];
            continue;
        }
        p->dims[m] = p->dims[k];
        p->src[m] = p->src[k];
        p->dst[m] = p->dst[k];
        m++;
    }
    p->rank = m;
}

/* Move dim k to position rank-2 (iteration order does not change a copy). */
static void plan_move_to_second_last(tk_plan *p, int k) {
    int last = p->rank - 1;
    int64_t d = p->dims[k], s = p->src[k], t = p->dst[k];
    for (int i = k; i < last - 1; i++) {
        p->dims[i] = p->dims[i + 1];
        p->src[i] = p->src[i + 1];
        p->dst[i] = p->dst[i + 1];
    }
    p->dims[last - 1] = d;
    p->src[last - 1] = s;
    p->dst[last - 1] = t;
}

#define TK_STRIDED_LOOP(T)                                                                         \
    do {                                                                                           \
        T *d_ = (T *)d;                                                                            \
        const T *s_ = (const T *)s;                                                                \
        for (int64_t i = 0; i < cnt; i++) d_[i * dst_stride] = s_[i * src_stride];                 \
    } while (0)

static void strided_cells(size_t es, uint8_t *d, const uint8_t *s, int64_t cnt, int64_t dst_stride,
                          int64_t src_stride) {
    switch (es) {
    case 1: TK_STRIDED_LOOP(uint8_t); break;
    case 2: TK_STRIDED_LOOP(uint16_t); break;
    case 4: TK_STRIDED_LOOP(uint32_t); break;
    case 8: TK_STRIDED_LOOP(uint64_t); break;
    case 16: TK_STRIDED_LOOP(tk_u128); break;
    default:
        for (int64_t i = 0; i < cnt; i++)
            memcpy(d + i * dst_stride * (int64_t)es, s + i * src_stride * (int64_t)es, es);
    }
}

/* Rows [r0, r1) of an A x B block: d[i*a_dst + j] = s[i + j*b_src]. */
#define TK_BLOCK_LOOP(T)                                                                           \
    do {                                                                                           \
        T *d_ = (T *)d;                                                                            \
        const T *s_ = (const T *)s;                                                                \
        for (int64_t i0 = r0; i0 < r1; i0 += TK_BLOCK) {                                           \
            int64_t i1 = i0 + TK_BLOCK < r1 ? i0 + TK_BLOCK : r1;                                  \
            for (int64_t j0 = 0; j0 < nb; j0 += TK_BLOCK) {                                        \
                int64_t j1 = j0 + TK_BLOCK < nb ? j0 + TK_BLOCK : nb;                              \
                for (int64_t i = i0; i < i1; i++)                                                  \
                    for (int64_t j = j0; j < j1; j++) d_[i * a_dst + j] = s_[i + j * b_src];       \
            }                                                                                      \
        }                                                                                          \
    } while (0)

#ifdef __SSE2__
#include <emmintrin.h>
/* 4-byte cells: 4x4 register transposes inside each tile. */
static void block_transpose4(uint32_t *d, const uint32_t *s, int64_t r0, int64_t r1, int64_t nb,
                             int64_t a_dst, int64_t b_src) {
    for (int64_t i0 = r0; i0 < r1; i0 += TK_BLOCK) {
        int64_t i1 = i0 + TK_BLOCK < r1 ? i0 + TK_BLOCK : r1;
        for (int64_t j0 = 0; j0 < nb; j0 += TK_BLOCK) {
            int64_t j1 = j0 + TK_BLOCK < nb ? j0 + TK_BLOCK : nb;
            int64_t i = i0;
            for (; i + 4 <= i1; i += 4) {
                int64_t j = j0;
                for (; j + 4 <= j1; j += 4) {
                    /* rows of the source block: r_k[c] = cell (i + c, j + k) */
                    __m128 r0v = _mm_loadu_ps((const float *)(s + i + (j + 0) * b_src));
                    __m128 r1v = _mm_loadu_ps((const float *)(s + i + (j + 1) * b_src));
                    __m128 r2v = _mm_loadu_ps((const float *)(s + i + (j + 2) * b_src));
                    __m128 r3v = _mm_loadu_ps((const float *)(s + i + (j + 3) * b_src));
                    _MM_TRANSPOSE4_PS(r0v, r1v, r2v, r3v);
                    _mm_storeu_ps((float *)(d + (i + 0) * a_dst + j), r0v);
                    _mm_storeu_ps((float *)(d + (i + 1) * a_dst + j), r1v);
                    _mm_storeu_ps((float *)(d + (i + 2) * a_dst + j), r2v);
                    _mm_storeu_ps((float *)(d + (i + 3) * a_dst + j), r3v);
                }
                for (int64_t c = 0; c < 4; c++)
                    for (int64_t jj = j; jj < j1; jj++)
                        d[(i + c) * a_dst + jj] = s[i + c + jj * b_src];
            }
            for (; i < i1; i++)
                for (int64_t j = j0; j < j1; j++) d[i * a_dst + j] = s[i + j * b_src];
        }
    }
}
#endif

static void block_transpose(size_t es, uint8_t *d, const uint8_t *s, int64_t r0, int64_t r1,
                            int64_t nb, int64_t a_dst, int64_t b_src) {
    switch (es) {
    case 1: TK_BLOCK_LOOP(uint8_t); break;
    case 2: TK_BLOCK_LOOP(uint16_t); break;
#ifdef __SSE2__
    case 4: block_transpose4((uint32_t *)d, (const uint32_t *)s, r0, r1, nb, a_dst, b_src); break;
#else
    case 4: TK_BLOCK_LOOP(uint32_t); break;
#endif
    case 8: TK_BLOCK_LOOP(uint64_t); break;
    default: TK_BLOCK_LOOP(tk_u128); break; /* es == 16: the block path is only chosen for these */
    }
}

static void fill_cells(size_t es, uint8_t *d, const uint8_t *cell, int64_t cnt) {
    tk_view v = {.es = es};
    tk_cells_fill(&v, d, cell, cnt); /* POD fill cannot fail */
}

/* One unit: outer offsets (elements) so/dof, inner piece c. */
static void copy_piece(const copy_job *j, int64_t so, int64_t dof, int64_t c) {
    const tk_plan *p = j->p;
    int last = p->rank - 1;
    size_t es = j->es;
    if (j->mode == MODE_BLOCK) {
        int64_t r0 = c * j->chunk, r1 = r0 + j->chunk < j->a_n ? r0 + j->chunk : j->a_n;
        block_transpose(es, j->dst + dof * (int64_t)es, j->src + so * (int64_t)es, r0, r1, j->n,
                        j->a_dst, j->b_src);
        return;
    }
    int64_t i0 = c * j->chunk;
    int64_t cnt = i0 + j->chunk < j->n ? j->chunk : j->n - i0;
    uint8_t *d = j->dst + (dof + i0 * p->dst[last]) * (int64_t)es;
    const uint8_t *s = j->src + (so + i0 * p->src[last]) * (int64_t)es;
    switch (j->mode) {
    case MODE_RUN: memcpy(d, s, (size_t)cnt * es); break;
    case MODE_FILL: fill_cells(es, d, s, cnt); break;
    default: strided_cells(es, d, s, cnt, p->dst[last], p->src[last]); break;
    }
}

static void copy_range(void *arg, size_t begin, size_t end) {
    const copy_job *j = arg;
    const tk_plan *p = j->p;
    int64_t idx[TK_MAX_ND];
    int64_t u = (int64_t)begin;
    int64_t o = u / j->per, c = u % j->per;
    int64_t so = 0, dof = 0;
    for (int k = j->outer - 1; k >= 0; k--) {
        idx[k] = o % p->dims[k];
        o /= p->dims[k];
        so += idx[k] * p->src[k];
        dof += idx[k] * p->dst[k];
    }
    for (; u < (int64_t)end; u++) {
        copy_piece(j, so, dof, c);
        if (++c < j->per) continue;
        c = 0;
        for (int k = j->outer - 1; k >= 0; k--) {
            so += p->src[k];
            dof += p->dst[k];
            if (++idx[k] < p->dims[k]) break;
            so -= p->src[k] * p->dims[k];
            dof -= p->dst[k] * p->dims[k];
            idx[k] = 0;
        }
    }
}

/* Strings: element by element with deep copies, on one thread. */
static onyx_status *copy_strings(const tk_plan *p, onyx_string *dst, const onyx_string *src) {
    int64_t idx[TK_MAX_ND] = {0};
    int64_t so = 0, dof = 0;
    for (;;) {
        if (!tk_string_assign(&dst[dof], &src[so])) return ONYX_OOM();
        int k = p->rank - 1;
        for (; k >= 0; k--) {
            so += p->src[k];
            dof += p->dst[k];
            if (++idx[k] < p->dims[k]) break;
            so -= p->src[k] * p->dims[k];
            dof -= p->dst[k] * p->dims[k];
            idx[k] = 0;
        }
        if (k < 0) return NULL;
    }
}

static void job_setup(copy_job *j, tk_plan *p) {
    int last = p->rank - 1;
    j->outer = last;
    j->n = p->dims[last];
    if (p->dst[last] == 1 && p->src[last] == 1)
        j->mode = MODE_RUN;
    else if (p->dst[last] == 1 && p->src[last] == 0)
        j->mode = MODE_FILL;
    else
        j->mode = MODE_STRIDED;
    /* A transpose: the source's unit-stride axis is not the destination's.
     * Walk that axis and the destination's innermost one in square tiles so
     * both sides touch whole cache lines. */
    if (j->mode == MODE_STRIDED && p->dst[last] == 1 && p->dims[last] >= 4 &&
        (j->es & (j->es - 1)) == 0 && j->es <= 16) {
        for (int k = 0; k < last; k++) {
            if (p->src[k] != 1 || p->dims[k] < 4) continue;
            plan_move_to_second_last(p, k);
            j->mode = MODE_BLOCK;
            j->outer = last - 1;
            j->a_n = p->dims[last - 1];
            j->a_dst = p->dst[last - 1];
            j->b_src = p->src[last];
            break;
        }
    }
}

onyx_status *tk_copy(onyx_threadpool *tp, const tk_view *view, tk_plan *plan, void *dst,
                     const void *src) {
    for (int k = 0; k < plan->rank; k++)
        if (plan->dims[k] == 0) return NULL;
    plan_simplify(plan);
    if (view->str) {
        if (plan->rank == 0) return tk_string_assign(dst, src) ? NULL : ONYX_OOM();
        return copy_strings(plan, dst, src);
    }
    size_t es = view->es;
    if (plan->rank == 0) {
        memcpy(dst, src, es);
        return NULL;
    }
    copy_job j = {.p = plan, .es = es, .dst = dst, .src = src};
    job_setup(&j, plan);
    int64_t outer_n = tk_numel(plan->dims, 0, j.outer);
    int64_t total_bytes = tk_numel(plan->dims, 0, plan->rank) * (int64_t)es;
    int threads = onyx_threadpool_threads(tp);
    if (j.mode == MODE_BLOCK) {
        /* units: bands of TK_BLOCK rows of the A axis */
        j.chunk = TK_BLOCK;
        j.per = (j.a_n + TK_BLOCK - 1) / TK_BLOCK;
    } else {
        int64_t unit = TK_UNIT_BYTES / (int64_t)es;
        j.chunk = threads > 1 && j.n > unit ? unit : j.n;
        j.per = (j.n + j.chunk - 1) / j.chunk;
    }
    int64_t units = outer_n * j.per;
    if (threads <= 1 || total_bytes < TK_PAR_MIN_BYTES || units < 2) {
        copy_range(&j, 0, (size_t)units);
        return NULL;
    }
    int64_t unit_bytes = total_bytes / units;
    int64_t grain = unit_bytes >= TK_UNIT_BYTES ? 1 : TK_UNIT_BYTES / (unit_bytes ? unit_bytes : 1);
    onyx_parallel_for(tp, (size_t)units, (size_t)grain, copy_range, &j);
    return NULL;
}

onyx_status *tk_copy_view(onyx_threadpool *tp, const tk_view *view, int rank, const int64_t *dims,
                          const int64_t *src_strides, void *dst, const void *src) {
    tk_plan p;
    p.rank = rank;
    int64_t s = 1;
    for (int k = rank - 1; k >= 0; k--) {
        p.dims[k] = dims[k];
        p.src[k] = src_strides[k];
        p.dst[k] = s;
        s = dims[k] ? s * dims[k] : s;
    }
    return tk_copy(tp, view, &p, dst, src);
}

typedef struct memcpy_job {
    uint8_t *dst;
    const uint8_t *src;
    size_t n, chunk;
} memcpy_job;

static void memcpy_range(void *arg, size_t begin, size_t end) {
    const memcpy_job *j = arg;
    size_t lo = begin * j->chunk, hi = end * j->chunk < j->n ? end * j->chunk : j->n;
    memcpy(j->dst + lo, j->src + lo, hi - lo);
}

void tk_memcpy(onyx_threadpool *tp, void *dst, const void *src, size_t n) {
    if (!n) return;
    if (onyx_threadpool_threads(tp) <= 1 || n < 4 * (size_t)TK_PAR_MIN_BYTES) {
        memcpy(dst, src, n);
        return;
    }
    memcpy_job j = {dst, src, n, TK_UNIT_BYTES * 4};
    onyx_parallel_for(tp, (n + j.chunk - 1) / j.chunk, 1, memcpy_range, &j);
}

/* ------------------------------------------------------------------ inputs */

onyx_status *tk_tensor_in(const onyx_kernel_ctx *ctx, size_t i, const char *what,
                          const onyx_value **out) {
    const onyx_value *v = tk_in(ctx, i);
    if (!v) return ONYX_INVALID_ARG("input %zu (%s) is required but missing", i, what);
    if (!onyx_is_tensor(v)) return ONYX_INVALID_ARG("input %zu (%s) must be a tensor", i, what);
    *out = v;
    return NULL;
}

onyx_status *tk_opt_tensor_in(const onyx_kernel_ctx *ctx, size_t i, const char *what,
                              const onyx_value **out) {
    const onyx_value *v = tk_in(ctx, i);
    if (v && !onyx_is_tensor(v))
        return ONYX_INVALID_ARG("input %zu (%s) must be a tensor", i, what);
    *out = v;
    return NULL;
}

const char *tk_shape(const onyx_value *v, char *buf, size_t len) {
    return onyx_shape_str(v->dims, v->rank, buf, len);
}


onyx_status *tk_read_scalar_int(const onyx_value *v, const char *what, int64_t *out) {
    if (!onyx_is_tensor(v)) return ONYX_INVALID_ARG("%s must be a tensor", what);
    if (!tk_is_index_type(v->dtype))
        return ONYX_INVALID_ARG("%s must be an int64 (or int32) tensor, got %s", what,
                                onyx_dtype_name(v->dtype));
    if (v->numel != 1 || !v->data) {
        char sb[128];
        return ONYX_INVALID_ARG("%s must hold exactly one value, got shape %s", what,
                                tk_shape(v, sb, sizeof sb));
    }
    *out = tk_index_at(v, 0);
    return NULL;
}

/* "[1,2]" multi-index of flat position i in dims. */
static const char *multi_index(const int64_t *dims, int rank, int64_t i, char *buf, size_t len) {
    int64_t idx[ONYX_MAX_RANK];
    for (int k = rank - 1; k >= 0; k--) {
        idx[k] = dims[k] ? i % dims[k] : 0;
        i = dims[k] ? i / dims[k] : 0;
    }
    return onyx_shape_str(idx, rank, buf, len);
}

onyx_status *tk_check_indices(const onyx_value *idx, const char *what, int64_t dim,
                              const char *dim_desc, int64_t *out) {
    if (!tk_is_index_type(idx->dtype))
        return ONYX_INVALID_ARG("%s must be int32 or int64, got %s", what,
                                onyx_dtype_name(idx->dtype));
    if (idx->numel && !idx->data) return ONYX_INVALID_ARG("%s has no data", what);
    for (int64_t i = 0; i < idx->numel; i++) {
        int64_t v = tk_index_at(idx, i);
        if (v < -dim || v >= dim) {
            char pos[200];
            return ONYX_INVALID_ARG("%s%s = %" PRId64 " is out of range [%" PRId64 ", %" PRId64
                                    "] for %s of size %" PRId64,
                                    what, multi_index(idx->dims, idx->rank, i, pos, sizeof pos), v,
                                    -dim, dim - 1, dim_desc, dim);
        }
        if (out) out[i] = v < 0 ? v + dim : v;
    }
    return NULL;
}


