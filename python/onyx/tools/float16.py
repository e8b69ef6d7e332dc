"""float32 -> float16 / bfloat16 model conversion, with onnxconverter-common's signature.

    from onyx.tools import convert_float_to_float16
    model16 = convert_float_to_float16(onnx.load("model.onnx"), keep_io_types=True)

It runs `onyx convert` (src/convert/float16.h) in this process: float32 initializers and the
operators reading them become float16, Casts go where float32 and float16 values meet, and the
range-sensitive operators (ReduceSum, CumSum, TopK, Range, ...) stay float32 unless
op_block_list replaces that default list.
"""
import contextlib
import os
import tempfile

from .. import _onyx


@contextlib.contextmanager
def _captured_fd(fd):
    """The C code's writes to fd (1 or 2) during the block, as text after it."""
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        saved = os.dup(fd)
        os.dup2(tmp.fileno(), fd)
        box = []
        try:
            yield box
        finally:
            os.dup2(saved, fd)
            os.close(saved)
            tmp.seek(0)
            box.append(tmp.read().decode("utf-8", "replace"))


def _as_list(name, items):
    if items is None:
        return None
    if isinstance(items, str):
        items = [items]
    items = list(items)
    for x in items:
        if not isinstance(x, str) or not x or "," in x:
            raise ValueError(f"{name}: every entry must be a non-empty string without commas, got {x!r}")
    return items


def convert_float_to_float16(model, keep_io_types=False, op_block_list=None, node_block_list=None,
                             to="float16"):
    """Convert a float32 ONNX model to float16 (or to="bfloat16").

    model: an onnx.ModelProto, or the path of a model file.
    keep_io_types: graph inputs and outputs stay float32 (Casts at the boundary).
    op_block_list: operator types left in float32; None keeps onyx's default list, a list replaces it.
    node_block_list: node names left in float32.
    Returns the converted onnx.ModelProto. Raises ValueError with onyx's message for bad input
    (a model that does not load, an unknown operator type in op_block_list).
    """
    import onnx

    if to not in ("float16", "bfloat16"):
        raise ValueError(f"to must be 'float16' or 'bfloat16', got {to!r}")
    ops = _as_list("op_block_list", op_block_list)
    nodes = _as_list("node_block_list", node_block_list)
    with tempfile.TemporaryDirectory(prefix="onyx_convert_") as tmp:
        if isinstance(model, (str, bytes, os.PathLike)) and not isinstance(model, bytes):
            src = os.fspath(model)
        elif hasattr(model, "SerializeToString"):
            src = os.path.join(tmp, "in.onnx")
            large = model.ByteSize() > (1 << 30)
            onnx.save_model(model, src, save_as_external_data=large, location="in.onnx.data")
        else:
            raise TypeError("model must be an onnx.ModelProto or a path")
        dst = os.path.join(tmp, "out.onnx")
        argv = ["onyx", "convert", src, dst, "--to", to]
        if keep_io_types:
            argv.append("--keep-io-types")
        if ops is not None:
            argv += ["--op-block-list", ",".join(ops)]
        if nodes:
            argv += ["--node-block-list", ",".join(nodes)]
        with _captured_fd(2) as err, _captured_fd(1):
            rc = _onyx.cli_main(argv)
        if rc != 0:
            msg = err[0].strip() if err else ""
            raise ValueError(msg.replace("onyx: error: ", "") or f"onyx convert failed (exit status {rc})")
        return onnx.load(dst)
