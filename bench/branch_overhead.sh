#!/usr/bin/env bash
# Per-run overhead of control flow (issue 9): bench/make_branch_model.py writes a small
# recurrent classifier with a Loop and an If (branchy.onnx) and the same computation without
# control flow (flat.onnx); this times both with `onyx perf` in ROUNDS alternating rounds
# (THREADS threads, RUNS timed runs each) and prints the median latencies and their ratio
# (branchy / flat; the goal is <= 1.2).
#
#   bench/branch_overhead.sh [ONYX] [STEPS]     (defaults: build/onyx, 16; needs /usr/bin/python3 + onnx)
#
# Run it alone on the machine: `flock /tmp/onyx-bench.lock bench/branch_overhead.sh`.
set -euo pipefail
cd "$(dirname "$0")/.."
onyx="${1:-build/onyx}"
steps="${2:-16}"
threads="${THREADS:-1}"
runs="${RUNS:-2000}"
rounds="${ROUNDS:-5}"
dir="$(mktemp -d /var/tmp/onyx-branch.XXXXXX)"
trap 'rm -rf "$dir"' EXIT
/usr/bin/python3 bench/make_branch_model.py "$dir" --steps "$steps"
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
field() { sed -n "s/.*\"$1\":\([0-9.]*\).*/\1/p"; }
b=(); f=()
for r in $(seq "$rounds"); do
    b+=("$("$onyx" perf "$dir/branchy.onnx" --inputs "$dir/inputs.npz" -x "$threads" -r "$runs" -w 50 | field median_ms)")
    f+=("$("$onyx" perf "$dir/flat.onnx" --inputs "$dir/inputs.npz" -x "$threads" -r "$runs" -w 50 | field median_ms)")
done
bm="$(printf '%s\n' "${b[@]}" | median)"
fm="$(printf '%s\n' "${f[@]}" | median)"
printf "steps %s, %s thread(s): branchy %.4f ms, flat %.4f ms, ratio %.2f\n" "$steps" "$threads" "$bm" "$fm" \
    "$(awk -v a="$bm" -v b="$fm" 'BEGIN {print a / b}')"
