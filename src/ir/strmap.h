/* A string -> int32 hash map (open addressing) for name resolution. Keys
 * are borrowed: they must outlive the map. */
#ifndef ONYX_IR_STRMAP_H
#define ONYX_IR_STRMAP_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct onyx_strmap_slot {
    const char *key;   /* NULL: empty */
    uint32_t hash;
    int32_t val;
} onyx_strmap_slot;

typedef struct onyx_strmap {
    onyx_strmap_slot *slots;
    size_t cap, count;
} onyx_strmap;

bool onyx_strmap_init(onyx_strmap *m, size_t expected);
void onyx_strmap_free(onyx_strmap *m);
/* false on OOM; replaces an existing key's value */
bool onyx_strmap_put(onyx_strmap *m, const char *key, int32_t val);
/* -1 if absent */
int32_t onyx_strmap_get(const onyx_strmap *m, const char *key);
/* Starts loading the slot where key's probe begins. A loop over many keys
 * calls it a few keys ahead, so that in a table bigger than the caches the
 * misses overlap instead of arriving one after another. The table must not
 * grow in between (a hint only: a stale prefetch is harmless). */
void onyx_strmap_prefetch(const onyx_strmap *m, const char *key);
#endif
