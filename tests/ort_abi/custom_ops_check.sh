#!/usr/bin/env bash
# The custom-operator library tests/ort_abi/custom_ops_lib.c (C API only)
# runs tests/data/ort_abi_custom.onnx in onyx's libonnxruntime.so.1 and in
# ONNX Runtime 1.30's own (from the onnxruntime-node package) with the same
# results, and onyx's results are the expected values.
#   custom_ops_check.sh BUILD_DIR REPO_ROOT
set -euo pipefail
build="$(cd "$1" && pwd)"
root="$(cd "$2" && pwd)"
. "$root/tests/ort_abi/find_ort_node.sh"
mods="$(ort_node_modules "$build")"
ort_lib="$mods/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1"
run="$build/tests/run_custom_ops"
lib="$build/tests/libort_abi_custom_ops.so"
model="$root/tests/data/ort_abi_custom.onnx"
onyx_out="$("$run" "$build/libonnxruntime.so.1" "$lib" "$model")"
ort_out="$("$run" "$ort_lib" "$lib" "$model")"
echo "onyx: $onyx_out"
echo "ort:  $ort_out"
# S = A + 0.5 B, R = row sums of S + 3
expected=$'S: 1.25 1.5 4 4.125 9 4.5\nR: 9.75 20.625'
[ "$onyx_out" = "$expected" ] || { echo "onyx's results differ from the expected values"; exit 1; }
[ "$onyx_out" = "$ort_out" ] || { echo "onyx and ONNX Runtime differ"; exit 1; }
echo "custom ops: same results in onyx and ONNX Runtime 1.30"
