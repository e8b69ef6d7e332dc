/* The activations fused into a convolution's or a GEMM's epilogue
 * (FusedConv's and FusedGemm's "activation" attribute), as the inference
 * rules read them and the kernels apply them. */
#ifndef ONYX_IR_FUSED_ACTIVATION_H
#define ONYX_IR_FUSED_ACTIVATION_H

typedef enum onyx_gemm_activation {
    ONYX_GEMM_ACT_NONE = 0,
    ONYX_GEMM_ACT_RELU = 1,        /* max(x, 0) */
    ONYX_GEMM_ACT_CLIP = 2,        /* min(max(x, act_a), act_b) */
    ONYX_GEMM_ACT_LEAKY_RELU = 3,  /* x >= 0 ? x : act_a * x */
} onyx_gemm_activation;

#endif
