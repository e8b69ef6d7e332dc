#!/usr/bin/python3
"""Inputs for timing one step of a decoder in ONNX Runtime's generation layout
(scripts/export_llama.py), in bench/compare's layout: BENCH/public/NAME.onnx and
BENCH/public/NAME.CONFIG.npz. A model outside BENCH/public is hard linked there; one with
external data must be written into BENCH/public itself (onyx refuses external data files with
more than one link).

    /usr/bin/python3 bench/llm/make_inputs.py BENCH MODEL.onnx [MODEL.onnx ...]

CONFIGs: decode512 (one new token after 512 cached ones: input_ids [1, 1], attention_mask
[1, 513], past [1, kv_heads, 512, head_size] random) and prefill128 (128 prompt tokens, empty
past). The shapes come from the model's past_key_values.0.key and logits declarations.
"""
import os
import sys

import numpy as np
import onnx


def main():
    bench, models = sys.argv[1], sys.argv[2:]
    pub = os.path.join(bench, "public")
    os.makedirs(pub, exist_ok=True)
    rng = np.random.default_rng(7)
    for path in models:
        name = os.path.splitext(os.path.basename(path))[0]
        m = onnx.load(path, load_external_data=False)
        dims = {i.name: [d.dim_value for d in i.type.tensor_type.shape.dim] for i in
                list(m.graph.input) + list(m.graph.output)}
        L = sum(1 for n in dims if n.startswith("past_key_values.") and n.endswith(".key"))
        kv, hd, V = dims["past_key_values.0.key"][1], dims["past_key_values.0.key"][3], dims["logits"][2]
        if os.path.realpath(os.path.dirname(path)) != os.path.realpath(pub):
            ext = [e.value for t in m.graph.initializer for e in t.external_data if e.key == "location"]
            if ext:
                # onyx refuses external data with more than one hard link (another name may lie
                # outside the model directory), so such a model is not linked: it must be here
                sys.exit(f"make_inputs.py: {path} has external data ({ext[0]}): export it into {pub} "
                         "instead (a hard link to its data would be refused)")
            link = os.path.join(pub, os.path.basename(path))
            if os.path.islink(link) or os.path.exists(link):
                os.remove(link)
            os.link(path, link)
        for cfg, (seq, past) in {"decode512": (1, 512), "prefill128": (128, 0)}.items():
            feeds = {"input_ids": rng.integers(0, V, size=(1, seq)).astype(np.int64),
                     "attention_mask": np.ones((1, past + seq), np.int64)}
            for i in range(L):
                for kind in ("key", "value"):
                    feeds[f"past_key_values.{i}.{kind}"] = rng.standard_normal((1, kv, past, hd), dtype=np.float32)
            np.savez(os.path.join(pub, f"{name}.{cfg}.npz"), **feeds)
        print(f"{name}: decode512 and prefill128 inputs in {pub}")


if __name__ == "__main__":
    main()
