"""python -m onyx runs the onyx command line (the same code as build/onyx)."""
import json
import os
import subprocess
import sys

import numpy as np


def onyx(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "onyx", *args], capture_output=True, text=True, cwd=cwd)


def test_version_and_help():
    r = onyx("--version")
    assert r.returncode == 0 and r.stdout.startswith("onyx ")
    r = onyx("help", "perf")
    assert r.returncode == 0 and "usage: onyx perf MODEL" in r.stdout
    r = onyx("frobnicate")
    assert r.returncode == 2 and "unknown command 'frobnicate'" in r.stderr


def test_info_run_perf_optimize(models, tmp_path):
    r = onyx("info", models["mlp"])
    assert r.returncode == 0 and "producer: onyx-py-tests" in r.stdout
    np.savez(tmp_path / "in.npz", x=np.ones((2, 8), np.float32))
    r = onyx("run", models["mlp"], "--inputs", str(tmp_path / "in.npz"), "--output", str(tmp_path / "out.npz"))
    assert r.returncode == 0, r.stderr
    assert np.load(tmp_path / "out.npz")["y"].shape == (2, 4)
    r = onyx("perf", models["mlp"], "-r", "3", "--dim", "batch=2")
    assert r.returncode == 0, r.stderr
    line = json.loads(r.stdout.strip().splitlines()[-1])
    assert line["median_ms"] >= 0 and "load_ms" in line
    r = onyx("optimize", models["mlp"], str(tmp_path / "o.onnx"))
    assert r.returncode == 0 and os.path.getsize(tmp_path / "o.onnx") > 0
    r = onyx("run", str(tmp_path / "missing.onnx"))
    assert r.returncode == 1 and "missing.onnx" in r.stderr


def test_test_command(tmp_path):
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    r = onyx("test", os.path.join(repo, "tests", "data", "unaligned"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "1 passed, 0 failed" in r.stdout
