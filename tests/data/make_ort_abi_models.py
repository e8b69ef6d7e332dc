"""Models for the ONNX Runtime ABI tests (tests/ort_abi/): run with Debian's
python3 (onnx installed) from the repository root; writes tests/data/ort_abi_*.onnx.

ort_abi_types.onnx: one Identity per element type (inputs x_<type>, outputs
  y_<type>), a symbolic batch dimension on x_float, and a sequence output
  (SequenceConstruct of x_float twice).
ort_abi_custom.onnx: two operators of the custom domain "test.onyx".
ort_abi_external.onnx: an initializer in an external file the tests give from memory.
"""
import onnx
from onnx import TensorProto, helper

TYPES = {
    "float": TensorProto.FLOAT, "uint8": TensorProto.UINT8, "int8": TensorProto.INT8,
    "uint16": TensorProto.UINT16, "int16": TensorProto.INT16, "int32": TensorProto.INT32,
    "int64": TensorProto.INT64, "string": TensorProto.STRING, "bool": TensorProto.BOOL,
    "float16": TensorProto.FLOAT16, "double": TensorProto.DOUBLE, "uint32": TensorProto.UINT32,
    "uint64": TensorProto.UINT64, "bfloat16": TensorProto.BFLOAT16,
}


def types_model():
    inputs, outputs, nodes = [], [], []
    for name, t in TYPES.items():
        shape = ["batch", 3] if name == "float" else [2, 3]
        inputs.append(helper.make_tensor_value_info(f"x_{name}", t, shape))
        outputs.append(helper.make_tensor_value_info(f"y_{name}", t, shape))
        nodes.append(helper.make_node("Identity", [f"x_{name}"], [f"y_{name}"], name=f"id_{name}"))
    nodes.append(helper.make_node("SequenceConstruct", ["x_float", "x_float"], ["seq"]))
    outputs.append(helper.make_tensor_sequence_value_info("seq", TensorProto.FLOAT, None))
    graph = helper.make_graph(nodes, "ort_abi_types", inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="onyx-tests")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def custom_model():
    """S = ScaledAdd(A, B; alpha=0.5), R = RowSum(S; offset=3): the custom
    domain "test.onyx" of tests/ort_abi/custom_ops_lib.c."""
    # A and B have independent row counts, so a mismatch reaches the operator
    a = helper.make_tensor_value_info("A", TensorProto.FLOAT, ["n", 3])
    b = helper.make_tensor_value_info("B", TensorProto.FLOAT, ["m", 3])
    s = helper.make_tensor_value_info("S", TensorProto.FLOAT, ["n", 3])
    r = helper.make_tensor_value_info("R", TensorProto.FLOAT, ["n"])
    nodes = [
        helper.make_node("ScaledAdd", ["A", "B"], ["S"], name="scaled_add", domain="test.onyx", alpha=0.5),
        helper.make_node("RowSum", ["S"], ["R"], name="row_sum", domain="test.onyx", offset=3),
    ]
    graph = helper.make_graph(nodes, "ort_abi_custom", [a, b], [s, r])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("test.onyx", 1)])
    model.ir_version = 8
    return model


def external_model():
    """Y = X + W, W (4 floats) in the external file "ort_abi_weights.bin" at
    offset 8: a file that does not exist on disk, the tests hand it over
    from memory (AddExternalInitializersFromFilesInMemory)."""
    w = TensorProto()
    w.name = "W"
    w.data_type = TensorProto.FLOAT
    w.dims.extend([4])
    w.data_location = TensorProto.EXTERNAL
    for k, v in (("location", "ort_abi_weights.bin"), ("offset", "8"), ("length", "16")):
        e = w.external_data.add()
        e.key, e.value = k, v
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [4])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [4])
    graph = helper.make_graph([helper.make_node("Add", ["X", "W"], ["Y"])], "ort_abi_external", [x], [y],
                              initializer=[w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


if __name__ == "__main__":
    onnx.save(external_model(), "tests/data/ort_abi_external.onnx")
    onnx.save(types_model(), "tests/data/ort_abi_types.onnx")
    onnx.save(custom_model(), "tests/data/ort_abi_custom.onnx")
