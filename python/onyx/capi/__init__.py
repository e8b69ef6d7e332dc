"""Mirrors onnxruntime.capi: `onyx.capi.onnxruntime_pybind11_state` holds the exceptions."""
