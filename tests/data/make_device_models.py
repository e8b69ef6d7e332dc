"""Models for the device tests (tests/unit/test_devices.c, tests/cuda/test_cuda_binding.c): run with
/usr/bin/python3 tests/data/make_device_models.py.

provider_bodies.onnx: x[2,3,4], y[4], flag (bool scalar)
  v = Loop(3 iterations, carried v0 = x), body:
      a = Add(v_in, cb)     device (cb: the body's own constant, copied once)
      r = Relu(a)           device
      m = Mul(r, y)         device (y captured from the main graph)
      s = Softmax(m)        CPU: the example provider does not claim it
      v_out = Add(s, r)     device, copied back as the body's output
  t = If(flag): then Add(x, c), else Sub(x, c)   device inside each branch
                    (x and c are captured: each branch copies both in)
  out = Add(v, t)           device, copied back as the graph output
"""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
c = numpy_helper.from_array(np.linspace(-1, 1, 4).astype(np.float32), "c")
cb = numpy_helper.from_array(np.linspace(0.5, -0.5, 4).astype(np.float32), "cb")
trip = numpy_helper.from_array(np.array(3, dtype=np.int64), "trip")

body = helper.make_graph(
    [helper.make_node("Add", ["v_in", "cb"], ["a"], name="body_add"),
     helper.make_node("Relu", ["a"], ["r"], name="body_relu"),
     helper.make_node("Mul", ["r", "y"], ["m"], name="body_mul"),
     helper.make_node("Softmax", ["m"], ["s"], name="body_softmax", axis=-1),
     helper.make_node("Add", ["s", "r"], ["v_out"], name="body_add2"),
     helper.make_node("Identity", ["cond_in"], ["cond_out"], name="body_cond")],
    "loop_body",
    [helper.make_tensor_value_info("i", TensorProto.INT64, []),
     helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
     helper.make_tensor_value_info("v_in", F, [2, 3, 4])],
    [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
     helper.make_tensor_value_info("v_out", F, [2, 3, 4])],
    [cb])
then_g = helper.make_graph([helper.make_node("Add", ["x", "c"], ["t_then"], name="then_add")], "then_branch", [],
                           [helper.make_tensor_value_info("t_then", F, [2, 3, 4])])
else_g = helper.make_graph([helper.make_node("Sub", ["x", "c"], ["t_else"], name="else_sub")], "else_branch", [],
                           [helper.make_tensor_value_info("t_else", F, [2, 3, 4])])
nodes = [
    helper.make_node("Loop", ["trip", "", "x"], ["v"], name="loop0", body=body),
    helper.make_node("If", ["flag"], ["t"], name="if0", then_branch=then_g, else_branch=else_g),
    helper.make_node("Add", ["v", "t"], ["out"], name="add_out"),
]
graph = helper.make_graph(
    nodes, "provider_bodies",
    [helper.make_tensor_value_info("x", F, [2, 3, 4]),
     helper.make_tensor_value_info("y", F, [4]),
     helper.make_tensor_value_info("flag", TensorProto.BOOL, [])],
    [helper.make_tensor_value_info("out", F, [2, 3, 4])],
    [c, trip],
    value_info=[helper.make_tensor_value_info("v", F, [2, 3, 4]), helper.make_tensor_value_info("t", F, [2, 3, 4])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, "tests/data/provider_bodies.onnx")

# provider_device_only.onnx: x[2,3,4], y[4]; every node on the example
# device: with x, y and out bound in device memory a run copies nothing.
nodes = [
    helper.make_node("Add", ["x", "c"], ["a"], name="add0"),
    helper.make_node("Relu", ["a"], ["r"], name="relu0"),
    helper.make_node("Mul", ["r", "y"], ["out"], name="mul0"),
]
graph = helper.make_graph(
    nodes, "provider_device_only",
    [helper.make_tensor_value_info("x", F, [2, 3, 4]),
     helper.make_tensor_value_info("y", F, [4])],
    [helper.make_tensor_value_info("out", F, [2, 3, 4])],
    [c])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, "tests/data/provider_device_only.onnx")

# provider_half.onnx: float16 end to end (the CUDA provider's float16 kernels):
# x16[2,3,4], y16[4]: Relu(Add(x, c)) * y, then MatMul by w[4,5], Cast to float
H = TensorProto.FLOAT16
c16 = numpy_helper.from_array(np.linspace(-1, 1, 4).astype(np.float16), "c16")
w16 = numpy_helper.from_array((np.arange(20).reshape(4, 5) / 10 - 1).astype(np.float16), "w16")
nodes = [
    helper.make_node("Add", ["x", "c16"], ["a"], name="add0"),
    helper.make_node("Relu", ["a"], ["r"], name="relu0"),
    helper.make_node("Mul", ["r", "y"], ["m"], name="mul0"),
    helper.make_node("MatMul", ["m", "w16"], ["out16"], name="matmul0"),
    helper.make_node("Cast", ["out16"], ["out"], name="cast0", to=TensorProto.FLOAT),
]
graph = helper.make_graph(
    nodes, "provider_half",
    [helper.make_tensor_value_info("x", H, [2, 3, 4]),
     helper.make_tensor_value_info("y", H, [4])],
    [helper.make_tensor_value_info("out", F, [2, 3, 5])],
    [c16, w16])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, "tests/data/provider_half.onnx")
