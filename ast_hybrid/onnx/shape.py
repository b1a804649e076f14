"""Translations of MXNet's shape, indexing, reduction and matrix operators: Flatten, Concat, stack, Reshape
(MXNet's special codes resolved on the shapes the export was given; under ``dynamic`` only 0 and -1, which ONNX's
Reshape reads alike), transpose, expand_dims, squeeze, slices and splits, reductions, arg-extrema, dot and
batch_dot, broadcasts, tile, take, Pad, and the creators whose shape is fixed."""

from __future__ import annotations

import numpy as np

from ast_hybrid.onnx.emit import onnx_dtype

__all__ = ["TABLE"]

_BIG = np.iinfo(np.int64).max


def flatten(e, n):
    e.op("Flatten", n.inputs[:1], n.out, axis=1)


def concat(e, n):
    e.op("Concat", n.inputs, n.out, axis=int(n.attr("dim", 1)))


def stack(e, n):
    axis = int(n.attr("axis", 0))
    axes = e.ints([axis], n.name + "_axis")
    e.op("Concat", [e.op("Unsqueeze", [x, axes]) for x in n.inputs], n.out, axis=axis)


def reshape(e, n):
    codes = n.ints("shape", ()) or n.ints("newshape", ())
    if not e.dynamic:
        target = n.out_shapes[0]
    elif all(c >= -1 for c in codes) and not n.flag("reverse"):
        target = codes                  # 0 copies the input's dimension and -1 infers, in ONNX as in MXNet
    else:
        raise n.error(f"has shape {codes} (MXNet's codes -2/-3/-4 or reverse), which a dynamic export cannot "
                      "write; export with dynamic=False")
    e.op("Reshape", [n.inputs[0], e.ints(target, n.name + "_shape")], n.out)


def reshape_like(e, n):
    ranges = ("lhs_begin", "lhs_end", "rhs_begin", "rhs_end")
    if not e.dynamic or any(n.attr(k) not in (None, "None") for k in ranges):
        e.op("Reshape", [n.inputs[0], e.ints(n.out_shapes[0], n.name + "_shape")], n.out)
    else:
        e.op("Reshape", [n.inputs[0], e.op("Shape", [n.inputs[1]])], n.out)


def transpose(e, n):
    axes = n.ints("axes", ()) or tuple(reversed(range(len(n.in_shapes[0]))))
    e.op("Transpose", n.inputs[:1], n.out, perm=list(axes))


def swapaxes(e, n):
    rank = len(n.in_shapes[0])
    perm = list(range(rank))
    a, b = int(n.attr("dim1", 0)) % rank, int(n.attr("dim2", 0)) % rank
    perm[a], perm[b] = perm[b], perm[a]
    e.op("Transpose", n.inputs[:1], n.out, perm=perm)


def expand_dims(e, n):
    e.op("Unsqueeze", [n.inputs[0], e.ints([int(n.attr("axis"))], n.name + "_axis")], n.out)


def squeeze(e, n):
    axes = n.ints("axis", None)
    if axes is None:
        e.op("Squeeze", n.inputs[:1], n.out)
    else:
        e.op("Squeeze", [n.inputs[0], e.ints(axes, n.name + "_axes")], n.out)


def _slice(e, n, starts, ends, axes, steps=None):
    ins = [n.inputs[0], e.ints(starts, n.name + "_starts"), e.ints(ends, n.name + "_ends"),
           e.ints(axes, n.name + "_axes")]
    if steps is not None:
        ins.append(e.ints(steps, n.name + "_steps"))
    e.op("Slice", ins, n.out)


def slice_axis(e, n):
    end = n.attr("end")
    axis = int(n.attr("axis")) % len(n.in_shapes[0])
    _slice(e, n, [int(n.attr("begin", 0))], [_BIG if end in (None, "None") else int(end)], [axis])


def slice_op(e, n):
    begin, end, step = (n.attr(k, ()) or () for k in ("begin", "end", "step"))
    k = len(begin)
    step = [1 if s in (None, "None") else int(s) for s in (list(step) + [None] * k)[:k]]
    starts = [(0 if s > 0 else _BIG) if b in (None, "None") else int(b) for b, s in zip(begin, step)]
    ends = [(_BIG if s > 0 else -_BIG - 1) if x in (None, "None") else int(x)
            for x, s in zip((list(end) + [None] * k)[:k], step)]
    _slice(e, n, starts, ends, list(range(k)), step)


def slice_like(e, n):
    axes = n.ints("axes", ()) or tuple(range(len(n.in_shapes[1])))
    out = n.out_shapes[0]
    _slice(e, n, [0] * len(axes), [out[a] for a in axes], list(axes))


def _split(e, n, axis, sizes):
    """ONNX's Split into ``n.outputs`` (sizes an initialiser, or equal parts when None), each squeezed on
    ``axis`` under ``squeeze_axis``."""
    squeeze_axis = n.flag("squeeze_axis")
    parts = [e.fresh(f"{n.name}_part{i}") for i in range(len(n.outputs))] if squeeze_axis else n.outputs
    ins = [n.inputs[0]] + ([e.ints(sizes, n.name + "_sizes")] if sizes else [])
    e.op("Split", ins, parts, axis=axis)
    if squeeze_axis:
        axes = e.ints([axis], n.name + "_axis")
        for p, out in zip(parts, n.outputs):
            e.op("Squeeze", [p, axes], out)


def split(e, n):
    axis = int(n.attr("axis", 1))
    count = len(n.outputs)
    size = None if e.dynamic else n.in_shapes[0][axis]
    _split(e, n, axis, [size // count] * count if size else None)


def split_v2(e, n):
    """MXNet's ``_split_v2`` (``indices`` with a leading 0, or ``sections``) and ast-hybrid's ``split_v2``
    (``indices_or_sections``)."""
    axis = int(n.attr("axis", 0))
    dim = n.static_shape(0)[axis]
    given = n.attr("indices_or_sections")
    sections = given if isinstance(given, int) else int(n.attr("sections", 0) or 0)
    if sections:
        bounds = [i * dim // sections for i in range(sections)]
    else:
        bounds = [0] + [i for i in (given if given is not None else n.ints("indices", ())) if i != 0]
    bounds.append(dim)
    _split(e, n, axis, [b - a for a, b in zip(bounds, bounds[1:])])


def _axes(n):
    rank = len(n.in_shapes[0])
    axis = n.attr("axis")
    if axis in (None, "None", ()):
        axes = list(range(rank))
    else:
        axes = [int(a) % rank for a in (axis if isinstance(axis, (tuple, list)) else (axis,))]
    if n.flag("exclude"):
        axes = [a for a in range(rank) if a not in axes]
    return axes


def _scalar_as_vector(e, n, y):
    """MXNet's reduction of every axis is of shape (1,) where ONNX's is a scalar."""
    if len(n.out_shapes[0]) == 1 and len(n.in_shapes[0]) and not n.flag("keepdims") and \
            len(_axes(n)) == len(n.in_shapes[0]):
        return e.op("Reshape", [y, e.ints([1], n.name + "_one")], n.out)
    return e.op("Identity", [y], n.out)


def _reduce(op):
    def translate(e, n):
        axes = _axes(n)
        keep = int(n.flag("keepdims"))
        if not axes:
            e.op("Identity", n.inputs[:1], n.out)
        elif op == "ReduceSum":     # opset 13 on: its axes are an input
            _scalar_as_vector(e, n, e.op(op, [n.inputs[0], e.ints(axes, n.name + "_axes")], keepdims=keep))
        else:
            _scalar_as_vector(e, n, e.op(op, n.inputs[:1], axes=axes, keepdims=keep))
    return translate


def norm(e, n):
    order = int(n.attr("ord", 2))
    if order not in (1, 2):
        raise n.error(f"has ord={order}; the export writes the 1- and 2-norms")
    _reduce("ReduceL1" if order == 1 else "ReduceL2")(e, n)


def _arg(op):
    def translate(e, n):
        axis = n.attr("axis")
        x = n.inputs[0]
        keep = int(n.flag("keepdims"))
        if axis in (None, "None"):      # over the flattened array, MXNet's answer of shape (1,)
            x, axis, keep = e.op("Reshape", [x, e.ints([-1], n.name + "_flat")]), 0, 1
        idx = e.op(op, [x], axis=int(axis), keepdims=keep)
        e.op("Cast", [idx], n.out, to=onnx_dtype(n.out_dtypes[0]))     # MXNet's indices are floats
    return translate


def dot(e, n):
    a, b = n.inputs[:2]
    if len(n.in_shapes[0]) > 2 or len(n.in_shapes[1]) > 2:
        if n.flag("transpose_a") or n.flag("transpose_b") or len(n.in_shapes[1]) != 2:
            raise n.error("is an N-d dot with transposes or an N-d right side, which the export does not write")
        e.op("MatMul", [a, b], n.out)       # contracts a's last axis with b's first: a matmul when b is 2-d
        return
    if n.flag("transpose_a"):
        a = e.op("Transpose", [a], perm=[1, 0])
    if n.flag("transpose_b"):
        b = e.op("Transpose", [b], perm=[1, 0])
    e.op("MatMul", [a, b], n.out)


def batch_dot(e, n):
    a, b = n.inputs[:2]
    for i, key in enumerate(("transpose_a", "transpose_b")):
        if n.flag(key):
            rank = len(n.in_shapes[i])
            perm = list(range(rank - 2)) + [rank - 1, rank - 2]
            if i == 0:
                a = e.op("Transpose", [a], perm=perm)
            else:
                b = e.op("Transpose", [b], perm=perm)
    e.op("MatMul", [a, b], n.out)


def broadcast_static(e, n):
    e.op("Expand", [n.inputs[0], e.ints(n.out_shapes[0], n.name + "_shape")], n.out)


def broadcast_like(e, n):
    if not e.dynamic or any(n.attr(k) not in (None, "None") for k in ("lhs_axes", "rhs_axes")):
        broadcast_static(e, n)
    else:
        e.op("Expand", [n.inputs[0], e.op("Shape", [n.inputs[1]])], n.out)


def tile(e, n):
    reps = list(n.ints("reps", ()))
    rank = len(n.in_shapes[0])
    x = n.inputs[0]
    if len(reps) > rank:
        x = e.op("Reshape", [x, e.ints([1] * (len(reps) - rank) + list(n.static_shape(0)), n.name + "_shape")])
    reps = [1] * (rank - len(reps)) + reps
    e.op("Tile", [x, e.ints(reps, n.name + "_reps")], n.out)


def take(e, n):
    axis = int(n.attr("axis", 0))
    mode = n.attr("mode", "clip")
    idx = e.op("Cast", [n.inputs[1]], to=7)
    dim = n.static_shape(0)[axis] if mode != "raise" else None
    if mode == "clip":
        lo, hi = e.const(np.int64(0), hint=n.name + "_lo"), e.const(np.int64(dim - 1), hint=n.name + "_hi")
        idx = e.op("Clip", [idx, lo, hi])
    elif mode == "wrap":
        idx = e.op("Mod", [idx, e.const(np.int64(dim), hint=n.name + "_dim")])
    e.op("Gather", [n.inputs[0], idx], n.out, axis=axis)


def repeat(e, n):
    """Each element ``repeats`` times along ``axis`` (the flattened array without one): a new axis after it,
    tiled, merged back."""
    count = int(n.attr("repeats"))
    axis = n.attr("axis")
    x = n.inputs[0]
    if axis in (None, "None"):
        x, axis = e.op("Reshape", [x, e.ints([-1], n.name + "_flat")]), 0
    rank = len(n.in_shapes[0]) if n.attr("axis") not in (None, "None") else 1
    axis = int(axis) % rank
    wide = e.op("Unsqueeze", [x, e.ints([axis + 1], n.name + "_axis")])
    tiled = e.op("Tile", [wide, e.ints([1] * (axis + 1) + [count] + [1] * (rank - axis - 1), n.name + "_reps")])
    target = [0] * axis + [-1] + list(n.out_shapes[0][axis + 1:]) if e.dynamic and axis == rank - 1 \
        else n.out_shapes[0]
    e.op("Reshape", [tiled, e.ints(target, n.name + "_shape")], n.out)


def reverse(e, n):
    axes = [int(a) for a in n.ints("axis", ())]
    _slice(e, n, [-1] * len(axes), [-_BIG - 1] * len(axes), axes, [-1] * len(axes))


def pad(e, n):
    width = list(n.ints("pad_width", ()))
    mode = n.attr("mode", "constant")
    pads = width[0::2] + width[1::2]
    ins = [n.inputs[0], e.ints(pads, n.name + "_pads")]
    if mode == "constant":
        ins.append(e.const(np.asarray(float(n.attr("constant_value", 0))).astype(n.in_dtypes[0]),
                           hint=n.name + "_value"))
    e.op("Pad", ins, n.out, mode={"constant": "constant", "edge": "edge", "reflect": "reflect"}[mode])


def created(e, n):
    """``_zeros``/``_ones``/``_full``/``_arange``/``_eye``: no input, a value fixed by its options."""
    shape, dtype = n.out_shapes[0], n.out_dtypes[0]
    if n.op in ("_zeros", "_ones", "_full"):
        value = np.full(shape, {"_zeros": 0, "_ones": 1}.get(n.op, float(n.attr("value", 0))), dtype)
    else:
        raise n.error("is a creator the export does not write")
    e.op("Identity", [e.const(value, hint=n.name + "_value")], n.out)


def arange(e, n):
    start, stop = float(n.attr("start", 0)), n.attr("stop")
    step, repeat = float(n.attr("step", 1)), int(n.attr("repeat", 1))
    values = np.arange(start, float(stop), step) if stop not in (None, "None") else np.arange(start)
    e.op("Identity", [e.const(np.repeat(values, repeat).astype(n.out_dtypes[0]), hint=n.name + "_value")], n.out)


def shape_array(e, n):
    e.op("Shape", n.inputs[:1], n.out)


def size_array(e, n):
    e.op("Reshape", [e.op("Size", n.inputs[:1]), e.ints([1], n.name + "_one")], n.out)


TABLE = {
    "Flatten": flatten, "flatten": flatten, "Concat": concat, "concat": concat, "stack": stack,
    "Reshape": reshape, "reshape": reshape, "reshape_like": reshape_like, "transpose": transpose,
    "SwapAxis": swapaxes, "swapaxes": swapaxes,
    "expand_dims": expand_dims, "squeeze": squeeze, "slice_axis": slice_axis, "slice": slice_op, "crop": slice_op,
    "slice_like": slice_like, "SliceChannel": split, "split": split, "_split_v2": split_v2, "split_v2": split_v2,
    "sum": _reduce("ReduceSum"), "sum_axis": _reduce("ReduceSum"), "mean": _reduce("ReduceMean"),
    "max": _reduce("ReduceMax"), "min": _reduce("ReduceMin"), "prod": _reduce("ReduceProd"), "norm": norm,
    "argmax": _arg("ArgMax"), "argmin": _arg("ArgMin"), "dot": dot, "batch_dot": batch_dot,
    "broadcast_to": broadcast_static, "broadcast_axis": broadcast_static, "broadcast_axes": broadcast_static,
    "broadcast_like": broadcast_like, "tile": tile, "take": take, "Pad": pad, "pad": pad,
    "_zeros": created, "_ones": created, "_full": created, "_arange": arange,
    "shape_array": shape_array, "size_array": size_array, "repeat": repeat, "reverse": reverse, "flip": reverse,
}
