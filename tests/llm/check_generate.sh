#!/bin/bash
# `onyx generate` vs ONNX Runtime on the small Llama-style model of scripts/export_llama.py
# and its int4 quantisations (symmetric block 32; asymmetric block 16, accuracy_level 4): 32
# greedy steps each.
#   tests/llm/check_generate.sh BUILD_DIR SOURCE_DIR
set -e
build=$1 src=$2
. "$src/tests/ort_abi/find_ort_node.sh"
export NODE_PATH="$(ort_node_modules "$build")"
dir="$build/llm_model"
mkdir -p "$dir"
/usr/bin/python3 "$src/scripts/export_llama.py" --size small "$dir/llama_small.onnx"
/usr/bin/python3 "$src/tests/llm/check_generate.py" "$build/onyx" "$dir/llama_small.onnx" 1,5,9,200,17 32
"$build/onyx" quantize "$dir/llama_small.onnx" "$dir/llama_small_int4.onnx" --mode int4 --block-size 32
/usr/bin/python3 "$src/tests/llm/check_generate.py" "$build/onyx" "$dir/llama_small_int4.onnx" 1,5,9,200,17 32
"$build/onyx" quantize "$dir/llama_small.onnx" "$dir/llama_small_int4_asym_acc4.onnx" --mode int4 --block-size 16 \
    --asymmetric --accuracy-level 4
/usr/bin/python3 "$src/tests/llm/check_generate.py" "$build/onyx" "$dir/llama_small_int4_asym_acc4.onnx" 3,1,4,1,5,9 32
# the quantiser's options beyond round to nearest: scale search with an 8-bit head, 8-bit blocks
"$build/onyx" quantize "$dir/llama_small.onnx" "$dir/llama_small_int4_search.onnx" --mode int4 --block-size 32 \
    --scale-search --lm-head-bits 8
/usr/bin/python3 "$src/tests/llm/check_generate.py" "$build/onyx" "$dir/llama_small_int4_search.onnx" 1,5,9,200,17 32
"$build/onyx" quantize "$dir/llama_small.onnx" "$dir/llama_small_int8_blocks.onnx" --mode int4 --bits 8
/usr/bin/python3 "$src/tests/llm/check_generate.py" "$build/onyx" "$dir/llama_small_int8_blocks.onnx" 3,1,4,1,5,9 32
