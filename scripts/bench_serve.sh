#!/usr/bin/env bash
# Measures onyx serve on loopback with build/onyx_loadgen (the closing figures of
# docs/serve.md): overhead per request at concurrency 1 against `onyx perf`'s median run,
# and throughput / p99 with 32 clients with dynamic batching off and on, over REST (binary
# tensors, a connection per client) and gRPC (raw contents; the 32 clients' calls multiplexed
# on 1 connection, and on 32), on the public MLP and on a wide MLP. Each run also prints the
# server's and the load generator's CPU time per request, and the end prints the model's
# compute per execution by batch size (the server's own statistics) and the throughput
# ratio that batching could reach at most when the cores are the bound:
#   (server + client CPU per request, batching off) / (the same minus the compute saved)
# Runs alternate off and on ROUNDS times (default 2). Take the benchmark lock around it:
#   flock /tmp/onyx-bench.lock scripts/bench_serve.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${ONYX_BUILD:-$root/build}"
rounds="${ROUNDS:-2}"
secs="${SECONDS_PER_RUN:-3}"
mlp="${MLP:-/var/tmp/onnx-bench/public/mlp.onnx}"
work="$(mktemp -d)"
pid=""
trap '[ -z "$pid" ] || { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; }; rm -rf "$work"' EXIT

/usr/bin/python3 "$root/tests/serve/make_models.py" "$work"
[ -f "$mlp" ] || mlp="$work/mlp.onnx"
model() {  # NAME FILE [CONFIG-JSON]
    mkdir -p "$work/repo/$1/1" && cp "$2" "$work/repo/$1/1/model.onnx"
    [ -z "${3:-}" ] || echo "$3" > "$work/repo/$1/config.json"
}
delay="${DELAY_US:-0}"   # 0: batch what is queued when an instance is free, never wait
batching="{\"max_batch_size\": 64, \"dynamic_batching\": {\"max_queue_delay_microseconds\": $delay}}"
model mlp "$mlp" "$batching"
model mlp_plain "$mlp"
model wide "$work/wide.onnx" "$batching"
model wide_plain "$work/wide.onnx"

http=18931 grpc=18932
"$build/onyx" serve --model-repository "$work/repo" --host 127.0.0.1 --http-port $http --grpc-port $grpc \
    --metrics-port 0 --threads 1 2>"$work/serve.log" &
pid=$!
for _ in $(seq 100); do curl -fs "127.0.0.1:$http/v2/health/ready" >/dev/null 2>&1 && break; sleep 0.1; done

cpu_ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
# LABEL LOADGEN-ARGS...: one run, its JSON line extended with the server's CPU per request
lg() {
    local label="$1" t0 t1 out
    shift
    t0=$(cpu_ticks)
    out=$("$build/onyx_loadgen" --input input "$@")
    t1=$(cpu_ticks)
    echo "$out" | /usr/bin/python3 -c "import json, os, sys
r = json.load(sys.stdin)
tick = 1e6 / os.sysconf('SC_CLK_TCK')
r['server_cpu_us_per_request'] = round(($t1 - $t0) * tick / max(r['requests'], 1), 1)
print('$label', json.dumps(r))"
}
rest() { lg "$1" --port $http "${@:2}"; }
grpc() { lg "$1" --port $grpc --protocol grpc "${@:2}"; }
c32=(--concurrency 32 --requests 1000000 --duration "$secs")
for r in $(seq "$rounds"); do
    echo "== round $r: onyx perf (intra-op threads 1), then the server at concurrency 1 (mlp_plain)"
    "$build/onyx" perf "$mlp" -x 1 -r 5000
    rest rest-c1 --model mlp_plain --shape 1,784 --concurrency 1 --requests 5000
    grpc grpc-c1 --model mlp_plain --shape 1,784 --concurrency 1 --requests 5000
    echo "== round $r: 32 clients, MLP, batching off then on"
    rest rest-off --model mlp_plain --shape 1,784 "${c32[@]}"
    rest rest-on --model mlp --shape 1,784 "${c32[@]}"
    grpc grpc1-off --model mlp_plain --shape 1,784 "${c32[@]}" --connections 1
    grpc grpc1-on --model mlp --shape 1,784 "${c32[@]}" --connections 1
    grpc grpc32-off --model mlp_plain --shape 1,784 "${c32[@]}"
    grpc grpc32-on --model mlp --shape 1,784 "${c32[@]}"
    echo "== round $r: 32 clients, wide MLP 1024-2048-2048-10, batching off then on"
    rest wide-off --model wide_plain --shape 1,1024 "${c32[@]}"
    rest wide-on --model wide --shape 1,1024 "${c32[@]}"
done
echo "== the MLP's compute per execution by batch size (server statistics: compute_infer)"
curl -fs "127.0.0.1:$http/v2/models/mlp/stats" > "$work/on.json"
curl -fs "127.0.0.1:$http/v2/models/mlp_plain/stats" > "$work/off.json"
/usr/bin/python3 - "$work/off.json" "$work/on.json" <<'EOF'
import json, sys
off, on = (json.load(open(p))["model_stats"][0] for p in sys.argv[1:])
def per_exec(s):
    return {b["batch_size"]: b["compute_infer"]["ns"] / b["compute_infer"]["count"] / 1e3 for b in s["batch_stats"]}
m1 = per_exec(off)[1]
on_b = per_exec(on)
rows = on["inference_count"] / max(on["execution_count"], 1)
per_row_on = sum(b["compute_infer"]["ns"] for b in on["batch_stats"]) / 1e3 / max(on["inference_count"], 1)
print(f"batch 1: {m1:.1f} us per execution; batching on: {rows:.1f} rows per execution on average, "
      f"{per_row_on:.2f} us of compute per row; by batch size (us): " +
      ", ".join(f"{b}: {t:.1f}" for b, t in sorted(on_b.items())[:12]))
print(f"compute saved per request by batching: {m1 - per_row_on:.1f} us (the most it can save)")
EOF
uptime
