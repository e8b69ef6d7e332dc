"""Fixtures of onyx serve's tests: a model repository built at test time, a
server on 127.0.0.1 (loopback only) with free ports, and gRPC stubs generated
from grpc_service.proto. ONYX_BUILD names the build folder (default build)."""
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

import pytest
import requests

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.abspath(os.environ.get("ONYX_BUILD", os.path.join(ROOT, "build")))
ONYX = os.path.join(BUILD, "onyx")
LOADGEN = os.path.join(BUILD, "onyx_loadgen")
BENCH_MLP = "/var/tmp/onnx-bench/public/mlp.onnx"
HOST = "127.0.0.1"  # the tests never listen or connect anywhere else


def free_port():
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def write_model(repo, name, onnx_path, config=None, version=1):
    d = os.path.join(repo, name, str(version))
    os.makedirs(d, exist_ok=True)
    shutil.copyfile(onnx_path, os.path.join(d, "model.onnx"))
    if config is not None:
        import json
        with open(os.path.join(repo, name, "config.json"), "w") as f:
            json.dump(config, f)


def free_port_on(host):
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


class Server:
    """wait: the health endpoint that must answer 200 before the tests start
    ("live" for a server expected not to become ready)."""
    def __init__(self, repo, *extra, log_path=None, host=HOST, wait="ready"):
        self.http, self.grpc, self.metrics = free_port_on(host), free_port_on(host), free_port_on(host)
        self.url_host = f"[{host}]" if ":" in host else host
        self.url = f"http://{self.url_host}:{self.http}"
        self.log_path = log_path
        self.log = open(log_path, "w") if log_path else subprocess.DEVNULL
        self.proc = subprocess.Popen(
            [ONYX, "serve", "--model-repository", repo, "--host", host, "--http-port", str(self.http),
             "--grpc-port", str(self.grpc), "--metrics-port", str(self.metrics), "--log-format", "json", *extra],
            stdout=self.log, stderr=self.log)
        deadline = time.time() + 60
        while time.time() < deadline:
            assert self.proc.poll() is None, f"onyx serve exited with {self.proc.returncode}"
            try:
                if requests.get(self.url + f"/v2/health/{wait}", timeout=1).status_code == 200:
                    return
            except requests.ConnectionError:
                pass
            time.sleep(0.05)
        raise AssertionError("onyx serve did not become ready in 60 s")

    def stop(self, timeout=30):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        rc = self.proc.wait(timeout=timeout)
        if self.log is not subprocess.DEVNULL:
            self.log.close()
        return rc


@pytest.fixture(scope="session")
def models(tmp_path_factory):
    out = tmp_path_factory.mktemp("models")
    subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "tests/serve/make_models.py"), str(out)], check=True)
    mlp = BENCH_MLP if os.path.exists(BENCH_MLP) else str(out / "mlp.onnx")
    return {"digits": os.path.join(ROOT, "models/digits.onnx"), "mlp": mlp, "wide": str(out / "wide.onnx"),
            "echo": str(out / "echo.onnx"), "strings": str(out / "strings.onnx")}


def make_repo(root, models):
    repo = str(root)
    write_model(repo, "digits", models["digits"],
                {"max_batch_size": 32, "dynamic_batching": {"preferred_batch_size": [8], "max_queue_delay_microseconds": 2000}})
    write_model(repo, "mlp", models["mlp"],
                {"max_batch_size": 64, "dynamic_batching": {"max_queue_delay_microseconds": 1000}})
    write_model(repo, "mlp_plain", models["mlp"])
    write_model(repo, "wide", models["wide"],
                {"max_batch_size": 32, "dynamic_batching": {"max_queue_delay_microseconds": 2000}})
    write_model(repo, "wide_plain", models["wide"])
    write_model(repo, "echo", models["echo"],
                {"max_batch_size": 16, "dynamic_batching": {"max_queue_delay_microseconds": 20000}})
    write_model(repo, "echo_queue", models["echo"],
                {"max_batch_size": 16, "max_queue_size": 2,
                 "dynamic_batching": {"max_queue_delay_microseconds": 300000}})
    write_model(repo, "echo_timeout", models["echo"],
                {"max_batch_size": 16, "request_timeout_ms": 50,   # a long delay: robust on a loaded machine
                 "dynamic_batching": {"max_queue_delay_microseconds": 1000000}})
    write_model(repo, "echo_two", models["echo"],
                {"max_batch_size": 16, "instance_count": 2,
                 "dynamic_batching": {"max_queue_delay_microseconds": 300000}})
    # no delay: calls that arrive together on one gRPC connection batch on its thread
    write_model(repo, "echo_now", models["echo"],
                {"max_batch_size": 16, "dynamic_batching": {"max_queue_delay_microseconds": 0}})
    write_model(repo, "strings", models["strings"],
                {"max_batch_size": 8, "dynamic_batching": {"max_queue_delay_microseconds": 20000}})
    # two versions: the newest serves by default, both by number
    write_model(repo, "versioned", models["echo"], {"version_policy": "all"}, version=1)
    write_model(repo, "versioned", models["echo"], None, version=3)
    return repo


def add_bad_config(repo, models):
    """A model folder whose config.json does not parse: loading it fails,
    and while that failure stands the server is not ready."""
    write_model(repo, "bad_config", models["echo"], {"max_batch_size": "x"})


@pytest.fixture(scope="session")
def server(tmp_path_factory, models):
    repo = make_repo(tmp_path_factory.mktemp("repo"), models)
    log = str(tmp_path_factory.mktemp("log") / "serve.log")
    s = Server(repo, "--threads", "1", "--max-request-bytes", "2000000", log_path=log)
    s.repo = repo
    yield s
    assert s.stop() == 0


@pytest.fixture(scope="session")
def stubs(tmp_path_factory):
    out = tmp_path_factory.mktemp("stubs")
    from grpc_tools import protoc
    here = os.path.dirname(os.path.abspath(__file__))
    rc = protoc.main(["protoc", f"-I{here}", f"--python_out={out}", f"--grpc_python_out={out}",
                      os.path.join(here, "grpc_service.proto")])
    assert rc == 0, "grpc_tools.protoc failed on grpc_service.proto"
    sys.path.insert(0, str(out))
    import grpc_service_pb2
    import grpc_service_pb2_grpc
    return grpc_service_pb2, grpc_service_pb2_grpc
