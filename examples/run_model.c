/*
 * run_model.c - the smallest complete use of the onyx C API (built as
 * build/onyx_example).
 *
 *   onyx_example MODEL.onnx
 *
 * Loads the model, makes one input tensor per graph input from the input
 * metadata (symbolic dims = 1, values from a fixed pattern), runs the model
 * once and prints every output's name, type, shape and first values.
 * Exits 0 on success, 1 on any error (with the error message on stderr).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include "onyx.h"
#include "inputs_from_metadata.h"

#define SHOW_VALUES 8

static int fail(const char *what, onyx_status *st) {
    fprintf(stderr, "onyx_example: %s: %s\n", what, onyx_status_message(st));
    onyx_status_free(st);
    return 1;
}

static void print_shape(const onyx_value *v) {
    const int64_t *shape = onyx_tensor_shape(v);
    size_t rank = onyx_tensor_rank(v);
    printf("[");
    for (size_t a = 0; a < rank; a++) printf("%s%" PRId64, a ? "," : "", shape[a]);
    printf("]");
}

/* Element i of a numeric tensor as a double; 16-bit floats and smaller
 * types are shown as raw bits, which this example does not decode. */
static int element_as_double(onyx_value *v, int64_t i, double *out) {
    const void *d = onyx_tensor_data(v);
    switch (onyx_tensor_element_type(v)) {
    case ONYX_FLOAT: *out = ((const float *)d)[i]; return 1;
    case ONYX_DOUBLE: *out = ((const double *)d)[i]; return 1;
    case ONYX_INT8: *out = ((const int8_t *)d)[i]; return 1;
    case ONYX_UINT8: *out = ((const uint8_t *)d)[i]; return 1;
    case ONYX_BOOL: *out = ((const uint8_t *)d)[i]; return 1;
    case ONYX_INT16: *out = ((const int16_t *)d)[i]; return 1;
    case ONYX_UINT16: *out = ((const uint16_t *)d)[i]; return 1;
    case ONYX_INT32: *out = ((const int32_t *)d)[i]; return 1;
    case ONYX_UINT32: *out = ((const uint32_t *)d)[i]; return 1;
    case ONYX_INT64: *out = (double)((const int64_t *)d)[i]; return 1;
    case ONYX_UINT64: *out = (double)((const uint64_t *)d)[i]; return 1;
    default: return 0;
    }
}

static void print_tensor(onyx_value *v) {
    printf("tensor(%s) ", onyx_element_type_name(onyx_tensor_element_type(v)));
    print_shape(v);
    int64_t n = onyx_tensor_element_count(v);
    int64_t show = n < SHOW_VALUES ? n : SHOW_VALUES;
    printf(" =");
    for (int64_t i = 0; i < show; i++) {
        double x;
        size_t len;
        if (onyx_tensor_element_type(v) == ONYX_STRING) {
            const char *s = onyx_tensor_string(v, i, &len);
            printf(" \"%.*s\"", (int)(len > 32 ? 32 : len), s ? s : "");
        } else if (element_as_double(v, i, &x)) {
            printf(" %.6g", x);
        } else {
            printf(" (%zu bytes, not decoded)", onyx_tensor_byte_size(v));
            break;
        }
    }
    printf("%s\n", n > show ? " ..." : "");
}

static void print_value(const char *name, onyx_value *v, int indent) {
    printf("%*s%s: ", indent, "", name);
    switch (onyx_value_get_kind(v)) {
    case ONYX_VALUE_TENSOR: print_tensor(v); break;
    case ONYX_VALUE_SEQUENCE:
    case ONYX_VALUE_OPTIONAL: {
        size_t n = onyx_value_item_count(v);
        int seq = onyx_value_get_kind(v) == ONYX_VALUE_SEQUENCE;
        printf("%s with %zu item%s\n", seq ? "sequence" : "optional", n, n == 1 ? "" : "s");
        for (size_t i = 0; i < n && i < SHOW_VALUES; i++) {
            char label[32];
            snprintf(label, sizeof label, "[%zu]", i);
            print_value(label, (onyx_value *)onyx_value_item(v, i), indent + 2);
        }
        break;
    }
    case ONYX_VALUE_MAP: printf("map\n"); break;
    default: printf("value of unknown kind\n"); break;
    }
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s MODEL.onnx\n", argv[0]);
        return 2;
    }
    onyx_env *env = NULL;
    onyx_session *session = NULL;
    onyx_status *st = onyx_env_create(ONYX_LOG_WARNING, "onyx_example", &env);
    if (st) return fail("creating the environment", st);
    st = onyx_session_create(env, argv[1], NULL, &session);
    if (st) {
        onyx_env_free(env);
        return fail("load", st);
    }

    example_inputs in;
    char err[512];
    int rc = 1;
    if (example_inputs_create(session, INT64_MAX, INT64_MAX, 0, &in, err, sizeof err) != 0) {
        fprintf(stderr, "onyx_example: %s\n", err);
        goto done_session;
    }
    for (size_t i = 0; i < in.count; i++) print_value(in.names[i], in.values[i], 0);

    size_t n_out = onyx_session_output_count(session);
    const char **out_names = calloc(n_out ? n_out : 1, sizeof *out_names);
    onyx_value **outs = calloc(n_out ? n_out : 1, sizeof *outs);
    if (!out_names || !outs) {
        fprintf(stderr, "onyx_example: out of memory\n");
        goto done_outputs;
    }
    for (size_t i = 0; i < n_out; i++) out_names[i] = onyx_session_output_name(session, i);

    st = onyx_session_run(session, NULL, in.names, (const onyx_value *const *)in.values,
                          in.count, out_names, n_out, outs);
    if (st) {
        rc = fail("run", st);
        goto done_outputs;
    }
    printf("-> %zu output%s\n", n_out, n_out == 1 ? "" : "s");
    for (size_t i = 0; i < n_out; i++) print_value(out_names[i], outs[i], 0);
    rc = 0;

done_outputs:
    for (size_t i = 0; outs && i < n_out; i++) onyx_value_free(outs[i]);
    free(outs);
    free(out_names);
    example_inputs_free(&in);
done_session:
    onyx_session_free(session);
    onyx_env_free(env);
    return rc;
}
