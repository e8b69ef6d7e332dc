#!/usr/bin/python3
"""A Llama-style decoder written as plain torch modules (the shapes of Hugging Face's Llama code:
RMSNorm as pow/mean/rsqrt, rotate-half rotary with cos/sin caches gathered by position_ids,
repeated key/value heads, SwiGLU MLP, past key/value concatenated to the step's) and exported with
torch.onnx.export, so the decoder fusions see what a user's export looks like, not what ONNX
Runtime's model builder writes. Random weights from a fixed seed; nothing is downloaded.

    /usr/bin/python3 tests/llm/make_decoder_export.py OUT_DIR [--hidden 64 --layers 2 ...]

writes OUT_DIR/decoder.onnx, OUT_DIR/decoder_inputs.npz and torch's outputs for them in
OUT_DIR/decoder_torch.npz (one step: 3 new tokens after 5 cached
ones; position_ids continue the cache). Inputs: input_ids [B, S], position_ids [B, S],
attention_mask float [B, 1, S, P + S] (0 or -inf: causal; --pad K also masks the last batch entry's
first K keys), past_key_values.N.key / .value
[B, kv_heads, P, head_size]; outputs logits and present.N.key / .value.
Needs only Debian's python3-torch (and python3-onnx, numpy).
"""
import argparse
import math
import os

import numpy as np
import torch
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, hidden, eps):
        super().__init__()
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(hidden))
        self.eps = eps

    def forward(self, x):
        variance = x.pow(2).mean(-1, keepdim=True)
        x = x * torch.rsqrt(variance + self.eps)
        return self.weight * x


def rotate_half(x):
    half = x.shape[-1] // 2
    x1 = x[..., :half]
    x2 = x[..., half:]
    return torch.cat((-x2, x1), dim=-1)


def repeat_kv(x, n_rep):
    if n_rep == 1:
        return x
    b, kvh, s, d = x.shape
    x = x[:, :, None, :, :].expand(b, kvh, n_rep, s, d)
    return x.reshape(b, kvh * n_rep, s, d)


class Attention(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.heads, self.kv_heads, self.head = a.heads, a.kv_heads, a.hidden // a.heads
        self.q_proj = nn.Linear(a.hidden, a.heads * self.head, bias=False)
        self.k_proj = nn.Linear(a.hidden, a.kv_heads * self.head, bias=False)
        self.v_proj = nn.Linear(a.hidden, a.kv_heads * self.head, bias=False)
        self.o_proj = nn.Linear(a.heads * self.head, a.hidden, bias=False)

    def forward(self, x, cos, sin, mask, past_k, past_v):
        b, s, _ = x.shape
        q = self.q_proj(x).view(b, s, self.heads, self.head).transpose(1, 2)
        k = self.k_proj(x).view(b, s, self.kv_heads, self.head).transpose(1, 2)
        v = self.v_proj(x).view(b, s, self.kv_heads, self.head).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = torch.cat([past_k, k], dim=2)
        v = torch.cat([past_v, v], dim=2)
        present = (k, v)
        k = repeat_kv(k, self.heads // self.kv_heads)
        v = repeat_kv(v, self.heads // self.kv_heads)
        scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.head)
        scores = scores + mask
        p = torch.softmax(scores, dim=-1)
        o = torch.matmul(p, v).transpose(1, 2).reshape(b, s, self.heads * self.head)
        return self.o_proj(o), present


class MLP(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.gate_proj = nn.Linear(a.hidden, a.inter, bias=False)
        self.up_proj = nn.Linear(a.hidden, a.inter, bias=False)
        self.down_proj = nn.Linear(a.inter, a.hidden, bias=False)

    def forward(self, x):
        g = self.gate_proj(x)
        return self.down_proj(g * torch.sigmoid(g) * self.up_proj(x))


class Layer(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.input_layernorm = RMSNorm(a.hidden, a.eps)
        self.self_attn = Attention(a)
        self.post_attention_layernorm = RMSNorm(a.hidden, a.eps)
        self.mlp = MLP(a)

    def forward(self, x, cos, sin, mask, past_k, past_v):
        h, present = self.self_attn(self.input_layernorm(x), cos, sin, mask, past_k, past_v)
        x = x + h
        x = x + self.mlp(self.post_attention_layernorm(x))
        return x, present


class Decoder(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.embed_tokens = nn.Embedding(a.vocab, a.hidden)
        self.layers = nn.ModuleList([Layer(a) for _ in range(a.layers)])
        self.norm = RMSNorm(a.hidden, a.eps)
        self.lm_head = nn.Linear(a.hidden, a.vocab, bias=False)
        head = a.hidden // a.heads
        inv_freq = 1.0 / (a.theta ** (torch.arange(0, head, 2).float() / head))
        freqs = torch.outer(torch.arange(a.max_pos).float(), inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        if a.uneven_cache:   # halves differ: not rotate-half's cache, must not become RotaryEmbedding
            emb[:, head // 2:] *= 1.001
        self.register_buffer("cos_cached", emb.cos(), persistent=False)
        self.register_buffer("sin_cached", emb.sin(), persistent=False)

    def forward(self, input_ids, position_ids, attention_mask, *past):
        x = self.embed_tokens(input_ids)
        cos = self.cos_cached[position_ids].unsqueeze(1)
        sin = self.sin_cached[position_ids].unsqueeze(1)
        presents = []
        for i, layer in enumerate(self.layers):
            x, (k, v) = layer(x, cos, sin, attention_mask, past[2 * i], past[2 * i + 1])
            presents += [k, v]
        return (self.lm_head(self.norm(x)), *presents)


def export(model, layers, args, path):
    """torch.onnx.export of a Decoder with dynamic batch, sequence and cache lengths and ONNX
    Runtime's generation names; returns the past and present names."""
    names_past = [f"past_key_values.{i}.{kv}" for i in range(layers) for kv in ("key", "value")]
    names_present = [f"present.{i}.{kv}" for i in range(layers) for kv in ("key", "value")]
    dyn = {"input_ids": {0: "batch", 1: "sequence"}, "position_ids": {0: "batch", 1: "sequence"},
           "attention_mask": {0: "batch", 2: "sequence", 3: "total_sequence"}, "logits": {0: "batch", 1: "sequence"}}
    for n in names_past:
        dyn[n] = {0: "batch", 2: "past_sequence"}
    for n in names_present:
        dyn[n] = {0: "batch", 2: "total_sequence"}
    with torch.no_grad():
        torch.onnx.export(model, args, path, opset_version=17,
                          input_names=["input_ids", "position_ids", "attention_mask", *names_past],
                          output_names=["logits", *names_present], dynamic_axes=dyn, do_constant_folding=True)
    return names_past, names_present


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--kv-heads", type=int, default=2)
    ap.add_argument("--inter", type=int, default=176)
    ap.add_argument("--vocab", type=int, default=512)
    ap.add_argument("--max-pos", type=int, default=256)
    ap.add_argument("--past", type=int, default=5)
    ap.add_argument("--seq", type=int, default=3)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--pad", type=int, default=0,
                    help="mask out the first PAD keys of the last batch entry (left padding: not causal)")
    ap.add_argument("--name", default="decoder")
    ap.add_argument("--uneven-cache", action="store_true", help="cos/sin caches whose two halves differ")
    a = ap.parse_args()
    a.eps, a.theta = 1e-5, 10000.0
    torch.manual_seed(7)
    model = Decoder(a).eval()
    head = a.hidden // a.heads
    B, S, P = a.batch, a.seq, a.past
    g = np.random.default_rng(11)
    ids = torch.from_numpy(g.integers(0, a.vocab, (B, S)).astype(np.int64))
    pos = torch.arange(P, P + S, dtype=torch.int64).reshape(1, S).repeat(B, 1)
    mask = torch.full((B, 1, S, P + S), float("-inf")).triu(P + 1)
    mask = torch.where(torch.isinf(mask), mask, torch.zeros(()))
    mask[B - 1, :, :, :a.pad] = float("-inf")
    past = [torch.from_numpy(g.standard_normal((B, a.kv_heads, P, head)).astype(np.float32))
            for _ in range(2 * a.layers)]
    os.makedirs(a.out, exist_ok=True)
    with torch.no_grad():
        ref = model(ids, pos, mask, *past)
    names_past, names_present = export(model, a.layers, (ids, pos, mask, *past), os.path.join(a.out, a.name + ".onnx"))
    feeds = {"input_ids": ids.numpy(), "position_ids": pos.numpy(), "attention_mask": mask.numpy()}
    feeds.update({n: t.numpy() for n, t in zip(names_past, past)})
    np.savez(os.path.join(a.out, a.name + "_inputs.npz"), **feeds)
    np.savez(os.path.join(a.out, a.name + "_torch.npz"),
             **{n: t.numpy() for n, t in zip(["logits", *names_present], ref)})


if __name__ == "__main__":
    main()
