"""``F._internal``: the MXNet-internal ops that Gluon's own layers and GluonNLP call (``_plus``, ``_mul``, ...)."""

from __future__ import annotations

from ast_hybrid.ops import elemwise
from ast_hybrid.ops.quantization import sg_mkldnn_conv as _sg_mkldnn_conv
from ast_hybrid.ops.shape import concat

__all__ = ["_rnn_param_concat", "_plus", "_minus", "_mul", "_div", "_mod", "_power", "_maximum", "_minimum",
           "_plus_scalar", "_minus_scalar", "_rminus_scalar", "_mul_scalar", "_div_scalar", "_rdiv_scalar",
           "_copy", "_sg_mkldnn_conv"]


def _rnn_param_concat(*data, dim=1, num_args=None, **kwargs):
    """Concatenate the fused RNN's parameter pieces (MXNet's concat, with RNN-aware shape inference)."""
    return concat(*data, dim=dim, **kwargs)


_plus, _minus, _mul, _div = elemwise.elemwise_add, elemwise.elemwise_sub, elemwise.elemwise_mul, elemwise.elemwise_div
_mod, _power = elemwise.broadcast_mod, elemwise.broadcast_power
_maximum, _minimum = elemwise.broadcast_maximum, elemwise.broadcast_minimum
_copy = elemwise.identity


def _plus_scalar(data, scalar, **kwargs):
    return elemwise.add(data, scalar, **kwargs)


def _minus_scalar(data, scalar, **kwargs):
    return elemwise.subtract(data, scalar, **kwargs)


def _rminus_scalar(data, scalar, **kwargs):
    return elemwise.subtract(scalar, data, **kwargs)


def _mul_scalar(data, scalar, **kwargs):
    return elemwise.multiply(data, scalar, **kwargs)


def _div_scalar(data, scalar, **kwargs):
    return elemwise.divide(data, scalar, **kwargs)


def _rdiv_scalar(data, scalar, **kwargs):
    return elemwise.divide(scalar, data, **kwargs)
