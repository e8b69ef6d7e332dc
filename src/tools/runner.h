/* A loaded model ready to run, shared by `run` and `perf`: environment,
 * session, prepared inputs and the latest outputs. */
#ifndef ONYX_TOOLS_RUNNER_H
#define ONYX_TOOLS_RUNNER_H

#include "onyx.h"
#include "tools/cli.h"
#include "tools/inputs.h"

typedef struct cli_runner {
    onyx_env *env;
    onyx_session *session;
    cli_strlist feed_names; /* graph inputs without initializers */
    cli_feeds feeds;
    size_t n_outputs;
    const char **output_names; /* borrowed from the session */
    onyx_value **outputs;      /* of the last run, owned */
    double load_ms;            /* onyx_session_create alone */
    onyx_run_options *run_opts; /* --timeout, or NULL */
} cli_runner;

/* Decode the model's input list, then create the environment and session
 * (timed as load_ms). */
onyx_status *runner_open(cli_runner *r, const char *model, const cli_model_opts *o);
/* Build the inputs from files / generation. */
onyx_status *runner_prepare_inputs(cli_runner *r, const cli_model_opts *o);
/* Run once, replacing the previous outputs. */
onyx_status *runner_run(cli_runner *r);
/* Free the outputs of the last run (perf does it outside the timed span). */
void runner_free_outputs(cli_runner *r);
void runner_close(cli_runner *r);

#endif
