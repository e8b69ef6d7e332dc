"""SessionOptions, RunOptions (terminate included) and IOBinding."""
import os
import threading
import time

import numpy as np
import pytest

import onyx as ort

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from onyx.capi.onnxruntime_pybind11_state import Fail, InvalidArgument, NotImplemented


def test_session_options_defaults_and_types():
    so = ort.SessionOptions()
    assert so.graph_optimization_level == ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    assert so.intra_op_num_threads == 0 and so.inter_op_num_threads == 0
    assert so.execution_mode == ort.ExecutionMode.ORT_SEQUENTIAL
    assert so.optimized_model_filepath == "" and so.enable_profiling is False
    assert so.profile_file_prefix == "onnxruntime_profile_" and so.log_severity_level == 2
    assert so.log_verbosity_level == 0 and so.logid == ""
    assert so.enable_cpu_mem_arena and so.enable_mem_pattern and so.enable_mem_reuse
    assert so.use_deterministic_compute is False
    assert [int(v) for v in ort.GraphOptimizationLevel] == [0, 1, 2, 99]
    assert ort.ExecutionMode.ORT_PARALLEL == 1
    with pytest.raises(TypeError):
        so.intra_op_num_threads = "4"
    with pytest.raises(ValueError):
        so.intra_op_num_threads = -1
    with pytest.raises(ValueError):
        so.log_severity_level = 9
    with pytest.raises(AttributeError):
        so.no_such_option = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.execution_mode = ort.ExecutionMode.ORT_PARALLEL
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    assert so.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    with pytest.raises(RuntimeError, match="does not have configuration with key: nope"):
        so.get_session_config_entry("nope")


def test_every_option_reaches_a_session(models, tmp_path):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 2
    so.inter_op_num_threads = 2
    so.execution_mode = ort.ExecutionMode.ORT_PARALLEL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    so.optimized_model_filepath = str(tmp_path / "opt.onnx")
    so.log_severity_level = 3
    so.log_verbosity_level = 1
    so.logid = "py-test"
    so.enable_cpu_mem_arena = False
    so.enable_mem_pattern = False
    so.enable_mem_reuse = False
    so.use_deterministic_compute = True
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    sess = ort.InferenceSession(models["mlp"], so)
    assert os.path.getsize(tmp_path / "opt.onnx") > 0
    x = np.ones((3, 8), np.float32)
    ref = ort.InferenceSession(models["mlp"]).run(None, {"x": x})[0]
    np.testing.assert_allclose(sess.run(None, {"x": x})[0], ref, rtol=1e-6)
    assert sess.get_session_options() is so
    # the saved model loads again
    assert np.allclose(ort.InferenceSession(str(tmp_path / "opt.onnx")).run(None, {"x": x})[0], ref)


def test_free_dimension_overrides(models):
    so = ort.SessionOptions()
    so.add_free_dimension_override_by_name("batch", 1)
    so.add_free_dimension_override_by_denotation("DATA_CHANNEL", 2)
    sess = ort.InferenceSession(models["session_info"], so)
    assert sess.get_inputs()[0].shape == [1, "n"] and sess.get_inputs()[1].shape == [2, 3]
    with pytest.raises(InvalidArgument, match="dimension 0 must be 1"):
        sess.run(None, {"x": np.ones((2, 2), np.float32), "z": np.ones((2, 3), np.float32)})
    so.add_free_dimension_override_by_denotation("DATA_FEATURE", 4)
    with pytest.raises(InvalidArgument, match="is fixed at 3"):
        ort.InferenceSession(models["session_info"], so)
    with pytest.raises(TypeError):
        so.add_free_dimension_override_by_name("batch", "1")


def test_add_initializer(models):
    w = ort.OrtValue.ortvalue_from_numpy(np.array([3], np.float32))
    so = ort.SessionOptions()
    so.add_initializer("W", w)
    sess = ort.InferenceSession(models["session_info"], so)
    y = sess.run(["y"], {"x": np.array([[1, 2]], np.float32), "z": np.zeros((1, 3), np.float32)})[0]
    assert y.tolist() == [[3.5, 6.5]]
    bad = ort.SessionOptions()
    bad.add_initializer("W", ort.OrtValue.ortvalue_from_numpy(np.ones(2, np.float32)))
    with pytest.raises(InvalidArgument, match="added initializer 'W' is float32 \\[2\\]"):
        ort.InferenceSession(models["session_info"], bad)
    with pytest.raises(TypeError):
        so.add_initializer("W", np.ones(1, np.float32))


def custom_ops_library():
    """tests/ort_abi/custom_ops_lib.c as built by CMake (ONYX_BUILD_DIR or the repository's build/)."""
    build = os.environ.get("ONYX_BUILD_DIR") or os.path.join(REPO, "build")
    path = os.path.join(build, "tests", "libort_abi_custom_ops.so")
    assert os.path.isfile(path), f"{path} is missing: build the repository first (make)"
    return path


def test_register_custom_ops_library(tmp_path):
    """An ONNX Runtime custom-op library (C API only) runs its operators in onyx."""
    so = ort.SessionOptions()
    so.register_custom_ops_library(custom_ops_library())
    sess = ort.InferenceSession(os.path.join(REPO, "tests", "data", "ort_abi_custom.onnx"), so)
    a = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    b = np.array([[0.5, -1, 2], [0.25, 8, -3]], np.float32)
    s, r = sess.run(None, {"A": a, "B": b})
    assert s.tolist() == (a + 0.5 * b).tolist() and r.tolist() == [9.75, 20.625]
    # without the library the operator is missing; a bad path fails where it is registered
    with pytest.raises(NotImplemented, match="ScaledAdd"):
        ort.InferenceSession(os.path.join(REPO, "tests", "data", "ort_abi_custom.onnx"))
    with pytest.raises(Fail, match="cannot load"):
        ort.SessionOptions().register_custom_ops_library(str(tmp_path / "nope.so"))


def test_run_options_properties():
    ro = ort.RunOptions()
    assert ro.terminate is False and ro.logid == "" and ro.log_verbosity_level == 0
    ro.log_severity_level = 1
    ro.log_verbosity_level = 2
    ro.logid = "run-7"
    ro.only_execute_path_to_fetches = True
    assert (ro.log_severity_level, ro.log_verbosity_level, ro.logid) == (1, 2, "run-7")
    ro.add_run_config_entry("k", "v")
    assert ro.get_run_config_entry("k") == "v"
    with pytest.raises(RuntimeError, match="does not have configuration with key: x"):
        ro.get_run_config_entry("x")
    with pytest.raises(ValueError):
        ro.log_severity_level = 5


def test_terminate_stops_a_run_from_another_thread(models):
    sess = ort.InferenceSession(models["loop"])
    ro = ort.RunOptions()
    errors = []

    def run():
        try:
            sess.run(None, {"v0": np.zeros(1, np.float32)}, ro)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    t = threading.Thread(target=run)
    start = time.monotonic()
    t.start()
    time.sleep(0.3)
    ro.terminate = True
    t.join(30)
    assert not t.is_alive() and time.monotonic() - start < 30
    assert len(errors) == 1 and isinstance(errors[0], Fail), errors
    assert "terminat" in str(errors[0]).lower()
    # a terminated RunOptions stops the next run at once; cleared, the session works again
    with pytest.raises(Fail):
        sess.run(None, {"v0": np.zeros(1, np.float32)}, ro)
    neg = ort.InferenceSession(models["neg"])
    ro.terminate = False
    assert neg.run(None, {"x": np.ones(2, np.float32)}, ro)[0].tolist() == [-1, -1]
    with pytest.raises(TypeError, match="run_options must be a RunOptions"):
        neg.run(None, {"x": np.ones(2, np.float32)}, "fast")


def test_iobinding(models):
    sess = ort.InferenceSession(models["neg"])
    x = np.arange(4, dtype=np.float32)
    io = sess.io_binding()
    io.bind_cpu_input("x", x)
    io.bind_output("y")
    sess.run_with_iobinding(io)
    io.synchronize_outputs()
    assert io.copy_outputs_to_cpu()[0].tolist() == [0, -1, -2, -3]
    assert io.get_outputs()[0].numpy().tolist() == [0, -1, -2, -3]
    # a preallocated output receives the result
    out = ort.OrtValue.ortvalue_from_shape_and_type([4], np.float32)
    io.clear_binding_outputs()
    io.bind_ortvalue_output("y", out)
    io.clear_binding_inputs()
    io.bind_ortvalue_input("x", ort.OrtValue.ortvalue_from_numpy(x * 2))
    io.synchronize_inputs()
    sess.run_with_iobinding(io)
    assert out.numpy().tolist() == [0, -2, -4, -6] and io.get_outputs()[0] is out
    # raw buffers
    src, dst = np.ones(4, np.float32), np.zeros(4, np.float32)
    io = sess.io_binding()
    io.bind_input("x", "cpu", 0, np.float32, [4], src.ctypes.data)
    io.bind_output("y", "cpu", 0, np.float32, [4], dst.ctypes.data)
    sess.run_with_iobinding(io, ort.RunOptions())
    assert dst.tolist() == [-1, -1, -1, -1]
    with pytest.raises(InvalidArgument, match="CPU memory only"):
        io.bind_output("y", "cuda")
