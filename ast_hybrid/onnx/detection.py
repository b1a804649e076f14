"""Translations of MXNet's detection operators (GluonCV's SSD, YOLOv3, CenterNet and Faster R-CNN graphs):
``_contrib_box_nms``, ``_contrib_box_decode``, ``_contrib_ROIAlign``, ``topk``, ``gather_nd``.

``box_nms`` keeps MXNet's meaning where MXNet's own export does not: the ``topk`` best valid boxes are the
candidates (before suppression, not a cap after it), boxes of different classes do not suppress each other
(``id_index`` without ``force_suppress``: one class of ONNX's NonMaxSuppression for each whole-number class id
among the candidates), ``background_id`` boxes are invalid, and the output is MXNet's:
the input's shape, the kept boxes first in score order (ties in input order), every other row -1.
"""

from __future__ import annotations

import numpy as np

from ast_hybrid.onnx.emit import onnx_dtype

__all__ = ["TABLE"]

_INT64 = 7


def _columns(e, n, x, start, stop, hint):
    return e.op("Slice", [x, e.ints([start], f"{n.name}_{hint}_s"), e.ints([stop], f"{n.name}_{hint}_e"),
                          e.ints([-1], f"{n.name}_{hint}_a")])


def box_nms(e, n):
    shape = n.static_shape(0)
    if n.attr("in_format", "corner") != n.attr("out_format", "corner"):
        raise n.error("converts the box format (in_format != out_format), which the export does not write")
    count, width = shape[-2], shape[-1]
    batch = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    dt = n.in_dtypes[0]
    cs, si = int(n.attr("coord_start", 2)), int(n.attr("score_index", 1))
    ii, bg = int(n.attr("id_index", -1)), int(n.attr("background_id", -1))
    topk = int(n.attr("topk", -1))
    k = count if topk < 0 else min(count, topk)
    name = n.name

    def c(value, hint, dtype=dt):
        return e.const(np.asarray(value, dtype=dtype), hint=f"{name}_{hint}")

    data = e.op("Reshape", [n.inputs[0], e.ints([batch, count, width], name + "_3d")])
    scores = e.op("Squeeze", [_columns(e, n, data, si, si + 1, "score"), e.ints([2], name + "_ax2")])
    valid = e.op("Greater", [scores, c(float(n.attr("valid_thresh", 0)), "vt")])
    if ii >= 0 and bg >= 0:
        ids = e.op("Squeeze", [_columns(e, n, data, ii, ii + 1, "id"), e.ints([2], name + "_ax2b")])
        valid = e.op("And", [valid, e.op("Not", [e.op("Equal", [ids, c(float(bg), "bg")])])])
    masked = e.op("Where", [valid, scores, c(-np.inf, "ninf")])
    _, order = e.op("TopK", [masked, e.ints([k], name + "_k")], [e.fresh(name + "_vals"), e.fresh(name + "_order")],
                    axis=1, largest=1, sorted=1)
    cand = e.op("GatherND", [data, e.op("Unsqueeze", [order, e.ints([2], name + "_ax2c")])], batch_dims=1)
    cand_valid = e.op("GatherElements", [e.op("Cast", [valid], to=onnx_dtype(dt)), order], axis=1)
    boxes = _columns(e, n, cand, cs, cs + 4, "box")
    # a box of negative width or height overlaps nothing in MXNet (ONNX Runtime would order its corners):
    # made of zero area, which suppresses nothing and is never suppressed
    b = e.op("Split", [boxes], [e.fresh(f"{name}_b{i}") for i in range(4)], axis=2)
    if n.attr("in_format", "corner") == "center":
        w, h, empty = b[2], b[3], [b[0], b[1], c(np.zeros((batch, k, 1)), "z1"), c(np.zeros((batch, k, 1)), "z2")]
    else:
        w, h, empty = e.op("Sub", [b[2], b[0]]), e.op("Sub", [b[3], b[1]]), [b[0], b[1], b[0], b[1]]
    flipped = e.op("Or", [e.op("Less", [w, c(0.0, "zw")]), e.op("Less", [h, c(0.0, "zh")])])
    boxes = e.op("Where", [flipped, e.op("Concat", empty, axis=2), boxes])
    # scores that order the candidates as TopK did (MXNet's stable order), 0 for the invalid ones
    rank = e.op("Unsqueeze", [e.op("Mul", [cand_valid, c((np.arange(k, 0, -1) / k).reshape(1, k), "rank")]),
                              e.ints([1], name + "_ax1")])
    if ii >= 0 and not n.flag("force_suppress"):     # one class of ONNX's NonMaxSuppression per class id
        ids = e.op("Where", [e.op("Greater", [cand_valid, c(0.5, "half0")]),
                             e.op("Squeeze", [_columns(e, n, cand, ii, ii + 1, "cid"), e.ints([2], name + "_ax2f")]),
                             c(0.0, "zero")])
        classes = e.op("Range", [e.op("ReduceMin", [ids], keepdims=0),
                                 e.op("Add", [e.op("ReduceMax", [ids], keepdims=0), c(1.0, "one")]), c(1.0, "step")])
        same = e.op("Equal", [e.op("Unsqueeze", [ids, e.ints([1], name + "_ax1b")]),
                              e.op("Reshape", [classes, e.ints([1, -1, 1], name + "_col")])])
        rank = e.op("Where", [same, rank, c(0.0, "zero_b")])
    picked = e.op("NonMaxSuppression", [boxes, rank, e.ints([k], name + "_max"),
                                        c(float(n.attr("overlap_thresh", 0.5)), "iou", np.float32),
                                        c(0.0, "floor", np.float32)],
                  center_point_box=1 if n.attr("in_format", "corner") == "center" else 0)
    where = e.op("Gather", [picked, e.ints([0, 2], name + "_bi")], axis=1)
    ones = e.op("ConstantOfShape", [e.op("Slice", [e.op("Shape", [picked]), e.ints([0], name + "_z"),
                                                   e.ints([1], name + "_o")])],
                value=_tensor(np.ones(1, dt)))
    keep = e.op("ScatterND", [c(np.zeros((batch, k)), "zeros"), where, ones])
    # kept rows first, each part in candidate order: sort by position, + k for the dropped
    key = e.op("Add", [c(np.arange(k).reshape(1, k), "pos"), e.op("Mul", [e.op("Sub", [c(1.0, "one_b"), keep]),
                                                                          c(float(k), "kf")])])
    _, by = e.op("TopK", [key, e.ints([k], name + "_k2")], [e.fresh(name + "_keys"), e.fresh(name + "_by")], axis=1,
                 largest=0, sorted=1)
    rows = e.op("GatherND", [cand, e.op("Unsqueeze", [by, e.ints([2], name + "_ax2d")])], batch_dims=1)
    kept = e.op("Greater", [e.op("Unsqueeze", [e.op("GatherElements", [keep, by], axis=1),
                                               e.ints([2], name + "_ax2e")]), c(0.5, "half")])
    out = e.op("Where", [kept, rows, c(-1.0, "minus1")])
    if k < count:
        out = e.op("Pad", [out, e.ints([0, 0, 0, 0, count - k, 0], name + "_pads"), c(-1.0, "fill")])
    e.op("Reshape", [out, e.ints(shape, name + "_shape")], n.out)


def _tensor(value):
    from onnx import numpy_helper

    return numpy_helper.from_array(value)


def box_decode(e, n):
    dt = n.in_dtypes[0]
    x, anchors = n.inputs[:2]
    parts = e.op("Split", [x], [e.fresh(f"{n.name}_d{i}") for i in range(4)], axis=-1)
    a = e.op("Split", [anchors], [e.fresh(f"{n.name}_a{i}") for i in range(4)], axis=-1)
    half = e.const(np.asarray(0.5, dt), hint=n.name + "_half")
    ax, ay, aw, ah = a
    if n.attr("format", "center") == "corner":
        aw, ah = e.op("Sub", [a[2], a[0]]), e.op("Sub", [a[3], a[1]])
        ax, ay = e.op("Add", [a[0], e.op("Mul", [aw, half])]), e.op("Add", [a[1], e.op("Mul", [ah, half])])
    std = [e.const(np.asarray(float(n.attr(f"std{i}", 1.0)), dt), hint=f"{n.name}_std{i}") for i in range(4)]
    ox = e.op("Add", [e.op("Mul", [e.op("Mul", [parts[0], std[0]]), aw]), ax])
    oy = e.op("Add", [e.op("Mul", [e.op("Mul", [parts[1], std[1]]), ah]), ay])
    dw, dh = e.op("Mul", [parts[2], std[2]]), e.op("Mul", [parts[3], std[3]])
    clip = float(n.attr("clip", -1.0))
    if clip > 0:
        limit = e.const(np.asarray(clip, dt), hint=n.name + "_clip")
        dw, dh = e.op("Min", [dw, limit]), e.op("Min", [dh, limit])
    ow = e.op("Mul", [e.op("Mul", [e.op("Exp", [dw]), aw]), half])
    oh = e.op("Mul", [e.op("Mul", [e.op("Exp", [dh]), ah]), half])
    e.op("Concat", [e.op("Sub", [ox, ow]), e.op("Sub", [oy, oh]), e.op("Add", [ox, ow]), e.op("Add", [oy, oh])],
         n.out, axis=-1)


def roi_align(e, n):
    if n.flag("position_sensitive"):
        raise n.error("is position-sensitive, which ONNX's RoiAlign cannot write")
    h, w = n.ints("pooled_size")
    rois = n.inputs[1]
    index = e.op("Cast", [e.op("Squeeze", [_columns(e, n, rois, 0, 1, "b"), e.ints([1], n.name + "_ax1")])],
                 to=_INT64)
    boxes = _columns(e, n, rois, 1, 5, "r")
    ratio = int(n.attr("sample_ratio", -1))
    e.op("RoiAlign", [n.inputs[0], boxes, index], n.out, mode="avg", output_height=h, output_width=w,
         sampling_ratio=max(ratio, 0), spatial_scale=float(n.attr("spatial_scale")),
         coordinate_transformation_mode="half_pixel" if n.flag("aligned") else "output_half_pixel")


def topk(e, n):
    kind = n.attr("ret_typ", "indices")
    if kind == "mask":
        raise n.error("returns a mask (ret_typ='mask'), which the export does not write")
    x = n.inputs[0]
    axis = n.attr("axis", -1)
    if axis in (None, "None"):
        x, axis = e.op("Reshape", [x, e.ints([-1], n.name + "_flat")]), 0
    axis = int(axis)
    k = int(n.attr("k", 1))
    if k < 1:
        k = n.static_shape(0)[axis] if axis is not None else int(np.prod(n.static_shape(0)))
    outs = [e.fresh(n.name + "_values"), e.fresh(n.name + "_indices")]
    values, idx = e.op("TopK", [x, e.ints([k], n.name + "_k")], outs, axis=axis,
                       largest=0 if n.flag("is_ascend") else 1, sorted=1)
    index_type = np.dtype(n.attr("dtype", "float32"))
    if kind == "both":
        e.op("Identity", [values], n.outputs[0])
        e.op("Cast", [idx], n.outputs[1], to=onnx_dtype(index_type))
    elif kind == "value":
        e.op("Identity", [values], n.out)
    else:
        e.op("Cast", [idx], n.out, to=onnx_dtype(index_type))


def gather_nd(e, n):
    rank = len(n.in_shapes[1])
    idx = e.op("Cast", [n.inputs[1]], to=_INT64)
    if rank > 1:                # MXNet's index tuples run along axis 0, ONNX's along the last
        idx = e.op("Transpose", [idx], perm=list(range(1, rank)) + [0])
    e.op("GatherND", [n.inputs[0], idx], n.out)


TABLE = {"_contrib_box_nms": box_nms, "_contrib_box_non_maximum_suppression": box_nms,
         "_contrib_box_decode": box_decode, "_contrib_ROIAlign": roi_align, "topk": topk, "gather_nd": gather_nd}
