/* numpy.matmul shape rules, shared by the matmul-like kernels (linalg.h). */
#include "providers/cpu/kernels/math/linalg.h"

#include "providers/cpu/kernel.h"
#include "providers/cpu/gemm/gemm.h"

/* Matrix-index strides of one operand's batch dims (right-aligned to nb). */
static int64_t batch_strides(const int64_t *d, int n, int nb, int64_t *str) {
    int64_t run = 1;
    for (int i = nb - 1; i >= 0; i--) {
        int k = i - (nb - n);
        int64_t dim = k >= 0 ? d[k] : 1;
        str[i] = dim == 1 ? 0 : run;
        run *= dim;
    }
    return run;
}

onyx_status *la_matmul_shape(const char *op, const int64_t *a, int ra, const int64_t *b, int rb, bool ta,
                             bool tb, la_mm_shape *s) {
    char sa[200], sb[200];
    if (ra < 1 || rb < 1)
        return ONYX_INVALID_ARG("%s: inputs must have rank >= 1, got A %s and B %s", op,
                                onyx_shape_str(a, ra, sa, sizeof sa), onyx_shape_str(b, rb, sb, sizeof sb));
    memset(s, 0, sizeof *s);
    s->ta = ra >= 2 && ta;
    s->tb = rb >= 2 && tb;
    s->M = ra == 1 ? 1 : a[ra - (s->ta ? 1 : 2)];
    s->K = a[ra - (s->ta ? 2 : 1)];
    int64_t kb = rb == 1 ? b[0] : b[rb - (s->tb ? 1 : 2)];
    s->N = rb == 1 ? 1 : b[rb - (s->tb ? 2 : 1)];
    if (kb != s->K)
        return ONYX_INVALID_ARG("%s: A %s and B %s do not match: op(A) has %lld columns, op(B) has %lld rows "
                                "(transA=%d, transB=%d)",
                                op, onyx_shape_str(a, ra, sa, sizeof sa), onyx_shape_str(b, rb, sb, sizeof sb),
                                (long long)s->K, (long long)kb, s->ta, s->tb);
    int na = ra > 2 ? ra - 2 : 0, nbb = rb > 2 ? rb - 2 : 0;
    onyx_status *st = onyx_broadcast_shapes(a, na, b, nbb, s->bdims, &s->nb);
    if (st)
        return onyx_error_wrap(st, "%s: batch dims of A %s and B %s: ", op, onyx_shape_str(a, ra, sa, sizeof sa),
                               onyx_shape_str(b, rb, sb, sizeof sb));
    s->a_mats = batch_strides(a, na, s->nb, s->a_str);
    s->b_mats = batch_strides(b, nbb, s->nb, s->b_str);
    s->rank = s->nb;
    memcpy(s->dims, s->bdims, sizeof(int64_t) * (size_t)s->nb);
    if (ra > 1) s->dims[s->rank++] = s->M;
    if (rb > 1) s->dims[s->rank++] = s->N;
    ONYX_TRY(onyx_shape_numel(s->bdims, s->nb, &s->batches));
    int64_t numel;
    return onyx_shape_numel(s->dims, s->rank, &numel);
}

/* ------------------------------------------------------------ batched float matmul */

/* Below this many multiply-adds per matrix, the batches of a batched
 * matmul run in parallel instead of splitting each GEMM. */
#define LA_SMALL_MATRIX_WORK (1 << 21)

typedef struct la_mm_job {
    const la_mm_shape *s;
    float alpha;
    const float *A, *B;
    float *Y;
    onyx_packed_mat *const *packed;   /* or NULL */
    onyx_threadpool *tp;              /* per matrix (NULL when the batch is split) */
    la_error err;
} la_mm_job;

static onyx_status *la_mm_one(la_mm_job *j, int64_t t) {
    const la_mm_shape *s = j->s;
    int64_t ia, ib;
    la_mm_batch_index(s, t, &ia, &ib);
    size_t M = (size_t)s->M, N = (size_t)s->N, K = (size_t)s->K;
    const float *a = j->A + ia * s->M * s->K;
    float *y = j->Y + t * s->M * s->N;
    size_t lda = s->ta ? M : K, ldb = s->tb ? K : N;
    if (j->packed) return onyx_sgemm_packed(s->ta, M, j->alpha, a, lda, j->packed[ib], 0.0f, y, N, NULL, j->tp);
    return onyx_sgemm(s->ta, s->tb, M, N, K, j->alpha, a, lda, j->B + ib * s->K * s->N, ldb, 0.0f, y, N, j->tp);
}

static void la_mm_range(void *arg, size_t begin, size_t end) {
    la_mm_job *j = arg;
    for (size_t t = begin; t < end && !la_error_any(&j->err); t++) la_error_set(&j->err, la_mm_one(j, (int64_t)t));
}

onyx_status *la_matmul_f32(const la_mm_shape *s, float alpha, const float *A, const float *B, float *Y,
                           onyx_packed_mat *const *packed, onyx_threadpool *tp) {
    la_mm_job j = {.s = s, .alpha = alpha, .A = A, .B = B, .Y = Y, .packed = packed, .tp = tp};
    atomic_init(&j.err.st, NULL);
    if (s->batches == 0 || s->M == 0 || s->N == 0) return NULL;
    /* one B for every batch and A laid out like the output: one tall GEMM */
    if (s->b_mats == 1 && s->a_mats == s->batches && !s->ta) {
        la_mm_shape flat = *s;
        flat.M = s->M * s->batches;
        flat.nb = 0;
        flat.batches = 1;
        j.s = &flat;
        return la_mm_one(&j, 0);
    }
    double work = (double)s->M * (double)s->N * (double)s->K;
    if (onyx_threadpool_threads(tp) > 1 && s->batches > 1 && work < LA_SMALL_MATRIX_WORK) {
        j.tp = NULL;
        onyx_parallel_for(tp, (size_t)s->batches, 1, la_mm_range, &j);
    } else {
        la_mm_range(&j, 0, (size_t)s->batches);
    }
    return la_error_take(&j.err);
}
