#!/usr/bin/env bash
# The Python package's tests (python/): install what they need, `pip install ./python` into a
# fresh virtual environment made from Debian's /usr/bin/python3 (--system-site-packages, so
# numpy, pytest, torch and Dask come from Debian), then pytest python/tests from outside the
# source tree. ONYX_BUILD_DIR (default build/, when it has libonyx.a and libonyx_cli.a) lets the
# package link the Release build instead of building libonyx again.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
# shellcheck source=scripts/deps.sh
. scripts/deps.sh
onyx_install_deps python

work="$root/build-python"
rm -rf "$work/venv"
mkdir -p "$work"
/usr/bin/python3 -m venv --system-site-packages "$work/venv"
if [ -z "${ONYX_BUILD_DIR:-}" ] && [ -f build/libonyx.a ] && [ -f build/libonyx_cli.a ]; then
    export ONYX_BUILD_DIR="$root/build"
fi
"$work/venv/bin/pip" install --no-input "$root/python"
ext="$(ls "$work"/venv/lib/python3*/site-packages/onyx/_onyx*.so)"
echo "shared libraries of $ext:"
ldd "$ext"
cd "$work"  # not python/: its onyx/ folder has no extension and must not shadow the installed one
"$work/venv/bin/python" -m pytest -q -p no:cacheprovider "$root/python/tests"
