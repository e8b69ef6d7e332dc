#!/bin/bash
# Decoder fusions on a torch export (check_decoder_fusion.py), ONNX Runtime 1.30 via node.
#   tests/llm/check_decoder_fusion.sh BUILD_DIR SOURCE_DIR
set -e
build=$1 src=$2
. "$src/tests/ort_abi/find_ort_node.sh"
export NODE_PATH="$(ort_node_modules "$build")"
exec /usr/bin/python3 "$src/tests/llm/check_decoder_fusion.py" "$build/onyx" "$build/llm_decoder_export" \
    "$src/../shared/bench"
