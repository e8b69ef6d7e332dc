#!/bin/bash
# Pack what scripts/gpu_check.sh needs on a GPU machine that cannot build onyx
# (no image or codec headers there) into DIR: the CLI, the provider libraries and
# test binaries from build/, the shared libraries they load that glibc does not
# provide, the node conformance tests (node.tar.gz) and the benchmark exporter.
#   scripts/gpu_bundle.sh DIR   then on the GPU machine: BUNDLE=DIR scripts/gpu_check.sh
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=${1:?usage: gpu_bundle.sh DIR}
B=$ROOT/build
mkdir -p "$DIR/lib"
cp "$B/onyx" "$B"/libonyx_provider_*.so \
   "$B/tests/test_providers" "$B/tests/test_cross_provider" "$B/tests/test_cuda_binding" "$DIR/"
for f in "$B/onyx" "$B/tests/test_cross_provider"; do
    ldd "$f" | awk '$3 ~ /^\// {print $3}'
done | sort -u | grep -vE '/(libc|libm|libpthread|libdl|librt|libgcc_s|libstdc\+\+|libz|liblzma|libzstd|ld-linux[^/]*)\.so' | xargs -r -I{} cp -L {} "$DIR/lib/"
tar czf "$DIR/node.tar.gz" -C "$ROOT/../shared/onnx-tests" node
cp "$ROOT/../shared/bench/make_models.py" "$DIR/"
du -sh "$DIR"
