/* Every optimiser pass, in the order the manager runs them within a level.
 * Each ONYX_PASS(symbol) names a `const onyx_pass onyx_pass_<symbol>`
 * defined in one of the passes_*.c files. */
/* basic */
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
