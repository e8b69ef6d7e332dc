/* Attribute access for kernels. Lookups are linear: nodes have few
 * attributes and kernels read them once in init or per run. */
#include <string.h>
#include "ir/graph.h"

const onyx_attr_proto *onyx_node_attr(const onyx_node *n, const char *name) {
    for (size_t i = 0; i < n->n_attrs; i++)
        if (n->attrs[i].name && !strcmp(n->attrs[i].name, name)) return &n->attrs[i];
    return NULL;
}

int64_t onyx_attr_int(const onyx_node *n, const char *name, int64_t def) {
    const onyx_attr_proto *a = onyx_node_attr(n, name);
    return a && a->type == ONYX_ATTR_INT ? a->i : def;
}

float onyx_attr_float(const onyx_node *n, const char *name, float def) {
    const onyx_attr_proto *a = onyx_node_attr(n, name);
    if (!a) return def;
    if (a->type == ONYX_ATTR_FLOAT) return a->f;
    if (a->type == ONYX_ATTR_INT) return (float)a->i;
    return def;
}

const char *onyx_attr_string(const onyx_node *n, const char *name, const char *def) {
    const onyx_attr_proto *a = onyx_node_attr(n, name);
    return a && a->type == ONYX_ATTR_STRING && a->s.ptr ? (const char *)a->s.ptr : def;
}

const int64_t *onyx_attr_ints(const onyx_node *n, const char *name, size_t *count) {
    const onyx_attr_proto *a = onyx_node_attr(n, name);
    if (!a || a->type != ONYX_ATTR_INTS) {
        *count = 0;
        return NULL;
    }
    *count = a->n_ints;
    return a->ints;
}

const float *onyx_attr_floats(const onyx_node *n, const char *name, size_t *count) {
    const onyx_attr_proto *a = onyx_node_attr(n, name);
    if (!a || a->type != ONYX_ATTR_FLOATS) {
        *count = 0;
        return NULL;
    }
    *count = a->n_floats;
    return a->floats;
}

onyx_status *onyx_attr_tensor(const onyx_node *n, const onyx_model *m, const char *name,
                              onyx_value **out) {
    const onyx_attr_proto *a = onyx_node_attr(n, name);
    if (!a || a->type != ONYX_ATTR_TENSOR || !a->t)
        return ONYX_INVALID_MODEL("attribute '%s' is missing or not a tensor", name);
    return onyx_tensor_proto_to_value(m, a->t, out);
}
