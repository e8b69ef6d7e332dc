#!/usr/bin/env bash
# Runs the ARM64 build's onyx tool (build-aarch64/onyx, `make aarch64`) with the given arguments:
# through qemu-aarch64 on another host, directly on an ARM64 one. For scripts that take the onyx
# binary as one path, e.g. ONYX=scripts/aarch64_onyx.sh scripts/check_bench_outputs.sh mlp
# Environment: ONYX_AARCH64_BUILD (default build-aarch64 beside this script's folder).
set -euo pipefail
bin="${ONYX_AARCH64_BUILD:-$(dirname "$0")/../build-aarch64}/onyx"
case "$(uname -m)" in
    aarch64 | arm64) exec "$bin" "$@" ;;
    # the arm64 multiarch libc (libc6:arm64, scripts/deps.sh aarch64) provides the loader; no -L
    # to the cross sysroot, whose loader is another glibc build
    *) exec "${QEMU_AARCH64:-qemu-aarch64}" "$bin" "$@" ;;
esac
