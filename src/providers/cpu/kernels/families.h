/* Every kernel family of the CPU provider. Each kernels/<family>.c defines
 *   const onyx_op_def onyx_ops_<family>[];
 * terminated by an entry whose op_type is NULL. Add a line here for a new
 * family; the registry (cpu/registry.c) includes this list. */
ONYX_FAMILY(elementwise)   /* unary/binary/variadic math, comparison, logic, Where */
ONYX_FAMILY(activation)    /* Relu, Sigmoid, Tanh, LeakyRelu, Elu, Gelu, Softmax-free activations */
ONYX_FAMILY(cast)          /* Cast, CastLike */
ONYX_FAMILY(tensor)        /* Reshape, Transpose, Concat, Split, Slice, Gather, Pad, ... */
ONYX_FAMILY(generator)     /* Constant, ConstantOfShape, Range, Shape, Size, EyeLike */
ONYX_FAMILY(matmul)        /* MatMul, Gemm */
ONYX_FAMILY(matmul_activation) /* ai.onyx MatMulActivation: MatMul + GELU in the SGEMM store (layout pass) */
ONYX_FAMILY(conv)          /* Conv, ConvTranspose */
ONYX_FAMILY(pool)          /* MaxPool, AveragePool, Global*Pool, LpPool */
ONYX_FAMILY(normalization) /* BatchNormalization, LayerNormalization, InstanceNormalization, LRN */
ONYX_FAMILY(softmax)       /* Softmax, LogSoftmax, Hardmax */
ONYX_FAMILY(reduce)        /* Reduce*, ArgMax, ArgMin */
ONYX_FAMILY(controlflow)   /* If, Loop, Scan (run subgraphs through cpu/subgraph.h: the session's body runner) */
ONYX_FAMILY(sequence)      /* Sequence*, SplitToSequence, ConcatFromSequence, Optional* */
ONYX_FAMILY(tensor_slice)  /* Slice, Pad, CenterCropPad, Trilu, ReverseSequence, Compress */
ONYX_FAMILY(tensor_index)  /* Gather*, Scatter*, NonZero, TopK */
ONYX_FAMILY(rnn)           /* RNN, GRU, LSTM */
ONYX_FAMILY(resize)        /* Resize, Upsample */
ONYX_FAMILY(einsum)        /* Einsum */
ONYX_FAMILY(spatial)       /* GridSample, AffineGrid, Col2Im, DeformConv */
ONYX_FAMILY(detection)     /* RoiAlign, NonMaxSuppression */
ONYX_FAMILY(math_misc)     /* CumSum, CumProd, Det, BitCast, Unique, Random*, Bernoulli, Multinomial */
ONYX_FAMILY(loss)          /* NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss */
ONYX_FAMILY(training)      /* ai.onnx.preview.training: Adagrad, Adam, Momentum */
ONYX_FAMILY(attention)     /* Attention, FlexAttention (ai.onnx.preview) */
ONYX_FAMILY(contrib)       /* com.microsoft Gelu, BiasGelu, FastGelu (from the fusions) */
ONYX_FAMILY(attention_aux) /* RotaryEmbedding, LinearAttention, CausalConvWithState, SwiGLU, TensorScatter */
ONYX_FAMILY(contrib_norm)  /* LayerNormalization (opsets < 17), SimplifiedLayerNormalization, com.microsoft Skip/Embed LayerNormalization */
ONYX_FAMILY(contrib_matmul) /* com.microsoft FusedMatMul, FusedGemm */
ONYX_FAMILY(contrib_attention) /* com.microsoft Attention */
ONYX_FAMILY(contrib_nbits) /* com.microsoft MatMulNBits (4/8-bit weights, contrib/matmul_nbits.c) */
ONYX_FAMILY(contrib_gqa)   /* com.microsoft GroupQueryAttention (contrib/gqa.c) */
ONYX_FAMILY(strings)       /* StringConcat, StringSplit, StringNormalizer, RegexFullMatch (PCRE2) */
ONYX_FAMILY(image)         /* ImageDecoder: BMP, PNM, PNG, JPEG, JPEG 2000, TIFF, WebP */
ONYX_FAMILY(text)          /* TfIdfVectorizer */
ONYX_FAMILY(quantize)      /* QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear */
ONYX_FAMILY(signal)        /* DFT, STFT, Hann/Hamming/BlackmanWindow, MelWeightMatrix */
ONYX_FAMILY(ml_linear)     /* ai.onnx.ml LinearClassifier, LinearRegressor */
ONYX_FAMILY(ml_svm)        /* ai.onnx.ml SVMClassifier, SVMRegressor */
ONYX_FAMILY(ml_tree)       /* ai.onnx.ml TreeEnsembleClassifier/Regressor, TreeEnsemble (opset 5) */
ONYX_FAMILY(ml_preprocess) /* ai.onnx.ml Scaler, Normalizer, Binarizer, Imputer, OneHotEncoder, LabelEncoder, CategoryMapper, ArrayFeatureExtractor, FeatureVectorizer, DictVectorizer, CastMap, ZipMap */
ONYX_FAMILY(qlinear)       /* MatMulInteger, ConvInteger, QLinearMatMul (int8 and float8), QLinearConv */
ONYX_FAMILY(quant_contrib) /* com.microsoft DynamicQuantizeMatMul, MatMulIntegerToFloat (integer GEMM) */
ONYX_FAMILY(qlinear_add)   /* com.microsoft QLinearAdd (from the QDQ fusion) */
ONYX_FAMILY(qlinear_nhwc)  /* com.microsoft NhwcMaxPool, QLinearConcat (8-bit pools and concats) */
ONYX_FAMILY(nchwc_conv)    /* ai.onyx.nchwc Conv on the blocked-channel layout (layout pass, level all) */
ONYX_FAMILY(nchwc_pool)    /* ai.onyx.nchwc MaxPool, AveragePool, Global*Pool, ReorderInput/Output */
