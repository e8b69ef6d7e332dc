"""onnxruntime's exception classes under the module path onnxruntime uses, so
`except onnxruntime.capi.onnxruntime_pybind11_state.Fail` keeps working with
`import onyx as onnxruntime`. InvalidModel (onyx's code for a malformed file
or an inconsistent graph) is a subclass of both InvalidProtobuf and
InvalidGraph."""
from .._onyx import (EngineError, EPFail, Fail, InvalidArgument, InvalidGraph, InvalidModel, InvalidProtobuf,
                     ModelLoaded, NoModel, NoSuchFile, NotImplemented, RuntimeException)

__all__ = ["EngineError", "EPFail", "Fail", "InvalidArgument", "InvalidGraph", "InvalidModel", "InvalidProtobuf",
           "ModelLoaded", "NoModel", "NoSuchFile", "NotImplemented", "RuntimeException"]
