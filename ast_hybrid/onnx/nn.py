"""Translations of MXNet's neural-network layers: convolution, normalisation, pooling, dense, activations,
softmax, embedding, resizing.  Each reads MXNet 1.9.1's options as ``mxnet/onnx/mx2onnx`` does; where MXNet's
export ignores an option that changes the numbers (BatchNorm's ``fix_gamma``, PReLU's per-channel slope on
images, ``LayerNorm`` on an inner axis) the translation here honours it."""

from __future__ import annotations

import numpy as np

__all__ = ["TABLE"]


def _spatial(n, key, default=()):
    return list(n.ints(key, default) or ())


def _layout(n, allowed=("NCW", "NCHW", "NCDHW")):
    layout = n.attr("layout")
    if layout not in (None, "None") and layout not in allowed:
        raise n.error(f"has layout {layout!r}; the export writes channels-first layouts ({', '.join(allowed)})")


def convolution(e, n):
    _layout(n)
    kernel = _spatial(n, "kernel")
    pad = _spatial(n, "pad") or [0] * len(kernel)
    ins = n.inputs[:2] if n.flag("no_bias") else n.inputs[:3]
    e.op("Conv", ins, n.out, kernel_shape=kernel, pads=pad + pad, strides=_spatial(n, "stride") or None,
         dilations=_spatial(n, "dilate") or None, group=int(n.attr("num_group", 1)))


def deconvolution(e, n):
    _layout(n)
    if n.ints("target_shape", ()):
        raise n.error("has target_shape, which the export does not write; give pad and adj instead")
    kernel = _spatial(n, "kernel")
    pad = _spatial(n, "pad") or [0] * len(kernel)
    ins = n.inputs[:2] if n.flag("no_bias", True) else n.inputs[:3]
    e.op("ConvTranspose", ins, n.out, kernel_shape=kernel, pads=pad + pad, strides=_spatial(n, "stride") or None,
         dilations=_spatial(n, "dilate") or None, output_padding=_spatial(n, "adj") or None,
         group=int(n.attr("num_group", 1)))


def batch_norm(e, n):
    axis = int(n.attr("axis", 1))
    x, gamma, beta, mean, var = n.inputs[:5]
    if n.flag("fix_gamma", True):          # MXNet's op default: gamma is taken as ones (MXNet's export forgets)
        gamma = e.const(np.ones(n.in_shapes[1], n.in_dtypes[1]), hint=n.name + "_ones")
    rank = len(n.in_shapes[0])
    axis = axis % rank if rank else axis
    eps = float(n.attr("eps", 1e-3))
    if axis == 1 or rank < 2:
        e.op("BatchNormalization", [x, gamma, beta, mean, var], n.out, epsilon=eps)
        return
    perm = [0, axis] + [d for d in range(1, rank) if d != axis]     # channels to axis 1 and back
    back = list(np.argsort(perm))
    t = e.op("Transpose", [x], perm=perm)
    y = e.op("BatchNormalization", [t, gamma, beta, mean, var], epsilon=eps)
    e.op("Transpose", [y], n.out, perm=back)


def instance_norm(e, n):
    e.op("InstanceNormalization", n.inputs[:3], n.out, epsilon=float(n.attr("eps", 1e-3)))


def layer_norm(e, n):
    rank = len(n.in_shapes[0])
    axis = int(n.attr("axis", -1)) % rank
    eps = float(n.attr("eps", 1e-5))
    x, gamma, beta = n.inputs[:3]
    if axis == rank - 1:
        e.op("LayerNormalization", [x, gamma, beta], n.out, axis=-1, epsilon=eps)
        return
    shape = [1] * rank
    shape[axis] = n.in_shapes[1][0]
    mean = e.op("ReduceMean", [x], axes=[axis], keepdims=1)
    centred = e.op("Sub", [x, mean])
    var = e.op("ReduceMean", [e.op("Mul", [centred, centred])], axes=[axis], keepdims=1)
    std = e.op("Sqrt", [e.op("Add", [var, e.const(eps, n.in_dtypes[0], n.name + "_eps")])])
    g = e.op("Reshape", [gamma, e.ints(shape, n.name + "_shape")])
    b = e.op("Reshape", [beta, e.ints(shape, n.name + "_shape")])
    e.op("Add", [e.op("Mul", [e.op("Div", [centred, std]), g]), b], n.out)


def l2_normalization(e, n):
    mode = n.attr("mode", "instance")
    rank = len(n.in_shapes[0])
    axes = {"instance": list(range(1, rank)), "channel": [1], "spatial": list(range(2, rank))}.get(mode)
    if axes is None:
        raise n.error(f"has mode {mode!r}")
    x = n.inputs[0]
    ss = e.op("ReduceSum", [e.op("Mul", [x, x]), e.ints(axes, n.name + "_axes")], keepdims=1)
    norm = e.op("Sqrt", [e.op("Add", [ss, e.const(float(n.attr("eps", 1e-10)), n.in_dtypes[0], n.name + "_eps")])])
    e.op("Div", [x, norm], n.out)


def pooling(e, n):
    _layout(n)
    pool = n.attr("pool_type", "max")
    convention = n.attr("pooling_convention", "valid")
    x = n.inputs[0]
    if n.flag("global_pool"):
        if pool == "sum":
            rank = len(n.in_shapes[0])
            e.op("ReduceSum", [x, e.ints(range(2, rank), n.name + "_axes")], n.out, keepdims=1)
            return
        op = {"avg": "GlobalAveragePool", "max": "GlobalMaxPool", "lp": "GlobalLpPool"}[pool]
        e.op(op, [x], n.out, p=int(n.attr("p_value", 2)) if pool == "lp" else None)
        return
    if convention == "same":
        raise n.error("has pooling_convention 'same', which the export does not write")
    kernel = _spatial(n, "kernel")
    pad = _spatial(n, "pad") or [0] * len(kernel)
    common = dict(kernel_shape=kernel, pads=pad + pad, strides=_spatial(n, "stride") or None)
    ceil = 1 if convention == "full" else 0
    if pool == "max":
        e.op("MaxPool", [x], n.out, ceil_mode=ceil, **common)
    elif pool in ("avg", "sum"):
        include = n.attr("count_include_pad", True) in (True, None, "None")
        if pool == "sum":
            avg = e.op("AveragePool", [x], ceil_mode=ceil, count_include_pad=1, **common)
            e.op("Mul", [avg, e.const(float(np.prod(kernel)), n.in_dtypes[0], n.name + "_size")], n.out)
        else:
            e.op("AveragePool", [x], n.out, ceil_mode=ceil, count_include_pad=int(include), **common)
    elif pool == "lp":
        if ceil:
            raise n.error("is an Lp pooling with pooling_convention 'full', which ONNX's LpPool cannot write")
        e.op("LpPool", [x], n.out, p=int(n.attr("p_value", 2)), **common)
    else:
        raise n.error(f"has pool_type {pool!r}")


def adaptive_avg_pool(e, n):
    size = n.ints("output_size", (1,)) or (1,)
    out = tuple(size) * 2 if len(size) == 1 else tuple(size)
    if out == (1, 1):
        e.op("GlobalAveragePool", [n.inputs[0]], n.out)
        return
    hw = n.static_shape(0)[2:]
    if any(h % o for h, o in zip(hw, out)):
        raise n.error(f"pools {tuple(hw)} to {out}, not a whole number of cells a window; ONNX's AveragePool "
                      "writes only those")
    k = [h // o for h, o in zip(hw, out)]
    e.op("AveragePool", [n.inputs[0]], n.out, kernel_shape=k, strides=k)


def fully_connected(e, n):
    x, w = n.inputs[:2]
    bias = None if n.flag("no_bias") else n.inputs[2]
    if n.flag("flatten", True):
        flat = e.op("Flatten", [x], axis=1) if len(n.in_shapes[0]) != 2 else x
        e.op("Gemm", [flat, w] + ([bias] if bias else []), n.out, transB=1)
        return
    y = e.op("MatMul", [x, e.op("Transpose", [w], perm=[1, 0])], None if bias else n.out)
    if bias:
        e.op("Add", [y, bias], n.out)


_ACTIVATIONS = {"relu": "Relu", "sigmoid": "Sigmoid", "tanh": "Tanh", "softrelu": "Softplus", "softsign": "Softsign"}


def activation(e, n):
    kind = n.attr("act_type")
    x = n.inputs[0]
    if kind in _ACTIVATIONS:
        e.op(_ACTIVATIONS[kind], [x], n.out)
    elif kind == "log_sigmoid":
        e.op("Log", [e.op("Sigmoid", [x])], n.out)
    elif kind == "mish":
        e.op("Mul", [x, e.op("Tanh", [e.op("Softplus", [x])])], n.out)
    else:
        raise n.error(f"has act_type {kind!r}")


def _gelu(e, n, x, out):
    dt = n.in_dtypes[0]
    erf = e.op("Erf", [e.op("Div", [x, e.const(np.sqrt(2.0), dt, n.name + "_sqrt2")])])
    half = e.op("Mul", [x, e.const(0.5, dt, n.name + "_half")])
    e.op("Mul", [half, e.op("Add", [erf, e.const(1.0, dt, n.name + "_one")])], out)


def leaky_relu(e, n):
    kind = n.attr("act_type", "leaky")
    x = n.inputs[0]
    slope = float(n.attr("slope", 0.25))
    if kind == "leaky":
        e.op("LeakyRelu", [x], n.out, alpha=slope)
    elif kind == "elu":
        e.op("Elu", [x], n.out, alpha=slope)
    elif kind == "selu":
        e.op("Selu", [x], n.out)
    elif kind == "gelu":
        _gelu(e, n, x, n.out)
    elif kind == "rrelu":               # inference: the mean of its slopes, as MXNet's forward outside training
        e.op("LeakyRelu", [x], n.out, alpha=(float(n.attr("lower_bound", 0.125)) + float(n.attr("upper_bound",
                                                                                                0.334))) / 2)
    elif kind == "prelu":
        gamma = n.inputs[1]
        rank = len(n.in_shapes[0])
        if rank > 2 and int(np.prod(n.in_shapes[1])) > 1:  # a slope per channel: axis 1 (ONNX aligns the right)
            gamma = e.op("Reshape", [gamma, e.ints([-1] + [1] * (rank - 2), n.name + "_shape")])
        e.op("PRelu", [x, gamma], n.out)
    else:
        raise n.error(f"has act_type {kind!r}")


def _softmax(e, n, op):
    if n.flag("use_length"):
        raise n.error("has use_length, which the export does not write")
    x = n.inputs[0]
    temperature = n.attr("temperature")
    if temperature not in (None, "None") and float(temperature) != 1.0:
        x = e.op("Div", [x, e.const(float(temperature), n.in_dtypes[0], n.name + "_temperature")])
    dtype = n.attr("dtype")
    y = e.op(op, [x], None if dtype not in (None, "None") else n.out, axis=int(n.attr("axis", -1)))
    if dtype not in (None, "None"):
        from ast_hybrid.onnx.emit import onnx_dtype

        e.op("Cast", [y], n.out, to=onnx_dtype(n.out_dtypes[0]))


def softmax(e, n):
    _softmax(e, n, "Softmax")


def log_softmax(e, n):
    _softmax(e, n, "LogSoftmax")


def softmax_activation(e, n):
    """``channel``: over axis 1; ``instance`` (the default): over the last axis (MXNet flattens to 2-d keeping
    the last)."""
    e.op("Softmax", [n.inputs[0]], n.out, axis=1 if n.attr("mode", "instance") == "channel" else -1)


def softmax_output(e, n):
    axis = 1 if n.flag("multi_output") else -1
    e.op("Softmax", [n.inputs[0]], n.out, axis=axis)


def embedding(e, n):
    idx = e.op("Cast", [n.inputs[0]], to=7)         # int64
    e.op("Gather", [n.inputs[1], idx], n.out, axis=0)


def upsampling(e, n):
    if n.attr("sample_type", "nearest") != "nearest":
        raise n.error("is a bilinear UpSampling (a fixed Deconvolution in MXNet), which the export does not write")
    if len(n.inputs) != 1:
        raise n.error("takes several inputs, which the export does not write")
    s = float(n.attr("scale", 1))
    scales = e.const(np.array([1, 1, s, s], np.float32), hint=n.name + "_scales")
    e.op("Resize", [n.inputs[0], "", scales], n.out, mode="nearest", nearest_mode="floor",
         coordinate_transformation_mode="asymmetric")


def bilinear_resize(e, n):
    rank_hw = n.out_shapes[0][2:]
    mode = n.attr("mode", "size")
    if mode not in ("size", "odd_scale", "like", None) and n.attr("scale_height") is None:
        raise n.error(f"has mode {mode!r}")
    if e.dynamic and n.attr("scale_height") is not None:
        hs, ws = float(n.attr("scale_height")), float(n.attr("scale_width", n.attr("scale_height")))
        sizes = None
        scales = e.const(np.array([1, 1, hs, ws], np.float32), hint=n.name + "_scales")
    elif e.dynamic:
        sizes = e.op("Concat", [e.op("Slice", [e.op("Shape", [n.inputs[0]]), e.ints([0], n.name + "_0"),
                                               e.ints([2], n.name + "_2")]),
                                e.ints(rank_hw, n.name + "_hw")], axis=0)
        scales = None
    else:
        sizes, scales = e.ints(n.out_shapes[0], n.name + "_sizes"), None
    align = n.flag("align_corners", True)
    e.op("Resize", [n.inputs[0], "", scales or "", sizes or ""][:4 if sizes else 3], n.out, mode="linear",
         coordinate_transformation_mode="align_corners" if align else "half_pixel")


TABLE = {
    "Convolution": convolution, "Deconvolution": deconvolution, "BatchNorm": batch_norm,
    "InstanceNorm": instance_norm, "LayerNorm": layer_norm, "L2Normalization": l2_normalization,
    "Pooling": pooling, "_contrib_AdaptiveAvgPooling2D": adaptive_avg_pool, "FullyConnected": fully_connected,
    "Activation": activation, "LeakyReLU": leaky_relu, "softmax": softmax, "log_softmax": log_softmax,
    "SoftmaxActivation": softmax_activation, "SoftmaxOutput": softmax_output, "Softmax": softmax_output,
    "Embedding": embedding, "UpSampling": upsampling, "_contrib_BilinearResize2D": bilinear_resize,
}
