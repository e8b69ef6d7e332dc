#!/usr/bin/python3
"""`onyx generate` against a reference loop driving ONNX Runtime (tests/llm/ort_generate.js)
on the same file: the greedy ids must agree up to the first step where ONNX Runtime's two
best logits are within 1e-3 of each other (a tie either runtime may break either way).

    /usr/bin/python3 tests/llm/check_generate.py ONYX MODEL IDS [STEPS]   (NODE_PATH set)
"""
import json
import os
import subprocess
import sys


def main():
    onyx, model, ids = sys.argv[1:4]
    steps = sys.argv[4] if len(sys.argv) > 4 else "32"
    here = os.path.dirname(os.path.abspath(__file__))
    ref = json.loads(subprocess.run(["node", os.path.join(here, "ort_generate.js"), model, "--input-ids", ids,
                                     "--max-new-tokens", steps], check=True, capture_output=True,
                                    text=True).stdout.strip().splitlines()[-1])
    out = subprocess.run([onyx, "generate", model, "--input-ids", ids, "--max-new-tokens", steps, "--greedy"],
                         check=True, capture_output=True, text=True).stdout
    line = next(l for l in out.splitlines() if l.startswith("ids:"))
    got = [int(x) for x in line.split()[1:]]
    n = len(ref["ids"])
    for i, m in enumerate(ref["margins"]):
        if m < 1e-3:
            n = i
            print(f"ONNX Runtime's two best logits tie within 1e-3 at step {i}: comparing {n} steps")
            break
    print(f"onyx: {got[:n]}\nORT:  {ref['ids'][:n]}")
    print(out.strip().splitlines()[-1])
    if got[:n] != ref["ids"][:n] or len(got) != len(ref["ids"]):
        print("FAIL: the greedy ids differ")
        return 1
    print(f"PASS: {n} greedy steps agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
