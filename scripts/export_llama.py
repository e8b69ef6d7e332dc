#!/usr/bin/python3
"""Export a Llama-style decoder with random weights (fixed seed) as ONNX, in the layout ONNX
Runtime's generation tools (onnxruntime-genai's model builder) write:

  inputs   input_ids int64 [batch, sequence], attention_mask int64 [batch, total_sequence],
           past_key_values.N.key / .value float [batch, kv_heads, past_sequence, head_size]
  outputs  logits float [batch, sequence, vocab],
           present.N.key / .value float [batch, kv_heads, total_sequence, head_size]
  graph    Gather (embedding), SimplifiedLayerNormalization / SkipSimplifiedLayerNormalization
           (RMSNorm with the residual adds), MatMul projections, com.microsoft
           GroupQueryAttention (rotary inside, cos/sin caches as initializers, seqlens_k and
           total_sequence_length from attention_mask), SwiGLU MLP (Sigmoid, Mul), MatMul lm_head.

    /usr/bin/python3 scripts/export_llama.py --size small OUT.onnx
    /usr/bin/python3 scripts/export_llama.py --size tinyllama /var/tmp/onyx-llm/tinyllama.onnx

small: hidden 64, 2 layers, 4 query / 2 key-value heads, intermediate 176, vocabulary 512 (tests).
tinyllama: TinyLlama-1.1B's shape: hidden 2048, 22 layers, 32 / 4 heads, intermediate 5632,
vocabulary 32000, 2048 positions; its 4.4 GB of float32 weights go to OUT.onnx.data.

Memory stays bounded: each weight is drawn, written straight to the external data file and
dropped, so the process holds one weight (the 262 MB embedding at most), never the model.
Needs only numpy (with Debian's python3-torch) and python3-onnx.
"""
import argparse
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

SIZES = {
    "small": dict(hidden=64, layers=2, heads=4, kv_heads=2, inter=176, vocab=512, max_pos=256),
    "tinyllama": dict(hidden=2048, layers=22, heads=32, kv_heads=4, inter=5632, vocab=32000, max_pos=2048),
}


class Weights:
    """Initializers, inline or appended to one external data file (64-byte aligned offsets,
    so a runtime can map them in place)."""

    def __init__(self, model_path, external):
        self.inits = []
        self.external = external
        if external:
            self.location = os.path.basename(model_path) + ".data"
            self.f = open(os.path.join(os.path.dirname(os.path.abspath(model_path)), self.location), "wb")
            self.offset = 0

    def add(self, name, arr):
        arr = np.ascontiguousarray(arr)
        if not self.external or arr.nbytes < 4096:
            self.inits.append(numpy_helper.from_array(arr, name))
            return name
        pad = (-self.offset) % 64
        if pad:
            self.f.write(b"\0" * pad)
            self.offset += pad
        self.f.write(arr.tobytes())
        t = TensorProto()
        t.name = name
        t.data_type = helper.np_dtype_to_tensor_dtype(arr.dtype) if hasattr(helper, "np_dtype_to_tensor_dtype") \
            else numpy_helper.from_array(arr[:0]).data_type
        t.dims.extend(arr.shape)
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", self.location), ("offset", str(self.offset)), ("length", str(arr.nbytes))):
            e = t.external_data.add()
            e.key, e.value = k, v
        self.offset += arr.nbytes
        self.inits.append(t)
        return name

    def close(self):
        if self.external:
            self.f.close()


def build(cfg, path, seed):
    rng = np.random.default_rng(seed)
    D, L, NH, KV, I, V, P = (cfg[k] for k in ("hidden", "layers", "heads", "kv_heads", "inter", "vocab", "max_pos"))
    hd = D // NH
    w = Weights(path, external=D >= 512)

    def rand(*shape, std=0.02):
        return (rng.standard_normal(shape, dtype=np.float32) * np.float32(std)).astype(np.float32)

    def norm_w():
        return (1.0 + 0.1 * rng.standard_normal(D, dtype=np.float32)).astype(np.float32)

    nodes = []

    def n(op, ins, outs, domain="", **attrs):
        nodes.append(helper.make_node(op, ins, outs, name=outs[0] + "_node" if outs[0] else None, domain=domain,
                                      **attrs))

    # attention_mask -> seqlens_k (int32 [batch]) and total_sequence_length (int32 scalar)
    w.add("one_i64", np.array([1], np.int64))
    w.add("axis1", np.array([1], np.int64))
    n("ReduceSum", ["attention_mask", "axis1"], ["mask_sum"], keepdims=0)
    n("Sub", ["mask_sum", "one_i64"], ["seqlens_k_i64"])
    n("Cast", ["seqlens_k_i64"], ["seqlens_k"], to=TensorProto.INT32)
    n("Shape", ["attention_mask"], ["mask_shape"])
    w.add("idx1", np.array(1, np.int64))
    n("Gather", ["mask_shape", "idx1"], ["total_i64"], axis=0)
    n("Cast", ["total_i64"], ["total_sequence_length"], to=TensorProto.INT32)

    inv = 1.0 / (10000.0 ** (np.arange(0, hd, 2, dtype=np.float64) / hd))
    ang = np.arange(P, dtype=np.float64)[:, None] * inv[None, :]
    w.add("cos_cache", np.cos(ang).astype(np.float32))
    w.add("sin_cache", np.sin(ang).astype(np.float32))

    w.add("embed_tokens.weight", rand(V, D))
    n("Gather", ["embed_tokens.weight", "input_ids"], ["embeddings"], axis=0)

    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch_size", "sequence_length"]),
              helper.make_tensor_value_info("attention_mask", TensorProto.INT64,
                                            ["batch_size", "total_sequence_length"])]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch_size", "sequence_length", V])]
    residual, skip = "embeddings", None
    for i in range(L):
        p = f"layers.{i}"
        ln1 = w.add(f"{p}.input_layernorm.weight", norm_w())
        if skip is None:
            n("SimplifiedLayerNormalization", [residual, ln1], [f"{p}.attn_norm"], axis=-1, epsilon=1e-5)
        else:
            n("SkipSimplifiedLayerNormalization", [skip, residual, ln1],
              [f"{p}.attn_norm", "", "", f"{p}.residual_attn"], domain="com.microsoft", epsilon=1e-5)
            residual = f"{p}.residual_attn"
        for proj, width in (("q", D), ("k", KV * hd), ("v", KV * hd)):
            wn = w.add(f"{p}.attn.{proj}_proj.weight", rand(D, width))
            n("MatMul", [f"{p}.attn_norm", wn], [f"{p}.attn.{proj}"])
        pk, pv = f"past_key_values.{i}.key", f"past_key_values.{i}.value"
        for name in (pk, pv):
            inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT,
                                                        ["batch_size", KV, "past_sequence_length", hd]))
        for name in (f"present.{i}.key", f"present.{i}.value"):
            outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT,
                                                         ["batch_size", KV, "total_sequence_length", hd]))
        n("GroupQueryAttention", [f"{p}.attn.q", f"{p}.attn.k", f"{p}.attn.v", pk, pv, "seqlens_k",
                                  "total_sequence_length", "cos_cache", "sin_cache"],
          [f"{p}.attn.gqa", f"present.{i}.key", f"present.{i}.value"], domain="com.microsoft", num_heads=NH,
          kv_num_heads=KV, do_rotary=1, rotary_interleaved=0)
        wo = w.add(f"{p}.attn.o_proj.weight", rand(D, D))
        n("MatMul", [f"{p}.attn.gqa", wo], [f"{p}.attn.out"])
        ln2 = w.add(f"{p}.post_attention_layernorm.weight", norm_w())
        n("SkipSimplifiedLayerNormalization", [f"{p}.attn.out", residual, ln2],
          [f"{p}.mlp_norm", "", "", f"{p}.residual_mlp"], domain="com.microsoft", epsilon=1e-5)
        residual = f"{p}.residual_mlp"
        wg = w.add(f"{p}.mlp.gate_proj.weight", rand(D, I))
        wu = w.add(f"{p}.mlp.up_proj.weight", rand(D, I))
        n("MatMul", [f"{p}.mlp_norm", wg], [f"{p}.mlp.gate"])
        n("MatMul", [f"{p}.mlp_norm", wu], [f"{p}.mlp.up"])
        n("Sigmoid", [f"{p}.mlp.gate"], [f"{p}.mlp.gate_sigmoid"])
        n("Mul", [f"{p}.mlp.gate", f"{p}.mlp.gate_sigmoid"], [f"{p}.mlp.silu"])
        n("Mul", [f"{p}.mlp.silu", f"{p}.mlp.up"], [f"{p}.mlp.act"])
        wd = w.add(f"{p}.mlp.down_proj.weight", rand(I, D))
        n("MatMul", [f"{p}.mlp.act", wd], [f"{p}.mlp.out"])
        skip = f"{p}.mlp.out"
    fn = w.add("norm.weight", norm_w())
    n("SkipSimplifiedLayerNormalization", [skip, residual, fn], ["final_norm", "", "", ""], domain="com.microsoft",
      epsilon=1e-5)
    lm = w.add("lm_head.weight", rand(D, V, std=0.5 / np.sqrt(D) * 8))
    n("MatMul", ["final_norm", lm], ["logits"])
    w.close()
    nodes_clean = []
    for nd in nodes:   # drop trailing empty output names
        while nd.output and nd.output[-1] == "":
            nd.output.pop()
        nodes_clean.append(nd)
    g = helper.make_graph(nodes_clean, "llama", inputs, outputs, initializer=w.inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14), helper.make_opsetid("com.microsoft", 1)],
                          producer_name="onyx export_llama.py")
    m.ir_version = 8
    for k, v in cfg.items():
        e = m.metadata_props.add()
        e.key, e.value = k, str(v)
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--size", choices=sorted(SIZES), default="small")
    ap.add_argument("--seed", type=int, default=1234)
    a = ap.parse_args()
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    build(SIZES[a.size], a.out, a.seed)
    print(f"wrote {a.out} ({a.size})")


if __name__ == "__main__":
    sys.exit(main())
