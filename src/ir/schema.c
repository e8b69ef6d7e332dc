/* The schema registry: every family table of ir/schemas/families.h,
 * indexed once (lazily, thread-safe) and searched by (domain, op type). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "ir/schema.h"

#define ONYX_SCHEMA_FAMILY(name) extern const onyx_schema_def onyx_schemas_##name[];
#include "ir/schemas/families.h"
#undef ONYX_SCHEMA_FAMILY

static const onyx_schema_def *const families[] = {
#define ONYX_SCHEMA_FAMILY(name) onyx_schemas_##name,
#include "ir/schemas/families.h"
#undef ONYX_SCHEMA_FAMILY
};

static const onyx_schema_def **index_;
static size_t n_index;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static const char *canonical_domain(const char *d) { return !d || !strcmp(d, "ai.onnx") ? "" : d; }

static int cmp_key(const char *da, const char *oa, const onyx_schema_def *b) {
    int c = strcmp(da, canonical_domain(b->domain));
    return c ? c : strcmp(oa, b->op_type);
}

static int cmp_def(const void *pa, const void *pb) {
    const onyx_schema_def *a = *(const onyx_schema_def *const *)pa, *b = *(const onyx_schema_def *const *)pb;
    int c = cmp_key(canonical_domain(a->domain), a->op_type, b);
    return c ? c : (a->since_version > b->since_version) - (a->since_version < b->since_version);
}

static void build_index(void) {
    size_t n = 0;
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
        for (const onyx_schema_def *d = families[f]; d->op_type; d++) n++;
    index_ = malloc((n ? n : 1) * sizeof *index_);
    if (!index_) return;
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
        for (const onyx_schema_def *d = families[f]; d->op_type; d++) index_[n_index++] = d;
    qsort(index_, n_index, sizeof *index_, cmp_def);
}

onyx_infer_fn onyx_schema_find(const char *domain, const char *op_type, int opset) {
    if (!op_type) return NULL;
    pthread_once(&once, build_index);
    domain = canonical_domain(domain);
    size_t lo = 0, hi = n_index;
    while (lo < hi) {   /* the first entry of (domain, op) */
        size_t mid = (lo + hi) / 2;
        if (cmp_key(domain, op_type, index_[mid]) > 0) lo = mid + 1;
        else hi = mid;
    }
    for (size_t i = lo; i < n_index && !cmp_key(domain, op_type, index_[i]); i++)
        if (opset >= index_[i]->since_version && opset <= index_[i]->until_version) return index_[i]->infer;
    return NULL;
}

size_t onyx_schema_count(void) {
    pthread_once(&once, build_index);
    return n_index;
}

const onyx_schema_def *onyx_schema_at(size_t i) {
    pthread_once(&once, build_index);
    return i < n_index ? index_[i] : NULL;
}
