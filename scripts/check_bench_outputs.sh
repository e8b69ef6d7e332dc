#!/usr/bin/env bash
# Check onyx's outputs against ONNX Runtime 1.30 on the public benchmark models.
#
#   scripts/check_bench_outputs.sh [MODEL_NAME...]      (default: every model)
#
# For each $BENCH_MODELS/public/NAME.onnx (default BENCH_MODELS=/var/tmp/onnx-bench) and each of
# its input sets NAME.CONFIG.npz, runs the model once with ONNX Runtime (../shared/bench/ort_run.js)
# and once with build/onyx run, dumps both sets of outputs and compares them with
# ../shared/bench/compare_outputs.py (|onyx - ort| <= 1e-4 + 1e-3*|ort|). Prints a table; exits 1
# if any model differs or fails to run. Generates the models first when they are absent (needs
# ../shared/bench/setup.sh: torch, onnx, onnxruntime-node; ~3 min). Not part of CI: slow.
# Environment: ONYX (the binary, default build/onyx, built with `make` when missing), WORK (where
# outputs go, default build/bench-outputs), THREADS (default 2), BENCH_MODELS.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
bench="$root/../shared/bench"
models="${BENCH_MODELS:-/var/tmp/onnx-bench}/public"
onyx="${ONYX:-build/onyx}"
work="${WORK:-$root/build/bench-outputs}"
threads="${THREADS:-2}"

if ! ls "$models"/*.onnx >/dev/null 2>&1; then
    echo "check: no models in $models; generating them"
    bash "$bench/setup.sh"
    BENCH_MODELS="${BENCH_MODELS:-/var/tmp/onnx-bench}" /usr/bin/python3 "$bench/make_models.py"
fi
if ! node -e "require('${ORT_BENCH_DIR:-/var/tmp/onnx-bench/ort}/node_modules/onnxruntime-node')" \
        2>/dev/null; then
    bash "$bench/setup.sh"
fi
[ -x "$onyx" ] || make

names=("$@")
if [ ${#names[@]} -eq 0 ]; then
    for m in "$models"/*.onnx; do names+=("$(basename "$m" .onnx)"); done
fi

rm -rf "$work"
mkdir -p "$work"
printf '%-28s %-8s %s\n' "model.config" "result" "detail"
bad=0
for name in "${names[@]}"; do
    model="$models/$name.onnx"
    shopt -s nullglob
    inputs=("$models/$name".*.npz)
    shopt -u nullglob
    if [ ! -f "$model" ] || [ ${#inputs[@]} -eq 0 ]; then
        printf '%-28s %-8s %s\n' "$name" "MISSING" "no $model or no $name.*.npz"
        bad=$((bad + 1))
        continue
    fi
    for npz in "${inputs[@]}"; do
        tag="$(basename "$npz" .npz)"
        ref="$work/$tag.ort" out="$work/$tag.onyx" log="$work/$tag.log"
        if ! node "$bench/ort_run.js" "$model" --inputs "$npz" --dump "$ref" --runs 1 --warmup 0 \
                --threads "$threads" >"$log" 2>&1; then
            printf '%-28s %-8s %s\n' "$tag" "ORT-ERR" "see $log"
            bad=$((bad + 1))
            continue
        fi
        # two runs: the second takes the memory plan (shared buffers included), as every
        # timed run does
        if ! "$onyx" run "$model" --inputs "$npz" --runs 2 --dump "$out" >>"$log" 2>&1; then
            printf '%-28s %-8s %s\n' "$tag" "ERROR" "$(grep -m1 'error' "$log" || echo "see $log")"
            bad=$((bad + 1))
            continue
        fi
        if /usr/bin/python3 "$bench/compare_outputs.py" "$ref" "$out" --rtol 1e-3 --atol 1e-4 \
                >"$work/$tag.compare" 2>&1; then
            result=OK
        else
            result=DIFF
            bad=$((bad + 1))
        fi
        # One line per output: "name: n/size outside tolerance, max abs diff d".
        first=1
        while read -r line; do
            if [ $first -eq 1 ]; then
                printf '%-28s %-8s %s\n' "$tag" "$result" "$line"
                first=0
            else
                printf '%-28s %-8s %s\n' "" "" "$line"
            fi
        done <"$work/$tag.compare"
    done
done
echo "outputs and logs: $work/"
if [ "$bad" -gt 0 ]; then
    echo "check: $bad model configuration(s) differ or failed"
    exit 1
fi
echo "check: all outputs match ONNX Runtime"
