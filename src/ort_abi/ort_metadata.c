/* Model metadata (a copy that outlives its session, as in ORT) and
 * overridable initializers. */
#include <stdlib.h>
#include <string.h>
#include "ort_abi/ort_abi.h"

struct OrtModelMetadata {
    char *producer, *graph, *domain, *description, *graph_description;
    int64_t version;
    OrtKeyValuePairs custom;
};

void ort_ReleaseModelMetadata(OrtModelMetadata *m) {
    if (!m) return;
    free(m->producer);
    free(m->graph);
    free(m->domain);
    free(m->description);
    free(m->graph_description);
    ort_kv_clear(&m->custom);
    free(m);
}

static int copy_field(const onyx_session *s, const char *field, char **out) {
    const char *v = onyx_session_model_meta(s, field);
    *out = strdup(v ? v : "");
    return *out != NULL;
}

OrtStatus *ort_SessionGetModelMetadata(const OrtSession *s, OrtModelMetadata **out) {
    ORT_ARG_CHECK(s && out, "SessionGetModelMetadata", "NULL argument");
    OrtModelMetadata *m = calloc(1, sizeof *m);
    int ok = m != NULL;
    ok = ok && copy_field(s->s, "producer_name", &m->producer) &&
         copy_field(s->s, "graph_name", &m->graph) && copy_field(s->s, "domain", &m->domain) &&
         copy_field(s->s, "description", &m->description) &&
         copy_field(s->s, "graph_description", &m->graph_description);
    if (ok) m->version = onyx_session_model_version(s->s);
    size_t n = ok ? onyx_session_custom_metadata_count(s->s) : 0;
    for (size_t i = 0; ok && i < n; i++)
        ok = ort_kv_set(&m->custom, onyx_session_custom_metadata_key(s->s, i),
                        onyx_session_custom_metadata_value(s->s, i));
    if (!ok) {
        ort_ReleaseModelMetadata(m);
        return ort_status(ORT_FAIL, "SessionGetModelMetadata: out of memory");
    }
    *out = m;
    return NULL;
}

#define META_GETTER(fn, member)                                                            \
    OrtStatus *ort_##fn(const OrtModelMetadata *m, OrtAllocator *a, char **out) {          \
        ORT_ARG_CHECK(m && out, #fn, "NULL argument");                                     \
        return ort_alloc_string(a, m->member, out);                                        \
    }
META_GETTER(ModelMetadataGetProducerName, producer)
META_GETTER(ModelMetadataGetGraphName, graph)
META_GETTER(ModelMetadataGetDomain, domain)
META_GETTER(ModelMetadataGetDescription, description)
META_GETTER(ModelMetadataGetGraphDescription, graph_description)

OrtStatus *ort_ModelMetadataGetVersion(const OrtModelMetadata *m, int64_t *out) {
    ORT_ARG_CHECK(m && out, "ModelMetadataGetVersion", "NULL argument");
    *out = m->version;
    return NULL;
}
OrtStatus *ort_ModelMetadataLookupCustomMetadataMap(const OrtModelMetadata *m, OrtAllocator *a,
                                                    const char *key, char **out) {
    ORT_ARG_CHECK(m && key && out, "ModelMetadataLookupCustomMetadataMap", "NULL argument");
    const char *v = ort_kv_get(&m->custom, key);
    if (!v) { *out = NULL; return NULL; }   /* absent key: NULL, no error (ORT) */
    return ort_alloc_string(a, v, out);
}
OrtStatus *ort_ModelMetadataGetCustomMetadataMapKeys(const OrtModelMetadata *m, OrtAllocator *a,
                                                     char ***keys, int64_t *n) {
    ORT_ARG_CHECK(m && a && keys && n, "ModelMetadataGetCustomMetadataMapKeys", "NULL argument");
    *keys = NULL;
    *n = (int64_t)m->custom.n;
    if (!m->custom.n) return NULL;
    char **list = a->Alloc(a, m->custom.n * sizeof *list);
    if (!list) return ort_status(ORT_FAIL, "ModelMetadataGetCustomMetadataMapKeys: out of memory");
    for (size_t i = 0; i < m->custom.n; i++) {
        OrtStatus *st = ort_alloc_string(a, m->custom.keys[i], &list[i]);
        if (st) {
            for (size_t j = 0; j < i; j++) a->Free(a, list[j]);
            a->Free(a, list);
            return st;
        }
    }
    *keys = list;
    return NULL;
}

/* ---- overridable initializers ---- */
OrtStatus *ort_SessionGetOverridableInitializerCount(const OrtSession *s, size_t *out) {
    ORT_ARG_CHECK(s && out, "SessionGetOverridableInitializerCount", "NULL argument");
    *out = onyx_session_overridable_initializer_count(s->s);
    return NULL;
}
static OrtStatus *init_index(const char *fn, const OrtSession *s, size_t i) {
    size_t n = onyx_session_overridable_initializer_count(s->s);
    if (i < n) return NULL;
    return ort_status(ORT_INVALID_ARGUMENT, "%s: index %zu is out of range (%zu overridable "
                      "initializers)", fn, i, n);
}
OrtStatus *ort_SessionGetOverridableInitializerName(const OrtSession *s, size_t i, OrtAllocator *a,
                                                    char **out) {
    ORT_ARG_CHECK(s && out, "SessionGetOverridableInitializerName", "NULL argument");
    OrtStatus *st = init_index("SessionGetOverridableInitializerName", s, i);
    return st ? st : ort_alloc_string(a, onyx_session_overridable_initializer_name(s->s, i), out);
}
OrtStatus *ort_SessionGetOverridableInitializerTypeInfo(const OrtSession *s, size_t i,
                                                        OrtTypeInfo **out) {
    ORT_ARG_CHECK(s && out, "SessionGetOverridableInitializerTypeInfo", "NULL argument");
    OrtStatus *st = init_index("SessionGetOverridableInitializerTypeInfo", s, i);
    if (st) return st;
    *out = ort_typeinfo_from_onyx(onyx_session_overridable_initializer_type(s->s, i));
    return *out ? NULL : ort_status(ORT_FAIL, "out of memory");
}
