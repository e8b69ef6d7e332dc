#!/bin/bash
# The language-model operator tests through ONNX Runtime 1.30 (onnxruntime-node, found or
# installed by tests/ort_abi/find_ort_node.sh): its outputs must match the numpy references.
#   tests/llm/check_ort.sh BUILD_DIR SOURCE_DIR
set -e
build=$1 src=$2
. "$src/tests/ort_abi/find_ort_node.sh"
mods="$(ort_node_modules "$build" protobufjs@7)"
bench="$src/../shared/bench"
[ -f "$bench/lib/io.js" ] || { echo "missing $bench/lib/io.js (the shared benchmark folder beside the checkout)"; exit 1; }
# ort_cases.js reads the .pb inputs with the shared io.js, which loads from $ORT_BENCH_DIR
NODE_PATH="$mods" ORT_BENCH_DIR="$(dirname "$mods")" /usr/bin/python3 "$src/tests/llm/check_ort.py" "$build/llm_ops" "$bench"
