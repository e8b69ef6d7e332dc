# Hardening regressions (issue 10), named data.harden.* so that CI also runs them under
# ASan/UBSan (scripts/test.sh runs the unit.* and data.* tests there). The models come from
# tests/data/make_harden_models.py.
add_test(NAME data.harden.run_timeout
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/harden/cli_timeout.sh $<TARGET_FILE:onyx>
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
set_tests_properties(data.harden.run_timeout PROPERTIES TIMEOUT 60)

# Flag values that are options, and output paths that name an input (tests/harden/cli_args.sh).
add_test(NAME data.harden.cli_args
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/harden/cli_args.sh $<TARGET_FILE:onyx>
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
set_tests_properties(data.harden.cli_args PROPERTIES TIMEOUT 60)

# onyx optimize saves optional(sequence(...)) types (it recursed until the stack overflowed).
if(ONYX_TESTDATA_DIR AND EXISTS "${ONYX_TESTDATA_DIR}/node/test_identity_opt")
  add_test(NAME data.harden.optimize_nested_types
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/harden/optimize_nested_types.sh $<TARGET_FILE:onyx>
                   ${ONYX_TESTDATA_DIR}/node
           WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
  set_tests_properties(data.harden.optimize_nested_types PROPERTIES
                       PASS_REGULAR_EXPRESSION "4 passed, 0 failed" TIMEOUT 120)
endif()

# Input files (issue 10, item 7), fed to conv_huge_strides.onnx (input x, float32[1,1,5,5]).
# PASS_REGULAR_EXPRESSION ignores the exit status, and a crash never prints these messages.
set(_harden_model ${CMAKE_CURRENT_SOURCE_DIR}/data/harden/conv_huge_strides.onnx)
set(_harden_inputs ${CMAKE_CURRENT_SOURCE_DIR}/data/harden)
foreach(_case
    "npz_bomb|bomb.npz|the archive says the member inflates to 16777344 bytes but its .npy header implies 228; refused before inflating"
    "npz_empty|empty.npz|holds none of the model's inputs \\(it has 0 arrays; the inputs are 'x'\\)"
    "npz_no_input|labels_only.npz|holds none of the model's inputs \\(it has 1 arrays"
    "npz_extra_array|x_and_labels.npz|note: .*array 'labels' is not an input of the model; ignored.*input 'x': float32\\[1,1,5,5\\] \\(file\\).*63")
  string(REPLACE "|" ";" _parts "${_case}")
  list(GET _parts 0 _name)
  list(GET _parts 1 _file)
  list(GET _parts 2 _regex)
  add_test(NAME data.harden.${_name}
           COMMAND $<TARGET_FILE:onyx> run ${_harden_model} --inputs ${_harden_inputs}/${_file}
           WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
  set_tests_properties(data.harden.${_name} PROPERTIES PASS_REGULAR_EXPRESSION "${_regex}" TIMEOUT 60)
endforeach()

# Resize/Upsample scales are tensor(float) in every version: float16 ones are refused (as ONNX
# Runtime refuses them at load), naming the input, and so are int32 sizes; a double roi is the spec's T2 and runs.
foreach(_case
    "resize_f16_scales|input scales must be a float \\(float32, in every version\\) tensor, got float16"
    "upsample_f16_scales|input scales must be a float \\(float32, in every version\\) tensor, got float16"
    "resize_i32_sizes|input sizes must be an int64 tensor, got int32"
    "resize_f64_roi|output 0 'y': float16\\[1,1,3,3\\]")
  string(REPLACE "|" ";" _parts "${_case}")
  list(GET _parts 0 _name)
  list(GET _parts 1 _regex)
  add_test(NAME data.harden.${_name} COMMAND $<TARGET_FILE:onyx> run ${_harden_inputs}/${_name}.onnx
           WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
  set_tests_properties(data.harden.${_name} PROPERTIES PASS_REGULAR_EXPRESSION "${_regex}" TIMEOUT 60)
endforeach()

# --timeout on perf (per run) and test (per test: the runs end with a 'terminated' error).
add_test(NAME data.harden.perf_timeout
         COMMAND $<TARGET_FILE:onyx> perf ${_harden_inputs}/loop_forever.onnx --timeout 0.5 -r 1 -w 0
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
set_tests_properties(data.harden.perf_timeout PROPERTIES
                     PASS_REGULAR_EXPRESSION "the run was terminated: it exceeded its timeout of 500 ms" TIMEOUT 60)
add_test(NAME data.harden.test_timeout
         COMMAND $<TARGET_FILE:onyx> test ${_harden_inputs}/test_timeout --timeout 1
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
set_tests_properties(data.harden.test_timeout PROPERTIES
                     PASS_REGULAR_EXPRESSION "ERROR test_loop_forever: .*the run was terminated: it exceeded its timeout.*0 passed, 1 failed"
                     TIMEOUT 60)

# Linear-time loading (issue 10): a 100k-node chain loads in under 2 s. Release builds only
# (a sanitizer build is slower by design); the 1M/100k scaling is bench/chain_load.sh's.
if(CMAKE_BUILD_TYPE STREQUAL "Release")
  add_test(NAME harden.chain_load_100k
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/harden/chain_load.sh $<TARGET_FILE:onyx> 2000
           WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
  set_tests_properties(harden.chain_load_100k PROPERTIES TIMEOUT 120)
endif()
