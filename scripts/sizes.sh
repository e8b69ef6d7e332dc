#!/usr/bin/env bash
# Stripped sizes of every build of onyx, as a markdown table (docs/build_options.md
# has the figures and ONNX Runtime's for comparison).
#
#   scripts/sizes.sh            build what is missing, then print the table
#   scripts/sizes.sh --no-build only measure what is already built
#
# Rows:
#   full x86-64       build/libonyx.so and build/onyx (`make`)
#   full ARM64        build-aarch64/ (`make aarch64`) when aarch64-linux-gnu-gcc is installed
#   WASM              build-wasm/ (`make wasm`): the .wasm and its JavaScript glue, when emcc is installed
#   minimal builds    build-minimal-NAME/libonyx.so for the operator lists in tests/minimal/NAME.config
#                     (digits, mobilenet_v2, bert_base; cmake -DONYX_OPS_CONFIG=...), and
#                     build-minimal-digits-avx2: the digits list with -DONYX_MINIMAL_ISA=avx2
# A row that cannot be built here says "not built" and why.
set -uo pipefail
cd "$(dirname "$0")/.."
build=1
[ "${1:-}" = "--no-build" ] && build=0
jobs="${JOBS:-$(nproc)}"

row() { printf '| %s | %s | %s |\n' "$1" "$2" "$3"; }
kb() { awk -v b="$1" 'BEGIN { printf "%d (%.1f KB)", b, b / 1024 }'; }
# stripped size of FILE with STRIP (a copy is stripped, the build stays as it is)
stripped() {
    local tmp
    tmp="$(mktemp)"
    "$2" -o "$tmp" "$1" 2>/dev/null || cp "$1" "$tmp"
    stat -c %s "$tmp"
    rm -f "$tmp"
}
has_target() { grep -q "^$1:" Makefile; }

echo "| build | file | bytes, stripped |"
echo "|---|---|---:|"

# ---- full x86-64
if [ ! -f build/libonyx.so ] && [ $build = 1 ]; then make >/dev/null; fi
if [ -f build/libonyx.so ]; then
    row "full x86-64" "libonyx.so" "$(kb "$(stripped build/libonyx.so strip)")"
    row "full x86-64" "onyx (tool, static libonyx)" "$(kb "$(stripped build/onyx strip)")"
else
    row "full x86-64" "libonyx.so" "not built"
fi

# ---- full ARM64 (the cross build of `make aarch64`)
if ! command -v aarch64-linux-gnu-gcc >/dev/null; then
    row "full ARM64" "libonyx.so" "not built (no aarch64-linux-gnu-gcc: apt-get install gcc-aarch64-linux-gnu)"
elif ! has_target aarch64; then
    row "full ARM64" "libonyx.so" "not built (this Makefile has no aarch64 target)"
else
    if [ ! -f build-aarch64/libonyx.so ] && [ $build = 1 ]; then make aarch64 >/dev/null; fi
    if [ -f build-aarch64/libonyx.so ]; then
        row "full ARM64" "libonyx.so" "$(kb "$(stripped build-aarch64/libonyx.so aarch64-linux-gnu-strip)")"
        [ -f build-aarch64/onyx ] &&
            row "full ARM64" "onyx (tool)" "$(kb "$(stripped build-aarch64/onyx aarch64-linux-gnu-strip)")"
    else
        row "full ARM64" "libonyx.so" "not built (make aarch64 failed)"
    fi
fi

# ---- WebAssembly (emscripten; `make wasm`)
if ! command -v emcc >/dev/null; then
    row "WASM" ".wasm + glue" "not built (no emcc: apt-get install emscripten)"
elif ! has_target wasm; then
    row "WASM" ".wasm + glue" "not built (this Makefile has no wasm target)"
else
    if [ -z "$(find build-wasm -maxdepth 1 -name '*.wasm' 2>/dev/null)" ] && [ $build = 1 ]; then
        make wasm >/dev/null
    fi
    found=0
    for w in $(find build-wasm -maxdepth 1 -name '*.wasm' 2>/dev/null | sort); do
        found=1
        glue="${w%.wasm}.js"
        [ -f "$glue" ] || glue="${w%.wasm}.mjs"
        wb=$(stat -c %s "$w"); gb=0
        [ -f "$glue" ] && gb=$(stat -c %s "$glue")
        row "WASM" "$(basename "$w") + $(basename "$glue")" "$(kb $((wb + gb))) = $wb + $gb"
    done
    [ $found = 1 ] || row "WASM" ".wasm + glue" "not built (make wasm failed)"
fi

# ---- minimal builds from the committed operator lists
for cfg in tests/minimal/digits.config tests/minimal/mobilenet_v2.config tests/minimal/bert_base.config; do
    name="$(basename "$cfg" .config)"
    dir="build-minimal-$name"
    if [ ! -f "$dir/libonyx.so" ] && [ $build = 1 ]; then
        cmake -S . -B "$dir" -DONYX_OPS_CONFIG="$cfg" >/dev/null &&
            cmake --build "$dir" -j "$jobs" --target onyx_shared >/dev/null
    fi
    if [ -f "$dir/libonyx.so" ]; then
        row "minimal x86-64, $name" "libonyx.so" "$(kb "$(stripped "$dir/libonyx.so" strip)")"
    else
        row "minimal x86-64, $name" "libonyx.so" "not built"
    fi
done

# ---- the digits list for one instruction set (ONYX_MINIMAL_ISA: AVX2 kernels and the portable ones)
dir="build-minimal-digits-avx2"
if [ ! -f "$dir/libonyx.so" ] && [ $build = 1 ]; then
    cmake -S . -B "$dir" -DONYX_OPS_CONFIG=tests/minimal/digits.config -DONYX_MINIMAL_ISA=avx2 >/dev/null &&
        cmake --build "$dir" -j "$jobs" --target onyx_shared >/dev/null
fi
if [ -f "$dir/libonyx.so" ]; then
    row "minimal x86-64, digits, ONYX_MINIMAL_ISA=avx2" "libonyx.so" "$(kb "$(stripped "$dir/libonyx.so" strip)")"
else
    row "minimal x86-64, digits, ONYX_MINIMAL_ISA=avx2" "libonyx.so" "not built"
fi
