/* What the recurrent operators' inference rules share with their kernels:
 * the attributes, read once by onyx_rnn_parse_attrs. */
#ifndef ONYX_IR_SCHEMAS_RNN_H
#define ONYX_IR_SCHEMAS_RNN_H

#include <stdbool.h>
#include <stddef.h>
#include "ir/schema.h"

enum { RNN_PLAIN = 0, RNN_GRU = 1, RNN_LSTM = 2 };
/* the operators' inputs */
enum { IN_X, IN_W, IN_R, IN_B, IN_LENS, IN_H0, IN_C0, IN_P };

/* ------------------------------------------------------------ activations */

typedef enum rnn_act_kind {
    ACT_RELU, ACT_TANH, ACT_SIGMOID, ACT_AFFINE, ACT_LEAKY_RELU, ACT_THRESHOLDED_RELU,
    ACT_SCALED_TANH, ACT_HARD_SIGMOID, ACT_ELU, ACT_SOFTSIGN, ACT_SOFTPLUS,
} rnn_act_kind;

typedef struct rnn_act {
    rnn_act_kind kind;
    float alpha, beta;
} rnn_act;

/* Which parameters each function takes, and their defaults (those of the
 * standalone ONNX operators). */
typedef struct rnn_act_info {
    const char *name;
    rnn_act_kind kind;
    bool uses_alpha, uses_beta;
    float alpha, beta;
} rnn_act_info;


/* --------------------------------------------------------------- attributes */

typedef struct rnn_attrs {
    int kind;                 /* RNN_PLAIN, RNN_GRU, RNN_LSTM */
    size_t gates;             /* 1, 3 or 4 */
    int n_act;                /* activation functions per direction: 1, 2 or 3 */
    size_t dirs;              /* 1 or 2 */
    bool reverse;             /* direction == "reverse" */
    int64_t hidden;           /* hidden_size, 0 when absent */
    int layout;               /* 0: [S, B, ...]; 1: [B, S, ...] */
    bool has_clip;
    float clip;
    bool input_forget;        /* LSTM */
    bool linear_before_reset; /* GRU */
    rnn_act act[2][3];        /* [direction][f, g, h] */
} rnn_attrs;

onyx_status *onyx_rnn_parse_attrs(const onyx_node *node, int kind, rnn_attrs *a);

#endif
