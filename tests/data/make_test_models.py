#!/usr/bin/python3
"""Small hand-built models for the unit tests (run with Debian's /usr/bin/python3,
which has python3-onnx). The outputs are committed; re-running gives the same bytes."""
import os
import numpy as np
import onnx
from onnx import helper, TensorProto, numpy_helper

here = os.path.dirname(os.path.abspath(__file__))


def save(model, name):
    onnx.save(model, os.path.join(here, name))


def chain():
    """x[1,4096] -> 12 x (Relu, Neg) -> y: a long chain whose intermediates die at once,
    so a memory plan needs only two buffers."""
    nodes, prev = [], "x"
    for i in range(12):
        op = "Relu" if i % 2 == 0 else "Neg"
        out = "y" if i == 11 else f"t{i}"
        nodes.append(helper.make_node(op, [prev], [out], name=f"n{i}"))
        prev = out
    g = helper.make_graph(nodes, "chain",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4096])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4096])])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="onyx-tests"),
         "chain.onnx")


def symbolic():
    """x[batch,3] @ W[3,4] + b -> Relu -> y (output declared without a shape) and a
    second output z = Shape(x)."""
    rng = np.random.default_rng(0)
    W = numpy_helper.from_array(rng.standard_normal((3, 4)).astype(np.float32), "W")
    b = numpy_helper.from_array(rng.standard_normal((4,)).astype(np.float32), "b")
    nodes = [helper.make_node("MatMul", ["x", "W"], ["xw"], name="mm"),
             helper.make_node("Add", ["xw", "b"], ["xwb"], name="add"),
             helper.make_node("Relu", ["xwb"], ["y"], name="relu"),
             helper.make_node("Shape", ["x"], ["z"], name="shape")]
    g = helper.make_graph(nodes, "symbolic",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
                           helper.make_tensor_value_info("z", TensorProto.INT64, None)],
                          initializer=[W, b])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="onyx-tests"),
         "symbolic.onnx")


def unordered():
    """Nodes stored in reverse order: the session must sort them."""
    nodes = [helper.make_node("Neg", ["a"], ["y"], name="last"),
             helper.make_node("Relu", ["x"], ["a"], name="first")]
    g = helper.make_graph(nodes, "unordered",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="onyx-tests")
    onnx.save(m, os.path.join(here, "unordered.onnx"))  # the checker rejects unsorted graphs


def cycle():
    nodes = [helper.make_node("Relu", ["b"], ["a"], name="r1"),
             helper.make_node("Relu", ["a"], ["b"], name="r2"),
             helper.make_node("Neg", ["x"], ["y"], name="ok")]
    g = helper.make_graph(nodes, "cycle",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2]),
                           helper.make_tensor_value_info("b", TensorProto.FLOAT, [2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="onyx-tests")
    onnx.save(m, os.path.join(here, "cycle.onnx"))


def unknown_op():
    nodes = [helper.make_node("FrobnicateTensor", ["x"], ["y"], name="weird", domain="")]
    g = helper.make_graph(nodes, "unknown",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="onyx-tests")
    onnx.save(m, os.path.join(here, "unknown_op.onnx"))


def basic_passes():
    """Constant folding (c1*c2 folds), identity elimination (Identity, Dropout,
    Cast to the same type go), a near miss (Cast to another type stays), and a
    dead branch (Neg whose output nobody reads)."""
    c1 = numpy_helper.from_array(np.full((4,), 2.0, np.float32), "c1")
    c2 = numpy_helper.from_array(np.arange(4, dtype=np.float32), "c2")
    nodes = [helper.make_node("Mul", ["c1", "c2"], ["c12"], name="fold_me"),
             helper.make_node("Identity", ["x"], ["xi"], name="id"),
             helper.make_node("Add", ["xi", "c12"], ["s"], name="add"),
             helper.make_node("Dropout", ["s"], ["d"], name="drop"),
             helper.make_node("Cast", ["d"], ["dc"], name="cast_same", to=TensorProto.FLOAT),
             helper.make_node("Cast", ["dc"], ["dd"], name="cast_double", to=TensorProto.DOUBLE),
             helper.make_node("Neg", ["x"], ["unused"], name="dead"),
             helper.make_node("Relu", ["dd"], ["y"], name="relu")]
    g = helper.make_graph(nodes, "basic",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                          [helper.make_tensor_value_info("y", TensorProto.DOUBLE, [4])],
                          initializer=[c1, c2])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="onyx-tests"),
         "basic_passes.onnx")


def output_copies():
    """No-ops that copy a value to a graph output: identity elimination lets the
    producer write the output (Identity, Cast to the same type and Reshape to the
    same shape go; the Reshaped value's other reader, Abs, reads the output), and
    keeps the Identity of the graph input."""
    f4 = lambda n: helper.make_tensor_value_info(n, TensorProto.FLOAT, [4])
    shape = numpy_helper.from_array(np.array([4], np.int64), "shape")
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Identity", ["r"], ["y"], name="id_out"),
             helper.make_node("Sigmoid", ["x"], ["s"], name="sigmoid"),
             helper.make_node("Cast", ["s"], ["c"], name="cast_out", to=TensorProto.FLOAT),
             helper.make_node("Neg", ["x"], ["n"], name="neg"),
             helper.make_node("Reshape", ["n", "shape"], ["z"], name="reshape_shared"),
             helper.make_node("Abs", ["n"], ["w"], name="abs"),
             helper.make_node("Identity", ["x"], ["v"], name="id_in")]
    g = helper.make_graph(nodes, "output_copies", [f4("x")], [f4(o) for o in "ycwzv"], initializer=[shape])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="onyx-tests"),
         "output_copies.onnx")


def model(nodes, name, inputs, outputs, inits=(), opset=13):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="onyx-tests"),
         name + ".onnx")


def f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def rewrites():
    rng = np.random.default_rng(1)
    arr = lambda name, *shape: numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)
    pos = lambda name, *shape: numpy_helper.from_array((rng.random(shape) + 0.5).astype(np.float32), name)
    # Conv -> BN -> Mul(per channel) -> Add(per channel): all fold into the Conv.
    # Near miss: conv2's output is also a graph output, so its BN stays.
    model([helper.make_node("Conv", ["x", "W", "B"], ["c"], name="conv", pads=[1, 1, 1, 1]),
           helper.make_node("BatchNormalization", ["c", "s", "bb", "m", "v"], ["bn"], name="bn"),
           helper.make_node("Mul", ["bn", "k"], ["mu"], name="mul"),
           helper.make_node("Add", ["mu", "a"], ["y"], name="add"),
           helper.make_node("Conv", ["x", "W"], ["c2"], name="conv2"),
           helper.make_node("BatchNormalization", ["c2", "s", "bb", "m", "v"], ["y2"], name="bn2")],
          "conv_fold", [f32("x", [1, 3, 6, 6])], [f32("y", [1, 4, 6, 6]), f32("y2", [1, 4, 4, 4]), f32("c2", [1, 4, 4, 4])],
          [arr("W", 4, 3, 3, 3), arr("B", 4), pos("s", 4), arr("bb", 4), arr("m", 4), pos("v", 4),
           arr("k", 4, 1, 1), arr("a", 1, 4, 1, 1)])
    # MatMul + Add -> Gemm; near miss: a rank-3 MatMul stays.
    model([helper.make_node("MatMul", ["x", "W"], ["xw"], name="mm"),
           helper.make_node("Add", ["xw", "b"], ["y"], name="add"),
           helper.make_node("MatMul", ["x3", "W"], ["x3w"], name="mm3"),
           helper.make_node("Add", ["x3w", "b"], ["y3"], name="add3")],
          "matmul_add", [f32("x", [2, 3]), f32("x3", [2, 2, 3])], [f32("y", [2, 4]), f32("y3", [2, 2, 4])],
          [arr("W", 3, 4), arr("b", 4)])
    # CSE: two identical Relu(x) and Sigmoid on each; transposes that cancel;
    # a Shape of a static tensor that folds; Pad folded into Conv.
    model([helper.make_node("Relu", ["x"], ["r1"], name="relu1"),
           helper.make_node("Relu", ["x"], ["r2"], name="relu2"),
           helper.make_node("Add", ["r1", "r2"], ["s"], name="sum"),
           helper.make_node("Transpose", ["s"], ["t1"], name="t1", perm=[0, 2, 3, 1]),
           helper.make_node("Transpose", ["t1"], ["t2"], name="t2", perm=[0, 3, 1, 2]),
           helper.make_node("Shape", ["t2"], ["shp"], name="shape"),
           helper.make_node("Reshape", ["t2", "shp"], ["rs"], name="reshape"),
           helper.make_node("Pad", ["rs", "pads"], ["p"], name="pad"),
           helper.make_node("Conv", ["p", "W"], ["y"], name="conv"),
           helper.make_node("Transpose", ["x"], ["y2"], name="near_miss", perm=[0, 1, 3, 2])],
          "misc_rewrites", [f32("x", [1, 3, 5, 5])], [f32("y", [1, 2, 5, 5]), f32("y2", [1, 3, 5, 5])],
          [arr("W", 2, 3, 3, 3), numpy_helper.from_array(np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64), "pads")])
    # ConstantOfShape whose output (512 MiB) shape inference knows is over the fold limit:
    # the optimiser must not compute it at load only to throw it away.
    model([helper.make_node("ConstantOfShape", ["shape"], ["big"], name="big",
                            value=numpy_helper.from_array(np.array([1], np.float32))),
           helper.make_node("ReduceMax", ["big"], ["m"], name="max", keepdims=0),
           helper.make_node("Mul", ["x", "m"], ["y"], name="mul")],
          "fold_too_big", [f32("x", [2])], [f32("y", [2])],
          [numpy_helper.from_array(np.array([128, 1024, 1024], np.int64), "shape")])


def conv_add_relu():
    """Conv + Add(residual of the same shape) + Relu -> FusedConv with Z. Near miss: the
    second Add broadcasts an input of shape [batch, 4, 1, 1], so it stays."""
    rng = np.random.default_rng(2)
    W = numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "W")
    W2 = numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "W2")
    model([helper.make_node("Conv", ["x", "W"], ["c"], name="conv", pads=[1, 1, 1, 1]),
           helper.make_node("Add", ["c", "skip"], ["s"], name="add"),
           helper.make_node("Relu", ["s"], ["y"], name="relu"),
           helper.make_node("Conv", ["x", "W2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
           helper.make_node("Add", ["c2", "b"], ["s2"], name="add2"),
           helper.make_node("Relu", ["s2"], ["y2"], name="relu2")],
          "conv_add_relu", [f32("x", ["batch", 3, 6, 6]), f32("skip", ["batch", 4, 6, 6]),
                            f32("b", ["batch", 4, 1, 1])],
          [f32("y", ["batch", 4, 6, 6]), f32("y2", ["batch", 4, 6, 6])], [W, W2])


def session_info():
    """Metadata, an overridable initializer and dimension denotations:
    y = x * W + bias with bias[1] both an input and an initializer (0.5), W[1] = 2 an
    initializer only; x is [batch (DATA_BATCH), n]; z [? (DATA_CHANNEL), 3 (DATA_FEATURE)]
    -> Neg -> nz."""
    W = numpy_helper.from_array(np.array([2.0], np.float32), "W")
    bias = numpy_helper.from_array(np.array([0.5], np.float32), "bias")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "n"])
    x.type.tensor_type.shape.dim[0].denotation = "DATA_BATCH"
    z = helper.make_tensor_value_info("z", TensorProto.FLOAT, [None, 3])
    z.type.tensor_type.shape.dim[0].denotation = "DATA_CHANNEL"
    z.type.tensor_type.shape.dim[1].denotation = "DATA_FEATURE"
    g = helper.make_graph([helper.make_node("Mul", ["x", "W"], ["xw"], name="mul"),
                           helper.make_node("Add", ["xw", "bias"], ["y"], name="add"),
                           helper.make_node("Neg", ["z"], ["nz"], name="neg")],
                          "info", [x, helper.make_tensor_value_info("bias", TensorProto.FLOAT, [1]), z],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "n"]),
                           helper.make_tensor_value_info("nz", TensorProto.FLOAT, [None, 3])],
                          initializer=[W, bias], doc_string="y = x * W + bias")
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="onyx-tests",
                          producer_version="1.2.3", domain="ai.onyx.test", model_version=7,
                          doc_string="A model for the session_info tests")
    helper.set_model_props(m, {"author": "onyx", "purpose": "tests"})
    save(m, "session_info.onnx")


def run_into():
    """Outputs for onyx_session_run_into (tests/unit/test_run_into.c): y = Relu(x) computed
    by a node (written into the caller's tensor directly), the graph input x itself and the
    initializer c (both copied into a provided tensor)."""
    c = numpy_helper.from_array(np.array([1.5, -2.5], np.float32), "c")
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], "run_into",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 3]),
                           helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3]),
                           helper.make_tensor_value_info("c", TensorProto.FLOAT, [2])],
                          initializer=[c])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="onyx-tests"),
         "run_into.onnx")


if __name__ == "__main__":
    run_into()
    session_info()
    conv_add_relu()
    rewrites()
    basic_passes()
    output_copies()
    chain()
    symbolic()
    unordered()
    cycle()
    unknown_op()
