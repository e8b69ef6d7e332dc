"""Models for the provider tests (tests/unit/test_providers.c): run with
/usr/bin/python3 tests/data/make_provider_models.py.

provider_mixed.onnx: x[2,3,4], y[4]
  a = Add(x, c)        device (example provider claims Add/Sub/Mul/Relu)
  r = Relu(a)          device; also a graph output (copied back once)
  m = Mul(r, y)        device; reads x's sibling input y
  s = Softmax(m)       CPU: the example provider does not claim it
  b = Sub(s, x)        device again: s crosses to the device, x is reused
  z = Add(b, r)        device
  shape path: Shape(x) -> Gather(idx) -> Unsqueeze -> Concat -> Reshape(z, ...) -> out
"""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

c = numpy_helper.from_array(np.linspace(-1, 1, 4).astype(np.float32), "c")
idx = numpy_helper.from_array(np.array(0, dtype=np.int64), "idx")
minus1 = numpy_helper.from_array(np.array([-1], dtype=np.int64), "minus1")
axes = numpy_helper.from_array(np.array([0], dtype=np.int64), "axes")
nodes = [
    helper.make_node("Add", ["x", "c"], ["a"], name="add0"),
    helper.make_node("Relu", ["a"], ["r"], name="relu0"),
    helper.make_node("Mul", ["r", "y"], ["m"], name="mul0"),
    helper.make_node("Softmax", ["m"], ["s"], name="softmax0", axis=-1),
    helper.make_node("Sub", ["s", "x"], ["b"], name="sub0"),
    helper.make_node("Add", ["b", "r"], ["z"], name="add1"),
    helper.make_node("Shape", ["x"], ["xs"], name="shape0"),
    helper.make_node("Gather", ["xs", "idx"], ["n0"], name="gather0", axis=0),
    helper.make_node("Unsqueeze", ["n0", "axes"], ["n0v"], name="unsq0"),
    helper.make_node("Concat", ["n0v", "minus1"], ["newshape"], name="concat0", axis=0),
    helper.make_node("Reshape", ["z", "newshape"], ["out"], name="reshape0"),
]
graph = helper.make_graph(
    nodes, "provider_mixed",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4]),
     helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
    [helper.make_tensor_value_info("out", TensorProto.FLOAT, [2, 12]),
     helper.make_tensor_value_info("r", TensorProto.FLOAT, [2, 3, 4])],
    [c, idx, minus1, axes])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, "tests/data/provider_mixed.onnx")

# provider_chain.onnx: four claimed nodes in a row, then a Softmax the
# provider does not claim: in groups mode the four become one compiled node.
nodes = [
    helper.make_node("Add", ["x", "c"], ["a"], name="add0"),
    helper.make_node("Relu", ["a"], ["r"], name="relu0"),
    helper.make_node("Mul", ["r", "y"], ["m"], name="mul0"),
    helper.make_node("Sub", ["m", "x"], ["b"], name="sub0"),
    helper.make_node("Softmax", ["b"], ["out"], name="softmax0", axis=-1),
]
graph = helper.make_graph(
    nodes, "provider_chain",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4]),
     helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
    [helper.make_tensor_value_info("out", TensorProto.FLOAT, [2, 3, 4])],
    [c])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, "tests/data/provider_chain.onnx")

# provider_shape.onnx: x[n, 4] with a symbolic n, so Shape is not folded:
# Mul(Cast(Shape(x)), Cast(Shape(x))) is a shape computation and stays on the
# CPU although the example provider claims float Mul; Add(x, c) goes to it.
nodes = [
    helper.make_node("Add", ["x", "c"], ["y"], name="add0"),
    helper.make_node("Shape", ["x"], ["xs"], name="shape0"),
    helper.make_node("Cast", ["xs"], ["xf"], name="cast0", to=TensorProto.FLOAT),
    helper.make_node("Mul", ["xf", "xf"], ["sq"], name="mul_shape"),
]
graph = helper.make_graph(
    nodes, "provider_shape",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 4]),
     helper.make_tensor_value_info("sq", TensorProto.FLOAT, [2])],
    [c])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, "tests/data/provider_shape.onnx")
