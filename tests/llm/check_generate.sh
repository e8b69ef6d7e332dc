#!/bin/bash
# `onyx generate` vs ONNX Runtime on the small Llama-style model of scripts/export_llama.py
# (and its int4 quantisation when `onyx quantize --mode int4` exists): 32 greedy steps.
#   tests/llm/check_generate.sh BUILD_DIR SOURCE_DIR
set -e
build=$1 src=$2
. "$src/tests/ort_abi/find_ort_node.sh"
export NODE_PATH="$(ort_node_modules "$build")"
dir="$build/llm_model"
mkdir -p "$dir"
/usr/bin/python3 "$src/scripts/export_llama.py" --size small "$dir/llama_small.onnx"
/usr/bin/python3 "$src/tests/llm/check_generate.py" "$build/onyx" "$dir/llama_small.onnx" 1,5,9,200,17 32
