"""Score a dataset in partitions on a Dask cluster with onyx.

Each worker process creates its session once (cached on the worker) with
intra_op_num_threads set to its share of the machine's cores, and scores the
partitions it is given; the results are gathered in order and compared with a
single-process run.

    python examples/dask_batch.py [--rows N] [--partitions P] [--model PATH]

Here the cluster is a distributed.LocalCluster of 2 worker processes. On a
multi-machine cluster the same code runs unchanged with the client pointed at
the scheduler instead of a LocalCluster:

    client = distributed.Client("tcp://scheduler-host:8786")

provided every worker machine has onyx installed (`pip install ./python`) and
can read the model path (or pass the model's bytes: InferenceSession accepts
them); set the threads to the cores of each worker (`dask worker --nthreads 1
--nworkers K` on a machine with C cores -> intra_op_num_threads = C // K).
"""
import argparse
import logging
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_MODEL = os.path.join(os.path.dirname(os.path.dirname(HERE)), "models", "digits.onnx")


def _session(model_path, threads):
    """This worker's session for the model, created on first use."""
    import onyx as ort
    from distributed import get_worker

    worker = get_worker()
    cache = getattr(worker, "_onyx_sessions", None)
    if cache is None:
        cache = worker._onyx_sessions = {}
    key = (model_path, threads)
    if key not in cache:
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        cache[key] = ort.InferenceSession(model_path, so, providers=["CPUExecutionProvider"])
    return cache[key]


def score_partition(model_path, threads, part):
    sess = _session(model_path, threads)
    name = sess.get_inputs()[0].name
    return sess.run(None, {name: part}), os.getpid()


def score_distributed(model_path, data, partitions, n_workers=2):
    """Scores on a LocalCluster; returns the outputs and the worker pids that did the work."""
    from distributed import Client, LocalCluster

    threads = max(1, (os.cpu_count() or 1) // n_workers)
    parts = np.array_split(data, partitions)
    with LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=logging.ERROR) as cluster, Client(cluster) as client:
        futures = client.map(score_partition, [model_path] * len(parts), [threads] * len(parts), parts, pure=False)
        results = client.gather(futures)
    outputs = [np.concatenate([r[0][k] for r in results]) for k in range(len(results[0][0]))]
    return outputs, sorted({r[1] for r in results})


def score_local(model_path, data):
    import onyx as ort
    sess = ort.InferenceSession(model_path, providers=["CPUExecutionProvider"])
    return sess.run(None, {sess.get_inputs()[0].name: data})


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=20000)
    ap.add_argument("--partitions", type=int, default=8)
    ap.add_argument("--model", default=DEFAULT_MODEL)
    args = ap.parse_args(argv)
    data = np.random.default_rng(0).uniform(0, 16, (args.rows, 64)).astype(np.float32)

    t0 = time.perf_counter()
    dist, pids = score_distributed(args.model, data, args.partitions)
    t1 = time.perf_counter()
    local = score_local(args.model, data)
    t2 = time.perf_counter()
    same = all(np.array_equal(a, b) for a, b in zip(dist, local))
    print(f"rows: {args.rows} in {args.partitions} partitions on 2 worker processes (pids {pids})")
    print(f"distributed: {t1 - t0:.2f} s including cluster start-up; single process: {t2 - t1:.3f} s")
    print(f"class counts: {np.bincount(dist[1], minlength=10).tolist()}")
    print(f"identical to the single-process run: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
