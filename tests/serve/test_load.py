"""Load tests of onyx serve on loopback, bounded in count and time: graceful
SIGTERM under traffic, nothing leaking over 20,000 requests, and dynamic
batching raising throughput (the load generator is tests/serve/loadgen.c)."""
import json
import os
import subprocess
import threading
import time

import numpy as np
import requests

from conftest import LOADGEN, Server, make_repo
from test_rest import binary_body, infer, split_binary


def loadgen(server, model, shape, concurrency, requests_n, duration=60):
    out = subprocess.run([LOADGEN, "--port", str(server.http), "--model", model,
                          "--input", "input", "--shape", ",".join(map(str, shape)),
                          "--concurrency", str(concurrency), "--requests", str(requests_n),
                          "--duration", str(duration)], capture_output=True, text=True, timeout=duration + 30)
    result = json.loads(out.stdout)
    assert out.returncode == 0 and result["errors"] == 0, out.stdout + out.stderr
    return result


def rss_kb(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def open_fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def test_rss_and_fds_flat_over_20000_requests(server):
    loadgen(server, "mlp", [1, 784], 8, 5000)
    time.sleep(0.3)   # connection threads of the finished clients exit
    rss5, fds5 = rss_kb(server.proc.pid), open_fds(server.proc.pid)
    loadgen(server, "mlp", [1, 784], 8, 15000)
    time.sleep(0.3)
    rss20, fds20 = rss_kb(server.proc.pid), open_fds(server.proc.pid)
    print(f"RSS {rss5} -> {rss20} kB, fds {fds5} -> {fds20}")
    assert rss20 <= rss5 * 1.05, f"RSS grew from {rss5} kB at 5,000 requests to {rss20} kB at 20,000"
    assert fds20 <= fds5 * 1.05, f"open fds grew from {fds5} to {fds20}"


def test_dynamic_batching_raises_throughput(server):
    """32 clients on the same 25 MB MLP, with and without dynamic batching."""
    loadgen(server, "wide", [1, 1024], 32, 200)          # warm-up
    off = loadgen(server, "wide_plain", [1, 1024], 32, 100000, duration=3)
    on = loadgen(server, "wide", [1, 1024], 32, 100000, duration=3)
    ratio = on["throughput_rps"] / off["throughput_rps"]
    print(f"batching off {off['throughput_rps']:.0f} req/s, on {on['throughput_rps']:.0f} req/s: {ratio:.2f}x;"
          f" p99 {off['p99_us']:.0f} -> {on['p99_us']:.0f} us")
    assert ratio >= 1.5, f"dynamic batching gave only {ratio:.2f}x the throughput"


def test_sigterm_during_traffic_loses_nothing(tmp_path, models):
    """SIGTERM while 16 clients send: every request gets its right answer or a
    clear 503 / refused connection, and the server exits 0 in time."""
    repo = make_repo(tmp_path / "repo", models)
    log = str(tmp_path / "serve.log")
    server = Server(repo, "--threads", "1", "--shutdown-timeout-ms", "10000", log_path=log)
    rng = np.random.default_rng(5)
    xs = [rng.standard_normal((1, 784)).astype(np.float32) for _ in range(16)]
    body = [binary_body([("input", x, "FP32")]) for x in xs]
    expected = [split_binary(infer(server, "mlp", b, headers={"Inference-Header-Content-Length": str(h)}))["logits"]
                for b, h in body]
    outcomes, wrong, lock = [], [], threading.Lock()
    started = threading.Barrier(17)

    def client(k):
        b, h = body[k]
        with requests.Session() as s:
            started.wait()
            while True:
                try:
                    r = s.post(server.url + "/v2/models/mlp/infer", data=b,
                               headers={"Inference-Header-Content-Length": str(h)}, timeout=20)
                except requests.ConnectionError:
                    with lock:
                        outcomes.append("refused")
                    return
                with lock:
                    outcomes.append(r.status_code)
                    if r.status_code == 200 and not np.allclose(split_binary(r)["logits"], expected[k],
                                                                rtol=1e-5, atol=1e-6):
                        wrong.append(k)
                if r.status_code != 200:
                    return

    threads = [threading.Thread(target=client, args=(k,)) for k in range(16)]
    for t in threads:
        t.start()
    started.wait()
    time.sleep(0.5)
    t0 = time.time()
    rc = server.stop(timeout=20)
    for t in threads:
        t.join(timeout=20)
    assert rc == 0 and time.time() - t0 < 10
    assert not wrong
    assert set(outcomes) <= {200, 503, "refused"}, set(outcomes)
    assert outcomes.count(200) >= 16   # every client was served before the signal
    text = open(log).read()
    assert '"event":"shutdown_complete"' in text and "deadline_exceeded" not in text
