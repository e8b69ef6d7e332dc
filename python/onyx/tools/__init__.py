"""Model tools (as onnxconverter-common and onnxruntime.transformers offer them)."""
from .float16 import convert_float_to_float16

__all__ = ["convert_float_to_float16"]
