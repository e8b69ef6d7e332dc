"""KServe v2 REST tests of onyx serve, with python3-requests, written from
the protocol's specification (and Triton's binary-tensor, statistics and
repository extensions)."""
import gzip
import json
import os
import shutil
import struct
import threading
import time
import zlib
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import onnx
import requests
from onnx import numpy_helper

from conftest import ROOT, add_bad_config


def infer(server, model, body, version=None, **kw):
    path = f"/v2/models/{model}" + (f"/versions/{version}" if version else "") + "/infer"
    return requests.post(server.url + path, data=body if isinstance(body, (bytes, str)) else json.dumps(body), **kw)


def tensor(name, arr, datatype="FP32"):
    return {"name": name, "shape": list(arr.shape), "datatype": datatype, "data": arr.ravel().tolist()}


def binary_body(inputs, outputs=None, binary_output=True):
    """Triton's binary extension: JSON header then the raw tensors."""
    header = {"inputs": [{"name": n, "shape": list(a.shape), "datatype": dt,
                          "parameters": {"binary_data_size": a.nbytes}} for n, a, dt in inputs],
              "parameters": {"binary_data_output": binary_output}}
    if outputs:
        header["outputs"] = [{"name": o} for o in outputs]
    h = json.dumps(header).encode()
    return h + b"".join(a.tobytes() for _, a, _ in inputs), len(h)


def split_binary(resp):
    n = int(resp.headers["Inference-Header-Content-Length"])
    header, data = json.loads(resp.content[:n]), resp.content[n:]
    out, off = {}, 0
    for o in header["outputs"]:
        size = o["parameters"]["binary_data_size"]
        dt = {"FP32": np.float32, "INT64": np.int64}[o["datatype"]]
        out[o["name"]] = np.frombuffer(data[off:off + size], dtype=dt).reshape(o["shape"])
        off += size
    assert off == len(data)
    return out


def mlp_reference(path, x):
    """numpy forward pass of a Gemm/Relu MLP, read from the ONNX file."""
    m = onnx.load(path)
    w = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    v = {m.graph.input[0].name: x.astype(np.float64)}
    for n in m.graph.node:
        if n.op_type == "Gemm":
            b = w[n.input[1]].astype(np.float64)
            attrs = {a.name: a.i for a in n.attribute}
            b = b.T if attrs.get("transB", 0) else b
            v[n.output[0]] = v[n.input[0]] @ b + (w[n.input[2]] if len(n.input) > 2 else 0)
        elif n.op_type == "Relu":
            v[n.output[0]] = np.maximum(v[n.input[0]], 0)
        else:
            raise AssertionError(f"unexpected op {n.op_type} in the MLP")
    return v[m.graph.output[0].name]


def digits_test_set():
    data = open(os.path.join(ROOT, "models/digits_test.bin"), "rb").read()
    count = struct.unpack_from("<I", data)[0]
    rec = np.frombuffer(data[4:], dtype=np.uint8).reshape(count, 64 * 4 + 8)
    pixels = rec[:, :256].copy().view(np.float32).reshape(count, 64)
    labels = rec[:, 256:].copy().view(np.int64).reshape(count)
    return pixels, labels


# ---- server endpoints ----

def test_health_and_server_metadata(server):
    assert requests.get(server.url + "/v2/health/live").status_code == 200
    assert requests.get(server.url + "/v2/health/ready").status_code == 200
    meta = requests.get(server.url + "/v2").json()
    assert meta["name"] == "onyx" and "binary_tensor_data" in meta["extensions"]


def test_model_metadata_ready_config(server):
    meta = requests.get(server.url + "/v2/models/digits").json()
    assert meta["name"] == "digits" and meta["versions"] == ["1"]
    assert meta["inputs"] == [{"name": "image", "datatype": "FP32", "shape": [-1, 64]}]
    assert [o["name"] for o in meta["outputs"]] == ["probabilities", "label"]
    assert requests.get(server.url + "/v2/models/digits/ready").status_code == 200
    assert requests.get(server.url + "/v2/models/digits/versions/1/ready").status_code == 200
    cfg = requests.get(server.url + "/v2/models/digits/config").json()
    assert cfg["max_batch_size"] == 32 and cfg["dynamic_batching"]["preferred_batch_size"] == [8]


def test_versions(server):
    meta = requests.get(server.url + "/v2/models/versioned").json()
    assert sorted(meta["versions"]) == ["1", "3"]
    x = np.ones((1, 3), np.float32)
    r = infer(server, "versioned", {"inputs": [tensor("x", x)]})
    assert r.status_code == 200 and r.json()["model_version"] == "3"
    r = infer(server, "versioned", {"inputs": [tensor("x", x)]}, version=1)
    assert r.status_code == 200 and r.json()["model_version"] == "1"
    r = infer(server, "versioned", {"inputs": [tensor("x", x)]}, version=2)
    assert r.status_code == 404 and "version 2" in r.json()["error"]


# ---- inference ----

def test_digits_accuracy_json(server):
    """All 450 test digits through JSON tensors: 97.33% as with the C API."""
    pixels, labels = digits_test_set()
    correct = 0
    for i in range(0, len(labels), 30):
        r = infer(server, "digits", {"id": f"chunk{i}", "inputs": [tensor("image", pixels[i:i + 30])],
                                     "outputs": [{"name": "label"}]})
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["id"] == f"chunk{i}" and body["model_name"] == "digits"
        assert [o["name"] for o in body["outputs"]] == ["label"]
        correct += int((np.array(body["outputs"][0]["data"]) == labels[i:i + 30]).sum())
    assert correct == 438, f"{correct}/450 digits right (expected 438, 97.33%)"


def test_mlp_binary_matches_numpy(server, models):
    x = np.random.default_rng(0).standard_normal((5, 784)).astype(np.float32)
    body, hlen = binary_body([("input", x, "FP32")])
    r = infer(server, "mlp", body, headers={"Inference-Header-Content-Length": str(hlen)})
    assert r.status_code == 200, r.text
    assert r.headers["Content-Type"] == "application/octet-stream"
    out = split_binary(r)["logits"]
    np.testing.assert_allclose(out, mlp_reference(models["mlp"], x), rtol=1e-4, atol=1e-4)


def test_nested_json_data_and_binary_output_param(server):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    req = {"inputs": [{"name": "x", "shape": [2, 3], "datatype": "FP32", "data": x.tolist()}],
           "outputs": [{"name": "y", "parameters": {"binary_data": True}}]}
    r = infer(server, "echo", req)
    assert r.status_code == 200
    np.testing.assert_array_equal(split_binary(r)["y"], 2 * x)


def test_gzip_request_and_response(server):
    pixels, labels = digits_test_set()
    body = json.dumps({"inputs": [tensor("image", pixels[:32])]}).encode()
    r = infer(server, "digits", gzip.compress(body),
              headers={"Content-Encoding": "gzip", "Accept-Encoding": "gzip"})
    assert r.status_code == 200, r.text
    assert r.headers.get("Content-Encoding") == "gzip"   # requests inflates it for us
    assert (np.array(r.json()["outputs"][1]["data"]) == labels[:32]).mean() > 0.9
    r = infer(server, "digits", zlib.compress(body), headers={"Content-Encoding": "deflate",
                                                              "Accept-Encoding": "deflate"})
    assert r.status_code == 200 and r.headers.get("Content-Encoding") == "deflate"


# ---- errors: 400 naming the field, 404, 405, 413 ----

def error(r, status):
    assert r.status_code == status, (r.status_code, r.text)
    return r.json()["error"]


def test_unknown_model_and_version(server):
    x = np.zeros((1, 64), np.float32)
    assert "unknown model 'nope'" in error(infer(server, "nope", {"inputs": [tensor("image", x)]}), 404)
    assert "no loaded version 9" in error(infer(server, "digits", {"inputs": [tensor("image", x)]}, version=9), 404)
    assert "not a positive integer" in error(infer(server, "digits", {"inputs": [tensor("image", x)]}, version="x"), 404)
    assert error(requests.get(server.url + "/v2/models/nope"), 404)
    assert requests.get(server.url + "/v2/models/nope/ready").status_code == 400


def test_wrong_datatype(server):
    x = np.zeros((1, 64), np.float64)
    msg = error(infer(server, "digits", {"inputs": [tensor("image", x, "FP64")]}), 400)
    assert "input 'image'" in msg and "datatype FP64" in msg and "FP32" in msg
    msg = error(infer(server, "digits", {"inputs": [tensor("image", x, "FLOAT")]}), 400)
    assert "inputs[0].datatype" in msg


def test_wrong_shape(server):
    msg = error(infer(server, "digits", {"inputs": [tensor("image", np.zeros((1, 63), np.float32))]}), 400)
    assert "input 'image'" in msg and "[1,63]" in msg and "dimension 1" in msg
    msg = error(infer(server, "digits", {"inputs": [tensor("image", np.zeros((64,), np.float32))]}), 400)
    assert "rank 1" in msg
    msg = error(infer(server, "digits", {"inputs": [tensor("image", np.zeros((33, 64), np.float32))]}), 400)
    assert "batch size 33" in msg and "max_batch_size (32)" in msg
    req = {"inputs": [{"name": "image", "shape": [1, 64], "datatype": "FP32", "data": [0] * 63}]}
    assert "inputs[0].data: 63 elements, shape needs 64" in error(infer(server, "digits", req), 400)


def test_missing_and_unknown_input_output(server):
    x = np.zeros((1, 64), np.float32)
    assert "inputs: missing or not an array" in error(infer(server, "digits", {"outputs": []}), 400)
    msg = error(infer(server, "digits", {"inputs": [tensor("pixels", x)]}), 400)
    assert "inputs[0]" in msg and "no input named 'pixels'" in msg
    msg = error(infer(server, "digits", {"inputs": [tensor("image", x)], "outputs": [{"name": "logits"}]}), 400)
    assert "outputs[0]" in msg and "no output named 'logits'" in msg
    msg = error(infer(server, "digits", {"inputs": [{"name": "image", "datatype": "FP32", "data": [1]}]}), 400)
    assert "inputs[0].shape" in msg
    msg = error(infer(server, "digits", {"inputs": [{"name": "image", "shape": [1, 1], "datatype": "FP32",
                                                     "data": ["a"]}]}), 400)
    assert "inputs[0].data[0]" in msg and "a number" in msg


def test_malformed_json(server):
    for body, where in [(b"{", "offset 1"), (b"{\"inputs\": [1,]}", "offset 14"), (b"[]", "object"),
                        (b"{\"inputs\": [{\"name\": \"image\"}]} x", "trailing")]:
        msg = error(infer(server, "digits", body), 400)
        assert where in msg, msg
    msg = error(infer(server, "digits", b"\xff\xfe"), 400)
    assert "malformed JSON" in msg


def test_truncated_binary_body(server):
    x = np.zeros((1, 64), np.float32)
    body, hlen = binary_body([("image", x, "FP32")])
    msg = error(infer(server, "digits", body[:-10], headers={"Inference-Header-Content-Length": str(hlen)}), 400)
    assert "binary_data_size" in msg and "truncated" in msg
    msg = error(infer(server, "digits", body, headers={"Inference-Header-Content-Length": str(len(body) + 1)}), 400)
    assert "Inference-Header-Content-Length" in msg
    msg = error(infer(server, "digits", body + b"xx", headers={"Inference-Header-Content-Length": str(hlen)}), 400)
    assert "not used by any input" in msg
    msg = error(infer(server, "digits", gzip.compress(b"{}" * 100)[:-8], headers={"Content-Encoding": "gzip"}), 400)
    assert "corrupt or truncated" in msg
    assert "Content-Encoding 'br'" in error(infer(server, "digits", b"{}", headers={"Content-Encoding": "br"}), 400)


def test_oversized_request(server):
    big = b"{\"inputs\": [" + b" " * 2_100_000 + b"]}"
    msg = error(infer(server, "digits", big), 413)
    assert "max-request-bytes (2000000)" in msg
    bomb = gzip.compress(b" " * 3_000_000)
    assert "decompressed request exceeds" in error(infer(server, "digits", bomb, headers={"Content-Encoding": "gzip"}), 413)


def test_methods_and_paths(server):
    assert error(requests.get(server.url + "/v2/models/digits/infer"), 405)
    assert error(requests.post(server.url + "/v2/models/digits"), 405)
    assert error(requests.get(server.url + "/v1/models"), 404)
    assert error(requests.get(server.url + "/v2/models/digits/explain"), 404)
    assert error(requests.get(server.url + "/v2/repository/index"), 405)


# ---- batching, concurrency, limits ----

def test_64_concurrent_clients_equal_single_requests(server):
    rng = np.random.default_rng(7)
    xs = [rng.standard_normal((1, 784)).astype(np.float32) for _ in range(64)]

    def one(x):
        body, hlen = binary_body([("input", x, "FP32")])
        r = infer(server, "mlp", body, headers={"Inference-Header-Content-Length": str(hlen)})
        assert r.status_code == 200, r.text
        return split_binary(r)["logits"]

    single = [one(x) for x in xs]
    before = requests.get(server.url + "/v2/models/mlp/stats").json()["model_stats"][0]
    with ThreadPoolExecutor(64) as pool:
        for rep in range(3):
            got = list(pool.map(one, xs))
            for a, b in zip(got, single):
                np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    after = requests.get(server.url + "/v2/models/mlp/stats").json()["model_stats"][0]
    inferences = after["inference_count"] - before["inference_count"]
    executions = after["execution_count"] - before["execution_count"]
    assert inferences == 192
    assert executions < inferences, "no request was batched with another"


def test_different_shapes_never_merge(server):
    def one(width):
        x = np.full((1, width), float(width), np.float32)
        r = infer(server, "echo", {"inputs": [tensor("x", x)]})
        assert r.status_code == 200, r.text
        out = r.json()["outputs"][0]
        assert out["shape"] == [1, width]
        assert out["data"] == [2.0 * width] * width
        return width

    with ThreadPoolExecutor(24) as pool:
        assert sorted(pool.map(one, [1 + i % 6 for i in range(48)])) == sorted(1 + i % 6 for i in range(48))


def test_queue_full_is_429(server):
    # the worker holds the first request up to 300 ms waiting for a batch;
    # other widths cannot join it and wait in a queue of 2
    def one(width):
        return infer(server, "echo_queue", {"inputs": [tensor("x", np.ones((1, width), np.float32))]})

    with ThreadPoolExecutor(8) as pool:
        rs = list(pool.map(one, range(1, 9)))
    codes = [r.status_code for r in rs]
    assert set(codes) <= {200, 429}, codes
    assert codes.count(429) >= 1, codes
    assert all("queue of model 'echo_queue' is full" in r.json()["error"] for r in rs if r.status_code == 429)


def test_queue_timeout_is_503(server):
    def one(width):
        return infer(server, "echo_timeout", {"inputs": [tensor("x", np.ones((1, width), np.float32))]})

    with ThreadPoolExecutor(2) as pool:
        first = pool.submit(one, 1)
        threading.Event().wait(0.05)
        second = pool.submit(one, 2)
        codes = sorted([first.result().status_code, second.result().status_code])
    assert codes == [200, 503], codes
    r = second.result() if second.result().status_code == 503 else first.result()
    assert "waited more than 50 ms" in r.json()["error"]


def test_two_instances_run_at_once(server):
    """echo_two has 2 instances that each hold a request 300 ms for a batch:
    two requests that cannot merge finish together, not one after the other."""
    def one(width):
        return infer(server, "echo_two", {"inputs": [tensor("x", np.ones((1, width), np.float32))]})

    t0 = time.time()
    with ThreadPoolExecutor(2) as pool:
        rs = list(pool.map(one, [1, 2]))
    elapsed = time.time() - t0
    assert [r.status_code for r in rs] == [200, 200]
    assert 0.29 < elapsed < 0.59, f"{elapsed:.3f} s: the two requests ran one after the other (>= 0.6 s)"


# ---- statistics, metrics, repository ----

def test_statistics_and_metrics(server):
    infer(server, "digits", {"inputs": [tensor("image", np.zeros((2, 64), np.float32))]})
    stats = requests.get(server.url + "/v2/models/digits/stats").json()["model_stats"]
    assert stats[0]["name"] == "digits" and stats[0]["inference_stats"]["success"]["count"] >= 1
    assert "model_stats" in requests.get(server.url + "/v2/models/stats").json()
    assert error(requests.get(server.url + "/v2/models/nope/stats"), 404)
    text = requests.get(f"http://127.0.0.1:{server.metrics}/metrics").text
    assert 'onyx_inference_request_success_total{model="digits",version="1"}' in text
    assert 'onyx_inference_compute_duration_seconds_bucket{model="mlp",version="1",le="+Inf"}' in text
    assert "# TYPE onyx_inference_queue_duration_seconds histogram" in text
    assert requests.get(f"http://127.0.0.1:{server.metrics}/v2").status_code == 404


def test_repository_index_load_unload(server, models):
    add_bad_config(server.repo, models)
    index = requests.post(server.url + "/v2/repository/index").json()
    assert {"name": "digits", "version": "1", "state": "READY", "reason": ""} in index
    assert error(requests.post(server.url + "/v2/repository/models/nope/load"), 400)
    assert error(requests.post(server.url + "/v2/repository/models/nope/unload"), 404)
    assert error(requests.post(server.url + "/v2/repository/models/digits/load", data=b"{"), 400)
    # a config.json that does not parse keeps the model out, with the field named
    assert {"name": "bad_config", "state": "UNAVAILABLE", "reason": "unloaded"} in index
    msg = error(requests.post(server.url + "/v2/repository/models/bad_config/load"), 400)
    assert "'max_batch_size' must be an integer" in msg
    # while that failure stands the server is not ready, and both say why
    msg = error(requests.get(server.url + "/v2/health/ready"), 503)
    assert "bad_config" in msg and "max_batch_size" in msg
    index = {e["name"]: e for e in requests.post(server.url + "/v2/repository/index").json()}
    assert index["bad_config"]["state"] == "UNAVAILABLE" and "max_batch_size" in index["bad_config"]["reason"]
    assert requests.get(server.url + "/v2/health/live").status_code == 200
    # loading a model with no folder is an error but not a failed model
    assert requests.post(server.url + "/v2/repository/models/bad_config/unload").status_code == 200
    assert requests.get(server.url + "/v2/health/ready").status_code == 200
    assert error(requests.post(server.url + "/v2/repository/models/nope/load"), 400)
    assert requests.get(server.url + "/v2/health/ready").status_code == 200
    shutil.rmtree(os.path.join(server.repo, "bad_config"))
    assert error(requests.post(server.url + "/v2/repository/models/..%2Fetc/load"), 404)


def test_unload_and_load_during_traffic(server):
    """Requests in flight while the model is unloaded and loaded again get
    200 (right answer), 404 (not loaded) or 503 (unloading): never a
    dropped connection or a wrong result."""
    pixels, _ = digits_test_set()
    expected = [infer(server, "digits", {"inputs": [tensor("image", pixels[k:k + 1])]}).json()["outputs"][1]["data"]
                for k in range(8)]
    stop = threading.Event()
    outcomes, wrong, lock = [], [], threading.Lock()

    def client(k):
        with requests.Session() as s:
            while not stop.is_set():
                r = s.post(server.url + "/v2/models/digits/infer",
                           data=json.dumps({"inputs": [tensor("image", pixels[k:k + 1])]}))
                with lock:
                    outcomes.append(r.status_code)
                    if r.status_code == 200 and r.json()["outputs"][1]["data"] != expected[k]:
                        wrong.append(k)

    threads = [threading.Thread(target=client, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    threading.Event().wait(0.3)
    assert requests.post(server.url + "/v2/repository/models/digits/unload").status_code == 200
    assert requests.get(server.url + "/v2/models/digits/ready").status_code == 400
    index = requests.post(server.url + "/v2/repository/index").json()
    assert {"name": "digits", "state": "UNAVAILABLE", "reason": "unloaded"} in index
    threading.Event().wait(0.3)
    assert requests.post(server.url + "/v2/repository/models/digits/load").status_code == 200
    threading.Event().wait(0.3)
    stop.set()
    for t in threads:
        t.join()
    assert not wrong
    assert set(outcomes) <= {200, 404, 503}, set(outcomes)
    assert outcomes.count(200) > 0 and outcomes.count(404) > 0
    assert requests.get(server.url + "/v2/models/digits/ready").status_code == 200


def test_mutated_bodies_never_crash(server):
    """300 corrupted copies of valid JSON and binary requests (bytes flipped,
    cut, duplicated): each gets a 200 or a 4xx with a message; the server
    stays up (the same test runs under ASan/UBSan in CI)."""
    rng = np.random.default_rng(1234)
    x = rng.standard_normal((2, 64)).astype(np.float32)
    json_body = json.dumps({"id": "m", "inputs": [tensor("image", x)], "outputs": [{"name": "label"}],
                            "parameters": {"binary_data_output": False}}).encode()
    bin_body, hlen = binary_body([("image", x, "FP32")], outputs=["label"])
    with requests.Session() as s:
        for i in range(300):
            base, header = (json_body, None) if i % 2 else (bin_body, hlen)
            b = bytearray(base)
            for _ in range(int(rng.integers(1, 6))):
                op, pos = int(rng.integers(0, 3)), int(rng.integers(0, len(b)))
                if op == 0:
                    b[pos] = int(rng.integers(0, 256))
                elif op == 1:
                    del b[pos:pos + int(rng.integers(1, 16))]
                else:
                    b[pos:pos] = b[pos:pos + int(rng.integers(1, 16))]
            headers = {"Inference-Header-Content-Length": str(header)} if header is not None else {}
            r = s.post(server.url + "/v2/models/digits/infer", data=bytes(b), headers=headers)
            assert r.status_code in (200, 400), (r.status_code, r.text)
            if r.status_code == 400:
                assert r.json()["error"]
    assert requests.get(server.url + "/v2/health/live").status_code == 200
