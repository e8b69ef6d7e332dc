"""Small ONNX models and their expected outputs for the onyx-wasm Node.js
tests (js/test/*.test.mjs), written at test time into the folder given:
NAME.onnx plus NAME.npz holding the inputs (their graph names) and the
expected outputs ("expected:" + output name), computed here with numpy.

The models cover the paths with WebAssembly SIMD128 code: SGEMM with every
edge-tile shape (MatMul/Gemm of odd sizes, bias and activation epilogues),
convolution through the GEMM path, pooling, the elementwise and activation
loops, Softmax and LayerNormalization; and the tensor types of the API
(int64, int32, uint8, bool, string).

    /usr/bin/python3 js/test/make_models.py OUTDIR
"""
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(7)


def save(out, name, nodes, inputs, outputs, inits=(), feeds=None, expected=None, opset=17):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, name + ".onnx"))
    arrays = dict(feeds)
    arrays.update({"expected:" + k: v for k, v in expected.items()})
    np.savez(os.path.join(out, name + ".npz"), **arrays)


def vi(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def conv2d(x, w, b, stride, pad):
    n, c, h, wd = x.shape
    m, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh = (h + 2 * pad - kh) // stride + 1
    ow = (wd + 2 * pad - kw) // stride + 1
    y = np.zeros((n, m, oh, ow), np.float64)
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride]
            y += np.einsum("nchw,mc->nmhw", patch, w[:, :, i, j])
    return (y + b[None, :, None, None]).astype(np.float32)


def maxpool2(x):
    n, c, h, w = x.shape
    return x[:, :, :h // 2 * 2, :w // 2 * 2].reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


def maxpool2d(x, k, s, pads, ceil=False):
    """MaxPool as ONNX defines it: taps outside the input skipped; with
    ceil_mode a window starting in the end padding is dropped."""
    n, c = x.shape[:2]
    outs, ends = [], []
    for d in range(2):
        size = x.shape[2 + d] + pads[d] + pads[2 + d] - k[d]
        o = (-(-size // s[d]) if ceil else size // s[d]) + 1
        if ceil and (o - 1) * s[d] >= x.shape[2 + d] + pads[d]:
            o -= 1
        outs.append(o)
        ends.append(max(pads[2 + d], (o - 1) * s[d] + k[d] - x.shape[2 + d] - pads[d]))
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], ends[0]), (pads[1], ends[1])), constant_values=-np.inf)
    y = np.full((n, c, outs[0], outs[1]), -np.inf, np.float32)
    for i in range(k[0]):
        for j in range(k[1]):
            y = np.maximum(y, xp[:, :, i:i + s[0] * outs[0]:s[0], j:j + s[1] * outs[1]:s[1]])
    return y


def main(out):
    os.makedirs(out, exist_ok=True)

    # MatMul over every edge of the 4 x 8 tile: M, N, K not multiples of it
    # (8 x 300 x 17, 12 x 5 x 1: N one past a multiple of 8, the one-column kernel; K over one block)
    for m, k, n in [(1, 3, 1), (5, 7, 9), (13, 33, 21), (64, 70, 45), (8, 300, 17), (12, 5, 1)]:
        a, b = f32(m, k), f32(k, n)
        save(out, f"matmul_{m}x{k}x{n}", [helper.make_node("MatMul", ["a", "b"], ["y"])],
             [vi("a", TensorProto.FLOAT, [m, k]), vi("b", TensorProto.FLOAT, [k, n])],
             [vi("y", TensorProto.FLOAT, [m, n])], feeds={"a": a, "b": b},
             expected={"y": (a.astype(np.float64) @ b).astype(np.float32)})

    # Gemm with constant weights (pre-packed), transB, bias, alpha/beta, then Relu (fused epilogue)
    x, w, c = f32(6, 37), f32(19, 37), f32(19)
    y = np.maximum(0.5 * (x.astype(np.float64) @ w.T) + 2.0 * c, 0).astype(np.float32)
    save(out, "gemm_relu",
         [helper.make_node("Gemm", ["x", "w", "c"], ["g"], transB=1, alpha=0.5, beta=2.0),
          helper.make_node("Relu", ["g"], ["y"])],
         [vi("x", TensorProto.FLOAT, [6, 37])], [vi("y", TensorProto.FLOAT, [6, 19])],
         [numpy_helper.from_array(w, "w"), numpy_helper.from_array(c, "c")],
         feeds={"x": x}, expected={"y": y})

    # a small CNN: Conv (3x3 pad 1, then 3x3 stride 2) + Relu, MaxPool, Clip, Flatten, Gemm, Softmax
    x = f32(2, 3, 11, 13)
    w1, b1 = f32(10, 3, 3, 3) * 0.5, f32(10)
    w2, b2 = f32(12, 10, 3, 3) * 0.3, f32(12)
    h1 = np.maximum(conv2d(x, w1, b1, 1, 1), 0)
    h2 = np.clip(conv2d(h1, w2, b2, 2, 1), -1.0, 6.0)
    h3 = maxpool2(h2)
    flat = h3.reshape(2, -1)
    wf, bf = f32(flat.shape[1], 7) * 0.2, f32(7)
    logits = flat.astype(np.float64) @ wf + bf
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs = (e / e.sum(axis=1, keepdims=True)).astype(np.float32)
    inits = [numpy_helper.from_array(v, k) for k, v in
             {"w1": w1, "b1": b1, "w2": w2, "b2": b2, "wf": wf, "bf": bf}.items()]
    inits.append(numpy_helper.from_array(np.array(-1.0, np.float32), "lo"))
    inits.append(numpy_helper.from_array(np.array(6.0, np.float32), "hi"))
    save(out, "cnn",
         [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
          helper.make_node("Relu", ["c1"], ["r1"]),
          helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1], strides=[2, 2]),
          helper.make_node("Clip", ["c2", "lo", "hi"], ["r2"]),
          helper.make_node("MaxPool", ["r2"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
          helper.make_node("Flatten", ["p"], ["f"]),
          helper.make_node("Gemm", ["f", "wf", "bf"], ["l"]),
          helper.make_node("Softmax", ["l"], ["probs"], axis=1)],
         [vi("x", TensorProto.FLOAT, [2, 3, 11, 13])], [vi("probs", TensorProto.FLOAT, [2, 7])],
         inits, feeds={"x": x}, expected={"probs": probs})

    # the one-column tail of the SGEMM kernel through its epilogues: Gemm with a column bias,
    # alpha/beta and LeakyRelu (M 8, N 17), Conv with a row bias and Relu / Clip on 7 x 7 and
    # 9 x 9 images (N 49, 81)
    x, w, c = f32(8, 29), f32(17, 29), f32(17)
    g = 0.5 * (x.astype(np.float64) @ w.T) + 2.0 * c
    save(out, "gemm_tail_leaky",
         [helper.make_node("Gemm", ["x", "w", "c"], ["g"], transB=1, alpha=0.5, beta=2.0),
          helper.make_node("LeakyRelu", ["g"], ["y"], alpha=0.1)],
         [vi("x", TensorProto.FLOAT, [8, 29])], [vi("y", TensorProto.FLOAT, [8, 17])],
         [numpy_helper.from_array(w, "w"), numpy_helper.from_array(c, "c")],
         feeds={"x": x}, expected={"y": np.where(g < 0, 0.1 * g, g).astype(np.float32)})
    for hw in (7, 9):
        x = f32(1, 8, hw, hw)
        w1, b1 = f32(12, 8, 3, 3) * 0.3, f32(12)
        w2, b2 = f32(8, 12, 1, 1) * 0.3, f32(8)
        h1 = np.maximum(conv2d(x, w1, b1, 1, 1), 0)
        h2 = np.clip(conv2d(h1, w2, b2, 1, 0), 0.0, 6.0)
        inits = [numpy_helper.from_array(v, k) for k, v in {"w1": w1, "b1": b1, "w2": w2, "b2": b2}.items()]
        inits += [numpy_helper.from_array(np.array(v, np.float32), k) for k, v in {"lo": 0.0, "hi": 6.0}.items()]
        save(out, f"conv_tail_{hw}x{hw}",
             [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
              helper.make_node("Relu", ["c1"], ["r1"]),
              helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"]),
              helper.make_node("Clip", ["c2", "lo", "hi"], ["y"])],
             [vi("x", TensorProto.FLOAT, [1, 8, hw, hw])], [vi("y", TensorProto.FLOAT, [1, 8, hw, hw])],
             inits, feeds={"x": x}, expected={"y": h2})

    # MaxPool (the SIMD128 kernel of pool_wasm_simd.c): SqueezeNet's 3x3 stride 2 with ceil_mode,
    # 3x3 stride 1 pad 1, 2x2 stride 2, and odd kernels, strides (3: the scalar phase split) and
    # asymmetric pads, on widths that leave vector tails
    x = f32(2, 3, 23, 27)
    pools = {"p3s2c": ([3, 3], [2, 2], [0, 0, 0, 0], 1), "p3s1": ([3, 3], [1, 1], [1, 1, 1, 1], 0),
             "p2s2": ([2, 2], [2, 2], [0, 0, 0, 0], 0), "p5x4s3": ([5, 4], [2, 3], [2, 1, 0, 3], 0),
             "p4x7s3x2c": ([4, 7], [3, 2], [1, 3, 1, 2], 1), "p1s1": ([1, 1], [1, 1], [0, 0, 0, 0], 0)}
    want = {name: maxpool2d(x, k, st, pd, bool(c)) for name, (k, st, pd, c) in pools.items()}
    save(out, "maxpool",
         [helper.make_node("MaxPool", ["x"], [name], kernel_shape=k, strides=st, pads=pd, ceil_mode=c)
          for name, (k, st, pd, c) in pools.items()],
         [vi("x", TensorProto.FLOAT, [2, 3, 23, 27])],
         [vi(name, TensorProto.FLOAT, list(want[name].shape)) for name in pools],
         feeds={"x": x}, expected=want)

    # transformer pieces: LayerNormalization, Softmax over the last axis, Gelu from Erf, Tanh, Sigmoid
    x = f32(3, 5, 40) * 3
    gamma, beta = f32(40), f32(40)
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    ln = (x - mu) / np.sqrt(var + 1e-5) * gamma + beta
    erf = np.vectorize(math.erf)
    gelu = 0.5 * ln * (1 + erf(ln / math.sqrt(2)))
    e = np.exp(gelu - gelu.max(-1, keepdims=True))
    sm = e / e.sum(-1, keepdims=True)
    t = np.tanh(x) + 1 / (1 + np.exp(-x))
    consts = {"gamma": gamma, "beta": beta, "sqrt2": np.array(math.sqrt(2), np.float32),
              "one": np.array(1.0, np.float32), "half": np.array(0.5, np.float32)}
    save(out, "transformer_ops",
         [helper.make_node("LayerNormalization", ["x", "gamma", "beta"], ["ln"], axis=-1, epsilon=1e-5),
          helper.make_node("Div", ["ln", "sqrt2"], ["d"]),
          helper.make_node("Erf", ["d"], ["e"]),
          helper.make_node("Add", ["e", "one"], ["e1"]),
          helper.make_node("Mul", ["ln", "e1"], ["m"]),
          helper.make_node("Mul", ["m", "half"], ["gelu"]),
          helper.make_node("Softmax", ["gelu"], ["sm"], axis=-1),
          helper.make_node("Tanh", ["x"], ["th"]),
          helper.make_node("Sigmoid", ["x"], ["sg"]),
          helper.make_node("Add", ["th", "sg"], ["t"])],
         [vi("x", TensorProto.FLOAT, [3, 5, 40])],
         [vi("sm", TensorProto.FLOAT, [3, 5, 40]), vi("t", TensorProto.FLOAT, [3, 5, 40])],
         [numpy_helper.from_array(v, k) for k, v in consts.items()],
         feeds={"x": x}, expected={"sm": sm.astype(np.float32), "t": t.astype(np.float32)})

    # the API's tensor types: int64 and int32 arithmetic, uint8 -> float Cast, bool logic,
    # strings through Identity
    i64, i32 = rng.integers(-1000, 1000, (2, 3)).astype(np.int64), rng.integers(-9, 9, (4,)).astype(np.int32)
    u8, b = rng.integers(0, 255, (5,)).astype(np.uint8), rng.integers(0, 2, (3,)).astype(bool)
    strings = np.array(["onyx", "wasm", "ünïcödé", ""], dtype=object)
    save(out, "types",
         [helper.make_node("Mul", ["i64", "i64"], ["i64_sq"]),
          helper.make_node("Add", ["i32", "i32"], ["i32_2x"]),
          helper.make_node("Cast", ["u8"], ["u8_f"], to=TensorProto.FLOAT),
          helper.make_node("Not", ["b"], ["b_not"]),
          helper.make_node("Identity", ["s"], ["s_out"])],
         [vi("i64", TensorProto.INT64, [2, 3]), vi("i32", TensorProto.INT32, [4]),
          vi("u8", TensorProto.UINT8, [5]), vi("b", TensorProto.BOOL, [3]),
          vi("s", TensorProto.STRING, [4])],
         [vi("i64_sq", TensorProto.INT64, [2, 3]), vi("i32_2x", TensorProto.INT32, [4]),
          vi("u8_f", TensorProto.FLOAT, [5]), vi("b_not", TensorProto.BOOL, [3]),
          vi("s_out", TensorProto.STRING, [4])],
         feeds={"i64": i64, "i32": i32, "u8": u8, "b": b},
         expected={"i64_sq": i64 * i64, "i32_2x": i32 * 2, "u8_f": u8.astype(np.float32), "b_not": ~b})
    with open(os.path.join(out, "types.strings.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(strings))


if __name__ == "__main__":
    main(sys.argv[1])
