#!/usr/bin/env bash
# `make install` works: installs into a temporary prefix, then builds examples/run_model.c
# against it twice (pkg-config, and a CMake project using find_package(onyx)) and runs both
# on models/digits.onnx.
set -euo pipefail
build="$1"; src="$2"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig"
cc -o "$tmp/pc_example" "$src/examples/run_model.c" $(pkg-config --cflags onyx) \
   $(pkg-config --libs onyx) -Wl,-rpath,"$tmp/prefix/lib"
"$tmp/pc_example" "$src/models/digits.onnx" >/dev/null
cmake -S "$src/tests/install" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
      -DEXAMPLE="$src/examples/run_model.c" >/dev/null
cmake --build "$tmp/consumer" >/dev/null
"$tmp/consumer/consumer_shared" "$src/models/digits.onnx" >/dev/null
"$tmp/consumer/consumer_static" "$src/models/digits.onnx" >/dev/null
echo "install check: pkg-config and find_package consumers built and ran"
