#!/bin/sh
# libonnxruntime.so.1 exports OrtGetApiBase under ONNX Runtime 1.30's symbol
# version (programs linked against ORT 1.30 record OrtGetApiBase@VERS_1.30.0)
# as the default version, the CPU provider entry beside it, and nothing else.
#   check_symbols.sh LIBRARY
set -eu
lib="$1"
syms=$(nm -D --defined-only --with-symbol-versions "$lib" | awk '$2 ~ /^[TDBR]$/ {print $3}')
echo "$syms"
echo "$syms" | grep -qx 'OrtGetApiBase@@VERS_1.30.0' || { echo "missing OrtGetApiBase@@VERS_1.30.0"; exit 1; }
echo "$syms" | grep -qx 'OrtSessionOptionsAppendExecutionProvider_CPU@@VERS_1.30.0' ||
    { echo "missing OrtSessionOptionsAppendExecutionProvider_CPU@@VERS_1.30.0"; exit 1; }
n=$(echo "$syms" | grep -c .)
[ "$n" -eq 2 ] || { echo "expected 2 exported functions, found $n"; exit 1; }
soname=$(readelf -d "$lib" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[ "$soname" = "libonnxruntime.so.1" ] || { echo "soname is '$soname'"; exit 1; }
echo "symbols ok"
