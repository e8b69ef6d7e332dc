#!/usr/bin/python3
"""unaligned_weights.onnx for tests/unit/test_session.c: two initializers of over 64 KiB whose
raw_data sits at a file offset that is not a multiple of 4, so onyx borrows them misaligned
(ONYX_VALUE_UNALIGNED): `table` is read by a Gather (byte-wise: stays borrowed) and also by a
ReduceSum (float reads: the session must copy it), `w` by a MatMul only (copied, then packed).
Written as a conformance-style test folder (model.onnx, test_data_set_0/{input,output}_K.pb)
under tests/data/unaligned/, run by `onyx test` from ctest. Re-running gives the same bytes."""
import os
import numpy as np
import onnx
from onnx import helper, TensorProto, numpy_helper

here = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(5)
table = rng.standard_normal((80, 300)).astype(np.float32)
w = rng.standard_normal((300, 70)).astype(np.float32)


def build(pad_t, pad_w):
    inits = [numpy_helper.from_array(table, "table" + "_" * pad_t), numpy_helper.from_array(w, "w" + "_" * pad_w)]
    N = helper.make_node
    t, wn = inits[0].name, inits[1].name
    nodes = [N("Gather", [t, "ids"], ["rows"]), N("MatMul", ["rows", wn], ["y"]),
             N("ReduceSum", [t, "axes"], ["colsum"], keepdims=0)]
    inits.append(numpy_helper.from_array(np.array([0], np.int64), "axes"))
    g = helper.make_graph(nodes, "unaligned", [helper.make_tensor_value_info("ids", TensorProto.INT64, [5])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [5, 70]),
                           helper.make_tensor_value_info("colsum", TensorProto.FLOAT, [300])], initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="onyx-tests")
    m.ir_version = 8
    return m.SerializeToString()


def first_misaligned():
    for pad_t in range(8):
        for pad_w in range(8):
            data = build(pad_t, pad_w)
            offs = [data.find(table.tobytes()), data.find(w.tobytes())]
            if all(o > 0 and o % 4 for o in offs):
                return data, offs
    raise SystemExit("no padding gives misaligned raw_data")


data, offs = first_misaligned()
case = os.path.join(here, "unaligned", "test_unaligned_weights")
os.makedirs(os.path.join(case, "test_data_set_0"), exist_ok=True)
open(os.path.join(case, "model.onnx"), "wb").write(data)
ids = np.array([3, 0, 79, 41, 3], np.int64)
arrays = {"input_0": (ids, "ids"), "output_0": (table[ids] @ w, "y"), "output_1": (table.sum(axis=0), "colsum")}
for f, (a, name) in arrays.items():
    with open(os.path.join(case, "test_data_set_0", f + ".pb"), "wb") as out:
        out.write(numpy_helper.from_array(a, name).SerializeToString())
print("raw_data offsets", offs)
