/* numpy.matmul shape rules, shared by the matmul-like kernels (linalg.h). */
#include "providers/cpu/kernels/linalg.h"

#include "providers/cpu/kernel.h"

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
