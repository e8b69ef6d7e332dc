#!/usr/bin/env bash
# Load-time scaling benchmark (issue 10): chains of 10k, 100k and 1M nodes of three kinds
# (bench/make_chain.py: const = folds away, relu = runs, identity = no-op removal), each loaded
# and run once by `onyx perf -r 1 -w 0`, REPS times in alternating order. Prints the median
# load and first-run times per model and the ratios 100k/10k and 1M/100k (linear = 10).
#
#   bench/chain_load.sh [ONYX] [REPS]      (defaults: build/onyx, 3; needs /usr/bin/python3 + onnx)
#
# Run it alone on the machine (`flock /tmp/onyx-bench.lock bench/chain_load.sh`): a busy
# machine makes the 1M models, which do not fit the caches, look slower than they are.
set -euo pipefail
cd "$(dirname "$0")/.."
onyx="${1:-build/onyx}"
reps="${2:-3}"
dir="$(mktemp -d /var/tmp/onyx-chain.XXXXXX)"
trap 'rm -rf "$dir"' EXIT
kinds=(const relu identity)
sizes=(10000 100000 1000000)
for k in "${kinds[@]}"; do
    for n in "${sizes[@]}"; do /usr/bin/python3 bench/make_chain.py "$n" "$k" "$dir/$k.$n.onnx"; done
done
for r in $(seq "$reps"); do
    for k in "${kinds[@]}"; do
        order=("${sizes[@]}")
        [ $((r % 2)) -eq 0 ] && order=(1000000 100000 10000)
        for n in "${order[@]}"; do
            "$onyx" perf "$dir/$k.$n.onnx" -r 1 -w 0 >>"$dir/$k.$n.json"
        done
    done
done
/usr/bin/python3 - "$dir" "${kinds[@]}" <<'PY'
import json, statistics, sys
d, kinds = sys.argv[1], sys.argv[2:]
sizes = [10000, 100000, 1000000]
print(f"{'chain':<10}{'nodes':>9}{'load ms':>11}{'first run ms':>14}{'load ratio':>12}")
for k in kinds:
    prev = None
    for n in sizes:
        rows = [json.loads(l) for l in open(f"{d}/{k}.{n}.json")]
        load = statistics.median(r["load_ms"] for r in rows)
        first = statistics.median(r["first_run_ms"] for r in rows)
        ratio = f"{load / prev:.1f}x" if prev else ""
        print(f"{k:<10}{n:>9}{load:>11.1f}{first:>14.1f}{ratio:>12}")
        prev = load
PY
