# shellcheck shell=bash
# ort_node_modules BUILD_DIR: print the node_modules folder holding
# onnxruntime-node 1.30.0: $ORT_BENCH_DIR (default /var/tmp/onnx-bench/ort)
# or BUILD_DIR/ort-node, where it is installed with npm when absent
# (--ignore-scripts: the package ships its binaries, including ONNX
# Runtime's own libonnxruntime.so.1).
ort_node_modules() {
    local d
    for d in "${ORT_BENCH_DIR:-/var/tmp/onnx-bench/ort}" "$1/ort-node"; do
        [ -d "$d/node_modules/onnxruntime-node" ] && { echo "$d/node_modules"; return 0; }
    done
    command -v npm >/dev/null || { echo "onnxruntime-node is not installed and npm is missing" >&2; return 1; }
    echo "installing onnxruntime-node@1.30.0 into $1/ort-node" >&2
    mkdir -p "$1/ort-node"
    npm install --silent --ignore-scripts --prefix "$1/ort-node" onnxruntime-node@1.30.0 >&2 || return 1
    echo "$1/ort-node/node_modules"
}
