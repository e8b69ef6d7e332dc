/* A bump arena: many small allocations freed all at once. The decoded model
 * (names, nodes, attributes, dims) lives in one so that freeing a model is a
 * single call and decoding does no per-object malloc. */
#ifndef ONYX_CORE_ARENA_H
#define ONYX_CORE_ARENA_H

#include <stddef.h>

typedef struct onyx_arena onyx_arena;

/* chunk_size: bytes per chunk (0 = default, 64 KiB). NULL on OOM. */
onyx_arena *onyx_arena_create(size_t chunk_size);
/* size bytes, 16-byte aligned, zeroed. NULL on OOM or size overflow.
 * size 0 returns a valid unique pointer. */
void *onyx_arena_alloc(onyx_arena *arena, size_t size);
/* n * elem_size bytes with an overflow check. */
void *onyx_arena_alloc_array(onyx_arena *arena, size_t n, size_t elem_size);
/* NUL-terminated copies. strndup copies exactly n bytes (which may contain
 * NULs) and appends a NUL. */
char *onyx_arena_strdup(onyx_arena *arena, const char *s);
char *onyx_arena_strndup(onyx_arena *arena, const char *s, size_t n);
/* Bytes handed out so far (for statistics and tests). */
size_t onyx_arena_used(const onyx_arena *arena);
void onyx_arena_free(onyx_arena *arena);

#endif
