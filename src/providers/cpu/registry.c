/* The CPU kernel registry: every family table from kernels/families.h,
 * indexed once (lazily, thread-safe) by (domain, op type). */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "providers/cpu/kernel.h"

#define ONYX_FAMILY(name) extern const onyx_op_def onyx_ops_##name[];
#include "providers/cpu/kernels/families.h"
#undef ONYX_FAMILY

static const onyx_op_def *const families[] = {
#define ONYX_FAMILY(name) onyx_ops_##name,
#include "providers/cpu/kernels/families.h"
#undef ONYX_FAMILY
};

static const onyx_op_def **all_defs;
static size_t n_defs;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static const char *canonical_domain(const char *d) {
    if (!d || !strcmp(d, "ai.onnx")) return "";
    return d;
}

static int cmp_def(const void *pa, const void *pb) {
    const onyx_op_def *a = *(const onyx_op_def *const *)pa, *b = *(const onyx_op_def *const *)pb;
    int c = strcmp(canonical_domain(a->domain), canonical_domain(b->domain));
    if (c) return c;
    c = strcmp(a->op_type, b->op_type);
    if (c) return c;
    return a->since_version - b->since_version;
}

static void build_index(void) {
    size_t n = 0;
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
        for (const onyx_op_def *d = families[f]; d->op_type; d++) n++;
    all_defs = malloc((n ? n : 1) * sizeof *all_defs);
    if (!all_defs) return;
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
        for (const onyx_op_def *d = families[f]; d->op_type; d++) all_defs[n_defs++] = d;
    qsort(all_defs, n_defs, sizeof *all_defs, cmp_def);
}

/* First index whose (domain, op) >= the key. */
static size_t lower_bound(const char *domain, const char *op) {
    size_t lo = 0, hi = n_defs;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(canonical_domain(all_defs[mid]->domain), domain);
        if (!c) c = strcmp(all_defs[mid]->op_type, op);
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static bool same_op(const onyx_op_def *d, const char *domain, const char *op) {
    return !strcmp(canonical_domain(d->domain), domain) && !strcmp(d->op_type, op);
}

/* The first entry of (domain, op), remembered per thread: type inference,
 * partitioning and kernel creation ask for each node in turn, and graphs
 * repeat operators, so one comparison with a remembered answer usually
 * replaces the binary search (about ten string comparisons). A few answers,
 * by the op_type's address (graphs share one string per operator), so that
 * operators that alternate (Conv, Relu, Conv, ...) each keep theirs. The
 * entry is checked by content, never trusted by pointer. */
enum { FIRST_DEF_SLOTS = 8 };
static _Thread_local size_t first_plus1[FIRST_DEF_SLOTS];   /* entry index + 1; 0: none */

static size_t first_def(const char *domain, const char *op) {
    size_t slot = ((uintptr_t)op >> 4) % FIRST_DEF_SLOTS, i = first_plus1[slot] - 1;
    if (i < n_defs && same_op(all_defs[i], domain, op)) return i;   /* i was the lower bound of this op */
    i = lower_bound(domain, op);
    if (i < n_defs && same_op(all_defs[i], domain, op)) first_plus1[slot] = i + 1;
    return i;
}

#ifdef ONYX_MINIMAL_TYPES
/* a minimal build's kernels are compiled for its list's element types only
 * (providers/cpu/kernels/minimal_keep.h) */
#define TYPE_LEFT_OUT(dtype) ((dtype) > 0 && (dtype) < 64 && !((ONYX_MINIMAL_TYPES) >> (dtype) & 1))
#else
#define TYPE_LEFT_OUT(dtype) false
#endif

const onyx_op_def *onyx_cpu_find_kernel(const char *domain, const char *op_type, int opset,
                                        int dtype) {
    if (TYPE_LEFT_OUT(dtype)) return NULL;
    pthread_once(&once, build_index);
    domain = canonical_domain(domain);
    for (size_t i = first_def(domain, op_type); i < n_defs && same_op(all_defs[i], domain, op_type); i++) {
        const onyx_op_def *d = all_defs[i];
        if (opset < d->since_version || opset > d->until_version) continue;
        /* a dtype outside 1..63 matches no type mask (and must not be shifted) */
        if (!d->types || !dtype || (dtype > 0 && dtype < 64 && (d->types & ONYX_T(dtype)))) return d;
    }
    return NULL;
}

bool onyx_cpu_has_op(const char *domain, const char *op_type) {
    pthread_once(&once, build_index);
    domain = canonical_domain(domain);
    size_t i = lower_bound(domain, op_type);
    return i < n_defs && same_op(all_defs[i], domain, op_type);
}

size_t onyx_cpu_kernel_count(void) {
    pthread_once(&once, build_index);
    return n_defs;
}

const onyx_op_def *onyx_cpu_kernel_at(size_t i) {
    pthread_once(&once, build_index);
    return i < n_defs ? all_defs[i] : NULL;
}
