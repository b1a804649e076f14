"""MXNet's NDArray binary format (``nd.save`` / ``save_parameters`` / ``export``), without MXNet.

Layout (MXNet 1.9.1, ``src/ndarray/ndarray.cc``, little endian)::

    uint64 0x112 (list magic)   uint64 0 (reserved)
    uint64 n                    n x NDArray:
        uint32 0xF993FAC9 (V2 magic)  int32 storage type (0 dense, 1 row_sparse, 2 csr)
        [sparse: the stored values' shape: uint32 ndim  int64 dims[ndim]]
        uint32 ndim  int64 dims[ndim]          (ndim 0: nothing follows)
        int32 dev_type  int32 dev_id           (context; 1 0 = cpu)
        int32 dtype flag                       (0 f32, 1 f64, 2 f16, 3 u8, 4 i32, 5 i8, 6 i64, 7 bool)
        [sparse: per index array (row_sparse: rows; csr: indptr, columns): int32 dtype flag, shape]
        raw C-order data                       [sparse: the stored values, then each index array]
    uint64 m (0 for a list, else n)  m x (uint64 len, utf-8 bytes)

``save`` writes a ``dict`` (names kept) or a ``list`` of dense arrays; ``load``
returns the same kind, with numpy arrays (sparse ones densified).

    >>> import numpy as np, tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), 'x.params')
    >>> save(p, {'w': np.arange(6, dtype='float32').reshape(2, 3)})
    >>> load(p)['w'].tolist()
    [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
"""

from __future__ import annotations

import os
import struct

import numpy as np

from ast_hybrid.core.errors import MXNetError

__all__ = ["ParamsFileError", "save", "load", "dumps", "loads", "dumps_one", "loads_one"]

LIST_MAGIC = 0x112
V1_MAGIC = 0xF993FAC8
V2_MAGIC = 0xF993FAC9
V3_MAGIC = 0xF993FACA
_DTYPES = {0: "float32", 1: "float64", 2: "float16", 3: "uint8", 4: "int32", 5: "int8",
           6: "int64", 7: "bool"}
_FLAGS = {np.dtype(v): k for k, v in _DTYPES.items()}


class ParamsFileError(MXNetError, ValueError):
    """A file that is not, or not entirely, an MXNet NDArray file."""


def _to_numpy(value) -> np.ndarray:
    data = getattr(value, "data", None)
    if data is not None and not isinstance(value, np.ndarray):   # an NDArray wrapper or a Parameter value
        value = data
    return np.asarray(value)


def dumps(arrays, np_shape: bool = False) -> bytes:
    """The bytes of an MXNet NDArray file holding ``arrays`` (a dict name -> array, or a list).  ``np_shape``:
    as MXNet writes under numpy shape semantics (``npx.save``): its V3 records, where a scalar has shape ``()``."""
    if isinstance(arrays, dict):
        names, values = list(arrays.keys()), list(arrays.values())
    else:
        names, values = [], list(arrays)
    out = [struct.pack("<QQQ", LIST_MAGIC, 0, len(values))]
    for name, value in zip(names or [None] * len(values), values):
        arr = np.asarray(_to_numpy(value), order="C")      # (ascontiguousarray makes a scalar 1-d)
        if arr.dtype not in _FLAGS:
            raise TypeError(f"cannot save {name or 'array'} of dtype {arr.dtype} in MXNet's format "
                            f"(supported: {', '.join(_DTYPES.values())})")
        out.append(struct.pack("<IiI", V3_MAGIC if np_shape else V2_MAGIC, 0, arr.ndim))
        out.append(struct.pack(f"<{arr.ndim}q", *arr.shape))
        if arr.ndim == 0 and not np_shape:
            # MXNet treats ndim 0 as "none"; keep the value by storing it with shape (1,)
            out[-2] = struct.pack("<IiI", V2_MAGIC, 0, 1)
            out[-1] = struct.pack("<q", 1)
        out.append(struct.pack("<iii", 1, 0, _FLAGS[arr.dtype]))
        out.append(arr.tobytes())
    out.append(struct.pack("<Q", len(names)))
    for name in names:
        raw = str(name).encode("utf-8")
        out.append(struct.pack("<Q", len(raw)) + raw)
    return b"".join(out)


def save(fname, arrays, np_shape: bool = False) -> None:
    """Write ``arrays`` (dict or list) to ``fname`` in MXNet's format (``np_shape``: see :func:`dumps`)."""
    with open(os.fspath(fname), "wb") as f:
        f.write(dumps(arrays, np_shape))


class _Reader:
    def __init__(self, buf: bytes, where: str):
        self.buf, self.pos, self.where = buf, 0, where

    def take(self, fmt: str, what: str):
        size = struct.calcsize(fmt)
        if self.pos + size > len(self.buf):
            raise ParamsFileError(f"{self.where}: file is truncated (at byte {self.pos}, reading {what})")
        vals = struct.unpack_from(fmt, self.buf, self.pos)
        self.pos += size
        return vals

    def raw(self, size: int, what: str) -> bytes:
        if self.pos + size > len(self.buf):
            raise ParamsFileError(f"{self.where}: file is truncated (at byte {self.pos}, reading {what}: "
                                  f"{size} bytes needed, {len(self.buf) - self.pos} left)")
        data = self.buf[self.pos:self.pos + size]
        self.pos += size
        return data


def _read_array(r: _Reader, index: int, np_shape: bool | None = None) -> np.ndarray | None:
    """One array record; ``np_shape`` (True/False: the caller's numpy shape semantics, as MXNet's ``nd.load``
    checks them; None: any) must match how it was saved (V3 records: under numpy shape semantics)."""
    what = f"array #{index}"
    (magic,) = r.take("<I", what + " magic")
    if np_shape is not None and magic in (V2_MAGIC, V3_MAGIC) and (magic == V3_MAGIC) != np_shape:
        raise ParamsFileError(
            f"{r.where}: {what}: ndarray was saved in np shape semantics, must be loaded in the same semantics "
            "(turn them on with `with mx.np_shape(True)` or npx.set_np())" if np_shape is False else
            f"{r.where}: {what}: ndarray was not saved in np shape semantics, but being loaded in np shape "
            "semantics (turn them off with `with mx.np_shape(False)`)")
    if magic not in (V2_MAGIC, V3_MAGIC):
        if magic == V1_MAGIC or 0 < magic <= 32:      # MXNet's LegacyLoad: V1, or V0 (the magic is the ndim)
            return _read_legacy(r, magic, what)
        raise ParamsFileError(f"{r.where}: {what} has bad magic 0x{magic:08X} (expected 0x{V2_MAGIC:08X}); "
                              "not an MXNet NDArray file, or it is corrupt")
    (stype,) = r.take("<i", what + " storage type")
    if stype not in _AUX_COUNT:
        raise ParamsFileError(f"{r.where}: {what} has unknown storage type {stype}; the file is corrupt")
    storage_shape = _read_shape(r, what + " storage shape") if _AUX_COUNT[stype] else None
    shape = _read_shape(r, what + " shape")
    if not shape and magic != V3_MAGIC:      # V2: no shape is "none"; V3 (numpy shape semantics): a scalar
        return None
    r.take("<ii", what + " context")
    dtype = _read_dtype(r, what + " dtype")
    aux = [(_read_dtype(r, f"{what} index dtype"), _read_shape(r, f"{what} index shape"))
           for _ in range(_AUX_COUNT[stype])]
    data = _read_data(r, dtype, storage_shape or shape, what + " data")
    if stype == 0:
        return data
    aux = [_read_data(r, t, s, f"{what} indices") for t, s in aux]
    return _densify(stype, data, aux, shape, f"{r.where}: {what}")


def _read_legacy(r: _Reader, magic: int, what: str) -> np.ndarray | None:
    """An array in MXNet's formats before V2 (``NDArray::LegacyLoad``): dense, its shape as V1 writes it (int64
    dimensions) or, V0, ``magic`` uint32 dimensions; then the context, the dtype flag and the data."""
    shape = _read_shape(r, what + " shape") if magic == V1_MAGIC else r.take(f"<{magic}I", what + " shape")
    if not shape:
        return None
    r.take("<ii", what + " context")
    dtype = _read_dtype(r, what + " dtype")
    return _read_data(r, dtype, tuple(shape), what + " data")


# number of index arrays per storage type: dense, row_sparse (row indices), csr (indptr, column indices)
_AUX_COUNT = {0: 0, 1: 1, 2: 2}


def _read_shape(r: _Reader, what: str) -> tuple:
    (ndim,) = r.take("<I", what)
    if ndim > 32:
        raise ParamsFileError(f"{r.where}: {what} claims {ndim} dimensions; the file is corrupt")
    return r.take(f"<{ndim}q", what)


def _read_dtype(r: _Reader, what: str) -> np.dtype:
    (flag,) = r.take("<i", what)
    if flag not in _DTYPES:
        raise ParamsFileError(f"{r.where}: {what}: unsupported dtype flag {flag}")
    return np.dtype(_DTYPES[flag])


def _read_data(r: _Reader, dtype: np.dtype, shape: tuple, what: str) -> np.ndarray:
    count = int(np.prod(shape)) if shape else 1
    return np.frombuffer(r.raw(count * dtype.itemsize, what), dtype=dtype).reshape(shape).copy()


def _densify(stype: int, data: np.ndarray, aux: list, shape: tuple, where: str) -> np.ndarray:
    """A sparse array as MXNet writes it (``row_sparse``: the stored rows and their indices; ``csr``:
    values, row pointers, column indices), as the dense array it stands for."""
    out = np.zeros(shape, data.dtype)
    try:
        if stype == 1:
            out[aux[0]] = data
        else:
            indptr, cols = aux
            rows = np.repeat(np.arange(shape[0]), np.diff(indptr))
            out[rows, cols] = data
    except (IndexError, ValueError) as exc:
        raise ParamsFileError(f"{where}: its sparse indices do not fit shape {shape} ({exc}); "
                              "the file is corrupt") from None
    return out


def loads_one(buf: bytes, where: str = "<bytes>") -> np.ndarray | None:
    """One array record (MXNet's ``MXNDArraySaveRawBytes``: what a pickled NDArray's ``'handle'`` holds)."""
    return _read_array(_Reader(bytes(buf), where), 0)


def dumps_one(value) -> bytes:
    """One array record, as :func:`loads_one` reads it (a file's first array, without the file's header)."""
    whole = dumps([value])
    return whole[24:-8]       # less the header (magic, reserved, count) and the name count


def loads(buf: bytes, where: str = "<bytes>", np_shape: bool | None = None):
    """Arrays from the bytes of an MXNet NDArray file: a dict if it has names, else a list (``np_shape``: see
    :func:`_read_array`)."""
    r = _Reader(buf, where)
    if len(buf) < 16:
        raise ParamsFileError(f"{where}: too short to be an MXNet NDArray file ({len(buf)} bytes)")
    magic, _ = r.take("<QQ", "header")
    if magic != LIST_MAGIC:
        raise ParamsFileError(f"{where}: not an MXNet NDArray file (header 0x{magic:X}, expected 0x{LIST_MAGIC:X})")
    (n,) = r.take("<Q", "array count")
    if n > len(buf):
        raise ParamsFileError(f"{where}: claims {n} arrays; the file is corrupt")
    arrays = [_read_array(r, i, np_shape) for i in range(n)]
    (m,) = r.take("<Q", "name count")
    if m == 0:
        return arrays
    if m != n:
        raise ParamsFileError(f"{where}: {n} arrays but {m} names; the file is corrupt")
    names = []
    for i in range(m):
        (length,) = r.take("<Q", f"name #{i} length")
        names.append(r.raw(length, f"name #{i}").decode("utf-8", errors="replace"))
    return dict(zip(names, arrays))


def load(fname, np_shape: bool | None = None):
    """Arrays from the MXNet NDArray file ``fname`` (dict or list of numpy arrays; ``np_shape``: see
    :func:`_read_array`)."""
    fname = os.fspath(fname)
    try:
        with open(fname, "rb") as f:
            buf = f.read()
    except OSError as exc:
        raise ParamsFileError(f"{fname}: cannot read: {exc.strerror}") from None
    return loads(buf, fname, np_shape)
