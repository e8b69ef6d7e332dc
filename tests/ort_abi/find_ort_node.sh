# shellcheck shell=bash
# ort_node_modules BUILD_DIR [PACKAGE...]: print the node_modules folder holding
# onnxruntime-node 1.30.0 (and the extra npm PACKAGEs, e.g. protobufjs for the
# shared bench/lib/io.js's .pb reader): $ORT_BENCH_DIR (default
# /var/tmp/onnx-bench/ort, where ../shared/bench/setup.sh puts both) or
# BUILD_DIR/ort-node, where they are installed with npm when absent
# (--ignore-scripts: the package ships its binaries, including ONNX Runtime's
# own libonnxruntime.so.1). Scripts that run the shared bench/lib/io.js must
# pass its folder on as ORT_BENCH_DIR (io.js does not read NODE_PATH).
ort_node_modules() {
    local build="$1" d p ok
    shift
    for d in "${ORT_BENCH_DIR:-/var/tmp/onnx-bench/ort}" "$build/ort-node"; do
        ok=1
        for p in onnxruntime-node "$@"; do [ -d "$d/node_modules/${p%@*}" ] || ok=0; done   # (name@version: the name)
        [ "$ok" = 1 ] && { echo "$d/node_modules"; return 0; }
    done
    command -v npm >/dev/null || { echo "onnxruntime-node is not installed and npm is missing" >&2; return 1; }
    echo "installing onnxruntime-node@1.30.0 $* into $build/ort-node" >&2
    mkdir -p "$build/ort-node"
    npm install --silent --ignore-scripts --prefix "$build/ort-node" onnxruntime-node@1.30.0 "$@" >&2 || return 1
    echo "$build/ort-node/node_modules"
}
