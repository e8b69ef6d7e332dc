#include "ir/strmap.h"
#include <stdlib.h>
#include <string.h>

static uint64_t hash_str(const char *s) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

bool onyx_strmap_init(onyx_strmap *m, size_t expected) {
    size_t cap = 16;
    while (cap < expected * 2 + 1) cap *= 2;
    m->keys = calloc(cap, sizeof *m->keys);
    m->vals = calloc(cap, sizeof *m->vals);
    m->cap = cap;
    m->count = 0;
    return m->keys && m->vals;
}

void onyx_strmap_free(onyx_strmap *m) {
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

static bool grow(onyx_strmap *m) {
    onyx_strmap bigger;
    if (!onyx_strmap_init(&bigger, m->cap)) return false;
    for (size_t i = 0; i < m->cap; i++)
        if (m->keys[i]) onyx_strmap_put(&bigger, m->keys[i], m->vals[i]);
    onyx_strmap_free(m);
    *m = bigger;
    return true;
}

bool onyx_strmap_put(onyx_strmap *m, const char *key, int32_t val) {
    if ((m->count + 1) * 2 > m->cap && !grow(m)) return false;
    size_t i = hash_str(key) & (m->cap - 1);
    while (m->keys[i] && strcmp(m->keys[i], key)) i = (i + 1) & (m->cap - 1);
    if (!m->keys[i]) {
        m->keys[i] = key;
        m->count++;
    }
    m->vals[i] = val;
    return true;
}

int32_t onyx_strmap_get(const onyx_strmap *m, const char *key) {
    if (!m->cap) return -1;
    size_t i = hash_str(key) & (m->cap - 1);
    while (m->keys[i]) {
        if (!strcmp(m->keys[i], key)) return m->vals[i];
        i = (i + 1) & (m->cap - 1);
    }
    return -1;
}
