#include "ir/strmap.h"
#include <stdlib.h>
#include <string.h>

/* Each slot holds the key's hash next to it: a probe reads one 16-byte slot
 * and compares the strings only when the hashes match, so a lookup in a
 * table of millions of names costs about one cache miss, and growing the
 * table never rehashes a string. */

static uint32_t hash_str(const char *s) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return (uint32_t)(h ^ (h >> 32));
}

bool onyx_strmap_init(onyx_strmap *m, size_t expected) {
    size_t cap = 16;
    while (cap < expected * 2 + 1) cap *= 2;
    m->slots = calloc(cap, sizeof *m->slots);
    m->cap = m->slots ? cap : 0;
    m->count = 0;
    return m->slots != NULL;
}

void onyx_strmap_free(onyx_strmap *m) {
    free(m->slots);
    memset(m, 0, sizeof *m);
}

static onyx_strmap_slot *find(const onyx_strmap *m, const char *key, uint32_t h) {
    size_t i = h & (m->cap - 1);
    for (;; i = (i + 1) & (m->cap - 1)) {
        onyx_strmap_slot *s = &m->slots[i];
        if (!s->key || (s->hash == h && !strcmp(s->key, key))) return s;
    }
}

static bool grow(onyx_strmap *m) {
    onyx_strmap bigger;
    if (!onyx_strmap_init(&bigger, m->cap)) return false;
    for (size_t i = 0; i < m->cap; i++) {
        const onyx_strmap_slot *s = &m->slots[i];
        if (!s->key) continue;
        size_t k = s->hash & (bigger.cap - 1);
        while (bigger.slots[k].key) k = (k + 1) & (bigger.cap - 1);
        bigger.slots[k] = *s;
    }
    bigger.count = m->count;
    onyx_strmap_free(m);
    *m = bigger;
    return true;
}

bool onyx_strmap_put(onyx_strmap *m, const char *key, int32_t val) {
    if ((m->count + 1) * 2 > m->cap && !grow(m)) return false;
    uint32_t h = hash_str(key);
    onyx_strmap_slot *s = find(m, key, h);
    if (!s->key) {
        s->key = key;
        s->hash = h;
        m->count++;
    }
    s->val = val;
    return true;
}

int32_t onyx_strmap_get(const onyx_strmap *m, const char *key) {
    if (!m->cap) return -1;
    const onyx_strmap_slot *s = find(m, key, hash_str(key));
    return s->key ? s->val : -1;
}

void onyx_strmap_prefetch(const onyx_strmap *m, const char *key) {
    if (m->cap && key) __builtin_prefetch(&m->slots[hash_str(key) & (m->cap - 1)]);
}
