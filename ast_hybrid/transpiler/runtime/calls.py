"""Calls from converted code: recursive conversion and the run-time ``print``.

``converted_call(f, args, kwargs)`` converts user functions and methods on
first use (through the same per-function cache as ``ast_hybrid.convert``) and
calls everything else directly: builtins, classes, C functions, the standard
library, the numerical libraries (:data:`SKIP_ROOTS`: jax, numpy, scipy, ...),
ast_hybrid itself (the Gluon front's ``F`` ops and blocks), functions already
converted, and those marked with ``ast_hybrid.do_not_convert``.  Installed
packages are user code like any other (a model zoo installed with pip, such
as GluonCV, passes ``F`` to its helpers).  A function that cannot be
converted (no source, a generator) is called as it is.

``print_`` is ``print`` for Python values and ``jax.debug.print`` (ordered)
when an argument is traced, so a ``print`` in a jitted function prints real
values on every call.

``int``/``float``/``bool``/``complex``, ``.item()``/``.tolist()``/``.asnumpy()``
and ``numpy.array``/``asarray`` of a traced value need its value on the host:
they are HY004 at the user's call, as the linter reports them (jax's own error
would name none of the user's code).
"""

from __future__ import annotations

import functools
import inspect
import os
import sys
import sysconfig
import types

import jax
import numpy as np

from .values import Tracer, is_traced

__all__ = ["converted_call", "print_", "should_convert", "run_time_assert", "SKIP_ROOTS"]

_DIRECT_TYPES = (types.BuiltinFunctionType, types.BuiltinMethodType, type,
                 types.MethodWrapperType, types.WrapperDescriptorType, functools.partial)
#: top-level packages whose functions are called as they are, never converted
SKIP_ROOTS = frozenset({
    "ast_hybrid", "passes", "gast", "beniget",                      # ourselves
    "jax", "jaxlib", "numpy", "scipy", "ml_dtypes", "opt_einsum",   # the arrays we trace
    "optax", "flax", "chex", "equinox", "haiku", "etils", "absl",
    "mxnet", "torch", "tensorflow", "pandas", "sklearn", "numba",
    "pytest", "_pytest", "hypothesis", "six", "typing_extensions",
})
_STDLIB_DIRS = tuple({os.path.realpath(p) + os.sep for p in
                      (sysconfig.get_paths().get("stdlib"), sysconfig.get_paths().get("platstdlib")) if p})


def should_convert(fn) -> bool:
    """Whether a plain Python function is user code worth converting."""
    if getattr(fn, "__ah_converted__", False) or getattr(fn, "__ah_do_not_convert__", False):
        return False
    module = getattr(fn, "__module__", None) or ""
    if module.split(".")[0] in SKIP_ROOTS:
        return False
    code = getattr(fn, "__code__", None)
    if code is None or code.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE
                                        | inspect.CO_ASYNC_GENERATOR):
        return False
    filename = code.co_filename
    if filename.startswith("<") or os.path.realpath(filename).startswith(_STDLIB_DIRS):
        return False
    return True


def converted_call(rt, f, args, kwargs):
    if f is print:
        f = print_
    elif f is range:
        f = rt.range_
    elif f.__class__ is type:
        if f in _HOST_TYPES and args and is_traced(args[0]):
            rt.host_sync(f.__name__, "builtin", sys._getframe(2).f_lineno)
    elif f.__class__ is types.MethodType:
        name = _method_name(f)
        if name in _HOST_METHODS and is_traced(f.__self__):
            rt.host_sync(name, _HOST_METHODS[name], sys._getframe(2).f_lineno)
    elif (f is np.asarray or f is np.array or f is np.asanyarray) and args and is_traced(args[0]):
        rt.host_sync(f.__name__, "numpy", sys._getframe(2).f_lineno)
    target = _resolve(rt, f)
    if TRACING.depth and (target is not f or getattr(f, "__ah_converted__", False)):
        return _guarded(rt, target, args, kwargs or {})
    if kwargs:
        return target(*args, **kwargs)
    return target(*args)


class _Tracing:
    """While jax traces a traced branch or loop body: how many enclose it (``depth``), and for each
    converted function being called inside one, the depths it was entered at (``active``)."""

    __slots__ = ("depth", "active")

    def __init__(self):
        self.depth, self.active = 0, {}


TRACING = _Tracing()
#: re-entries of one function, each under one more traced condition, before it is refused: a
#: recursion whose depth depends on a traced value would be traced forever
MAX_TRACED_RECURSION = 12


def _guarded(rt, target, args, kwargs):
    """Call a converted function inside traced control flow, refusing a recursion that the traced
    conditions around it never end (each call entered under more traced conditions than the last)."""
    code = getattr(target, "__func__", target).__code__
    entered = TRACING.active.setdefault(code, [])
    deeper = sum(1 for d in entered if d < TRACING.depth)
    if deeper >= MAX_TRACED_RECURSION:
        rt.recursion(code.co_qualname, sys._getframe(3).f_lineno, deeper)
    entered.append(TRACING.depth)
    try:
        return target(*args, **kwargs)
    finally:
        entered.pop()
        if not entered:
            del TRACING.active[code]


#: what needs a value on the host (HY004, by the linter's variants): refused on a traced value
_HOST_TYPES = frozenset({int, float, bool, complex})
_HOST_METHODS = {"item": "item", "tolist": "item", "asnumpy": "asnumpy", "asscalar": "asnumpy"}


def _method_name(m) -> str:
    """A bound method's name; a tracer forwards some methods (``item``) through one generic
    function whose only free variable holds the name."""
    func = m.__func__
    code = getattr(func, "__code__", None)
    if code is not None and code.co_freevars == ("name",) and func.__closure__:
        name = func.__closure__[0].cell_contents
        if isinstance(name, str):
            return name
    return m.__name__


def _resolve(rt, f):
    if isinstance(f, _DIRECT_TYPES):
        return f
    if isinstance(f, types.FunctionType):
        return rt.convert_callee(f) if should_convert(f) else f
    if isinstance(f, types.MethodType):
        func = f.__func__
        if isinstance(func, types.FunctionType) and should_convert(func):
            return types.MethodType(rt.convert_callee(func), f.__self__)
        return f
    call = getattr(type(f), "__call__", None)
    if isinstance(call, types.FunctionType) and should_convert(call):
        return types.MethodType(rt.convert_callee(call), f)
    return f


def print_(*args, sep=" ", end="\n", file=None, flush=False):
    leaves = jax.tree_util.tree_leaves(args)
    if not any(isinstance(leaf, Tracer) for leaf in leaves):
        print(*args, sep=sep, end=end, file=file, flush=flush)
        return
    # a traced value that says how it prints while traced (``__trace_str__``: Gluon's arrays inside a hybridized
    # hybrid_forward, MXNet's ``<_Symbol data>``) is printed so, once, at trace time, as MXNet's print does
    shown = [_trace_str(a) for a in args]
    if all(s is not None for a, s in zip(args, shown) if _traced(a)):
        print(*(a if s is None else s for a, s in zip(args, shown)), sep=sep, end=end, file=file, flush=flush)
        return
    parts, values = [], []
    for a in args:
        if _traced(a):
            parts.append("{}")
            values.append(a)
        else:
            parts.append(str(a).replace("{", "{{").replace("}", "}}"))
    tail = end[:-1] if end.endswith("\n") else end
    fmt = sep.replace("{", "{{").replace("}", "}}").join(parts) + tail.replace("{", "{{").replace("}", "}}")
    # jax.debug.print always writes to stdout: ``file`` and ``flush`` apply to Python values only
    jax.debug.print(fmt, *values, ordered=True)


def _traced(a):
    return any(isinstance(leaf, Tracer) for leaf in jax.tree_util.tree_leaves(a))


def _trace_str(a):
    method = getattr(type(a), "__trace_str__", None)
    return None if method is None else method(a)


def run_time_assert(pred, text):
    """Check a traced assertion on every run: ``AssertionError(text)`` when ``pred`` is false."""
    def check(ok):
        if not bool(ok):
            raise AssertionError(text)
    jax.debug.callback(check, pred, ordered=True)
