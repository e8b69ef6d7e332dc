/* Inference rules of the operators of providers/cpu/kernels/text/tfidf.c (the kernels run them). */
#include <stdlib.h>
#include <string.h>
#include "ir/schema.h"

#define L ONYX_SCHEMA_LATEST

static onyx_status *tfidf_infer(onyx_infer_ctx *ctx) {
    const onyx_type *x = ctx->n_in > 0 ? ctx->in[0] : NULL;
    if (ctx->n_out < 1) return NULL;
    onyx_type *o = &ctx->out[0];
    memset(o, 0, sizeof *o);
    o->kind = ONYX_VALUE_TENSOR;
    o->dtype = ONYX_FLOAT;
    o->rank = x && (x->rank == 1 || x->rank == 2) ? x->rank : -1;
    if (o->rank == 2) o->dims[0] = x->dims[0];
    if (o->rank >= 1) {
        /* max(ngram_indexes) + 1 */
        size_t n;
        const int64_t *idx = onyx_attr_ints(ctx->node, "ngram_indexes", &n);
        int64_t size = 0;
        for (size_t i = 0; i < n; i++)
            if (idx[i] >= 0 && idx[i] < INT32_MAX && idx[i] + 1 > size) size = idx[i] + 1;
        o->dims[o->rank - 1] = size;
    }
    return NULL;
}

const onyx_schema_def onyx_schemas_text[] = {
    {"", "TfIdfVectorizer", 9, L, tfidf_infer},
    {0},
};
