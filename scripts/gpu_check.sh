#!/bin/bash
# The CUDA provider's checks on a machine with an NVIDIA GPU, in under 8 minutes:
#   1. build (or take a prebuilt bundle: BUNDLE=dir with onyx, the provider libraries,
#      test binaries, lib/ with their runtime dependencies and node.tar.gz);
#   2. the provider unit tests, the cross-provider test (every node test whose
#      nodes the CUDA provider claims and every case of tests/data/cuda_cases,
#      each claimed operator in float32 and float16, CUDA vs CPU provider; it
#      fails if a claimed operator x type was not exercised) and test_cuda_binding (device tensors bound as inputs and output,
#      float32 and float16 models, vs the CPU provider);
#   3. the ONNX node suite through `onyx test --providers cuda,cpu`;
#   4. the public benchmark models (exported here by ../shared/bench/make_models.py,
#      or taken from $BENCH_MODELS/public): outputs under cuda,cpu against the CPU
#      provider, and a latency table (onyx CUDA vs onyx CPU, batch 1 and 8, for
#      ResNet-50, BERT-base and GPT-2 small; also CUDA with TF32 matrix math).
# Logs go to $OUT (default ./gpu_check.out); the summary is printed last.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$ROOT/gpu_check.out}
mkdir -p "$OUT"
BUNDLE=${BUNDLE:-}
SUMMARY=$OUT/summary.txt
: >"$SUMMARY"
say() { echo "$*" | tee -a "$SUMMARY"; }
T0=$(date +%s)
elapsed() { echo $(($(date +%s) - T0)); }

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | sed 's/^/gpu: /' | tee -a "$SUMMARY"

# ---- 1. binaries (their library path is set for onyx's programs only, so that
# python3 keeps its own libraries)
ONYX_LD=${LD_LIBRARY_PATH:-}
if [ -n "$BUNDLE" ]; then
    BIN=$BUNDLE
    ONYX_LD="$BUNDLE/lib:$ONYX_LD"
    mkdir -p /tmp/onnx-tests && tar xzf "$BUNDLE/node.tar.gz" -C /tmp/onnx-tests
    NODE=/tmp/onnx-tests/node
else
    cmake -S "$ROOT" -B "$ROOT/build-gpu" -DCMAKE_BUILD_TYPE=Release >"$OUT/misc.log" 2>&1 &&
        cmake --build "$ROOT/build-gpu" -j "$(nproc)" >>"$OUT/misc.log" 2>&1 || { say "build failed (see cmake.log)"; exit 1; }
    BIN=$ROOT/build-gpu
    cp "$BIN"/tests/test_cross_provider "$BIN"/tests/test_providers "$BIN"/tests/test_cuda_binding "$BIN"/ 2>/dev/null
    NODE=${NODE:-$ROOT/../shared/onnx-tests/node}
fi
# cuBLAS and cuDNN of the CUDA toolkit or of the Python wheels
for d in /usr/local/cuda/lib64 /usr/local/cuda/lib $(find /usr/local /opt /usr/lib \( -name 'libcudnn.so.9' -o -name 'libcublas.so.13' \) -printf '%h\n' 2>/dev/null | sort -u); do
    [ -d "$d" ] && ONYX_LD="$ONYX_LD:$d"
done
export ONYX_PROVIDER_PATH=$BIN ONYX_TEST_PLUGIN_DIR=$BIN
onyx_env() { LD_LIBRARY_PATH="$ONYX_LD" "$@"; }
ONYX="onyx_env $BIN/onyx"
say "binaries: $BIN ($(elapsed) s)"

# ---- benchmark models: exported in the background while the tests run
MODELS=${BENCH_MODELS:-/tmp/onnx-bench}
if [ ! -f "$MODELS/public/gpt2_small.onnx" ] && [ -f "$ROOT/../shared/bench/make_models.py" -o -n "${MAKE_MODELS:-}" ]; then
    MK=${MAKE_MODELS:-$ROOT/../shared/bench/make_models.py}
    (cd /tmp && BENCH_MODELS=$MODELS timeout 330 python3 - "$MK" >/tmp/make_models.log 2>&1 <<'EOF'
import runpy, sys, torch
orig = torch.onnx.export
def export(*a, **k):
    # the TorchScript exporter, as the models were made on the CPU machine
    try:
        return orig(*a, dynamo=False, **k)
    except TypeError:
        return orig(*a, **k)
torch.onnx.export = export
path = sys.argv[1]
sys.argv = [path, "--only", "resnet50,bert_base,gpt2_small"]
runpy.run_path(path, run_name="__main__")
EOF
    ) &
    MODELS_PID=$!
fi

# ---- 2. provider tests; the cross-provider test runs beside the node suite
(cd "$ROOT" && onyx_env "$BIN"/test_providers) >/tmp/test_providers.log 2>&1
cat /tmp/test_providers.log >>"$OUT/misc.log"
say "test_providers: $(tail -1 /tmp/test_providers.log)"
(cd "$ROOT" && onyx_env timeout 60 "$BIN"/test_cuda_binding) >/tmp/test_cuda_binding.log 2>&1
say "test_cuda_binding: rc=$? $(tail -1 /tmp/test_cuda_binding.log)"
grep -E '^(FAIL|tests/data)' /tmp/test_cuda_binding.log | head -10 | tee -a "$SUMMARY"
# the same under compute-sanitizer's memcheck (device out-of-bounds and leaks)
if command -v compute-sanitizer >/dev/null; then
    (cd "$ROOT" && onyx_env timeout 150 compute-sanitizer --tool memcheck --leak-check full --error-exitcode 3 \
        "$BIN"/test_cuda_binding) >"$OUT/sanitizer.log" 2>&1
    say "test_cuda_binding under compute-sanitizer memcheck: rc=$? $(grep -E 'ERROR SUMMARY' "$OUT/sanitizer.log" | tail -1)"
fi
(cd "$ROOT" && onyx_env timeout 200 "$BIN"/test_cross_provider "$NODE") >"$OUT/cross_provider.log" 2>&1 &
CROSS_PID=$!

# ---- 3. node suite, CUDA first
# one process: a forked child per test would load cuBLAS/cuDNN and start a CUDA
# context 1,802 times
onyx_env timeout 200 "$BIN/onyx" test "$NODE" --providers cuda,cpu --no-fork >"$OUT/node_cuda.log" 2>&1
say "node suite --providers cuda,cpu: $(tail -1 "$OUT/node_cuda.log") ($(elapsed) s)"
grep -E '^(FAIL|ERROR)' "$OUT/node_cuda.log" | head -20 | tee -a "$SUMMARY"
wait "$CROSS_PID"
say "cross-provider: rc=$? $(tail -1 "$OUT/cross_provider.log") ($(elapsed) s)"
grep -E '^(DIFF|NOT COVERED)' "$OUT/cross_provider.log" | head -30 | tee -a "$SUMMARY"
say "float16 tests run on cuda (node tests and tests/data/cuda_cases): $(grep -E '^RAN ' "$OUT/cross_provider.log" | grep -ciE 'fp16|float16|half'), of which differ: $(grep -E '^DIFF ' "$OUT/cross_provider.log" | grep -ciE 'fp16|float16|half')"

# ---- 4. benchmark models
if [ -n "${MODELS_PID:-}" ]; then wait "$MODELS_PID"; cat /tmp/make_models.log >>"$OUT/misc.log"; say "models exported ($(elapsed) s): $(tail -1 /tmp/make_models.log)"; fi
P=$MODELS/public
compare() { # compare two onyx --output npz files
    python3 - "$1" "$2" <<'EOF'
import sys, numpy as np
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
worst = 0.0
for k in a.files:
    x, y = a[k].astype(np.float64), b[k].astype(np.float64)
    err = np.abs(x - y).max() / max(np.abs(x).max(), 1e-12)
    worst = max(worst, err)
print(f"max |cuda - cpu| / max|cpu| = {worst:.2e} ({'match' if worst < 1e-3 else 'DIFFER'})")
EOF
}
for m in resnet50.b1 bert_base.b1s128 gpt2_small.b1s128; do
    name=${m%%.*}
    [ -f "$P/$name.onnx" ] || { say "$name: model missing"; continue; }
    $ONYX run "$P/$name.onnx" --inputs "$P/$m.npz" --output "/tmp/$name.cpu.npz" >/dev/null 2>>"$OUT/misc.log"
    $ONYX run "$P/$name.onnx" --inputs "$P/$m.npz" --providers cuda,cpu --output "/tmp/$name.cuda.npz" >/dev/null 2>>"$OUT/misc.log"
    say "$name outputs: $(compare "/tmp/$name.cpu.npz" "/tmp/$name.cuda.npz" 2>&1 | tail -1)"
    $ONYX info "$P/$name.onnx" --providers cuda,cpu 2>&1 | sed -n '/^execution plan/,/^nodes/p' | grep -v '^nodes' | sed "s/^/$name: /" | tee -a "$SUMMARY"
done

# ---- latency: median ms, onyx CUDA vs onyx CPU (all cores)
say ""
say "latency (median ms; $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1) vs $(nproc) CPU threads)"
say "model         batch   cpu_ms   cuda_ms   speedup   cuda_tf32_ms"
perf() { # model batch providers runs -> median_ms
    local args=(--dim batch="$2" --dim seq=128 -r "$4" -w 2)
    [ "$1" = resnet50 ] && [ "$2" = 8 ] && args=(--inputs "$P/resnet50.b8.npz" -r "$4" -w 2)
    [ "$1" = resnet50 ] && [ "$2" = 1 ] && args=(--inputs "$P/resnet50.b1.npz" -r "$4" -w 2)
    onyx_env timeout 120 "$BIN/onyx" perf "$P/$1.onnx" "${args[@]}" ${3:+--providers $3} 2>>"$OUT/misc.log" | tail -1 |
        python3 -c 'import json,sys; print("%.2f" % json.loads(sys.stdin.read())["median_ms"])' 2>/dev/null || echo "n/a"
}
for name in resnet50 bert_base gpt2_small; do
    [ -f "$P/$name.onnx" ] || continue
    for b in 1 8; do
        c=$(perf $name $b cuda,cpu 20)
        t=$(perf $name $b cuda:use_tf32=1,cpu 20)
        h=$(perf $name $b "" $([ $b = 1 ] && echo 10 || echo 4))
        sp=$(python3 -c "print('%.1fx' % ($h / $c))" 2>/dev/null || echo "n/a")
        say "$(printf '%-12s %5s %9s %9s %9s %14s' $name $b "$h" "$c" "$sp" "$t")"
    done
done
say "total $(elapsed) s"
