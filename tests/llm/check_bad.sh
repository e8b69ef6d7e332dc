#!/bin/sh
# Bad inputs to the language-model operators (tests/llm/make_llm_op_tests.py writes
# CASES/bad/<case>/ with error.txt): `onyx run` must exit with status 1 (an error, not a
# crash) and print an error containing the expected text.
#   tests/llm/check_bad.sh ONYX CASES_DIR
onyx=$1 dir=$2/bad
pass=0 fail=0
for c in "$dir"/*/; do
    name=$(basename "$c")
    want=$(cat "$c/error.txt")
    out=$("$onyx" run "$c/model.onnx" --inputs "$c/test_data_set_0" 2>&1)
    rc=$?
    if [ "$rc" -eq 1 ] && printf '%s' "$out" | grep -qF -- "$want"; then
        pass=$((pass + 1)); echo "PASS $name"
    else
        fail=$((fail + 1)); echo "FAIL $name (exit $rc, expected an error with '$want'): $out"
    fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
