# Conformance and end-to-end runs, included by tests/CMakeLists.txt. Every entry passes or fails
# on its exit status; all run from the source root.
#
#   conformance.light    onyx test ../shared/onnx-tests/light (model-zoo architectures)
#   conformance.node     onyx test ../shared/onnx-tests/node, the tests that tests/node_filter.txt
#                        selects minus those listed in tests/node_exclude.txt
#   conformance.debian-node  Debian's opset-17 node tests (libonnx-testdata) minus
#                        tests/debian_exclude.txt
#   conformance.simple, conformance.pytorch-converted, conformance.pytorch-operator
#                        the whole folders
#   example.run_model    build/onyx_example models/digits.onnx
#   example.missing_model  onyx_example on a missing file: an error that names the file
#   example.digits       build/onyx_digits on the demo test set, accuracy >= 97%
#
# The test data lives beside the checkout (../shared/onnx-tests); override with
# -DONYX_TESTDATA_DIR=/path. Entries whose data is absent are not registered.

set(ONYX_TESTDATA_DIR "${CMAKE_SOURCE_DIR}/../shared/onnx-tests" CACHE PATH
    "ONNX conformance data (node/, light/, ...)")

if(EXISTS "${ONYX_TESTDATA_DIR}/light")
  add_test(NAME conformance.light
           COMMAND $<TARGET_FILE:onyx> test "${ONYX_TESTDATA_DIR}/light"
           WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
  set_tests_properties(conformance.light PROPERTIES TIMEOUT 1800 LABELS conformance)
endif()

if(EXISTS "${ONYX_TESTDATA_DIR}/node")
  # The filter file holds one regex per line; join them into one alternation.
  file(STRINGS "${CMAKE_CURRENT_SOURCE_DIR}/node_filter.txt" _onyx_filter_lines REGEX "^[^#]")
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
               "${CMAKE_CURRENT_SOURCE_DIR}/node_filter.txt")
  list(JOIN _onyx_filter_lines "|" _onyx_node_filter)
  add_test(NAME conformance.node
           COMMAND $<TARGET_FILE:onyx> test "${ONYX_TESTDATA_DIR}/node"
                   --filter "${_onyx_node_filter}"
                   --exclude-file "${CMAKE_CURRENT_SOURCE_DIR}/node_exclude.txt"
           WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
  set_tests_properties(conformance.node PROPERTIES TIMEOUT 1800 LABELS conformance)
  # The same suite with the optimiser off (every level must give the same results), and with
  # every test run from 4 threads at once on one session (the thread-safety contract).
  add_test(NAME conformance.node-opt-disabled
           COMMAND $<TARGET_FILE:onyx> test "${ONYX_TESTDATA_DIR}/node" -o disabled
                   --filter "${_onyx_node_filter}"
                   --exclude-file "${CMAKE_CURRENT_SOURCE_DIR}/node_exclude.txt"
           WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
  add_test(NAME conformance.node-concurrent
           COMMAND $<TARGET_FILE:onyx> test "${ONYX_TESTDATA_DIR}/node" --concurrent 4
                   --filter "${_onyx_node_filter}"
                   --exclude-file "${CMAKE_CURRENT_SOURCE_DIR}/node_exclude.txt"
           WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
  set_tests_properties(conformance.node-opt-disabled conformance.node-concurrent
                       PROPERTIES TIMEOUT 1800 LABELS conformance)
endif()

# Debian's older copy of the node tests (opset 17; package libonnx-testdata, which
# scripts/test.sh installs), minus its known defects listed in tests/debian_exclude.txt.
set(ONYX_DEBIAN_TESTDATA_DIR "/usr/share/libonnx-testdata/data" CACHE PATH
    "Debian's ONNX test data (libonnx-testdata)")
if(EXISTS "${ONYX_DEBIAN_TESTDATA_DIR}/node")
  add_test(NAME conformance.debian-node
           COMMAND $<TARGET_FILE:onyx> test "${ONYX_DEBIAN_TESTDATA_DIR}/node"
                   --exclude-file "${CMAKE_CURRENT_SOURCE_DIR}/debian_exclude.txt"
           WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
  set_tests_properties(conformance.debian-node PROPERTIES TIMEOUT 1800 LABELS conformance)
endif()

# Small multi-node models and models converted from PyTorch: every one passes, so the whole
# folders run.
foreach(suite simple pytorch-converted pytorch-operator)
  if(EXISTS "${ONYX_TESTDATA_DIR}/${suite}")
    add_test(NAME conformance.${suite}
             COMMAND $<TARGET_FILE:onyx> test "${ONYX_TESTDATA_DIR}/${suite}"
             WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
    set_tests_properties(conformance.${suite} PROPERTIES TIMEOUT 600 LABELS conformance)
  endif()
endforeach()

add_test(NAME example.run_model
         COMMAND $<TARGET_FILE:onyx_example> models/digits.onnx
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
add_test(NAME example.missing_model
         COMMAND $<TARGET_FILE:onyx_example> models/no_such_model.onnx
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
# The error must name the file (a regex match also rules out a crash passing for a failure).
set_tests_properties(example.missing_model PROPERTIES
                     PASS_REGULAR_EXPRESSION "onyx_example: load: .*no_such_model\\.onnx")
add_test(NAME example.digits
         COMMAND $<TARGET_FILE:onyx_digits> models/digits.onnx models/digits_test.bin
                 --expect-accuracy 0.97
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
set_tests_properties(example.run_model example.missing_model example.digits
                     PROPERTIES TIMEOUT 300 LABELS example)
