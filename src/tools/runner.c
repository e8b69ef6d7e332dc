/* Loaded-model helper for run and perf (see runner.h). */
#include "tools/runner.h"

#include <stdlib.h>
#include <string.h>

void runner_free_outputs(cli_runner *r) {
    for (size_t i = 0; r->outputs && i < r->n_outputs; i++) {
        onyx_value_free(r->outputs[i]);
        r->outputs[i] = NULL;
    }
}

onyx_status *runner_open(cli_runner *r, const char *model, const cli_model_opts *o) {
    memset(r, 0, sizeof *r);
    ONYX_TRY(cli_open_env(&o->session, &r->env));
    double t0 = cli_now_ms();
    ONYX_TRY(cli_open_session(r->env, model, &o->session, &r->session));
    r->load_ms = cli_now_ms() - t0;
    ONYX_TRY(cli_session_feed_inputs(r->session, &r->feed_names));
    r->n_outputs = onyx_session_output_count(r->session);
    r->output_names = calloc(r->n_outputs ? r->n_outputs : 1, sizeof *r->output_names);
    r->outputs = calloc(r->n_outputs ? r->n_outputs : 1, sizeof *r->outputs);
    if (!r->output_names || !r->outputs) return ONYX_OOM();
    for (size_t i = 0; i < r->n_outputs; i++)
        r->output_names[i] = onyx_session_output_name(r->session, i);
    if (o->timeout_s > 0) {
        ONYX_TRY(onyx_run_options_create(&r->run_opts));
        onyx_run_options_set_timeout_ms(r->run_opts, (int64_t)(o->timeout_s * 1e3 + 0.5));
    }
    return NULL;
}

onyx_status *runner_prepare_inputs(cli_runner *r, const cli_model_opts *o) {
    inputs_request req = {
        .inputs_path = o->inputs_path,
        .singles = &o->singles,
        .dims = &o->dims,
        .seed = o->seed,
    };
    return inputs_prepare(r->session, &r->feed_names, &req, &r->feeds);
}

onyx_status *runner_run(cli_runner *r) {
    runner_free_outputs(r);
    return onyx_session_run(r->session, r->run_opts, (const char *const *)r->feeds.names,
                            (const onyx_value *const *)r->feeds.values, r->feeds.n, r->output_names,
                            r->n_outputs, r->outputs);
}

void runner_close(cli_runner *r) {
    runner_free_outputs(r);
    free(r->outputs);
    free(r->output_names);
    feeds_free(&r->feeds);
    onyx_run_options_free(r->run_opts);
    onyx_session_free(r->session);
    onyx_env_free(r->env);
    cli_strlist_free(&r->feed_names);
    memset(r, 0, sizeof *r);
}
