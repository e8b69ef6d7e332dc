/* Shape helpers of the generator rules that its kernels share. */
#ifndef ONYX_IR_SCHEMAS_GENERATOR_H
#define ONYX_IR_SCHEMAS_GENERATOR_H

#include "ir/schema.h"

static const char *const constant_attrs[] = {
    "value",     "sparse_value", "value_float",  "value_floats",
    "value_int", "value_ints",   "value_string", "value_strings",
};

onyx_status *onyx_generator_range_count_int(int64_t start, int64_t limit, int64_t delta, int64_t *count);
onyx_status *onyx_generator_constant_attr(const onyx_node *node, const onyx_attr_proto **attr, int *which);
void onyx_generator_shape_window(const onyx_node *node, int opset, int rank, int *lo, int *hi);
onyx_status *onyx_generator_range_count_float(double start, double limit, double delta, int64_t *count);
bool onyx_generator_load_index(const onyx_value *v, int64_t i, int64_t *out);
bool onyx_generator_numeric_dtype(int dtype);
onyx_status *onyx_generator_eyelike_dtype(const onyx_node *node, int in_dtype, int *dtype);

#endif
