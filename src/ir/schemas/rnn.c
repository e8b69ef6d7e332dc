/* Inference rules of the operators of providers/cpu/kernels/nn/rnn.c (the kernels run them). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "ir/schema.h"
#include "ir/schemas/rnn.h"

static const rnn_act_info act_table[] = {
    {"Relu", ACT_RELU, false, false, 0.0f, 0.0f},
    {"Tanh", ACT_TANH, false, false, 0.0f, 0.0f},
    {"Sigmoid", ACT_SIGMOID, false, false, 0.0f, 0.0f},
    {"Affine", ACT_AFFINE, true, true, 1.0f, 0.0f},
    {"LeakyRelu", ACT_LEAKY_RELU, true, false, 0.01f, 0.0f},
    {"ThresholdedRelu", ACT_THRESHOLDED_RELU, true, false, 1.0f, 0.0f},
    {"ScaledTanh", ACT_SCALED_TANH, true, true, 1.0f, 1.0f},
    {"HardSigmoid", ACT_HARD_SIGMOID, true, true, 0.2f, 0.5f},
    {"Elu", ACT_ELU, true, false, 1.0f, 0.0f},
    {"Softsign", ACT_SOFTSIGN, false, false, 0.0f, 0.0f},
    {"Softplus", ACT_SOFTPLUS, false, false, 0.0f, 0.0f},
};

#define L ONYX_SCHEMA_LATEST

static const char *kind_name(int kind) {
    return kind == RNN_LSTM ? "LSTM" : kind == RNN_GRU ? "GRU" : "RNN";
}
static onyx_status *parse_act_name(const onyx_bytes *s, const rnn_act_info **out) {
    for (size_t i = 0; i < sizeof act_table / sizeof act_table[0]; i++) {
        const char *name = act_table[i].name;
        if (strlen(name) == s->len && strncasecmp(name, (const char *)s->ptr, s->len) == 0) {
            *out = &act_table[i];
            return NULL;
        }
    }
    return ONYX_INVALID_ARG("unsupported activation function '%.*s' (expected Relu, Tanh, Sigmoid, "
                            "Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, "
                            "Softsign or Softplus)",
                            (int)(s->len > 64 ? 64 : s->len), (const char *)s->ptr);
}
/* activations, activation_alpha, activation_beta. The alpha and beta lists
 * are consumed in order by the functions that take them; a function finding
 * its list exhausted uses its default. */
static onyx_status *parse_activations(const onyx_node *node, rnn_attrs *a) {
    static const rnn_act_kind defaults[3][3] = {
        {ACT_TANH},                          /* RNN */
        {ACT_SIGMOID, ACT_TANH},             /* GRU */
        {ACT_SIGMOID, ACT_TANH, ACT_TANH},   /* LSTM */
    };
    const onyx_attr_proto *names = onyx_node_attr(node, "activations");
    size_t n_names = names ? names->n_strings : 0;
    size_t need = (size_t)a->n_act * a->dirs;
    if (n_names == 0) {
        for (size_t d = 0; d < a->dirs; d++)
            for (int k = 0; k < a->n_act; k++) {
                rnn_act_kind kind = defaults[a->kind][k];
                a->act[d][k] = (rnn_act){kind, 0.0f, 0.0f};
            }
        return NULL;
    }
    /* A bidirectional node listing one set of functions uses it both ways. */
    if (n_names != need && !(a->dirs == 2 && n_names == (size_t)a->n_act))
        return ONYX_INVALID_ARG("attribute activations has %zu entries; %s with %zu direction(s) "
                                "needs %zu", n_names, kind_name(a->kind), a->dirs, need);
    size_t n_alpha, n_beta;
    const float *alpha = onyx_attr_floats(node, "activation_alpha", &n_alpha);
    const float *beta = onyx_attr_floats(node, "activation_beta", &n_beta);
    size_t ia = 0, ib = 0;
    for (size_t i = 0; i < n_names; i++) {
        const rnn_act_info *info = NULL;
        ONYX_TRY(parse_act_name(&names->strings[i], &info));
        rnn_act f = {info->kind, info->alpha, info->beta};
        if (info->uses_alpha && ia < n_alpha) f.alpha = alpha[ia++];
        if (info->uses_beta && ib < n_beta) f.beta = beta[ib++];
        a->act[i / (size_t)a->n_act][i % (size_t)a->n_act] = f;
    }
    if (n_names < need)
        for (int k = 0; k < a->n_act; k++) a->act[1][k] = a->act[0][k];
    return NULL;
}
onyx_status *onyx_rnn_parse_attrs(const onyx_node *node, int kind, rnn_attrs *a) {
    memset(a, 0, sizeof *a);
    a->kind = kind;
    a->gates = kind == RNN_LSTM ? 4 : kind == RNN_GRU ? 3 : 1;
    a->n_act = kind == RNN_LSTM ? 3 : kind == RNN_GRU ? 2 : 1;
    const char *dir = onyx_attr_string(node, "direction", "forward");
    if (!strcmp(dir, "forward")) a->dirs = 1;
    else if (!strcmp(dir, "reverse")) a->dirs = 1, a->reverse = true;
    else if (!strcmp(dir, "bidirectional")) a->dirs = 2;
    else
        return ONYX_INVALID_ARG("attribute direction is '%s'; expected forward, reverse or "
                                "bidirectional", dir);
    a->hidden = onyx_attr_int(node, "hidden_size", 0);
    if (onyx_node_attr(node, "hidden_size") && a->hidden <= 0)
        return ONYX_INVALID_ARG("attribute hidden_size is %lld; it must be positive",
                                (long long)a->hidden);
    int64_t layout = onyx_attr_int(node, "layout", 0);
    if (layout != 0 && layout != 1)
        return ONYX_INVALID_ARG("attribute layout is %lld; expected 0 or 1", (long long)layout);
    a->layout = (int)layout;
    if (onyx_node_attr(node, "clip")) {
        a->clip = onyx_attr_float(node, "clip", 0.0f);
        if (!(a->clip >= 0.0f))
            return ONYX_INVALID_ARG("attribute clip is %g; it must be a non-negative threshold",
                                    (double)a->clip);
        a->has_clip = true;
    }
    int64_t input_forget = onyx_attr_int(node, "input_forget", 0);
    int64_t lbr = onyx_attr_int(node, "linear_before_reset", 0);
    a->input_forget = kind == RNN_LSTM && input_forget != 0;
    a->linear_before_reset = kind == RNN_GRU && lbr != 0;
    return parse_activations(node, a);
}
/* ------------------------------------------------------------------ infer */

static onyx_status *recurrent_infer(onyx_infer_ctx *ctx, int kind) {
    const onyx_type *x = ctx->n_in > IN_X ? ctx->in[IN_X] : NULL;
    if (!x) return NULL;
    rnn_attrs a;
    onyx_status *st = onyx_rnn_parse_attrs(ctx->node, kind, &a);
    if (st) {
        onyx_status_free(st);
        return NULL;
    }
    const onyx_type *r = ctx->n_in > IN_R ? ctx->in[IN_R] : NULL;
    int64_t H = a.hidden ? a.hidden : r && r->rank == 3 ? r->dims[2] : ONYX_DIM_UNKNOWN;
    int64_t S = ONYX_DIM_UNKNOWN, B = ONYX_DIM_UNKNOWN, D = (int64_t)a.dirs;
    if (x->rank == 3) {
        S = x->dims[a.layout ? 1 : 0];
        B = x->dims[a.layout ? 0 : 1];
    }
    for (size_t i = 0; i < ctx->n_out && i < 3; i++) {
        onyx_type *o = &ctx->out[i];
        memset(o, 0, sizeof *o);
        o->kind = ONYX_VALUE_TENSOR;
        o->dtype = x->dtype;
        if (i == 0) {
            int64_t d0[4] = {S, D, B, H}, d1[4] = {B, S, D, H};
            o->rank = 4;
            memcpy(o->dims, a.layout ? d1 : d0, sizeof d0);
        } else {
            int64_t d0[3] = {D, B, H}, d1[3] = {B, D, H};
            o->rank = 3;
            memcpy(o->dims, a.layout ? d1 : d0, sizeof d0);
        }
    }
    return NULL;
}
static onyx_status *rnn_infer(onyx_infer_ctx *ctx) { return recurrent_infer(ctx, RNN_PLAIN); }
static onyx_status *gru_infer(onyx_infer_ctx *ctx) { return recurrent_infer(ctx, RNN_GRU); }
static onyx_status *lstm_infer(onyx_infer_ctx *ctx) { return recurrent_infer(ctx, RNN_LSTM); }

const onyx_schema_def onyx_schemas_rnn[] = {
    {"", "GRU", 1, L, gru_infer},
    {"", "LSTM", 1, L, lstm_infer},
    {"", "RNN", 1, L, rnn_infer},
    {0},
};
