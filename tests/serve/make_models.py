"""Models for onyx serve's tests, generated into a folder (nothing large is
committed). Run with Debian's python (numpy + onnx):

    /usr/bin/python3 tests/serve/make_models.py OUTDIR

  mlp.onnx   784-128-64-10 MLP with seeded weights: the shape of the public
             benchmark MLP (/var/tmp/onnx-bench/public/mlp.onnx), used when
             that one is absent (CI)
  wide.onnx  1024-2048-2048-10 MLP (~25 MB): big enough that a request's
             compute outweighs its HTTP cost, so batching shows up in throughput
  echo.onnx  y = 2 * x over float [batch, width], both dimensions dynamic:
             requests of different widths must never be merged
  strings.onnx  BYTES (ONNX string) in and out: same = Identity(text),
             twice = Concat(text, text) along axis 1, text [batch, n]
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def mlp(sizes, seed, input_name="input", output_name="logits"):
    rng = np.random.default_rng(seed)
    nodes, inits = [], []
    x = input_name
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        w = (rng.standard_normal((b, a)) / np.sqrt(a)).astype(np.float32)
        bias = (rng.standard_normal(b) * 0.1).astype(np.float32)
        inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(bias, f"b{i}")]
        y = output_name if i == len(sizes) - 2 else f"h{i}"
        gemm_out = y if i == len(sizes) - 2 else f"g{i}"
        nodes.append(helper.make_node("Gemm", [x, f"w{i}", f"b{i}"], [gemm_out], transB=1))
        if i != len(sizes) - 2:
            nodes.append(helper.make_node("Relu", [gemm_out], [y]))
        x = y
    graph = helper.make_graph(
        nodes, "mlp",
        [helper.make_tensor_value_info(input_name, TensorProto.FLOAT, ["batch", sizes[0]])],
        [helper.make_tensor_value_info(output_name, TensorProto.FLOAT, ["batch", sizes[-1]])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="onyx-tests")
    model.ir_version = 8
    return model


def echo():
    two = numpy_helper.from_array(np.array(2.0, dtype=np.float32), "two")
    graph = helper.make_graph(
        [helper.make_node("Mul", ["x", "two"], ["y"])], "echo",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "width"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "width"])], [two])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="onyx-tests")
    model.ir_version = 8
    return model


def strings():
    graph = helper.make_graph(
        [helper.make_node("Identity", ["text"], ["same"]),
         helper.make_node("Concat", ["text", "text"], ["twice"], axis=1)], "strings",
        [helper.make_tensor_value_info("text", TensorProto.STRING, ["batch", "n"])],
        [helper.make_tensor_value_info("same", TensorProto.STRING, ["batch", "n"]),
         helper.make_tensor_value_info("twice", TensorProto.STRING, ["batch", "twice_n"])], [])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="onyx-tests")
    model.ir_version = 8
    return model


def main(out):
    onnx.save(mlp([784, 128, 64, 10], 1), f"{out}/mlp.onnx")
    onnx.save(mlp([1024, 2048, 2048, 10], 2), f"{out}/wide.onnx")
    onnx.save(echo(), f"{out}/echo.onnx")
    onnx.save(strings(), f"{out}/strings.onnx")


if __name__ == "__main__":
    main(sys.argv[1])
