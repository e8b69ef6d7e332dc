#!/usr/bin/python3
"""A small convolutional network for the level-all layout test (tests/unit/test_fusion.c):
an image stem read in NCHW, pooling, a BatchNormalization to fold, a depthwise conv with
Clip, residual adds with and without Relu, a Sigmoid, a fire-module channel concat, and
the near misses the blocked layout must leave alone: a conv with 8 output channels, a
broadcast Mul (squeeze-and-excitation), a MaxPool whose Indices are used, and a value
inside the blocked region that is also a graph output. Run with Debian's /usr/bin/python3
(python3-onnx); re-running gives the same bytes."""
import os
import numpy as np
import onnx
from onnx import helper, TensorProto, numpy_helper

here = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(77)
F = TensorProto.FLOAT
N = helper.make_node
inits = []


def w(name, *shape, scale=0.3):
    inits.append(numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name))
    return name


def conv(x, y, cin, cout, k, stride=1, pad=0, group=1, bias=True):
    ins = [x, w(y + "_w", cout, cin // group, k, k)] + ([w(y + "_b", cout)] if bias else [])
    return N("Conv", ins, [y], name=y, kernel_shape=[k, k], strides=[stride, stride], pads=[pad] * 4, group=group)


nodes = [
    conv("x", "stem", 3, 16, 3, stride=2, pad=1), N("Relu", ["stem"], ["stem_r"]),
    N("MaxPool", ["stem_r"], ["pool"], kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1]),
    conv("pool", "expand", 16, 24, 1, bias=False),
    N("BatchNormalization", ["expand", w("bn_s", 24), w("bn_b", 24), w("bn_m", 24), "bn_v"], ["bn"]),
    conv("bn", "dw", 24, 24, 3, pad=1, group=24), N("Clip", ["dw", "zero", "six"], ["dw_c"]),
    conv("dw_c", "project", 24, 32, 1), conv("pool", "shortcut", 16, 32, 1),
    N("Add", ["project", "shortcut"], ["res"]), N("Relu", ["res"], ["mid"]),
    conv("mid", "c4", 32, 32, 1), N("Add", ["c4", "mid"], ["res2"]), N("Sigmoid", ["res2"], ["sg"]),
    conv("sg", "e1", 32, 16, 1), N("Relu", ["e1"], ["e1_r"]),
    conv("sg", "e3", 32, 16, 3, pad=1), N("Relu", ["e3"], ["e3_r"]),
    N("Concat", ["e1_r", "e3_r"], ["fire"], axis=1),
    N("AveragePool", ["fire"], ["avg"], kernel_shape=[2, 2], strides=[2, 2]),
    N("GlobalAveragePool", ["avg"], ["gap"]),
    N("Mul", ["avg", "gap"], ["se"]),                      # broadcast: stays NCHW
    conv("se", "narrow", 32, 8, 1),                         # 8 output channels: stays NCHW
    N("Flatten", ["gap"], ["flat"]), N("Gemm", ["flat", w("fc_w", 10, 32), w("fc_b", 10)], ["logits"], transB=1),
    conv("y", "side", 16, 16, 3, pad=1),                    # NCHW input with 16 channels: ReorderInput
    N("MaxPool", ["side"], ["side_p", "side_i"], kernel_shape=[2, 2], strides=[2, 2]),  # Indices: stays
]
inits.append(numpy_helper.from_array(np.abs(rng.standard_normal(24)).astype(np.float32) + 0.5, "bn_v"))
inits.append(numpy_helper.from_array(np.array(0.0, np.float32), "zero"))
inits.append(numpy_helper.from_array(np.array(6.0, np.float32), "six"))
vi = helper.make_tensor_value_info
g = helper.make_graph(nodes, "layout_cnn", [vi("x", F, ["batch", 3, 20, 20]), vi("y", F, ["batch", 16, 6, 6])],
                      [vi("narrow", F, ["batch", 8, 5, 5]), vi("mid", F, ["batch", 32, 10, 10]), vi("logits", F, ["batch", 10]),
                       vi("side_p", F, ["batch", 16, 3, 3]),
                       vi("side_i", TensorProto.INT64, ["batch", 16, 3, 3])], initializer=inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="onyx-tests")
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, os.path.join(here, "layout_cnn.onnx"))
