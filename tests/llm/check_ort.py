#!/usr/bin/python3
"""Run the operator tests of make_llm_op_tests.py through ONNX Runtime 1.30 and compare
its outputs with the numpy references (the ones `onyx test` checks onyx against).

    /usr/bin/python3 tests/llm/check_ort.py CASES_DIR [SHARED_BENCH_DIR]

CASES_DIR holds exact/ and int8/ (accuracy_level 4: ONNX Runtime quantises A with its own
rounding, so those compare with a tolerance of 1% of the output's largest value).
SHARED_BENCH_DIR (default ../shared/bench) provides lib/io.js; tests/llm/ort_cases.js runs every
case in one node process (onnxruntime-node found through NODE_PATH).
Prints one line per case and a closing "N passed, N failed" line; exits 1 on a failure.
"""
import json
import os
import subprocess
import sys
import shutil
import tempfile

import numpy as np
from onnx import TensorProto, numpy_helper


def load_pb(path):
    t = TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def run_all(bench_dir, cases, out_dir):
    """ONNX Runtime on every case in one node process (tests/llm/ort_cases.js)."""
    here = os.path.dirname(os.path.abspath(__file__))
    subprocess.run(["node", os.path.join(here, "ort_cases.js"), bench_dir, out_dir] + cases, check=True,
                   timeout=1200)


def case_outputs(out_dir):
    err = os.path.join(out_dir, "error.txt")
    if os.path.exists(err):
        return "ONNX Runtime failed: " + open(err).read().strip().splitlines()[-1]
    return json.load(open(os.path.join(out_dir, "outputs.json")))


def main():
    cases_dir = sys.argv[1]
    bench_dir = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), "../../../shared/bench")
    passed = failed = 0
    tmp = tempfile.mkdtemp(prefix="llm-ort-")
    # GroupQueryAttention with a head size that is not a multiple of 8: onyx runs it, ONNX Runtime's
    # kernel refuses it ("head_size must be a multiple of 8"), so there is nothing to compare
    all_cases = [(sub, rel, os.path.join(cases_dir, sub, name)) for sub, rel in (("exact", None), ("int8", 0.01))
                 for name in sorted(os.listdir(os.path.join(cases_dir, sub))) if not name.endswith("_head_tail")]
    run_all(bench_dir, [c for _, _, c in all_cases], tmp)
    for sub, rel, case in all_cases:
        name = os.path.basename(case)
        meta = case_outputs(os.path.join(tmp, name))
        problems = []
        if isinstance(meta, str):
            problems.append(meta)
        else:
            for k, m in enumerate(meta):
                exp = load_pb(os.path.join(case, "test_data_set_0", f"output_{k}.pb"))
                got = np.fromfile(os.path.join(tmp, name, os.path.basename(m["file"])), dtype=np.float32)
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
    shutil.rmtree(tmp, ignore_errors=True)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
