"""One session run from 8 Python threads at once gives what sequential runs give;
the GIL is released while onyx computes."""
import threading
import time

import numpy as np

import onyx as ort


def test_eight_threads_match_sequential(models):
    sess = ort.InferenceSession(models["digits"])
    name = sess.get_inputs()[0].name
    rng = np.random.default_rng(3)
    batches = [rng.uniform(0, 16, (int(rng.integers(1, 40)), 64)).astype(np.float32) for _ in range(64)]
    expected = [sess.run(None, {name: b}) for b in batches]
    results = [None] * len(batches)
    barrier = threading.Barrier(8)

    def worker(k):
        barrier.wait()
        for _ in range(3):
            for i in range(k, len(batches), 8):
                results[i] = sess.run(None, {name: batches[i]})

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for got, want in zip(results, expected):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and np.array_equal(g, w)


def test_gil_released_during_run(models):
    """While one thread runs a long model, another thread keeps executing Python."""
    sess = ort.InferenceSession(models["loop"])
    ro = ort.RunOptions()
    t = threading.Thread(target=lambda: _swallow(sess.run, None, {"v0": np.zeros(1, np.float32)}, ro))
    t.start()
    ticks, end = 0, time.monotonic() + 0.3
    while time.monotonic() < end:
        ticks += 1
    ro.terminate = True
    t.join(30)
    assert ticks > 10000  # the main thread was not blocked by the run


def _swallow(f, *a):
    try:
        f(*a)
    except Exception:  # noqa: BLE001 - terminated on purpose
        pass
