"""onyx.tools.convert_float_to_float16: float16 / bfloat16 conversion through `onyx convert`."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto

import onyx
from onyx.tools import convert_float_to_float16


def run(model, x):
    sess = onyx.InferenceSession(model.SerializeToString() if hasattr(model, "SerializeToString") else model)
    return sess.run(None, {"x": x})[0]


def init_types(model):
    return {i.name: i.data_type for i in model.graph.initializer}


def test_keep_io_types(models):
    x = np.random.default_rng(1).standard_normal((3, 8)).astype(np.float32)
    ref = run(models["mlp"], x)
    m16 = convert_float_to_float16(onnx.load(models["mlp"]), keep_io_types=True)
    assert set(init_types(m16).values()) == {TensorProto.FLOAT16}
    assert m16.graph.input[0].type.tensor_type.elem_type == TensorProto.FLOAT
    assert m16.graph.output[0].type.tensor_type.elem_type == TensorProto.FLOAT
    got = run(m16, x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, ref, rtol=1e-2, atol=1e-2)


def test_float16_io_and_path_input(models):
    m16 = convert_float_to_float16(models["mlp"])
    assert m16.graph.input[0].type.tensor_type.elem_type == TensorProto.FLOAT16
    x = np.ones((2, 8), np.float16)
    assert run(m16, x).dtype == np.float16


def test_block_lists(models):
    m = convert_float_to_float16(onnx.load(models["mlp"]), keep_io_types=True, op_block_list=["MatMul"])
    assert init_types(m)["w1"] == TensorProto.FLOAT and init_types(m)["b1"] == TensorProto.FLOAT16
    assert any(n.op_type == "Cast" for n in m.graph.node)
    x = np.ones((2, 8), np.float32)
    np.testing.assert_allclose(run(m, x), run(models["mlp"], x), rtol=1e-2, atol=1e-2)
    named = onnx.load(models["mlp"])
    for i, n in enumerate(named.graph.node):
        n.name = f"n{i}"
    m = convert_float_to_float16(named, keep_io_types=True, node_block_list=["n0"])
    assert init_types(m)["w1"] == TensorProto.FLOAT and init_types(m)["w2"] == TensorProto.FLOAT16


def test_bfloat16(models):
    m = convert_float_to_float16(onnx.load(models["mlp"]), keep_io_types=True, to="bfloat16")
    assert set(init_types(m).values()) == {TensorProto.BFLOAT16}
    x = np.ones((2, 8), np.float32)
    np.testing.assert_allclose(run(m, x), run(models["mlp"], x), rtol=3e-2, atol=3e-2)


def test_refusals(models, tmp_path):
    with pytest.raises(ValueError, match="NotAnOp"):
        convert_float_to_float16(onnx.load(models["mlp"]), op_block_list=["NotAnOp"])
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x0a\xff\xff\xff\xff\x0fjunk")
    with pytest.raises(ValueError, match="bad.onnx"):
        convert_float_to_float16(str(bad))
    with pytest.raises(ValueError):
        convert_float_to_float16(onnx.load(models["mlp"]), to="float8")
