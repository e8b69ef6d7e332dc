#!/usr/bin/python3
"""Hostile models for the hardening tests (issue 10), written to tests/data/harden/.
Run with Debian's /usr/bin/python3 (python3-onnx); the outputs are committed and re-running
gives the same bytes. Each function says which defect its model reproduces."""
import os
import numpy as np
import onnx
from onnx import helper, TensorProto, numpy_helper

here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "harden")
os.makedirs(here, exist_ok=True)


def save(graph, name, opset=17, domains=()):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)] +
                          [helper.make_opsetid(d, v) for d, v in domains], producer_name="onyx-tests")
    m.ir_version = 8
    with open(os.path.join(here, name), "wb") as f:
        f.write(m.SerializeToString())


def loop_forever():
    """A Loop with no trip count whose body keeps cond true: x += 1 for ever (the run must be
    cancellable), and the same with a body of no nodes (cond and x passed straight through)."""
    one = numpy_helper.from_array(np.array(1.0, np.float32), "one")
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Add", ["x_in", "one"], ["x_out"])], "body",
        [helper.make_tensor_value_info("iter", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x_in", TensorProto.FLOAT, [])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x_out", TensorProto.FLOAT, [])], initializer=[one])
    empty = helper.make_graph(
        [], "body",
        [helper.make_tensor_value_info("iter", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x_in", TensorProto.FLOAT, [])],
        [helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x_in", TensorProto.FLOAT, [])])
    for b, name in ((body, "loop_forever.onnx"), (empty, "loop_forever_empty_body.onnx")):
        cond = numpy_helper.from_array(np.array(True), "cond")
        g = helper.make_graph([helper.make_node("Loop", ["", "cond", "x"], ["y"], body=b)], "loop_forever",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])], initializer=[cond])
        save(g, name)


if __name__ == "__main__":
    loop_forever()
