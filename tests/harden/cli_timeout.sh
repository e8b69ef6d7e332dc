#!/usr/bin/env bash
# `onyx run --timeout 2` on a never-ending Loop (tests/data/harden/loop_forever.onnx) must exit
# with status 1 and a 'terminated ... timeout' message after about 2 s (1.9 to 4 s here, for
# loaded CI machines and sanitizer builds).
set -u
onyx="$1"
t0=$(date +%s.%N)
out="$("$onyx" run tests/data/harden/loop_forever.onnx --timeout 2 2>&1)"
rc=$?
secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
echo "$out"
echo "exit $rc after $secs s"
[ "$rc" -eq 1 ] || { echo "FAIL: expected exit status 1"; exit 1; }
grep -q "the run was terminated: it exceeded its timeout of 2000 ms" <<<"$out" || { echo "FAIL: no clear message"; exit 1; }
awk -v s="$secs" 'BEGIN { exit !(s >= 1.9 && s < 4.0) }' || { echo "FAIL: took $secs s"; exit 1; }
echo PASS
