"""InferenceSession: creation, providers, metadata, run and its errors."""
import os
import warnings

import numpy as np
import pytest

import onyx as ort
from onyx.capi.onnxruntime_pybind11_state import (Fail, InvalidArgument, InvalidGraph, InvalidModel,
                                                  InvalidProtobuf, NoSuchFile, NotImplemented)


def mlp_reference(models, x):
    w1, b1, w2 = models["mlp_weights"]
    return np.maximum(x @ w1 + b1, 0) @ w2


def test_run_matches_numpy(models):
    sess = ort.InferenceSession(models["mlp"], providers=["CPUExecutionProvider"])
    x = np.random.default_rng(1).standard_normal((5, 8)).astype(np.float32)
    (y,) = sess.run(None, {"x": x})
    assert y.dtype == np.float32 and y.shape == (5, 4)
    np.testing.assert_allclose(y, mlp_reference(models, x), rtol=1e-5, atol=1e-5)
    # named outputs, list and tuple, and [] meaning all
    assert np.array_equal(sess.run(["y"], {"x": x})[0], y)
    assert np.array_equal(sess.run([], {"x": x})[0], y)


def test_from_bytes_and_pathlike(models, tmp_path):
    import pathlib
    data = open(models["mlp"], "rb").read()
    x = np.ones((1, 8), np.float32)
    a = ort.InferenceSession(data).run(None, {"x": x})[0]
    b = ort.InferenceSession(pathlib.Path(models["mlp"])).run(None, {"x": x})[0]
    assert np.array_equal(a, b)
    with pytest.raises(TypeError, match="Unable to load from type"):
        ort.InferenceSession(12)


def test_metadata(models):
    sess = ort.InferenceSession(models["session_info"])
    inputs = sess.get_inputs()
    assert [i.name for i in inputs] == ["x", "z"]
    assert inputs[0].type == "tensor(float)" and inputs[0].shape == ["batch", "n"]
    assert inputs[1].shape == [None, 3]
    assert "NodeArg(name='x', type='tensor(float)'" in str(inputs[0])
    outs = sess.get_outputs()
    assert [o.name for o in outs] == ["y", "nz"] and outs[0].type == "tensor(float)"
    over = sess.get_overridable_initializers()
    assert [(o.name, o.type, o.shape) for o in over] == [("bias", "tensor(float)", [1])]
    meta = sess.get_modelmeta()
    assert meta.producer_name == "onyx-tests" and meta.producer_version == "1.2.3"
    assert meta.graph_name == "info" and meta.graph_description == "y = x * W + bias"
    assert meta.domain == "ai.onyx.test" and meta.description == "A model for the session_info tests"
    assert meta.version == 7 and meta.custom_metadata_map == {"author": "onyx", "purpose": "tests"}
    assert isinstance(sess.get_session_options(), ort.SessionOptions)


def test_overridable_initializer_as_input(models):
    sess = ort.InferenceSession(models["session_info"])
    x, z = np.array([[1, 2]], np.float32), np.zeros((1, 3), np.float32)
    y, nz = sess.run(None, {"x": x, "z": z})
    assert y.tolist() == [[2.5, 4.5]] and nz.shape == (1, 3)
    y = sess.run(["y"], {"x": x, "z": z, "bias": np.array([10], np.float32)})[0]
    assert y.tolist() == [[12, 14]]


def test_map_type_names(models):
    sess = ort.InferenceSession(models["dictvectorizer"])
    assert sess.get_inputs()[0].type == "map(string,tensor(float))"


def test_providers_and_fallback_warning(models):
    assert ort.get_available_providers() == ["CPUExecutionProvider"]
    assert "CUDAExecutionProvider" in ort.get_all_providers()
    with pytest.warns(UserWarning, match="Specified provider 'CUDAExecutionProvider' is not in available provider "
                                         "names.Available providers: 'CPUExecutionProvider'"):
        sess = ort.InferenceSession(models["mlp"], providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
    assert sess.get_providers() == ["CPUExecutionProvider"]
    assert sess.get_provider_options() == {"CPUExecutionProvider": {}}
    # tuples with options, and provider_options
    sess = ort.InferenceSession(models["mlp"], providers=[("CPUExecutionProvider", {})])
    assert sess.get_providers() == ["CPUExecutionProvider"]
    sess = ort.InferenceSession(models["mlp"], providers=["CPUExecutionProvider"], provider_options=[{}])
    with pytest.raises(ValueError, match="same length"):
        ort.InferenceSession(models["mlp"], providers=["CPUExecutionProvider"], provider_options=[{}, {}])
    with pytest.raises(ValueError, match="either strings or"):
        ort.InferenceSession(models["mlp"], providers=[3])
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ort.InferenceSession(models["mlp"], providers=["CPUExecutionProvider", "CPUExecutionProvider"])
    assert any("Duplicate provider" in str(x.message) for x in w)


def test_unknown_provider_only(models):
    with pytest.warns(UserWarning, match="'NoSuchExecutionProvider' is not in available provider names"):
        sess = ort.InferenceSession(models["mlp"], providers=["NoSuchExecutionProvider"])
    assert sess.get_providers() == ["CPUExecutionProvider"]


def test_set_providers_and_fallback_switches(models):
    sess = ort.InferenceSession(models["mlp"])
    sess.set_providers(["CPUExecutionProvider"])
    assert sess.get_providers() == ["CPUExecutionProvider"]
    sess.disable_fallback()
    assert sess._enable_fallback is False
    sess.enable_fallback()
    assert sess._enable_fallback is True
    assert sess.run(None, {"x": np.zeros((2, 8), np.float32)})[0].shape == (2, 4)


def test_module_functions():
    assert ort.get_device() == "CPU"
    assert ort.get_version_string() == ort.__version__
    ort.set_default_logger_severity(3)
    ort.set_default_logger_severity(2)
    with pytest.raises(ValueError):
        ort.set_default_logger_severity(7)
    ort.set_default_logger_verbosity(0)


# ---------------------------------------------------------------- errors

def test_wrong_input_name(models):
    sess = ort.InferenceSession(models["mlp"])
    with pytest.raises(InvalidArgument, match="'nope' is not an input of the model"):
        sess.run(None, {"x": np.zeros((1, 8), np.float32), "nope": np.zeros(1, np.float32)})
    with pytest.raises(ValueError, match=r"Required inputs \(\['x'\]\) are missing from input feed \(\['nope'\]\)"):
        sess.run(None, {"nope": np.zeros(1, np.float32)})


def test_wrong_output_name(models):
    sess = ort.InferenceSession(models["mlp"])
    with pytest.raises(InvalidArgument, match="'zz' is not an output of the model"):
        sess.run(["zz"], {"x": np.zeros((1, 8), np.float32)})


def test_wrong_dtype_rank_shape(models):
    sess = ort.InferenceSession(models["mlp"])
    with pytest.raises(InvalidArgument, match="input 'x': expected element type float32, got float64"):
        sess.run(None, {"x": np.zeros((1, 8))})
    with pytest.raises(InvalidArgument, match=r"input 'x': expected rank 2 \(shape \[\?,8\]\), got shape \[8\]"):
        sess.run(None, {"x": np.zeros(8, np.float32)})
    with pytest.raises(InvalidArgument, match=r"input 'x': dimension 1 must be 8, got shape \[1,7\]"):
        sess.run(None, {"x": np.zeros((1, 7), np.float32)})
    with pytest.raises(InvalidArgument, match=r"^\[ONNXRuntimeError\] : 2 : INVALID_ARGUMENT : "):
        sess.run(None, {"x": np.zeros((1, 7), np.float32)})
    with pytest.raises(InvalidArgument, match="numpy dtype .* has no ONNX element type"):
        sess.run(None, {"x": np.zeros((1, 8), "datetime64[s]")})


def test_missing_file_and_corrupt_bytes(models, tmp_path):
    with pytest.raises(NoSuchFile, match="no-such-model.onnx"):
        ort.InferenceSession(str(tmp_path / "no-such-model.onnx"))
    data = bytearray(open(models["mlp"], "rb").read())
    with pytest.raises(InvalidProtobuf):
        ort.InferenceSession(bytes(data[: len(data) // 2]))
    data[3] ^= 0xFF
    data[10] ^= 0xFF
    with pytest.raises((InvalidModel, InvalidArgument, NotImplemented, Fail)):
        ort.InferenceSession(bytes(data))
    with pytest.raises(InvalidGraph):
        ort.InferenceSession(b"\x08\x07\x12\x00")  # ir_version 7, empty producer, no graph
    assert issubclass(InvalidModel, InvalidProtobuf) and issubclass(InvalidModel, InvalidGraph)


def test_exception_module_path():
    import onyx.capi.onnxruntime_pybind11_state as C
    for name in ["Fail", "InvalidArgument", "NoSuchFile", "NoModel", "InvalidGraph", "RuntimeException",
                 "NotImplemented", "InvalidProtobuf", "ModelLoaded", "EPFail", "EngineError"]:
        cls = getattr(C, name)
        assert issubclass(cls, Exception) and cls.__module__ == "onyx.capi.onnxruntime_pybind11_state"


def test_session_options_type_checked(models):
    with pytest.raises(TypeError, match="sess_options must be a SessionOptions"):
        ort.InferenceSession(models["mlp"], {"a": 1})


def test_end_profiling(models, tmp_path):
    so = ort.SessionOptions()
    so.enable_profiling = True
    so.profile_file_prefix = str(tmp_path / "prof")
    sess = ort.InferenceSession(models["mlp"], so)
    sess.run(None, {"x": np.ones((1, 8), np.float32)})
    path = sess.end_profiling()
    assert os.path.basename(path).startswith("prof_") and path.endswith(".json")
    import json
    events = json.load(open(path))
    assert any(e.get("name") == "model_run" for e in events)
