#!/usr/bin/env bash
# onnxruntime-node 1.30 (unmodified) on onyx's libonnxruntime.so.1 against
# `onyx perf`, and its outputs against ONNX Runtime's own library.
#
#   scripts/bench_ort_abi.sh [MODEL_NAME...]     (default: every public benchmark model)
#
# For each $BENCH_MODELS/public/NAME.onnx and input set NAME.CONFIG.npz: dumps the outputs
# through the node binding on ONNX Runtime's library and on onyx's (LD_LIBRARY_PATH) and
# compares them (../shared/bench/compare_outputs.py, |a-b| <= 1e-4 + 1e-3|b|); then times
# ROUNDS alternating rounds of `onyx perf` and ort_run.js on onyx's library (THREADS threads,
# RUNS timed runs each) and prints the ratio of the medians of the per-round medians.
# PREALLOC=1 times the node binding with pre-allocated output tensors (ort_run.js --prealloc),
# which onyx writes into directly (onyx_session_run_into) as ONNX Runtime does.
# Not part of CI (slow); run under flock /tmp/onyx-bench.lock on a shared machine.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
bench="$root/../shared/bench"
models="${BENCH_MODELS:-/var/tmp/onnx-bench}/public"
threads="${THREADS:-2}"
runs="${RUNS:-20}"
rounds="${ROUNDS:-3}"
prealloc=()
[ "${PREALLOC:-0}" = 1 ] && prealloc=(--prealloc)
work="${WORK:-$root/build/ort-abi-bench}"
libdir="$work/lib"
rm -rf "$work"
mkdir -p "$libdir"
ln -sf "$root/build/libonnxruntime.so.1.30.0" "$libdir/libonnxruntime.so.1"

names=("$@")
if [ ${#names[@]} -eq 0 ]; then
    for m in "$models"/*.onnx; do names+=("$(basename "$m" .onnx)"); done
fi
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
field() { sed -n "s/.*\"$1\":\([0-9.]*\).*/\1/p"; }

printf "%-26s %-8s %12s %12s %8s\n" model outputs onyx_perf_ms node_onyx_ms ratio
for name in "${names[@]}"; do
    for npz in "$models/$name".*.npz; do
        cfg="$(basename "$npz" .npz)"
        m="$models/$name.onnx"
        node "$bench/ort_run.js" "$m" --inputs "$npz" --runs 1 --warmup 0 --dump "$work/$cfg.ort" >/dev/null
        LD_LIBRARY_PATH="$libdir" node "$bench/ort_run.js" "$m" --inputs "$npz" --runs 1 --warmup 0 \
            --dump "$work/$cfg.onyx" >/dev/null
        if /usr/bin/python3 "$bench/compare_outputs.py" "$work/$cfg.ort" "$work/$cfg.onyx" --rtol 1e-3 --atol 1e-4 \
            > "$work/$cfg.compare" 2>&1; then same=match; else same=DIFFER; fi
        p=(); n=()
        for r in $(seq "$rounds"); do
            p+=("$(build/onyx perf "$m" --inputs "$npz" -x "$threads" -r "$runs" -w 3 | field median_ms)")
            n+=("$(LD_LIBRARY_PATH="$libdir" node "$bench/ort_run.js" "$m" --inputs "$npz" --threads "$threads" \
                   --runs "$runs" --warmup 3 "${prealloc[@]}" | field median_ms)")
        done
        pm="$(printf '%s\n' "${p[@]}" | median)"
        nm="$(printf '%s\n' "${n[@]}" | median)"
        printf "%-26s %-8s %12.3f %12.3f %8.3f\n" "$cfg" "$same" "$pm" "$nm" "$(awk -v a="$nm" -v b="$pm" 'BEGIN {print a / b}')"
    done
done
