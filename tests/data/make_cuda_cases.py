#!/usr/bin/env python3
"""Cases for the cross-provider test (tests/cuda/test_cross_provider.c): one
small model per operator the CUDA provider claims with float data, in float32
and in float16, in the layout of the ONNX node tests
(tests/data/cuda_cases/test_OP_TYPE/model.onnx + test_data_set_0/input_N.pb),
so that every claimed operator x type runs on the CUDA provider and on the
CPU provider, including the com.microsoft operators and float16 kernels the
ONNX node suite does not exercise. No expected outputs: the CPU provider's
result is the reference.

Run from the repository root: /usr/bin/python3 tests/data/make_cuda_cases.py
"""
import os
import shutil

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = "tests/data/cuda_cases"
MS = "com.microsoft"
rng = np.random.default_rng(15)


def rand(shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


def case(name, op, inputs, attrs=None, domain="", opset=17, consts=None, out_rank=None, outputs=1,
         input_names=None):
    """Write test_NAME_{float,float16}: inputs is a list of (name, array) fed at
    run time (float arrays are cast per type; others kept), consts a list of
    (name, array) initializers (float ones cast too)."""
    for tname, ttype, npt in (("float", TensorProto.FLOAT, np.float32), ("float16", TensorProto.FLOAT16, np.float16)):
        def conv(a):
            return a.astype(npt) if a.dtype == np.float32 else a
        feeds = [(n, conv(a)) for n, a in inputs]
        # Resize's scales are float in every type (the spec's constraint)
        inits = [numpy_helper.from_array(a if n == "scales" else conv(a), n) for n, a in (consts or [])]
        names = input_names if input_names is not None else [n for n, _ in feeds] + [i.name for i in inits]
        outs = ["y"] if outputs == 1 else ["y%d" % k for k in range(outputs)]
        node = helper.make_node(op, names, outs, domain=domain, name=name, **(attrs or {}))
        graph = helper.make_graph(
            [node], "cuda_" + name,
            [helper.make_tensor_value_info(n, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype], list(a.shape)) for n, a in feeds],
            [helper.make_tensor_value_info(o, ttype, None) for o in outs], inits)
        imports = [helper.make_opsetid("", opset)]
        if domain:
            imports.append(helper.make_opsetid(domain, 1))
        model = helper.make_model(graph, opset_imports=imports)
        model.ir_version = 8
        d = os.path.join(OUT, "test_%s_%s" % (name, tname))
        os.makedirs(os.path.join(d, "test_data_set_0"))
        onnx.save(model, os.path.join(d, "model.onnx"))
        for k, (n, a) in enumerate(feeds):
            t = numpy_helper.from_array(a, n)
            with open(os.path.join(d, "test_data_set_0", "input_%d.pb" % k), "wb") as f:
                f.write(t.SerializeToString())


shutil.rmtree(OUT, ignore_errors=True)
X = rand([2, 3, 4])
V4 = rand([4])

# elementwise (ai.onnx)
for op in ("Add", "Sub", "Mul", "Max", "Min"):
    case(op.lower(), op, [("a", X), ("b", V4)])
case("div", "Div", [("a", X), ("b", rand([4], 0.5, 2.0))])
case("pow", "Pow", [("a", rand([2, 3, 4], 0.5, 2.0)), ("b", rand([2, 3, 4], -1.0, 2.0))])
for op in ("Exp", "Neg", "Abs", "Erf", "Relu", "Sigmoid", "Tanh"):
    case(op.lower(), op, [("x", X)])
for op in ("Log", "Sqrt"):
    case(op.lower(), op, [("x", rand([2, 3, 4], 0.1, 3.0))])
case("reciprocal", "Reciprocal", [("x", rand([2, 3, 4], 0.5, 2.0))])
case("leakyrelu", "LeakyRelu", [("x", X)], {"alpha": 0.1})
case("hardsigmoid", "HardSigmoid", [("x", rand([2, 3, 4], -4, 4))], {"alpha": 0.25, "beta": 0.4})
case("gelu", "Gelu", [("x", rand([2, 3, 4], -3, 3))], opset=20)
case("gelu_tanh", "Gelu", [("x", rand([2, 3, 4], -3, 3))], {"approximate": "tanh"}, opset=20)
case("clip", "Clip", [("x", X)], consts=[("lo", np.array(-0.5, np.float32)), ("hi", np.array(0.6, np.float32))])
case("where", "Where", [("c", rng.uniform(size=[2, 3, 4]) > 0.5), ("a", X), ("b", V4)])
# com.microsoft activations
case("ms_gelu", "Gelu", [("x", rand([2, 3, 8], -3, 3))], domain=MS)
case("bias_gelu", "BiasGelu", [("x", rand([2, 3, 8], -3, 3)), ("bias", rand([8]))], domain=MS)
case("fast_gelu", "FastGelu", [("x", rand([2, 3, 8], -3, 3)), ("bias", rand([8]))], domain=MS)

# row-wise
case("softmax", "Softmax", [("x", rand([2, 3, 7], -3, 3))], {"axis": -1}, opset=13)
case("logsoftmax", "LogSoftmax", [("x", rand([2, 3, 7], -3, 3))], {"axis": -1}, opset=13)
case("layernorm", "LayerNormalization", [("x", rand([2, 3, 8], -2, 2)), ("scale", rand([8])), ("b", rand([8]))],
     {"axis": -1, "epsilon": 1e-5})
case("skip_layernorm", "SkipLayerNormalization",
     [("x", rand([2, 3, 8])), ("skip", rand([2, 3, 8])), ("gamma", rand([8])), ("beta", rand([8])), ("bias", rand([8]))],
     {"epsilon": 1e-5}, domain=MS)
case("batchnorm", "BatchNormalization",
     [("x", rand([2, 3, 4, 5])), ("scale", rand([3])), ("b", rand([3])), ("mean", rand([3])),
      ("var", rand([3], 0.5, 2.0))], {"epsilon": 1e-5}, opset=15)
case("globalaveragepool", "GlobalAveragePool", [("x", rand([2, 3, 4, 5]))])
case("reducemean", "ReduceMean", [("x", rand([2, 3, 6]))], {"keepdims": 1}, opset=18,
     consts=[("axes", np.array([-1], np.int64))])
case("reducesum", "ReduceSum", [("x", rand([2, 3, 6]))], {"keepdims": 0}, opset=13,
     consts=[("axes", np.array([1, 2], np.int64))])
case("attention", "Attention",
     [("x", rand([2, 4, 8])), ("w", rand([8, 24], -0.5, 0.5)), ("bias", rand([24], -0.2, 0.2)),
      ("mask", np.array([4, 3], np.int32))], {"num_heads": 2}, domain=MS)
case("attention_causal", "Attention", [("x", rand([1, 5, 8])), ("w", rand([8, 24], -0.5, 0.5))],
     {"num_heads": 2, "unidirectional": 1}, domain=MS)

# GEMMs
case("matmul", "MatMul", [("a", rand([2, 3, 8])), ("b", rand([8, 5]))])
case("gemm", "Gemm", [("a", rand([3, 8])), ("b", rand([5, 8])), ("c", rand([5]))], {"transB": 1, "alpha": 0.5})

# cuDNN
case("conv", "Conv", [("x", rand([1, 3, 6, 6])), ("w", rand([4, 3, 3, 3], -0.5, 0.5)), ("b", rand([4]))],
     {"pads": [1, 1, 1, 1]})
case("conv_group", "Conv", [("x", rand([1, 4, 5, 5])), ("w", rand([4, 2, 3, 3], -0.5, 0.5))],
     {"group": 2, "strides": [2, 2]})
case("fused_conv", "FusedConv", [("x", rand([1, 3, 6, 6])), ("w", rand([4, 3, 3, 3], -0.5, 0.5)), ("b", rand([4]))],
     {"pads": [1, 1, 1, 1], "activation": "Relu"}, domain=MS)
case("convtranspose", "ConvTranspose", [("x", rand([1, 3, 4, 4])), ("w", rand([3, 2, 3, 3], -0.5, 0.5)),
                                        ("b", rand([2]))], {"strides": [2, 2], "pads": [1, 1, 1, 1],
                                                            "output_padding": [1, 1]})
case("convtranspose_group", "ConvTranspose", [("x", rand([1, 4, 3, 3])), ("w", rand([4, 1, 2, 2], -0.5, 0.5))],
     {"group": 2})
case("maxpool", "MaxPool", [("x", rand([1, 3, 6, 6]))], {"kernel_shape": [2, 2], "strides": [2, 2]}, opset=12)
case("averagepool", "AveragePool", [("x", rand([1, 3, 6, 6]))],
     {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "count_include_pad": 0}, opset=19)

# Resize: the modes the CUDA kernel claims
img = rand([1, 2, 3, 4])
empty = np.zeros([0], np.float32)
case("resize_linear_half_pixel", "Resize", [("x", img)], {"mode": "linear"}, opset=13,
     input_names=["x", "", "scales"], consts=[("scales", np.array([1, 1, 2, 1.5], np.float32))])
case("resize_linear_align_corners", "Resize", [("x", img)],
     {"mode": "linear", "coordinate_transformation_mode": "align_corners"}, opset=13,
     input_names=["x", "", "", "sizes"], consts=[("sizes", np.array([1, 2, 5, 7], np.int64))])
case("resize_linear_pytorch", "Resize", [("x", img)],
     {"mode": "linear", "coordinate_transformation_mode": "pytorch_half_pixel"}, opset=13,
     input_names=["x", "", "", "sizes"], consts=[("sizes", np.array([1, 2, 1, 3], np.int64))])
case("resize_nearest_asymmetric_floor", "Resize", [("x", img)],
     {"mode": "nearest", "coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"}, opset=13,
     input_names=["x", "", "scales"], consts=[("scales", np.array([1, 1, 2.5, 0.75], np.float32))])
case("resize_nearest_half_pixel", "Resize", [("x", img)], {"mode": "nearest"}, opset=13,
     input_names=["x", "", "", "sizes"], consts=[("sizes", np.array([1, 2, 7, 9], np.int64))])
case("resize_nearest_ceil_symmetric", "Resize", [("x", img)],
     {"mode": "nearest", "coordinate_transformation_mode": "half_pixel_symmetric", "nearest_mode": "ceil"}, opset=19,
     input_names=["x", "", "scales"], consts=[("scales", np.array([1, 1, 1.7, 2.2], np.float32))])
print("wrote", len(os.listdir(OUT)), "cases to", OUT)
