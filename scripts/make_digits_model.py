#!/usr/bin/python3
"""Train the onyx demo model and write it, with its held-out test set, into models/.

Needs Debian's /usr/bin/python3 with:  apt-get install -y python3-sklearn python3-onnx python3-numpy
(python3-sklearn bundles the 8x8 digits data set; nothing is downloaded).

What it does
  1. Loads sklearn's 8x8 handwritten digits (1,797 images, pixels 0..16), splits them 75/25 with a
     fixed seed, trains an MLP 64-64-10 (ReLU) on pixels / 16.
  2. Writes the network as ONNX by hand with onnx.helper (opset 13; no converter):
        image [N,64] float -> Mul(1/16) -> Gemm -> Relu -> Gemm -> logits
        probabilities = Softmax(logits, axis=1)            [N,10] float
        label         = ArgMax(logits, axis=1, keepdims=0) [N]    int64
  3. Recomputes the graph's math with numpy from the weights read back out of the ONNX file and
     checks it against sklearn's predict_proba / predict.
  4. Saves, byte-for-byte reproducibly:
        models/digits.onnx      the model
        models/digits_test.npz  arrays "image" float32 [N,64] and "label" int64 [N] (stored, no
                                compression, fixed timestamps)
        models/digits_test.bin  the same test set for C readers, little-endian:
                                  u32 count, then count x (64 x float32 pixels, int64 label)

Usage: /usr/bin/python3 scripts/make_digits_model.py [OUTDIR]   (default: models/ next to scripts/)
"""
import io
import os
import struct
import sys
import zipfile

import numpy as np

try:
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    from sklearn.neural_network import MLPClassifier
except ImportError as e:  # say what to install instead of a bare traceback
    sys.exit(f"missing module ({e}); install with: apt-get install -y python3-sklearn "
             "python3-onnx python3-numpy, and run with /usr/bin/python3")

SEED = 0
HIDDEN = 64
OPSET = 13
PIXEL_MAX = 16.0


def train():
    digits = load_digits()
    x = digits.data.astype(np.float32)
    y = digits.target.astype(np.int64)
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=0.25, random_state=SEED, stratify=y)
    clf = MLPClassifier(hidden_layer_sizes=(HIDDEN,), activation="relu", solver="adam",
                        alpha=1e-4, max_iter=400, random_state=SEED)
    clf.fit(x_train / PIXEL_MAX, y_train)
    return clf, x_test, y_test


def to_onnx(clf):
    w1, w2 = (w.astype(np.float32) for w in clf.coefs_)         # [64,H], [H,10]
    b1, b2 = (b.astype(np.float32) for b in clf.intercepts_)
    inits = [
        numpy_helper.from_array(np.array(1.0 / PIXEL_MAX, dtype=np.float32), "scale"),
        numpy_helper.from_array(w1, "fc1.weight"),
        numpy_helper.from_array(b1, "fc1.bias"),
        numpy_helper.from_array(w2, "fc2.weight"),
        numpy_helper.from_array(b2, "fc2.bias"),
    ]
    nodes = [
        helper.make_node("Mul", ["image", "scale"], ["scaled"], name="scale_pixels"),
        helper.make_node("Gemm", ["scaled", "fc1.weight", "fc1.bias"], ["fc1"], name="fc1"),
        helper.make_node("Relu", ["fc1"], ["hidden"], name="relu1"),
        helper.make_node("Gemm", ["hidden", "fc2.weight", "fc2.bias"], ["logits"], name="fc2"),
        helper.make_node("Softmax", ["logits"], ["probabilities"], name="softmax", axis=1),
        helper.make_node("ArgMax", ["logits"], ["label"], name="argmax", axis=1, keepdims=0),
    ]
    graph = helper.make_graph(
        nodes, "digits_mlp",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["N", 64])],
        [helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, ["N", 10]),
         helper.make_tensor_value_info("label", TensorProto.INT64, ["N"])],
        inits)
    graph.doc_string = ("MLP 64-%d-10 trained by scripts/make_digits_model.py on sklearn's 8x8 "
                        "digits; input pixels 0..16" % HIDDEN)
    model = helper.make_model(graph, producer_name="onyx-make_digits_model",
                              opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def graph_math(model, x):
    """The ONNX graph's computation in numpy, from the weights stored in the model."""
    w = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    h = np.maximum((x * w["scale"]) @ w["fc1.weight"] + w["fc1.bias"], 0)
    logits = h @ w["fc2.weight"] + w["fc2.bias"]
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True), logits.argmax(axis=1)


def npz_bytes(arrays):
    """numpy.savez with fixed timestamps so that the file is reproducible."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_STORED) as zf:
        for name, arr in arrays.items():
            member = io.BytesIO()
            np.lib.format.write_array(member, np.ascontiguousarray(arr), allow_pickle=False)
            info = zipfile.ZipInfo(name + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            zf.writestr(info, member.getvalue())
    return buf.getvalue()


def bin_bytes(x, y):
    out = [struct.pack("<I", len(x))]
    for pixels, label in zip(x, y):
        out.append(pixels.astype("<f4").tobytes())
        out.append(struct.pack("<q", int(label)))
    return b"".join(out)


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)
    print(f"wrote {path} ({len(data)} bytes)")


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.normpath(os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "models"))
    os.makedirs(outdir, exist_ok=True)

    clf, x_test, y_test = train()
    model = to_onnx(clf)

    probs, labels = graph_math(model, x_test)
    ref = clf.predict_proba(x_test / PIXEL_MAX)
    err = float(np.abs(probs - ref).max())
    if err > 1e-5 or not np.array_equal(labels, clf.predict(x_test / PIXEL_MAX)):
        sys.exit(f"ONNX graph math disagrees with sklearn (max |diff| {err:g})")
    accuracy = float((labels == y_test).mean())
    print(f"test set: {len(y_test)} images, accuracy {accuracy:.4f}, "
          f"max |onnx - sklearn| {err:.2g}")

    write(os.path.join(outdir, "digits.onnx"), model.SerializeToString())
    write(os.path.join(outdir, "digits_test.npz"),
          npz_bytes({"image": x_test.astype(np.float32), "label": y_test.astype(np.int64)}))
    write(os.path.join(outdir, "digits_test.bin"), bin_bytes(x_test, y_test))


if __name__ == "__main__":
    main()
