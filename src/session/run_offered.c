/* onyx_session_run_offered (include/onyx.h): outputs[] holds tensors offered
 * for the results; a node writes into one only when its result has the
 * offer's shape (the executor's loose mode), otherwise the run allocates.
 * In a file of its own so that minimal builds leave it out (its one user is
 * libonnxruntime.so's cache of output blocks, src/ort_abi/ort_out_cache.c). */
#include "session/session.h"

onyx_status *onyx_session_run_offered(onyx_session *s, const onyx_run_options *run_opts,
                                      const char *const *input_names, const onyx_value *const *inputs,
                                      size_t n_inputs, const char *const *output_names, size_t n_outputs,
                                      onyx_value **outputs) {
    return onyx_session_run_mode(s, run_opts, input_names, inputs, n_inputs, output_names, n_outputs, outputs,
                                 RUN_OFFERED, NULL);
}
