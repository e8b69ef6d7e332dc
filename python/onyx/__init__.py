"""onyx: an inference runtime for ONNX models with onnxruntime's Python API.

    import onyx as ort
    sess = ort.InferenceSession("model.onnx", providers=["CPUExecutionProvider"])
    outputs = sess.run(None, {"input": batch})
"""
from . import _onyx
from .options import ExecutionMode, ExecutionOrder, GraphOptimizationLevel, SessionOptions
from .session import (IOBinding, InferenceSession, ModelMetadata, NodeArg, OrtValue, RunOptions, Session,
                      get_all_providers, get_available_providers)
from .capi import onnxruntime_pybind11_state  # noqa: F401  (the exceptions' module)
from .sparse import OrtSparseFormat, SparseTensor

__version__ = _onyx.version


def get_version_string():
    return __version__


def get_device():
    """The device this build computes on ("CPU", or "GPU" with a GPU provider)."""
    return "GPU" if any(p != "CPUExecutionProvider" for p in get_available_providers()) else "CPU"


def set_default_logger_severity(severity):
    """Severity shown by default: 0 verbose, 1 info, 2 warning, 3 error, 4 fatal."""
    _onyx.set_default_logger_severity(severity)


def set_default_logger_verbosity(verbosity):
    """Accepted for compatibility (onyx has no verbose levels below 'verbose')."""
    if not isinstance(verbosity, int):
        raise TypeError("verbosity must be an int")


__all__ = [
    "ExecutionMode", "ExecutionOrder", "GraphOptimizationLevel", "IOBinding", "InferenceSession", "ModelMetadata",
    "NodeArg", "OrtSparseFormat", "OrtValue", "SparseTensor", "RunOptions", "Session", "SessionOptions", "get_all_providers",
    "get_available_providers", "get_device", "get_version_string", "set_default_logger_severity",
    "set_default_logger_verbosity", "__version__",
]
