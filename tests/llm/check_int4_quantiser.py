#!/usr/bin/python3
"""`onyx quantize --mode int4` weight error, read back from the written MatMulNBits blocks:

- round to nearest reconstructs each value within half a step (symmetric: one step where the
  extreme opposite to the largest magnitude clips at level 7);
- --scale-search never has more squared error than round to nearest in any block, and less
  in total;
- --lm-head-bits 8 writes the MatMul that produces a graph output with 8-bit blocks whose
  error is far below the 4-bit one.

    /usr/bin/python3 tests/llm/check_int4_quantiser.py ONYX WORK_DIR

Uses scripts/export_llama.py --size small (numpy + onnx only). Prints one line per check and a
closing "N passed, N failed" line; exits 1 on a failure.
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def dequantise(node, inits):
    """The float [K, N] matrix a MatMulNBits node multiplies by, and its per-block layout."""
    a = {x.name: onnx.helper.get_attribute_value(x) for x in node.attribute}
    K, N, bits, blk = a["K"], a["N"], a["bits"], a["block_size"]
    b = inits[node.input[1]]
    scales = inits[node.input[2]].reshape(N, -1)
    kb = scales.shape[1]
    if bits == 4:
        q = np.stack([b & 15, b >> 4], -1).reshape(N, kb, blk).astype(np.float32)
    else:
        q = b.reshape(N, kb, blk).astype(np.float32)
    if len(node.input) > 3 and node.input[3]:
        z = inits[node.input[3]].reshape(N, -1)
        if bits == 4:
            z = np.stack([z & 15, z >> 4], -1).reshape(N, -1)
        z = z[:, :kb].astype(np.float32)
    else:
        z = np.full((N, kb), 2 ** (bits - 1), np.float32)
    w = (q - z[..., None]) * scales[..., None]
    return w.reshape(N, kb * blk)[:, :K].T, bits, blk


def block_errors(wq, w, blk):
    K, N = w.shape
    kb = (K + blk - 1) // blk
    d = np.zeros((kb * blk, N), np.float64)
    d[:K] = (wq - w).astype(np.float64) ** 2
    return d.reshape(kb, blk, N).sum(1)


def quantise(onyx, src, out, *opts):
    subprocess.run([onyx, "quantize", src, out, "--mode", "int4", *opts], check=True, capture_output=True)
    m = onnx.load(out)
    inits = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    outputs = {o.name for o in m.graph.output}
    return {n.name: (n, n.output[0] in outputs) for n in m.graph.node if n.op_type == "MatMulNBits"}, inits


def main():
    onyx, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    src = os.path.join(work, "llama_small.onnx")
    subprocess.run(["/usr/bin/python3", os.path.join(HERE, "../../scripts/export_llama.py"), "--size", "small", src],
                   check=True, capture_output=True)
    fm = onnx.load(src)
    floats = {t.name: numpy_helper.to_array(t) for t in fm.graph.initializer}
    passed = failed = 0

    def check(ok, what):
        nonlocal passed, failed
        print(("PASS " if ok else "FAIL ") + what)
        passed += bool(ok)
        failed += not ok

    def weight_of(node):
        return floats[node.input[1].rsplit("_Q", 1)[0]]

    for sym in ("--symmetric", "--asymmetric"):
        for blk in ("32", "16"):
            rtn, ri = quantise(onyx, src, os.path.join(work, "rtn.onnx"), sym, "--block-size", blk)
            srch, si = quantise(onyx, src, os.path.join(work, "search.onnx"), sym, "--block-size", blk,
                                "--scale-search", "--lm-head-bits", "8")
            check(len(rtn) == len(srch) == 15, f"{sym} block {blk}: {len(rtn)} MatMulNBits nodes (want 15)")
            tot_r = tot_s = 0.0
            worse = 0
            half_step_ok = True
            for name, (node, is_head) in rtn.items():
                w = weight_of(node)
                wr, bits, b = dequantise(node, ri)
                # round to nearest: every value within half a step (its block's scale / 2) plus rounding
                sc = np.abs(ri[node.input[2]].reshape(w.shape[1], -1)).T
                step = np.repeat(sc, b, 0)[: w.shape[0]]
                # (symmetric: levels -8..7 times the scale, so the extreme opposite to the largest
                # magnitude may clip by up to one step)
                limit = step * (1.0 if sym == "--symmetric" else 0.5) + 1e-6
                half_step_ok &= bool(np.all(np.abs(wr - w) <= limit))
                er = block_errors(wr, w, b)
                sn, s_head = srch[name]
                ws, sbits, _ = dequantise(sn, si)
                es = block_errors(ws, w, b)
                if is_head:
                    check(sbits == 8 and s_head, f"{sym} block {blk}: head {name} written with {sbits} bits")
                    check(es.sum() < er.sum() / 50,
                          f"{sym} block {blk}: 8-bit head error {es.sum():.3e} < 4-bit {er.sum():.3e} / 50")
                    continue
                worse += int(np.sum(es > er * (1 + 1e-5) + 1e-12))
                tot_r += er.sum()
                tot_s += es.sum()
            check(half_step_ok, f"{sym} block {blk}: round to nearest within half a step everywhere (symmetric: "
                  "one step at the clipped extreme)")
            check(worse == 0, f"{sym} block {blk}: scale search worse than round to nearest in {worse} blocks")
            check(tot_s < tot_r * 0.98, f"{sym} block {blk}: squared error {tot_r:.4e} -> {tot_s:.4e} with search "
                  f"({100 * (1 - tot_s / tot_r):.1f}% less)")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
