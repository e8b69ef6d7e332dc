"""onyx.quantization: onnxruntime.quantization's entry points over `onyx quantize`.

    from onyx.quantization import quantize_dynamic, QuantType
    quantize_dynamic("model.onnx", "model.int8.onnx", weight_type=QuantType.QInt8)

The work is done by the C quantisation layer (src/quantize/, the same code as the `onyx quantize`
command), run in a child process (`python -m onyx quantize ...`) so that its error message can
be raised as an exception. Calibration data for quantize_static is written to .npz files, one per
batch the CalibrationDataReader yields. What the C layer does not implement yet (static mode)
raises NotImplementedError with its message; nothing is written then.
"""
import enum
import os
import subprocess
import sys
import tempfile

__all__ = ["CalibrationDataReader", "CalibrationMethod", "QuantFormat", "QuantType", "quant_pre_process",
           "quantize_dynamic", "quantize_static"]


class QuantType(enum.Enum):
    QInt8 = 0
    QUInt8 = 1

    def __str__(self):
        return self.name


class QuantFormat(enum.Enum):
    QOperator = 0
    QDQ = 1

    def __str__(self):
        return self.name


class CalibrationMethod(enum.Enum):
    MinMax = 0
    Entropy = 1
    Percentile = 2


class CalibrationDataReader:
    """Yields calibration inputs: get_next() returns {input name: numpy array} or None at the end."""

    def get_next(self):
        raise NotImplementedError("CalibrationDataReader.get_next must be implemented by a subclass")

    def __iter__(self):
        return self

    def __next__(self):
        item = self.get_next()
        if item is None:
            raise StopIteration
        return item

    def rewind(self):
        """Start again from the first batch (readers that can, override this)."""


class QuantizationError(RuntimeError):
    """`onyx quantize` refused the request or failed; the message says why."""


_TYPES = {QuantType.QInt8: "int8", QuantType.QUInt8: "uint8"}
_METHODS = {CalibrationMethod.MinMax: "minmax", CalibrationMethod.Entropy: "entropy",
            CalibrationMethod.Percentile: "percentile"}
_FORMATS = {QuantFormat.QDQ: "qdq", QuantFormat.QOperator: "qoperator"}
# extra_options of onnxruntime's quantiser that onyx's choices already match (or that only
# concern its own implementation); any other key is refused rather than silently ignored
_EXTRA_ACCEPTED = {"MatMulConstBOnly": True, "WeightSymmetric": None, "EnableSubgraph": False,
                   "ForceQuantizeNoInputCheck": None, "DefaultTensorType": None}


def _path(model, tmp, name):
    """A file path for a model given as a path or an onnx.ModelProto."""
    if isinstance(model, (str, bytes, os.PathLike)):
        return os.fsdecode(model)
    if hasattr(model, "SerializeToString"):
        p = os.path.join(tmp, name)
        with open(p, "wb") as f:
            f.write(model.SerializeToString())
        return p
    raise TypeError(f"model must be a path or an onnx.ModelProto, not {type(model).__name__}")


def _names(flag, values):
    if not values:
        return []
    if isinstance(values, str):
        values = [values]
    return [flag, ",".join(str(v) for v in values)]


def _qtype(value, what):
    if isinstance(value, str):
        value = QuantType[value]
    if value not in _TYPES:
        raise ValueError(f"{what} {value} is not supported (QInt8 or QUInt8)")
    return _TYPES[value]


def _check_extra(extra_options):
    for key, value in (extra_options or {}).items():
        if key not in _EXTRA_ACCEPTED:
            raise ValueError(f"extra option '{key}' is not supported by onyx.quantization")
        want = _EXTRA_ACCEPTED[key]
        if want is not None and value != want:
            raise ValueError(f"extra option {key}={value!r} is not supported (onyx uses {want!r})")


def _run(args):
    """Run `onyx quantize ARGS` in a child process; raise its error message."""
    r = subprocess.run([sys.executable, "-m", "onyx", "quantize", *args], capture_output=True, text=True)
    if r.returncode == 0:
        return r.stdout
    msg = r.stderr.strip().replace("onyx: error: ", "")
    if "not implemented" in msg:
        raise NotImplementedError(msg)
    raise QuantizationError(msg or f"onyx quantize exited with status {r.returncode}")


def quantize_dynamic(model_input, model_output, weight_type=QuantType.QInt8, per_channel=False, reduce_range=False,
                     op_types_to_quantize=None, nodes_to_quantize=None, nodes_to_exclude=None,
                     use_external_data_format=False, extra_options=None):
    """Weights to 8 bits, activations quantised at run time (MatMul -> DynamicQuantizeLinear +
    MatMulInteger), as onnxruntime.quantization.quantize_dynamic."""
    _check_extra(extra_options)
    with tempfile.TemporaryDirectory(prefix="onyx-quant-") as tmp:
        args = [_path(model_input, tmp, "input.onnx"), os.fsdecode(model_output), "--mode", "dynamic",
                "--weight-type", _qtype(weight_type, "weight_type")]
        args += ["--per-channel"] if per_channel else []
        args += ["--reduce-range"] if reduce_range else []
        args += _names("--op-types", op_types_to_quantize) + _names("--nodes", nodes_to_quantize)
        args += _names("--exclude-nodes", nodes_to_exclude)
        _run(args)


def quantize_static(model_input, model_output, calibration_data_reader, quant_format=QuantFormat.QDQ,
                    op_types_to_quantize=None, per_channel=False, reduce_range=False,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8, nodes_to_quantize=None,
                    nodes_to_exclude=None, use_external_data_format=False,
                    calibrate_method=CalibrationMethod.MinMax, extra_options=None):
    """Weights and activations to 8 bits with activation ranges calibrated on the reader's
    batches, as onnxruntime.quantization.quantize_static."""
    import numpy as np

    _check_extra(extra_options)
    if calibrate_method not in _METHODS:
        raise ValueError(f"calibrate_method {calibrate_method} is not supported")
    with tempfile.TemporaryDirectory(prefix="onyx-quant-") as tmp:
        calib = os.path.join(tmp, "calibration")
        os.mkdir(calib)
        count = 0
        for batch in iter(calibration_data_reader.get_next, None):
            np.savez(os.path.join(calib, f"batch_{count:05d}.npz"), **{k: np.asarray(v) for k, v in batch.items()})
            count += 1
        if count == 0:
            raise ValueError("the calibration data reader yielded no batch")
        args = [_path(model_input, tmp, "input.onnx"), os.fsdecode(model_output), "--mode", "static",
                "--calibration", calib, "--format", _FORMATS[quant_format], "--method", _METHODS[calibrate_method],
                "--weight-type", _qtype(weight_type, "weight_type"),
                "--activation-type", _qtype(activation_type, "activation_type")]
        args += ["--per-channel"] if per_channel else []
        args += ["--reduce-range"] if reduce_range else []
        args += _names("--op-types", op_types_to_quantize) + _names("--nodes", nodes_to_quantize)
        args += _names("--exclude-nodes", nodes_to_exclude)
        _run(args)


def quant_pre_process(input_model, output_model_path, skip_optimization=False, skip_onnx_shape=False,
                      skip_symbolic_shape=False, auto_merge=False, int_max=2**31 - 1, guess_output_rank=False,
                      verbose=0, save_as_external_data=False, all_tensors_to_one_file=False,
                      external_data_location=None, external_data_size_threshold=1024):
    """Prepare a model for quantisation: onyx's basic-level optimisation (constant folding,
    identity and dead-node removal) with the inferred shapes written into the file."""
    with tempfile.TemporaryDirectory(prefix="onyx-quant-") as tmp:
        level = "disabled" if skip_optimization else "basic"
        r = subprocess.run([sys.executable, "-m", "onyx", "optimize", _path(input_model, tmp, "input.onnx"),
                            os.fsdecode(output_model_path), "--level", level], capture_output=True, text=True)
        if r.returncode != 0:
            raise QuantizationError(r.stderr.strip().replace("onyx: error: ", ""))
