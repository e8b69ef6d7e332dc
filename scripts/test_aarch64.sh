#!/usr/bin/env bash
# The ARM64 build's conformance runs, under qemu-user on an x86-64 host (natively on ARM64).
# Build first with `make aarch64` (build-aarch64/; the unit tests run with
# `cd build-aarch64 && ctest -R '^unit\.'`, ctest starts them through qemu-aarch64).
#
#   scripts/test_aarch64.sh node [FLAGS]    the node suite as ctest's conformance.node runs it:
#                                           tests/node_filter.txt minus tests/node_exclude.txt (all
#                                           1,802 tests; about 2-3 minutes under qemu on 2 cores)
#   scripts/test_aarch64.sh bench [MODEL...]  the public benchmark models' outputs against ONNX
#                                           Runtime's on this (x86-64) host: scripts/check_bench_outputs.sh
#                                           with ONYX=scripts/aarch64_onyx.sh
# FLAGS go to `onyx test` (e.g. -j 2). Environment: ONNX_TESTS (default ../shared/onnx-tests).
set -euo pipefail
cd "$(dirname "$0")/.."
tests="${ONNX_TESTS:-$(pwd)/../shared/onnx-tests}"
[ -x build-aarch64/onyx ] || { echo "test_aarch64: build-aarch64/onyx missing: run make aarch64" >&2; exit 2; }

# the regex lines of a filter file joined into one alternation (as tests/conformance.cmake does)
filter_of() { grep -v '^#' "$1" | grep . | paste -sd '|'; }

what="${1:-node}"
[ $# -gt 0 ] && shift
case "$what" in
    node)
        # qemu runs the kernels 10-50x slower than the host: a longer timeout per test
        exec scripts/aarch64_onyx.sh test "$tests/node" --filter "$(filter_of tests/node_filter.txt)" \
            --exclude-file tests/node_exclude.txt --timeout 600 "$@"
        ;;
    bench)
        ONYX="$(pwd)/scripts/aarch64_onyx.sh" WORK="$(pwd)/build-aarch64/bench-outputs" \
            exec scripts/check_bench_outputs.sh "$@"
        ;;
    *)
        echo "usage: scripts/test_aarch64.sh node|bench [...]" >&2
        exit 2
        ;;
esac
