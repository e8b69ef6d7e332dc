#!/usr/bin/env bash
# The layering rule of docs/architecture.md, checked on the sources: data
# flows bytes -> model -> graph -> optimised graph -> plan -> kernels, and a
# lower layer never includes a higher one. Each folder may include only the
# folders listed for it (and system headers, include/onyx*.h); every
# violation is printed as FILE:LINE: the include, and the script fails.
#
#   core/       core
#   format/     core format
#   ir/         core format ir                       (shape inference, op schemas)
#   optimizer/  core format ir optimizer             (never session/ or providers/)
#   providers/  core format ir providers             (never session/ or optimizer/)
# and: providers/provider.h and providers/kernel_ctx.h (the provider
# interface) never include the CPU provider's headers (providers/cpu/), and
# the session reaches no provider's internals (providers/cpu/, cuda/...):
# only the interface and the custom-operator provider it builds from the
# caller's operators (minimal_omitted.c, the minimal build's stand-ins for
# CPU parts it leaves out, is the one exception).
# Usage: check_layers.sh [SOURCE_ROOT]   (default: the repository of this script)
set -u
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root/src" || { echo "check_layers: no src/ under $root"; exit 2; }

fail=0
# check FOLDER_OR_FILE ALLOWED_REGEX WHY
check() {
    local where=$1 allowed=$2 why=$3 hits
    hits=$(grep -HrnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$where" --include='*.c' --include='*.h' \
               --include='*.cu' 2>/dev/null |
           grep -vE "#[[:space:]]*include[[:space:]]*\"($allowed)" || true)
    if [ -n "$hits" ]; then
        echo "layering: $why:"
        echo "$hits" | sed 's/^/  src\//'
        fail=1
    fi
}

# a relative include ("../session/x.h") would hide a dependency from the rules below
rel=$(grep -rnE '#[[:space:]]*include[[:space:]]*"\.\./' . 2>/dev/null || true)
if [ -n "$rel" ]; then
    echo "layering: relative includes (name the folder from src/ instead):"
    echo "$rel" | sed 's/^\.\//  src\//'
    fail=1
fi

same='[a-z0-9_]+\.h"'                  # a header beside the file
pub='onyx[a-z_]*\.h"'                  # include/onyx.h, include/onyx_provider.h
check core      "$pub|$same|core/" "core/ includes only core/"
check format    "$pub|$same|core/|format/" "format/ includes only core/ and format/"
check ir        "$pub|$same|core/|format/|ir/" "ir/ includes only core/, format/ and ir/"
check optimizer "$pub|$same|core/|format/|ir/|optimizer/" \
    "optimizer/ includes only core/, format/, ir/ and optimizer/ (never session/ or providers/)"
check providers "$pub|$same|core/|format/|ir/|providers/" \
    "providers/ never includes session/, optimizer/ or the tools (kernels reach the session through their context)"
for f in providers/provider.h providers/kernel_ctx.h; do
    [ -f "$f" ] || { echo "layering: $f is missing"; fail=1; continue; }
    check "$f" "$pub|core/|format/|ir/|providers/(provider|kernel_ctx)\\.h" \
        "$f (the provider interface) never includes the CPU provider's headers"
done

for f in session/*.c session/*.h; do
    [ "$f" = session/minimal_omitted.c ] && continue
    check "$f" "$pub|$same|core/|format/|ir/|optimizer/|session/|providers/[a-z_]+\.h|providers/custom/" \
        "$f: the session reaches providers through the interface only (never providers/cpu/ or another's internals)"
done

if [ $fail = 0 ]; then
    echo "layering: ok (core < format < ir < optimizer; providers below the session; provider.h free of the CPU's headers; the session through the interface only)"
fi
exit $fail
