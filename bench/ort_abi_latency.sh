#!/usr/bin/env bash
# Per-call latency through onnxruntime-node 1.30 (unmodified) on ONNX Runtime's
# own libonnxruntime.so.1 and on onyx's, beside `onyx perf`, and the in-process
# cost of the ABI calls the binding makes (bench/ort_abi_calls.c) on both
# libraries, so node's own per-call overhead can be told from the library's.
#
#   bench/ort_abi_latency.sh [MODEL_NAME...]   (default: mlp squeezenet1_1)
#
# Env: THREADS (default "1 2"), ROUNDS (5) alternating rounds of
#   onyx perf | node + ONNX Runtime | node + onyx   (same runs each),
# RUNS (default: about 1 s of runs per measurement, 10..5000),
# CALLS=0 skips the in-process ABI loops (build/tests/ort_abi_calls, built by make, run
#   with the npz inputs' shapes). Prints the medians of the per-round
# medians in microseconds; node_over_* = node latency minus the same library's
# in-process Run (C, ort_abi_calls run_ns), i.e. what node adds per call.
# CPU=1 adds, per model and thread count, the CPU time (user + system) per
# call of each of the three, from two processes of N and 10*N calls (N about
# CPU_RUNS, default 33; the timer counts 10 ms steps, so N*ms should be >= 1 s)
# (the difference over the extra calls: load, start-up and warm-up cancel). On a
# machine loaded by others, wall-clock medians swing by tens of percent; the
# CPU time per call does not, so it shows whether node + onyx does more work
# per call than `onyx perf` (at 1 thread it is the latency without waiting).
# Models and inputs: ${BENCH_MODELS:-/var/tmp/onnx-bench}/public/NAME.onnx, NAME.CONFIG.npz.
# Not part of CI (slow); run it under flock /tmp/onyx-bench.lock on a shared machine.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
models="${BENCH_MODELS:-/var/tmp/onnx-bench}/public"
ort_lib="$(ls "${BENCH_MODELS:-/var/tmp/onnx-bench}"/ort/node_modules/onnxruntime-node/bin/napi-v*/linux/x64/libonnxruntime.so.1 | head -1)"
work="${WORK:-$root/build/ort-abi-latency}"
rounds="${ROUNDS:-5}"
mkdir -p "$work/lib"
ln -sf "$root/build/libonnxruntime.so.1.30.0" "$work/lib/libonnxruntime.so.1"
calls="$root/build/tests/ort_abi_calls"   # built by make (tests/CMakeLists.txt)

names=("$@")
[ ${#names[@]} -eq 0 ] && names=(mlp squeezenet1_1)
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
field() { sed -n "s/.*\"$1\":\([0-9.]*\).*/\1/p"; }
# the npz inputs' shapes as ort_abi_calls takes them: NAME=D0xD1x...,...
npz_shapes() {
    node -e "const io = require('$root/../shared/bench/lib/io');
        console.log(Object.entries(io.readNpz(process.argv[1])).map(([k, t]) => k + '=' + t.shape.join('x')).join(','))" "$1"
}

echo "# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-24s %3s %5s %10s %10s %10s %8s %9s %9s %9s %9s\n" config thr runs perf_us node_ort node_onyx onyx/perf \
    c_run_ort c_run_onyx over_ort over_onyx
for name in "${names[@]}"; do
    m="$models/$name.onnx"
    for npz in "$models/$name".*.npz; do
        cfg="$(basename "$npz" .npz)"
        for t in ${THREADS:-1 2}; do
            runs="${RUNS:-}"
            if [ -z "$runs" ]; then
                ms="$(build/onyx perf "$m" --inputs "$npz" -x "$t" -r 3 -w 1 | field median_ms)"
                runs="$(awk -v ms="$ms" 'BEGIN {r = int(1000 / (ms > 0.001 ? ms : 0.001)); print r < 10 ? 10 : (r > 5000 ? 5000 : r)}')"
            fi
            p=(); o=(); n=()
            for _ in $(seq "$rounds"); do
                p+=("$(awk -v ms="$(build/onyx perf "$m" --inputs "$npz" -x "$t" -r "$runs" -w $((runs / 10 + 1)) | field median_ms)" 'BEGIN {print ms * 1000}')")
                o+=("$(node bench/ort_abi_latency.js "$m" "$npz" "$t" "$runs" | field median_us)")
                n+=("$(LD_LIBRARY_PATH="$work/lib" node bench/ort_abi_latency.js "$m" "$npz" "$t" "$runs" | field median_us)")
            done
            pm="$(printf '%s\n' "${p[@]}" | median)"
            om="$(printf '%s\n' "${o[@]}" | median)"
            nm="$(printf '%s\n' "${n[@]}" | median)"
            cr_ort=NaN; cr_onyx=NaN
            if [ "${CALLS:-1}" = 1 ]; then
                shapes="$(npz_shapes "$npz")"
                cr_ort="$(awk -v ns="$("$calls" "$ort_lib" "$m" "$t" "$runs" "$shapes" | field run_ns)" 'BEGIN {print ns / 1000}')"
                cr_onyx="$(awk -v ns="$("$calls" "$root/build/libonnxruntime.so.1" "$m" "$t" "$runs" "$shapes" | field run_ns)" 'BEGIN {print ns / 1000}')"
            fi
            printf "%-24s %3s %5s %10.2f %10.2f %10.2f %8.3f %9.2f %9.2f %9.2f %9.2f\n" "$cfg" "$t" "$runs" "$pm" "$om" "$nm" \
                "$(awk -v a="$nm" -v b="$pm" 'BEGIN {print a / b}')" "$cr_ort" "$cr_onyx" \
                "$(awk -v a="$om" -v b="$cr_ort" 'BEGIN {print a - b}')" "$(awk -v a="$nm" -v b="$cr_onyx" 'BEGIN {print a - b}')"
        done
    done
done
cpu_s() { /usr/bin/time -f "%U %S" "$@" 2>&1 >/dev/null | tail -1 | awk '{print $1 + $2}'; }
# N calls in all (N/11 of them warm-ups) of: onyx perf | node + ONNX Runtime | node + onyx
calls_cmd() {
    local kind="$1" m="$2" npz="$3" t="$4" n="$5"
    case "$kind" in
        perf) echo build/onyx perf "$m" --inputs "$npz" -x "$t" -r $((n * 10 / 11)) -w $((n - n * 10 / 11)) ;;
        ort) echo node bench/ort_abi_latency.js "$m" "$npz" "$t" $((n * 10 / 11)) ;;
        onyx) echo env LD_LIBRARY_PATH="$work/lib" node bench/ort_abi_latency.js "$m" "$npz" "$t" $((n * 10 / 11)) ;;
    esac
}
# CPU ms per call: two processes of N and 10*N calls, the difference over the 9*N extra
# (ort_abi_latency.js warms up with max(3, RUNS/10) calls: N = 11*RUNS/10 for RUNS >= 30)
per_call_ms() {
    local n="$1" a b
    shift
    a="$(cpu_s $(calls_cmd "$@" "$n"))"
    b="$(cpu_s $(calls_cmd "$@" $((10 * n))))"
    awk -v a="$a" -v b="$b" -v n="$n" 'BEGIN {printf "%.4f", (b - a) * 1000 / (9 * n)}'
}
if [ "${CPU:-0}" = 1 ]; then
    printf "%-24s %3s %5s %12s %12s %12s\n" "config (CPU ms/call)" thr runs onyx_perf node_ort node_onyx
    for name in "${names[@]}"; do
        for npz in "$models/$name".*.npz; do
            for t in ${THREADS:-1 2}; do
                n=$((${CPU_RUNS:-33} * 11 / 10))
                printf "%-24s %3s %5s %12s %12s %12s\n" "$(basename "$npz" .npz)" "$t" "$n" \
                    "$(per_call_ms "$n" perf "$models/$name.onnx" "$npz" "$t")" \
                    "$(per_call_ms "$n" ort "$models/$name.onnx" "$npz" "$t")" \
                    "$(per_call_ms "$n" onyx "$models/$name.onnx" "$npz" "$t")"
            done
        done
    done
fi
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
