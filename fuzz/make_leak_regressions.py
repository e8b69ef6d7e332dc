#!/usr/bin/python3
"""Models for fuzz/regressions/ that run error paths which once leaked (found by the error-path
audit of stop 26). Each is named after the operator and the path; scripts/fuzz.sh replays every
file of fuzz/regressions/ first, so `make fuzz && build-fuzz/fuzz_load_run fuzz/regressions/FILE`
reports the leak on the old code and nothing on the fixed one. Run with Debian's /usr/bin/python3
(python3-onnx); re-running gives the same bytes."""
import os
import numpy as np
from onnx import helper, TensorProto, numpy_helper

here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "regressions")


def save(name, nodes, inputs, outputs, inits, ms=False):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=inits)
    ops = [helper.make_opsetid("", 17)] + ([helper.make_opsetid("com.microsoft", 1)] if ms else [])
    m = helper.make_model(g, opset_imports=ops, producer_name="onyx-fuzz")
    m.ir_version = 8
    with open(os.path.join(here, name + ".onnx"), "wb") as f:
        f.write(m.SerializeToString())


def dynamic_quantize_matmul():
    """DynamicQuantizeMatMul with a constant B that its init cannot pack (rank 3; a zero point of
    2 values for N = 3): init dropped check_b's error status without freeing it."""
    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    s = numpy_helper.from_array(np.array([0.5], np.float32), "s")
    b3 = numpy_helper.from_array(np.ones((1, 4, 3), np.int8), "b")
    save("dynamicquantizematmul_const_b_rank3",
         [helper.make_node("DynamicQuantizeMatMul", ["a", "b", "s"], ["y"], domain="com.microsoft")],
         [a], [y], [b3, s], ms=True)
    b = numpy_helper.from_array(np.ones((4, 3), np.int8), "b")
    zb = numpy_helper.from_array(np.array([1, 2], np.int8), "zb")
    save("dynamicquantizematmul_const_b_zero_point_count",
         [helper.make_node("DynamicQuantizeMatMul", ["a", "b", "s", "zb"], ["y"], domain="com.microsoft")],
         [a], [y], [b, s, zb], ms=True)


if __name__ == "__main__":
    dynamic_quantize_matmul()
