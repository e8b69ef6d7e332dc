"""KServe v2 gRPC tests of onyx serve, with python3-grpcio and stubs
generated at test time from grpc_service.proto."""
import os
import shutil
from concurrent.futures import ThreadPoolExecutor

import grpc
import numpy as np
import pytest

from conftest import add_bad_config
from test_rest import digits_test_set, mlp_reference


@pytest.fixture(scope="module")
def client(server, stubs):
    pb, pbg = stubs
    channel = grpc.insecure_channel(f"127.0.0.1:{server.grpc}")
    yield pb, pbg.GRPCInferenceServiceStub(channel)
    channel.close()


def infer_request(pb, model, name, x, datatype="FP32", raw=True, outputs=()):
    t = pb.ModelInferRequest.InferInputTensor(name=name, datatype=datatype, shape=list(x.shape))
    req = pb.ModelInferRequest(model_name=model, id="req-1", inputs=[t],
                               outputs=[pb.ModelInferRequest.InferRequestedOutputTensor(name=o) for o in outputs])
    if raw:
        req.raw_input_contents.append(x.tobytes())
    else:
        req.inputs[0].contents.fp32_contents.extend(x.ravel().tolist())
    return req


def outputs(resp):
    dts = {"FP32": np.float32, "INT64": np.int64}
    return {o.name: np.frombuffer(raw, dtype=dts[o.datatype]).reshape(o.shape)
            for o, raw in zip(resp.outputs, resp.raw_output_contents)}


def test_health_and_metadata(client):
    pb, stub = client
    assert stub.ServerLive(pb.ServerLiveRequest()).live
    assert stub.ServerReady(pb.ServerReadyRequest()).ready
    meta = stub.ServerMetadata(pb.ServerMetadataRequest())
    assert meta.name == "onyx" and "binary_tensor_data" in meta.extensions
    assert stub.ModelReady(pb.ModelReadyRequest(name="digits")).ready
    assert not stub.ModelReady(pb.ModelReadyRequest(name="nope")).ready
    m = stub.ModelMetadata(pb.ModelMetadataRequest(name="digits"))
    assert m.platform == "onnxruntime_onnx" and list(m.versions) == ["1"]
    assert (m.inputs[0].name, m.inputs[0].datatype, list(m.inputs[0].shape)) == ("image", "FP32", [-1, 64])
    assert [o.name for o in m.outputs] == ["probabilities", "label"]


def test_infer_raw_and_typed_contents(client, models):
    pb, stub = client
    pixels, labels = digits_test_set()
    for raw in (True, False):
        resp = stub.ModelInfer(infer_request(pb, "digits", "image", pixels[:30], raw=raw, outputs=["label"]))
        assert resp.model_name == "digits" and resp.model_version == "1" and resp.id == "req-1"
        got = outputs(resp)["label"]
        assert list(got.shape) == [30] and (got == labels[:30]).mean() > 0.9
    x = np.random.default_rng(3).standard_normal((3, 784)).astype(np.float32)
    got = outputs(stub.ModelInfer(infer_request(pb, "mlp", "input", x)))["logits"]
    np.testing.assert_allclose(got, mlp_reference(models["mlp"], x), rtol=1e-4, atol=1e-4)


def code_of(call):
    with pytest.raises(grpc.RpcError) as e:
        call()
    return e.value.code(), e.value.details()


def test_errors(client):
    pb, stub = client
    x = np.zeros((1, 64), np.float32)
    code, msg = code_of(lambda: stub.ModelInfer(infer_request(pb, "nope", "image", x)))
    assert code == grpc.StatusCode.NOT_FOUND and "unknown model 'nope'" in msg
    req = infer_request(pb, "digits", "image", x)
    req.model_version = "7"
    code, msg = code_of(lambda: stub.ModelInfer(req))
    assert code == grpc.StatusCode.NOT_FOUND and "version 7" in msg
    code, msg = code_of(lambda: stub.ModelInfer(infer_request(pb, "digits", "image", x.astype(np.float64), "FP64")))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "datatype FP64" in msg
    code, msg = code_of(lambda: stub.ModelInfer(infer_request(pb, "digits", "image", np.zeros((1, 60), np.float32))))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "dimension 1" in msg
    code, msg = code_of(lambda: stub.ModelInfer(infer_request(pb, "digits", "pixels", x)))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "no input named 'pixels'" in msg
    req = infer_request(pb, "digits", "image", x)
    req.raw_input_contents[0] = req.raw_input_contents[0][:-4]
    code, msg = code_of(lambda: stub.ModelInfer(req))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "252 bytes of data" in msg
    req = infer_request(pb, "digits", "image", x, raw=False)
    del req.inputs[0].contents.fp32_contents[-1]
    code, msg = code_of(lambda: stub.ModelInfer(req))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "63 elements, shape needs 64" in msg
    code, msg = code_of(lambda: stub.ModelInfer(pb.ModelInferRequest(model_name="digits")))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "inputs" in msg


def test_malformed_protobuf(server):
    channel = grpc.insecure_channel(f"127.0.0.1:{server.grpc}")
    raw = channel.unary_unary("/inference.GRPCInferenceService/ModelInfer",
                              request_serializer=lambda b: b, response_deserializer=lambda b: b)
    code, msg = code_of(lambda: raw(b"\x0a\x40digits"))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "malformed ModelInferRequest" in msg
    other = channel.unary_unary("/inference.GRPCInferenceService/TraceSetting",
                                request_serializer=lambda b: b, response_deserializer=lambda b: b)
    code, msg = code_of(lambda: other(b""))
    assert code == grpc.StatusCode.UNIMPLEMENTED and "TraceSetting" in msg
    channel.close()


def test_concurrent_calls_on_one_channel_batch(client, server):
    pb, stub = client
    rng = np.random.default_rng(11)
    xs = [rng.standard_normal((1, 784)).astype(np.float32) for _ in range(32)]
    single = [outputs(stub.ModelInfer(infer_request(pb, "mlp", "input", x)))["logits"] for x in xs]
    with ThreadPoolExecutor(32) as pool:
        futures = [stub.ModelInfer.future(infer_request(pb, "mlp", "input", x)) for x in xs]
        got = [outputs(f.result())["logits"] for f in futures]
    for a, b in zip(got, single):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_stream_infer(client):
    pb, stub = client
    pixels, labels = digits_test_set()
    reqs = [infer_request(pb, "digits", "image", pixels[i:i + 5], outputs=["label"]) for i in range(0, 50, 5)]
    reqs.insert(3, infer_request(pb, "nope", "image", pixels[:1]))
    resps = list(stub.ModelStreamInfer(iter(reqs)))
    assert len(resps) == len(reqs)
    errors = [r.error_message for r in resps if r.error_message]
    assert errors == ["unknown model 'nope' (not in the repository or not loaded)"]
    got = np.concatenate([outputs(r.infer_response)["label"] for r in resps if not r.error_message])
    assert sorted(got.tolist()) == sorted(np.concatenate(
        [outputs(stub.ModelInfer(r))["label"] for r in reqs if r.model_name == "digits"]).tolist())


def test_mutated_messages_never_crash(server, stubs):
    pb, _ = stubs
    rng = np.random.default_rng(99)
    x = rng.standard_normal((2, 64)).astype(np.float32)
    good = [infer_request(pb, "digits", "image", x, raw=raw).SerializeToString() for raw in (True, False)]
    channel = grpc.insecure_channel(f"127.0.0.1:{server.grpc}")
    raw = channel.unary_unary("/inference.GRPCInferenceService/ModelInfer",
                              request_serializer=lambda b: b, response_deserializer=lambda b: b)
    for i in range(300):
        b = bytearray(good[i % 2])
        for _ in range(int(rng.integers(1, 6))):
            pos = int(rng.integers(0, len(b)))
            if rng.integers(0, 2):
                b[pos] = int(rng.integers(0, 256))
            else:
                del b[pos:pos + int(rng.integers(1, 16))]
        try:
            raw(bytes(b), timeout=20)
        except grpc.RpcError as e:
            assert e.code() in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND), (e.code(), e.details())
            assert e.details()
    channel.close()
    _, pbg = stubs
    assert pbg.GRPCInferenceServiceStub(grpc.insecure_channel(f"127.0.0.1:{server.grpc}")).ServerLive(
        pb.ServerLiveRequest()).live


def test_repository_index_load_unload(client, server, models):
    pb, stub = client
    add_bad_config(server.repo, models)
    index = stub.RepositoryIndex(pb.RepositoryIndexRequest())
    entries = {(m.name, m.version, m.state, m.reason) for m in index.models}
    assert ("mlp", "1", "READY", "") in entries and ("bad_config", "", "UNAVAILABLE", "unloaded") in entries
    ready = stub.RepositoryIndex(pb.RepositoryIndexRequest(ready=True))
    assert all(m.state == "READY" for m in ready.models) and len(ready.models) < len(index.models)
    stub.RepositoryModelUnload(pb.RepositoryModelUnloadRequest(model_name="mlp_plain"))
    assert not stub.ModelReady(pb.ModelReadyRequest(name="mlp_plain")).ready
    code, msg = code_of(lambda: stub.RepositoryModelUnload(pb.RepositoryModelUnloadRequest(model_name="mlp_plain")))
    assert code == grpc.StatusCode.NOT_FOUND and "not loaded" in msg
    stub.RepositoryModelLoad(pb.RepositoryModelLoadRequest(model_name="mlp_plain"))
    assert stub.ModelReady(pb.ModelReadyRequest(name="mlp_plain")).ready
    code, msg = code_of(lambda: stub.RepositoryModelLoad(pb.RepositoryModelLoadRequest(model_name="bad_config")))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "max_batch_size" in msg
    # the failed load stands: the server is not ready and the index says why
    assert not stub.ServerReady(pb.ServerReadyRequest()).ready
    reasons = {m.name: m.reason for m in stub.RepositoryIndex(pb.RepositoryIndexRequest()).models}
    assert "max_batch_size" in reasons["bad_config"]
    stub.RepositoryModelUnload(pb.RepositoryModelUnloadRequest(model_name="bad_config"))
    assert stub.ServerReady(pb.ServerReadyRequest()).ready
    shutil.rmtree(os.path.join(server.repo, "bad_config"))
    code, msg = code_of(lambda: stub.RepositoryModelLoad(pb.RepositoryModelLoadRequest()))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "model_name" in msg
