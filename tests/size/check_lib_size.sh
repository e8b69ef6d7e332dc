#!/usr/bin/env bash
# The full x86-64 library must stay small (issue 16: <= 2.5 MB stripped). Strips a copy of
# BUILD/libonyx.so and fails, naming the figure and the biggest functions, when it is over LIMIT
# bytes. Only a Release build's size means anything: the test is registered for those.
set -euo pipefail
build="$1" limit="$2"
lib="$(readlink -f "$build/libonyx.so")"
tmp="$(mktemp)"
trap 'rm -f "$tmp"' EXIT
strip -o "$tmp" "$lib"
size=$(stat -c %s "$tmp")
echo "stripped libonyx.so: $size bytes (limit $limit)"
if [ "$size" -gt "$limit" ]; then
    echo "FAIL: the library grew past the limit; biggest functions:"
    nm -S --size-sort -t d "$lib" | tail -n 15
    exit 1
fi
