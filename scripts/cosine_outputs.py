#!/usr/bin/python3
"""Cosine similarity of every output between two dumps in ort_run.js's --dump layout
(DIR/outputs.json + raw files), for quantised vs float models:

    /usr/bin/python3 scripts/cosine_outputs.py REF_DIR TEST_DIR [--min 0.99]

Prints one line per output; exits 1 if any output's cosine is below --min or shapes differ."""
import argparse
import json
import os
import sys

import numpy as np

DT = {"float32": np.float32, "int64": np.int64, "int32": np.int32, "uint8": np.uint8, "int8": np.int8}


def load(d):
    with open(os.path.join(d, "outputs.json")) as f:
        return {e["name"]: np.fromfile(os.path.join(d, e["file"]), dtype=DT[e["dtype"]]).reshape(e["shape"])
                for e in json.load(f)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ref")
    ap.add_argument("test")
    ap.add_argument("--min", type=float, default=0.99)
    a = ap.parse_args()
    ref, test = load(a.ref), load(a.test)
    ok = True
    for name, r in ref.items():
        t = test.get(name)
        if t is None or t.shape != r.shape:
            print(f"{name}: missing or shape {None if t is None else t.shape} != {r.shape}")
            ok = False
            continue
        r64, t64 = r.astype(np.float64).ravel(), t.astype(np.float64).ravel()
        den = np.linalg.norm(r64) * np.linalg.norm(t64)
        cos = float(r64 @ t64 / den) if den > 0 else float(np.array_equal(r64, t64))
        good = cos >= a.min
        ok &= good
        print(f"{name}: cosine {cos:.6f} max|diff| {np.max(np.abs(r64 - t64)):.4g} {'ok' if good else 'BELOW ' + str(a.min)}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
