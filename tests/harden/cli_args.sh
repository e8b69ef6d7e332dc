#!/usr/bin/env bash
# The CLI never takes an option for a flag's value, and never writes over a file it reads
# (`onyx perf M -p --inputs x.npz` used to take "--inputs" as the profile path and x.npz as the
# result file, and overwrote x.npz). Each case: the exit status, a message, and the files the
# command reads left as they were. Usage: cli_args.sh ONYX (from the checkout's root).
set -u
onyx=$(readlink -f "$1")
src="$PWD/tests/data/harden"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cp "$src/conv_huge_strides.onnx" "$dir/m.onnx"
cp "$src/x_and_labels.npz" "$dir/x.npz"
cd "$dir" || exit 1
sums() { cksum m.onnx x.npz; }
before=$(sums)
failed=0

# expect STATUS REGEX ARGS...: run onyx ARGS, check the status, the output and the inputs.
expect() {
    local want=$1 regex=$2
    shift 2
    local out rc
    out=$("$onyx" "$@" 2>&1)
    rc=$?
    if [ "$rc" -ne "$want" ] || ! grep -Eq -- "$regex" <<<"$out" || [ "$(sums)" != "$before" ]; then
        echo "FAIL: onyx $* (exit $rc, want $want; inputs unchanged: $([ "$(sums)" = "$before" ] && echo yes || echo no))"
        echo "$out" | head -5
        failed=$((failed + 1))
        cp "$src/conv_huge_strides.onnx" m.onnx
        cp "$src/x_and_labels.npz" x.npz
    else
        echo "ok: onyx $*"
    fi
}

nv="needs a value, but the next argument '%s' is an option"
# an option where a value belongs
expect 2 "option -p $(printf "$nv" --inputs)" perf m.onnx -p --inputs x.npz -r 1 -w 0
expect 2 "option --profile $(printf "$nv" -r)" run m.onnx --profile -r --inputs x.npz
expect 2 "option --output $(printf "$nv" --inputs)" run m.onnx --output --inputs x.npz
expect 2 "option --filter $(printf "$nv" -v)" test . --filter -v
expect 2 "option --level $(printf "$nv" -x)" optimize m.onnx out.onnx --level -x 1
expect 2 "option --calibration $(printf "$nv" --mode)" quantize m.onnx q.onnx --calibration --mode static
# generate parses its session flags with the common parser: the same errors as run's
expect 2 "option -x $(printf "$nv" -o)" generate m.onnx --input-ids 1 -x -o all
expect 2 "bad optimization level 'fast' \\(disabled\\|basic\\|extended\\|all\\)" generate m.onnx --input-ids 1 -o fast
expect 2 "option -e $(printf "$nv" --greedy)" generate m.onnx --input-ids 1 -e --greedy
# a negative number is still a value (and refused as a number)
expect 2 "bad value '-1' for -x" run m.onnx -x -1
# a value that starts with '-' goes attached
expect 0 "output 0 'y'" run m.onnx --inputs x.npz --profile=-prof.json
[ -s ./-prof.json ] || { echo "FAIL: no profile written to -prof.json"; failed=$((failed + 1)); }

# an output path naming a file the command reads
expect 2 "the result file 'x.npz' is the --inputs file: refusing to overwrite it" \
    perf m.onnx x.npz --inputs x.npz -r 1 -w 0
expect 2 "the result file 'm.onnx' is the model" perf m.onnx m.onnx -r 1 -w 0
expect 2 "the --output file './x.npz' is an --input file" run m.onnx --input x=x.npz --output ./x.npz
expect 2 "the --profile file 'x.npz' is the --inputs file" run m.onnx --inputs x.npz -p x.npz
expect 2 "the --profile file 'm.onnx' is the model" info m.onnx -p m.onnx
expect 2 "the --profile file 'm.onnx' is the model" generate m.onnx --input-ids 1 -p m.onnx
expect 2 "OUT 'm.onnx' is the model" optimize m.onnx m.onnx
expect 2 "OUT 'x.npz' is a --calibration file" quantize m.onnx x.npz --mode static --calibration x.npz
# and the allowed case still works
expect 0 "\"median_ms\":" perf m.onnx result.json --inputs x.npz -r 1 -w 0
[ -s result.json ] || { echo "FAIL: no result file"; failed=$((failed + 1)); }

echo "$failed failed"
[ "$failed" -eq 0 ]
