#!/usr/bin/env bash
# `onyx optimize` saves optional and sequence types (optional(sequence(tensor)) recursed until the
# stack overflowed): the node tests with such values are saved, and the saved models pass the
# tests' data. Usage: optimize_nested_types.sh ONYX NODE_TESTS_DIR
set -u
onyx="$1" node="$2"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
tests="identity_opt if_opt loop16_seq_none optional_get_element_optional_sequence"
for t in $tests; do
    cp -r "$node/test_$t" "$dir/" && chmod -R u+w "$dir/test_$t" || exit 1
    "$onyx" optimize "$node/test_$t/model.onnx" "$dir/test_$t/model.onnx" || { echo "FAIL: optimize test_$t"; exit 1; }
done
"$onyx" test "$dir"
