"""Shape ops: reshape (MXNet's special codes), transpose, concat/stack/split, slicing, tiling, broadcasting, pad.

``reshape(data, shape, reverse=False)`` reads ``shape`` left to right against
the input's dimensions (right to left with ``reverse=True``):

- ``0`` copies the next input dimension, ``-1`` is inferred from the rest,
- ``-2`` copies all remaining input dimensions,
- ``-3`` merges the next two input dimensions into one,
- ``-4, a, b`` splits the next input dimension into ``a x b`` (one may be -1).

    >>> from ast_hybrid import nd
    >>> nd.reshape(nd.zeros((2, 3, 4)), shape=(-4, 1, 2, -3)).shape
    (1, 2, 12)
"""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np

from ast_hybrid.ops._core import OpError, as_tuple, check, choice, norm_axis, op

__all__ = ["reshape", "Reshape", "reshape_like", "transpose", "expand_dims", "squeeze", "flatten", "Flatten",
           "concat", "Concat", "concatenate", "stack", "split", "SliceChannel", "split_v2", "slice", "slice_axis",
           "slice_like", "tile", "repeat", "flip", "reverse", "swapaxes", "SwapAxis", "moveaxis", "broadcast_to",
           "broadcast_like", "broadcast_axis", "broadcast_axes", "pad", "Pad", "shape_array", "size_array",
           "depth_to_space", "space_to_depth", "infer_reshape"]

_builtin_slice = slice


def infer_reshape(shape, dshape, reverse=False):
    """The output shape of MXNet's ``reshape(shape=..., reverse=...)`` for an input of shape ``dshape``."""
    spec, src = [int(s) for s in shape], [int(d) for d in dshape]
    if reverse:
        spec, src = spec[::-1], src[::-1]
    out, i, j, infer = [], 0, 0, -1

    def fail(msg):
        raise OpError(f"reshape: cannot reshape {tuple(dshape)} with shape={tuple(shape)}"
                      f"{' (reverse=True)' if reverse else ''}: {msg}")

    while i < len(spec):
        d = spec[i]
        if d == 0:
            if j >= len(src):
                fail("0 copies an input dimension that does not exist")
            out.append(src[j])
            j += 1
        elif d == -1:
            if infer >= 0:
                fail("only one dimension can be -1")
            infer = len(out)
            out.append(1)
            j += 1
        elif d == -2:
            out.extend(src[j:])
            j = len(src)
        elif d == -3:
            if j + 1 >= len(src):
                fail("-3 needs two input dimensions to merge")
            out.append(src[j] * src[j + 1])
            j += 2
        elif d == -4:
            if i + 2 >= len(spec) or j >= len(src):
                fail("-4 must be followed by two values and split an existing input dimension")
            d0, d1, d2 = src[j], spec[i + 1], spec[i + 2]
            j += 1
            i += 2
            if d1 == -1 and d2 == -1:
                fail("split dims cannot both be -1")
            d1 = d0 // d2 if d1 == -1 else d1
            d2 = d0 // d1 if d2 == -1 else d2
            if d1 * d2 != d0:
                fail(f"split dims {d1}, {d2} do not divide the input dimension {d0}")
            out.extend([d1, d2])
        elif d > 0:
            out.append(d)
            j += 1
        else:
            fail(f"{d} is not a valid shape entry (positive, 0, -1, -2, -3 or -4)")
        i += 1
    size = math.prod(src)
    if infer >= 0:
        rest = math.prod(out)
        if rest == 0 or size % rest:
            fail(f"the -1 dimension cannot be inferred ({size} elements)")
        out[infer] = size // rest
    if reverse:
        out = out[::-1]
    if math.prod(out) != size:
        raise OpError(f"reshape: cannot reshape array of size {size} (shape {tuple(dshape)}) into shape "
                      f"{tuple(out)} (from shape={tuple(shape)})")
    return tuple(out)


@op(compile_arrays=("data",))
def reshape(data, shape=None, reverse=False, target_shape=None, keep_highest=False):
    """MXNet's reshape with the special codes 0/-1/-2/-3/-4 and ``reverse`` (see the module doc)."""
    data = jnp.asarray(data)
    shape = shape if shape is not None else target_shape
    check(shape is not None, "reshape", "shape is required")
    return data.reshape(infer_reshape(as_tuple(shape), data.shape, reverse))


Reshape = reshape


@op
def reshape_like(lhs, rhs, lhs_begin=None, lhs_end=None, rhs_begin=None, rhs_end=None):
    """``lhs`` reshaped to ``rhs``'s shape, or its dims ``[lhs_begin, lhs_end)`` to rhs's ``[rhs_begin, rhs_end)``."""
    lhs, rhs = jnp.asarray(lhs), jnp.asarray(rhs)

    def span(begin, end, n):
        b = 0 if begin is None else (begin + n if begin < 0 else begin)
        e = n if end is None else (end + n if end < 0 else end)
        return b, e

    lb, le = span(lhs_begin, lhs_end, lhs.ndim)
    rb, re = span(rhs_begin, rhs_end, rhs.ndim)
    new = lhs.shape[:lb] + rhs.shape[rb:re] + lhs.shape[le:]
    check(math.prod(new) == lhs.size, "reshape_like",
          f"cannot reshape {lhs.shape} to {new} (from rhs shape {rhs.shape})")
    return lhs.reshape(new)


@op(compile_arrays=("data",))
def transpose(data, axes=()):
    """Permute the axes (reversed when ``axes`` is empty)."""
    data = jnp.asarray(data)
    axes = as_tuple(axes)
    if not axes:
        return jnp.transpose(data)
    check(sorted(axes) == list(range(data.ndim)), "transpose",
          f"axes={axes} must be a permutation of 0..{data.ndim - 1} (negative axes are not accepted)")
    return jnp.transpose(data, axes)


@op(compile_arrays=("data",))
def expand_dims(data, axis):
    data = jnp.asarray(data)
    axis = int(axis)
    check(-data.ndim - 1 <= axis <= data.ndim, "expand_dims",
          f"axis={axis} is out of range for an input with {data.ndim} dimensions")
    return jnp.expand_dims(data, axis % (data.ndim + 1))


@op
def squeeze(data, axis=None):
    """Drop size-1 axes (all of them, or ``axis``); squeezing every axis leaves shape ``(1,)``."""
    data = jnp.asarray(data)
    if axis is None:
        axes = tuple(i for i, d in enumerate(data.shape) if d == 1)
    else:
        axes = tuple(norm_axis(a, data.ndim, "squeeze") for a in as_tuple(axis))
        for a in axes:
            check(data.shape[a] == 1, "squeeze", f"cannot select an axis to squeeze out which has size "
                  f"{data.shape[a]} not equal to one (axis {a} of shape {data.shape})")
    out = jnp.squeeze(data, axes)
    return out.reshape((1,)) if out.ndim == 0 else out


@op
def flatten(data):
    """``(d0, d1 * d2 * ...)``: keep the first axis, merge the rest."""
    data = jnp.asarray(data)
    if data.ndim == 0:
        return data.reshape((1, 1))
    return data.reshape((data.shape[0], -1) if data.shape[0] else (0, math.prod(data.shape[1:])))


Flatten = flatten


def _same_dtypes(opname, arrays):
    dts = {np.dtype(a.dtype).name for a in arrays}
    check(len(dts) == 1, opname, f"all inputs must have the same dtype, got {sorted(dts)}")


@op
def concat(*data, dim=1, num_args=None):
    """Join arrays along ``dim`` (MXNet's ``concat`` / ``Concat``)."""
    check(len(data) > 0, "concat", "needs at least one input")
    arrays = [jnp.asarray(d) for d in data]
    _same_dtypes("concat", arrays)
    dim = norm_axis(dim, arrays[0].ndim, "concat", "dim")
    for a in arrays[1:]:
        if a.ndim != arrays[0].ndim or any(x != y for i, (x, y) in enumerate(zip(a.shape, arrays[0].shape))
                                           if i != dim):
            raise OpError(f"concat: shapes {[tuple(x.shape) for x in arrays]} differ outside dim={dim}")
    return jnp.concatenate(arrays, axis=dim)


Concat = concat


@op
def concatenate(arrays, axis=0, always_copy=True):
    return jnp.concatenate([jnp.asarray(a) for a in arrays], axis=axis)


@op
def stack(*data, axis=0, num_args=None):
    check(len(data) > 0, "stack", "needs at least one input")
    arrays = [jnp.asarray(d) for d in data]
    _same_dtypes("stack", arrays)
    shapes = {tuple(a.shape) for a in arrays}
    check(len(shapes) == 1, "stack", f"all inputs must have the same shape, got {sorted(shapes)}")
    return jnp.stack(arrays, axis=norm_axis(axis, arrays[0].ndim + 1, "stack"))


@op
def split(data, num_outputs, axis=1, squeeze_axis=False):
    """``num_outputs`` equal parts along ``axis``: a list (one part: the array itself), MXNet's SliceChannel."""
    data = jnp.asarray(data)
    axis = norm_axis(axis, data.ndim, "split")
    n = data.shape[axis]
    check(num_outputs > 0 and n % num_outputs == 0, "split",
          f"num_outputs={num_outputs} must evenly divide the size {n} of axis {axis}")
    check(not squeeze_axis or n == num_outputs, "split",
          f"squeeze_axis=True needs num_outputs ({num_outputs}) equal to the size {n} of axis {axis}")
    parts = jnp.split(data, num_outputs, axis=axis)
    if squeeze_axis:
        parts = [jnp.squeeze(p, axis) for p in parts]
    return parts[0] if num_outputs == 1 else parts


SliceChannel = split


@op
def split_v2(ary, indices_or_sections, axis=0, squeeze_axis=False):
    """numpy-style split: a number of equal sections, or the indices to split at; always a list."""
    ary = jnp.asarray(ary)
    axis = norm_axis(axis, ary.ndim, "split_v2")
    if isinstance(indices_or_sections, int):
        check(ary.shape[axis] % indices_or_sections == 0, "split_v2",
              f"{indices_or_sections} sections do not divide the size {ary.shape[axis]} of axis {axis}")
    else:
        indices_or_sections = list(as_tuple(indices_or_sections))
    parts = jnp.split(ary, indices_or_sections, axis=axis)
    if squeeze_axis:
        parts = [jnp.squeeze(p, axis) for p in parts]
    return list(parts) if len(parts) > 1 else parts[0]     # one output: an array, as MXNet's


@op
def slice(data, begin, end, step=()):
    """``data[begin[0]:end[0]:step[0], ...]`` over the first ``len(begin)`` axes (None entries allowed)."""
    data = jnp.asarray(data)
    begin, end = tuple(begin), tuple(end)
    step = tuple(step) if step is not None else ()
    check(len(begin) == len(end) and len(begin) <= data.ndim, "slice",
          f"begin={begin} and end={end} must have the same length, at most the {data.ndim} input dimensions")
    step = step + (None,) * (len(begin) - len(step))
    for s in step:
        check(s != 0, "slice", "step cannot be 0")
    return data[tuple(_builtin_slice(b, e, s) for b, e, s in zip(begin, end, step))]   # Python's clamping rules


@op
def slice_axis(data, axis, begin, end=None):
    """``data[..., begin:end, ...]`` on one ``axis``; ``end=None`` runs to the end."""
    data = jnp.asarray(data)
    axis = norm_axis(axis, data.ndim, "slice_axis")
    n = data.shape[axis]
    b = begin + n if begin < 0 else begin
    e = n if end is None else (end + n if end < 0 else end)
    check(0 <= b < e <= n, "slice_axis", f"begin={begin}, end={end} is not a valid range of axis {axis} (size {n})")
    key = [_builtin_slice(None)] * data.ndim
    key[axis] = _builtin_slice(b, e)
    return data[tuple(key)]


@op
def slice_like(data, shape_like, axes=()):
    """The leading part of ``data`` with ``shape_like``'s sizes on ``axes`` (all axes when empty)."""
    data, like = jnp.asarray(data), jnp.asarray(shape_like)
    axes = as_tuple(axes)
    if not axes:
        check(data.ndim == like.ndim, "slice_like", f"shape_like must have {data.ndim} dimensions, got {like.ndim}")
        axes = tuple(range(data.ndim))
    key = [_builtin_slice(None)] * data.ndim
    for a in axes:
        a = norm_axis(a, data.ndim, "slice_like", "axes")
        check(like.shape[a] <= data.shape[a], "slice_like",
              f"shape_like's axis {a} ({like.shape[a]}) is longer than data's ({data.shape[a]})")
        key[a] = _builtin_slice(0, like.shape[a])
    return data[tuple(key)]


@op
def tile(data, reps):
    reps = as_tuple(reps)
    check(all(r > 0 for r in reps), "tile", f"reps={reps}: every repetition must be positive (MXNet's check)")
    return jnp.tile(jnp.asarray(data), reps)


@op
def repeat(data, repeats, axis=None):
    data = jnp.asarray(data)
    if axis is None:
        return jnp.repeat(data.reshape(-1), int(repeats))
    return jnp.repeat(data, int(repeats), axis=norm_axis(axis, data.ndim, "repeat"))


@op
def flip(data, axis):
    data = jnp.asarray(data)
    return jnp.flip(data, tuple(norm_axis(a, data.ndim, "flip") for a in as_tuple(axis)))


reverse = flip


@op
def swapaxes(data, dim1=0, dim2=0):
    data = jnp.asarray(data)
    return jnp.swapaxes(data, norm_axis(dim1, data.ndim, "swapaxes", "dim1"),
                        norm_axis(dim2, data.ndim, "swapaxes", "dim2"))


SwapAxis = swapaxes


@op
def moveaxis(tensor, source, destination):
    """numpy's ``moveaxis`` (MXNet's: ``ValueError: repeated axis`` for an axis named twice)."""
    tensor = jnp.asarray(tensor)
    src, dst = (as_tuple(list(a) if isinstance(a, range) else a) for a in (source, destination))
    for what, axes in (("Source", src), ("Destination", dst)):       # MXNet's errors are numpy's: ValueError
        if any(not -tensor.ndim <= int(a) < tensor.ndim for a in axes):
            raise ValueError(f"{what} should verify 0 <= {what.lower()} < tensor.ndim ({tensor.ndim}). Got {axes}")
        normal = [int(a) % tensor.ndim for a in axes]
        if len(set(normal)) != len(normal):
            raise ValueError("repeated axis")
    if len(src) != len(dst):
        raise ValueError("`source` and `destination` arguments must have the same number of elements")
    return jnp.moveaxis(tensor, src, dst)


@op
def broadcast_to(data, shape):
    """Broadcast size-1 axes to ``shape`` (a 0 entry keeps the input's size)."""
    data = jnp.asarray(data)
    shape = as_tuple(shape)
    check(len(shape) == data.ndim, "broadcast_to",
          f"shape={shape} must have as many dimensions as the input {data.shape}")
    target = tuple(d if s == 0 else s for s, d in zip(shape, data.shape))
    for d, t in zip(data.shape, target):
        check(d == t or d == 1, "broadcast_to", f"cannot broadcast {data.shape} to {target}")
    return jnp.broadcast_to(data, target)


@op
def broadcast_like(lhs, rhs, lhs_axes=None, rhs_axes=None):
    """Broadcast ``lhs`` to ``rhs``'s shape (or its ``lhs_axes`` to the sizes of ``rhs``'s ``rhs_axes``)."""
    lhs, rhs = jnp.asarray(lhs), jnp.asarray(rhs)
    if lhs_axes is None and rhs_axes is None:
        check(lhs.ndim <= rhs.ndim, "broadcast_like",
              f"lhs {lhs.shape} has more dimensions than rhs {rhs.shape}")
        lhs = lhs.reshape((1,) * (rhs.ndim - lhs.ndim) + lhs.shape)
        target = rhs.shape
    else:
        la, ra = as_tuple(lhs_axes), as_tuple(rhs_axes)
        check(len(la) > 0, "broadcast_like", "Empty axes tuple is not allowed")    # MXNet's check
        check(len(la) == len(ra), "broadcast_like", f"lhs_axes={la} and rhs_axes={ra} differ in length")
        target = list(lhs.shape)
        for a, b in zip(la, ra):
            target[norm_axis(a, lhs.ndim, "broadcast_like", "lhs_axes")] = rhs.shape[
                norm_axis(b, rhs.ndim, "broadcast_like", "rhs_axes")]
        target = tuple(target)
    for d, t in zip(lhs.shape, target):
        check(d == t or d == 1, "broadcast_like", f"cannot broadcast {lhs.shape} to {tuple(target)}")
    return jnp.broadcast_to(lhs, target)


@op
def broadcast_axis(data, axis=(), size=()):
    data = jnp.asarray(data)
    axis, size = as_tuple(axis), as_tuple(size)
    check(len(axis) == len(size), "broadcast_axis", f"axis={axis} and size={size} differ in length")
    target = list(data.shape)
    for a, s in zip(axis, size):
        a = norm_axis(a, data.ndim, "broadcast_axis")
        check(data.shape[a] == 1, "broadcast_axis", f"axis {a} has size {data.shape[a]}, not 1")
        target[a] = s
    return jnp.broadcast_to(data, tuple(target))


broadcast_axes = broadcast_axis


@op
def pad(data, mode="constant", pad_width=(), constant_value=0.0):
    """Pad a 4-D or 5-D array; ``pad_width`` gives (before, after) per axis, zero on the first two."""
    data = jnp.asarray(data)
    choice("pad", "mode", mode, ("constant", "edge", "reflect"))
    pw = as_tuple(pad_width)
    check(len(pw) == 2 * data.ndim, "pad", f"pad_width must have 2 x {data.ndim} entries, got {len(pw)}")
    check(data.ndim in (4, 5), "pad", f"only 4-D and 5-D inputs are supported, got {data.ndim}-D")
    check(pw[:4] == (0, 0, 0, 0), "pad", f"the first two axes cannot be padded, got pad_width={pw}")
    pairs = list(zip(pw[::2], pw[1::2]))
    if mode == "constant":
        return jnp.pad(data, pairs, mode="constant", constant_values=jnp.asarray(constant_value, data.dtype))
    if mode == "reflect":
        for (b, a), d in zip(pairs, data.shape):
            check(b < d and a < d, "pad", f"reflect padding {b, a} must be smaller than the axis size {d}")
    return jnp.pad(data, pairs, mode=mode)


Pad = pad


@op
def shape_array(data):
    """The shape as a 1-D int64 array (int32 unless jax_enable_x64 is on)."""
    return jnp.asarray(np.asarray(jnp.shape(data), dtype=np.int64))


@op
def size_array(data):
    return jnp.asarray(np.asarray([np.size(data) if not hasattr(data, "size") else data.size], dtype=np.int64))


@op
def depth_to_space(data, block_size):
    data = jnp.asarray(data)
    n, c, h, w = data.shape
    b = int(block_size)
    check(b > 0, "depth_to_space", f"block_size={b} must be positive")
    check(min(data.shape) > 0, "depth_to_space", f"an input of shape {data.shape} has an empty dimension")
    check(c % (b * b) == 0, "depth_to_space", f"channels {c} must be divisible by block_size^2 = {b * b}")
    x = data.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    return x.reshape(n, c // (b * b), h * b, w * b)


@op
def space_to_depth(data, block_size):
    data = jnp.asarray(data)
    n, c, h, w = data.shape
    b = int(block_size)
    check(b > 0, "space_to_depth", f"block_size={b} must be positive")
    check(min(data.shape) > 0, "space_to_depth", f"an input of shape {data.shape} has an empty dimension")
    check(h % b == 0 and w % b == 0, "space_to_depth", f"height {h} and width {w} must be divisible by {b}")
    x = data.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4)
    return x.reshape(n, c * b * b, h // b, w // b)
