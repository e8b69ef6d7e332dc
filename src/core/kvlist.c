#include "core/kvlist.h"

#include <stdlib.h>
#include <string.h>

onyx_status *onyx_kvlist_set(onyx_kvlist *l, const char *key, const char *value) {
    for (size_t i = 0; i < l->n; i++) {
        if (strcmp(l->keys[i], key) == 0) {
            char *v = strdup(value);
            if (!v) return ONYX_OOM();
            free(l->values[i]);
            l->values[i] = v;
            return NULL;
        }
    }
    char **k = realloc(l->keys, (l->n + 1) * sizeof *k);
    if (!k) return ONYX_OOM();
    l->keys = k;
    char **v = realloc(l->values, (l->n + 1) * sizeof *v);
    if (!v) return ONYX_OOM();
    l->values = v;
    char *kc = strdup(key), *vc = strdup(value);
    if (!kc || !vc) {
        free(kc);
        free(vc);
        return ONYX_OOM();
    }
    l->keys[l->n] = kc;
    l->values[l->n++] = vc;
    return NULL;
}

const char *onyx_kvlist_get(const onyx_kvlist *l, const char *key) {
    for (size_t i = 0; l && key && i < l->n; i++)
        if (strcmp(l->keys[i], key) == 0) return l->values[i];
    return NULL;
}

void onyx_kvlist_free(onyx_kvlist *l) {
    for (size_t i = 0; i < l->n; i++) {
        free(l->keys[i]);
        free(l->values[i]);
    }
    free(l->keys);
    free(l->values);
    memset(l, 0, sizeof *l);
}
