#include "core/arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "core/checked.h"

#define ARENA_ALIGN 16
#define ARENA_DEFAULT_CHUNK ((size_t)64 << 10)
#define ARENA_MAX_CHUNK ((size_t)4 << 20)

/* Chunks are calloc'd, and memory is never reused, so every allocation is
 * already zero without a memset. */
typedef struct arena_chunk {
    struct arena_chunk *next;
    size_t size;  /* usable bytes after the header */
    size_t used;
    _Alignas(ARENA_ALIGN) unsigned char data[];
} arena_chunk;

struct onyx_arena {
    arena_chunk *head;    /* current chunk, the newest */
    size_t chunk_size;    /* size of the next regular chunk; grows to ARENA_MAX_CHUNK */
    size_t used;
};

onyx_arena *onyx_arena_create(size_t chunk_size) {
    onyx_arena *a = calloc(1, sizeof *a);
    if (!a) return NULL;
    a->chunk_size = chunk_size ? chunk_size : ARENA_DEFAULT_CHUNK;
    return a;
}

static arena_chunk *arena_new_chunk(size_t size) {
    size_t total;
    if (onyx_add_overflow_size(sizeof(arena_chunk), size, &total)) return NULL;
    arena_chunk *c = calloc(1, total);
    if (!c) return NULL;
    c->size = size;
    return c;
}

void *onyx_arena_alloc(onyx_arena *a, size_t size) {
    if (!a) return NULL;
    size_t rounded;
    if (onyx_add_overflow_size(size, ARENA_ALIGN - 1, &rounded)) return NULL;
    rounded &= ~(size_t)(ARENA_ALIGN - 1);
    if (rounded == 0) rounded = ARENA_ALIGN;  /* distinct pointers for size 0 */

    arena_chunk *c = a->head;
    if (!c || c->size - c->used < rounded) {
        if (rounded > a->chunk_size / 4) {
            /* Large block: its own chunk, linked behind the current one so
             * the current chunk's free space stays usable. */
            arena_chunk *big = arena_new_chunk(rounded);
            if (!big) return NULL;
            big->used = rounded;
            if (c) {
                big->next = c->next;
                c->next = big;
            } else {
                a->head = big;
            }
            a->used += rounded;
            return big->data;
        }
        c = arena_new_chunk(a->chunk_size);
        if (!c) return NULL;
        c->next = a->head;
        a->head = c;
        if (a->chunk_size < ARENA_MAX_CHUNK) a->chunk_size *= 2;
    }
    void *p = c->data + c->used;
    c->used += rounded;
    a->used += rounded;
    return p;
}

void *onyx_arena_alloc_array(onyx_arena *a, size_t n, size_t elem_size) {
    size_t bytes;
    if (onyx_mul_overflow_size(n, elem_size, &bytes)) return NULL;
    return onyx_arena_alloc(a, bytes);
}

char *onyx_arena_strndup(onyx_arena *a, const char *s, size_t n) {
    size_t total;
    if (onyx_add_overflow_size(n, 1, &total)) return NULL;
    char *d = onyx_arena_alloc(a, total);
    if (!d) return NULL;
    if (n) memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *onyx_arena_strdup(onyx_arena *a, const char *s) {
    if (!s) return NULL;
    return onyx_arena_strndup(a, s, strlen(s));
}

size_t onyx_arena_used(const onyx_arena *a) {
    return a ? a->used : 0;
}

void onyx_arena_free(onyx_arena *a) {
    if (!a) return;
    arena_chunk *c = a->head;
    while (c) {
        arena_chunk *next = c->next;
        free(c);
        c = next;
    }
    free(a);
}
