#!/usr/bin/env bash
# Every test of onyx, as CI runs it (.ci/run). On a fresh Debian 12 machine with the test data in
# ../shared/ beside the checkout:
#
#   1. install the build dependencies when missing (scripts/deps.sh: apt-get, sudo when not root)
#   2. Release build (`make` -> build/)
#   3. ctest in build/: unit tests, conformance runs (tests/conformance.cmake), examples; the
#      Python package (scripts/test_python.sh: fresh venv, pip install ./python, pytest)
#   4. ASan/UBSan build at -O1 with libFuzzer's coverage (`make asan` -> build-asan/)
#   5. the unit tests (ctest entries unit.*) under ASan/UBSan
#   6. onyx test ../shared/onnx-tests/light under ASan/UBSan, then the node, simple and pytorch
#      suites (each test from 4 threads at once on one session) and Debian's opset-17 suite
#   7. libFuzzer for FUZZ_SECONDS (default 300) on model loading and running, from the committed
#      corpus fuzz/corpus/ plus seed models (scripts/fuzz.sh, on build-asan's fuzz target)
#   8. ThreadSanitizer build of the concurrency tests (`make tsan` -> build-tsan/) and their runs
#
# Prints the time of each step and a closing line "N passed, N failed", where N counts every
# ctest test of steps 3 and 5 plus one for each other step; exits 1 if anything failed.
# Environment: FUZZ_SECONDS, JOBS (default nproc), ONNX_TESTS (default ../shared/onnx-tests).
# Disk: every step logs the free space; under CI (CI set) each build folder is deleted once its
# steps are done, and the downloaded packages are dropped after installing (scripts/deps.sh), so
# the run needs about the largest single build folder rather than all of them at once (a CI
# machine once ran out of disk while linking the sanitizer build).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
jobs="${JOBS:-$(nproc)}"
tests="${ONNX_TESTS:-$root/../shared/onnx-tests}"
fuzz_seconds="${FUZZ_SECONDS:-300}"
logdir="$root/build-logs"
mkdir -p "$logdir"

passed=0
failed=0
failures=()
timings=()

# prune DIR...: under CI, deletes build folders whose steps are done (the disk of a CI machine
# may be small); a developer's local run keeps them for debugging.
prune() {
    [ -n "${CI:-}" ] || return 0
    local d
    for d in "$@"; do
        [ -d "$d" ] && echo "prune: $d ($(du -sh "$d" 2>/dev/null | cut -f1))" && rm -rf "$d"
    done
    return 0
}

# ---- 1. dependencies ----
# shellcheck source=scripts/deps.sh
. scripts/deps.sh
onyx_install_deps test

# step NAME COMMAND...: runs one step with its output going to the console and to
# build-logs/NAME.log, records its time, and counts it as one pass or failure unless
# COUNT_CTEST is set (then the ctest summary in the log gives the counts).
step() {
    local name="$1"
    shift
    local log="$logdir/$name.log" t0 rc
    echo
    echo "==== $name: $*"
    echo "disk: $(df -h --output=avail . 2>/dev/null | tail -n 1 | tr -d ' ') free"
    t0=$(date +%s.%N)
    set +e
    "$@" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    set -e
    local secs
    secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    if [ -n "${COUNT_CTEST:-}" ]; then
        count_ctest "$name" "$log" "$rc"
    elif [ "$rc" -eq 0 ]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        failures+=("$name (exit $rc)")
    fi
    timings+=("$(printf '%-14s %8s s  exit %d' "$name" "$secs" "$rc")")
    return 0
}

# Adds the counts of ctest's summary line ("97% tests passed, 1 tests failed out of 30") and
# names the failed tests; a run that ends without a summary counts as one failure.
count_ctest() {
    local name="$1" log="$2" rc="$3" line total bad
    line="$(grep -E '[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -n 1)"
    if [ -z "$line" ]; then
        failed=$((failed + 1))
        failures+=("$name (exit $rc, no ctest summary)")
        return
    fi
    bad="$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/' <<<"$line")"
    total="$(sed -E 's/.* failed out of ([0-9]+).*/\1/' <<<"$line")"
    passed=$((passed + total - bad))
    failed=$((failed + bad))
    if [ "$bad" -gt 0 ]; then
        while read -r t; do failures+=("$name: $t"); done \
            < <(sed -n '/The following tests FAILED/,$p' "$log" | grep -E '^\s+[0-9]+ - ' \
                | sed -E 's/^\s+[0-9]+ - //')
    fi
}

# ---- 2-3. Release build and ctest ----
step build make build JOBS="$jobs"
if [ -x build/onyx ]; then
    COUNT_CTEST=1 step ctest bash -c "cd build && ctest --output-on-failure -j $jobs"
else
    failed=$((failed + 1))
    failures+=("ctest (not run: the Release build failed)")
fi

# ---- 3a. the Python package: pip install into a fresh venv, pytest (scripts/test_python.sh)
if [ -x build/onyx ]; then
    step python scripts/test_python.sh
fi

# ---- 3a2. the WebAssembly build (Emscripten) and its Node.js tests (scripts/test_wasm.sh)
step wasm scripts/test_wasm.sh
prune build-wasm

# ---- 3b. the unit tests and conformance suites again on each lower instruction set this CPU
# has (ONYX_ISA forces the CPU dispatch table; the kernel unit tests also force every ISA in
# turn themselves). The avx512 path is the default run above on AVX-512 machines.
if [ -x build/onyx ]; then
    best=$(build/onyx info --cpu 2>/dev/null | sed -n 's/.*best on this CPU: \([a-z0-9]*\).*/\1/p')
    case "$best" in avx512) lower="avx2 generic" ;; avx2 | neon) lower="generic" ;; *) lower="" ;; esac
    echo "ISA paths: default ${best:-unknown}; forced: ${lower:-none}"
    for isa in $lower; do
        COUNT_CTEST=1 step "ctest-isa-$isa" bash -c \
            "cd build && ONYX_ISA=$isa ctest --output-on-failure -j $jobs -R '^(unit|conformance)\\.'"
    done
fi

# ---- 3c. ARM64: the cross build (`make aarch64` -> build-aarch64/) and, under qemu-user, its unit
# tests and the whole node suite (scripts/test_aarch64.sh node; on an ARM64 host the steps above
# already ran natively)
if [ "$(uname -m)" = x86_64 ]; then
    onyx_install_deps aarch64
    step aarch64-build make aarch64 JOBS="$jobs"
    if [ -x build-aarch64/onyx ]; then
        COUNT_CTEST=1 step aarch64-unit bash -c \
            "cd build-aarch64 && ctest --output-on-failure -j $jobs -R '^unit\\.' --timeout 1800"
        # (qemu runs the kernel tests 10-50x slower: test_gemm and test_nchwc_conv each ran past
        # 10 minutes on a busy 2-core machine; the timeout is there to catch hangs)
        step aarch64-node scripts/test_aarch64.sh node -j "$jobs"
    fi
    prune build-aarch64
fi

# ---- 4-6. ASan/UBSan ----
# Allocations over 4 GB fail (return NULL) instead of aborting: a hostile model may ask for any
# size, and the runtime must turn the failure into an error.
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1:max_allocation_size_mb=4096${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
# the Release build's steps are done: its folder (and the test outputs in it) can go
prune build
step asan-build make asan JOBS="$jobs"
if [ -x build-asan/onyx ]; then
    COUNT_CTEST=1 step asan-unit bash -c "cd build-asan && ctest --output-on-failure -j $jobs -R '^((unit|data)\\.|ort_abi\\.c_api$)'"
    # onyx serve's REST/gRPC tests (malformed requests, unload and SIGTERM under traffic) under
    # the sanitizers; the RSS and throughput figures mean nothing there (ASan's quarantine holds
    # freed memory), LeakSanitizer checks leaks at the server's exit instead
    if [ -x build-asan/onyx_loadgen ]; then
        step asan-serve env ONYX_BUILD=build-asan /usr/bin/python3 -m pytest -q -p no:cacheprovider \
            tests/serve -k "not rss_and_fds and not raises_throughput"
    fi
    if [ -d "$tests/light" ]; then
        # Debug + ASan runs ~100x slower than Release: VGG-19 alone takes minutes.
        step asan-light build-asan/onyx test "$tests/light" -j "$jobs" --timeout 1200
    fi
    # every conformance suite under the sanitizers, each test run from 4 threads at once
    for suite in node simple pytorch-converted pytorch-operator; do
        if [ -d "$tests/$suite" ]; then
            step "asan-$suite" build-asan/onyx test "$tests/$suite" -j "$jobs" --timeout 1200 --concurrent 4
        fi
    done
    if [ -d /usr/share/libonnx-testdata/data/node ]; then
        step asan-debian-node build-asan/onyx test /usr/share/libonnx-testdata/data/node -j "$jobs" \
            --timeout 1200 --exclude-file tests/debian_exclude.txt
    fi
else
    failed=$((failed + 1))
    failures+=("asan tests (not run: the ASan build failed)")
fi

# ---- 7. fuzzing, with the ASan build's libFuzzer target (`make asan` configures ONYX_FUZZ:
# one sanitizer build instead of two) ----
step fuzz env FUZZ_BUILD=build-asan scripts/fuzz.sh "$fuzz_seconds"

# ---- 8. ThreadSanitizer: one session run from several threads, runs cancelled from another
# thread, and the thread pool's job hand-off with nested jobs and pools side by side
# (tests/unit/test_concurrency.c, test_cancel.c, test_threadpool.c) ----
prune build-asan
step tsan-build make tsan JOBS="$jobs"
if [ -x build-tsan/tests/test_concurrency ] && [ -x build-tsan/tests/test_cancel ] &&
    [ -x build-tsan/tests/test_threadpool ]; then
    TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1${TSAN_OPTIONS:+:$TSAN_OPTIONS}" \
        step tsan bash -c "build-tsan/tests/test_concurrency && build-tsan/tests/test_cancel && build-tsan/tests/test_threadpool"
else
    failed=$((failed + 1))
    failures+=("tsan (not run: the ThreadSanitizer build failed)")
fi

prune build-tsan

echo
echo "==== timings"
printf '  %s\n' "${timings[@]}"
if [ ${#failures[@]} -gt 0 ]; then
    echo "==== failed"
    printf '  %s\n' "${failures[@]}"
fi
echo "logs: $logdir/"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
