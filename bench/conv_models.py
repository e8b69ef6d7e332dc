#!/usr/bin/env python3
"""Synthetic convolution models for per-layer studies (bench/layers), with their .npz inputs.

    bench/conv_models.py chain OUT.onnx C H MID BLOCKS
        ResNet bottleneck blocks: 1x1 C -> MID + Relu, 3x3 MID -> MID + Relu,
        1x1 MID -> C + the block's input + Relu, BLOCKS times (each block's input is
        the previous block's output, as in a network).
    bench/conv_models.py parallel OUT.onnx C H M K STRIDE COPIES
        COPIES convolutions C -> M (K x K, STRIDE, same padding) + Relu, all reading one
        input: the same layer with a warm input, different weights each.

A layer that is fast in `parallel` but slow in `chain` loses to where its data comes from
(the previous layer's output, cold weights), not to its arithmetic. Weights are random
(seeded), scaled so the activations stay near 1.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def conv(nodes, inits, rng, name, cin, cout, k, stride, src, dst):
    w = (rng.standard_normal((cout, cin, k, k)) / np.sqrt(cin * k * k)).astype(np.float32)
    b = (rng.standard_normal(cout) * 0.1).astype(np.float32)
    inits += [numpy_helper.from_array(w, f"{name}.W"), numpy_helper.from_array(b, f"{name}.B")]
    nodes.append(helper.make_node("Conv", [src, f"{name}.W", f"{name}.B"], [dst], name=name,
                                  kernel_shape=[k, k], strides=[stride, stride], pads=[k // 2] * 4))


def chain(rng, c, h, mid, blocks):
    nodes, inits, cur = [], [], "x"
    for j in range(blocks):
        conv(nodes, inits, rng, f"b{j}.conv1", c, mid, 1, 1, cur, f"b{j}.a")
        nodes.append(helper.make_node("Relu", [f"b{j}.a"], [f"b{j}.ar"]))
        conv(nodes, inits, rng, f"b{j}.conv2", mid, mid, 3, 1, f"b{j}.ar", f"b{j}.b")
        nodes.append(helper.make_node("Relu", [f"b{j}.b"], [f"b{j}.br"]))
        conv(nodes, inits, rng, f"b{j}.conv3", mid, c, 1, 1, f"b{j}.br", f"b{j}.c")
        nodes.append(helper.make_node("Add", [f"b{j}.c", cur], [f"b{j}.s"]))
        nodes.append(helper.make_node("Relu", [f"b{j}.s"], [f"b{j}.y"]))
        cur = f"b{j}.y"
    outs = [helper.make_tensor_value_info(cur, TensorProto.FLOAT, [1, c, h, h])]
    return nodes, inits, outs, c


def parallel(rng, c, h, m, k, stride, copies):
    nodes, inits, outs = [], [], []
    oh = (h + 2 * (k // 2) - k) // stride + 1
    for i in range(copies):
        conv(nodes, inits, rng, f"conv{i}", c, m, k, stride, "x", f"c{i}")
        nodes.append(helper.make_node("Relu", [f"c{i}"], [f"y{i}"]))
        outs.append(helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, [1, m, oh, oh]))
    return nodes, inits, outs, c


def main(argv):
    if len(argv) < 2 or argv[0] not in ("chain", "parallel") or not argv[1].endswith(".onnx"):
        sys.exit(__doc__)
    kind, out, nums = argv[0], argv[1], [int(v) for v in argv[2:]]
    want = 4 if kind == "chain" else 6
    if len(nums) != want or min(nums) < 1:
        sys.exit(f"{kind} takes {want} positive integers\n" + __doc__)
    rng = np.random.default_rng(0)
    nodes, inits, outs, c = (chain if kind == "chain" else parallel)(rng, *nums)
    h = nums[1]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, h, h])
    model = helper.make_model(helper.make_graph(nodes, kind, [x], outs, inits),
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, out)
    np.savez(out[:-len(".onnx")] + ".npz", x=rng.standard_normal((1, c, h, h)).astype(np.float32))
    print(f"{out}: {len(nodes)} nodes, {sum(t.ByteSize() for t in inits) / 1e6:.1f} MB of weights")


if __name__ == "__main__":
    main(sys.argv[1:])
