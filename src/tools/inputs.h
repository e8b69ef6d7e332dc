/* Model inputs for run/perf/test: loaded from .npz/.npy/.pb files or
 * generated deterministically from the model's input metadata. */
#ifndef ONYX_TOOLS_INPUTS_H
#define ONYX_TOOLS_INPUTS_H

#include <stddef.h>
#include <stdint.h>
#include "onyx.h"
#include "tools/cli.h"

/* Named input values, owned. */
typedef struct cli_feeds {
    char **names;
    onyx_value **values;
    const char **origins; /* static text: "file", "generated", ... */
    size_t n, cap;
} cli_feeds;

/* Add or replace the value for `name` (takes ownership of v, even on error). */
onyx_status *feeds_set(cli_feeds *f, const char *name, onyx_value *v, const char *origin);
long feeds_find(const cli_feeds *f, const char *name);
void feeds_free(cli_feeds *f);

typedef struct inputs_request {
    const char *inputs_path;    /* --inputs: .npz, .npy (one input) or a folder of input_K.pb */
    const cli_strlist *singles; /* --input NAME=FILE entries */
    const cli_dims *dims;       /* values of symbolic dimensions (default 1) */
    uint64_t seed;              /* generator seed (0 by default) */
} inputs_request;

/* Fill `out` with a value for every input the model needs: from the files
 * requested, else generated. feed_names: the graph inputs without an
 * initializer (cli_session_feed_inputs); inputs with an initializer are fed
 * only when given explicitly. */
onyx_status *inputs_prepare(const onyx_session *s, const cli_strlist *feed_names,
                            const inputs_request *req, cli_feeds *out);

/* Read DIR/PREFIX0.pb, DIR/PREFIX1.pb, ... while they exist. A file's
 * stored name picks the input when it names one, else file K goes to
 * feed_names[K]; the value is decoded as the kind the session declares for
 * that input. */
onyx_status *inputs_load_pb_dir(const onyx_session *s, const cli_strlist *feed_names,
                                const char *dir, const char *prefix, cli_feeds *out);

/* A deterministic value for input `index` of the session: symbolic
 * dimensions from dims (else 1); floats uniform in [-1, 1) from splitmix64
 * seeded by (seed, index); integers 0..9, but 1 for inputs named like
 * "*mask*"; bools alternate true/false; `zeros` fills zeros instead. */
onyx_status *inputs_generate(const onyx_session *s, size_t index, const cli_dims *dims,
                             uint64_t seed, bool zeros, onyx_value **out);

#endif
