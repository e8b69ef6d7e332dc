/* The memory planner. The first run with a given set of input shapes
 * records the size of every intermediate tensor; the planner then places
 * them in one arena so that values whose lifetimes do not overlap share
 * bytes (greedy by size, lowest fitting offset: the classic offline
 * "interval colouring" heuristic used by TFLite and ggml-alloc). Later runs
 * with the same input shapes take one arena and allocate nothing else for
 * intermediates. Data-dependent sizes that differ from the recording simply
 * fall back to the heap, so the plan is an optimisation, never a contract. */
#include <stdlib.h>
#include <string.h>
#include "session/memplan.h"

#define ARENA_ALIGN 64

void onyx_memplan_free(onyx_memplan *mp) {
    if (!mp) return;
    free(mp->signature);
    free(mp->offset);
    free(mp->size);
    free(mp);
}

/* Signature of the inputs bound in a run: kind, dtype, rank, dims of each
 * graph input value in id order. */
onyx_status *onyx_memplan_signature(const onyx_graph *g, onyx_value *const *slots, int64_t **sig,
                                    size_t *len) {
    size_t n = 0;
    for (size_t i = 0; i < g->n_inputs; i++) n += 3 + ONYX_MAX_RANK;
    int64_t *s = calloc(n + 1, sizeof *s);
    if (!s) return ONYX_OOM();
    size_t k = 0;
    for (size_t i = 0; i < g->n_inputs; i++) {
        const onyx_value *v = slots[g->inputs[i]];
        s[k++] = v ? v->kind : -1;
        s[k++] = v ? v->dtype : -1;
        s[k++] = v ? v->rank : -1;
        for (int d = 0; d < ONYX_MAX_RANK; d++) s[k++] = v && d < v->rank ? v->dims[d] : -1;
    }
    *sig = s;
    *len = n;
    return NULL;
}

bool onyx_memplan_matches(const onyx_memplan *mp, const int64_t *sig, size_t len) {
    return mp && mp->sig_len == len && !memcmp(mp->signature, sig, len * sizeof *sig);
}

typedef struct item {
    int32_t value;
    size_t size;
    int32_t first, last; /* node indices, inclusive */
} item;

typedef struct range {
    size_t begin, end;
} range;

static int by_begin(const void *a, const void *b) {
    const range *x = a, *y = b;
    return x->begin < y->begin ? -1 : x->begin > y->begin;
}

static int by_size_desc(const void *a, const void *b) {
    const item *x = a, *y = b;
    if (x->size != y->size) return x->size < y->size ? 1 : -1;
    return x->value - y->value;
}

static size_t round_up(size_t n) { return (n + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1); }

onyx_status *onyx_memplan_build(const onyx_graph *g, const size_t *recorded, int64_t *sig,
                                 size_t sig_len, onyx_memplan **out) {
    item *items = malloc((g->n_values + 1) * sizeof *items);
    onyx_memplan *mp = calloc(1, sizeof *mp);
    if (mp) {
        mp->offset = malloc((g->n_values + 1) * sizeof *mp->offset);
        mp->size = calloc(g->n_values + 1, sizeof *mp->size);
    }
    if (!items || !mp || !mp->offset || !mp->size) {
        free(items);
        onyx_memplan_free(mp);
        free(sig);
        return ONYX_OOM();
    }
    mp->signature = sig;
    mp->sig_len = sig_len;
    size_t n = 0;
    for (size_t v = 0; v < g->n_values; v++) {
        const onyx_graph_value *gv = &g->values[v];
        mp->offset[v] = SIZE_MAX;
        if (!recorded[v] || gv->is_output || gv->source != ONYX_VAL_INTERMEDIATE || gv->producer < 0)
            continue;
        int32_t last = gv->last_use >= gv->producer ? gv->last_use : gv->producer;
        items[n++] = (item){(int32_t)v, round_up(recorded[v]), gv->producer, last};
    }
    qsort(items, n, sizeof *items, by_size_desc);
    size_t arena = 0;
    range *busy = malloc((n + 1) * sizeof *busy);
    if (!busy) {
        free(items);
        onyx_memplan_free(mp);
        return ONYX_OOM();
    }
    for (size_t i = 0; i < n; i++) {
        /* the byte ranges of placed items alive at the same time, by offset;
         * take the first gap that fits */
        size_t nb = 0;
        for (size_t j = 0; j < i; j++) {
            const item *o = &items[j];
            if (o->last < items[i].first || items[i].last < o->first) continue;
            busy[nb++] = (range){mp->offset[o->value], mp->offset[o->value] + o->size};
        }
        qsort(busy, nb, sizeof *busy, by_begin);
        size_t at = 0;
        for (size_t j = 0; j < nb; j++) {
            if (busy[j].begin >= at + items[i].size) break;
            if (busy[j].end > at) at = busy[j].end;
        }
        mp->offset[items[i].value] = at;
        mp->size[items[i].value] = items[i].size;
        if (at + items[i].size > arena) arena = at + items[i].size;
    }
    free(busy);
    mp->arena_bytes = arena;
    free(items);
    *out = mp;
    return NULL;
}
