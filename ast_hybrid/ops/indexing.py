"""Indexing ops: ``x[key]`` / ``x[key] = v``, take, pick, gather_nd, scatter_nd, one_hot, Sequence*, diag.

``x[key]`` follows MXNet 1.9.1's NDArray: numpy's basic and advanced indexing
(float index arrays are truncated to integers, boolean masks are refused as
in MXNet's legacy mode), and a result with no dimensions has shape ``(1,)``.
Out-of-range indices raise ``IndexError`` where the indices are concrete.

``take(a, indices, axis=0, mode='clip')`` and ``pick(data, index, axis=-1,
keepdims=False, mode='clip')``: ``clip`` clamps out-of-range indices, ``wrap``
takes them modulo the axis size.  ``SequenceMask/Last/Reverse`` read the
sequence on ``axis`` (0: ``(T, N, ...)``, 1: ``(N, T, ...)``) and the lengths
from ``sequence_length`` when ``use_sequence_length=True``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ast_hybrid.ops._core import OpError, check, choice, is_int, norm_axis, op, scalar_like

__all__ = ["getitem", "setitem", "take", "pick", "choose_element_0index", "batch_take", "gather_nd", "scatter_nd",
           "one_hot", "SequenceMask", "SequenceLast", "SequenceReverse", "diag", "ravel_multi_index",
           "unravel_index", "fill_element_0index", "boolean_mask", "index_copy"]

_ARRAYS = (jax.Array, np.ndarray)


def _is_tracer(x):
    return isinstance(x, jax.core.Tracer)


def _key_entry(k):
    if isinstance(k, (list, tuple, range)):      # inside an index tuple, a tuple or range is array-like (MXNet)
        k = np.asarray(k)
    if isinstance(k, _ARRAYS):
        if k.dtype == np.bool_:
            raise IndexError("Cannot perform boolean indexing on an NDArray (MXNet's legacy mode); use "
                             "contrib.boolean_mask or where()")
        if not is_int(k.dtype):
            k = k.astype(np.int32)
        return k
    if isinstance(k, np.integer):
        return int(k)
    if isinstance(k, (int, slice, type(None), type(Ellipsis))):
        return k
    raise IndexError(f"NDArray does not support indexing with {type(k).__name__} ({k!r})")


def _normalize_key(key, shape):
    """The key as a tuple jax accepts, after checking it (bounds included) on a zero-stride numpy stand-in."""
    key = tuple(_key_entry(k) for k in (key if isinstance(key, tuple) else (key,)))
    if shape == () and key == (slice(None),):      # x[:] of a 0-d array: all of it (MXNet's x[:] = v)
        return ()
    probe = tuple(np.zeros(k.shape, k.dtype) if _is_tracer(k) else (np.asarray(k) if isinstance(k, jax.Array) else k)
                  for k in key)
    np.broadcast_to(np.zeros((), bool), shape)[probe]     # raises numpy's IndexError when out of range
    return key


@op
def getitem(data, key):
    """``data[key]`` with MXNet's rules (see the module doc)."""
    data = jnp.asarray(data)
    key = _normalize_key(key, data.shape)
    if key == () and data.ndim == 0:        # x[:] of a 0-d array (numpy-shape mode): itself, as MXNet's
        return data
    out = data[key]
    return out.reshape((1,)) if out.ndim == 0 else out


@op
def setitem(data, key, value):
    """A copy of ``data`` with ``data[key] = value`` (``value`` cast to data's dtype and broadcast)."""
    data = jnp.asarray(data)
    key = _normalize_key(key, data.shape)
    target = jax.eval_shape(lambda d: d[key], jax.ShapeDtypeStruct(data.shape, data.dtype)).shape
    if isinstance(value, (int, float, bool, np.generic)):
        value = scalar_like(value, data.dtype)
    else:
        value = jnp.asarray(value).astype(data.dtype)
        while value.ndim > len(target) and value.shape[0] == 1:    # MXNet drops leading size-1 axes
            value = value[0]
        if value.shape != target:
            value = jnp.broadcast_to(value, target)
    return data.at[key].set(value)


def _indices(indices, n, mode, opname):
    idx = jnp.asarray(indices)
    if not is_int(idx.dtype):
        idx = idx.astype(jnp.int32)
    if mode == "clip":
        return jnp.clip(idx, 0, n - 1)
    if mode == "wrap":
        return jnp.mod(idx, n)
    if not _is_tracer(idx):
        bad = np.asarray((idx < 0) | (idx >= n))
        if bad.any():
            raise OpError(f"{opname}: index {np.asarray(idx)[bad].ravel()[0]} is out of range for an axis of size {n}")
    return idx


@op
def take(a, indices, axis=0, mode="clip"):
    """Entries of ``a`` along ``axis`` at ``indices``: shape ``a.shape[:axis] + indices.shape + a.shape[axis+1:]``."""
    choice("take", "mode", mode, ("clip", "wrap", "raise"))
    a = jnp.asarray(a)
    axis = norm_axis(axis, a.ndim, "take")
    return jnp.take(a, _indices(indices, a.shape[axis], mode, "take"), axis=axis)


@op
def pick(data, index, axis=-1, keepdims=False, mode="clip"):
    """One entry per position along ``axis``: ``out[i, j] = data[i, index[i, j], j]`` (axis=1)."""
    choice("pick", "mode", mode, ("clip", "wrap"))
    data = jnp.asarray(data)
    if axis is None:
        data, axis = data.reshape(-1), 0
    axis = norm_axis(axis, data.ndim, "pick")
    idx = _indices(index, data.shape[axis], mode, "pick")
    expected = data.shape[:axis] + data.shape[axis + 1:]
    if idx.shape == expected:
        idx = jnp.expand_dims(idx, axis)
    check(idx.shape == data.shape[:axis] + (1,) + data.shape[axis + 1:], "pick",
          f"index of shape {tuple(jnp.shape(index))} does not match data {data.shape} without axis {axis}")
    out = jnp.take_along_axis(data, idx, axis=axis)
    return out if keepdims else jnp.squeeze(out, axis)


choose_element_0index = pick


@op
def batch_take(a, indices):
    """``out[i] = a[i, indices[i]]`` for a 2-D ``a`` (indices clipped)."""
    a = jnp.asarray(a)
    idx = _indices(indices, a.shape[1], "clip", "batch_take")
    return jnp.take_along_axis(a, idx.reshape(-1, 1), axis=1).reshape(idx.shape)


@op
def gather_nd(data, indices):
    """``out[y] = data[indices[0, y], ..., indices[M-1, y]]`` (M = indices.shape[0])."""
    data, idx = jnp.asarray(data), jnp.asarray(indices)
    if not is_int(idx.dtype):
        idx = idx.astype(jnp.int32)
    m = idx.shape[0]
    check(m <= data.ndim, "gather_nd", f"indices.shape[0]={m} exceeds data's {data.ndim} dimensions")
    sizes = jnp.asarray(data.shape[:m], idx.dtype).reshape((m,) + (1,) * (idx.ndim - 1))
    if not _is_tracer(idx):     # MXNet's bound check (jax would clamp)
        bad = np.argwhere(np.asarray((idx < -sizes) | (idx >= sizes)))
        if len(bad):
            from ast_hybrid.core.errors import MXNetIndexError

            axis = int(bad[0][0])
            raise MXNetIndexError(f"index {int(np.asarray(idx)[tuple(bad[0])])} is out of bounds for axis {axis} "
                                  f"with size {data.shape[axis]}")
    idx = jnp.where(idx < 0, idx + sizes, idx)
    return data[tuple(idx[i] for i in range(m))]


@op
def scatter_nd(data, indices, shape):
    """Zeros of ``shape`` with ``out[indices[0, y], ...] = data[y]`` (the inverse of gather_nd)."""
    data, idx = jnp.asarray(data), jnp.asarray(indices)
    if not is_int(idx.dtype):
        idx = idx.astype(jnp.int32)
    out = jnp.zeros(tuple(shape), data.dtype)
    return out.at[tuple(idx[i] for i in range(idx.shape[0]))].set(data)


@op
def one_hot(indices, depth, on_value=1.0, off_value=0.0, dtype="float32"):
    """``indices.shape + (depth,)``: ``on_value`` at each index, ``off_value`` elsewhere (out of range: all off)."""
    idx = jnp.asarray(indices)
    if not is_int(idx.dtype):
        idx = idx.astype(jnp.int32)
    dt = np.dtype(dtype)
    hit = idx[..., None] == jnp.arange(int(depth), dtype=idx.dtype)
    return jnp.where(hit, jnp.asarray(on_value, dt), jnp.asarray(off_value, dt))


def _seq_positions(data, sequence_length, axis, opname):
    check(axis in (0, 1), opname, f"axis must be 0 (T, N, ...) or 1 (N, T, ...), got {axis}")
    t_len, batch = (data.shape[0], data.shape[1]) if axis == 0 else (data.shape[1], data.shape[0])
    lengths = jnp.asarray(sequence_length).reshape(-1)
    check(lengths.shape[0] == batch, opname, f"sequence_length has {lengths.shape[0]} entries for a batch of {batch}")
    return t_len, batch, lengths.astype(jnp.int32)


@op(compile_arrays=("data", "sequence_length"))
def SequenceMask(data, sequence_length=None, use_sequence_length=False, value=0.0, axis=0):
    """Set the steps at or past each sequence's length to ``value``."""
    data = jnp.asarray(data)
    if not use_sequence_length:
        return data
    t_len, _, lengths = _seq_positions(data, sequence_length, axis, "SequenceMask")
    steps = jnp.arange(t_len)
    keep = steps[:, None] < lengths[None, :] if axis == 0 else lengths[:, None] > steps[None, :]
    keep = keep.reshape(keep.shape + (1,) * (data.ndim - 2))
    return jnp.where(keep, data, jnp.asarray(value, data.dtype))


@op(compile_arrays=("data", "sequence_length"))
def SequenceLast(data, sequence_length=None, use_sequence_length=False, axis=0):
    """The last valid step of each sequence: shape ``data.shape`` without ``axis``."""
    data = jnp.asarray(data)
    if not use_sequence_length:
        return jnp.take(data, data.shape[axis] - 1, axis=axis)
    _, batch, lengths = _seq_positions(data, sequence_length, axis, "SequenceLast")
    last = jnp.clip(lengths - 1, 0, None)
    if axis == 0:
        return data[last, jnp.arange(batch)]
    return data[jnp.arange(batch), last]


@op(compile_arrays=("data", "sequence_length"))
def SequenceReverse(data, sequence_length=None, use_sequence_length=False, axis=0):
    """Reverse the first ``length`` steps of each sequence (on axis 0), leaving the padding in place."""
    data = jnp.asarray(data)
    check(axis == 0, "SequenceReverse", f"only axis=0 is supported (as in MXNet), got {axis}")
    if not use_sequence_length:
        return jnp.flip(data, 0)
    t_len, batch, lengths = _seq_positions(data, sequence_length, 0, "SequenceReverse")
    steps = jnp.arange(t_len)[:, None]
    src = jnp.where(steps < lengths[None, :], lengths[None, :] - 1 - steps, steps)
    return data[src, jnp.arange(batch)[None, :]]


@op
def diag(data, k=0, axis1=0, axis2=1):
    """1-D: a matrix with ``data`` on diagonal ``k``; N-D: diagonal ``k`` of the ``axis1``/``axis2`` planes."""
    data = jnp.asarray(data)
    if data.ndim == 1:
        return jnp.diag(data, k)
    h, w = data.shape[axis1], data.shape[axis2]
    check(min(h, w - k) >= 0 if k >= 0 else min(h + k, w) >= 0, "diag",
          f"k={k} is past the last diagonal of a {h}x{w} plane")
    return jnp.diagonal(data, offset=k, axis1=axis1, axis2=axis2)


@op
def ravel_multi_index(data, shape):
    data = jnp.asarray(data)
    idx = data.astype(jnp.int32)
    strides = np.cumprod((tuple(shape)[1:] + (1,))[::-1])[::-1]
    return jnp.sum(idx * jnp.asarray(strides, jnp.int32).reshape((-1,) + (1,) * (idx.ndim - 1)), axis=0
                   ).astype(data.dtype)


@op
def unravel_index(data, shape):
    """The coordinates of flat indices in ``shape``, whose first dimension may be -1 (unbounded, as MXNet's)."""
    data = jnp.asarray(data)
    shape = tuple(int(d) for d in shape)
    if shape and shape[0] >= 0:
        return jnp.stack(jnp.unravel_index(data.astype(jnp.int32), shape)).astype(data.dtype)
    rest, coords = data.astype(jnp.int32), []
    for d in reversed(shape[1:]):
        coords.append(rest % d)
        rest = rest // d
    return jnp.stack([rest] + coords[::-1]).astype(data.dtype)


@op
def fill_element_0index(lhs, mhs, rhs):
    """``lhs`` with ``lhs[i, rhs[i]] = mhs[i]``."""
    lhs = jnp.asarray(lhs)
    idx = jnp.asarray(rhs).astype(jnp.int32)
    return lhs.at[jnp.arange(lhs.shape[0]), idx].set(jnp.asarray(mhs, lhs.dtype))


@op
def boolean_mask(data, index, axis=0):
    """The slices of ``data`` along ``axis`` where ``index`` is non-zero (eager only: the size depends on data)."""
    if _is_tracer(index) or _is_tracer(data):
        raise OpError("contrib.boolean_mask: the output size depends on the values of index, which a compiled "
                      "program cannot have; use where() or SequenceMask inside hybridized blocks")
    keep = np.nonzero(np.asarray(index).reshape(-1))[0]
    return jnp.take(jnp.asarray(data), jnp.asarray(keep, jnp.int32), axis=axis)


@op
def index_copy(old_tensor, index_vector, new_tensor):
    """``old_tensor`` with rows ``index_vector`` replaced by the rows of ``new_tensor``."""
    old = jnp.asarray(old_tensor)
    return old.at[jnp.asarray(index_vector).astype(jnp.int32)].set(jnp.asarray(new_tensor, old.dtype))
