"""onyx serve: Triton's statistics over gRPC, BYTES (string) tensors over
REST JSON, the binary extension and gRPC, gRPC message compression (checked
on the wire with python3-h2), IPv6 listeners and readiness while a model
has failed to load."""
import gzip
import json
import os
import socket
import struct
import subprocess
import zlib
from concurrent.futures import ThreadPoolExecutor

import grpc
import numpy as np
import pytest
import requests

from conftest import ONYX, Server, add_bad_config, free_port, write_model
from test_grpc import client, infer_request, outputs  # noqa: F401 (client is a fixture)
from test_rest import error, infer, split_binary, tensor


def code_of(call):
    with pytest.raises(grpc.RpcError) as e:
        call()
    return e.value.code(), e.value.details()


# ---- statistics ----

def test_grpc_model_statistics_match_rest(client, server):
    pb, stub = client
    x = np.zeros((3, 64), np.float32)
    for _ in range(3):
        stub.ModelInfer(infer_request(pb, "digits", "image", x))
    st = stub.ModelStatistics(pb.ModelStatisticsRequest(name="digits")).model_stats
    assert [(s.name, s.version) for s in st] == [("digits", "1")]
    s = st[0]
    inf = s.inference_stats
    assert inf.success.count >= 3 and inf.success.ns > 0 and s.inference_count >= 9 and s.execution_count >= 1
    assert inf.compute_infer.count == inf.success.count and inf.compute_infer.ns > 0
    assert inf.queue.count == inf.success.count and inf.compute_input.ns > 0 and inf.compute_output.ns > 0
    assert s.last_inference > 1.7e12   # milliseconds since the epoch
    assert any(b.batch_size >= 3 and b.compute_infer.count >= 1 and b.compute_infer.ns > 0 for b in s.batch_stats)
    everything = stub.ModelStatistics(pb.ModelStatisticsRequest()).model_stats
    assert {"digits", "mlp", "echo"} <= {m.name for m in everything}
    code, msg = code_of(lambda: stub.ModelStatistics(pb.ModelStatisticsRequest(name="nope")))
    assert code == grpc.StatusCode.NOT_FOUND and "nope" in msg
    code, msg = code_of(lambda: stub.ModelStatistics(pb.ModelStatisticsRequest(version="1")))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "version" in msg
    # REST's statistics carry the same fields (Triton's JSON names)
    rest = requests.get(server.url + "/v2/models/digits/versions/1/stats").json()["model_stats"][0]
    assert set(rest["inference_stats"]) == {"success", "fail", "queue", "compute_input", "compute_infer",
                                            "compute_output", "cache_hit", "cache_miss"}
    assert rest["inference_stats"]["success"]["count"] >= inf.success.count
    b = rest["batch_stats"][0]
    assert set(b) == {"batch_size", "compute_input", "compute_infer", "compute_output"} and b["compute_infer"]["ns"] > 0


# ---- BYTES tensors ----

def serialize(strings):
    """Triton's BYTES serialization: a 4-byte little-endian length per element."""
    return b"".join(struct.pack("<I", len(s)) + s for s in strings)


def deserialize(data):
    out, off = [], 0
    while off < len(data):
        n = struct.unpack_from("<I", data, off)[0]
        out.append(data[off + 4:off + 4 + n])
        off += 4 + n
    return out


TEXT = [["a", "bb", "ccc"], ["\u00e9t\u00e9", "", "x y"]]


def test_bytes_rest_json(server):
    r = infer(server, "strings", {"inputs": [{"name": "text", "shape": [2, 3], "datatype": "BYTES", "data": TEXT}]})
    assert r.status_code == 200, r.text
    out = {o["name"]: o for o in r.json()["outputs"]}
    assert out["same"]["datatype"] == "BYTES" and out["same"]["shape"] == [2, 3]
    assert out["same"]["data"] == sum(TEXT, [])
    assert out["twice"]["shape"] == [2, 6] and out["twice"]["data"] == TEXT[0] * 2 + TEXT[1] * 2
    meta = requests.get(server.url + "/v2/models/strings").json()
    assert meta["inputs"][0]["datatype"] == "BYTES" and meta["outputs"][1]["datatype"] == "BYTES"
    bad = {"inputs": [{"name": "text", "shape": [1, 2], "datatype": "BYTES", "data": ["a", 7]}]}
    assert "data[1]: expected a string for datatype BYTES, got number" in error(infer(server, "strings", bad), 400)
    bad["inputs"][0]["data"] = ["a", "b", "c"]
    assert "more elements than the shape holds" in error(infer(server, "strings", bad), 400)
    bad["inputs"][0]["data"] = ["a", "nul\u0000inside"]
    assert "NUL byte" in error(infer(server, "strings", bad), 400)


def bytes_body(data, shape, binary_output=True):
    header = json.dumps({"inputs": [{"name": "text", "shape": shape, "datatype": "BYTES",
                                     "parameters": {"binary_data_size": len(data)}}],
                         "parameters": {"binary_data_output": binary_output}}).encode()
    return header + data, {"Inference-Header-Content-Length": str(len(header))}


def infer_bytes(server, data, shape):
    body, headers = bytes_body(data, shape)
    return infer(server, "strings", body, headers=headers)


def test_bytes_rest_binary(server):
    strings = [b"alpha", b"\xff\xfe not utf-8", b"", b"z" * 300]
    r = infer_bytes(server, serialize(strings), [2, 2])
    assert r.status_code == 200, r.text
    n = int(r.headers["Inference-Header-Content-Length"])
    header, data = json.loads(r.content[:n]), r.content[n:]
    sizes = [o["parameters"]["binary_data_size"] for o in header["outputs"]]
    assert [o["name"] for o in header["outputs"]] == ["same", "twice"] and sum(sizes) == len(data)
    assert deserialize(data[:sizes[0]]) == strings
    assert deserialize(data[sizes[0]:]) == strings[:2] * 2 + strings[2:] * 2
    # a length prefix that runs past the end, a short element count, a cut prefix
    msg = error(infer_bytes(server, serialize(strings)[:-10], [2, 2]), 400)
    assert "length prefix runs past the end" in msg and "element 3" in msg
    msg = error(infer_bytes(server, serialize(strings[:3]), [2, 2]), 400)
    assert "3 BYTES elements, the shape needs 4" in msg
    msg = error(infer_bytes(server, serialize(strings) + b"\x01\x00", [2, 2]), 400)
    assert "length prefix" in msg


def test_bytes_batched_requests_keep_their_rows(server):
    """Eight clients at once on a model with dynamic batching: each gets its
    own strings back (the batch concatenates and splits the serialized rows)."""
    def one(k):
        mine = [f"client {k} row {i} " * (k + 1) for i in range(2)]
        r = infer(server, "strings", {"inputs": [{"name": "text", "shape": [1, 2], "datatype": "BYTES",
                                                  "data": mine}]})
        assert r.status_code == 200, r.text
        out = {o["name"]: o["data"] for o in r.json()["outputs"]}
        return out["same"] == mine and out["twice"] == mine * 2

    with ThreadPoolExecutor(8) as ex:
        assert all(ex.map(one, range(32)))
    stats = requests.get(server.url + "/v2/models/strings/stats").json()["model_stats"][0]
    assert stats["inference_count"] >= 32


def test_bytes_grpc(client):
    pb, stub = client
    strings = [b"one", b"two\xff", b"", b"four"]
    t = pb.ModelInferRequest.InferInputTensor(name="text", datatype="BYTES", shape=[2, 2])
    for raw in (True, False):
        req = pb.ModelInferRequest(model_name="strings", inputs=[t])
        if raw:
            req.raw_input_contents.append(serialize(strings))
        else:
            req.inputs[0].contents.bytes_contents.extend(strings)
        resp = stub.ModelInfer(req)
        got = {o.name: (o.datatype, list(o.shape), deserialize(raw_out))
               for o, raw_out in zip(resp.outputs, resp.raw_output_contents)}
        assert got["same"] == ("BYTES", [2, 2], strings)
        assert got["twice"] == ("BYTES", [2, 4], strings[:2] * 2 + strings[2:] * 2)
    req = pb.ModelInferRequest(model_name="strings", inputs=[t])
    req.raw_input_contents.append(serialize(strings)[:-2])
    code, msg = code_of(lambda: stub.ModelInfer(req))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "length prefix runs past the end" in msg
    req = pb.ModelInferRequest(model_name="strings", inputs=[t])
    req.inputs[0].contents.fp32_contents.extend([1, 2, 3, 4])
    code, msg = code_of(lambda: stub.ModelInfer(req))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "does not match datatype BYTES" in msg


def test_grpc_calls_arriving_together_batch_on_the_connection_thread(client, server):
    """64 calls in flight on one channel to a model batching without delay:
    the calls of one read are queued together and run as batches on the
    connection's thread; shapes that differ never merge, every answer is its
    own input doubled."""
    pb, stub = client
    before = requests.get(server.url + "/v2/models/echo_now/stats").json()["model_stats"][0]
    xs = [np.full((1 + k % 3, 2 + k % 2), k, np.float32) for k in range(64)]
    futures = [stub.ModelInfer.future(infer_request(pb, "echo_now", "x", x)) for x in xs]
    for x, f in zip(xs, futures):
        np.testing.assert_array_equal(outputs(f.result())["y"], 2 * x)
    after = requests.get(server.url + "/v2/models/echo_now/stats").json()["model_stats"][0]
    rows = sum(x.shape[0] for x in xs)
    assert after["inference_count"] - before["inference_count"] == rows
    assert after["execution_count"] - before["execution_count"] <= 64


# ---- gRPC compression ----

def test_grpc_compressed_calls(server, stubs):
    pb, pbg = stubs
    x = np.random.default_rng(9).standard_normal((2, 1000)).astype(np.float32)
    for algo in (grpc.Compression.Gzip, grpc.Compression.Deflate):
        with grpc.insecure_channel(f"127.0.0.1:{server.grpc}", compression=algo) as ch:
            stub = pbg.GRPCInferenceServiceStub(ch)
            got = outputs(stub.ModelInfer(infer_request(pb, "echo", "x", x)))["y"]
            np.testing.assert_array_equal(got, 2 * x)
            assert stub.ServerLive(pb.ServerLiveRequest()).live


def h2_call(port, method, body, headers=()):
    """One gRPC call on a raw HTTP/2 connection (python3-h2): returns the
    response headers, the body bytes and the trailers."""
    import h2.config
    import h2.connection
    import h2.events
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        conn.initiate_connection()
        sid = conn.get_next_available_stream_id()
        conn.send_headers(sid, [(":method", "POST"), (":scheme", "http"), (":authority", f"127.0.0.1:{port}"),
                                (":path", f"/inference.GRPCInferenceService/{method}"),
                                ("content-type", "application/grpc"), ("te", "trailers"), *headers])
        conn.send_data(sid, body, end_stream=True)
        sock.sendall(conn.data_to_send())
        head, data, trailers, ended = {}, b"", {}, False
        while not ended:
            chunk = sock.recv(65536)
            assert chunk, "the server closed the connection"
            for ev in conn.receive_data(chunk):
                if isinstance(ev, h2.events.ResponseReceived):
                    head = dict(ev.headers)
                elif isinstance(ev, h2.events.DataReceived):
                    data += ev.data
                    conn.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
                elif isinstance(ev, h2.events.TrailersReceived):
                    trailers = dict(ev.headers)
                elif isinstance(ev, (h2.events.StreamEnded, h2.events.StreamReset)):
                    ended = True
            sock.sendall(conn.data_to_send())
    return head, data, trailers


def frame(msg, compressed):
    return bytes([compressed]) + struct.pack(">I", len(msg)) + msg


def test_grpc_compression_on_the_wire(server, stubs):
    pb, _ = stubs
    x = np.random.default_rng(10).standard_normal((2, 1000)).astype(np.float32)
    msg = infer_request(pb, "echo", "x", x).SerializeToString()
    for name, pack, unpack in (("gzip", gzip.compress, gzip.decompress),
                               ("deflate", zlib.compress, zlib.decompress)):
        head, data, trailers = h2_call(server.grpc, "ModelInfer", frame(pack(msg), 1), [("grpc-encoding", name)])
        assert trailers.get("grpc-status") == "0", trailers
        assert head.get("grpc-encoding") == name   # the answer comes in the client's encoding
        assert data[0] == 1 and struct.unpack(">I", data[1:5])[0] == len(data) - 5
        resp = pb.ModelInferResponse.FromString(unpack(data[5:]))
        np.testing.assert_array_equal(outputs(resp)["y"], 2 * x)
    # uncompressed calls get uncompressed answers
    head, data, trailers = h2_call(server.grpc, "ModelInfer", frame(msg, 0))
    assert trailers["grpc-status"] == "0" and "grpc-encoding" not in head and data[0] == 0
    # errors: corrupt body, flag without grpc-encoding, unknown encoding, a bomb past the limit
    z = gzip.compress(msg)
    _, _, t = h2_call(server.grpc, "ModelInfer", frame(z[:len(z) // 2], 1), [("grpc-encoding", "gzip")])
    assert t["grpc-status"] == "3" and "corrupt or truncated" in t["grpc-message"], t
    _, _, t = h2_call(server.grpc, "ModelInfer", frame(b"\x00garbage" * 4, 1), [("grpc-encoding", "deflate")])
    assert t["grpc-status"] == "3" and "deflate" in t["grpc-message"], t
    _, _, t = h2_call(server.grpc, "ModelInfer", frame(z, 1))
    assert t["grpc-status"] == "13" and "no grpc-encoding" in t["grpc-message"], t
    _, _, t = h2_call(server.grpc, "ModelInfer", frame(msg, 0), [("grpc-encoding", "snappy")])
    assert t["grpc-status"] == "12" and "snappy" in t["grpc-message"], t
    bomb = gzip.compress(b"\x00" * 3_000_000)   # the test server allows 2,000,000 bytes
    _, _, t = h2_call(server.grpc, "ModelInfer", frame(bomb, 1), [("grpc-encoding", "gzip")])
    assert t["grpc-status"] == "8" and "max-request-bytes" in t["grpc-message"], t
    _, _, t = h2_call(server.grpc, "ModelInfer", frame(msg, 2))
    assert t["grpc-status"] == "3" and "Compressed-Flag" in t["grpc-message"], t
    assert requests.get(server.url + "/v2/health/live").status_code == 200


def test_rest_compression_errors(server):
    body = json.dumps({"inputs": [tensor("image", np.zeros((1, 64), np.float32))]}).encode()
    z = gzip.compress(body)
    assert "corrupt or truncated" in error(infer(server, "digits", z[:-8], headers={"Content-Encoding": "gzip"}), 400)
    assert "'br' is not supported" in error(infer(server, "digits", z, headers={"Content-Encoding": "br"}), 400)
    bomb = gzip.compress(b" " * 3_000_000)
    assert "max-request-bytes" in error(infer(server, "digits", bomb, headers={"Content-Encoding": "gzip"}), 413)
    # small answers stay plain even when compression is allowed
    r = infer(server, "digits", body, headers={"Accept-Encoding": "gzip"})
    assert r.status_code == 200 and "Content-Encoding" not in r.headers


# ---- IPv6 and readiness ----

def ipv6_loopback():
    if not socket.has_ipv6:
        return "Python was built without IPv6"
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
    except OSError as e:
        return f"the kernel has no IPv6 loopback ({e})"
    return None


def test_ipv6_listeners_and_readiness_with_a_failed_model(tmp_path, models, stubs):
    """A server on ::1 whose repository holds a model that fails to load:
    live but not ready (REST and gRPC, with the reason), until that model is
    fixed and loaded."""
    why = ipv6_loopback()
    if why:
        pytest.skip(f"IPv6 test skipped: {why}")
    pb, pbg = stubs
    repo = str(tmp_path / "repo")
    write_model(repo, "echo", models["echo"])
    add_bad_config(repo, models)
    server = Server(repo, "--threads", "1", host="::1", wait="live", log_path=str(tmp_path / "serve.log"))
    try:
        msg = error(requests.get(server.url + "/v2/health/ready"), 503)
        assert "bad_config" in msg and "max_batch_size" in msg
        index = {e["name"]: e for e in requests.post(server.url + "/v2/repository/index").json()}
        assert index["echo"]["state"] == "READY" and "max_batch_size" in index["bad_config"]["reason"]
        x = np.arange(4, dtype=np.float32).reshape(1, 4)
        r = infer(server, "echo", {"inputs": [tensor("x", x)]})
        assert r.status_code == 200 and r.json()["outputs"][0]["data"] == (2 * x).ravel().tolist()
        with grpc.insecure_channel(f"[::1]:{server.grpc}") as ch:
            stub = pbg.GRPCInferenceServiceStub(ch)
            assert stub.ServerLive(pb.ServerLiveRequest()).live
            assert not stub.ServerReady(pb.ServerReadyRequest()).ready
            np.testing.assert_array_equal(outputs(stub.ModelInfer(infer_request(pb, "echo", "x", x)))["y"], 2 * x)
            write_model(repo, "bad_config", models["echo"], {"max_batch_size": 4})
            assert requests.post(server.url + "/v2/repository/models/bad_config/load").status_code == 200
            assert stub.ServerReady(pb.ServerReadyRequest()).ready
        assert requests.get(server.url + "/v2/health/ready").status_code == 200
        assert requests.get(f"http://[::1]:{server.metrics}/metrics").status_code == 200
    finally:
        assert server.stop() == 0


def test_bad_host_is_refused(tmp_path):
    p = subprocess.run([ONYX, "serve", "--model-repository", str(tmp_path), "--host", "localhost6x",
                        "--http-port", str(free_port()), "--grpc-port", "0", "--metrics-port", "0"],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode != 0 and "not an IPv4 or IPv6 address" in p.stderr


def test_mutated_bytes_and_compressed_requests_never_crash(server, stubs):
    """Corrupted BYTES bodies (REST binary) and corrupted gzip gRPC messages:
    each gets an answer (200 or 400 / INVALID_ARGUMENT with a message), the
    server stays up (this runs under ASan/UBSan in CI too)."""
    pb, _ = stubs
    rng = np.random.default_rng(77)
    base = serialize([b"alpha", b"beta", b"", b"gamma" * 20])
    z = gzip.compress(infer_request(pb, "echo", "x", np.ones((1, 300), np.float32)).SerializeToString())
    with requests.Session() as s:
        for i in range(120):
            b = bytearray(base)
            for _ in range(int(rng.integers(1, 4))):
                pos = int(rng.integers(0, len(b)))
                b[pos] = int(rng.integers(0, 256))
            body, headers = bytes_body(bytes(b), [2, 2])
            r = s.post(server.url + "/v2/models/strings/infer", data=body, headers=headers)
            assert r.status_code in (200, 400), (r.status_code, r.text)
            assert r.status_code == 200 or r.json()["error"]
    for i in range(12):
        m = bytearray(z)
        pos = int(rng.integers(10, len(m)))
        m[pos] ^= int(rng.integers(1, 256))
        _, _, t = h2_call(server.grpc, "ModelInfer", frame(bytes(m), 1), [("grpc-encoding", "gzip")])
        assert t["grpc-status"] in ("0", "3"), t
    assert requests.get(server.url + "/v2/health/live").status_code == 200
