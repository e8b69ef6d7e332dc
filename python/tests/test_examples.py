"""The issue's end-to-end cases: ONNX Runtime's documented PyTorch flow with only the
import changed, and the Dask example against a single-process run."""
import importlib.util
import os
import subprocess
import sys

import numpy as np

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")


def load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(EXAMPLES, name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_pytorch_classifier_matches_torch(tmp_path):
    r = subprocess.run([sys.executable, os.path.join(EXAMPLES, "pytorch_classifier.py"), str(tmp_path / "c.onnx")],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "providers: ['CPUExecutionProvider']" in r.stdout
    assert "predictions equal to PyTorch's: 256/256" in r.stdout
    # onnxruntime's warning for the provider this build lacks
    assert "Specified provider 'CUDAExecutionProvider' is not in available provider names." \
           "Available providers: 'CPUExecutionProvider'" in r.stderr


def test_dask_batch_equals_single_process(models):
    dask_batch = load("dask_batch")
    data = np.random.default_rng(5).uniform(0, 16, (3000, 64)).astype(np.float32)
    dist, pids = dask_batch.score_distributed(models["digits"], data, partitions=6, n_workers=2)
    local = dask_batch.score_local(models["digits"], data)
    assert len(pids) == 2 and os.getpid() not in pids  # two worker processes did the work
    assert len(dist) == len(local)
    for a, b in zip(dist, local):
        assert a.dtype == b.dtype and np.array_equal(a, b)
