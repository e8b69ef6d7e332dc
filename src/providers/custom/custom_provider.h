/* The custom-operator provider: runs the nodes that match operators the
 * caller registered with onyx_session_options_add_custom_op on the caller's
 * callbacks. The session puts it ahead of every other provider. */
#ifndef ONYX_CUSTOM_PROVIDER_H
#define ONYX_CUSTOM_PROVIDER_H

#include "providers/provider.h"

/* A copy of the caller's list (strings duplicated). */
typedef struct onyx_custom_ops {
    onyx_custom_op *ops;
    size_t n;
} onyx_custom_ops;

onyx_status *onyx_custom_ops_add(onyx_custom_ops *list, const onyx_custom_op *op);
onyx_status *onyx_custom_ops_copy(onyx_custom_ops *dst, const onyx_custom_ops *src);
void onyx_custom_ops_clear(onyx_custom_ops *list);
/* The operator for a node (domain, op type and opset range), or NULL. */
const onyx_custom_op *onyx_custom_ops_find(const onyx_custom_ops *list, const onyx_node *n);
/* Static element types of a custom node's outputs into types[] (left as
 * they are where the operator does not say). */
onyx_status *onyx_custom_infer(const onyx_custom_op *op, const onyx_graph *g, const onyx_node *n,
                               onyx_type *out_types);

/* A provider running `list`'s operators (it keeps its own copy). */
onyx_status *onyx_custom_provider_create(const onyx_custom_ops *list, onyx_provider **out);

#endif
