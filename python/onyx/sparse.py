"""SparseTensor and OrtSparseFormat (onnxruntime's sparse API), held in numpy.

onyx computes on dense tensors: it densifies sparse initializers when it loads
a model and reads sparse_tensor-typed graph inputs as dense tensors. A
SparseTensor here keeps its values and indices as given (COO or CSR) and
becomes a dense OrtValue when fed to a session or converted with
OrtValue.ortvalue_from_sparse_tensor-style `to_dense()`."""
import enum

import numpy as np

from . import _onyx


class OrtSparseFormat(enum.IntEnum):
    ORT_SPARSE_UNDEFINED = 0
    ORT_SPARSE_COO = 1
    ORT_SPARSE_CSRC = 2
    ORT_SPARSE_BLOCK_SPARSE = 4


def _fail(msg):
    return _onyx.InvalidArgument(f"[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : {msg}")


class SparseCooView:
    def __init__(self, indices):
        self._indices = indices

    def indices(self):
        return self._indices


class SparseCsrView:
    def __init__(self, inner, outer):
        self._inner, self._outer = inner, outer

    def inner(self):
        return self._inner

    def outer(self):
        return self._outer


class SparseTensor:
    def __init__(self, fmt, dense_shape, values, indices=None, inner=None, outer=None):
        self.format = fmt
        self._shape = [int(d) for d in dense_shape]
        self._values, self._indices, self._inner, self._outer = values, indices, inner, outer

    @staticmethod
    def sparse_coo_from_numpy(dense_shape, values, coo_indices, ort_device=None):
        """COO: `coo_indices` are linear indices (1-D, one per value) or [nnz, rank] coordinates."""
        values, idx = np.asarray(values), np.asarray(coo_indices, dtype=np.int64)
        if values.ndim != 1:
            raise _fail("sparse values must be 1-D")
        if not (idx.ndim == 1 and idx.shape[0] == values.shape[0]) and \
                not (idx.ndim == 2 and idx.shape == (values.shape[0], len(dense_shape))):
            raise _fail(f"COO indices of shape {list(idx.shape)} do not fit {values.shape[0]} values of "
                        f"a tensor of rank {len(dense_shape)}")
        return SparseTensor(OrtSparseFormat.ORT_SPARSE_COO, dense_shape, values, indices=idx)

    @staticmethod
    def sparse_csr_from_numpy(dense_shape, values, inner_indices, outer_indices, ort_device=None):
        """CSR of a 2-D tensor: column indices (inner) and row starts (outer, rows + 1 entries)."""
        values = np.asarray(values)
        inner, outer = np.asarray(inner_indices, np.int64), np.asarray(outer_indices, np.int64)
        if len(dense_shape) != 2 or outer.shape != (dense_shape[0] + 1,) or inner.shape != values.shape:
            raise _fail("CSR needs a 2-D shape, one column index per value and rows + 1 row starts")
        return SparseTensor(OrtSparseFormat.ORT_SPARSE_CSRC, dense_shape, values, inner=inner, outer=outer)

    def values(self):
        return self._values

    def as_coo_view(self):
        if self.format != OrtSparseFormat.ORT_SPARSE_COO:
            raise _fail("this SparseTensor is not in COO format")
        return SparseCooView(self._indices)

    def as_csrc_view(self):
        if self.format != OrtSparseFormat.ORT_SPARSE_CSRC:
            raise _fail("this SparseTensor is not in CSR format")
        return SparseCsrView(self._inner, self._outer)

    def dense_shape(self):
        return list(self._shape)

    def data_type(self):
        return "sparse_tensor(" + _onyx.OrtValue.ortvalue_from_numpy(self._values[:0]).data_type()[7:]

    def device_name(self):
        return "cpu"

    def __array__(self, dtype=None):
        """Fed to a session (or numpy), a SparseTensor is its dense tensor."""
        d = self.to_dense()
        return d if dtype is None else d.astype(dtype)

    def to_dense(self):
        """The dense numpy array (indices are checked: out of range is an error)."""
        dense = np.zeros(int(np.prod(self._shape)), dtype=self._values.dtype)
        size = dense.size
        if self.format == OrtSparseFormat.ORT_SPARSE_COO:
            idx = self._indices
            flat = idx if idx.ndim == 1 else (np.ravel_multi_index(idx.T, self._shape)
                                              if np.all((idx >= 0) & (idx < self._shape)) else np.array([-1]))
            if flat.size and (flat.min() < 0 or flat.max() >= size):
                raise _fail("COO index out of range of the dense shape")
            dense[flat] = self._values
        else:
            rows, cols = self._shape
            starts = self._outer
            if starts[0] != 0 or np.any(np.diff(starts) < 0) or starts[-1] != self._values.size or \
                    (self._inner.size and (self._inner.min() < 0 or self._inner.max() >= cols)):
                raise _fail("CSR indices out of range")
            row_of = np.repeat(np.arange(rows), np.diff(starts))
            dense[row_of * cols + self._inner] = self._values
        return dense.reshape(self._shape)
