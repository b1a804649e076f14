"""``F._internal``: the MXNet-internal ops that Gluon's own layers and GluonNLP call (``_plus``, ``_mul``, ...)."""

from __future__ import annotations

from ast_hybrid.ops import elemwise, indexing
from ast_hybrid.ops.quantization import sg_mkldnn_conv as _sg_mkldnn_conv
from ast_hybrid.ops.shape import concat

__all__ = ["_rnn_param_concat", "_plus", "_minus", "_mul", "_div", "_mod", "_power", "_maximum", "_minimum",
           "_plus_scalar", "_minus_scalar", "_rminus_scalar", "_mul_scalar", "_div_scalar", "_rdiv_scalar",
           "_copy", "_sg_mkldnn_conv", "_greater_scalar", "_greater_equal_scalar", "_lesser_scalar",
           "_lesser_equal_scalar", "_equal_scalar", "_not_equal_scalar", "_logical_and_scalar", "_logical_or_scalar",
           "_logical_xor_scalar", "_maximum_scalar", "_minimum_scalar", "_power_scalar", "_rpower_scalar",
           "_mod_scalar", "_rmod_scalar", "_hypot_scalar", "_greater", "_greater_equal", "_lesser", "_lesser_equal",
           "_equal", "_not_equal", "_hypot", "_logical_and", "_logical_or", "_logical_xor", "_slice_assign",
           "_slice_assign_scalar", "_crop_assign", "_crop_assign_scalar"]


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


def _scalar_op(fn, name, reverse=False):
    """MXNet's ``_<op>_scalar(data, scalar)`` (what a Symbol's ``x > 0.5``, ``x ** 2``, ``2 % x`` record in a
    graph JSON): ``fn(data, scalar)``, or ``fn(scalar, data)`` for the reversed ones."""
    def scalar_op(data, scalar, **kwargs):
        kwargs.pop("is_int", None)          # MXNet 2's attribute, in graphs it wrote
        return fn(scalar, data, **kwargs) if reverse else fn(data, scalar, **kwargs)

    scalar_op.__name__ = scalar_op.__qualname__ = name
    return scalar_op


_greater_scalar = _scalar_op(elemwise.greater, "_greater_scalar")
_greater_equal_scalar = _scalar_op(elemwise.greater_equal, "_greater_equal_scalar")
_lesser_scalar = _scalar_op(elemwise.lesser, "_lesser_scalar")
_lesser_equal_scalar = _scalar_op(elemwise.lesser_equal, "_lesser_equal_scalar")
_equal_scalar = _scalar_op(elemwise.equal, "_equal_scalar")
_not_equal_scalar = _scalar_op(elemwise.not_equal, "_not_equal_scalar")
_logical_and_scalar = _scalar_op(elemwise.logical_and, "_logical_and_scalar")
_logical_or_scalar = _scalar_op(elemwise.logical_or, "_logical_or_scalar")
_logical_xor_scalar = _scalar_op(elemwise.logical_xor, "_logical_xor_scalar")
_maximum_scalar = _scalar_op(elemwise.maximum, "_maximum_scalar")
_minimum_scalar = _scalar_op(elemwise.minimum, "_minimum_scalar")
_power_scalar = _scalar_op(elemwise.power, "_power_scalar")
_rpower_scalar = _scalar_op(elemwise.power, "_rpower_scalar", reverse=True)
_mod_scalar = _scalar_op(elemwise.modulo, "_mod_scalar")
_rmod_scalar = _scalar_op(elemwise.modulo, "_rmod_scalar", reverse=True)
_hypot_scalar = _scalar_op(elemwise.broadcast_hypot, "_hypot_scalar")
_greater, _greater_equal, _lesser, _lesser_equal = (elemwise.greater, elemwise.greater_equal, elemwise.lesser,
                                                    elemwise.lesser_equal)
_equal, _not_equal, _hypot = elemwise.equal, elemwise.not_equal, elemwise.broadcast_hypot
_logical_and, _logical_or, _logical_xor = elemwise.logical_and, elemwise.logical_or, elemwise.logical_xor


def _slice_assign(lhs, rhs, begin, end, step=(), out=None, **kwargs):
    """``lhs`` with ``lhs[begin:end:step] = rhs`` (a new array, or written into ``out``); MXNet's
    ``_slice_assign``/``_crop_assign``."""
    key = tuple(slice(b, e, s) for b, e, s in zip(begin, end, tuple(step or ()) + (None,) * len(begin)))
    result = indexing.setitem(lhs, key, rhs)
    if out is None:
        return result
    out._arr, out._ag = result._arr, result._ag
    return out


def _slice_assign_scalar(data, scalar=0.0, begin=(), end=(), step=(), out=None, **kwargs):
    """``data`` with ``data[begin:end:step] = scalar`` (MXNet's ``_slice_assign_scalar``/``_crop_assign_scalar``)."""
    return _slice_assign(data, scalar, begin, end, step, out=out)


_crop_assign, _crop_assign_scalar = _slice_assign, _slice_assign_scalar
