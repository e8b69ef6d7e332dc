# shellcheck shell=bash
# Debian 12 packages onyx needs; sourced by demo.sh and test.sh.
#
#   onyx_install_deps build        what `make` needs
#   onyx_install_deps test         that plus clang and the libFuzzer runtime (make asan / fuzz)
#   onyx_install_deps python       the build deps plus the Python package's (scripts/test_python.sh)
#   onyx_install_deps aarch64      the ARM64 cross build and qemu (make aarch64, scripts/test_aarch64.sh)
#
# Installs only the packages that are missing, with apt-get (through sudo when not root).

# Compiler, build tool, and the libraries the library and CLI link: zlib (the CLI's .npz
# reader), PCRE2 (RegexFullMatch), and the image codecs of ImageDecoder (both optional:
# docs/build_options.md).
ONYX_BUILD_DEPS=(cmake gcc make zlib1g-dev libpcre2-dev libpng-dev libjpeg62-turbo-dev
                 libtiff-dev libwebp-dev libopenjp2-7-dev
                 libmicrohttpd-dev libnghttp2-dev)   # onyx serve (HTTP/1.1 and HTTP/2)
# Tests: clang and the libFuzzer runtime (make asan, make fuzz), and Debian's copy of the ONNX
# conformance data (/usr/share/libonnx-testdata, the conformance.debian-node ctest entry);
# nodejs runs onnxruntime-node on onyx's libonnxruntime.so.1 (ctest ort_abi.node_binding).
ONYX_TEST_DEPS=(clang libclang-rt-14-dev libonnx-testdata nodejs
                # onyx serve's tests: REST and gRPC clients, stub generator, YAML check, raw HTTP/2
                python3-requests python3-grpcio python3-grpc-tools python3-yaml python3-pytest python3-h2
                python3-numpy python3-onnx)
# The WebAssembly build (make wasm, scripts/test_wasm.sh): Emscripten, node-acorn for its JS
# optimiser, numpy and onnx for the test models, chromium for the browser demo's test.
ONYX_WASM_DEPS=(emscripten node-acorn python3-numpy python3-onnx chromium)
# The Python package (python/, scripts/test_python.sh): headers, numpy, setuptools, pytest, venv
# and pip, and what its tests and examples use (onnx to build models, Dask, PyTorch).
ONYX_PYTHON_DEPS=(python3-dev python3-numpy python3-setuptools python3-wheel python3-pytest python3-venv
                  python3-pip python3-onnx python3-distributed python3-torch)

# ARM64 cross build (make aarch64): Debian's cross compiler and C library, qemu-user to run the
# binaries, and the arm64 multiarch copies of the libraries above (which bring the arm64 loader
# /lib/ld-linux-aarch64.so.1 that qemu runs them with). Needs `dpkg --add-architecture arm64`.
ONYX_AARCH64_DEPS=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user zlib1g-dev:arm64
                   libpcre2-dev:arm64 libpng-dev:arm64 libjpeg62-turbo-dev:arm64 libtiff-dev:arm64
                   libwebp-dev:arm64 libopenjp2-7-dev:arm64)

onyx_install_deps() {
    local wanted=("${ONYX_BUILD_DEPS[@]}") missing=() pkg sudo=""
    [ "${1:-build}" = test ] && wanted+=("${ONYX_TEST_DEPS[@]}")
    [ "${1:-build}" = python ] && wanted+=("${ONYX_PYTHON_DEPS[@]}")
    [ "${1:-build}" = aarch64 ] && wanted+=("${ONYX_AARCH64_DEPS[@]}")
    [ "${1:-build}" = wasm ] && wanted=(make cmake "${ONYX_WASM_DEPS[@]}")
    for pkg in "${wanted[@]}"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" \
            || missing+=("$pkg")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    echo "installing ${missing[*]}"
    if [ "${1:-build}" = aarch64 ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
        $sudo dpkg --add-architecture arm64
    fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
    # CI: drop the downloaded .deb files (GBs with torch, chromium and the arm64 libraries);
    # a CI machine's disk may be small
    if [ -n "${CI:-}" ]; then $sudo apt-get clean; fi
}
