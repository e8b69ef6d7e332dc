/*
 * generate_tokens.c - greedy token generation with a decoder language model
 * through the public C API (built as build/onyx_generate_example).
 *
 *   onyx_generate_example MODEL.onnx IDS [NEW_TOKENS] [--check]
 *
 * The model has ONNX Runtime's generation layout (onnxruntime-genai,
 * scripts/export_llama.py): inputs input_ids, attention_mask, optional
 * position_ids and past_key_values.N.key/value [1, kv_heads, past,
 * head_size]; outputs logits and present.N.key/value. The key-value cache is
 * one max-length buffer per layer and key/value, fed as the past input and
 * handed to onyx_session_run_into as the present output of every step:
 * GroupQueryAttention writes the step's rows in place (seqlens_k, computed
 * by the model from attention_mask, says how many rows are valid), so a
 * step copies no cache. Prints the generated ids.
 *
 * --check also runs the same steps with fresh present outputs fed back as
 * the next pasts, and exits 1 unless every step's logits are bit-identical,
 * every present output is the past buffer itself, and the rows after the
 * valid ones were never written (they hold a NaN sentinel, where a present
 * built apart and copied back would have brought zeros), and that a present
 * output over the other past buffer (key over value) is refused.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "onyx.h"

#define MAX_LAYERS 256

typedef struct decoder {
    onyx_session *s;
    size_t layers, n_feeds;          /* n_feeds: 2, or 3 with position_ids */
    int64_t kv_heads, head_size;
    char *in_names[3 + 2 * MAX_LAYERS], *out_names[1 + 2 * MAX_LAYERS];
} decoder;

static int fail(const char *what, onyx_status *st) {
    fprintf(stderr, "onyx_generate_example: %s: %s\n", what, st ? onyx_status_message(st) : "failed");
    onyx_status_free(st);
    return 1;
}

/* Run an API call; on error print it and return 1 from the caller. */
#define CALL(what, expr)                                   \
    do {                                                   \
        onyx_status *st_ = (expr);                         \
        if (st_) return fail(what, st_);                   \
    } while (0)

static long input_index(const onyx_session *s, const char *name) {
    for (size_t i = 0; i < onyx_session_input_count(s); i++)
        if (!strcmp(onyx_session_input_name(s, i), name)) return (long)i;
    return -1;
}

/* Layers and cache shape from the inputs past_key_values.N.key. */
static bool decoder_inspect(decoder *d) {
    char name[64];
    d->n_feeds = input_index(d->s, "position_ids") >= 0 ? 3 : 2;
    d->in_names[0] = strdup("input_ids");
    d->in_names[1] = strdup("attention_mask");
    if (d->n_feeds == 3) d->in_names[2] = strdup("position_ids");
    d->out_names[0] = strdup("logits");
    for (d->layers = 0; d->layers < MAX_LAYERS; d->layers++) {
        snprintf(name, sizeof name, "past_key_values.%zu.key", d->layers);
        long i = input_index(d->s, name);
        if (i < 0) break;
        const onyx_type_info *t = onyx_session_input_type(d->s, (size_t)i);
        d->kv_heads = onyx_type_info_dim(t, 1);
        d->head_size = onyx_type_info_dim(t, 3);
        for (int kv = 0; kv < 2; kv++) {
            snprintf(name, sizeof name, "past_key_values.%zu.%s", d->layers, kv ? "value" : "key");
            d->in_names[d->n_feeds + 2 * d->layers + kv] = strdup(name);
            snprintf(name, sizeof name, "present.%zu.%s", d->layers, kv ? "value" : "key");
            d->out_names[1 + 2 * d->layers + kv] = strdup(name);
        }
    }
    return d->layers > 0 && d->kv_heads > 0 && d->head_size > 0;
}

/* A generation run: the cache, the feeds and the logits of every step. */
typedef struct run {
    bool shared;
    size_t cap, n_cache;             /* rows per buffer; buffers (2 per layer) */
    float *cache;                    /* shared: n_cache buffers of cap rows */
    onyx_value *feeds[3 + 2 * MAX_LAYERS], *outs[1 + 2 * MAX_LAYERS], *present[2 * MAX_LAYERS];
    int64_t *ids, *mask, *pos;
    const char *expect_error;        /* --check: a run that must fail with this in its message */
    bool error_seen;
} run;

static size_t cache_floats(const decoder *d, const run *r) {
    return (size_t)d->kv_heads * r->cap * (size_t)d->head_size;
}

static int run_init(const decoder *d, run *r, size_t cap, bool shared) {
    memset(r, 0, sizeof *r);
    r->shared = shared, r->cap = cap, r->n_cache = 2 * d->layers;
    r->ids = calloc(cap, sizeof *r->ids);
    r->mask = calloc(cap, sizeof *r->mask);
    r->pos = calloc(cap, sizeof *r->pos);
    size_t per = cache_floats(d, r);
    r->cache = shared ? malloc(r->n_cache * per * sizeof(float)) : NULL;
    if (!r->ids || !r->mask || !r->pos || (shared && !r->cache)) return fail("out of memory", NULL);
    int64_t full[4] = {1, d->kv_heads, (int64_t)cap, d->head_size}, empty[4] = {1, d->kv_heads, 0, d->head_size};
    for (size_t i = 0; i < r->n_cache; i++) {
        onyx_value **past = &r->feeds[d->n_feeds + i];
        if (!shared) {   /* an empty past for the prompt; later the previous presents */
            CALL("past", onyx_tensor_create(ONYX_FLOAT, empty, 4, past));
            continue;
        }
        float *buf = r->cache + i * per;
        for (size_t k = 0; k < per; k++) buf[k] = NAN;   /* sentinel: never read, never written */
        CALL("past", onyx_tensor_create_with_data(ONYX_FLOAT, full, 4, buf, per * sizeof(float), past));
        CALL("present", onyx_tensor_create_with_data(ONYX_FLOAT, full, 4, buf, per * sizeof(float), &r->present[i]));
    }
    return 0;
}

static void run_free(const decoder *d, run *r) {
    for (size_t i = 0; i < d->n_feeds + r->n_cache; i++) onyx_value_free(r->feeds[i]);
    for (size_t i = 0; i < 1 + r->n_cache; i++) onyx_value_free(r->shared && i ? NULL : r->outs[i]);
    for (size_t i = 0; i < r->n_cache; i++) onyx_value_free(r->present[i]);
    free(r->cache);
    free(r->ids);
    free(r->mask);
    free(r->pos);
}

/* One run over n tokens at positions [past, past + n). */
static int run_step(const decoder *d, run *r, const int64_t *tokens, size_t n, size_t past) {
    size_t total = past + n;
    for (size_t i = 0; i < d->n_feeds; i++) onyx_value_free(r->feeds[i]), r->feeds[i] = NULL;
    for (size_t i = 0; i < n; i++) r->ids[i] = tokens[i], r->pos[i] = (int64_t)(past + i);
    for (size_t i = 0; i < total; i++) r->mask[i] = 1;
    int64_t ids_shape[2] = {1, (int64_t)n}, mask_shape[2] = {1, (int64_t)total};
    CALL("input_ids", onyx_tensor_create_with_data(ONYX_INT64, ids_shape, 2, r->ids, n * 8, &r->feeds[0]));
    CALL("attention_mask", onyx_tensor_create_with_data(ONYX_INT64, mask_shape, 2, r->mask, total * 8, &r->feeds[1]));
    if (d->n_feeds == 3)
        CALL("position_ids", onyx_tensor_create_with_data(ONYX_INT64, ids_shape, 2, r->pos, n * 8, &r->feeds[2]));
    onyx_value_free(r->outs[0]);
    r->outs[0] = NULL;
    for (size_t i = 0; i < r->n_cache; i++) r->outs[1 + i] = r->shared ? r->present[i] : NULL;
    onyx_status *st = onyx_session_run_into(d->s, NULL, (const char *const *)d->in_names,
                                            (const onyx_value *const *)r->feeds, d->n_feeds + r->n_cache,
                                            (const char *const *)d->out_names, 1 + r->n_cache, r->outs);
    if (st && r->expect_error) {
        r->error_seen = strstr(onyx_status_message(st), r->expect_error) != NULL;
        fprintf(stderr, "check: refused as expected: %s\n", onyx_status_message(st));
        onyx_status_free(st);
        return 1;
    }
    if (st) return fail("run", st);
    for (size_t i = 0; i < r->n_cache && !r->shared; i++) {   /* presents become the next pasts */
        onyx_value_free(r->feeds[d->n_feeds + i]);
        r->feeds[d->n_feeds + i] = r->outs[1 + i];
        r->outs[1 + i] = NULL;
    }
    return 0;
}

/* Greedy generation; the last-token logits of every step go to logits
 * (n_new rows of vocab) when it is not NULL. */
static int generate(const decoder *d, run *r, const int64_t *prompt, size_t n_prompt, size_t n_new,
                             int64_t *ids, float **logits, int64_t *vocab) {
    size_t past = 0, n = n_prompt;
    const int64_t *tokens = prompt;
    for (size_t step = 0; step < n_new; step++) {
        if (run_step(d, r, tokens, n, past)) return 1;
        const int64_t *shape = onyx_tensor_shape(r->outs[0]);
        if (onyx_tensor_rank(r->outs[0]) != 3 || shape[1] != (int64_t)n)
            return fail("logits must be [1, sequence, vocab]", NULL);
        *vocab = shape[2];
        const float *row = (const float *)onyx_tensor_data(r->outs[0]) + (n - 1) * (size_t)shape[2];
        int64_t best = 0;
        for (int64_t v = 1; v < shape[2]; v++)
            if (row[v] > row[best]) best = v;
        ids[step] = best;
        if (logits) {
            float *l = realloc(*logits, (step + 1) * (size_t)shape[2] * sizeof(float));
            if (!l) return fail("out of memory", NULL);
            memcpy(l + step * (size_t)shape[2], row, (size_t)shape[2] * sizeof(float));
            *logits = l;
        }
        past += n;
        tokens = &ids[step], n = 1;
    }
    return 0;
}

/* Shared run vs handover run: same logits; presents are the past buffers;
 * rows [valid, cap) untouched. */
static int check(const decoder *d, run *shared, const int64_t *prompt, size_t n_prompt, size_t n_new,
                 const float *logits, int64_t vocab) {
    run plain = {0};
    int64_t *ids = malloc(n_new * sizeof *ids), v2 = 0;
    float *l2 = NULL;
    int bad = !ids || run_init(d, &plain, shared->cap, false) || generate(d, &plain, prompt, n_prompt, n_new, ids,
                                                                            &l2, &v2);
    run_free(d, &plain);
    free(ids);
    if (bad) return fail("the handover run failed", NULL);
    bad = v2 != vocab || memcmp(logits, l2, n_new * (size_t)vocab * sizeof(float)) != 0;
    if (bad) fprintf(stderr, "check: the shared-cache logits differ from the handover run's\n");
    free(l2);
    size_t per = cache_floats(d, shared), valid = n_prompt + n_new - 1;   /* the last id is never fed */
    for (size_t i = 0; i < shared->n_cache; i++) {
        const float *buf = shared->cache + i * per;
        if (shared->outs[1 + i] != shared->present[i] || onyx_tensor_data(shared->outs[1 + i]) != buf ||
            onyx_tensor_data(shared->feeds[d->n_feeds + i]) != buf) {
            fprintf(stderr, "check: %s is not the past buffer\n", d->out_names[1 + i]);
            bad = 1;
        }
        for (size_t h = 0; h < (size_t)d->kv_heads; h++)
            for (size_t row = 0; row < shared->cap; row++) {
                float x = buf[(h * shared->cap + row) * (size_t)d->head_size];
                if ((row < valid) == isnan(x)) {
                    fprintf(stderr, "check: %s head %zu row %zu is %s (%zu rows valid)\n", d->out_names[1 + i], h,
                            row, isnan(x) ? "unwritten" : "written", valid);
                    return 1;
                }
            }
    }
    /* present.0.key over past_key_values.0.value's buffer (and the other way round): refused */
    run crossed;
    int64_t one_id = 0, crossed_vocab = 0;
    if (run_init(d, &crossed, shared->cap, true)) bad = 1;
    onyx_value *t = crossed.present[0];
    crossed.present[0] = crossed.present[1], crossed.present[1] = t;
    crossed.expect_error = "overlaps past_value";
    if (!generate(d, &crossed, prompt, n_prompt, 1, &one_id, NULL, &crossed_vocab) || !crossed.error_seen) {
        fprintf(stderr, "check: crossed key/value buffers were not refused\n");
        bad = 1;
    }
    run_free(d, &crossed);
    if (!bad) printf("check: %zu steps, logits identical, cache updated in place\n", n_new);
    return bad;
}

static size_t parse_ids(const char *s, int64_t *ids, size_t cap) {
    size_t n = 0;
    for (char *end; *s && n < cap; s = *end == ',' ? end + 1 : end) {
        long long v = strtoll(s, &end, 10);
        if (end == s || v < 0) return 0;
        ids[n++] = v;
    }
    return n;
}

int main(int argc, char **argv) {
    int64_t prompt[256];
    size_t n_prompt = argc >= 3 ? parse_ids(argv[2], prompt, 256) : 0;
    size_t n_new = argc >= 4 && argv[3][0] != '-' ? (size_t)strtoul(argv[3], NULL, 10) : 16;
    bool want_check = argc >= 4 && !strcmp(argv[argc - 1], "--check");
    if (!n_prompt || !n_new || n_new > 4096) {
        fprintf(stderr, "usage: onyx_generate_example MODEL.onnx IDS(comma-separated) [NEW_TOKENS] [--check]\n");
        return 2;
    }
    onyx_env *env = NULL;
    decoder d = {0};
    onyx_status *st = onyx_env_create(ONYX_LOG_WARNING, "generate", &env);
    if (!st) st = onyx_session_create(env, argv[1], NULL, &d.s);
    if (st) return fail(argv[1], st);
    int rc = 0;
    run r;
    int64_t *ids = malloc(n_new * sizeof *ids), vocab = 0;
    float *logits = NULL;
    if (!ids || !decoder_inspect(&d)) {
        rc = fail("the model has no past_key_values.0.key [1, kv_heads, past, head_size] input", NULL);
    } else if (run_init(&d, &r, n_prompt + n_new, true) ||
               generate(&d, &r, prompt, n_prompt, n_new, ids, want_check ? &logits : NULL, &vocab)) {
        rc = 1;
        run_free(&d, &r);
    } else {
        for (size_t i = 0; i < n_new; i++) printf("%s%lld", i ? "," : "", (long long)ids[i]);
        printf("\n");
        if (want_check) rc = check(&d, &r, prompt, n_prompt, n_new, logits, vocab);
        run_free(&d, &r);
    }
    for (size_t i = 0; i < 3 + 2 * MAX_LAYERS; i++) free(d.in_names[i]);
    for (size_t i = 0; i < 1 + 2 * MAX_LAYERS; i++) free(d.out_names[i]);
    free(ids);
    free(logits);
    onyx_session_free(d.s);
    onyx_env_free(env);
    return rc;
}
