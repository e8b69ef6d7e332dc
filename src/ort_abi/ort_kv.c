/* OrtKeyValuePairs: a small ordered list of owned strings, also used for
 * session and provider configuration entries. */
#include <stdlib.h>
#include <string.h>
#include "ort_abi/ort_abi.h"

const char *ort_kv_get(const OrtKeyValuePairs *kv, const char *key) {
    if (!kv || !key) return NULL;
    for (size_t i = 0; i < kv->n; i++)
        if (!strcmp(kv->keys[i], key)) return kv->values[i];
    return NULL;
}

int ort_kv_set(OrtKeyValuePairs *kv, const char *key, const char *value) {
    char *v = strdup(value ? value : "");
    if (!v) return 0;
    for (size_t i = 0; i < kv->n; i++)
        if (!strcmp(kv->keys[i], key)) {
            free(kv->values[i]);
            kv->values[i] = v;
            return 1;
        }
    if (kv->n == kv->cap) {
        size_t cap = kv->cap ? kv->cap * 2 : 8;
        char **k = realloc(kv->keys, cap * sizeof *k);
        if (!k) { free(v); return 0; }
        kv->keys = k;
        char **vv = realloc(kv->values, cap * sizeof *vv);
        if (!vv) { free(v); return 0; }
        kv->values = vv;
        kv->cap = cap;
    }
    char *k = strdup(key);
    if (!k) { free(v); return 0; }
    kv->keys[kv->n] = k;
    kv->values[kv->n++] = v;
    return 1;
}

void ort_kv_clear(OrtKeyValuePairs *kv) {
    for (size_t i = 0; i < kv->n; i++) {
        free(kv->keys[i]);
        free(kv->values[i]);
    }
    free(kv->keys);
    free(kv->values);
    memset(kv, 0, sizeof *kv);
}

int ort_kv_copy(OrtKeyValuePairs *dst, const OrtKeyValuePairs *src) {
    for (size_t i = 0; i < src->n; i++)
        if (!ort_kv_set(dst, src->keys[i], src->values[i])) return 0;
    return 1;
}

void ort_CreateKeyValuePairs(OrtKeyValuePairs **out) {
    if (out) *out = calloc(1, sizeof **out);
}
void ort_AddKeyValuePair(OrtKeyValuePairs *kv, const char *key, const char *value) {
    if (kv && key && value) ort_kv_set(kv, key, value);
}
const char *ort_GetKeyValue(const OrtKeyValuePairs *kv, const char *key) {
    return ort_kv_get(kv, key);
}
void ort_GetKeyValuePairs(const OrtKeyValuePairs *kv, const char *const **keys,
                          const char *const **values, size_t *n) {
    if (!kv || !keys || !values || !n) return;
    *keys = (const char *const *)kv->keys;
    *values = (const char *const *)kv->values;
    *n = kv->n;
}
void ort_RemoveKeyValuePair(OrtKeyValuePairs *kv, const char *key) {
    if (!kv || !key) return;
    for (size_t i = 0; i < kv->n; i++)
        if (!strcmp(kv->keys[i], key)) {
            free(kv->keys[i]);
            free(kv->values[i]);
            memmove(kv->keys + i, kv->keys + i + 1, (kv->n - i - 1) * sizeof *kv->keys);
            memmove(kv->values + i, kv->values + i + 1, (kv->n - i - 1) * sizeof *kv->values);
            kv->n--;
            return;
        }
}
void ort_ReleaseKeyValuePairs(OrtKeyValuePairs *kv) {
    if (!kv) return;
    ort_kv_clear(kv);
    free(kv);
}
