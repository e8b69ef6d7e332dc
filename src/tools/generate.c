/* Token generation loop (generate.h). */
#include "tools/generate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tools/cli.h"

#define GEN_MAX_LAYERS 1024

/* The model's cache layout, read from the session's inputs. */
typedef struct gen_model {
    size_t layers;
    int64_t kv_heads, head_size, vocab;
    bool has_position_ids;
    const char **in_names, **out_names;   /* 2 or 3 feeds + 2 per layer; logits + 2 per layer */
    size_t n_in, n_out;
} gen_model;

static void gen_model_free(gen_model *m) {
    if (m->in_names)
        for (size_t i = 0; i < m->n_in; i++) free((char *)m->in_names[i]);
    if (m->out_names)
        for (size_t i = 0; i < m->n_out; i++) free((char *)m->out_names[i]);
    free(m->in_names);
    free(m->out_names);
}

static char *gen_name(const char *fmt, size_t layer) {
    char buf[64];
    snprintf(buf, sizeof buf, fmt, layer);
    return strdup(buf);
}

static onyx_status *gen_inspect(onyx_session *s, gen_model *m) {
    memset(m, 0, sizeof *m);
    if (cli_session_input_index(s, "input_ids") < 0 || cli_session_input_index(s, "attention_mask") < 0 ||
        cli_session_output_index(s, "logits") < 0)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "the model needs inputs input_ids and attention_mask and an "
                                                     "output logits (ONNX Runtime's generation layout)");
    m->has_position_ids = cli_session_input_index(s, "position_ids") >= 0;
    char name[64];
    for (;;) {
        snprintf(name, sizeof name, "past_key_values.%zu.key", m->layers);
        long ki = cli_session_input_index(s, name);
        if (ki < 0 || m->layers >= GEN_MAX_LAYERS) break;
        const onyx_type_info *t = onyx_session_input_type(s, (size_t)ki);
        if (onyx_type_info_rank(t) != 4 || onyx_type_info_dim(t, 1) <= 0 || onyx_type_info_dim(t, 3) <= 0)
            return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "input %s must be [batch, kv_heads, past, head_size] with "
                                                         "known kv_heads and head_size", name);
        m->kv_heads = onyx_type_info_dim(t, 1);
        m->head_size = onyx_type_info_dim(t, 3);
        m->layers++;
    }
    if (!m->layers) return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "the model has no past_key_values.0.key input");
    const onyx_type_info *lt = onyx_session_output_type(s, (size_t)cli_session_output_index(s, "logits"));
    m->vocab = onyx_type_info_rank(lt) == 3 ? onyx_type_info_dim(lt, 2) : -1;
    size_t feeds = m->has_position_ids ? 3 : 2;
    m->n_in = feeds + 2 * m->layers;
    m->n_out = 1 + 2 * m->layers;
    m->in_names = calloc(m->n_in, sizeof *m->in_names);
    m->out_names = calloc(m->n_out, sizeof *m->out_names);
    if (!m->in_names || !m->out_names) return onyx_error(ONYX_ERR_OUT_OF_MEMORY, "out of memory");
    m->in_names[0] = strdup("input_ids");
    m->in_names[1] = strdup("attention_mask");
    if (m->has_position_ids) m->in_names[2] = strdup("position_ids");
    m->out_names[0] = strdup("logits");
    for (size_t l = 0; l < m->layers; l++) {
        m->in_names[feeds + 2 * l] = gen_name("past_key_values.%zu.key", l);
        m->in_names[feeds + 2 * l + 1] = gen_name("past_key_values.%zu.value", l);
        m->out_names[1 + 2 * l] = gen_name("present.%zu.key", l);
        m->out_names[2 + 2 * l] = gen_name("present.%zu.value", l);
    }
    for (size_t i = 0; i < m->n_in; i++)
        if (!m->in_names[i]) return onyx_error(ONYX_ERR_OUT_OF_MEMORY, "out of memory");
    for (size_t i = 0; i < m->n_out; i++)
        if (!m->out_names[i]) return onyx_error(ONYX_ERR_OUT_OF_MEMORY, "out of memory");
    for (size_t l = 0; l < m->layers; l++)
        if (cli_session_input_index(s, m->in_names[feeds + 2 * l + 1]) < 0 ||
            cli_session_output_index(s, m->out_names[1 + 2 * l]) < 0 ||
            cli_session_output_index(s, m->out_names[2 + 2 * l]) < 0)
            return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "layer %zu lacks past_key_values.%zu.value or its present "
                                                         "outputs", l, l);
    return NULL;
}

/* ------------------------------------------------------------ sampling */

static uint64_t gen_rand(uint64_t *state) {
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545F4914F6CDD1DULL;
}

static const float *cmp_logits;
static int gen_by_logit(const void *a, const void *b) {
    float x = cmp_logits[*(const int64_t *)a], y = cmp_logits[*(const int64_t *)b];
    return x < y ? 1 : x > y ? -1 : 0;
}

static int64_t gen_argmax(const float *x, int64_t n) {
    int64_t best = 0;
    for (int64_t i = 1; i < n; i++)
        if (x[i] > x[best]) best = i;
    return best;
}

/* The next id: greedy, or top-k / top-p sampling at a temperature. */
static onyx_status *gen_pick(const gen_options *o, const float *logits, int64_t vocab, uint64_t *rng,
                             int64_t *out) {
    if (o->top_k == 1 || o->temperature <= 0) return (*out = gen_argmax(logits, vocab)), NULL;
    int64_t *idx = malloc((size_t)vocab * sizeof *idx);
    double *p = malloc((size_t)vocab * sizeof *p);
    if (!idx || !p) {
        free(idx);
        free(p);
        return onyx_error(ONYX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    for (int64_t i = 0; i < vocab; i++) idx[i] = i;
    cmp_logits = logits;
    qsort(idx, (size_t)vocab, sizeof *idx, gen_by_logit);
    int64_t k = o->top_k > 0 && o->top_k < vocab ? o->top_k : vocab;
    double sum = 0;
    for (int64_t i = 0; i < k; i++) sum += p[i] = exp((logits[idx[i]] - logits[idx[0]]) / o->temperature);
    double cum = 0;
    int64_t keep = k;
    for (int64_t i = 0; i < k; i++) {
        cum += p[i] / sum;
        if (cum >= o->top_p) {
            keep = i + 1;
            break;
        }
    }
    double total = 0;
    for (int64_t i = 0; i < keep; i++) total += p[i];
    double r = (double)(gen_rand(rng) >> 11) / 9007199254740992.0 * total;
    int64_t pick = idx[keep - 1];
    for (int64_t i = 0; i < keep; i++) {
        if (r < p[i]) {
            pick = idx[i];
            break;
        }
        r -= p[i];
    }
    free(idx);
    free(p);
    *out = pick;
    return NULL;
}

/* ------------------------------------------------------------ the loop */

typedef struct gen_state {
    gen_model m;
    onyx_value **feeds;      /* n_in */
    onyx_value **outs;       /* n_out */
    int64_t *ids, *mask, *pos;
    /* shared cache: one max-length buffer per layer and key/value, fed as
     * the past input and provided as the present output of every step */
    bool shared;
    size_t cap;              /* rows of each buffer */
    float *cache;
    onyx_value **present;    /* n_out - 1 tensors over the buffers */
} gen_state;

/* Drop the cache tensors (and the feeds over them). */
static void gen_cache_free(gen_state *g) {
    size_t feeds = g->m.has_position_ids ? 3 : 2;
    for (size_t i = feeds; g->feeds && i < g->m.n_in; i++) {
        onyx_value_free(g->feeds[i]);
        g->feeds[i] = NULL;
    }
    for (size_t i = 0; g->present && i + 1 < g->m.n_out; i++) onyx_value_free(g->present[i]);
    free(g->present);
    free(g->cache);
    g->present = NULL;
    g->cache = NULL;
    g->shared = false;
}

static void gen_state_free(gen_state *g) {
    gen_cache_free(g);
    for (size_t i = 0; g->feeds && i < g->m.n_in; i++) onyx_value_free(g->feeds[i]);
    for (size_t i = 0; g->outs && i < g->m.n_out; i++) onyx_value_free(g->outs[i]);
    free(g->feeds);
    free(g->outs);
    free(g->ids);
    free(g->mask);
    free(g->pos);
    gen_model_free(&g->m);
}

/* The shared cache: zeroed buffers of cap rows, each wrapped twice (the
 * past feed and the present output). */
static onyx_status *gen_cache_init(gen_state *g) {
    gen_model *m = &g->m;
    size_t feeds = m->has_position_ids ? 3 : 2, n = m->n_out - 1;
    size_t per = (size_t)m->kv_heads * g->cap * (size_t)m->head_size;
    g->cache = calloc(n * per, sizeof(float));
    g->present = calloc(n, sizeof *g->present);
    if (!g->cache || !g->present) return onyx_error(ONYX_ERR_OUT_OF_MEMORY, "out of memory");
    int64_t shape[4] = {1, m->kv_heads, (int64_t)g->cap, m->head_size};
    for (size_t i = 0; i < n; i++) {
        float *buf = g->cache + i * per;
        onyx_value_free(g->feeds[feeds + i]);
        g->feeds[feeds + i] = NULL;
        ONYX_TRY(onyx_tensor_create_with_data(ONYX_FLOAT, shape, 4, buf, per * sizeof(float), &g->feeds[feeds + i]));
        ONYX_TRY(onyx_tensor_create_with_data(ONYX_FLOAT, shape, 4, buf, per * sizeof(float), &g->present[i]));
    }
    g->shared = true;
    return NULL;
}

/* One run over n tokens at positions [past, past + n). Shared cache: the
 * step writes its keys and values into the buffers in place. Otherwise the
 * past inputs are the previous run's present outputs, handed over as they
 * are. */
static onyx_status *gen_step(onyx_session *s, gen_state *g, const int64_t *tokens, size_t n, size_t past) {
    gen_model *m = &g->m;
    size_t feeds = m->has_position_ids ? 3 : 2, total = past + n;
    for (size_t i = 0; i < feeds; i++) {
        onyx_value_free(g->feeds[i]);
        g->feeds[i] = NULL;
    }
    memcpy(g->ids, tokens, n * sizeof *tokens);
    for (size_t i = 0; i < total; i++) g->mask[i] = 1;
    for (size_t i = 0; i < n; i++) g->pos[i] = (int64_t)(past + i);
    int64_t shape_ids[2] = {1, (int64_t)n}, shape_mask[2] = {1, (int64_t)total};
    ONYX_TRY(onyx_tensor_create_with_data(ONYX_INT64, shape_ids, 2, g->ids, n * sizeof(int64_t), &g->feeds[0]));
    ONYX_TRY(onyx_tensor_create_with_data(ONYX_INT64, shape_mask, 2, g->mask, total * sizeof(int64_t),
                                          &g->feeds[1]));
    if (m->has_position_ids)
        ONYX_TRY(onyx_tensor_create_with_data(ONYX_INT64, shape_ids, 2, g->pos, n * sizeof(int64_t),
                                              &g->feeds[2]));
    if (!past && !g->shared) {   /* empty caches for the prompt */
        int64_t shape[4] = {1, m->kv_heads, 0, m->head_size};
        for (size_t i = feeds; i < m->n_in; i++) {
            onyx_value_free(g->feeds[i]);
            g->feeds[i] = NULL;
            ONYX_TRY(onyx_tensor_create(ONYX_FLOAT, shape, 4, &g->feeds[i]));
        }
    }
    onyx_value **next = calloc(m->n_out, sizeof *next);
    if (!next) return onyx_error(ONYX_ERR_OUT_OF_MEMORY, "out of memory");
    if (g->shared) memcpy(next + 1, g->present, (m->n_out - 1) * sizeof *next);
    onyx_status *st = onyx_session_run_into(s, NULL, m->in_names, (const onyx_value *const *)g->feeds, m->n_in,
                                            m->out_names, m->n_out, next);
    if (st) {
        if (!g->shared) onyx_value_free(next[0]);
        free(next);
        return st;
    }
    if (g->shared) {   /* the presents are the buffers: keep only the logits */
        onyx_value_free(g->outs[0]);
        g->outs[0] = next[0];
        free(next);
        return NULL;
    }
    for (size_t i = 0; i < m->n_out; i++) onyx_value_free(g->outs[i]);
    free(g->outs);
    g->outs = next;
    /* the presents become the next step's pasts */
    for (size_t i = feeds; i < m->n_in; i++) {
        onyx_value_free(g->feeds[i]);
        g->feeds[i] = g->outs[1 + (i - feeds)];
        g->outs[1 + (i - feeds)] = NULL;
    }
    return NULL;
}

/* The prompt run, on a shared cache when the model's attention writes its
 * present outputs in place (GroupQueryAttention); a model whose present
 * grows past + n rows (MultiHeadAttention, Concat) refuses the max-length
 * output shape, and then runs with the presents handed over. */
static onyx_status *gen_prefill(onyx_session *s, gen_state *g, const int64_t *tokens, size_t n) {
    ONYX_TRY(gen_cache_init(g));
    onyx_status *st = gen_step(s, g, tokens, n, 0);
    if (!st || onyx_status_code(st) != ONYX_ERR_INVALID_ARGUMENT) return st;
    onyx_status_free(st);
    gen_cache_free(g);
    return gen_step(s, g, tokens, n, 0);
}

/* The logits row of the last token of the step. */
static onyx_status *gen_last_logits(gen_state *g, size_t n, const float **row, int64_t *vocab) {
    onyx_value *l = g->outs[0];
    const int64_t *sh = onyx_tensor_shape(l);
    if (onyx_tensor_element_type(l) != ONYX_FLOAT || onyx_tensor_rank(l) != 3 || sh[1] != (int64_t)n ||
        sh[2] <= 0)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "logits must be float [1, %zu, vocab]", n);
    *vocab = sh[2];
    *row = (const float *)onyx_tensor_data(l) + (n - 1) * (size_t)sh[2];
    return NULL;
}

static onyx_status *gen_loop(onyx_session *s, const gen_options *o, gen_state *g, gen_result *r) {
    ONYX_TRY(gen_inspect(s, &g->m));
    for (size_t i = 0; i < o->n_prompt; i++)
        if (o->prompt[i] < 0 || (g->m.vocab > 0 && o->prompt[i] >= g->m.vocab))
            return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "input id %lld (position %zu) is outside the vocabulary "
                                                         "[0, %lld)", (long long)o->prompt[i], i,
                              (long long)g->m.vocab);
    size_t cap = o->n_prompt + o->max_new_tokens + 1;
    g->cap = cap;
    g->feeds = calloc(g->m.n_in, sizeof *g->feeds);
    g->outs = calloc(g->m.n_out, sizeof *g->outs);
    g->ids = malloc(cap * sizeof *g->ids);
    g->mask = malloc(cap * sizeof *g->mask);
    g->pos = malloc(cap * sizeof *g->pos);
    r->ids = malloc((o->max_new_tokens + 1) * sizeof *r->ids);
    if (!g->feeds || !g->outs || !g->ids || !g->mask || !g->pos || !r->ids)
        return onyx_error(ONYX_ERR_OUT_OF_MEMORY, "out of memory");
    uint64_t rng = o->seed * 0x9E3779B97F4A7C15ULL + 0x632BE59BD9B4E019ULL;
    double t0 = cli_now_ms();
    ONYX_TRY(gen_prefill(s, g, o->prompt, o->n_prompt));
    r->prefill_ms = cli_now_ms() - t0;
    size_t past = o->n_prompt;
    const float *row;
    int64_t vocab, next;
    ONYX_TRY(gen_last_logits(g, o->n_prompt, &row, &vocab));
    for (;;) {
        ONYX_TRY(gen_pick(o, row, vocab, &rng, &next));
        r->ids[r->n_ids++] = next;
        if (r->n_ids >= o->max_new_tokens || next == o->eos_id) break;
        double t1 = cli_now_ms();
        ONYX_TRY(gen_step(s, g, &next, 1, past));
        r->decode_ms += cli_now_ms() - t1;
        r->decode_steps++;
        past++;
        ONYX_TRY(gen_last_logits(g, 1, &row, &vocab));
    }
    r->last_logits = malloc((size_t)vocab * sizeof(float));
    if (!r->last_logits) return onyx_error(ONYX_ERR_OUT_OF_MEMORY, "out of memory");
    memcpy(r->last_logits, row, (size_t)vocab * sizeof(float));
    r->vocab = vocab;
    return NULL;
}

onyx_status *gen_run(onyx_session *s, const gen_options *o, gen_result *r) {
    memset(r, 0, sizeof *r);
    if (!o->n_prompt) return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "the prompt needs at least one input id");
    if (!o->max_new_tokens) return NULL;
    gen_state g;
    memset(&g, 0, sizeof g);
    onyx_status *st = gen_loop(s, o, &g, r);
    gen_state_free(&g);
    return st;
}

void gen_result_free(gen_result *r) {
    free(r->ids);
    free(r->last_logits);
    memset(r, 0, sizeof *r);
}
