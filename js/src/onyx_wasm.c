/* The C side of the JavaScript package (js/lib/): a few entry points that
 * fold several public-API calls into one, so the JavaScript side crosses
 * into WebAssembly once per step. Everything else the package calls is the
 * public API itself (include/onyx.h), exported as is by cmake/wasm.cmake.
 *
 * One process-wide environment is created on first use; WebAssembly here is
 * single-threaded, so every session runs its operators on the calling
 * thread (intra-op threads = 1). */
#include <stdint.h>
#include <string.h>
#include "onyx.h"

static onyx_env *wasm_env;

/* A session over the model bytes at data[0..len) (copied by onyx, so the
 * caller frees them right after). opt_level: onyx_optimization_level;
 * log_level: onyx_log_level. */
onyx_status *onyx_wasm_session_create(const void *data, size_t len, int opt_level, int log_level,
                                      onyx_session **out) {
    onyx_status *st = NULL;
    if (!wasm_env) {
        st = onyx_env_create(ONYX_LOG_WARNING, "onyx-wasm", &wasm_env);
        if (st) return st;
    }
    onyx_env_set_log_level(wasm_env, (onyx_log_level)log_level);
    onyx_session_options *opts = NULL;
    st = onyx_session_options_create(&opts);
    if (!st) st = onyx_session_options_set_intra_op_threads(opts, 1);
    if (!st) st = onyx_session_options_set_inter_op_threads(opts, 1);
    if (!st) st = onyx_session_options_set_optimization_level(opts, (onyx_optimization_level)opt_level);
    if (!st) st = onyx_session_create_from_memory(wasm_env, data, len, opts, out);
    onyx_session_options_free(opts);
    return st;
}

/* What JavaScript needs to read an output: info[0] = kind, [1] = element
 * type, [2] = rank, [3] = pointer to the int64 shape, [4] = pointer to the
 * data, [5] = byte size. Returns 0, or -1 when the value is not a tensor. */
int onyx_wasm_tensor_info(onyx_value *v, uint32_t *info) {
    memset(info, 0, 6 * sizeof *info);
    info[0] = (uint32_t)onyx_value_get_kind(v);
    if (info[0] != ONYX_VALUE_TENSOR) return -1;
    info[1] = (uint32_t)onyx_tensor_element_type(v);
    info[2] = (uint32_t)onyx_tensor_rank(v);
    info[3] = (uint32_t)(uintptr_t)onyx_tensor_shape(v);
    info[4] = (uint32_t)(uintptr_t)onyx_tensor_data(v);
    info[5] = (uint32_t)onyx_tensor_byte_size(v);
    return 0;
}

onyx_status *onyx_wasm_run(onyx_session *s, const char *const *in_names, const onyx_value *const *inputs,
                           size_t n_in, const char *const *out_names, size_t n_out, onyx_value **outputs) {
    return onyx_session_run(s, NULL, in_names, inputs, n_in, out_names, n_out, outputs);
}
