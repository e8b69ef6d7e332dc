# WebAssembly build (Emscripten): `make wasm` runs
#   emcmake cmake -S . -B build-wasm && cmake --build build-wasm
# and produces build-wasm/onyx-wasm.js (the Emscripten glue, a module factory)
# and build-wasm/onyx-wasm.wasm, which js/ wraps with onnxruntime-web's API.
#
# Single-threaded (one Web Worker's worth: no SharedArrayBuffer needed), WASM
# SIMD128 everywhere (-msimd128: the hand-written *_wasm_simd.c micro-kernels
# and clang's vectoriser on the portable loops), no file system (the model is
# handed over as bytes), no dlopen (no provider plugins), and none of the
# optional libraries (docs/build_options.md: no ONYX_HAVE_* is defined, so
# RegexFullMatch and the compressed ImageDecoder formats fail naming the
# option, as in any build without them).
# Included from the top-level CMakeLists.txt when EMSCRIPTEN is set; it
# returns before any of the native targets are declared.

set(CMAKE_C_FLAGS_RELEASE "-O3 -DNDEBUG")
add_compile_options(-msimd128 -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers)

file(GLOB_RECURSE ONYX_WASM_SOURCES CONFIGURE_DEPENDS ${ONYX_LIBRARY_SOURCE_GLOBS})
# x86 micro-kernels (AVX2/AVX-512 intrinsics) and the CUDA provider have no
# place in a WebAssembly module.
list(FILTER ONYX_WASM_SOURCES EXCLUDE REGEX "_(avx2|avx512)\\.c$")
list(FILTER ONYX_WASM_SOURCES EXCLUDE REGEX "/providers/cuda/")
list(APPEND ONYX_WASM_SOURCES ${CMAKE_SOURCE_DIR}/js/src/onyx_wasm.c ${CMAKE_SOURCE_DIR}/js/src/memcpy_wasm.c)
# libc's memcpy, replaced by js/src/memcpy_wasm.c (see there); -fno-builtin
# keeps clang from turning its loops back into calls to memcpy
set_source_files_properties(${CMAKE_SOURCE_DIR}/js/src/memcpy_wasm.c PROPERTIES COMPILE_OPTIONS -fno-builtin)

add_executable(onyx_wasm ${ONYX_WASM_SOURCES})
set_target_properties(onyx_wasm PROPERTIES OUTPUT_NAME onyx-wasm SUFFIX ".js")
target_include_directories(onyx_wasm PRIVATE ${CMAKE_SOURCE_DIR}/include ${CMAKE_SOURCE_DIR}/src)
set(ONYX_WASM_EXPORTS
    _malloc _free _onyx_version _onyx_status_message _onyx_status_free
    _onyx_wasm_session_create _onyx_session_free
    _onyx_session_input_count _onyx_session_output_count _onyx_session_input_name _onyx_session_output_name
    _onyx_tensor_create_with_data _onyx_tensor_create_strings _onyx_value_free _onyx_wasm_tensor_info
    _onyx_tensor_string _onyx_wasm_run)
list(JOIN ONYX_WASM_EXPORTS "," ONYX_WASM_EXPORTS_CSV)
target_link_options(onyx_wasm PRIVATE
  -O3 -msimd128
  -sMODULARIZE=1 -sEXPORT_NAME=createOnyxModule
  -sENVIRONMENT=web,worker,node
  -sFILESYSTEM=0
  -sALLOW_MEMORY_GROWTH=1 -sMAXIMUM_MEMORY=4GB -sINITIAL_MEMORY=32MB -sTOTAL_STACK=4MB
  -sWASM_BIGINT=1
  -sEXPORTED_FUNCTIONS=${ONYX_WASM_EXPORTS_CSV}
  -sEXPORTED_RUNTIME_METHODS=UTF8ToString,stringToUTF8,lengthBytesUTF8)
