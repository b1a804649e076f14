"""Deferred initialisation for any block, as MXNet's shape inference gives it.

A block may declare a parameter with unknown dimensions (``self.params.get('weight', shape=(64, 0),
allow_deferred_init=True)``) and leave it to the first call to find them.  The built-in layers say how
(``infer_shape``); for any other block (users' layers, MXNet's own cells) the first call runs
``hybrid_forward`` with a :class:`Deferred` stand-in for each such parameter, and the first operator
that receives one fills its shape in from its data input (``ops.param_shapes``: FullyConnected,
Convolution, Deconvolution, BatchNorm, LayerNorm, InstanceNorm, GroupNorm, Embedding, PReLU, RNN),
initialises it and computes with its value.  A stand-in used any other way first is an error that
names the parameter.

Here are the stand-in and the hook the ops call (``_core.HOOKS.resolve_deferred``); the passes that run a
block's first call with them are Gluon's (``gluon/deferred.py``).  Parameters are duck-typed (``name``,
``shape``, ``_value``, ``data()``, ``_finish_deferred_init()``: ``gluon.Parameter``'s).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import inspect

from ast_hybrid.core.errors import DeferredInitializationError
from ast_hybrid.ops import _core
from ast_hybrid.ops.param_shapes import RULES

__all__ = ["Deferred", "ShapeOnly", "inferring"]

_HINT = ("give its full shape at construction, or give the block an infer_shape(self, *inputs) that sets it")


class Deferred:
    """Stands for a parameter whose shape is not known yet, during a block's first call."""

    __slots__ = ("param",)

    def __init__(self, param):
        self.param = param

    def __getattr__(self, name):
        raise DeferredInitializationError(
            f"Parameter {self.param.name!r} (shape {self.param.shape}, still unknown) is used (.{name}) before "
            f"an operator that can infer its shape; {_HINT}")

    def __repr__(self):
        return f"Deferred({self.param.name!r}, shape={self.param.shape})"


class ShapeOnly(Deferred):
    """A stand-in for a parameter nobody initialised, in a graph's shape inference (``Symbol.infer_shape``):
    the operator fills its shape in, and computes with zeros of that shape (abstract values: the graph
    runs on shapes only); the parameter stays uninitialised, as MXNet's ``infer_shape`` leaves it."""

    __slots__ = ()


_STANDINS = (Deferred, ShapeOnly)


def _value(a):
    if a.__class__ is ShapeOnly:
        import jax.numpy as jnp

        return jnp.zeros(a.param.shape, a.param.dtype)
    return a.param.data() if a.__class__ is Deferred else a


def _refuse(op):
    def method(self, *args):
        return self.__getattr__(op)
    return method


for _op in ("add", "radd", "sub", "rsub", "mul", "rmul", "truediv", "rtruediv", "pow", "rpow", "matmul", "rmatmul",
            "neg", "getitem", "array", "len", "iter", "lt", "le", "gt", "ge", "bool", "float", "int"):
    setattr(Deferred, f"__{_op}__", _refuse(f"__{_op}__"))


@functools.lru_cache(maxsize=None)
def _signature(impl):
    return inspect.signature(impl)


def _resolve(op_name, impl, args, kwargs):
    """Replace the stand-ins among an op's arguments by their parameters' values, initialising them first."""
    if not any(a.__class__ in _STANDINS for a in args) and not any(v.__class__ in _STANDINS for v in kwargs.values()):
        return args, kwargs
    pending = {id(a): a for a in (*args, *kwargs.values()) if _unshaped(a)}
    if pending:
        sig = _signature(impl)
        bound = sig.bind_partial(*args, **{k: v for k, v in kwargs.items() if k in sig.parameters})
        bound.apply_defaults()
        rule = RULES.get(op_name)
        names = {id(v): k for k, v in bound.arguments.items() if v.__class__ in _STANDINS}
        names.update((id(e), f"{k}[{i}]") for k, v in bound.arguments.items() if isinstance(v, tuple)
                     for i, e in enumerate(v) if e.__class__ in _STANDINS)      # one of *data (UpSampling's)
        shapes = rule(bound.arguments) if rule is not None else {}
        for key, proxy in pending.items():
            name = names.get(key)
            if name not in shapes:
                raise DeferredInitializationError(
                    f"Parameter {proxy.param.name!r} (shape {proxy.param.shape}, still unknown) reaches `{op_name}`"
                    f"{f' as {name!r}' if name else ''}, which cannot infer it; {_HINT}")
            _give_shape(proxy, shapes[name])
    return tuple(_value(a) for a in args), {k: _value(v) for k, v in kwargs.items()}


def _unshaped(a):
    """Whether ``a`` stands in for a parameter whose shape is still to be given."""
    return a.__class__ in _STANDINS and a.param._value is None and \
        (a.__class__ is Deferred or 0 in tuple(a.param.shape or (0,)))


def _give_shape(proxy, shape):
    proxy.param.shape = tuple(shape)
    if proxy.__class__ is Deferred:
        proxy.param._finish_deferred_init()


@contextlib.contextmanager
def inferring():
    """Within: operators fill in the shapes of the :class:`Deferred` stand-ins they receive."""
    hooks = _core.HOOKS
    saved, hooks.resolve_deferred = hooks.resolve_deferred, _resolve
    try:
        yield
    finally:
        hooks.resolve_deferred = saved


_SHAPES_ONLY = contextvars.ContextVar("ast_hybrid_shapes_only", default=0)


@contextlib.contextmanager
def shapes_only(types_free=False):
    """Within: a graph runs for its shapes and types only (``infer_shape``'s ``jax.eval_shape``), so an op
    whose program depends on its inputs' values (``ROIAlign``'s adaptive samples) may give any values;
    ``types_free``: for its shapes alone, so two inputs of different types are no error (MXNet infers a
    placeholder's type from the op reading it: ``x * sym.ones(..., dtype='float64')`` types ``x``)."""
    token = _SHAPES_ONLY.set(2 if types_free else 1)
    try:
        yield
    finally:
        _SHAPES_ONLY.reset(token)


def computing_shapes_only() -> bool:
    return _SHAPES_ONLY.get() > 0


def types_free() -> bool:
    return _SHAPES_ONLY.get() == 2


def is_standin(value) -> bool:
    return value.__class__ in _STANDINS


def filled(values, shapes):
    """``values`` with each stand-in replaced by its parameter's value, a parameter of unknown shape given
    ``shapes[i]`` first (for an op that infers its inputs' shapes itself: a custom op's ``infer_shape``)."""
    for i, a in enumerate(values):
        if i in shapes and _unshaped(a):
            _give_shape(a, shapes[i])
    return [_value(a) for a in values]
