#!/usr/bin/env bash
# Load time of a 100,000-node chain (issue 10): under 2 s in a Release build. The timed bound is
# loose on purpose (the chain loads in a few hundred ms on a 2-core CI machine); the scaling to
# 1M nodes is a benchmark, not a test (bench/chain_load.sh).
#
#   tests/harden/chain_load.sh ONYX [LIMIT_MS]      (needs /usr/bin/python3 with onnx)
set -euo pipefail
onyx="$1"
limit="${2:-2000}"
cd "$(dirname "$0")/../.."
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
/usr/bin/python3 bench/make_chain.py 100000 relu "$dir/relu.onnx"
# the best of three loads: a machine busy with other work (ctest -j2) stretches one load's
# wall time, never all three
best=""
for attempt in 1 2 3; do
    line="$("$onyx" perf "$dir/relu.onnx" -n | tail -1)"
    echo "$line"
    load="$(printf '%s\n' "$line" | sed -n 's/.*"load_ms":\([0-9.]*\).*/\1/p')"
    [ -n "$load" ] || { echo "no load_ms in onyx perf's line"; exit 1; }
    best="$(awk -v a="$load" -v b="$best" 'BEGIN { print (b == "" || a + 0 < b + 0) ? a : b }')"
    awk -v l="$best" -v lim="$limit" 'BEGIN { exit !(l + 0 < lim + 0) }' && break
done
awk -v l="$best" -v lim="$limit" 'BEGIN {
    if (l + 0 >= lim + 0) { printf "FAIL: the 100k-node chain took %.1f ms to load at best (limit %d ms)\n", l, lim; exit 1 }
    printf "ok: the 100k-node chain loads in %.1f ms (limit %d ms)\n", l, lim }'
