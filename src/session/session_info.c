/* What a session tells about its model beyond inputs and outputs: the
 * model's metadata (ONNX Runtime's ModelMetadata) and the overridable
 * initializers (graph inputs with an initializer default). Strings live in
 * the model's arena, which the session keeps. */
#include <string.h>

#include "session/session.h"

const char *onyx_session_model_meta(const onyx_session *s, const char *field) {
    if (!s || !field) return NULL;
    const onyx_model *m = s->model;
    const char *v;
    if (!strcmp(field, "producer_name")) v = m->producer_name;
    else if (!strcmp(field, "producer_version")) v = m->producer_version;
    else if (!strcmp(field, "domain")) v = m->domain;
    else if (!strcmp(field, "description")) v = m->doc_string;
    else if (!strcmp(field, "graph_name")) v = m->graph->name;
    else if (!strcmp(field, "graph_description")) v = m->graph->doc_string;
    else return NULL; /* not a metadata field */
    return v ? v : "";
}

int64_t onyx_session_model_version(const onyx_session *s) { return s ? s->model->model_version : 0; }

size_t onyx_session_custom_metadata_count(const onyx_session *s) { return s ? s->model->n_metadata : 0; }

const char *onyx_session_custom_metadata_key(const onyx_session *s, size_t i) {
    return s && i < s->model->n_metadata ? s->model->metadata[i].key : NULL;
}

const char *onyx_session_custom_metadata_value(const onyx_session *s, size_t i) {
    return s && i < s->model->n_metadata ? s->model->metadata[i].value : NULL;
}

/* The last entry wins when a key repeats, as when ONNX Runtime fills its map. */
const char *onyx_session_custom_metadata_lookup(const onyx_session *s, const char *key) {
    if (!s || !key) return NULL;
    for (size_t i = s->model->n_metadata; i-- > 0;)
        if (!strcmp(s->model->metadata[i].key, key)) return s->model->metadata[i].value;
    return NULL;
}

size_t onyx_session_overridable_initializer_count(const onyx_session *s) { return s ? s->n_overridable : 0; }

const char *onyx_session_overridable_initializer_name(const onyx_session *s, size_t i) {
    return s && i < s->n_overridable ? s->graph->values[s->overridable_ids[i]].name : NULL;
}

const onyx_type_info *onyx_session_overridable_initializer_type(const onyx_session *s, size_t i) {
    return s && i < s->n_overridable ? &s->overridable_types[i] : NULL;
}
