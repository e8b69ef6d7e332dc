#!/usr/bin/env bash
# The onyx demo on a fresh Debian 12 machine: installs the build tools and libraries when missing
# (scripts/deps.sh: apt-get, through sudo when not root), builds with `make` and classifies the
# held-out handwritten digits with the shipped model:
#
#   build/onyx_digits models/digits.onnx models/digits_test.bin
#
# The model and test set are committed; scripts/make_digits_model.py regenerates them.
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=scripts/deps.sh
. scripts/deps.sh
onyx_install_deps build

echo "demo: building (make)"
make
echo
build/onyx_digits models/digits.onnx models/digits_test.bin
