#!/usr/bin/env bash
# Fuzz model loading and running with libFuzzer (ASan + UBSan).
#
#   scripts/fuzz.sh [SECONDS]      (default 60)
#
# Builds BUILD/fuzz_load_run (BUILD: FUZZ_BUILD, default build-fuzz; `make fuzz`, needs clang and
# libclang-rt-14-dev), seeds BUILD/corpus with ~300 small node-test models, the light model-zoo models and
# models/digits.onnx, then fuzzes for SECONDS. New interesting inputs go to
# BUILD/corpus-work (kept between runs); crashes, leaks and timeouts go to
# BUILD/findings/. Exits non-zero when the fuzzer reports a finding. The files in
# fuzz/regressions/ (inputs that crashed once) and fuzz/corpus/ (the accumulated corpus of
# earlier runs, minimised; refresh it with FUZZ_SAVE_CORPUS=1) are part of the seed corpus.
# Environment: ONNX_TESTS (default ../shared/onnx-tests), FUZZ_SEEDS (seed models from the node
# tests, default 300), FUZZ_SEED (libFuzzer's random seed, default 1), FUZZ_BUILD (the build
# folder, default build-fuzz; CI passes build-asan, whose `make asan` build has the target).
set -euo pipefail

seconds="${1:-60}"
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
tests="${ONNX_TESTS:-$root/../shared/onnx-tests}"
n_seeds="${FUZZ_SEEDS:-300}"
# A fixed seed makes a run on a fresh checkout (CI) reproducible; FUZZ_SEED=0 picks a random one.
seed="${FUZZ_SEED:-1}"

build="${FUZZ_BUILD:-build-fuzz}"
# A folder configured with ONYX_FUZZ (`make fuzz`, `make asan`) is built as it is; otherwise it
# is configured as `make fuzz` does (CMake adds -O1 and the coverage of the whole library).
if ! grep -q '^ONYX_FUZZ:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null; then
    cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DONYX_FUZZ=ON -DONYX_BUILD_TESTS=OFF \
        -DCMAKE_C_COMPILER=clang >/dev/null
fi
cmake --build "$build" -j "${JOBS:-$(nproc)}" --target fuzz_load_run

corpus="$build"/corpus
work="$build"/corpus-work
findings="$build"/findings
rm -rf "$corpus"
mkdir -p "$corpus" "$work" "$findings"

# Seeds: an even spread (by name) over the node-test models under 16 KB, so that most operator
# families are represented, plus every light model and the demo model.
if [ -d "$tests/node" ]; then
    mapfile -t node_models < <(find "$tests/node" -name model.onnx -size -16k | LC_ALL=C sort)
    total=${#node_models[@]}
    if [ "$total" -gt 0 ]; then
        step=$(( (total + n_seeds - 1) / n_seeds ))
        for ((i = 0; i < total; i += step)); do
            m="${node_models[$i]}"
            cp "$m" "$corpus/node_$(basename "$(dirname "$m")").onnx"
        done
    fi
fi
if [ -d "$tests/light" ]; then
    cp "$tests"/light/*.onnx "$corpus/" 2>/dev/null || true
fi
cp models/digits.onnx "$corpus/"
# Inputs that once crashed (fixed since): libFuzzer runs every corpus file first, so a
# regression fails the run before any mutation.
cp fuzz/regressions/* "$corpus/" 2>/dev/null || true
cp fuzz/corpus/* "$corpus/" 2>/dev/null || true
echo "fuzz: $(find "$corpus" -type f | wc -l) seed models in $corpus, $(find "$work" -type f | wc -l) in $work"

# The largest seed (light_densenet121, ~210 KB) must fit whole; -timeout catches hangs.
# A hostile model may legitimately ask for a huge tensor (ConstantOfShape [1e5,1e5]): ASan
# makes allocations over 2 GB return NULL, so the runtime must answer with an out-of-memory
# error, and libFuzzer's own malloc limit is set above that so it does not count them.
log="$build"/fuzz.log
set +e
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1:max_allocation_size_mb=2048" \
UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}print_stacktrace=1:halt_on_error=1" \
"$build"/fuzz_load_run -max_total_time="$seconds" -rss_limit_mb=4096 -malloc_limit_mb=8192 \
    -max_len=262144 -timeout=30 -seed="$seed" -print_final_stats=1 \
    -artifact_prefix="$findings/" "$work" "$corpus" >"$log" 2>&1
rc=$?
set -e

stats="$(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}')"
grep -E '^(Done|INFO: seed corpus)' "$log" || true
if [ "$rc" -ne 0 ]; then
    echo "fuzz: FAILED (exit $rc) after ${stats:-?} runs; log: $log; findings:"
    ls -l "$findings" || true
    grep -E -A12 'ERROR: |runtime error' "$log" | head -n 40 || true
    echo "reproduce: $build/fuzz_load_run $findings/<file>; once fixed, keep the file in"
    echo "fuzz/regressions/ so that every later run checks it first"
    exit 1
fi
echo "fuzz: OK, ${stats:-?} runs in ${seconds} s, no findings ($(find "$work" -type f | wc -l) inputs in $work)"
# FUZZ_SAVE_CORPUS=1: minimise what this run found (inputs under 8 KB) into fuzz/corpus/, to commit
if [ -n "${FUZZ_SAVE_CORPUS:-}" ]; then
    small="$build"/corpus-small
    rm -rf "$small" && mkdir -p "$small" fuzz/corpus
    find "$work" -type f -size -8k -exec cp {} "$small/" \;
    "$build"/fuzz_load_run -merge=1 -max_len=8192 -timeout=30 fuzz/corpus "$small" >>"$log" 2>&1
    echo "fuzz: fuzz/corpus holds $(find fuzz/corpus -type f | wc -l) files ($(du -sh fuzz/corpus | cut -f1))"
fi
