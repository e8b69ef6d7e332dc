"""Models for the tests, built with Debian's python3-onnx into a temporary folder."""
import os

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper, save

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(REPO, "tests", "data")


def _save(graph, path, opset=17, **kw):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], **kw)
    model.ir_version = 8
    save(model, path)
    return str(path)


@pytest.fixture(scope="session")
def models(tmp_path_factory):
    d = tmp_path_factory.mktemp("models")
    rng = np.random.default_rng(0)
    out = {}

    # mlp: x[batch, 8] -> MatMul(8x16) + b -> Relu -> MatMul(16x4) -> y[batch, 4]
    w1 = numpy_helper.from_array(rng.standard_normal((8, 16)).astype(np.float32), "w1")
    b1 = numpy_helper.from_array(rng.standard_normal(16).astype(np.float32), "b1")
    w2 = numpy_helper.from_array(rng.standard_normal((16, 4)).astype(np.float32), "w2")
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w1"], ["h"]), helper.make_node("Add", ["h", "b1"], ["hb"]),
         helper.make_node("Relu", ["hb"], ["r"]), helper.make_node("MatMul", ["r", "w2"], ["y"])],
        "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])], [w1, b1, w2])
    out["mlp"] = _save(g, d / "mlp.onnx", producer_name="onyx-py-tests")
    out["mlp_weights"] = (numpy_helper.to_array(w1), numpy_helper.to_array(b1), numpy_helper.to_array(w2))

    # identity for each numpy dtype onnxruntime maps (x_T -> y_T)
    types = {"bool": TensorProto.BOOL, "int8": TensorProto.INT8, "uint8": TensorProto.UINT8,
             "int16": TensorProto.INT16, "uint16": TensorProto.UINT16, "int32": TensorProto.INT32,
             "uint32": TensorProto.UINT32, "int64": TensorProto.INT64, "uint64": TensorProto.UINT64,
             "float16": TensorProto.FLOAT16, "float32": TensorProto.FLOAT, "float64": TensorProto.DOUBLE,
             "string": TensorProto.STRING}
    nodes = [helper.make_node("Identity", [f"x_{t}"], [f"y_{t}"]) for t in types]
    g = helper.make_graph(nodes, "identities",
                          [helper.make_tensor_value_info(f"x_{t}", e, None) for t, e in types.items()],
                          [helper.make_tensor_value_info(f"y_{t}", e, None) for t, e in types.items()])
    out["identities"] = _save(g, d / "identities.onnx")
    out["identity_types"] = list(types)

    # negate: y = Neg(x) for float32, to see outputs computed from inputs read in place
    g = helper.make_graph([helper.make_node("Neg", ["x"], ["y"])], "neg",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    out["neg"] = _save(g, d / "neg.onnx")

    # sequence: seq(tensor(float)) in -> its length and the concatenation; a sequence out
    g = helper.make_graph(
        [helper.make_node("SequenceLength", ["s"], ["n"]),
         helper.make_node("ConcatFromSequence", ["s"], ["c"], axis=0),
         helper.make_node("SplitToSequence", ["c"], ["parts"], axis=0, keepdims=1)],
        "seq", [helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("n", TensorProto.INT64, []),
         helper.make_tensor_value_info("c", TensorProto.FLOAT, None),
         helper.make_tensor_sequence_value_info("parts", TensorProto.FLOAT, None)])
    out["seq"] = _save(g, d / "seq.onnx")

    # optional: optional(tensor(float)) in -> OptionalHasElement, and an optional out
    opt_t = helper.make_optional_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, None))
    g = helper.make_graph(
        [helper.make_node("OptionalHasElement", ["o"], ["has"]), helper.make_node("Identity", ["o"], ["o2"])],
        "opt", [helper.make_value_info("o", opt_t)],
        [helper.make_tensor_value_info("has", TensorProto.BOOL, []), helper.make_value_info("o2", opt_t)])
    out["optional"] = _save(g, d / "optional.onnx", opset=18)

    # a long loop for terminate: 10^9 iterations of an Add
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]), helper.make_node("Add", ["v_in", "one"], ["v_out"])],
        "body", [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                 helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
                 helper.make_tensor_value_info("v_in", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_out", TensorProto.FLOAT, [1])],
        [numpy_helper.from_array(np.ones(1, np.float32), "one")])
    g = helper.make_graph(
        [helper.make_node("Loop", ["trip", "cond", "v0"], ["v"], body=body)], "loop",
        [helper.make_tensor_value_info("v0", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("v", TensorProto.FLOAT, [1])],
        [numpy_helper.from_array(np.array(10**9, np.int64), "trip"),
         numpy_helper.from_array(np.array(True), "cond")])
    out["loop"] = _save(g, d / "loop.onnx")

    out["session_info"] = os.path.join(DATA, "session_info.onnx")
    out["dictvectorizer"] = os.path.join(DATA, "ml_dictvectorizer.onnx")
    out["digits"] = os.path.join(REPO, "models", "digits.onnx")
    return out
