#!/usr/bin/python3
"""Train a tiny Llama-style decoder on text found on this machine, export it with torch.onnx.export,
and measure what onyx's int4 quantiser costs on weights that are not random (issue 14: cosine of
int4 vs float32 logits on 8 random prompts).

    /usr/bin/python3 scripts/train_tiny_llama.py OUT_DIR [--onyx build/onyx] [--minutes 5]
                     [--hidden 128 --layers 4 --heads 4 --kv-heads 2 --inter 352]

Byte-level tokens (vocabulary 256); the corpus is the licence texts of /usr/share/common-licenses
(English prose every Debian system has), the last tenth held out. The model is
tests/llm/make_decoder_export.py's Decoder (RMSNorm, rotate-half rotary, repeated key/value heads,
SwiGLU, past key/values), trained with AdamW for the given wall-clock minutes, then exported with a
past of length 0 (dynamic), quantised with `onyx quantize --mode int4 --block-size 32` (and the
other given modes), and both files are run by `onyx run` on 8 prompts of 16 random token ids and 8
of held-out text. Prints the losses and, per quantisation, the min / mean cosine of the last-token
logits against the float32 model and how many prompts keep the same top-1 token. Needs only
Debian's python3-torch, python3-onnx and numpy; writes only under OUT_DIR.
"""
import argparse
import glob
import math
import os
import subprocess
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "llm"))
from make_decoder_export import Decoder, export as export_decoder  # noqa: E402


def corpus():
    data = bytearray()
    for p in sorted(glob.glob("/usr/share/common-licenses/*")):
        if os.path.isfile(p) and not os.path.islink(p):
            with open(p, "rb") as f:
                data += f.read()
    return np.frombuffer(bytes(data), dtype=np.uint8).astype(np.int64)


def batches(tokens, batch, seq, rng):
    starts = rng.integers(0, len(tokens) - seq - 1, size=batch)
    x = np.stack([tokens[s:s + seq] for s in starts])
    y = np.stack([tokens[s + 1:s + seq + 1] for s in starts])
    return torch.from_numpy(x), torch.from_numpy(y)


def forward_logits(model, ids, a):
    B, S = ids.shape
    pos = torch.arange(S).reshape(1, S).repeat(B, 1)
    mask = torch.full((B, 1, S, S), float("-inf")).triu(1)
    head = a.hidden // a.heads
    past = [torch.zeros(B, a.kv_heads, 0, head) for _ in range(2 * a.layers)]
    return model(ids, pos, mask, *past)[0]


def loss_of(model, x, y, a):
    logits = forward_logits(model, x, a)
    return torch.nn.functional.cross_entropy(logits.reshape(-1, 256), y.reshape(-1))


def train(a, tokens, model):
    split = len(tokens) * 9 // 10
    tr, ho = tokens[:split], tokens[split:]
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=0.01)
    rng = np.random.default_rng(1)
    t0, step, budget = time.time(), 0, a.minutes * 60
    while time.time() - t0 < budget:
        frac = (time.time() - t0) / budget
        for g in opt.param_groups:
            g["lr"] = a.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * frac)))
        x, y = batches(tr, a.batch, a.seq, rng)
        loss = loss_of(model, x, y, a)
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
        if step % 50 == 0:
            print(f"step {step} ({time.time() - t0:.0f} s): train loss {loss.item():.3f}", flush=True)
    model.eval()
    with torch.no_grad():
        hx, hy = batches(ho, 32, a.seq, np.random.default_rng(2))
        held = loss_of(model, hx, hy, a).item()
    print(f"trained {step} steps in {time.time() - t0:.0f} s; held-out loss {held:.3f} nats/byte "
          f"(uniform: {math.log(256):.3f})")
    return model, ho, step, held


def export(model, a, path):
    head = a.hidden // a.heads
    B, S = 1, 4
    ids = torch.zeros((B, S), dtype=torch.int64)
    pos = torch.arange(S).reshape(B, S)
    mask = torch.full((B, 1, S, S), float("-inf")).triu(1)
    past = [torch.zeros(B, a.kv_heads, 0, head) for _ in range(2 * a.layers)]
    export_decoder(model, a.layers, (ids, pos, mask, *past), path)


def prompt_feeds(ids, a):
    S = ids.shape[1]
    head = a.hidden // a.heads
    feeds = {"input_ids": ids, "position_ids": np.arange(S, dtype=np.int64).reshape(1, S),
             "attention_mask": np.triu(np.full((1, 1, S, S), -np.inf, np.float32), 1)}
    for i in range(a.layers):
        for kv in ("key", "value"):
            feeds[f"past_key_values.{i}.{kv}"] = np.zeros((1, a.kv_heads, 0, head), np.float32)
    return feeds


def last_logits(onyx, model, feeds, work):
    inp, out = os.path.join(work, "prompt.npz"), os.path.join(work, "out.npz")
    np.savez(inp, **feeds)
    subprocess.run([onyx, "run", model, "--inputs", inp, "--output", out], check=True, capture_output=True)
    return np.load(out)["logits"][0, -1].astype(np.float64)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--onyx", default=os.path.join(HERE, "..", "build", "onyx"))
    ap.add_argument("--minutes", type=float, default=5.0)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--kv-heads", type=int, default=2)
    ap.add_argument("--inter", type=int, default=352)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--modes", default="--block-size 32;--block-size 32 --asymmetric;--block-size 16",
                    help="onyx quantize options after --mode int4, one set per ';'")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    os.makedirs(a.out, exist_ok=True)
    tokens = corpus()
    print(f"corpus: {len(tokens)} bytes of /usr/share/common-licenses")
    torch.manual_seed(7)
    a.vocab, a.max_pos, a.eps, a.theta, a.uneven_cache = 256, max(256, a.seq), 1e-5, 10000.0, False
    model = Decoder(a)
    held_out = tokens[len(tokens) * 9 // 10:]
    g = np.random.default_rng(5)
    prompts = [("random", g.integers(0, 256, (1, 16)).astype(np.int64)) for _ in range(8)]
    for _ in range(8):
        s = int(g.integers(0, len(held_out) - 16))
        prompts.append(("text", held_out[s:s + 16].reshape(1, 16).astype(np.int64)))
    model.eval()
    evaluate(a, model, prompts, "untrained (initial weights)")
    model.train()
    model, held_out, steps, held = train(a, tokens, model)
    evaluate(a, model, prompts, f"trained ({steps} steps, held-out loss {held:.3f})")


def evaluate(a, model, prompts, tag):
    f32 = os.path.join(a.out, "tiny_trained.onnx")
    export(model, a, f32)
    ref = [last_logits(a.onyx, f32, prompt_feeds(ids, a), a.out) for _, ids in prompts]
    with torch.no_grad():   # the exported file against torch itself
        err = max(float(np.max(np.abs(forward_logits(model, torch.from_numpy(ids), a)[0, -1].numpy() - r)))
                  for (_, ids), r in zip(prompts, ref))
    print(f"float32 export vs torch: max |logit diff| {err:.2e}")
    for mode in a.modes.split(";"):
        q = os.path.join(a.out, "tiny_trained_int4.onnx")
        subprocess.run([a.onyx, "quantize", f32, q, "--mode", "int4", *mode.split()], check=True, capture_output=True)
        for kind in ("random", "text"):
            cos, top = [], 0
            for (k, ids), r in zip(prompts, ref):
                if k != kind:
                    continue
                x = last_logits(a.onyx, q, prompt_feeds(ids, a), a.out)
                cos.append(float(x @ r / (np.linalg.norm(x) * np.linalg.norm(r))))
                top += int(np.argmax(x) == np.argmax(r))
            print(f"{tag}: int4 {mode}, {kind} prompts: cosine min {min(cos):.4f} mean {np.mean(cos):.4f}, "
                  f"top-1 {top}/{len(cos)}")


if __name__ == "__main__":
    main()
