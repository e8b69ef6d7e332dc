/* Custom operators in a minimal build that leaves them out (the default,
 * as in ONNX Runtime's minimal builds; cmake -DONYX_MINIMAL_CUSTOM_OPS=ON
 * keeps custom_provider.c): registering one fails, so no session ever has
 * a custom node, and the accessors a custom kernel calls only ever see
 * NULL. cmake/minimal_build.cmake compiles this file with
 * ONYX_MINIMAL_OMITS_custom_ops instead of custom_provider.c; elsewhere it
 * is empty. */
#ifdef ONYX_MINIMAL_OMITS_custom_ops
#include <string.h>
#include "onyx.h"
#include "providers/custom/custom_provider.h"

#define NO_CUSTOM_OPS "custom operators are not in this minimal build: configure it with -DONYX_MINIMAL_CUSTOM_OPS=ON"

onyx_status *onyx_custom_ops_add(onyx_custom_ops *list, const onyx_custom_op *op) {
    (void)list, (void)op;
    return ONYX_NOT_IMPLEMENTED(NO_CUSTOM_OPS);
}
onyx_status *onyx_custom_ops_copy(onyx_custom_ops *dst, const onyx_custom_ops *src) {
    (void)src;
    memset(dst, 0, sizeof *dst);
    return NULL;
}
void onyx_custom_ops_clear(onyx_custom_ops *list) { memset(list, 0, sizeof *list); }
const onyx_custom_op *onyx_custom_ops_find(const onyx_custom_ops *list, const onyx_node *n) {
    return (void)list, (void)n, NULL;
}
onyx_status *onyx_custom_infer(const onyx_custom_op *op, const onyx_graph *g, const onyx_node *n,
                               onyx_type *out_types) {
    (void)op, (void)g, (void)n, (void)out_types;
    return ONYX_NOT_IMPLEMENTED(NO_CUSTOM_OPS);
}
onyx_status *onyx_custom_provider_create(const onyx_custom_ops *list, onyx_provider **out) {
    (void)list;
    *out = NULL;
    return ONYX_NOT_IMPLEMENTED(NO_CUSTOM_OPS);
}

/* the accessors: no custom node or context exists */
static onyx_status *no_node(void) { return ONYX_INVALID_ARG("no custom node (" NO_CUSTOM_OPS ")"); }
const char *onyx_custom_node_name(const onyx_custom_node *c) { return (void)c, NULL; }
const char *onyx_custom_node_op_type(const onyx_custom_node *c) { return (void)c, NULL; }
const char *onyx_custom_node_domain(const onyx_custom_node *c) { return (void)c, NULL; }
int onyx_custom_node_opset(const onyx_custom_node *c) { return (void)c, 0; }
size_t onyx_custom_node_input_count(const onyx_custom_node *c) { return (void)c, 0; }
size_t onyx_custom_node_output_count(const onyx_custom_node *c) { return (void)c, 0; }
const char *onyx_custom_node_input_name(const onyx_custom_node *c, size_t i) { return (void)c, (void)i, NULL; }
const char *onyx_custom_node_output_name(const onyx_custom_node *c, size_t i) { return (void)c, (void)i, NULL; }
const onyx_type_info *onyx_custom_node_input_type(const onyx_custom_node *c, size_t i) {
    return (void)c, (void)i, NULL;
}
const onyx_type_info *onyx_custom_node_output_type(const onyx_custom_node *c, size_t i) {
    return (void)c, (void)i, NULL;
}
const onyx_value *onyx_custom_node_constant_input(const onyx_custom_node *c, size_t i) {
    return (void)c, (void)i, NULL;
}
onyx_status *onyx_custom_node_attr_int(const onyx_custom_node *c, const char *name, int64_t *out) {
    return (void)c, (void)name, (void)out, no_node();
}
onyx_status *onyx_custom_node_attr_float(const onyx_custom_node *c, const char *name, float *out) {
    return (void)c, (void)name, (void)out, no_node();
}
onyx_status *onyx_custom_node_attr_string(const onyx_custom_node *c, const char *name, const char **out,
                                          size_t *len) {
    return (void)c, (void)name, (void)out, (void)len, no_node();
}
onyx_status *onyx_custom_node_attr_ints(const onyx_custom_node *c, const char *name, const int64_t **out,
                                        size_t *count) {
    return (void)c, (void)name, (void)out, (void)count, no_node();
}
onyx_status *onyx_custom_node_attr_floats(const onyx_custom_node *c, const char *name, const float **out,
                                          size_t *count) {
    return (void)c, (void)name, (void)out, (void)count, no_node();
}
onyx_status *onyx_custom_node_attr_strings(const onyx_custom_node *c, const char *name, size_t i,
                                           const char **out, size_t *len, size_t *count) {
    return (void)c, (void)name, (void)i, (void)out, (void)len, (void)count, no_node();
}
onyx_status *onyx_custom_node_attr_tensor(const onyx_custom_node *c, const char *name, onyx_value **out) {
    return (void)c, (void)name, (void)out, no_node();
}
const onyx_custom_node *onyx_custom_ctx_node(const onyx_custom_ctx *x) { return (void)x, NULL; }
size_t onyx_custom_ctx_input_count(const onyx_custom_ctx *x) { return (void)x, 0; }
size_t onyx_custom_ctx_output_count(const onyx_custom_ctx *x) { return (void)x, 0; }
const onyx_value *onyx_custom_ctx_input(const onyx_custom_ctx *x, size_t i) { return (void)x, (void)i, NULL; }
onyx_status *onyx_custom_ctx_output(onyx_custom_ctx *x, size_t i, onyx_element_type type, const int64_t *shape,
                                    size_t rank, onyx_value **out) {
    (void)x, (void)i, (void)type, (void)shape, (void)rank;
    if (out) *out = NULL;
    return no_node();
}
#else
typedef int onyx_custom_omitted_unused; /* ISO C wants a declaration in every file */
#endif
