# Cross build for 64-bit ARM Linux with Debian's cross compiler:
#   apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user
#   (plus the libraries' arm64 multiarch -dev packages, scripts/deps.sh `aarch64`)
#   cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
# (`make aarch64`). Test executables run through qemu-aarch64 (ctest uses
# CMAKE_CROSSCOMPILING_EMULATOR), so `ctest` in build-aarch64/ runs the ARM64
# binaries on an x86-64 machine. A native build on an ARM64 host needs no file.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
if(CMAKE_HOST_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64)$")
  return()   # on an ARM64 host this is a native build: the host's gcc, no emulator
endif()
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
# Debian's multiarch layout: libraries in /usr/lib/aarch64-linux-gnu, headers
# shared in /usr/include; never pick up an x86-64 library.
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
find_program(ONYX_QEMU_AARCH64 NAMES qemu-aarch64 qemu-aarch64-static)
if(ONYX_QEMU_AARCH64)
  # No -L /usr/aarch64-linux-gnu: the binaries use the multiarch loader and
  # libraries of libc6:arm64 (/lib/ld-linux-aarch64.so.1), and mixing that
  # libc with the cross sysroot's loader (another glibc build) hangs the
  # first pthread_create.
  set(CMAKE_CROSSCOMPILING_EMULATOR ${ONYX_QEMU_AARCH64})
endif()
# the CUDA provider plugin is built for x86-64 hosts only
set(ONYX_CUDA OFF CACHE BOOL "Build the CUDA execution provider when the toolkit is found")
