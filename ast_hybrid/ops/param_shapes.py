"""The shapes of an operator's parameter inputs, from its data input and options: what MXNet's shape
inference fills in for a parameter declared with unknown (0) dimensions, so a block's first call can
initialise it (deferred initialisation) whatever block declared it, and what ``Symbol.infer_shape`` infers
for a graph's unshaped inputs (an op's weights, a loss operator's label).

``RULES[op_name](args)`` takes the op's bound arguments (names as in its signature, arrays or values)
and returns ``{argument name: shape}`` for the parameter inputs it can infer.  Each rule is MXNet
1.9.1's, checked with its symbolic ``infer_shape``.  The names are those of the ``@op`` kernels the
public ops call (``BatchNorm`` and ``SyncBatchNorm`` run ``batch_norm_kernel``, ``LeakyReLU``
``_leaky_relu``, ``RNN`` ``_rnn``).

    >>> import numpy as np
    >>> RULES["FullyConnected"]({"data": np.zeros((2, 3, 4)), "num_hidden": 5})
    {'weight': (5, 12), 'bias': (5,)}
    >>> RULES["Convolution"]({"data": np.zeros((2, 9, 9, 4)), "num_filter": 6, "num_group": 2,
    ...                       "kernel": (3, 3), "layout": "NHWC"})
    {'weight': (6, 3, 3, 2), 'bias': (6,)}
"""

from __future__ import annotations

import math

__all__ = ["RULES"]


def _shape(args, name="data"):
    return tuple(args[name].shape)


def _fully_connected(a):
    d = _shape(a)
    n = int(a["num_hidden"])
    fan_in = math.prod(d[1:]) if a.get("flatten", True) else d[-1]
    return {"weight": (n, fan_in), "bias": (n,)}


def _channels_last(a):
    layout = a.get("layout") or ""
    return bool(layout) and layout.endswith("C")


def _conv(transposed):
    """Convolution: weight (num_filter, C / groups, *kernel); Deconvolution: (C, num_filter / groups, *kernel);
    the channel dimension last in a channel-last layout."""
    def rule(a):
        d, k = _shape(a), tuple(a["kernel"])
        last = _channels_last(a)
        c = d[-1] if last else d[1]
        n, g = int(a["num_filter"]), int(a.get("num_group", 1) or 1)
        outer, inner = (c, n // g) if transposed else (n, c // g)
        return {"weight": (outer,) + k + (inner,) if last else (outer, inner) + k, "bias": (n,)}
    return rule


def _per_channel(axis_default, names):
    def rule(a):
        d = _shape(a)
        c = d[int(a.get("axis", axis_default)) % len(d)]
        return {n: (c,) for n in names}
    return rule


def _group_norm(a):
    g = int(a.get("num_groups", 1))
    return {"gamma": (g,), "beta": (g,)}


def _embedding(a):
    return {"weight": (int(a["input_dim"]), int(a["output_dim"]))}


def _leaky_relu(a):
    return {"gamma": (_shape(a)[1],)} if a.get("act_type") == "prelu" else {}


def _rnn(a):
    from ast_hybrid.ops.rnn import GATES

    d = _shape(a)
    g, h = GATES[a.get("mode", "lstm")], int(a["state_size"])
    p = int(a.get("projection") or 0)
    dirs = 2 if a.get("bidirectional") else 1
    out, n, size = p or h, 0, d[-1]
    for _ in range(int(a.get("num_layers", 1))):
        n += dirs * (g * h * size + g * h * out + (p * h if p else 0) + 2 * g * h)
        size = out * dirs
    layers, batch = dirs * int(a.get("num_layers", 1)), d[1]      # data: (T, N, C)
    return {"parameters": (n,), "state": (layers, batch, out), "state_cell": (layers, batch, h)}


def _upsampling(a):
    """Bilinear UpSampling's weight (its second input): one ``2 scale - scale % 2`` square kernel per channel."""
    if a.get("sample_type") != "bilinear":
        return {}
    scale = int(a.get("scale", 1))
    k = 2 * scale - scale % 2
    return {"data[1]": (tuple(a["data"][0].shape)[1], 1, k, k)}


def _softmax_label(a):
    """SoftmaxOutput's label: the data's shape without its class axis (``multi_output``: without axis 1)."""
    d = _shape(a)
    return {"label": (d[0], *d[2:]) if a.get("multi_output") else d[:-1]}


def _same_label(a):
    return {"label": _shape(a)}


_BN = ("gamma", "beta", "moving_mean", "moving_var")
RULES = {
    "FullyConnected": _fully_connected,
    "Convolution": _conv(transposed=False),
    "Deconvolution": _conv(transposed=True),
    "DeformableConvolution": _conv(transposed=False),
    "ModulatedDeformableConvolution": _conv(transposed=False),
    "batch_norm_kernel": _per_channel(1, _BN),
    "LayerNorm": _per_channel(-1, ("gamma", "beta")),
    "InstanceNorm": _per_channel(1, ("gamma", "beta")),
    "GroupNorm": _group_norm,
    "Embedding": _embedding,
    "_leaky_relu": _leaky_relu,
    "_rnn": _rnn,
    "UpSampling": _upsampling,
    "SoftmaxOutput": _softmax_label,
    "LinearRegressionOutput": _same_label,
    "MAERegressionOutput": _same_label,
    "LogisticRegressionOutput": _same_label,
}
