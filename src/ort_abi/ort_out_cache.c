/* Output buffers of Run, reused: a per-session cache of the blocks of
 * recently released outputs, as ONNX Runtime's arena keeps them.
 *
 * Why: a binding that runs a model in a loop releases each output after
 * copying it out (onnxruntime-node copies into a JavaScript buffer). A large
 * output freed that way goes back to the kernel (glibc serves it with mmap
 * when its dynamic threshold is off, as in node), so every Run mapped,
 * zeroed and faulted in GPT-2's 25.7 MB of logits again and unmapped them
 * afterwards. `onyx perf` keeps reusing one heap block. Here the block of a
 * released output stays with the session, and the next Run offers it for
 * the same output (onyx_session_run_offered): the last result's type and
 * shape predict the next one's; a wrong guess only means the run allocates
 * as before.
 *
 * Bounds: outputs of at least OFFER_MIN bytes; at most CACHE_SLOTS idle
 * blocks and CACHE_BYTES idle bytes per session (the oldest go first).
 * Thread-safe: concurrent runs of one session take distinct blocks. A
 * block handed out holds a reference, so outputs may outlive the session. */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "core/value.h"
#include "ort_abi/ort_abi.h"

#define OFFER_MIN ((size_t)128 << 10)
#define CACHE_SLOTS 8
#define CACHE_BYTES ((size_t)256 << 20)
#define BLOCK_HEADER 64   /* the block's size, before data that stays 64-byte aligned */

typedef struct out_shape {
    int dtype;            /* 0: nothing recorded */
    int declined;         /* an offer of the right shape went unused: the run
                           * copies this output (an input, constant or view) */
    int rank;
    int64_t dims[ONYX_MAX_RANK];
} out_shape;

struct ort_out_cache {
    OrtAllocator release;          /* Free takes a block back (ort_value_set_deleter) */
    pthread_mutex_t lock;
    int refs;                      /* the session's, plus one per block handed out */
    int session_alive;
    struct { void *block; size_t n; } idle[CACHE_SLOTS];   /* oldest first */
    size_t n_idle, idle_bytes;
    out_shape *last;               /* per session output: the last result */
    size_t n_outputs;
};

static void cache_unref_locked(ort_out_cache *c, int *gone) {
    *gone = --c->refs == 0;
}

static void cache_destroy(ort_out_cache *c) {
    for (size_t i = 0; i < c->n_idle; i++) onyx_free(c->idle[i].block);
    pthread_mutex_destroy(&c->lock);
    free(c->last);
    free(c);
}

static size_t block_size(void *data) {
    size_t n;
    memcpy(&n, (char *)data - BLOCK_HEADER, sizeof n);
    return n;
}

/* A released output's block: kept while the session lives and there is room
 * (dropping the oldest idle blocks to make it), else freed. */
static void block_give_back(OrtAllocator *self, void *data) {
    ort_out_cache *c = (ort_out_cache *)self;
    void *block = (char *)data - BLOCK_HEADER;
    size_t n = block_size(data);
    void *drop[CACHE_SLOTS + 1];
    size_t n_drop = 0;
    int gone;
    pthread_mutex_lock(&c->lock);
    if (c->session_alive && n <= CACHE_BYTES) {
        while (c->n_idle && (c->n_idle == CACHE_SLOTS || c->idle_bytes + n > CACHE_BYTES)) {
            drop[n_drop++] = c->idle[0].block;
            c->idle_bytes -= c->idle[0].n;
            memmove(&c->idle[0], &c->idle[1], --c->n_idle * sizeof c->idle[0]);
        }
        c->idle[c->n_idle].block = block;
        c->idle[c->n_idle++].n = n;
        c->idle_bytes += n;
    } else {
        drop[n_drop++] = block;
    }
    cache_unref_locked(c, &gone);
    pthread_mutex_unlock(&c->lock);
    for (size_t i = 0; i < n_drop; i++) onyx_free(drop[i]);
    if (gone) cache_destroy(c);
}

static const OrtMemoryInfo *block_info(const OrtAllocator *self) {
    (void)self;
    return &ort_cpu_memory_info;
}

ort_out_cache *ort_out_cache_create(size_t n_outputs) {
    ort_out_cache *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->last = calloc(n_outputs ? n_outputs : 1, sizeof *c->last);
    if (!c->last || pthread_mutex_init(&c->lock, NULL)) {
        free(c->last);
        free(c);
        return NULL;
    }
    c->release = (OrtAllocator){.version = ORT_ABI_API_VERSION, .Free = block_give_back, .Info = block_info};
    c->refs = c->session_alive = 1;
    c->n_outputs = n_outputs;
    return c;
}

/* The session's reference: idle blocks go now, blocks still out later. */
void ort_out_cache_release(ort_out_cache *c) {
    if (!c) return;
    int gone;
    pthread_mutex_lock(&c->lock);
    c->session_alive = 0;
    for (size_t i = 0; i < c->n_idle; i++) onyx_free(c->idle[i].block);
    c->n_idle = c->idle_bytes = 0;
    cache_unref_locked(c, &gone);
    pthread_mutex_unlock(&c->lock);
    if (gone) cache_destroy(c);
}

/* The smallest idle block that holds n bytes and wastes at most an eighth
 * (of equal ones the last released, the likeliest still in cache), else a
 * new one; NULL when out of memory. */
static void *block_take(ort_out_cache *c, size_t n) {
    void *block = NULL;
    pthread_mutex_lock(&c->lock);
    size_t best = CACHE_SLOTS;
    for (size_t i = 0; i < c->n_idle; i++)
        if (c->idle[i].n >= n && c->idle[i].n - n <= n / 8 && (best == CACHE_SLOTS || c->idle[i].n <= c->idle[best].n))
            best = i;
    if (best < CACHE_SLOTS) {
        block = c->idle[best].block;
        n = c->idle[best].n;
        c->idle_bytes -= n;
        memmove(&c->idle[best], &c->idle[best + 1], (--c->n_idle - best) * sizeof c->idle[0]);
    }
    c->refs++;
    pthread_mutex_unlock(&c->lock);
    if (!block && (block = onyx_alloc(BLOCK_HEADER + n)) != NULL) memcpy(block, &n, sizeof n);
    if (!block) ort_out_cache_unref_block(c);
    return block ? (char *)block + BLOCK_HEADER : NULL;
}

void ort_out_cache_unref_block(ort_out_cache *c) {
    int gone;
    pthread_mutex_lock(&c->lock);
    cache_unref_locked(c, &gone);
    pthread_mutex_unlock(&c->lock);
    if (gone) cache_destroy(c);
}

/* Output `index`'s predicted tensor over a cached block, registered so that
 * ReleaseValue gives the block back; NULL when there is no prediction, the
 * output is small, or memory is short (the run then allocates as usual). */
onyx_value *ort_out_cache_offer(ort_out_cache *c, size_t index) {
    if (!c || index >= c->n_outputs) return NULL;
    pthread_mutex_lock(&c->lock);
    out_shape want = c->last[index];
    pthread_mutex_unlock(&c->lock);
    int64_t numel;
    size_t nbytes;
    if (!want.dtype || want.declined) return NULL;
    onyx_status *st = onyx_shape_numel(want.dims, want.rank, &numel);
    if (st || !onyx_dtype_nbytes(want.dtype, numel, &nbytes) || nbytes < OFFER_MIN) {
        onyx_status_free(st);
        return NULL;
    }
    void *data = block_take(c, nbytes);
    if (!data) return NULL;
    onyx_value *v = NULL;
    st = onyx_tensor_wrap(want.dtype, want.rank, want.dims, data, nbytes, false, &v);
    if (!st && !ort_value_set_deleter(v, &c->release, data)) st = ONYX_OOM();
    if (st) {
        onyx_status_free(st);
        onyx_value_free(v);
        block_give_back(&c->release, data);
        return NULL;
    }
    return v;
}

/* After a successful run: output `index` produced `v` (its shape is the
 * next run's guess) where `offer` (or NULL) had been offered. */
void ort_out_cache_record(ort_out_cache *c, size_t index, const onyx_value *v, const onyx_value *offer) {
    if (!c || index >= c->n_outputs || !v) return;
    out_shape s = {0};
    if (v->kind == ONYX_VALUE_TENSOR && v->dtype != ONYX_STRING && !v->device) {
        s.dtype = v->dtype;
        s.rank = v->rank;
        memcpy(s.dims, v->dims, (size_t)v->rank * sizeof *v->dims);
    }
    bool unused = offer && offer != v && offer->rank == v->rank &&
                  !memcmp(offer->dims, v->dims, (size_t)v->rank * sizeof *v->dims);
    pthread_mutex_lock(&c->lock);
    s.declined = c->last[index].declined || unused;
    c->last[index] = s;
    pthread_mutex_unlock(&c->lock);
}
