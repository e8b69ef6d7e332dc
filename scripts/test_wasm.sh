#!/usr/bin/env bash
# The WebAssembly build and its Node.js tests (CI step `wasm` of scripts/test.sh):
#   1. Debian's emscripten when missing (scripts/deps.sh: onyx_install_deps wasm)
#   2. `make wasm`: build-wasm/, copied to js/dist/ (onyx-wasm.cjs + onyx-wasm.wasm)
#   3. the small test models and their numpy outputs (js/test/make_models.py) into build-wasm/test-models
#   4. `node --test js/test/`: the onnxruntime-web API on models/digits.onnx and the generated models
#   5. the browser demo (js/demo/) in headless chromium through playwright-core (npm, into
#      build-wasm/npm): draws a 1, reads the prediction, saves build-wasm/demo.png
# The public benchmark models against onnxruntime-web are js/bench/compare.mjs (run by hand: they
# are too big to generate in CI).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/deps.sh
. scripts/deps.sh
onyx_install_deps wasm
make wasm JOBS="${JOBS:-$(nproc)}"
ls -l js/dist/onyx-wasm.wasm js/dist/onyx-wasm.cjs
/usr/bin/python3 js/test/make_models.py build-wasm/test-models
ONYX_WASM_TEST_MODELS="$PWD/build-wasm/test-models" node --test js/test/
[ -d build-wasm/npm/node_modules/playwright-core ] ||
    npm install --prefix build-wasm/npm --no-save --no-audit --no-fund playwright-core
PLAYWRIGHT_DIR=build-wasm/npm node js/demo/test_demo.mjs build-wasm/demo.png
