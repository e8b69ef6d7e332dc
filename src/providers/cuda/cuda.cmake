# The CUDA execution provider, libonyx_provider_cuda.so: a plugin built apart
# from onyx (it includes include/onyx_provider.h and links nothing of onyx),
# whenever nvcc, cuBLAS and cuDNN are found (/usr/local/cuda by default). On a
# machine without a GPU it still builds; sessions asking for it then warn and
# run on the CPU.
include(GNUInstallDirs)
option(ONYX_CUDA "Build the CUDA execution provider when the toolkit is found" ON)
set(ONYX_CUDA_ARCHITECTURES "80-real;90" CACHE STRING "GPU architectures of the CUDA provider")
if(ONYX_CUDA AND NOT ONYX_SANITIZE AND NOT ONYX_FUZZ)
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  find_path(ONYX_CUDNN_INCLUDE cudnn.h HINTS /usr/local/cuda/include)
  find_library(ONYX_CUDNN_LIB cudnn HINTS /usr/local/cuda/lib64 /usr/local/cuda/lib)
  find_library(ONYX_CUBLAS_LIB cublas HINTS /usr/local/cuda/lib64 /usr/local/cuda/lib)
  if(CMAKE_CUDA_COMPILER AND ONYX_CUDNN_INCLUDE AND ONYX_CUDNN_LIB AND ONYX_CUBLAS_LIB)
    enable_language(CUDA)
    set(CMAKE_CUDA_ARCHITECTURES ${ONYX_CUDA_ARCHITECTURES})
    file(GLOB ONYX_CUDA_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/providers/cuda/*.cu)
    add_library(onyx_provider_cuda MODULE ${ONYX_CUDA_SOURCES})
    set_target_properties(onyx_provider_cuda PROPERTIES PREFIX "lib" OUTPUT_NAME onyx_provider_cuda
                          CUDA_STANDARD 17 CUDA_RUNTIME_LIBRARY Static CUDA_VISIBILITY_PRESET hidden
                          CXX_VISIBILITY_PRESET hidden)
    target_compile_options(onyx_provider_cuda PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-O3 -Xcompiler=-fvisibility=hidden>)
    target_include_directories(onyx_provider_cuda PRIVATE ${CMAKE_SOURCE_DIR}/include ${ONYX_CUDNN_INCLUDE})
    target_link_libraries(onyx_provider_cuda PRIVATE ${ONYX_CUBLAS_LIB} ${ONYX_CUDNN_LIB} Threads::Threads)
    get_filename_component(ONYX_CUDNN_DIR ${ONYX_CUDNN_LIB} DIRECTORY)
    get_filename_component(ONYX_CUBLAS_DIR ${ONYX_CUBLAS_LIB} DIRECTORY)
    set_target_properties(onyx_provider_cuda PROPERTIES INSTALL_RPATH "${ONYX_CUBLAS_DIR};${ONYX_CUDNN_DIR}"
                          BUILD_RPATH "${ONYX_CUBLAS_DIR};${ONYX_CUDNN_DIR}")
    install(TARGETS onyx_provider_cuda LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
    set(ONYX_HAVE_CUDA_PROVIDER ON)
    message(STATUS "CUDA provider: building libonyx_provider_cuda.so (${ONYX_CUDA_ARCHITECTURES})")
  else()
    message(STATUS "CUDA provider: not built (nvcc, cuBLAS or cuDNN not found)")
  endif()
endif()
