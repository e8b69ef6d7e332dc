#!/bin/bash
# Language-model benchmarks (issue 14) on the TinyLlama-1.1B-shape model of
# scripts/export_llama.py, onyx vs ONNX Runtime 1.30, under the machine-wide benchmark lock:
#   DRAM read bandwidth (1 and 2 threads), one decode step after 512 cached tokens and a
#   128-token prefill (bench/compare, 1 and 2 threads), and 32 greedy steps of `onyx generate`
#   against a reference loop driving ONNX Runtime (ids, tokens/s, peak memory).
#   bench/llm/bench_llm.sh [DIR=/var/tmp/onyx-llm] [MODELS=tinyllama_int4,tinyllama]
# Expects DIR/public/tinyllama.onnx (export_llama.py --size tinyllama) and
# DIR/public/tinyllama_int4.onnx (onyx quantize --mode int4 --block-size 32); writes
# DIR/public/*.npz. (Not hard links to models elsewhere: onyx refuses external data files with
# more than one link.)
set -e
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../.." && pwd)
dir=${1:-/var/tmp/onyx-llm}; models=${2:-tinyllama_int4,tinyllama}
. "$root/tests/ort_abi/find_ort_node.sh"
export NODE_PATH="$(ort_node_modules "$root/build")"
gcc -O2 -mavx2 -pthread "$here/membw.c" -o "$dir/membw"
paths=(); for m in ${models//,/ }; do paths+=("$dir/public/$m.onnx"); done
/usr/bin/python3 "$here/make_inputs.py" "$dir" "${paths[@]}"
cfgs=(); for m in ${models//,/ }; do cfgs+=("$m:decode512" "$m:prefill128"); done
lock() { flock /tmp/onyx-bench.lock "$@"; }
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2) | load: $(cut -d' ' -f1-3 /proc/loadavg)"
lock "$dir/membw" 1024 1; lock "$dir/membw" 1024 2
IFS=,; lock env BENCH_MODELS="$dir" "$root/bench/compare" --models "${cfgs[*]}" --threads 1,2 \
    --rounds 1 --runs 5 --warmup 1; unset IFS
for m in ${models//,/ }; do
    lock /usr/bin/python3 "$root/tests/llm/check_generate.py" "$root/build/onyx" "$dir/public/$m.onnx" 1,450,2000,31000,7 32
    lock node "$root/tests/llm/ort_generate.js" "$dir/public/$m.onnx" --input-ids 1,450,2000,31000,7 --max-new-tokens 32 \
        --threads 1 | cut -c1-400
done
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
