#!/usr/bin/env bash
# Measures onyx serve on loopback with build/onyx_loadgen (the closing figures of
# docs/serve.md): overhead per request at concurrency 1 against `onyx perf`'s median run,
# and throughput / p99 with 32 clients with dynamic batching on and off, on the public MLP
# and on a wide MLP. Runs alternate on and off ROUNDS times (default 2). Take the benchmark
# lock around it: flock /tmp/onyx-bench.lock scripts/bench_serve.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${ONYX_BUILD:-$root/build}"
rounds="${ROUNDS:-2}"
mlp="${MLP:-/var/tmp/onnx-bench/public/mlp.onnx}"
work="$(mktemp -d)"
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT

/usr/bin/python3 "$root/tests/serve/make_models.py" "$work"
[ -f "$mlp" ] || mlp="$work/mlp.onnx"
model() {  # NAME FILE [CONFIG-JSON]
    mkdir -p "$work/repo/$1/1" && cp "$2" "$work/repo/$1/1/model.onnx"
    [ -z "${3:-}" ] || echo "$3" > "$work/repo/$1/config.json"
}
delay="${DELAY_US:-0}"   # 0: batch what is queued when the worker is free, never wait
batching="{\"max_batch_size\": 64, \"dynamic_batching\": {\"max_queue_delay_microseconds\": $delay}}"
model mlp "$mlp" "$batching"
model mlp_plain "$mlp"
model wide "$work/wide.onnx" "$batching"
model wide_plain "$work/wide.onnx"

port=18931
"$build/onyx" serve --model-repository "$work/repo" --host 127.0.0.1 --http-port $port --grpc-port 0 \
    --metrics-port 0 --threads 1 2>"$work/serve.log" &
pid=$!
for _ in $(seq 100); do curl -fs "127.0.0.1:$port/v2/health/ready" >/dev/null 2>&1 && break; sleep 0.1; done

lg() { "$build/onyx_loadgen" --port $port --input input "$@"; }
for r in $(seq "$rounds"); do
    echo "== round $r: onyx perf (intra-op threads 1), then the server at concurrency 1 (mlp_plain)"
    "$build/onyx" perf "$mlp" -x 1 -r 5000
    lg --model mlp_plain --shape 1,784 --concurrency 1 --requests 5000
    echo "== round $r: 32 clients, MLP, batching off then on (8 s or 100000 requests each)"
    lg --model mlp_plain --shape 1,784 --concurrency 32 --requests 100000 --duration 8
    lg --model mlp --shape 1,784 --concurrency 32 --requests 100000 --duration 8
    echo "== round $r: 32 clients, wide MLP 1024-2048-2048-10, batching off then on"
    lg --model wide_plain --shape 1,1024 --concurrency 32 --requests 100000 --duration 8
    lg --model wide --shape 1,1024 --concurrency 32 --requests 100000 --duration 8
done
