# Minimal builds (docs/build_options.md): a library with only the kernels
# and optimiser passes that an operator list needs.
#
#   -DONYX_OPS_CONFIG=FILE            the list (`onyx ops --required-by MODEL...` writes one;
#                                     ONNX Runtime's required_operators.config format)
#   -DONYX_OPS_FROM_MODELS="a.onnx;b.onnx"
#                                     the list of these models, written at configure time by
#                                     ONYX_OPS_TOOL (a full build's `onyx`; default: build/onyx
#                                     of this checkout, else `onyx` on PATH)
#
# scripts/minimal_build.py writes a copy of every kernel family source whose
# table keeps only the listed operators (the compiler then drops the rest of
# the file's kernels), a filtered optimizer/passes.h, and the names left out
# for the error message. The library is compiled with function and data
# sections and linked with --gc-sections, so code nothing reaches is dropped.
#
# onyx_minimal_sources(CONFIG OUT_DIR DESCRIPTION REPLACED GENERATED OMITTED): run
# the script; REPLACED gets the original sources it replaces, GENERATED the files
# to compile instead (in the same order), plus two wrappers (optimizer.c with
# the filtered pass list, build_options.c with the left-out names); OMITTED the
# common-core features no kept kernel needs (ONYX_MINIMAL_FEATURE_SOURCES_<name>).


set(ONYX_OPS_CONFIG "" CACHE FILEPATH "Minimal build: operator list file (onyx ops --required-by)")
set(ONYX_OPS_FROM_MODELS "" CACHE STRING "Minimal build: models whose operators to keep (;-separated)")
set(ONYX_OPS_TOOL "" CACHE FILEPATH "A full build's onyx tool, for ONYX_OPS_FROM_MODELS")

find_package(Python3 COMPONENTS Interpreter)

function(onyx_minimal_sources config out_dir description replaced_var generated_var omitted_var)
  if(NOT Python3_Interpreter_FOUND)
    message(FATAL_ERROR "a minimal build needs python3 (scripts/minimal_build.py)")
  endif()
  execute_process(
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/scripts/minimal_build.py
            ${config} ${CMAKE_SOURCE_DIR} ${out_dir} ${description}
    OUTPUT_VARIABLE pairs RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "scripts/minimal_build.py ${config}: ${err}")
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${config}
               ${CMAKE_SOURCE_DIR}/scripts/minimal_build.py ${CMAKE_SOURCE_DIR}/src/optimizer/passes.h)
  string(REPLACE "\n" ";" pairs "${pairs}")
  set(replaced "")
  set(generated "")
  set(omitted "")
  foreach(pair ${pairs})
    if(pair MATCHES "^OMIT\\|(.+)$")
      list(APPEND omitted ${CMAKE_MATCH_1})
    elseif(pair MATCHES "^DROP\\|(.+)$")
      list(APPEND replaced ${CMAKE_MATCH_1})
    elseif(pair MATCHES "^(.+)\\|(.+)$")
      list(APPEND replaced ${CMAKE_MATCH_1})
      list(APPEND generated ${CMAKE_MATCH_2})
      set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CMAKE_MATCH_1})
    endif()
  endforeach()
  # Sources that read a generated header (OUT_DIR/gen, before src/ through
  # -iquote) are compiled through a wrapper in OUT_DIR.
  foreach(src optimizer/optimizer.c ir/op_arity.c ir/schema.c providers/cpu/build_options.c
              providers/cpu/platform.c providers/cpu/registry.c)
    get_filename_component(base ${src} NAME_WE)
    set(wrapper ${out_dir}/${base}_minimal.c)
    set(text "/* ${src} of this minimal build (generated headers in gen/) */\n")
    if(base STREQUAL "build_options")
      string(APPEND text "#define ONYX_MINIMAL_BUILD 1\n")
    elseif(base STREQUAL "platform")
      string(APPEND text "#include \"platform_weak.h\"\n")
    elseif(base STREQUAL "registry")
      string(APPEND text "#include <stdint.h>\n#include \"minimal_ops.h\"\n")  # ONYX_MINIMAL_TYPES
    endif()
    string(APPEND text "#include \"${CMAKE_SOURCE_DIR}/src/${src}\"\n")
    file(WRITE ${wrapper}.tmp "${text}")
    configure_file(${wrapper}.tmp ${wrapper} COPYONLY)  # rewritten only when it changes
    list(APPEND replaced ${CMAKE_SOURCE_DIR}/src/${src})
    list(APPEND generated ${wrapper})
  endforeach()
  set_source_files_properties(${generated} PROPERTIES
    COMPILE_OPTIONS "-iquote;${out_dir}/gen;-Wno-unused-function;-ffunction-sections;-fdata-sections"
    COMPILE_DEFINITIONS "${ONYX_HAVE_DEFINES}")
  set(${replaced_var} ${replaced} PARENT_SCOPE)
  set(${generated_var} ${generated} PARENT_SCOPE)
  set(${omitted_var} ${omitted} PARENT_SCOPE)
endfunction()

# Sections per function, dropped at link when nothing reaches them; -Os; no
# unwind tables (C code, nothing unwinds through it).
#
# ONYX_MINIMAL_SIZE: the SGEMM and blocked-convolution micro-kernels force one
# unrolled copy of their tile body per tile shape (always_inline); these files
# get one body called with the shape instead. Each accumulator keeps the same
# chain of FMA intrinsics, so results stay bit-identical (checked by
# tests/minimal/check_minimal.sh and scripts/sizes.sh), for a fraction of the
# code and slower edge tiles. Other files keep their inlining: there, calls
# instead of inlined code change where gcc fuses a multiply and an add, and
# with it the last bit of results.
option(ONYX_MINIMAL_SIZE "Minimal builds: one tile body per SGEMM/convolution micro-kernel file" ON)
set(ONYX_MINIMAL_NOINLINE_SOURCES
    gemm/gemm_avx2.c gemm/gemm_avx512.c kernels/nchwc/nchwc_conv_avx2.c kernels/nchwc/nchwc_conv_avx512.c)
# Left out of every minimal build, answered by src/session/minimal_omitted.c:
# provider plugins, saving models, bfloat16 fast-math, offered outputs (for
# libonnxruntime.so's output cache).
# I/O binding (device tensors stay: device_tensor.c), profiling and the
# partitioner (device providers come only from plugins) too, and what only
# device providers use (the per-run pair, outer values' copies).
set(ONYX_MINIMAL_OMITTED_SOURCES providers/plugin.c ir/save_model.c session/io_binding.c session/profiler.c session/run_offered.c
    session/partition.c session/run_providers.c session/outer_copies.c
    providers/cpu/gemm/sgemm_bf16.c providers/cpu/gemm/sgemm_bf16_avx512.c providers/cpu/gemm/sgemm_bf16_amx.c
    providers/cpu/kernels/nchwc/nchwc_conv_bf16.c providers/cpu/kernels/nchwc/nchwc_conv_bf16_amx.c
    providers/cpu/kernels/nchwc/nchwc_conv_bf16_avx512.c)
# Common-core features left out when no kept kernel needs them (the script's
# OMIT lines; minimal_omitted.c answers for each under ONYX_MINIMAL_OMITS_<name>).
set(ONYX_MINIMAL_FEATURE_SOURCES_subgraphs session/subgraph.c)
set(ONYX_MINIMAL_FEATURE_SOURCES_composite_values core/value_compose.c)
# Model features the operator list's `features;` line does not name (`onyx ops
# --required-by` writes it; a list without one keeps them all): model-local
# functions (their inlining), sparse tensors and external data
# (format/tensor_proto.c then refuses one, naming the tensor).
set(ONYX_MINIMAL_FEATURE_SOURCES_local_functions ir/function_inline.c)
# Custom operators (onyx_session_options_add_custom_op) are left out unless
# asked for, as ONNX Runtime's minimal builds do (--minimal_build custom_ops):
# providers/custom/custom_omitted.c answers instead.
option(ONYX_MINIMAL_CUSTOM_OPS "Minimal builds: keep custom operators" OFF)
# ONYX_MINIMAL_ISA: the x86-64 instruction set whose kernels a minimal build
# keeps besides the portable ones (avx512, avx2, generic; `all`, the default,
# keeps every one). A CPU without it runs the portable kernels.
set(ONYX_MINIMAL_ISA all CACHE STRING "Minimal builds: the one x86-64 ISA to compile kernels for (all, avx512, avx2, generic)")
set(ONYX_MINIMAL_OPT -Os CACHE STRING "Minimal builds: the optimisation flag")
# -fno-semantic-interposition and -fno-plt: calls inside the library bind
# directly and calls out go through the GOT, without PLT stubs.
set(ONYX_MINIMAL_COMPILE_OPTIONS ${ONYX_MINIMAL_OPT} -ffunction-sections -fdata-sections -fno-ident
    -fno-asynchronous-unwind-tables -fno-semantic-interposition -fno-plt
    -Wno-maybe-uninitialized -Wno-format-truncation)  # -Os inlines less: gcc sees fewer paths
# (RELR relocations, as every build where the linker has them: CMakeLists.txt.)
# -z now: full RELRO (with -fno-plt every call goes through the GOT, which then
# turns read-only at load with the rest; 64 B smaller too: no lazy-binding table).
# --build-id=none: no .note.gnu.build-id (its note, section and program headers
# are about 180 B; the digits build for AVX-512 hosts was 16 B over its limit).
set(ONYX_MINIMAL_LINK_OPTIONS -Wl,--gc-sections -Wl,-z,noseparate-code -Wl,-z,now -Wl,--build-id=none)
# Link-time optimisation where the toolchain has it: calls across files inline
# or go, and what only they reached with them (the digits build for AVX-512
# hosts: 153,536 -> 145,264 B stripped, where its limit is 153,600).
option(ONYX_MINIMAL_LTO "Minimal builds: link-time optimisation where the compiler supports it" ON)


# A minimal configuration: the library itself is built from the filtered sources.
if(ONYX_OPS_FROM_MODELS AND NOT ONYX_OPS_CONFIG)
  set(tool "${ONYX_OPS_TOOL}")
  if(NOT tool AND EXISTS ${CMAKE_SOURCE_DIR}/build/onyx)
    set(tool ${CMAKE_SOURCE_DIR}/build/onyx)
  endif()
  if(NOT tool)
    find_program(ONYX_OPS_TOOL_FOUND onyx)
    set(tool "${ONYX_OPS_TOOL_FOUND}")
  endif()
  if(NOT tool)
    message(FATAL_ERROR "ONYX_OPS_FROM_MODELS needs a full build's onyx tool to list the models' "
                        "operators: run `make` first, or pass -DONYX_OPS_TOOL=PATH, or give the list "
                        "with -DONYX_OPS_CONFIG=FILE (onyx ops --required-by MODEL... > FILE)")
  endif()
  set(models "")
  foreach(m ${ONYX_OPS_FROM_MODELS})
    get_filename_component(m ${m} ABSOLUTE BASE_DIR ${CMAKE_SOURCE_DIR})
    list(APPEND models ${m})
  endforeach()
  set(ONYX_OPS_LIST ${CMAKE_BINARY_DIR}/minimal/required_operators.config)
  file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/minimal)
  execute_process(COMMAND ${tool} ops --required-by ${models}
                  OUTPUT_FILE ${ONYX_OPS_LIST} RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${tool} ops --required-by ${models}: ${err}")
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${models})
  set(ONYX_OPS_DESCRIPTION "ONYX_OPS_FROM_MODELS=${ONYX_OPS_FROM_MODELS}")
elseif(ONYX_OPS_CONFIG)
  get_filename_component(ONYX_OPS_LIST ${ONYX_OPS_CONFIG} ABSOLUTE BASE_DIR ${CMAKE_SOURCE_DIR})
  set(ONYX_OPS_DESCRIPTION "ONYX_OPS_CONFIG=${ONYX_OPS_CONFIG}")
endif()

if(ONYX_OPS_LIST)
  set(ONYX_MINIMAL ON)
  onyx_minimal_sources(${ONYX_OPS_LIST} ${CMAKE_BINARY_DIR}/minimal "${ONYX_OPS_DESCRIPTION}"
                       replaced generated omitted_features)
  list(REMOVE_ITEM ONYX_SOURCES ${replaced})
  if(ONYX_MINIMAL_SIZE)
    foreach(f ${ONYX_MINIMAL_NOINLINE_SOURCES})
      set_property(SOURCE ${CMAKE_SOURCE_DIR}/src/providers/cpu/${f} APPEND PROPERTY
                   COMPILE_OPTIONS -Dalways_inline=noinline -Wno-attributes -DONYX_MINIMAL_SIZE=1)
    endforeach()
  endif()
  list(APPEND ONYX_SOURCES ${generated})
  # Features no operator list needs (src/session/minimal_omitted.c says why
  # each is safe to leave out and answers for it).
  list(TRANSFORM ONYX_MINIMAL_OMITTED_SOURCES PREPEND ${CMAKE_SOURCE_DIR}/src/)
  list(REMOVE_ITEM ONYX_SOURCES ${ONYX_MINIMAL_OMITTED_SOURCES})
  set(omitted_defs ONYX_MINIMAL_BUILD=1)
  if(NOT ONYX_MINIMAL_CUSTOM_OPS)
    list(REMOVE_ITEM ONYX_SOURCES ${CMAKE_SOURCE_DIR}/src/providers/custom/custom_provider.c)
    set_property(SOURCE ${CMAKE_SOURCE_DIR}/src/providers/custom/custom_omitted.c APPEND PROPERTY
                 COMPILE_DEFINITIONS ONYX_MINIMAL_OMITS_custom_ops=1)
  endif()
  foreach(feature sparse_tensors external_data)  # (answered in format/tensor_proto.c)
    if(feature IN_LIST omitted_features)
      set_property(SOURCE ${CMAKE_SOURCE_DIR}/src/format/tensor_proto.c APPEND PROPERTY
                   COMPILE_DEFINITIONS ONYX_MINIMAL_OMITS_${feature}=1)
    endif()
  endforeach()
  foreach(feature ${omitted_features})
    list(APPEND omitted_defs ONYX_MINIMAL_OMITS_${feature}=1)
    foreach(f ${ONYX_MINIMAL_FEATURE_SOURCES_${feature}})
      list(REMOVE_ITEM ONYX_SOURCES ${CMAKE_SOURCE_DIR}/src/${f})
    endforeach()
  endforeach()
  file(READ ${ONYX_OPS_LIST} ops_text)
  if(ops_text MATCHES "[;,]Gradient(,|\n|$)")
    list(APPEND omitted_defs ONYX_MINIMAL_KEEPS_GRADIENT=1)
  else()
    list(REMOVE_ITEM ONYX_SOURCES ${CMAKE_SOURCE_DIR}/src/ir/gradient.c)
  endif()
  set_property(SOURCE ${CMAKE_SOURCE_DIR}/src/session/minimal_omitted.c APPEND PROPERTY
               COMPILE_DEFINITIONS ${omitted_defs})
  add_compile_options(${ONYX_MINIMAL_COMPILE_OPTIONS})
  if(ONYX_MINIMAL_LTO)
    include(CheckIPOSupported)
    check_ipo_supported(RESULT ipo_ok OUTPUT ipo_why LANGUAGES C)
    if(ipo_ok)
      set(CMAKE_INTERPROCEDURAL_OPTIMIZATION ON)
      string(APPEND ONYX_OPS_DESCRIPTION ", LTO")
    else()
      message(STATUS "onyx: minimal build without LTO (${ipo_why})")
    endif()
  endif()
  if(NOT ONYX_MINIMAL_ISA STREQUAL "all")
    set(isa_numbers generic 0 avx2 1 avx512 2)   # onyx_cpu_isa (platform.h)
    list(FIND isa_numbers "${ONYX_MINIMAL_ISA}" at)
    if(at LESS 0 OR NOT CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
      message(FATAL_ERROR "ONYX_MINIMAL_ISA=${ONYX_MINIMAL_ISA}: takes all, avx512, avx2 or generic, on x86-64")
    endif()
    math(EXPR at "${at} + 1")
    list(GET isa_numbers ${at} isa_number)
    # the other ISAs' clones are left unreferenced: not compiled, not a warning
    add_compile_options(-DONYX_ISA_ONLY=${isa_number} -Wno-unused-function)
    string(APPEND ONYX_OPS_DESCRIPTION ", ONYX_MINIMAL_ISA=${ONYX_MINIMAL_ISA}")
  endif()
  set(ONYX_BUILD_TESTS OFF)  # the unit tests need every operator
  add_link_options(${ONYX_MINIMAL_LINK_OPTIONS})
  message(STATUS "onyx: minimal build for ${ONYX_OPS_DESCRIPTION} (${ONYX_OPS_LIST})")
  # its check against a full build's outputs (tests/minimal/check_minimal.sh)
  add_executable(onyx_run_outputs ${CMAKE_SOURCE_DIR}/tests/minimal/run_outputs.c)
  target_include_directories(onyx_run_outputs PRIVATE ${CMAKE_SOURCE_DIR}/include ${CMAKE_SOURCE_DIR}/examples)
  target_link_libraries(onyx_run_outputs PRIVATE onyx_shared)
else()
  set(ONYX_MINIMAL OFF)
endif()
