#!/usr/bin/env bash
# Where node's per-call time goes: onnxruntime-node 1.30 (unmodified) on onyx's
# libonnxruntime.so.1 and on ONNX Runtime's own, beside `onyx perf`, with the
# binding's own functions timed per call by uprobes (perf probe; needs root):
#   wrap  InferenceSessionWrap::Run, the native side of one session.run
#   conv  OrtValueToNapiValue over all outputs: a new ArrayBuffer per output
#         and a copy of the output into it (node's work, same on both libraries)
#   rest  wrap - conv: the input tensors, the library's Run, the releases
# so a gap between node + onyx and `onyx perf` can be told apart into the
# library's Run (rest) and node's output copy (conv).
#
#   bench/ort_abi_split.sh MODEL_NAME [THREADS] [RUNS] [ROUNDS]   (1, 10, 2)
#
# Prints per round the medians (us) of the timed calls (after the warm-ups of
# bench/ort_abi_latency.js). Models and inputs as bench/ort_abi_latency.sh.
# Each probe hit costs about a microsecond, so only models of milliseconds read
# true. The probes (group onyx_split) are removed on exit. Not part of CI; run it
# under flock /tmp/onyx-bench.lock on a shared machine.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
name="${1:?usage: bench/ort_abi_split.sh MODEL_NAME [THREADS] [RUNS] [ROUNDS]}"
threads="${2:-1}" runs="${3:-10}" rounds="${4:-2}"
base="${BENCH_MODELS:-/var/tmp/onnx-bench}"
model="$base/public/$name.onnx"
npz="$(ls "$base/public/$name".*.npz | head -1)"
binding="$(ls "$base"/ort/node_modules/onnxruntime-node/bin/napi-v*/linux/x64/onnxruntime_binding.node | head -1)"
work="${WORK:-$root/build/ort-abi-split}"
mkdir -p "$work/lib"
ln -sf "$root/build/libonnxruntime.so.1.30.0" "$work/lib/libonnxruntime.so.1"

# the binding's functions by their mangled names (perf probe wants addresses for C++ symbols)
addr() { nm "$binding" | awk -v s="$1" '$3 == s && $2 == "T" && !a {a = "0x" $1} END {print a}'; }
wrap="$(addr _ZN20InferenceSessionWrap3RunERKN4Napi12CallbackInfoE)"
conv="$(addr _Z19OrtValueToNapiValueN4Napi3EnvEON3Ort5ValueE)"
[ -n "$wrap" ] && [ -n "$conv" ] || { echo "ort_abi_split: binding symbols not found in $binding" >&2; exit 1; }
trap 'perf probe -q -d "onyx_split:*" 2>/dev/null || true' EXIT
perf probe -q -d "onyx_split:*" 2>/dev/null || true
for p in "wrap=$wrap" "wrap_ret=$wrap%return" "conv=$conv" "conv_ret=$conv%return"; do
    perf probe -q -x "$binding" -a "onyx_split:$p"
done

# one node process, probed: "js_us wrap_us conv_us rest_us" (medians of the last $runs calls)
node_split() {
    LD_LIBRARY_PATH="$1" perf record -q -e 'onyx_split:*' -o "$work/probes.data" \
        node bench/ort_abi_latency.js "$model" "$npz" "$threads" "$runs" > "$work/js.json" 2>/dev/null
    local js
    js="$(sed -n 's/.*"median_us":\([0-9.]*\).*/\1/p' "$work/js.json")"
    perf script -i "$work/probes.data" -F time,event 2>/dev/null | awk -v runs="$runs" -v js="$js" '
        { t = $1 + 0; e = $2; sub(/:$/, "", e); sub(/.*:/, "", e) }
        e == "wrap" { t0 = t; n++; conv[n] = 0 }
        e == "wrap_ret__return" { wrap[n] = t - t0 }
        e == "conv" { c0 = t }
        e == "conv_ret__return" { conv[n] += t - c0 }
        function median(a,   m, i, j, b, x) {
            m = 0
            for (i = n - runs + 1; i <= n; i++) b[++m] = a[i]
            for (i = 2; i <= m; i++) { x = b[i]; for (j = i - 1; j >= 1 && b[j] > x; j--) b[j + 1] = b[j]; b[j + 1] = x }
            return m % 2 ? b[(m + 1) / 2] : (b[m / 2] + b[m / 2 + 1]) / 2
        }
        END {
            for (i = 1; i <= n; i++) rest[i] = wrap[i] - conv[i]
            printf "%10.1f %10.1f %10.1f %10.1f", js, median(wrap) * 1e6, median(conv) * 1e6, median(rest) * 1e6
        }'
}

echo "# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $name, $threads thread(s), $runs calls per process; us"
printf "%-5s %10s | %-10s %10s %10s %10s %10s\n" round perf lib js wrap conv rest
for r in $(seq "$rounds"); do
    perf_us="$(build/onyx perf "$model" --inputs "$npz" -x "$threads" -r "$runs" -w $((runs / 10 + 1)) |
               sed -n 's/.*"median_ms":\([0-9.]*\).*/\1/p' | awk '{print $1 * 1000}')"
    printf "%-5s %10s | %-10s %s\n" "$r" "$perf_us" onyx "$(node_split "$work/lib")"
    printf "%-5s %10s | %-10s %s\n" "" "" ort "$(node_split "")"
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
