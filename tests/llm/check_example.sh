#!/bin/bash
# examples/generate/generate_tokens.c on the small Llama-style model of scripts/export_llama.py
# and its int4 quantisation: the in-place (shared buffer) KV cache against fresh presents fed
# back (--check), and the same greedy ids as `onyx generate`.
#   tests/llm/check_example.sh BUILD_DIR SOURCE_DIR
set -e
build=$1 src=$2
dir="$build/llm_example"
mkdir -p "$dir"
/usr/bin/python3 "$src/scripts/export_llama.py" --size small "$dir/llama_small.onnx"
"$build/onyx" quantize "$dir/llama_small.onnx" "$dir/llama_small_int4.onnx" --mode int4 --block-size 32 >/dev/null
for m in llama_small llama_small_int4; do
    got=$("$build/onyx_generate_example" "$dir/$m.onnx" 1,5,9,200,17 12 --check)
    echo "$got"
    ids=$(echo "$got" | head -1)
    want=$("$build/onyx" generate "$dir/$m.onnx" --input-ids 1,5,9,200,17 --max-new-tokens 12 --greedy | \
           sed -n 's/^ids: //p' | tr ' ' ',')
    if [ "$ids" != "$want" ]; then echo "FAIL $m: example ids $ids, onyx generate $want"; exit 1; fi
done
echo "PASS"
