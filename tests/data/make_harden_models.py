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
    os.makedirs(os.path.dirname(os.path.join(here, name)), exist_ok=True)
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
    for b, name in ((body, "loop_forever.onnx"), (empty, "loop_forever_empty_body.onnx"),
                    (body, "test_timeout/test_loop_forever/model.onnx")):
        cond = numpy_helper.from_array(np.array(True), "cond")
        g = helper.make_graph([helper.make_node("Loop", ["", "cond", "x"], ["y"], body=b)], "loop_forever",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])], initializer=[cond])
        save(g, name)
    # the same model as an ONNX backend test, for `onyx test --timeout`
    data = os.path.join(here, "test_timeout/test_loop_forever/test_data_set_0")
    os.makedirs(data, exist_ok=True)
    for f, n in (("input_0.pb", "x"), ("output_0.pb", "y")):
        with open(os.path.join(data, f), "wb") as out:
            out.write(numpy_helper.from_array(np.array(0, np.float32), n).SerializeToString())


def vi(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def type_contract():
    """Declared types that contradict what the graph makes: an output declared float64[4] that an
    Identity of a float32[4] input produces (refused at load); the same through a Loop, which
    inference does not see through (refused when the run produces it); an If whose branches make
    float32 and int64."""
    g = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "declared_double",
                          [vi("x", TensorProto.FLOAT, [4])], [vi("y", TensorProto.DOUBLE, [4])])
    save(g, "output_type_mismatch.onnx")
    body = helper.make_graph([helper.make_node("Identity", ["cond_in"], ["cond_out"]),
                              helper.make_node("Identity", ["v_in"], ["v_out"])], "body",
                             [vi("i", TensorProto.INT64, []), vi("cond_in", TensorProto.BOOL, []),
                              vi("v_in", TensorProto.FLOAT, [4])],
                             [vi("cond_out", TensorProto.BOOL, []), vi("v_out", TensorProto.FLOAT, [4])])
    trip = numpy_helper.from_array(np.array(1, np.int64), "trip")
    g = helper.make_graph([helper.make_node("Loop", ["trip", "", "x"], ["y"], body=body)], "loop_declared_double",
                          [vi("x", TensorProto.FLOAT, [4])], [vi("y", TensorProto.DOUBLE, [4])], initializer=[trip])
    save(g, "output_type_mismatch_loop.onnx")

    def branch(name, dtype, value):
        t = helper.make_tensor("v", dtype, [1], [value])
        return helper.make_graph([helper.make_node("Constant", [], [name], value=t)], name,
                                 [], [vi(name, dtype, [1])])
    g = helper.make_graph([helper.make_node("If", ["c"], ["y"], then_branch=branch("a", TensorProto.FLOAT, 1.0),
                                            else_branch=branch("b", TensorProto.INT64, 2))], "if_disagree",
                          [vi("c", TensorProto.BOOL, [])], [vi("y", TensorProto.FLOAT, [1])])
    save(g, "if_branches_disagree.onnx")


def arity_and_opset():
    """A Relu with three inputs, and a model importing ai.onnx opset 100000."""
    g = helper.make_graph([helper.make_node("Relu", ["x", "x", "x"], ["y"])], "relu3",
                          [vi("x", TensorProto.FLOAT, [2])], [vi("y", TensorProto.FLOAT, [2])])
    save(g, "relu_three_inputs.onnx")
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "future",
                          [vi("x", TensorProto.FLOAT, [2])], [vi("y", TensorProto.FLOAT, [2])])
    save(g, "opset_100000.onnx", opset=100000)


def bad_dtype():
    """ConstantOfShape whose value tensor has data_type 65 (no such type), read by a Relu: type
    inference once carried 65 into the kernel lookup, which computed 1 << 65."""
    t = onnx.TensorProto()
    t.name, t.data_type = "v", 65
    t.dims.append(1)
    t.raw_data = b"\0" * 4
    shape = numpy_helper.from_array(np.array([2], np.int64), "shape")
    g = helper.make_graph([helper.make_node("ConstantOfShape", ["shape"], ["c"], value=t),
                           helper.make_node("Relu", ["c"], ["y"])], "cos65",
                          [], [vi("y", TensorProto.FLOAT, None)], initializer=[shape])
    save(g, "constant_of_shape_dtype65.onnx")


def strides_and_pads():
    """Conv with strides of INT64_MAX on x[1,1,5,5] (one output pixel: the top-left 3x3 sum),
    and AveragePool whose pads reach the kernel (windows wholly in the padding)."""
    w = numpy_helper.from_array(np.ones((1, 1, 3, 3), np.float32), "w")
    big = 2 ** 63 - 1
    g = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["y"], strides=[big, big])], "conv_huge_strides",
                          [vi("x", TensorProto.FLOAT, [1, 1, 5, 5])], [vi("y", TensorProto.FLOAT, [1, 1, 1, 1])],
                          initializer=[w])
    save(g, "conv_huge_strides.onnx")
    g = helper.make_graph([helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[2, 2], pads=[2, 2, 2, 2])],
                          "avgpool_pads", [vi("x", TensorProto.FLOAT, [1, 1, 4, 4])],
                          [vi("y", TensorProto.FLOAT, [1, 1, 7, 7])])
    save(g, "avgpool_pads_reach_kernel.onnx")


def resize_scales_types():
    """Resize and Upsample with float16 scales: the spec types scales as tensor(float) in every
    version, and the CPU once read any float type there; Resize's sizes are tensor(int64) and
    int32 ones are refused too (the CPU read them). A double roi (tf_crop_and_resize) is
    within the spec (roi: float16, float or double) and runs."""
    x, y = vi("x", TensorProto.FLOAT16, [1, 1, 2, 2]), vi("y", TensorProto.FLOAT16, None)
    scales = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float16), "scales")
    g = helper.make_graph([helper.make_node("Resize", ["x", "", "scales"], ["y"], mode="nearest")],
                          "resize_f16_scales", [x], [y], initializer=[scales])
    save(g, "resize_f16_scales.onnx", opset=13)
    g = helper.make_graph([helper.make_node("Upsample", ["x", "scales"], ["y"], mode="nearest")],
                          "upsample_f16_scales", [x], [y], initializer=[scales])
    save(g, "upsample_f16_scales.onnx", opset=9)
    roi = numpy_helper.from_array(np.array([0, 0, 0, 0, 1, 1, 1, 1], np.float64), "roi")
    sizes = numpy_helper.from_array(np.array([1, 1, 3, 3], np.int64), "sizes")
    g = helper.make_graph([helper.make_node("Resize", ["x", "roi", "", "sizes"], ["y"], mode="linear",
                                            coordinate_transformation_mode="tf_crop_and_resize")],
                          "resize_f64_roi", [x], [y], initializer=[roi, sizes])
    save(g, "resize_f64_roi.onnx", opset=13)
    sizes32 = numpy_helper.from_array(np.array([1, 1, 3, 3], np.int32), "sizes")
    g = helper.make_graph([helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode="nearest")],
                          "resize_i32_sizes", [x], [y], initializer=[sizes32])
    save(g, "resize_i32_sizes.onnx", opset=13)


def npy_bytes(header_descr, shape, body):
    """A version-1 .npy file: magic, header dict padded to 64 bytes, then body."""
    d = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        header_descr, "".join(f"{n}, " for n in shape))
    pad = 64 - (10 + len(d) + 1) % 64
    h = (d + " " * pad + "\n").encode()
    return b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h + body


def input_files():
    """Input files for conv_huge_strides.onnx (input x, float32[1,1,5,5]): an .npz bomb whose member
    header says 100 bytes of data while the member inflates to 16 MiB, an empty .npz, one holding
    only an array that is not an input, and one holding x plus a 'labels' array."""
    import zipfile
    x = np.arange(1, 26, dtype=np.float32).reshape(1, 1, 5, 5)
    bomb = npy_bytes("<f4", (1, 1, 5, 5), b"\0" * (16 << 20))

    def write(name, members, method=zipfile.ZIP_STORED):
        with zipfile.ZipFile(os.path.join(here, name), "w", method) as z:
            for n, data in members:
                info = zipfile.ZipInfo(n, date_time=(2020, 1, 1, 0, 0, 0))
                info.compress_type = method
                z.writestr(info, data)
    write("bomb.npz", [("x.npy", bomb)], zipfile.ZIP_DEFLATED)
    write("empty.npz", [])

    def npy(a):
        return npy_bytes("<f4" if a.dtype == np.float32 else "<i8", a.shape, a.tobytes())
    write("labels_only.npz", [("labels.npy", npy(np.array([3], np.int64)))])
    write("x_and_labels.npz", [("x.npy", npy(x)), ("labels.npy", npy(np.array([3], np.int64)))])


if __name__ == "__main__":
    input_files()
    loop_forever()
    type_contract()
    arity_and_opset()
    bad_dtype()
    strides_and_pads()
    resize_scales_types()
