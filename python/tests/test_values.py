"""Values: every numpy dtype, strings, sequences, maps, optionals, zero-copy, OrtValue."""
import numpy as np
import pytest

import onyx as ort
from onyx.capi.onnxruntime_pybind11_state import InvalidArgument


def sample(t, shape=(2, 3)):
    n = int(np.prod(shape))
    if t == "string":
        return np.array([f"s{i}é" for i in range(n)], dtype=object).reshape(shape)
    if t == "bool":
        return (np.arange(n) % 2 == 0).reshape(shape)
    return (np.arange(n) * 3 - 4).astype(t).reshape(shape) if t.startswith("int") or t.startswith("float") \
        else np.arange(n).astype(t).reshape(shape)


def test_every_dtype_round_trips(models):
    sess = ort.InferenceSession(models["identities"])
    feed = {f"x_{t}": sample(t) for t in models["identity_types"]}
    outs = sess.run(None, feed)
    for t, y in zip(models["identity_types"], outs):
        x = feed[f"x_{t}"]
        if t == "string":
            assert y.dtype == object and y.tolist() == x.tolist()
        else:
            assert y.dtype == x.dtype, t
            assert np.array_equal(y, x), t


def test_unicode_and_bytes_string_inputs(models):
    sess = ort.InferenceSession(models["identities"])
    feed = {f"x_{t}": sample(t) for t in models["identity_types"]}
    feed["x_string"] = np.array([["a", "bé"], ["c", ""]])  # numpy unicode, not object
    y = sess.run(["y_string"], feed)[0]
    assert y.tolist() == [["a", "bé"], ["c", ""]]
    feed["x_string"] = np.array([b"x", b"yz"])
    assert sess.run(["y_string"], feed)[0].tolist() == ["x", "yz"]
    feed["x_string"] = np.array([1, "a"], dtype=object)
    with pytest.raises(InvalidArgument, match="element 0 is a int, not a str"):
        sess.run(["y_string"], feed)


def test_outputs_are_not_copied(models):
    sess = ort.InferenceSession(models["neg"])
    y = sess.run(None, {"x": np.arange(6, dtype=np.float32)})[0]
    assert not y.flags.owndata and type(y.base).__name__ == "PyCapsule"
    assert y.flags.writeable and y.flags.c_contiguous and y.ctypes.data % 64 == 0
    assert y.tolist() == [0, -1, -2, -3, -4, -5]
    del sess  # the output keeps its memory
    assert y.sum() == -15


def test_contiguous_inputs_read_in_place_others_copied():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    v = ort.OrtValue.ortvalue_from_numpy(x)
    assert v.data_ptr() == x.ctypes.data  # no copy
    x[0, 0] = 42
    assert v.numpy()[0, 0] == 42
    t = x.T  # not contiguous: copied
    vt = ort.OrtValue.ortvalue_from_numpy(t)
    assert vt.data_ptr() != t.ctypes.data and np.array_equal(vt.numpy(), t)
    big = np.arange(4, dtype=">f4")  # foreign byte order: converted
    assert np.array_equal(ort.OrtValue.ortvalue_from_numpy(big).numpy(), big)


def test_non_contiguous_inputs_give_right_results(models):
    sess = ort.InferenceSession(models["neg"])
    x = np.arange(20, dtype=np.float32).reshape(4, 5)
    for view in (x[:, ::2], x.T, x[::-1], np.asfortranarray(x)):
        assert np.array_equal(sess.run(None, {"x": view})[0], -view)
    assert sess.run(None, {"x": np.float32(3)})[0].tolist() == -3  # a numpy scalar
    assert sess.run(None, {"x": np.zeros((0, 3), np.float32)})[0].shape == (0, 3)


def test_sequences(models):
    sess = ort.InferenceSession(models["seq"])
    parts = [np.ones((2, 3), np.float32), np.full((1, 3), 2, np.float32)]
    n, c, out_parts = sess.run(None, {"s": parts})
    assert n == 2 and c.shape == (3, 3)
    assert isinstance(out_parts, list) and len(out_parts) == 3
    assert all(p.shape == (1, 3) for p in out_parts) and out_parts[2].tolist() == [[2, 2, 2]]
    with pytest.raises(InvalidArgument, match="item 1 is a tensor of int64 but item 0 is a tensor of float32"):
        sess.run(None, {"s": [np.ones((1, 3), np.float32), np.ones((1, 3), np.int64)]})


def test_maps(models):
    sess = ort.InferenceSession(models["dictvectorizer"])
    name = sess.get_inputs()[0].name
    out = sess.run(None, {name: {"a": 1.0, "c": 3.0}})
    assert out[0].dtype == np.float32 and out[0].ndim == 2
    with pytest.raises(InvalidArgument, match="is a map"):
        sess.run(None, {name: [1.0]})


def test_optionals(models):
    sess = ort.InferenceSession(models["optional"])
    has, o2 = sess.run(None, {"o": np.ones(3, np.float32)})
    assert has == True and o2.tolist() == [1, 1, 1]  # noqa: E712
    has, o2 = sess.run(None, {"o": None})
    assert has == False and o2 is None  # noqa: E712


def test_ortvalue_api():
    x = np.arange(6, dtype=np.int64).reshape(2, 3)
    v = ort.OrtValue.ortvalue_from_numpy(x)
    assert v.shape() == [2, 3] and v.data_type() == "tensor(int64)" and v.element_type() == 7
    assert v.device_name() == "cpu" and v.is_tensor() and v.has_value() and not v.is_tensor_sequence()
    assert not v.is_sparse_tensor()
    z = ort.OrtValue.ortvalue_from_shape_and_type([3, 2], np.float16)
    assert z.data_type() == "tensor(float16)" and z.numpy().tolist() == [[0, 0]] * 3
    z.update_inplace(np.ones((3, 2), np.float16))
    assert z.numpy().sum() == 6
    with pytest.raises(InvalidArgument, match="update_inplace"):
        z.update_inplace(np.ones(5, np.float16))
    s = ort.OrtValue.ortvalue_from_numpy(np.array(["a", "b"], dtype=object))
    assert s.data_type() == "tensor(string)" and s.numpy().tolist() == ["a", "b"]
    with pytest.raises(InvalidArgument, match="CPU only"):
        ort.OrtValue.ortvalue_from_numpy(x, "cuda", 0)


def test_run_with_ort_values(models):
    sess = ort.InferenceSession(models["neg"])
    x = ort.OrtValue.ortvalue_from_numpy(np.arange(4, dtype=np.float32))
    (y,) = sess.run_with_ort_values(["y"], {"x": x})
    assert isinstance(y, ort.OrtValue) and y.numpy().tolist() == [0, -1, -2, -3]
    # OrtValues are accepted by run as well
    assert sess.run(None, {"x": x})[0].tolist() == [0, -1, -2, -3]


def test_sparse_tensors(models):
    coo = ort.SparseTensor.sparse_coo_from_numpy([2, 3], np.array([1, 2], np.float32), np.array([1, 5]))
    assert coo.format == ort.OrtSparseFormat.ORT_SPARSE_COO and coo.dense_shape() == [2, 3]
    assert coo.data_type() == "sparse_tensor(float)" and coo.as_coo_view().indices().tolist() == [1, 5]
    assert coo.to_dense().tolist() == [[0, 1, 0], [0, 0, 2]]
    csr = ort.SparseTensor.sparse_csr_from_numpy([2, 3], np.array([4, 5], np.float32), np.array([2, 0]),
                                                 np.array([0, 1, 2]))
    assert csr.as_csrc_view().outer().tolist() == [0, 1, 2]
    assert csr.to_dense().tolist() == [[0, 0, 4], [5, 0, 0]]
    sess = ort.InferenceSession(models["neg"])  # fed to a session: its dense tensor
    assert sess.run(None, {"x": csr})[0].tolist() == [[0, 0, -4], [-5, 0, 0]]
    bad = ort.SparseTensor.sparse_coo_from_numpy([2, 2], np.array([1], np.float32), np.array([9]))
    with pytest.raises(InvalidArgument, match="out of range"):
        bad.to_dense()
    with pytest.raises(InvalidArgument, match="not in CSR"):
        coo.as_csrc_view()


def test_run_async(models):
    import threading
    sess = ort.InferenceSession(models["neg"])
    done, got = threading.Event(), []

    def callback(outputs, user_data, err):
        got.append((outputs, user_data, err))
        done.set()

    sess.run_async(None, {"x": np.ones(3, np.float32)}, callback, "token")
    assert done.wait(30)
    outputs, user_data, err = got[0]
    assert err == "" and user_data == "token" and outputs[0].tolist() == [-1, -1, -1]
    done.clear()
    sess.run_async(None, {"x": np.ones(3)}, callback, None)  # float64: an error for the callback
    assert done.wait(30) and "expected element type float32" in got[1][2]
