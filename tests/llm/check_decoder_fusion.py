#!/usr/bin/python3
"""Decoder fusions on a torch.onnx.export of a Llama-style decoder (make_decoder_export.py):
`onyx optimize --level extended` must fuse every RMSNorm, residual Add + RMSNorm, rotate-half
rotary, SiLU and attention block (repeat_kv, mask, Softmax: GroupQueryAttention; node counts
asserted), and the outputs of the original file (onyx, fusions
off), the fused file (onyx, and ONNX Runtime 1.30 with its own optimisations off, so it runs
exactly the saved com.microsoft nodes) must all match torch's; the fused file's outputs must
equal the unfused graph's, and the fused file (with ONNX Runtime's ai.onnx-domain
SimplifiedLayerNormalization left unfused, an op the onnx checker does not know) must pass
onnx.checker. Variants: batch 2 with a left-padded (not causal) mask, heads == kv heads (no
repeat_kv), a prompt without cache. QuickGelu (the SiLU's kernel) is checked on its own against numpy and ONNX Runtime.

    /usr/bin/python3 tests/llm/check_decoder_fusion.py ONYX WORK_DIR [BENCH_DIR]   (NODE_PATH set)

Prints one line per check and a closing "N passed, N failed" line; exits 1 on a failure.
"""
import collections
import os
import subprocess
import sys

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
LAYERS = 2


def ops(path):
    return collections.Counter(n.op_type for n in onnx.load(path, load_external_data=False).graph.node)


def onyx_outputs(onyx, model, inputs, out, level):
    subprocess.run([onyx, "run", model, "--inputs", inputs, "--output", out, "-o", level], check=True,
                   capture_output=True, text=True)
    return dict(np.load(out))


def ort_outputs(bench, model, inputs, dump):
    subprocess.run(["node", os.path.join(bench, "ort_run.js"), model, "--inputs", inputs, "--dump", dump,
                    "--opt", "disabled", "--runs", "1", "--warmup", "0", "--threads", "1"], check=True,
                   capture_output=True, text=True)
    import json
    res = {}
    for o in json.load(open(os.path.join(dump, "outputs.json"))):
        res[o["name"]] = np.fromfile(os.path.join(dump, o["file"]), dtype=np.float32).reshape(o["shape"])
    return res


def main():
    onyx, work = sys.argv[1], sys.argv[2]
    bench = sys.argv[3] if len(sys.argv) > 3 else os.path.join(HERE, "../../../shared/bench")
    os.makedirs(work, exist_ok=True)
    subprocess.run(["/usr/bin/python3", os.path.join(HERE, "make_decoder_export.py"), work,
                    "--layers", str(LAYERS)], check=True, capture_output=True)
    model, inputs = os.path.join(work, "decoder.onnx"), os.path.join(work, "decoder_inputs.npz")
    fused = os.path.join(work, "decoder_fused.onnx")
    subprocess.run([onyx, "optimize", model, fused, "--level", "extended"], check=True, capture_output=True)
    ref = dict(np.load(os.path.join(work, "decoder_torch.npz")))
    passed = failed = 0

    def check(ok, what):
        nonlocal passed, failed
        print(("PASS " if ok else "FAIL ") + what)
        passed += ok
        failed += not ok

    before, after = ops(model), ops(fused)
    want = {"SimplifiedLayerNormalization": 1, "SkipSimplifiedLayerNormalization": 2 * LAYERS,
            "RotaryEmbedding": 2 * LAYERS, "QuickGelu": LAYERS}
    for op, n in want.items():
        check(after[op] == n, f"{op}: {after[op]} nodes (want {n})")
    for op in ("Pow", "Sqrt", "ReduceMean", "Neg", "Sigmoid"):
        check(after[op] == 0, f"no {op} left ({after[op]}; {before[op]} before)")
    print(f"nodes: {sum(before.values())} exported -> {sum(after.values())} fused")

    def compare(got, what, against=None):
        for name, want_v in (ref if against is None else against).items():
            g = got.get(name)
            if g is None or g.shape != want_v.shape:
                check(False, f"{what} {name}: missing or shape {None if g is None else g.shape}")
                continue
            err = float(np.max(np.abs(g - want_v)))
            tol = 1e-4 + 1e-3 * float(np.max(np.abs(want_v)))
            check(err <= tol, f"{what} {name}: max |diff| vs torch {err:.2e} (tolerance {tol:.2e})")

    check(after["GroupQueryAttention"] == LAYERS and after["Softmax"] == 0 and after["Where"] == 0,
          f"attention: {after['GroupQueryAttention']} GroupQueryAttention (want {LAYERS}), "
          f"{after['Softmax']} Softmax and {after['Where']} Where (repeat_kv) left")
    plain = onyx_outputs(onyx, model, inputs, os.path.join(work, "plain.npz"), "basic")
    compare(plain, "onyx exported file")
    fused_out = onyx_outputs(onyx, fused, inputs, os.path.join(work, "fused.npz"), "extended")
    compare(fused_out, "onyx fused file")
    compare(fused_out, "onyx fused file vs unfused graph:", plain)
    compare(ort_outputs(bench, fused, inputs, os.path.join(work, "ort_fused")), "ORT 1.30 fused file")
    ck = os.path.join(work, "decoder_fused_ck.onnx")
    subprocess.run([onyx, "optimize", model, ck, "--level", "extended", "--disable-pass",
                    "simplified_layer_norm_fusion", "--disable-pass", "skip_layer_norm_fusion"], check=True,
                   capture_output=True)
    try:
        onnx.checker.check_model(onnx.load(ck), full_check=False)
        ok, why = ops(ck)["GroupQueryAttention"] == LAYERS, ""
    except onnx.checker.ValidationError as e:
        ok, why = False, str(e).splitlines()[0]
    check(ok, f"onnx.checker accepts the saved GroupQueryAttention model {why}")
    # variants: the mask as attention_bias covers padding; no repeat_kv; no cache
    for tag, extra in (("pad", ["--batch", "2", "--seq", "1", "--pad", "2"]), ("mha", ["--kv-heads", "4"]),
                       ("prompt", ["--past", "0", "--seq", "6"])):
        subprocess.run(["/usr/bin/python3", os.path.join(HERE, "make_decoder_export.py"), work, "--layers",
                        str(LAYERS), "--name", tag, *extra], check=True, capture_output=True)
        vm, vf, vi = (os.path.join(work, tag + s) for s in (".onnx", "_fused.onnx", "_inputs.npz"))
        subprocess.run([onyx, "optimize", vm, vf, "--level", "extended"], check=True, capture_output=True)
        n_gqa = ops(vf)["GroupQueryAttention"]
        check(n_gqa == LAYERS, f"{tag}: {n_gqa} GroupQueryAttention (want {LAYERS})")
        vref = dict(np.load(os.path.join(work, tag + "_torch.npz")))
        compare(onyx_outputs(onyx, vf, vi, os.path.join(work, tag + ".npz"), "extended"), f"onyx {tag} fused file",
                vref)
        compare(ort_outputs(bench, vf, vi, os.path.join(work, "ort_" + tag)), f"ORT 1.30 {tag} fused file", vref)
    # the same decoder with cos/sin caches whose halves differ: rotary must stay unfused, the rest
    # fuses, and the outputs still match torch's
    subprocess.run(["/usr/bin/python3", os.path.join(HERE, "make_decoder_export.py"), work, "--layers", str(LAYERS),
                    "--uneven-cache", "--name", "uneven"], check=True, capture_output=True)
    um, uf = os.path.join(work, "uneven.onnx"), os.path.join(work, "uneven_fused.onnx")
    subprocess.run([onyx, "optimize", um, uf, "--level", "extended"], check=True, capture_output=True)
    ua = ops(uf)
    check(ua["RotaryEmbedding"] == 0 and ua["Neg"] == 2 * LAYERS and ua["QuickGelu"] == LAYERS,
          f"uneven caches: {ua['RotaryEmbedding']} RotaryEmbedding, {ua['Neg']} Neg left, {ua['QuickGelu']} QuickGelu")
    ref = dict(np.load(os.path.join(work, "uneven_torch.npz")))
    compare(onyx_outputs(onyx, uf, os.path.join(work, "uneven_inputs.npz"), os.path.join(work, "uneven.npz"),
                         "extended"), "onyx uneven-cache fused file")

    # QuickGelu itself at its default alpha (1.702) and alpha 1 on an odd size, vs numpy and ORT
    from onnx import TensorProto, helper
    x = np.random.default_rng(3).standard_normal((3, 37)).astype(np.float32) * 4
    for alpha in (None, 1.0):
        attrs = {} if alpha is None else {"alpha": alpha}
        node = helper.make_node("QuickGelu", ["X"], ["Y"], domain="com.microsoft", **attrs)
        g = helper.make_graph([node], "qg", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [3, 37])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [3, 37])])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
        m.ir_version = 8
        qp, qi = os.path.join(work, "quick_gelu.onnx"), os.path.join(work, "quick_gelu_in.npz")
        onnx.save(m, qp)
        np.savez(qi, X=x)
        a = 1.702 if alpha is None else alpha
        want_y = x / (1 + np.exp(-a * x))
        for what, got in (("onyx", onyx_outputs(onyx, qp, qi, os.path.join(work, "qg.npz"), "disabled")),
                          ("ORT 1.30", ort_outputs(bench, qp, qi, os.path.join(work, "ort_qg")))):
            err = float(np.max(np.abs(got["Y"] - want_y)))
            check(err <= 1e-5 * 16, f"{what} QuickGelu alpha {a}: max |diff| vs numpy {err:.2e}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
