#!/usr/bin/python3
"""Inputs for timing one step of a decoder in ONNX Runtime's generation layout
(scripts/export_llama.py), in bench/compare's layout: BENCH/public/NAME.onnx (hard links) and
BENCH/public/NAME.CONFIG.npz.

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
        for f in [path] + [os.path.join(os.path.dirname(path), e.value) for t in m.graph.initializer
                           for e in t.external_data if e.key == "location"][:1]:
            link = os.path.join(pub, os.path.basename(f))
            if os.path.islink(link):
                os.remove(link)
            if not os.path.exists(link):
                os.link(f, link)   # hard links: onyx does not follow symbolic links to external data
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
