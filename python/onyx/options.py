"""SessionOptions and the enums of onnxruntime's Python API."""
import enum
import time

from . import _onyx


class GraphOptimizationLevel(enum.IntEnum):
    """Graph optimisation levels, with onnxruntime's names and values."""
    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_ALL = 99


class ExecutionMode(enum.IntEnum):
    """ORT_PARALLEL is accepted; onyx runs nodes in order and parallelises inside each node."""
    ORT_SEQUENTIAL = 0
    ORT_PARALLEL = 1


class ExecutionOrder(enum.IntEnum):
    DEFAULT = 0
    PRIORITY_BASED = 1
    MEMORY_EFFICIENT = 2


def _typed(name, kind, default, check=None, doc=None):
    """A property that accepts only `kind` (as pybind11 does) and an optional range check."""
    attr = "_" + name

    def get(self):
        return getattr(self, attr, default)

    def set_(self, value):
        ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
        if not ok and issubclass(kind, enum.Enum) and isinstance(value, int) and not isinstance(value, bool):
            try:
                value, ok = kind(value), True
            except ValueError:
                raise ValueError(f"{name}: {value} is not a {kind.__name__}") from None
        if not ok:
            raise TypeError(f"{name}: expected {kind.__name__}, got {type(value).__name__}")
        if check:
            check(name, value)
        setattr(self, attr, value)

    return property(get, set_, doc=doc)


def _non_negative(name, value):
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")


def _severity(name, value):
    if not 0 <= value <= 4:
        raise ValueError(f"{name} must be in [0, 4] (verbose .. fatal), got {value}")


class SessionOptions:
    """Configuration of an InferenceSession (onnxruntime.SessionOptions)."""

    graph_optimization_level = _typed("graph_optimization_level", GraphOptimizationLevel,
                                      GraphOptimizationLevel.ORT_ENABLE_ALL)
    intra_op_num_threads = _typed("intra_op_num_threads", int, 0, _non_negative,
                                  "Threads inside one operator (0: one per core).")
    inter_op_num_threads = _typed("inter_op_num_threads", int, 0, _non_negative,
                                  "Accepted; onyx runs the nodes in order.")
    execution_mode = _typed("execution_mode", ExecutionMode, ExecutionMode.ORT_SEQUENTIAL)
    execution_order = _typed("execution_order", ExecutionOrder, ExecutionOrder.DEFAULT)
    optimized_model_filepath = _typed("optimized_model_filepath", str, "",
                                      doc="Save the optimised model here at session creation.")
    enable_profiling = _typed("enable_profiling", bool, False)
    profile_file_prefix = _typed("profile_file_prefix", str, "onnxruntime_profile_")
    log_severity_level = _typed("log_severity_level", int, 2, _severity)
    log_verbosity_level = _typed("log_verbosity_level", int, 0)
    logid = _typed("logid", str, "")
    enable_cpu_mem_arena = _typed("enable_cpu_mem_arena", bool, True, doc="Accepted; onyx has no arena switch.")
    enable_mem_pattern = _typed("enable_mem_pattern", bool, True,
                                doc="False disables onyx's memory plan (as does enable_mem_reuse=False).")
    enable_mem_reuse = _typed("enable_mem_reuse", bool, True)
    use_deterministic_compute = _typed("use_deterministic_compute", bool, False,
                                       doc="Accepted; onyx's kernels give the same results run to run.")

    def __init__(self):
        self._config = {}
        self._dim_overrides = {}
        self._dim_denotations = {}
        self._initializers = {}
        self._custom_op_libraries = []
        self._log_severity_set = False

    def __setattr__(self, name, value):
        if name == "log_severity_level":
            object.__setattr__(self, "_log_severity_set", True)
        if not name.startswith("_") and not hasattr(type(self), name):
            raise AttributeError(f"'SessionOptions' object has no attribute '{name}'")
        object.__setattr__(self, name, value)

    # -- configuration entries
    def add_session_config_entry(self, config_key, config_value):
        if not isinstance(config_key, str) or not isinstance(config_value, str):
            raise TypeError("add_session_config_entry takes two str")
        self._config[config_key] = config_value

    def get_session_config_entry(self, config_key):
        if config_key not in self._config:
            raise RuntimeError(f"SessionOptions does not have configuration with key: {config_key}")
        return self._config[config_key]

    # -- free dimensions and initializers
    def add_free_dimension_override_by_name(self, dim_name, dim_value):
        if not isinstance(dim_name, str) or not isinstance(dim_value, int):
            raise TypeError("add_free_dimension_override_by_name takes (str, int)")
        self._dim_overrides[dim_name] = dim_value

    def add_free_dimension_override_by_denotation(self, dim_denotation, dim_value):
        if not isinstance(dim_denotation, str) or not isinstance(dim_value, int):
            raise TypeError("add_free_dimension_override_by_denotation takes (str, int)")
        self._dim_denotations[dim_denotation] = dim_value

    def add_initializer(self, name, val):
        """Use `val` (an OrtValue) instead of the model's initializer `name`. As in
        onnxruntime the OrtValue's memory is used in place; these options keep a reference."""
        if not isinstance(name, str) or not isinstance(val, _onyx.OrtValue):
            raise TypeError("add_initializer takes (str, OrtValue)")
        if not val.is_tensor():
            raise TypeError("add_initializer: the OrtValue must hold a tensor")
        self._initializers[name] = val

    def add_external_initializers(self, names, values):
        for n, v in zip(names, values):
            self.add_initializer(n, v)

    def register_custom_ops_library(self, library_path):
        """Load an ONNX Runtime custom-op library (its RegisterCustomOps runs through onyx's
        OrtApi); sessions created with these options run its operators."""
        if not isinstance(library_path, str):
            raise TypeError("register_custom_ops_library takes a path (str)")
        _onyx.check_custom_ops_library(library_path)
        self._custom_op_libraries.append(library_path)

    # -- what the C layer gets
    def _session_kwargs(self):
        config = dict(self._config)
        if not self.enable_mem_pattern or not self.enable_mem_reuse:
            config.setdefault("session.disable_memory_plan", "1")
        profile = ""
        if self.enable_profiling:
            profile = self.profile_file_prefix + "_" + time.strftime("%Y-%m-%d_%H-%M-%S") + ".json"
        severity = self.log_severity_level if self._log_severity_set else _onyx.get_default_logger_severity()
        return dict(
            intra_op_threads=self.intra_op_num_threads,
            inter_op_threads=self.inter_op_num_threads,
            optimization_level=int(self.graph_optimization_level),
            parallel=self.execution_mode == ExecutionMode.ORT_PARALLEL,
            optimized_model_path=self.optimized_model_filepath or None,
            profile_file=profile or None,
            log_severity=severity,
            logid=self.logid or None,
            config=list(config.items()),
            dim_overrides=list(self._dim_overrides.items()),
            dim_denotations=list(self._dim_denotations.items()),
            initializers=list(self._initializers.items()),
            custom_op_libraries=list(self._custom_op_libraries),
        )
