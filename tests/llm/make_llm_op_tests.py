#!/usr/bin/python3
"""Operator tests of the language-model operators, as ONNX backend-test folders.

    /usr/bin/python3 tests/llm/make_llm_op_tests.py OUTDIR

writes OUTDIR/exact/<case>/{model.onnx, test_data_set_0/{input,output}_K.pb} and
OUTDIR/int8/<case>/... (MatMulNBits accuracy_level 4, compared with a looser tolerance).
Expected outputs are computed here with numpy, independently of onyx: MatMulNBits
dequantises the blocks and multiplies (accuracy_level 4 quantises A per block to int8
first, as the operator specifies), GroupQueryAttention concatenates the cache, rotates,
masks (causal, local window) and runs a plain softmax per query, RotaryEmbedding and
the RMS normalisations follow their formulas. onyx runs them with `onyx test`;
scripts/check_llm_ops_ort.sh runs the same inputs through ONNX Runtime.

Needs only numpy and onnx (Debian's python3-numpy, python3-onnx).
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

RNG = np.random.default_rng(20261126)
F32 = np.float32


def write_case(root, name, nodes, inputs, outputs, opsets=None):
    """inputs/outputs: lists of (name, array or None for an omitted optional input)."""
    d = os.path.join(root, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)

    def vi(n, a):
        return helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype)
                                             if hasattr(helper, "np_dtype_to_tensor_dtype")
                                             else numpy_helper.from_array(a).data_type, list(a.shape))
    g = helper.make_graph(nodes, name, [vi(n, a) for n, a in inputs if a is not None],
                          [vi(n, a) for n, a in outputs])
    ops = opsets or {"": 21, "com.microsoft": 1}
    m = helper.make_model(g, opset_imports=[helper.make_opsetid(k, v) for k, v in ops.items()],
                          producer_name="onyx-llm-tests")
    m.ir_version = 10 if ops.get("", 0) >= 23 else 8
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(m.SerializeToString())
    k = 0
    for n, a in inputs:
        if a is None:
            continue
        with open(os.path.join(d, "test_data_set_0", f"input_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a, n).SerializeToString())
        k += 1
    for k, (n, a) in enumerate(outputs):
        with open(os.path.join(d, "test_data_set_0", f"output_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a, n).SerializeToString())


def node(op, ins, outs, domain="com.microsoft", **attrs):
    return helper.make_node(op, ins, outs, domain=domain, **attrs)


# ------------------------------------------------------------------ MatMulNBits

def quantise_a_int8(a, blk, kp):
    """A (M, K) -> per block int8 values and scales, as accuracy_level 4 specifies."""
    M, K = a.shape
    ap = np.zeros((M, kp), F32)
    ap[:, :K] = a
    blocks = ap.reshape(M, kp // blk, blk)
    amax = np.abs(blocks).max(axis=2, keepdims=True).astype(F32)
    inv = np.where(amax > 0, F32(127) / np.where(amax > 0, amax, F32(1)), F32(0)).astype(F32)
    q = np.clip(np.rint((blocks * inv).astype(F32)), -127, 127)
    return (q * (amax / F32(127))).reshape(M, kp).astype(np.float64)[:, :K]


def matmul_nbits_case(root, name, M, K, N, bits, blk, zp_kind, acc, lead=(), bias=False):
    kb = (K + blk - 1) // blk
    kp = kb * blk
    qmax = (1 << bits) - 1
    q = RNG.integers(0, qmax + 1, size=(N, kp)).astype(np.uint8)
    scales = (RNG.random((N, kb), dtype=F32) * 0.1 + 0.01).astype(F32)
    if zp_kind == "none":
        zp = np.full((N, kb), 1 << (bits - 1), F32)
        zp_in = None
    elif zp_kind == "uint8":
        zpi = RNG.integers(0, qmax + 1, size=(N, kb)).astype(np.uint8)
        zp = zpi.astype(F32)
        if bits == 4:
            padded = np.zeros((N, (kb + 1) // 2 * 2), np.uint8)
            padded[:, :kb] = zpi
            zp_in = (padded[:, 0::2] | (padded[:, 1::2] << 4)).astype(np.uint8)
        else:
            zp_in = zpi
    else:   # float zero points
        zp = (RNG.random((N, kb), dtype=F32) * qmax).astype(F32)
        zp_in = zp
    # B: (N, k_blocks, blob), 4-bit: element 2t in the low nibble of byte t
    if bits == 4:
        b = (q[:, 0::2] | (q[:, 1::2] << 4)).astype(np.uint8).reshape(N, kb, blk // 2)
    else:
        b = q.reshape(N, kb, blk)
    w = ((q.astype(F32).reshape(N, kb, blk) - zp[:, :, None]) * scales[:, :, None]).reshape(N, kp)[:, :K]
    a = RNG.uniform(-1, 1, size=(*lead, M, K)).astype(F32)
    a2 = a.reshape(-1, K)
    a_used = quantise_a_int8(a2, blk, kp) if acc == 4 else a2.astype(np.float64)
    y = (a_used @ w.T.astype(np.float64)).astype(F32)
    bias_v = RNG.uniform(-1, 1, size=(N,)).astype(F32) if bias else None
    if bias:
        y = y + bias_v
    y = y.reshape(*lead, M, N)
    ins = [("A", a), ("B", b), ("scales", scales), ("zero_points", zp_in), ("g_idx", None), ("bias", bias_v)]
    names = [n if v is not None else "" for n, v in ins]
    while names and names[-1] == "":
        names.pop()
    attrs = dict(K=K, N=N, bits=bits, block_size=blk)
    if acc:
        attrs["accuracy_level"] = acc
    write_case(root, name, [node("MatMulNBits", names, ["Y"], **attrs)], ins, [("Y", y)])


def matmul_nbits_cases(exact, int8):
    for bits in (4, 8):
        for blk in (16, 32, 64, 128, 256):
            for zp_kind in ("none", "uint8"):
                K = blk * 3
                matmul_nbits_case(exact, f"matmulnbits_b{bits}_blk{blk}_{zp_kind}_m1", 1, K, 37, bits, blk, zp_kind, 0)
                matmul_nbits_case(exact, f"matmulnbits_b{bits}_blk{blk}_{zp_kind}_m6", 6, K, 21, bits, blk, zp_kind, 1)
                matmul_nbits_case(int8, f"matmulnbits_b{bits}_blk{blk}_{zp_kind}_acc4", 2, K, 19, bits, blk, zp_kind, 4)
    # K not a multiple of the block (padded last block), float zero points, bias, 3-D A
    matmul_nbits_case(exact, "matmulnbits_b4_oddk_float_zp", 3, 100, 17, 4, 32, "float", 0, lead=(2,), bias=True)
    matmul_nbits_case(exact, "matmulnbits_b8_oddk_bias", 1, 70, 9, 8, 64, "uint8", 0, bias=True)
    matmul_nbits_case(exact, "matmulnbits_b4_blk16_oddk_m1", 1, 40, 33, 4, 16, "uint8", 0)
    matmul_nbits_case(int8, "matmulnbits_b4_oddk_acc4", 1, 100, 17, 4, 32, "uint8", 4, bias=True)
    matmul_nbits_case(int8, "matmulnbits_b4_blk16_oddk_acc4", 4, 40, 33, 4, 16, "none", 4)
    matmul_nbits_case(exact, "matmulnbits_b4_blk32_prefill", 33, 256, 48, 4, 32, "uint8", 0)
    # several SGEMM column chunks (96 wide) and a partial one
    matmul_nbits_case(exact, "matmulnbits_b4_blk64_prefill_wide", 9, 130, 200, 4, 64, "float", 0, bias=True)
    # the AVX-512 prefill kernel: two passes over rows (192 + 8), several K slices of 256, a
    # 32-row tail
    matmul_nbits_case(exact, "matmulnbits_b4_blk16_prefill_rows", 200, 300, 27, 4, 16, "uint8", 0)
    matmul_nbits_case(exact, "matmulnbits_b4_blk128_prefill_slices", 30, 600, 11, 4, 128, "none", 0)


# ------------------------------------------------------------------ rotary

def rope_np(x, cos, sin, interleaved):
    """x (..., rd); cos/sin broadcastable (..., rd/2)."""
    x = x.astype(np.float64)
    if interleaved:
        x1, x2 = x[..., 0::2], x[..., 1::2]
        out = np.empty_like(x)
        out[..., 0::2] = cos * x1 - sin * x2
        out[..., 1::2] = sin * x1 + cos * x2
        return out
    h = x.shape[-1] // 2
    x1, x2 = x[..., :h], x[..., h:]
    return np.concatenate([cos * x1 - sin * x2, sin * x1 + cos * x2], axis=-1)


def caches(rows, half):
    inv = 1.0 / (10000 ** (np.arange(half) / half))
    ang = np.arange(rows)[:, None] * inv[None, :]
    return np.cos(ang).astype(F32), np.sin(ang).astype(F32)


def rotary_ms_case(root, name, B, S, N, H, interleaved, three_d, pos_kind, rd=None, with_heads=False):
    rd = rd or H
    cos, sin = caches(32, rd // 2)
    if pos_kind == "offset":
        pos = np.array([3], np.int64)
        p = np.broadcast_to(3 + np.arange(S), (B, S))
    else:
        pos = RNG.integers(0, 32, size=(B, S)).astype(np.int64)
        p = pos
    x4 = RNG.uniform(-1, 1, size=(B, S, N, H)).astype(F32)   # BSNH
    c, s = cos[p][:, :, None, :], sin[p][:, :, None, :]
    y4 = x4.astype(np.float64).copy()
    y4[..., :rd] = rope_np(x4[..., :rd], c, s, interleaved)
    attrs = dict(interleaved=int(interleaved))
    if rd != H or with_heads:
        attrs.update(num_heads=N, rotary_embedding_dim=rd)
    if three_d:
        x, y = x4.reshape(B, S, N * H), y4.reshape(B, S, N * H)
    else:
        x, y = x4.transpose(0, 2, 1, 3), y4.transpose(0, 2, 1, 3)
    ins = [("input", np.ascontiguousarray(x)), ("position_ids", pos), ("cos_cache", cos), ("sin_cache", sin)]
    write_case(root, name, [node("RotaryEmbedding", [n for n, _ in ins], ["output"], **attrs)], ins,
               [("output", np.ascontiguousarray(y).astype(F32))])


def rotary_onnx23_case(root, name, interleaved):
    B, S, N, H = 2, 3, 2, 8
    cos, sin = caches(16, H // 2)
    pos = RNG.integers(0, 16, size=(B, S)).astype(np.int64)
    x = RNG.uniform(-1, 1, size=(B, N, S, H)).astype(F32)
    y = rope_np(x, cos[pos][:, None], sin[pos][:, None], interleaved).astype(F32)
    ins = [("X", x), ("cos_cache", cos), ("sin_cache", sin), ("position_ids", pos)]
    write_case(root, name, [node("RotaryEmbedding", [n for n, _ in ins], ["Y"], domain="",
                                 interleaved=int(interleaved))], ins, [("Y", y)], opsets={"": 23})


# ------------------------------------------------------------------ RMS normalisation

def rms_np(x, g, eps):
    x = x.astype(np.float64)
    return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps) * g


def norm_cases(root):
    x = RNG.uniform(-2, 2, size=(2, 3, 13)).astype(F32)
    g = RNG.uniform(0.5, 1.5, size=(13,)).astype(F32)
    y = rms_np(x, g, 1e-5).astype(F32)
    write_case(root, "simplified_layer_norm", [node("SimplifiedLayerNormalization", ["X", "scale"], ["Y"], domain="",
                                                    axis=-1, epsilon=1e-5)], [("X", x), ("scale", g)], [("Y", y)])
    skip = RNG.uniform(-1, 1, size=x.shape).astype(F32)
    for with_bias in (False, True):
        b = RNG.uniform(-0.5, 0.5, size=(13,)).astype(F32) if with_bias else None
        s = x.astype(np.float64) + skip + (b if with_bias else 0)
        y = rms_np(s, g, 1e-6).astype(F32)
        ins = [("input", x), ("skip", skip), ("gamma", g), ("bias", b)]
        names = [n for n, v in ins if v is not None]
        write_case(root, f"skip_simplified_layer_norm{'_bias' if with_bias else ''}",
                   [node("SkipSimplifiedLayerNormalization", names, ["output", "", "", "sum"], epsilon=1e-6)],
                   ins, [("output", y), ("sum", s.astype(F32))])


# ------------------------------------------------------------------ GroupQueryAttention

def gqa_ref(q, k, v, past_k, past_v, seqlens, total, N, Nkv, H, scale, cos=None, sin=None, interleaved=False,
            window=-1, softcap=0.0, smooth=False, sink=None, causal=True, bias=None):
    """q (B,S,N,H), k/v (B,S,Nkv,H); past (B,Nkv,L,H) or None; bias (B|1, N|1, S, total) or None.
    Returns out (B,S,N*H), present k, v."""
    B, S = q.shape[:2]
    L = past_k.shape[2] if past_k is not None else 0
    first = S == total
    plen = max(L, total)
    pk = np.zeros((B, Nkv, plen, H)); pv = np.zeros((B, Nkv, plen, H))
    out = np.zeros((B, S, N, H))
    G = N // Nkv
    for b in range(B):
        tot = int(seqlens[b]) + 1
        past = 0 if first else tot - S
        pos = past + np.arange(S)
        qb, kb = q[b].astype(np.float64), k[b].astype(np.float64)
        if cos is not None:
            rd = cos.shape[1] * 2
            c, s = cos[pos][:, None, :], sin[pos][:, None, :]
            qb = qb.copy(); kb = kb.copy()
            qb[..., :rd] = rope_np(qb[..., :rd], c, s, interleaved)
            kb[..., :rd] = rope_np(kb[..., :rd], c, s, interleaved)
        if past:
            pk[b, :, :past] = past_k[b, :, :past]
            pv[b, :, :past] = past_v[b, :, :past]
        pk[b, :, past:past + S] = kb.transpose(1, 0, 2)
        pv[b, :, past:past + S] = v[b].transpose(1, 0, 2)
        for h in range(N):
            kh = h // G
            for si in range(S):
                p = past + si
                hi = min(p, tot - 1) if causal else tot - 1
                lo = max(0, p - window + 1) if window > 0 else 0
                x = scale * (pk[b, kh, lo:hi + 1] @ qb[si, h])
                if softcap > 0:
                    x = softcap * np.tanh(x / softcap)
                if bias is not None:
                    x = x + bias[b % bias.shape[0], h % bias.shape[1], si, lo:hi + 1]
                extra = None
                if smooth or sink is not None:
                    extra = 0.0 if sink is None else float(sink[h])
                m = x.max() if extra is None else max(x.max(), extra)
                e = np.exp(x - m)
                den = e.sum() + (np.exp(extra - m) if extra is not None else 0.0)
                out[b, si, h] = (e / den) @ pv[b, kh, lo:hi + 1]
    return out.reshape(B, S, N * H).astype(F32), pk.astype(F32), pv.astype(F32)


def gqa_case(root, name, B, S, N, Nkv, H, past_len, seqlens, total, packed=False, rotary=None, interleaved=False,
             window=-1, softcap=0.0, smooth=False, sink=False, scale=None, causal=True, bias_shape=None,
             masked=0):
    """bias_shape: an attention_bias of that shape, its first `masked` keys -inf for the last batch entry."""
    q = RNG.uniform(-1, 1, size=(B, S, N, H)).astype(F32)
    k = RNG.uniform(-1, 1, size=(B, S, Nkv, H)).astype(F32)
    v = RNG.uniform(-1, 1, size=(B, S, Nkv, H)).astype(F32)
    past_k = RNG.uniform(-1, 1, size=(B, Nkv, past_len, H)).astype(F32) if past_len is not None else None
    past_v = RNG.uniform(-1, 1, size=(B, Nkv, past_len, H)).astype(F32) if past_len is not None else None
    seqlens = np.array(seqlens, np.int32)
    cos = sin = None
    if rotary:
        cos, sin = caches(max(64, total), rotary // 2)
    sink_v = RNG.uniform(-1, 1, size=(N,)).astype(F32) if sink else None
    sc = scale if scale else 1.0 / np.sqrt(H)
    bias = RNG.uniform(-1, 1, size=bias_shape).astype(F32) if bias_shape else None
    if masked:
        bias[-1, :, :, :masked] = -np.inf
    out, pk, pv = gqa_ref(q, k, v, past_k, past_v, seqlens, total, N, Nkv, H, sc, cos, sin, interleaved, window,
                          softcap, smooth, sink_v, causal, bias)
    if packed:
        qkv = np.concatenate([q.reshape(B, S, -1), k.reshape(B, S, -1), v.reshape(B, S, -1)], axis=2)
        ins = [("query", qkv), ("key", None), ("value", None)]
    else:
        ins = [("query", q.reshape(B, S, -1)), ("key", k.reshape(B, S, -1)), ("value", v.reshape(B, S, -1))]
    ins += [("past_key", past_k), ("past_value", past_v), ("seqlens_k", seqlens),
            ("total_sequence_length", np.array(total, np.int32)), ("cos_cache", cos), ("sin_cache", sin),
            ("position_ids", None), ("attention_bias", bias), ("head_sink", sink_v)]
    names = [n if a is not None else "" for n, a in ins]
    while names[-1] == "":
        names.pop()
    attrs = dict(num_heads=N, kv_num_heads=Nkv)
    if rotary:
        attrs.update(do_rotary=1, rotary_interleaved=int(interleaved))
    if window > 0:
        attrs["local_window_size"] = window
    if softcap:
        attrs["softcap"] = softcap
    if smooth:
        attrs["smooth_softmax"] = 1
    if scale:
        attrs["scale"] = scale
    if not causal:
        attrs["causal"] = 0
    outs = [("output", out), ("present_key", pk), ("present_value", pv)]
    write_case(root, name, [node("GroupQueryAttention", names, [n for n, _ in outs], **attrs)], ins, outs)


def gqa_cases(root):
    gqa_case(root, "gqa_prompt", 1, 5, 4, 2, 16, None, [4], 5)
    gqa_case(root, "gqa_prompt_empty_past", 1, 6, 4, 1, 8, 0, [5], 6)
    gqa_case(root, "gqa_decode", 2, 1, 4, 2, 16, 7, [7, 4], 8)
    gqa_case(root, "gqa_decode_shared_buffer", 1, 1, 6, 3, 8, 16, [9], 10)
    gqa_case(root, "gqa_subsequent_prompt", 1, 3, 4, 2, 16, 4, [6], 7)
    gqa_case(root, "gqa_packed_qkv", 1, 4, 4, 2, 8, None, [3], 4, packed=True)
    gqa_case(root, "gqa_packed_decode", 1, 1, 4, 2, 8, 5, [5], 6, packed=True)
    gqa_case(root, "gqa_rotary", 1, 4, 4, 2, 16, 3, [6], 7, rotary=16)
    gqa_case(root, "gqa_rotary_interleaved", 2, 1, 4, 1, 16, 6, [5, 6], 7, rotary=16, interleaved=True)
    gqa_case(root, "gqa_rotary_partial_prompt", 1, 5, 2, 1, 32, None, [4], 5, rotary=16)
    gqa_case(root, "gqa_local_window", 1, 6, 2, 1, 8, None, [5], 6, window=2)
    gqa_case(root, "gqa_local_window_decode", 1, 1, 4, 2, 8, 9, [9], 10, window=3)
    gqa_case(root, "gqa_softcap", 1, 4, 4, 2, 8, 2, [5], 6, softcap=0.5, scale=0.7)
    gqa_case(root, "gqa_smooth_softmax", 1, 3, 4, 2, 8, 2, [4], 5, smooth=True)
    gqa_case(root, "gqa_head_sink", 1, 2, 4, 2, 8, 3, [4], 5, sink=True)
    gqa_case(root, "gqa_all_features", 1, 3, 8, 2, 16, 6, [8], 9, packed=True, rotary=16, interleaved=True,
             window=4, softcap=1.5, smooth=True)
    gqa_case(root, "gqa_odd_sizes", 1, 7, 6, 3, 40, None, [6], 7)
    gqa_case(root, "gqa_odd_sizes_rotary", 3, 1, 6, 2, 48, 11, [9, 11, 5], 12, rotary=48)
    # decode steps over several tiles of 64 keys, four keys scored at a time (and the last 1-3
    # alone); a head size that leaves a tail after the 8-wide columns (ONNX Runtime's kernel takes
    # multiples of 8 only: check_ort.py leaves the *_head_tail cases out)
    gqa_case(root, "gqa_decode_long", 1, 1, 6, 2, 24, 130, [130], 131)
    gqa_case(root, "gqa_decode_window_head_tail", 2, 1, 4, 1, 12, 100, [100, 66], 101, window=70, softcap=1.0)
    # prefill-sized steps (query heads per kv head x tokens >= 16): keys scored a tile at a time
    gqa_case(root, "gqa_prefill_tiles", 1, 70, 4, 2, 24, None, [69], 70)
    gqa_case(root, "gqa_prefill_tiles_past", 1, 9, 8, 2, 16, 80, [88], 89, rotary=16, window=37, softcap=2.0)
    gqa_case(root, "gqa_prefill_tiles_smooth", 1, 20, 6, 3, 8, 50, [69], 70, smooth=True, sink=True)
    # causal = 0 with an additive attention_bias (the decoder fusion of torch exports): the bias
    # alone masks; per-head bias and a padded batch entry; a prefill whose first tile of 64 keys
    # is masked out entirely for every query (no NaN from the empty tile); bidirectional, no bias
    gqa_case(root, "gqa_noncausal_bias_decode", 2, 1, 4, 2, 16, 6, [6, 6], 7, causal=False, bias_shape=(2, 4, 1, 7),
             masked=3)
    gqa_case(root, "gqa_noncausal_bias_tiles", 1, 20, 4, 2, 16, 70, [89], 90, causal=False,
             bias_shape=(1, 1, 20, 90), masked=64)
    gqa_case(root, "gqa_noncausal_prompt", 1, 5, 2, 1, 8, None, [4], 5, causal=False)


# ------------------------------------------------------------------ MultiHeadAttention with past

def mha_case(root, name, B, S, P, N, H, causal, bias=False):
    q = RNG.uniform(-1, 1, size=(B, S, N * H)).astype(F32)
    k = RNG.uniform(-1, 1, size=(B, S, N * H)).astype(F32)
    v = RNG.uniform(-1, 1, size=(B, S, N * H)).astype(F32)
    bias_v = RNG.uniform(-0.5, 0.5, size=(3 * N * H,)).astype(F32) if bias else None
    past_k = RNG.uniform(-1, 1, size=(B, N, P, H)).astype(F32) if P is not None else None
    past_v = RNG.uniform(-1, 1, size=(B, N, P, H)).astype(F32) if P is not None else None
    qb, kb, vb = (x.astype(np.float64) for x in (q, k, v))
    if bias:
        qb, kb, vb = qb + bias_v[:N * H], kb + bias_v[N * H:2 * N * H], vb + bias_v[2 * N * H:]
    heads = lambda x: x.reshape(B, S, N, H).transpose(0, 2, 1, 3)
    pk, pv = heads(kb), heads(vb)
    if P:
        pk, pv = np.concatenate([past_k, pk], axis=2), np.concatenate([past_v, pv], axis=2)
    T = pk.shape[2]
    sc = heads(qb) @ pk.transpose(0, 1, 3, 2) / np.sqrt(H)
    if causal:
        for s_ in range(S):
            sc[:, :, s_, T - S + s_ + 1:] = -np.inf
    e = np.exp(sc - sc.max(axis=-1, keepdims=True))
    out = ((e / e.sum(axis=-1, keepdims=True)) @ pv).transpose(0, 2, 1, 3).reshape(B, S, N * H)
    ins = [("query", q), ("key", k), ("value", v), ("bias", bias_v), ("key_padding_mask", None),
           ("attention_bias", None), ("past_key", past_k), ("past_value", past_v)]
    names = [n if a is not None else "" for n, a in ins]
    while names[-1] == "":
        names.pop()
    outs = [("output", out.astype(F32)), ("present_key", pk.astype(F32)), ("present_value", pv.astype(F32))]
    write_case(root, name, [node("MultiHeadAttention", names, [n for n, _ in outs], num_heads=N,
                                 unidirectional=int(causal))], ins, outs)


def mha_cases(root):
    mha_case(root, "mha_past_decode", 2, 1, 5, 2, 8, True)
    mha_case(root, "mha_past_prompt_causal", 1, 3, 4, 2, 16, True)
    mha_case(root, "mha_past_bias", 2, 2, 3, 3, 8, False, bias=True)
    mha_case(root, "mha_present_without_past", 1, 4, None, 2, 8, True)


# ------------------------------------------------------------------ bad input

def bad_case(root, name, nodes, inputs, outputs, error):
    """A model that must fail with an error message containing `error` (tests/llm/check_bad.sh)."""
    write_case(root, name, nodes, inputs, outputs)
    with open(os.path.join(root, name, "error.txt"), "w") as f:
        f.write(error + "\n")


def bad_cases(root):
    a = RNG.uniform(-1, 1, size=(1, 100)).astype(F32)
    y = np.zeros((1, 8), F32)
    b3 = np.zeros((8, 3, 16), np.uint8)   # 3 blocks of 32: K=100 needs ceil(100/32) = 4
    sc = np.ones((8, 3), F32)
    bad_case(root, "matmulnbits_blocks_do_not_cover_k", [node("MatMulNBits", ["A", "B", "scales"], ["Y"], K=100, N=8,
             bits=4, block_size=32)], [("A", a), ("B", b3), ("scales", sc)], [("Y", y)], "k_blocks=4")
    bad_case(root, "matmulnbits_block_not_power_of_two", [node("MatMulNBits", ["A", "B", "scales"], ["Y"], K=100,
             N=8, bits=4, block_size=24)], [("A", a), ("B", b3), ("scales", sc)], [("Y", y)], "power of two")
    q = RNG.uniform(-1, 1, size=(1, 1, 32)).astype(F32)
    kv = RNG.uniform(-1, 1, size=(1, 1, 32)).astype(F32)
    out = np.zeros((1, 1, 32), F32)

    def gqa(past_k, past_v, seqlens, total, error, name, rotary=False, extra=None):
        ins = [("query", q), ("key", kv), ("value", kv), ("past_key", past_k), ("past_value", past_v),
               ("seqlens_k", np.array(seqlens, np.int32)), ("total_sequence_length", np.array(total, np.int32))]
        attrs = dict(num_heads=2, kv_num_heads=2, **(extra or {}))
        if rotary:
            cos, sin = caches(8, 8)
            ins += [("cos_cache", cos), ("sin_cache", sin)]
            attrs["do_rotary"] = 1
        bad_case(root, name, [node("GroupQueryAttention", [n for n, _ in ins], ["output"], **attrs)], ins,
                 [("output", out)], error)
    z = lambda L: np.zeros((1, 2, L, 16), F32)
    gqa(z(4), z(5), [4], 5, "must both be", "gqa_past_shapes_differ")
    gqa(z(3), z(3), [8], 9, "the cache (past_key) holds 3", "gqa_seqlens_beyond_cache")
    gqa(z(12), z(12), [10], 11, "beyond the cos/sin caches", "gqa_position_beyond_max_length", rotary=True)
    gqa(z(4), z(4), [4, 4], 5, "seqlens_k must be", "gqa_seqlens_wrong_batch")
    gqa(z(4), z(4), [4], 5, "needs causal = 1", "gqa_window_without_causal", extra=dict(causal=0, local_window_size=2))
    ins = [("query", q), ("key", kv), ("value", kv), ("past_key", z(4)), ("past_value", z(3))]
    bad_case(root, "mha_past_shapes_differ", [node("MultiHeadAttention", ["query", "key", "value", "", "", "",
             "past_key", "past_value"], ["output"], num_heads=2)], ins, [("output", out)], "past_key [1,2,4,16] and past_value [1,2,3,16]")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "build/llm_ops"
    exact, int8 = os.path.join(out, "exact"), os.path.join(out, "int8")
    matmul_nbits_cases(exact, int8)
    for inter in (False, True):
        rotary_ms_case(exact, f"rotary_ms_3d_offset{'_interleaved' if inter else ''}", 2, 3, 2, 8, inter, True,
                       "offset")
        rotary_ms_case(exact, f"rotary_ms_4d_posids{'_interleaved' if inter else ''}", 2, 4, 3, 8, inter, False,
                       "ids")
        rotary_onnx23_case(exact, f"rotary_onnx23{'_interleaved' if inter else ''}", inter)
    rotary_ms_case(exact, "rotary_ms_3d_partial", 1, 3, 2, 16, False, True, "ids", rd=8)
    norm_cases(exact)
    gqa_cases(exact)
    mha_cases(exact)
    bad_cases(os.path.join(out, "bad"))
    print(f"wrote {len(os.listdir(exact))} exact and {len(os.listdir(int8))} int8 cases under {out}")


if __name__ == "__main__":
    main()
