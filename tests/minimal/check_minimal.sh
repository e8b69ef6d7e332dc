#!/usr/bin/env bash
# ctest minimal.digits: the minimal build for the digits model.
#   check_minimal.sh FULL_BUILD_DIR SOURCE_DIR MAX_BYTES
# Configures and builds FULL_BUILD_DIR/minimal-digits with
# -DONYX_OPS_FROM_MODELS=models/digits.onnx (the operator list written by the full build's onyx)
# and -DONYX_MINIMAL_ISA set to the instruction set the full build runs here (`onyx info`; a
# minimal build may keep one, docs/build_options.md), then checks that
#   - its stripped libonyx.so is at most MAX_BYTES;
#   - run_outputs gives byte-identical outputs with the full and the minimal library;
#   - onyx_digits predicts the 450 test images the same (timing lines aside);
#   - a model with an operator outside the list is refused, naming the operator and the option;
#   - a model with an element type outside the list's types (Mul on uint8) is refused, naming it;
#   - models with a sparse initializer, external data or a model-local function (features the
#     list leaves out) are refused, saying so;
#   - saving the optimised model (a feature minimal builds leave out) fails with its error.
set -euo pipefail
full="$1"; src="$2"; max="$3"
dir="$full/minimal-digits"
cd "$src"
isa=$("$full/onyx" info models/digits.onnx | sed -n 's/^cpu: isa \([a-z0-9]*\) .*/\1/p')
case "$isa" in avx512|avx2|generic) ;; *) isa=all ;; esac   # (aarch64 and others: every kernel)
echo "full build's instruction set here: $isa"
cmake -S "$src" -B "$dir" -DONYX_OPS_FROM_MODELS=models/digits.onnx -DONYX_OPS_TOOL="$full/onyx" \
    -DONYX_MINIMAL_ISA="$isa" >/dev/null
cmake --build "$dir" -j "${JOBS:-2}" --target onyx_shared onyx_digits onyx_run_outputs >/dev/null

strip -o "$dir/libonyx.stripped.so" "$dir/libonyx.so"
size=$(stat -c %s "$dir/libonyx.stripped.so")
full_size=$(strip -o "$dir/libonyx.full.stripped.so" "$full/libonyx.so" && stat -c %s "$dir/libonyx.full.stripped.so")
echo "stripped libonyx.so: minimal (digits) $size bytes, full $full_size bytes (limit $max)"
[ "$size" -le "$max" ] || { echo "FAIL: the minimal library is over $max bytes"; exit 1; }

"$full/tests/run_outputs" models/digits.onnx "$dir/out.full" 3
"$dir/onyx_run_outputs" models/digits.onnx "$dir/out.minimal" 3
cmp "$dir/out.full" "$dir/out.minimal" || { echo "FAIL: outputs differ from the full build's"; exit 1; }
echo "run_outputs: identical outputs ($(stat -c %s "$dir/out.full") bytes, 3 runs)"

strip_times() { grep -v "loaded in\|first .* ms, best of"; }
"$full/onyx_digits" models/digits.onnx models/digits_test.bin | strip_times > "$dir/digits.full"
"$dir/onyx_digits" models/digits.onnx models/digits_test.bin | strip_times > "$dir/digits.minimal"
diff -u "$dir/digits.full" "$dir/digits.minimal" || { echo "FAIL: onyx_digits differs"; exit 1; }
grep "accuracy" "$dir/digits.minimal"

other=../shared/onnx-tests/node/test_conv_with_strides_padding/model.onnx
if "$dir/onyx_run_outputs" "$other" "$dir/out.other" 1 2> "$dir/other.err"; then
    echo "FAIL: a model with Conv ran on the digits build"; exit 1
fi
cat "$dir/other.err"
grep -q "operator Conv (domain ai.onnx) is not in this build" "$dir/other.err" &&
    grep -q "ONYX_OPS_FROM_MODELS=models/digits.onnx" "$dir/other.err" ||
    { echo "FAIL: the error does not name the operator and the option"; exit 1; }
typed=../shared/onnx-tests/node/test_mul_uint8/model.onnx
if "$dir/onyx_run_outputs" "$typed" "$dir/out.typed" 1 2> "$dir/typed.err"; then
    echo "FAIL: a model with Mul on uint8 ran on the digits build (float and int64)"; exit 1
fi
cat "$dir/typed.err"
grep -q "operator Mul (opset [0-9]*) is not in this build for element type uint8: this is a minimal build" \
    "$dir/typed.err" || { echo "FAIL: the error does not name the operator and the element type"; exit 1; }
# model features: the digits model uses none (an empty features line), the three models one each
grep -qx "features;" "$dir/minimal/required_operators.config" ||
    { echo "FAIL: the digits operator list does not have an empty features line"; exit 1; }
features=$("$full/onyx" ops --required-by tests/minimal/external_mul.onnx tests/minimal/function_relu.onnx \
           tests/minimal/sparse_mul.onnx | grep "^features;")
[ "$features" = "features;external_data,local_functions,sparse_tensors" ] ||
    { echo "FAIL: onyx ops --required-by wrote '$features'"; exit 1; }
for feature in sparse_mul:"sparse tensor 'S': sparse tensors are not in this minimal build" \
               external_mul:"tensor 'W': external data is not in this minimal build" \
               function_relu:"calls the model-local function ScaledRelu: model-local functions are not in"; do
    model="tests/minimal/${feature%%:*}.onnx"
    "$full/tests/run_outputs" "$model" "$dir/out.feature" 1  # (the full build runs it)
    if "$dir/onyx_run_outputs" "$model" "$dir/out.feature" 1 2> "$dir/feature.err"; then
        echo "FAIL: $model ran on the digits build (no features)"; exit 1
    fi
    cat "$dir/feature.err"
    grep -qF "${feature#*:}" "$dir/feature.err" || { echo "FAIL: the error for $model does not say why"; exit 1; }
done
if RUN_OUTPUTS_SAVE="$dir/saved.onnx" "$dir/onyx_run_outputs" models/digits.onnx "$dir/out.saved" 1 \
    2> "$dir/save.err"; then
    echo "FAIL: the minimal build saved a model"; exit 1
fi
cat "$dir/save.err"
grep -q "saving models is not in this minimal build" "$dir/save.err" ||
    { echo "FAIL: saving a model does not say that the minimal build leaves it out"; exit 1; }
RUN_OUTPUTS_SAVE="$dir/saved.onnx" "$full/tests/run_outputs" models/digits.onnx "$dir/out.saved" 1
[ -s "$dir/saved.onnx" ] || { echo "FAIL: the full build saved no model"; exit 1; }
echo "minimal digits build: OK"
