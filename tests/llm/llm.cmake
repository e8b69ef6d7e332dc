# Language-model operators (tests/llm/): MatMulNBits, GroupQueryAttention, RotaryEmbedding,
# the RMS normalisations. The generator writes ONNX test folders with numpy references into
# the build folder; onyx runs them on every ISA table, bad inputs must fail cleanly, and
# ONNX Runtime 1.30 must agree with the same references.
add_test(NAME llm.make_cases
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/llm/make_llm_op_tests.py ${CMAKE_BINARY_DIR}/llm_ops)
set_tests_properties(llm.make_cases PROPERTIES FIXTURES_SETUP llm_cases)
foreach(isa avx512 avx2 generic)
  add_test(NAME llm.ops_${isa}
           COMMAND sh -c "$<TARGET_FILE:onyx> test ${CMAKE_BINARY_DIR}/llm_ops/exact && $<TARGET_FILE:onyx> test ${CMAKE_BINARY_DIR}/llm_ops/int8")
  set_tests_properties(llm.ops_${isa} PROPERTIES FIXTURES_REQUIRED llm_cases ENVIRONMENT "ONYX_ISA=${isa}")
endforeach()
add_test(NAME llm.bad_inputs
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/llm/check_bad.sh $<TARGET_FILE:onyx> ${CMAKE_BINARY_DIR}/llm_ops)
set_tests_properties(llm.bad_inputs PROPERTIES FIXTURES_REQUIRED llm_cases)
add_test(NAME llm.ops_vs_ort
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/llm/check_ort.sh ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR})
set_tests_properties(llm.ops_vs_ort PROPERTIES FIXTURES_REQUIRED llm_cases TIMEOUT 300)
# A Llama-style decoder (scripts/export_llama.py --size small): `onyx generate` gives the
# greedy ids of a reference loop driving ONNX Runtime.
add_test(NAME llm.generate_vs_ort
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/llm/check_generate.sh ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR})
set_tests_properties(llm.generate_vs_ort PROPERTIES TIMEOUT 300)
# examples/generate: greedy steps on a max-length cache shared by past and present (written
# in place by GroupQueryAttention) give the same logits, bit for bit, as fresh presents fed back.
add_test(NAME llm.example_generate
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/llm/check_example.sh ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR})
set_tests_properties(llm.example_generate PROPERTIES TIMEOUT 300)
# Decoder fusions (passes_fusion_decoder.c and the RMSNorm fusions) on a torch.onnx.export of
# a Llama-style decoder: fused node counts, outputs vs torch in onyx and ONNX Runtime 1.30.
add_test(NAME llm.decoder_fusion
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/llm/check_decoder_fusion.sh ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR})
set_tests_properties(llm.decoder_fusion PROPERTIES TIMEOUT 300)
# int4 quantiser weight error read back from the written blocks: round to nearest within a step,
# --scale-search never worse per block and lower in total, --lm-head-bits 8 head.
add_test(NAME llm.int4_quantiser
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/llm/check_int4_quantiser.py $<TARGET_FILE:onyx>
                 ${CMAKE_BINARY_DIR}/llm_int4_quantiser)
set_tests_properties(llm.int4_quantiser PROPERTIES TIMEOUT 300)
