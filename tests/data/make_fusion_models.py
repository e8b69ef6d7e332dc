#!/usr/bin/python3
"""Small models for the extended-level fusion tests (tests/unit/test_fusion.c), run
with Debian's /usr/bin/python3 (python3-onnx). Each holds one or more instances of
a pattern the optimiser fuses and near misses it must leave alone. Re-running gives
the same bytes; the outputs are committed."""
import os
import numpy as np
import onnx
from onnx import helper, TensorProto, numpy_helper

here = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(2024)
F, I64 = TensorProto.FLOAT, TensorProto.INT64


def arr(name, *shape, scale=1.0):
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


def const(name, value, dtype=np.float32):
    return numpy_helper.from_array(np.array(value, dtype=dtype), name)


def vi(name, shape, dtype=F):
    return helper.make_tensor_value_info(name, dtype, shape)


def save(name, nodes, inputs, outputs, inits, opset=17):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="onyx-tests")
    m.ir_version = 8
    onnx.save(m, os.path.join(here, "fusion_" + name + ".onnx"))


N = helper.make_node


def gelu_models():
    """Erf GELU in its groupings (Div by sqrt 2 or Mul by 1/sqrt 2; 0.5 applied first,
    last or to the (1 + erf) factor), one behind a bias Add (-> BiasGelu), and two near
    misses: a wrong constant, and an Erf whose output is also a graph output."""
    inits = [const("sqrt2", 1.4142135), const("rsqrt2", 0.70710677), const("one", 1.0), const("half", 0.5),
             const("wrong", 1.5), arr("bias", 16)]
    nodes = []

    def erf_gelu(x, tag, scale="sqrt2", form="a", erf_out=None):
        e = erf_out or f"{tag}_erf"
        if scale == "rsqrt2":
            nodes.append(N("Mul", [x, "rsqrt2"], [f"{tag}_s"], name=f"{tag}_scale"))
        else:
            nodes.append(N("Div", [x, scale], [f"{tag}_s"], name=f"{tag}_scale"))
        nodes.append(N("Erf", [f"{tag}_s"], [e], name=f"{tag}_erf"))
        nodes.append(N("Add", ["one", e], [f"{tag}_a"], name=f"{tag}_add"))
        if form == "a":    # (x * a) * 0.5
            nodes.append(N("Mul", [x, f"{tag}_a"], [f"{tag}_m"], name=f"{tag}_mul"))
            nodes.append(N("Mul", [f"{tag}_m", "half"], [f"y_{tag}"], name=f"{tag}_half"))
        elif form == "b":  # (0.5 * x) * a
            nodes.append(N("Mul", ["half", x], [f"{tag}_h"], name=f"{tag}_half"))
            nodes.append(N("Mul", [f"{tag}_h", f"{tag}_a"], [f"y_{tag}"], name=f"{tag}_mul"))
        else:              # x * (a * 0.5)
            nodes.append(N("Mul", [f"{tag}_a", "half"], [f"{tag}_h"], name=f"{tag}_half"))
            nodes.append(N("Mul", [x, f"{tag}_h"], [f"y_{tag}"], name=f"{tag}_mul"))

    erf_gelu("a", "a", form="a")
    erf_gelu("b", "b", scale="rsqrt2", form="b")
    erf_gelu("c", "c", form="c")
    nodes.append(N("Add", ["d", "bias"], ["d_b"], name="d_bias"))
    erf_gelu("d_b", "d")
    erf_gelu("e", "e", scale="wrong")                  # near miss: not sqrt(2)
    erf_gelu("f", "f", erf_out="f_erf_out")           # near miss: Erf output is read outside
    names = "abcdef"
    save("gelu", nodes, [vi(n, [2, 3, 16]) for n in names],
         [vi(f"y_{n}", [2, 3, 16]) for n in names] + [vi("f_erf_out", [2, 3, 16])], inits, opset=13)


def fast_gelu_model():
    """tanh GELU as GPT-2 exports it (x*x*x through Muls, behind a bias Add), with
    Pow(x, 3), and a near miss with 0.05 in place of 0.044715."""
    inits = [const("k", 0.044715), const("c", 0.7978846), const("one", 1.0), const("half", 0.5),
             const("three", 3.0), const("bad", 0.05), arr("bias", 16)]
    nodes = [N("Add", ["bias", "a"], ["t"], name="a_bias")]

    def tanh_gelu(x, tag, cube="mul", k="k"):
        if cube == "mul":
            nodes.append(N("Mul", [x, x], [f"{tag}_sq"], name=f"{tag}_sq"))
            nodes.append(N("Mul", [x, f"{tag}_sq"], [f"{tag}_cu"], name=f"{tag}_cu"))
        else:
            nodes.append(N("Pow", [x, "three"], [f"{tag}_cu"], name=f"{tag}_cu"))
        nodes.extend([N("Mul", [k, f"{tag}_cu"], [f"{tag}_kc"], name=f"{tag}_kc"),
                      N("Add", [x, f"{tag}_kc"], [f"{tag}_in"], name=f"{tag}_in"),
                      N("Mul", ["c", f"{tag}_in"], [f"{tag}_ci"], name=f"{tag}_ci"),
                      N("Tanh", [f"{tag}_ci"], [f"{tag}_th"], name=f"{tag}_tanh"),
                      N("Add", ["one", f"{tag}_th"], [f"{tag}_a"], name=f"{tag}_add")])
        if cube == "mul":
            nodes.extend([N("Mul", [x, f"{tag}_a"], [f"{tag}_m"], name=f"{tag}_mul"),
                          N("Mul", ["half", f"{tag}_m"], [f"y_{tag}"], name=f"{tag}_half")])
        else:
            nodes.extend([N("Mul", [x, "half"], [f"{tag}_h"], name=f"{tag}_half"),
                          N("Mul", [f"{tag}_h", f"{tag}_a"], [f"y_{tag}"], name=f"{tag}_mul")])

    tanh_gelu("t", "a")
    tanh_gelu("b", "b", cube="pow")
    tanh_gelu("xc", "c", k="bad")   # near miss
    save("fast_gelu", nodes, [vi("a", [2, 3, 16]), vi("b", [2, 3, 16]), vi("xc", [2, 3, 16])],
         [vi("y_a", [2, 3, 16]), vi("y_b", [2, 3, 16]), vi("y_c", [2, 3, 16])], inits)


def layer_norm_models():
    """Decomposed LayerNormalization and RMSNorm, and a near miss whose epsilon is a
    vector; the opset-18 variant reads ReduceMean axes from an input."""
    def ln_nodes(x, tag, opset, eps="eps", gamma="gamma", beta="beta"):
        ax = {"axes": [-1]} if opset < 18 else {}
        ain = [] if opset < 18 else ["axes"]
        return [N("ReduceMean", [x] + ain, [f"{tag}_mean"], name=f"{tag}_mean", **ax),
                N("Sub", [x, f"{tag}_mean"], [f"{tag}_d"], name=f"{tag}_sub"),
                N("Pow", [f"{tag}_d", "two"], [f"{tag}_sq"], name=f"{tag}_pow"),
                N("ReduceMean", [f"{tag}_sq"] + ain, [f"{tag}_var"], name=f"{tag}_var", **ax),
                N("Add", [f"{tag}_var", eps], [f"{tag}_ve"], name=f"{tag}_eps"),
                N("Sqrt", [f"{tag}_ve"], [f"{tag}_sd"], name=f"{tag}_sqrt"),
                N("Div", [f"{tag}_d", f"{tag}_sd"], [f"{tag}_n"], name=f"{tag}_div"),
                N("Mul", [f"{tag}_n", gamma], [f"{tag}_g"], name=f"{tag}_scale"),
                N("Add", [f"{tag}_g", beta], [f"y_{tag}"], name=f"{tag}_shift")]

    inits = [const("two", 2.0), const("eps", 1e-5), const("eps_rms", 1e-6), arr("gamma", 16), arr("beta", 16),
             arr("gamma2", 16), arr("gamma6", 6), arr("beta6", 6), numpy_helper.from_array(
                 (rng.random(6) * 1e-3).astype(np.float32), "eps_vec")]
    nodes = ln_nodes("x", "ln", 13)
    nodes += [N("Pow", ["r", "two"], ["rms_sq"], name="rms_pow"),
              N("ReduceMean", ["rms_sq"], ["rms_ms"], name="rms_mean", axes=[-1]),
              N("Add", ["rms_ms", "eps_rms"], ["rms_ve"], name="rms_eps"),
              N("Sqrt", ["rms_ve"], ["rms_sd"], name="rms_sqrt"),
              N("Div", ["r", "rms_sd"], ["rms_n"], name="rms_div"),
              N("Mul", ["gamma2", "rms_n"], ["y_rms"], name="rms_scale")]
    nodes += ln_nodes("z", "miss", 13, eps="eps_vec", gamma="gamma6", beta="beta6")
    save("layer_norm", nodes, [vi("x", [2, 3, 16]), vi("r", [2, 3, 16]), vi("z", [2, 4, 6])],
         [vi("y_ln", [2, 3, 16]), vi("y_rms", [2, 3, 16]), vi("y_miss", [2, 4, 6])], inits, opset=13)
    inits18 = [const("two", 2.0), const("eps", 1e-5), arr("gamma", 16), arr("beta", 16),
               numpy_helper.from_array(np.array([-1], np.int64), "axes")]
    save("layer_norm18", ln_nodes("x", "ln", 18), [vi("x", [2, 3, 16])], [vi("y_ln", [2, 3, 16])], inits18, opset=18)


def skip_layer_norm_model():
    """Residual Add (+ bias Add after a MatMul) into LayerNormalization -> SkipLayerNorm;
    a residual sum that is also a graph output (-> its input_skip_bias_sum output); an
    RMS variant; and a near miss normalising two axes."""
    inits = [arr("W", 8, 16, scale=0.3), arr("bias", 16), arr("gamma", 16), arr("beta", 16), arr("gamma2", 16),
             arr("g48", 3, 16), arr("b48", 3, 16)]
    nodes = [N("MatMul", ["h", "W"], ["t1"], name="proj"),
             N("Add", ["bias", "t1"], ["t2"], name="proj_bias"),
             N("Add", ["x", "t2"], ["s1"], name="res1"),
             N("LayerNormalization", ["s1", "gamma", "beta"], ["y1"], name="ln1", axis=-1, epsilon=1e-5),
             N("Add", ["y1", "x2"], ["s2"], name="res2"),
             N("LayerNormalization", ["s2", "gamma", "beta"], ["y2"], name="ln2", epsilon=1e-6),
             N("Add", ["y2", "x3"], ["s3"], name="res3"),
             N("SimplifiedLayerNormalization", ["s3", "gamma2"], ["y3"], name="rms3", axis=-1, epsilon=1e-6),
             N("Add", ["y3", "x4"], ["s4"], name="res4"),
             N("LayerNormalization", ["s4", "g48", "b48"], ["y4"], name="ln4", axis=1)]
    shape = [2, 3, 16]
    save("skip_layer_norm", nodes, [vi("x", shape), vi("h", [2, 3, 8]), vi("x2", shape), vi("x3", [3, 16]),
                                    vi("x4", shape)],
         [vi("y4", shape), vi("s2", shape)], inits)


def split_heads(tag, src, heads, head):
    """The exporter's Reshape(src, [dim0(src), dim1(src), heads, head])."""
    return [N("Shape", [src], [f"{tag}_shape"], name=f"{tag}_shape"),
            N("Gather", [f"{tag}_shape", "i0"], [f"{tag}_d0"], name=f"{tag}_g0", axis=0),
            N("Gather", [f"{tag}_shape", "i1"], [f"{tag}_d1"], name=f"{tag}_g1", axis=0),
            N("Unsqueeze", [f"{tag}_d0", "ax0"], [f"{tag}_u0"], name=f"{tag}_u0"),
            N("Unsqueeze", [f"{tag}_d1", "ax0"], [f"{tag}_u1"], name=f"{tag}_u1"),
            N("Concat", [f"{tag}_u0", f"{tag}_u1", "n_heads", "head_size"], [f"{tag}_target"], name=f"{tag}_cat",
              axis=0),
            N("Reshape", [src, f"{tag}_target"], [f"{tag}_4d"], name=f"{tag}_reshape")]


def attention_block(tag, x, mask, heads=2, head=4, k_two_steps=False, scale_mul=False, scores_out=None, kv=None):
    """BERT/GPT-2 self-attention as torch exports it, reading x (batch, seq, heads*head)
    (cross-attention: keys and values from kv)."""
    hidden = heads * head
    inits = [arr(f"{tag}_wq", hidden, hidden, scale=0.5), arr(f"{tag}_wk", hidden, hidden, scale=0.5),
             arr(f"{tag}_wv", hidden, hidden, scale=0.5), arr(f"{tag}_bq", hidden), arr(f"{tag}_bk", hidden),
             arr(f"{tag}_bv", hidden)]
    nodes = []
    for p in "qkv":
        src = x if p == "q" or kv is None else kv
        nodes += [N("MatMul", [src, f"{tag}_w{p}"], [f"{tag}_{p}mm"], name=f"{tag}_{p}_matmul"),
                  N("Add", [f"{tag}_b{p}", f"{tag}_{p}mm"], [f"{tag}_{p}"], name=f"{tag}_{p}_bias")]
        nodes += split_heads(f"{tag}_{p}", f"{tag}_{p}", heads, head)
    nodes += [N("Transpose", [f"{tag}_q_4d"], [f"{tag}_qt"], name=f"{tag}_qt", perm=[0, 2, 1, 3]),
              N("Transpose", [f"{tag}_v_4d"], [f"{tag}_vt"], name=f"{tag}_vt", perm=[0, 2, 1, 3])]
    if k_two_steps:
        nodes += [N("Transpose", [f"{tag}_k_4d"], [f"{tag}_kt1"], name=f"{tag}_kt1", perm=[0, 2, 1, 3]),
                  N("Transpose", [f"{tag}_kt1"], [f"{tag}_kt"], name=f"{tag}_kt", perm=[0, 1, 3, 2])]
    else:
        nodes.append(N("Transpose", [f"{tag}_k_4d"], [f"{tag}_kt"], name=f"{tag}_kt", perm=[0, 2, 3, 1]))
    scores = scores_out or f"{tag}_scaled"
    nodes.append(N("MatMul", [f"{tag}_qt", f"{tag}_kt"], [f"{tag}_qk"], name=f"{tag}_qk"))
    if scale_mul:
        nodes.append(N("Mul", [f"{tag}_qk", "inv_sqrt_head"], [scores], name=f"{tag}_scale"))
    else:
        nodes.append(N("Div", [f"{tag}_qk", "sqrt_head"], [scores], name=f"{tag}_scale"))
    nodes += [N("Add", [scores, mask], [f"{tag}_masked"], name=f"{tag}_mask"),
              N("Softmax", [f"{tag}_masked"], [f"{tag}_p"], name=f"{tag}_softmax", axis=-1),
              N("MatMul", [f"{tag}_p", f"{tag}_vt"], [f"{tag}_ctx"], name=f"{tag}_pv"),
              N("Transpose", [f"{tag}_ctx"], [f"{tag}_ctx_t"], name=f"{tag}_ctx_t", perm=[0, 2, 1, 3]),
              N("Shape", [x], [f"{tag}_xs"], name=f"{tag}_xshape"),
              N("Gather", [f"{tag}_xs", "i0"], [f"{tag}_b"], name=f"{tag}_xb", axis=0),
              N("Gather", [f"{tag}_xs", "i1"], [f"{tag}_s"], name=f"{tag}_xs1", axis=0),
              N("Unsqueeze", [f"{tag}_b", "ax0"], [f"{tag}_bu"], name=f"{tag}_bu"),
              N("Unsqueeze", [f"{tag}_s", "ax0"], [f"{tag}_su"], name=f"{tag}_su"),
              N("Concat", [f"{tag}_bu", f"{tag}_su", "hidden"], [f"{tag}_merge"], name=f"{tag}_merge", axis=0),
              N("Reshape", [f"{tag}_ctx_t", f"{tag}_merge"], [f"{tag}_out"], name=f"{tag}_reshape_out")]
    return nodes, inits


def shape_consts(heads=2, head=4):
    i64 = lambda name, v: numpy_helper.from_array(np.array(v, np.int64), name)
    return [i64("i0", 0), i64("i1", 1), i64("ax0", [0]), i64("n_heads", [heads]), i64("head_size", [head]),
            i64("hidden", [heads * head]), const("sqrt_head", 2.0), const("inv_sqrt_head", 0.5)]


def attention_models():
    """BERT-style: two layers sharing one key-padding mask (one int32 Cast), and a near
    miss whose scores are also a graph output. GPT-2-style: a causal Where(...) mask
    (-> attention_bias), the scale as a Mul and K transposed in two steps."""
    nodes = [N("Unsqueeze", ["mask", "ax1"], ["m1"], name="mask_u1"),
             N("Unsqueeze", ["m1", "ax2"], ["m2"], name="mask_u2"),
             N("Cast", ["m2"], ["mf"], name="mask_cast", to=F),
             N("Sub", ["one", "mf"], ["mi"], name="mask_sub"),
             N("Mul", ["mi", "neg"], ["madd"], name="mask_mul")]
    inits = shape_consts() + [const("one", 1.0), const("neg", -10000.0),
                              numpy_helper.from_array(np.array([1], np.int64), "ax1"),
                              numpy_helper.from_array(np.array([2], np.int64), "ax2")]
    n1, i1 = attention_block("l0", "x", "madd")
    nodes += n1 + [N("Add", ["l0_out", "x"], ["h1"], name="res")]
    n2, i2 = attention_block("l1", "h1", "madd")
    n3, i3 = attention_block("miss", "x", "madd", scores_out="miss_scores")
    nodes += n2 + n3
    seq = ["batch", "seq"]
    save("attention", nodes, [vi("x", seq + [8]), vi("mask", seq, I64)],
         [vi("l1_out", seq + [8]), vi("miss_out", seq + [8]), vi("miss_scores", ["batch", 2, "seq", "seq"])],
         inits + i1 + i2 + i3)

    tril = numpy_helper.from_array(np.tril(np.ones((16, 16), bool)).reshape(1, 1, 16, 16), "tril")
    nodes = [N("Shape", ["x"], ["xs"], name="xs"),
             N("Gather", ["xs", "i1"], ["sl"], name="seq_len", axis=0),
             N("Unsqueeze", ["sl", "ax0"], ["slu"], name="seq_len_u"),
             N("Slice", ["tril", "zero", "slu", "ax2"], ["c1"], name="slice_rows"),
             N("Slice", ["c1", "zero", "slu", "ax3"], ["c2"], name="slice_cols"),
             N("Not", ["c2"], ["notc"], name="not"),
             N("Shape", ["c2"], ["cs"], name="cshape"),
             N("ConstantOfShape", ["cs"], ["zeros"], name="zeros", value=numpy_helper.from_array(
                 np.zeros(1, np.float32))),
             N("Where", ["notc", "neg", "zeros"], ["causal"], name="where")]
    inits = shape_consts() + [tril, const("neg", -10000.0),
                              numpy_helper.from_array(np.array([0], np.int64), "zero"),
                              numpy_helper.from_array(np.array([2], np.int64), "ax2"),
                              numpy_helper.from_array(np.array([3], np.int64), "ax3")]
    n1, i1 = attention_block("gpt", "x", "causal", k_two_steps=True, scale_mul=True)
    save("attention_causal", nodes + n1, [vi("x", ["batch", "seq", 8])], [vi("gpt_out", ["batch", "seq", 8])],
         inits + i1)

    # cross-attention: queries from x, keys and values from enc (-> MultiHeadAttention)
    nodes = [N("Unsqueeze", ["enc_mask", "ax12"], ["m12"], name="mask_u12"),
             N("Cast", ["m12"], ["mf"], name="mask_cast", to=F),
             N("Sub", ["one", "mf"], ["mi"], name="mask_sub"),
             N("Mul", ["neg", "mi"], ["madd"], name="mask_mul")]
    inits = shape_consts() + [const("one", 1.0), const("neg", -10000.0),
                              numpy_helper.from_array(np.array([1, 2], np.int64), "ax12")]
    n1, i1 = attention_block("cross", "x", "madd", kv="enc")
    save("attention_cross", nodes + n1, [vi("x", ["batch", "seq", 8]), vi("enc", ["batch", "enc_seq", 8]),
                                         vi("enc_mask", ["batch", "enc_seq"], I64)],
         [vi("cross_out", ["batch", "seq", 8])], inits + i1)


def embed_models():
    """Word + position (Slice of an arange) + segment Gathers + a constant row, then
    LayerNormalization, the sum also a graph output (-> embedding_sum); and a near miss
    whose positions are not an arange."""
    inits = [arr("word", 50, 8), arr("word2", 50, 8), arr("pos", 16, 8), arr("seg", 2, 8), arr("row", 8), arr("gamma", 8), arr("beta", 8),
             numpy_helper.from_array(np.arange(16, dtype=np.int64).reshape(1, 16), "arange"),
             numpy_helper.from_array(np.arange(16, dtype=np.int64)[::-1].copy().reshape(1, 16), "not_arange"),
             numpy_helper.from_array(np.array(1, np.int64), "i1"),
             numpy_helper.from_array(np.array([0], np.int64), "ax0"),
             numpy_helper.from_array(np.array([1], np.int64), "ax1")]
    nodes = [N("Shape", ["ids"], ["ids_shape"], name="ids_shape"),
             N("Gather", ["ids_shape", "i1"], ["seq"], name="seq", axis=0),
             N("Unsqueeze", ["seq", "ax0"], ["seq_u"], name="seq_u"),
             N("Slice", ["arange", "ax0", "seq_u", "ax1"], ["positions"], name="positions"),
             N("Gather", ["word", "ids"], ["we"], name="word_gather"),
             N("Gather", ["pos", "positions"], ["pe"], name="pos_gather"),
             N("Gather", ["seg", "types"], ["se"], name="seg_gather"),
             N("Add", ["we", "pe"], ["wp"], name="add_wp"),
             N("Add", ["wp", "se"], ["wps"], name="add_seg"),
             N("Add", ["wps", "row"], ["emb"], name="add_row"),
             N("LayerNormalization", ["emb", "gamma", "beta"], ["y"], name="emb_ln", epsilon=1e-12),
             N("Slice", ["not_arange", "ax0", "seq_u", "ax1"], ["positions2"], name="positions2"),
             N("Gather", ["word2", "ids"], ["we2"], name="word_gather2"),
             N("Gather", ["pos", "positions2"], ["pe2"], name="pos_gather2"),
             N("Add", ["we2", "pe2"], ["emb2"], name="add2"),
             N("LayerNormalization", ["emb2", "gamma", "beta"], ["y2"], name="miss_ln")]
    seq = ["batch", "seq"]
    save("embed", nodes, [vi("ids", seq, I64), vi("types", seq, I64)],
         [vi("y", seq + [8]), vi("emb", seq + [8]), vi("y2", seq + [8])], inits)


def activation_model():
    """Conv + Relu / Clip / LeakyRelu -> FusedConv, Gemm + Relu / HardSigmoid / Tanh ->
    FusedGemm; near misses: Conv + Sigmoid (no FusedConv kernel for it) and a Conv
    whose output is also a graph output."""
    inits = [arr(f"W{i}", 4, 3, 3, 3, scale=0.3) for i in range(5)] + [arr("B0", 4), arr("Wg", 6, 5), arr("bg", 5),
                                                                       const("lo", 0.0), const("hi", 0.5)]
    nodes = [N("Conv", ["x", "W0", "B0"], ["c0"], name="conv0", pads=[1, 1, 1, 1]),
             N("Relu", ["c0"], ["y0"], name="relu0"),
             N("Conv", ["x", "W1"], ["c1"], name="conv1"),
             N("Clip", ["c1", "lo", "hi"], ["y1"], name="clip1"),
             N("Conv", ["x", "W2"], ["c2"], name="conv2", strides=[2, 2]),
             N("LeakyRelu", ["c2"], ["y2"], name="leaky2", alpha=0.2),
             N("Conv", ["x", "W3"], ["c3"], name="conv3"),
             N("Sigmoid", ["c3"], ["y3"], name="sigmoid3"),
             N("Conv", ["x", "W4"], ["c4"], name="conv4"),
             N("Relu", ["c4"], ["y4"], name="relu4"),
             N("Gemm", ["v", "Wg", "bg"], ["g0"], name="gemm0"),
             N("Relu", ["g0"], ["z0"], name="grelu"),
             N("Gemm", ["v", "Wg", "bg"], ["g1"], name="gemm1", alpha=0.5),
             N("HardSigmoid", ["g1"], ["z1"], name="ghs", alpha=0.3, beta=0.4),
             N("Gemm", ["v", "Wg"], ["g2"], name="gemm2"),
             N("Tanh", ["g2"], ["z2"], name="gtanh")]
    outs = [vi("y0", None), vi("y1", None), vi("y2", None), vi("y3", None), vi("y4", None), vi("c4", None),
            vi("z0", None), vi("z1", None), vi("z2", None)]
    save("activation", nodes, [vi("x", [1, 3, 8, 8]), vi("v", [2, 6])], outs, inits, opset=13)


def matmul_model():
    """Transposes of the last two dims and scalar Mul/Div around MatMul -> FusedMatMul;
    near misses: a vector Mul and a Transpose of other axes."""
    inits = [arr("W", 3, 6), const("half", 0.5), const("four", 4.0), arr("vec", 6), arr("Q", 4, 5)]
    nodes = [N("Transpose", ["a"], ["at"], name="at", perm=[0, 2, 1]),
             N("MatMul", ["at", "b"], ["y1"], name="mm_ta"),
             N("MatMul", ["a2", "W"], ["m2"], name="mm_scale"),
             N("Mul", ["m2", "half"], ["y2"], name="scale_after"),
             N("Div", ["a3", "four"], ["a3s"], name="scale_before"),
             N("Transpose", ["b3"], ["b3t"], name="b3t", perm=[0, 2, 1]),
             N("MatMul", ["a3s", "b3t"], ["y3"], name="mm_both"),
             N("MatMul", ["a4", "W"], ["m4"], name="mm_vec"),
             N("Mul", ["m4", "vec"], ["y4"], name="vec_mul"),
             N("Transpose", ["p"], ["pt"], name="pt", perm=[1, 0, 2]),
             N("MatMul", ["pt", "Q"], ["y5"], name="mm_other_perm")]
    save("matmul", nodes, [vi("a", [2, 4, 3]), vi("b", [2, 4, 5]), vi("a2", [2, 4, 3]), vi("a3", [2, 4, 3]),
                           vi("b3", [2, 5, 3]), vi("a4", [2, 4, 3]), vi("p", [3, 2, 4])],
         [vi(f"y{i}", None) for i in range(1, 6)], inits)


def matmul_gelu_model():
    """Level all (CPU-only sessions): MatMul by a constant weight (each its own, or
    common subexpression elimination would merge the products) followed by
    com.microsoft BiasGelu, FastGelu (with and without its bias) or Gelu ->
    ai.onyx MatMulActivation. K = 300 spans two K blocks of the SGEMM, N = 40 ends in a
    partial vector. Near misses: a MatMul whose output is also a graph output, and one
    whose weight is an input. Its own generator, so the other models keep their bytes."""
    r = np.random.default_rng(7)
    w = lambda name, *shape: numpy_helper.from_array((r.standard_normal(shape) * 0.1).astype(np.float32), name)
    ms = lambda op, ins, out, name: N(op, ins, [out], name=name, domain="com.microsoft")
    inits = [w("W", 300, 40), w("Wb", 300, 40), w("b", 40), w("W2", 300, 24), w("W2b", 300, 24)]
    nodes = [N("MatMul", ["x", "W"], ["m1"], name="mm_bias_gelu"), ms("BiasGelu", ["m1", "b"], "y1", "bias_gelu"),
             N("MatMul", ["x", "Wb"], ["m2"], name="mm_fast_bias"), ms("FastGelu", ["m2", "b"], "y2", "fast_bias"),
             N("MatMul", ["x", "W2"], ["m3"], name="mm_fast"), ms("FastGelu", ["m3"], "y3", "fast"),
             N("MatMul", ["x", "W2b"], ["m4"], name="mm_gelu"), ms("Gelu", ["m4"], "y4", "gelu"),
             N("MatMul", ["x", "W"], ["m5"], name="mm_read_outside"), ms("Gelu", ["m5"], "y5", "gelu_miss"),
             N("MatMul", ["x", "wx"], ["m6"], name="mm_weight_input"), ms("Gelu", ["m6"], "y6", "gelu_miss2")]
    g = helper.make_graph(nodes, "matmul_gelu", [vi("x", ["batch", "seq", 300]), vi("wx", [300, 8])],
                          [vi(f"y{i}", None) for i in range(1, 7)] + [vi("m5", None)], initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)],
                          producer_name="onyx-tests")
    m.ir_version = 8
    onnx.save(m, os.path.join(here, "fusion_matmul_gelu.onnx"))


def attention_causal_long_model():
    """The GPT-2-style causal attention of attention_models() over 40 tokens (static), so
    the kernel's causal key skipping runs several blocks of query rows. Its own random
    weights (the other models keep their bytes)."""
    global rng
    saved, rng = rng, np.random.default_rng(11)
    tril = numpy_helper.from_array(np.tril(np.ones((64, 64), bool)).reshape(1, 1, 64, 64), "tril")
    nodes = [N("Slice", ["tril", "zero", "sl", "ax2"], ["c1"], name="slice_rows"),
             N("Slice", ["c1", "zero", "sl", "ax3"], ["c2"], name="slice_cols"),
             N("Not", ["c2"], ["notc"], name="not"),
             N("Where", ["notc", "neg", "zeros"], ["causal"], name="where")]
    inits = shape_consts() + [tril, const("neg", -10000.0), const("zeros", np.zeros((1, 1, 40, 40))),
                              numpy_helper.from_array(np.array([0], np.int64), "zero"),
                              numpy_helper.from_array(np.array([40], np.int64), "sl"),
                              numpy_helper.from_array(np.array([2], np.int64), "ax2"),
                              numpy_helper.from_array(np.array([3], np.int64), "ax3")]
    n1, i1 = attention_block("gpt", "x", "causal", k_two_steps=True, scale_mul=True)
    save("attention_causal_long", nodes + n1, [vi("x", [2, 40, 8])], [vi("gpt_out", [2, 40, 8])], inits + i1)
    rng = saved


def attention_dq_model():
    """A dynamically quantised BERT layer, as `onyx quantize --mode dynamic` writes it: each
    projection is DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul(scales) -> Add(bias),
    and x's sequence length comes from a Slice of a position table, which shape inference
    cannot follow. The output Reshape takes (B, S) from x, not from a projection, so fusing
    it into MultiHeadAttention needs the projections' leading dims traced back to x."""
    global rng
    saved, rng = rng, np.random.default_rng(7)
    inits = shape_consts() + [const("one", 1.0), const("neg", -10000.0),
                              numpy_helper.from_array(np.array([1], np.int64), "ax1"),
                              numpy_helper.from_array(np.array([2], np.int64), "ax2"),
                              numpy_helper.from_array(np.array([0], np.int64), "zero"),
                              arr("pos", 1, 16, 8, scale=0.1)]
    nodes = [N("Unsqueeze", ["mask", "ax1"], ["m1"], name="mask_u1"),
             N("Unsqueeze", ["m1", "ax2"], ["m2"], name="mask_u2"),
             N("Cast", ["m2"], ["mf"], name="mask_cast", to=F),
             N("Sub", ["one", "mf"], ["mi"], name="mask_sub"),
             N("Mul", ["mi", "neg"], ["madd"], name="mask_mul"),
             N("Shape", ["x_in"], ["xin_shape"], name="xin_shape"),
             N("Gather", ["xin_shape", "i1"], ["xin_s"], name="xin_s", axis=0),
             N("Unsqueeze", ["xin_s", "ax0"], ["xin_su"], name="xin_su"),
             N("Slice", ["pos", "zero", "xin_su", "ax1"], ["pos_s"], name="pos_slice"),
             N("Add", ["x_in", "pos_s"], ["x"], name="pos_add"),
             N("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xzp"], name="x_dql")]
    blk, binits = attention_block("dq", "x", "madd")
    for p in "qkv":
        mm = next(n for n in blk if n.name == f"dq_{p}_matmul")
        w = next(t for t in binits if t.name == f"dq_w{p}")
        wf = numpy_helper.to_array(w)
        # 7-bit weights (reduce_range): the AVX2 DynamicQuantizeMatMul reproduces ONNX
        # Runtime's saturating u8 x s8 pair sums, which 7-bit weights never reach, so the
        # fused graph equals the unfused MatMulInteger on every ISA
        scale = np.float32(np.abs(wf).max() / 63)
        binits.remove(w)
        binits += [numpy_helper.from_array(np.round(wf / scale).astype(np.int8), f"dq_w{p}_i8"),
                   const(f"dq_w{p}_scale", scale), const(f"dq_w{p}_zp", 0, np.int8)]
        i = blk.index(mm)
        blk[i:i + 1] = [N("MatMulInteger", ["xq", f"dq_w{p}_i8", "xzp", f"dq_w{p}_zp"], [f"dq_{p}_i32"],
                          name=f"dq_{p}_mmi"),
                        N("Cast", [f"dq_{p}_i32"], [f"dq_{p}_f"], name=f"dq_{p}_cast", to=F),
                        N("Mul", ["xs", f"dq_w{p}_scale"], [f"dq_{p}_sc"], name=f"dq_{p}_scales"),
                        N("Mul", [f"dq_{p}_f", f"dq_{p}_sc"], [f"dq_{p}mm"], name=f"dq_{p}_rescale")]
    seq = ["batch", "seq"]
    save("attention_dq", nodes + blk, [vi("x_in", seq + [8]), vi("mask", seq, I64)],
         [vi("dq_out", seq + [8])], inits + binits)
    rng = saved


if __name__ == "__main__":
    gelu_models()
    fast_gelu_model()
    layer_norm_models()
    skip_layer_norm_model()
    attention_models()
    embed_models()
    activation_model()
    matmul_model()
    matmul_gelu_model()
    attention_causal_long_model()
    attention_dq_model()
