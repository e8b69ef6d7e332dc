#!/usr/bin/python3
"""Residual blocks for the memory plan's shared buffers (tests/unit/test_memplan_share.c):
Convs whose residual Add the optimiser fuses (level all: the blocked Conv's Z), so the plan
may write the Conv's output over the Add's other input where nothing reads it later. Two
bottleneck blocks (the output takes Z's bytes), a 1x1 Conv over 1040 channels (more than one
chunk of weights: the in-place Conv must run it as one), a basic block (its second 3x3 Conv
has the Z), and the near misses that must keep separate buffers: Z that is also the Conv's
X, and Z read again after the Conv.
Run with Debian's /usr/bin/python3 (python3-onnx); re-running gives the same bytes."""
import os
import numpy as np
import onnx
from onnx import helper, TensorProto, numpy_helper

here = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(2026)
F = TensorProto.FLOAT
N = helper.make_node
inits = []


def init(name, a):
    inits.append(numpy_helper.from_array(a.astype(np.float32) if a.dtype.kind == "f" else a, name))
    return name


def conv(x, y, cin, cout, k, low_rank=False):
    """low_rank: W = U V (rank 3), made by MatMul and Reshape that constant folding turns
    into W: a wide W without its bytes in this file"""
    wn, bn = y + "_w", y + "_b"
    pre = []
    if low_rank:
        u = init(y + "_u", rng.standard_normal((cout, 3)) / np.sqrt(cin))
        v = init(y + "_v", rng.standard_normal((3, cin * k * k)) / k)
        pre = [N("MatMul", [u, v], [y + "_uv"]), N("Reshape", [y + "_uv", init(y + "_shape", np.array([cout, cin, k, k]))], [wn])]
    else:
        init(wn, rng.standard_normal((cout, cin, k, k)) / np.sqrt(cin * k * k))
    init(bn, rng.standard_normal(cout) * 0.1)
    return pre + [N("Conv", [x, wn, bn], [y], name=y, kernel_shape=[k, k], pads=[k // 2] * 4)]


def block(x, name, cmid, cout):
    """bottleneck: 1x1 reduce, 3x3, 1x1 expand + x, Relu"""
    return (conv(x, name + "_a", cout, cmid, 1) + [N("Relu", [name + "_a"], [name + "_ar"])] +
            conv(name + "_ar", name + "_b", cmid, cmid, 3) + [N("Relu", [name + "_b"], [name + "_br"])] +
            conv(name + "_br", name + "_c", cmid, cout, 1) + [N("Add", [name + "_c", x], [name + "_s"]),
                                                              N("Relu", [name + "_s"], [name])])


nodes = conv("x", "stem", 16, 32, 1) + [N("Relu", ["stem"], ["a0"])]
nodes += block("a0", "a1", 8, 32) + block("a1", "a2", 16, 32)
# K = 1040 in "narrow": more than one chunk of weights on every CPU (256 KB of them per chunk)
nodes += conv("a2", "wide", 32, 1040, 1, low_rank=True) + [N("Relu", ["wide"], ["wide_r"])]
nodes += conv("wide_r", "narrow", 1040, 32, 1, low_rank=True) + [N("Add", ["narrow", "a2"], ["a3"])]
# a basic block: two 3x3 Convs, the second with Z (direct tiles, or Winograd where it applies)
nodes += conv("a3", "basic_a", 32, 32, 3, low_rank=True) + [N("Relu", ["basic_a"], ["basic_ar"])]
nodes += conv("basic_ar", "basic_b", 32, 32, 3, low_rank=True) + [N("Add", ["basic_b", "a3"], ["a3b"])]
nodes += conv("a3b", "self", 32, 32, 1) + [N("Add", ["self", "a3b"], ["a4"])]     # Z is also X
nodes += conv("a4", "later", 32, 32, 1) + [N("Add", ["later", "a4"], ["a5"]),     # Z read again below
                                           N("Mul", ["a5", "a4"], ["a6"]),
                                           N("GlobalAveragePool", ["a6"], ["gap"]), N("Flatten", ["gap"], ["out"])]
vi = helper.make_tensor_value_info
g = helper.make_graph(nodes, "residual_chain", [vi("x", F, ["batch", 16, 12, 12])], [vi("out", F, ["batch", 32])],
                      initializer=inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="onyx-tests")
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, os.path.join(here, "residual_chain.onnx"))
