/* Token generation over a decoder model in ONNX Runtime's generation layout
 * (onnxruntime-genai, scripts/export_llama.py): inputs input_ids [batch,
 * sequence], attention_mask [batch, total] and past_key_values.N.key/value
 * [batch, kv_heads, past, head_size]; outputs logits [batch, sequence, vocab]
 * and present.N.key/value. One prefill run over the prompt, then one run per
 * new token whose past inputs are the previous run's present outputs (the
 * values are handed over, never copied here). Uses only the public C API, so
 * an application can drive generation the same way (examples/generate.c). */
#ifndef ONYX_TOOLS_GENERATE_H
#define ONYX_TOOLS_GENERATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "onyx.h"

typedef struct gen_options {
    const int64_t *prompt;     /* token ids */
    size_t n_prompt;
    size_t max_new_tokens;
    /* sampling: greedy when top_k == 1 or temperature == 0 */
    int top_k;                 /* 0: no limit */
    double top_p;              /* 1: no limit */
    double temperature;
    uint64_t seed;
    int64_t eos_id;            /* stop after generating it; -1: none */
} gen_options;

typedef struct gen_result {
    int64_t *ids;              /* the generated ids (malloc'd, n_ids) */
    size_t n_ids;
    double prefill_ms, decode_ms;   /* the prefill run; all decode runs */
    size_t decode_steps;
    float *last_logits;        /* logits of the last step (malloc'd, vocab values) */
    int64_t vocab;
} gen_result;

/* Generate into r (free it with gen_result_free, also after an error). */
onyx_status *gen_run(onyx_session *s, const gen_options *o, gen_result *r);
void gen_result_free(gen_result *r);

#endif
