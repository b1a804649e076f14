"""Deferred initialisation for any block, as MXNet's shape inference gives it.

A block may declare a parameter with unknown dimensions (``self.params.get('weight', shape=(64, 0),
allow_deferred_init=True)``) and leave it to the first call to find them.  The built-in layers say how
(``infer_shape``); for any other block (users' layers, MXNet's own cells) the first call runs
``hybrid_forward`` with a :class:`Deferred` stand-in for each such parameter, and the first operator
that receives one fills its shape in from its data input (``ops.param_shapes``: FullyConnected,
Convolution, Deconvolution, BatchNorm, LayerNorm, InstanceNorm, GroupNorm, Embedding, PReLU, RNN),
initialises it and computes with its value.  A stand-in used any other way first is an error that
names the parameter.
"""

from __future__ import annotations

import contextlib
import functools
import inspect

from ast_hybrid.gluon.parameter import DeferredInitializationError
from ast_hybrid.ops import _core
from ast_hybrid.ops.param_shapes import RULES

__all__ = ["Deferred", "inferring", "first_pass", "concrete_pass"]

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
    if not any(a.__class__ is Deferred for a in args) and not any(v.__class__ is Deferred for v in kwargs.values()):
        return args, kwargs
    pending = {id(a): a for a in (*args, *kwargs.values()) if a.__class__ is Deferred and a.param._data is None}
    if pending:
        sig = _signature(impl)
        bound = sig.bind_partial(*args, **{k: v for k, v in kwargs.items() if k in sig.parameters})
        bound.apply_defaults()
        rule = RULES.get(op_name)
        names = {id(v): k for k, v in bound.arguments.items() if v.__class__ is Deferred}
        shapes = rule(bound.arguments) if rule is not None else {}
        for key, proxy in pending.items():
            name = names.get(key)
            if name not in shapes:
                raise DeferredInitializationError(
                    f"Parameter {proxy.param.name!r} (shape {proxy.param.shape}, still unknown) reaches `{op_name}`"
                    f"{f' as {name!r}' if name else ''}, which cannot infer it; {_HINT}")
            proxy.param.shape = shapes[name]
            proxy.param._finish_deferred_init()
    args = tuple(a.param.data() if a.__class__ is Deferred else a for a in args)
    kwargs = {k: v.param.data() if v.__class__ is Deferred else v for k, v in kwargs.items()}
    return args, kwargs


@contextlib.contextmanager
def inferring():
    """Within: operators fill in the shapes of the :class:`Deferred` stand-ins they receive."""
    hooks = _core.HOOKS
    saved, hooks.resolve_deferred = hooks.resolve_deferred, _resolve
    try:
        yield
    finally:
        hooks.resolve_deferred = saved


# --- the deferred-shape pass before a hybridized block's first compile ----------------------------------


def first_pass(block, args):
    """Give every parameter of ``block`` whose shape is still unknown its shape and initial value, as the first
    call of a hybridized block needs before its program can be built.

    The pass runs the forward once on shapes only (``jax.eval_shape``: each op traces, none computes or
    compiles) while each parameter is initialised concretely when its shape becomes known
    (``Parameter._finish_deferred_init`` evaluates its initializer eagerly even inside the trace), in the
    order the forward reaches it, with the same draws from the eager random stream as a concrete pass: the
    values are those of running the forward op by op on the arrays (:func:`concrete_pass`, what this did
    before).  Nested hybridized blocks run inside the same trace, as they do in the block's program, instead
    of each building a program of its own.  A forward the abstract pass cannot run (one that reads a value
    on the host, writes a parameter, or fails in any other way) falls back to the concrete pass from the
    state before it, so errors and values are those of the concrete pass."""
    import jax

    from ast_hybrid.ops import rng

    params = list(block.collect_params().values())
    rng._base()     # the eager stream's base key exists before the trace (drawn inside, it would be a tracer)
    saved = [(p, p._data, p._shape, p._deferred_init, p._leaf) for p in params], list(rng._GLOBAL)
    try:
        _abstract_pass(block, args)
        ok = not any(isinstance(p._data, jax.core.Tracer) for p in params)
    except Exception:       # noqa: BLE001 - whatever it is, the concrete pass gives it (or succeeds)
        ok = False
    if not ok:
        for p, data, shape, deferred, leaf in saved[0]:
            p._data, p._shape, p._deferred_init, p._leaf = data, shape, deferred, leaf
        rng._GLOBAL[:] = saved[1]
        concrete_pass(block, args)


def concrete_pass(block, args):
    """The deferred-shape pass on the arrays themselves: the forward op by op, each op computing (and
    compiling for its shapes), nested hybridized blocks building their own programs; writes made by custom
    ops are dropped (``imperative(None)``)."""
    from ast_hybrid.core import autograd
    from ast_hybrid.gluon.programs import imperative

    with autograd.mode_scope(False, False), imperative(None):
        block._call_imperative(*args)


def _abstract_pass(block, args):
    import jax

    from ast_hybrid.core import autograd
    from ast_hybrid.gluon.programs import Trace, imperative
    from ast_hybrid.core.ndarray import NDArray

    leaves, treedef = jax.tree_util.tree_flatten(list(args), is_leaf=lambda v: v.__class__ is NDArray)
    where = [i for i, v in enumerate(leaves) if v.__class__ is NDArray or _is_array(v)]
    specs = [jax.ShapeDtypeStruct(leaves[i].shape, leaves[i].dtype) for i in where]

    def run(*arrays):
        given = list(leaves)
        for i, a in zip(where, arrays):
            given[i] = NDArray(a)
        # on the trace stack (with no parameter bound), so that nested hybridized blocks run in this trace as
        # they do in the block's program, with the converted forwards
        with Trace([], []).bound(), autograd.mode_scope(False, False), imperative(None):
            block._call_imperative(*jax.tree_util.tree_unflatten(treedef, given))

    jax.eval_shape(run, *specs)


def _is_array(x):
    return hasattr(x, "shape") and hasattr(x, "dtype")
