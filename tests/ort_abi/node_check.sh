#!/usr/bin/env bash
# The unmodified onnxruntime-node 1.30.0 package runs on onyx's
# libonnxruntime.so.1: its binding (onnxruntime_binding.node) needs
# libonnxruntime.so.1 with RUNPATH $ORIGIN, and LD_LIBRARY_PATH is searched
# before RUNPATH, so pointing LD_LIBRARY_PATH at onyx's build swaps the
# library without touching the package. Each model runs once on ONNX
# Runtime's own library and once on onyx's; the test checks that onyx's
# library was the one mapped and that outputs match (|a-b| <= 1e-4 + 1e-3|b|).
#   node_check.sh BUILD_DIR REPO_ROOT
# onnxruntime-node comes from find_ort_node.sh.
set -euo pipefail
build="$(cd "$1" && pwd)"
root="$(cd "$2" && pwd)"
command -v node >/dev/null || { echo "node is not installed (scripts/deps.sh installs nodejs)"; exit 1; }
. "$root/tests/ort_abi/find_ort_node.sh"
mods="$(ort_node_modules "$build")"
libdir="$build/ort-abi-lib"            # only libonnxruntime.so.1 in it
mkdir -p "$libdir"
ln -sf "$build/libonnxruntime.so.1.30.0" "$libdir/libonnxruntime.so.1"
onyx_lib="$(readlink -f "$build/libonnxruntime.so.1.30.0")"

models=("$root/models/digits.onnx" "$root/tests/data/matmul_add.onnx")
for m in mlp squeezenet1_1 mobilenet_v2; do
    f="${BENCH_MODELS:-/var/tmp/onnx-bench}/public/$m.onnx"
    [ -f "$f" ] && models+=("$f")
done
work="$build/ort-abi-node"
rm -rf "$work"
mkdir -p "$work"
fail=0
for m in "${models[@]}"; do
    name="$(basename "$m" .onnx)"
    node "$root/tests/ort_abi/node_run.js" "$mods" "$m" "$work/$name.ort.json"
    LD_LIBRARY_PATH="$libdir" node "$root/tests/ort_abi/node_run.js" "$mods" "$m" "$work/$name.onyx.json"
    node -e '
      const [ref, got, onyxLib] = process.argv.slice(1).map((p, i) => i < 2 ? require(p) : p);
      if (got.library !== onyxLib) { console.log(`loaded ${got.library}, not onyx`); process.exit(1); }
      if (ref.library === onyxLib) { console.log("the reference run used onyx"); process.exit(1); }
      let worst = 0;
      for (const [name, r] of Object.entries(ref.outputs)) {
        const g = got.outputs[name];
        if (!g || g.type !== r.type || JSON.stringify(g.dims) !== JSON.stringify(r.dims)) {
          console.log(`${name}: type/shape ${g && g.type} ${g && g.dims} vs ${r.type} ${r.dims}`); process.exit(1);
        }
        r.data.forEach((b, i) => { worst = Math.max(worst, Math.abs(g.data[i] - b) - 1e-3 * Math.abs(b)); });
      }
      console.log(`max excess error ${worst.toExponential(2)}`);
      process.exit(worst <= 1e-4 ? 0 : 1);
    ' "$work/$name.ort.json" "$work/$name.onyx.json" "$onyx_lib" > "$work/$name.txt" || fail=1
    echo "$name: $(cat "$work/$name.txt")"
done
# The benchmark runner (../shared/bench/ort_run.js, where the checkout has it) on the small
# benchmark models with their recorded inputs, compared by ../shared/bench/compare_outputs.py.
bench="$root/../shared/bench"
if [ -f "$bench/ort_run.js" ] && /usr/bin/python3 -c "import numpy" 2>/dev/null; then
    for m in mlp squeezenet1_1; do
        f="${BENCH_MODELS:-/var/tmp/onnx-bench}/public/$m.onnx"
        npz="${f%.onnx}.b1.npz"
        [ -f "$f" ] && [ -f "$npz" ] || continue
        ORT_BENCH_DIR="$(dirname "$mods")" node "$bench/ort_run.js" "$f" --inputs "$npz" --runs 1 --warmup 0 \
            --dump "$work/$m.ort_run.ort" > /dev/null
        LD_LIBRARY_PATH="$libdir" ORT_BENCH_DIR="$(dirname "$mods")" node "$bench/ort_run.js" "$f" --inputs "$npz" \
            --runs 1 --warmup 0 --dump "$work/$m.ort_run.onyx" > /dev/null
        if /usr/bin/python3 "$bench/compare_outputs.py" "$work/$m.ort_run.ort" "$work/$m.ort_run.onyx" \
               --rtol 1e-3 --atol 1e-4 > "$work/$m.ort_run.txt"; then
            echo "$m (ort_run.js): $(tr '\n' ' ' < "$work/$m.ort_run.txt")"
        else
            echo "$m (ort_run.js): outputs differ: $(cat "$work/$m.ort_run.txt")"
            fail=1
        fi
    done
fi
[ "$fail" = 0 ] && echo "node binding on onyx: all outputs match" || { echo "node binding: outputs differ"; exit 1; }
