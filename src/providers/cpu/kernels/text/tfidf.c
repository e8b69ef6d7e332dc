/* TfIdfVectorizer (opset 9+): counts the pool's n-grams (with skips) in
 * each row of an int32/int64/string input and weighs them (TF, IDF, TFIDF).
 *
 * init turns the pool into a trie: node 0 is the root and every edge is a
 * (parent node, token) key in one open-addressing hash table. A node that
 * ends a pool n-gram whose length is in [min_gram_length, max_gram_length]
 * carries that n-gram's number (1-based, in pool order, 0 = none); the
 * n-gram's output coordinate is ngram_indexes[number - 1]. Strings are
 * mapped to tokens through a second table of the pool's distinct strings,
 * so counting works on int64 tokens whatever the input type.
 *
 * Counting follows the ONNX reference (and ONNX Runtime): for each skip
 * distance d in 1..max_skip_count+1 and each start position, walk the trie
 * along x[start], x[start+d], ...; unigrams are counted only at d = 1.
 * Weights apply per pool n-gram, i.e. at its output coordinate (the same as
 * the reference, which indexes them by coordinate, when ngram_indexes is
 * 0..n-1). */
#include <stdlib.h>
#include <string.h>
#include "providers/cpu/kernel.h"

enum { MODE_TF, MODE_IDF, MODE_TFIDF };

/* Token of an input string absent from the pool: matches no edge. */
#define NO_TOKEN INT64_MIN

typedef struct trie_edge {
    int64_t token;
    int32_t parent;   /* -1: empty slot */
    int32_t child;
} trie_edge;

typedef struct vocab_entry {
    const uint8_t *ptr;   /* into the node's attribute (lives as long as the model) */
    size_t len;
    int64_t token;        /* -1: empty slot */
} vocab_entry;

typedef struct tfidf_state {
    int mode;
    int64_t min_n, max_n, max_skip;
    int64_t out_size;
    bool strings;             /* pool_strings (else pool_int64s) */
    trie_edge *edges;         /* hash table, cap_edges slots (a power of two) */
    size_t cap_edges;
    int32_t *node_id;         /* per trie node: 1-based pool n-gram number, 0 = none */
    size_t n_nodes;
    int64_t *coord;           /* per n-gram number - 1: output coordinate */
    size_t n_ngrams;
    float *weight;            /* per output coordinate (NULL: all 1) */
    vocab_entry *vocab;       /* strings only; cap_vocab slots */
    size_t cap_vocab;
} tfidf_state;

static uint64_t mix64(uint64_t x) {
    x ^= x >> 33;
    x *= UINT64_C(0xff51afd7ed558ccd);
    x ^= x >> 33;
    x *= UINT64_C(0xc4ceb9fe1a85ec53);
    return x ^ (x >> 33);
}

static uint64_t hash_bytes(const uint8_t *p, size_t n) {
    uint64_t h = UINT64_C(1469598103934665603);  /* FNV-1a */
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * UINT64_C(1099511628211);
    return mix64(h);
}

static size_t pow2_at_least(size_t n) {
    size_t c = 16;
    while (c < n) c <<= 1;
    return c;
}

/* ------------------------------------------------------------- the trie */

static size_t edge_slot(const tfidf_state *s, int32_t parent, int64_t token) {
    size_t mask = s->cap_edges - 1;
    size_t i = (size_t)mix64((uint64_t)token * 31 + (uint64_t)(uint32_t)parent) & mask;
    while (s->edges[i].parent >= 0 &&
           (s->edges[i].parent != parent || s->edges[i].token != token))
        i = (i + 1) & mask;
    return i;
}

static int32_t trie_child(const tfidf_state *s, int32_t parent, int64_t token) {
    const trie_edge *e = &s->edges[edge_slot(s, parent, token)];
    return e->parent >= 0 ? e->child : -1;
}

/* The child of parent along token, made if new. The table has a slot for
 * every pool item, so it never fills. */
static int32_t trie_insert(tfidf_state *s, int32_t parent, int64_t token) {
    trie_edge *e = &s->edges[edge_slot(s, parent, token)];
    if (e->parent < 0) {
        *e = (trie_edge){token, parent, (int32_t)s->n_nodes};
        s->node_id[s->n_nodes++] = 0;
    }
    return e->child;
}

/* ------------------------------------------------------ the string pool */

static size_t vocab_slot(const tfidf_state *s, const uint8_t *p, size_t n) {
    size_t mask = s->cap_vocab - 1, i = (size_t)hash_bytes(p, n) & mask;
    while (s->vocab[i].token >= 0 &&
           (s->vocab[i].len != n || (n && memcmp(s->vocab[i].ptr, p, n))))
        i = (i + 1) & mask;
    return i;
}

static int64_t vocab_token(const tfidf_state *s, const uint8_t *p, size_t n) {
    const vocab_entry *e = &s->vocab[vocab_slot(s, p, n)];
    return e->token >= 0 ? e->token : NO_TOKEN;
}

/* Token of pool item i: its string's number in the vocabulary, or the int. */
static int64_t pool_token(tfidf_state *s, const onyx_attr_proto *pool, size_t i) {
    if (!s->strings) return pool->ints[i];
    const uint8_t *p = pool->strings[i].ptr ? pool->strings[i].ptr : (const uint8_t *)"";
    size_t n = pool->strings[i].len;
    vocab_entry *e = &s->vocab[vocab_slot(s, p, n)];
    if (e->token < 0) *e = (vocab_entry){p, n, (int64_t)i};
    return e->token;
}

/* ------------------------------------------------------------------ init */

static void tfidf_free(void *p) {
    tfidf_state *s = p;
    if (!s) return;
    free(s->edges);
    free(s->node_id);
    free(s->coord);
    free(s->weight);
    free(s->vocab);
    free(s);
}

static onyx_status *parse_scalars(const onyx_node *node, tfidf_state *s) {
    const char *mode = onyx_attr_string(node, "mode", NULL);
    if (!mode) return ONYX_INVALID_MODEL("attribute mode is required (TF, IDF or TFIDF)");
    if (!strcmp(mode, "TF")) s->mode = MODE_TF;
    else if (!strcmp(mode, "IDF")) s->mode = MODE_IDF;
    else if (!strcmp(mode, "TFIDF")) s->mode = MODE_TFIDF;
    else return ONYX_INVALID_MODEL("attribute mode is '%s'; expected TF, IDF or TFIDF", mode);
    s->min_n = onyx_attr_int(node, "min_gram_length", 0);
    s->max_n = onyx_attr_int(node, "max_gram_length", 0);
    s->max_skip = onyx_attr_int(node, "max_skip_count", -1);
    if (s->min_n < 1 || s->max_n < s->min_n)
        return ONYX_INVALID_MODEL("min_gram_length %lld and max_gram_length %lld: need "
                                  "1 <= min_gram_length <= max_gram_length",
                                  (long long)s->min_n, (long long)s->max_n);
    if (s->max_skip < 0)
        return ONYX_INVALID_MODEL("attribute max_skip_count is %lld (or missing); expected >= 0",
                                  (long long)s->max_skip);
    return NULL;
}

/* Output coordinates and per-coordinate weights from ngram_indexes/weights. */
static onyx_status *parse_coords(const onyx_node *node, tfidf_state *s) {
    size_t n_idx, n_w;
    const int64_t *idx = onyx_attr_ints(node, "ngram_indexes", &n_idx);
    const float *w = onyx_attr_floats(node, "weights", &n_w);
    if (n_idx < s->n_ngrams)
        return ONYX_INVALID_MODEL("ngram_indexes has %zu entries but the pool holds %zu n-grams",
                                  n_idx, s->n_ngrams);
    if (w && n_w != n_idx)
        return ONYX_INVALID_MODEL("weights has %zu entries; expected %zu (one per ngram_indexes entry)",
                                  n_w, n_idx);
    s->out_size = 0;
    for (size_t i = 0; i < n_idx; i++) {
        if (idx[i] < 0 || idx[i] >= INT32_MAX)
            return ONYX_INVALID_MODEL("ngram_indexes[%zu] is %lld; expected 0 <= index < 2^31", i,
                                      (long long)idx[i]);
        if (idx[i] + 1 > s->out_size) s->out_size = idx[i] + 1;
    }
    s->coord = malloc(sizeof *s->coord * (n_idx ? n_idx : 1));
    if (!s->coord) return ONYX_OOM();
    memcpy(s->coord, idx, sizeof *idx * n_idx);
    if (!w) return NULL;
    s->weight = malloc(sizeof *s->weight * (size_t)(s->out_size ? s->out_size : 1));
    if (!s->weight) return ONYX_OOM();
    for (int64_t i = 0; i < s->out_size; i++) s->weight[i] = 1.0f;
    for (size_t i = 0; i < n_idx; i++) s->weight[idx[i]] = w[i];
    return NULL;
}

/* Insert the n-grams of size n at pool[start, start + count * n). */
static void insert_level(tfidf_state *s, const onyx_attr_proto *pool, size_t start, size_t count,
                         size_t n) {
    for (size_t g = 0; g < count; g++) {
        int32_t node = 0;
        for (size_t k = 0; k < n; k++) node = trie_insert(s, node, pool_token(s, pool, start + g * n + k));
        s->node_id[node] = (int32_t)(++s->n_ngrams);  /* a repeated n-gram: the last one wins */
    }
}

static onyx_status *build_trie(const onyx_node *node, tfidf_state *s, const onyx_attr_proto *pool,
                               size_t pool_size) {
    size_t n_counts;
    const int64_t *counts = onyx_attr_ints(node, "ngram_counts", &n_counts);
    if (!counts && pool_size)
        return ONYX_INVALID_MODEL("attribute ngram_counts is required");
    if (pool_size >= INT32_MAX / 2)
        return ONYX_INVALID_MODEL("the pool has %zu items; at most %d are supported", pool_size,
                                  INT32_MAX / 2);
    s->cap_edges = pow2_at_least(2 * pool_size + 1);
    s->edges = malloc(sizeof *s->edges * s->cap_edges);
    s->node_id = calloc(pool_size + 1, sizeof *s->node_id);
    if (s->strings) {
        s->cap_vocab = pow2_at_least(2 * pool_size + 1);
        s->vocab = malloc(sizeof *s->vocab * s->cap_vocab);
        if (s->vocab)
            for (size_t i = 0; i < s->cap_vocab; i++) s->vocab[i].token = -1;
    }
    if (!s->edges || !s->node_id || (s->strings && !s->vocab)) return ONYX_OOM();
    for (size_t i = 0; i < s->cap_edges; i++) s->edges[i].parent = -1;
    s->n_nodes = 1;
    for (size_t i = 0; i < n_counts; i++) {
        int64_t start = counts[i], end = i + 1 < n_counts ? counts[i + 1] : (int64_t)pool_size;
        if (start < 0 || start > (int64_t)pool_size || end < start)
            return ONYX_INVALID_MODEL("ngram_counts[%zu] = %lld: the level starts must be "
                                      "non-decreasing and within the pool of %zu items",
                                      i, (long long)start, pool_size);
        size_t n = i + 1, count = (size_t)(end - start) / n;  /* a ragged tail is ignored */
        if ((int64_t)n >= s->min_n && (int64_t)n <= s->max_n)
            insert_level(s, pool, (size_t)start, count, n);
        else
            s->n_ngrams += count;  /* numbered, never counted */
    }
    return NULL;
}

static onyx_status *tfidf_init(const onyx_kernel_info *info, void **state) {
    const onyx_node *node = info->node;
    const onyx_attr_proto *pi = onyx_node_attr(node, "pool_int64s");
    const onyx_attr_proto *ps = onyx_node_attr(node, "pool_strings");
    bool has_i = pi && pi->n_ints, has_s = ps && ps->n_strings;
    if (has_i && has_s)
        return ONYX_INVALID_MODEL("only one of pool_int64s and pool_strings may be set");
    if (!pi && !ps) return ONYX_INVALID_MODEL("one of pool_int64s and pool_strings is required");
    if (!onyx_node_attr(node, "ngram_counts") || !onyx_node_attr(node, "ngram_indexes"))
        return ONYX_INVALID_MODEL("attributes ngram_counts and ngram_indexes are required");
    tfidf_state *s = calloc(1, sizeof *s);
    if (!s) return ONYX_OOM();
    s->strings = has_s || (!has_i && ps);
    const onyx_attr_proto *pool = has_s ? ps : pi;
    size_t pool_size = has_s ? ps->n_strings : has_i ? pi->n_ints : 0;
    onyx_status *st = parse_scalars(node, s);
    if (!st) st = build_trie(node, s, pool, pool_size);
    if (!st) st = parse_coords(node, s);
    if (st) {
        tfidf_free(s);
        return st;
    }
    *state = s;
    return NULL;
}

/* --------------------------------------------------------------- compute */

/* The input as int64 tokens (strings through the pool's vocabulary). */
static onyx_status *input_tokens(const tfidf_state *s, const onyx_value *x, int64_t **out) {
    bool is_str = x->dtype == ONYX_STRING;
    if (is_str != s->strings)
        return ONYX_INVALID_ARG("input X has element type %s but the pool holds %s",
                                onyx_dtype_name(x->dtype), s->strings ? "strings" : "int64 values");
    int64_t *t = malloc(sizeof *t * (size_t)(x->numel ? x->numel : 1));
    if (!t) return ONYX_OOM();
    for (int64_t i = 0; i < x->numel; i++) {
        if (is_str) {
            const onyx_string *str = &((const onyx_string *)x->data)[i];
            t[i] = vocab_token(s, str->data ? (const uint8_t *)str->data : (const uint8_t *)"", str->len);
        } else {
            t[i] = x->dtype == ONYX_INT32 ? ((const int32_t *)x->data)[i] : ((const int64_t *)x->data)[i];
        }
    }
    *out = t;
    return NULL;
}

/* Add the n-gram counts of one row of c tokens into counts[out_size]. */
static void count_row(const tfidf_state *s, const int64_t *x, int64_t c, float *counts) {
    int64_t start_n = s->min_n;
    for (int64_t skip = 1; skip - 1 <= s->max_skip; skip++) {
        /* past this, no start leaves room for an n-gram of start_n items,
         * nor will any longer skip (so skip stays <= c + 1) */
        int64_t span;
        if (__builtin_mul_overflow(skip, start_n - 1, &span) || span >= c) break;
        for (int64_t begin = 0; begin < c; begin++) {
            if (begin + skip * (start_n - 1) >= c) break;
            int32_t node = 0;
            for (int64_t n = 1, at = begin; n <= s->max_n && at < c; n++, at += skip) {
                node = trie_child(s, node, x[at]);
                if (node < 0) break;
                int32_t id = s->node_id[node];
                if (n >= start_n && id > 0) counts[s->coord[id - 1]] += 1.0f;
            }
        }
        /* unigrams do not depend on the skip: count them once */
        if (start_n == 1 && ++start_n > s->max_n) break;
    }
}

static void weigh_row(const tfidf_state *s, float *y) {
    if (s->mode == MODE_TF) return;
    for (int64_t i = 0; i < s->out_size; i++) {
        float w = s->weight ? s->weight[i] : 1.0f;
        y[i] = s->mode == MODE_IDF ? (y[i] > 0 ? w : 0.0f) : y[i] * w;
    }
}

static onyx_status *tfidf_compute(onyx_kernel_ctx *ctx) {
    const tfidf_state *s = ctx->state;
    const onyx_value *x = ctx->n_in > 0 ? ctx->in[0] : NULL;
    if (!onyx_is_tensor(x)) return ONYX_INVALID_ARG("input X is required and must be a tensor");
    char buf[160];
    if (x->rank != 1 && x->rank != 2)
        return ONYX_INVALID_ARG("input X has shape %s; expected [C] or [N, C]",
                                onyx_shape_str(x->dims, x->rank, buf, sizeof buf));
    int64_t rows = x->rank == 2 ? x->dims[0] : 1, c = x->dims[x->rank - 1];
    int64_t dims[2] = {rows, s->out_size};
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, ONYX_FLOAT, x->rank, x->rank == 2 ? dims : dims + 1, &y));
    float *out = y->data;
    memset(out, 0, sizeof(float) * (size_t)y->numel);
    int64_t *tokens = NULL;
    ONYX_TRY(input_tokens(s, x, &tokens));
    for (int64_t r = 0; r < rows; r++) {
        count_row(s, tokens + r * c, c, out + r * s->out_size);
        weigh_row(s, out + r * s->out_size);
    }
    free(tokens);
    return NULL;
}

#define TFIDF_TYPES (ONYX_T(ONYX_STRING) | ONYX_T(ONYX_INT32) | ONYX_T(ONYX_INT64))

const onyx_op_def onyx_ops_text[] = {
    {"", "TfIdfVectorizer", 9, ONYX_OPSET_LATEST, TFIDF_TYPES, 0, tfidf_init, tfidf_free,
     tfidf_compute},
    {0},};
