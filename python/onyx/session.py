"""InferenceSession, IOBinding, NodeArg and ModelMetadata with onnxruntime's
behaviour; the work happens in the C extension (onyx._onyx)."""
import collections
import collections.abc
import os
import threading
import warnings

from . import _onyx
from .options import SessionOptions

OrtValue = _onyx.OrtValue
RunOptions = _onyx.RunOptions
EPFail = _onyx.EPFail

_SUFFIX = "ExecutionProvider"

# onnxruntime.get_all_providers(): every provider name onnxruntime knows.
_ALL_PROVIDERS = [
    "TensorrtExecutionProvider", "CUDAExecutionProvider", "MIGraphXExecutionProvider", "ROCMExecutionProvider",
    "OpenVINOExecutionProvider", "DnnlExecutionProvider", "VitisAIExecutionProvider", "QNNExecutionProvider",
    "NnapiExecutionProvider", "VSINPUExecutionProvider", "JsExecutionProvider", "CoreMLExecutionProvider",
    "ArmNNExecutionProvider", "ACLExecutionProvider", "DmlExecutionProvider", "RknpuExecutionProvider",
    "WebNNExecutionProvider", "WebGpuExecutionProvider", "XnnpackExecutionProvider", "CANNExecutionProvider",
    "AzureExecutionProvider", "CPUExecutionProvider",
]


def _ort_name(onyx_name):
    """onyx's provider name ("cpu") in onnxruntime's spelling ("CPUExecutionProvider")."""
    for p in _ALL_PROVIDERS:
        if p[: -len(_SUFFIX)].lower() == onyx_name.lower():
            return p
    return onyx_name if onyx_name.endswith(_SUFFIX) else onyx_name.upper() + _SUFFIX


def get_all_providers():
    return list(_ALL_PROVIDERS)


def get_available_providers():
    """The providers of this build, in onnxruntime's order of precedence (CPU last)."""
    names = [_ort_name(n) for n in _onyx.available_providers()]
    order = {p: i for i, p in enumerate(_ALL_PROVIDERS)}
    return sorted(names, key=lambda p: order.get(p, -1))


def _normalize_providers(providers, provider_options, available):
    """onnxruntime's check_and_normalize_provider_args: names and option dicts,
    a warning for each provider this build lacks."""
    if providers is None:
        return [], []
    chosen = collections.OrderedDict()

    def add(name, options):
        if name not in available:
            warnings.warn(f"Specified provider '{name}' is not in available provider names."
                          f"Available providers: '{', '.join(available)}'")
        if name in chosen:
            warnings.warn(f"Duplicate provider '{name}' encountered, ignoring.")
            return
        chosen[name] = {str(k): str(v) for k, v in options.items()}

    if not isinstance(providers, collections.abc.Sequence) or isinstance(providers, str):
        raise ValueError("'providers' should be a sequence.")
    if provider_options is not None:
        if not isinstance(provider_options, collections.abc.Sequence):
            raise ValueError("'provider_options' should be a sequence.")
        if len(providers) != len(provider_options):
            raise ValueError("'providers' and 'provider_options' should be the same length if both are given.")
        if not all(isinstance(p, str) for p in providers):
            raise ValueError("Only string values for 'providers' are supported if 'provider_options' is given.")
        if not all(isinstance(o, dict) for o in provider_options):
            raise ValueError("'provider_options' values must be dicts.")
        for name, options in zip(providers, provider_options):
            add(name, options)
    else:
        for p in providers:
            if isinstance(p, str):
                add(p, {})
            elif isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str) and isinstance(p[1], dict):
                add(p[0], p[1])
            else:
                raise ValueError("'providers' values must be either strings or (string, dict) tuples.")
    return list(chosen.keys()), list(chosen.values())


class NodeArg:
    """A graph input or output: name, type ("tensor(float)") and shape (ints,
    symbolic names, or None for an unknown dimension)."""
    __slots__ = ("name", "type", "shape")

    def __init__(self, name, type_, shape):
        self.name, self.type, self.shape = name, type_, shape

    def __str__(self):
        return f"NodeArg(name='{self.name}', type='{self.type}', shape={self.shape})"

    __repr__ = __str__


class ModelMetadata:
    __slots__ = ("producer_name", "producer_version", "graph_name", "graph_description", "domain",
                 "description", "version", "custom_metadata_map")

    def __init__(self, d):
        for k in self.__slots__:
            setattr(self, k, d[k])


class Session:
    """The part of onnxruntime's Session that does not depend on how the model was given."""

    def __init__(self):
        self._sess = None
        self._enable_fallback = True

    def get_session_options(self):
        return self._sess_options

    def get_inputs(self):
        return self._inputs_meta

    def get_outputs(self):
        return self._outputs_meta

    def get_overridable_initializers(self):
        return self._overridable_initializers

    def get_modelmeta(self):
        return self._model_meta

    def get_providers(self):
        return list(self._providers)

    def get_provider_options(self):
        return {p: dict(o) for p, o in self._provider_options.items()}

    def set_providers(self, providers=None, provider_options=None):
        """Re-create the session with these providers."""
        self._reset_session(providers, provider_options)

    def disable_fallback(self):
        self._enable_fallback = False

    def enable_fallback(self):
        self._enable_fallback = True

    def run(self, output_names, input_feed, run_options=None):
        """run([output names] or None, {input name: value}) -> list of outputs."""
        try:
            return self._sess.run(output_names, input_feed, run_options)
        except EPFail as err:
            if not self._enable_fallback:
                raise
            print(f"EP Error: {err!s} using {self._providers}")
            print(f"Falling back to {self._fallback_providers} and retrying.")
            self.set_providers(self._fallback_providers)
            self.disable_fallback()
            return self._sess.run(output_names, input_feed, run_options)

    def run_async(self, output_names, input_feed, callback, user_data, run_options=None):
        """Run on another thread; then callback(outputs, user_data, error string ("" on success))."""
        def work():
            try:
                outputs, err = self.run(output_names, input_feed, run_options), ""
            except Exception as e:  # noqa: BLE001 - reported to the callback, as onnxruntime does
                outputs, err = [], str(e)
            callback(outputs, user_data, err)

        threading.Thread(target=work, daemon=True).start()

    def run_with_ort_values(self, output_names, input_dict_ort_values, run_options=None):
        """Like run, with OrtValues in and out (no conversion to numpy)."""
        return self._sess.run(output_names, input_dict_ort_values, run_options, True)

    def end_profiling(self):
        """Write the profile (SessionOptions.enable_profiling) and return its file name."""
        return self._sess.end_profiling()

    def io_binding(self):
        return IOBinding(self)

    def run_with_iobinding(self, iobinding, run_options=None):
        iobinding._run(run_options)


class InferenceSession(Session):
    """onnxruntime.InferenceSession over onyx."""

    def __init__(self, path_or_bytes, sess_options=None, providers=None, provider_options=None, **kwargs):
        super().__init__()
        if isinstance(path_or_bytes, (str, os.PathLike)):
            self._model_path, self._model_bytes = os.fspath(path_or_bytes), None
        elif isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
            self._model_path, self._model_bytes = None, bytes(path_or_bytes)
        else:
            raise TypeError(f"Unable to load from type '{type(path_or_bytes)}'")
        if sess_options is not None and not isinstance(sess_options, SessionOptions):
            raise TypeError(f"sess_options must be a SessionOptions, got {type(sess_options).__name__}")
        self._sess_options = sess_options
        self._sess_options_initial = sess_options
        self._disabled_optimizers = kwargs.get("disabled_optimizers")
        try:
            self._create_inference_session(providers, provider_options)
        except (ValueError, EPFail) as e:
            if not (self._enable_fallback and self._asked_beyond_cpu):
                raise
            print("*************** EP Error ***************")
            print(f"EP Error {e} when using {providers}")
            print(f"Falling back to {self._fallback_providers} and retrying.")
            print("****************************************")
            self._create_inference_session(self._fallback_providers, None)
            self.disable_fallback()

    def _create_inference_session(self, providers, provider_options):
        available = get_available_providers()
        self._fallback_providers = ["CPUExecutionProvider"]
        self._asked_beyond_cpu = False
        if not providers and len([p for p in available if p != "CPUExecutionProvider"]) > 0:
            self.disable_fallback()
            raise ValueError(
                f"This ORT build has {available} enabled. Since ORT 1.9, you are required to explicitly set the "
                f"providers parameter when instantiating InferenceSession. For example, "
                f"onnxruntime.InferenceSession(..., providers={available}, ...)")
        names, options = _normalize_providers(providers, provider_options, available)
        used = [(n, o) for n, o in zip(names, options) if n in available]
        self._asked_beyond_cpu = any(n != "CPUExecutionProvider" for n, _ in used)
        if not any(n == "CPUExecutionProvider" for n, _ in used):
            used.append(("CPUExecutionProvider", {}))
        opts = self._sess_options if self._sess_options is not None else SessionOptions()
        kw = opts._session_kwargs()
        if self._disabled_optimizers:
            kw["config"].append(("session.disabled_optimizers", ",".join(sorted(self._disabled_optimizers))))
        model = self._model_path if self._model_path is not None else self._model_bytes
        # onyx keeps its CPU provider last whatever the list says
        onyx_order = [p for p in used if p[0] != "CPUExecutionProvider"] + [p for p in used
                                                                             if p[0] == "CPUExecutionProvider"]
        sess = _onyx.Session(model, providers=[(n, o) for n, o in onyx_order], **kw)
        self._sess = sess
        self._sess_options = opts
        self._inputs_meta = [NodeArg(*a) for a in sess.inputs_meta()]
        self._outputs_meta = [NodeArg(*a) for a in sess.outputs_meta()]
        self._overridable_initializers = [NodeArg(*a) for a in sess.overridable_meta()]
        self._model_meta = ModelMetadata(sess.model_meta())
        self._providers = [n for n, _ in onyx_order]
        self._provider_options = collections.OrderedDict(onyx_order)

    def _reset_session(self, providers, provider_options):
        self._sess = None
        self._sess_options = self._sess_options_initial
        self._create_inference_session(providers, provider_options)


class IOBinding:
    """Inputs and outputs bound ahead of a run (onnxruntime.IOBinding). onyx
    holds values on the CPU; an output bound to a preallocated OrtValue or
    buffer receives a copy of the result."""

    def __init__(self, session):
        self._session = session
        self._inputs = collections.OrderedDict()
        self._outputs = collections.OrderedDict()  # name -> preallocated OrtValue or None
        self._results = []

    @staticmethod
    def _check_device(device_type):
        if str(device_type).lower() != "cpu":
            raise _onyx.InvalidArgument(f"[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : device_type '{device_type}': "
                                        f"this build of onyx binds CPU memory only ('cpu')")

    def bind_cpu_input(self, name, arr_on_cpu):
        self._inputs[name] = OrtValue.ortvalue_from_numpy(arr_on_cpu)

    def bind_input(self, name, device_type, device_id, element_type, shape, buffer_ptr):
        self._check_device(device_type)
        self._inputs[name] = OrtValue._from_buffer(int(buffer_ptr), list(shape), element_type)

    def bind_ortvalue_input(self, name, ortvalue):
        if not isinstance(ortvalue, OrtValue):
            raise TypeError("bind_ortvalue_input takes an OrtValue")
        self._inputs[name] = ortvalue

    def synchronize_inputs(self):
        """CPU memory: nothing to wait for."""

    def bind_output(self, name, device_type="cpu", device_id=0, element_type=None, shape=None, buffer_ptr=None):
        self._check_device(device_type)
        if buffer_ptr is not None:
            if element_type is None or shape is None:
                raise ValueError("bind_output with a buffer_ptr needs element_type and shape")
            self._outputs[name] = OrtValue._from_buffer(int(buffer_ptr), list(shape), element_type)
        else:
            self._outputs[name] = None

    def bind_ortvalue_output(self, name, ortvalue):
        if not isinstance(ortvalue, OrtValue):
            raise TypeError("bind_ortvalue_output takes an OrtValue")
        self._outputs[name] = ortvalue

    def synchronize_outputs(self):
        """CPU memory: nothing to wait for."""

    def get_outputs(self):
        return list(self._results)

    get_outputs_as_ortvaluevector = get_outputs

    def copy_outputs_to_cpu(self):
        return [v.numpy().copy() if v.is_tensor() else v._to_python() for v in self._results]

    def clear_binding_inputs(self):
        self._inputs.clear()

    def clear_binding_outputs(self):
        self._outputs.clear()
        self._results = []

    def _run(self, run_options):
        names = list(self._outputs) or None
        results = self._session._sess.run(names, dict(self._inputs), run_options, True)
        for i, name in enumerate(list(self._outputs)):
            target = self._outputs[name]
            if target is not None:
                target.update_inplace(results[i])
                results[i] = target
        self._results = results
