/* kvlist.h - an owned list of string key/value pairs (configuration entries of
 * session and run options). Few entries, looked up rarely: a linear list. */
#ifndef ONYX_CORE_KVLIST_H
#define ONYX_CORE_KVLIST_H

#include <stddef.h>
#include "core/status.h"

typedef struct onyx_kvlist {
    char **keys, **values;
    size_t n;
} onyx_kvlist;

/* Copy key and value in; a key set twice keeps the last value. */
onyx_status *onyx_kvlist_set(onyx_kvlist *l, const char *key, const char *value);
/* The value of key, or NULL when it was never set. */
const char *onyx_kvlist_get(const onyx_kvlist *l, const char *key);
void onyx_kvlist_free(onyx_kvlist *l);

#endif
