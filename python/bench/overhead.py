"""Per-call cost of InferenceSession.run from Python against the same run
through the C API (run_overhead.c), and model latency from Python against
`onyx perf`.

    python bench/overhead.py [--build-dir BUILD] [--models DIR]

Compiles run_overhead.c against BUILD/libonyx.a (default: the repository's
build/), then alternates the C program and Python's timeit on the MLP
benchmark model (one intra-op thread, the same input values), and reports
medians and the difference in microseconds per call. With --perf, also times
the benchmark models from Python (median of runs) against `onyx perf`
alternately. Run it alone on the machine (flock /tmp/onyx-bench.lock ...).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import timeit

import numpy as np

import onyx as ort

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
LIBS = ["-lpcre2-8", "-lpng16", "-ljpeg", "-ltiff", "-lwebp", "-lopenjp2", "-lz", "-lpthread", "-lm"]


def build_c(build_dir):
    exe = os.path.join(tempfile.mkdtemp(), "run_overhead")
    subprocess.check_call(["cc", "-O2", "-I", os.path.join(REPO, "include"), os.path.join(HERE, "run_overhead.c"),
                           os.path.join(build_dir, "libonyx.a"), "-o", exe] + LIBS)
    return exe


def pattern(shape):
    n = int(np.prod(shape))
    return (((np.arange(n) * 37) % 101).astype(np.float32) / np.float32(101) - np.float32(0.5)).reshape(shape)


def python_side(model, shape, threads, calls, batches):
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    feed = {sess.get_inputs()[0].name: pattern(shape)}
    names = [sess.get_outputs()[0].name]
    run = sess.run
    for _ in range(calls):
        run(names, feed)
    per_call = sorted(t / calls * 1e6 for t in timeit.repeat(lambda: run(names, feed), number=calls, repeat=batches))
    return {"side": "python", "median_us": per_call[len(per_call) // 2], "min_us": per_call[0]}


def overhead(args):
    exe = build_c(args.build_dir)
    model = os.path.join(args.models, "mlp.onnx")
    shape = (1, 784)
    c, py = [], []
    for _ in range(args.rounds):
        out = subprocess.run([exe, model, "input", "logits", "1,784", "1", str(args.calls), str(args.batches)],
                             check=True, capture_output=True, text=True).stdout
        c.append(json.loads(out))
        py.append(python_side(model, shape, 1, args.calls, args.batches))
    cm = statistics.median(r["median_us"] for r in c)
    pm = statistics.median(r["median_us"] for r in py)
    cmin, pmin = min(r["min_us"] for r in c), min(r["min_us"] for r in py)
    print(f"MLP b1, 1 thread, {args.rounds} alternating rounds of {args.batches}x{args.calls} calls:")
    print(f"  C API   median {cm:.2f} us/call (min {cmin:.2f})")
    print(f"  Python  median {pm:.2f} us/call (min {pmin:.2f})")
    print(f"  overhead: {pm - cm:+.2f} us/call by medians, {pmin - cmin:+.2f} us by minimums")
    return pm - cm


def perf_compare(args):
    onyx_exe = os.path.join(args.build_dir, "onyx")
    cases = [("mlp", "b1"), ("squeezenet1_1", "b1"), ("mobilenet_v2", "b1"), ("resnet50", "b1"),
             ("bert_base", "b1s128"), ("gpt2_small", "b1s128")]
    for name, cfg in cases:
        if args.only and name not in args.only.split(","):
            continue
        model = os.path.join(args.models, name + ".onnx")
        inputs = os.path.join(args.models, f"{name}.{cfg}.npz")
        runs = 200 if name == "mlp" else 10
        c_med, p_med = [], []
        sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
        data = np.load(inputs)
        feed = {k: data[k] for k in data.files}
        for _ in range(2):
            sess.run(None, feed)
        for _ in range(args.rounds):
            out = subprocess.run([onyx_exe, "perf", model, "--inputs", inputs, "-r", str(runs)],
                                 check=True, capture_output=True, text=True).stdout
            c_med.append(json.loads(out.strip().splitlines()[-1])["median_ms"])
            times = []
            for _ in range(runs):
                t0 = time.perf_counter()
                sess.run(None, feed)
                times.append((time.perf_counter() - t0) * 1e3)
            p_med.append(statistics.median(times))
        c, p = statistics.median(c_med), statistics.median(p_med)
        print(f"  {name:14s} {cfg:7s} onyx perf {c:9.3f} ms   Python {p:9.3f} ms   ratio {p / c:.3f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", default=os.path.join(REPO, "build"))
    ap.add_argument("--models", default="/var/tmp/onnx-bench/public")
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--batches", type=int, default=15)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--perf", action="store_true", help="also compare the benchmark models with onyx perf")
    ap.add_argument("--only", default="", help="with --perf: these models only (comma-separated)")
    ap.add_argument("--no-overhead", action="store_true", help="skip the per-call comparison")
    args = ap.parse_args()
    if not args.no_overhead:
        overhead(args)
    if args.perf:
        print("benchmark models, default threads, medians of alternating rounds:")
        perf_compare(args)


if __name__ == "__main__":
    sys.exit(main())
