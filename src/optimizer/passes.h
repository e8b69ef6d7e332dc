/* Every optimiser pass, in the order the manager runs them within a level.
 * Each ONYX_PASS(symbol) names a `const onyx_pass onyx_pass_<symbol>`
 * defined in one of the passes_*.c files. */
/* basic (half_to_float first: the passes after it see float32) */
ONYX_PASS(half_to_float)
ONYX_PASS(constant_folding)
ONYX_PASS(shape_folding)
ONYX_PASS(identity_elimination)
ONYX_PASS(common_subexpression_elimination)
ONYX_PASS(conv_fold)
ONYX_PASS(pad_fusion)
ONYX_PASS(matmul_add_fusion)
ONYX_PASS(transpose_cancellation)
ONYX_PASS(dead_node_elimination)
ONYX_PASS(unused_initializer_removal)
/* extended (passes_fusion*.c): attention and embedding first, before the
 * layer-norm, GELU and MatMul fusions could take parts of their patterns */
ONYX_PASS(attention_fusion)
ONYX_PASS(embed_layer_norm_fusion)
ONYX_PASS(layer_norm_fusion)
ONYX_PASS(simplified_layer_norm_fusion)
ONYX_PASS(skip_layer_norm_fusion)
ONYX_PASS(rotary_fusion)               /* passes_fusion_decoder.c */
ONYX_PASS(silu_fusion)                 /* passes_fusion_decoder.c */
ONYX_PASS(gelu_fusion)
ONYX_PASS(fast_gelu_fusion)
ONYX_PASS(bias_gelu_fusion)
ONYX_PASS(qdq_conv_fusion) /* passes_fusion_qdq.c: before the Conv fusions take its Conv */
ONYX_PASS(conv_add_activation_fusion)
ONYX_PASS(conv_activation_fusion)
ONYX_PASS(gemm_activation_fusion)
ONYX_PASS(matmul_transpose_fusion)
ONYX_PASS(matmul_scale_fusion)
ONYX_PASS(decoder_attention_fusion)   /* passes_fusion_decoder_attn.c: after rotary and FusedMatMul */
ONYX_PASS(dynamic_quant_matmul_fusion) /* passes_fusion_quant.c */
ONYX_PASS(extended_cleanup)
/* all (passes_layout.c): the blocked-channel layout, last, on the fused graph */
ONYX_PASS(qlinear_nhwc_layout)   /* passes_layout_qnhwc.c: 8-bit chains channels-last */
ONYX_PASS(nchwc_layout)
ONYX_PASS(matmul_activation_fusion)   /* passes_matmul_activation.c: CPU-only MatMul + GELU */
