#!/usr/bin/python3
"""A small recurrent classifier with control flow, and the same model without it (issue 9,
"Small models and control flow"; bench/branch_overhead.sh times the pair).

  make_branch_model.py OUTDIR [--steps T]

OUTDIR/branchy.onnx: features x[T, F] and the sample rate sr (int64 scalar). A Loop runs a tanh
RNN cell over the T frames (its body holds its weights as Constant nodes and reads x from the
outer scope, as exporters write it), then an If on sr == 16000 picks the classifier head (each
branch again with Constant weights, a scale and a Softmax).
OUTDIR/flat.onnx: the same computation for sr = 16000 with the Loop unrolled into T copies of
the cell and the 16 kHz head inlined: the nodes a run executes are the same, only the control
flow is gone. OUTDIR/inputs.npz: x and sr = 16000 for both.

Outputs of the two models are equal for sr = 16000 (the generator checks with onnx's reference
evaluator when it is installed)."""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F, H, C = 16, 32, 4


def const_node(name, arr):
    return helper.make_node("Constant", [], [name], name=f"const_{name}",
                            value=numpy_helper.from_array(arr, name))


def weights(rng):
    w = {
        "W": rng.standard_normal((F, H)).astype(np.float32) * 0.3,
        "U": rng.standard_normal((H, H)).astype(np.float32) * 0.2,
        "b": rng.standard_normal((H,)).astype(np.float32) * 0.1,
    }
    for head in ("16k", "8k"):
        w[f"V{head}"] = rng.standard_normal((H, C)).astype(np.float32) * 0.5
        w[f"c{head}"] = rng.standard_normal((C,)).astype(np.float32) * 0.1
    return w


def cell_nodes(w, xt_src, h_in, h_out, tag, gather_idx):
    """h_out = tanh(x[i] W + h_in U + b); gather_idx names the (scalar int64) frame index."""
    return [
        const_node(f"W_{tag}", w["W"]), const_node(f"U_{tag}", w["U"]), const_node(f"b_{tag}", w["b"]),
        const_node(f"axes_{tag}", np.array([0], np.int64)),
        helper.make_node("Gather", [xt_src, gather_idx], [f"xt_{tag}"], name=f"gather_{tag}", axis=0),
        helper.make_node("Unsqueeze", [f"xt_{tag}", f"axes_{tag}"], [f"xr_{tag}"], name=f"unsq_{tag}"),
        helper.make_node("MatMul", [f"xr_{tag}", f"W_{tag}"], [f"a_{tag}"], name=f"mmx_{tag}"),
        helper.make_node("MatMul", [h_in, f"U_{tag}"], [f"r_{tag}"], name=f"mmh_{tag}"),
        helper.make_node("Add", [f"a_{tag}", f"r_{tag}"], [f"s_{tag}"], name=f"add_{tag}"),
        helper.make_node("Add", [f"s_{tag}", f"b_{tag}"], [f"sb_{tag}"], name=f"bias_{tag}"),
        helper.make_node("Tanh", [f"sb_{tag}"], [h_out], name=f"tanh_{tag}"),
    ]


def head_nodes(w, head, h, out, tag):
    return [
        const_node(f"V_{tag}", w[f"V{head}"]), const_node(f"c_{tag}", w[f"c{head}"]),
        const_node(f"scale_{tag}", np.array(0.5 if head == "16k" else 0.25, np.float32)),
        helper.make_node("MatMul", [h, f"V_{tag}"], [f"lo_{tag}"], name=f"head_mm_{tag}"),
        helper.make_node("Add", [f"lo_{tag}", f"c_{tag}"], [f"lb_{tag}"], name=f"head_add_{tag}"),
        helper.make_node("Mul", [f"lb_{tag}", f"scale_{tag}"], [f"ls_{tag}"], name=f"head_scale_{tag}"),
        helper.make_node("Softmax", [f"ls_{tag}"], [out], name=f"head_softmax_{tag}", axis=-1),
    ]


def branchy(w, steps):
    body = helper.make_graph(
        cell_nodes(w, "x", "h_in", "h_out", "body", "i") +
        [helper.make_node("Identity", ["cond_in"], ["cond_out"], name="cond")],
        "rnn_step",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("h_in", TensorProto.FLOAT, [1, H])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("h_out", TensorProto.FLOAT, [1, H])])
    branches = {}
    for head in ("16k", "8k"):
        branches[head] = helper.make_graph(
            head_nodes(w, head, "h_last", f"p_{head}", head), f"head_{head}", [],
            [helper.make_tensor_value_info(f"p_{head}", TensorProto.FLOAT, [1, C])])
    nodes = [
        const_node("trip", np.array(steps, np.int64)),
        const_node("yes", np.array(True)),
        const_node("h0", np.zeros((1, H), np.float32)),
        const_node("rate16k", np.array(16000, np.int64)),
        helper.make_node("Loop", ["trip", "yes", "h0"], ["h_last"], name="rnn", body=body),
        helper.make_node("Equal", ["sr", "rate16k"], ["is16k"], name="is16k"),
        helper.make_node("If", ["is16k"], ["probs"], name="pick_head",
                         then_branch=branches["16k"], else_branch=branches["8k"]),
    ]
    g = helper.make_graph(nodes, "branchy_rnn",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [steps, F]),
                           helper.make_tensor_value_info("sr", TensorProto.INT64, [])],
                          [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [1, C])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="onyx-bench")


def flat(w, steps):
    nodes = [const_node("h0", np.zeros((1, H), np.float32))]
    h = "h0"
    for t in range(steps):
        nodes.append(const_node(f"i{t}", np.array(t, np.int64)))
        nodes += cell_nodes(w, "x", h, f"h{t + 1}", f"t{t}", f"i{t}")
        h = f"h{t + 1}"
    nodes += head_nodes(w, "16k", h, "probs", "16k")
    g = helper.make_graph(nodes, "flat_rnn",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [steps, F]),
                           helper.make_tensor_value_info("sr", TensorProto.INT64, [])],
                          [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [1, C])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="onyx-bench")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--steps", type=int, default=16)
    a = ap.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    w = weights(np.random.default_rng(7))
    models = {"branchy": branchy(w, a.steps), "flat": flat(w, a.steps)}
    for name, m in models.items():
        onnx.checker.check_model(m)
        onnx.save(m, os.path.join(a.outdir, f"{name}.onnx"))
    x = np.random.default_rng(1).standard_normal((a.steps, F)).astype(np.float32)
    np.savez(os.path.join(a.outdir, "inputs.npz"), x=x, sr=np.array(16000, np.int64))
    try:
        from onnx.reference import ReferenceEvaluator
    except ImportError:
        return
    feeds = {"x": x, "sr": np.array(16000, np.int64)}
    p1 = ReferenceEvaluator(models["branchy"]).run(None, feeds)[0]
    p2 = ReferenceEvaluator(models["flat"]).run(None, feeds)[0]
    assert np.allclose(p1, p2, atol=1e-5), (p1, p2)


if __name__ == "__main__":
    main()
