#!/usr/bin/python3
"""Small models for the integer convolution tests (tests/unit/test_qdq.c), run with
Debian's /usr/bin/python3 (python3-onnx). Re-running gives the same bytes; the
outputs are committed.

qlinearconv_*.onnx: one uint8 input x and two QLinearConv nodes on it with the same
parameters: `fast` reads them as initializers (the integer-GEMM path), `ref` through
Identity nodes (not constant when the test loads the model unoptimised: the
reference path). Outputs fast and ref.

qdq_*.onnx: float input, QuantizeLinear -> DequantizeLinear, then Conv on
DequantizeLinear'd int8 weights (float bias), an optional Relu or Clip, and
QuantizeLinear -> DequantizeLinear -> output: the QDQ form the extended-level
fusion turns into QLinearConv; near misses it must leave alone; qdq_add.onnx the
residual Add (-> com.microsoft QLinearAdd).

qdq_cnn.onnx: a small quantised CNN in QDQ form (Conv+Relu, MaxPool, two branches
Concat'd with different scales, depthwise Conv with an odd channel count, residual
Add) for the channels-last layout pass: at level all it runs on com.microsoft
QLinearConv (channels_last), NhwcMaxPool, QLinearConcat and QLinearAdd with one
Transpose at each end.

qdq_gemm*.onnx: DequantizeLinear'd 8-bit input and int8 weights (per column, or per tensor
with a zero point) into Gemm with a float bias and output: -> MatMulIntegerToFloat."""
import os
import numpy as np
import onnx
from onnx import helper, TensorProto, numpy_helper

here = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(1313)
N = helper.make_node


def t(name, a):
    return numpy_helper.from_array(a, name)


def save(name, nodes, inputs, outputs, inits, opset=17):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="onyx-tests")
    m.ir_version = 8
    onnx.save(m, os.path.join(here, name + ".onnx"))


def qlinearconv(name, c, m, hw, k, stride=1, pad=0, dil=1, group=1, per_channel=True, w_u8=False, y_s8=False,
                bias=True):
    cg = c // group
    if w_u8:
        w = rng.integers(0, 256, (m, cg, k, k)).astype(np.uint8)
        wz = rng.integers(100, 156, (m,) if per_channel else ()).astype(np.uint8)
    else:
        w = rng.integers(-127, 128, (m, cg, k, k)).astype(np.int8)
        wz = np.zeros((m,) if per_channel else (), np.int8)
    ws = (rng.random((m,) if per_channel else ()) * 0.02 + 0.005).astype(np.float32)
    params = [t("xs", np.array(0.05, np.float32)), t("xz", np.array(113, np.uint8)), t("w", w), t("ws", ws),
              t("wz", wz), t("ys", np.array(0.075 * np.sqrt(cg * k * k), np.float32)),
              t("yz", np.array(-5 if y_s8 else 120, np.int8 if y_s8 else np.uint8))]
    names = ["xs", "xz", "w", "ws", "wz", "ys", "yz"]
    if bias:
        params.append(t("b", rng.integers(-3000, 3000, (m,)).astype(np.int32)))
        names.append("b")
    attrs = dict(kernel_shape=[k, k], strides=[stride, stride], pads=[pad] * 4, dilations=[dil, dil], group=group)
    nodes = [N("QLinearConv", ["x", names[0], names[1], names[2], names[3], names[4], names[5], names[6]] +
               names[7:], ["fast"], **attrs)]
    nodes += [N("Identity", [p], [p + "_i"]) for p in names]
    ri = [p + "_i" for p in names]
    nodes.append(N("QLinearConv", ["x"] + ri, ["ref"], **attrs))
    ydt = TensorProto.INT8 if y_s8 else TensorProto.UINT8
    o = (hw + 2 * pad - dil * (k - 1) - 1) // stride + 1
    save("qlinearconv_" + name, nodes, [helper.make_tensor_value_info("x", TensorProto.UINT8, [2, c, hw, hw])],
         [helper.make_tensor_value_info("fast", ydt, [2, m, o, o]), helper.make_tensor_value_info("ref", ydt, [2, m, o, o])],
         params)


def qdq_conv(name, act=None, per_channel=True, w_zero_nonzero=False, c=16, m=24):
    """x -> Q -> DQ -> Conv(DQ(w), bias) [-> act] -> Q -> DQ -> y."""
    w = rng.integers(-127, 128, (m, c, 3, 3)).astype(np.int8)
    ws = (rng.random((m,) if per_channel else ()) * 0.01 + 0.002).astype(np.float32)
    wz = (rng.integers(-3, 3, ws.shape) if w_zero_nonzero else np.zeros(ws.shape)).astype(np.int8)
    inits = [t("xs", np.array(1 / 64, np.float32)), t("xz", np.array(128, np.uint8)), t("wq", w), t("ws", ws),
             t("wz", wz), t("bias", (rng.standard_normal(m) * 0.1).astype(np.float32))]
    nodes = [N("QuantizeLinear", ["x", "xs", "xz"], ["xq"]), N("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
             N("DequantizeLinear", ["wq", "ws", "wz"], ["wd"], axis=0),
             N("Conv", ["xd", "wd", "bias"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])]
    out = "c"
    lo = -4.0
    if act == "relu":
        nodes.append(N("Relu", ["c"], ["a"]))
        out, lo = "a", 0.0
    elif act == "clip":
        inits += [t("cmin", np.array(0.0, np.float32)), t("cmax", np.array(6.0, np.float32))]
        nodes.append(N("Clip", ["c", "cmin", "cmax"], ["a"]))
        out, lo = "a", 0.0
    hi = 6.0 if act == "clip" else 4.0
    ys = np.float32((hi - lo) / 255)
    inits += [t("ys", np.array(ys, np.float32)), t("yz", np.array(round(-lo / ys), np.uint8))]
    nodes += [N("QuantizeLinear", [out, "ys", "yz"], ["yq"]), N("DequantizeLinear", ["yq", "ys", "yz"], ["y"])]
    save("qdq_" + name, nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, 9, 9])],
         [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, m, 9, 9])], inits)


def qdq_relu_not_implied():
    """Relu before a QuantizeLinear whose zero point is not 0: the Relu is not implied by
    saturation, so the fusion must leave the Conv in float."""
    qdq_conv("relu_zp", act="relu")
    m = onnx.load(os.path.join(here, "qdq_relu_zp.onnx"))
    for i in m.graph.initializer:
        if i.name == "yz":
            i.CopyFrom(t("yz", np.array(10, np.uint8)))
    onnx.save(m, os.path.join(here, "qdq_relu_zp.onnx"))


def qdq_add():
    """Two QDQ operands of one shape -> Add -> Relu -> QuantizeLinear (zero point 0: the Relu
    is implied): QLinearAdd."""
    inits = [t("s1", np.array(1 / 64, np.float32)), t("z1", np.array(128, np.uint8)),
             t("s2", np.array(1 / 32, np.float32)), t("z2", np.array(100, np.uint8)),
             t("ys", np.array(8 / 255, np.float32)), t("yz", np.array(0, np.uint8))]
    nodes = [N("QuantizeLinear", ["x", "s1", "z1"], ["aq"]), N("DequantizeLinear", ["aq", "s1", "z1"], ["a"]),
             N("QuantizeLinear", ["x", "s2", "z2"], ["bq"]), N("DequantizeLinear", ["bq", "s2", "z2"], ["b"]),
             N("Add", ["a", "b"], ["c"]), N("Relu", ["c"], ["r"]),
             N("QuantizeLinear", ["r", "ys", "yz"], ["yq"]), N("DequantizeLinear", ["yq", "ys", "yz"], ["y"])]
    save("qdq_add", nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5, 7, 11])],
         [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 5, 7, 11])], inits)


def qdq_cnn():
    inits, nodes = [], []

    def q(name, scale, zp):
        inits.extend([t(name + "_s", np.array(scale, np.float32)), t(name + "_z", np.array(zp, np.uint8))])
        return name + "_s", name + "_z"

    def qdq(x, y, p):   # x float -> QuantizeLinear -> y_q -> DequantizeLinear -> y
        nodes.extend([N("QuantizeLinear", [x, *p], [y + "_q"]), N("DequantizeLinear", [y + "_q", *p], [y])])

    def conv(x, y, c, m, k, pad, group=1, relu=True):
        w = rng.integers(-127, 128, (m, c // group, k, k)).astype(np.int8)
        ws = (rng.random(m) * 0.01 + 0.004).astype(np.float32)
        inits.extend([t(y + "_w", w), t(y + "_ws", ws), t(y + "_wz", np.zeros(m, np.int8)),
                      t(y + "_b", (rng.standard_normal(m) * 0.2).astype(np.float32))])
        nodes.append(N("DequantizeLinear", [y + "_w", y + "_ws", y + "_wz"], [y + "_wd"], axis=0))
        nodes.append(N("Conv", [x, y + "_wd", y + "_b"], [y + "_c" if relu else y], kernel_shape=[k, k],
                       pads=[pad] * 4, group=group))
        if relu:
            nodes.append(N("Relu", [y + "_c"], [y]))

    qdq("x", "x0", q("x0", 1 / 50, 128))
    conv("x0", "c1", 8, 37, 3, 1)
    qdq("c1", "c1d", q("c1", 6 / 255, 0))
    nodes.append(N("MaxPool", ["c1d"], ["p1"], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1))
    qdq("p1", "p1d", ("c1_s", "c1_z"))
    conv("p1d", "b1", 37, 12, 1, 0)
    qdq("b1", "b1d", q("b1", 5 / 255, 0))
    conv("p1d", "b2", 37, 25, 3, 1)
    qdq("b2", "b2d", q("b2", 7 / 255, 0))
    nodes.append(N("Concat", ["b1d", "b2d"], ["cat"], axis=1))
    qdq("cat", "catd", q("cat", 7 / 255, 0))
    conv("catd", "dw", 37, 37, 3, 1, group=37, relu=False)
    qdq("dw", "dwd", q("dw", 8 / 255, 120))
    nodes.append(N("Add", ["dwd", "catd"], ["sum"]))
    qdq("sum", "y", q("sum", 12 / 255, 100))
    save("qdq_cnn", nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8, 15, 15])],
         [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 37, 7, 7])], inits)


def bad_8bit_ops():
    """com.microsoft QLinearConcat of tensors that differ off the axis, and NhwcMaxPool on a 3-D
    tensor: both must refuse with a message naming the problem."""
    u8 = TensorProto.UINT8
    inits = [t("s", np.array(0.1, np.float32)), t("z", np.array(3, np.uint8))]
    nodes = [helper.make_node("QLinearConcat", ["s", "z", "a", "s", "z", "b", "s", "z"], ["y"], domain="com.microsoft",
                              axis=1)]
    g = helper.make_graph(nodes, "bad_qconcat", [helper.make_tensor_value_info("a", u8, [1, 2, 3, 3]),
                                                 helper.make_tensor_value_info("b", u8, [1, 2, 4, 3])],
                          [helper.make_tensor_value_info("y", u8, None)], initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)],
                          producer_name="onyx-tests")
    m.ir_version = 8
    onnx.save(m, os.path.join(here, "bad_qlinearconcat.onnx"))
    nodes = [helper.make_node("NhwcMaxPool", ["a"], ["y"], domain="com.microsoft", kernel_shape=[2, 2])]
    g = helper.make_graph(nodes, "bad_nhwcmaxpool", [helper.make_tensor_value_info("a", u8, [1, 5, 3])],
                          [helper.make_tensor_value_info("y", u8, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)],
                          producer_name="onyx-tests")
    m.ir_version = 8
    onnx.save(m, os.path.join(here, "bad_nhwcmaxpool.onnx"))


def quantize_linear(name, zdt, zp):
    """x float [1003] -> QuantizeLinear(0.05, zp) -> y: the vector path and its tail."""
    inits = [t("s", np.array(0.05, np.float32)), t("z", np.array(zp, zdt))]
    ydt = TensorProto.INT8 if zdt == np.int8 else TensorProto.UINT8
    save(name, [N("QuantizeLinear", ["x", "s", "z"], ["y"])], [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1003])],
         [helper.make_tensor_value_info("y", ydt, [1003])], inits)


def qdq_gemm(name, trans_b, per_channel, wz):
    """x -> Q -> DQ -> Gemm(DQ(w int8), bias) -> y float: the classifier head that becomes
    MatMulIntegerToFloat."""
    k, n = 40, 24
    w = rng.integers(-127, 128, (n, k) if trans_b else (k, n)).astype(np.int8)
    ws = (rng.random(n if per_channel else ()) * 0.01 + 0.002).astype(np.float32)
    inits = [t("xs", np.array(1 / 40, np.float32)), t("xz", np.array(120, np.uint8)), t("wq", w), t("ws", ws),
             t("wz", np.full(ws.shape, wz, np.int8)), t("bias", (rng.standard_normal(n) * 0.1).astype(np.float32))]
    nodes = [N("QuantizeLinear", ["x", "xs", "xz"], ["xq"]), N("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
             N("DequantizeLinear", ["wq", "ws", "wz"], ["wd"], axis=0 if trans_b else 1),
             N("Gemm", ["xd", "wd", "bias"], ["y"], transB=1 if trans_b else 0)]
    save("qdq_" + name, nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, k])],
         [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, n])], inits)


if __name__ == "__main__":
    qlinearconv("3x3", 16, 24, 10, 3, pad=1)
    qlinearconv("1x1", 32, 20, 7, 1, per_channel=False)
    qlinearconv("7x7s2", 3, 16, 17, 7, stride=2, pad=3)
    qlinearconv("3x3s2_dil", 8, 12, 13, 3, stride=2, pad=2, dil=2, w_u8=True, y_s8=True, bias=False)
    qlinearconv("dw3x3", 24, 24, 11, 3, pad=1, group=24)
    qlinearconv("dw3x3s2", 16, 16, 12, 3, stride=2, pad=1, group=16, w_u8=True, y_s8=True)
    qdq_conv("plain")
    qdq_conv("relu", act="relu", per_channel=False)
    qdq_conv("clip", act="clip", w_zero_nonzero=True)
    qdq_relu_not_implied()
    qdq_add()
    qlinearconv("dw5x5_c37", 37, 37, 9, 5, pad=2, group=37)
    qlinearconv("dw3x3_c13_dil2", 13, 13, 10, 3, stride=2, pad=1, dil=2, group=13, w_u8=True)
    qdq_cnn()
    bad_8bit_ops()
    qdq_gemm("gemm", True, True, 0)
    qdq_gemm("gemm_nt", False, False, 3)
    quantize_linear("quantize_u8", np.uint8, 113)
    quantize_linear("quantize_s8", np.int8, -7)
    # depthwise over several 64-channel blocks (the channels-last kernel splits channels into blocks of 64)
    qlinearconv("dw3x3_c150", 150, 150, 9, 3, pad=1, group=150)
    qlinearconv("dw3x3s2_c200", 200, 200, 8, 3, stride=2, pad=1, group=200, w_u8=True, y_s8=True)
