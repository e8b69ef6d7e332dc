"""onyx.quantization: onnxruntime.quantization's names over `onyx quantize`."""
import os

import numpy as np
import onnx
import pytest

import onyx
from onyx.quantization import (CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType,
                               quant_pre_process, quantize_dynamic, quantize_static)
from onyx.quantization import QuantizationError


def ops(path):
    return [n.op_type for n in onnx.load(path).graph.node]


def run(path, x):
    return onyx.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]


def cosine(a, b):
    a, b = a.ravel().astype(np.float64), b.ravel().astype(np.float64)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


@pytest.mark.parametrize("weight_type,per_channel", [(QuantType.QInt8, False), (QuantType.QInt8, True),
                                                     (QuantType.QUInt8, False)])
def test_quantize_dynamic(models, tmp_path, weight_type, per_channel):
    out = str(tmp_path / "q.onnx")
    quantize_dynamic(models["mlp"], out, weight_type=weight_type, per_channel=per_channel)
    kinds = ops(out)
    assert kinds.count("MatMulInteger") == 2 and "MatMul" not in kinds
    assert kinds.count("DynamicQuantizeLinear") == 2
    x = np.random.default_rng(1).standard_normal((5, 8)).astype(np.float32)
    assert cosine(run(models["mlp"], x), run(out, x)) >= 0.99


def test_quantize_dynamic_selection(models, tmp_path):
    out = str(tmp_path / "q.onnx")
    quantize_dynamic(models["mlp"], out, op_types_to_quantize=["MatMul"])
    assert ops(out).count("MatMulInteger") == 2
    # a ModelProto works as input too
    quantize_dynamic(onnx.load(models["mlp"]), out)
    assert ops(out).count("MatMulInteger") == 2


def test_refusals_write_nothing(models, tmp_path):
    out = tmp_path / "q.onnx"
    with pytest.raises(QuantizationError, match="unknown op type 'Conv'"):
        quantize_dynamic(models["mlp"], str(out), op_types_to_quantize=["Conv"])
    with pytest.raises(QuantizationError, match="missing.onnx"):
        quantize_dynamic(str(tmp_path / "missing.onnx"), str(out))
    with pytest.raises(QuantizationError, match="is the input model"):
        quantize_dynamic(models["mlp"], models["mlp"])
    with pytest.raises(QuantizationError, match="no node named 'nope'"):
        quantize_dynamic(models["mlp"], str(out), nodes_to_exclude=["nope"])
    with pytest.raises(ValueError, match="extra option 'Frobnicate'"):
        quantize_dynamic(models["mlp"], str(out), extra_options={"Frobnicate": 1})
    assert not out.exists()


class Reader(CalibrationDataReader):
    def __init__(self, n):
        rng = np.random.default_rng(2)
        self.batches = iter([{"x": rng.standard_normal((2, 8)).astype(np.float32)} for _ in range(n)])

    def get_next(self):
        return next(self.batches, None)


class WrongNames(CalibrationDataReader):
    def __init__(self):
        self.batches = iter([{"nope": np.zeros((2, 8), np.float32)}])

    def get_next(self):
        return next(self.batches, None)


def test_quantize_static(models, tmp_path):
    out = tmp_path / "s.onnx"
    quantize_static(models["mlp"], str(out), Reader(8), quant_format=QuantFormat.QDQ,
                    calibrate_method=CalibrationMethod.MinMax, per_channel=True)
    kinds = ops(str(out))
    assert kinds.count("MatMul") == 2 and "QuantizeLinear" in kinds and kinds.count("DequantizeLinear") >= 4
    x = np.random.default_rng(3).standard_normal((4, 8)).astype(np.float32)
    assert cosine(run(models["mlp"], x), run(str(out), x)) >= 0.99
    out.unlink()
    with pytest.raises(NotImplementedError, match="entropy"):
        quantize_static(models["mlp"], str(out), Reader(2), calibrate_method=CalibrationMethod.Entropy)
    with pytest.raises(QuantizationError, match="'nope' is not an input"):
        quantize_static(models["mlp"], str(out), WrongNames())
    assert not out.exists()
    with pytest.raises(ValueError, match="no batch"):
        quantize_static(models["mlp"], str(out), Reader(0))


def test_quant_pre_process(models, tmp_path):
    out = str(tmp_path / "pre.onnx")
    quant_pre_process(models["mlp"], out)
    x = np.ones((3, 8), np.float32)
    np.testing.assert_allclose(run(out, x), run(models["mlp"], x), rtol=1e-5)
    assert str(QuantType.QInt8) == "QInt8" and os.path.getsize(out) > 0
