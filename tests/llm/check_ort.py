#!/usr/bin/python3
"""Run the operator tests of make_llm_op_tests.py through ONNX Runtime 1.30 and compare
its outputs with the numpy references (the ones `onyx test` checks onyx against).

    /usr/bin/python3 tests/llm/check_ort.py CASES_DIR [ORT_RUN_JS]

CASES_DIR holds exact/ and int8/ (accuracy_level 4: ONNX Runtime quantises A with its own
rounding, so those compare with a tolerance of 1% of the output's largest value).
ORT_RUN_JS defaults to ../shared/bench/ort_run.js (onnxruntime-node, see its README).
Prints one line per case and a closing "N passed, N failed" line; exits 1 on a failure.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
from onnx import TensorProto, numpy_helper


def load_pb(path):
    t = TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def run_case(ort_js, case, out_dir):
    data = os.path.join(case, "test_data_set_0")
    r = subprocess.run(["node", ort_js, os.path.join(case, "model.onnx"), "--inputs", data, "--warmup", "0",
                        "--runs", "1", "--threads", "1", "--dump", out_dir],
                       capture_output=True, text=True, timeout=120)
    if r.returncode:
        return f"ONNX Runtime failed: {(r.stderr or r.stdout).strip().splitlines()[-1:]}"
    meta = json.load(open(os.path.join(out_dir, "outputs.json")))
    return meta


def main():
    cases_dir = sys.argv[1]
    ort_js = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), "../../../shared/bench/ort_run.js")
    passed = failed = 0
    for sub, rel in (("exact", None), ("int8", 0.01)):
        root = os.path.join(cases_dir, sub)
        for name in sorted(os.listdir(root)):
            case = os.path.join(root, name)
            with tempfile.TemporaryDirectory() as tmp:
                meta = run_case(ort_js, case, tmp)
                problems = []
                if isinstance(meta, str):
                    problems.append(meta)
                else:
                    for k, m in enumerate(meta):
                        exp = load_pb(os.path.join(case, "test_data_set_0", f"output_{k}.pb"))
                        got = np.fromfile(os.path.join(tmp, os.path.basename(m["file"])), dtype=np.float32)
                        if got.size != exp.size or list(m["shape"]) != list(exp.shape):
                            problems.append(f"{m['name']}: shape {m['shape']} vs expected {list(exp.shape)}")
                            continue
                        got = got.reshape(exp.shape)
                        err = np.abs(got.astype(np.float64) - exp).max() if exp.size else 0.0
                        scale = np.abs(exp).max() if exp.size else 0.0
                        tol = rel * scale if rel else 1e-4 + 1e-3 * scale
                        if err > tol:
                            problems.append(f"{m['name']}: max |ORT - numpy| = {err:.3g} > {tol:.3g}")
            if problems:
                failed += 1
                print(f"FAIL {sub}/{name}: {'; '.join(problems)}")
            else:
                passed += 1
                print(f"PASS {sub}/{name}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
